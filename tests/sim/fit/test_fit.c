/*
 * test_fit.c -- sim/fit without Lua (sim_fit.h): the logistic bound map and
 * its inverse; Levenberg-Marquardt recovering the parameters of an analytic
 * model through the callback, inside its bounds; standard errors, PRESS and
 * exact leave-one-out against the closed forms of a linear model; AIC/BIC;
 * held-out rows; the parametric bootstrap's quantiles; a failing model's code
 * handed back; the knob search finding the optimum of known functions.
 */
#include "sim/fit/sim_fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"

#define N 12

/* ---------------------------------------------------------------- bounds */

static void test_bounds(void)
{
    static const double los[] = {0.0, -3.0, 50.0}, his[] = {1.0, 7.5, 5000.0};
    for (int b = 0; b < 3; b++) {
        double lo = los[b], hi = his[b];
        for (double z = -12.0; z <= 12.0; z += 0.75) {
            double x = sim_fit_x(lo, hi, z);
            CHECK(x > lo && x < hi);
            CHECK_NEAR(sim_fit_z(lo, hi, x), z, 1e-6 * (1.0 + fabs(z)) * (fabs(z) > 8 ? 1e3 : 1));
            /* the derivative against a central difference */
            double h = 1e-5, d = (sim_fit_x(lo, hi, z + h) - sim_fit_x(lo, hi, z - h)) / (2 * h);
            CHECK_NEAR(sim_fit_dxdz(lo, hi, z), d, 1e-6 * (hi - lo));
        }
        for (double u = 0.01; u < 1.0; u += 0.07) {
            double x = lo + u * (hi - lo);
            CHECK_NEAR(sim_fit_x(lo, hi, sim_fit_z(lo, hi, x)), x, 1e-12 * (fabs(hi) + fabs(lo)));
        }
        /* held inside: a start on or past a bound maps to the margin */
        CHECK_NEAR(sim_fit_z_inside(lo, hi, lo, 0.01), log(0.01 / 0.99), 1e-12);
        CHECK_NEAR(sim_fit_z_inside(lo, hi, hi + 1.0, 0.01), log(0.99 / 0.01), 1e-12);
        CHECK_NEAR(sim_fit_z_inside(lo, hi, lo + 0.5 * (hi - lo), 0.01), 0.0, 1e-12);
    }
    CHECK_NEAR(sim_fit_x(0.0, 1.0, 0.0), 0.5, 0);
    CHECK_NEAR(sim_fit_dxdz(0.0, 4.0, 0.0), 1.0, 1e-15);
}

static void test_params(void)
{
    CHECK_EQ_INT(sim_fit_param_check(5, 1, 10), SIM_FIT_PARAM_OK);
    CHECK_EQ_INT(sim_fit_param_check(5, 10, 1), SIM_FIT_PARAM_BOUNDS);
    CHECK_EQ_INT(sim_fit_param_check(5, 1, INFINITY), SIM_FIT_PARAM_BOUNDS);
    CHECK_EQ_INT(sim_fit_param_check(5, NAN, 10), SIM_FIT_PARAM_BOUNDS);
    CHECK_EQ_INT(sim_fit_param_check(1, 1, 10), SIM_FIT_PARAM_START);
    CHECK_EQ_INT(sim_fit_param_check(20, 1, 10), SIM_FIT_PARAM_START);
    CHECK_EQ_INT(sim_fit_param_check(1.0001, 1, 10), SIM_FIT_PARAM_EDGE);
    CHECK_EQ_INT(sim_fit_param_check(9.9999, 1, 10), SIM_FIT_PARAM_EDGE);
    sim_fit_param p[3] = {{.name = "m"}, {.name = "a"}, {.name = "z"}};
    sim_fit_sort_params(p, 3);
    CHECK(!strcmp(p[0].name, "a") && !strcmp(p[1].name, "m") && !strcmp(p[2].name, "z"));
}

/* ----------------------------------------------------------------- models */

typedef struct model {
    double t[N], g[N], h[N];
    int64_t calls;
    int64_t fail_at; /* the call that fails (0: none) */
    int fail_code;
    int32_t max_rep; /* largest replicate seen */
    int one;         /* linear: a g alone */
    int64_t batches; /* batch calls (expo_batch) */
    int32_t batch_m; /* columns of the last one */
    int32_t log_rep[4096]; /* linear: the replicate and first parameter of each call */
    double log_x[4096];
    int32_t n_log;
} model;

/* a exp(-b t) + c, parameters in name order a, b, c. */
static int expo(void *ctx, const double *x, int32_t rep, double *pred)
{
    model *m = ctx;
    m->calls++;
    if (m->fail_at && m->calls >= m->fail_at) return m->fail_code;
    if (rep > m->max_rep) m->max_rep = rep;
    for (int k = 0; k < N; k++)
        pred[k] = x[0] * exp(-x[1] * m->t[k]) + x[2];
    return 0;
}

