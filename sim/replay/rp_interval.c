/*
 * rp_interval.c -- the bootstrap interval of a point's throughput over its
 * prompts (sim_point_stats.tokens_per_s_lo/hi; sim/replay/README.md
 * "Confidence intervals"): RP_BOOTSTRAP resamples of the prompts with
 * replacement, each giving sum of tokens over sum of decode time, and the
 * 2.5% and 97.5% quantiles of those rates.  The resamples come from GSL's
 * mt19937 seeded from the point's seed, so an interval is reproducible.
 *
 * Cost: RP_BOOTSTRAP x prompts draws per point; replay.c asks for it only
 * where it is read (not with sim_point.no_interval, nor for a variant
 * replayed in full).
 */
#include "rp_interval.h"
#include "rp_draw.h"

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>

/* 95% percentile-bootstrap interval of sum(tok) / sum(ms) over prompts.  The
 * two quantiles read only the order statistics at floor(f (B - 1)) and the
 * next (gsl_stats_quantile_from_sorted_data), so instead of sorting all B
 * rates the k smallest and k largest are placed, in order, at both ends of
 * the array it reads: the same two values each, at a fraction of the cost. */
void rp_bootstrap_ci(const int64_t *tok, const double *ms, int32_t n, uint64_t seed, double *lo,
                     double *hi)
{
    const double f_lo = 0.025, f_hi = 0.975;
    const size_t B = RP_BOOTSTRAP;
    const size_t k_lo = (size_t)(f_lo * (double)(B - 1)) + 2; /* positions 0 .. k_lo - 1 */
    const size_t k_hi = B - (size_t)(f_hi * (double)(B - 1)); /* B - k_hi .. B - 1 */
    double *rate = malloc(sizeof(double) * (3 * B));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    rp_uniform_int pick; /* gsl_rng_uniform_int(r, n), its scale kept */
    if (!rate || !r || n < 2 || !rp_uniform_int_init(&pick, r, (unsigned long)n)) {
        free(rate);
        gsl_rng_free(r);
        return; /* lo, hi keep the point estimate */
    }
    double *ends = rate + B, *top = rate + 2 * B;
    gsl_rng_set(r, (unsigned long)(seed ^ 0xb0075a3b1e5ULL));
    for (size_t b = 0; b < B; b++) {
        double st = 0.0, sm = 0.0;
        for (int32_t i = 0; i < n; i++) {
            unsigned long j = rp_uniform_int_draw(&pick);
            st += (double)tok[j];
            sm += ms[j];
        }
        rate[b] = rp_tokens_per_s(st, sm);
    }
    gsl_sort_smallest(ends, k_lo, rate, 1, B); /* ends' middle is never read */
    gsl_sort_largest(top, k_hi, rate, 1, B);   /* descending */
    for (size_t j = 0; j < k_hi; j++)
        ends[B - 1 - j] = top[j];
    *lo = gsl_stats_quantile_from_sorted_data(ends, 1, B, f_lo);
    *hi = gsl_stats_quantile_from_sorted_data(ends, 1, B, f_hi);
    free(rate);
    gsl_rng_free(r);
}
