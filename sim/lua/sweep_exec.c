/*
 * sweep_exec.c -- expansion of sweep tables, staging of their points, and
 * the execution of staged points (sim/sweep/sim_sweep_exec.h) raised as Lua
 * errors (see sweep_exec.h for the pipeline and the error policy).
 *
 * Invariants:
 *   - expansion is a pure function of the sweep table: every MPI rank, running
 *     the same script, expands the same points in the same order;
 *   - the point tables stay referenced (on the Lua stack of the caller) while
 *     their points execute, since each sim_point borrows from their userdata;
 *   - nothing here writes results files: the script's end does, once.
 */
#include "sim/lua/sweep_exec.h"

#include <lauxlib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/config/lparams.h"

#define MAX_POINTS ((lua_Integer)1 << 40)

/* ------------------------------------------------------------- expand */

static int is_plain_table(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    if (lua_getmetatable(L, idx)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

/* src.policy = a list holding lists of policies (what a constructor with
 * alternatives returns: { fs.policy.chain{ k = {4, 8} }, fs.policy.lever{} })
 * becomes one flat list. */
static void flatten_policies(lua_State *L, int src, const char *chunk, int line)
{
    lua_getfield(L, src, "policy");
    int p = lua_gettop(L);
    lua_Integer n = is_plain_table(L, p) ? slp_list_len(L, p, "flashspec.sweep", "policy", chunk,
                                                         line)
                                         : 0,
                nested = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, p, i);
        nested += is_plain_table(L, -1);
        lua_pop(L, 1);
    }
    if (nested) {
        lua_newtable(L);
        lua_Integer at = 0;
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, p, i);
            lua_Integer m = is_plain_table(L, -1) ? slp_list_len(L, -1, "flashspec.sweep",
                                                                 "policy", chunk, line)
                                                  : 0;
            if (!is_plain_table(L, -1)) {
                lua_rawseti(L, -2, ++at);
                continue;
            }
            for (lua_Integer j = 1; j <= m; j++) {
                lua_rawgeti(L, -1, j);
                lua_rawseti(L, -3, ++at);
            }
            lua_pop(L, 1);
        }
        lua_setfield(L, src, "policy");
    }
    lua_settop(L, p - 1);
}

/* Appends to the array `out` the Cartesian product of the point table at
 * `src` (list-valued keys vary, canonical order, last fastest). */
static void expand_product(lua_State *L, int src, int out, lua_Integer *count,
                           const char *const *keys, int nk, const char *chunk, int line)
{
    lua_Integer len[64], at[64], total = 1;
    flatten_policies(L, src, chunk, line);
    for (int i = 0; i < nk; i++) {
        lua_getfield(L, src, keys[i]);
        len[i] = is_plain_table(L, -1)
                     ? slp_list_len(L, -1, "flashspec.sweep", keys[i], chunk, line)
                     : 0;
        if (len[i] > 0 && strcmp(keys[i], "tags") == 0) {
            /* a map of tags is one value; a list of such maps, alternatives */
            lua_rawgeti(L, -1, 1);
            if (lua_type(L, -1) != LUA_TTABLE) len[i] = 0;
            lua_pop(L, 1);
        }
        if (is_plain_table(L, -1) && len[i] == 0 && strcmp(keys[i], "tags") != 0)
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.sweep: key '%s' is an empty list",
                          chunk, slp_key_line(chunk, line, keys[i]), keys[i]);
        lua_pop(L, 1);
        at[i] = 0;
        if (len[i] > 0) {
            if (total > MAX_POINTS / len[i])
                fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.sweep: too many points",
                              chunk, line);
            total *= len[i];
        }
    }
    if (*count > MAX_POINTS - total)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.sweep: too many points", chunk, line);
    for (lua_Integer p = 0; p < total; p++) {
        lua_createtable(L, 0, nk);
        int pt = lua_gettop(L);
        for (int i = 0; i < nk; i++) {
            lua_getfield(L, src, keys[i]);
            if (len[i] > 0) {
                lua_rawgeti(L, -1, at[i] + 1);
                lua_remove(L, -2);
            }
            lua_setfield(L, pt, keys[i]);
        }
        lua_rawseti(L, out, ++*count);
        for (int i = nk - 1; i >= 0; i--) {
            if (len[i] == 0) continue;
            if (++at[i] < len[i]) break;
            at[i] = 0;
        }
    }
}

/* Copies the string-keyed fields of table `from` into table `to`, except
 * `points`. */
static void copy_fields(lua_State *L, int from, int to)
{
    lua_pushnil(L);
    while (lua_next(L, from)) {
        if (lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "points") == 0) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, to);
    }
}

