/*
 * rp_variants.h -- private to sim/replay: the standing variants of a point's
 * device priced alongside its replay (rp_variants.c), for replay.c.
 */
#ifndef RP_VARIANTS_H
#define RP_VARIANTS_H

#include <stdint.h>

#include "engine/eng_policy.h"
#include "replay.h"
#include "sim/hw/sim_hw.h"

/* One variant of pt->variants while the point replays (rp_variants.c). */
typedef struct rp_variant {
    sim_hw *hw;   /* while the point replays */
    int32_t most; /* the variant's largest compiled graph (check_plan), 0 none */
    int priced;   /* every cycle so far priced on it */
    double total_ms;
} rp_variant;

/* Sets up var[0..n_var) for pt->variants[0..n_var) (var zeroed by the
 * caller): their phone models at KV context max_ctx when pol (the point's
 * policy, created) never sees a latency.  Returns how many are priced
 * alongside: n_var, or 0.  rp_variants_close frees them. */
int32_t rp_variants_open(rp_variant *var, int32_t n_var, const sim_point *pt, const eng_policy *pol,
                         int32_t max_ctx);
/* A prompt begins: sim_hw_generation_start on every variant still priced. */
void rp_variants_start(rp_variant *var, int32_t n_var);
/* One cycle of the point, as its phone model ran it -- req (draft calls, the
 * verification, the overlapping calls), a plan of rows rows over n_verified
 * verified nodes -- priced on every variant still priced: its total_ms grows,
 * or it stops being priced.  The device's phone model must have accepted the
 * cycle (sim_cycle_req.accepted); req's call_ms is not written. */
void rp_variants_price(rp_variant *var, int32_t n_var, const sim_cycle_req *req, int32_t rows,
                       int32_t n_verified);
/* Frees the variants' phone models (NULL ones included); var stays readable. */
void rp_variants_close(rp_variant *var, int32_t n_var);
/* A variant's tokens_per_s from total_ms, given the point's own statistics
 * out (the same cycles and tokens). */
double rp_variant_tokens_per_s(const sim_point_stats *out, double total_ms);

#endif
