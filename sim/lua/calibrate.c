/*
 * calibrate.c -- flashspec.calibrate: fitting named parameters of the phone
 * model and of synthetic workloads to reference measurements.
 *
 *   local fit = flashspec.calibrate {
 *     reference = "configs/calibration/lever-oneplus12.csv", -- refcsv.h format
 *     params = { npu_gflops = { 600, 50, 5000 }, ... },       -- {start, lo, hi}
 *     points = function(p) return { ...a sweep table... } end,
 *     profile = { base = "oneplus12", name = "oneplus12" },   -- optional
 *     name = "calibration", loo = "approx", max_iter = 100, fd_step = 0.05,
 *     starts = 1, holdout = "Lever Table 6",                  -- optional
 *   }
 *
 * The model is the simulator itself: for a parameter vector p the script's
 * `points` function builds the points (devices with overrides, synthetic
 * traces with the fitted acceptance, ...), flashspec runs them on its workers
 * -- without results rows, resume records or progress -- and every reference
 * row is compared with the mean of its metric over the points that match its
 * keys.  This file is the translation between the Lua tables and sim/fit
 * (sim/fit/sim_fit.h), which holds the numerics: residuals relative,
 * (predicted - measured) / measured, so rows of different units weigh alike;
 * bounds by a logistic map; GSL's trust-region Levenberg-Marquardt with a
 * forward-difference Jacobian of step fd_step in the unbounded coordinate
 * (the simulator is piecewise constant in some parameters -- an acceptance
 * rate moves discrete draws --, so the step must be coarser than those
 * plateaus); `starts` > 1 also fits from deterministic scatters of the start
 * and keeps the converged fit of lowest RSS (the response is rough: a fit may
 * stop in a local optimum); standard errors by the delta method (NaN when
 * n <= p); leave-one-out "approx" (PRESS residuals from the leverage of the
 * final Jacobian), "exact" (a refit without each row, from the fitted values)
 * or "none"; AIC = n ln(RSS/n) + 2p, BIC = n ln(RSS/n) + p ln n.
 *
 * Speed, with the same numbers: the Jacobian's columns are one batch -- points
 * is called for each, the named synthetic traces they ask for are generated
 * together on the workers (api_synth.c), through a draw memo per trace shape
 * kept for the fit, and the points of all columns run together, each point id
 * once, reusing by id the points earlier evaluations ran (sim_sweep_memo, with the
 * counts of the columns evaluated one after the other) -- and a point's
 * bootstrap interval over the prompts is drawn only when a reference row
 * reads it.
 *
 * Parametric bootstrap (bootstrap = N replicates, bootstrap_seed = S): the
 * delta method assumes a smooth response, but the simulator's moves in
 * plateaus, so its standard error can be far too small.  Each replicate
 * evaluates the model at the fitted values with the spec's randomness
 * re-drawn -- points(p, rep) is called with rep = 1..N; a spec draws its
 * synthetic traces from seeds that depend on rep, keeping their names --
 * multiplies each prediction by 1 + s e (e standard normal, s the fit's
 * relative residual standard deviation), and refits those pseudo-measurements
 * from the fitted values with the spec's own traces.  The replicates' 2.5% and
 * 97.5% quantiles are each parameter's 95% interval (ci_lo, ci_hi), their
 * standard deviation se_boot.  A spec that ignores rep gets the measurement
 * noise alone.
 *
 * Held-out rows (leave-one-table-out): holdout names one reference `source`
 * (or a list of them); the rows of those sources are predicted but not fitted
 * -- their residuals are left out of the objective, and n, RMS, AIC, BIC, the
 * standard errors and leave-one-out count the fitted rows only.  Each held-out
 * row reports its prediction error (heldout = true, loo_error NaN), and
 * holdout_rms is their RMS: how well the fit transfers to data it did not see.
 * A name that matches no row is an error (78).
 *
 * Options: name, loo, max_iter, fd_step, starts, bootstrap and bootstrap_seed
 * are checked against cal_keys (lparams.h: type and range, one line naming
 * the key's line); the others (reference, params, points, profile, holdout)
 * one by one.  The spec table is read in calibrate_spec.c, which shares the
 * calibration's state (cal) with this file through calibrate_impl.h.
 *
 * Errors (one line, nothing written): reference file problems as refcsv.h
 * (65/66); a parameter whose start is not strictly inside its bounds, lo >= hi,
 * an unknown option, fewer reference rows than parameters (78); a reference row
 * no point matches, a metric that cannot be evaluated, a fit that reaches
 * max_iter without converging (65); a failed point (its own code).
 *
 * Outputs (written by the script run when it succeeds and -o DIR is given):
 * DIR/<name>.md (the report), DIR/<name>.csv (per-row residuals and leave-one-
 * out errors) and, with `profile`, DIR/<profile.name>.lua: a device profile
 * deriving from profile.base whose keys are the fitted device keys, each with
 * its value, standard error, bounds and source.  Their texts are formatted by
 * sim/fit/sim_fit_report.c (no Lua); this file hands them to the run.
 */
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/fit/refcsv.h"
#include "sim/fit/sim_fit.h"
#include "sim/fit/sim_fit_report.h"
#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/calibrate_impl.h"
#include "sim/lua/lfit.h"
#include "sim/out/sim_strbuf.h"
#include "sim/sweep/sim_sweep.h"

