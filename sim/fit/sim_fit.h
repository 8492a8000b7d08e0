/*
 * sim_fit.h -- the numerics of fitting and tuning, behind callbacks.
 *
 * Two clients: the driver of flashspec.calibrate (sim_fit_cal.h) fits named
 * parameters of the simulator to reference measurements, the driver of
 * flashspec.tune (sim_fit_tune.h) searches a policy's knobs for the best
 * objective.  Both give the model as a callback -- here it is any function of
 * a parameter vector -- so this layer makes no Lua calls and no I/O.
 *
 * Bounds.  A parameter lives in the open interval (lo, hi) through the
 * logistic map x = lo + (hi - lo) / (1 + exp(-z)); the optimisers work on the
 * unbounded z (sim_fit_x, sim_fit_z, sim_fit_dxdz).
 *
 * Least squares (sim_fit).  n observations y_k > 0 and a model giving a
 * prediction per observation; the residuals are relative, (pred - y) / y, so
 * rows of different units weigh alike.  GSL's trust-region Levenberg-
 * Marquardt (gsl_multifit_nlinear) works on z with a forward-difference
 * Jacobian of absolute step fd_step in z.  The predictions at the last
 * evaluated z are reused when GSL asks for them again (its Jacobian comes
 * where it has just evaluated the residuals), and the predictions behind the
 * last Jacobian -- at its z and at each column's step -- are kept, so a refit
 * starting where the last Jacobian was taken (exact leave-one-out, the
 * bootstrap) reuses it.  Then (sim_fit_stats): standard errors s^2 (J^T J)^-1
 * in z, s^2 = RSS / (n - p), carried to x by dx/dz (delta method), NaN when
 * n <= p; AIC = n ln(RSS/n) + 2p, BIC = n ln(RSS/n) + p ln n.  Leave-one-out
 * (sim_fit_loo): "approx" is each row's PRESS residual e_i / (1 - h_ii) from
 * the leverage of the final Jacobian, "exact" refits without the row (from
 * the fitted values) and predicts it.  Parametric bootstrap
 * (sim_fit_bootstrap): each replicate evaluates the model at the fit with
 * rep = 1..B (the model may re-draw its randomness from rep), multiplies each
 * prediction by 1 + s e (e standard normal, GSL's mt19937 from the seed, s the
 * fit's relative residual standard deviation), refits those pseudo-
 * measurements from the fit (rep 0) and keeps the estimate; the replicates'
 * 2.5% and 97.5% quantiles are the 95% interval, their standard deviation
 * se_boot.  Held-out rows (hold) are predicted but never fitted: n, RMS,
 * AIC, BIC, the standard errors and leave-one-out count the fitted rows only.
 *
 * Search (sim_fit_search).  Knobs are discrete (a list of values) or
 * continuous (a range, optionally rounded to integers).  Every combination of
 * the discrete knobs is tried; with continuous knobs, each combination runs
 * GSL's Nelder-Mead simplex (gsl_multimin_fminimizer_nmsimplex2) on them in
 * z, from their start, until the simplex is smaller than SIM_FIT_SIZE_TOL or
 * the combination's share of max_evals is spent; a purely discrete space is
 * handed to the objective in one batch.  Repeated knob vectors are evaluated
 * once.  The order is fixed and ties keep the first vector found, so a search
 * is deterministic whenever its objective is.
 *
 * Failures.  A model or objective returns 0 or a positive code of its own;
 * the first nonzero code stops the work and is returned unchanged by the
 * function that was running.  A sim_fit keeps it: every later call returns it
 * at once, without calling the model again; a sim_fit_search forgets it at its
 * next run.  SIM_NOMEM: out of memory.  sim_fit and sim_fit_search own
 * what they allocate until sim_fit_free / sim_fit_search_free, so a caller
 * may unwind past them (a Lua error) after any call returns.
 */
#ifndef SIM_FIT_H
#define SIM_FIT_H

#include <stddef.h>
#include <stdint.h>
#include "sim/sim_status.h"

#define SIM_FIT_MAX_PARAMS 64
#define SIM_FIT_NAME_CAP 64

