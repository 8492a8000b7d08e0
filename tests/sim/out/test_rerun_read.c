/*
 * test_rerun_read.c -- run.json read back for `flashspec rerun`, without the
 * script API (sim/out/sim_rerun_read.h):
 *   - the plan: the recorded script's arguments and the command line's
 *     limits and switches, a missing script.lua (66), a file that is not a
 *     run record (65, naming the byte);
 *   - the JSON reader's edges, each a one-line refusal: escapes, surrogate
 *     pairs and lone surrogates, control characters, numbers, nesting deeper
 *     than 64 levels, text after the value;
 *   - the profiles: a device (with its standing variants) and a model
 *     written by the run record's own writer (runrec.h) and read back into a
 *     profile cache with every value equal; a recorded value today's file
 *     does not hold is kept and named in one warning line; a record that
 *     lacks a key, holds a value no profile may, or has no "profiles"
 *     member is refused (65).
 * argv[1]: the project's configs directory.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sim/out/sim_rerun_read.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"
#include "sim/config/profile.h"
#include "sim/config/sim_profile_cache.h"
#include "sim/out/runrec.h"
#include "sim/out/sim_rerun.h"
#include "sim/sim_status.h"

static char dir[64];

static void put(const char *name, const char *text, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(text, 1, len, f);
    fclose(f);
}

static void put_json(const char *text)
{
    put("run.json", text, strlen(text));
}

/* The status of reading dir's plan; its message into err. */
static int plan_of(sim_rerun_plan *p, char *err, size_t n)
{
    err[0] = 0;
    return sim_rerun_plan_read(dir, p, err, n);
}

/* 1 when reading text as run.json is refused with 65 and a line holding want. */
static int refused(const char *text, const char *want)
{
    static sim_rerun_plan p;
    char err[1024];
    put_json(text);
    int rc = plan_of(&p, err, sizeof err);
    if (rc != SIM_DATA || !strstr(err, want) || strchr(err, '\n')) {
        fprintf(stderr, "  %.60s -> %d '%s' (want '%s')\n", text, rc, err, want);
        return 0;
    }
    return 1;
}

static void test_plan(void)
{
    static sim_rerun_plan p;
    char err[1024];
    CHECK_EQ_INT(plan_of(&p, err, sizeof err), SIM_MISSING); /* no script.lua yet */
    CHECK(strstr(err, "script.lua") && strstr(err, "a rerun needs the script"));
    put("script.lua", "return 1\n", 9);
    CHECK_EQ_INT(plan_of(&p, err, sizeof err), SIM_MISSING); /* no run.json */
    CHECK(strstr(err, "run.json: cannot read") != NULL);
    put_json("{\"script\": {\"path\": \"/nowhere/s.lua\", \"args\": {\"n\": \"3\", \"x\": 4}},"
             " \"command\": [\"flashspec\", \"run\", \"s.lua\", \"--unsafe\", \"--max-seconds\","
             " \"2.5\", \"--max-instructions\", \"1000\", \"--max-memory-mb\", \"64\","
             " \"--trace-cache-mb\", \"7\", \"--strict\"]}");
    CHECK_EQ_INT(plan_of(&p, err, sizeof err), SIM_OK);
    CHECK(!strcmp(p.verb, "run"));
    CHECK_EQ_INT(p.n_args, 1); /* a number is not a recorded --arg */
    CHECK(p.n_args == 1 && !strcmp(p.args[0], "n=3"));
    CHECK(p.unsafe == 1 && p.strict == 1);
    CHECK(p.max_seconds == 2.5 && p.max_instructions == 1000 && p.max_memory_mb == 64);
    CHECK_EQ_INT(p.trace_cache_mb, 7);
    CHECK(!strcmp(p.script_dir, dir)); /* the recorded directory is gone: DIR itself */
    char want[128];
    snprintf(want, sizeof want, "%s/script.lua", dir);
    CHECK(!strcmp(p.script, want));
    /* no command: a sweep with no limits */
    put_json("{\"script\": {\"path\": \"s.lua\"}}");
    CHECK_EQ_INT(plan_of(&p, err, sizeof err), SIM_OK);
    CHECK(!strcmp(p.verb, "sweep") && p.n_args == 0 && p.unsafe == 0 && p.max_seconds == 0);
    CHECK(refused("{\"command\": []}", "no \"script\" member"));
    CHECK(refused("[1, 2]", "not a JSON object"));
}

