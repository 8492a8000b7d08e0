/*
 * test_replay.c -- the replay loop end to end in C: exact bounds with perfect
 * and useless drafts, the per-cycle identities, determinism, DRAM residency,
 * coverage, and the errors a point can report.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "engine/pol_chain.h"
#include "engine/pol_flash_ar.h"
#include "sim/config/profile.h"
#include "sim/replay/replay.h"

static sim_device dev;
static sim_model tgt, drf;

static void load_profiles(const char *configs)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/devices/oneplus12.lua", configs);
    if (sim_profile_load_device(path, &dev, err, sizeof err) != SIM_PROFILE_OK) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/models/qwen3-8b-q4_0.lua", configs);
    if (sim_profile_load_model(path, &tgt, err, sizeof err) != SIM_PROFILE_OK) exit(1);
    snprintf(path, sizeof path, "%s/models/qwen3-8b-eagle3-q4_0.lua", configs);
    if (sim_profile_load_model(path, &drf, err, sizeof err) != SIM_PROFILE_OK) exit(1);
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
        CHECK(run(perfect, "chain", k, 0.0, 48, &st, err) == SIM_REPLAY_OK);
        CHECK_EQ_INT(st.tokens, 3 * 48);
        /* every cycle emits k + 1 tokens, the last one of a prompt what is left */
        CHECK_EQ_INT(st.cycles, 3 * ((48 + k) / (k + 1)));
        CHECK_EQ_INT(st.accepted + st.cycles, st.tokens);
        CHECK(st.draft_ms > 0);
    }
    CHECK(run(useless, "chain", 8, 0.0, 48, &st, err) == SIM_REPLAY_OK);
    CHECK_EQ_INT(st.cycles, 3 * 48);
    CHECK_EQ_INT(st.accepted, 0);
    CHECK(fabs(st.tokens_per_cycle - 1.0) < 1e-12);
    /* k = 8 on a depth-8 trace: nodes past the recorded tree are synthesised */
    CHECK(run(useless, "chain", 8, 0.0, 48, &st, err) == SIM_REPLAY_OK);
    CHECK(st.coverage < 1.0 && st.coverage > 0.0);
    trc_free(perfect);
    trc_free(useless);
}

static void test_flash_ar(void)
{
    char err[256];
    sim_point_stats st, st2, pinned;
    trc_trace *t = synth(0.7, 0.9, 24);
    CHECK(run(t, "flash_ar", 0, 0.0, 20, &st, err) == SIM_REPLAY_OK);
    CHECK_EQ_INT(st.cycles, 60);
    CHECK_EQ_INT(st.tokens, 60);
    CHECK_EQ_INT(st.expansions, 0);
    CHECK(st.coverage == 1.0 && st.draft_ms == 0.0);
    /* Lever Table 1, Qwen3-8B: 1050.0 ms per token, within 5% */
    CHECK(fabs(st.ms_per_token - 1050.0) / 1050.0 < 0.05);
    CHECK(fabs(st.cycle_ms - st.ms_per_token) < 1e-9);
    CHECK(fabs(st.tokens_per_s * st.ms_per_token - 1000.0) < 1e-6);
    /* deterministic: the same point twice gives the same statistics */
    CHECK(run(t, "flash_ar", 0, 0.0, 20, &st2, err) == SIM_REPLAY_OK);
    st.sim_wall_s = st2.sim_wall_s = 0;
    CHECK(memcmp(&st, &st2, sizeof st) == 0);
    /* pinning layers removes flash reads and raises throughput monotonically */
    double prev = 0;
    for (int i = 0; i <= 10; i++) {
        CHECK(run(t, "flash_ar", 0, i / 10.0, 8, &pinned, err) == SIM_REPLAY_OK);
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
    CHECK(run(t, "flash_ar", 0, 0.0, 0, &st, err) == SIM_REPLAY_E_CONFIG);
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
    CHECK(sim_replay_run(&pt, &st, err, sizeof err) == SIM_REPLAY_E_NOFIT);
    CHECK(strlen(err) > 0 && strchr(err, '\n') == NULL);
    trc_free(t);
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
    return check_done("replay/replay");
}