/* ----------------------------------------------------------------- bounds */

/* x = lo + (hi - lo) / (1 + exp(-z)). */
double sim_fit_x(double lo, double hi, double z);
/* Its inverse, for x strictly inside (lo, hi). */
double sim_fit_z(double lo, double hi, double x);
/* The inverse with u = (x - lo) / (hi - lo) first held in [margin, 1 - margin]
 * (margin > 0: a start on or beyond a bound maps to a finite z). */
double sim_fit_z_inside(double lo, double hi, double x, double margin);
/* dx/dz at z. */
double sim_fit_dxdz(double lo, double hi, double z);

/* ------------------------------------------------------------ parameters */

typedef struct sim_fit_param {
    char name[SIM_FIT_NAME_CAP];
    double start, lo, hi;         /* in */
    double value, se;             /* out (sim_fit_stats) */
    int at_bound;                 /* out (sim_fit_stats): -1 at lo, +1 at hi, 0 inside */
    double se_boot, ci_lo, ci_hi; /* out (sim_fit_bootstrap; NaN without one) */
} sim_fit_param;

/* A parameter is at its bound when the fit leaves it within this share of
 * its range from lo or hi (the margin sim_fit_param_check keeps starts
 * from): the data pull it to or beyond the bound, the logistic map is flat
 * there, and the delta method's standard error -- dx/dz times the error in
 * z, dx/dz about 0 there -- means nothing.  sim_fit_stats then gives se =
 * NaN; sim_fit_bootstrap gives a one-sided 95% interval, open at the bound's
 * side: [5% quantile, +inf) at hi, (-inf, 95% quantile] at lo. */
#define SIM_FIT_AT_BOUND 1e-4

/* Fewest replicates a bootstrap may ask for.  The 2.5% and 97.5% quantiles
 * of B replicates lie between the two lowest (two highest) when B < 40, so
 * one replicate alone on a side of the estimate leaves the estimate outside
 * the "95% interval"; with replicates spread evenly about it that has
 * probability (B + 1) / 2^B -- 1.1% at 10, 2e-5 at 20.  Callers refuse
 * fewer.  Refits that do not converge are dropped: an interval is drawn from
 * at least SIM_FIT_BOOT_MIN_CONVERGED of them (else NaN), and callers warn
 * when fewer than SIM_FIT_BOOT_MIN converged. */
#define SIM_FIT_BOOT_MIN 20
#define SIM_FIT_BOOT_MIN_CONVERGED 10

enum {
    SIM_FIT_PARAM_OK = 0,
    SIM_FIT_PARAM_BOUNDS, /* lo, hi not finite or lo >= hi */
    SIM_FIT_PARAM_START,  /* start not strictly inside (lo, hi) */
    SIM_FIT_PARAM_EDGE    /* start within 1e-4 of the range from a bound: the
                             logistic map is too flat there to move it */
};

/* Checks a parameter's start and bounds; the first problem found, in the
 * order above. */
int sim_fit_param_check(double start, double lo, double hi);

/* Sorts par[0..np) by name (a deterministic order whatever the input's). */
void sim_fit_sort_params(sim_fit_param *par, int32_t np);

/* ---------------------------------------------------------- least squares */

/* The model: parameters x[np] (natural units) and the replicate rep (0: the
 * fit; 1..B: the bootstrap's) in, pred[n] out.  0, or a positive code. */
typedef int (*sim_fit_model)(void *ctx, const double *x, int32_t rep, double *pred);
/* The model at m parameter vectors at once -- x[j * np + i], pred[j * n + k],
 * j < m -- (the columns of a forward-difference Jacobian): the same
 * predictions as m calls of the model in order, the first failure's code;
 * free to run the m evaluations together. */
typedef int (*sim_fit_model_batch)(void *ctx, int32_t m, const double *x, int32_t rep,
                                   double *pred);

typedef enum sim_fit_loo_kind {
    SIM_FIT_LOO_NONE,
    SIM_FIT_LOO_APPROX,
    SIM_FIT_LOO_EXACT
} sim_fit_loo_kind;