/* expo at m parameter vectors, in order (sim_fit_model_batch). */
static int expo_batch(void *ctx, int32_t mm, const double *x, int32_t rep, double *pred)
{
    model *m = ctx;
    m->batches++;
    m->batch_m = mm;
    for (int32_t j = 0; j < mm; j++) {
        int rc = expo(ctx, x + 3 * j, rep, pred + N * j);
        if (rc) return rc;
    }
    return 0;
}

/* a g + b h: relative residuals linear in (a, b). */
static int linear(void *ctx, const double *x, int32_t rep, double *pred)
{
    model *m = ctx;
    m->calls++;
    if (m->fail_at && m->calls >= m->fail_at) return m->fail_code;
    if (rep > m->max_rep) m->max_rep = rep;
    if (m->n_log < 4096) {
        m->log_rep[m->n_log] = rep;
        m->log_x[m->n_log++] = x[0];
    }
    for (int k = 0; k < N; k++)
        pred[k] = x[0] * m->g[k] + (m->one ? 0.0 : x[1] * m->h[k]);
    return 0;
}

static void set_param(sim_fit *f, int i, const char *name, double start, double lo, double hi)
{
    snprintf(f->par[i].name, sizeof f->par[i].name, "%s", name);
    f->par[i].start = start;
    f->par[i].lo = lo;
    f->par[i].hi = hi;
}

static void expo_problem(sim_fit *f, model *m)
{
    memset(f, 0, sizeof *f);
    memset(m, 0, sizeof *m);
    f->np = 3;
    set_param(f, 0, "a", 1.0, 0.1, 10.0);
    set_param(f, 1, "b", 0.3, 0.01, 5.0);
    set_param(f, 2, "c", 1.0, 0.01, 3.0);
    f->fd_step = 1e-6;
    f->max_iter = 200;
    f->model = expo;
    f->ctx = m;
    CHECK_EQ_INT(sim_fit_init(f, N), SIM_OK);
    for (int k = 0; k < N; k++) {
        m->t[k] = 0.5 * k;
        f->y[k] = 2.0 * exp(-0.7 * m->t[k]) + 0.5;
    }
}

/* A linear model with noisy data: g, h and the measurements (np 2: a g + b h;
 * np 1: a g, h unused). */
static void linear_problem_of(sim_fit *f, model *m, int32_t np)
{
    static const double noise[N] = {0.03,  -0.02, 0.05,  -0.04, 0.01,  0.02,
                                    -0.03, 0.04,  -0.01, 0.0,   0.025, -0.035};
    memset(f, 0, sizeof *f);
    memset(m, 0, sizeof *m);
    f->np = np;
    set_param(f, 0, "a", 1.0, 0.01, 20.0);
    set_param(f, 1, "b", 1.0, 0.01, 20.0);
    f->fd_step = 1e-6;
    f->max_iter = 200;
    f->model = linear;
    f->ctx = m;
    CHECK_EQ_INT(sim_fit_init(f, N), SIM_OK);
    for (int k = 0; k < N; k++) {
        m->g[k] = 1.0 + k;
        m->h[k] = 1.0 + 0.3 * (k % 4) * (k % 4);
        f->y[k] = (3.0 * m->g[k] + 2.0 * m->h[k]) * (1.0 + noise[k]);
    }
}

static void linear_problem(sim_fit *f, model *m)
{
    linear_problem_of(f, m, 2);
}

/* Ordinary least squares of the relative residuals a u + b w - 1 over the
 * rows not skipped: the estimate, (X^T X)^-1, the RSS. */
typedef struct ols {
    double a, b, inv[2][2], rss;
    int n;
} ols;

static ols ols_of(const sim_fit *f, const model *m, int skip)
{
    double suu = 0, suw = 0, sww = 0, su = 0, sw = 0;
    ols o = {0};
    for (int k = 0; k < N; k++) {
        if (k == skip || f->hold[k]) continue;
        double u = m->g[k] / f->y[k], w = m->h[k] / f->y[k];
        suu += u * u, suw += u * w, sww += w * w, su += u, sw += w;
        o.n++;
    }
    double det = suu * sww - suw * suw;
    o.inv[0][0] = sww / det, o.inv[1][1] = suu / det, o.inv[0][1] = o.inv[1][0] = -suw / det;
    o.a = o.inv[0][0] * su + o.inv[0][1] * sw;
    o.b = o.inv[1][0] * su + o.inv[1][1] * sw;
    for (int k = 0; k < N; k++) {
        if (k == skip || f->hold[k]) continue;
        double r = o.a * m->g[k] / f->y[k] + o.b * m->h[k] / f->y[k] - 1.0;
        o.rss += r * r;
    }
    return o;
}

