/*
 * sim_run.h -- a script run's state without the script API: what the run
 * holds (its traces, the profile files it read, its result rows, the files it
 * writes into its output directory), the memory it charges against the run's
 * limit, the warnings it has said, the synthetic traces flashspec.calibrate
 * records and generates together, the checks it makes of a point's models
 * and tokens, the names its rows carry (one name, one thing), and the phases
 * around its script (checked, locked, written, freed).  The script surface
 * (sim/lua) translates Lua tables into these calls and raises where they
 * refuse; everything here is testable without Lua.
 *
 * Memory: what the run holds for the script (traces, result rows, draw
 * memos) is counted with every Lua heap against one limit (--max-memory-mb):
 * through the run's shared pool when there is one (sim/config/sandbox.h),
 * else beside the script's heap.  A hold that would pass the limit is
 * refused, and nothing is counted.
 */
#ifndef SIM_SWEEP_RUN_H
#define SIM_SWEEP_RUN_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/config/sim_profile_cache.h"
#include "sim/out/rows.h"
#include "sim/out/sim_lock.h"
#include "sim/out/sim_outdir.h"
#include "sim/replay/sim_trace_cache.h"
#include "sim/sweep/sim_run_opts.h"
#include "sim/sweep/sim_sweep_exec.h"
#include "traces/trc.h"

/* Draw memos of synthetic traces a run keeps at most, and the most bytes each
 * may take (a trace shape that needs more is synthesised without one). */
#define SIM_RUN_SYNTH_MEMO_MAX 16
#define SIM_RUN_SYNTH_MEMO_BYTES ((size_t)256 << 20)

struct fs_lua_limits; /* sim/config/sandbox.h: the Lua states' limits and shared pool */
struct fs_runrec;
struct fs_names;

typedef struct sim_run {
    char script_dir[PATH_MAX];
    fs_rows_meta meta;
    sim_trace_cache traces; /* each entry allocated on its own: userdata borrow them */
    fs_row *rows;
    int32_t n_rows, cap_rows;
    int quiet;
    sim_sweep_exec ex; /* workers, resume store, counters (sim/sweep/sim_sweep_exec.h) */
    sim_out_file *outputs;
    int32_t n_outputs, cap_outputs;
    int64_t generation; /* flashspec.calibrate evaluations so far */
    int no_variants;    /* points being staged skip device variants: set by every entry
                           that stages (1 unless it records rows) */
    uint64_t *warned;   /* keys of the warnings already printed (one each) */
    int32_t n_warned, cap_warned;
    /* memory the run holds for the script (traces, result rows), counted
     * with the Lua heap against the script's memory limit */
    const struct fs_lua_limits *lim;
    size_t held_bytes;
    const fs_plugin *plugins; /* borrowed from the options */
    int n_plugins;
    size_t trace_cache_bytes; /* prompt cache of each trace opened by flashspec.trace */
    int verify_trace;         /* --verify-trace */
    int strict;               /* --strict */
    struct fs_runrec *rec;    /* what each committed row ran (runrec.h), for DIR/run.json */
    sim_profile_cache profiles; /* profile files read so far (sim_profile_cache.h) */
    /* while flashspec.calibrate fits (synth_memo_on > 0): a draw memo per
     * shape of node-stream synthetic trace (trc.h trc_synth_memo), so that an
     * evaluation redraws only what its knobs move; held against the memory
     * limit like traces */
    int32_t synth_memo_on;
    int calibrating; /* inside flashspec.calibrate (what an interrupt stops) */
    trc_synth_memo *synth_memo[SIM_RUN_SYNTH_MEMO_MAX];
    int32_t n_synth_memo;
    /* while flashspec.calibrate calls its points function (synth_defer > 0):
     * named synthetic traces are recorded and generated together; how many
     * are recorded, the most they may take */
    int32_t synth_defer;
    int32_t n_synth_pending;
    size_t synth_pending_most;
    struct fs_names *names; /* the names recorded rows carry (sim_run_names.c) */
    sim_out_lockh lock; /* the output directory's (lock.fd -1: none) */
    int made_dir;       /* the run made the output directory */
    char *src;          /* the script, read once: hashed, run and recorded */
    size_t len;
} sim_run;

/* ------------------------------------------------------------- memory */

