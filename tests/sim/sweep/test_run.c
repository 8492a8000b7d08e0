/*
 * test_run.c -- a script run's state without the script API
 * (sim/sweep/sim_run.h):
 *   - memory: nothing counted without a limit; the limit's edge (a hold that
 *     fills it exactly is taken, one byte more is refused and counts
 *     nothing), beside the script's heap or through the shared pool; a
 *     release never gives back more than is held;
 *   - a warning said once per key, past the first growth of the list;
 *   - output files: a name the run writes itself refused, one taken refused
 *     whatever its case, the bytes copied and NUL-terminated;
 *   - synthetic traces: draw memos kept while a fit runs and freed (and
 *     given back) when it ends; traces recorded and generated together are
 *     the very traces trc_synth makes alone, charged in the order asked; a
 *     memory limit that cannot take the second stops there, naming the call
 *     and what it needed, the first kept; deferring only what fits;
 *   - traces released by the generation they were last used at, and their
 *     memory given back;
 *   - one name, one thing: a name claimed again for the same thing is fine,
 *     for another thing (whatever its case) refused naming both uses; a
 *     device's variants and every value count, a policy's parameters do
 *     not, a Lua policy is its file digest; the names a policy may not take;
 *   - a point's model pair against the trace's recorded one: swapped roles
 *     and another architecture under a recorded profile's name said once
 *     per trace and pair, an error under --strict, the same architecture
 *     under another name quiet; a point asking for more tokens than the
 *     trace holds said once;
 *   - the phases around a script: the settings and checks (a missing
 *     script, a directory, an output path too long), the directory locked
 *     and made, the script's files written, a failed point's line, and a
 *     directory the run made and left empty removed after a failure only.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sim/sweep/sim_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"
#include "sim/config/profile.h"
#include "sim/config/sandbox.h"
#include "sim/sim_status.h"

static void test_memory(void)
{
    sim_run r;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(sim_run_try_hold(&r, (size_t)1 << 40), 0); /* no limit: counted, not refused */
    CHECK(sim_run_mem_in_use(&r) == (size_t)1 << 40);
    sim_run_release(&r, (size_t)1 << 41); /* more than held: all of it */
    CHECK_EQ_INT(r.held_bytes, 0);

    fs_lua_limits lim = {.mem_limit_bytes = 1000, .mem_used = 300};
    r.lim = &lim;
    CHECK_EQ_INT(sim_run_mem_in_use(&r), 300);
    CHECK_EQ_INT(sim_run_over_limit(&r, 300, 700), 0);
    CHECK_EQ_INT(sim_run_over_limit(&r, 300, 701), 1);
    CHECK_EQ_INT(sim_run_over_limit(&r, 0, 1001), 1);
    CHECK_EQ_INT(sim_run_over_limit(&r, 1001, 0), 1);
    CHECK_EQ_INT(sim_run_try_hold(&r, 701), -1);
    CHECK_EQ_INT(r.held_bytes, 0);
    CHECK_EQ_INT(sim_run_try_hold(&r, 700), 0); /* exactly to the limit */
    CHECK_EQ_INT(sim_run_mem_in_use(&r), 1000);
    CHECK_EQ_INT(sim_run_try_hold(&r, 1), -1);
    sim_run_release(&r, 200);
    CHECK_EQ_INT(r.held_bytes, 500);
    lim.mem_limit_bytes = 0; /* 0: no limit */
    CHECK_EQ_INT(sim_run_over_limit(&r, 1u << 30, 1u << 30), 0);

    /* through the shared pool: the pool's count is the run's */
    fs_mem_pool pool = {.limit = 1000};
    fs_lua_limits pl = {.mem_limit_bytes = 1000, .pool = &pool};
    sim_run q;
    memset(&q, 0, sizeof q);
    q.lim = &pl;
    CHECK_EQ_INT(sim_run_try_hold(&q, 400), 0);
    CHECK_EQ_INT(atomic_load(&pool.used), 400);
    CHECK_EQ_INT(sim_run_mem_in_use(&q), 400);
    atomic_store(&pool.used, 900); /* another state's heap grew */
    CHECK_EQ_INT(sim_run_mem_in_use(&q), 900);
    CHECK_EQ_INT(sim_run_try_hold(&q, 101), -1);
    CHECK_EQ_INT(q.held_bytes, 400);
    CHECK_EQ_INT(sim_run_try_hold(&q, 100), 0);
    CHECK_EQ_INT(atomic_load(&pool.used), 1000);
    sim_run_release(&q, 501); /* one byte more than held: what is held */
    CHECK_EQ_INT(atomic_load(&pool.used), 500);
    CHECK_EQ_INT(q.held_bytes, 0);
}

