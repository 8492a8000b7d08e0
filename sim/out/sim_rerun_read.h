/*
 * sim_rerun_read.h -- `flashspec rerun DIR`: a results directory run again from what
 * it recorded, not from today's files.
 *
 * DIR/run.json (runrec.h) records every profile file the script loaded, as
 * the file resolved it (inheritance applied, before the script's overrides),
 * and DIR/script.lua the script's bytes.  A rerun runs DIR/script.lua with the
 * recorded --arg values and limits, with the recorded profiles standing for
 * the files (sim_rerun_prefill puts them into the run's profile cache under
 * today's path of each file), from the recorded script's directory (its
 * relative trace paths resolve as they did).  Same inputs, seed and build:
 * the same result bytes.  Where a file of today's configs/ differs from what
 * run.json recorded, one warning line per file names the keys, with both
 * values; the rerun uses the recorded ones.
 *
 * run.json is read with a small JSON reader of our own (RFC 8259: objects,
 * arrays, strings with escapes, numbers, true, false, null; at most 64 levels
 * deep) into a Lua table of a private Lua state; a file that is not JSON, or
 * lacks what a rerun needs, is one line naming the file and the byte or the
 * member, exit 65.
 */
#ifndef SIM_OUT_RERUN_READ_H
#define SIM_OUT_RERUN_READ_H

#include <stddef.h>

#include "sim/config/sim_profile_cache.h"

#define SIM_RERUN_MAX_ARGS 64

/* What the command line of a rerun takes from DIR/run.json. */
typedef struct sim_rerun_plan {
    char script[4096];     /* DIR/script.lua */
    char script_dir[4096]; /* where the recorded script was (relative paths resolve there) */
    char record[4096];     /* DIR/run.json */
    char verb[16];         /* run, sweep, tune or calibrate */
    char args_buf[SIM_RERUN_MAX_ARGS][512];
    const char *args[SIM_RERUN_MAX_ARGS]; /* "KEY=VALUE", into args_buf */
    int n_args;
    int unsafe, strict;
    long long max_instructions, max_memory_mb, trace_cache_mb;
    double max_seconds;
} sim_rerun_plan;

/* Reads DIR/run.json into plan.  SIM_OK, or an exit code with one line
 * in err (66: no run.json or script.lua; 65: not JSON, or a member missing). */
int sim_rerun_plan_read(const char *dir, sim_rerun_plan *plan, char *err, size_t errlen);

/* The recorded profiles of record (a run.json) into the run's profile cache
 * (sim/config/sim_profile_cache.h), each under today's path of its file;
 * one warning line per file today's copy differs from (unless quiet).
 * SIM_OK, or an exit code with one line in err. */
int sim_rerun_prefill(sim_profile_cache *cache, const char *record, int quiet, char *err, size_t errlen);

#endif
