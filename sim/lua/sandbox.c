/*
 * sandbox.c -- restricted Lua states (see sandbox.h).  The libraries are opened
 * inside a protected call, so even an allocation failure while setting up the
 * state is an error return, never a panic.
 */
#include "sandbox.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>

#define HOOK_EVERY 10000
#define LIMITS_KEY "flashspec.limits"
/* Bytes a library function allocates that count as one VM instruction against
 * step_limit.  C functions (string.rep, table.concat, gsub, ...) do work the
 * count hook never sees, so a loop of few instructions could otherwise run for
 * hours inside the limit (tests/fuzz/script/pending/string-rep-loop.lua). */
#define BYTES_PER_STEP 64

static void step_hook(lua_State *L, lua_Debug *ar);

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    fs_lua_limits *lim = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        lim->mem_used -= old;
        return NULL;
    }
    if (lim->mem_limit_bytes && nsize > old && lim->mem_used - old + nsize > lim->mem_limit_bytes) {
        lim->mem_refused = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p) {
        lim->mem_used = lim->mem_used - old + nsize;
        if (nsize > old) {
            lim->steps += (long long)((nsize - old) / BYTES_PER_STEP);
            /* over the limit: the hook fires at the very next instruction
             * (lua_sethook may be called at any time) */
            if (lim->step_limit && lim->steps > lim->step_limit && lim->L && !lim->hook_now) {
                lim->hook_now = 1;
                lua_sethook(lim->L, step_hook, LUA_MASKCOUNT, 1);
            }
        }
    }
    return p;
}

static void step_hook(lua_State *L, lua_Debug *ar)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LIMITS_KEY);
    fs_lua_limits *lim = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!lim) return;
    lim->steps += HOOK_EVERY;
    if (lim->step_limit && lim->steps > lim->step_limit) {
        lua_getinfo(L, "Sl", ar);
        lua_pushfstring(L, "%s:%d: instruction limit of %I exceeded (endless loop?)",
                        ar->short_src, ar->currentline > 0 ? ar->currentline : 1,
                        (lua_Integer)lim->step_limit);
        lua_error(L);
    }
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
    if (luaL_loadbufferx(L, s, len, name, "t") != LUA_OK) {
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

static void drop_globals(lua_State *L, const char *const *names)
{
    for (int i = 0; names[i]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, names[i]);
    }
}

/* lua_CFunction: [1] = kind as integer. */
static int open_kind(lua_State *L)
{
    fs_sandbox_kind kind = (fs_sandbox_kind)lua_tointeger(L, 1);
    if (kind == FS_SANDBOX_UNSAFE) {
        luaL_openlibs(L);
        return 0;
    }
    open_lib(L, LUA_GNAME, luaopen_base);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, LUA_UTF8LIBNAME, luaopen_utf8);
    if (kind == FS_SANDBOX_PROFILE) {
        static const char *const gone[] = {"dofile", "loadfile", "load", "require",
                                           "collectgarbage", "print", NULL};
        drop_globals(L, gone);
        lua_getglobal(L, "string");
        lua_pushnil(L);
        lua_setfield(L, -2, "dump");
        lua_pop(L, 1);
        return 0;
    }
    open_lib(L, LUA_COLIBNAME, luaopen_coroutine);
    static const char *const gone[] = {"dofile", "loadfile", NULL};
    drop_globals(L, gone);
    lua_pushcfunction(L, safe_load);
    lua_setglobal(L, "load");
    /* os: only the clock and calendar functions */
    luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
    lua_newtable(L);
    static const char *const keep[] = {"clock", "time", "date", "difftime", NULL};
    for (int i = 0; keep[i]; i++) {
        lua_getfield(L, -2, keep[i]);
        lua_setfield(L, -2, keep[i]);
    }
    lua_setglobal(L, "os");
    lua_pop(L, 1);
    return 0;
}

lua_State *fs_sandbox_new(fs_sandbox_kind kind, fs_lua_limits *lim)
{
    lim->mem_used = 0;
    lim->steps = 0;
    lim->mem_refused = 0;
    lim->L = NULL;
    lim->hook_now = 0;
    lua_State *L = lua_newstate(limited_alloc, lim);
    if (!L) return NULL;
    lua_pushcfunction(L, open_kind);
    lua_pushinteger(L, kind);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        lua_close(L);
        return NULL;
    }
    lua_pushlightuserdata(L, lim);
    lua_setfield(L, LUA_REGISTRYINDEX, LIMITS_KEY);
    if (lim->step_limit) lua_sethook(L, step_hook, LUA_MASKCOUNT, HOOK_EVERY);
    lim->L = L;
    return L;
}
