/*
 * test_runrec.c -- the run record without Lua (sim/out/runrec.h): run.json
 * written for three rows and read back: devices, models and policies listed
 * once each by value and referred to by index, reals written exactly (read
 * back to the same double), NaN as null, the seed's full 64 bits, a plug-in's
 * path and digest beside its policy, and the same bytes for the same record.
 */
#include "sim/out/runrec.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/out/rows.h"

#include "../../check.h"

#define STARTS(p, lit) (!strncmp((p), (lit), strlen(lit)))

/* The number after the first `"key": ` at or after from (NaN if none). */
static double number_after(const char *from, const char *key, const char **at)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = from ? strstr(from, pat) : NULL;
    if (at) *at = p;
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* The first double key of a params table. */
static const eng_param_desc *first_double(const eng_param_desc *t)
{
    for (; t && t->name; t++)
        if (t->type == ENG_PARAM_DOUBLE) return t;
    return NULL;
}

/* fs_runrec_list_traces: only the traces the rows ran on, in the cache's
 * order; a file inside home relative to it (home itself a prefix of another
 * directory is not inside), else as given; a synthetic trace by its
 * settings; at most cap. */
static void test_list_traces(void)
{
    sim_trace_cache c = {0};
    const char *keys[] = {"/proj/traces/a.h5", "/elsewhere/b.h5", "synth:1", "/projX/c.h5",
                          "/proj/unused.h5"};
    const char *names[] = {"a", "b", "s", "c", "u"};
    for (int i = 0; i < 5; i++) {
        sim_trace_entry *e = sim_trace_cache_add(&c, keys[i], names[i], NULL, 0);
        CHECK(e != NULL);
        if (!e) return;
        snprintf(e->given, sizeof e->given, "given_%s", names[i]);
        e->is_synth = i == 2;
    }
    fs_row rows[4];
    memset(rows, 0, sizeof rows);
    const char *ran[] = {"c", "a", "s", "b"};
    for (int i = 0; i < 4; i++)
        snprintf(rows[i].trace, sizeof rows[i].trace, "%s", ran[i]);
    fs_runrec_trace out[5];
    static char paths[5][PATH_MAX];
    int32_t n = fs_runrec_list_traces(&c, rows, 4, "/proj", out, paths, 5);
    CHECK_EQ_INT(n, 4);
    CHECK(!strcmp(out[0].name, "a") && !strcmp(out[0].path, "traces/a.h5"));
    CHECK(!strcmp(out[0].given, "given_a") && out[0].synth == NULL);
    CHECK(!strcmp(out[1].name, "b") && !strcmp(out[1].path, "given_b"));
    CHECK(!strcmp(out[2].name, "s") && out[2].path == NULL && out[2].synth == &c.e[2]->synth);
    CHECK(!strcmp(out[3].name, "c") && !strcmp(out[3].path, "given_c"));
    CHECK_EQ_INT(fs_runrec_list_traces(&c, rows, 4, NULL, out, paths, 5), 4);
    CHECK(!strcmp(out[0].path, "given_a"));
    CHECK_EQ_INT(fs_runrec_list_traces(&c, rows, 4, "/proj", out, paths, 2), 2);
    CHECK_EQ_INT(fs_runrec_list_traces(&c, rows, 1, "/proj", out, paths, 5), 1);
    CHECK(!strcmp(out[0].name, "c"));
    sim_trace_cache_free(&c);
}

/* fs_runrec_list_profiles: every profile kept, in order, borrowing the
 * cache's values; a path inside home relative to it (a mere prefix is not
 * inside), else as kept; at most cap. */
