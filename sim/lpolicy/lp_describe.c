/*
 * lp_describe.c -- what a policy file declares, read in its own state (the
 * host: lp_host.c): its name, hooks and params listed (`flashspec policies
 * FILE.lua`), a declared param as a knob flashspec.tune may search, the
 * policy name's form and the source's hash.
 */
#include "sim/lpolicy/lp_host.h"

#include <lauxlib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/eng_policy.h"

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* 1 when name is 1 to 63 of [A-Za-z0-9_.-] starting with a letter or '_'. */
int lp_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > 63 || !(((name[0] | 32) >= 'a' && (name[0] | 32) <= 'z') || name[0] == '_'))
        return 0;
    for (const char *c = name; *c; c++)
        if (!(((*c | 32) >= 'a' && (*c | 32) <= 'z') || (*c >= '0' && *c <= '9') ||
              strchr("_-.", *c)))
            return 0;
    return 1;
}

/* Two 64-bit FNV-1a lanes over every byte of the source, as hex. */
void lp_source_hash(const char *src, size_t len, char *out, size_t n)
{
    uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x6a09e667f3bcc909ULL;
    for (size_t i = 0; i < len; i++) {
        h1 = (h1 ^ (uint64_t)(unsigned char)src[i]) * 0x100000001b3ULL;
        h2 = (h2 ^ (uint64_t)(unsigned char)src[i]) * 0x100000001b3ULL;
    }
    snprintf(out, n, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

/* ------------------------------------------------------------ listing */

/* Cell text of field k of the spec at idx ("" when absent). */
static void spec_cell(lua_State *L, int idx, const char *k, char *out, size_t n)
{
    lua_getfield(L, idx, k);
    out[0] = 0;
    if (lua_istable(L, -1)) {
        size_t at = 0;
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1) && at < n; i++) {
            lua_rawgeti(L, -1, i);
            at += (size_t)snprintf(out + at, n - at, "%s%s", i > 1 ? ", " : "",
                                   luaL_tolstring(L, -1, NULL));
            lua_pop(L, 2);
        }
    } else if (!lua_isnil(L, -1)) {
        snprintf(out, n, "%s", luaL_tolstring(L, -1, NULL));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* One row of a declared params table (the spec table at `spec`): key,
 * default, values and meaning. */
static void describe_param(lua_State *L, int spec, const char *key, int markdown)
{
    char def[64], lo[32], hi[32], ch[128], doc[256], vals[160];
    spec_cell(L, spec, "default", def, sizeof def);
    spec_cell(L, spec, "min", lo, sizeof lo);
    spec_cell(L, spec, "max", hi, sizeof hi);
    spec_cell(L, spec, "choices", ch, sizeof ch);
    spec_cell(L, spec, "doc", doc, sizeof doc);
    lua_getfield(L, spec, "integer");
    int integer = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (ch[0])
        snprintf(vals, sizeof vals, "%s", ch);
    else if (lo[0] || hi[0])
        snprintf(vals, sizeof vals, "%s%s..%s", integer ? "integer " : "", lo[0] ? lo : "",
                 hi[0] ? hi : "");
    else
        snprintf(vals, sizeof vals, "any");
    if (markdown)
        printf("| `%s` | %s | %s | %s |\n", key, def, vals, doc);
    else
        printf("  %-16s %-14s %-24s %s\n", key, def, vals, doc);
}

/* The declared params of the file (its hooks table loaded again), sorted by
 * key, or a line saying it declares none. */
static void describe_params(lua_State *L, lp_params *p, int markdown)
{
    lua_pushcfunction(L, lp_load_policy);
    lua_pushlightuserdata(L, p);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) return;
    lua_getfield(L, -1, "params");
    if (!lua_istable(L, -1)) {
        printf("  (no params declared: the file reads its params table itself)\n");
        return;
    }
    int decl = lua_gettop(L);
    const char *keys[128];
    int nk = 0;
    lua_pushnil(L);
    while (lua_next(L, decl) && nk < 128) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) keys[nk++] = lua_tostring(L, -1);
    }
    qsort(keys, (size_t)nk, sizeof keys[0], cmp_keys);
    if (markdown)
        printf("\n| key | default | values | meaning |\n|---|---|---|---|\n");
    else
        printf("  %-16s %-14s %-24s %s\n", "key", "default", "values", "meaning");
    for (int i = 0; i < nk; i++) {
        lua_getfield(L, decl, keys[i]);
        describe_param(L, lua_gettop(L), keys[i], markdown);
        lua_pop(L, 1);
    }
}

