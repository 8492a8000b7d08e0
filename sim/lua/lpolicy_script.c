/*
 * lpolicy_script.c -- the script side of policies written in Lua
 * (lpolicy.c): flashspec.policy.lua(FILE [, params]) reading the file once and
 * checking the policy's name, `flashspec policies FILE.lua`, and the knobs
 * flashspec.tune may vary in a Lua policy.
 */
#include "sim/lua/lpolicy.h"
#include "sim/lua/lpolicy_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/eng_policy.h"
#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/config/sandbox.h"
#include "sim/out/sim_strbuf.h"
#include "sim/sweep/sim_sweep.h"

typedef struct lp_desc {
    eng_policy_desc desc;
    char name[64];
    char doc[160];
} lp_desc;

/* Appends the value at idx as Lua source (numbers exactly, as the shortest
 * decimal that reads back the same; strings quoted). */
static int append_value(lua_State *L, int idx, char *out, size_t n, size_t *at)
{
    int t = lua_type(L, idx);
    int k;
    if (t == LUA_TBOOLEAN) {
        k = snprintf(out + *at, n - *at, "%s", lua_toboolean(L, idx) ? "true" : "false");
    } else if (t == LUA_TNUMBER && lua_isinteger(L, idx)) {
        k = snprintf(out + *at, n - *at, "%lld", (long long)lua_tointeger(L, idx));
    } else if (t == LUA_TNUMBER) {
        /* the shortest decimal that reads back as v, kept a float ("2.0") */
        double v = lua_tonumber(L, idx);
        if (!isfinite(v)) return -1;
        char num[40];
        sim_out_fmt_exact(num, sizeof num, v);
        k = snprintf(out + *at, n - *at, "%s%s", num, strpbrk(num, ".eEn") ? "" : ".0");
    } else if (t == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        k = snprintf(out + *at, n - *at, "\"");
        for (size_t i = 0; i < len && k > 0 && *at + (size_t)k < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\')
                k += snprintf(out + *at + k, n - *at - (size_t)k, "\\%c", c);
            else if (c < 0x20 || c >= 0x7f)
                k += snprintf(out + *at + k, n - *at - (size_t)k, "\\%03u", c);
            else
                k += snprintf(out + *at + k, n - *at - (size_t)k, "%c", c);
        }
        if (k > 0 && *at + (size_t)k < n) k += snprintf(out + *at + k, n - *at - (size_t)k, "\"");
    } else {
        return -1;
    }
    if (k < 0 || *at + (size_t)k >= n) return -2;
    *at += (size_t)k;
    return 0;
}