/* A progress line's width of spaces between carriage returns. */
#define PROGRESS_CLEAR                                                                             \
    "\r                                                                              "             \
    "                                                  \r"

/* Raised errors carry an exit code; see the header comment. */
int fs_cal_raise(cal *c, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->tty) fputs(PROGRESS_CLEAR, stderr); /* the progress line gives way */
    return fs_raise(c->L, code, 0, "%s", msg);
}

/* A sim/fit call's failure: the error an evaluation raised (kept by the
 * guard), else memory. */
static void cal_check(cal *c, int rc, const char *what)
{
    if (rc == SIM_OK) return;
    if (c->tty) fputs(PROGRESS_CLEAR, stderr); /* the progress line gives way */
    fs_guard_rethrow(&c->guard);
    fs_cal_raise(c, SIM_NOMEM, "out of memory for %s", what);
}

/* ------------------------------------------------------------ evaluation */

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The ETA part of the progress line.  The fit: how long its evaluations
 * take, and at most how long the rest can take (every start running
 * max_iter iterations of 1 + np evaluations each: it usually converges well
 * before).  The bootstrap: the replicate it is at of how many, and the time
 * the replicates left take at the pace of those done. */
static void eta_text(cal *c, int32_t rep, int64_t eval, char *out, size_t n)
{
    double t = monotonic_s();
    if (c->phase_s == 0 || (rep > 0 && c->phase_rep == 0)) {
        c->phase_s = t;
        c->phase_eval = eval - 1;
        c->phase_rep = rep;
    }
    double took = t - c->phase_s;
    int64_t done = eval - c->phase_eval;
    if (rep > 0) {
        int32_t boot = c->o.bootstrap > 0 ? c->o.bootstrap : rep;
        if (rep > c->phase_rep)
            snprintf(out, n, ", replicate %d of %d, ETA ~%.0f s", (int)rep, (int)boot,
                     took / (rep - c->phase_rep) * (boot - rep + 1));
        else
            snprintf(out, n, ", replicate %d of %d", (int)rep, (int)boot);
        return;
    }
    int64_t most = (int64_t)(c->o.starts > 0 ? c->o.starts : 1) * c->o.max_iter * (c->f.np + 1);
    double per = done > 0 ? took / (double)done : 0;
    if (most > eval)
        snprintf(out, n, ", %.2f s each, ETA at most ~%.0f s (max_iter)", per,
                 per * (double)(most - eval));
    else
        snprintf(out, n, ", %.2f s each", per);
}

/* On a terminal (and without -q): one line, rewritten after every
 * evaluation, with the count, the RMS relative error of the fitted rows and
 * the ETA (eta_text). */
static void progress(cal *c, const double *pred, int32_t rep, int64_t eval)
{
    if (!c->tty) return;
    double rms = sim_fit_rms_of(&c->f, pred);
    char eta[128];
    eta_text(c, rep, eval, eta, sizeof eta);
    /* padded to a whole line: the stderr filter passes no terminal escapes */
    fprintf(stderr, "\rflashspec: calibrate %s: evaluation %lld%s, RMS %.2f%%%s%-8s", c->o.name,
            (long long)eval, rep ? " (bootstrap)" : "", 100 * rms, eta, "");
    fflush(stderr);
}

