/*
 * lparams.c -- generic Lua-table validation against eng_param_desc tables
 * (contract in lparams.h).
 *
 * Two phases.  Phase 1 walks the Lua table and the key table and records
 * problems (at most MAX_PROBLEMS) as message tails without line numbers; it
 * writes the valid values into the params struct.  Phase 2, only when there
 * is a problem, obtains the source text (given, or read from chunk_path),
 * assigns each problem its line, picks the earliest, formats the message into
 * a fixed buffer, frees the text and only then raises the Lua error.  Key
 * strings recorded in phase 1 belong to the table being checked, which stays
 * on the stack, so the pointers remain valid until the error is raised.
 */
#include "lparams.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PROBLEMS = 16, TAIL_CAP = 320 };

typedef struct problem {
    const char *key; /* key to locate in the source (borrowed) */
    int missing;     /* 1: missing required key (located at the hint) */
    char tail[TAIL_CAP];
} problem;

typedef struct checker {
    lua_State *L;
    const char *what;
    int overlay;            /* 1: only the keys present, no required keys */
    unsigned char *present; /* overlay: one flag per key row, or NULL */
    problem p[MAX_PROBLEMS];
    int n;
} checker;

static problem *add(checker *c, const char *key, int missing)
{
    if (c->n >= MAX_PROBLEMS) return NULL;
    problem *p = &c->p[c->n++];
    p->key = key;
    p->missing = missing;
    p->tail[0] = '\0';
    return p;
}

/* ---- source lines ---- */

static int is_ident(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

/* Does `line` (length n) contain key followed by blanks and '=' (not '==')? */
static int line_has_key(const char *line, size_t n, const char *key)
{
    size_t k = strlen(key);
    if (k == 0) return 0;
    for (size_t i = 0; i + k <= n; i++) {
        if (line[i] == '-' && i + 1 < n && line[i + 1] == '-') return 0; /* comment */
        if (memcmp(line + i, key, k) != 0) continue;
        size_t j = i + k;
        int bracket = i >= 2 && (line[i - 1] == '"' || line[i - 1] == '\'') && line[i - 2] == '[';
        if (bracket) {
            if (j + 1 < n && line[j] == line[i - 1] && line[j + 1] == ']')
                j += 2;
            else
                continue;
        } else {
            if (i > 0 && is_ident((unsigned char)line[i - 1])) continue;
            if (j < n && is_ident((unsigned char)line[j])) continue;
        }
        while (j < n && (line[j] == ' ' || line[j] == '\t'))
            j++;
        if (j < n && line[j] == '=' && !(j + 1 < n && line[j + 1] == '=')) return 1;
    }
    return 0;
}

int slp_key_line_text(const char *text, const char *key, int line_hint)
{
    if (!text || !key) return line_hint;
    int line = 1;
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (line >= line_hint && line_has_key(s, n, key)) return line;
        if (!e) break;
        s = e + 1;
        line++;
    }
    return line_hint;
}

/* Reads a whole file (at most 16 MiB) into a malloc'd NUL-terminated buffer. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            if (cap >= ((size_t)16 << 20)) break;
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

int slp_key_line(const char *chunk_path, int line_hint, const char *key)
{
    if (!chunk_path) return line_hint;
    char *text = read_text(chunk_path);
    int line = slp_key_line_text(text, key, line_hint);
    free(text);
    return line;
}

/* ---- phase 1: values ---- */

static void fmt_num(char *out, size_t n, double v)
{
    snprintf(out, n, "%.14g", v);
}

static void range_problem(checker *c, const char *key, const char *suffix, double v,
                          const eng_param_desc *d)
{
    problem *p = add(c, key, 0);
    if (!p) return;
    char sv[32], lo[32], hi[32];
    fmt_num(sv, sizeof sv, v);
    fmt_num(lo, sizeof lo, d->min);
    fmt_num(hi, sizeof hi, d->max);
    /* a fraction given as a percentage (dram_fraction = 40) */
    char hint[64] = "";
    if (d->type == ENG_PARAM_DOUBLE && d->min == 0 && d->max == 1 && v > 1 && v <= 100)
        snprintf(hint, sizeof hint, " (a fraction: did you mean %.14g?)", v / 100);
    snprintf(p->tail, TAIL_CAP, "%s: key '%s'%s = %s is out of range [%s, %s]%s", c->what, key,
             suffix, sv, lo, hi, hint);
}

