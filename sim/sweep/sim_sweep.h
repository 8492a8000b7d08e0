/*
 * sim_sweep.h -- running many experiment points: local worker threads, MPI
 * ranks, resume, progress and clean interruption.
 *
 * The caller (sim/lua) has already expanded and validated the points; each job
 * holds a plain-C sim_point that borrows only read-only data (profiles, the
 * shared trace, policy parameters), so points run on any worker thread of any
 * rank and give the same bits: sim_replay_run is reentrant and a point's random
 * stream comes from its id (sim_id_seed), never from where it ran.
 *
 * sim_sweep_run, in order:
 *   1. resume: rank 0 looks up every job's record in the store (see
 *      sim_sweep_store.h) and broadcasts which are finished;
 *   2. dealing: the k-th unfinished job (in point order) belongs to rank
 *      k mod R; each rank runs its share on `workers` threads that take the
 *      next job from a shared counter; a finished point is persisted at once by
 *      the worker that computed it (no HDF5 call happens on a worker);
 *   3. the driver thread prints progress and watches for SIGINT/SIGTERM; after
 *      one, workers take no new job, the points in flight finish and are
 *      persisted (a second signal kills the process: the signal's default
 *      action is restored after the first);
 *   4. gather: every rank receives every job's outcome (all-gather), so every
 *      rank returns the same complete job array; outcomes land in jobs[i] by
 *      index, i.e. in point order whatever the completion order.
 * Jobs that fail (a point that does not fit, a replay error) are reported in
 * their own slot and do not stop the others.
 *
 * Thread/MPI model: only the calling (driver) thread calls MPI and writes to
 * stderr; workers call sim_replay_run and the store.
 */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "sim/replay/replay.h"
#include "sim/sim_status.h"
#include "sim/sweep/sim_sweep_store.h"

/* Job states. */
enum {
    SIM_SWEEP_PENDING = 0,  /* not run (the sweep was interrupted first) */
    SIM_SWEEP_COMPUTED = 1, /* replayed by this sweep */
    SIM_SWEEP_RESUMED = 2,  /* result read back from the store */
    SIM_SWEEP_FAILED = 3    /* replay failed: replay_rc and err say why */
};

#define SIM_SWEEP_ERR_CAP 384

typedef struct sim_sweep_job {
    /* inputs */
    sim_point pt;            /* borrowed data, read-only; pt.seed is the replay seed */
    sim_id id;         /* stable point id */
    uint64_t trace_checksum; /* what the record is keyed on: sim_point_content_key(&pt) */
    /* outputs */
    int32_t state;           /* SIM_SWEEP_* job state */
    int32_t replay_rc;       /* SIM_REPLAY_* when FAILED */
    sim_point_stats st;      /* when COMPUTED or RESUMED */
    char err[SIM_SWEEP_ERR_CAP]; /* one line when FAILED */
} sim_sweep_job;

#define SIM_SWEEP_RESUME_ANY_BUILD 2

typedef struct sim_sweep_params {
    int32_t workers;        /* local threads, >= 1 (capped by this rank's share) */
    const char *store_dir;  /* resume store (DIR/points); NULL = none */
    int32_t resume;         /* 1: reuse valid records of this build;
                               SIM_SWEEP_RESUME_ANY_BUILD: of any build;
                               0: recompute and overwrite */
    int32_t progress;       /* 1: progress on stderr (ignored on ranks other than 0) */
    const char *what;       /* label of progress lines, e.g. "sweep" */
    const char *version;    /* build key (sim_sweep_build_key), stored in and checked
                               against records */
    struct sim_out_lockh *lock; /* the output directory's lock (the store is inside it;
                               sim/out/sim_lock.h), or NULL: before each record is
                               written sim_out_lock_keep must hold it, else the
                               record is not written (a store failure) */
} sim_sweep_params;

void sim_sweep_default_params(sim_sweep_params *p);

typedef struct sim_sweep_summary {
    int64_t computed, resumed, failed, pending; /* over all ranks */
    double wall_s;                              /* of this call, host time */
    int32_t signal;                             /* the interrupting signal, or 0 */
    int32_t store_failures;                     /* records this rank could not write */
} sim_sweep_summary;

/* Runs jobs[0..n).  Collective under MPI: every rank calls it with the same
 * jobs in the same order.  Returns SIM_OK (even when some jobs FAILED),
 * or SIM_SWEEP_E_* with one line in err; with E_INTERRUPTED the jobs array and
 * summary are complete for what finished (the rest stays PENDING). */
int sim_sweep_run(const sim_sweep_params *p, sim_sweep_job *jobs, int64_t n,
                  sim_sweep_summary *sum, char *err, size_t errlen);

/* Interruption.  install: SIGINT and SIGTERM set a process-wide flag (a signal
 * handler can reach nothing else) and print one line; the second such signal
 * has its default effect.  SIGTERM also starts a watchdog: a run still going
 * 0.5 s later (Lua code inside one long VM instruction, a point whose replay
 * is long) is ended at once, one line, exit 130 -- the finished points are
 * saved, those in flight are computed again on resuming.  restore: previous
 * handlers back (the watchdog, once started, keeps running).  interrupted():
 * the first signal received since install, or 0. */
void sim_sweep_signals_install(void);
void sim_sweep_signals_restore(void);
int sim_sweep_interrupted(void);
/* Around a long library call no hook can stop (a Lua pattern match, up to its
 * bound; a charged string, utf8 or table function): on = 1 before, 0 after,
 * from any thread.  SIGINT or SIGTERM while any thread is inside one ends the
 * process at once (one line, exit 130): finished points are saved, the one in
 * flight is lost; so does the time limit (exit 78). */
void sim_sweep_library_call(int on);

/* A wall-clock limit for the whole run: after `seconds` SIGALRM sets the same
 * flag (interrupted() then returns SIGALRM), so sweeps finish the points in
 * flight and stop as on SIGINT, and a script's Lua code stops at its next
 * hook.  Should the run still be going DEADLINE_GRACE_S (10) seconds later
 * (Lua code stuck inside one long library call), the process ends at once:
 * one line on stderr, exit 78.  clear: timer off, previous SIGALRM handler
 * back.  seconds <= 0: no limit. */
void sim_sweep_deadline_set(double seconds);
void sim_sweep_deadline_clear(void);

/* Default worker count: SLURM_CPUS_PER_TASK if set, else the online CPUs
 * divided by the MPI ranks on this node; at least 1. */
int32_t sim_sweep_default_workers(void);

#endif