static void test_warn_once(void)
{
    sim_run r;
    memset(&r, 0, sizeof r);
    for (uint64_t k = 0; k < 40; k++)
        CHECK_EQ_INT(sim_run_warn_once(&r, k * 7919), 1);
    for (uint64_t k = 0; k < 40; k++)
        CHECK_EQ_INT(sim_run_warn_once(&r, k * 7919), 0);
    CHECK_EQ_INT(sim_run_warn_once(&r, 1), 1);
    free(r.warned);
}

static void test_outputs(void)
{
    sim_run r;
    memset(&r, 0, sizeof r);
    char data[] = "abc";
    CHECK_EQ_INT(sim_run_add_output(&r, "results.csv", data, 3), SIM_RUN_OUTPUT_RESERVED);
    CHECK_EQ_INT(sim_run_add_output(&r, "Script.lua", data, 3), SIM_RUN_OUTPUT_RESERVED);
    CHECK_EQ_INT(sim_run_add_output(&r, "fit.md", data, 3), 0);
    data[0] = 'X'; /* the run holds its own copy */
    CHECK(r.n_outputs == 1 && r.outputs[0].len == 3 && !strcmp(r.outputs[0].data, "abc"));
    CHECK_EQ_INT(sim_run_add_output(&r, "FIT.MD", data, 3), SIM_RUN_OUTPUT_TAKEN);
    for (int i = 0; i < 9; i++) { /* past the first growth */
        char name[32];
        snprintf(name, sizeof name, "f%d.lua", i);
        CHECK_EQ_INT(sim_run_add_output(&r, name, data, 1), 0);
    }
    CHECK_EQ_INT(r.n_outputs, 10);
    CHECK(!strcmp(r.outputs[9].name, "f8.lua") && !strcmp(r.outputs[9].data, "X"));
    for (int32_t i = 0; i < r.n_outputs; i++)
        free((char *)r.outputs[i].data);
    free(r.outputs);
}

static trc_synth_params shape(uint64_t seed)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.seed = seed;
    p.prompts = 2;
    p.output_len = 24;
    p.node_streams = 1;
    return p;
}

static void test_memos(void)
{
    sim_run r;
    memset(&r, 0, sizeof r);
    trc_synth_params p = shape(1), plain = shape(1);
    plain.node_streams = 0;
    CHECK(sim_run_synth_memo_for(&r, &p) == NULL); /* no fit runs */
    sim_run_synth_memos(&r, 1);
    trc_synth_memo *m = sim_run_synth_memo_for(&r, &p);
    CHECK(m != NULL && sim_run_synth_memo_for(&r, &p) == m);
    CHECK(sim_run_synth_memo_for(&r, &plain) == NULL);
    CHECK(r.held_bytes == trc_synth_memo_bytes(m) && r.held_bytes > 0);
    sim_run_synth_memos(&r, 1); /* a fit inside a fit */
    sim_run_synth_memos(&r, 0);
    CHECK_EQ_INT(r.n_synth_memo, 1);
    sim_run_synth_memos(&r, 0);
    CHECK_EQ_INT(r.n_synth_memo, 0);
    CHECK_EQ_INT(r.held_bytes, 0);
    /* a memo the limit cannot take: none */
    fs_lua_limits lim = {.mem_limit_bytes = 16};
    r.lim = &lim;
    sim_run_synth_memos(&r, 1);
    CHECK(sim_run_synth_memo_for(&r, &p) == NULL && r.held_bytes == 0);
    sim_run_synth_memos(&r, 0);
}

