/*
 * test_cost_agreement.c -- a policy must plan with the costs the phone
 * charges.  Lever's gain-cost construction prices a verification shape (rows,
 * leaves) from the runtime's offline profile (the verification of that shape
 * priced alone as a tree, the projection of one row); every cycle of a replay is then
 * charged by the phone model.  For each cycle the charge must lie within
 * Lever's documented unseen-shape penalty (+-10%) of the price of its shape at
 * the cycle's context -- what remains between them is the on-demand
 * projection of the accepted path, which the profile leaves out on purpose --
 * at DRAM fractions 0, 0.6 and 1, with and without a one-row set-up.  A cycle
 * priced as a tree but charged as a plain decode step (or the reverse) fails;
 * a cycle that drafted nothing (a prompt's last token) is a plain decode step.
 *
 * argv[1]: the configs directory; argv[2]: the bundled traces directory.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "engine/pol_lever.h"
#include "sim/config/profile.h"
#include "sim/replay/replay.h"

typedef struct agree {
    sim_hw *hw;
    int32_t cycles, one_row_cycles;
    double worst; /* largest |charged / priced - 1| */
} agree;

/* The verification of *v priced alone on hw (the clock does not move). */
static double verify_ms(sim_hw *hw, const sim_verify_shape *v)
{
    const sim_cycle_req q = {.verify = v, .price = 1, .walls_only = 1};
    sim_cycle_time t;
    CHECK(sim_hw_cycle(hw, &q, &t) == SIM_OK);
    return t.verify_ms;
}

static void on_cycle(void *ctx, const sim_cycle_info *ci)
{
    agree *a = ctx;
    /* a cycle that drafted nothing and verifies one row is a plain decode
     * step (the replay's rule): a prompt's last token leaves no room to
     * draft, so no plan was priced; it must be charged as a decode step */
    int decode = ci->draft_calls == 0 && ci->provisional_calls == 0 && ci->rows == 1;
    sim_verify_shape v = {.rows = ci->rows,
                          .decode = decode,
                          .leaves = ci->leaves,
                          .ctx_len = ci->ctx_len,
                          .exit_layer = -1,
                          .rows_after_exit = ci->rows,
                          .proj = ENG_PROJ_ONDEMAND_CPU,
                          .proj_rows = 1};
    double priced = verify_ms(a->hw, &v);
    /* the charge itself: the same shape with the accepted path's projection */
    sim_verify_shape c = v;
    c.proj_rows = ci->accepted + 1 < ci->rows ? ci->accepted + 1 : ci->rows;
    double charged = verify_ms(a->hw, &c);
    CHECK(fabs(ci->ct->verify_ms - charged) <= 1e-6 * charged);
    double r = fabs(ci->ct->verify_ms / priced - 1.0);
    if (r > a->worst) a->worst = r;
    a->cycles++;
    a->one_row_cycles += ci->rows == 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_cost_agreement CONFIG_DIR TRACE_DIR\n");
        return 2;
    }
    sim_device dev;
    sim_model tgt, drf;
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/devices/oneplus12.lua", argv[1]);
    CHECK(sim_profile_load_device(path, &dev, err, sizeof err) == SIM_OK);
    snprintf(path, sizeof path, "%s/models/qwen3-8b-q4_0.lua", argv[1]);
    CHECK(sim_profile_load_model(path, &tgt, err, sizeof err) == SIM_OK);
    snprintf(path, sizeof path, "%s/models/qwen3-8b-eagle3-q4_0.lua", argv[1]);
    CHECK(sim_profile_load_model(path, &drf, err, sizeof err) == SIM_OK);
    snprintf(path, sizeof path, "%s/workload-code-strong.h5", argv[2]);
    trc_trace *t = NULL;
    trc_err e;
    CHECK(trc_load(path, &t, &e) == TRC_OK);
    const eng_policy_desc *d = eng_policy_lookup("lever");
    CHECK(d != NULL);
    if (!t || !d) return check_done("replay/cost_agreement");
    eng_lever_params p;
    eng_params_defaults(d->params, &p);
    p.pruning = ENG_PRUNE_NONE; /* pruning may only make a charge smaller than planned */
    static const double fractions[] = {0.0, 0.6, 1.0};
    for (int one = 0; one <= 1; one++) {
        sim_device dv = dev;
        dv.verify_setup_one_row = one;
        for (int i = 0; i < 3; i++) {
            agree a = {0};
            CHECK(sim_hw_create(&dv, &tgt, &drf, fractions[i], 4096, &a.hw, err, sizeof err) ==
                  SIM_OK);
            if (!a.hw) continue;
            for (int32_t pr = 0; pr < 4; pr++) {
                sim_point pt = {.device = &dv,
                                .target = &tgt,
                                .draft = &drf,
                                .trace = t,
                                .policy = d,
                                .policy_params = &p,
                                .dram_fraction = fractions[i],
                                .max_new_tokens = 64,
                                .prompts = 4,
                                .seed = 1,
                                .cycle_fn = on_cycle,
                                .trace_ctx = &a,
                                .trace_prompt = pr};
                sim_point_stats st;
                int rc = sim_replay_run(&pt, &st, err, sizeof err);
                if (rc != SIM_OK) fprintf(stderr, "%s\n", err);
                CHECK_EQ_INT(rc, SIM_OK);
            }
            fprintf(stderr,
                    "one_row %d, DRAM %.1f: %d cycles (%d of one row), charged within "
                    "%.1f%% of the planned price\n",
                    one, fractions[i], a.cycles, a.one_row_cycles, 100 * a.worst);
            CHECK(a.cycles > 0);
            CHECK(a.worst <= 0.10);
            sim_hw_destroy(a.hw);
        }
    }
    trc_free(t);
    return check_done("replay/cost_agreement");
}
