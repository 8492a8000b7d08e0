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

#include "sim/config/sandbox_impl.h"

/* The count hook's interval: at most HOOK_EVERY instructions, and at most
 * 1% of the instruction limit, so the limit is met within 1%.  The trap
 * Lua 5.4 sets in every frame while any hook is on costs far more than the
 * hook calls themselves (measured: 100 and 10,000 are the same speed). */
#define HOOK_EVERY 100
/* Strings longer than this make the hook run more often (100 instructions
 * per BIG_STRING bytes of the longest string, at least 1): one comparison
 * of two 16 MiB strings takes 1-130 ms inside a single instruction. */
#define BIG_STRING ((size_t)1 << 20)

/* The backstop (backstop()): every BACKSTOP_CALLS hook calls (every call once
 * a big string exists) it reads the wall clock.  Each stretch since the last
 * look is allowed SLOW_STEP_S per instruction, SLOW_LIB_S per charged step
 * and SLOW_CPU_MARGIN_S -- 10 to 40 times what that work takes.  A stretch
 * whose wall time is more than twice its allowance plus SLOW_WALL_MARGIN_S
 * (work the counts do not explain, or another process had the CPU) starts
 * measuring the thread's CPU time, and each measured stretch is charged its
 * CPU time beyond the allowance, at STEP_NS per step, for as long as
 * stretches stay slow.  Ordinary code (even under sanitizers) is never
 * charged this way; under valgrind it may be. */
#define BACKSTOP_CALLS 10
#define SLOW_STEP_S 2e-7
#define SLOW_LIB_S 2e-7
#define SLOW_CPU_MARGIN_S 2e-5
#define SLOW_WALL_MARGIN_S 1e-4

static void step_hook(lua_State *L, lua_Debug *ar);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

fs_lua_limits *fs_sandbox_limits(lua_State *L)
{
    fs_lua_limits *lim;
    memcpy(&lim, lua_getextraspace(L), sizeof lim);
    return lim;
}

/* The hook's interval for lim now (see HOOK_EVERY and BIG_STRING). */
static int hook_interval(const fs_lua_limits *lim)
{
    long long e = HOOK_EVERY;
    if (lim->step_limit > 0 && lim->step_limit / 100 < e) e = lim->step_limit / 100;
    if (lim->max_string > BIG_STRING) {
        long long b = (long long)((double)HOOK_EVERY * (double)BIG_STRING / (double)lim->max_string);
        if (b < e) e = b;
    }
    return e < 1 ? 1 : (int)e;
}

/* The hook fires at the next instruction of the state's main thread (a
 * coroutine sees the limit at its own next hook call). */
static void fire_now(fs_lua_limits *lim)
{
    lim->hook_now = 1;
    lua_sethook(lim->L, step_hook, LUA_MASKCOUNT, 1);
}

/* Which limit lim has reached: "instruction", "time", "stop" or NULL. */
static const char *limit_reached(const fs_lua_limits *lim)
{
    if (lim->step_limit && lim->steps > lim->step_limit) return "instruction";
    if (lim->max_seconds > 0 && now_s() > lim->deadline) return "time";
    if (lim->stop && lim->stop()) return "stop";
    return NULL;
}

/* Pushes the error message of limit `why` at "src:line: ". */
static void push_limit_error(lua_State *L, const fs_lua_limits *lim, const char *why,
                             const char *src, int line)
{
    if (why[0] == 'i')
        lua_pushfstring(L, "%s:%d: instruction limit of %I exceeded (endless loop?)", src, line,
                        (lua_Integer)lim->step_limit);
    else if (why[0] == 't')
        lua_pushfstring(L, "%s:%d: time limit of %f s exceeded", src, line,
                        (lua_Number)lim->max_seconds);
    else
        lua_pushfstring(L, "%s:%d: interrupted", src, line);
}

void fs_sandbox_charge(fs_lua_limits *lim, long long n)
{
    lim->steps += n;
    lim->win_lib += n;
    if (!lim->L || lim->hook_now) return;
    /* a large charge is also the moment to look at the clock and the stop
     * flag: a loop of few instructions around one long library call would
     * otherwise reach the count hook only every few seconds */
    int fire = lim->step_limit && lim->steps > lim->step_limit;
    if (!fire && n >= 64)
        fire = (lim->max_seconds > 0 && now_s() > lim->deadline) || (lim->stop && lim->stop());
    if (fire) fire_now(lim);
}

void fs_sandbox_work(lua_State *L, fs_lua_limits *lim, double steps)
{
    fs_sandbox_charge(lim, (long long)steps);
    const char *why = limit_reached(lim);
    if (!why) return;
    if (!lim->hook_now) fire_now(lim);
    /* where: the innermost Lua function with a line (the library function
     * that charges may itself be called from C, as sort calls its comparator) */
    lua_Debug ar;
    int line = 1;
    char src[LUA_IDSIZE] = "?";
    for (int level = 1; lua_getstack(L, level, &ar); level++)
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(src, sizeof src, "%s", ar.short_src);
            line = ar.currentline;
            break;
        }
    push_limit_error(L, lim, why, src, line);
    lua_error(L);
}