static void type_problem(checker *c, const char *key, const char *suffix, const char *want, int idx)
{
    problem *p = add(c, key, 0);
    if (!p) return;
    snprintf(p->tail, TAIL_CAP, "%s: key '%s'%s must be %s (got %s)", c->what, key, suffix, want,
             luaL_typename(c->L, idx));
}

/* Checks the number at idx; returns 1 and *out when valid. */
static int check_number(checker *c, const char *key, const char *suffix, int idx,
                        const eng_param_desc *d, int integral, double *out)
{
    lua_State *L = c->L;
    if (lua_type(L, idx) != LUA_TNUMBER) {
        type_problem(c, key, suffix, integral ? "an integer" : "a number", idx);
        return 0;
    }
    double v = lua_tonumber(L, idx);
    if (integral && !lua_isinteger(L, idx) && !(isfinite(v) && v == floor(v))) {
        problem *p = add(c, key, 0);
        if (p) {
            char sv[32];
            fmt_num(sv, sizeof sv, v);
            snprintf(p->tail, TAIL_CAP, "%s: key '%s'%s must be an integer (got %s)", c->what, key,
                     suffix, sv);
        }
        return 0;
    }
    if (!isfinite(v)) {
        problem *p = add(c, key, 0);
        if (p)
            snprintf(p->tail, TAIL_CAP, "%s: key '%s'%s must be a finite number", c->what, key,
                     suffix);
        return 0;
    }
    if (v < d->min || v > d->max) {
        range_problem(c, key, suffix, v, d);
        return 0;
    }
    *out = v;
    return 1;
}

static void check_list(checker *c, const eng_param_desc *d, int idx, char *params)
{
    lua_State *L = c->L;
    if (!lua_istable(L, idx)) {
        type_problem(c, d->name, "", "a list of numbers", idx);
        return;
    }
    lua_Integer n;
    char gap[64];
    if (slp_list_gap(L, idx, &n, gap, sizeof gap)) {
        problem *p = add(c, d->name, 0);
        if (p)
            snprintf(p->tail, TAIL_CAP,
                     "%s: key '%s' is a list with a hole (%s); a list holds its values at [1], "
                     "[2], ... without gaps",
                     c->what, d->name, gap);
        return;
    }
    if (n > d->cap) {
        problem *p = add(c, d->name, 0);
        if (p)
            snprintf(p->tail, TAIL_CAP, "%s: key '%s' has %lld elements (at most %d)", c->what,
                     d->name, (long long)n, (int)d->cap);
        return;
    }
    int integral = d->type == ENG_PARAM_INT_LIST;
    for (lua_Integer i = 1; i <= n; i++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, "[%lld]", (long long)i);
        lua_geti(L, idx, i);
        double v;
        int ok = check_number(c, d->name, suffix, lua_gettop(L), d, integral, &v);
        lua_pop(L, 1);
        if (!ok) return;
        if (integral) {
            int32_t iv = (int32_t)v;
            memcpy(params + d->offset + (size_t)(i - 1) * sizeof iv, &iv, sizeof iv);
        } else {
            memcpy(params + d->offset + (size_t)(i - 1) * sizeof v, &v, sizeof v);
        }
    }
    int32_t cnt = (int32_t)n;
    memcpy(params + d->count_offset, &cnt, sizeof cnt);
}

static void check_enum(checker *c, const eng_param_desc *d, int idx, char *params)
{
    lua_State *L = c->L;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    for (int32_t i = 0; s && d->choices[i]; i++) {
        if (strcmp(s, d->choices[i]) == 0) {
            memcpy(params + d->offset, &i, sizeof i);
            return;
        }
    }
    problem *p = add(c, d->name, 0);
    if (!p) return;
    size_t used =
        (size_t)snprintf(p->tail, TAIL_CAP, "%s: key '%s' must be one of ", c->what, d->name);
    for (int32_t i = 0; d->choices[i] && used < TAIL_CAP; i++)
        used += (size_t)snprintf(p->tail + used, TAIL_CAP - used, "%s'%s'", i ? ", " : "",
                                 d->choices[i]);
    if (used < TAIL_CAP) {
        if (s)
            snprintf(p->tail + used, TAIL_CAP - used, " (got '%s')", s);
        else
            snprintf(p->tail + used, TAIL_CAP - used, " (got %s)", luaL_typename(L, idx));
    }
}

