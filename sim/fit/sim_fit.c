/*
 * sim_fit.c -- bounds, parameters and the least-squares fit (sim_fit.h).
 *
 * The residuals GSL sees are the model's predictions made relative to the
 * measurements.  An evaluation is the model's call at one z; predict() reuses
 * the last one when GSL asks again at the same z (and replicate), and
 * resid_df() keeps the predictions behind its last Jacobian, so a Jacobian
 * asked again at its z (a refit from the fitted values) costs no evaluation.
 */
#include "sim/fit/sim_fit_impl.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- bounds */

double sim_fit_x(double lo, double hi, double z)
{
    return lo + (hi - lo) / (1.0 + exp(-z));
}

double sim_fit_z(double lo, double hi, double x)
{
    double u = (x - lo) / (hi - lo);
    return log(u / (1.0 - u));
}

double sim_fit_z_inside(double lo, double hi, double x, double margin)
{
    double u = (x - lo) / (hi - lo);
    u = u < margin ? margin : u > 1.0 - margin ? 1.0 - margin : u;
    return log(u / (1.0 - u));
}

double sim_fit_dxdz(double lo, double hi, double z)
{
    double s = 1.0 / (1.0 + exp(-z));
    return (hi - lo) * s * (1.0 - s);
}

/* ------------------------------------------------------------- parameters */

int sim_fit_param_check(double start, double lo, double hi)
{
    if (!(isfinite(lo) && isfinite(hi) && lo < hi)) return SIM_FIT_PARAM_BOUNDS;
    if (!(start > lo && start < hi)) return SIM_FIT_PARAM_START;
    /* the logistic map is flat near a bound: a start there could not move
     * within the difference step, and the fit would report it unmoved */
    double u = (start - lo) / (hi - lo);
    if (u < 1e-4 || u > 1.0 - 1e-4) return SIM_FIT_PARAM_EDGE;
    return SIM_FIT_PARAM_OK;
}

static int cmp_param(const void *a, const void *b)
{
    return strcmp(((const sim_fit_param *)a)->name, ((const sim_fit_param *)b)->name);
}

void sim_fit_sort_params(sim_fit_param *par, int32_t np)
{
    qsort(par, (size_t)np, sizeof par[0], cmp_param);
}

/* ------------------------------------------------------------------ setup */

int sim_fit_init(sim_fit *f, int32_t n)
{
    size_t nn = (size_t)n, p = (size_t)f->np;
    gsl_set_error_handler_off(); /* statuses, never abort() */
    f->n = n;
    f->code = 0;
    f->worst = -1;
    if (n < 1 || f->np < 1 || f->np > SIM_FIT_MAX_PARAMS) { /* nothing to fit, or to fit with */
        f->priv = NULL;
        f->y = f->pred = f->resid = f->loo_e = NULL;
        f->hold = NULL;
        return sim_fit_fail(f, SIM_INTERNAL_ARG);
    }
    sim_fit_priv *q = f->priv = calloc(1, sizeof *q);
    if (!q) return SIM_NOMEM;
    f->y = calloc(nn, sizeof *f->y);
    f->hold = calloc(nn, 1);
    f->pred = calloc(nn, sizeof *f->pred);
    f->resid = calloc(nn, sizeof *f->resid);
    f->loo_e = calloc(nn, sizeof *f->loo_e);
    q->cur = calloc(nn, sizeof *q->cur);
    q->jc_pred = calloc(nn * (p + 1), sizeof *q->jc_pred);
    q->skip_mem = calloc(nn, 1);
    q->z = gsl_vector_alloc(p);
    q->zk = gsl_vector_alloc(p);
    q->f = gsl_vector_alloc(nn);
    q->J = gsl_matrix_alloc(nn, p);
    q->Jk = gsl_matrix_alloc(nn, p);
    q->cov = gsl_matrix_alloc(p, p);
    if (!f->y || !f->hold || !f->pred || !f->resid || !f->loo_e || !q->cur || !q->jc_pred ||
        !q->skip_mem || !q->z || !q->zk || !q->f || !q->J || !q->Jk || !q->cov)
        return SIM_NOMEM;
    return SIM_OK;
}