/* 1 when name is 1 to 63 of [A-Za-z0-9_.-] starting with a letter or '_'. */
static int policy_name_ok(const char *name)
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
static void source_hash(const char *src, size_t len, char *out, size_t n)
{
    uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x6a09e667f3bcc909ULL;
    for (size_t i = 0; i < len; i++) {
        h1 = (h1 ^ (uint64_t)(unsigned char)src[i]) * 0x100000001b3ULL;
        h2 = (h2 ^ (uint64_t)(unsigned char)src[i]) * 0x100000001b3ULL;
    }
    snprintf(out, n, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The params table at tbl (0: none) as a canonical Lua constructor into out:
 * keys sorted, values exact ("{k=8,unit=\"cpu\"}").  0, or -1 with why. */
static int args_serialize(lua_State *L, int tbl, char *out, size_t cap, char *why, size_t wlen)
{
    size_t at = 0;
    out[at++] = '{';
    if (tbl) {
        tbl = lua_absindex(L, tbl);
        const char *keys[128];
        int nk = 0;
        lua_pushnil(L);
        while (lua_next(L, tbl)) {
            lua_pop(L, 1);
            const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            int ident = k && (k[0] == '_' || ((k[0] | 32) >= 'a' && (k[0] | 32) <= 'z'));
            for (const char *c = k; ident && *c; c++)
                ident = *c == '_' || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z');
            if (!ident || nk == 128) {
                lua_pop(L, 1);
                return snprintf(why, wlen, "params keys must be names (at most 128)"), -1;
            }
            keys[nk++] = k;
        }
        qsort(keys, (size_t)nk, sizeof keys[0], cmp_keys);
        for (int i = 0; i < nk; i++) {
            lua_getfield(L, tbl, keys[i]);
            int k = snprintf(out + at, cap - at, "%s%s=", i ? "," : "", keys[i]);
            if (k < 0 || at + (size_t)k >= cap) k = -1;
            int rc = k < 0 ? -2 : (at += (size_t)k, append_value(L, -1, out, cap, &at));
            lua_pop(L, 1);
            if (rc == -1)
                return snprintf(why, wlen,
                                "param '%s' must be a finite number, a string or a "
                                "boolean",
                                keys[i]),
                       -1;
            if (rc == -2)
                return snprintf(why, wlen, "params too long (at most %zu bytes written out)",
                                cap - 2),
                       -1;
        }
    }
    if (at + 2 > cap) return snprintf(why, wlen, "params too long"), -1;
    out[at++] = '}';
    out[at] = 0;
    return 0;
}

/* flashspec.policy.lua(path, params): the file found (beside the script,
 * else in the project), the params table serialised canonically, the file's
 * bytes read once and kept for the run (they enter the point id and are what
 * every point runs), and the script's limits. */
static void policy_lua_params(lua_State *L, fs_api *a, const char *chunk, int line, lp_params *p)
{
    const char *path = luaL_checkstring(L, 1);
    memset(p, 0, sizeof *p);
    char tried[2 * PATH_MAX + 16] = "", found[PATH_MAX];
    if (fs_api_find_file(a, path, found, sizeof found, tried, sizeof tried) != 0)
        fs_raise(L, SIM_MISSING, 0, "%s:%d: flashspec.policy.lua: policy file '%s' not found%s",
                 chunk, line, path, tried);
    size_t flen = strlen(found);
    if (flen >= sizeof p->file)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.policy.lua: path too long", chunk, line);
    memcpy(p->file, found, flen + 1);
    /* the params table, canonical: keys sorted, values exact */
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    char why[256];
    if (args_serialize(L, lua_isnoneornil(L, 2) ? 0 : 2, p->args, sizeof p->args, why, sizeof why))
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.policy.lua: %s", chunk, line, why);
    char *buf, rerr[LP_ERR_CAP];
    size_t len;
    if (lp_read_source(p->file, &buf, &len, rerr, sizeof rerr) != 0)
        fs_raise(L, SIM_MISSING, 0, "%s:%d: flashspec.policy.lua: %s", chunk, line, rerr);
    char *kept = lua_newuserdatauv(L, len ? len : 1, 0); /* counted against the script */
    memcpy(kept, buf, len);
    free(buf);
    luaL_ref(L, LUA_REGISTRYINDEX);
    p->src = kept;
    p->src_len = len;
    source_hash(kept, len, p->source_hash, sizeof p->source_hash);
    const fs_lua_limits *lim = a->lim;
    p->step_limit = lim ? lim->step_limit : 0;
    p->mem_limit = lim ? lim->mem_limit_bytes : 0;
    p->pool = lim ? lim->pool : NULL;
}

/* d->name: the hooks table's `name` (named), else the file name without
 * .lua; raises unless it is a plain word that no built-in, `lua` or plug-in
 * policy has. */
static void policy_lua_name(lua_State *L, fs_api *a, const char *hook_name, int named,
                            const lp_params *p, lp_desc *d, const char *chunk, int line)
{
    snprintf(d->name, sizeof d->name, "%s", hook_name);
    if (!named) {
        const char *base = strrchr(p->file, '/');
        base = base ? base + 1 : p->file;
        size_t bl = strlen(base);
        if (bl > 4 && !strcmp(base + bl - 4, ".lua")) bl -= 4;
        snprintf(d->name, sizeof d->name, "%.*s", (int)(bl < 63 ? bl : 63), base);
    }
    /* the name goes into every result row: a plain word */
    if (!policy_name_ok(d->name))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.policy.lua: %s: %s must be 1 to 63 letters, digits, '_', '-' "
                 "or '.', starting with a letter or '_'%s",
                 chunk, line, p->file, named ? "its policy name" : "its file name",
                 named ? "" : " (or set `name` in the hooks table)");
    /* rows name their policy: a Lua policy must not pass for another one */
    const char *taken = fs_policy_name_taken(a, d->name); /* Flash_AR is flash_ar */
    if (taken)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.policy.lua: %s: %s '%s' is already a policy's name%s%s%s (its "
                 "rows would pass for that policy's); set another `name` in the hooks table",
                 chunk, line, p->file, named ? "policy name" : "its file name", d->name,
                 strcmp(taken, d->name) ? " ('" : "", strcmp(taken, d->name) ? taken : "",
                 strcmp(taken, d->name) ? "', names compared without regard to case)" : "");
}