int lp_describe(const char *path, int markdown, char *err, size_t errlen)
{
    lp_params p;
    memset(&p, 0, sizeof p);
    snprintf(p.file, sizeof p.file, "%s", path);
    snprintf(p.args, sizeof p.args, "{}");
    p.step_limit = 100000000LL;
    p.mem_limit = (size_t)256 << 20;
    char *buf;
    if (lp_read_source(path, &buf, &p.src_len, err, errlen) != 0) return -1;
    p.src = buf;
    lp_state *s = lp_open(&p, err, errlen);
    if (!s) {
        free(buf);
        return -1;
    }
    int bad = 0;
    if (s->named && !lp_name_ok(s->name)) {
        snprintf(err, errlen, "%.300s: its policy name must be 1 to 63 letters, digits, '_', "
                 "'-' or '.', starting with a letter or '_'", path);
        bad = 1;
    } else if (s->named && (eng_policy_lookup(s->name) || strcmp(s->name, "lua") == 0)) {
        snprintf(err, errlen, "%.300s: policy name '%s' is already a built-in policy's name (its "
                 "rows would pass for that policy's); set another `name` in the hooks table",
                 path, s->name);
        bad = 1;
    }
    if (!bad) {
        printf("%s: Lua policy %s%s\n", s->named ? s->name : "(unnamed)", path,
               s->needs_draft ? "" : " (drafts nothing)");
        printf("  hooks:");
        for (int h = 0; h < H_N; h++)
            if (s->ref[h] != LUA_NOREF) printf(" %s", hook_names[h]);
        printf("\n");
        describe_params(s->L, &p, markdown);
    }
    lp_destroy(s);
    free(buf);
    return bad ? -1 : 0;
}

/* ------------------------------------------------------------ tune */

int lp_is(const eng_policy_desc *desc)
{
    return desc && desc->create == lp_create;
}

/* A number field of the spec at idx into *v (unchanged when absent). */
static void spec_number(lua_State *L, int idx, const char *k, double *v)
{
    lua_getfield(L, idx, k);
    if (lua_type(L, -1) == LUA_TNUMBER) *v = lua_tonumber(L, -1);
    lua_pop(L, 1);
}

/* Pushes the declaration of knob name (params[name] of the policy's hooks
 * table) and returns its stack index; 0 with err when the policy declares
 * no params or no such knob (with the closest name). */
static int knob_decl(lua_State *L, const lp_params *p, const lp_state *s, const char *name,
                     char *err, size_t errlen)
{
    lua_pushcfunction(L, lp_load_policy);
    lua_pushlightuserdata(L, (void *)p);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
        snprintf(err, errlen, "%s: cannot read its hooks table", p->file);
        return 0;
    }
    lua_getfield(L, -1, "params");
    int decl = lua_gettop(L);
    if (!lua_istable(L, decl)) {
        snprintf(err, errlen,
                 "Lua policy %s declares no params (a `params` table in its hooks "
                 "table): its knobs cannot be searched",
                 p->file);
        return 0;
    }
    lua_getfield(L, decl, name);
    if (lua_istable(L, -1)) return lua_gettop(L);
    const char *best = NULL;
    int bd = 1 << 30;
    lua_pushnil(L);
    while (lua_next(L, decl)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) continue;
        int dist = eng_params_distance(name, lua_tostring(L, -1));
        if (dist < bd) bd = dist, best = lua_tostring(L, -1);
    }
    if (best && bd <= (int)(strlen(name) / 2 > 2 ? strlen(name) / 2 : 2))
        snprintf(err, errlen, "policy %s has no knob '%s' (did you mean '%s'?)", s->name, name,
                 best);
    else
        snprintf(err, errlen, "policy %s has no knob '%s'", s->name, name);
    return 0;
}

/* The knob's choices (the declaration's `choices` list, at the top of the
 * stack) as an enum; -1 with err when none is a string. */
