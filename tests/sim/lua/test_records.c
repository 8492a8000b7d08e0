/*
 * test_records.c -- what a run records says exactly what ran, or refuses:
 *   - run.json's reals read back bit for bit (35/36, 0.1 + 0.2, 1000/3), its
 *     plug-in records carry path and SHA-256 (fs_runrec_json);
 *   - list values with a hole are found, and where (slp_list_gap);
 *   - the names a run reserves in its output directory, compared without
 *     regard to case (sim_out_name_reserved, sim_run_add_output);
 *   - policy names taken by a built-in, compared without regard to case
 *     (sim_run_policy_name_taken).
 */
#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pol_sequoia.h"
#include "sim/lua/api_impl.h"
#include "sim/config/lparams.h"
#include "sim/out/rows.h"
#include "sim/out/runrec.h"
#include "sim/out/sim_out.h"
#include "sim/out/sim_strbuf.h"

#include "../../check.h"

/* ------------------------------------------------------------------- lists */

/* slp_list_gap on the table the chunk src returns. */
static int gap_of(lua_State *L, const char *src, lua_Integer *n, char *why, size_t wl)
{
    if (luaL_dostring(L, src) != LUA_OK) return -9;
    int rc = slp_list_gap(L, -1, n, why, wl);
    lua_pop(L, 1);
    return rc;
}

static void test_lists(void)
{
    lua_State *L = luaL_newstate();
    lua_Integer n = -1;
    char why[64];
    CHECK(gap_of(L, "return { 2, 4, 8 }", &n, why, sizeof why) == 0 && n == 3);
    CHECK(gap_of(L, "return {}", &n, why, sizeof why) == 0 && n == 0);
    CHECK(gap_of(L, "return { name = 1 }", &n, why, sizeof why) == 0 && n == 0);
    CHECK(gap_of(L, "return { 1, 2, x = 3 }", &n, why, sizeof why) == 0 && n == 2);
    CHECK(gap_of(L, "return { [1] = 2, [3] = 4 }", &n, why, sizeof why) == 1);
    CHECK(strcmp(why, "no value at [2] of 3") == 0);
    CHECK(gap_of(L, "return { [2] = 4 }", &n, why, sizeof why) == 1);
    CHECK(strcmp(why, "no value at [1] of 2") == 0);
    CHECK(gap_of(L, "return { 1, 2, 3, [5] = 5 }", &n, why, sizeof why) == 1);
    CHECK(strcmp(why, "no value at [4] of 5") == 0);
    CHECK(gap_of(L, "return { [0] = 1, 2 }", &n, why, sizeof why) == 1);
    CHECK(strstr(why, "[0], not a list position") != NULL);
    CHECK(gap_of(L, "return { 1, [1.5] = 2 }", &n, why, sizeof why) == 1);
    CHECK(strstr(why, "[1.5]") != NULL);
    CHECK(gap_of(L, "return { 1, 2, [-1] = 3 }", &n, why, sizeof why) == 1);
    /* a long list made with a hole at its end */
    CHECK(gap_of(L, "local t = {} for i = 1, 100 do t[i] = i end t[100] = nil t[101] = 1 "
                    "return t",
                 &n, why, sizeof why) == 1);
    CHECK(strcmp(why, "no value at [100] of 101") == 0);
    lua_close(L);
}

/* ---------------------------------------------------------------- run.json */

/* The number after "\"key\": " in the first object of json that has it. */
static double json_num(const char *json, const char *key)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