void fs_sandbox_precharge(lua_State *L, fs_lua_limits *lim, double est, const char *what)
{
    double left = (double)(lim->step_limit - lim->steps);
    if (lim->step_limit && est > left) {
        if (est <= (double)lim->step_limit) /* it would fit a whole budget: the limit has run out */
            fs_sandbox_work(L, lim, (left > 0 ? left : 0) + 1);
        char msg[300];
        snprintf(msg, sizeof msg, "%s: this call could take up to %.3g instructions, more than the "
                 "%.0f left (see --max-instructions)", what, est, left > 0 ? left : 0);
        luaL_error(L, "%s", msg);
    }
    fs_sandbox_charge(lim, (long long)est);
}

int fs_sandbox_call_starts(fs_lua_limits *lim, double est)
{
    if (!lim->in_library || est <= LONG_CALL_STEPS || lim->in_lib) return 0;
    lim->in_lib = 1;
    lim->in_library(1);
    return 1;
}

void fs_sandbox_call_done(fs_lua_limits *lim, int told)
{
    if (!told || !lim->in_lib) return; /* the hook took it back (Lua ran inside the call) */
    lim->in_lib = 0;
    lim->in_library(0);
}

void fs_sandbox_raise_memory(lua_State *L, fs_lua_limits *lim)
{
    /* the first try and Lua's retry after an emergency collection */
    lim->fail_next = 2;
    lua_newuserdatauv(L, 1, 0);
    lim->fail_next = 0; /* not reached */
    lua_error(L);
}

/* in_library told by a call that raised an error and never came back: taken
 * back when Lua code runs again (the hook) or the state closes. */
static void call_abandoned(fs_lua_limits *lim)
{
    if (!lim->in_lib) return;
    lim->in_lib = 0;
    lim->in_library(0);
}

int fs_mem_pool_take(fs_mem_pool *pool, size_t n)
{
    size_t was = atomic_fetch_add(&pool->used, n);
    if (was + n <= pool->limit && was + n >= was) return 0;
    atomic_fetch_sub(&pool->used, n);
    return -1;
}

void fs_mem_pool_put(fs_mem_pool *pool, size_t n) { atomic_fetch_sub(&pool->used, n); }

/* A new string object (Lua passes the type as osize when ptr is NULL): the
 * longest one sets the hook's interval. */
static void saw_string(fs_lua_limits *lim, size_t bytes)
{
    lim->max_string = bytes;
    if (bytes <= BIG_STRING) return;
    lim->every = hook_interval(lim);
    if (lim->L && !lim->hook_now && lua_gethook(lim->L))
        lua_sethook(lim->L, step_hook, LUA_MASKCOUNT, lim->every);
}

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
    if (lim->fail_next > 0 && nsize > old) { /* fs_sandbox_raise_memory */
        lim->fail_next--;
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
    if (!ptr && osize == LUA_TSTRING && nsize > lim->max_string) saw_string(lim, nsize);
    if (nsize > old) fs_sandbox_charge(lim, (long long)((nsize - old) / BYTES_PER_STEP));
    return p;
}

/* 1 when a flashspec API call (fs_sandbox_api_call) is on L's stack: one
 * that raised an error left api_depth up without being there any more. */
static int api_running(lua_State *L)
{
    lua_Debug ar;
    for (int level = 1; L && lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "f", &ar)) continue;
        int it = lua_tocfunction(L, -1) == fs_sandbox_api_call;
        lua_pop(L, 1);
        if (it) return 1;
    }
    return 0;
}

/* The backstop's clocks and windows from now on, nothing carried over. */
static void backstop_rebase(fs_lua_limits *lim)
{
    lim->ticks = 0;
    lim->wall_last = now_s();
    lim->measuring = 0;
    lim->win_steps = 0;
    lim->win_lib = 0;
}

/* Charges the CPU time the counts do not explain (see BACKSTOP_CALLS). */
static void backstop(lua_State *L, fs_lua_limits *lim)
{
    if (lim->api_depth > 0 && api_running(L)) { /* its work is not the script's */
        backstop_rebase(lim);
        return;
    }
    lim->api_depth = 0;
    lim->ticks = 0;
    double w = now_s();
    double allow = (double)lim->win_steps * SLOW_STEP_S + (double)lim->win_lib * SLOW_LIB_S +
                   SLOW_CPU_MARGIN_S;
    int slow = w - lim->wall_last > 2 * allow + SLOW_WALL_MARGIN_S;
    if (lim->measuring) {
        double cpu = cpu_s();
        double excess = cpu - lim->cpu_last - allow;
        if (excess > 0) lim->steps += (long long)(excess * 1e9 / STEP_NS);
        lim->cpu_last = cpu;
        lim->measuring = slow || excess > 0;
    } else if (slow) {
        lim->cpu_last = cpu_s();
        lim->measuring = 1;
    }
    lim->wall_last = w;
    lim->win_steps = 0;
    lim->win_lib = 0;
}