/* What may be recorded: what the run holds, plus what is recorded, plus
 * the new trace's most, up to the limit exactly. */
static void test_can_defer(void)
{
    sim_run r;
    memset(&r, 0, sizeof r);
    fs_lua_limits lim = {.mem_limit_bytes = 1000, .mem_used = 100};
    r.lim = &lim;
    r.synth_defer = 1;
    r.synth_pending_most = 300;
    CHECK_EQ_INT(sim_run_synth_can_defer(&r, 600), 1);
    CHECK_EQ_INT(sim_run_synth_can_defer(&r, 601), 0);
    r.synth_defer = 0;
    CHECK_EQ_INT(sim_run_synth_can_defer(&r, 1), 0);
}

/* Two traces recorded and generated together, against each made alone. */
static void test_together(void)
{
    trc_synth_params p[2] = {shape(11), shape(12)};
    trc_trace *alone[2];
    trc_err err;
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(trc_synth(&p[i], &alone[i], &err), TRC_OK);
    size_t b0 = trc_bytes(alone[0]), b1 = trc_bytes(alone[1]);

    for (int limited = 0; limited <= 1; limited++) {
        sim_run r;
        memset(&r, 0, sizeof r);
        r.ex.workers = 2;
        fs_lua_limits lim = {.mem_limit_bytes = b0 + b1 / 2};
        CHECK_EQ_INT(sim_run_synth_can_defer(&r, 1), 0); /* deferring is off */
        r.synth_defer = 1;
        sim_trace_entry *e[2];
        for (int i = 0; i < 2; i++) {
            char key[32];
            snprintf(key, sizeof key, "synth:%d", i);
            e[i] = sim_trace_cache_add(&r.traces, key, key, NULL, 0);
            CHECK(e[i] != NULL);
            if (!e[i]) return;
            CHECK_EQ_INT(sim_run_synth_can_defer(&r, b0), 1);
            CHECK_EQ_INT(sim_run_synth_defer(&r, e[i], &p[i], i ? b1 : b0, "s.lua", 10 + i), 0);
        }
        CHECK_EQ_INT(r.n_synth_pending, 2);
        CHECK(r.synth_pending_most == b0 + b1);
        if (limited) { /* the limit falls while they are recorded (another state grew) */
            r.lim = &lim;
            CHECK_EQ_INT(sim_run_synth_can_defer(&r, 1), 0); /* what is recorded fills it */
        }
        sim_run_synth_failure f;
        int rc = sim_run_synth_resolve(&r, &f);
        CHECK_EQ_INT(rc, limited ? -1 : 0);
        CHECK(e[0]->trace && trc_checksum(e[0]->trace) == trc_checksum(alone[0]));
        CHECK(e[0]->pending == NULL && e[1]->pending == NULL && r.n_synth_pending == 0);
        CHECK(r.synth_pending_most == 0);
        if (!limited) {
            CHECK(e[1]->trace && trc_checksum(e[1]->trace) == trc_checksum(alone[1]));
            CHECK(r.held_bytes == b0 + b1);
        } else { /* the second did not fit: named, with what it needed */
            CHECK(e[1]->trace == NULL && r.held_bytes == b0);
            CHECK(f.status == SIM_OK && f.need == b1 && f.line == 11);
            CHECK(!strcmp(f.chunk, "s.lua"));
        }
        /* released by generation: entry 0 used at 0, entry 1 looked up at 5 */
        e[1]->used_at = 5;
        sim_run_release_traces(&r, 0, 3);
        CHECK(e[0]->trace == NULL && r.held_bytes == (limited ? 0 : b1));
        sim_run_synth_free_pending(&r);
        sim_trace_cache_free(&r.traces);
    }
    /* a recorded trace the generator refuses: its status and message */
    sim_run r;
    memset(&r, 0, sizeof r);
    r.synth_defer = 1;
    sim_trace_entry *e = sim_trace_cache_add(&r.traces, "synth:x", "x", NULL, 0);
    trc_synth_params bad = shape(3);
    bad.prompts = 0;
    CHECK_EQ_INT(sim_run_synth_defer(&r, e, &bad, 1, "t.lua", 7), 0);
    sim_run_synth_failure f;
    CHECK_EQ_INT(sim_run_synth_resolve(&r, &f), -1);
    CHECK(f.status == sim_status_from_trc(TRC_E_ARG) && f.status != SIM_OK);
    CHECK(f.line == 7 && strstr(f.msg, "prompts") && e->trace == NULL);
    CHECK_EQ_INT(r.n_synth_pending, 0);
    sim_trace_cache_free(&r.traces);
    for (int i = 0; i < 2; i++)
        trc_free(alone[i]);
}

