/*
 * test_tree_replay.c -- every registered policy on every bundled trace.
 *
 * Under greedy acceptance each point must succeed -- the replay's built-in
 * check fails a point that emits a non-reference token -- with token_mismatch
 * 0; waste lies in [0, verify) and vanishes for Flash-AR; coverage is in
 * (0, 1].  The lossy rules run too: top_p at 0.9 accepts at least as much as
 * greedy and may leave the reference (token_mismatch >= 0), sampling at
 * temperature 1 is reproducible for a seed.  A policy with a calibrate hook
 * (Sequoia) gets a profile and picks a tree no larger than its budget.
 *
 * argv[1]: the configs directory; argv[2]: the bundled traces directory.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "sim/config/profile.h"
#include "sim/replay/replay.h"
#include "../profiles_fixture.h"

static int run(const trc_trace *t, const eng_policy_desc *d, int32_t accept, double top_p,
               sim_point_stats *st)
{
    _Alignas(8) unsigned char params[1024];
    eng_params_defaults(d->params, params);
    sim_point pt = {.device = &dev, .target = &tgt, .draft = &drf, .trace = t, .policy = d,
                    .policy_params = params, .dram_fraction = 0.0, .max_new_tokens = 128,
                    .prompts = 0, .seed = 1, .accept = accept, .top_p = top_p,
                    .temperature = 1.0};
    char err[256] = "";
    int rc = sim_replay_run(&pt, st, err, sizeof err);
    if (rc != SIM_REPLAY_OK) fprintf(stderr, "%s: %s\n", d->name, err);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_tree_replay CONFIG_DIR TRACE_DIR\n");
        return 2;
    }
    load_profiles(argv[1]);
    static const char *const files[] = {"synth-default.h5", "synth-small.h5"};
    int32_t n = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&n);
    CHECK(n >= 7);
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", argv[2], files[f]);
        trc_trace *t = NULL;
        trc_err e;
        CHECK(trc_load(path, &t, &e) == TRC_OK);
        if (!t) continue;
        for (int32_t i = 0; i < n; i++) {
            sim_point_stats g, tp, s1, s2;
            CHECK_EQ_INT(run(t, reg[i], SIM_ACCEPT_GREEDY, 0.9, &g), SIM_REPLAY_OK);
            CHECK(g.tokens > 0 && g.cycles > 0);
            CHECK_EQ_INT(g.mismatched, 0);
            CHECK(g.token_mismatch == 0.0);
            CHECK(g.waste_ms >= 0 && g.waste_ms < g.verify_ms + 1e-9);
            CHECK(g.waste_frac >= 0 && g.waste_frac < 1);
            CHECK(g.coverage > 0 && g.coverage <= 1);
            if (!reg[i]->needs_draft) CHECK(g.waste_ms == 0.0);
            CHECK_EQ_INT(run(t, reg[i], SIM_ACCEPT_TOP_P, 0.9, &tp), SIM_REPLAY_OK);
            CHECK(tp.token_mismatch >= 0 && tp.token_mismatch <= 1);
            CHECK(tp.tokens == g.tokens);
            CHECK_EQ_INT(run(t, reg[i], SIM_ACCEPT_SAMPLING, 0.9, &s1), SIM_REPLAY_OK);
            CHECK_EQ_INT(run(t, reg[i], SIM_ACCEPT_SAMPLING, 0.9, &s2), SIM_REPLAY_OK);
            CHECK(s1.tokens == s2.tokens && s1.cycles == s2.cycles &&
                  s1.mismatched == s2.mismatched);
            printf("%-16s %-18s greedy %.3f tok/s acc %.2f | top_p acc %.2f mismatch %.3f | "
                   "sampling acc %.2f mismatch %.3f\n",
                   reg[i]->name, files[f], g.tokens_per_s, g.mean_accepted, tp.mean_accepted,
                   tp.token_mismatch, s1.mean_accepted, s1.token_mismatch);
        }
        trc_free(t);
    }
    /* bad acceptance parameters are configuration errors */
    sim_point_stats st;
    const eng_policy_desc *chain = eng_policy_lookup("chain");
    trc_trace *t = NULL;
    trc_err e;
    char path[1024];
    snprintf(path, sizeof path, "%s/synth-small.h5", argv[2]);
    CHECK(trc_load(path, &t, &e) == TRC_OK);
    if (t) {
        CHECK_EQ_INT(run(t, chain, SIM_ACCEPT_TOP_P, 0.0, &st), SIM_REPLAY_E_CONFIG);
        CHECK_EQ_INT(run(t, chain, 7, 0.9, &st), SIM_REPLAY_E_CONFIG);
        trc_free(t);
    }
    return check_done("replay/tree_replay");
}
