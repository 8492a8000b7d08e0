/*
 * main.c -- the flashspec command line.
 *
 *   flashspec run SCRIPT.lua [-o DIR] [--unsafe] [-q]
 *   flashspec demo [-o DIR] [-q]
 *   flashspec trace info|check|stats|synth ...
 *   flashspec --help | --version
 *
 * Exit codes follow <sysexits.h>: 0 ok, 64 usage, 65 bad trace data, 66 missing
 * input, 70 internal error, 73 cannot create output, 78 bad configuration.
 * Errors are one line on stderr starting with "flashspec: ".
 */
#include <getopt.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cmd_trace.h"
#include "sim/lua/api.h"

static const char usage_main[] =
    "usage: flashspec <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCRIPT.lua [-o DIR]   run an experiment script, write DIR/results.{csv,h5}\n"
    "  demo [-o DIR]             run the default experiment (configs/default.lua)\n"
    "  trace info|check|stats|synth\n"
    "                            inspect, validate, summarise or generate traces\n"
    "\n"
    "options:\n"
    "  -h, --help                show help (also after each command)\n"
    "  -V, --version             print the version\n"
    "\n"
    "exit codes: 0 ok, 64 usage, 65 bad trace data, 66 missing input,\n"
    "            70 internal error, 73 cannot create output, 78 bad configuration\n";

static const char usage_run[] =
    "usage: flashspec run SCRIPT.lua [-o DIR] [--unsafe] [-q]\n"
    "\n"
    "Runs an experiment script (Lua 5.4, sandboxed).  Every point it runs with\n"
    "flashspec.run or flashspec.sweep is written, when the script succeeds, to\n"
    "DIR/results.csv and DIR/results.h5 (atomically; nothing on failure).\n"
    "\n"
    "  -o, --output DIR   results directory (default: results/<script name>)\n"
    "      --unsafe       lift the sandbox (io, os, require, debug) and the\n"
    "                     instruction limit (1e9 Lua VM instructions)\n"
    "  -q, --quiet        no progress lines on stderr\n"
    "  -h, --help         this help\n";

static const char usage_demo[] =
    "usage: flashspec demo [-o DIR] [-v]\n"
    "\n"
    "Runs configs/default.lua: Qwen3-8B on the OnePlus 12 profile, fully\n"
    "flash-backed, on the bundled trace, and prints Flash-AR vs Chain-SD.\n"
    "\n"
    "  -o, --output DIR   also write DIR/results.{csv,h5}\n"
    "  -v, --verbose      progress lines on stderr\n"
    "  -h, --help         this help\n";

static int script_cmd(int argc, char **argv, int demo)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"unsafe", no_argument, NULL, 'u'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    fs_script_opts o = {0};
    o.quiet = demo; /* the demo's table says it all */
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:qvh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.out_dir = optarg;
            break;
        case 'u':
            if (demo) goto bad;
            o.unsafe = 1;
            break;
        case 'q':
            o.quiet = 1;
            break;
        case 'v':
            if (!demo) goto bad;
            o.quiet = 0;
            break;
        case 'h':
            fputs(demo ? usage_demo : usage_run, stdout);
            return FS_EXIT_OK;
        default:
        bad:
            fprintf(stderr, "flashspec: %s: unknown or incomplete option '%s' (see --help)\n",
                    argv[0], argv[optind - 1]);
            return FS_EXIT_USAGE;
        }
    }
    char script[4096], outbuf[4096];
    if (demo) {
        if (optind != argc) {
            fprintf(stderr, "flashspec: demo takes no arguments (see --help)\n");
            return FS_EXIT_USAGE;
        }
        const char *dir = getenv("FLASHSPEC_CONFIG_DIR");
        snprintf(script, sizeof script, "%s/default.lua", dir && *dir ? dir : FS_CONFIG_DIR);
    } else {
        if (optind != argc - 1) {
            fprintf(stderr, "flashspec: run needs exactly one SCRIPT.lua (see --help)\n");
            return FS_EXIT_USAGE;
        }
        snprintf(script, sizeof script, "%s", argv[optind]);
        if (!o.out_dir) {
            const char *base = strrchr(script, '/');
            base = base ? base + 1 : script;
            size_t n = strlen(base);
            if (n > 4 && strcmp(base + n - 4, ".lua") == 0) n -= 4;
            snprintf(outbuf, sizeof outbuf, "results/%.*s", (int)n, base);
            o.out_dir = outbuf;
        }
    }
    o.script = script;
    char err[1024] = "";
    int rc = fs_script_run(&o, err, sizeof err);
    if (rc != FS_EXIT_OK) fprintf(stderr, "flashspec: %s\n", err);
    return rc;
}

int main(int argc, char **argv)
{
    /* Before any other HDF5 call: no library clean-up at exit, which can loop
     * after HDF5 has read a damaged file. */
    H5dont_atexit();
    if (argc < 2) {
        fputs(usage_main, stderr);
        return FS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage_main, stdout);
        return FS_EXIT_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("flashspec %s\n", FS_VERSION);
        return FS_EXIT_OK;
    }
    if (!strcmp(cmd, "run")) return script_cmd(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "demo")) return script_cmd(argc - 1, argv + 1, 1);
    if (!strcmp(cmd, "trace")) return cli_trace_main(argc - 1, argv + 1);
    fprintf(stderr, "flashspec: unknown command '%s' (see flashspec --help)\n", cmd);
    return FS_EXIT_USAGE;
}
