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
 * keys.  This file is the translation between the Lua tables and sim/fit:
 * the calibration's driver (sim/fit/sim_fit_cal.h: matching, the progress
 * line, the warnings, the outputs) and the numerics (sim/fit/sim_fit.h):
 * residuals relative,
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
 * together on the workers (sim/sweep/sim_run.h), through a draw memo per trace shape
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
 * are checked against the driver's option table (lparams.h: type and range, one line naming
 * the key's line); the others (reference, params, points, profile, holdout)
 * one by one.  The spec table is read in calibrate_spec.c, which shares the
 * calibration's state (cal: the driver's inputs and the Lua side) with this
 * file through calibrate_impl.h.
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
 * sim/fit (sim_fit_cal_files, no Lua); this file hands them to the run.
 */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/fit/sim_fit_cal.h"
#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/calibrate_impl.h"
#include "sim/lua/lfit.h"
#include "sim/sweep/sim_sweep.h"

/* ------------------------------------------------------------ evaluation */

/* Calls points(x [, rep]) and leaves the sweep table it returns on the
 * stack; the evaluation's generation is the next one. */
static void call_points(cal *c, const double *x, int32_t rep)
{
    lua_State *L = c->L;
    const sim_fit *f = &c->fc.f;
    if (sim_sweep_interrupted())
        fs_raise(L, SIM_INTERRUPTED, 0, "%s:%d: interrupted", c->fc.chunk, c->fc.line);
    c->a->generation++;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->fn_ref);
    lua_createtable(L, 0, f->np);
    for (int32_t i = 0; i < f->np; i++) {
        lua_pushnumber(L, x[i]);
        lua_setfield(L, -2, f->par[i].name);
    }
    int nargs = 1;
    if (rep > 0) {
        lua_pushinteger(L, rep);
        nargs = 2;
    }
    lua_call(L, nargs, 1); /* errors propagate as the script's */
    if (!lua_istable(L, -1))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: points(p) must return a sweep "
                 "table, got %s",
                 c->fc.chunk, c->fc.line, luaL_typename(L, -1));
}

/* What a guarded evaluation is given. */
typedef struct cal_eval {
    cal *c;
    int32_t m;
    const double *x;
    int32_t rep;
    sim_fit_cal_eval *out;
} cal_eval;

/* The driver's view of the points ev[0..m) ran, out[j] for vector j, in a
 * userdata on the stack. */
static void views(lua_State *L, const sim_sweep_eval *ev, int32_t m, sim_fit_cal_eval *out)
{
    int64_t total = 0;
    for (int32_t j = 0; j < m; j++)
        total += ev[j].n;
    sim_fit_point *pts = lua_newuserdatauv(L, sizeof *pts * (size_t)(total ? total : 1), 0);
    for (int32_t j = 0; j < m; j++) {
        out[j].pts = pts;
        out[j].n = ev[j].n;
        for (int64_t i = 0; i < ev[j].n; i++, pts++) {
            const sim_sweep_staged *s = &ev[j].sp[i];
            *pts = (sim_fit_point){.row = &s->row, .code = s->code, .err = s->err};
        }
    }
}

/* lua_CFunction, [1] = cal_eval: runs the points of the m parameter vectors
 * (replicate rep) -- as m evaluations one after the other, the same
 * statistics, memo counts and first error, with the points of all m run
 * together on the workers -- and hands the driver their rows, kept alive
 * until the next evaluation (fs_guard_keep). */
static int evaluate_lua(lua_State *L)
{
    cal_eval *e = lua_touserdata(L, 1);
    cal *c = e->c;
    int32_t m = e->m;
    int top = lua_gettop(L);
    luaL_checkstack(L, 3 * m + 8, "calibrate");
    sim_sweep_eval *ev = lua_newuserdatauv(L, sizeof *ev * (size_t)m, 0);
    int tab = lua_gettop(L) + 1;
    for (int32_t j = 0; j < m; j++) {
        call_points(c, e->x + (size_t)j * (size_t)c->fc.f.np, e->rep);
        ev[j].now = c->a->generation;
    }
    fs_api_synth_resolve(L, c->a); /* the traces they asked for, generated together */
    for (int32_t j = 0; j < m; j++) {
        ev[j].sp = fs_api_stage(L, tab + j, c->fc.chunk, c->fc.line, 0, &ev[j].n);
        for (int64_t i = 0; i < ev[j].n; i++) /* no row of the fit reads the interval */
            ev[j].sp[i].pt.no_interval = !c->fc.need_interval;
    }
    fs_api_run_evals(L, ev, m, &c->memo, c->fc.chunk, c->fc.line);
    views(L, ev, m, e->out);
    fs_guard_keep(&c->guard, top + 1);
    lua_settop(L, top);
    /* synthetic traces made by the points function and unused by the last two
     * evaluations are not needed again (a difference step reuses the base's) */
    sim_run_release_traces(c->a, c->traces0, c->a->generation - 1);
    return 0;
}

/* The driver's model callback: evaluate_lua behind the guard. */
static int cal_run(void *ctx, int32_t m, const double *x, int32_t rep, sim_fit_cal_eval *out)
{
    cal *c = ctx;
    cal_eval e = {.c = c, .m = m, .x = x, .rep = rep, .out = out};
    c->a->synth_defer++; /* named synthetic traces are generated together */
    int rc = fs_guard_call(&c->guard, evaluate_lua, &e, 0);
    c->a->synth_defer--;
    return rc;
}

/* A driver's failure raised: the error an evaluation raised (kept by the
 * guard), else the driver's line. */
