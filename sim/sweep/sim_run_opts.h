/*
 * sim_run_opts.h -- what a script run is asked to do: the command line's
 * options (fs_script_opts), the native policy plug-ins it loaded and the
 * timeline it writes.  Plain data, without Lua: the program (sim/cli)
 * fills it, the run (sim_run.h) and the script surface (sim/lua) read it.
 */
#ifndef SIM_SWEEP_RUN_OPTS_H
#define SIM_SWEEP_RUN_OPTS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/eng_policy.h"

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

/* --timeline of flashspec run/sweep (sim/out/sim_timeline.h): which point and
 * prompt to record and where to write it. */
typedef struct fs_timeline_opts {
    const char *path; /* FILE.json; NULL = no timeline */
    int64_t point;    /* 0-based index over every point the script runs, in the
                         order it runs them (each fs.run is one, each fs.sweep
                         its points in order, failed points included) */
    int32_t prompt;   /* 0-based prompt of that point */
} fs_timeline_opts;

#endif