static void check_value(checker *c, const eng_param_desc *d, int idx, char *params)
{
    lua_State *L = c->L;
    double v;
    switch (d->type) {
    case ENG_PARAM_INT:
        if (check_number(c, d->name, "", idx, d, 1, &v)) {
            int32_t iv = (int32_t)v;
            memcpy(params + d->offset, &iv, sizeof iv);
        }
        break;
    case ENG_PARAM_DOUBLE:
        if (check_number(c, d->name, "", idx, d, 0, &v)) memcpy(params + d->offset, &v, sizeof v);
        break;
    case ENG_PARAM_BOOL:
        if (lua_type(L, idx) != LUA_TBOOLEAN) {
            type_problem(c, d->name, "", "a boolean", idx);
        } else {
            int32_t b = lua_toboolean(L, idx);
            memcpy(params + d->offset, &b, sizeof b);
        }
        break;
    case ENG_PARAM_ENUM:
        check_enum(c, d, idx, params);
        break;
    case ENG_PARAM_STRING: {
        if (lua_type(L, idx) != LUA_TSTRING) {
            type_problem(c, d->name, "", "a string", idx);
            break;
        }
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        if (n >= (size_t)d->cap || strlen(s) != n) {
            problem *p = add(c, d->name, 0);
            if (p)
                snprintf(p->tail, TAIL_CAP, "%s: key '%s' must be a string of at most %d bytes",
                         c->what, d->name, (int)d->cap - 1);
            break;
        }
        /* names reach terminals and result files: no control characters */
        size_t bad = 0;
        while (bad < n && (unsigned char)s[bad] >= 0x20 && s[bad] != 0x7f) bad++;
        if (bad < n) {
            problem *p = add(c, d->name, 0);
            if (p)
                snprintf(p->tail, TAIL_CAP,
                         "%s: key '%s' holds a control character (byte 0x%02x at offset %zu)",
                         c->what, d->name, (unsigned char)s[bad], bad);
            break;
        }
        memcpy(params + d->offset, s, n + 1);
        break;
    }
    case ENG_PARAM_DOUBLE_LIST:
    case ENG_PARAM_INT_LIST:
        check_list(c, d, idx, params);
        break;
    }
}

static void phase1(checker *c, int idx, const eng_param_desc *keys, char *params)
{
    lua_State *L = c->L;
    /* unknown keys, in lua_next order; the line sort in phase 2 makes it stable */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1); /* value */
        if (lua_type(L, -1) != LUA_TSTRING) {
            problem *p = add(c, NULL, 0);
            if (p)
                snprintf(p->tail, TAIL_CAP, "%s: keys must be names (found a %s key)", c->what,
                         luaL_typename(L, -1));
            continue;
        }
        const char *k = lua_tostring(L, -1);
        if (eng_params_find(keys, k)) continue;
        problem *p = add(c, k, 0);
        if (!p) continue;
        const char *near = eng_params_nearest(keys, k);
        if (near)
            snprintf(p->tail, TAIL_CAP, "unknown key '%s' in %s (did you mean '%s'?)", k, c->what,
                     near);
        else
            snprintf(p->tail, TAIL_CAP, "unknown key '%s' in %s", k, c->what);
    }
    /* known keys, in key-table order */
    for (const eng_param_desc *d = keys; d->name; d++) {
        lua_getfield(L, idx, d->name);
        if (c->present) c->present[d - keys] = !lua_isnil(L, -1);
        if (lua_isnil(L, -1)) {
            if (!c->overlay && eng_param_required(d)) {
                problem *p = add(c, NULL, 1);
                if (p)
                    snprintf(p->tail, TAIL_CAP, "%s: missing required key '%s'", c->what, d->name);
            }
        } else {
            check_value(c, d, lua_gettop(L), params);
        }
        lua_pop(L, 1);
    }
}

/* ---- phase 2: locate and raise ---- */

/* Both forms: overlay = 0 is slp_check_table_text, 1 slp_apply_table_text. */
static void check_or_apply(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                           int overlay, unsigned char *present, const char *what,
                           const char *chunk_path, int line_hint, const char *source_text)
{
    luaL_checkstack(L, 8, "validating a table");
    idx = lua_absindex(L, idx);
    if (line_hint < 1) line_hint = 1;
    if (!overlay) eng_params_defaults(keys, params);
    if (!lua_istable(L, idx)) {
        lua_pushfstring(L, "%s:%d: %s must be a table (got %s)", chunk_path, line_hint, what,
                        luaL_typename(L, idx));
        lua_error(L);
    }
    checker c;
    c.L = L;
    c.what = what;
    c.overlay = overlay;
    c.present = present;
    c.n = 0;
    phase1(&c, idx, keys, (char *)params);
    if (c.n == 0) return;

    char *owned = NULL;
    const char *text = source_text;
    if (!text && chunk_path) text = owned = read_text(chunk_path);
    int best = -1, best_line = 0;
    for (int i = 0; i < c.n; i++) {
        int line = c.p[i].key && !c.p[i].missing ? slp_key_line_text(text, c.p[i].key, line_hint)
                                                 : line_hint;
        /* value problems before missing keys, then earliest line, then table order */
        int better = best < 0 || (c.p[best].missing && !c.p[i].missing);
        if (!better && c.p[best].missing == c.p[i].missing) {
            better = line < best_line;
            /* same line: lua_next order is not stable across runs, names are */
            if (line == best_line && c.p[i].key && c.p[best].key)
                better = strcmp(c.p[i].key, c.p[best].key) < 0;
        }
        if (better) {
            best = i;
            best_line = line;
        }
    }
    char msg[TAIL_CAP + 1100];
    snprintf(msg, sizeof msg, "%s:%d: %s", chunk_path ? chunk_path : "?", best_line,
             c.p[best].tail);
    free(owned);
    lua_pushstring(L, msg);
    lua_error(L);
}