int fs_l_policy_lua(lua_State *L)
{
    char chunk[PATH_MAX];
    int line;
    fs_caller_src(L, chunk, sizeof chunk, &line);
    fs_api *a = fs_api_get(L);
    lp_params p;
    policy_lua_params(L, a, chunk, line, &p);
    /* load it once here: a broken file is the script's error, at this line */
    char err[LP_ERR_CAP];
    lp_state *s = lp_open(&p, err, sizeof err);
    if (!s)
        return fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.policy.lua: %s", chunk, line, err);
    lp_desc *d = lua_newuserdatauv(L, sizeof *d, 0);
    memset(d, 0, sizeof *d);
    char hook_name[sizeof d->name];
    snprintf(hook_name, sizeof hook_name, "%s", s->name);
    int needs_draft = s->needs_draft, named = s->named;
    lp_destroy(s);
    policy_lua_name(L, a, hook_name, named, &p, d, chunk, line);
    snprintf(d->doc, sizeof d->doc, "Lua policy %.140s", p.file);
    d->desc = (eng_policy_desc){.name = d->name, .doc = d->doc, .params_size = sizeof p,
                                .params = lp_table, .create = lp_create,
                                .needs_draft = needs_draft};
    /* anchored for the whole run: policy objects and points point at it */
    luaL_ref(L, LUA_REGISTRYINDEX);
    fs_policy_push(L, &d->desc, &p);
    ud_policy *u = lua_touserdata(L, -1);
    /* the label: the params without the braces ("k=8,unit=\"cpu\"") */
    size_t n = strlen(p.args);
    snprintf(u->label, sizeof u->label, "%.*s", (int)(n - 2), p.args + 1);
    return 1;
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

int fs_lua_policy_describe(const char *path, int markdown, char *err, size_t errlen)
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
    if (s->named && !policy_name_ok(s->name)) {
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

int fs_lua_policy_is(const eng_policy_desc *desc)
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
static int knob_choices(lua_State *L, const lp_state *s, const char *name, fs_lua_knob *out,
                        char *err, size_t errlen)
{
    int nc = 0;
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        if (lua_type(L, -1) == LUA_TSTRING && nc < FS_LUA_KNOB_CHOICES) {
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
static int knob_type(lua_State *L, int spec, const lp_state *s, const char *name, fs_lua_knob *out,
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
                           const fs_lua_knob *out)
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

int fs_lua_policy_knob(const void *params, const char *name, fs_lua_knob *out, char *err,
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

void fs_lua_policy_with(lua_State *L, const void *uv, int n, const fs_lua_knob *const *knobs,
                        const double *vals, const char *what, const char *chunk, int line)
{
    const ud_policy *u = uv;
    lp_params p = *(const lp_params *)u->params;
    char src[1100];
    snprintf(src, sizeof src, "return %s", p.args);
    if (luaL_loadbufferx(L, src, strlen(src), "=params", "t") != LUA_OK)
        fs_raise(L, SIM_INTERNAL, 0, "%s:%d: %s: the params of policy %s do not read back",
                 chunk, line, what, u->desc->name);
    lua_call(L, 0, 1);
    int tbl = lua_gettop(L);
    for (int i = 0; i < n; i++) {
        const eng_param_desc *d = &knobs[i]->d;
        if (d->type == ENG_PARAM_INT)
            lua_pushinteger(L, (lua_Integer)vals[i]);
        else if (d->type == ENG_PARAM_BOOL)
            lua_pushboolean(L, vals[i] != 0);
        else if (d->type == ENG_PARAM_ENUM)
            lua_pushstring(L, d->choices[(int)vals[i]]);
        else
            lua_pushnumber(L, vals[i]);
        lua_setfield(L, tbl, d->name);
    }
    char why[256];
    if (args_serialize(L, tbl, p.args, sizeof p.args, why, sizeof why))
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: policy %s: %s", chunk, line, what, u->desc->name,
                 why);
    lua_pop(L, 1);
    /* the declaration checks the values, as fs.policy.lua does */
    char err[LP_ERR_CAP];
    lp_state *s = lp_open(&p, err, sizeof err);
    if (!s)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: policy %s: %s", chunk, line, what, u->desc->name,
                 err);
    lp_destroy(s);
    fs_policy_push(L, u->desc, &p);
    ud_policy *nu = lua_touserdata(L, -1);
    size_t len = strlen(p.args);
    snprintf(nu->label, sizeof nu->label, "%.*s", (int)(len - 2), p.args + 1);
}
