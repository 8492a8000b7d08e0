/*
 * test_profile.c -- sandboxed profile loading: the shipped profiles load; bad
 * profiles (unknown key, type, range, syntax, missing key, inconsistent values,
 * not a table, bytecode) give E_CONFIG with "PATH:LINE: ..."; a missing file
 * gives E_MISSING; escapes from the sandbox (os, io, require, load, dofile),
 * endless loops and memory bombs fail cleanly; name resolution rejects '/'
 * and '..' and honours FLASHSPEC_CONFIG_DIR.  Inheritance (`base = NAME`):
 * a derived file is its base plus its own keys, over one or two levels, for
 * devices and models; the name is the derived file's; a missing base is
 * E_MISSING naming the derived file and the line of `base`; a cycle, a chain
 * deeper than SIM_PROFILE_MAX_BASES, a bad base name or type are E_CONFIG; an
 * error inside a base (also a sandbox escape) names the base file.
 *
 * argv[1]: tests/sim/config/data; argv[2]: the configs directory.
 */
#include "sim/config/profile.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"

static const char *data_dir;

static int load_dev(const char *file, char *err, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data_dir, file);
    sim_device d;
    int rc = sim_profile_load_device(path, &d, err, n);
    CHECK(strchr(err, '\n') == NULL || rc == SIM_OK);
    return rc;
}

/* err must be "DATA/FILE:LINE: " followed by something containing want */
static void expect_config(const char *file, int line, const char *want)
{
    char err[1024] = "", prefix[1100];
    int rc = load_dev(file, err, sizeof err);
    snprintf(prefix, sizeof prefix, "%s/%s:%d: ", data_dir, file, line);
    if (rc != SIM_CONFIG || strncmp(err, prefix, strlen(prefix)) != 0 ||
        !strstr(err, want)) {
        fprintf(stderr, "%s: rc %d, got '%s', want prefix '%s' and '%s'\n", file, rc, err, prefix,
                want);
        CHECK(0);
    }
    CHECK(sim_status_exit(rc) == 78);
}