typedef struct lua_like {
    char source_hash[40];
} lua_like;

static const eng_param_desc lua_like_keys[] = {
    {.name = "source_hash", .type = ENG_PARAM_STRING, .offset = 0, .cap = 40},
    {.name = NULL},
};

static void test_names(void)
{
    sim_run r;
    memset(&r, 0, sizeof r);
    static sim_device d1, d2, var;
    static sim_model m1, m2;
    eng_params_defaults(sim_device_keys(), &d1);
    eng_params_defaults(sim_model_keys(), &m1);
    d2 = d1, m2 = m1, var = d1;
    const eng_param_desc *k = eng_params_find(sim_device_keys(), "read_gbps");
    CHECK(k != NULL);
    if (!k) return;
    double v = 9.5;
    memcpy((char *)&d2 + k->offset, &v, sizeof v);
    memcpy((char *)&var + k->offset, &v, sizeof v);
    const eng_param_desc *mk = sim_model_keys();
    while (mk->name && mk->type != ENG_PARAM_INT)
        mk++;
    int32_t layers = 77;
    if (mk->name) memcpy((char *)&m2 + mk->offset, &layers, sizeof layers);
    const eng_policy_desc *chain = eng_policy_lookup("chain");
    CHECK(chain != NULL);
    if (!chain) return;
    void *p1 = calloc(1, chain->params_size), *p2 = calloc(1, chain->params_size);
    eng_params_defaults(chain->params, p1);
    const eng_param_desc *kk = eng_params_find(chain->params, "k");
    int32_t k3 = 3;
    if (kk) memcpy((char *)p2 + kk->offset, &k3, sizeof k3);
    char err[1024];
    sim_run_named w = {.policy = chain, .policy_params = p1, .device_name = "phone",
                       .device = &d1, .target_name = "big", .target = &m1};
    CHECK_EQ_INT(sim_run_claim_names(&r, &w, "a.lua", 1, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(sim_run_claim_names(&r, &w, "a.lua", 2, err, sizeof err), SIM_OK);
    sim_run_named x = w;
    x.policy_params = p2; /* a policy's parameters are its label's, not its name's */
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "a.lua", 3, err, sizeof err), SIM_OK);
    x = w;
    x.device_name = "PHONE", x.device = &d2;
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "a.lua", 4, err, sizeof err), SIM_CONFIG);
    CHECK(strstr(err, "a.lua:4: two different devices are called 'PHONE' / phone (the other "
                      "first used at a.lua:1)") != NULL);
    char names[1][SIM_VARIANT_NAME_CAP] = {"slow"};
    x = w;
    x.n_variants = 1, x.variants = &var, x.variant_names = (const char(*)[SIM_VARIANT_NAME_CAP])names;
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "a.lua", 5, err, sizeof err), SIM_CONFIG);
    x = w;
    x.draft_name = "big", x.draft = &m1; /* the same model as draft: one thing */
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "a.lua", 6, err, sizeof err), SIM_OK);
    x.draft = &m2;
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "a.lua", 7, err, sizeof err), SIM_CONFIG);
    CHECK(strstr(err, "two different models are called 'big' (the other first used at "
                      "a.lua:1)") != NULL);
    x = w;
    x.device_name = "phone2", x.device = &d2; /* another name: its own claim */
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "a.lua", 8, err, sizeof err), SIM_OK);
    /* a Lua policy: its file digest, not its descriptor */
    eng_policy_desc l1 = {.name = "mine", .params = lua_like_keys}, l2 = l1;
    lua_like h1 = {"aaaa"}, h2 = {"bbbb"};
    x = w;
    x.policy = &l1, x.policy_params = &h1;
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "b.lua", 1, err, sizeof err), SIM_OK);
    x.policy = &l2; /* another descriptor, the same file */
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "b.lua", 2, err, sizeof err), SIM_OK);
    x.policy_params = &h2;
    CHECK_EQ_INT(sim_run_claim_names(&r, &x, "b.lua", 3, err, sizeof err), SIM_CONFIG);
    CHECK(strstr(err, "two different policies are called 'mine'") != NULL);
    /* the names a policy may not take */
    eng_policy_desc plug = {.name = "myplug"};
    fs_plugin pl = {.desc = &plug};
    r.plugins = &pl;
    r.n_plugins = 1;
    const char *t = sim_run_policy_name_taken(&r, "Flash_AR");
    CHECK(t && !strcmp(t, "flash_ar"));
    t = sim_run_policy_name_taken(&r, "LUA");
    CHECK(t && !strcmp(t, "lua"));
    t = sim_run_policy_name_taken(&r, "MyPlug");
    CHECK(t && !strcmp(t, "myplug"));
    CHECK(sim_run_policy_name_taken(&r, "mine") == NULL);
    sim_run_free_names(&r);
    CHECK(r.names == NULL);
    sim_run_free_names(&r);
    free(p1);
    free(p2);
}