/* Bytes of the run's memory in use (the shared pool when there is one: every
 * Lua state's heap and what the run holds; else the script's heap and held). */
size_t sim_run_mem_in_use(const sim_run *r);
/* 1 when `bytes` more beside `used` in use would pass the run's memory limit;
 * no limit: 0. */
int sim_run_over_limit(const sim_run *r, size_t used, size_t bytes);
/* Counts `bytes` more that the run holds for the script, or returns -1
 * (nothing counted) where that would pass the memory limit. */
int sim_run_try_hold(sim_run *r, size_t bytes);
/* Gives bytes back (at most what is held). */
void sim_run_release(sim_run *r, size_t bytes);

/* ------------------------------------------------------- said and written */

/* 1 the first time `key` is seen by this run (print the warning), else 0;
 * 1 again when the run cannot remember it (out of memory). */
int sim_run_warn_once(sim_run *r, uint64_t key);

/* Queues a file for the output directory (copied).  Returns 0; -1 when out
 * of memory; SIM_RUN_OUTPUT_RESERVED when the name is one the run writes
 * itself (sim_out_name_reserved); SIM_RUN_OUTPUT_TAKEN when an output of that
 * name -- compared without regard to case -- is queued already (each writer
 * checks its names first and says which; this is the last guard). */
enum { SIM_RUN_OUTPUT_RESERVED = -2, SIM_RUN_OUTPUT_TAKEN = -3 };
int sim_run_add_output(sim_run *r, const char *name, const char *data, size_t len);

/* ------------------------------------------------------------- files */

/* Finds a file named by a script: an absolute path as is, else relative to
 * the script's directory, then to the project ($FLASHSPEC_HOME or the source
 * tree); sim_paths_find_file (sim/config/sim_paths.h) over those two.  0 and
 * out, or -1 (tried: " (looked in A and B)"). */
int sim_run_find_file(const sim_run *r, const char *path, char *out, size_t n, char *tried,
                      size_t tn);
/* The first of those two places where a relative path names anything (a
 * FIFO, a directory): 0 and out, or -1. */
int sim_run_find_any(const sim_run *r, const char *path, char *out, size_t n);

/* ------------------------------------------------------------- traces */

/* Frees the traces of the entries [from, traces.n) last used before
 * generation `before` (flashspec.calibrate: synthetic traces that recent
 * evaluations no longer use), and their memory.  The entries stay, with
 * trace NULL, so that a userdata still holding one gets a clear error
 * instead of a stale pointer. */
void sim_run_release_traces(sim_run *r, int32_t from, int64_t before);

/* flashspec.calibrate's fit begins (on = 1) or ends (on = 0): while any fit
 * runs, synthetic traces keep draw memos (one per shape of node-stream
 * trace, held against the memory limit; a shape that does not fit, or one
 * past SIM_RUN_SYNTH_MEMO_MAX, is synthesised without one); when the last
 * ends they are freed.  sim_run_synth_memo_for: the memo for traces of p's
 * shape (NULL: none). */
void sim_run_synth_memos(sim_run *r, int on);
trc_synth_memo *sim_run_synth_memo_for(sim_run *r, const trc_synth_params *p);

/* Traces generated together: while r->synth_defer > 0, a named synthetic
 * trace that is not made yet is only recorded -- its parameters checked, its
 * entry made -- and sim_run_synth_resolve then generates every recorded one
 * at once (trc_synth_many): each on its own worker when there are several,
 * else on all of them; the same traces at any thread count, charged to the
 * memory limit in the order they were asked for.
 *
 * sim_run_synth_can_defer: 1 when a trace that may take `most` bytes is to
 * be recorded: deferring is on and it fits beside what the run holds and
 * what is recorded already, so the limit sees what it would have seen.
 * sim_run_synth_defer records the trace of p for entry e (chunk and line
 * name the call for a later error): 0, or -1 out of memory. */
int sim_run_synth_can_defer(const sim_run *r, size_t most);
int sim_run_synth_defer(sim_run *r, sim_trace_entry *e, const trc_synth_params *p, size_t most,
                        const char *chunk, int line);

/* Why sim_run_synth_resolve stopped: the first recorded trace that failed,
 * in the order asked.  status != SIM_OK: the generator's failure (msg);
 * SIM_OK: its charge of `need` bytes was refused by the memory limit. */