static void test_run_json(void)
{
    fs_runrec *rec = fs_runrec_new();
    sim_device dev;
    sim_model tgt;
    eng_params_defaults(sim_device_keys(), &dev);
    eng_params_defaults(sim_model_keys(), &tgt);
    dev.npu_gflops = 1000.0 / 3.0;
    tgt.layers = 36;
    fs_row row;
    memset(&row, 0, sizeof row);
    row.dram_fraction = 35.0 / 36.0;
    row.top_p = 0.1 + 0.2;
    row.temperature = 1.0 / 3.0;
    snprintf(row.trace, sizeof row.trace, "t");
    const eng_policy_desc *chain = eng_policy_lookup("chain");
    unsigned char params[4096];
    eng_params_defaults(chain->params, params);
    fs_runrec_point pt = {.device = &dev,
                          .device_name = "phone",
                          .target = &tgt,
                          .target_name = "m",
                          .policy = chain,
                          .policy_params = params};
    CHECK(rec && fs_runrec_add(rec, &pt) == 0);
    fs_runrec_plugin plug = {chain, "/x/libp.so",
                             "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"};
    fs_runrec_run run = {.version = "v", .build_key = "k", .plugins = &plug, .n_plugins = 1};
    char *json = NULL;
    size_t len = 0;
    CHECK(fs_runrec_json(rec, &run, &row, 1, &json, &len) == 0 && json);
    if (json) {
        /* every real of the record reads back as the value it records */
        CHECK(json_num(json, "dram_fraction") == 35.0 / 36.0);
        CHECK(json_num(json, "top_p") == 0.1 + 0.2);
        CHECK(json_num(json, "temperature") == 1.0 / 3.0);
        CHECK(json_num(json, "npu_gflops") == 1000.0 / 3.0);
        CHECK(strlen(json) == len);
        /* the plug-in: listed, and named by the policy it gives */
        CHECK(strstr(json, "\"plugins\": [\n    {\"policy\": \"chain\", \"path\": \"/x/libp.so\", "
                           "\"sha256\": \"0011") != NULL);
        CHECK(strstr(json, "\"plugin\": {\"path\": \"/x/libp.so\", \"sha256\": \"0011") != NULL);
    }
    free(json);
    run.n_plugins = 0; /* none: an empty list, no policy names one */
    CHECK(fs_runrec_json(rec, &run, &row, 1, &json, &len) == 0 && json);
    if (json) CHECK(strstr(json, "\"plugins\": []") && !strstr(json, "\"plugin\":"));
    free(json);
    fs_runrec_free(rec);
}

/* ------------------------------------------------------------------- names */

static void test_reserved_names(void)
{
    static const struct {
        const char *name, *stem;
    } cases[] = {
        {"results.csv", "results"}, {"results.md", "results"},    {"Results.v2.md", "results"},
        {"RESULTS.H5", "results"},  {"script.lua", "script"},     {"Script.lua", "script"},
        {"run.json", "run"},        {"run.md", "run"},            {"points", "points"},
        {"report.md", "report"},    {"fidelity.csv", "fidelity"}, {".hidden.md", "."},
        {"", "."},                  {"resultsx.md", NULL},        {"my.results.md", NULL},
        {"calibration.md", NULL},   {"scripts.lua", NULL},        {"runs.csv", NULL},
        {"oneplus12-fit.lua", NULL}, {"res.md", NULL},           {"r.csv", NULL},
        {"point.lua", NULL},        {"Run.Json", "run"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = sim_out_name_reserved(cases[i].name);
        CHECK(cases[i].stem ? got && strcmp(got, cases[i].stem) == 0 : got == NULL);
        if (cases[i].stem ? !got || strcmp(got, cases[i].stem) : got != NULL)
            fprintf(stderr, "  reserved('%s') = %s\n", cases[i].name, got ? got : "NULL");
    }
    /* the last guard: the queue refuses reserved and taken names */
    fs_api a;
    memset(&a, 0, sizeof a);
    CHECK_EQ_INT(sim_run_add_output(&a, "script.lua", "x", 1), SIM_RUN_OUTPUT_RESERVED);
    CHECK_EQ_INT(sim_run_add_output(&a, "cal.md", "x", 1), 0);
    CHECK_EQ_INT(sim_run_add_output(&a, "CAL.md", "y", 1), SIM_RUN_OUTPUT_TAKEN);
    CHECK_EQ_INT(sim_run_add_output(&a, "cal.csv", "y", 1), 0);
    CHECK_EQ_INT(a.n_outputs, 2);
    CHECK(a.n_outputs == 2 && strcmp(a.outputs[0].data, "x") == 0);
    for (int32_t i = 0; i < a.n_outputs; i++)
        free(a.outputs[i].data);
    free(a.outputs);
    /* policy names: built-ins and `lua`, without regard to case */
    const char *t = sim_run_policy_name_taken(&a, "Flash_AR");
    CHECK(t && strcmp(t, "flash_ar") == 0);
    t = sim_run_policy_name_taken(&a, "flash_ar");
    CHECK(t && strcmp(t, "flash_ar") == 0);
    t = sim_run_policy_name_taken(&a, "LUA");
    CHECK(t && strcmp(t, "lua") == 0);
    t = sim_run_policy_name_taken(&a, "SEQUOIA");
    CHECK(t && strcmp(t, "sequoia") == 0);
    CHECK(sim_run_policy_name_taken(&a, "flash_ar2") == NULL);
    CHECK(sim_run_policy_name_taken(&a, "chain_lua") == NULL);
}

int main(void)
{
    test_lists();
    test_run_json();
    test_reserved_names();
    return check_done("lua/records");
}
