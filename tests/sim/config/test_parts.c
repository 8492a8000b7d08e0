/*
 * test_parts.c -- a phone made of parts (sim/config/parts.h).
 *
 *   test_parts SHIPPED_CONFIGS FLAT_ONEPLUS12
 *
 * The composition alone (no Lua): bounds, required keys, ranges that must
 * hold, comment citations, key kinds.  Then parts files in a scratch
 * configuration: resolution order, a derived file swapping parts, transfer
 * rules with their ranges, the range variants, provenance (part, fit, base,
 * override, default) and every malformed part or device with its exit code,
 * file and line.  Then the shipped devices: the OnePlus 12 resolves to the
 * flat profile it replaced, value for value and variant for variant; every
 * value of every shipped device has a source and a citation; every part file
 * loads; the 8 Elite's carried fits follow the stated rules.  Last, a faster
 * part never makes a cycle slower: the same cycles priced on device pairs
 * that differ in one part.
 */
#include "sim/config/cfg_impl.h"
#include "sim/config/parts.h"
#include "sim/hw/sim_hw.h"
#include "sim/config/lparams.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"

static char scratch[] = "/tmp/fs_parts_XXXXXX";

static size_t key_row(const char *name)
{
    const eng_param_desc *d = eng_params_find(sim_device_keys(), name);
    CHECK(d != NULL);
    return d ? (size_t)(d - sim_device_keys()) : 0;
}

static double dval(const void *p, const char *key)
{
    double v;
    memcpy(&v, (const char *)p + sim_device_keys()[key_row(key)].offset, sizeof v);
    return v;
}

static void put_file(const char *dir, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *s = strchr(path + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        mkdir(path, 0700);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* ---- the composition without Lua ---- */

static void part_with(cfg_part *p, cfg_meta *m, int kind, const char *name,
                      const char *const *keys, const double *vals)
{
    memset(p, 0, sizeof *p);
    memset(m, 0, sizeof *m);
    m->part_kind = kind;
    p->used = 1;
    p->name = name;
    p->path = name;
    p->meta = m;
    for (int i = 0; keys[i]; i++) {
        size_t r = key_row(keys[i]);
        memcpy((char *)&p->vals + sim_device_keys()[r].offset, &vals[i], sizeof vals[i]);
        p->set[r] = 1;
        snprintf(m->cite[r], sizeof m->cite[r], "cited %s", keys[i]);
        m->cited[r] = 1;
    }
}

static void test_compose(void)
{
    static const char *const soc_k[] = {"npu_gbps", "npu_gflops", "launch_us", "sync_us",
                                        "cpu_gbps", "cpu_gflops", NULL};
    static const double soc_v[] = {90, 1000, 100, 100, 40, 300};
    static const char *const fl_k[] = {"read_gbps", NULL};
    static const double fl_v[] = {2};
    static const char *const dr_k[] = {"dram_gbps", NULL};
    static const double dr_v[] = {60};
    cfg_part parts[SIM_PART_KINDS];
    cfg_meta *m = calloc(SIM_PART_KINDS, sizeof *m);
    sim_profile_sources *src = calloc(1, sizeof *src);
    sim_device_variants vars;
    CHECK(m && src);
    if (!m || !src) return;
    part_with(&parts[SIM_PART_SOC], &m[0], SIM_PART_SOC, "s", soc_k, soc_v);
    part_with(&parts[SIM_PART_FLASH], &m[1], SIM_PART_FLASH, "f", fl_k, fl_v);
    part_with(&parts[SIM_PART_DRAM], &m[2], SIM_PART_DRAM, "d", dr_k, dr_v);
    memset(&parts[SIM_PART_RUNTIME], 0, sizeof parts[SIM_PART_RUNTIME]);
    sim_device dev;
    memset(&dev, 0, sizeof dev);
    unsigned char taken[CFG_KEYS_CAP] = {0};
    char err[1024] = "";
    /* dram_budget_gb is required and no part gives it */
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 0, NULL, "dev.lua", 3, err, sizeof err) ==
          SIM_CONFIG);
    CHECK(strstr(err, "dev.lua:3:") == err && strstr(err, "missing required key 'dram_budget_gb'"));
    /* the file sets it: the soc's NPU read (90) is bounded by the memory's 60 */
    memset(taken, 0, sizeof taken);
    dev.dram_budget_gb = 4;
    taken[key_row("dram_budget_gb")] = 1;
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 0, src, "dev.lua", 3, err, sizeof err) ==
          SIM_OK);
    CHECK(dev.npu_gbps == 60 && dev.cpu_gbps == 40 && dev.read_gbps == 2 && dev.dram_budget_gb == 4);
    CHECK(strstr(src->key[key_row("npu_gbps")].note, "bounded by dram_gbps 60") != NULL);
    CHECK(src->key[key_row("npu_gbps")].kind == SIM_SRC_PART);
    CHECK(src->key[key_row("dram_budget_gb")].kind != SIM_SRC_PART);
    CHECK(src->key[key_row("request_kb")].kind == SIM_SRC_DEFAULT && dev.request_kb == 512);
    CHECK(vars.n == 0);
    /* a file that sets npu_gbps is not bounded: its value stands (the check rejects it later) */
    memset(taken, 0, sizeof taken);
    dev.npu_gbps = 70;
    taken[key_row("dram_budget_gb")] = taken[key_row("npu_gbps")] = 1;
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 0, NULL, "dev.lua", 3, err, sizeof err) ==
          SIM_OK);
    CHECK(dev.npu_gbps == 70);
    /* a range of the soc's own value that does not hold it */
    size_t g = key_row("cpu_gflops");
    m[0].has_range[g] = 1;
    m[0].lo[g] = 100;
    m[0].hi[g] = 200;
    memset(taken, 0, sizeof taken);
    taken[key_row("dram_budget_gb")] = 1;
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 0, NULL, "dev.lua", 3, err, sizeof err) ==
          SIM_CONFIG);
    CHECK(strstr(err, "s:") == err && strstr(err, "ranges.cpu_gflops") &&
          strstr(err, "does not hold the value 300"));
    /* one that holds it: both range variants, rates low when slow and high when fast */
    m[0].hi[g] = 300;
    size_t l = key_row("launch_us");
    m[0].has_range[l] = 1;
    m[0].lo[l] = 50;
    m[0].hi[l] = 150;
    memset(taken, 0, sizeof taken);
    taken[key_row("dram_budget_gb")] = 1;
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 0, src, "dev.lua", 3, err, sizeof err) ==
          SIM_OK);
    CHECK(vars.n == 2 && !strcmp(vars.v[0].name, "parts_fast") &&
          !strcmp(vars.v[1].name, "parts_slow"));
    CHECK(dval(&vars.v[0].delta, "cpu_gflops") == 300 && dval(&vars.v[0].delta, "launch_us") == 50);
    CHECK(dval(&vars.v[1].delta, "cpu_gflops") == 100 && dval(&vars.v[1].delta, "launch_us") == 150);
    CHECK(vars.v[1].set[g] && vars.v[1].set[l] && !vars.v[1].set[key_row("read_gbps")]);
    CHECK(src->key[g].has_range && src->key[g].lo == 100 && src->key[g].hi == 300);
    /* a file that sets the key drops the part's range */
    memset(taken, 0, sizeof taken);
    taken[key_row("dram_budget_gb")] = taken[g] = taken[l] = 1;
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 0, src, "dev.lua", 3, err, sizeof err) ==
          SIM_OK);
    CHECK(vars.n == 0 && !src->key[g].has_range);
    /* declared variants and the range variants together: at most the cap */
    memset(taken, 0, sizeof taken);
    taken[key_row("dram_budget_gb")] = 1;
    memset(&vars, 0, sizeof vars);
    vars.n = SIM_PROFILE_MAX_VARIANTS - 1;
    for (int32_t i = 0; i < vars.n; i++)
        snprintf(vars.v[i].name, sizeof vars.v[i].name, "v%d", (int)i);
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 1, NULL, "dev.lua", 3, err, sizeof err) ==
          SIM_CONFIG);
    CHECK(strstr(err, "exceed") != NULL);
    vars.n = 1;
    snprintf(vars.v[0].name, sizeof vars.v[0].name, "parts_slow");
    memset(taken, 0, sizeof taken);
    taken[key_row("dram_budget_gb")] = 1;
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 1, NULL, "dev.lua", 3, err, sizeof err) ==
          SIM_CONFIG);
    CHECK(strstr(err, "'parts_slow'") != NULL);
    /* the memory's peak bounds a read rate's range with its value */
    size_t cb = key_row("cpu_gbps");
    m[0].has_range[cb] = 1;
    m[0].lo[cb] = 30;
    m[0].hi[cb] = 80;
    memset(taken, 0, sizeof taken);
    taken[key_row("dram_budget_gb")] = 1;
    CHECK(cfg_compose_device(&dev, taken, parts, &vars, 0, src, "dev.lua", 3, err, sizeof err) ==
          SIM_OK);
    CHECK(dev.cpu_gbps == 40 && src->key[cb].lo == 30 && src->key[cb].hi == 60);
    CHECK(vars.n == 2 && dval(&vars.v[0].delta, "cpu_gbps") == 60);
    free(m);
    free(src);
}