static void test_list_profiles(void)
{
    sim_profile_cache c = {0};
    sim_device d;
    sim_model m;
    memset(&d, 0, sizeof d);
    memset(&m, 0, sizeof m);
    CHECK_EQ_INT(sim_profile_cache_keep(&c, "/proj/configs/devices/a.lua", 1, &d, NULL, NULL), 0);
    CHECK_EQ_INT(sim_profile_cache_keep(&c, "/projX/models/b.lua", 0, NULL, NULL, &m), 0);
    CHECK_EQ_INT(sim_profile_cache_keep(&c, "/else/models/c.lua", 0, NULL, NULL, &m), 0);
    fs_runrec_profile out[3];
    static char paths[3][PATH_MAX];
    CHECK_EQ_INT(fs_runrec_list_profiles(&c, "/proj", out, paths, 3), 3);
    CHECK(out[0].device == 1 && !strcmp(out[0].path, "configs/devices/a.lua"));
    CHECK(out[0].dev == &c.e[0]->dev && out[0].vars == &c.e[0]->vars && out[0].model == NULL);
    CHECK(out[1].device == 0 && !strcmp(out[1].path, "/projX/models/b.lua"));
    CHECK(out[1].dev == NULL && out[1].vars == NULL && out[1].model == &c.e[1]->model);
    CHECK(!strcmp(out[2].path, "/else/models/c.lua"));
    CHECK_EQ_INT(fs_runrec_list_profiles(&c, NULL, out, paths, 3), 3);
    CHECK(!strcmp(out[0].path, "/proj/configs/devices/a.lua"));
    CHECK_EQ_INT(fs_runrec_list_profiles(&c, "/proj", out, paths, 2), 2);
    sim_profile_cache_free(&c);
}

