/*
 * rp_draw.h -- private to sim/replay: gsl_rng_uniform_int(r, n) for a fixed
 * n, drawn many times (the bootstrap's prompt indices, the oracle's
 * synthesised token ids).  GSL works out its scale for n, an integer
 * division, at every call; this works it out once.  The same draws from the
 * generator, rejected by the same rule, give the same values.
 */
#ifndef RP_DRAW_H
#define RP_DRAW_H

#include <gsl/gsl_rng.h>

typedef struct rp_uniform_int {
    const gsl_rng *r;
    unsigned long (*get)(void *);
    unsigned long min, n, scale;
} rp_uniform_int;

/* Returns 1, or 0 when n is 0 or past the generator's range (no scale: draw
 * with gsl_rng_uniform_int, which reports it). */
static inline int rp_uniform_int_init(rp_uniform_int *u, const gsl_rng *r, unsigned long n)
{
    unsigned long range = r->type->max - r->type->min;
    *u = (rp_uniform_int){r, r->type->get, r->type->min, n, n > 0 && n <= range ? range / n : 0};
    return u->scale > 0;
}

/* gsl_rng_uniform_int(u->r, u->n), once rp_uniform_int_init returned 1. */
static inline unsigned long rp_uniform_int_draw(const rp_uniform_int *u)
{
    unsigned long x;
    do
        x = (u->get(u->r->state) - u->min) / u->scale;
    while (x >= u->n);
    return x;
}

#endif