static void test_helpers(void)
{
    static const char text[] = "-- head\n"
                               "return {\n"
                               "  -- the rate of x\n"
                               "  -- (source A)\n"
                               "  a = 1,\n"
                               "  b = 2,\n"
                               "\n"
                               "  c = 3, -- trailing -- note\n"
                               "  d = \"--x\",\n"
                               "}\n";
    char out[64];
    cfg_comment_cite(text, 5, out, sizeof out);
    CHECK(!strcmp(out, "the rate of x (source A)"));
    cfg_comment_cite(text, 6, out, sizeof out); /* code above, then the same comment block */
    CHECK(!strcmp(out, "the rate of x (source A)"));
    cfg_comment_cite(text, 8, out, sizeof out);
    CHECK(!strcmp(out, "trailing -- note"));
    cfg_comment_cite(text, 9, out, sizeof out); /* "--" inside a string, none above */
    CHECK(!strcmp(out, ""));
    cfg_comment_cite(text, 99, out, sizeof out);
    CHECK(!strcmp(out, ""));
    char small[12];
    cfg_comment_cite(text, 5, small, sizeof small);
    CHECK(strlen(small) == 11 && !strcmp(small + 8, "..."));
    const eng_param_desc *k = sim_device_keys();
    CHECK(cfg_key_direction(&k[key_row("read_gbps")]) == 1);
    CHECK(cfg_key_direction(&k[key_row("npu_gflops")]) == 1);
    CHECK(cfg_key_direction(&k[key_row("launch_us")]) == -1);
    CHECK(cfg_key_direction(&k[key_row("verify_setup_streamed_us_per_gb")]) == -1);
    CHECK(cfg_key_direction(&k[key_row("request_kb")]) == 0);
    CHECK(cfg_key_direction(&k[key_row("flash_active_w")]) == 0);
    CHECK(sim_part_key_allowed(SIM_PART_FLASH, "read_gbps") &&
          !sim_part_key_allowed(SIM_PART_SOC, "read_gbps"));
    CHECK(sim_part_key_allowed(SIM_PART_SOC, "npu_gflops") &&
          sim_part_key_allowed(SIM_PART_RUNTIME, "npu_gflops"));
    for (int kind = 0; kind < SIM_PART_KINDS; kind++)
        CHECK(!sim_part_key_allowed(kind, "name") && !sim_part_key_allowed(kind, "dram_budget_gb"));
    char kinds[96];
    sim_part_key_kinds("request_latency_us", kinds, sizeof kinds);
    CHECK(strstr(kinds, "flash") && strstr(kinds, "runtime") && !strstr(kinds, "soc"));
    CHECK(sim_part_kind_find("dram") == SIM_PART_DRAM && sim_part_kind_find("sco") == -1);
    /* every key of every kind is a device key */
    for (int kind = 0; kind < SIM_PART_KINDS; kind++)
        for (const eng_param_desc *d = k; d->name; d++)
            if (sim_part_key_allowed(kind, d->name)) CHECK(eng_params_find(k, d->name) == d);
}

