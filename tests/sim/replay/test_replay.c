/*
 * test_replay.c -- the replay loop end to end in C: exact bounds with perfect
 * and useless drafts, the per-cycle identities, determinism, DRAM residency,
 * coverage, the errors a point can report, and the model band over a device's
 * standing variants.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "engine/pol_adaptive_chain.h"
#include "engine/pol_chain.h"
#include "engine/pol_flash_ar.h"
#include "engine/pol_lyanna.h"
#include "sim/config/profile.h"
#include "sim/replay/replay.h"

static sim_device dev;
static sim_model tgt, drf;

static void load_profiles(const char *configs)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/devices/oneplus12.lua", configs);
    if (sim_profile_load_device(path, &dev, err, sizeof err) != SIM_OK) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/models/qwen3-8b-q4_0.lua", configs);
    if (sim_profile_load_model(path, &tgt, err, sizeof err) != SIM_OK) exit(1);
    snprintf(path, sizeof path, "%s/models/qwen3-8b-eagle3-q4_0.lua", configs);
    if (sim_profile_load_model(path, &drf, err, sizeof err) != SIM_OK) exit(1);
}

static trc_trace *synth(double accept, double coverage, int32_t nodes)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 3;
    p.output_len = 48;
    p.max_nodes = nodes;
    p.n_accept = 1;
    p.accept[0] = accept;
    p.coverage = coverage;
    trc_trace *t = NULL;
    trc_err e;
    if (trc_synth(&p, &t, &e) != TRC_OK) {
        fprintf(stderr, "%s\n", e.msg);
        exit(1);
    }
    return t;
}

static int run(const trc_trace *t, const char *policy, int32_t k, double dram, int32_t max_new,
               sim_point_stats *st, char *err)
{
    const eng_policy_desc *d = eng_policy_lookup(policy);
    eng_chain_params cp;
    eng_params_defaults(d->params, &cp);
    cp.k = k;
    sim_point pt = {.device = &dev, .target = &tgt, .draft = &drf, .trace = t, .policy = d,
                    .policy_params = &cp, .dram_fraction = dram, .max_new_tokens = max_new,
                    .seed = 7, .accept = SIM_ACCEPT_GREEDY, .top_p = 0.9, .temperature = 1.0};
    return sim_replay_run(&pt, st, err, 256);
}

static void test_bounds(void)
{
    char err[256];
    sim_point_stats st;
    trc_trace *perfect = synth(1.0, 1.0, 16);
    trc_trace *useless = synth(0.0, 0.0, 16);
    for (int32_t k = 1; k <= 12; k++) {
        CHECK(run(perfect, "chain", k, 0.0, 48, &st, err) == SIM_OK);
        CHECK_EQ_INT(st.tokens, 3 * 48);
        /* every cycle emits k + 1 tokens, the last one of a prompt what is left */
        CHECK_EQ_INT(st.cycles, 3 * ((48 + k) / (k + 1)));
        CHECK_EQ_INT(st.accepted + st.cycles, st.tokens);
        CHECK(st.draft_ms > 0);
    }
    CHECK(run(useless, "chain", 8, 0.0, 48, &st, err) == SIM_OK);
    CHECK_EQ_INT(st.cycles, 3 * 48);
    CHECK_EQ_INT(st.accepted, 0);
    CHECK(fabs(st.tokens_per_cycle - 1.0) < 1e-12);
    /* k = 8 on a depth-8 trace: nodes past the recorded tree are synthesised */
    CHECK(run(useless, "chain", 8, 0.0, 48, &st, err) == SIM_OK);
    CHECK(st.coverage < 1.0 && st.coverage > 0.0);
    trc_free(perfect);
    trc_free(useless);
}