/* ------------------------------------------------------------------ fits */

static void test_recover(void)
{
    sim_fit f;
    model m;
    expo_problem(&f, &m);
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    CHECK_NEAR(f.par[0].value, 2.0, 1e-5);
    CHECK_NEAR(f.par[1].value, 0.7, 1e-5);
    CHECK_NEAR(f.par[2].value, 0.5, 1e-5);
    CHECK(f.rms < 1e-6 && f.start_rms > 0.1);
    CHECK_EQ_INT(f.evals, m.calls); /* every model call counted */
    CHECK_EQ_INT(f.nf, N);
    CHECK_EQ_INT(f.n_hold, 0);
    for (int k = 0; k < N; k++) {
        CHECK_NEAR(f.pred[k], f.y[k], 1e-5);
        CHECK_NEAR(f.resid[k], (f.pred[k] - f.y[k]) / f.y[k], 1e-15);
    }
    CHECK(isnan(f.hold_rms));
    CHECK(isnan(f.par[0].se_boot));
    /* starts: a scattered start converges to the same point */
    int64_t one = m.calls;
    sim_fit_free(&f);
    expo_problem(&f, &m);
    CHECK_EQ_INT(sim_fit_run(&f, 3), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    CHECK_NEAR(f.par[1].value, 0.7, 1e-5);
    CHECK(m.calls > one);
    sim_fit_free(&f);
    sim_fit_free(&f); /* twice is harmless */
}

static void test_bounds_respected(void)
{
    /* the data want a = 5; the bounds allow (0.5, 2): the fit stays inside,
     * pressed against the upper bound */
    sim_fit f;
    model m;
    linear_problem_of(&f, &m, 1);
    m.one = 1;
    set_param(&f, 0, "a", 1.0, 0.5, 2.0);
    for (int k = 0; k < N; k++)
        f.y[k] = 5.0 * m.g[k];
    int rc = sim_fit_run(&f, 1);
    CHECK_EQ_INT(rc, SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    CHECK(f.par[0].value > 1.99 && f.par[0].value < 2.0);
    CHECK(f.rms > 0.59 && f.rms < 0.61);
    sim_fit_free(&f);
}

/* A fit pressed against a bound says so: at_bound on that side, no
 * standard error (the delta method's would be about 0 there: dx/dz is), a
 * bootstrap interval -- when enough refits converge -- open on that side;
 * a fit inside its bounds is at none. */
static void test_at_bound(void)
{
    for (int side = -1; side <= 1; side += 2) {
        sim_fit f;
        model m;
        linear_problem_of(&f, &m, 1);
        m.one = 1;
        set_param(&f, 0, "a", 1.0, 0.5, 2.0);
        for (int k = 0; k < N; k++) /* the data want a = 5 (above) or 0.1 (below) */
            f.y[k] = (side > 0 ? 5.0 : 0.1) * m.g[k] * (1.0 + 0.01 * ((k % 3) - 1));
        CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
        CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
        CHECK_EQ_INT(f.par[0].at_bound, side);
        CHECK(isnan(f.par[0].se));
        CHECK_EQ_INT(sim_fit_bootstrap(&f, SIM_FIT_BOOT_MIN, 5), SIM_OK);
        const sim_fit_param *p = &f.par[0];
        if (f.boot_m >= SIM_FIT_BOOT_MIN_CONVERGED) {
            CHECK(side > 0 ? p->ci_hi == INFINITY && isfinite(p->ci_lo) && p->ci_lo <= p->value
                           : p->ci_lo == -INFINITY && isfinite(p->ci_hi) && p->ci_hi >= p->value);
        } else {
            CHECK(isnan(p->ci_lo) && isnan(p->ci_hi));
        }
        sim_fit_free(&f);
    }
    sim_fit f;
    model m;
    linear_problem(&f, &m);
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    CHECK(f.par[0].at_bound == 0 && f.par[1].at_bound == 0);
    CHECK(isfinite(f.par[0].se) && f.par[0].se > 0);
    /* an interval needs SIM_FIT_BOOT_MIN_CONVERGED converged replicates: one
     * fewer gives none (the replicates still kept), exactly that many one */
    CHECK_EQ_INT(sim_fit_bootstrap(&f, SIM_FIT_BOOT_MIN_CONVERGED - 1, 3), SIM_OK);
    CHECK_EQ_INT(f.boot_m, SIM_FIT_BOOT_MIN_CONVERGED - 1);
    CHECK(isnan(f.par[0].ci_lo) && isnan(f.par[0].ci_hi) && isnan(f.par[0].se_boot));
    CHECK_EQ_INT(sim_fit_bootstrap(&f, SIM_FIT_BOOT_MIN_CONVERGED, 3), SIM_OK);
    CHECK_EQ_INT(f.boot_m, SIM_FIT_BOOT_MIN_CONVERGED);
    CHECK(isfinite(f.par[0].ci_lo) && isfinite(f.par[0].ci_hi) && f.par[0].se_boot > 0);
    CHECK(f.par[0].ci_lo < f.par[0].value && f.par[0].value < f.par[0].ci_hi);
    sim_fit_free(&f);
}

static void test_linear_stats(void)
{
    sim_fit f;
    model m;
    linear_problem(&f, &m);
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    ols o = ols_of(&f, &m, -1);
    CHECK_NEAR(f.par[0].value, o.a, 1e-6 * o.a);
    CHECK_NEAR(f.par[1].value, o.b, 1e-6 * o.b);
    CHECK_NEAR(f.rss, o.rss, 1e-9);
    double s2 = o.rss / (N - 2);
    CHECK_NEAR(f.s2, s2, 1e-9);
    /* the delta method's standard errors: the OLS ones, s^2 (X^T X)^-1 */
    CHECK_NEAR(f.par[0].se, sqrt(s2 * o.inv[0][0]), 1e-4 * sqrt(s2 * o.inv[0][0]));
    CHECK_NEAR(f.par[1].se, sqrt(s2 * o.inv[1][1]), 1e-4 * sqrt(s2 * o.inv[1][1]));
    /* AIC/BIC: the formulas, and the fit's */
    CHECK_NEAR(sim_fit_aic(10, 2, 0.5), 10 * log(0.05) + 4, 1e-12);
    CHECK_NEAR(sim_fit_bic(10, 2, 0.5), 10 * log(0.05) + 2 * log(10.0), 1e-12);
    CHECK_NEAR(f.aic, N * log(f.rss / N) + 2.0 * 2, 1e-12);
    CHECK_NEAR(f.bic, N * log(f.rss / N) + 2 * log((double)N), 1e-12);
    CHECK_NEAR(f.rms, sqrt(f.rss / N), 1e-15);
    sim_fit_free(&f);
}

/* PRESS residuals from the leverage equal exact refits on a linear model, and
 * both equal the closed form e_i / (1 - h_ii). */
static void test_loo(void)
{
    sim_fit f;
    model m;
    double approx[N];
    linear_problem(&f, &m);
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    CHECK_EQ_INT(sim_fit_loo(&f, SIM_FIT_LOO_APPROX), SIM_OK);
    memcpy(approx, f.loo_e, sizeof approx);
    double approx_rms = f.loo_rms;
    CHECK_EQ_INT(sim_fit_loo(&f, SIM_FIT_LOO_EXACT), SIM_OK);
    for (int k = 0; k < N; k++) {
        ols o = ols_of(&f, &m, k); /* the fit without row k, predicting it */
        double want = o.a * m.g[k] / f.y[k] + o.b * m.h[k] / f.y[k] - 1.0;
        CHECK_NEAR(f.loo_e[k], want, 1e-6);
        CHECK_NEAR(approx[k], f.loo_e[k], 1e-6);
        CHECK(fabs(approx[k]) >= fabs(f.resid[k]));
    }
    CHECK_NEAR(approx_rms, f.loo_rms, 1e-6);
    CHECK(f.n_far == 0 && f.worst == -1 && f.far_at == 0.10);
    CHECK_EQ_INT(sim_fit_loo(&f, SIM_FIT_LOO_NONE), SIM_OK);
    for (int k = 0; k < N; k++)
        CHECK(isnan(f.loo_e[k]));
    CHECK(isnan(f.loo_rms));
    sim_fit_free(&f);
}

/* A held-out row is predicted, never fitted: the fit is the other rows'. */
static void test_holdout(void)
{
    sim_fit f;
    model m;
    linear_problem(&f, &m);
    f.y[4] *= 3.0; /* far off: it would pull the fit */
    f.hold[4] = 1;
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    CHECK_EQ_INT(sim_fit_loo(&f, SIM_FIT_LOO_EXACT), SIM_OK);
    ols o = ols_of(&f, &m, -1);
    CHECK_EQ_INT(f.n_hold, 1);
    CHECK_EQ_INT(f.nf, N - 1);
    CHECK_NEAR(f.par[0].value, o.a, 1e-6 * o.a);
    CHECK_NEAR(f.rss, o.rss, 1e-9);
    CHECK_NEAR(f.resid[4], (f.pred[4] - f.y[4]) / f.y[4], 1e-15);
    CHECK(f.resid[4] < -0.6);
    CHECK_NEAR(f.hold_rms, fabs(f.resid[4]), 1e-15);
    CHECK(isnan(f.loo_e[4]) && !sim_fit_loo_far(&f, 4));
    CHECK_NEAR(f.aic, sim_fit_aic(N - 1, 2, f.rss), 1e-12);
    sim_fit_free(&f);
}

/* The bootstrap: converged replicates, their quantiles and spread. */
static void test_bootstrap(void)
{
    sim_fit f;
    model m;
    linear_problem(&f, &m);
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    double y0[N];
    memcpy(y0, f.y, sizeof y0);
    enum { B = 40 };
    m.n_log = 0;
    CHECK_EQ_INT(sim_fit_bootstrap(&f, B, 7), SIM_OK);
    CHECK_EQ_INT(m.max_rep, B);             /* points(p, rep) for rep = 1..B */
    /* each replicate's pseudo-data come from the model at the fit with rep b,
     * and its refit starts with the model at the fit again, rep 0 -- never
     * the replicate's predictions taken for the fit's */
    int fresh = 0;
    for (int32_t i = 0; i + 1 < m.n_log; i++)
        if (m.log_rep[i] > 0)
            fresh += m.log_rep[i + 1] == 0 && m.log_x[i + 1] == m.log_x[i] &&
                     m.log_x[i] == f.par[0].value;
    CHECK_EQ_INT(fresh, B);
    CHECK(memcmp(y0, f.y, sizeof y0) == 0); /* the measurements restored */
    CHECK_EQ_INT(f.boot_n, B);
    CHECK_EQ_INT(f.boot_m + f.boot_failed, B);
    CHECK(f.boot_m >= B - 2);
    for (int i = 0; i < 2; i++) {
        const sim_fit_param *p = &f.par[i];
        double d[B], mean = 0, ss = 0;
        int n = f.boot_m;
        for (int b = 0; b < n; b++)
            d[b] = f.boot[b * 2 + i], mean += d[b] / n;
        for (int b = 0; b < n; b++)
            ss += (d[b] - mean) * (d[b] - mean);
        CHECK_NEAR(p->se_boot, sqrt(ss / (n - 1)), 1e-12 * (1 + fabs(mean)));
        /* sorted, the quantiles interpolate between order statistics */
        for (int a = 1; a < n; a++)
            for (int b = a; b > 0 && d[b - 1] > d[b]; b--) {
                double t = d[b];
                d[b] = d[b - 1], d[b - 1] = t;
            }
        double h = (n - 1) * 0.025, hh = (n - 1) * 0.975;
        int l = (int)h, u = (int)hh;
        CHECK_NEAR(p->ci_lo, d[l] + (h - l) * (d[l + 1] - d[l]), 1e-12 * (1 + fabs(mean)));
        CHECK_NEAR(p->ci_hi, d[u] + (hh - u) * (d[u + 1] - d[u]), 1e-12 * (1 + fabs(mean)));
        CHECK(p->ci_lo < p->value && p->value < p->ci_hi);
        /* the noise is the fit's residual size: the spread is the delta method's */
        CHECK(p->se_boot > 0.4 * p->se && p->se_boot < 2.5 * p->se);
    }
    /* the same seed draws the same replicates; another seed others */
    double first = f.boot[0];
    CHECK_EQ_INT(sim_fit_bootstrap(&f, B, 7), SIM_OK);
    CHECK_NEAR(f.boot[0], first, 0);
    CHECK_EQ_INT(sim_fit_bootstrap(&f, B, 8), SIM_OK);
    CHECK(f.boot[0] != first);
    CHECK_EQ_INT(sim_fit_bootstrap(&f, 0, 7), SIM_OK);
    CHECK_EQ_INT(f.boot_n, 0);
    sim_fit_free(&f);
}

/* A model that fails: its code comes back, and it is not called again. */
static void test_failure(void)
{
    sim_fit f;
    model m;
    expo_problem(&f, &m);
    m.fail_at = 5;
    m.fail_code = 42;
    CHECK_EQ_INT(sim_fit_run(&f, 1), 42);
    CHECK_EQ_INT(m.calls, 5);
    CHECK_EQ_INT(sim_fit_loo(&f, SIM_FIT_LOO_EXACT), 42);
    CHECK_EQ_INT(sim_fit_bootstrap(&f, 3, 1), 42);
    CHECK_EQ_INT(m.calls, 5);
    sim_fit_free(&f);
    /* at the very first evaluation */
    expo_problem(&f, &m);
    m.fail_at = 1;
    m.fail_code = 7;
    CHECK_EQ_INT(sim_fit_run(&f, 2), 7);
    CHECK_EQ_INT(m.calls, 1);
    sim_fit_free(&f);
    /* during exact leave-one-out and the bootstrap */
    linear_problem(&f, &m);
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    m.fail_at = m.calls + 3;
    m.fail_code = 65;
    CHECK_EQ_INT(sim_fit_loo(&f, SIM_FIT_LOO_EXACT), 65);
    sim_fit_free(&f);
    linear_problem(&f, &m);
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_stats(&f), SIM_OK);
    double y0 = f.y[0];
    m.fail_at = m.calls + 2;
    m.fail_code = 70;
    CHECK_EQ_INT(sim_fit_bootstrap(&f, 4, 1), 70);
    CHECK_NEAR(f.y[0], y0, 0); /* restored */
    sim_fit_free(&f);
}

/* Nothing to fit (n = 0) or no or too many parameters: an argument error --
 * not an allocation failure --, nothing allocated, every later call returns
 * it without calling the model; one observation of one parameter is fine. */
static void test_bad_size(void)
{
    sim_fit f;
    model m;
    static const struct {
        int32_t n, np;
        int want;
    } cases[] = {{0, 1, SIM_INTERNAL_ARG},
                 {-3, 1, SIM_INTERNAL_ARG},
                 {4, 0, SIM_INTERNAL_ARG},
                 {4, SIM_FIT_MAX_PARAMS + 1, SIM_INTERNAL_ARG},
                 {1, 1, SIM_OK},
                 {4, SIM_FIT_MAX_PARAMS, SIM_OK}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&f, 0, sizeof f);
        memset(&m, 0, sizeof m);
        f.np = cases[i].np;
        for (int32_t k = 0; k < f.np && k < SIM_FIT_MAX_PARAMS; k++)
            set_param(&f, k, "p", 1.0, 0.1, 10.0);
        f.max_iter = 5;
        f.fd_step = 1e-6;
        f.model = expo;
        f.ctx = &m;
        CHECK_EQ_INT(sim_fit_init(&f, cases[i].n), cases[i].want);
        if (cases[i].want != SIM_OK) {
            CHECK(f.y == NULL && f.priv == NULL);
            CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_INTERNAL_ARG);
            CHECK_EQ_INT(sim_fit_stats(&f), SIM_INTERNAL_ARG);
            CHECK_EQ_INT(m.calls, 0);
        }
        sim_fit_free(&f);
        sim_fit_free(&f);
    }
}

