/*
 * test_profile_cache.c -- the profile files a script run has read
 * (sim/config/sim_profile_cache.h): a file read once, then served from the
 * cache even after it changes; a device and a model at one path kept apart;
 * a load that fails is not kept; the named lookup by kind and name; the
 * cache's limit.  argv[1]: the project's configs/ folder.  Works on copies
 * in a fresh temporary directory.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include "sim/config/sim_profile_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/sim_status.h"

#include "../../check.h"

static char root[512];

static int copy(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    int ok = a && b;
    char buf[4096];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0)
        ok = fwrite(buf, 1, n, b) == n;
    if (a) fclose(a);
    if (b) fclose(b);
    return ok ? 0 : -1;
}

static void test_load_once(const char *configs)
{
    char src[1024], dev[1024], model[1024], err[512];
    snprintf(dev, sizeof dev, "%s/devices/phone.lua", root);
    snprintf(model, sizeof model, "%s/models/big.lua", root);
    snprintf(src, sizeof src, "%s/devices/oneplus12.lua", configs);
    CHECK(copy(src, dev) == 0);
    snprintf(src, sizeof src, "%s/models/llama2-7b-chat-q4_0.lua", configs);
    CHECK(copy(src, model) == 0);
    sim_profile_cache c = {0};
    sim_device d1, d2;
    sim_device_variants v1, v2;
    sim_model m1, m2;
    CHECK_EQ_INT(sim_profile_cache_device(&c, dev, &d1, &v1, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(c.n, 1);
    CHECK(sim_profile_cache_find(&c, dev, 1) != NULL);
    CHECK(sim_profile_cache_find(&c, dev, 0) == NULL); /* a device, not a model */
    /* gone from disk: served from the cache, the same values */
    CHECK(unlink(dev) == 0);
    memset(&d2, 0xAB, sizeof d2);
    CHECK_EQ_INT(sim_profile_cache_device(&c, dev, &d2, &v2, err, sizeof err), SIM_OK);
    CHECK(memcmp(&d1, &d2, sizeof d1) == 0 && memcmp(&v1, &v2, sizeof v1) == 0);
    CHECK_EQ_INT(c.n, 1);
    /* the model at its path; a model load of a missing file fails, not kept */
    CHECK_EQ_INT(sim_profile_cache_model(&c, model, &m1, err, sizeof err), SIM_OK);
    CHECK(unlink(model) == 0);
    CHECK_EQ_INT(sim_profile_cache_model(&c, model, &m2, err, sizeof err), SIM_OK);
    CHECK(memcmp(&m1, &m2, sizeof m1) == 0);
    CHECK_EQ_INT(c.n, 2);
    CHECK(sim_profile_cache_model(&c, dev, &m2, err, sizeof err) != SIM_OK);
    CHECK(sim_profile_cache_device(&c, model, &d2, &v2, err, sizeof err) != SIM_OK);
    CHECK_EQ_INT(c.n, 2);
    /* by kind and name: the path kept */
    char path[1024] = "unchanged";
    sim_profile_cache_named(&c, "devices", "phone", path, sizeof path);
    CHECK(!strcmp(path, dev));
    snprintf(path, sizeof path, "unchanged");
    sim_profile_cache_named(&c, "models", "phone", path, sizeof path); /* a device */
    CHECK(!strcmp(path, "unchanged"));
    sim_profile_cache_named(&c, "devices", "hone", path, sizeof path); /* a tail only */
    CHECK(!strcmp(path, "unchanged"));
    sim_profile_cache_named(&c, "models", "big", path, sizeof path);
    CHECK(!strcmp(path, model));
    sim_profile_cache_free(&c);
    CHECK(c.n == 0 && c.e == NULL);
}

static void test_keep(void)
{
    sim_profile_cache c = {0};
    sim_model m;
    memset(&m, 0, sizeof m);
    m.layers = 7;
    sim_device d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(sim_profile_cache_keep(&c, "/r/models/x.lua", 0, NULL, NULL, &m), 0);
    CHECK_EQ_INT(sim_profile_cache_keep(&c, "/r/models/x.lua", 1, &d, NULL, NULL), 0);
    const sim_profile_entry *e = sim_profile_cache_find(&c, "/r/models/x.lua", 0);
    CHECK(e && e->device == 0 && e->model.layers == 7);
    e = sim_profile_cache_find(&c, "/r/models/x.lua", 1);
    CHECK(e && e->device == 1 && e->vars.n == 0);
    char err[128];
    sim_model got;
    CHECK_EQ_INT(sim_profile_cache_model(&c, "/r/models/x.lua", &got, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(got.layers, 7);
    /* a device kept at a path that looks like a model's is no model */
    CHECK_EQ_INT(sim_profile_cache_keep(&c, "/r/models/y.lua", 1, &d, NULL, NULL), 0);
    char path[64] = "unchanged";
    sim_profile_cache_named(&c, "models", "y", path, sizeof path);
    CHECK(!strcmp(path, "unchanged"));
    sim_profile_cache_named(&c, "devices", "y", path, sizeof path);
    CHECK(!strcmp(path, "unchanged"));
    sim_profile_cache_named(&c, "models", "x", path, sizeof path);
    CHECK(!strcmp(path, "/r/models/x.lua"));
    /* up to the limit, not past it */
    for (int i = c.n; i < SIM_PROFILE_CACHE_MAX; i++) {
        char p[64];
        snprintf(p, sizeof p, "/r/devices/d%d.lua", i);
        CHECK_EQ_INT(sim_profile_cache_keep(&c, p, 1, &d, NULL, NULL), 0);
    }
    CHECK_EQ_INT(c.n, SIM_PROFILE_CACHE_MAX);
    CHECK_EQ_INT(sim_profile_cache_keep(&c, "/r/devices/more.lua", 1, &d, NULL, NULL), -1);
    sim_profile_cache_free(&c);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_profile_cache CONFIGS\n");
        return 2;
    }
    snprintf(root, sizeof root, "%s/fs_pcache_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    char d[600];
    snprintf(d, sizeof d, "%s/devices", root);
    CHECK(mkdir(d, 0700) == 0);
    snprintf(d, sizeof d, "%s/models", root);
    CHECK(mkdir(d, 0700) == 0);
    test_load_once(argv[1]);
    test_keep();
    char cmd[sizeof root + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return check_done("test_profile_cache");
}
