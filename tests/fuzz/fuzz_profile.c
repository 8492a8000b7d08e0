/*
 * fuzz_profile.c -- fuzz target: any bytes as a device or model profile.
 *
 * The input is written to one temporary file (created once per process,
 * rewritten for every input) and loaded through sim_profile_load_device and
 * sim_profile_load_model: the same sandboxed Lua state (FS_SANDBOX_PROFILE,
 * text chunks only, memory and instruction caps), the same lparams key
 * validation (which also re-reads the file to find key lines) and the same
 * semantic checks as `flashspec` uses.  Contract under test: every input ends
 * in SIM_OK or SIM_CONFIG / E_NOMEM -- or E_MISSING when it
 * names a `base` profile that does not exist -- with one non-empty line
 * naming the file -- never a crash, a leak, a hang or a Lua panic.  A `base`
 * can only name a shipped profile (the input is no profile of the config
 * directory), and those load cleanly, so every message names the input.
 * Built as fuzz_trace.c is (tests/fuzz/meson.build).
 */
#include "sim/config/profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond) abort();
}

static char tmp_path[4096];

static void remove_tmp(void)
{
    if (tmp_path[0]) unlink(tmp_path);
}

static const char *write_input(const uint8_t *data, size_t size)
{
    if (!tmp_path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp_path, sizeof tmp_path, "%s/fuzz-profile-XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(tmp_path);
        require(fd >= 0);
        close(fd);
        atexit(remove_tmp);
    }
    FILE *f = fopen(tmp_path, "wb");
    require(f != NULL);
    require(fwrite(data, 1, size, f) == size || size == 0);
    require(fclose(f) == 0);
    return tmp_path;
}

static void check(int rc, const char *err, const char *path)
{
    if (rc == SIM_OK) return;
    require(rc == SIM_CONFIG || rc == SIM_NOMEM ||
            rc == SIM_MISSING);
    require(err[0] != '\0');
    require(strchr(err, '\n') == NULL);
    require(strncmp(err, path, strlen(path)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = write_input(data, size);
    char err[1024];
    sim_device dev;
    sim_model mod;
    err[0] = '\0';
    check(sim_profile_load_device(path, &dev, err, sizeof err), err, path);
    err[0] = '\0';
    check(sim_profile_load_model(path, &mod, err, sizeof err), err, path);
    return 0;
}