static void test_json(void)
{
    CHECK(refused("", "byte 1: unexpected end"));
    CHECK(refused("{\"script\": {}} x", "byte 16: text after the value"));
    CHECK(refused("{\"a\" 1}", "':' expected"));
    CHECK(refused("{1: 2}", "a member name expected"));
    CHECK(refused("[1 2]", "',' or ']' expected"));
    CHECK(refused("{\"a\": \"b", "unterminated string"));
    CHECK(refused("{\"a\": \"b\\", "unterminated string"));
    CHECK(refused("{\"a\": \"\\q\"}", "bad escape '\\q'"));
    CHECK(refused("{\"a\": \"\\u12g4\"}", "bad \\u escape"));
    CHECK(refused("{\"a\": \"\\ud800x\"}", "lone surrogate"));
    CHECK(refused("{\"a\": \"\\ud800\\u0041\"}", "lone surrogate"));
    CHECK(refused("{\"a\": \"\\udc00\"}", "lone surrogate"));
    CHECK(refused("{\"a\": \"\\ud800\\ue000\"}", "lone surrogate"));
    CHECK(refused("{\"a\": \"x\ty\"}", "control character in a string"));
    CHECK(refused("{\"a\": -}", "unexpected character"));
    CHECK(refused("{\"a\": 1.2.3}", "bad number '1.2.3'"));
    CHECK(refused("{\"a\": nul}", "unexpected character"));
    /* a number of 63 characters is read, 64 are not */
    char num[200] = "{\"script\": {}, \"a\": 1";
    size_t at0 = strlen(num);
    for (int digits = 63; digits <= 64; digits++) {
        memset(num + at0, '0', (size_t)digits - 1);
        strcpy(num + at0 + digits - 1, "}");
        if (digits == 64) CHECK(refused(num, "number too long"));
        static sim_rerun_plan p;
        char err[512];
        put_json(num);
        if (digits == 63) CHECK_EQ_INT(plan_of(&p, err, sizeof err), SIM_OK);
    }
    /* 64 levels inside the object are read; 65 are not */
    char deep[256];
    for (int levels = 64; levels <= 65; levels++) {
        int at = snprintf(deep, sizeof deep, "{\"script\": {}, \"x\": ");
        for (int i = 0; i < levels; i++)
            deep[at++] = '[';
        for (int i = 0; i < levels; i++)
            deep[at++] = ']';
        snprintf(deep + at, sizeof deep - (size_t)at, "}");
        static sim_rerun_plan p;
        char err[512];
        put_json(deep);
        CHECK_EQ_INT(plan_of(&p, err, sizeof err), levels == 64 ? SIM_OK : SIM_DATA);
        CHECK(levels == 64 || strstr(err, "nested too deeply"));
    }
    /* escapes decode: a surrogate pair to one 4-byte character, \u00e9 to two bytes */
    static sim_rerun_plan p;
    char err[512];
    put_json("{\"script\": {\"args\": {\"k\": \"\\ud83d\\ude00\\u00e9\\n\\\"\\/\"}}}");
    CHECK_EQ_INT(plan_of(&p, err, sizeof err), SIM_OK);
    CHECK(p.n_args == 1 && !strcmp(p.args[0], "k=\xF0\x9F\x98\x80\xC3\xA9\n\"/"));
}

/* run.json recording the cache's profiles (absolute paths), into dir. */
static void write_record(const sim_profile_cache *c)
{
    static fs_runrec_profile prof[4];
    static char paths[4][PATH_MAX];
    int32_t n = fs_runrec_list_profiles(c, NULL, prof, paths, 4);
    fs_runrec *r = fs_runrec_new();
    fs_runrec_run run = {.version = "t", .build_key = "t", .script_path = "s.lua",
                         .script_hash = "h", .profiles = prof, .n_profiles = n};
    char *js = NULL;
    size_t len = 0;
    CHECK(r && fs_runrec_json(r, &run, NULL, 0, &js, &len) == 0);
    if (js) put("run.json", js, len);
    free(js);
    fs_runrec_free(r);
}