/* ---- parts files in a scratch configuration ---- */

static const char *const good_files[][2] = {
    {"parts/soc/ref.lua",
     "return {\n  cpu_gbps = 20,\n  cpu_gflops = 200,\n  npu_gbps = 50,\n"
     "  cite = { cpu_gbps = 'A', cpu_gflops = 'B', npu_gbps = 'C' },\n}\n"},
    {"parts/soc/fast.lua",
     "return {\n  cpu_gbps = 30,\n  cpu_gflops = 300,\n  npu_gbps = 60,\n"
     "  speed_over = 'ref',\n  npu_speed = 2,\n  cpu_speed = 2,\n"
     "  cite = { cpu_gbps = 'A2', cpu_gflops = 'B2', npu_gbps = 'C2', npu_speed = 'D',"
     " cpu_speed = 'E' },\n"
     "  ranges = { cpu_gbps = { 20, 40 }, npu_speed = { 1, 2 }, cpu_speed = { 1, 2 } },\n}\n"},
    {"parts/soc/other.lua",
     "return {\n  cpu_gbps = 30,\n  cpu_gflops = 300,\n  npu_gbps = 60,\n"
     "  cite = { cpu_gbps = 'A', cpu_gflops = 'B', npu_gbps = 'C' },\n}\n"},
    {"parts/flash/f1.lua",
     "return {\n  read_gbps = 2,\n  cite = { read_gbps = 'F1', request_latency_us = 'none' },\n"
     "  ranges = { request_latency_us = { 5, 30 } },\n}\n"}, /* the runtime's fit was made on it */
    {"parts/flash/f2.lua",
     "return {\n  read_gbps = 4,\n"
     "  cite = { read_gbps = 'F2', request_latency_us = 'no figure' },\n"
     "  ranges = { request_latency_us = { 10, 30 } },\n}\n"},
    {"parts/dram/d1.lua", "return {\n  dram_gbps = 60,\n  cite = { dram_gbps = 'D1' },\n}\n"},
    {"parts/runtime/rt.lua",
     "return {\n  npu_gflops = 100,\n  launch_us = 100,\n  sync_us = 100,\n"
     "  request_latency_us = 10,\n  verify_graph_us = 1000,\n"
     "  variants = { alt = { npu_gflops = 50 } },\n"
     "  fitted_on = { soc = 'ref', flash = 'f1', dram = 'd1' },\n"
     "  transfer = { npu_gflops = 'npu', verify_graph_us = '/cpu', launch_us = '~/cpu' },\n"
     "  cite = { sync_us = 'S' },\n"
     "  fit = { npu_gflops = 'fit N', launch_us = 'fit L', request_latency_us = 'fit R',"
     " verify_graph_us = 'fit G' },\n}\n"},
    {"devices/phone.lua",
     "return {\n  parts = { soc = 'ref', flash = 'f1', dram = 'd1', runtime = 'rt' },\n"
     "  -- the budget\n  dram_budget_gb = 4,\n}\n"},
    {"devices/fastphone.lua",
     "return {\n  base = 'phone',\n  parts = { soc = 'fast', flash = 'f2' },\n"
     "  cpu_gflops = 333, -- measured here\n  fit = { cpu_gflops = 'a fit of this phone' },\n}\n"},
    {"devices/flat.lua",
     "return {\n  read_gbps = 1, dram_budget_gb = 1, dram_gbps = 10, npu_gbps = 10,\n"
     "  npu_gflops = 10, launch_us = 1, sync_us = 1, cpu_gbps = 5, cpu_gflops = 5,\n}\n"},
};

static int load_dev(const char *name, sim_device *d, sim_device_variants *v,
                    sim_profile_sources *s, char *err, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/devices/%s.lua", scratch, name);
    err[0] = 0;
    return sim_profile_explain_device(path, d, v, s, err, n);
}