/* Raises "no point matches" for reference row k, naming its keys. */
static void no_match(cal *c, int32_t k)
{
    const fs_ref *ref = &c->ref;
    char keys[512] = "";
    size_t at = 0;
    for (int32_t j = 0; j < ref->n_keys && at < sizeof keys; j++)
        if (ref->rows[k].keys[j][0])
            at += (size_t)snprintf(keys + at, sizeof keys - at, "%s%s=%s", at ? ", " : "",
                                   ref->key_names[j], ref->rows[k].keys[j]);
    fs_cal_raise(c, SIM_DATA, "%s:%d: no point matches this reference row (%s)", ref->path,
                 ref->rows[k].line, keys);
}

/* Each reference row's prediction: the mean of its metric over the points
 * that match its keys. */
static void match_rows(cal *c, const sim_sweep_staged *sp, int64_t n, double *pred)
{
    const fs_ref *ref = &c->ref;
    fs_ref_cols cols = fs_ref_result_cols(&c->a->meta);
    for (int32_t k = 0; k < ref->n_rows; k++) {
        double sum = 0.0;
        int32_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!fs_ref_match(ref, k, &cols, &sp[i].row)) continue;
            double v;
            if (fs_ref_eval(ref, k, &cols, &sp[i].row, &v) != 0)
                fs_cal_raise(c, SIM_DATA,
                             "%s:%d: metric '%s' is not a finite number for the "
                             "point %s %s on %s (trace %s)",
                             ref->path, ref->rows[k].line, ref->rows[k].metric, sp[i].row.policy,
                             sp[i].row.target, sp[i].row.device, sp[i].row.trace);
            sum += v;
            m++;
        }
        if (!m) no_match(c, k);
        pred[k] = sum / m;
        c->matches[k] = m;
    }
}

/* Calls points(x [, rep]) and leaves the sweep table it returns on the
 * stack; the evaluation's generation is the next one. */
static void call_points(cal *c, const double *x, int32_t rep)
{
    lua_State *L = c->L;
    if (sim_sweep_interrupted())
        fs_cal_raise(c, SIM_INTERRUPTED, "%s:%d: interrupted", c->chunk, c->line);
    c->a->generation++;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->fn_ref);
    lua_createtable(L, 0, c->f.np);
    for (int32_t i = 0; i < c->f.np; i++) {
        lua_pushnumber(L, x[i]);
        lua_setfield(L, -2, c->f.par[i].name);
    }
    int nargs = 1;
    if (rep > 0) {
        lua_pushinteger(L, rep);
        nargs = 2;
    }
    lua_call(L, nargs, 1); /* errors propagate as the script's */
    if (!lua_istable(L, -1))
        fs_cal_raise(c, SIM_CONFIG,
                     "%s:%d: flashspec.calibrate: points(p) must return a sweep "
                     "table, got %s",
                     c->chunk, c->line, luaL_typename(L, -1));
}

/* Runs the points for the m parameter vectors x[j * np ..] (replicate rep)
 * and fills pred[j * n ..]: as m evaluations one after the other -- the same
 * predictions, memo counts and first error --, with the points of all m
 * run together on the workers (the columns of a Jacobian).  Raises on
 * failure. */
static void evaluate(cal *c, int32_t m, const double *x, int32_t rep, double *pred)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    luaL_checkstack(L, 3 * m + 8, "calibrate");
    sim_sweep_eval *ev = lua_newuserdatauv(L, sizeof *ev * (size_t)m, 0);
    int tab = lua_gettop(L) + 1;
    for (int32_t j = 0; j < m; j++) {
        call_points(c, x + (size_t)j * (size_t)c->f.np, rep);
        ev[j].now = c->a->generation;
    }
    fs_api_synth_resolve(L, c->a); /* the traces they asked for, generated together */
    for (int32_t j = 0; j < m; j++) {
        ev[j].sp = fs_api_stage(L, tab + j, c->chunk, c->line, 0, &ev[j].n);
        for (int64_t i = 0; i < ev[j].n; i++) /* no row of the fit reads the interval */
            ev[j].sp[i].pt.no_interval = !c->need_interval;
    }
    fs_api_run_evals(L, ev, m, &c->memo, c->chunk, c->line);
    int64_t first = c->f.evals - m + 1; /* the count of the first of them */
    for (int32_t j = 0; j < m; j++) {
        for (int64_t i = 0; i < ev[j].n; i++)
            if (ev[j].sp[i].code) fs_cal_raise(c, ev[j].sp[i].code, "%s", ev[j].sp[i].err);
        match_rows(c, ev[j].sp, ev[j].n, pred + (size_t)j * (size_t)c->f.n);
        progress(c, pred + (size_t)j * (size_t)c->f.n, rep, first + j);
    }
    lua_settop(L, top);
    /* synthetic traces made by the points function and unused by the last two
     * evaluations are not needed again (a difference step reuses the base's) */
    fs_api_release_traces(c->a, c->traces0, c->a->generation - 1);
}

