/*
 * lfit.c -- the pcall guard of sim/fit's callbacks and the result rows as
 * reference rows (lfit.h).
 */
#include "sim/lua/lfit.h"

#include <lauxlib.h>
#include <string.h>

_Static_assert((int)FS_REF_COL_NONE == (int)FS_COL_NONE &&
                   (int)FS_REF_COL_NUMBER == (int)FS_COL_NUMBER &&
                   (int)FS_REF_COL_TEXT == (int)FS_COL_TEXT,
               "refcsv.h's column kinds are rows.h's");

void fs_guard_init(fs_guard *g, lua_State *L)
{
    g->L = L;
    g->err_ref = LUA_NOREF;
}

int fs_guard_call(fs_guard *g, lua_CFunction fn, void *ud, int arg_idx)
{
    if (g->err_ref != LUA_NOREF) return SIM_INTERNAL;
    lua_State *L = g->L;
    int nargs = 1;
    if (arg_idx) arg_idx = lua_absindex(L, arg_idx);
    lua_pushcfunction(L, fn);
    lua_pushlightuserdata(L, ud);
    if (arg_idx) {
        lua_pushvalue(L, arg_idx);
        nargs = 2;
    }
    if (lua_pcall(L, nargs, 0, 0) != LUA_OK) {
        g->err_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        return SIM_INTERNAL;
    }
    return SIM_OK;
}

void fs_guard_rethrow(fs_guard *g)
{
    if (g->err_ref == LUA_NOREF) return;
    lua_rawgeti(g->L, LUA_REGISTRYINDEX, g->err_ref);
    luaL_unref(g->L, LUA_REGISTRYINDEX, g->err_ref);
    g->err_ref = LUA_NOREF;
    lua_error(g->L);
}

void fs_guard_free(fs_guard *g)
{
    if (g->L && g->err_ref != LUA_NOREF) luaL_unref(g->L, LUA_REGISTRYINDEX, g->err_ref);
    g->err_ref = LUA_NOREF;
}

static int result_kind(const char *name)
{
    /* a reference's `tree_nodes` is its own derived key (the size of a fixed
     * tree: refcsv.h), never the results' column of that name (which also
     * holds the caps of policies that size their trees per cycle) */
    if (!strcmp(name, "tree_nodes")) return FS_COL_NONE;
    return fs_row_column_kind(name);
}

static int result_get(const void *ctx, const void *row, const char *name, double *num, char *text,
                      size_t n)
{
    return fs_row_get(ctx, row, name, num, text, n);
}

fs_ref_cols fs_ref_result_cols(const fs_rows_meta *m)
{
    return (fs_ref_cols){.kind = result_kind, .get = result_get, .ctx = m};
}
