/*
 * api_policy.c -- the policies a script composes points from:
 * flashspec.policy.NAME{...} for every policy of the engine registry and
 * every loaded plug-in, validated against the policy's parameter table; lists
 * of values expand to lists of policies; `tree_nodes`, the one tree-size
 * knob, maps to each tree policy's own parameter; each policy's label (the
 * policy_params column).  See api_impl.h.
 */
#include "api_impl.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/lua/api.h"
#include "sim/config/lparams.h"
#include "sim/out/rows.h"

void fs_policy_label(lua_State *L, const eng_policy_desc *desc, const void *params, char *out,
                     size_t n)
{
    if (sim_out_params_label(desc->params, params, out, n) == 0) return;
    char chunk[PATH_MAX];
    int line;
    fs_caller_src(L, chunk, sizeof chunk, &line);
    fs_raise(L, SIM_CONFIG, 0,
             "%s:%d: flashspec.policy.%s: its parameters' label (the policy_params column, "
             "\"name=value\" pairs) would be over %zu bytes; a longer label would be cut, and "
             "points that differ past the cut would read alike -- give shorter values",
             chunk, line, desc->name, n - 1);
}

void fs_policy_push(lua_State *L, const eng_policy_desc *desc, const void *params)
{
    ud_policy *u = lua_newuserdatauv(L, sizeof *u + desc->params_size, 0);
    memset(u, 0, sizeof *u + desc->params_size);
    u->desc = desc;
    memcpy(u->params, params, desc->params_size);
    luaL_setmetatable(L, MT_POLICY);
    fs_policy_label(L, desc, u->params, u->label, sizeof u->label);
}

/* ---------------------------------------------------- the tree-size knob */

/* `tree_nodes` (nodes of one verified tree, root included) maps to the
 * parameter a policy's descriptor names as its tree size (eng_tree_knob):
 * param = tree_nodes - eng_tree_rule_offset(rule), or, for a widths list,
 * its deepest prefix that fits (its shape stays fixed).  Caps bound a tree
 * the policy sizes itself per cycle; the others fix its size. */

/* The parameter tree_nodes sets for desc given the user's table at t: its
 * unless_off flag read there (a boolean), else the flag's default. */
static const eng_param_desc *tree_param_lua(lua_State *L, const eng_policy_desc *desc, int t)
{
    int on = 1;
    if (desc->tree.unless_off) {
        const eng_param_desc *f = eng_params_find(desc->params, desc->tree.unless_off);
        if (f) on = f->def != 0;
        lua_getfield(L, t, desc->tree.unless_off);
        if (lua_type(L, -1) == LUA_TBOOLEAN) on = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    return eng_tree_param_flag(desc, on);
}

/* A widths list (at wi, tree parameter d) cut to the deepest prefix whose
 * tree holds at most n nodes; raises when not even the first level fits. */
static void cut_widths(lua_State *L, const eng_param_desc *d, int wi, lua_Integer n,
                       const char *what, const char *chunk, int line)
{
    lua_newtable(L);
    lua_Integer nodes = 1, level = 1, len = slp_list_len(L, wi, what, d->name, chunk, line);
    for (lua_Integer i = 1; i <= len; i++) {
        lua_rawgeti(L, wi, i);
        lua_Integer w = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
        lua_pop(L, 1);
        if (w < 1 || (double)w < d->min || (double)w > d->max)
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: %s[%lld] must be an integer in [%.0f, %.0f]",
                     chunk, line, what, d->name, (long long)i, d->min < 1 ? 1.0 : d->min, d->max);
        level *= w;
        if (nodes + level > n) break;
        nodes += level;
        lua_pushinteger(L, w);
        lua_rawseti(L, -2, i);
    }
    if (lua_rawlen(L, -1) == 0)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: %s: tree_nodes = %lld: not even the first level of %s fits (a "
                 "tree of %lld nodes)",
                 chunk, line, what, (long long)n, d->name, (long long)(1 + level));
}

/* The shape tree_nodes cuts for a widths parameter d, at stack index
 * given: the widths given, else d's default put there; raises unless it is
 * one list of integers. */
static void widths_shape(lua_State *L, const eng_param_desc *d, int given, const char *what,
                         const char *chunk, int kl)
{
    if (lua_isnil(L, given)) {
        lua_createtable(L, d->def_count, 0);
        for (int32_t i = 0; i < d->def_count; i++) {
            lua_pushinteger(L, (lua_Integer)d->def_list[i]);
            lua_rawseti(L, -2, i + 1);
        }
        lua_replace(L, given);
    }
    lua_rawgeti(L, given, 1);
    int nested = lua_type(L, -1) == LUA_TTABLE;
    lua_pop(L, 1);
    if (lua_type(L, given) != LUA_TTABLE || nested)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: %s: with 'tree_nodes', '%s' must be one list of integers (the "
                 "shape tree_nodes cuts)",
                 chunk, kl, what, d->name);
}

/* The value on top of the stack (popped) as an integer, a float with an
 * integral value included; LUA_MININTEGER when it is neither. */