void fs_sweep_expand(lua_State *L, int idx, const char *const *keys, int nk,
                     fs_sweep_check_fn check, const char *chunk, int line)
{
    idx = lua_absindex(L, idx);
    if (nk > 64) fs_raise(L, SIM_INTERNAL, 0, "too many point keys");
    lua_newtable(L);
    int shared = lua_gettop(L);
    copy_fields(L, idx, shared);
    check(L, shared, "flashspec.sweep", chunk, line);
    lua_newtable(L);
    int out = lua_gettop(L);
    lua_Integer count = 0;
    lua_getfield(L, idx, "points");
    int pts = lua_gettop(L);
    if (lua_isnil(L, pts)) {
        expand_product(L, shared, out, &count, keys, nk, chunk, line);
    } else {
        int pl = slp_key_line(chunk, line, "points");
        lua_Integer n =
            is_plain_table(L, pts) ? slp_list_len(L, pts, "flashspec.sweep", "points", chunk, line)
                                   : 0;
        if (n == 0)
            fs_raise(L, SIM_CONFIG, 0,
                          "%s:%d: flashspec.sweep: key 'points' must be a non-empty list of "
                          "point tables",
                          chunk, pl);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, pts, i);
            int e = lua_gettop(L);
            char what[64];
            snprintf(what, sizeof what, "flashspec.sweep points[%lld]", (long long)i);
            if (!is_plain_table(L, e))
                fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s must be a table of point keys", chunk,
                              pl, what);
            lua_getfield(L, e, "points");
            if (!lua_isnil(L, -1))
                fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: 'points' cannot be nested", chunk,
                              pl, what);
            lua_pop(L, 1);
            check(L, e, what, chunk, line);
            lua_newtable(L);
            int merged = lua_gettop(L);
            copy_fields(L, shared, merged);
            copy_fields(L, e, merged);
            expand_product(L, merged, out, &count, keys, nk, chunk, line);
            lua_settop(L, e - 1);
        }
    }
    lua_settop(L, out);
    lua_remove(L, shared);
}

/* -------------------------------------------------------------- stage */

typedef struct stage_ctx {
    fs_stage_fn stage;
    sim_sweep_staged *s;
    const char *chunk;
    int line;
} stage_ctx;

/* lua_pcall body: (point table, stage_ctx) -> stages the point. */
static int stage_protected(lua_State *L)
{
    stage_ctx *c = lua_touserdata(L, 2);
    c->stage(L, 1, "flashspec.sweep", c->chunk, c->line, c->s);
    return 0;
}

sim_sweep_staged *fs_sweep_stage_all(lua_State *L, int pts, fs_stage_fn stage,
                                     const char *chunk, int line, int64_t *n)
{
    pts = lua_absindex(L, pts);
    lua_Integer len = (lua_Integer)lua_rawlen(L, pts);
    if ((lua_Unsigned)len > SIZE_MAX / sizeof(sim_sweep_staged))
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.sweep: too many points", chunk, line);
    sim_sweep_staged *sp = lua_newuserdatauv(L, sizeof *sp * (size_t)(len ? len : 1), 0);
    int top = lua_gettop(L);
    stage_ctx ctx = {.stage = stage, .chunk = chunk, .line = line};
    for (lua_Integer i = 0; i < len; i++) {
        ctx.s = &sp[i];
        lua_pushcfunction(L, stage_protected);
        lua_rawgeti(L, pts, i + 1);
        lua_pushlightuserdata(L, &ctx);
        if (lua_pcall(L, 2, 0, 0) == LUA_OK) continue;
        const char *m;
        int code = fs_error_status(L, -1, SIM_CONFIG, &m);
        memset(&sp[i], 0, sizeof sp[i]);
        sp[i].code = code;
        snprintf(sp[i].err, sizeof sp[i].err, "%s", m ? m : "invalid point");
        char *nl = strchr(sp[i].err, '\n');
        if (nl) *nl = 0;
        lua_settop(L, top);
    }
    *n = (int64_t)len;
    return sp;
}

void fs_sweep_push_failed(lua_State *L, const sim_sweep_staged *s, int64_t i)
{
    lua_createtable(L, 0, 3);
    lua_pushstring(L, s->err);
    lua_setfield(L, -2, "error");
    lua_pushinteger(L, sim_status_exit(s->code)); /* scripts see the exit code */
    lua_setfield(L, -2, "code");
    lua_pushinteger(L, (lua_Integer)i + 1);
    lua_setfield(L, -2, "point");
}

/* ------------------------------------------------------------ execute */

void fs_exec_run(lua_State *L, sim_sweep_exec *ex, sim_sweep_staged *sp, int64_t n, int single,
                 const char *chunk, int line)
{
    char err[1024]; /* fs_raise's message holds as much */
    int rc = sim_sweep_exec_run(ex, sp, n, single, chunk, line, err, sizeof err);
    if (rc != SIM_OK) fs_raise(L, rc, 0, "%s", err);
}
