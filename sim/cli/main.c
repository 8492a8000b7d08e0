/*
 * main.c -- the flashspec command line.
 *
 *   flashspec run SCRIPT.lua [-j N] [-o DIR] [--no-resume] [--unsafe] [-q]
 *                 [--max-instructions N] [--max-memory-mb N] [--trace-cache-mb N]
 *                 [--arg KEY=VALUE ...]
 *                 [--timeline FILE.json [--timeline-point N] [--timeline-prompt P]]
 *                 (sweep: the same)
 *   flashspec sweep SCRIPT.lua [-j N] [-o DIR] [--no-resume] [--unsafe] [-q]
 *   flashspec calibrate SPEC.lua [-j N] [-o DIR] [-q]   (run with sweep defaults)
 *   flashspec demo [-o DIR] [-q]
 *   flashspec trace info|check|stats|synth|index ...
 *   flashspec --help | --version
 *
 * Exit codes follow <sysexits.h>: 0 ok, 64 usage, 65 bad trace data, 66 missing
 * input, 70 internal error, 73 cannot create output, 78 bad configuration.
 * 130 interrupted (SIGINT/SIGTERM; finished points are kept for resuming).
 * Errors are one line on stderr starting with "flashspec: ".
 *
 * `run` and `sweep` are the same command with different default worker counts
 * (run: 1 thread; sweep: every CPU of the process's share).  Started by an MPI
 * launcher (mpirun, srun), either one initialises MPI and deals the points
 * across ranks; only rank 0 prints and writes results.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <getopt.h>
#include <hdf5.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cmd_columns.h"
#include "sim/cli/cmd_policy.h"
#include "sim/cli/cmd_profile.h"
#include "sim/cli/cmd_trace.h"
#include "sim/lua/api.h"
#include "sim/out/sim_rerun_read.h"
#include "sim/config/home.h"
#include "sim/cli/plugin.h"
#include "sim/lua/sweep_exec.h"
#include "sim/out/sim_rerun.h"
#include "sim/sweep/sim_sweep.h"
#include "sim/sweep/sim_sweep_mpi.h"

#define FS_MAX_ARGS 64 /* --arg options per command */

static const char usage_main[] =
    "usage: flashspec <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCRIPT.lua [-j N] [-o DIR]\n"
    "                            run an experiment script, write DIR/results.{csv,h5}\n"
    "  sweep SCRIPT.lua [-j N] [-o DIR]\n"
    "                            the same on every CPU by default; under mpirun/srun\n"
    "                            the points are dealt across MPI ranks\n"
    "  calibrate SPEC.lua [-j N] [-o DIR]\n"
    "                            fit phone-model and workload parameters to reference\n"
    "                            measurements (flashspec.calibrate), write the report\n"
    "                            and the fitted profile to DIR\n"
    "  tune SCRIPT.lua [-j N] [-o DIR]\n"
    "                            as sweep, for scripts that choose policy knobs per\n"
    "                            point with flashspec.tune\n"
    "  demo [-o DIR]             run the default experiment (configs/default.lua)\n"
    "  rerun DIR [-o OUT]        run a results directory again from its run.json and\n"
    "                            script.lua, not today's configs/\n"
    "  trace info|check|stats|synth|index\n"
    "                            inspect, validate, summarise, generate or index traces\n"
    "  profile DEVICE MODEL      print the costs the phone model derives\n"
    "  profiles [devices|models|parts] [--explain NAME]\n"
    "                            list the profiles or parts; where every value of\n"
    "                            a profile came from\n"
    "  policies [NAME]           list the policies, or one policy's parameters\n"
    "  columns [--markdown]      list the result columns with their meaning\n"
    "\n"
    "options:\n"
    "  -h, --help                show help (also after each command)\n"
    "  -V, --version             print the version\n"
    "\n"
    "exit codes: 0 ok, 64 usage, 65 bad trace data, 66 missing input,\n"
    "            70 internal error, 73 cannot create output, 78 bad configuration,\n"
    "            130 interrupted (re-run the same command to resume)\n";