static lua_Integer integral_value(lua_State *L)
{
    lua_Integer v = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : LUA_MININTEGER;
    if (lua_type(L, -1) == LUA_TNUMBER && !lua_isinteger(L, -1)) {
        double x = lua_tonumber(L, -1);
        if (x == floor(x) && fabs(x) < 1e15) v = (lua_Integer)x;
    }
    lua_pop(L, 1);
    return v;
}

/* Raises: `tree_nodes` given to a policy whose descriptor states no tree
 * size, naming the registered policies that do. */
static void no_tree(lua_State *L, const eng_policy_desc *desc, const char *what,
                    const char *chunk, int kl)
{
    char names[512] = "";
    size_t len = 0;
    int32_t nreg = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&nreg);
    for (int32_t i = 0; i < nreg && len < sizeof names; i++)
        if (eng_tree_param_flag(reg[i], 1))
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                                    reg[i]->name);
    fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: key 'tree_nodes' is for tree policies (%s); %s %s",
             chunk, kl, what, names, desc->name,
             desc->tree.rule == ENG_TREE_ONE_ROW ? "verifies one row, it has no tree"
                                                 : "declares no such parameter");
}

/* Rewrites the constructor table at index 1 when it holds `tree_nodes` (a
 * value or a list of values) into the policy's own parameter, for a built-in
 * tree policy; a policy that declares tree_nodes itself takes it as is. */
static void map_tree_nodes(lua_State *L, const eng_policy_desc *desc, const char *what,
                           const char *chunk, int line)
{
    if (eng_params_find(desc->params, "tree_nodes")) return;
    lua_getfield(L, 1, "tree_nodes");
    int tn = lua_gettop(L);
    if (lua_isnil(L, tn)) {
        lua_pop(L, 1);
        return;
    }
    int kl = slp_key_line(chunk, line, "tree_nodes");
    const eng_param_desc *d = tree_param_lua(L, desc, 1);
    if (!d) no_tree(L, desc, what, chunk, kl);
    const char *param = d->name;
    int minus = eng_tree_rule_offset(desc->tree.rule);
    int widths = d->type == ENG_PARAM_INT_LIST;
    lua_getfield(L, 1, param);
    int given = lua_gettop(L);
    if (!lua_isnil(L, given) && !widths)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: %s: set one of 'tree_nodes' and '%s' (tree_nodes = %s + %d)", chunk, kl,
                 what, param, param, minus);
    if (widths) widths_shape(L, d, given, what, chunk, kl);
    /* one value or a plain list of values */
    int list = lua_type(L, tn) == LUA_TTABLE && !lua_getmetatable(L, tn);
    if (lua_type(L, tn) == LUA_TTABLE && !list) lua_pop(L, 1); /* the metatable */
    lua_Integer n = list ? slp_list_len(L, tn, what, "tree_nodes", chunk, line) : 1;
    if (list && n == 0)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: key 'tree_nodes' is an empty list", chunk, kl,
                 what);
    lua_Integer lo = (lua_Integer)d->min + minus, hi = (lua_Integer)d->max + minus;
    if (widths) lo = 2, hi = 1 << 20;
    lua_createtable(L, (int)n, 0);
    int out = lua_gettop(L);
    for (lua_Integer i = 1; i <= n; i++) {
        if (list)
            lua_rawgeti(L, tn, i);
        else
            lua_pushvalue(L, tn);
        lua_Integer v = integral_value(L);
        if (v == LUA_MININTEGER || v < lo || v > hi)
            fs_raise(L, SIM_CONFIG, 0,
                     "%s:%d: %s: tree_nodes must be %s in [%lld, %lld] (nodes per tree, root "
                     "included; %s = tree_nodes%s)",
                     chunk, kl, what, list ? "a list of integers" : "an integer", (long long)lo,
                     (long long)hi, param,
                     widths     ? " cut"
                     : minus    ? " - 1"
                                : "");
        if (widths)
            cut_widths(L, d, given, v, what, chunk, kl);
        else
            lua_pushinteger(L, v - minus);
        lua_rawseti(L, out, i);
    }
    /* a copy of the user's table with the policy's own key */
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
    lua_pushnil(L);
    lua_setfield(L, -2, "tree_nodes");
    if (list)
        lua_pushvalue(L, out);
    else
        lua_rawgeti(L, out, 1);
    lua_setfield(L, -2, param);
    lua_replace(L, 1);
    lua_settop(L, 1);
}

/* The policy's own check of its parameters -- its create hook, run once here
 * on the validated struct -- so that what it refuses (an empty widths list
 * for specinfer) is a configuration error at the script's line, not a
 * failure of every point it would run in (exit 70). */