void slp_check_table_text(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                          const char *what, const char *chunk_path, int line_hint,
                          const char *source_text)
{
    check_or_apply(L, idx, keys, params, 0, NULL, what, chunk_path, line_hint, source_text);
}

void slp_apply_table_text(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                          unsigned char *present, const char *what, const char *chunk_path,
                          int line_hint, const char *source_text)
{
    check_or_apply(L, idx, keys, params, 1, present, what, chunk_path, line_hint, source_text);
}

void slp_check_table(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                     const char *what, const char *chunk_path, int line_hint)
{
    slp_check_table_text(L, idx, keys, params, what, chunk_path, line_hint, NULL);
}

void slp_check_fields(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                      const char *what, const char *chunk_path, int line_hint)
{
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    int tmp = lua_gettop(L);
    for (const eng_param_desc *d = keys; d->name; d++) {
        lua_getfield(L, idx, d->name);
        lua_setfield(L, tmp, d->name);
    }
    slp_check_table(L, tmp, keys, params, what, chunk_path, line_hint);
    lua_pop(L, 1);
}

int slp_caller(lua_State *L, int level, slp_where *w)
{
    lua_Debug ar;
    snprintf(w->chunk, sizeof w->chunk, "?");
    w->line = 1;
    w->source = NULL;
    if (!lua_getstack(L, level, &ar) || !lua_getinfo(L, "Sl", &ar)) return 0;
    const char *src = ar.source ? ar.source : "?";
    if (src[0] == '@' || src[0] == '=') {
        snprintf(w->chunk, sizeof w->chunk, "%s", src + 1);
    } else {
        snprintf(w->chunk, sizeof w->chunk, "%s", ar.short_src);
        w->source = src;
    }
    if (ar.currentline > 0) w->line = ar.currentline;
    return 1;
}

/* ---- lists ---- */

int slp_list_gap(lua_State *L, int idx, lua_Integer *n, char *why, size_t whylen)
{
    idx = lua_absindex(L, idx);
    lua_Integer count = 0, top = 0;
    lua_Number stray = 0;
    int has_stray = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TNUMBER) continue; /* names: not list positions */
        if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1) {
            lua_Integer k = lua_tointeger(L, -1);
            count++;
            if (k > top) top = k;
        } else if (!has_stray) { /* 0, negative or fractional: no list position */
            has_stray = 1;
            stray = lua_tonumber(L, -1);
        }
    }
    *n = count;
    if (has_stray) {
        snprintf(why, whylen, "a value at [%.14g], not a list position", (double)stray);
        return 1;
    }
    if (top == count) return 0;
    /* some index below the largest is empty: name the first */
    lua_Integer k = 1;
    while (k < top && lua_rawgeti(L, idx, k) != LUA_TNIL) {
        lua_pop(L, 1);
        k++;
    }
    lua_pop(L, 1);
    snprintf(why, whylen, "no value at [%lld] of %lld", (long long)k, (long long)top);
    return 1;
}

lua_Integer slp_list_len(lua_State *L, int idx, const char *what, const char *key,
                         const char *chunk_path, int line_hint)
{
    lua_Integer n;
    char why[64];
    if (!slp_list_gap(L, idx, &n, why, sizeof why)) return n;
    char msg[1400];
    snprintf(msg, sizeof msg,
             "%s:%d: %s: key '%s' is a list with a hole (%s); a list holds its values at [1], "
             "[2], ... without gaps",
             chunk_path ? chunk_path : "?", slp_key_line(chunk_path, line_hint, key), what, key,
             why);
    lua_pushstring(L, msg);
    return lua_error(L);
}
