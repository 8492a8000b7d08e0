/*
 * lfit.c -- the pcall guard of sim/fit's callbacks (lfit.h).
 */
#include "sim/lua/lfit.h"

#include <lauxlib.h>

void fs_guard_init(fs_guard *g, lua_State *L)
{
    g->L = L;
    g->err_ref = LUA_NOREF;
    g->keep_ref = LUA_NOREF;
}

/* Lets go of the values kept. */
static void unkeep(fs_guard *g)
{
    if (g->L && g->keep_ref != LUA_NOREF) luaL_unref(g->L, LUA_REGISTRYINDEX, g->keep_ref);
    g->keep_ref = LUA_NOREF;
}

void fs_guard_keep(fs_guard *g, int from)
{
    lua_State *L = g->L;
    int top = lua_gettop(L);
    unkeep(g);
    lua_createtable(L, top - from + 1 > 0 ? top - from + 1 : 0, 0);
    for (int i = from; i <= top; i++) {
        lua_pushvalue(L, i);
        lua_rawseti(L, -2, i - from + 1);
    }
    g->keep_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

int fs_guard_call(fs_guard *g, lua_CFunction fn, void *ud, int arg_idx)
{
    if (g->err_ref != LUA_NOREF) return SIM_INTERNAL;
    unkeep(g);
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
    unkeep(g);
}
