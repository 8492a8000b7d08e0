/*
 * sandbox.h -- the one place that makes Lua states for user-written Lua.
 *
 * Kinds:
 *   FS_SANDBOX_SCRIPT   experiment scripts (the default): base, string, table,
 *                       math, utf8, coroutine, and os.clock/time/date/difftime.
 *                       No io, no os.execute/remove/rename/exit/getenv, no
 *                       package/require, no debug, no dofile/loadfile, and `load`
 *                       takes text chunks only (never bytecode).  File access
 *                       happens solely through the flashspec API.
 *   FS_SANDBOX_PROFILE  device/model profiles: pure data, so base (without
 *                       load, dofile, loadfile, require, collectgarbage, print),
 *                       string (without dump and the pattern functions find,
 *                       match, gmatch, gsub), table, math and utf8; at most
 *                       10 s of wall time (profile.c).
 *   FS_SANDBOX_UNSAFE   the full standard library (`flashspec run --unsafe`).
 *
 * Limits (every kind): the allocator refuses to grow past mem_limit_bytes, so a
 * runaway script fails with a memory error instead of exhausting the host, and a
 * count hook raises "CHUNK:LINE: instruction limit exceeded" after step_limit
 * VM instructions (0 = unlimited), so an endless loop ends with a clear error.
 * Work done inside library functions counts too: every BYTES_PER_STEP bytes
 * the allocator hands out count as one instruction, and so does every
 * BYTES_PER_STEP bytes of subject and pattern that string.find, match, gmatch
 * and gsub are given, so a short loop around string.rep, table.concat or a
 * pattern search cannot run for hours within the limit.
 *
 * Finalizers: a __gc metamethod runs with hooks off (Lua runs finalizers
 * outside the count hook), so no limit could stop one; setmetatable therefore
 * refuses a metatable with a __gc field in the SCRIPT and PROFILE kinds.
 *
 * Wall clock and stop requests: max_seconds > 0 ends the state's Lua code with
 * "CHUNK:LINE: time limit of N s exceeded" once that long has passed since
 * fs_sandbox_new; stop, when set, is asked at every hook call and a nonzero
 * answer ends the Lua code with "CHUNK:LINE: interrupted" (a signal handler's
 * flag).  Both are checked every HOOK_EVERY instructions; once any limit has
 * fired the hook runs at every instruction and raises again, so a script that
 * catches the error with pcall cannot keep running.
 */
#ifndef FS_SANDBOX_H
#define FS_SANDBOX_H

#include <lua.h>
#include <stdatomic.h>
#include <stddef.h>

typedef enum fs_sandbox_kind {
    FS_SANDBOX_SCRIPT = 0,
    FS_SANDBOX_PROFILE = 1,
    FS_SANDBOX_UNSAFE = 2
} fs_sandbox_kind;

/* The memory of one run, shared by every Lua state that draws on it (the
 * script's and every point's policy state, on any worker thread) and by what
 * the script holds outside Lua (traces, result rows): used is kept atomically,
 * and an allocation that would take it past limit is refused. */
typedef struct fs_mem_pool {
    _Atomic size_t used;
    size_t limit; /* bytes, > 0 */
} fs_mem_pool;

/* Adds n bytes to the pool unless that passes its limit: 0, or -1 (nothing
 * added).  fs_mem_pool_put gives bytes back. */
int fs_mem_pool_take(fs_mem_pool *pool, size_t n);
void fs_mem_pool_put(fs_mem_pool *pool, size_t n);

typedef struct fs_lua_limits {
    size_t mem_limit_bytes; /* 0 = unlimited; with pool, the pool's limit (for messages) */
    fs_mem_pool *pool;      /* optional: the run's shared memory; replaces the per-state
                               check of mem_limit_bytes */
    long long step_limit;   /* VM instructions, 0 = unlimited */
    size_t mem_used;        /* maintained by the allocator */
    long long steps;        /* maintained by the hook (granularity 10,000) */
    int mem_refused;        /* set by the allocator when it refused a request
                               because of mem_limit_bytes (not a host OOM) */
    lua_State *L;           /* the state (set by fs_sandbox_new), for the hook */
    int hook_now;           /* a limit fired: the hook runs at every instruction */
    double max_seconds;     /* wall-clock limit, 0 = none */
    double deadline;        /* CLOCK_MONOTONIC seconds (set by fs_sandbox_new) */
    int (*stop)(void);      /* optional: nonzero ends the Lua code ("interrupted") */
    void (*in_library)(int on); /* optional: told around a long library call no hook can
                                   stop (a pattern match), so that an interrupt during it
                                   can end the process (sim_sweep_library_call) */
} fs_lua_limits;

/* Creates a state of the given kind; lim is borrowed and must outlive it.
 * NULL when the state or its libraries cannot be allocated. */
lua_State *fs_sandbox_new(fs_sandbox_kind kind, fs_lua_limits *lim);

#endif