static const char usage_run[] =
    "usage: flashspec run SCRIPT.lua [-j N] [-o DIR] [--no-resume] [--unsafe] [-q]\n"
    "                     [--arg KEY=VALUE ...]\n"
    "                     [--timeline FILE.json [--timeline-point N] [--timeline-prompt P]]\n"
    "       flashspec sweep SCRIPT.lua (the same options)\n"
    "\n"
    "Runs an experiment script (Lua 5.4, sandboxed).  Every point it runs with\n"
    "flashspec.run or flashspec.sweep is written, when the script succeeds, to\n"
    "DIR/results.csv and DIR/results.h5 (atomically; nothing on failure).\n"
    "Finished points are also saved one by one in DIR/points: running the same\n"
    "script into the same DIR again skips them (resume after a crash or Ctrl-C).\n"
    "Results are identical bytes for any -j and any number of MPI ranks.\n"
    "`run` uses 1 worker thread by default, `sweep` every CPU; under mpirun or\n"
    "srun both deal the points across the MPI ranks (rank 0 prints and writes).\n"
    "A failed sweep point is reported and skipped: the results hold the others and\n"
    "the exit code is the failed points' (78; 65 if one read a damaged trace\n"
    "prompt; 70 for an internal error).\n"
    "\n"
    "  -j, --jobs N       worker threads per process (default: run 1, sweep all CPUs)\n"
    "  -o, --output DIR   results directory (default: results/<script name>)\n"
    "      --no-resume    recompute points already saved in DIR/points\n"
    "      --plugin FILE.so  load a native policy plug-in (repeatable): its policy\n"
    "                     is flashspec.policy.NAME in the script\n"
    "      --resume=force reuse saved points even if another build of flashspec\n"
    "                     computed them (default --resume=build: only this build's)\n"
    "      --unsafe       lift the sandbox (io, os, require, debug) and the\n"
    "                     instruction limit (1e9 Lua VM instructions)\n"
    "      --max-instructions N  stop the script after N Lua VM instructions\n"
    "                     (default 1e9; none with --unsafe unless given)\n"
    "      --max-memory-mb N     cap the script's memory (Lua heap, traces, result\n"
    "                     rows) at N MiB (default 4096)\n"
    "      --max-seconds S       stop after S seconds of wall time (Lua code and\n"
    "                     sweeps; finished points are kept for resuming; exit 78)\n"
    "      --trace-cache-mb N    prompts kept in memory per trace file read prompt by\n"
    "                     prompt (files with an index), in MiB (default 512)\n"
    "      --verify-trace check every trace file completely when the script opens\n"
    "                     it: every prompt, and its index (checksum included)\n"
    "                     against the data (exit 65 on a mismatch); without it a\n"
    "                     trace read prompt by prompt checks each prompt it reads\n"
    "      --strict       a point whose target and draft do not match the pair its\n"
    "                     trace was recorded with is an error (exit 78), not a\n"
    "                     warning\n"
    "  -q, --quiet        no progress lines on stderr (errors still print)\n"
    "      --arg KEY=VALUE  hand the script flashspec.args.KEY = \"VALUE\" (a string;\n"
    "                     repeatable, each KEY once), e.g. --arg grid=quick\n"
    "      --timeline FILE.json\n"
    "                     also write the timeline of one prompt of one point as\n"
    "                     Chrome trace-event JSON (open it in ui.perfetto.dev): one\n"
    "                     track per resource (CPU, NPU, flash; overlapping work such\n"
    "                     as provisional drafting on its own track), the cycles with\n"
    "                     their draft and verify phases, DRAM use and tokens as\n"
    "                     counters; times in simulated microseconds.  Identical\n"
    "                     bytes for any -j; written atomically (exit 73 on failure)\n"
    "      --timeline-point N   which point: 0-based, counting every point the\n"
    "                     script runs in order, failed ones included (default 0)\n"
    "      --timeline-prompt P  which prompt of that point, 0-based (default 0);\n"
    "                     a point or prompt that does not exist is exit 64\n"
    "  -h, --help         this help\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM: the points in flight finish and are saved, nothing\n"
    "partial is written as results, exit 130; a second Ctrl-C abandons them, and so\n"
    "does SIGTERM after 0.5 s (one SIGTERM ends any run within a second).\n";

