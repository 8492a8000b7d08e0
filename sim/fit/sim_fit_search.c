/*
 * sim_fit_search.c -- the knob search of flashspec.tune (sim_fit.h): every
 * combination of the discrete knobs, a Nelder-Mead simplex over the
 * continuous ones per combination, repeated vectors evaluated once.
 */
#include "sim/fit/sim_fit.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void sim_fit_knob_range(sim_fit_knob *k, double lo, double hi, int integer, double current)
{
    if (integer && hi - lo + 1 <= SIM_FIT_INT_EXHAUSTIVE) {
        k->discrete = 1;
        for (double v = lo; v <= hi; v += 1.0)
            k->values[k->n_values++] = v;
        return;
    }
    k->lo = lo;
    k->hi = hi;
    k->integer = integer;
    k->start = current > lo && current < hi ? current : 0.5 * (lo + hi);
}

int64_t sim_fit_search_combos(const sim_fit_search *s)
{
    int64_t combos = 1;
    for (int32_t i = 0; i < s->nk; i++)
        if (s->k[i].discrete) combos *= s->k[i].n_values;
    return combos;
}

int32_t sim_fit_search_continuous(const sim_fit_search *s)
{
    int32_t c = 0;
    for (int32_t i = 0; i < s->nk; i++)
        c += !s->k[i].discrete;
    return c;
}

int64_t sim_fit_search_min_budget(int32_t c)
{
    return 2 * ((int64_t)c + 1) + 1;
}

void sim_fit_search_free(sim_fit_search *s)
{
    if (!s) return;
    free(s->cx);
    free(s->cv);
    s->cx = s->cv = NULL;
    s->n_cache = s->cap_cache = 0;
}

/* --------------------------------------------------------------- the cache */

static int cache_find(const sim_fit_search *s, const double *x, double *v)
{
    for (int64_t i = 0; i < s->n_cache; i++)
        if (memcmp(s->cx + i * s->nk, x, sizeof(double) * (size_t)s->nk) == 0) {
            *v = s->cv[i];
            return 1;
        }
    return 0;
}

static int cache_add(sim_fit_search *s, const double *x, double v)
{
    if (s->n_cache == s->cap_cache) {
        int64_t cap = s->cap_cache ? 2 * s->cap_cache : 64;
        double *cx = realloc(s->cx, sizeof(double) * (size_t)(cap * s->nk));
        if (cx) s->cx = cx;
        double *cv = cx ? realloc(s->cv, sizeof(double) * (size_t)cap) : NULL;
        if (cv) s->cv = cv;
        if (!cx || !cv) return SIM_NOMEM;
        s->cap_cache = cap;
    }
    memcpy(s->cx + s->n_cache * s->nk, x, sizeof(double) * (size_t)s->nk);
    s->cv[s->n_cache++] = v;
    return SIM_OK;
}

/* The objective at x (cached).  0 or the failure code (kept in s->code). */
static int evaluate(sim_fit_search *s, const double *x, double *v)
{
    if (s->code) return s->code;
    if (cache_find(s, x, v)) return 0;
    int rc = s->f(s->ctx, x, v);
    if (rc != 0) return s->code = rc;
    s->evals++;
    if (cache_add(s, x, *v) != SIM_OK) return s->code = SIM_NOMEM;
    return 0;
}

/* ---------------------------------------------------------- discrete only */

/* Advances idx to the next combination of the discrete knobs, the last knob
 * fastest. */
static void next_combination(const sim_fit_search *s, int32_t *idx)
{
    for (int32_t i = s->nk - 1; i >= 0; i--) {
        if (!s->k[i].discrete) continue;
        if (++idx[i] < s->k[i].n_values) break;
        idx[i] = 0;
    }
}

/* Every combination, in one batch. */
static int exhaustive(sim_fit_search *s)
{
    int64_t combos = sim_fit_search_combos(s), nk = s->nk;
    double *xs = malloc(sizeof(double) * (size_t)(combos * nk));
    double *vs = malloc(sizeof(double) * (size_t)combos);
    int32_t idx[SIM_FIT_MAX_KNOBS] = {0};
    int rc = xs && vs ? SIM_OK : SIM_NOMEM;
    for (int64_t c = 0; rc == SIM_OK && c < combos; c++) {
        for (int32_t i = 0; i < nk; i++)
            xs[c * nk + i] = s->k[i].values[idx[i]];
        next_combination(s, idx);
    }
    if (rc == SIM_OK) rc = s->batch(s->ctx, combos, xs, vs);
    for (int64_t c = 0; rc == SIM_OK && c < combos; c++) {
        if (c == 0 || vs[c] > s->best) {
            s->best = vs[c];
            memcpy(s->best_x, xs + c * nk, sizeof(double) * (size_t)nk);
        }
    }
    if (rc == SIM_OK) s->evals += combos;
    free(xs);
    free(vs);
    return s->code = rc;
}