/* A batch model (the Jacobian's columns at once) fits exactly as the model
 * called column by column: the same values, errors, evaluations, leave-one-
 * out errors and bootstrap replicates, bit for bit; a failure inside a batch
 * is the failing column's code. */
static void test_batch(void)
{
    sim_fit f[2];
    model m[2];
    for (int b = 0; b < 2; b++) {
        expo_problem(&f[b], &m[b]);
        f[b].y[3] *= 1.04; /* residuals, so that the bootstrap has noise */
        f[b].y[8] *= 0.97;
        if (b) f[b].model_batch = expo_batch;
        CHECK_EQ_INT(sim_fit_run(&f[b], 2), SIM_OK);
        CHECK_EQ_INT(sim_fit_stats(&f[b]), SIM_OK);
        CHECK_EQ_INT(sim_fit_loo(&f[b], SIM_FIT_LOO_EXACT), SIM_OK);
        CHECK_EQ_INT(sim_fit_bootstrap(&f[b], SIM_FIT_BOOT_MIN, 3), SIM_OK);
    }
    CHECK(m[0].batches == 0 && m[1].batches > 0 && m[1].batch_m == 3);
    CHECK(m[0].calls == m[1].calls && f[0].evals == f[1].evals && f[0].iters == f[1].iters);
    for (int i = 0; i < 3; i++)
        CHECK(f[0].par[i].value == f[1].par[i].value && f[0].par[i].se == f[1].par[i].se &&
              f[0].par[i].ci_lo == f[1].par[i].ci_lo && f[0].par[i].ci_hi == f[1].par[i].ci_hi);
    CHECK(!memcmp(f[0].pred, f[1].pred, sizeof(double) * N) &&
          !memcmp(f[0].resid, f[1].resid, sizeof(double) * N) &&
          !memcmp(f[0].loo_e, f[1].loo_e, sizeof(double) * N));
    CHECK(f[0].boot_m == f[1].boot_m &&
          !memcmp(f[0].boot, f[1].boot, sizeof(double) * 3 * (size_t)f[0].boot_m));
    for (int b = 0; b < 2; b++)
        sim_fit_free(&f[b]);
    /* a column of the first Jacobian fails: its code, and no call after it */
    expo_problem(&f[0], &m[0]);
    f[0].model_batch = expo_batch;
    m[0].fail_at = 3; /* the start, then column 1, then column 2 */
    m[0].fail_code = 9;
    CHECK_EQ_INT(sim_fit_run(&f[0], 1), 9);
    CHECK(m[0].calls == 3 && m[0].batches == 1);
    CHECK_EQ_INT(sim_fit_run(&f[0], 1), 9);
    CHECK_EQ_INT(m[0].calls, 3);
    sim_fit_free(&f[0]);
}