static const char usage_sweep[] =
    "usage: flashspec sweep SCRIPT.lua [-j N] [-o DIR] [--no-resume] [--unsafe] [-q]\n"
    "                       [--arg KEY=VALUE ...]\n"
    "                       [--timeline FILE.json [--timeline-point N] [--timeline-prompt P]]\n"
    "       mpirun -n RANKS flashspec sweep SCRIPT.lua ...   (or srun)\n"
    "\n"
    "Runs an experiment script's points in parallel: by default one worker thread\n"
    "per CPU of the process's share; started by an MPI launcher, the points are\n"
    "dealt across the ranks and rank 0 gathers them, prints and writes.  The\n"
    "results are identical bytes for any -j and any number of ranks, and equal\n"
    "those of `flashspec run` (the same command with 1 worker by default).\n"
    "DIR/results.csv and DIR/results.h5 are written when the script succeeds\n"
    "(atomically; nothing on failure); finished points are saved in DIR/points,\n"
    "so re-running the same command resumes.  A failed point is reported and\n"
    "skipped: the results hold the others and the exit code is the failed\n"
    "points' (78; 65 a damaged trace prompt; 70 an internal error).\n"
    "\n"
    "  -j, --jobs N       worker threads per process (default: every CPU)\n"
    "  -o, --output DIR   results directory (default: results/<script name>)\n"
    "      --no-resume    recompute points already saved in DIR/points\n"
    "  -q, --quiet        no progress lines on stderr (errors still print)\n"
    "  -h, --help         this help\n"
    "Every other option is `flashspec run`'s (--unsafe, --max-instructions,\n"
    "--max-memory-mb, --max-seconds, --trace-cache-mb, --verify-trace, --strict,\n"
    "--plugin, --resume=force, --arg, --timeline...): see flashspec run --help.\n"
    "\n"
    "exit codes: 0 ok, 64 usage, 65 bad trace data, 66 missing input,\n"
    "            70 internal error, 73 cannot create output, 78 bad configuration,\n"
    "            130 interrupted (re-run the same command to resume)\n";

static const char usage_calibrate[] =
    "usage: flashspec calibrate SPEC.lua [-j N] [-o DIR] [-q] [--arg KEY=VALUE ...]\n"
    "\n"
    "Runs a calibration spec: a script that calls flashspec.calibrate{...} with a\n"
    "reference CSV of device measurements (the format analysis/fidelity.py reads),\n"
    "the parameters to fit ({start, lo, hi} each) and a function that builds the\n"
    "points for given parameter values.  GSL's nonlinear least squares fits the\n"
    "parameters to the relative errors; when the spec succeeds, DIR receives\n"
    "NAME.md (values with standard errors, per-row residuals, leave-one-out\n"
    "errors, AIC/BIC), NAME.csv and, with profile = {...}, the fitted device\n"
    "profile PROFILE.lua (base = the named profile, the fitted keys over it).\n"
    "Nothing is written when a row matches no point, a metric is unknown, a\n"
    "start value violates its bounds or the fit does not converge.\n"
    "Other options as `flashspec run` (see flashspec run --help); -j defaults\n"
    "to every CPU.\n"
    "\n"
    "exit codes: 0 ok, 65 bad reference data or no convergence, 66 missing input,\n"
    "            70 internal error, 73 cannot write DIR, 78 bad spec\n";

static const char usage_tune[] =
    "usage: flashspec tune SCRIPT.lua [-j N] [-o DIR] [-q] [--arg KEY=VALUE ...]\n"
    "\n"
    "Runs a tuning study: a script that calls flashspec.tune{...} with a sweep, a\n"
    "policy and the knobs to search (knob = { lo, hi } or { values = { ... } }; a\n"
    "Lua policy's declared params included).  Every point is tuned on its own:\n"
    "the first (1 - holdout) of its prompts choose the knobs (GSL's Nelder-Mead\n"
    "simplex over continuous knobs, every combination of discrete ones, at most\n"
    "max_evals evaluations), and the row reports the chosen knobs on the held-out\n"
    "prompts, with tune_evals and tune_train.  DIR receives results.{csv,h5} as\n"
    "for a sweep.  An objective that is NaN everywhere or never moves is an\n"
    "error, not a tuned result.\n"
    "Other options as `flashspec run` (see flashspec run --help); -j defaults\n"
    "to every CPU.\n"
    "\n"
    "exit codes: 0 ok, 65 bad trace data, 66 missing input, 70 internal error,\n"
    "            73 cannot write DIR, 78 bad script or search space, 130 interrupted\n";

static const char usage_rerun[] =
    "usage: flashspec rerun DIR [-o OUT] [-j N] [-q] [--plugin FILE.so ...]\n"
    "\n"
    "Runs a results directory again from what it recorded rather than from\n"
    "today's files: DIR/script.lua (the script's bytes as the run read them),\n"
    "its --arg values and limits, and the profiles DIR/run.json holds in place\n"
    "of today's configs/ (every device and model file the script loaded, as it\n"
    "resolved then); relative trace paths resolve from the recorded script's\n"
    "directory.  With the same build the results are the same bytes: the last\n"
    "line says whether OUT/results.csv and results.h5 equal DIR's.  Where a\n"
    "profile file differs today from what run.json recorded, a warning line\n"
    "names the keys with both values (the rerun uses the recorded ones).\n"
    "\n"
    "  -o, --output OUT   results directory (default DIR/rerun)\n"
    "  -j, --jobs N       worker threads (default: every CPU)\n"
    "      --plugin FILE.so  load a native policy plug-in the run used (repeatable)\n"
    "  -q, --quiet        no progress or warning lines (errors still print)\n"
    "  -h, --help         this help\n"
    "\n"
    "exit codes: as flashspec run; 65 a run.json that is not JSON or lacks what a\n"
    "            rerun needs (an older flashspec recorded no profiles), 66 no\n"
    "            DIR/run.json or DIR/script.lua\n";

