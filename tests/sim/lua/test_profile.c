/*
 * test_profile.c -- sandboxed profile loading: the shipped profiles load; bad
 * profiles (unknown key, type, range, syntax, missing key, inconsistent values,
 * not a table, bytecode) give E_CONFIG with "PATH:LINE: ..."; a missing file
 * gives E_MISSING; escapes from the sandbox (os, io, require, load, dofile),
 * endless loops and memory bombs fail cleanly; name resolution rejects '/'
 * and '..' and honours FLASHSPEC_CONFIG_DIR.
 *
 * argv[1]: tests/sim/lua/data; argv[2]: the configs directory.
 */
#include "sim/lua/profile.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../check.h"

static const char *data_dir;

static int load_dev(const char *file, char *err, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data_dir, file);
    sim_device d;
    int rc = sim_profile_load_device(path, &d, err, n);
    CHECK(strchr(err, '\n') == NULL || rc == SIM_PROFILE_OK);
    return rc;
}

/* err must be "DATA/FILE:LINE: " followed by something containing want */
static void expect_config(const char *file, int line, const char *want)
{
    char err[1024] = "", prefix[1100];
    int rc = load_dev(file, err, sizeof err);
    snprintf(prefix, sizeof prefix, "%s/%s:%d: ", data_dir, file, line);
    if (rc != SIM_PROFILE_E_CONFIG || strncmp(err, prefix, strlen(prefix)) != 0 ||
        !strstr(err, want)) {
        fprintf(stderr, "%s: rc %d, got '%s', want prefix '%s' and '%s'\n", file, rc, err, prefix,
                want);
        CHECK(0);
    }
    CHECK(sim_profile_exit_code(rc) == 78);
}

static void test_shipped(const char *cfg)
{
    char path[1024], err[1024] = "";
    sim_device d;
    snprintf(path, sizeof path, "%s/devices/oneplus12.lua", cfg);
    int rc = sim_profile_load_device(path, &d, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_PROFILE_OK);
    CHECK(strcmp(d.name, "oneplus12") == 0 && d.read_gbps == 5.0 && d.n_npu_shapes == 9);
    static const char *const models[] = {
        "qwen3-4b-q4_0",         "qwen3-8b-q4_0",           "qwen3-14b-q4_0",
        "llama3.1-8b-q4_0",      "qwen3-4b-eagle3-q4_0",    "qwen3-8b-eagle3-q4_0",
        "qwen3-14b-eagle3-q4_0", "llama3.1-8b-eagle3-q4_0", "qwen3-0.6b-q4_0"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        sim_model m;
        snprintf(path, sizeof path, "%s/models/%s.lua", cfg, models[i]);
        rc = sim_profile_load_model(path, &m, err, sizeof err);
        if (rc) fprintf(stderr, "%s\n", err);
        CHECK(rc == SIM_PROFILE_OK && strcmp(m.name, models[i]) == 0);
        CHECK(m.weight_bits == 4.5);
        CHECK((m.kind == SIM_MODEL_EAGLE3) == (strstr(models[i], "eagle3") != NULL));
    }
}

static void test_bad_profiles(void)
{
    expect_config("dev_unknown.lua", 5,
                  "unknown key 'read_gbp' in device profile (did you mean 'read_gbps'?)");
    expect_config("dev_type.lua", 3,
                  "device profile: key 'dram_budget_gb' must be a number "
                  "(got string)");
    expect_config("dev_range.lua", 11,
                  "device profile: key 'prefetch_layers' = 9 is out of range [0, 8]");
    expect_config("dev_syntax.lua", 3, "unexpected symbol");
    expect_config("dev_missing_key.lua", 1, "device profile: missing required key");
    expect_config("dev_check.lua", 1, "cannot exceed dram_gbps");
    expect_config("sb_notable.lua", 1, "device profile must return a table (got number)");
    expect_config("sb_errobj.lua", 1, "non-string error");
}

