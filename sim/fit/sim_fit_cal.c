/*
 * sim_fit_cal.c -- the driver of a calibration (sim_fit_cal.h): the model
 * sim_fit calls is this file's, which asks the binding to run the points
 * and turns their rows into the reference rows' predictions; then the fit,
 * its statistics, bootstrap and leave-one-out, the warnings and the files.
 *
 * The progress line is this file's alone: it is written after every
 * evaluation and cleared once, when sim_fit_cal_run returns (a failure
 * included), so an error line or a warning never lands after its text.
 */
#include "sim/fit/sim_fit_cal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/fit/sim_fit_report.h"

/* A progress line's width of spaces between carriage returns. */
#define PROGRESS_CLEAR                                                                             \
    "\r                                                                              "             \
    "                                                  \r"

const char *const sim_fit_loo_names[] = {"approx", "exact", "none", NULL};
const sim_fit_loo_kind sim_fit_loo_kinds[] = {SIM_FIT_LOO_APPROX, SIM_FIT_LOO_EXACT,
                                              SIM_FIT_LOO_NONE};

#define CO(f) offsetof(sim_fit_cal_opts, f)
static const eng_param_desc option_keys[] = {
    {"name", ENG_PARAM_STRING, CO(name), 0, 0, 0, NULL, SIM_FIT_NAME_CAP, 0, "calibration", NULL, 0,
     "the calibration's name: its outputs are NAME.md and NAME.csv"},
    {"loo", ENG_PARAM_ENUM, CO(loo), 0, 2, 0, sim_fit_loo_names, 0, 0, NULL, NULL, 0,
     "leave-one-out: approx (leverage), exact (refits) or none"},
    {"max_iter", ENG_PARAM_INT, CO(max_iter), 1, 10000, 100, NULL, 0, 0, NULL, NULL, 0,
     "iterations of each least-squares fit, at most"},
    {"fd_step", ENG_PARAM_DOUBLE, CO(fd_step), 1e-8, 1, 0.05, NULL, 0, 0, NULL, NULL, 0,
     "forward-difference step of the Jacobian, in the unbounded coordinate"},
    {"starts", ENG_PARAM_INT, CO(starts), 1, 64, 1, NULL, 0, 0, NULL, NULL, 0,
     "fits from this many starting points, the lowest converged RSS kept"},
    {"bootstrap", ENG_PARAM_INT, CO(bootstrap), 0, 10000, 0, NULL, 0, 0, NULL, NULL, 0,
     "replicates of the parametric bootstrap (0: none; else at least 20)"},
    {"bootstrap_seed", ENG_PARAM_DOUBLE, CO(bootstrap_seed), 0, 4294967295.0, 1, NULL, 0, 0, NULL,
     NULL, 0, "seed of the bootstrap's measurement noise (an integer)"},
    {NULL, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
#undef CO

const eng_param_desc *sim_fit_cal_option_keys(void)
{
    return option_keys;
}

sim_fit_cal_opts sim_fit_cal_default_opts(void)
{
    sim_fit_cal_opts o;
    memset(&o, 0, sizeof o);
    eng_params_defaults(option_keys, &o);
    return o;
}

/* status with its line in err. */
static int fail(sim_fit_cal *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(sim_fit_cal *c, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return status;
}

/* ------------------------------------------------------------ progress */

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sim_fit_cal_eta(sim_fit_cal *c, int32_t rep, int64_t eval, double now_s, char *out, size_t n)
{
    /* a phase begins at the first evaluation, and again at the first of the
     * bootstrap's replicates */
    if (c->phase_s == 0 || (rep > 0 && c->phase_rep == 0)) {
        c->phase_s = now_s;
        c->phase_eval = eval - 1;
        c->phase_rep = rep;
    }
    double took = now_s - c->phase_s;
    int64_t done = eval - c->phase_eval;
    if (rep > 0) {
        int32_t boot = c->o.bootstrap > 0 ? c->o.bootstrap : rep;
        if (rep > c->phase_rep) /* a replicate is done: its pace is known */
            snprintf(out, n, ", replicate %d of %d, ETA ~%.0f s", (int)rep, (int)boot,
                     took / (rep - c->phase_rep) * (boot - rep + 1));
        else
            snprintf(out, n, ", replicate %d of %d", (int)rep, (int)boot);
        return;
    }
    /* the bound: it usually converges well before */
    int64_t most = (int64_t)(c->o.starts > 0 ? c->o.starts : 1) * c->o.max_iter * (c->f.np + 1);
    double per = done > 0 ? took / (double)done : 0;
    if (most > eval)
        snprintf(out, n, ", %.2f s each, ETA at most ~%.0f s (max_iter)", per,
                 per * (double)(most - eval));
    else
        snprintf(out, n, ", %.2f s each", per);
}

/* The progress line after an evaluation: its count, the RMS relative error
 * of the fitted rows and the ETA. */
static void progress(sim_fit_cal *c, const double *pred, int32_t rep, int64_t eval)
{
    if (!c->progress) return;
    double rms = sim_fit_rms_of(&c->f, pred);
    char eta[128];
    sim_fit_cal_eta(c, rep, eval, c->clock ? c->clock() : monotonic_s(), eta, sizeof eta);
    /* padded to a whole line: the stderr filter passes no terminal escapes */
    fprintf(c->progress, "\rflashspec: calibrate %s: evaluation %lld%s, RMS %.2f%%%s%-8s",
            c->o.name, (long long)eval, rep ? " (bootstrap)" : "", 100 * rms, eta, "");
    fflush(c->progress);
}

/* -------------------------------------------------------------- matching */

/* SIM_DATA: "no point matches" reference row k, naming its keys. */
static int no_match(sim_fit_cal *c, int32_t k)
{
    const fs_ref *ref = &c->ref;
    char keys[512] = "";
    size_t at = 0;
    for (int32_t j = 0; j < ref->n_keys && at < sizeof keys; j++)
        if (ref->rows[k].keys[j][0])
            at += (size_t)snprintf(keys + at, sizeof keys - at, "%s%s=%s", at ? ", " : "",
                                   ref->key_names[j], ref->rows[k].keys[j]);
    return fail(c, SIM_DATA, "%s:%d: no point matches this reference row (%s)", ref->path,
                ref->rows[k].line, keys);
}

int sim_fit_cal_match(sim_fit_cal *c, const sim_fit_point *pts, int64_t n, double *pred)
{
    const fs_ref *ref = &c->ref;
    for (int32_t k = 0; k < ref->n_rows; k++) {
        double sum = 0.0;
        int32_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            const fs_row *r = pts[i].row;
            if (!r || !fs_ref_match(ref, k, &c->cols, r)) continue;
            double v;
            if (fs_ref_eval(ref, k, &c->cols, r, &v) != 0)
                return fail(c, SIM_DATA,
                            "%s:%d: metric '%s' is not a finite number for the "
                            "point %s %s on %s (trace %s)",
                            ref->path, ref->rows[k].line, ref->rows[k].metric, r->policy, r->target,
                            r->device, r->trace);
            sum += v;
            m++;
        }
        if (!m) return no_match(c, k);
        pred[k] = sum / m;
        c->matches[k] = m;
    }
    return SIM_OK;
}

/* One vector's points: the first failed point's status, else the
 * predictions and the progress line of evaluation `eval`. */
static int take(sim_fit_cal *c, const sim_fit_cal_eval *e, int32_t rep, int64_t eval, double *pred)
{
    for (int64_t i = 0; i < e->n; i++)
        if (e->pts[i].code)
            return fail(c, e->pts[i].code, "%s", e->pts[i].err ? e->pts[i].err : "");
    int rc = sim_fit_cal_match(c, e->pts, e->n, pred);
    if (rc == SIM_OK) progress(c, pred, rep, eval);
    return rc;
}

/* sim_fit's batch model: the binding runs the m vectors' points, then each
 * vector's predictions in order.  A failure stays the fit's (sticky). */
static int model_batch(void *ctx, int32_t m, const double *x, int32_t rep, double *pred)
{
    sim_fit_cal *c = ctx;
    if (m > c->evs_cap) {
        sim_fit_cal_eval *e = realloc(c->evs, sizeof *e * (size_t)m);
        if (!e) {
            c->failed = 1;
            return fail(c, SIM_NOMEM, "out of memory");
        }
        c->evs = e;
        c->evs_cap = m;
    }
    memset(c->evs, 0, sizeof *c->evs * (size_t)m);
    int rc = c->run(c->ctx, m, x, rep, c->evs);
    int64_t first = c->f.evals - m + 1; /* the count of the first of them */
    for (int32_t j = 0; j < m && rc == SIM_OK; j++)
        rc = take(c, &c->evs[j], rep, first + j, pred + (size_t)j * (size_t)c->f.n);
    c->failed |= rc != SIM_OK;
    return rc;
}

static int model(void *ctx, const double *x, int32_t rep, double *pred)
{
    return model_batch(ctx, 1, x, rep, pred);
}

/* ------------------------------------------------------------- the fit */

/* 1 when a reference row reads the throughput's bootstrap interval over
 * the prompts (a key or a metric naming tokens_per_s_lo or _hi). */
static int reads_interval(const fs_ref *ref)
{
    static const char *const cols[] = {"tokens_per_s_lo", "tokens_per_s_hi"};
    for (int c = 0; c < 2; c++) {
        for (int32_t j = 0; j < ref->n_keys; j++)
            if (!strcmp(ref->key_names[j], cols[c])) return 1;
        for (int32_t k = 0; k < ref->n_rows; k++)
            for (int32_t o = 0; o < ref->rows[k].n_ops; o++)
                if (ref->rows[k].ops[o].kind == 'c' && !strcmp(ref->rows[k].ops[o].col, cols[c]))
                    return 1;
    }
    return 0;
}

int sim_fit_cal_init(sim_fit_cal *c)
{
    sim_fit *f = &c->f;
    int32_t n = c->ref.n_rows;
    f->fd_step = c->o.fd_step;
    f->max_iter = c->o.max_iter;
    f->model = model;
    f->model_batch = model_batch;
    f->ctx = c;
    c->err[0] = 0;
    c->matches = calloc((size_t)(n > 0 ? n : 1), sizeof *c->matches);
    if (sim_fit_init(f, n) != SIM_OK || !c->matches) return fail(c, SIM_NOMEM, "out of memory");
    for (int32_t k = 0; k < n; k++)
        f->y[k] = c->ref.rows[k].value;
    c->need_interval = reads_interval(&c->ref);
    return SIM_OK;
}

int sim_fit_cal_hold(sim_fit_cal *c, const char *source)
{
    int any = 0;
    for (int32_t k = 0; k < c->ref.n_rows; k++) {
        if (strcmp(c->ref.rows[k].source, source) != 0) continue;
        any = 1;
        c->n_hold += !c->f.hold[k];
        c->f.hold[k] = 1;
    }
    if (!any)
        return fail(c, SIM_CONFIG,
                    "%s:%d: flashspec.calibrate: holdout '%s' matches no "
                    "reference row's source (%s)",
                    c->chunk, c->line, source, c->ref_arg);
    return SIM_OK;
}

/* A sim_fit call's status: the model's failure as it is, else memory. */
static int check(sim_fit_cal *c, int rc, const char *what)
{
    if (rc == SIM_OK || c->failed) return rc;
    return fail(c, SIM_NOMEM, "out of memory for %s", what);
}

/* The fit from the starts; a fit that never converges is an error. */
static int fit(sim_fit_cal *c)
{
    int rc = sim_fit_run(&c->f, c->o.starts);
    if (rc == SIM_DATA_NOCONV && !c->failed)
        return fail(c, rc,
                    "%s:%d: flashspec.calibrate: the fit did not converge in %d "
                    "iterations (%s); nothing written",
                    c->chunk, c->line, c->o.max_iter, c->f.reason);
    rc = check(c, rc, "the fit");
    return rc ? rc : check(c, sim_fit_stats(&c->f), "the fit");
}

/* The rows the fit leans on (leave-one-out errors far beyond the in-sample
 * RMS), said once. */
static void warn_loo(sim_fit_cal *c)
{
    const sim_fit *f = &c->f;
    if (!f->n_far) return;
    fprintf(c->warn,
            "flashspec: warning: %s:%d: calibration %s: %d leave-one-out error%s beyond "
            "%.0f%% (3x the in-sample RMS of %.1f%%, at least 10%%); worst %s:%d %s %+.1f%%: "
            "the fit leans on %s\n",
            c->chunk, c->line, c->o.name, (int)f->n_far, f->n_far == 1 ? "" : "s", 100 * f->far_at,
            100 * f->rms, c->ref.path, c->ref.rows[f->worst].line, c->ref.rows[f->worst].metric,
            100 * f->loo_e[f->worst], f->n_far == 1 ? "that row" : "those rows");
}

/* A parameter at its bound (the data pull it beyond: no standard error, a
 * one-sided interval), or an interval that does not hold its estimate. */
static void warn_params(sim_fit_cal *c, const char *head)
{
    const sim_fit *f = &c->f;
    for (int32_t i = 0; i < f->np; i++) {
        const sim_fit_param *q = &f->par[i];
        if (q->at_bound)
            fprintf(c->warn,
                    "%s%s:%d: calibration %s: %s = %.6g is at its %s bound (bounds %g..%g): "
                    "the data pull it %s the bound; its standard error does not apply and its "
                    "interval is one-sided -- widen the bounds or check the reference\n",
                    head, c->chunk, c->line, c->o.name, q->name, q->value,
                    q->at_bound > 0 ? "upper" : "lower", q->lo, q->hi,
                    q->at_bound > 0 ? "above" : "below");
        else if (isfinite(q->ci_lo) && !(q->ci_lo <= q->value && q->value <= q->ci_hi))
            fprintf(c->warn,
                    "%s%s:%d: calibration %s: the bootstrap interval [%.6g, %.6g] of %s does "
                    "not hold its estimate %.6g: the replicates refit elsewhere (a rough or "
                    "multi-modal response); read the interval with care\n",
                    head, c->chunk, c->line, c->o.name, q->ci_lo, q->ci_hi, q->name, q->value);
    }
}

/* What the fit cannot vouch for (also in NAME.md): the rows it leans on
 * (warn_loo), the parameters (warn_params), bootstrap refits that did not
 * converge (with fewer than SIM_FIT_BOOT_MIN_CONVERGED converged there is no
 * interval). */
static void warn_fit(sim_fit_cal *c)
{
    const sim_fit *f = &c->f;
    if (!c->warn) return;
    const char *head = "flashspec: warning: ";
    warn_loo(c);
    warn_params(c, head);
    if (!f->boot_n || !f->boot_failed) return;
    if (!f->boot_m)
        fprintf(c->warn,
                "%s%s:%d: calibration %s: none of the %d bootstrap refits converged: no "
                "bootstrap interval\n",
                head, c->chunk, c->line, c->o.name, (int)f->boot_n);
    else if (f->boot_m < SIM_FIT_BOOT_MIN_CONVERGED)
        fprintf(c->warn,
                "%s%s:%d: calibration %s: %d of the %d bootstrap refits converged, fewer than "
                "the %d an interval needs: no bootstrap interval\n",
                head, c->chunk, c->line, c->o.name, (int)f->boot_m, (int)f->boot_n,
                SIM_FIT_BOOT_MIN_CONVERGED);
    else if (f->boot_m < SIM_FIT_BOOT_MIN)
        fprintf(c->warn,
                "%s%s:%d: calibration %s: %d of the %d bootstrap refits did not converge; the "
                "intervals are over the %d that did, fewer than %d: a rough interval (ask for "
                "more replicates)\n",
                head, c->chunk, c->line, c->o.name, (int)f->boot_failed, (int)f->boot_n,
                (int)f->boot_m, SIM_FIT_BOOT_MIN);
    else
        fprintf(c->warn,
                "%s%s:%d: calibration %s: %d of the %d bootstrap refits did not converge; the "
                "intervals are over the %d that did\n",
                head, c->chunk, c->line, c->o.name, (int)f->boot_failed, (int)f->boot_n,
                (int)f->boot_m);
}

int sim_fit_cal_run(sim_fit_cal *c)
{
    sim_fit *f = &c->f;
    int32_t n = c->ref.n_rows;
    c->err[0] = 0;
    if (n - c->n_hold < f->np)
        return fail(c, SIM_CONFIG,
                    "%s:%d: flashspec.calibrate: %d parameters but only %d "
                    "reference rows%s",
                    c->chunk, c->line, f->np, n - c->n_hold, c->n_hold ? " not held out" : "");
    int rc = fit(c);
    if (rc == SIM_OK)
        rc = check(c, sim_fit_bootstrap(f, c->o.bootstrap, (unsigned long)c->o.bootstrap_seed),
                   "the bootstrap");
    if (rc == SIM_OK) rc = check(c, sim_fit_loo(f, sim_fit_loo_kinds[c->o.loo]), "the fit");
    if (c->progress) { /* the progress line is done, or gives way to the error */
        fputs(PROGRESS_CLEAR, c->progress);
        fflush(c->progress);
    }
    if (rc == SIM_OK) warn_fit(c);
    return rc;
}

/* ---------------------------------------------------------------- files */

int sim_fit_cal_files(sim_fit_cal *c, sim_fit_cal_file files[3], int *n)
{
    const sim_fit_report rep = {.f = &c->f,
                                .ref = &c->ref,
                                .matches = c->matches,
                                .device_key = c->device_key,
                                .name = c->o.name,
                                .spec = c->chunk,
                                .ref_arg = c->ref_arg,
                                .loo = sim_fit_loo_names[c->o.loo],
                                .prof_name = c->prof_name,
                                .prof_base = c->prof_base,
                                .fd_step = c->o.fd_step,
                                .bootstrap_seed = c->o.bootstrap_seed,
                                .starts = c->o.starts,
                                .n_hold = c->n_hold};
    memset(files, 0, sizeof *files * 3);
    snprintf(files[0].name, sizeof files[0].name, "%s.md", c->o.name);
    sim_fit_report_md(&rep, &files[0].text);
    snprintf(files[1].name, sizeof files[1].name, "%s.csv", c->o.name);
    sim_fit_report_csv(&rep, &files[1].text);
    *n = 2;
    if (c->prof_base[0]) {
        snprintf(files[2].name, sizeof files[2].name, "%s.lua", c->prof_name);
        sim_fit_report_profile(&rep, &files[2].text);
        *n = 3;
    }
    for (int i = 0; i < *n; i++)
        if (files[i].text.oom) {
            sim_fit_cal_files_free(files, *n);
            *n = 0;
            return fail(c, SIM_NOMEM, "out of memory for the calibration report");
        }
    return SIM_OK;
}

void sim_fit_cal_files_free(sim_fit_cal_file *files, int n)
{
    for (int i = 0; i < n; i++) {
        free(files[i].text.p);
        memset(&files[i].text, 0, sizeof files[i].text);
    }
}

void sim_fit_cal_free(sim_fit_cal *c)
{
    if (!c) return;
    fs_ref_free(&c->ref);
    sim_fit_free(&c->f);
    free(c->matches);
    c->matches = NULL;
    free(c->evs);
    c->evs = NULL;
    c->evs_cap = 0;
}