typedef struct sim_fit {
    /* ---- the problem: np, par, fd_step, max_iter, model, ctx before
     * sim_fit_init; y and hold after it ---- */
    int32_t np;
    sim_fit_param par[SIM_FIT_MAX_PARAMS];
    double fd_step;   /* forward-difference step in z */
    int32_t max_iter; /* per least-squares fit */
    sim_fit_model model;
    sim_fit_model_batch model_batch; /* NULL: the Jacobian's columns call model in turn */
    void *ctx;
    int32_t n;     /* observations (sim_fit_init) */
    double *y;     /* [n] measured values, positive finite (written over during a
                      bootstrap replicate, restored after) */
    uint8_t *hold; /* [n] 1: held out -- predicted, never fitted (zeroed) */

    /* ---- readable while the model runs ---- */
    const uint8_t *skip; /* [n] 1: out of the objective now (held out, or the
                            row an exact leave-one-out refit leaves out); NULL: none */
    int64_t evals;       /* model evaluations so far, the running ones included (a
                            batch counts all of its columns when it starts) */

    /* ---- results: sim_fit_run ---- */
    int32_t n_hold, nf;   /* held-out rows; fitted rows (n - n_hold) */
    size_t iters;         /* GSL iterations over every start */
    int no_progress;      /* 1: the kept fit stopped making progress at the step
                             resolution (GSL_ENOPROG), 0: it converged */
    const char *reason;   /* SIM_DATA_NOCONV: why the last start stopped (GSL's text) */
    double rss0, rss;     /* at the start, at the fit */
    double *pred, *resid; /* [n] at the fit: predictions and relative errors
                             (held-out rows included) */
    /* ---- sim_fit_stats ---- */
    double s2, rms, start_rms, aic, bic, hold_rms; /* hold_rms: NaN without held rows */
    /* ---- sim_fit_loo ---- */
    double *loo_e;        /* [n] leave-one-out errors (NaN: none, held out) */
    double loo_rms;       /* over the finite ones (NaN: none) */
    double far_at;        /* an error beyond this (3x the RMS, at least 10%) is far */
    int32_t n_far, worst; /* fitted rows whose error is far; the farthest (-1: none) */
    /* ---- sim_fit_bootstrap ---- */
    int32_t boot_n, boot_m, boot_failed; /* replicates asked, converged, failed */
    double *boot;                        /* [boot_m * np] converged replicates' x */

    /* ---- private ---- */
    int code;   /* the first failure (sticky) */
    void *priv; /* GSL workspace vectors and matrices, caches (sim_fit.c) */
} sim_fit;

/* Allocates for n observations (np, par and the options set; y and hold are
 * then to be filled).  0, SIM_INTERNAL_ARG (n < 1, or np outside [1,
 * SIM_FIT_MAX_PARAMS]: nothing allocated, and every later call returns it) or
 * SIM_NOMEM. */
int sim_fit_init(sim_fit *f, int32_t n);
/* Frees what sim_fit owns; NULL-safe, twice is harmless. */
void sim_fit_free(sim_fit *f);

/* The fit: the model at the starts (rss0), then a least-squares fit from the
 * starts and, for k = 1 .. starts - 1, from deterministic scatters of them
 * (z + 0.5 (2h - 1), h a Halton point per parameter); the converged fit of
 * lowest RSS is kept and the model evaluated there (pred, resid).  0, the
 * model's code, SIM_DATA_NOCONV (no start converged in max_iter: reason) or
 * SIM_NOMEM. */
int sim_fit_run(sim_fit *f, int32_t starts);

/* After sim_fit_run: each parameter's value, at_bound and delta-method
 * standard error (NaN at a bound), s2, rms, start_rms, aic, bic, hold_rms.
 * 0 or SIM_NOMEM. */
int sim_fit_stats(sim_fit *f);

/* After sim_fit_stats: B parametric bootstrap replicates (0: none; se_boot,
 * ci_lo, ci_hi NaN) from GSL's mt19937 seeded with seed; se_boot and the
 * interval only when at least SIM_FIT_BOOT_MIN_CONVERGED converged (boot_m;
 * else NaN, the replicates still in boot), the interval one-sided at a bound
 * (SIM_FIT_AT_BOUND).  0, the model's code or SIM_NOMEM. */