static const char usage_demo[] =
    "usage: flashspec demo [-o DIR] [-v]\n"
    "\n"
    "Runs configs/default.lua: Qwen3-8B on the OnePlus 12 profile, fully\n"
    "flash-backed, on the code workload with the EAGLE-3 draft, and prints\n"
    "the policies the script names with their speedups over autoregressive\n"
    "decoding, the measured figures it quotes and where each cycle's time goes.\n"
    "\n"
    "  -o, --output DIR   also write DIR/results.{csv,h5}\n"
    "  -v, --verbose      progress lines on stderr\n"
    "  -h, --help         this help\n";

/* 0 = run, 1 = demo, 2 = sweep, 3 = calibrate, 4 = tune (3 and 4: sweep
 * defaults, their own help) */
/* What the options of run/sweep/calibrate/tune/demo say (script_cmd). */
typedef struct cli_opts {
    const char *verb; /* argv[0] */
    int kind, demo;
    fs_script_opts o;
    fs_timeline_opts tl;
    int tl_index_given;
    const char *args[FS_MAX_ARGS];
    const char *plugin_paths[FS_MAX_PLUGINS];
    int n_plugin_paths;
} cli_opts;

static const struct option script_opts[] = {
    {"jobs", required_argument, NULL, 'j'},
    {"no-resume", no_argument, NULL, 'R'},
    {"resume", required_argument, NULL, 'F'},
    {"output", required_argument, NULL, 'o'},
    {"unsafe", no_argument, NULL, 'u'},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"max-instructions", required_argument, NULL, 'I'},
    {"max-memory-mb", required_argument, NULL, 'M'},
    {"max-seconds", required_argument, NULL, 'S'},
    {"trace-cache-mb", required_argument, NULL, 'C'},
    {"verify-trace", no_argument, NULL, 'V'},
    {"strict", no_argument, NULL, 'X'},
    {"timeline", required_argument, NULL, 'T'},
    {"timeline-point", required_argument, NULL, 'P'},
    {"timeline-prompt", required_argument, NULL, 'p'},
    {"arg", required_argument, NULL, 'A'},
    {"plugin", required_argument, NULL, 'L'},
    {NULL, 0, NULL, 0},
};

/* -j N.  Returns -1 (accepted) or a status. */
static int opt_jobs(cli_opts *c, const char *arg)
{
    char *end;
    long j = strtol(arg, &end, 10);
    if (c->demo || *end || end == arg || j < 1 || j > 1024) {
        fprintf(stderr, "flashspec: %s: -j needs a number of workers in 1..1024 (see --help)\n",
                c->verb);
        return SIM_USAGE;
    }
    c->o.jobs = (int)j;
    return -1;
}

/* --max-instructions / --max-memory-mb / --trace-cache-mb (opt 'I', 'M', 'C'). */
static int opt_count(cli_opts *c, int opt, const char *arg)
{
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    long long cap = opt == 'I' ? (long long)1e15 : (long long)1 << 30;
    if (c->demo || errno || *end || end == arg || v < 1 || v > cap) {
        fprintf(stderr, "flashspec: %s: --%s needs a positive integer (see --help)\n", c->verb,
                opt == 'I'   ? "max-instructions"
                : opt == 'M' ? "max-memory-mb"
                             : "trace-cache-mb");
        return SIM_USAGE;
    }
    if (opt == 'I')
        c->o.max_instructions = v;
    else if (opt == 'M')
        c->o.max_memory_mb = v;
    else
        c->o.trace_cache_mb = v;
    return -1;
}

static int opt_seconds(cli_opts *c, const char *arg)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (c->demo || errno || *end || end == arg || !(v > 0 && v <= 1e7)) {
        fprintf(stderr,
                "flashspec: %s: --max-seconds needs a number of seconds in (0, 1e7] (see "
                "--help)\n",
                c->verb);
        return SIM_USAGE;
    }
    c->o.max_seconds = v;
    return -1;
}

