/*
 * test_interval.c -- the bootstrap interval over prompts (rp_interval.c)
 * against a naive reference, bit for bit: RP_BOOTSTRAP resamples drawn with
 * gsl_rng_uniform_int from the same seed, every rate sorted in full,
 * gsl_stats_quantile_from_sorted_data at 2.5% and 97.5%.  The fast path's
 * draw (rp_draw.h) against gsl_rng_uniform_int, on mt19937 and on a
 * scripted generator whose outputs land exactly on the rejection edge (a
 * value scaled to n must be drawn again, never returned).
 */
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "sim/replay/rp_draw.h"
#include "sim/replay/rp_interval.h"

static void naive_ci(const int64_t *tok, const double *ms, int32_t n, uint64_t seed, double *lo,
                     double *hi)
{
    double *rate = malloc(sizeof *rate * RP_BOOTSTRAP);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(seed ^ 0xb0075a3b1e5ULL));
    for (size_t b = 0; b < RP_BOOTSTRAP; b++) {
        double st = 0.0, sm = 0.0;
        for (int32_t i = 0; i < n; i++) {
            unsigned long j = gsl_rng_uniform_int(r, (unsigned long)n);
            st += (double)tok[j];
            sm += ms[j];
        }
        rate[b] = rp_tokens_per_s(st, sm);
    }
    gsl_sort(rate, 1, RP_BOOTSTRAP);
    *lo = gsl_stats_quantile_from_sorted_data(rate, 1, RP_BOOTSTRAP, 0.025);
    *hi = gsl_stats_quantile_from_sorted_data(rate, 1, RP_BOOTSTRAP, 0.975);
    free(rate);
    gsl_rng_free(r);
}

static void test_against_naive(void)
{
    enum { NMAX = 37 };
    int64_t tok[NMAX];
    double ms[NMAX];
    /* prompts of different lengths and speeds: every resample differs */
    for (int32_t i = 0; i < NMAX; i++) {
        tok[i] = 40 + (i * 7919) % 90;
        ms[i] = 900.0 + (double)((i * 104729) % 4000) + 0.25 * i;
    }
    const int32_t ns[] = {2, 3, 5, 8, 37};
    const uint64_t seeds[] = {1, 42, 0xdeadbeefcafeULL};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
            double lo = -1, hi = -1, wlo, whi;
            rp_bootstrap_ci(tok, ms, ns[a], seeds[s], &lo, &hi);
            naive_ci(tok, ms, ns[a], seeds[s], &wlo, &whi);
            CHECK(lo == wlo && hi == whi);
            CHECK(lo < hi);
            if (lo != wlo || hi != whi)
                fprintf(stderr, "  n %d seed %llu: [%.17g, %.17g] vs [%.17g, %.17g]\n", ns[a],
                        (unsigned long long)seeds[s], lo, hi, wlo, whi);
        }
    /* fewer than two prompts: the caller's values stay */
    double lo = 7.0, hi = 9.0;
    rp_bootstrap_ci(tok, ms, 1, 1, &lo, &hi);
    CHECK(lo == 7.0 && hi == 9.0);
}

/* A generator returning a script of values, then zeros. */
typedef struct scripted {
    const unsigned long *v;
    size_t n, at;
} scripted;

static void scripted_set(void *state, unsigned long seed)
{
    (void)seed;
    ((scripted *)state)->at = 0;
}

static unsigned long scripted_get(void *state)
{
    scripted *s = state;
    return s->at < s->n ? s->v[s->at++] : 0;
}

static double scripted_get_double(void *state)
{
    return (double)scripted_get(state) / 4294967296.0;
}

static const gsl_rng_type scripted_type = {"scripted", 0xffffffffUL, 0, sizeof(scripted),
                                           scripted_set, scripted_get, scripted_get_double};

static void test_draw(void)
{
    /* mt19937: the same values as gsl_rng_uniform_int, for several n */
    const unsigned long ns[] = {1, 2, 3, 7, 1000, 65537, 4000000000UL};
    gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        gsl_rng_set(a, 99 + k);
        gsl_rng_set(b, 99 + k);
        rp_uniform_int u;
        CHECK(rp_uniform_int_init(&u, a, ns[k]) == 1);
        int same = 1;
        for (int i = 0; i < 2000; i++) {
            unsigned long x = rp_uniform_int_draw(&u);
            same &= x == gsl_rng_uniform_int(b, ns[k]) && x < ns[k];
        }
        CHECK(same);
    }
    gsl_rng_free(a);
    gsl_rng_free(b);
    /* the edge: with n = 3, scale = 0xffffffff / 3 = 0x55555555, and the
     * generator's maximum scales to exactly 3 -- drawn again, not returned;
     * 0x55555554 scales to 0, 0x55555555 to 1, 0xaaaaaaaa to 2 */
    static const unsigned long script[] = {0xffffffffUL, 0x55555554UL, 0x55555555UL,
                                           0xaaaaaaaaUL, 0xffffffffUL, 0xfffffffeUL};
    gsl_rng *r = gsl_rng_alloc(&scripted_type);
    scripted *st = r->state;
    st->v = script;
    st->n = sizeof script / sizeof script[0];
    rp_uniform_int u;
    CHECK(rp_uniform_int_init(&u, r, 3) == 1);
    CHECK(rp_uniform_int_draw(&u) == 0); /* the maximum skipped */
    CHECK(rp_uniform_int_draw(&u) == 1);
    CHECK(rp_uniform_int_draw(&u) == 2);
    CHECK(rp_uniform_int_draw(&u) == 2); /* 0xffffffff skipped, 0xfffffffe -> 2 */
    /* gsl_rng_uniform_int reads the same script the same way */
    gsl_rng_set(r, 0);
    CHECK(gsl_rng_uniform_int(r, 3) == 0 && gsl_rng_uniform_int(r, 3) == 1);
    gsl_rng_free(r);
}

int main(void)
{
    test_against_naive();
    test_draw();
    return check_done("replay/interval");
}