/* A fit that cannot converge in max_iter: no start converged, and why. */
static void test_no_convergence(void)
{
    sim_fit f;
    model m;
    expo_problem(&f, &m);
    f.max_iter = 1;
    f.par[0].start = 9.0;
    f.par[1].start = 4.0;
    CHECK_EQ_INT(sim_fit_run(&f, 1), SIM_DATA_NOCONV);
    CHECK(f.reason && strlen(f.reason) > 0);
    sim_fit_free(&f);
}

/* ---------------------------------------------------------------- search */

typedef struct objective {
    int64_t calls, batches;
    int64_t fail_at;
    int fail_code;
    double seen[512][2]; /* vectors evaluated one by one */
    int n_seen;
    int flat; /* 1: the same value everywhere */
} objective;

/* -(x0 - 0.3)^2 with one knob; with two, knob 0 discrete b in {0, 1} and knob
 * 1 continuous: -(x - 0.2 - 0.5 b)^2 + 0.1 b. */
static double value_at(const objective *o, int nk, const double *x)
{
    if (o->flat) return 1.0;
    if (nk == 1) return -(x[0] - 0.3) * (x[0] - 0.3);
    return -(x[1] - 0.2 - 0.5 * x[0]) * (x[1] - 0.2 - 0.5 * x[0]) + 0.1 * x[0];
}

