/*
 * rp_interval.h -- private to sim/replay: the bootstrap interval over prompts
 * (rp_interval.c), for replay.c.
 */
#ifndef RP_INTERVAL_H
#define RP_INTERVAL_H

#include <stdint.h>

#include "replay.h"

/* Tokens per second of tokens generated in ms milliseconds (0 without
 * time): the one rule behind a point's tokens_per_s, its interval's
 * resampled rates and its variants' rates, so that they compare exactly. */
static inline double rp_tokens_per_s(double tokens, double ms)
{
    return ms > 0 ? tokens / (ms / 1000.0) : 0.0;
}

/* The 95% percentile-bootstrap interval of sum(tok) / sum(ms) (tokens per
 * second, ms in milliseconds) over the n prompts' tok[n] and ms[n], seeded
 * from seed, into lo and hi.  With n < 2, or out of memory, lo and hi keep
 * what they held (the caller's point estimate). */
void rp_bootstrap_ci(const int64_t *tok, const double *ms, int32_t n, uint64_t seed, double *lo,
                     double *hi);

#endif