void sim_fit_free(sim_fit *f)
{
    if (!f) return;
    sim_fit_priv *q = f->priv;
    if (q) {
        free(q->cur);
        free(q->jc_pred);
        free(q->skip_mem);
        gsl_vector_free(q->z);
        gsl_vector_free(q->zk);
        gsl_vector_free(q->f);
        gsl_matrix_free(q->J);
        gsl_matrix_free(q->Jk);
        gsl_matrix_free(q->cov);
        free(q);
    }
    free(f->y);
    free(f->hold);
    free(f->pred);
    free(f->resid);
    free(f->loo_e);
    free(f->boot);
    f->priv = NULL;
    f->y = f->pred = f->resid = f->loo_e = f->boot = NULL;
    f->hold = NULL;
    f->skip = NULL;
}

int sim_fit_fail(sim_fit *f, int code)
{
    if (!f->code) f->code = code;
    return f->code;
}

/* ------------------------------------------------------------- evaluation */

int sim_fit_evaluate(sim_fit *f, const gsl_vector *z)
{
    if (f->code) return f->code;
    sim_fit_priv *q = f->priv;
    double x[SIM_FIT_MAX_PARAMS];
    for (int32_t i = 0; i < f->np; i++)
        x[i] = sim_fit_x(f->par[i].lo, f->par[i].hi, gsl_vector_get(z, (size_t)i));
    q->cur_ok = 0;
    f->evals++;
    int rc = f->model(f->ctx, x, q->rep, q->cur);
    if (rc != 0) return sim_fit_fail(f, rc);
    for (int32_t i = 0; i < f->np; i++)
        q->cur_z[i] = gsl_vector_get(z, (size_t)i);
    q->cur_rep = q->rep;
    q->cur_ok = 1;
    return 0;
}

/* The predictions at z into priv->cur: the last evaluation's when it was at z. */
static int predict(sim_fit *f, const gsl_vector *z)
{
    sim_fit_priv *q = f->priv;
    int same = q->cur_ok && q->cur_rep == q->rep;
    for (int32_t i = 0; i < f->np && same; i++)
        same = q->cur_z[i] == gsl_vector_get(z, (size_t)i);
    return same ? 0 : sim_fit_evaluate(f, z);
}

static int resid_f(const gsl_vector *z, void *ctx, gsl_vector *out)
{
    sim_fit *f = ctx;
    const double *cur = ((sim_fit_priv *)f->priv)->cur;
    /* GSL asks for the Jacobian where it has just evaluated f: reuse it */
    if (predict(f, z) != 0) return GSL_EBADFUNC;
    for (int32_t k = 0; k < f->n; k++) {
        double e = (cur[k] - f->y[k]) / f->y[k];
        gsl_vector_set(out, (size_t)k, f->skip && f->skip[k] ? 0.0 : e);
    }
    return GSL_SUCCESS;
}

static double resid_of(const sim_fit *f, const double *pred, int32_t k)
{
    if (f->skip && f->skip[k]) return 0.0;
    return (pred[k] - f->y[k]) / f->y[k];
}

/* The model at each column's step from z at once (model_batch): the
 * predictions into jc_pred's columns 1..p, and priv->cur left as the last
 * column's, as calling the model column by column leaves it. */
