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

#define FS_MAX_PLUGINS 16

/* A native policy plug-in the command line loaded (sim/cli/plugin.h). */
typedef struct fs_plugin {
    const eng_policy_desc *desc; /* in the loaded object, valid until exit */
    char digest[33];             /* of the file's bytes: enters the point id */
    char sha256[65];             /* SHA-256 of the file's bytes, hex: in run.json */
    char path[PATH_MAX];
} fs_plugin;

/* Default prompt cache per trace (--trace-cache-mb). */
#define FS_TRACE_CACHE_MB 512

typedef struct fs_script_opts {
    const char *script;   /* path of the Lua script */
    const char *out_dir;  /* results directory; NULL = write no files */
    int unsafe;           /* lift the sandbox */
    int quiet;            /* no progress/summary lines on stderr */
    int jobs;             /* local worker threads per process, >= 1 (0 = 1) */
    int no_resume;        /* recompute points already saved in DIR/points */
    int resume_any_build; /* --resume=force: reuse records another build saved */
    long long max_instructions; /* Lua VM instruction limit; 0 = the default
                                   (1e9, none with unsafe) */
    long long max_memory_mb;    /* Lua heap limit in MiB; 0 = the default (4096) */
    double max_seconds;         /* wall-clock limit of the whole run (Lua code and
                                   the sweeps it starts); 0 = none */
    long long trace_cache_mb;   /* prompt cache of each trace read prompt by
                                   prompt, MiB; 0 = the default (FS_TRACE_CACHE_MB) */
    int verify_trace;           /* --verify-trace: trc_check every trace file opened */
    int strict;                 /* --strict: a model pair unlike the trace's is an error */
    /* script arguments, "key=value" each (--arg): flashspec.args[key] = "value";
     * keys are non-empty and unique (the CLI checks) */
    const char *const *args;
    int n_args;
    /* native policy plug-ins loaded by the command line (sim/cli/plugin.h):
     * each is flashspec.policy.NAME, its file digest in the points' ids */
    const fs_plugin *plugins;
    int n_plugins;
    /* the command line, recorded in DIR/run.json (may be NULL) */
    const char *const *argv;
    int argc;
    /* flashspec rerun (sim/out/sim_rerun_read.h): the directory the script's relative paths
     * resolve from (NULL: the script's own), and the run.json whose profiles
     * stand for today's files (NULL: none) */
    const char *script_dir;
    const char *rerun_record;
} fs_script_opts;

/* Runs a script.  Returns a SIM_* status; on failure err holds one line. */
int fs_script_run(const fs_script_opts *o, char *err, size_t errlen);

#endif
