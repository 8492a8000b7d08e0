/*
 * sweep_exec.h -- how flashspec.run and flashspec.sweep execute their points
 * (internal to sim/lua; the executor itself is sim/sweep).
 *
 * Pipeline of one fs.sweep call (fs.run is the same with one point):
 *   expand   fs_sweep_expand turns the sweep table into a Lua array of point
 *            tables: the Cartesian product of list-valued keys (canonical key
 *            order, last key fastest), or, with `points = { {...}, ... }`, for
 *            each entry in order the product of (shared keys overlaid by the
 *            entry's keys);
 *   stage    api.c validates each point into an fs_staged (row parameters, a
 *            plain-C sim_point, the point id and the replay seed derived from
 *            it); a point that fails validation keeps its error and is skipped;
 *   execute  fs_exec_run hands the valid points to sim_sweep_run (threads,
 *            resume store, MPI) and copies the outcomes back, in point order;
 *   return   api.c appends the good rows to the script's results and returns
 *            one Lua table per point (a row, or {error=, code=, point=}).
 *
 * Error policy of a sweep: the whole list is staged before anything runs, and
 * a point that fails validation (an invalid combination, a value out of range)
 * makes the sweep one script error -- its message and how many points share it
 * (api.c fs_api_sweep).  A point that fails when it runs (does not fit the DRAM
 * budget, replay error) is reported on stderr as one line and the other points
 * still run; the script goes on; at its end the results files hold the good
 * points and flashspec exits with the failed points' code (70 if any was an
 * internal error, else the first one's, normally 78).  Errors in the sweep
 * table itself (unknown key, empty list, malformed `points`) are script errors
 * as before.  An interruption (SIGINT/SIGTERM) raises exit code 130.
 */
#ifndef FS_LUA_SWEEP_EXEC_H
#define FS_LUA_SWEEP_EXEC_H

#include <limits.h>
#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/out/rows.h"
#include "sim/replay/replay.h"
#include "sim/sweep/sim_sweep_store.h"



/* One point on its way through a sweep. */
typedef struct fs_staged {
    fs_row row;       /* parameters; row.st filled when the point ran */
    sim_point pt;     /* borrows from the point's Lua objects */
    sim_id id;
    int32_t state;    /* SIM_SWEEP_* job state once executed */
    int32_t code;     /* 0, or the SIM_* status of its error */
    int32_t memo;     /* 1: row.st was taken from the run's memo (fs_memo); not run */
    char err[512];    /* one line when code != 0 */
} fs_staged;

/* Statistics of points an evaluation loop (flashspec.calibrate) already ran,
 * by point id.  Exact, not an approximation: a point's statistics are a pure
 * function of its id -- policy and its parameters, device, target and draft by
 * every value, trace checksum, every point key; the replay seed derives from
 * it (api.c point_identity) --, so a Jacobian column that moves one workload's
 * acceptance replays that workload's points only.  Entries unused for
 * FS_MEMO_KEEP evaluations are dropped; at most FS_MEMO_MAX are held. */
#define FS_MEMO_KEEP 4
#define FS_MEMO_MAX 16384
typedef struct fs_memo_entry {
    sim_id id;
    int64_t used_at; /* evaluation that last used it */
    int32_t pending; /* 1: put by a batch of evaluations still running it (st not yet known) */
    sim_point_stats st;
} fs_memo_entry;

typedef struct fs_memo {
    fs_memo_entry *e; /* [n], insertion order */
    int32_t *slot;    /* [n_slot] open addressing: index into e, -1 empty */
    int32_t n, cap, n_slot;
    int64_t now;        /* the current evaluation */
    int64_t hits, runs; /* points taken from the memo / replayed, over the run */
} fs_memo;

/* The entry of id, or NULL. */
fs_memo_entry *fs_memo_find(fs_memo *m, sim_id id);
/* Adds id's statistics (a full memo keeps what it has; an entry of id already
 * there is only marked used); st NULL adds it pending, its statistics to come
 * with fs_memo_fill.  0, or -1 out of memory. */
int fs_memo_put(fs_memo *m, sim_id id, const sim_point_stats *st);
/* Gives a pending entry of id (if the memo still holds it) its statistics. */
void fs_memo_fill(fs_memo *m, sim_id id, const sim_point_stats *st);
/* Drops the entries unused in the last FS_MEMO_KEEP evaluations. */
void fs_memo_prune(fs_memo *m);
void fs_memo_free(fs_memo *m);

struct sim_timeline;