static void test_good(void)
{
    sim_device d;
    sim_device_variants v;
    sim_profile_sources *s = calloc(1, sizeof *s);
    char err[1024];
    CHECK(s != NULL);
    if (!s) return;
    /* fitted_on this very hardware: fits exact, no transfer, no range */
    int rc = load_dev("phone", &d, &v, s, err, sizeof err);
    if (rc) fprintf(stderr, "phone: %s\n", err);
    CHECK(rc == SIM_OK && !strcmp(d.name, "phone"));
    CHECK(d.npu_gflops == 100 && d.verify_graph_us == 1000 && d.launch_us == 100 &&
          d.request_latency_us == 10 && d.read_gbps == 2 && d.npu_gbps == 50);
    CHECK(v.n == 1 && !strcmp(v.v[0].name, "alt") && dval(&v.v[0].delta, "npu_gflops") == 50);
    size_t ng = key_row("npu_gflops"), rl = key_row("request_latency_us");
    CHECK(s->key[ng].kind == SIM_SRC_FIT && !strcmp(s->key[ng].part, "runtime/rt") &&
          !strcmp(s->key[ng].cite, "fit N") && s->key[ng].line == 2 && !s->key[ng].has_range);
    CHECK(s->key[key_row("sync_us")].kind == SIM_SRC_PART);
    CHECK(s->key[key_row("read_gbps")].kind == SIM_SRC_PART && s->key[key_row("read_gbps")].line == 2);
    size_t b = key_row("dram_budget_gb");
    CHECK(s->key[b].kind == SIM_SRC_OVERRIDE && s->key[b].line == 4 &&
          !strcmp(s->key[b].cite, "the budget"));
    CHECK(s->key[key_row("request_kb")].kind == SIM_SRC_DEFAULT && !s->key[rl].has_range);
    CHECK(strstr(s->variants_from, "parts/runtime/rt.lua") != NULL);
    /* a derived file swaps soc and flash: fits carried, ranges, range variants */
    rc = load_dev("fastphone", &d, &v, s, err, sizeof err);
    if (rc) fprintf(stderr, "fastphone: %s\n", err);
    CHECK(rc == SIM_OK);
    CHECK(d.npu_gflops == 200 && d.verify_graph_us == 500 && d.launch_us == 100 &&
          d.read_gbps == 4 && d.cpu_gbps == 30 && d.cpu_gflops == 333 && d.dram_budget_gb == 4);
    CHECK(s->key[ng].has_range && s->key[ng].lo == 100 && s->key[ng].hi == 200);
    size_t vg = key_row("verify_graph_us"), la = key_row("launch_us");
    CHECK(s->key[vg].lo == 500 && s->key[vg].hi == 1000 && s->key[la].lo == 50 && s->key[la].hi == 100);
    CHECK(s->key[rl].has_range && s->key[rl].lo == 10 && s->key[rl].hi == 30); /* f2's, not f1 */
    size_t cg = key_row("cpu_gflops");
    CHECK(s->key[cg].kind == SIM_SRC_FIT && s->key[cg].layer == SIM_SRC_OVERRIDE &&
          !strcmp(s->key[cg].cite, "a fit of this phone") && !s->key[cg].has_range);
    CHECK(s->key[b].kind == SIM_SRC_BASE && strstr(s->key[b].file, "phone.lua"));
    CHECK(!strcmp(s->parts[SIM_PART_SOC], "fast") && !strcmp(s->parts[SIM_PART_DRAM], "d1"));
    CHECK(v.n == 3 && !strcmp(v.v[0].name, "alt") && !strcmp(v.v[1].name, "parts_fast") &&
          !strcmp(v.v[2].name, "parts_slow"));
    CHECK(dval(&v.v[0].delta, "npu_gflops") == 100); /* the variant's fit carried too */
    CHECK(dval(&v.v[1].delta, "npu_gflops") == 200 && dval(&v.v[2].delta, "npu_gflops") == 100);
    CHECK(dval(&v.v[1].delta, "verify_graph_us") == 500 &&
          dval(&v.v[2].delta, "verify_graph_us") == 1000);
    CHECK(dval(&v.v[1].delta, "request_latency_us") == 10 &&
          dval(&v.v[2].delta, "request_latency_us") == 30);
    CHECK(dval(&v.v[1].delta, "cpu_gbps") == 40 && dval(&v.v[2].delta, "cpu_gbps") == 20);
    CHECK(!v.v[1].set[cg] && !v.v[1].set[key_row("read_gbps")]);
    /* a device without parts: as before, every key its own or a default */
    rc = load_dev("flat", &d, &v, s, err, sizeof err);
    CHECK(rc == SIM_OK && v.n == 0 && s->key[key_row("read_gbps")].kind == SIM_SRC_OVERRIDE);
    CHECK(s->key[key_row("request_kb")].kind == SIM_SRC_DEFAULT && !s->parts[0][0]);
    free(s);
}

typedef struct bad_case {
    const char *rel, *text; /* a file written before loading */
    const char *dev;        /* the device loaded */
    int rc;                 /* SIM_PROFILE_E_* */
    const char *where;      /* the file the message names, relative to the scratch */
    int line;
    const char *want, *want2;
} bad_case;

