/*
 * api_lpolicy.c -- the script side of policies written in Lua (their host:
 * sim/lpolicy/lp_host.h): flashspec.policy.lua(FILE [, params]) finding the
 * file, reading it once, writing its params table canonically and checking
 * the policy's name; the policy object with tuned knob values
 * (flashspec.tune).
 */
#include "sim/lua/api_lpolicy.h"

#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/eng_policy.h"
#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/config/sandbox.h"
#include "sim/lpolicy/lp_host.h"
#include "sim/out/sim_strbuf.h"

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
    if (sim_run_find_file(a, path, found, sizeof found, tried, sizeof tried) != 0)
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
    lp_source_hash(kept, len, p->source_hash, sizeof p->source_hash);
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
    if (!lp_name_ok(d->name))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.policy.lua: %s: %s must be 1 to 63 letters, digits, '_', '-' "
                 "or '.', starting with a letter or '_'%s",
                 chunk, line, p->file, named ? "its policy name" : "its file name",
                 named ? "" : " (or set `name` in the hooks table)");
    /* rows name their policy: a Lua policy must not pass for another one */
    const char *taken = sim_run_policy_name_taken(a, d->name); /* Flash_AR is flash_ar */
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

void fs_lua_policy_with(lua_State *L, const void *uv, int n, const lp_knob *const *knobs,
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
