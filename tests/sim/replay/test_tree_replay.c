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

static int run_params(const trc_trace *t, const eng_policy_desc *d, const void *params,
                      int32_t accept, double top_p, sim_point_stats *st)
{
    sim_point pt = {.device = &dev, .target = &tgt, .draft = &drf, .trace = t, .policy = d,
                    .policy_params = params, .dram_fraction = 0.0, .max_new_tokens = 128,
                    .prompts = 0, .seed = 1, .accept = accept, .top_p = top_p,
                    .temperature = 1.0};
    char err[256] = "";
    int rc = sim_replay_run(&pt, st, err, sizeof err);
    if (rc != SIM_OK) fprintf(stderr, "%s: %s\n", d->name, err);
    return rc;
}

static int run(const trc_trace *t, const eng_policy_desc *d, int32_t accept, double top_p,
               sim_point_stats *st)
{
    _Alignas(8) unsigned char params[1024];
    eng_params_defaults(d->params, params);
    return run_params(t, d, params, accept, top_p, st);
}

static int run_with(const trc_trace *t, const eng_policy_desc *d, const void *params,
                    int32_t accept, sim_point_stats *st)
{
    return run_params(t, d, params, accept, 0.9, st);
}

/* Big Little Decoder on a bundled trace.  With fallback = 0 it never falls
 * back, so it drafts Chain-SD's chain of k = max_len tokens: the same point,
 * number for number.  Greedy output stays the reference's at every threshold
 * (the replay fails a point otherwise).  fallback = 1 keeps only tokens the
 * draft is certain of, and the bundled traces record none: every cycle
 * verifies the root alone after one draft call and emits one token.  The
 * default threshold verifies fewer rows than the chain and never more than
 * max_len + 1 at once. */
static void bld_points(const trc_trace *t)
{
    const eng_policy_desc *bld = eng_policy_lookup("bld"), *chain = eng_policy_lookup("chain");
    CHECK(bld && chain);
    if (!bld || !chain) return;
    _Alignas(8) unsigned char bp[256], cp[256];
    eng_params_defaults(bld->params, bp);
    eng_params_defaults(chain->params, cp);
    const eng_param_desc *fb = eng_params_find(bld->params, "fallback");
    const eng_param_desc *ml = eng_params_find(bld->params, "max_len");
    const eng_param_desc *k = eng_params_find(chain->params, "k");
    CHECK(fb && ml && k);
    if (!fb || !ml || !k) return;
    sim_point_stats b0, c0, bd, b1;
    for (int32_t len = 3; len <= 10; len += 7) {
        double zero = 0.0;
        memcpy(bp + fb->offset, &zero, sizeof zero);
        memcpy(bp + ml->offset, &len, sizeof len);
        memcpy(cp + k->offset, &len, sizeof len);
        CHECK_EQ_INT(run_with(t, bld, bp, SIM_ACCEPT_GREEDY, &b0), SIM_OK);
        CHECK_EQ_INT(run_with(t, chain, cp, SIM_ACCEPT_GREEDY, &c0), SIM_OK);
        CHECK(b0.tokens == c0.tokens && b0.cycles == c0.cycles && b0.accepted == c0.accepted &&
              b0.verify_rows == c0.verify_rows && b0.verify_rows_max == c0.verify_rows_max &&
              b0.tokens_per_s == c0.tokens_per_s);
        CHECK_EQ_INT(b0.verify_rows_max, len + 1);
    }
    eng_params_defaults(bld->params, bp);
    CHECK_EQ_INT(run_with(t, bld, bp, SIM_ACCEPT_GREEDY, &bd), SIM_OK);
    CHECK_EQ_INT(bd.mismatched, 0);
    CHECK(bd.verify_rows < c0.verify_rows && bd.verify_rows_max <= 11 && bd.accepted > 0);
    double one = 1.0;
    memcpy(bp + fb->offset, &one, sizeof one);
    CHECK_EQ_INT(run_with(t, bld, bp, SIM_ACCEPT_GREEDY, &b1), SIM_OK);
    CHECK_EQ_INT(b1.mismatched, 0);
    CHECK_EQ_INT(b1.accepted, 0);
    CHECK_EQ_INT(b1.tokens, b1.cycles);
    CHECK_EQ_INT(b1.verify_rows_max, 1);
    CHECK(b1.tokens == bd.tokens);
    printf("bld: fallback 0 = chain (%.3f tok/s), default %.3f tok/s acc %.2f rows max %lld, "
           "fallback 1 %.3f tok/s acc %.2f\n",
           c0.tokens_per_s, bd.tokens_per_s, bd.mean_accepted, (long long)bd.verify_rows_max,
           b1.tokens_per_s, b1.mean_accepted);
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
            CHECK_EQ_INT(run(t, reg[i], SIM_ACCEPT_GREEDY, 0.9, &g), SIM_OK);
            CHECK(g.tokens > 0 && g.cycles > 0);
            CHECK_EQ_INT(g.mismatched, 0);
            CHECK(g.token_mismatch == 0.0);
            CHECK(g.waste_ms >= 0 && g.waste_ms < g.verify_ms + 1e-9);
            CHECK(g.waste_frac >= 0 && g.waste_frac < 1);
            CHECK(g.coverage > 0 && g.coverage <= 1);
            if (!reg[i]->needs_draft) CHECK(g.waste_ms == 0.0);
            CHECK_EQ_INT(run(t, reg[i], SIM_ACCEPT_TOP_P, 0.9, &tp), SIM_OK);
            CHECK(tp.token_mismatch >= 0 && tp.token_mismatch <= 1);
            CHECK(tp.tokens == g.tokens);
            CHECK_EQ_INT(run(t, reg[i], SIM_ACCEPT_SAMPLING, 0.9, &s1), SIM_OK);
            CHECK_EQ_INT(run(t, reg[i], SIM_ACCEPT_SAMPLING, 0.9, &s2), SIM_OK);
            CHECK(s1.tokens == s2.tokens && s1.cycles == s2.cycles &&
                  s1.mismatched == s2.mismatched);
            printf("%-16s %-18s greedy %.3f tok/s acc %.2f | top_p acc %.2f mismatch %.3f | "
                   "sampling acc %.2f mismatch %.3f\n",
                   reg[i]->name, files[f], g.tokens_per_s, g.mean_accepted, tp.mean_accepted,
                   tp.token_mismatch, s1.mean_accepted, s1.token_mismatch);
        }
        bld_points(t);
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
        CHECK_EQ_INT(run(t, chain, SIM_ACCEPT_TOP_P, 0.0, &st), SIM_CONFIG);
        CHECK_EQ_INT(run(t, chain, 7, 0.9, &st), SIM_CONFIG);
        trc_free(t);
    }
    return check_done("replay/tree_replay");
}
