/*
 * test_lever_replay.c -- every Lever variant (drafting x pruning x schedule x
 * projection) on both bundled traces under greedy acceptance: each point
 * succeeds (the replay fails a point that emits a non-reference token, or
 * whose pruning changed an emitted token), rows_kept and retention lie in
 * (0, 1] and are 1 without pruning, and for the fixed-shape constructions
 * without pruning the projection placement leaves the accepted tokens
 * unchanged (same seed).
 *
 * argv[1]: the configs directory; argv[2]: the bundled traces directory.
 */
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "engine/pol_lever.h"
#include "sim/config/profile.h"
#include "sim/replay/replay.h"
#include "../profiles_fixture.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_lever_replay CONFIG_DIR TRACE_DIR\n");
        return 2;
    }
    load_profiles(argv[1]);
    const eng_policy_desc *d = eng_policy_lookup("lever");
    CHECK(d != NULL);
    if (!d) return check_done("replay/lever");
    static const char *const files[] = {"synth-default.h5", "synth-small.h5"};
    for (size_t f = 0; f < 2; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", argv[2], files[f]);
        trc_trace *t = NULL;
        trc_err e;
        CHECK(trc_load(path, &t, &e) == TRC_OK);
        if (!t) continue;
        for (int32_t dr = ENG_LEVER_GAIN_COST; dr <= ENG_LEVER_SEQUOIA; dr++) {
            for (int32_t pr = ENG_PRUNE_NONE; pr <= ENG_PRUNE_FULL; pr++) {
                for (int32_t sc = ENG_LEVER_HYBRID; sc <= ENG_LEVER_NPU; sc++) {
                    int64_t tok0 = -1, acc0 = -1;
                    for (int32_t pj = 0; pj <= ENG_LEVER_PROJ_NPU_ON_DEMAND; pj++) {
                        eng_lever_params p;
                        eng_params_defaults(d->params, &p);
                        p.drafting = dr;
                        p.pruning = pr;
                        p.draft_schedule = sc;
                        p.projection = pj;
                        sim_point pt = {.device = &dev,
                                        .target = &tgt,
                                        .draft = &drf,
                                        .trace = t,
                                        .policy = d,
                                        .policy_params = &p,
                                        .max_new_tokens = 48,
                                        .seed = 1};
                        sim_point_stats st;
                        char err[256] = "";
                        int rc = sim_replay_run(&pt, &st, err, sizeof err);
                        if (rc != SIM_OK)
                            fprintf(stderr, "%s d%d p%d s%d j%d: %s\n", files[f], dr, pr, sc, pj,
                                    err);
                        CHECK_EQ_INT(rc, SIM_OK);
                        CHECK_EQ_INT(st.mismatched, 0);
                        CHECK(st.rows_kept > 0 && st.rows_kept <= 1.0);
                        CHECK(st.retention > 0 && st.retention <= 1.0);
                        CHECK(st.accepted <= st.accepted_unpruned);
                        if (pr == ENG_PRUNE_NONE) CHECK(st.rows_kept == 1.0 && st.retention == 1.0);
                        if (dr != ENG_LEVER_GAIN_COST && pr == ENG_PRUNE_NONE) {
                            if (tok0 < 0) {
                                tok0 = st.tokens;
                                acc0 = st.accepted;
                            }
                            CHECK_EQ_INT(st.tokens, tok0);
                            CHECK_EQ_INT(st.accepted, acc0);
                        }
                    }
                }
            }
        }
        trc_free(t);
    }
    return check_done("replay/lever");
}