static int one(void *ctx, const double *x, double *v);
static int batch(void *ctx, int64_t n, const double *xs, double *vs);

static void search_of(sim_fit_search *s, objective *o, int nk)
{
    memset(s, 0, sizeof *s);
    memset(o, 0, sizeof *o);
    s->nk = nk;
    s->max_evals = 200;
    s->f = one;
    s->batch = batch;
    s->ctx = o;
}

static int nk_of_ctx; /* the knob count the objectives see */

static int one(void *ctx, const double *x, double *v)
{
    objective *o = ctx;
    o->calls++;
    if (o->fail_at && o->calls >= o->fail_at) return o->fail_code;
    for (int i = 0; i < o->n_seen; i++) /* a vector is evaluated once */
        CHECK(memcmp(o->seen[i], x, sizeof(double) * (size_t)nk_of_ctx) != 0);
    if (o->n_seen < 512) memcpy(o->seen[o->n_seen++], x, sizeof(double) * (size_t)nk_of_ctx);
    *v = value_at(o, nk_of_ctx, x);
    return 0;
}

static int batch(void *ctx, int64_t n, const double *xs, double *vs)
{
    objective *o = ctx;
    o->batches++;
    if (o->fail_at) return o->fail_code;
    for (int64_t c = 0; c < n; c++)
        vs[c] = value_at(o, nk_of_ctx, xs + c * nk_of_ctx);
    return 0;
}

