/*
 * sandbox.c -- restricted Lua states (see sandbox.h).
 */
#include "sandbox.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    fs_lua_limits *lim = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        lim->mem_used -= old;
        return NULL;
    }
    if (lim->mem_limit_bytes && nsize > old &&
        lim->mem_used + (nsize - old) > lim->mem_limit_bytes)
        return NULL;
    void *p = realloc(ptr, nsize);
    if (p) lim->mem_used = lim->mem_used - old + nsize;
    return p;
}

/* load(chunk [, chunkname [, mode [, env]]]) restricted to text chunks. */
static int safe_load(lua_State *L)
{
    int n = lua_gettop(L);
    if (n >= 3 && !lua_isnil(L, 3)) {
        const char *mode = luaL_checkstring(L, 3);
        if (strchr(mode, 'b')) return luaL_error(L, "load: binary chunks are not allowed");
    }
    size_t len = 0;
    const char *s = lua_tolstring(L, 1, &len);
    if (!s) return luaL_error(L, "load: only string chunks are allowed in the sandbox");
    const char *name = luaL_optstring(L, 2, s);
    int status = luaL_loadbufferx(L, s, len, name, "t");
    if (status != LUA_OK) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    if (n >= 4) {
        lua_pushvalue(L, 4);
        if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
    }
    return 1;
}

static void open_lib(lua_State *L, const char *name, lua_CFunction f)
{
    luaL_requiref(L, name, f, 1);
    lua_pop(L, 1);
}

lua_State *fs_sandbox_new(int unsafe, fs_lua_limits *lim)
{
    lua_State *L = lua_newstate(limited_alloc, lim);
    if (!L) return NULL;
    if (unsafe) {
        luaL_openlibs(L);
        return L;
    }
    open_lib(L, LUA_GNAME, luaopen_base);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, LUA_UTF8LIBNAME, luaopen_utf8);
    open_lib(L, LUA_COLIBNAME, luaopen_coroutine);
    /* base: drop file access, keep text-only load */
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    lua_pushcfunction(L, safe_load);
    lua_setglobal(L, "load");
    /* os: only the clock and calendar functions */
    luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
    lua_newtable(L);
    const char *keep[] = {"clock", "time", "date", "difftime", NULL};
    for (int i = 0; keep[i]; i++) {
        lua_getfield(L, -2, keep[i]);
        lua_setfield(L, -2, keep[i]);
    }
    lua_setglobal(L, "os");
    lua_pop(L, 1);
    return L;
}