typedef struct cal_eval {
    cal *c;
    int32_t m;
    const double *x;
    int32_t rep;
    double *pred;
} cal_eval;

static int evaluate_lua(lua_State *L)
{
    cal_eval *e = lua_touserdata(L, 1);
    evaluate(e->c, e->m, e->x, e->rep, e->pred);
    return 0;
}

/* sim/fit's model: evaluate() behind the guard. */
static int cal_model(void *ctx, const double *x, int32_t rep, double *pred)
{
    cal *c = ctx;
    cal_eval e = {.c = c, .m = 1, .x = x, .rep = rep, .pred = pred};
    c->a->synth_defer++; /* named synthetic traces are generated together */
    int rc = fs_guard_call(&c->guard, evaluate_lua, &e, 0);
    c->a->synth_defer--;
    return rc;
}

/* sim/fit's batch model (a Jacobian's columns): the same, m at once. */
static int cal_model_batch(void *ctx, int32_t m, const double *x, int32_t rep, double *pred)
{
    cal *c = ctx;
    cal_eval e = {.c = c, .m = m, .x = x, .rep = rep, .pred = pred};
    c->a->synth_defer++;
    int rc = fs_guard_call(&c->guard, evaluate_lua, &e, 0);
    c->a->synth_defer--;
    return rc;
}

/* ------------------------------------------------------------ reporting */

typedef sim_strbuf buf; /* the report, residuals and profile, formatted in memory */

/* Hands b's text to the run as the output file `name` (written when the run
 * succeeds) and empties b; raises when memory ran out, b's included. */