/* --timeline of flashspec run/sweep (sim/out/sim_timeline.h): which point and
 * prompt to record and where to write it. */
typedef struct fs_timeline_opts {
    const char *path; /* FILE.json; NULL = no timeline */
    int64_t point;    /* 0-based index over every point the script runs, in the
                         order it runs them (each fs.run is one, each fs.sweep
                         its points in order, failed points included) */
    int32_t prompt;   /* 0-based prompt of that point */
} fs_timeline_opts;

/* Execution settings and counters of one script run. */
typedef struct fs_exec {
    int32_t workers;        /* local worker threads, >= 1 */
    char store_dir[PATH_MAX]; /* DIR/points, "" = no resume store */
    struct sim_out_lockh *lock; /* DIR's lock while this process holds it, else NULL
                                   (sim/out/sim_lock.h) */
    int32_t resume;         /* reuse finished points found in the store (1: of this
                               build, SIM_SWEEP_RESUME_ANY_BUILD: of any build) */
    char build_key[SIM_SWEEP_BUILD_KEY_CAP]; /* this binary's, for the records */
    int32_t quiet;          /* no progress or summaries (errors still print) */
    int32_t rank;           /* MPI rank; only rank 0 prints */
    int64_t computed, resumed, failed; /* over the whole script */
    int32_t point_code;     /* exit code owed to failed points, 0 = none */
    /* timeline: only the point with index tl_point gets the replay's hooks
     * (recording into tl, fed by the one worker that runs it; a resumed point
     * is replayed again on the driver thread of rank 0 to record it) */
    struct sim_timeline *tl; /* NULL = no timeline; owned by the script run */
    int64_t tl_point;        /* fs_timeline_opts.point */
    int32_t tl_prompt;       /* fs_timeline_opts.prompt */
    int64_t points_seen;     /* points staged so far by the script */
    int32_t tl_state;        /* FS_TL_* */
    int32_t tl_code;         /* FS_TL_FAILED: the point's exit code */
    int32_t tl_prompts;      /* FS_TL_RAN: prompts the point replayed */
    /* the calibration profiles' tables, shared by every point the script
     * replays on any of its threads (sim_point.profile_cache); owned by the
     * script run, NULL = none */
    sim_profile_cache *profile_cache;
} fs_exec;

/* fs_exec.tl_state */
enum { FS_TL_NOT_REACHED = 0, FS_TL_RAN = 1, FS_TL_FAILED = 2 };

/* Validates the keys of the table at idx (raises on an unknown key). */
typedef void (*fs_sweep_check_fn)(lua_State *L, int idx, const char *what, const char *chunk,
                                  int line);

/* Pushes the array of point tables of the sweep table at idx; keys: the
 * nk canonical point keys.  Raises (exit 78) on a malformed sweep table. */
void fs_sweep_expand(lua_State *L, int idx, const char *const *keys, int nk,
                     fs_sweep_check_fn check, const char *chunk, int line);

/* Validates the point table at idx into *s; raises on invalid input. */
typedef void (*fs_stage_fn)(lua_State *L, int idx, const char *what, const char *chunk, int line,
                            fs_staged *s);

/* Stages every point table of the array at index pts (each under its own
 * lua_pcall: a point that raises keeps its code and one-line message).
 * Pushes the staged array (a userdata the GC frees) and returns it; *n gets
 * the point count. */
fs_staged *fs_sweep_stage_all(lua_State *L, int pts, fs_stage_fn stage, const char *chunk,
                              int line, int64_t *n);

/* Pushes the table a failed point i (0-based) returns: {error, code, point}. */
void fs_sweep_push_failed(lua_State *L, const fs_staged *s, int64_t i);

/* Runs the staged points whose code is 0 and fills their state, row.st or
 * code/err.  single: an fs.run point (no progress, no summary, errors left to
 * the caller).  Prints one line per failed point (sweeps, rank 0).  Raises
 * with exit 130 when interrupted, 73 when the store cannot be created, 70 when
 * out of memory. */
void fs_exec_run(lua_State *L, fs_exec *ex, fs_staged *sp, int64_t n, int single,
                 const char *chunk, int line);

/* fs_script_run (api.h) with a timeline: t may be NULL or have path NULL (no
 * timeline).  The chosen point and prompt must exist (else exit 64, nothing
 * written); the timeline is written (exit 73 on failure, before any results
 * file) when the script succeeds, by the process that recorded it. */
struct fs_script_opts;
int fs_script_run_timeline(const struct fs_script_opts *o, const fs_timeline_opts *t, char *err,
                           size_t errlen);

#endif