/* --timeline-point / --timeline-prompt (opt 'P', 'p'). */
static int opt_timeline_index(cli_opts *c, int opt, const char *arg)
{
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (c->demo || errno || *end || end == arg || v < 0 || v > INT32_MAX) {
        fprintf(stderr, "flashspec: %s: --%s needs an index >= 0 (see --help)\n", c->verb,
                opt == 'P' ? "timeline-point" : "timeline-prompt");
        return SIM_USAGE;
    }
    if (opt == 'P')
        c->tl.point = v;
    else
        c->tl.prompt = (int32_t)v;
    c->tl_index_given = 1;
    return -1;
}

/* --arg KEY=VALUE: each KEY once. */
static int opt_arg(cli_opts *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        fprintf(stderr, "flashspec: %s: --arg needs KEY=VALUE, got '%s' (see --help)\n", c->verb,
                arg);
        return SIM_USAGE;
    }
    for (int i = 0; i < c->o.n_args; i++) {
        if (strncmp(c->args[i], arg, (size_t)(eq - arg) + 1) == 0) {
            fprintf(stderr, "flashspec: %s: --arg %.*s given twice\n", c->verb, (int)(eq - arg),
                    arg);
            return SIM_USAGE;
        }
    }
    if (c->o.n_args == FS_MAX_ARGS) {
        fprintf(stderr, "flashspec: %s: more than %d --arg options\n", c->verb, FS_MAX_ARGS);
        return SIM_USAGE;
    }
    c->args[c->o.n_args++] = arg;
    c->o.args = c->args;
    return -1;
}

static int opt_resume(cli_opts *c, const char *arg)
{
    if (strcmp(arg, "force") == 0) {
        c->o.resume_any_build = 1;
    } else if (strcmp(arg, "build") != 0) {
        fprintf(stderr,
                "flashspec: %s: --resume takes 'build' (the default: only points this build "
                "saved) or 'force' (points any build saved), not '%s'\n",
                c->verb, arg);
        return SIM_USAGE;
    }
    return -1;
}

/* One option of the script verbs.  Returns -1 to go on, or the status
 * (SIM_OK after --help). */
static int script_opt(cli_opts *c, int opt, const char *arg, const char *given)
{
    /* options the demo refuses (it runs the default experiment as shipped) */
    int not_demo = strchr("TAVXRLFu", opt) != NULL;
    if (c->demo && not_demo) opt = '?';
    switch (opt) {
    case 'j':
        return opt_jobs(c, arg);
    case 'I':
    case 'M':
    case 'C':
        return opt_count(c, opt, arg);
    case 'S':
        return opt_seconds(c, arg);
    case 'P':
    case 'p':
        return opt_timeline_index(c, opt, arg);
    case 'A':
        return opt_arg(c, arg);
    case 'F':
        return opt_resume(c, arg);
    case 'T':
        if (!*arg) {
            fprintf(stderr, "flashspec: %s: --timeline needs a file name (see --help)\n", c->verb);
            return SIM_USAGE;
        }
        c->tl.path = arg;
        return -1;
    case 'L':
        if (c->n_plugin_paths == FS_MAX_PLUGINS) {
            fprintf(stderr, "flashspec: %s: more than %d --plugin options\n", c->verb,
                    FS_MAX_PLUGINS);
            return SIM_USAGE;
        }
        c->plugin_paths[c->n_plugin_paths++] = arg;
        return -1;
    case 'V':
        c->o.verify_trace = 1;
        return -1;
    case 'X':
        c->o.strict = 1;
        return -1;
    case 'R':
        c->o.no_resume = 1;
        return -1;
    case 'u':
        c->o.unsafe = 1;
        return -1;
    case 'o':
        c->o.out_dir = arg;
        return -1;
    case 'q':
        c->o.quiet = 1;
        return -1;
    case 'v':
        if (!c->demo) break;
        c->o.quiet = 0;
        return -1;
    case 'h':
        fputs(c->demo        ? usage_demo
              : c->kind == 2 ? usage_sweep
              : c->kind == 3 ? usage_calibrate
              : c->kind == 4 ? usage_tune
                             : usage_run,
              stdout);
        return SIM_OK;
    default:
        break;
    }
    fprintf(stderr, "flashspec: %s: unknown or incomplete option '%s' (see --help)\n", c->verb,
            given);
    return SIM_USAGE;
}

/* After the options: plug-ins loaded (by the command line only, before the
 * script, which cannot load code, runs) and option combinations checked.
 * Returns -1 or a status. */