static int column_batch(sim_fit *f, const gsl_vector *z)
{
    sim_fit_priv *q = f->priv;
    size_t n = (size_t)f->n, p = (size_t)f->np;
    double *x = malloc(sizeof *x * p * p);
    if (!x) return sim_fit_fail(f, SIM_NOMEM);
    for (size_t j = 0; j < p; j++)
        for (size_t i = 0; i < p; i++) {
            double zi = gsl_vector_get(z, i) + (i == j ? f->fd_step : 0.0);
            x[j * p + i] = sim_fit_x(f->par[i].lo, f->par[i].hi, zi);
        }
    q->cur_ok = 0;
    f->evals += (int64_t)p;
    int rc = f->model_batch(f->ctx, (int32_t)p, x, q->rep, q->jc_pred + n);
    free(x);
    if (rc != 0) return sim_fit_fail(f, rc);
    memcpy(q->cur, q->jc_pred + p * n, sizeof(double) * n);
    for (size_t i = 0; i < p; i++)
        q->cur_z[i] = gsl_vector_get(z, i) + (i == p - 1 ? f->fd_step : 0.0);
    q->cur_rep = q->rep;
    q->cur_ok = 1;
    return 0;
}

/* 1 when every column's step moves its coordinate (in floating point): the
 * columns are then all new points, which a batch evaluates. */
static int steps_move(const sim_fit *f, const gsl_vector *z)
{
    for (size_t j = 0; j < (size_t)f->np; j++)
        if (gsl_vector_get(z, j) + f->fd_step == gsl_vector_get(z, j)) return 0;
    return 1;
}

/* Runs the model at z and at each column's step in z (forward differences
 * with an absolute step); keeps the predictions in jc_pred. */
static int jacobian_points(sim_fit *f, const gsl_vector *z)
{
    sim_fit_priv *q = f->priv;
    size_t n = (size_t)f->n, p = (size_t)f->np;
    gsl_vector *zz = gsl_vector_alloc(p);
    if (!zz) return GSL_ENOMEM;
    q->jc_ok = 0;
    int batch = f->model_batch && steps_move(f, z);
    for (size_t j = 0; j <= (batch ? 0 : p); j++) { /* j = 0: z itself; j: column j - 1 */
        gsl_vector_memcpy(zz, z);
        if (j > 0) gsl_vector_set(zz, j - 1, gsl_vector_get(z, j - 1) + f->fd_step);
        if (predict(f, zz) != 0) {
            gsl_vector_free(zz);
            return GSL_EBADFUNC;
        }
        memcpy(q->jc_pred + j * n, q->cur, sizeof(double) * n);
    }
    gsl_vector_free(zz);
    if (batch && column_batch(f, z) != 0) return GSL_EBADFUNC;
    for (size_t j = 0; j < p; j++)
        q->jc_z[j] = gsl_vector_get(z, j);
    q->jc_rep = q->rep;
    q->jc_ok = 1;
    return GSL_SUCCESS;
}

static int resid_df(const gsl_vector *z, void *ctx, gsl_matrix *J)
{
    sim_fit *f = ctx;
    sim_fit_priv *q = f->priv;
    size_t n = J->size1, p = J->size2;
    int hit = q->jc_ok && q->jc_rep == q->rep;
    for (size_t j = 0; j < p && hit; j++)
        hit = q->jc_z[j] == gsl_vector_get(z, j);
    if (!hit) {
        int st = jacobian_points(f, z);
        if (st != GSL_SUCCESS) return st;
    }
    for (size_t j = 0; j < p; j++)
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(J, i, j,
                           (resid_of(f, q->jc_pred + (j + 1) * n, (int32_t)i) -
                            resid_of(f, q->jc_pred, (int32_t)i)) /
                               f->fd_step);
    return GSL_SUCCESS;
}

int sim_fit_lm(sim_fit *f, gsl_vector *z, size_t *iters, gsl_matrix *J_out)
{
    size_t n = (size_t)f->n, p = (size_t)f->np;
    gsl_multifit_nlinear_fdf fdf = {
        .f = resid_f, .df = resid_df, .fvv = NULL, .n = n, .p = p, .params = f};
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
    *iters = 0;
    if (!w) {
        sim_fit_fail(f, SIM_NOMEM);
        return GSL_ENOMEM;
    }
    int status = gsl_multifit_nlinear_init(z, &fdf, w);
    int info = 0;
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver((size_t)f->max_iter, 1e-6, 1e-8, 1e-10, NULL, NULL,
                                             &info, w);
    *iters = gsl_multifit_nlinear_niter(w);
    gsl_vector_memcpy(z, gsl_multifit_nlinear_position(w));
    if (J_out) gsl_matrix_memcpy(J_out, gsl_multifit_nlinear_jac(w));
    gsl_multifit_nlinear_free(w);
    if (status == GSL_ENOMEM) sim_fit_fail(f, SIM_NOMEM);
    return status;
}