typedef struct sim_run_synth_failure {
    int status;
    size_t need;
    char chunk[PATH_MAX];
    int line;
    char msg[512];
} sim_run_synth_failure;

/* Generates every recorded trace (on the run's workers) and charges each to
 * the memory limit: 0, or -1 with f filled and every recorded trace from the
 * failed one on dropped (its entry left without a trace). */
int sim_run_synth_resolve(sim_run *r, sim_run_synth_failure *f);
/* Frees what is still recorded (the run's end). */
void sim_run_synth_free_pending(sim_run *r);

/* ------------------------------------------------------------- checks */

/* A point's target (and draft, NULL when its policy drafts none) against the
 * pair trace t was recorded with, once per trace and pair: swapped roles, or
 * a recorded name that is a profile whose architecture (layers, hidden size,
 * vocabulary, kind) differs from the point's model, is one warning line on
 * stderr (rank 0) -- SIM_CONFIG with the line in err under --strict
 * (r->strict).  Traces recorded with models flashspec has no profile for
 * (synthetic, tiny stand-ins) are not compared by name.  SIM_OK otherwise. */
int sim_run_check_model_pair(sim_run *r, const trc_trace *t, const char *trace_name,
                             const char *tgt_name, const sim_model *tgt, const char *drf_name,
                             const sim_model *drf, const char *what, const char *chunk, int line,
                             char *err, size_t errlen);

/* A point asking for more tokens than trace tt's references hold generates
 * what they hold: one warning line, once per trace and value (rank 0). */
void sim_run_warn_short_trace(sim_run *r, const trc_trace *tt, const char *name,
                              int32_t max_new_tokens, const char *chunk, int line);

/* ------------------------------------------------------------- names */

/* What a recorded row names (sim_run_names.c): its policy (descriptor and
 * parameters), its device (with its standing variants), its target and its
 * draft (NULL: none). */
typedef struct sim_run_named {
    const eng_policy_desc *policy;
    const void *policy_params;
    const char *device_name;
    const sim_device *device;
    int32_t n_variants;
    const sim_device *variants;
    const char (*variant_names)[SIM_VARIANT_NAME_CAP];
    const char *target_name, *draft_name;
    const sim_model *target, *draft;
} sim_run_named;

/* One name, one thing: claims the names a recorded row of w carries for
 * what they name -- a device or model by every value (a device with its
 * variants), a policy by its code (a built-in's or plug-in's descriptor, a
 * Lua policy's file digest) -- compared without regard to case.  SIM_OK;
 * SIM_CONFIG when another thing already holds one (one line in err naming
 * both uses, chunk:line the new one); SIM_NOMEM.  sim_run_free_names frees
 * the claims (NULL-safe). */
int sim_run_claim_names(sim_run *r, const sim_run_named *w, const char *chunk, int line,
                        char *err, size_t errlen);
void sim_run_free_names(sim_run *r);

/* The built-in, `lua` or plug-in policy name that name is, compared without
 * regard to case (a Lua policy called Flash_AR would pass for flash_ar), or
 * NULL. */
const char *sim_run_policy_name_taken(const sim_run *r, const char *name);

/* ------------------------------------------------------------- phases */

/* The phases of a run around its script (the binding runs the script
 * between sim_run_lock and sim_run_write):
 *   sim_run_check: the run's settings from o, and every check that needs no
 *     lock -- the output paths writable, the script a readable file (66
 *     when it is missing, a directory or not a regular file), the timeline
 *     made; SIM_OK, or the status with one line in err;
 *   sim_run_lock: one writer per output directory (sim/out/sim_outdir.h),
 *     held until sim_run_free; rank 0 only;
 *   sim_run_write: when the script succeeded, the timeline, the results and
 *     run record, the script's files, then a failed point's status ("N
 *     points failed ...");
 *   sim_run_free: everything the run holds, the lock released, a directory
 *     the run made and left empty (it failed, code != SIM_OK) removed. */
int sim_run_check(sim_run *r, const fs_script_opts *o, const fs_timeline_opts *t, char *err,
                  size_t errlen);
int sim_run_lock(sim_run *r, const fs_script_opts *o, char *err, size_t errlen);
int sim_run_write(sim_run *r, const fs_script_opts *o, const fs_timeline_opts *t, char *err,
                  size_t errlen);
void sim_run_free(sim_run *r, const fs_script_opts *o, int code);

#endif