static void test_flash_ar(void)
{
    char err[256];
    sim_point_stats st, st2, pinned;
    trc_trace *t = synth(0.7, 0.9, 24);
    CHECK(run(t, "flash_ar", 0, 0.0, 20, &st, err) == SIM_OK);
    CHECK_EQ_INT(st.cycles, 60);
    CHECK_EQ_INT(st.tokens, 60);
    CHECK_EQ_INT(st.expansions, 0);
    CHECK(st.coverage == 1.0 && st.draft_ms == 0.0);
    /* Lever Table 1, Qwen3-8B: 1050.0 ms per token, within 5% */
    CHECK(fabs(st.ms_per_token - 1050.0) / 1050.0 < 0.05);
    CHECK(fabs(st.cycle_ms - st.ms_per_token) < 1e-9);
    CHECK(fabs(st.tokens_per_s * st.ms_per_token - 1000.0) < 1e-6);
    /* deterministic: the same point twice gives the same statistics */
    CHECK(run(t, "flash_ar", 0, 0.0, 20, &st2, err) == SIM_OK);
    st.sim_wall_s = st2.sim_wall_s = 0;
    CHECK(memcmp(&st, &st2, sizeof st) == 0);
    /* pinning layers removes flash reads and raises throughput monotonically */
    double prev = 0;
    for (int i = 0; i <= 10; i++) {
        CHECK(run(t, "flash_ar", 0, i / 10.0, 8, &pinned, err) == SIM_OK);
        CHECK(pinned.tokens_per_s >= prev);
        prev = pinned.tokens_per_s;
        CHECK_EQ_INT(pinned.resident_layers, (int32_t)floor(36 * (i / 10.0) + 1e-9));
    }
    /* every layer pinned: nothing streams but an untied head the profile
     * does not pin with the layers (pin_head) */
    CHECK(dev.pin_head ? pinned.flash_ms == 0.0 : pinned.flash_ms > 0.0);
    trc_free(t);
}

static void test_errors(void)
{
    char err[256];
    sim_point_stats st;
    trc_trace *t = synth(0.7, 0.9, 24);
    CHECK(run(t, "flash_ar", 0, 0.0, 0, &st, err) == SIM_CONFIG);
    CHECK(strstr(err, "max_new_tokens") != NULL);
    /* a model that cannot fit the DRAM budget when fully pinned */
    sim_model big = tgt;
    big.layers = 400;
    const eng_policy_desc *d = eng_policy_lookup("flash_ar");
    eng_flash_ar_params fp;
    eng_params_defaults(d->params, &fp);
    sim_point pt = {.device = &dev, .target = &big, .trace = t, .policy = d, .policy_params = &fp,
                    .dram_fraction = 1.0, .max_new_tokens = 4, .seed = 1, .top_p = 0.9,
                    .temperature = 1.0};
    CHECK(sim_replay_run(&pt, &st, err, sizeof err) == SIM_CONFIG_NOFIT);
    CHECK(strlen(err) > 0 && strchr(err, '\n') == NULL);
    trc_free(t);
}

/* Changes a policy's default params (a test's setting of them). */
typedef void (*params_fn)(void *params);

/* A point of policy (its default params, then tweak's changes when not
 * NULL) on d with n_var standing variants. */
static int run_on(const trc_trace *t, const char *policy, params_fn tweak, const sim_device *d,
                  const sim_device *var, int32_t n_var, sim_point_stats *st, char *err)
{
    const eng_policy_desc *desc = eng_policy_lookup(policy);
    static _Alignas(max_align_t) unsigned char params[4096];
    CHECK(desc && desc->params_size <= sizeof params);
    eng_params_defaults(desc->params, params);
    if (tweak) tweak(params);
    sim_point pt = {.device = d,
                    .target = &tgt,
                    .draft = &drf,
                    .trace = t,
                    .policy = desc,
                    .policy_params = params,
                    .max_new_tokens = 40,
                    .seed = 11,
                    .accept = SIM_ACCEPT_GREEDY,
                    .top_p = 0.9,
                    .temperature = 1.0,
                    .variants = var,
                    .n_variants = n_var};
    return sim_replay_run(&pt, st, err, 256);
}

/* Lyanna verifying each re-sampled subtree on its own (no fusion). */
static void lyanna_unfused(void *params)
{
    ((eng_lyanna_params *)params)->fusion = 0;
}

/* The adaptive chain falling back to autoregressive decoding below 0.9. */
static void chain_fallback(void *params)
{
    eng_adaptive_chain_params *p = params;
    p->fallback = 1;
    p->fallback_below = 0.9;
    p->probe_period = 4;
}

/* The model band of policy (tweaked) on dev with the variants var[0..3) is
 * the least and the most tokens_per_s of the point replayed on dev and on
 * each variant as a point of its own, exactly, and the variants change no
 * other number of the row. */