static const bad_case bad_cases[] = {
    {"devices/kind.lua", "return {\n  dram_budget_gb = 1,\n  parts = { sco = 'ref' },\n}\n", "kind",
     SIM_CONFIG, "devices/kind.lua", 3, "unknown part kind 'sco'", "did you mean 'soc'"},
    {"devices/noname.lua", "return {\n  parts = {\n    soc = 'rfe' },\n}\n", "noname",
     SIM_MISSING, "devices/noname.lua", 3, "unknown soc part 'rfe'", "did you mean 'ref'"},
    {"devices/badname.lua", "return { parts = { soc = '../x' } }\n", "badname", SIM_CONFIG,
     "devices/badname.lua", 1, "parts.soc must be a part name", NULL},
    {"devices/partstype.lua", "return {\n  parts = 'ref',\n}\n", "partstype", SIM_CONFIG,
     "devices/partstype.lua", 2, "key 'parts' must be a table", NULL},
    {"devices/norequired.lua", "return {\n  parts = { soc = 'ref', flash = 'f1' },\n}\n",
     "norequired", SIM_CONFIG, "devices/norequired.lua", 2,
     "missing required key 'dram_budget_gb'", NULL},
    {"devices/devcite.lua", "return {\n  base = 'phone',\n  cite = { read_gbps = 'x' },\n}\n",
     "devcite", SIM_CONFIG, "devices/devcite.lua", 3,
     "cite.read_gbps names a key the file does not set", NULL},
    {"parts/soc/wrongkind.lua", "return {\n  read_gbps = 1,\n  cite = { read_gbps = 'x' },\n}\n",
     "wrongkind", SIM_CONFIG, "parts/soc/wrongkind.lua", 2,
     "key 'read_gbps' is not a soc key", "flash parts"},
    {"parts/soc/named.lua", "return {\n  name = 'x',\n  cite = { name = 'x' },\n}\n", "named",
     SIM_CONFIG, "parts/soc/named.lua", 2, "key 'name' is not a soc key",
     "device profile's own key"},
    {"parts/soc/uncited.lua", "return {\n  cpu_gbps = 1,\n  cpu_gflops = 2,\n"
     "  cite = { cpu_gbps = 'x' },\n}\n", "uncited", SIM_CONFIG, "parts/soc/uncited.lua", 3,
     "key 'cpu_gflops' has no citation", NULL},
    {"parts/soc/typo.lua", "return {\n  cpu_gbps = 1,\n  cite = {\n    cpu_gbp = 'x' },\n}\n",
     "typo", SIM_CONFIG, "parts/soc/typo.lua", 4, "unknown key 'cpu_gbp' in cite",
     "did you mean 'cpu_gbps'"},
    {"parts/soc/both.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = 'x' },\n"
     "  fit = {\n    cpu_gbps = 'y' },\n}\n", "both", SIM_CONFIG, "parts/soc/both.lua", 5,
     "both cite.cpu_gbps and fit.cpu_gbps", NULL},
    {"parts/soc/empty.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = '' },\n}\n", "empty",
     SIM_CONFIG, "parts/soc/empty.lua", 3, "cite.cpu_gbps must be a non-empty string",
     NULL},
    {"parts/soc/unknown.lua", "return {\n  cpu_gbsp = 1,\n}\n", "unknown", SIM_CONFIG,
     "parts/soc/unknown.lua", 2, "unknown key 'cpu_gbsp' in soc part", "did you mean 'cpu_gbps'"},
    {"parts/soc/rform.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = 'x' },\n"
     "  ranges = {\n    cpu_gbps = { 1 } },\n}\n", "rform", SIM_CONFIG,
     "parts/soc/rform.lua", 5, "ranges.cpu_gbps must be { lo, hi }", NULL},
    {"parts/soc/rorder.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = 'x' },\n"
     "  ranges = { cpu_gbps = { 2, 1 } },\n}\n", "rorder", SIM_CONFIG,
     "parts/soc/rorder.lua", 4, "lo <= hi", NULL},
    {"parts/soc/rhold.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = 'x' },\n"
     "  ranges = { cpu_gbps = { 2, 3 } },\n}\n", "rhold", SIM_CONFIG,
     "parts/soc/rhold.lua", 4, "does not hold its value 1", NULL},
    {"parts/soc/rkind.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = 'x',"
     " cpu_active_w = 'y' },\n  ranges = { cpu_active_w = { 1, 2 } },\n}\n", "rkind",
     SIM_CONFIG, "parts/soc/rkind.lua", 4, "only rates", NULL},
    {"parts/soc/rcite.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = 'x' },\n"
     "  ranges = { launch_us = { 1, 2 } },\n}\n", "rcite", SIM_CONFIG,
     "parts/soc/rcite.lua", 4, "ranges.launch_us needs cite.launch_us", NULL},
    {"parts/soc/rspan.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = 'x' },\n"
     "  ranges = { cpu_gbps = { 0.5, 2000 } },\n}\n", "rspan", SIM_CONFIG,
     "parts/soc/rspan.lua", 4, "leaves the key's range", NULL},
    {"parts/soc/speed.lua", "return {\n  cpu_gbps = 1,\n  npu_speed = 2,\n"
     "  cite = { cpu_gbps = 'x', npu_speed = 'y' },\n}\n", "speed", SIM_CONFIG,
     "parts/soc/speed.lua", 3, "npu_speed needs speed_over", NULL},
    {"parts/soc/speedcite.lua", "return {\n  cpu_gbps = 1,\n  speed_over = 'ref',\n"
     "  cpu_speed = 2,\n  cite = { cpu_gbps = 'x' },\n}\n", "speedcite", SIM_CONFIG,
     "parts/soc/speedcite.lua", 4, "cpu_speed has no citation", NULL},
    {"parts/soc/xfer.lua", "return {\n  cpu_gbps = 1,\n  cite = { cpu_gbps = 'x' },\n"
     "  transfer = { cpu_gbps = 'npu' },\n}\n", "xfer", SIM_CONFIG, "parts/soc/xfer.lua",
     4, "unknown key 'transfer' in soc part", NULL},
    {"parts/runtime/rbad.lua", "return {\n  launch_us = 1,\n  fit = { launch_us = 'x' },\n"
     "  fitted_on = { soc = 'ref' },\n  transfer = {\n    launch_us = 'gpu' },\n}\n", "rbad",
     SIM_CONFIG, "parts/runtime/rbad.lua", 6, "transfer.launch_us must be", NULL},
    {"parts/runtime/rnofit.lua", "return {\n  launch_us = 1,\n  fit = { launch_us = 'x' },\n"
     "  transfer = { launch_us = 'npu' },\n}\n", "rnofit", SIM_CONFIG,
     "parts/runtime/rnofit.lua", 4, "transfer needs fitted_on", NULL},
    {"parts/runtime/rnotset.lua", "return {\n  launch_us = 1,\n  fit = { launch_us = 'x' },\n"
     "  fitted_on = { soc = 'ref' },\n  transfer = { sync_us = 'npu' },\n}\n", "rnotset",
     SIM_CONFIG, "parts/runtime/rnotset.lua", 5, "transfer.sync_us", "not a number"},
    {"parts/runtime/rvar.lua", "return {\n  launch_us = 1,\n  fit = { launch_us = 'x' },\n"
     "  variants = { v = { read_gbps = 3 } },\n}\n", "rvar", SIM_CONFIG,
     "parts/runtime/rvar.lua", 4, "variant 'v': key 'read_gbps' is not a runtime key", NULL},
    {"parts/runtime/rfitrange.lua", "return {\n  launch_us = 1,\n  fit = { launch_us = 'x' },\n"
     "  ranges = { launch_us = { 0, 2 } },\n}\n", "rfitrange", SIM_CONFIG,
     "parts/runtime/rfitrange.lua", 4, "is a fit of this part", NULL},
    {"parts/flash/fvar.lua", "return {\n  read_gbps = 1,\n  cite = { read_gbps = 'x' },\n"
     "  variants = {},\n}\n", "fvar", SIM_CONFIG, "parts/flash/fvar.lua", 4,
     "unknown key 'variants' in flash part", NULL},
    /* composed: the soc has no speed over the runtime's; a range a value leaves */
    {"devices/nospeed.lua", "return {\n  base = 'phone',\n  parts = { soc = 'other' },\n}\n",
     "nospeed", SIM_CONFIG, "devices/nospeed.lua", 3,
     "runtime part 'rt' was fitted on soc 'ref'", "soc part 'other' states no npu_speed"},
    {"devices/toomany.lua", "return {\n  base = 'fastphone',\n  variants = { a = {}, b = {}, c = {},"
     " d = {}, e = {}, f = {}, g = {} },\n}\n", "toomany", SIM_CONFIG,
     "devices/toomany.lua", 2, "7 variants and the parts' two range variants exceed 8", NULL},
    {"devices/clash.lua", "return {\n  base = 'fastphone',\n  variants = { parts_fast = {} },\n}\n",
     "clash", SIM_CONFIG, "devices/clash.lua", 2,
     "variant 'parts_fast' is the name of the parts' range variant", NULL},
    {"parts/flash/f3.lua", "return {\n  read_gbps = 4,\n  cite = { read_gbps = 'F3',"
     " request_latency_us = 'none' },\n  ranges = { request_latency_us = { 20, 30 } },\n}\n",
     NULL, 0, NULL, 0, NULL, NULL},
    {"devices/outside.lua", "return {\n  base = 'phone',\n  parts = { flash = 'f3' },\n}\n",
     "outside", SIM_CONFIG, "parts/flash/f3.lua", 4,
     "ranges.request_latency_us = { 20, 30 } does not hold the value 10", "runtime/rt"},
};

