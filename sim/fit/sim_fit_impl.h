/*
 * sim_fit_impl.h -- what sim_fit.c and sim_fit_stats.c share of a sim_fit:
 * its GSL objects, the evaluation caches and the least-squares steps.
 */
#ifndef SIM_FIT_IMPL_H
#define SIM_FIT_IMPL_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "sim/fit/sim_fit.h"

typedef struct sim_fit_priv {
    gsl_vector *z, *f, *zk; /* the fit, its residuals, a refit's position */
    gsl_matrix *J, *Jk;     /* the fit's Jacobian, a start's */
    gsl_matrix *cov;        /* (J^T J)^-1 */
    uint8_t *skip_mem;      /* [n] held rows, and the row an exact refit leaves out */
    int32_t rep;            /* replicate passed to the model; 0 = the fit */
    /* the predictions of the last evaluation, where (cur_ok) and for which
     * replicate they were made: GSL asks for the Jacobian where it has just
     * evaluated the residuals */
    double *cur;
    double cur_z[SIM_FIT_MAX_PARAMS];
    int32_t cur_rep, cur_ok;
    /* the predictions behind the last Jacobian: at jc_z and at each column's
     * step ([(np + 1) * n]).  Exact leave-one-out starts every refit from the
     * fitted values, so each refit's first Jacobian is this one (with its own
     * row left out): recomputed from these, not re-run */
    double *jc_pred;
    double jc_z[SIM_FIT_MAX_PARAMS];
    int32_t jc_rep, jc_ok;
} sim_fit_priv;

/* Records the first failure; returns it. */
int sim_fit_fail(sim_fit *f, int code);

/* The model at z (always run): the predictions into priv->cur.  0 or the
 * failure code. */
int sim_fit_evaluate(sim_fit *f, const gsl_vector *z);

/* One least-squares fit from z (in place), its final Jacobian into J_out (may
 * be NULL).  Returns GSL's status; a failure of the model or of memory is in
 * f->code. */
int sim_fit_lm(sim_fit *f, gsl_vector *z, size_t *iters, gsl_matrix *J_out);

#endif
