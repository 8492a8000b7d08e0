/*
 * sandbox.c -- restricted Lua states (see sandbox.h).  The libraries are opened
 * inside a protected call, so even an allocation failure while setting up the
 * state is an error return, never a panic.
 */
#include "sandbox.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOOK_EVERY 10000
#define LIMITS_KEY "flashspec.limits"
/* Bytes a library function allocates that count as one VM instruction against
 * step_limit.  C functions (string.rep, table.concat, gsub, ...) do work the
 * count hook never sees, so a loop of few instructions could otherwise run for
 * hours inside the limit (tests/fuzz/script/pending/string-rep-loop.lua). */
#define BYTES_PER_STEP 64

static void step_hook(lua_State *L, lua_Debug *ar);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Charges n instructions of library work; past the limit the hook fires at
 * the very next instruction (lua_sethook may be called at any time). */
static void charge(fs_lua_limits *lim, long long n)
{
    lim->steps += n;
    if (!lim->L || lim->hook_now) return;
    /* a large charge is also the moment to look at the clock and the stop
     * flag: a loop of few instructions around one long library call would
     * otherwise reach the count hook only every few seconds */
    int fire = lim->step_limit && lim->steps > lim->step_limit;
    if (!fire && n >= 64)
        fire = (lim->max_seconds > 0 && now_s() > lim->deadline) || (lim->stop && lim->stop());
    if (fire) {
        lim->hook_now = 1;
        lua_sethook(lim->L, step_hook, LUA_MASKCOUNT, 1);
    }
}

int fs_mem_pool_take(fs_mem_pool *pool, size_t n)
{
    size_t was = atomic_fetch_add(&pool->used, n);
    if (was + n <= pool->limit && was + n >= was) return 0;
    atomic_fetch_sub(&pool->used, n);
    return -1;
}

void fs_mem_pool_put(fs_mem_pool *pool, size_t n) { atomic_fetch_sub(&pool->used, n); }

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    fs_lua_limits *lim = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        lim->mem_used -= old;
        if (lim->pool) fs_mem_pool_put(lim->pool, old);
        return NULL;
    }
    if (lim->pool) {
        if (nsize > old && fs_mem_pool_take(lim->pool, nsize - old) != 0) {
            lim->mem_refused = 1;
            return NULL;
        }
    } else if (lim->mem_limit_bytes && nsize > old &&
               lim->mem_used - old + nsize > lim->mem_limit_bytes) {
        lim->mem_refused = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p) {
        if (lim->pool && nsize > old) fs_mem_pool_put(lim->pool, nsize - old);
        return NULL;
    }
    if (lim->pool && nsize < old) fs_mem_pool_put(lim->pool, old - nsize);
    lim->mem_used = lim->mem_used - old + nsize;
    if (nsize > old) charge(lim, (long long)((nsize - old) / BYTES_PER_STEP));
    return p;
}

static void step_hook(lua_State *L, lua_Debug *ar)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LIMITS_KEY);
    fs_lua_limits *lim = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!lim) return;
    lim->steps += lim->hook_now ? 1 : HOOK_EVERY;
    const char *why = NULL;
    if (lim->step_limit && lim->steps > lim->step_limit) why = "instruction";
    else if (lim->max_seconds > 0 && now_s() > lim->deadline) why = "time";
    else if (lim->stop && lim->stop()) why = "stop";
    if (!why) return;
    if (!lim->hook_now) { /* from now on at every instruction: pcall cannot hide it */
        lim->hook_now = 1;
        lua_sethook(L, step_hook, LUA_MASKCOUNT, 1);
    }
    lua_getinfo(L, "Sl", ar);
    int line = ar->currentline > 0 ? ar->currentline : 1;
    if (why[0] == 'i')
        lua_pushfstring(L, "%s:%d: instruction limit of %I exceeded (endless loop?)",
                        ar->short_src, line, (lua_Integer)lim->step_limit);
    else if (why[0] == 't')
        lua_pushfstring(L, "%s:%d: time limit of %f s exceeded", ar->short_src, line,
                        (lua_Number)lim->max_seconds);
    else
        lua_pushfstring(L, "%s:%d: interrupted", ar->short_src, line);
    lua_error(L);
}