static void step_hook(lua_State *L, lua_Debug *ar)
{
    fs_lua_limits *lim = fs_sandbox_limits(L);
    if (!lim) return;
    int n = lua_gethookcount(L);
    lim->steps += n;
    call_abandoned(lim); /* Lua code runs: no library call is in progress */
    lim->fail_next = 0;  /* nor a memory error being passed on */
    if (!lim->hook_now) {
        lim->win_steps += n;
        if (++lim->ticks >= (lim->max_string > BIG_STRING ? 1 : BACKSTOP_CALLS)) backstop(L, lim);
        if (n != lim->every) /* a coroutine made before the interval changed */
            lua_sethook(L, step_hook, LUA_MASKCOUNT, lim->every);
    }
    const char *why = limit_reached(lim);
    if (!why) return;
    if (!lim->hook_now) { /* from now on at every instruction: pcall cannot hide it */
        lim->hook_now = 1;
        lua_sethook(L, step_hook, LUA_MASKCOUNT, 1);
    }
    lua_getinfo(L, "Sl", ar);
    push_limit_error(L, lim, why, ar->short_src, ar->currentline > 0 ? ar->currentline : 1);
    lua_error(L);
}

/* __gc of the registry's sentinel: the state closes. */
static int state_closes(lua_State *L)
{
    fs_lua_limits *lim = fs_sandbox_limits(L);
    if (lim) call_abandoned(lim);
    return 0;
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
    /* compiling takes about one step per byte of source */
    fs_lua_limits *lim = fs_sandbox_limits(L);
    int told = 0;
    if (lim) {
        fs_sandbox_precharge(L, lim, (double)len, "load");
        told = fs_sandbox_call_starts(lim, (double)len);
    }
    int rc = luaL_loadbufferx(L, s, len, name, "t");
    if (lim) fs_sandbox_call_done(lim, told);
    if (rc != LUA_OK) {
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

/* setmetatable without finalizers, then the charged library. */
static void wrap_base(lua_State *L, int patterns)
{
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, safe_setmetatable, 1);
    lua_setglobal(L, "setmetatable");
    fs_sandbox_wrap_libs(L, patterns);
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
    /* a registry userdata whose finalizer runs when the state closes */
    lua_newuserdatauv(L, 1, 0);
    lua_newtable(L);
    lua_pushcfunction(L, state_closes);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    luaL_ref(L, LUA_REGISTRYINDEX);
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
        wrap_base(L, 0);
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
    wrap_base(L, 1);
    return 0;
}

lua_State *fs_sandbox_new(fs_sandbox_kind kind, fs_lua_limits *lim)
{
    lim->mem_used = 0;
    lim->steps = 0;
    lim->mem_refused = 0;
    lim->L = NULL;
    lim->hook_now = 0;
    lim->max_string = 0;
    lim->fail_next = 0;
    lim->in_lib = 0;
    lim->every = hook_interval(lim);
    lim->ticks = 0;
    lim->measuring = 0;
    lim->win_steps = 0;
    lim->win_lib = 0;
    lim->wall_last = now_s();
    lim->cpu_last = 0;
    lim->deadline = lim->wall_last + lim->max_seconds;
    lua_State *L = lua_newstate(limited_alloc, lim);
    if (!L) return NULL;
    /* the limits in the main thread's extra space, which every coroutine
     * copies: the hook and the charged library find them without a lookup */
    memcpy(lua_getextraspace(L), &lim, sizeof lim);
    lua_pushcfunction(L, open_kind);
    lua_pushinteger(L, kind);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        lua_close(L);
        return NULL;
    }
    /* the budget is the user's code's: opening the libraries is not charged */
    lim->steps = 0;
    lim->win_lib = 0;
    if (lim->step_limit || lim->max_seconds > 0 || lim->stop)
        lua_sethook(L, step_hook, LUA_MASKCOUNT, lim->every);
    lim->L = L;
    return L;
}

int fs_sandbox_api_call(lua_State *L)
{
    /* a plain C call: the API function keeps its caller at level 1, so its
     * errors name the script's line; an error unwinds past the decrement,
     * which api_running() notices */
    fs_lua_limits *lim = fs_sandbox_limits(L);
    if (lim) lim->api_depth++;
    int n = lua_tocfunction(L, lua_upvalueindex(1))(L);
    if (lim) {
        lim->api_depth--;
        backstop_rebase(lim);
    }
    return n;
}