static int script_opts_finish(cli_opts *c, fs_plugin *plugins)
{
    for (int i = 0; i < c->n_plugin_paths; i++) {
        char perr[1024];
        int prc = fs_plugin_load(c->plugin_paths[i], &plugins[i], plugins, i, perr, sizeof perr);
        if (prc) {
            fprintf(stderr, "flashspec: %s\n", perr);
            return prc;
        }
    }
    c->o.plugins = plugins;
    c->o.n_plugins = c->n_plugin_paths;
    if (c->o.no_resume && c->o.resume_any_build) {
        fprintf(stderr, "flashspec: %s: --no-resume and --resume=force contradict each other\n",
                c->verb);
        return SIM_USAGE;
    }
    if (c->tl_index_given && !c->tl.path) {
        fprintf(stderr,
                "flashspec: %s: --timeline-point and --timeline-prompt need --timeline "
                "FILE.json (see --help)\n",
                c->verb);
        return SIM_USAGE;
    }
    return -1;
}

/* The script (the demo's: configs/default.lua) and the default output
 * directory results/<script name>.  Returns -1 or a status. */
static int script_and_output(cli_opts *c, int argc, char **argv, char *script, size_t sn,
                             char *outbuf, size_t on)
{
    if (c->demo) {
        if (optind != argc) {
            fprintf(stderr, "flashspec: demo takes no arguments (see --help)\n");
            return SIM_USAGE;
        }
        snprintf(script, sn, "%s/default.lua", fs_config_dir());
        return -1;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "flashspec: %s needs exactly one SCRIPT.lua (see --help)\n", c->verb);
        return SIM_USAGE;
    }
    snprintf(script, sn, "%s", argv[optind]);
    if (!c->o.out_dir) {
        const char *base = strrchr(script, '/');
        base = base ? base + 1 : script;
        size_t n = strlen(base);
        if (n > 4 && strcmp(base + n - 4, ".lua") == 0) n -= 4;
        snprintf(outbuf, on, "results/%.*s", (int)n, base);
        c->o.out_dir = outbuf;
    }
    return -1;
}

/* run, sweep, calibrate, tune and demo (kind 0, 2, 3, 4, 1): options, then
 * the script. */
static int script_cmd(int argc, char **argv, int kind)
{
    /* the command line as given (getopt may reorder argv), for DIR/run.json */
    static const char *cmdline[258];
    int n_cmd = 0;
    cmdline[n_cmd++] = "flashspec";
    for (int i = 0; i < argc && n_cmd < 258; i++)
        cmdline[n_cmd++] = argv[i];
    static cli_opts c;
    static fs_plugin plugins[FS_MAX_PLUGINS];
    memset(&c, 0, sizeof c);
    c.verb = argv[0];
    c.kind = kind;
    c.demo = kind == 1;
    c.o.quiet = c.demo; /* the demo's table says it all */
    c.o.jobs = kind >= 2 ? sim_sweep_default_workers() : 1;
    int opt, rc = -1;
    optind = 1;
    opterr = 0;
    while (rc < 0 && (opt = getopt_long(argc, argv, "j:o:qvh", script_opts, NULL)) != -1)
        rc = script_opt(&c, opt, optarg, argv[optind - 1]);
    if (rc < 0) rc = script_opts_finish(&c, plugins);
    char script[4096], outbuf[4096];
    if (rc < 0)
        rc = script_and_output(&c, argc, argv, script, sizeof script, outbuf, sizeof outbuf);
    if (rc >= 0) return rc;
    c.o.script = script;
    c.o.argv = cmdline;
    c.o.argc = n_cmd;
    char err[1024] = "";
    rc = fs_script_run_timeline(&c.o, &c.tl, err, sizeof err);
    if (rc != SIM_OK && sim_mpi_rank() == 0) fprintf(stderr, "flashspec: %s\n", err);
    return rc;
}

/* After a rerun: whether OUT's results files equal DIR's, one line each. */
static void rerun_compare(const char *dir, const char *out)
{
    const char *names[] = {"results.csv", "results.h5"};
    for (int i = 0; i < 2; i++) {
        char a[4200], b[4200];
        snprintf(a, sizeof a, "%s/%s", dir, names[i]);
        snprintf(b, sizeof b, "%s/%s", out, names[i]);
        long line = 0;
        int same = sim_out_same_file(a, b, &line);
        if (same == 1)
            fprintf(stderr, "flashspec: rerun: %s is byte-identical to %s\n", b, a);
        else if (same == 0 && i == 0)
            fprintf(stderr, "flashspec: rerun: %s differs from %s (first at line %ld)\n", b, a,
                    line);
        else
            fprintf(stderr, "flashspec: rerun: %s %s %s\n", b,
                    same == 0 ? "differs from" : "cannot be compared with", a);
    }
}

