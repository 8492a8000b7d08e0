/*
 * sim_sweep_exec.h -- the points of one flashspec.run or flashspec.sweep call
 * executed: staged points (validated, with their result row's parameters)
 * handed to the executor (sim_sweep.h) and their outcomes copied back, in
 * point order; the memo of point statistics a calibration keeps and the
 * evaluations it batches; the ranking that names a run after its most
 * serious failed point; the timeline hooks of the one point --timeline
 * records, and its file.  Plain C: sim/lua stages the points from a script's
 * tables and raises the status these return.
 *
 * Error policy of a sweep: a point that fails when it runs (does not fit the
 * DRAM budget, replay error) keeps its status and one line naming it, is
 * reported on stderr (rank 0) and the other points still run; the run owes
 * the most serious failed point's status (sim_sweep_failure_rank: a fault of
 * flashspec or a policy over damaged data over a configuration error; the
 * first of equally serious ones), which its caller turns into the exit code
 * at the script's end.
 */
#ifndef SIM_SWEEP_EXEC_H
#define SIM_SWEEP_EXEC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/out/rows.h"
#include "sim/replay/replay.h"
#include "sim/sim_id.h"
#include "sim/sweep/sim_sweep_store.h"

/* One point on its way through a sweep. */
typedef struct sim_sweep_staged {
    fs_row row;       /* parameters; row.st filled when the point ran */
    sim_point pt;     /* borrows from the objects the point was staged from */
    sim_id id;
    int32_t state;    /* SIM_SWEEP_* job state once executed */
    int32_t code;     /* 0, or the SIM_* status of its error */
    int32_t memo;     /* 0: runs; 1: row.st taken from the memo, 2: from the point of
                         its batch with its id (sim_sweep_evals_lookup); not run */
    char err[512];    /* one line when code != 0 */
} sim_sweep_staged;

/* Statistics of points an evaluation loop (flashspec.calibrate) already ran,
 * by point id.  Exact, not an approximation: a point's statistics are a pure
 * function of its id -- policy and its parameters, device, target and draft by
 * every value, trace checksum, every point key; the replay seed derives from
 * it --, so a Jacobian column that moves one workload's acceptance replays
 * that workload's points only.  Entries unused for SIM_SWEEP_MEMO_KEEP
 * evaluations are dropped; at most SIM_SWEEP_MEMO_MAX are held. */
#define SIM_SWEEP_MEMO_KEEP 4
#define SIM_SWEEP_MEMO_MAX 16384
typedef struct sim_sweep_memo_entry {
    sim_id id;
    int64_t used_at; /* evaluation that last used it */
    int32_t pending; /* 1: put by a batch of evaluations still running it (st not yet known) */
    sim_point_stats st;
} sim_sweep_memo_entry;

typedef struct sim_sweep_memo {
    sim_sweep_memo_entry *e; /* [n], insertion order */
    int32_t *slot;           /* [n_slot] open addressing: index into e, -1 empty */
    int32_t n, cap, n_slot;
    int64_t now;        /* the current evaluation */
    int64_t hits, runs; /* points taken from the memo / replayed, over the run */
} sim_sweep_memo;

/* The entry of id, or NULL. */
sim_sweep_memo_entry *sim_sweep_memo_find(sim_sweep_memo *m, sim_id id);
/* Adds id's statistics (a full memo keeps what it has; an entry of id already
 * there is only marked used); st NULL adds it pending, its statistics to come
 * with sim_sweep_memo_fill.  0, or -1 out of memory. */
int sim_sweep_memo_put(sim_sweep_memo *m, sim_id id, const sim_point_stats *st);
/* Gives a pending entry of id (if the memo still holds it) its statistics. */
void sim_sweep_memo_fill(sim_sweep_memo *m, sim_id id, const sim_point_stats *st);
/* Drops the entries unused in the last SIM_SWEEP_MEMO_KEEP evaluations. */
void sim_sweep_memo_prune(sim_sweep_memo *m);
void sim_sweep_memo_free(sim_sweep_memo *m);

struct sim_timeline;

/* Execution settings and counters of one script run. */
typedef struct sim_sweep_exec {
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
    int32_t point_code;     /* SIM_* status owed to failed points, 0 = none */
    /* timeline: only the point with index tl_point gets the replay's hooks
     * (recording into tl, fed by the one worker that runs it; a resumed point
     * is replayed again on the driver thread of rank 0 to record it) */
    struct sim_timeline *tl; /* NULL = no timeline; owned by the script run */
    int64_t tl_point;        /* 0-based index over every point the script runs */
    int32_t tl_prompt;       /* 0-based prompt of that point */
    int64_t points_seen;     /* points staged so far by the script */
    int32_t tl_state;        /* SIM_SWEEP_TL_* */
    int32_t tl_code;         /* SIM_SWEEP_TL_FAILED: the point's status */
    int32_t tl_prompts;      /* SIM_SWEEP_TL_RAN: prompts the point replayed */
    /* the calibration profiles' tables, shared by every point the script
     * replays on any of its threads (sim_point.profile_cache); owned by the
     * script run, NULL = none */
    sim_profile_cache *profile_cache;
} sim_sweep_exec;

/* sim_sweep_exec.tl_state */
enum { SIM_SWEEP_TL_NOT_REACHED = 0, SIM_SWEEP_TL_RAN = 1, SIM_SWEEP_TL_FAILED = 2 };

/* The tree-size cap of a policy's params (nodes per tree, root included:
 * what `tree_nodes` sets; eng_tree_nodes), NAN when the policy states no
 * tree-size parameter. */