static void check_band(const trc_trace *t, const char *policy, params_fn tweak,
                       const sim_device *var)
{
    char err[256];
    sim_point_stats band, plain, own;
    CHECK_EQ_INT(run_on(t, policy, tweak, &dev, var, 3, &band, err), SIM_OK);
    CHECK_EQ_INT(run_on(t, policy, tweak, &dev, NULL, 0, &plain, err), SIM_OK);
    double lo = plain.tokens_per_s, hi = lo;
    for (int v = 0; v < 3; v++) {
        CHECK_EQ_INT(run_on(t, policy, tweak, &var[v], NULL, 0, &own, err), SIM_OK);
        CHECK(own.tokens_per_s != plain.tokens_per_s || v == 0); /* the variants matter */
        lo = own.tokens_per_s < lo ? own.tokens_per_s : lo;
        hi = own.tokens_per_s > hi ? own.tokens_per_s : hi;
    }
    CHECK(band.tokens_per_s_model_lo == lo && band.tokens_per_s_model_hi == hi);
    band.sim_wall_s = plain.sim_wall_s = 0;
    band.tokens_per_s_model_lo = plain.tokens_per_s_model_lo;
    band.tokens_per_s_model_hi = plain.tokens_per_s_model_hi;
    CHECK(memcmp(&band, &plain, sizeof band) == 0);
}

/* The model band (check_band) -- whether the variants are priced alongside
 * the point (policies that never see a latency) or replayed in full (the
 * others); a variant that cannot run fails the point as its own replay
 * fails. */
static void test_variants(void)
{
    static const char *const policies[] = {"flash_ar",       "chain",   "specinfer", "eagle2",
                                           "opt_tree",       "sequoia", "lever",     "lyanna",
                                           "adaptive_chain", "edgellm", "bld"};
    trc_trace *t = synth(0.7, 0.9, 24);
    sim_device var[3] = {dev, dev, dev};
    var[0].npu_gflops *= 1.2;
    var[0].verify_min_rows = 1;
    var[1].verify_setup_us = 0;
    var[1].launch_us *= 2;
    var[2].thermal = 1; /* throttled from the first second of a generation */
    var[2].thermal_onset_s = 1.0;
    var[2].thermal_throttle = 0.35;
    char err[256], err2[256];
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        check_band(t, policies[i], NULL, var);
    /* the policies listed as reading only the outcome, in their other modes */
    check_band(t, "lyanna", lyanna_unfused, var);
    check_band(t, "adaptive_chain", chain_fallback, var);
    /* the second variant does not fit the DRAM budget: the point fails as
     * that variant's own replay does */
    var[1].dram_budget_gb = 0.5;
    sim_point_stats st;
    for (size_t i = 0; i < 2; i++) {
        CHECK_EQ_INT(run_on(t, policies[i], NULL, &var[1], NULL, 0, &st, err), SIM_CONFIG_NOFIT);
        CHECK_EQ_INT(run_on(t, policies[i], NULL, &dev, var, 3, &st, err2), SIM_CONFIG_NOFIT);
        CHECK(strcmp(err, err2) == 0);
    }
    trc_free(t);
}

/* A point of policy on d with n_var device variants and the n_tv traces of
 * its acceptance bracket; prompts 0 = all. */
static int run_bracket(const trc_trace *t, const trc_trace *const *tv, int32_t n_tv,
                       const char *policy, const sim_device *d, const sim_device *var,
                       int32_t n_var, int32_t prompts, sim_point_stats *st, char *err)
{
    const eng_policy_desc *desc = eng_policy_lookup(policy);
    static _Alignas(max_align_t) unsigned char params[4096];
    CHECK(desc && desc->params_size <= sizeof params);
    eng_params_defaults(desc->params, params);
    sim_point pt = {.device = d, .target = &tgt, .draft = &drf, .trace = t, .policy = desc,
                    .policy_params = params, .max_new_tokens = 40, .prompts = prompts,
                    .seed = 11, .accept = SIM_ACCEPT_GREEDY, .variants = var,
                    .n_variants = n_var, .trace_variants = tv, .n_trace_variants = n_tv};
    return sim_replay_run(&pt, st, err, 256);
}

/* The acceptance bracket: the band spans the point replayed on every trace
 * (its own and each bracket end) on every device (its own and each variant),
 * each corner exactly as its own replay gives it; the bracket changes no
 * other number of the row, joins the point's content key, and an end that
 * lacks the point's prompts fails the point. */