/* Device profiles naming each bad part, so every case loads through a device. */
static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        put_file(scratch, c->rel, c->text);
        if (!c->dev) continue;
        if (!strncmp(c->rel, "parts/", 6)) {
            char kind[16], rel[128], text[256];
            snprintf(kind, sizeof kind, "%.*s", (int)(strchr(c->rel + 6, '/') - (c->rel + 6)),
                     c->rel + 6);
            snprintf(rel, sizeof rel, "devices/%s.lua", c->dev);
            snprintf(text, sizeof text, "return { base = 'phone', parts = { %s = '%s' } }\n", kind,
                     c->dev);
            put_file(scratch, rel, text);
        }
        sim_device d;
        sim_device_variants v;
        char err[1024], head[1200];
        int rc = load_dev(c->dev, &d, &v, NULL, err, sizeof err);
        snprintf(head, sizeof head, "%s/%s:%d: ", scratch, c->where, c->line);
        int ok = rc == c->rc && !strncmp(err, head, strlen(head)) && strstr(err, c->want) &&
                 (!c->want2 || strstr(err, c->want2)) && !strchr(err, '\n');
        if (!ok) fprintf(stderr, "%s: rc %d '%s'\n  want %d '%s...%s'\n", c->dev, rc, err, c->rc,
                         head, c->want);
        CHECK(ok);
    }
}

/* ---- the shipped devices ---- */

/* Keys whose built-in default is physically neutral: a shipped device may
 * leave them to it.  (None does today; thermal = off is the only candidate.) */
static const char *const neutral_defaults[] = {"thermal", NULL};

static int neutral(const char *key)
{
    for (int i = 0; neutral_defaults[i]; i++)
        if (!strcmp(key, neutral_defaults[i])) return 1;
    return 0;
}

/* Every value has a source that is not a default (unless neutral) and a
 * citation; a part's value names a line of its part file that sets it. */
static void check_sources(const char *name, const sim_profile_sources *s)
{
    const eng_param_desc *keys = sim_device_keys();
    for (int32_t i = 0; keys[i].name; i++) {
        const sim_key_source *k = &s->key[i];
        int ok = (k->kind != SIM_SRC_DEFAULT || neutral(keys[i].name)) &&
                 (k->kind == SIM_SRC_DEFAULT || (k->cite[0] && k->file[0] && k->line > 0));
        if ((k->kind == SIM_SRC_PART || k->kind == SIM_SRC_FIT) && k->part[0])
            ok = ok && strstr(k->file, "/parts/") != NULL &&
                 slp_key_line(k->file, 1, keys[i].name) == k->line;
        if (!ok) fprintf(stderr, "%s: key %s has no source (%d) or citation\n", name, keys[i].name,
                         (int)k->kind);
        CHECK(ok);
    }
}

static int same_values(const sim_device *a, const sim_device *b)
{
    const eng_param_desc *keys = sim_device_keys();
    int same = 1;
    for (const eng_param_desc *d = keys; d->name; d++) {
        size_t n = d->type == ENG_PARAM_DOUBLE ? sizeof(double)
                   : d->type == ENG_PARAM_STRING ? (size_t)d->cap
                   : d->type == ENG_PARAM_INT_LIST ? (size_t)d->cap * sizeof(int32_t)
                                                   : sizeof(int32_t);
        if (memcmp((const char *)a + d->offset, (const char *)b + d->offset, n)) {
            fprintf(stderr, "differs: %s\n", d->name);
            same = 0;
        }
    }
    return same;
}