/* What fn(ctx) wrote to stderr, into out. */
static void stderr_of(void (*fn)(void *), void *ctx, char *out, size_t n)
{
    char path[] = "/tmp/fs-run-err-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return;
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(ctx);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t got = read(fd, out, n - 1);
    out[got > 0 ? got : 0] = 0;
    close(fd);
    unlink(path);
}

typedef struct pair_call {
    sim_run *r;
    const trc_trace *t;
    const char *tn, *dn;
    const sim_model *tm, *dm;
    int rc, tokens;
    char err[1536];
} pair_call;

static void pair_fn(void *ctx)
{
    pair_call *c = ctx;
    c->err[0] = 0;
    c->rc = sim_run_check_model_pair(c->r, c->t, "code", c->tn, c->tm, c->dn, c->dm, "fs.run",
                                     "s.lua", 4, c->err, sizeof c->err);
}

static void short_fn(void *ctx)
{
    pair_call *c = ctx;
    sim_run_warn_short_trace(c->r, c->t, "code", c->tokens, "s.lua", 9);
}

static void test_model_pair(const char *configs)
{
    trc_synth_params p = shape(5);
    snprintf(p.target, sizeof p.target, "qwen3-8b-q4_0");
    snprintf(p.draft, sizeof p.draft, "qwen3-8b-eagle3-q4_0");
    trc_trace *t = NULL;
    trc_err terr;
    CHECK_EQ_INT(trc_synth(&p, &t, &terr), TRC_OK);
    if (!t) return;
    static sim_model tgt, drf, other;
    char path[1024], err[512], out[4096];
    snprintf(path, sizeof path, "%s/models/qwen3-8b-q4_0.lua", configs);
    CHECK_EQ_INT(sim_profile_load_model(path, &tgt, err, sizeof err), SIM_OK);
    snprintf(path, sizeof path, "%s/models/qwen3-8b-eagle3-q4_0.lua", configs);
    CHECK_EQ_INT(sim_profile_load_model(path, &drf, err, sizeof err), SIM_OK);
    other = tgt;
    other.layers = 40;
    sim_run r;
    memset(&r, 0, sizeof r);
    pair_call c = {.r = &r, .t = t, .tn = "qwen3-8b-q4_0", .tm = &tgt,
                   .dn = "qwen3-8b-eagle3-q4_0", .dm = &drf};
    stderr_of(pair_fn, &c, out, sizeof out); /* the recorded pair */
    CHECK(c.rc == SIM_OK && out[0] == 0);
    c.tn = "qwen3-8b-eagle3-q4_0", c.tm = &drf, c.dn = "qwen3-8b-q4_0", c.dm = &tgt;
    stderr_of(pair_fn, &c, out, sizeof out);
    CHECK(c.rc == SIM_OK && strstr(out, "s.lua:4: trace 'code' was recorded with target "
                                        "qwen3-8b-q4_0 and draft qwen3-8b-eagle3-q4_0, but "
                                        "its draft qwen3-8b-q4_0 is the recorded target and "
                                        "its target the recorded draft (swapped)"));
    stderr_of(pair_fn, &c, out, sizeof out); /* once per trace and pair */
    CHECK(c.rc == SIM_OK && out[0] == 0);
    c.tn = "mine", c.tm = &tgt, c.dn = NULL, c.dm = NULL; /* the same architecture renamed */
    stderr_of(pair_fn, &c, out, sizeof out);
    CHECK(c.rc == SIM_OK && out[0] == 0);
    c.tn = "bigger", c.tm = &other;
    stderr_of(pair_fn, &c, out, sizeof out);
    CHECK(c.rc == SIM_OK && strstr(out, "the target bigger (layers 40, hidden 4096, vocab "
                                        "151936) is another model than the recorded "
                                        "qwen3-8b-q4_0 (layers 36,"));
    r.strict = 1;
    c.tn = "bigger2";
    stderr_of(pair_fn, &c, out, sizeof out);
    CHECK(c.rc == SIM_CONFIG && out[0] == 0);
    CHECK(strstr(c.err, "s.lua:4: fs.run: trace 'code' was recorded with") &&
          strstr(c.err, "(--strict)"));
    c.tokens = 24; /* what the references hold: nothing to say */
    stderr_of(short_fn, &c, out, sizeof out);
    CHECK(out[0] == 0);
    c.tokens = 500;
    stderr_of(short_fn, &c, out, sizeof out);
    CHECK(strstr(out, "s.lua:9: max_new_tokens = 500 but trace 'code' holds at most 24 "
                      "reference tokens per prompt") != NULL);
    stderr_of(short_fn, &c, out, sizeof out);
    CHECK(out[0] == 0);
    free(r.warned);
    sim_profile_cache_free(&r.profiles);
    trc_free(t);
}