static void test_shipped(const char *cfg)
{
    char path[1024], err[1024] = "";
    sim_device d;
    snprintf(path, sizeof path, "%s/devices/oneplus12.lua", cfg);
    int rc = sim_profile_load_device(path, &d, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK);
    CHECK(strcmp(d.name, "oneplus12") == 0 && d.read_gbps == 4.2 && d.n_npu_shapes == 9);
    static const char *const models[] = {
        "qwen3-4b-q4_0",         "qwen3-8b-q4_0",           "qwen3-14b-q4_0",
        "llama3.1-8b-q4_0",      "qwen3-4b-eagle3-q4_0",    "qwen3-8b-eagle3-q4_0",
        "qwen3-14b-eagle3-q4_0", "llama3.1-8b-eagle3-q4_0", "qwen3-0.6b-q4_0"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        sim_model m;
        snprintf(path, sizeof path, "%s/models/%s.lua", cfg, models[i]);
        rc = sim_profile_load_model(path, &m, err, sizeof err);
        if (rc) fprintf(stderr, "%s\n", err);
        CHECK(rc == SIM_OK && strcmp(m.name, models[i]) == 0);
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
    CHECK(load_dev("sb_memory.lua", err, sizeof err) == SIM_CONFIG);
    CHECK(strstr(err, "memory limit"));
    CHECK(access("/tmp/flashspec-sandbox-breach", F_OK) != 0);
    /* the safe libraries work; a model profile passes */
    char path[1024];
    snprintf(path, sizeof path, "%s/sb_safe.lua", data_dir);
    sim_model m;
    int rc = sim_profile_load_model(path, &m, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK && m.layers == 36 && strcmp(m.name, "safe") == 0);
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
    CHECK(rc == SIM_CONFIG && strstr(err, "binary"));
}

static void test_missing_and_names(const char *cfg)
{
    char err[1024] = "", path[256];
    sim_model m;
    int rc = sim_profile_load_model("/nonexistent/dir/x.lua", &m, err, sizeof err);
    CHECK(rc == SIM_MISSING && sim_status_exit(rc) == 66);
    CHECK(strncmp(err, "/nonexistent/dir/x.lua: cannot open", 35) == 0);

    CHECK(sim_profile_path("devices", "../etc/passwd", path, sizeof path) == SIM_CONFIG_NAME);
    CHECK(sim_profile_path("devices", "a/b", path, sizeof path) == SIM_CONFIG_NAME);
    CHECK(sim_profile_path("models", "x..y", path, sizeof path) == SIM_CONFIG_NAME);
    CHECK(sim_profile_path("models", "", path, sizeof path) == SIM_CONFIG_NAME);
    CHECK(sim_profile_path("models", ".hidden", path, sizeof path) == SIM_CONFIG_NAME);
    CHECK(sim_profile_path("policies", "x", path, sizeof path) == SIM_CONFIG_NAME);
    CHECK(sim_status_exit(SIM_CONFIG_NAME) == 78);
    CHECK(sim_status_exit(SIM_NOMEM) == 70);

    CHECK(setenv("FLASHSPEC_CONFIG_DIR", cfg, 1) == 0);
    CHECK(sim_profile_path("models", "qwen3-8b-q4_0", path, sizeof path) == SIM_OK);
    char want[1024];
    snprintf(want, sizeof want, "%s/models/qwen3-8b-q4_0.lua", cfg);
    CHECK(strcmp(path, want) == 0);
    CHECK(sim_profile_load_model(path, &m, err, sizeof err) == SIM_OK);
    CHECK(sim_profile_path("models", "qwen3-8b-q4_0", path, 8) == SIM_CONFIG_NAME);
    CHECK(setenv("FLASHSPEC_CONFIG_DIR", "/elsewhere", 1) == 0);
    CHECK(sim_profile_path("devices", "oneplus12", path, sizeof path) == SIM_OK);
    CHECK(strcmp(path, "/elsewhere/devices/oneplus12.lua") == 0);
    CHECK(unsetenv("FLASHSPEC_CONFIG_DIR") == 0);
    CHECK(sim_profile_path("devices", "oneplus12", path, sizeof path) == SIM_OK);
    CHECK(strstr(path, "/devices/oneplus12.lua") != NULL);
}

/* Loads data/file as a device with FLASHSPEC_CONFIG_DIR = cfg. */
static int load_dev_in(const char *cfg, const char *file, sim_device *d, char *err, size_t n)
{
    char path[1024];
    CHECK(setenv("FLASHSPEC_CONFIG_DIR", cfg, 1) == 0);
    snprintf(path, sizeof path, "%s/%s", data_dir, file);
    err[0] = '\0';
    int rc = sim_profile_load_device(path, d, err, n);
    CHECK(strchr(err, '\n') == NULL);
    return rc;
}

/* rc and err "PREFIX:LINE: ..." containing want, for data/file under cfg. */
static void expect_inherit(const char *cfg, const char *file, int want_rc, const char *prefix,
                           int line, const char *want)
{
    char err[1024], head[1100];
    sim_device d;
    int rc = load_dev_in(cfg, file, &d, err, sizeof err);
    snprintf(head, sizeof head, "%s:%d: ", prefix, line);
    if (rc != want_rc || strncmp(err, head, strlen(head)) != 0 || !strstr(err, want)) {
        fprintf(stderr, "%s: rc %d, got '%s', want rc %d, prefix '%s' and '%s'\n", file, rc, err,
                want_rc, head, want);
        CHECK(0);
    }
}

/* Writes cfg/devices/NAME.lua with text. */
static void write_profile(const char *cfg, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/devices/%s.lua", cfg, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_inheritance(const char *cfg)
{
    char err[1024] = "", path[2200], inherit[1024], data[2200];
    snprintf(inherit, sizeof inherit, "%s/inherit", data_dir);

    /* one level over a shipped profile: the base's values plus the override */
    sim_device base, d;
    memset(&base, 0, sizeof base); /* padding compares equal below */
    memset(&d, 0, sizeof d);
    snprintf(path, sizeof path, "%s/devices/oneplus12.lua", cfg);
    CHECK(sim_profile_load_device(path, &base, err, sizeof err) == SIM_OK);
    int rc = load_dev_in(cfg, "dev_derived.lua", &d, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK);
    CHECK(d.read_gbps == 3.5 && base.read_gbps == 4.2);
    CHECK(strcmp(d.name, "dev_derived") == 0);
    sim_device same = d; /* every other field comes from the base */
    same.read_gbps = base.read_gbps;
    memcpy(same.name, base.name, sizeof same.name);
    CHECK(memcmp(&same, &base, sizeof base) == 0);

    /* two levels: dev_chain -> phone_fast -> phone; the nearest file wins */
    sim_device phone, fast;
    snprintf(path, sizeof path, "%s/devices/phone.lua", inherit);
    CHECK(sim_profile_load_device(path, &phone, err, sizeof err) == SIM_OK);
    snprintf(path, sizeof path, "%s/devices/phone_fast.lua", inherit);
    CHECK(setenv("FLASHSPEC_CONFIG_DIR", inherit, 1) == 0);
    rc = sim_profile_load_device(path, &fast, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK && strcmp(fast.name, "fastphone") == 0);
    CHECK(fast.read_gbps == 8 && fast.n_npu_shapes == 3 && fast.npu_shapes[2] == 16);
    CHECK(fast.npu_gflops == phone.npu_gflops && fast.cpu_gbps == phone.cpu_gbps);
    rc = load_dev_in(inherit, "dev_chain.lua", &d, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK);
    CHECK(strcmp(d.name, "dev_chain") == 0); /* neither "fastphone" nor "phone" */
    CHECK(d.npu_gflops == 2000 && d.read_gbps == 8 && d.n_npu_shapes == 3);
    CHECK(d.dram_gbps == phone.dram_gbps && d.launch_us == phone.launch_us);
    CHECK(d.prefetch_layers == phone.prefetch_layers && d.kv_seq_us == phone.kv_seq_us);

    /* errors: each one line, in the file that holds the problem */
    snprintf(data, sizeof data, "%s/dev_derived_unknown.lua", data_dir);
    expect_inherit(cfg, "dev_derived_unknown.lua", SIM_CONFIG, data, 4,
                   "unknown key 'read_gbp' in device profile (did you mean 'read_gbps'?)");
    snprintf(data, sizeof data, "%s/dev_derived_check.lua", data_dir);
    expect_inherit(cfg, "dev_derived_check.lua", SIM_CONFIG, data, 1,
                   "cannot exceed dram_gbps");
    snprintf(data, sizeof data, "%s/dev_base_missing.lua", data_dir);
    expect_inherit(cfg, "dev_base_missing.lua", SIM_MISSING, data, 3,
                   "base profile 'no-such-phone' not found");
    CHECK(sim_status_exit(SIM_MISSING) == 66);
    snprintf(data, sizeof data, "%s/dev_base_badname.lua", data_dir);
    expect_inherit(cfg, "dev_base_badname.lua", SIM_CONFIG, data, 4,
                   "invalid base profile name '../devices/oneplus12'");
    snprintf(data, sizeof data, "%s/dev_base_type.lua", data_dir);
    expect_inherit(cfg, "dev_base_type.lua", SIM_CONFIG, data, 3,
                   "key 'base' must be a string (got number)");
    snprintf(data, sizeof data, "%s/devices/cyc_b.lua", inherit);
    expect_inherit(inherit, "dev_cycle.lua", SIM_CONFIG, data, 1,
                   "base 'cyc_a' makes a cycle (dev_cycle -> cyc_a -> cyc_b -> cyc_a)");
    snprintf(path, sizeof path, "%s/devices/self.lua", inherit);
    rc = sim_profile_load_device(path, &d, err, sizeof err);
    CHECK(rc == SIM_CONFIG && strstr(err, "self.lua:2: ") &&
          strstr(err, "makes a cycle (self -> self)"));
    snprintf(data, sizeof data, "%s/devices/broken.lua", inherit);
    expect_inherit(inherit, "dev_base_broken.lua", SIM_CONFIG, data, 4,
                   "device profile: key 'prefetch_layers' = 9 is out of range [0, 8]");
    snprintf(data, sizeof data, "%s/devices/escape.lua", inherit);
    expect_inherit(inherit, "dev_base_escape.lua", SIM_CONFIG, data, 1, "global 'io'");
    /* the base is found by name under the same config dir only */
    snprintf(data, sizeof data, "%s/dev_chain.lua", data_dir);
    expect_inherit(cfg, "dev_chain.lua", SIM_MISSING, data, 3,
                   "base profile 'phone_fast' not found");

    /* models: a base of the same kind */
    sim_model m, mb;
    snprintf(path, sizeof path, "%s/models/qwen3-8b-q4_0.lua", cfg);
    CHECK(sim_profile_load_model(path, &mb, err, sizeof err) == SIM_OK);
    CHECK(setenv("FLASHSPEC_CONFIG_DIR", cfg, 1) == 0);
    snprintf(path, sizeof path, "%s/model_derived.lua", data_dir);
    rc = sim_profile_load_model(path, &m, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK && strcmp(m.name, "model_derived") == 0);
    CHECK(m.npu_efficiency == 1.1 && mb.npu_efficiency != 1.1);
    CHECK(m.layers == mb.layers && m.flash_efficiency == mb.flash_efficiency);
    snprintf(path, sizeof path, "%s/model_base_kind.lua", data_dir);
    rc = sim_profile_load_model(path, &m, err, sizeof err);
    CHECK(rc == SIM_MISSING && strstr(err, "model_base_kind.lua:3: ") &&
          strstr(err, "models/oneplus12.lua"));
    /* the generic loader knows no kind: `base` is an unknown key there */
    snprintf(path, sizeof path, "%s/dev_derived.lua", data_dir);
    rc = sim_profile_load(path, sim_device_keys(), &d, "device profile", err, sizeof err);
    CHECK(rc == SIM_CONFIG && strstr(err, "unknown key 'base'"));
    rc = sim_profile_load_kind(path, "policies", sim_device_keys(), &d, "x", err, sizeof err);
    CHECK(rc == SIM_CONFIG_NAME);

    /* chain depth: 8 bases load, a 9th is an error */
    char tmp[] = "/tmp/flashspec-chain-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    char dir[64];
    snprintf(dir, sizeof dir, "%s/devices", tmp);
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/devices/phone.lua", inherit);
    FILE *f = fopen(path, "r");
    char root[2048] = "";
    size_t got = f ? fread(root, 1, sizeof root - 1, f) : 0;
    root[got] = '\0';
    if (f) fclose(f);
    CHECK(got > 0);
    write_profile(tmp, "c8", root);
    for (int i = 0; i <= 8; i++) {
        char name[16], text[128];
        snprintf(name, sizeof name, "c%d", i);
        snprintf(text, sizeof text, "return {\n  base = \"c%d\",\n  launch_us = %d,\n}\n", i + 1,
                 i);
        if (i < 8) write_profile(tmp, name, text);
        snprintf(name, sizeof name, "d%d", i);
        snprintf(text, sizeof text, "return {\n  base = \"d%d\",\n}\n", i + 1);
        write_profile(tmp, name, text);
    }
    CHECK(setenv("FLASHSPEC_CONFIG_DIR", tmp, 1) == 0);
    snprintf(path, sizeof path, "%s/devices/c0.lua", tmp);
    rc = sim_profile_load_device(path, &d, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK && d.launch_us == 0 && strcmp(d.name, "c0") == 0);
    snprintf(path, sizeof path, "%s/devices/d0.lua", tmp);
    rc = sim_profile_load_device(path, &d, err, sizeof err);
    CHECK(rc == SIM_CONFIG && strstr(err, "/devices/d8.lua:2: ") &&
          strstr(err, "base chain deeper than 8 profiles (d0 -> d1 -> d2 -> d3 -> d4 -> d5 -> "
                      "d6 -> d7 -> d8 -> d9)"));
    if (rc != SIM_CONFIG) fprintf(stderr, "%s\n", err);
    for (int i = 0; i <= 8; i++) {
        snprintf(path, sizeof path, "%s/devices/c%d.lua", tmp, i);
        remove(path);
        snprintf(path, sizeof path, "%s/devices/d%d.lua", tmp, i);
        remove(path);
    }
    rmdir(dir);
    rmdir(tmp);
    CHECK(unsetenv("FLASHSPEC_CONFIG_DIR") == 0);
}

/* The search path: FLASHSPEC_CONFIG_PATH's directories first (empty entries
 * skipped), the shipped directory last; the first regular file wins; a base
 * naming the file itself resolves further along; names list the union. */
static void test_search_path(const char *cfg)
{
    char tmp[] = "/tmp/flashspec-path-XXXXXX", path[2048], err[1024], d1[1100], d2[1100];
    CHECK(mkdtemp(tmp) != NULL);
    snprintf(d1, sizeof d1, "%s/one", tmp);
    snprintf(d2, sizeof d2, "%s/two", tmp);
    for (int i = 0; i < 2; i++) {
        const char *d = i ? d2 : d1;
        CHECK(mkdir(d, 0700) == 0);
        snprintf(path, sizeof path, "%s/devices", d);
        CHECK(mkdir(path, 0700) == 0);
    }
    write_profile(d1, "mine", "return { base = \"oneplus12\", launch_us = 7 }\n");
    write_profile(d2, "oneplus12", "return { base = \"oneplus12\", read_gbps = 2.5 }\n");
    char env[2300];
    snprintf(env, sizeof env, ":%s::%s:", d1, d2);
    CHECK(setenv("FLASHSPEC_CONFIG_PATH", env, 1) == 0);
    CHECK(setenv("FLASHSPEC_CONFIG_DIR", cfg, 1) == 0);
    char dirs[SIM_PROFILE_MAX_DIRS][SIM_PROFILE_DIR_CAP];
    CHECK(sim_profile_dirs(dirs, SIM_PROFILE_MAX_DIRS) == 3);
    CHECK(!strcmp(dirs[0], d1) && !strcmp(dirs[1], d2) && !strcmp(dirs[2], cfg));
    CHECK(sim_profile_find("devices", "mine", 0, path, sizeof path) == 0);
    CHECK(sim_profile_find("devices", "mine", 1, path, sizeof path) == -1);
    CHECK(sim_profile_find("devices", "oneplus12", 0, path, sizeof path) == 1);
    CHECK(sim_profile_find("devices", "oneplus12", 2, path, sizeof path) == 2);
    CHECK(sim_profile_find("devices", "../x", 0, path, sizeof path) == -2);
    /* mine -> the user's oneplus12 -> the shipped oneplus12 */
    sim_device d;
    CHECK(sim_profile_find("devices", "mine", 0, path, sizeof path) == 0);
    int rc = sim_profile_load_device(path, &d, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK && d.launch_us == 7 && d.read_gbps == 2.5 && d.npu_gflops > 0);
    char names[SIM_PROFILE_LIST_MAX][SIM_PROFILE_NAME_CAP];
    int n = sim_profile_names("devices", names, SIM_PROFILE_LIST_MAX), ones = 0, mine = 0;
    for (int i = 0; i < n; i++) {
        ones += !strcmp(names[i], "oneplus12");
        mine += !strcmp(names[i], "mine");
        CHECK(i == 0 || strcmp(names[i - 1], names[i]) < 0);
    }
    CHECK(n >= 3 && ones == 1 && mine == 1);
    /* a file that derives from itself with nothing further along: a cycle */
    write_profile(d1, "loop", "return { base = \"loop\" }\n");
    CHECK(sim_profile_find("devices", "loop", 0, path, sizeof path) == 0);
    rc = sim_profile_load_device(path, &d, err, sizeof err);
    CHECK(rc == SIM_CONFIG && strstr(err, "makes a cycle"));
    CHECK(unsetenv("FLASHSPEC_CONFIG_PATH") == 0);
    CHECK(sim_profile_find("devices", "mine", 0, path, sizeof path) == -1);
    CHECK(unsetenv("FLASHSPEC_CONFIG_DIR") == 0);
    const char *files[] = {"one/devices/mine.lua",
                           "one/devices/loop.lua",
                           "two/devices/oneplus12.lua",
                           "one/devices",
                           "two/devices",
                           "one",
                           "two"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, files[i]);
        CHECK(remove(path) == 0);
    }
    CHECK(rmdir(tmp) == 0);
}

/* Standing variants (profile.h): parsed, validated, sorted, inherited from
 * the nearest file that declares them, applied over the resolved device. */
static void test_variants(const char *cfg)
{
    char err[1024] = "", path[1600], dir[] = "/tmp/fs_variants_XXXXXX";
    sim_device d;
    sim_device_variants v;
    size_t nkeys = 0; /* a variant's flags hold one per device key row */
    while (sim_device_keys()[nkeys].name)
        nkeys++;
    CHECK(nkeys < SIM_VARIANT_KEYS_CAP);
    /* the shipped OnePlus 12 declares its three standing variants; its runtime's
     * prior range adds parts_slow */
    snprintf(path, sizeof path, "%s/devices/oneplus12.lua", cfg);
    CHECK(sim_profile_load_device_variants(path, &d, &v, err, sizeof err) == SIM_OK);
    /* in name order */
    CHECK(v.n == 4 && strcmp(v.v[0].name, "all") == 0 && strcmp(v.v[1].name, "const") == 0 &&
          strcmp(v.v[2].name, "min8") == 0 && strcmp(v.v[3].name, "parts_slow") == 0);
    sim_device m = d;
    sim_device_variant_apply(&v.v[2], &m);
    CHECK(m.verify_min_rows == 8 && d.verify_min_rows == 1 && m.npu_gflops != d.npu_gflops);
    CHECK(m.read_gbps == d.read_gbps && strcmp(m.name, d.name) == 0);
    sim_device a = d;
    sim_device_variant_apply(&v.v[0], &a);
    CHECK(a.n_npu_shapes == 66 && a.npu_shapes[63] == 64 && a.npu_shapes[65] == 256);
    sim_device w = d;
    sim_device_variant_apply(&v.v[1], &w);
    CHECK(w.verify_graph_us == 0 && w.verify_setup_us > 0 && d.verify_graph_us > 0 &&
          d.verify_setup_us == 0);
    CHECK(w.verify_min_rows == d.verify_min_rows);

    CHECK(mkdtemp(dir) != NULL);
    char devs[256];
    snprintf(devs, sizeof devs, "%s/devices", dir);
    CHECK(mkdir(devs, 0700) == 0);
    static const char *const phone =
        "return { name = 'phone', read_gbps = 5.0, dram_budget_gb = 6, dram_gbps = 76.8,\n"
        "  npu_gbps = 76.8, npu_gflops = 1000, launch_us = 500, sync_us = 500,\n"
        "  cpu_gbps = 17.2, cpu_gflops = 200,\n"
        "  variants = { slow = { npu_gflops = 500 }, alt = { verify_min_rows = 8 } } }\n";
    static const struct {
        const char *name, *text, *want; /* want NULL: loads */
        int line;
    } cases[] = {
        {"phone", NULL, NULL, 0},
        {"derived", "return { base = 'phone', npu_gflops = 2000 }\n", NULL, 0},
        {"cleared", "return { base = 'phone', variants = {} }\n", NULL, 0},
        {"not_table", "return { base = 'phone',\n variants = 3 }\n", "must be a table", 2},
        {"bad_name", "return { base = 'phone',\n variants = { ['a-b'] = { npu_gflops = 1 } } }\n",
         "needs a name", 2},
        {"bad_key", "return { base = 'phone',\n variants = { x = { npu_gflop = 1 } } }\n",
         "variant 'x'", 2},
        {"named", "return { base = 'phone',\n variants = { x = { name = 'y' } } }\n",
         "cannot set 'name'", 2},
        {"too_many",
         "return { base = 'phone',\n variants = { a = {}, b = {}, c = {}, d = {},"
         " e = {}, f = {}, g = {}, h = {}, i = {} } }\n",
         "at most 8 variants", 2},
        {"invalid", "return { base = 'phone',\n variants = { x = { npu_gbps = 900 } } }\n",
         "variant 'x'", 0},
    };
    write_profile(dir, "phone", phone);
    for (size_t i = 1; i < sizeof cases / sizeof cases[0]; i++)
        write_profile(dir, cases[i].name, cases[i].text);
    CHECK(setenv("FLASHSPEC_CONFIG_DIR", dir, 1) == 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.lua", devs, cases[i].name);
        err[0] = '\0';
        int rc = sim_profile_load_device_variants(path, &d, &v, err, sizeof err);
        if (!cases[i].want) {
            if (rc) fprintf(stderr, "%s: %s\n", cases[i].name, err);
            CHECK(rc == SIM_OK);
            continue;
        }
        char head[1700];
        snprintf(head, sizeof head, "%s:", path);
        if (rc != SIM_CONFIG || strncmp(err, head, strlen(head)) != 0 ||
            !strstr(err, cases[i].want) || strchr(err, '\n')) {
            fprintf(stderr, "%s: rc %d '%s', want '%s'\n", cases[i].name, rc, err, cases[i].want);
            CHECK(0);
        }
        if (cases[i].line) {
            snprintf(head, sizeof head, "%s:%d: ", path, cases[i].line);
            CHECK(strncmp(err, head, strlen(head)) == 0);
        }
    }
    /* sorted by name; inherited by a derived file; cleared by an empty table */
    snprintf(path, sizeof path, "%s/phone.lua", devs);
    CHECK(sim_profile_load_device_variants(path, &d, &v, err, sizeof err) == SIM_OK);
    CHECK(v.n == 2 && strcmp(v.v[0].name, "alt") == 0 && strcmp(v.v[1].name, "slow") == 0);
    snprintf(path, sizeof path, "%s/derived.lua", devs);
    CHECK(sim_profile_load_device_variants(path, &d, &v, err, sizeof err) == SIM_OK);
    CHECK(v.n == 2 && d.npu_gflops == 2000);
    m = d;
    sim_device_variant_apply(&v.v[0], &m); /* alt: over the derived device */
    CHECK(m.verify_min_rows == 8 && m.npu_gflops == 2000);
    snprintf(path, sizeof path, "%s/cleared.lua", devs);
    CHECK(sim_profile_load_device_variants(path, &d, &v, err, sizeof err) == SIM_OK);
    CHECK(v.n == 0);
    /* a model profile has no variants */
    char mdir[300], mpath[400];
    snprintf(mdir, sizeof mdir, "%s/models", dir);
    CHECK(mkdir(mdir, 0700) == 0);
    snprintf(mpath, sizeof mpath, "%s/m.lua", mdir);
    FILE *f = fopen(mpath, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("return { layers = 2, hidden = 64, heads = 2, kv_heads = 2, head_dim = 32, ffn = 128,"
              " vocab = 100, variants = {} }\n",
              f);
        fclose(f);
    }
    sim_model mm;
    CHECK(sim_profile_load_model(mpath, &mm, err, sizeof err) == SIM_CONFIG);
    CHECK(strstr(err, "variants") != NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.lua", devs, cases[i].name);
        unlink(path);
    }
    unlink(mpath);
    rmdir(mdir);
    rmdir(devs);
    rmdir(dir);
    unsetenv("FLASHSPEC_CONFIG_DIR");
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
    test_inheritance(argv[2]);
    test_variants(argv[2]);
    test_search_path(argv[2]);
    printf("profile: ok\n");
    return check_done("lua/profile");
}