static void test_shipped(const char *cfg, const char *flat)
{
    sim_device d, f;
    sim_device_variants v, fv;
    sim_profile_sources *s = calloc(1, sizeof *s);
    char err[1024], path[1024];
    CHECK(s != NULL);
    if (!s) return;
    static const char *const devs[] = {"oneplus12", "sd8elite_ufs31", "sd8elite_ufs41"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/devices/%s.lua", cfg, devs[i]);
        int rc = sim_profile_explain_device(path, &d, &v, s, err, sizeof err);
        if (rc) fprintf(stderr, "%s\n", err);
        CHECK(rc == SIM_OK);
        check_sources(devs[i], s);
        for (int k = 0; k < SIM_PART_KINDS; k++)
            CHECK(s->parts[k][0] != 0); /* made of parts, all four kinds */
        if (i == 0) { /* the OnePlus 12: the flat profile it replaced, variants included,
                       * and the runtime's one prior range (npu_call_us, 0..5 ms): its
                       * slow end is parts_slow, its fast end the profile itself (no
                       * parts_fast) */
            CHECK(sim_profile_load_device_variants(flat, &f, &fv, err, sizeof err) == 0);
            CHECK(same_values(&d, &f) && v.n == fv.n + 1);
            for (int32_t j = 0; j < v.n && j < fv.n; j++) {
                sim_device a = d, b = f;
                sim_device_variant_apply(&v.v[j], &a);
                sim_device_variant_apply(&fv.v[j], &b);
                CHECK(!strcmp(v.v[j].name, fv.v[j].name) && same_values(&a, &b));
            }
            CHECK(v.n == 4 && !strcmp(v.v[3].name, "parts_slow"));
            if (v.n == 4) {
                sim_device a = d, b = d;
                sim_device_variant_apply(&v.v[3], &a);
                b.npu_call_us = 5000;
                CHECK(same_values(&a, &b) && d.npu_call_us == 0);
            }
            for (int32_t k = 0; k < s->n_keys; k++) /* fitted on this very phone */
                CHECK(s->key[k].has_range == ((size_t)k == key_row("npu_call_us")));
            const sim_key_source *c = &s->key[key_row("npu_call_us")];
            CHECK(c->lo == 0 && c->hi == 5000);
        } else { /* the 8 Elite: the runtime's fits carried by the stated rules */
            CHECK(d.npu_gflops == 693.502 * 1.45 && d.verify_graph_us == 13943.3 / 1.45);
            CHECK(d.launch_us == 528.3 && d.sync_us == 528.3 && d.request_latency_us == 8.0);
            const sim_key_source *n = &s->key[key_row("npu_gflops")];
            CHECK(n->has_range && n->lo == 693.502 * 1.04 && n->hi == 693.502 * 1.45);
            const sim_key_source *l = &s->key[key_row("launch_us")];
            CHECK(l->has_range && l->lo == 528.3 / 1.45 && l->hi == 528.3);
            const sim_key_source *r = &s->key[key_row("request_latency_us")];
            CHECK(r->has_range && r->hi == (i == 1 ? 16 : 8) && r->lo == (i == 1 ? 8 : 6.96));
            CHECK(v.n == 5 && !strcmp(v.v[3].name, "parts_fast") && !strcmp(v.v[4].name, "parts_slow"));
            CHECK(!strcmp(v.v[2].name, "min8") &&
                  dval(&v.v[2].delta, "npu_gflops") == 673.665 * 1.45);
        }
    }
    /* EdgeLLM's phones: llama.cpp on the CPU (runtime/llamacpp-cpu), nothing
     * fitted, the SoC's CPU ranges and the flash's latency range as variants */
    static const char *const edge[] = {"xiaomi10", "xiaomi11", "xiaomi11_sd8gen1"};
    static const char *const socs[] = {"sd865", "sd888", "sd8gen1"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/devices/%s.lua", cfg, edge[i]);
        int rc = sim_profile_explain_device(path, &d, &v, s, err, sizeof err);
        if (rc) fprintf(stderr, "%s\n", err);
        CHECK(rc == SIM_OK);
        check_sources(edge[i], s);
        CHECK(!strcmp(s->parts[SIM_PART_SOC], socs[i]));
        CHECK(!strcmp(s->parts[SIM_PART_RUNTIME], "llamacpp-cpu"));
        CHECK(!strcmp(s->parts[SIM_PART_FLASH], i == 0 ? "ufs3.0" : "ufs3.1"));
        CHECK(d.verify_unit == SIM_VERIFY_CPU && d.request_kb == 128 && d.queue_depth == 4 &&
              d.prefetch_layers == 0 && !d.read_during_draft && d.dram_budget_gb == 6.0);
        CHECK(d.request_latency_us == 8.0 && d.read_gbps == 2.1);
        for (int32_t k = 0; k < s->n_keys; k++)
            CHECK(s->key[k].kind != SIM_SRC_FIT); /* nothing fitted on these phones */
        const sim_key_source *r = &s->key[key_row("request_latency_us")];
        CHECK(r->has_range && r->lo == 8 && r->hi == 16);
        CHECK(v.n == 2 && !strcmp(v.v[0].name, "parts_fast") && !strcmp(v.v[1].name, "parts_slow"));
    }
    /* every shipped part file loads (kinds, citations, ranges, rules) */
    int n = 0;
    for (int k = 0; k < SIM_PART_KINDS; k++) {
        char dir[64], (*names)[SIM_PROFILE_NAME_CAP] = malloc(64 * sizeof *names);
        snprintf(dir, sizeof dir, "parts/%s", sim_part_kind_name(k));
        int m = names ? sim_profile_names(dir, names, 64) : -1;
        CHECK(m > 0);
        for (int j = 0; j < m; j++, n++) {
            snprintf(path, sizeof path, "%s/%s/%s.lua", cfg, dir, names[j]);
            unsigned char set[SIM_VARIANT_KEYS_CAP];
            int rc = sim_part_load(path, k, &d, set, s, err, sizeof err);
            if (rc) fprintf(stderr, "%s\n", err);
            CHECK(rc == SIM_OK);
        }
        free(names);
    }
    CHECK(n >= 15);
    free(s);
}

