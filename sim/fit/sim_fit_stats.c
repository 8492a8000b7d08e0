/*
 * sim_fit_stats.c -- what a least-squares fit says about itself (sim_fit.h):
 * standard errors by the delta method, AIC/BIC, leave-one-out (PRESS
 * residuals or exact refits) and the parametric bootstrap.
 */
#include "sim/fit/sim_fit_impl.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double sim_fit_aic(int32_t n, int32_t p, double rss)
{
    return n * log(rss / n) + 2.0 * p;
}

double sim_fit_bic(int32_t n, int32_t p, double rss)
{
    return n * log(rss / n) + p * log((double)n);
}

double sim_fit_rms_of(const sim_fit *f, const double *pred)
{
    double ss = 0.0;
    int32_t m = 0;
    for (int32_t k = 0; k < f->n; k++) {
        if (f->hold[k] || (f->skip && f->skip[k])) continue;
        double e = (pred[k] - f->y[k]) / f->y[k];
        ss += e * e;
        m++;
    }
    return m ? sqrt(ss / m) : 0.0;
}

/* ------------------------------------------------------------- statistics */

int sim_fit_stats(sim_fit *f)
{
    if (f->code) return f->code;
    sim_fit_priv *q = f->priv;
    int32_t nf = f->nf, p = f->np;
    int dof = nf - p;
    f->s2 = dof > 0 ? f->rss / dof : NAN;
    gsl_multifit_nlinear_covar(q->J, 0.0, q->cov);
    for (int32_t i = 0; i < p; i++) {
        sim_fit_param *par = &f->par[i];
        double zi = gsl_vector_get(q->z, (size_t)i);
        par->value = sim_fit_x(par->lo, par->hi, zi);
        double u = (par->value - par->lo) / (par->hi - par->lo);
        par->at_bound = u < SIM_FIT_AT_BOUND ? -1 : u > 1.0 - SIM_FIT_AT_BOUND ? 1 : 0;
        double vz = gsl_matrix_get(q->cov, (size_t)i, (size_t)i);
        par->se = dof > 0 && vz >= 0 && !par->at_bound
                      ? sim_fit_dxdz(par->lo, par->hi, zi) * sqrt(f->s2 * vz)
                      : NAN;
        par->se_boot = par->ci_lo = par->ci_hi = NAN;
    }
    f->rms = sqrt(f->rss / nf);
    f->start_rms = sqrt(f->rss0 / nf);
    f->aic = sim_fit_aic(nf, p, f->rss);
    f->bic = sim_fit_bic(nf, p, f->rss);
    double hold_ss = 0.0;
    for (int32_t k = 0; k < f->n; k++)
        if (f->hold[k]) hold_ss += f->resid[k] * f->resid[k];
    f->hold_rms = f->n_hold ? sqrt(hold_ss / f->n_hold) : NAN;
    return SIM_OK;
}

/* ---------------------------------------------------------- leave-one-out */

/* PRESS residuals e_k / (1 - h_kk), h_kk = J_k (J^T J)^-1 J_k^T. */
static void loo_approx(sim_fit *f)
{
    sim_fit_priv *q = f->priv;
    int32_t p = f->np;
    for (int32_t k = 0; k < f->n; k++) {
        double hkk = 0.0; /* J_k C J_k^T with C = (J^T J)^-1 */
        for (int32_t i = 0; i < p; i++)
            for (int32_t j = 0; j < p; j++)
                hkk += gsl_matrix_get(q->J, (size_t)k, (size_t)i) *
                       gsl_matrix_get(q->cov, (size_t)i, (size_t)j) *
                       gsl_matrix_get(q->J, (size_t)k, (size_t)j);
        f->loo_e[k] = hkk < 1.0 - 1e-9 ? f->resid[k] / (1.0 - hkk) : NAN;
    }
    for (int32_t k = 0; k < f->n; k++)
        if (f->hold[k]) f->loo_e[k] = NAN;
}

/* Each fitted row: a refit without it, from the fitted values (the last
 * iterate when it stops early), and its prediction there. */
static int loo_exact(sim_fit *f)
{
    sim_fit_priv *q = f->priv;
    uint8_t *skip = q->skip_mem;
    const uint8_t *base = f->skip;
    for (int32_t k = 0; k < f->n; k++) {
        if (f->hold[k]) continue;
        skip[k] = 1;
        f->skip = skip;
        gsl_vector_memcpy(q->zk, q->z);
        size_t it;
        sim_fit_lm(f, q->zk, &it, NULL);
        if (f->code) return f->code;
        f->skip = base;
        if (sim_fit_evaluate(f, q->zk) != 0) return f->code;
        f->loo_e[k] = (q->cur[k] - f->y[k]) / f->y[k];
        skip[k] = 0;
    }
    return SIM_OK;
}

/* loo_rms and the rows whose error is far beyond the in-sample RMS (over 3x
 * the RMS and over 10%): the fit leans on them. */
static void loo_summary(sim_fit *f)
{
    double loo_ss = 0.0;
    int32_t loo_n = 0;
    for (int32_t k = 0; k < f->n; k++)
        if (isfinite(f->loo_e[k])) loo_ss += f->loo_e[k] * f->loo_e[k], loo_n++;
    f->loo_rms = loo_n ? sqrt(loo_ss / loo_n) : NAN;
    f->far_at = 3.0 * f->rms > 0.10 ? 3.0 * f->rms : 0.10;
    f->n_far = 0;
    f->worst = -1;
    for (int32_t k = 0; k < f->n; k++) {
        if (!sim_fit_loo_far(f, k)) continue;
        f->n_far++;
        if (f->worst < 0 || fabs(f->loo_e[k]) > fabs(f->loo_e[f->worst])) f->worst = k;
    }
}