static void cal_check(cal *c, int rc)
{
    if (rc == SIM_OK) return;
    fs_guard_rethrow(&c->guard);
    fs_raise(c->L, rc, 0, "%s", c->fc.err);
}

/* ------------------------------------------------------------ reporting */

/* Hands the calibration's files to the run (written when the run succeeds);
 * raises when memory ran out. */
static void add_outputs(cal *c)
{
    sim_fit_cal_file files[3];
    int n = 0;
    cal_check(c, sim_fit_cal_files(&c->fc, files, &n));
    for (int i = 0; i < n; i++) {
        const sim_strbuf *b = &files[i].text;
        int rc = sim_run_add_output(c->a, files[i].name, b->p ? b->p : "", b->n);
        if (rc == 0) continue; /* copied */
        /* the spec's names were checked: only memory should fail here */
        char name[sizeof files[i].name];
        memcpy(name, files[i].name, sizeof name);
        sim_fit_cal_files_free(files, n);
        if (rc == SIM_RUN_OUTPUT_RESERVED || rc == SIM_RUN_OUTPUT_TAKEN)
            fs_raise(c->L, SIM_CONFIG, 0, "%s:%d: flashspec.calibrate: output %s %s", c->fc.chunk,
                     c->fc.line, name,
                     rc == SIM_RUN_OUTPUT_TAKEN ? "is already written by this run"
                                           : "is a name the output directory reserves");
        fs_raise(c->L, SIM_NOMEM, 0, "out of memory for the calibration report");
    }
    sim_fit_cal_files_free(files, n);
}

/* Fields of the table on top of the stack. */
static void set_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

/* fit.params (name -> value, se, interval, bounds, replicates) and fit.order. */
static void push_params(cal *c)
{
    lua_State *L = c->L;
    const sim_fit *f = &c->fc.f;
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
    const sim_fit *f = &c->fc.f;
    lua_createtable(L, f->n, 0);
    for (int32_t k = 0; k < f->n; k++) {
        const fs_ref_row *r = &c->fc.ref.rows[k];
        lua_createtable(L, 0, 10);
        fs_set_int(L, "line", r->line);
        set_str(L, "metric", r->metric);
        fs_set_num(L, "measured", r->value);
        fs_set_num(L, "predicted", f->pred[k]);
        fs_set_num(L, "error", f->resid[k]);
        fs_set_num(L, "loo_error", f->loo_e[k]);
        lua_pushboolean(L, sim_fit_loo_far(f, k));
        lua_setfield(L, -2, "loo_far");
        fs_set_int(L, "points", c->fc.matches[k]);
        set_str(L, "source", r->source);
        set_str(L, "note", r->note);
        lua_pushboolean(L, f->hold[k]);
        lua_setfield(L, -2, "heldout");
        for (int32_t j = 0; j < c->fc.ref.n_keys; j++) {
            lua_pushstring(L, r->keys[j]);
            lua_setfield(L, -2, c->fc.ref.key_names[j]);
        }
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "rows");
}

/* The Lua result: the calibration's table. */
static void push_result(cal *c)
{
    lua_State *L = c->L;
    const sim_fit *f = &c->fc.f;
    lua_createtable(L, 0, 16);
    set_str(L, "name", c->fc.o.name);
    push_params(c);
    push_rows(c);
    fs_set_num(L, "rms", f->rms);
    fs_set_num(L, "loo_rms", f->loo_rms);
    fs_set_num(L, "start_rms", f->start_rms);
    fs_set_num(L, "aic", f->aic);
    fs_set_num(L, "bic", f->bic);
    fs_set_num(L, "holdout_rms", f->hold_rms);
    fs_set_int(L, "n_holdout", c->fc.n_hold);
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

/* ------------------------------------------------------------------ main */

/* The calibration state is a userdata with __gc, so that an error raised at
 * any point frees what it owns (and a second call is harmless). */
static int cal_gc(lua_State *L)
{
    cal *c = luaL_checkudata(L, 1, "flashspec.calibration");
    sim_fit_cal_free(&c->fc);
    sim_sweep_memo_free(&c->memo);
    if (c->a && c->memos_on) sim_run_synth_memos(c->a, 0);
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
    c->traces0 = c->a->traces.n;
    sim_fit_cal *fc = &c->fc;
    fs_caller_src(L, fc->chunk, sizeof fc->chunk, &fc->line);
    fc->o = sim_fit_cal_default_opts();
    fc->run = cal_run;
    fc->ctx = c;
    /* progress lines on a terminal, without -q; warnings from rank 0 */
    fc->progress = !c->a->quiet && c->a->ex.rank == 0 && isatty(STDERR_FILENO) ? stderr : NULL;
    fc->warn = c->a->ex.rank == 0 ? stderr : NULL;
    return c;
}

int fs_l_calibrate(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cal *c = cal_new(L);
    c->a->calibrating = 1; /* stays set when an interrupt unwinds the fit */
    fs_cal_read_spec(c, 1);
    cal_check(c, sim_fit_cal_init(&c->fc));
    fs_cal_read_holdout(c, 1);
    sim_run_synth_memos(c->a, 1); /* evaluations redraw only what they move */
    c->memos_on = 1;
    cal_check(c, sim_fit_cal_run(&c->fc));
    fs_guard_free(&c->guard); /* lets go of the last evaluation's points */
    c->memos_on = 0;
    sim_run_synth_memos(c->a, 0);
    push_result(c);
    add_outputs(c);
    c->a->calibrating = 0;
    return 1;
}