static char tmp[64];

static int exists(const char *rel)
{
    char p[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", tmp, rel);
    return stat(p, &st) == 0;
}

static void test_phases(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/fs-run-XXXXXX");
    if (!mkdtemp(tmp)) return;
    char script[128], out[128], out2[128], tl[128], err[8192], real[PATH_MAX];
    snprintf(script, sizeof script, "%s/s.lua", tmp);
    snprintf(out, sizeof out, "%s/out", tmp);
    snprintf(out2, sizeof out2, "%s/out2", tmp);
    snprintf(tl, sizeof tl, "%s/tl.json", tmp);
    FILE *f = fopen(script, "w");
    if (f) fputs("return 1\n", f), fclose(f);
    CHECK(realpath(tmp, real) != NULL);

    fs_script_opts o = {.script = script, .out_dir = out, .jobs = 3, .quiet = 1};
    fs_timeline_opts t = {.path = tl, .point = 2, .prompt = 1};
    sim_run r;
    memset(&r, 0, sizeof r);
    r.lock.fd = -1;
    CHECK_EQ_INT(sim_run_check(&r, &o, &t, err, sizeof err), SIM_OK);
    CHECK(r.ex.workers == 3 && r.quiet == 1 && r.ex.resume == 1);
    CHECK(!strcmp(r.script_dir, real));
    CHECK(strcmp(r.ex.store_dir + strlen(r.ex.store_dir) - 11, "/out/points") == 0);
    CHECK(r.ex.tl != NULL && r.ex.tl_point == 2 && r.ex.tl_prompt == 1);
    CHECK(!exists("out")); /* nothing made before the lock */
    CHECK_EQ_INT(sim_run_lock(&r, &o, err, sizeof err), SIM_OK);
    CHECK(exists("out") && r.made_dir == 1);
    CHECK_EQ_INT(sim_run_add_output(&r, "note.md", "hello\n", 6), 0);
    CHECK_EQ_INT(sim_run_write(&r, &o, NULL, err, sizeof err), SIM_OK);
    CHECK(exists("out/note.md") && !exists("out/results.csv")); /* no rows: no results */
    r.ex.point_code = SIM_DATA;
    r.ex.failed = 2;
    CHECK_EQ_INT(sim_run_write(&r, &o, NULL, err, sizeof err), SIM_DATA);
    CHECK(strstr(err, "2 points failed (errors above); the results hold the 0 good points"));
    sim_run_free(&r, &o, SIM_DATA);
    CHECK(exists("out")); /* not empty: kept */

    /* a run that made its directory, failed and left it empty: removed */
    fs_script_opts o2 = {.script = script, .out_dir = out2, .script_dir = "/elsewhere"};
    memset(&r, 0, sizeof r);
    r.lock.fd = -1;
    CHECK_EQ_INT(sim_run_check(&r, &o2, NULL, err, sizeof err), SIM_OK);
    CHECK(!strcmp(r.script_dir, "/elsewhere") && r.ex.workers == 1 && r.ex.tl == NULL);
    CHECK_EQ_INT(sim_run_lock(&r, &o2, err, sizeof err), SIM_OK);
    CHECK(exists("out2"));
    sim_run_free(&r, &o2, SIM_CONFIG);
    CHECK(!exists("out2"));
    memset(&r, 0, sizeof r); /* the same, succeeding: kept */
    r.lock.fd = -1;
    CHECK_EQ_INT(sim_run_check(&r, &o2, NULL, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(sim_run_lock(&r, &o2, err, sizeof err), SIM_OK);
    sim_run_free(&r, &o2, SIM_OK);
    CHECK(exists("out2"));

    /* refused before anything is made */
    char missing[128], longdir[5000];
    snprintf(missing, sizeof missing, "%s/none.lua", tmp);
    fs_script_opts bad = {.script = missing};
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(sim_run_check(&r, &bad, NULL, err, sizeof err), SIM_MISSING);
    CHECK(strstr(err, "none.lua: cannot open script: No such file") != NULL);
    bad.script = tmp;
    CHECK_EQ_INT(sim_run_check(&r, &bad, NULL, err, sizeof err), SIM_MISSING);
    CHECK(strstr(err, "cannot open script: is a directory") != NULL);
    memset(longdir, 'd', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = 0;
    bad = (fs_script_opts){.script = script, .out_dir = longdir};
    CHECK_EQ_INT(sim_run_check(&r, &bad, NULL, err, sizeof err), SIM_CANTCREATE);
    if (!strstr(err, "output path too long")) fprintf(stderr, "  %s\n", err);
    CHECK(strstr(err, "output path too long") != NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmp);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_run CONFIGS\n");
        return 2;
    }
    test_memory();
    test_warn_once();
    test_outputs();
    test_memos();
    test_can_defer();
    test_together();
    test_names();
    test_model_pair(argv[1]);
    test_phases();
    return check_done("sweep/run");
}
