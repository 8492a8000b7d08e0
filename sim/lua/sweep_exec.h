/*
 * sweep_exec.h -- how flashspec.run and flashspec.sweep expand, stage and
 * execute their points (internal to sim/lua; the execution itself is
 * sim/sweep/sim_sweep_exec.h, the executor sim/sweep/sim_sweep.h).
 *
 * Pipeline of one fs.sweep call (fs.run is the same with one point):
 *   expand   fs_sweep_expand turns the sweep table into a Lua array of point
 *            tables: the Cartesian product of list-valued keys (canonical key
 *            order, last key fastest), or, with `points = { {...}, ... }`, for
 *            each entry in order the product of (shared keys overlaid by the
 *            entry's keys);
 *   stage    api.c validates each point into a sim_sweep_staged (row
 *            parameters, a plain-C sim_point, the point id and the replay seed
 *            derived from it); a point that fails validation keeps its error
 *            and is skipped;
 *   execute  fs_exec_run has sim_sweep_exec_run hand the valid points to
 *            sim_sweep_run (threads, resume store, MPI) and copy the outcomes
 *            back, in point order, and raises its error;
 *   return   api.c appends the good rows to the script's results and returns
 *            one Lua table per point (a row, or {error=, code=, point=}).
 *
 * Error policy of a sweep: the whole list is staged before anything runs, and
 * a point that fails validation (an invalid combination, a value out of range)
 * makes the sweep one script error -- its message and how many points share it
 * (api.c fs_api_sweep).  A point that fails when it runs (does not fit the DRAM
 * budget, replay error) is reported on stderr as one line and the other points
 * still run; the script goes on; at its end the results files hold the good
 * points and flashspec exits with the most serious failed point's code (70
 * for an internal error, over 65 for damaged data, over the first other one,
 * normally 78: sim_sweep_failure_rank).  Errors in the sweep
 * table itself (unknown key, empty list, malformed `points`) are script errors
 * as before.  An interruption (SIGINT/SIGTERM) raises exit code 130.
 */
#ifndef FS_LUA_SWEEP_EXEC_H
#define FS_LUA_SWEEP_EXEC_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sweep/sim_run.h"
#include "sim/sweep/sim_sweep_exec.h"


/* Validates the keys of the table at idx (raises on an unknown key). */
typedef void (*fs_sweep_check_fn)(lua_State *L, int idx, const char *what, const char *chunk,
                                  int line);

/* Pushes the array of point tables of the sweep table at idx; keys: the
 * nk canonical point keys.  Raises (exit 78) on a malformed sweep table. */
void fs_sweep_expand(lua_State *L, int idx, const char *const *keys, int nk,
                     fs_sweep_check_fn check, const char *chunk, int line);

/* Validates the point table at idx into *s; raises on invalid input. */
typedef void (*fs_stage_fn)(lua_State *L, int idx, const char *what, const char *chunk, int line,
                            sim_sweep_staged *s);

/* Stages every point table of the array at index pts (each under its own
 * lua_pcall: a point that raises keeps its code and one-line message).
 * Pushes the staged array (a userdata the GC frees) and returns it; *n gets
 * the point count. */
sim_sweep_staged *fs_sweep_stage_all(lua_State *L, int pts, fs_stage_fn stage,
                                     const char *chunk, int line, int64_t *n);

/* Pushes the table a failed point i (0-based) returns: {error, code, point}. */
void fs_sweep_push_failed(lua_State *L, const sim_sweep_staged *s, int64_t i);

/* sim_sweep_exec_run (sim/sweep/sim_sweep_exec.h), raising its error:
 * exit 130 when interrupted, 73 when the store cannot be created, 70 when out
 * of memory. */
void fs_exec_run(lua_State *L, sim_sweep_exec *ex, sim_sweep_staged *sp, int64_t n, int single,
                 const char *chunk, int line);

/* fs_script_run (api.h) with a timeline: t may be NULL or have path NULL (no
 * timeline).  The chosen point and prompt must exist (else exit 64, nothing
 * written); the timeline is written (exit 73 on failure, before any results
 * file) when the script succeeds, by the process that recorded it. */
struct fs_script_opts;
int fs_script_run_timeline(const struct fs_script_opts *o, const fs_timeline_opts *t, char *err,
                           size_t errlen);

#endif