/* setmetatable without finalizers: a __gc metamethod runs outside the count
 * hook, where no limit can stop it. */
static int safe_setmetatable(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "setmetatable: __gc metamethods are not allowed in the sandbox");
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* Skips a set [...] starting at p[i] == '[': the index after its ']'. */
static size_t skip_set(const char *p, size_t i, size_t n)
{
    i++;
    if (i < n && p[i] == '^') i++;
    if (i < n && p[i] == ']') i++; /* a first ']' is a member */
    while (i < n && p[i] != ']') i += p[i] == '%' ? 2 : 1;
    return i < n ? i + 1 : n;
}

/* An upper bound on the steps of Lua's backtracking matcher for pattern p on
 * a subject of n bytes.  Only items of variable length backtrack: a
 * single-character class with *, + or -, and %bxy.  With q of them, the
 * subject's bytes can be split among them in at most C(n + q, q) ways, each
 * tried once per start position (n + 1 of them unless the pattern starts
 * with ^); every optional item (?) doubles it.  Floating point: it may be
 * astronomical ("(.-)(.-)(.-)(.-)(.-)b" on 3000 bytes: ~6e18). */
static double pattern_bound(const char *p, size_t plen, size_t n)
{
    size_t i = 0;
    int anchored = plen > 0 && p[0] == '^';
    double q = 0, opt = 0;
    if (anchored) i = 1;
    while (i < plen) {
        char c = p[i];
        if (c == '(' || c == ')') {
            i++;
            continue;
        }
        if (c == '%' && i + 1 < plen && p[i + 1] == 'b') { /* %bxy: a balanced run */
            q++;
            i += 4;
            continue;
        }
        if (c == '%' && i + 1 < plen && p[i + 1] == 'f') { /* %f[set]: a frontier */
            i += 2;
            if (i < plen && p[i] == '[') i = skip_set(p, i, plen);
            continue;
        }
        if (c == '%' && i + 1 < plen && p[i + 1] >= '0' && p[i + 1] <= '9') { /* %1 */
            i += 2;
            continue;
        }
        i = c == '[' ? skip_set(p, i, plen) : c == '%' ? i + 2 : i + 1;
        if (i < plen && (p[i] == '*' || p[i] == '+' || p[i] == '-')) {
            q++;
            i++;
        } else if (i < plen && p[i] == '?') {
            opt++;
            i++;
        }
    }
    double ways = 1.0;
    for (double k = 1; k <= q && ways < 1e300; k++) ways *= ((double)n + k) / k;
    for (double k = 0; k < opt && ways < 1e300; k++) ways *= 2.0;
    return ways * (anchored ? 1.0 : (double)n + 1.0);
}

/* Matches whose bound is above this many steps tell lim->in_library. */
#define LONG_MATCH_STEPS 1e6

/* string.find / match / gmatch / gsub charged by the bytes they are given
 * (subject and pattern), then the library's own function: a pattern match
 * may try every start position, so one instruction per byte; a plain find
 * (fourth argument true) is a memory scan, one per BYTES_PER_STEP bytes.
 * Backtracking inside the match is C code no hook sees, so a pattern whose
 * bound (pattern_bound) is above the instructions left is refused before it
 * runs: no single match can carry a script past its instruction limit. */