/* ---------------------------------------------------------------- simplex */

static double knob_x(const sim_fit_knob *k, double z)
{
    double x = sim_fit_x(k->lo, k->hi, z);
    if (k->integer) x = floor(x + 0.5);
    return x < k->lo ? k->lo : x > k->hi ? k->hi : x;
}

typedef struct simplex_ctx {
    sim_fit_search *s;
    int32_t cont[SIM_FIT_MAX_KNOBS]; /* indices of the continuous knobs */
    int32_t nc;
} simplex_ctx;

/* The simplex's function: minus the objective (+inf once something failed). */
static double simplex_f(const gsl_vector *z, void *ctx)
{
    simplex_ctx *sc = ctx;
    sim_fit_search *s = sc->s;
    if (s->code) return GSL_POSINF;
    for (int32_t c = 0; c < sc->nc; c++)
        s->x[sc->cont[c]] = knob_x(&s->k[sc->cont[c]], gsl_vector_get(z, (size_t)c));
    double v = 0.0;
    if (evaluate(s, s->x, &v) != 0) return GSL_POSINF;
    return -v;
}

/* The best vector seen with the current discrete values, from the cache (the
 * simplex's own minimum is one of them; scanning keeps the first of equal
 * values). */
static void best_of_cache(sim_fit_search *s)
{
    for (int64_t i = 0; i < s->n_cache; i++) {
        const double *x = s->cx + i * s->nk;
        int same = 1;
        for (int32_t j = 0; j < s->nk && same; j++)
            if (s->k[j].discrete && x[j] != s->x[j]) same = 0;
        if (same && s->cv[i] > s->best) {
            s->best = s->cv[i];
            memcpy(s->best_x, x, sizeof(double) * (size_t)s->nk);
        }
    }
}

/* Iterates until the simplex is small or budget evaluations are spent since
 * the count was start. */
static void simplex_iterate(sim_fit_search *s, gsl_multimin_fminimizer *m, int64_t start,
                            int64_t budget)
{
    for (int it = 0; it < 10000 && s->evals - start < budget; it++) {
        int st = gsl_multimin_fminimizer_iterate(m);
        if (s->code || st) break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), SIM_FIT_SIZE_TOL) ==
            GSL_SUCCESS)
            break;
    }
}

/* A simplex over the continuous knobs, the discrete ones fixed in s->x; at
 * most budget evaluations (counted from its start).  Updates best / best_x. */
static int simplex(sim_fit_search *s, int64_t budget)
{
    simplex_ctx sc = {.s = s, .nc = 0};
    for (int32_t i = 0; i < s->nk; i++)
        if (!s->k[i].discrete) sc.cont[sc.nc++] = i;
    size_t nc = (size_t)sc.nc;
    gsl_multimin_fminimizer *m =
        gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, nc);
    gsl_vector *z = gsl_vector_alloc(nc), *step = gsl_vector_alloc(nc);
    if (!m || !z || !step) s->code = SIM_NOMEM;
    for (int32_t c = 0; !s->code && c < sc.nc; c++) {
        const sim_fit_knob *k = &s->k[sc.cont[c]];
        gsl_vector_set(z, (size_t)c, sim_fit_z_inside(k->lo, k->hi, k->start, 0.01));
        gsl_vector_set(step, (size_t)c, 1.0);
    }
    gsl_multimin_function fn = {.f = simplex_f, .n = nc, .params = &sc};
    int64_t start = s->evals;
    if (!s->code) gsl_multimin_fminimizer_set(m, &fn, z, step);
    if (!s->code) simplex_iterate(s, m, start, budget);
    if (!s->code) best_of_cache(s);
    if (m) gsl_multimin_fminimizer_free(m);
    gsl_vector_free(z);
    gsl_vector_free(step);
    return s->code;
}

/* ----------------------------------------------------------------- search */

int sim_fit_search_run(sim_fit_search *s)
{
    gsl_set_error_handler_off(); /* statuses, never abort() */
    s->code = 0;
    s->n_cache = 0;
    s->evals = 0;
    s->best = -HUGE_VAL;
    if (sim_fit_search_continuous(s) == 0) return exhaustive(s);
    int64_t combos = sim_fit_search_combos(s), budget = s->max_evals / combos;
    int32_t idx[SIM_FIT_MAX_KNOBS] = {0};
    for (int64_t c = 0; c < combos; c++) {
        for (int32_t i = 0; i < s->nk; i++)
            s->x[i] = s->k[i].discrete ? s->k[i].values[idx[i]] : s->k[i].start;
        if (c == 0) memcpy(s->best_x, s->x, sizeof(double) * (size_t)s->nk);
        if (simplex(s, budget) != 0) return s->code;
        next_combination(s, idx);
    }
    return SIM_OK;
}