int main(void)
{
    sim_device dev, dev2;
    eng_params_defaults(sim_device_keys(), &dev);
    const eng_param_desc *dk = first_double(sim_device_keys());
    CHECK(dk != NULL);
    if (!dk) return check_done("out/runrec");
    double third = 1.0 / 3.0;
    memcpy((char *)&dev + dk->offset, &third, sizeof third);
    dev2 = dev;
    double other = 0.1;
    memcpy((char *)&dev2 + dk->offset, &other, sizeof other);
    sim_model tgt, drf;
    eng_params_defaults(sim_model_keys(), &tgt);
    eng_params_defaults(sim_model_keys(), &drf);
    const eng_policy_desc *chain = eng_policy_lookup("chain");
    CHECK(chain != NULL);
    if (!chain) return check_done("out/runrec");
    void *p8 = calloc(1, chain->params_size), *p4 = calloc(1, chain->params_size);
    eng_params_defaults(chain->params, p8);
    eng_params_defaults(chain->params, p4);
    const eng_param_desc *k = eng_params_find(chain->params, "k");
    CHECK(k && k->type == ENG_PARAM_INT);
    int32_t k8 = 8, k4 = 4;
    if (k) {
        memcpy((char *)p8 + k->offset, &k8, sizeof k8);
        memcpy((char *)p4 + k->offset, &k4, sizeof k4);
    }

    fs_runrec *r = fs_runrec_new();
    CHECK(r != NULL);
    fs_runrec_point pt = {.device = &dev,
                          .device_name = "phone",
                          .target = &tgt,
                          .draft = &drf,
                          .target_name = "big",
                          .draft_name = "small",
                          .policy = chain,
                          .policy_params = p8};
    CHECK_EQ_INT(fs_runrec_add(r, &pt), 0); /* row 1 */
    pt.policy_params = p4;
    CHECK_EQ_INT(fs_runrec_add(r, &pt), 0); /* row 2: another policy, same phone */
    pt.device = &dev2;
    pt.draft = NULL;
    pt.draft_name = NULL;
    CHECK_EQ_INT(fs_runrec_add(r, &pt), 0); /* row 3: another phone, no draft */

    fs_row rows[3];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 3; i++) {
        snprintf(rows[i].trace, sizeof rows[i].trace, "code");
        snprintf(rows[i].accept, sizeof rows[i].accept, "greedy");
        snprintf(rows[i].runtime, sizeof rows[i].runtime, "auto");
        rows[i].dram_fraction = 0.1;
        rows[i].top_p = 0.9;
        rows[i].temperature = NAN;
        rows[i].max_new_tokens = 128;
        rows[i].trace_checksum = 0x0123456789abcdefULL;
    }
    rows[0].seed = UINT64_MAX;
    const char *argv[] = {"flashspec", "run", "s.lua"};
    const char *args[] = {"n=3"};
    fs_runrec_plugin pl = {chain, "/x/chain.so", "ab12"};
    fs_runrec_trace tr = {"code", "traces/data/code.h5", "traces/data/code.h5", NULL};
    fs_runrec_run run = {.version = "9.9",
                         .build_key = "9.9+k",
                         .argv = argv,
                         .argc = 3,
                         .script_path = "s.lua",
                         .script_hash = "h",
                         .args = args,
                         .n_args = 1,
                         .plugins = &pl,
                         .n_plugins = 1,
                         .traces = &tr,
                         .n_traces = 1};
    char *js = NULL, *js2 = NULL;
    size_t len = 0, len2 = 0;
    CHECK_EQ_INT(fs_runrec_json(r, &run, rows, 3, &js, &len), 0);
    CHECK_EQ_INT(fs_runrec_json(r, &run, rows, 3, &js2, &len2), 0);
    CHECK(js && js2 && len == len2 && !memcmp(js, js2, len)); /* the same bytes */
    if (!js) return check_done("out/runrec");
    CHECK(strlen(js) == len);
    CHECK(STARTS(js, "{\n  \"flashspec\": {\"version\": \"9.9\", \"build_key\": \"9.9+k\"},"));
    CHECK(strstr(js, "\"command\": [\"flashspec\", \"run\", \"s.lua\"]") != NULL);
    CHECK(strstr(js, "\"args\": {\"n\": \"3\"}") != NULL);
    CHECK(strstr(js, "\"copy\": null") != NULL); /* no script bytes given */
    CHECK(len > 2 && !strcmp(js + len - 2, "}\n"));

    /* objects listed once each by value */
    const char *devs = strstr(js, "\"devices\": ["), *models = strstr(js, "\"models\": [");
    const char *pols = strstr(js, "\"policies\": ["), *rows_at = strstr(js, "\"rows\": [");
    CHECK(devs && models && pols && rows_at && devs < models && models < pols && pols < rows_at);
    if (!(devs && models && pols && rows_at)) return check_done("out/runrec");
    CHECK_EQ_INT(count(js, "{\"name\": \"phone\""), 2); /* the two phones */
    CHECK_EQ_INT(count(js, "{\"name\": \"big\""), 1);   /* one target */
    CHECK_EQ_INT(count(js, "{\"name\": \"small\""), 1); /* one draft */
    CHECK_EQ_INT(count(js, "{\"name\": \"chain\""), 2); /* k = 8 and k = 4 */
    CHECK(strstr(pols, "\"plugin\": {\"path\": \"/x/chain.so\", \"sha256\": \"ab12\"}") != NULL);
    /* the device's real read back exactly, both phones */
    const char *at;
    CHECK(number_after(devs, dk->name, &at) == third);
    CHECK(at && at < models && number_after(at + 1, dk->name, &at) == 0.1);
    CHECK(at && at < models);
    CHECK(number_after(pols, "k", &at) == 8.0 && number_after(at + 1, "k", NULL) == 4.0);

    /* rows: indices into the objects, the point keys exact */
    const char *row1 = strstr(rows_at, "{\"row\": 1,"), *row2 = strstr(rows_at, "{\"row\": 2,");
    const char *row3 = strstr(rows_at, "{\"row\": 3,");
    CHECK(row1 && row2 && row3 && !strstr(rows_at, "{\"row\": 4,"));
    if (!(row1 && row2 && row3)) return check_done("out/runrec");
    CHECK(STARTS(row1, "{\"row\": 1, \"policy\": 0, \"device\": 0, \"target\": 0, \"draft\": 1,"));
    CHECK(STARTS(row2, "{\"row\": 2, \"policy\": 1, \"device\": 0,"));
    CHECK(
        STARTS(row3, "{\"row\": 3, \"policy\": 1, \"device\": 1, \"target\": 0, \"draft\": null,"));
    CHECK(strstr(row1, "\"dram_fraction\": 0.10000000000000001,") != NULL);
    CHECK(number_after(row1, "dram_fraction", NULL) == 0.1);
    CHECK(number_after(row1, "top_p", NULL) == 0.9);
    CHECK(strstr(row1, "\"temperature\": null") != NULL);
    CHECK(strstr(row1, "\"seed\": 18446744073709551615,") != NULL);
    CHECK(strstr(row2, "\"seed\": 0,") != NULL);
    CHECK(strstr(row1, "\"trace_checksum\": \"0x0123456789abcdef\"") != NULL);
    CHECK(strstr(js, "\"path\": \"traces/data/code.h5\"") != NULL);
    CHECK(strstr(js, "\"profiles\": [\n  ],") != NULL);
    free(js);
    free(js2);

    /* fewer rows than recorded: only those */
    CHECK_EQ_INT(fs_runrec_json(r, &run, rows, 2, &js, &len), 0);
    CHECK(js && strstr(js, "{\"row\": 2,") && !strstr(js, "{\"row\": 3,"));
    free(js);
    fs_runrec_free(r);
    fs_runrec_free(NULL);
    free(p8);
    free(p4);
    test_list_traces();
    test_list_profiles();
    return check_done("out/runrec");
}
