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
 * count hook raises "CHUNK:LINE: instruction limit of N exceeded" after step_limit
 * instructions (0 = unlimited), so an endless loop ends with a clear error.  The
 * hook runs every min(100, step_limit / 100) VM instructions, so the limit is
 * met within 1%.  An "instruction" also stands for work the hook never sees,
 * charged at about one per 10 ns of it:
 *   - library calls (sandbox_lib.c) are charged from their arguments before
 *     they run -- string.rep, byte, format, lower/upper/reverse, pack and
 *     unpack, the pattern functions, utf8.len/codepoint/offset/codes,
 *     table.concat/insert/remove/move/unpack/sort, tonumber, rawequal, load,
 *     print, collectgarbage, os.date and the string arithmetic metamethods --
 *     and a call whose charge is more than the instructions left is refused
 *     before it runs; the table functions and utf8.codes' iterator are bounded
 *     versions of the library's that charge as they go;
 *   - every BYTES_PER_STEP bytes the allocator hands out count as one;
 *   - whatever else takes CPU time the instruction count does not explain
 *     (comparisons or coercions of long strings inside one VM instruction,
 *     the collection of a huge heap) is charged by the thread's CPU time: a
 *     stretch of instructions that ran far slower than VM instructions and
 *     charged work do is charged its excess time (sandbox.c, backstop()).
 *     That charge depends on the machine; the others do not.
 * Once a state has made a string longer than 1 MiB the hook runs more often
 * (100 instructions per MiB of its longest string, at least every
 * instruction), so that one instruction on long strings is seen promptly.
 *
 * Finalizers: a __gc metamethod runs with hooks off (Lua runs finalizers
 * outside the count hook), so no limit could stop one; setmetatable therefore
 * refuses a metatable with a __gc field in the SCRIPT and PROFILE kinds.
 * collectgarbage may not retune the collector (setpause, setstepmul, or
 * parameters to incremental/generational): a collector told to do a whole
 * cycle per allocation would work outside every charge.
 *
 * Wall clock and stop requests: max_seconds > 0 ends the state's Lua code with
 * "CHUNK:LINE: time limit of N s exceeded" once that long has passed since
 * fs_sandbox_new; stop, when set, is asked at every hook call and by every
 * charged library call, and a nonzero answer ends the Lua code with
 * "CHUNK:LINE: interrupted" (a signal handler's flag).  Once any limit has
 * fired the hook runs at every instruction and raises again, so a script that
 * catches the error with pcall cannot keep running.  A library call charged
 * more than LONG_CALL_STEPS tells in_library around itself, so that a signal
 * arriving while it runs can end the process at once.
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
    long long step_limit;   /* instructions, 0 = unlimited */
    size_t mem_used;        /* maintained by the allocator */
    long long steps;        /* maintained by the hook and the charges */
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
    /* maintained by the sandbox (set up by fs_sandbox_new): */
    int every;              /* instructions between hook calls, 1..100 */
    size_t max_string;      /* bytes of the longest string the state has made */
    int fail_next;          /* the allocator refuses its next request (to re-raise
                               a memory error with its own status) */
    int ticks;              /* hook calls since the backstop last looked */
    int measuring;          /* the backstop reads the CPU clock at each look */
    double wall_last;       /* CLOCK_MONOTONIC s at the backstop's last look */
    double cpu_last;        /* thread CPU s at the last look (when measuring) */
    long long win_steps;    /* instructions counted since the last look */
    long long win_lib;      /* library and allocation charges since the last look */
    int in_lib;             /* in_library(1) was told and not yet taken back */
    int api_depth;          /* flashspec calls running (fs_sandbox_api_call): the
                               backstop does not charge their work, nor that of
                               the Lua callbacks they make, which the counts and
                               --max-seconds still bound */
} fs_lua_limits;

/* Calls the lua_CFunction in upvalue 1 with the arguments on the stack, as a
 * flashspec API call: its C work (replays, fits, trace synthesis) is the
 * simulator's, bounded by its own limits, so the backstop neither charges it
 * nor the callbacks into Lua it makes; the clocks are re-read when it
 * returns.  Errors propagate unchanged.  A lua_CFunction for closures with
 * one upvalue. */
int fs_sandbox_api_call(lua_State *L);

/* Creates a state of the given kind; lim is borrowed and must outlive it.
 * NULL when the state or its libraries cannot be allocated. */
lua_State *fs_sandbox_new(fs_sandbox_kind kind, fs_lua_limits *lim);

#endif