/* What sim_rerun_prefill wrote to stderr, into out. */
static int prefill_quietly(sim_profile_cache *c, const char *record, char *out, size_t n,
                           char *err, size_t errlen)
{
    char tmpf[128];
    snprintf(tmpf, sizeof tmpf, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(tmpf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    int rc = sim_rerun_prefill(c, record, 0, err, errlen);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(tmpf, "rb");
    size_t got = f ? fread(out, 1, n - 1, f) : 0;
    out[got] = 0;
    if (f) fclose(f);
    return rc;
}

static void test_profiles(const char *configs)
{
    char devp[1024], modp[1024], err[1024], said[4096], record[256];
    snprintf(devp, sizeof devp, "%s/devices/oneplus12.lua", configs);
    snprintf(modp, sizeof modp, "%s/models/qwen3-8b-q4_0.lua", configs);
    snprintf(record, sizeof record, "%s/run.json", dir);
    char rdev[PATH_MAX], rmod[PATH_MAX];
    CHECK(realpath(devp, rdev) && realpath(modp, rmod));
    sim_profile_cache c = {0}, back = {0};
    static sim_device dev;
    static sim_device_variants vars;
    static sim_model model;
    CHECK_EQ_INT(sim_profile_cache_device(&c, rdev, &dev, &vars, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(sim_profile_cache_model(&c, rmod, &model, err, sizeof err), SIM_OK);
    CHECK(vars.n >= 1); /* the phone has standing variants */
    write_record(&c);
    CHECK_EQ_INT(prefill_quietly(&back, record, said, sizeof said, err, sizeof err), SIM_OK);
    CHECK(said[0] == 0); /* today's files are what was recorded: no warning */
    CHECK_EQ_INT(back.n, 2);
    const sim_profile_entry *d = sim_profile_cache_find(&back, rdev, 1);
    const sim_profile_entry *m = sim_profile_cache_find(&back, rmod, 0);
    char msg[1536];
    CHECK(d && !sim_out_param_diff(sim_device_keys(), &d->dev, &dev, msg, sizeof msg));
    CHECK(m && !sim_out_param_diff(sim_model_keys(), &m->model, &model, msg, sizeof msg));
    CHECK(d && d->vars.n == vars.n);
    for (int32_t i = 0; d && i < vars.n && i < d->vars.n; i++) {
        CHECK(!strcmp(d->vars.v[i].name, vars.v[i].name));
        CHECK(!memcmp(d->vars.v[i].set, vars.v[i].set, sizeof vars.v[i].set));
        static sim_device a, b; /* each variant applied gives the same phone */
        a = dev, b = dev;
        sim_device_variant_apply(&d->vars.v[i], &a);
        sim_device_variant_apply(&vars.v[i], &b);
        CHECK(!sim_out_param_diff(sim_device_keys(), &a, &b, msg, sizeof msg));
    }
    sim_profile_cache_free(&back);

    /* a recorded value today's file does not hold: kept, and named in one line */
    const eng_param_desc *k = eng_params_find(sim_device_keys(), "read_gbps");
    CHECK(k && k->type == ENG_PARAM_DOUBLE && c.n == 2);
    if (!k || c.n != 2) return;
    double today, rec;
    memcpy(&today, (char *)&c.e[0]->dev + k->offset, sizeof today);
    rec = today * 2;
    memcpy((char *)&c.e[0]->dev + k->offset, &rec, sizeof rec);
    write_record(&c);
    CHECK_EQ_INT(prefill_quietly(&back, record, said, sizeof said, err, sizeof err), SIM_OK);
    CHECK(strstr(said, "read_gbps") && strstr(said, "differs from what run.json recorded"));
    CHECK(strstr(said, "oneplus12.lua") && strchr(said, '\n') == said + strlen(said) - 1);
    d = sim_profile_cache_find(&back, rdev, 1);
    double got = 0;
    if (d) memcpy(&got, (const char *)&d->dev + k->offset, sizeof got);
    CHECK(d && got == rec); /* the rerun runs the recorded value */
    sim_profile_cache_free(&back);

    /* a damaged record: a key gone, a value no profile may hold */
    char text[1 << 16];
    FILE *f = fopen(record, "rb");
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[len] = 0;
    char *at = strstr(text, "\"read_gbps\": ");
    CHECK(at != NULL && len < sizeof text - 1);
    if (!at) return;
    char *comma = strchr(at, ',');
    static char edited[1 << 16];
    snprintf(edited, sizeof edited, "%.*s%s", (int)(at - text), text, comma + 2);
    put_json(edited);
    CHECK_EQ_INT(prefill_quietly(&back, record, said, sizeof said, err, sizeof err), SIM_DATA);
    CHECK(strstr(err, "lacks 'read_gbps'") && strstr(err, "run.json"));
    sim_profile_cache_free(&back);
    snprintf(edited, sizeof edited, "%.*s\"read_gbps\": -1%s", (int)(at - text), text, comma);
    put_json(edited);
    CHECK_EQ_INT(prefill_quietly(&back, record, said, sizeof said, err, sizeof err), SIM_DATA);
    CHECK(strstr(err, "read_gbps") && strstr(err, "run.json") && !strchr(err, '\n'));
    CHECK_EQ_INT(back.n, 0); /* nothing of the device kept */
    sim_profile_cache_free(&back);
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{\"script\": {}}", "no \"profiles\" member"},
        {"{\"profiles\": [1]}", "profile 1 is not an object"},
        {"{\"profiles\": [{\"kind\": \"model\"}]}", "a profile without a \"path\""},
        {"{\"profiles\": [{\"kind\": \"model\", \"path\": \"m.lua\"}]}", "has no \"values\""},
        {"{\"profiles\": [{\"kind\": \"model\", \"path\": \"m.lua\", \"values\": {\"nope\": 1}}]}",
         "nope"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_json(bad[i].json);
        int rc = prefill_quietly(&back, record, said, sizeof said, err, sizeof err);
        CHECK_EQ_INT(rc, SIM_DATA);
        if (!strstr(err, bad[i].want)) fprintf(stderr, "  case %zu: '%s'\n", i, err);
        CHECK(strstr(err, bad[i].want) != NULL);
        sim_profile_cache_free(&back);
    }
    sim_profile_cache_free(&c);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_rerun_read CONFIGS\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "/tmp/fs-rerun-read-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_plan();
    test_json();
    test_profiles(argv[1]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
    return check_done("out/rerun_read");
}