/* The options of rerun.  Returns -1 to go on, or a status. */
static int rerun_opts(int argc, char **argv, fs_script_opts *o, const char **dir,
                      const char **plugin_paths, int *n_plugins)
{
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(w, "-h") || !strcmp(w, "--help")) {
            fputs(usage_rerun, stdout);
            return SIM_OK;
        } else if (!strcmp(w, "-q") || !strcmp(w, "--quiet")) {
            o->quiet = 1;
        } else if ((!strcmp(w, "-o") || !strcmp(w, "--output")) && v) {
            o->out_dir = v, i++;
        } else if ((!strcmp(w, "-j") || !strcmp(w, "--jobs")) && v) {
            char *end;
            long j = strtol(v, &end, 10);
            if (*end || end == v || j < 1 || j > 1024) {
                fprintf(stderr, "flashspec: rerun: -j needs a number of workers in 1..1024\n");
                return SIM_USAGE;
            }
            o->jobs = (int)j, i++;
        } else if (!strcmp(w, "--plugin") && v && *n_plugins < FS_MAX_PLUGINS) {
            plugin_paths[(*n_plugins)++] = v, i++;
        } else if (w[0] != '-' && !*dir) {
            *dir = w;
        } else {
            fprintf(stderr, "flashspec: rerun: unexpected argument '%s' (see --help)\n", w);
            return SIM_USAGE;
        }
    }
    if (!*dir) {
        fprintf(stderr, "flashspec: rerun needs a results directory DIR (see --help)\n");
        return SIM_USAGE;
    }
    return -1;
}

/* flashspec rerun DIR: DIR/script.lua with DIR/run.json's arguments, limits
 * and profiles (sim/out/sim_rerun_read.h), then OUT's results compared with DIR's. */
static int rerun_cmd(int argc, char **argv)
{
    static sim_rerun_plan plan;
    static fs_plugin plugins[FS_MAX_PLUGINS];
    static const char *cmdline[258];
    const char *plugin_paths[FS_MAX_PLUGINS];
    int n_plugins = 0, n_cmd = 0;
    const char *dir = NULL;
    fs_script_opts o = {0};
    o.jobs = sim_sweep_default_workers();
    int rc = rerun_opts(argc, argv, &o, &dir, plugin_paths, &n_plugins);
    if (rc >= 0) return rc;
    char err[1024] = "", outbuf[4200];
    for (int i = 0; i < n_plugins; i++) {
        rc = fs_plugin_load(plugin_paths[i], &plugins[i], plugins, i, err, sizeof err);
        if (rc) {
            fprintf(stderr, "flashspec: %s\n", err);
            return rc;
        }
    }
    rc = sim_rerun_plan_read(dir, &plan, err, sizeof err);
    if (rc != SIM_OK) {
        fprintf(stderr, "flashspec: rerun: %s\n", err);
        return rc;
    }
    if (!o.out_dir) {
        snprintf(outbuf, sizeof outbuf, "%s/rerun", dir);
        o.out_dir = outbuf;
    }
    cmdline[n_cmd++] = "flashspec";
    for (int i = 0; i < argc && n_cmd < 258; i++)
        cmdline[n_cmd++] = argv[i];
    o.script = plan.script;
    o.script_dir = plan.script_dir;
    o.rerun_record = plan.record;
    o.args = plan.args;
    o.n_args = plan.n_args;
    o.unsafe = plan.unsafe;
    o.strict = plan.strict;
    o.max_instructions = plan.max_instructions;
    o.max_memory_mb = plan.max_memory_mb;
    o.max_seconds = plan.max_seconds;
    o.trace_cache_mb = plan.trace_cache_mb;
    o.no_resume = 1; /* a rerun computes every point */
    o.plugins = plugins;
    o.n_plugins = n_plugins;
    o.argv = cmdline;
    o.argc = n_cmd;
    rc = fs_script_run_timeline(&o, NULL, err, sizeof err);
    if (rc != SIM_OK && sim_mpi_rank() == 0) fprintf(stderr, "flashspec: %s\n", err);
    if (rc == SIM_OK && sim_mpi_rank() == 0) rerun_compare(dir, o.out_dir);
    return rc;
}

static int rerun_cmd_mpi(int argc, char **argv)
{
    sim_mpi_init(&argc, &argv);
    int rc = rerun_cmd(argc, argv);
    fflush(stdout);
    fflush(stderr);
    sim_mpi_finalize();
    return rc;
}

/* run/sweep/demo under an MPI launcher: MPI lives for the whole command. */
static int script_cmd_mpi(int argc, char **argv, int kind)
{
    sim_mpi_init(&argc, &argv);
    int rc = script_cmd(argc, argv, kind);
    fflush(stdout);
    fflush(stderr);
    sim_mpi_finalize();
    return rc;
}