static int knob_choices(lua_State *L, const lp_state *s, const char *name, lp_knob *out,
                        char *err, size_t errlen)
{
    int nc = 0;
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        if (lua_type(L, -1) == LUA_TSTRING && nc < LP_KNOB_CHOICES) {
            snprintf(out->choice_text[nc], sizeof out->choice_text[nc], "%s", lua_tostring(L, -1));
            out->choices[nc] = out->choice_text[nc];
            nc++;
        }
        lua_pop(L, 1);
    }
    if (nc == 0) {
        snprintf(err, errlen, "knob '%s' of policy %s has no string choices", name, s->name);
        return -1;
    }
    out->choices[nc] = NULL;
    out->d.type = ENG_PARAM_ENUM;
    out->d.choices = out->choices;
    return 0;
}

/* The knob's type and range from its declaration at spec: choices (enum),
 * a boolean default (bool), else a number (integer when declared so) with
 * its min and max.  0, or -1 with err (a string without choices). */
static int knob_type(lua_State *L, int spec, const lp_state *s, const char *name, lp_knob *out,
                     char *err, size_t errlen)
{
    lua_getfield(L, spec, "default");
    int def_type = lua_type(L, -1);
    lua_getfield(L, spec, "integer");
    int integer = lua_toboolean(L, -1);
    lua_getfield(L, spec, "choices");
    int rc = 0;
    if (lua_istable(L, -1)) {
        rc = knob_choices(L, s, name, out, err, errlen);
    } else if (def_type == LUA_TBOOLEAN) {
        out->d.type = ENG_PARAM_BOOL;
        out->d.min = 0;
        out->d.max = 1;
    } else if (def_type == LUA_TSTRING) {
        snprintf(err, errlen,
                 "knob '%s' of policy %s is a string param without choices; only "
                 "numbers, booleans and choices can be searched",
                 name, s->name);
        rc = -1;
    } else {
        out->d.type = integer ? ENG_PARAM_INT : ENG_PARAM_DOUBLE;
        if (integer) out->d.min = INT32_MIN, out->d.max = INT32_MAX;
        spec_number(L, spec, "min", &out->d.min);
        spec_number(L, spec, "max", &out->d.max);
    }
    lua_pop(L, 3);
    return rc;
}

/* The knob's current value: the one given to the policy object, else the
 * declared default (an enum's index; NaN when neither fits the type). */
static double knob_current(lua_State *L, int spec, const lp_params *p, const char *name,
                           const lp_knob *out)
{
    char src[1100];
    snprintf(src, sizeof src, "return %s", p->args);
    lua_getfield(L, spec, "default");
    if (luaL_loadbufferx(L, src, strlen(src), "=params", "t") == LUA_OK &&
        lua_pcall(L, 0, 1, 0) == LUA_OK && lua_istable(L, -1)) {
        lua_getfield(L, -1, name);
        if (!lua_isnil(L, -1))
            lua_replace(L, -3);
        else
            lua_pop(L, 1);
    }
    lua_pop(L, 1);
    double cur = NAN;
    if (out->d.type == ENG_PARAM_ENUM && lua_type(L, -1) == LUA_TSTRING) {
        for (int i = 0; out->choices[i]; i++)
            if (!strcmp(out->choices[i], lua_tostring(L, -1))) cur = i;
    } else if (out->d.type == ENG_PARAM_BOOL && lua_isboolean(L, -1)) {
        cur = lua_toboolean(L, -1);
    } else if (lua_type(L, -1) == LUA_TNUMBER) {
        cur = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return cur;
}

int lp_knob_read(const void *params, const char *name, lp_knob *out, char *err,
                       size_t errlen)
{
    const lp_params *p = params;
    memset(out, 0, sizeof *out);
    lp_state *s = lp_open(p, err, errlen);
    if (!s) return -1;
    lua_State *L = s->L;
    int rc = -1, spec = knob_decl(L, p, s, name, err, errlen);
    if (spec) {
        snprintf(out->name, sizeof out->name, "%s", name);
        out->d.name = out->name;
        out->d.min = -1e300;
        out->d.max = 1e300;
        out->d.def = NAN;
        rc = knob_type(L, spec, s, name, out, err, errlen);
        if (rc == 0) out->current = knob_current(L, spec, p, name, out);
    }
    lp_destroy(s);
    return rc;
}