static void add_output(cal *c, const char *name, buf *b)
{
    if (b->oom) {
        free(b->p);
        fs_cal_raise(c, SIM_NOMEM, "out of memory for the calibration report");
    }
    int rc = fs_api_add_output(c->a, name, b->p ? b->p : "", b->n);
    if (rc != 0) { /* the spec's names were checked: only memory should fail here */
        free(b->p);
        memset(b, 0, sizeof *b);
        if (rc == FS_OUTPUT_RESERVED || rc == FS_OUTPUT_TAKEN)
            fs_cal_raise(c, SIM_CONFIG, "%s:%d: flashspec.calibrate: output %s %s", c->chunk,
                         c->line, name,
                         rc == FS_OUTPUT_TAKEN ? "is already written by this run"
                                               : "is a name the output directory reserves");
        fs_cal_raise(c, SIM_NOMEM, "out of memory for the calibration report");
    }
    /* fs_api_add_output copied it */
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Fields of the table on top of the stack. */
static void set_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

/* ------------------------------------------------------------------ main */

/* The calibration state is a userdata with __gc, so that an error raised at
 * any point frees what it owns (and a second call is harmless). */
static int cal_gc(lua_State *L)
{
    cal *c = luaL_checkudata(L, 1, "flashspec.calibration");
    fs_ref_free(&c->ref);
    free(c->matches);
    sim_fit_free(&c->f);
    sim_sweep_memo_free(&c->memo);
    if (c->a && c->memos_on) fs_api_synth_memos(c->a, 0);
    if (c->fn_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, c->fn_ref);
    fs_guard_free(&c->guard);
    memset(c, 0, sizeof *c);
    c->fn_ref = LUA_NOREF;
    fs_guard_init(&c->guard, L);
    return 0;
}

/* A new calibration state on the stack, for the call at stack level 1. */
static cal *cal_new(lua_State *L)
{
    cal *c = lua_newuserdatauv(L, sizeof *c, 0);
    memset(c, 0, sizeof *c);
    c->fn_ref = LUA_NOREF;
    c->L = L;
    fs_guard_init(&c->guard, L);
    if (luaL_newmetatable(L, "flashspec.calibration")) {
        lua_pushcfunction(L, cal_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    c->a = fs_api_get(L);
    c->traces0 = c->a->n_traces;
    fs_caller_src(L, c->chunk, sizeof c->chunk, &c->line);
    snprintf(c->o.name, sizeof c->o.name, "calibration");
    c->tty = !c->a->quiet && c->a->ex.rank == 0 && isatty(STDERR_FILENO);
    return c;
}

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

/* The fit's problem: the reference rows as observations, the held-out rows. */
static void set_up(cal *c, int idx)
{
    sim_fit *f = &c->f;
    int32_t n = c->ref.n_rows;
    f->fd_step = c->o.fd_step;
    f->max_iter = c->o.max_iter;
    f->model = cal_model;
    f->model_batch = cal_model_batch;
    f->ctx = c;
    c->matches = calloc((size_t)n, sizeof *c->matches);
    if (sim_fit_init(f, n) != SIM_OK || !c->matches)
        fs_cal_raise(c, SIM_NOMEM, "out of memory");
    for (int32_t k = 0; k < n; k++)
        f->y[k] = c->ref.rows[k].value;
    c->need_interval = reads_interval(&c->ref);
    fs_cal_read_holdout(c, idx);
    if (n - c->n_hold < f->np)
        fs_cal_raise(c, SIM_CONFIG,
                     "%s:%d: flashspec.calibrate: %d parameters but only %d "
                     "reference rows%s",
                     c->chunk, c->line, f->np, n - c->n_hold, c->n_hold ? " not held out" : "");
}

/* The fit from the starts; a fit that never converges is an error. */
static void fit(cal *c)
{
    int rc = sim_fit_run(&c->f, c->o.starts);
    if (rc == SIM_DATA_NOCONV)
        fs_cal_raise(c, rc,
                     "%s:%d: flashspec.calibrate: the fit did not converge in %d "
                     "iterations (%s); nothing written",
                     c->chunk, c->line, c->o.max_iter, c->f.reason);
    cal_check(c, rc, "the fit");
    cal_check(c, sim_fit_stats(&c->f), "the fit");
}

/* Leave-one-out; the rows the fit leans on said once on stderr. */
static void leave_one_out(cal *c)
{
    const sim_fit *f = &c->f;
    cal_check(c, sim_fit_loo(&c->f, fs_cal_loo_kinds[c->o.loo]), "the fit");
    if (f->n_far && c->a->ex.rank == 0)
        fprintf(stderr,
                "flashspec: warning: %s:%d: calibration %s: %d leave-one-out error%s beyond "
                "%.0f%% (3x the in-sample RMS of %.1f%%, at least 10%%); worst %s:%d %s %+.1f%%: "
                "the fit leans on %s\n",
                c->chunk, c->line, c->o.name, (int)f->n_far, f->n_far == 1 ? "" : "s",
                100 * f->far_at, 100 * f->rms, c->ref.path, c->ref.rows[f->worst].line,
                c->ref.rows[f->worst].metric, 100 * f->loo_e[f->worst],
                f->n_far == 1 ? "that row" : "those rows");
}

/* What the fit cannot vouch for, said on stderr (and in NAME.md): a
 * parameter at its bound (the data pull it beyond: no standard error, a
 * one-sided interval), bootstrap refits that did not converge (with fewer
 * than SIM_FIT_BOOT_MIN converged there is no interval), an interval that
 * does not hold its estimate. */
static void warn_fit(cal *c)
{
    const sim_fit *f = &c->f;
    if (c->a->ex.rank != 0) return;
    const char *head = "flashspec: warning: ";
    for (int32_t i = 0; i < f->np; i++) {
        const sim_fit_param *q = &f->par[i];
        if (q->at_bound)
            fprintf(stderr,
                    "%s%s:%d: calibration %s: %s = %.6g is at its %s bound (bounds %g..%g): "
                    "the data pull it %s the bound; its standard error does not apply and its "
                    "interval is one-sided -- widen the bounds or check the reference\n",
                    head, c->chunk, c->line, c->o.name, q->name, q->value,
                    q->at_bound > 0 ? "upper" : "lower", q->lo, q->hi,
                    q->at_bound > 0 ? "above" : "below");
        else if (isfinite(q->ci_lo) && !(q->ci_lo <= q->value && q->value <= q->ci_hi))
            fprintf(stderr,
                    "%s%s:%d: calibration %s: the bootstrap interval [%.6g, %.6g] of %s does "
                    "not hold its estimate %.6g: the replicates refit elsewhere (a rough or "
                    "multi-modal response); read the interval with care\n",
                    head, c->chunk, c->line, c->o.name, q->ci_lo, q->ci_hi, q->name, q->value);
    }
    if (!f->boot_n || !f->boot_failed) return;
    if (!f->boot_m)
        fprintf(stderr,
                "%s%s:%d: calibration %s: none of the %d bootstrap refits converged: no "
                "bootstrap interval\n",
                head, c->chunk, c->line, c->o.name, (int)f->boot_n);
    else if (f->boot_m < SIM_FIT_BOOT_MIN_CONVERGED)
        fprintf(stderr,
                "%s%s:%d: calibration %s: %d of the %d bootstrap refits converged, fewer than "
                "the %d an interval needs: no bootstrap interval\n",
                head, c->chunk, c->line, c->o.name, (int)f->boot_m, (int)f->boot_n,
                SIM_FIT_BOOT_MIN_CONVERGED);
    else if (f->boot_m < SIM_FIT_BOOT_MIN)
        fprintf(stderr,
                "%s%s:%d: calibration %s: %d of the %d bootstrap refits did not converge; the "
                "intervals are over the %d that did, fewer than %d: a rough interval (ask for "
                "more replicates)\n",
                head, c->chunk, c->line, c->o.name, (int)f->boot_failed, (int)f->boot_n,
                (int)f->boot_m, SIM_FIT_BOOT_MIN);
    else
        fprintf(stderr,
                "%s%s:%d: calibration %s: %d of the %d bootstrap refits did not converge; the "
                "intervals are over the %d that did\n",
                head, c->chunk, c->line, c->o.name, (int)f->boot_failed, (int)f->boot_n,
                (int)f->boot_m);
}

/* fit.params (name -> value, se, interval, bounds, replicates) and fit.order. */
static void push_params(cal *c)
{
    lua_State *L = c->L;
    const sim_fit *f = &c->f;
    int32_t p = f->np;
    lua_createtable(L, p, 0); /* order */
    lua_createtable(L, 0, p); /* params */
    for (int32_t i = 0; i < p; i++) {
        const sim_fit_param *q = &f->par[i];
        lua_pushstring(L, q->name);
        lua_rawseti(L, -3, i + 1);
        lua_createtable(L, 0, 5);
        fs_set_num(L, "value", q->value);
        fs_set_num(L, "se", q->se);
        fs_set_num(L, "se_boot", q->se_boot);
        fs_set_num(L, "ci_lo", q->ci_lo);
        fs_set_num(L, "ci_hi", q->ci_hi);
        fs_set_num(L, "start", q->start);
        fs_set_num(L, "lo", q->lo);
        fs_set_num(L, "hi", q->hi);
        if (q->at_bound)
            lua_pushstring(L, q->at_bound > 0 ? "hi" : "lo");
        else
            lua_pushboolean(L, 0);
        lua_setfield(L, -2, "at_bound");
        /* the converged replicates' values, in replicate order: what ci_lo,
         * ci_hi (2.5% and 97.5% quantiles) and se_boot summarise */
        lua_createtable(L, f->boot_m, 0);
        for (int32_t b = 0; b < f->boot_m && f->boot; b++) {
            lua_pushnumber(L, f->boot[(size_t)b * (size_t)p + (size_t)i]);
            lua_rawseti(L, -2, b + 1);
        }
        lua_setfield(L, -2, "boot");
        lua_setfield(L, -2, q->name);
    }
    lua_setfield(L, -3, "params");
    lua_setfield(L, -2, "order");
}

/* fit.rows: one table per reference row. */
static void push_rows(cal *c)
{
    lua_State *L = c->L;
    const sim_fit *f = &c->f;
    lua_createtable(L, f->n, 0);
    for (int32_t k = 0; k < f->n; k++) {
        const fs_ref_row *r = &c->ref.rows[k];
        lua_createtable(L, 0, 10);
        fs_set_int(L, "line", r->line);
        set_str(L, "metric", r->metric);
        fs_set_num(L, "measured", r->value);
        fs_set_num(L, "predicted", f->pred[k]);
        fs_set_num(L, "error", f->resid[k]);
        fs_set_num(L, "loo_error", f->loo_e[k]);
        lua_pushboolean(L, sim_fit_loo_far(f, k));
        lua_setfield(L, -2, "loo_far");
        fs_set_int(L, "points", c->matches[k]);
        set_str(L, "source", r->source);
        set_str(L, "note", r->note);
        lua_pushboolean(L, f->hold[k]);
        lua_setfield(L, -2, "heldout");
        for (int32_t j = 0; j < c->ref.n_keys; j++) {
            lua_pushstring(L, r->keys[j]);
            lua_setfield(L, -2, c->ref.key_names[j]);
        }
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "rows");
}

/* The Lua result: the calibration's table. */
static void push_result(cal *c)
{
    lua_State *L = c->L;
    const sim_fit *f = &c->f;
    lua_createtable(L, 0, 16);
    set_str(L, "name", c->o.name);
    push_params(c);
    push_rows(c);
    fs_set_num(L, "rms", f->rms);
    fs_set_num(L, "loo_rms", f->loo_rms);
    fs_set_num(L, "start_rms", f->start_rms);
    fs_set_num(L, "aic", f->aic);
    fs_set_num(L, "bic", f->bic);
    fs_set_num(L, "holdout_rms", f->hold_rms);
    fs_set_int(L, "n_holdout", c->n_hold);
    fs_set_int(L, "n", f->nf);
    fs_set_int(L, "p", f->np);
    fs_set_int(L, "bootstrap", f->boot_n);
    fs_set_int(L, "bootstrap_failed", f->boot_failed);
    fs_set_int(L, "iterations", (lua_Integer)f->iters);
    fs_set_int(L, "evaluations", (lua_Integer)f->evals);
    fs_set_int(L, "points_run", (lua_Integer)c->memo.runs);
    fs_set_int(L, "points_reused", (lua_Integer)c->memo.hits);
    set_str(L, "status",
            !f->no_progress ? "converged"
                            : "converged (no further progress at the step resolution)");
}

/* The outputs the run writes: NAME.md, NAME.csv and the profile, formatted
 * by sim/fit (sim_fit_report.h). */
static void write_outputs(cal *c)
{
    const sim_fit_report rep = {.f = &c->f,
                                .ref = &c->ref,
                                .matches = c->matches,
                                .device_key = c->device_key,
                                .name = c->o.name,
                                .spec = c->chunk,
                                .ref_arg = c->ref_arg,
                                .loo = fs_cal_loo_choices[c->o.loo],
                                .prof_name = c->prof_name,
                                .prof_base = c->prof_base,
                                .fd_step = c->o.fd_step,
                                .bootstrap_seed = c->o.bootstrap_seed,
                                .starts = c->o.starts,
                                .n_hold = c->n_hold};
    buf md = {0}, csv = {0}, pf = {0};
    char fname[CAL_NAME_CAP + 8];
    sim_fit_report_md(&rep, &md);
    snprintf(fname, sizeof fname, "%s.md", c->o.name);
    add_output(c, fname, &md);
    sim_fit_report_csv(&rep, &csv);
    snprintf(fname, sizeof fname, "%s.csv", c->o.name);
    add_output(c, fname, &csv);
    if (c->prof_base[0]) {
        sim_fit_report_profile(&rep, &pf);
        snprintf(fname, sizeof fname, "%s.lua", c->prof_name);
        add_output(c, fname, &pf);
    }
}

int fs_l_calibrate(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cal *c = cal_new(L);
    c->a->calibrating = 1; /* stays set when an interrupt unwinds the fit */
    fs_cal_read_spec(c, 1);
    set_up(c, 1);
    fs_api_synth_memos(c->a, 1); /* evaluations redraw only what they move */
    c->memos_on = 1;
    fit(c);
    cal_check(c, sim_fit_bootstrap(&c->f, c->o.bootstrap, (unsigned long)c->o.bootstrap_seed),
              "the bootstrap");
    leave_one_out(c);
    c->memos_on = 0;
    fs_api_synth_memos(c->a, 0);
    if (c->tty) fputs(PROGRESS_CLEAR, stderr); /* the progress line is done */
    warn_fit(c);
    push_result(c);
    write_outputs(c);
    c->a->calibrating = 0;
    return 1;
}