static int charged_string_fn(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LIMITS_KEY);
    fs_lua_limits *lim = lua_touserdata(L, -1);
    lua_pop(L, 1);
    double bound = 0;
    if (lim) {
        size_t a = 0, b = 0;
        const char *pat = NULL;
        if (lua_type(L, 1) == LUA_TSTRING) lua_tolstring(L, 1, &a);
        if (lua_type(L, 2) == LUA_TSTRING) pat = lua_tolstring(L, 2, &b);
        int plain = lua_toboolean(L, lua_upvalueindex(2)) && lua_toboolean(L, 4);
        charge(lim, (long long)(plain ? (a + b) / BYTES_PER_STEP : a + b));
        if (pat && !plain) {
            bound = pattern_bound(pat, b, a);
            double left = (double)(lim->step_limit - lim->steps);
            if (lim->step_limit && bound > left && bound <= (double)lim->step_limit) {
                /* it would fit a whole budget: the limit has simply run out */
                charge(lim, (long long)(left > 0 ? left : 0) + 1);
                return luaL_error(L, "instruction limit of %I exceeded (endless loop?)",
                                  (lua_Integer)lim->step_limit);
            }
            if (lim->step_limit && bound > left) {
                char msg[400];
                snprintf(msg, sizeof msg, "string.%s: the pattern could take up to %.3g match "
                         "steps on this %zu-byte subject (backtracking no limit can stop), more "
                         "than the %.0f instructions left; simplify it (fewer items with *, + "
                         "or -; anchor it with ^) or raise --max-instructions",
                         lua_tostring(L, lua_upvalueindex(3)), bound, a, left > 0 ? left : 0);
                return luaL_error(L, "%s", msg);
            }
        }
    }
    int told = lim && lim->in_library && bound > LONG_MATCH_STEPS;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    if (told) lim->in_library(1);
    int rc = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    if (told) lim->in_library(0);
    if (rc != LUA_OK) return lua_error(L);
    return lua_gettop(L);
}

/* Installs the wrappers above over the opened libraries. */
static void wrap_libs(lua_State *L)
{
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, safe_setmetatable, 1);
    lua_setglobal(L, "setmetatable");
    lua_getglobal(L, "string");
    static const char *const fns[] = {"find", "match", "gmatch", "gsub", NULL};
    for (int i = 0; fns[i]; i++) {
        lua_getfield(L, -1, fns[i]);
        lua_pushboolean(L, i == 0); /* only find has a plain mode */
        lua_pushstring(L, fns[i]);
        lua_pushcclosure(L, charged_string_fn, 3);
        lua_setfield(L, -2, fns[i]);
    }
    lua_pop(L, 1);
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

/* Lua 5.4 seeds math.random from the clock and an address, differently in
 * every process: MPI ranks running one script would expand different point
 * lists.  Every state starts from the same seed; a script that wants fresh
 * randomness calls math.randomseed() itself. */
#define FS_RANDOM_SEED 0x666c617368LL /* "flash" */

static void seed_random(lua_State *L)
{
    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, FS_RANDOM_SEED);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
}

static int open_kind_libs(lua_State *L);

/* lua_CFunction: [1] = kind as integer. */
static int open_kind(lua_State *L)
{
    open_kind_libs(L);
    seed_random(L);
    return 0;
}

static int open_kind_libs(lua_State *L)
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
        wrap_libs(L);
        /* profiles are data: no pattern matching, whose backtracking runs
         * inside one C call that no hook can stop */
        lua_getglobal(L, "string");
        static const char *const pat[] = {"find", "match", "gmatch", "gsub", NULL};
        for (int i = 0; pat[i]; i++) {
            lua_pushnil(L);
            lua_setfield(L, -2, pat[i]);
        }
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
    wrap_libs(L);
    return 0;
}

lua_State *fs_sandbox_new(fs_sandbox_kind kind, fs_lua_limits *lim)
{
    lim->mem_used = 0;
    lim->steps = 0;
    lim->mem_refused = 0;
    lim->L = NULL;
    lim->hook_now = 0;
    lim->deadline = now_s() + lim->max_seconds;
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
    if (lim->step_limit || lim->max_seconds > 0 || lim->stop)
        lua_sethook(L, step_hook, LUA_MASKCOUNT, HOOK_EVERY);
    lim->L = L;
    return L;
}