int sim_fit_bootstrap(sim_fit *f, int32_t B, unsigned long seed);

/* After sim_fit_stats: leave-one-out errors (loo_e, loo_rms, far_at, n_far,
 * worst).  0, the model's code or SIM_NOMEM. */
int sim_fit_loo(sim_fit *f, sim_fit_loo_kind kind);

/* After sim_fit_loo: 1 when row k is fitted and its leave-one-out error is far. */
int sim_fit_loo_far(const sim_fit *f, int32_t k);

/* RMS relative error of pred[n] over the rows in the objective now (neither
 * held out nor skipped); 0 when there is none (a progress figure). */
double sim_fit_rms_of(const sim_fit *f, const double *pred);

/* Model selection figures for n residuals of sum of squares rss, p parameters. */
double sim_fit_aic(int32_t n, int32_t p, double rss);
double sim_fit_bic(int32_t n, int32_t p, double rss);

/* ----------------------------------------------------------------- search */

#define SIM_FIT_MAX_KNOBS 16
#define SIM_FIT_MAX_VALUES 256
#define SIM_FIT_INT_EXHAUSTIVE 16 /* integer ranges of at most this many values are discrete */
#define SIM_FIT_SIZE_TOL 1e-3     /* the simplex stops below this size (in z) */

typedef struct sim_fit_knob {
    int discrete; /* 1: one of values[0..n_values) */
    int32_t n_values;
    double values[SIM_FIT_MAX_VALUES];
    double lo, hi, start; /* continuous: the range and where the simplex starts */
    int integer;          /* continuous values are rounded */
} sim_fit_knob;

/* A knob over [lo, hi] (lo < hi): an integer range of at most
 * SIM_FIT_INT_EXHAUSTIVE values becomes discrete (every value), anything else
 * continuous, started at current when that lies inside (lo, hi), else at the
 * middle. */
void sim_fit_knob_range(sim_fit_knob *k, double lo, double hi, int integer, double current);

/* The objective at one knob vector x[nk], maximised: 0 and *value
 * (-HUGE_VAL: no finite value there), or a positive code. */
typedef int (*sim_fit_objective)(void *ctx, const double *x, double *value);
/* The objective at n vectors at once (xs[n * nk], one after the other): 0 and
 * values[n], or a positive code. */
typedef int (*sim_fit_objective_batch)(void *ctx, int64_t n, const double *xs, double *values);

typedef struct sim_fit_search {
    /* ---- the space and the objective ---- */
    int32_t nk;
    sim_fit_knob k[SIM_FIT_MAX_KNOBS];
    int64_t max_evals; /* evaluations per search, at most (see sim_fit_search_check) */
    sim_fit_objective f;
    sim_fit_objective_batch batch; /* used when every knob is discrete */
    void *ctx;
    /* ---- results of the last sim_fit_search_run ---- */
    int64_t evals; /* evaluations made (repeated vectors counted once) */
    double best;   /* the best value (-HUGE_VAL: none finite) */
    double best_x[SIM_FIT_MAX_KNOBS];
    /* ---- private ---- */
    double x[SIM_FIT_MAX_KNOBS]; /* the vector being evaluated */
    double *cx, *cv;             /* evaluated vectors (nk each) and their values */
    int64_t n_cache, cap_cache;
    int code;
} sim_fit_search;

/* Combinations of the discrete knobs (1 when there is none). */
int64_t sim_fit_search_combos(const sim_fit_search *s);
/* Continuous knobs. */
int32_t sim_fit_search_continuous(const sim_fit_search *s);
/* Evaluations a simplex over c continuous knobs needs at the least, to be left
 * for each combination by max_evals: 2 (c + 1) + 1. */
int64_t sim_fit_search_min_budget(int32_t c);

/* One search (the cache starts empty): best, best_x, evals.  0, the
 * objective's code or SIM_NOMEM. */
int sim_fit_search_run(sim_fit_search *s);
/* Frees the cache; NULL-safe, twice is harmless. */
void sim_fit_search_free(sim_fit_search *s);

#endif
