/*
 * fuzz_policy.c -- fuzz target: any bytes as a Lua policy file
 * (flashspec.policy.lua), run on a fixed small point.
 *
 * The input is written to policy.lua in a temporary directory, beside a fixed
 * script that loads it with fs.policy.lua (read once, hashed, its hooks table
 * and params declaration read into plain tables, checked) and runs one point
 * on the bundled small trace (traces/data/synth-small.h5, found through the
 * project directory) with a few new tokens: every hook the file defines is
 * called by the replay, its outputs checked against the tree, the greedy
 * exactness check applied.  Limits are small so one input stays cheap: at
 * most FZ_MAX_STEPS Lua VM instructions (per state) and FZ_MAX_MEM_MB MiB
 * for the run.  When the input's first line starts with "--@" its words
 * pick "j=2" (two worker threads: a sweep of two points) and "declare" (the
 * script passes params { k = 3 }).
 *
 * Contract under test: SIM_OK or a status whose exit code is documented (65, 66, 70, 78)
 * with one non-empty error line -- never a crash, a leak, a hang or a Lua
 * panic.  Built as fuzz_script.c is (tests/fuzz/meson.build).
 */
#include "sim/lua/api.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FZ_MAX_STEPS 2000000LL
#define FZ_MAX_MEM_MB 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond) abort();
}

static char tmp_dir[4096], policy_path[4200], script_path[2][4200];

static void remove_tmp(void)
{
    if (!tmp_dir[0]) return;
    unlink(policy_path);
    unlink(script_path[0]);
    unlink(script_path[1]);
    rmdir(tmp_dir);
}

static void write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    require(f != NULL);
    require(fwrite(data, 1, size, f) == size || size == 0);
    require(fclose(f) == 0);
}

static const char script_fmt[] =
    "local fs = flashspec\n"
    "local pol = fs.policy.lua(\"policy.lua\"%s)\n"
    "fs.sweep { device = fs.device \"oneplus12\", target = fs.model \"qwen3-8b-q4_0\",\n"
    "  draft = fs.model \"qwen3-8b-eagle3-q4_0\", trace = fs.trace \"traces/data/synth-small.h5\",\n"
    "  policy = pol, max_new_tokens = 6, prompts = 1, dram_fraction = %s }\n";

static void setup(void)
{
    if (tmp_dir[0]) return;
    const char *dir = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/fuzz-policy-XXXXXX", dir && *dir ? dir : "/tmp");
    require(mkdtemp(tmp_dir) != NULL);
    snprintf(policy_path, sizeof policy_path, "%s/policy.lua", tmp_dir);
    for (int declare = 0; declare < 2; declare++) {
        snprintf(script_path[declare], sizeof script_path[declare], "%s/script%d.lua", tmp_dir,
                 declare);
        char text[1024];
        snprintf(text, sizeof text, script_fmt, declare ? ", { k = 3 }" : "",
                 "{ 0, 0.5 }");
        write_file(script_path[declare], text, strlen(text));
    }
    atexit(remove_tmp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    int jobs = 1, declare = 0;
    if (size >= 3 && memcmp(data, "--@", 3) == 0) {
        char line[128];
        size_t n = 0;
        for (size_t i = 3; i < size && data[i] != '\n' && data[i] && n + 1 < sizeof line; i++)
            line[n++] = (char)data[i];
        line[n] = 0;
        jobs = strstr(line, "j=2") ? 2 : 1;
        declare = strstr(line, "declare") != NULL;
    }
    write_file(policy_path, data, size);
    fs_script_opts o = {.script = script_path[declare],
                        .quiet = 1,
                        .jobs = jobs,
                        .max_instructions = FZ_MAX_STEPS,
                        .max_memory_mb = FZ_MAX_MEM_MB};
    char err[1024];
    err[0] = 0;
    int code = fs_script_run(&o, err, sizeof err);
    if (code != SIM_OK) {
        int x = sim_status_exit(code);
        require(x == 65 || x == 66 || x == 70 || x == 78);
        require(err[0] != 0 && strchr(err, '\n') == NULL);
    }
    return 0;
}