static void test_sandbox(void)
{
    expect_config("sb_os.lua", 2, "global 'os'");
    expect_config("sb_io.lua", 1, "global 'io'");
    expect_config("sb_require.lua", 1, "global 'require'");
    expect_config("sb_load.lua", 1, "global 'load'");
    expect_config("sb_dofile.lua", 1, "global 'dofile'");
    expect_config("sb_loop.lua", 1, "instruction limit");
    char err[1024] = "";
    CHECK(load_dev("sb_memory.lua", err, sizeof err) == SIM_PROFILE_E_CONFIG);
    CHECK(strstr(err, "memory limit"));
    CHECK(access("/tmp/flashspec-sandbox-breach", F_OK) != 0);
    /* the safe libraries work; a model profile passes */
    char path[1024];
    snprintf(path, sizeof path, "%s/sb_safe.lua", data_dir);
    sim_model m;
    int rc = sim_profile_load_model(path, &m, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_PROFILE_OK && m.layers == 36 && strcmp(m.name, "safe") == 0);
}

static int writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    (void)L;
    return fwrite(p, 1, sz, ud) == sz ? 0 : 1;
}

static void test_binary_chunk(void)
{
    char path[] = "/tmp/flashspec-bytecode-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    CHECK(f);
    lua_State *L = luaL_newstate();
    CHECK(luaL_loadstring(L, "return { read_gbps = 5 }") == LUA_OK);
    CHECK(lua_dump(L, writer, f, 0) == 0);
    lua_close(L);
    fclose(f);
    sim_device d;
    char err[1024] = "";
    int rc = sim_profile_load_device(path, &d, err, sizeof err);
    remove(path);
    CHECK(rc == SIM_PROFILE_E_CONFIG && strstr(err, "binary"));
}

static void test_missing_and_names(const char *cfg)
{
    char err[1024] = "", path[256];
    sim_model m;
    int rc = sim_profile_load_model("/nonexistent/dir/x.lua", &m, err, sizeof err);
    CHECK(rc == SIM_PROFILE_E_MISSING && sim_profile_exit_code(rc) == 66);
    CHECK(strncmp(err, "/nonexistent/dir/x.lua: cannot open", 35) == 0);

    CHECK(sim_profile_path("devices", "../etc/passwd", path, sizeof path) == SIM_PROFILE_E_NAME);
    CHECK(sim_profile_path("devices", "a/b", path, sizeof path) == SIM_PROFILE_E_NAME);
    CHECK(sim_profile_path("models", "x..y", path, sizeof path) == SIM_PROFILE_E_NAME);
    CHECK(sim_profile_path("models", "", path, sizeof path) == SIM_PROFILE_E_NAME);
    CHECK(sim_profile_path("models", ".hidden", path, sizeof path) == SIM_PROFILE_E_NAME);
    CHECK(sim_profile_path("policies", "x", path, sizeof path) == SIM_PROFILE_E_NAME);
    CHECK(sim_profile_exit_code(SIM_PROFILE_E_NAME) == 78);
    CHECK(sim_profile_exit_code(SIM_PROFILE_E_NOMEM) == 70);

    CHECK(setenv("FLASHSPEC_CONFIG_DIR", cfg, 1) == 0);
    CHECK(sim_profile_path("models", "qwen3-8b-q4_0", path, sizeof path) == SIM_PROFILE_OK);
    char want[1024];
    snprintf(want, sizeof want, "%s/models/qwen3-8b-q4_0.lua", cfg);
    CHECK(strcmp(path, want) == 0);
    CHECK(sim_profile_load_model(path, &m, err, sizeof err) == SIM_PROFILE_OK);
    CHECK(sim_profile_path("models", "qwen3-8b-q4_0", path, 8) == SIM_PROFILE_E_NAME);
    CHECK(setenv("FLASHSPEC_CONFIG_DIR", "/elsewhere", 1) == 0);
    CHECK(sim_profile_path("devices", "oneplus12", path, sizeof path) == SIM_PROFILE_OK);
    CHECK(strcmp(path, "/elsewhere/devices/oneplus12.lua") == 0);
    CHECK(unsetenv("FLASHSPEC_CONFIG_DIR") == 0);
    CHECK(sim_profile_path("devices", "oneplus12", path, sizeof path) == SIM_PROFILE_OK);
    CHECK(strstr(path, "/devices/oneplus12.lua") != NULL);
}

int main(int argc, char **argv)
{
    CHECK(argc > 2);
    data_dir = argv[1];
    test_shipped(argv[2]);
    test_bad_profiles();
    test_sandbox();
    test_binary_chunk();
    test_missing_and_names(argv[2]);
    printf("profile: ok\n");
    return check_done("lua/profile");
}
