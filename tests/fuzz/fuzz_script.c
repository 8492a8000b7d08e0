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
 * comment, so the input stays a script), it sets the options fs_script_run
 * takes from the command line: "j=N" worker threads (1..2), "out" writes
 * results to a fresh temporary directory (removed afterwards, as a real run
 * would leave it), "resume" runs the script a second time over the same
 * directory (the resume path), "steps=N" and "mem=N" lower the limits further.
 * Unknown words are ignored; nothing can lift the sandbox or the caps.
 *
 * Contract under test: every input ends in FS_EXIT_OK or one of the documented
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
} fz_args;

/* Parses the optional "--@ ..." first line. */
static void parse_args(const uint8_t *data, size_t size, fz_args *a)
{
    a->jobs = 1;
    a->out = a->resume = 0;
    a->steps = FZ_MAX_STEPS;
    a->mem_mb = FZ_MAX_MEM_MB;
    if (size < 3 || memcmp(data, "--@", 3) != 0) return;
    char line[256];
    size_t n = 0;
    for (size_t i = 3; i < size && data[i] != '\n' && n + 1 < sizeof line; i++)
        line[n++] = (char)data[i];
    line[n] = '\0';
    for (char *w = strtok(line, " \t\r"); w; w = strtok(NULL, " \t\r")) {
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
        }
    }
}

static void check(int code, const char *err)
{
    if (code == FS_EXIT_OK) return;
    require(code == FS_EXIT_USAGE || code == FS_EXIT_DATA || code == FS_EXIT_NOINPUT ||
            code == FS_EXIT_SOFTWARE || code == FS_EXIT_CANTCREAT || code == FS_EXIT_CONFIG);
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
                        .max_memory_mb = a.mem_mb};
    for (int run = 0; run < 1 + a.resume; run++) {
        char err[1024];
        err[0] = '\0';
        check(fs_script_run(&o, err, sizeof err), err);
    }
    if (a.out) remove_tree(out_dir);
    return 0;
}