double sim_sweep_tree_cap(const eng_policy_desc *desc, const void *params);

/* Of the staged points sp[0..n) that ran (code 0), whose policy states a
 * tree-size cap and for which capped(&sp[i]) holds (the script set the cap):
 * how many (*ran), and, returned, how many never reached it (the most rows
 * verified, row.st.verify_rows_max, below the cap), the first of them at
 * *first (-1: none). */
int64_t sim_sweep_unbound_caps(const sim_sweep_staged *sp, int64_t n,
                               int (*capped)(const sim_sweep_staged *s), int64_t *ran,
                               int64_t *first);

/* How serious a failed point's status is: 3 a fault of flashspec or a policy
 * (SIM_NOMEM, SIM_INTERNAL, SIM_MISMATCH), 2 damaged data (SIM_DATA), 1
 * anything else (a configuration error); an extended status ranks with its
 * primary. */
int sim_sweep_failure_rank(int status);

/* Notes a failed point's status: it becomes ex->point_code when none is owed
 * yet or it ranks over the one owed. */
void sim_sweep_exec_note(sim_sweep_exec *ex, int status);

/* Runs the staged points of sp[0..n) whose code is 0 and memo 0 and fills
 * their state, row.st or code/err (err: "CHUNK:LINE: flashspec.run|sweep
 * (POINT): WHY", cut with "..." when longer than the field).  single: an
 * fs.run point (no progress, no summary, failed points left to the caller);
 * else each failed point is one line on stderr (rank 0), noted
 * (sim_sweep_exec_note) and counted in ex->failed, and the summary line
 * follows unless quiet.  The timeline point, when among these, gets the
 * replay's hooks and its outcome in ex->tl_*.  SIM_OK, or the status with one
 * line in err: SIM_NOMEM, SIM_INTERRUPTED, the executor's error (store,
 * ranks), SIM_INTERNAL when the timeline replay fails. */
int sim_sweep_exec_run(sim_sweep_exec *ex, sim_sweep_staged *sp, int64_t n, int single,
                       const char *chunk, int line, char *err, size_t errlen);

/* One evaluation's staged points (flashspec.calibrate) and when it ran
 * (sim_sweep_memo.now). */
typedef struct sim_sweep_eval {
    sim_sweep_staged *sp;
    int64_t n;
    int64_t now;
} sim_sweep_eval;

/* m evaluations at once (a Jacobian's columns), in two steps: each point's
 * statistics, the memo and its counts are those of the m evaluations run one
 * after the other in order (memo NULL: every point runs), but the points
 * that run -- each id once -- run together on the workers.
 *
 * sim_sweep_evals_lookup, first: the memo as the m evaluations in turn would
 * leave it -- each point found there is reused (memo->hits), each other one
 * is run (memo->runs) and put, pending, after its evaluation's lookups;
 * entries unused for SIM_SWEEP_MEMO_KEEP evaluations go --, and which points
 * must run: sp[i].memo = 1 for a point whose statistics the memo holds now
 * (copied, state SIM_SWEEP_COMPUTED), 2 for one whose statistics come from a
 * point of the batch with its id, 0 for one to run.  SIM_OK, or SIM_NOMEM
 * (the memo could not grow; the lookups stop there).
 *
 * sim_sweep_exec_evals, then: each id to run once -- a copy of its first
 * point in run[] -- run (as an fs.run point on a copy of ex: no store, no
 * progress, no timeline, ex's counters untouched); every point's statistics
 * from its id's run, a point to run (memo 0) its state, code and error line
 * too; the memo's pending entries of the points computed filled.  run[] and
 * where[] hold sim_sweep_evals_total(ev, m) entries (the caller's memory).
 * SIM_OK, or sim_sweep_exec_run's status with one line in err (SIM_NOMEM
 * when the index of ids cannot be made). */
int sim_sweep_evals_lookup(sim_sweep_eval *ev, int32_t m, sim_sweep_memo *memo);
int64_t sim_sweep_evals_total(const sim_sweep_eval *ev, int32_t m);
int sim_sweep_exec_evals(const sim_sweep_exec *ex, sim_sweep_eval *ev, int32_t m,
                         sim_sweep_memo *memo, sim_sweep_staged *run, int64_t *where,
                         const char *chunk, int line, char *err, size_t errlen);

/* After a script that succeeded: the timeline of point ex->tl_point, prompt
 * ex->tl_prompt, written to path (atomically) by the MPI rank that recorded
 * it (collective: every rank calls it), with one line on stderr unless quiet
 * (always when the event limit cut it).  SIM_OK also when that point failed
 * (one line on rank 0; nothing written: the failed point's status follows);
 * SIM_USAGE when the script ran no such point or the point no such prompt,
 * SIM_INTERNAL when no rank recorded a cycle, the writer's status when it
 * cannot write; one line in err. */
int sim_sweep_exec_timeline_write(const sim_sweep_exec *ex, const char *path, int quiet, char *err,
                                  size_t errlen);

/* The status and one line of a script run a signal stopped (sig: SIGALRM,
 * the time limit --max-seconds of the script at path script, else an
 * interruption): SIM_CONFIG after the time limit, SIM_INTERRUPTED after an
 * interruption; the line says what a second run can take up -- the points
 * this one computed and saved in ex->store_dir, resumed when the same command
 * runs again (a calibration's evaluations, never saved, start over:
 * calibrating), or that nothing is saved. */
int sim_sweep_exec_stopped(const sim_sweep_exec *ex, int sig, const char *script,
                           double max_seconds, int calibrating, char *err, size_t errlen);

#endif
