/*
 * rp_variants.c -- a point's cycles priced on its device's standing variants
 * (replay.h, sim_point.variants) while the point replays.
 *
 * A standing variant of the device priced alongside the point's own replay
 * (sim_replay_run): a policy that never sees a latency (built in, without a
 * calibrate or provisional hook, and without an observe hook or with one
 * that reads only the outcome, eng_policy_observes_outcome) drafts the same
 * trees, verifies the same plans and accepts the same tokens on any phone
 * (the variant's replay has the point's seed), so a variant's replay
 * differs from the device's only in the prices of its cycles; the variant's
 * phone model prices each cycle as the device's does, in the same order, and
 * its decode time is their sum, as its own replay would add them.  A variant
 * whose phone model cannot be made or refuses a cycle, or whose compiled
 * graphs would refuse a plan the device's took (replay.c's check_plan), is not priced
 * (priced = 0) and is replayed in full afterwards, which reports what failed
 * exactly as before.
 *
 * Life of a variant in one replay: rp_variants_open makes its phone model
 * after the device's, rp_variants_start begins each prompt on it,
 * rp_variants_price adds each cycle's price (or stops pricing it for good),
 * rp_variants_close frees it; sim_replay_run then reads total_ms
 * (rp_variant_tokens_per_s) or replays the variant in full.
 */
#include "rp_variants.h"

#include "rp_interval.h"

/* The variants' phone models (rp_variant), made as their own replays would
 * make them, when the policy never sees a latency: a built-in policy (a Lua
 * or plug-in one may read the host's clock) without calibrate or
 * provisional hooks whose observe hook, if it has one, reads only the
 * outcome.  Otherwise none is priced alongside (0 returned). */
int32_t rp_variants_open(rp_variant *var, int32_t n_var, const sim_point *pt, const eng_policy *pol,
                         int32_t max_ctx)
{
    const eng_policy_i *h = pol->i;
    if (eng_policy_lookup(pt->policy->name) != pt->policy || h->calibrate || h->provisional ||
        (h->observe && !eng_policy_observes_outcome(pt->policy)))
        n_var = 0;
    for (int32_t i = 0; i < n_var; i++) {
        rp_variant *v = &var[i];
        const sim_device *d = &pt->variants[i];
        char hw_err[256];
        v->most = d->n_npu_shapes > 0 ? d->npu_shapes[d->n_npu_shapes - 1] : 0;
        if (d->verify_unit == SIM_VERIFY_CPU) v->most = INT32_MAX; /* no compiled graph */
        v->total_ms = 0.0;
        v->priced =
            sim_hw_create(d, pt->target, pt->policy->needs_draft ? pt->draft : NULL,
                          pt->dram_fraction, max_ctx, &v->hw, hw_err, sizeof hw_err) == SIM_OK;
    }
    return n_var;
}

/* A prompt's generation starts on the variants still priced, as on the
 * device. */
void rp_variants_start(rp_variant *var, int32_t n_var)
{
    for (int32_t i = 0; i < n_var; i++)
        if (var[i].priced) sim_hw_generation_start(var[i].hw);
}

/* The cycle priced on each variant still priced alongside (rp_variant): the
 * plan must pass check_plan against the variant's compiled graphs (it passed
 * the device's, and only the largest graph differs), then its phone model
 * prices the same calls and verification. */
void rp_variants_price(rp_variant *var, int32_t n_var, const sim_cycle_req *req, int32_t rows,
                       int32_t n_verified)
{
    /* the device accepted the cycle; only its duration is added up, and the
     * device's call latencies stay the device's */
    sim_cycle_req q = *req;
    q.call_ms = NULL;
    q.walls_only = 1;
    q.accepted = 1;
    for (int32_t i = 0; i < n_var; i++) {
        rp_variant *v = &var[i];
        sim_cycle_time t;
        if (!v->priced) continue;
        if ((rows > n_verified && rows > v->most) || sim_hw_cycle(v->hw, &q, &t) != SIM_OK)
            v->priced = 0;
        else
            v->total_ms += t.cycle_ms;
    }
}

void rp_variants_close(rp_variant *var, int32_t n_var)
{
    for (int32_t i = 0; i < n_var; i++) {
        sim_hw_destroy(var[i].hw);
        var[i].hw = NULL;
    }
}

/* A variant's tokens_per_s from its priced decode time, as replay_finish
 * computes it for the same cycles and tokens. */
double rp_variant_tokens_per_s(const sim_point_stats *out, double total_ms)
{
    return out->cycles > 0 ? rp_tokens_per_s((double)out->tokens, total_ms) : 0.0;
}
