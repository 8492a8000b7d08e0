/*
 * api.h -- running experiment scripts: the `flashspec` global
 * (docs/experiments.md).
 *
 *   flashspec.device(name)  flashspec.model(name)  flashspec.trace(path)
 *   flashspec.trace.synth{...}  flashspec.policy.<name>{...}
 *   flashspec.run{...}  flashspec.sweep{...}  flashspec.version
 *
 * Every point run by a script is collected; when the script finishes without
 * error, the rows are written atomically to DIR/results.csv and DIR/results.h5
 * (nothing is written otherwise, except that failed sweep points leave the good
 * points' results and the failed points' exit code; see sweep_exec.h).  Points
 * run on `jobs` worker threads and, under an MPI launcher, across ranks;
 * finished points are saved in DIR/points and reused by a re-run (resume).  Errors are one line naming the file and line
 * (or the trace file and dataset) and map to the documented exit codes.
 */
#ifndef FS_LUA_API_H
#define FS_LUA_API_H

#include <limits.h>
#include <stddef.h>

#include "engine/eng_policy.h"
#include "sim/sim_status.h" /* the SIM_* statuses */
#include "sim/sweep/sim_run_opts.h"

/* The run options, plug-ins and timeline options: sim/sweep/sim_run_opts.h. */

/* Runs a script.  Returns a SIM_* status; on failure err holds one line. */
int fs_script_run(const fs_script_opts *o, char *err, size_t errlen);

#endif