/* stderr (and the listing verbs' stdout) through a filter: messages quote
 * scripts, file names and profile values written by others, and listings
 * print the names and descriptions of policy files and plug-ins, and a raw
 * ESC or BEL byte in them would reach the terminal.  Control characters
 * other than newline, tab and carriage return, DEL and the C1 controls
 * U+0080..U+009F (UTF-8 C2 80..C2 9F, which some terminals obey) are written
 * as \xHH; everything else passes unchanged. */
typedef struct escaped_stream {
    int fd;
    int lead; /* the last write ended in a C2 byte, held back */
} escaped_stream;

static ssize_t escaped_write(void *cookie, const char *buf, size_t n)
{
    escaped_stream *es = cookie;
    char out[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (k + 16 > sizeof out) {
            if (write(es->fd, out, k) < 0) return -1;
            k = 0;
        }
        if (es->lead) { /* the byte before was C2 */
            es->lead = 0;
            if (c >= 0x80 && c <= 0x9f) {
                k += (size_t)snprintf(out + k, 9, "\\xc2\\x%02x", c);
                continue;
            }
            out[k++] = (char)0xc2;
        }
        if (c == 0xc2)
            es->lead = 1; /* decided by the next byte */
        else if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f)
            k += (size_t)snprintf(out + k, 5, "\\x%02x", c);
        else
            out[k++] = (char)c;
    }
    if (k && write(es->fd, out, k) < 0) return -1;
    return (ssize_t)n;
}

static int escaped_close(void *cookie)
{
    escaped_stream *es = cookie;
    if (es->lead && write(es->fd, "\xc2", 1) < 0) return -1;
    es->lead = 0;
    return 0;
}

/* *stream (stderr or stdout) replaced by the filter on fd. */
static void escape_stream(FILE **stream, int fd, escaped_stream *es)
{
    es->fd = fd;
    es->lead = 0;
    cookie_io_functions_t io = {.write = escaped_write, .close = escaped_close};
    FILE *f = fopencookie(es, "w", io);
    if (!f) return; /* the plain stream still works */
    if (fd == STDERR_FILENO) setvbuf(f, NULL, _IONBF, 0);
    *stream = f;
}

/* The command argv[1] names, run; its status. */
static int dispatch(int argc, char **argv, escaped_stream *es_out)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return SIM_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage_main, stdout);
        return SIM_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("flashspec %s\n", FS_VERSION);
        return SIM_OK;
    }
    if (!strcmp(cmd, "run")) return script_cmd_mpi(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "sweep")) return script_cmd_mpi(argc - 1, argv + 1, 2);
    /* a tuning study is a sweep script that calls flashspec.tune */
    if (!strcmp(cmd, "tune")) return script_cmd_mpi(argc - 1, argv + 1, 4);
    if (!strcmp(cmd, "demo")) return script_cmd_mpi(argc - 1, argv + 1, 1);
    if (!strcmp(cmd, "calibrate")) return script_cmd_mpi(argc - 1, argv + 1, 3);
    if (!strcmp(cmd, "rerun")) return rerun_cmd_mpi(argc - 1, argv + 1);
    /* the listings print what files written by others say about themselves */
    if (!strcmp(cmd, "trace") || !strcmp(cmd, "profile") || !strcmp(cmd, "profiles") ||
        !strcmp(cmd, "policies") || !strcmp(cmd, "policy"))
        escape_stream(&stdout, STDOUT_FILENO, es_out);
    if (!strcmp(cmd, "trace")) return cli_trace_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "profile")) return cli_profile_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "profiles")) return cli_profiles_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "columns")) return cli_columns_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "policies") || !strcmp(cmd, "policy"))
        return cli_policy_main(argc - 1, argv + 1);
    fprintf(stderr, "flashspec: unknown command '%s' (see flashspec --help)\n", cmd);
    return SIM_USAGE;
}

/* Every command returns a SIM_* status; here, and only here, it becomes the
 * exit code (sim_status_exit). */
int main(int argc, char **argv)
{
    static escaped_stream es_err, es_out;
    escape_stream(&stderr, STDERR_FILENO, &es_err);
    /* Before any other HDF5 call: no library clean-up at exit, which can loop
     * after HDF5 has read a damaged file. */
    H5dont_atexit();
    /* a file size limit (ulimit -f) must fail the write (EFBIG: exit 73, the
     * temporaries removed), not kill the process mid-file */
    signal(SIGXFSZ, SIG_IGN);
    return sim_status_exit(dispatch(argc, argv, &es_out));
}