static void test_trace_variants(void)
{
    trc_trace *t = synth(0.7, 0.9, 24), *lo_t = synth(0.45, 0.9, 24), *hi_t = synth(0.95, 0.9, 24);
    const trc_trace *tv[2] = {lo_t, hi_t};
    const trc_trace *all[3] = {t, lo_t, hi_t};
    sim_device var[2] = {dev, dev};
    var[0].npu_gflops *= 0.5;
    var[1].launch_us *= 3;
    static const char *const policies[] = {"chain", "edgellm", "flash_ar"};
    char err[256];
    for (size_t i = 0; i < 3; i++) {
        for (int32_t nv = 0; nv <= 2; nv += 2) { /* without and with device variants */
            sim_point_stats band, plain, own;
            CHECK_EQ_INT(run_bracket(t, tv, 2, policies[i], &dev, var, nv, 0, &band, err), SIM_OK);
            CHECK_EQ_INT(run_bracket(t, NULL, 0, policies[i], &dev, NULL, 0, 0, &plain, err),
                         SIM_OK);
            double lo = INFINITY, hi = -INFINITY;
            for (int k = 0; k < 3; k++)
                for (int v = -1; v < nv; v++) {
                    CHECK_EQ_INT(run_bracket(all[k], NULL, 0, policies[i], v < 0 ? &dev : &var[v],
                                             NULL, 0, 0, &own, err),
                                 SIM_OK);
                    lo = own.tokens_per_s < lo ? own.tokens_per_s : lo;
                    hi = own.tokens_per_s > hi ? own.tokens_per_s : hi;
                }
            CHECK(band.tokens_per_s_model_lo == lo && band.tokens_per_s_model_hi == hi);
            if (i < 2) /* the bracket matters to a policy that drafts */
                CHECK(lo < plain.tokens_per_s && hi > plain.tokens_per_s);
            band.sim_wall_s = plain.sim_wall_s = 0;
            band.tokens_per_s_model_lo = plain.tokens_per_s_model_lo;
            band.tokens_per_s_model_hi = plain.tokens_per_s_model_hi;
            CHECK(memcmp(&band, &plain, sizeof band) == 0);
        }
    }
    /* one end alone: the band is the two replays' range */
    sim_point_stats one, a, b;
    CHECK_EQ_INT(run_bracket(t, tv + 1, 1, "chain", &dev, NULL, 0, 0, &one, err), SIM_OK);
    CHECK_EQ_INT(run_bracket(t, NULL, 0, "chain", &dev, NULL, 0, 0, &a, err), SIM_OK);
    CHECK_EQ_INT(run_bracket(hi_t, NULL, 0, "chain", &dev, NULL, 0, 0, &b, err), SIM_OK);
    CHECK(one.tokens_per_s_model_lo == a.tokens_per_s && one.tokens_per_s_model_hi == b.tokens_per_s);
    /* the content key: none as before, each end and its order count */
    const eng_policy_desc *desc = eng_policy_lookup("chain");
    sim_point pt = {.trace = t, .policy = desc};
    uint64_t k0 = sim_point_content_key(&pt);
    CHECK(k0 == trc_checksum(t));
    pt.trace_variants = tv, pt.n_trace_variants = 2;
    uint64_t k2 = sim_point_content_key(&pt);
    const trc_trace *rev[2] = {hi_t, lo_t};
    pt.trace_variants = rev;
    uint64_t kr = sim_point_content_key(&pt);
    pt.n_trace_variants = 1;
    uint64_t k1 = sim_point_content_key(&pt);
    CHECK(k2 != k0 && kr != k2 && k1 != k2 && k1 != k0);
    /* an end with fewer prompts than the point replays fails the point */
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 1, p.output_len = 48, p.max_nodes = 24, p.n_accept = 1, p.accept[0] = 0.5;
    trc_trace *short_t = NULL;
    trc_err e;
    CHECK(trc_synth(&p, &short_t, &e) == TRC_OK);
    const trc_trace *bad[1] = {short_t};
    CHECK(run_bracket(t, bad, 1, "chain", &dev, NULL, 0, 0, &one, err) != SIM_OK);
    CHECK_EQ_INT(run_bracket(t, bad, 1, "chain", &dev, NULL, 0, 1, &one, err), SIM_OK);
    trc_free(short_t);
    trc_free(t), trc_free(lo_t), trc_free(hi_t);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_replay CONFIG_DIR\n");
        return 2;
    }
    load_profiles(argv[1]);
    test_bounds();
    test_flash_ar();
    test_errors();
    test_variants();
    test_trace_variants();
    return check_done("replay/replay");
}
