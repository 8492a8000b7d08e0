/*
 * fuzz_script.c -- fuzz target: any bytes as a Lua experiment script.
 *
 * The input is written to one temporary file (created once per process,
 * rewritten for every input) and run through fs_script_run -- the path of
 * `flashspec run SCRIPT.lua`: the FS_SANDBOX_SCRIPT state, the flashspec API
 * (profiles, traces, policies, run, sweep), result collection and, when asked,
 * the atomic result writers.  Limits are small so that one input stays cheap:
 * at most FZ_MAX_STEPS Lua VM instructions and FZ_MAX_MEM_MB MiB of Lua heap.
 * Seeds (tests/fuzz/script/corpus) replay the bundled small trace
 * (traces/data/synth-small.h5, found through the project directory) with a few
 * new tokens per point.
 *
 * Script arguments.  When the input's first line starts with "--@" (a Lua
 * comment, so the input stays a script), its words set what `flashspec run`
 * takes from the command line: "j=N" worker threads (1..2), "out" writes
 * results to a fresh temporary directory (removed afterwards), "resume" runs
 * the script a second time over the same directory (the resume path),
 * "steps=N" and "mem=N" lower the limits further, and every other KEY=VALUE
 * word is a script argument (--arg KEY=VALUE: flashspec.args.KEY = "VALUE"),
 * at most FZ_MAX_ARGS, passed only as the CLI would (non-empty, unique keys).
 * Other words are ignored; nothing can lift the sandbox or the caps.
 *
 * Contract under test: every input ends in SIM_OK or one of the documented
 * exit codes (64, 65, 66, 70, 73, 78) and, when not OK, one non-empty error
 * line -- never a crash, a leak, a hang or a Lua panic.  Built as
 * fuzz_trace.c is (tests/fuzz/meson.build).
 */
#include "sim/lua/api.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FZ_MAX_STEPS 2000000LL /* Lua VM instructions per run */
#define FZ_MAX_MEM_MB 64       /* Lua heap per run */
#define FZ_MAX_ARGS 16         /* script arguments per input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond) abort();
}

static char tmp_dir[4096], script_path[4200];

/* Removes dir and everything below it (results, points store); best effort. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        unlink(dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static void remove_tmp(void)
{
    if (tmp_dir[0]) remove_tree(tmp_dir);
}

static const char *write_input(const uint8_t *data, size_t size)
{
    if (!tmp_dir[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp_dir, sizeof tmp_dir, "%s/fuzz-script-XXXXXX", dir && *dir ? dir : "/tmp");
        require(mkdtemp(tmp_dir) != NULL);
        snprintf(script_path, sizeof script_path, "%s/script.lua", tmp_dir);
        atexit(remove_tmp);
    }
    FILE *f = fopen(script_path, "wb");
    require(f != NULL);
    require(fwrite(data, 1, size, f) == size || size == 0);
    require(fclose(f) == 0);
    return script_path;
}

typedef struct fz_args {
    int jobs, out, resume;
    long long steps, mem_mb;
    char line[256];                 /* the "--@" line, cut into words */
    const char *args[FZ_MAX_ARGS];  /* script arguments, into line */
    int n_args;
} fz_args;

/* Adds KEY=VALUE as a script argument unless the CLI would refuse it. */
static void add_arg(fz_args *a, const char *w)
{
    const char *eq = strchr(w, '=');
    if (!eq || eq == w || a->n_args == FZ_MAX_ARGS) return;
    size_t k = (size_t)(eq - w);
    for (int i = 0; i < a->n_args; i++)
        if (!strncmp(a->args[i], w, k + 1)) return; /* duplicate key */
    a->args[a->n_args++] = w;
}

/* Parses the optional "--@ ..." first line. */
static void parse_args(const uint8_t *data, size_t size, fz_args *a)
{
    a->jobs = 1;
    a->out = a->resume = 0;
    a->steps = FZ_MAX_STEPS;
    a->mem_mb = FZ_MAX_MEM_MB;
    a->n_args = 0;
    a->line[0] = '\0';
    if (size < 3 || memcmp(data, "--@", 3) != 0) return;
    size_t n = 0;
    for (size_t i = 3; i < size && data[i] != '\n' && data[i] != '\0' && n + 1 < sizeof a->line;
         i++)
        a->line[n++] = (char)data[i];
    a->line[n] = '\0';
    char *save = NULL;
    for (char *w = strtok_r(a->line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
        if (!strncmp(w, "j=", 2)) {
            long v = strtol(w + 2, NULL, 10);
            a->jobs = v >= 2 ? 2 : 1;
        } else if (!strcmp(w, "out")) {
            a->out = 1;
        } else if (!strcmp(w, "resume")) {
            a->out = a->resume = 1;
        } else if (!strncmp(w, "steps=", 6)) {
            long long v = strtoll(w + 6, NULL, 10);
            if (v >= 1 && v < a->steps) a->steps = v;
        } else if (!strncmp(w, "mem=", 4)) {
            long long v = strtoll(w + 4, NULL, 10);
            if (v >= 1 && v < a->mem_mb) a->mem_mb = v;
        } else {
            add_arg(a, w);
        }
    }
}

static void check(int code, const char *err)
{
    if (code == SIM_OK) return;
    int x = sim_status_exit(code);
    require(x == 64 || x == 65 || x == 66 || x == 70 || x == 73 || x == 78);
    require(err[0] != '\0');
    require(strchr(err, '\n') == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_args a;
    parse_args(data, size, &a);
    const char *path = write_input(data, size);
    char out_dir[4300];
    snprintf(out_dir, sizeof out_dir, "%s/out", tmp_dir);
    fs_script_opts o = {.script = path,
                        .out_dir = a.out ? out_dir : NULL,
                        .quiet = 1,
                        .jobs = a.jobs,
                        .max_instructions = a.steps,
                        .max_memory_mb = a.mem_mb,
                        .args = a.args,
                        .n_args = a.n_args};
    for (int run = 0; run < 1 + a.resume; run++) {
        char err[1024];
        err[0] = '\0';
        check(fs_script_run(&o, err, sizeof err), err);
    }
    if (a.out) remove_tree(out_dir);
    return 0;
}