/* ---- a faster part never makes a cycle slower ---- */

static void price(const char *name, double *out, int n)
{
    char path[1024], err[1024];
    sim_device d;
    CHECK(sim_profile_find("devices", name, 0, path, sizeof path) >= 0);
    CHECK(sim_profile_load_device(path, &d, err, sizeof err) == SIM_OK);
    sim_model t, e;
    CHECK(sim_profile_find("models", "qwen3-8b-q4_0", 0, path, sizeof path) >= 0);
    CHECK(sim_profile_load_model(path, &t, err, sizeof err) == SIM_OK);
    CHECK(sim_profile_find("models", "qwen3-8b-eagle3-q4_0", 0, path, sizeof path) >= 0);
    CHECK(sim_profile_load_model(path, &e, err, sizeof err) == SIM_OK);
    static const double fr[] = {0, 0.3, 1};
    static const int32_t rows[] = {1, 2, 3, 8, 9, 16, 31, 64};
    int at = 0;
    for (int x = 0; x < 3; x++) {
        sim_hw *hw = NULL;
        CHECK(sim_hw_create(&d, &t, &e, fr[x], 4096, &hw, err, sizeof err) == SIM_OK);
        if (!hw) return;
        for (int r = 0; r < 8; r++) {
            for (int exit = 0; exit < 2; exit++) {
                sim_verify_shape v = {.rows = rows[r], .leaves = 1, .ctx_len = 300,
                                      .exit_layer = exit ? 4 : -1,
                                      .rows_after_exit = rows[r] > 1 ? rows[r] / 2 : 1,
                                      .proj = exit ? ENG_PROJ_ONDEMAND_CPU : ENG_PROJ_EAGER_NPU,
                                      .proj_rows = rows[r] > 1 ? 2 : 1,
                                      .decode = rows[r] == 1 && !exit};
                sim_draft_call c[2] = {{ENG_UNIT_CPU, 1, 300, 0}, {ENG_UNIT_NPU, rows[r], 300, 0}};
                const sim_cycle_req q = {.calls = c, .n_calls = 2, .verify = &v, .price = 1};
                sim_cycle_time ct;
                CHECK(sim_hw_cycle(hw, &q, &ct) == SIM_OK);
                if (at < n) out[at++] = ct.cycle_ms;
            }
        }
        sim_hw_destroy(hw);
    }
}

static void test_faster_parts(const char *cfg)
{
    /* device pairs that differ in one part, the second faster */
    static const char *const pairs[][2] = {
        {"sd8elite_ufs31", "sd8elite_ufs41"}, /* flash UFS 3.1 -> 4.1 */
        {"op12_ufs31", "oneplus12"},          /* flash UFS 3.1 -> 4.0 */
        {"oneplus12", "op12_sd8elite"},       /* soc 8 Gen 3 -> 8 Elite */
        {"e41_lp9600", "sd8elite_ufs41"},     /* dram LPDDR5X-9600 -> 10600 */
    };
    char dir[] = "/tmp/fs_faster_XXXXXX", env[2048];
    CHECK(mkdtemp(dir) != NULL);
    put_file(dir, "devices/op12_ufs31.lua", "return { base = 'oneplus12', parts = { flash = 'ufs3.1' } }\n");
    put_file(dir, "devices/op12_sd8elite.lua",
             "return { base = 'oneplus12', parts = { soc = 'sd8elite' } }\n");
    put_file(dir, "devices/e41_lp9600.lua",
             "return { base = 'sd8elite_ufs41', parts = { dram = 'lpddr5x-9600' } }\n");
    snprintf(env, sizeof env, "%s", dir);
    setenv("FLASHSPEC_CONFIG_PATH", env, 1);
    setenv("FLASHSPEC_CONFIG_DIR", cfg, 1);
    enum { N = 48 };
    int checked = 0;
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        double slow[N] = {0}, fast[N] = {0};
        price(pairs[p][0], slow, N);
        price(pairs[p][1], fast, N);
        for (int i = 0; i < N; i++, checked++) {
            if (fast[i] <= slow[i] * (1 + 1e-12)) continue;
            fprintf(stderr, "%s -> %s: shape %d %.4f ms -> %.4f ms\n", pairs[p][0], pairs[p][1], i,
                    slow[i], fast[i]);
            CHECK(0);
        }
        CHECK(fast[0] < slow[0]); /* and it is faster somewhere */
    }
    CHECK(checked == 4 * N);
    unsetenv("FLASHSPEC_CONFIG_PATH");
    unsetenv("FLASHSPEC_CONFIG_DIR");
    static const char *const rm[] = {"op12_ufs31", "op12_sd8elite", "e41_lp9600"};
    for (int i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/devices/%s.lua", dir, rm[i]);
        unlink(path);
    }
    snprintf(env, sizeof env, "%s/devices", dir);
    rmdir(env);
    rmdir(dir);
}

static void cleanup(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    CHECK(system(cmd) == 0);
}

int main(int argc, char **argv)
{
    CHECK(argc > 2);
    if (argc <= 2) return check_done("config/parts");
    test_compose();
    test_helpers();
    CHECK(mkdtemp(scratch) != NULL);
    for (size_t i = 0; i < sizeof good_files / sizeof good_files[0]; i++)
        put_file(scratch, good_files[i][0], good_files[i][1]);
    setenv("FLASHSPEC_CONFIG_DIR", scratch, 1);
    test_good();
    test_bad();
    cleanup();
    setenv("FLASHSPEC_CONFIG_DIR", argv[1], 1);
    test_shipped(argv[1], argv[2]);
    test_faster_parts(argv[1]);
    printf("parts: ok\n");
    return check_done("config/parts");
}