/* -------------------------------------------------------------------- fit */

/* Start k: the spec's values (k = 0), else a deterministic scatter around
 * them, z + 0.5 (2 h - 1) with h a Halton point (a prime base per parameter). */
static void start_point(const sim_fit *f, int32_t k, gsl_vector *z)
{
    static const int primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
    for (int32_t i = 0; i < f->np; i++) {
        const sim_fit_param *q = &f->par[i];
        double zi = sim_fit_z(q->lo, q->hi, q->start);
        if (k > 0) {
            int b = primes[i % 16];
            double h = 0.0, fr = 1.0 / b;
            for (int32_t n = k + i / 16; n > 0; n /= b, fr /= b)
                h += fr * (n % b);
            zi += 0.5 * (2.0 * h - 1.0);
        }
        gsl_vector_set(z, (size_t)i, zi);
    }
}

/* Fits from each start; keeps the converged fit of lowest RSS in z and J. */
static int fit_starts(sim_fit *f, int32_t starts)
{
    sim_fit_priv *q = f->priv;
    int status = GSL_FAILURE, last = GSL_FAILURE;
    double best = INFINITY;
    f->iters = 0;
    for (int32_t k = 0; k < starts; k++) {
        start_point(f, k, q->zk);
        size_t it = 0;
        last = sim_fit_lm(f, q->zk, &it, q->Jk);
        f->iters += it;
        if (f->code) return f->code;
        if (last != GSL_SUCCESS && last != GSL_ENOPROG) continue;
        resid_f(q->zk, f, q->f);
        if (f->code) return f->code;
        double r;
        gsl_blas_ddot(q->f, q->f, &r);
        if (r < best) {
            best = r;
            status = last;
            gsl_vector_memcpy(q->z, q->zk);
            gsl_matrix_memcpy(q->J, q->Jk);
        }
    }
    if (!isfinite(best)) {
        f->reason = gsl_strerror(last);
        return SIM_DATA_NOCONV;
    }
    f->no_progress = status != GSL_SUCCESS;
    return SIM_OK;
}

int sim_fit_run(sim_fit *f, int32_t starts)
{
    sim_fit_priv *q = f->priv;
    int32_t n = f->n;
    if (f->code) return f->code;
    f->n_hold = 0;
    for (int32_t k = 0; k < n; k++)
        f->n_hold += f->hold[k] != 0;
    f->nf = n - f->n_hold;
    f->skip = NULL;
    if (f->n_hold) {
        memcpy(q->skip_mem, f->hold, (size_t)n);
        f->skip = q->skip_mem; /* held-out rows stay out of every fit */
    }
    start_point(f, 0, q->z);
    resid_f(q->z, f, q->f); /* the first evaluation */
    if (f->code) return f->code;
    gsl_blas_ddot(q->f, q->f, &f->rss0);
    int rc = fit_starts(f, starts);
    if (rc != SIM_OK) return rc;
    resid_f(q->z, f, q->f); /* predictions at the solution */
    if (f->code) return f->code;
    gsl_blas_ddot(q->f, q->f, &f->rss);
    memcpy(f->pred, q->cur, sizeof *f->pred * (size_t)n);
    for (int32_t k = 0; k < n; k++)
        f->resid[k] =
            f->hold[k] ? (f->pred[k] - f->y[k]) / f->y[k] : gsl_vector_get(q->f, (size_t)k);
    return SIM_OK;
}
