/*
 * sandbox_impl.h -- what the sandbox's core (sandbox.c: states, allocator,
 * count hook) and its charged library (sandbox_lib.c) share.  Not a public
 * header: nothing outside sim/config/sandbox*.c includes it.
 *
 * Costs are in instructions ("steps"), one for about STEP_NS of work: a VM
 * instruction under the count hook takes 5-20 ns.  Library work is charged
 * by its size in bytes: BYTES_PER_STEP for memory-speed work (copying,
 * comparing, scanning with memchr/memcmp), CHARS_PER_STEP for C loops that
 * look at every character (UTF-8 decoding, case mapping, number parsing).
 */
#ifndef FS_SANDBOX_IMPL_H
#define FS_SANDBOX_IMPL_H

#include "sim/config/sandbox.h"

#define STEP_NS 10.0
#define BYTES_PER_STEP 64
#define CHARS_PER_STEP 4
/* A library call charged more than this (about 1 ms) tells lim->in_library
 * around itself. */
#define LONG_CALL_STEPS 1e5

/* The limits of the state L belongs to (any of its threads), or NULL. */
fs_lua_limits *fs_sandbox_limits(lua_State *L);

/* Adds n steps of work already done or about to be done.  Never raises: when
 * a limit is passed the count hook fires at the very next instruction. */
void fs_sandbox_charge(fs_lua_limits *lim, long long n);

/* For C loops that charge as they go: adds steps and raises at once (a Lua
 * error at the caller's line) when the instruction limit is passed, the time
 * limit has come or a stop is requested. */
void fs_sandbox_work(lua_State *L, fs_lua_limits *lim, double steps);

/* Before a library call that may take up to est steps: raises when est is
 * more than the instructions left ("instruction limit of N exceeded" when
 * est fits a whole budget, else a line naming `what` and the cost), else
 * charges est and returns. */
void fs_sandbox_precharge(lua_State *L, fs_lua_limits *lim, double est, const char *what);

/* Tells lim->in_library that a call of est steps starts (1 when it told it,
 * for fs_sandbox_call_done), 0 when it is short or someone already told. */
int fs_sandbox_call_starts(fs_lua_limits *lim, double est);
void fs_sandbox_call_done(fs_lua_limits *lim, int told);

/* Raises a memory error (status LUA_ERRMEM, as the allocator's own): a
 * wrapper that caught one from the library's function passes it on as it
 * came (lim->mem_refused still tells whether the limit refused it). */
void fs_sandbox_raise_memory(lua_State *L, fs_lua_limits *lim);

/* Replaces the opened libraries' functions by charged or bounded versions
 * (sandbox_lib.c); patterns = 0 leaves string.find/match/gmatch/gsub out
 * (the PROFILE kind removes them). */
void fs_sandbox_wrap_libs(lua_State *L, int patterns);

/* An upper bound on the steps Lua's backtracking matcher may take for
 * pattern p (plen bytes) on a subject of n bytes (sandbox_lib.c). */
double fs_sandbox_pattern_bound(const char *p, size_t plen, size_t n);

#endif