static void policy_accepts(lua_State *L, const ud_policy *u, const char *what, const char *chunk,
                           int line)
{
    eng_policy pol = {0};
    int rc = u->desc->create ? u->desc->create(u->params, &pol) : ENG_E_ARG;
    if (rc == ENG_OK) {
        eng_policy_destroy(&pol);
        return;
    }
    if (rc == ENG_E_NOMEM) fs_raise(L, SIM_INTERNAL, 0, "%s:%d: %s: out of memory", chunk, line, what);
    for (const eng_param_desc *d = u->desc->params; d && d->name; d++) {
        int32_t n;
        if (d->type != ENG_PARAM_DOUBLE_LIST && d->type != ENG_PARAM_INT_LIST) continue;
        memcpy(&n, u->params + d->count_offset, sizeof n);
        if (n == 0)
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: key '%s' is an empty list (%s needs at "
                     "least one value)", chunk, slp_key_line(chunk, line, d->name), what, d->name,
                     u->desc->name);
    }
    fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: the policy refuses these parameters (%s)", chunk,
             line, what, u->label);
}

/* Pushes one policy object of desc from the params table at idx. */
static void policy_one(lua_State *L, const eng_policy_desc *desc, int idx, const char *what,
                       const char *chunk, int line)
{
    ud_policy *u = lua_newuserdatauv(L, sizeof *u + desc->params_size, 0);
    memset(u, 0, sizeof *u + desc->params_size);
    u->desc = desc;
    slp_check_table(L, idx, desc->params, u->params, what, chunk, line);
    fs_policy_label(L, desc, u->params, u->label, sizeof u->label);
    policy_accepts(L, u, what, chunk, line);
    const eng_param_desc *tp = tree_param_lua(L, desc, idx);
    if (tp) {
        lua_getfield(L, idx, tp->name);
        u->cap_set = !lua_isnil(L, -1);
        lua_pop(L, 1);
    }
    luaL_setmetatable(L, MT_POLICY);
}

/* 1 when the value at idx is a set of alternatives for row d: a plain list
 * for a scalar parameter, a plain list of lists for a list parameter. */
static int alternatives(lua_State *L, int idx, const eng_param_desc *d)
{
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    if (lua_getmetatable(L, idx)) {
        lua_pop(L, 1);
        return 0;
    }
    int list = d->type == ENG_PARAM_DOUBLE_LIST || d->type == ENG_PARAM_INT_LIST;
    if (!list) return 1;
    lua_rawgeti(L, idx, 1);
    int nested = lua_type(L, -1) == LUA_TTABLE;
    lua_pop(L, 1);
    return nested;
}

#define POLICY_MAX_ALTERNATIVES 4096

/* flashspec.policy.NAME { ... }: one policy object; when some parameters are
 * given sets of alternatives (k = { 4, 8, 16 }), a plain list of policy
 * objects, one per combination (parameters in the policy's declared order,
 * the last fastest) -- which a sweep key expands like any list. */
int fs_l_policy_make(lua_State *L)
{
    const eng_policy_desc *desc = lua_touserdata(L, lua_upvalueindex(1));
    if (lua_isnoneornil(L, 1)) {
        lua_newtable(L);
        lua_replace(L, 1);
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    char chunk[PATH_MAX], what[96];
    int line;
    fs_caller_src(L, chunk, sizeof chunk, &line);
    snprintf(what, sizeof what, "flashspec.policy.%s", desc->name);
    map_tree_nodes(L, desc, what, chunk, line);
    const eng_param_desc *alt[64];
    lua_Integer len[64], at[64], total = 1;
    int na = 0;
    for (const eng_param_desc *d = desc->params; d && d->name && na < 64; d++) {
        lua_getfield(L, 1, d->name);
        if (alternatives(L, -1, d)) {
            lua_Integer n = slp_list_len(L, -1, what, d->name, chunk, line);
            if (n < 1)
                return fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: key '%s' is an empty list", chunk,
                                line, what, d->name);
            if (total > POLICY_MAX_ALTERNATIVES / n)
                return fs_raise(L, SIM_CONFIG, 0,
                                "%s:%d: %s: the lists make more than %d "
                                "policies",
                                chunk, line, what, POLICY_MAX_ALTERNATIVES);
            total *= n;
            alt[na] = d;
            len[na] = n;
            at[na++] = 0;
        }
        lua_pop(L, 1);
    }
    if (na == 0) {
        policy_one(L, desc, 1, what, chunk, line);
        return 1;
    }
    lua_createtable(L, (int)total, 0);
    int out = lua_gettop(L);
    for (lua_Integer c = 0; c < total; c++) {
        lua_newtable(L); /* the params with this combination's values */
        int one = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_rawset(L, one);
        }
        for (int i = 0; i < na; i++) {
            lua_getfield(L, 1, alt[i]->name);
            lua_rawgeti(L, -1, at[i] + 1);
            lua_setfield(L, one, alt[i]->name);
            lua_pop(L, 1);
        }
        policy_one(L, desc, one, what, chunk, line);
        lua_rawseti(L, out, c + 1);
        lua_pop(L, 1);
        for (int i = na - 1; i >= 0; i--) /* the last fastest */
            if (++at[i] < len[i])
                break;
            else
                at[i] = 0;
    }
    return 1;
}