int sim_fit_loo_far(const sim_fit *f, int32_t k)
{
    return !f->hold[k] && isfinite(f->loo_e[k]) && fabs(f->loo_e[k]) > f->far_at;
}

int sim_fit_loo(sim_fit *f, sim_fit_loo_kind kind)
{
    if (f->code) return f->code;
    for (int32_t k = 0; k < f->n; k++)
        f->loo_e[k] = NAN;
    if (kind == SIM_FIT_LOO_APPROX) loo_approx(f);
    if (kind == SIM_FIT_LOO_EXACT && loo_exact(f) != SIM_OK) return f->code;
    loo_summary(f);
    return SIM_OK;
}

/* -------------------------------------------------------------- bootstrap */

/* One replicate's pseudo-measurements: the model at the fit with the
 * replicate's own randomness (rep), times 1 + s e, e standard normal, written
 * over y. */
static int pseudo_data(sim_fit *f, gsl_rng *rng, int32_t rep, double s)
{
    sim_fit_priv *q = f->priv;
    q->rep = rep;
    int rc = sim_fit_evaluate(f, q->z);
    q->rep = 0;
    if (rc != 0) return rc;
    for (int32_t k = 0; k < f->n; k++) {
        double v = q->cur[k] * (1.0 + s * gsl_ran_gaussian(rng, 1.0));
        f->y[k] = v > 0.0 ? v : q->cur[k];
    }
    return 0;
}

/* Each parameter's se_boot (standard deviation) and ci_lo / ci_hi (2.5% and
 * 97.5% quantiles: the percentile interval) from the m converged replicates;
 * at a bound, the one-sided 95% interval open on the bound's side. */
static void boot_summary(sim_fit *f, double *draws)
{
    int32_t m = f->boot_m, p = f->np;
    for (int32_t i = 0; i < p; i++) {
        sim_fit_param *par = &f->par[i];
        for (int32_t b = 0; b < m; b++)
            draws[b] = f->boot[(size_t)b * (size_t)p + (size_t)i];
        gsl_sort(draws, 1, (size_t)m);
        par->se_boot = gsl_stats_sd(draws, 1, (size_t)m);
        par->ci_lo = gsl_stats_quantile_from_sorted_data(draws, 1, (size_t)m, 0.025);
        par->ci_hi = gsl_stats_quantile_from_sorted_data(draws, 1, (size_t)m, 0.975);
        if (par->at_bound > 0) {
            par->ci_lo = gsl_stats_quantile_from_sorted_data(draws, 1, (size_t)m, 0.05);
            par->ci_hi = INFINITY;
        } else if (par->at_bound < 0) {
            par->ci_lo = -INFINITY;
            par->ci_hi = gsl_stats_quantile_from_sorted_data(draws, 1, (size_t)m, 0.95);
        }
    }
}

/* The replicates: pseudo-data, a refit from the fit (rep 0), the estimate
 * kept when the refit converged.  y_keep holds the measured values. */
static int boot_replicates(sim_fit *f, gsl_rng *rng, double *y_keep)
{
    sim_fit_priv *q = f->priv;
    int32_t n = f->n, p = f->np;
    double s = sqrt(f->s2);
    for (int32_t b = 1; b <= f->boot_n; b++) {
        if (pseudo_data(f, rng, b, isfinite(s) ? s : 0.0) != 0) return f->code;
        gsl_vector_memcpy(q->zk, q->z);
        size_t it;
        int st = sim_fit_lm(f, q->zk, &it, NULL);
        memcpy(f->y, y_keep, sizeof(double) * (size_t)n);
        if (f->code) return f->code;
        if (st != GSL_SUCCESS && st != GSL_ENOPROG) {
            f->boot_failed++;
            continue;
        }
        for (int32_t i = 0; i < p; i++)
            f->boot[(size_t)f->boot_m * (size_t)p + (size_t)i] =
                sim_fit_x(f->par[i].lo, f->par[i].hi, gsl_vector_get(q->zk, (size_t)i));
        f->boot_m++;
    }
    return SIM_OK;
}

int sim_fit_bootstrap(sim_fit *f, int32_t B, unsigned long seed)
{
    int32_t n = f->n, p = f->np;
    if (f->code) return f->code;
    f->boot_n = B > 0 ? B : 0;
    f->boot_m = f->boot_failed = 0;
    if (B <= 0) return SIM_OK;
    free(f->boot);
    f->boot = malloc(sizeof(double) * (size_t)B * (size_t)p);
    double *y_keep = malloc(sizeof(double) * (size_t)n);
    double *draws = malloc(sizeof(double) * (size_t)B);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int rc = SIM_OK;
    if (!f->boot || !y_keep || !draws || !rng) rc = sim_fit_fail(f, SIM_NOMEM);
    if (rc == SIM_OK) {
        gsl_rng_set(rng, seed);
        memcpy(y_keep, f->y, sizeof(double) * (size_t)n);
        rc = boot_replicates(f, rng, y_keep);
    }
    if (rc == SIM_OK && f->boot_m >= SIM_FIT_BOOT_MIN_CONVERGED) boot_summary(f, draws);
    free(y_keep);
    free(draws);
    if (rng) gsl_rng_free(rng);
    return rc;
}