static void test_search_continuous(void)
{
    sim_fit_search s;
    objective o;
    search_of(&s, &o, 1);
    nk_of_ctx = 1;
    sim_fit_knob_range(&s.k[0], 0.0, 1.0, 0, 0.9);
    CHECK(!s.k[0].discrete && s.k[0].start == 0.9);
    CHECK_EQ_INT(sim_fit_search_combos(&s), 1);
    CHECK_EQ_INT(sim_fit_search_continuous(&s), 1);
    CHECK_EQ_INT(sim_fit_search_run(&s), SIM_OK);
    CHECK_NEAR(s.best_x[0], 0.3, 0.01);
    CHECK(s.best > -1e-4 && s.best <= 0);
    CHECK_EQ_INT(s.evals, o.calls);
    CHECK(s.evals <= 200 && o.batches == 0);
    /* a small budget is kept */
    sim_fit_search_free(&s);
    search_of(&s, &o, 1);
    sim_fit_knob_range(&s.k[0], 0.0, 1.0, 0, 0.9);
    s.max_evals = 7;
    CHECK_EQ_INT(sim_fit_search_run(&s), SIM_OK);
    CHECK(s.evals <= 7 + 2); /* the budget is checked between iterations */
    sim_fit_search_free(&s);
    CHECK_EQ_INT(sim_fit_search_min_budget(2), 7);
}

static void test_search_discrete(void)
{
    sim_fit_search s;
    objective o;
    search_of(&s, &o, 1);
    nk_of_ctx = 1;
    /* an integer range of at most 16 values: every value, one batch */
    sim_fit_knob_range(&s.k[0], 0.0, 1.0, 1, 0.0);
    CHECK(s.k[0].discrete && s.k[0].n_values == 2);
    memset(&s.k[0], 0, sizeof s.k[0]);
    s.k[0].discrete = 1;
    for (int i = 0; i < 11; i++)
        s.k[0].values[s.k[0].n_values++] = 0.1 * i;
    CHECK_EQ_INT(sim_fit_search_run(&s), SIM_OK);
    CHECK_NEAR(s.best_x[0], 0.3, 1e-12);
    CHECK_EQ_INT(s.evals, 11);
    CHECK_EQ_INT(o.batches, 1);
    CHECK_EQ_INT(o.calls, 0);
    /* ties keep the first vector */
    o.flat = 1;
    CHECK_EQ_INT(sim_fit_search_run(&s), SIM_OK);
    CHECK_NEAR(s.best_x[0], 0.0, 0);
    /* a batch that fails */
    o.fail_at = 1;
    o.fail_code = 9;
    CHECK_EQ_INT(sim_fit_search_run(&s), 9);
    sim_fit_search_free(&s);
    /* ranges: 16 integer values are discrete, 17 continuous (started inside) */
    sim_fit_knob k;
    memset(&k, 0, sizeof k);
    sim_fit_knob_range(&k, 1, 16, 1, 3);
    CHECK(k.discrete && k.n_values == 16 && k.values[15] == 16);
    memset(&k, 0, sizeof k);
    sim_fit_knob_range(&k, 1, 17, 1, 3);
    CHECK(!k.discrete && k.integer && k.start == 3);
    memset(&k, 0, sizeof k);
    sim_fit_knob_range(&k, 1, 17, 1, 40);
    CHECK(!k.discrete && k.start == 9);
}

static void test_search_mixed(void)
{
    sim_fit_search s;
    objective o;
    search_of(&s, &o, 2);
    nk_of_ctx = 2;
    s.k[0].discrete = 1;
    s.k[0].values[s.k[0].n_values++] = 0;
    s.k[0].values[s.k[0].n_values++] = 1;
    sim_fit_knob_range(&s.k[1], 0.0, 1.0, 0, 0.5);
    CHECK_EQ_INT(sim_fit_search_combos(&s), 2);
    CHECK_EQ_INT(sim_fit_search_run(&s), SIM_OK);
    CHECK_NEAR(s.best_x[0], 1.0, 0);
    CHECK_NEAR(s.best_x[1], 0.7, 0.01);
    CHECK_NEAR(s.best, 0.1, 1e-4);
    CHECK(s.evals <= 200);
    /* an objective that fails on its third call: its code, no call after */
    sim_fit_search_free(&s);
    search_of(&s, &o, 2);
    s.k[0].discrete = 1;
    s.k[0].values[s.k[0].n_values++] = 0;
    sim_fit_knob_range(&s.k[1], 0.0, 1.0, 0, 0.5);
    o.fail_at = 3;
    o.fail_code = 78;
    CHECK_EQ_INT(sim_fit_search_run(&s), 78);
    CHECK_EQ_INT(o.calls, 3);
    sim_fit_search_free(&s);
}

/* A rounded integer knob: repeated vectors are evaluated once (one() checks). */
static void test_search_integer(void)
{
    sim_fit_search s;
    objective o;
    search_of(&s, &o, 1);
    nk_of_ctx = 1;
    sim_fit_knob_range(&s.k[0], 0.0, 1.0, 0, 0.5);
    s.k[0].integer = 1;
    s.k[0].lo = 0;
    s.k[0].hi = 100;
    s.k[0].start = 50;
    CHECK_EQ_INT(sim_fit_search_run(&s), SIM_OK);
    CHECK_NEAR(s.best_x[0], 0.0, 0); /* -(x - 0.3)^2 over the integers */
    CHECK_EQ_INT(s.evals, o.n_seen);
    CHECK(s.best_x[0] == floor(s.best_x[0]));
    sim_fit_search_free(&s);
}

int main(void)
{
    test_bounds();
    test_params();
    test_recover();
    test_bounds_respected();
    test_at_bound();
    test_linear_stats();
    test_loo();
    test_holdout();
    test_bootstrap();
    test_failure();
    test_bad_size();
    test_batch();
    test_no_convergence();
    test_search_continuous();
    test_search_discrete();
    test_search_mixed();
    test_search_integer();
    return check_done("test_fit");
}
