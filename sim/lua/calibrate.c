/*
 * calibrate.c -- flashspec.calibrate: fitting named parameters of the phone
 * model and of synthetic workloads to reference measurements.
 *
 *   local fit = flashspec.calibrate {
 *     reference = "configs/calibration/oneplus12-lever.csv", -- refcsv.h format
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
 * keys.  Residuals are relative, (predicted - measured) / measured, so rows of
 * different units weigh alike.
 *
 * Bounds: each parameter lives in the open interval (lo, hi) through the
 * logistic map x = lo + (hi - lo) / (1 + exp(-z)); GSL's trust-region
 * Levenberg-Marquardt (gsl_multifit_nlinear) works on the unbounded z.  The
 * Jacobian is a forward difference in z with an absolute step fd_step (the
 * simulator is piecewise constant in some parameters -- an acceptance rate
 * moves discrete draws --, so the step must be coarser than those plateaus).
 * The simulator's response is rough (policies make discrete choices), so a
 * fit may stop in a local optimum: `starts` > 1 also fits from deterministic
 * scatters of the start (z + 0.5 (2h - 1), h a Halton point per parameter) and
 * keeps the converged fit of lowest RSS.  Standard errors: s^2 (J^T J)^-1 in z,
 * s^2 = RSS / (n - p), carried to x by dx/dz (delta method); NaN when n <= p.
 * Parametric bootstrap (bootstrap = N replicates, bootstrap_seed = S): the
 * delta method assumes a smooth response, but the simulator's moves in
 * plateaus (an acceptance rate changes discrete draws), so its standard error
 * can be far too small.  Each replicate evaluates the model at the fitted
 * values with the spec's randomness re-drawn -- points(p, rep) is called with
 * rep = 1..N; a spec draws its synthetic traces from seeds that depend on rep,
 * keeping their names -- multiplies each prediction by 1 + s e (e standard
 * normal, s the fit's relative residual standard deviation), and refits those
 * pseudo-measurements from the fitted values with the spec's own traces.  The
 * replicates' 2.5% and 97.5% quantiles are each parameter's 95% interval
 * (ci_lo, ci_hi), their standard deviation se_boot.  A spec that ignores rep
 * gets the measurement noise alone.
 * Leave-one-out: "approx" gives each
 * row's PRESS residual e_i / (1 - h_ii) from the leverage of the final
 * Jacobian; "exact" refits without the row (from the fitted values) and
 * predicts it; "none" skips it.  Model selection figures: AIC = n ln(RSS/n) +
 * 2p, BIC = n ln(RSS/n) + p ln n.
 *
 * Held-out rows (leave-one-table-out): holdout names one reference `source`
 * (or a list of them); the rows of those sources are predicted but not fitted
 * -- their residuals are left out of the objective, and n, RMS, AIC, BIC, the
 * standard errors and leave-one-out count the fitted rows only.  Each held-out
 * row reports its prediction error (heldout = true, loo_error NaN), and
 * holdout_rms is their RMS: how well the fit transfers to data it did not see.
 * A name that matches no row is an error (78).
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
 * its value, standard error, bounds and source.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/hw/sim_device.h"
#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/home.h"
#include "sim/lua/lparams.h"
#include "sim/lua/profile.h"
#include "sim/lua/refcsv.h"
#include "sim/out/sim_strbuf.h"
#include "sim/sweep/sim_sweep.h"

/* A progress line's width of spaces between carriage returns. */
#define PROGRESS_CLEAR                                                                             \
    "\r                                                                              \r"
#define CAL_MAX_PARAMS 64
#define CAL_NAME_CAP 64

typedef struct cal_param {
    char name[CAL_NAME_CAP];
    double start, lo, hi;
    double value, se;
    double se_boot, ci_lo, ci_hi; /* parametric bootstrap (NaN without one) */
    int device_key; /* 1: a numeric key of sim_device (written into the profile) */
} cal_param;

typedef struct cal {
    lua_State *L;
    fs_api *a;
    char chunk[PATH_MAX];
    int line;
    int fn_ref; /* registry reference of the points function */
    fs_ref ref;
    cal_param par[CAL_MAX_PARAMS];
    int32_t np;
    double fd_step;
    int32_t max_iter;
    const uint8_t *skip; /* rows left out of the objective (residual 0), NULL = none */
    uint8_t *hold;       /* [n_rows] 1: held out (holdout), never fitted */
    int32_t n_hold;
    int64_t evals;
    double *pred;        /* [n_rows] predictions of the last evaluation */
    int32_t *matches;    /* [n_rows] points matched in the last evaluation */
    int err_ref;         /* registry ref of an error raised inside an evaluation */
    int32_t traces0;     /* traces made before the fit: never released */
    char ref_arg[256];   /* the reference as the spec names it (for the outputs) */
    /* owned, freed by cal_free (also when an error unwinds: __gc) */
    gsl_vector *z, *f, *zk;
    gsl_matrix *J, *Jk, *cov;
    int32_t starts;      /* fits from this many starting points */
    gsl_multifit_nlinear_workspace *w;
    double *best_pred, *loo_e, *resid;
    uint8_t *skip_mem;
    /* parametric bootstrap */
    int32_t boot_n, boot_failed, boot_m; /* replicates asked, failed, converged */
    unsigned long boot_seed;
    int32_t rep;      /* replicate passed to points(p, rep); 0 = the fit */
    double *boot_x;   /* [boot_n] draws of one parameter */
    double *boot_all; /* [boot_n * np] every replicate's parameters */
    double *ref_keep; /* [n_rows] the measured values, kept during the bootstrap */
    fs_memo memo;     /* points already run, by id: a difference step replays only
                         the points its parameter moves (sweep_exec.h) */
    double pred_z[CAL_MAX_PARAMS]; /* where pred was evaluated (pred_ok), and for */
    int32_t pred_rep, pred_ok;     /* which replicate: a Jacobian reuses it */
    char name[CAL_NAME_CAP];       /* the calibration's, for the progress line */
    int tty;                       /* progress lines: stderr is a terminal, no -q */
    /* the predictions behind the last Jacobian: at jc_z and at each column's
     * step ([(np + 1) * n_rows]).  Exact leave-one-out starts every refit from
     * the fitted values, so each refit's first Jacobian is this one (with its
     * own row left out): recomputed from these, not re-run */
    double *jc_pred;
    double jc_z[CAL_MAX_PARAMS];
    int32_t jc_rep, jc_ok;
    gsl_rng *rng;
} cal;

/* Raised errors carry an exit code; see the header comment. */
static int cal_raise(cal *c, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->tty) fputs(PROGRESS_CLEAR, stderr); /* the progress line gives way */
    return fs_raise(c->L, code, 0, "%s", msg);
}

static double to_x(const cal_param *p, double z)
{
    return p->lo + (p->hi - p->lo) / (1.0 + exp(-z));
}

static double dx_dz(const cal_param *p, double z)
{
    double s = 1.0 / (1.0 + exp(-z));
    return (p->hi - p->lo) * s * (1.0 - s);
}

static double to_z(const cal_param *p, double x)
{
    double u = (x - p->lo) / (p->hi - p->lo);
    return log(u / (1.0 - u));
}

/* ------------------------------------------------------------ evaluation */

/* On a terminal (and without -q): one line, rewritten after every
 * evaluation, with the count and the RMS relative error of the fitted rows. */
static void progress(const cal *c)
{
    if (!c->tty) return;
    double ss = 0.0;
    int32_t m = 0;
    for (int32_t k = 0; k < c->ref.n_rows; k++) {
        if (c->hold[k] || (c->skip && c->skip[k])) continue;
        double e = (c->pred[k] - c->ref.rows[k].value) / c->ref.rows[k].value;
        ss += e * e;
        m++;
    }
    /* padded to a whole line: the stderr filter passes no terminal escapes */
    fprintf(stderr, "\rflashspec: calibrate %s: evaluation %lld%s, RMS %.2f%%%-20s", c->name,
            (long long)c->evals, c->rep ? " (bootstrap)" : "", m ? 100 * sqrt(ss / m) : 0.0, "");
    fflush(stderr);
}

/* Runs the points for parameters z and fills c->pred; raises on failure. */
static void evaluate(cal *c, const gsl_vector *z)
{
    lua_State *L = c->L;
    if (sim_sweep_interrupted()) cal_raise(c, FS_EXIT_INTERRUPTED, "%s:%d: interrupted", c->chunk, c->line);
    int top = lua_gettop(L);
    c->a->generation++;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->fn_ref);
    lua_createtable(L, 0, c->np);
    for (int32_t i = 0; i < c->np; i++) {
        lua_pushnumber(L, to_x(&c->par[i], gsl_vector_get(z, (size_t)i)));
        lua_setfield(L, -2, c->par[i].name);
    }
    int nargs = 1;
    if (c->rep > 0) {
        lua_pushinteger(L, c->rep);
        nargs = 2;
    }
    lua_call(L, nargs, 1); /* errors propagate as the script's */
    if (!lua_istable(L, -1))
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: points(p) must return a sweep "
                  "table, got %s", c->chunk, c->line, luaL_typename(L, -1));
    int64_t n;
    c->pred_ok = 0;
    c->memo.now = c->a->generation;
    c->a->memo = &c->memo;
    fs_staged *sp = fs_api_sweep(L, -1, c->chunk, c->line, 0, &n);
    c->a->memo = NULL;
    fs_memo_prune(&c->memo);
    c->evals++;
    for (int64_t i = 0; i < n; i++)
        if (sp[i].code) cal_raise(c, sp[i].code, "%s", sp[i].err);
    const fs_ref *ref = &c->ref;
    for (int32_t k = 0; k < ref->n_rows; k++) {
        double sum = 0.0;
        int32_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!fs_ref_match(ref, k, &c->a->meta, &sp[i].row)) continue;
            double v;
            if (fs_ref_eval(ref, k, &c->a->meta, &sp[i].row, &v) != 0)
                cal_raise(c, FS_EXIT_DATA, "%s:%d: metric '%s' is not a finite number for the "
                          "point %s %s on %s (trace %s)", ref->path, ref->rows[k].line,
                          ref->rows[k].metric, sp[i].row.policy, sp[i].row.target,
                          sp[i].row.device, sp[i].row.trace);
            sum += v;
            m++;
        }
        if (!m) {
            char keys[512] = "";
            size_t at = 0;
            for (int32_t j = 0; j < ref->n_keys && at < sizeof keys; j++)
                if (ref->rows[k].keys[j][0])
                    at += (size_t)snprintf(keys + at, sizeof keys - at, "%s%s=%s", at ? ", " : "",
                                           ref->key_names[j], ref->rows[k].keys[j]);
            cal_raise(c, FS_EXIT_DATA, "%s:%d: no point matches this reference row (%s)",
                      ref->path, ref->rows[k].line, keys);
        }
        c->pred[k] = sum / m;
        c->matches[k] = m;
    }
    for (int32_t i = 0; i < c->np; i++)
        c->pred_z[i] = gsl_vector_get(z, (size_t)i);
    c->pred_rep = c->rep;
    c->pred_ok = 1;
    progress(c);
    lua_settop(L, top);
    /* synthetic traces made by the points function and unused by the last two
     * evaluations are not needed again (a difference step reuses the base's) */
    fs_api_release_traces(c->a, c->traces0, c->a->generation - 1);
}

static int evaluate_lua(lua_State *L)
{
    cal *c = lua_touserdata(L, 1);
    const gsl_vector *z = lua_touserdata(L, 2);
    evaluate(c, z);
    return 0;
}

/* evaluate() behind lua_pcall: a Lua error never unwinds through GSL.  The
 * error object is kept (err_ref) and re-raised once GSL has returned. */
static int evaluate_protected(cal *c, const gsl_vector *z)
{
    if (c->err_ref != LUA_NOREF) return -1;
    lua_State *L = c->L;
    lua_pushcfunction(L, evaluate_lua);
    lua_pushlightuserdata(L, c);
    lua_pushlightuserdata(L, (void *)z);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        if (c->tty) fputs(PROGRESS_CLEAR, stderr); /* the progress line gives way */
        c->err_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        return -1;
    }
    return 0;
}

/* Re-raises an error kept by evaluate_protected. */
static void rethrow(cal *c)
{
    if (c->err_ref == LUA_NOREF) return;
    lua_rawgeti(c->L, LUA_REGISTRYINDEX, c->err_ref);
    luaL_unref(c->L, LUA_REGISTRYINDEX, c->err_ref);
    c->err_ref = LUA_NOREF;
    lua_error(c->L);
}

static int predict(cal *c, const gsl_vector *z);

static int resid_f(const gsl_vector *z, void *ctx, gsl_vector *f)
{
    cal *c = ctx;
    /* GSL asks for the Jacobian where it has just evaluated f: reuse it */
    if (predict(c, z) != 0) return GSL_EBADFUNC;
    for (int32_t k = 0; k < c->ref.n_rows; k++) {
        double e = (c->pred[k] - c->ref.rows[k].value) / c->ref.rows[k].value;
        gsl_vector_set(f, (size_t)k, c->skip && c->skip[k] ? 0.0 : e);
    }
    return GSL_SUCCESS;
}

/* Forward differences with an absolute step in z (see the header comment). */
/* The predictions at z into c->pred: the last evaluation's when it was at z. */
static int predict(cal *c, const gsl_vector *z)
{
    int same = c->pred_ok && c->pred_rep == c->rep;
    for (int32_t i = 0; i < c->np && same; i++)
        same = c->pred_z[i] == gsl_vector_get(z, (size_t)i);
    return same ? 0 : evaluate_protected(c, z);
}

static double resid_of(const cal *c, const double *pred, int32_t k)
{
    if (c->skip && c->skip[k]) return 0.0;
    return (pred[k] - c->ref.rows[k].value) / c->ref.rows[k].value;
}

static int resid_df(const gsl_vector *z, void *ctx, gsl_matrix *J)
{
    cal *c = ctx;
    size_t n = J->size1, p = J->size2;
    int hit = c->jc_ok && c->jc_rep == c->rep;
    for (size_t j = 0; j < p && hit; j++)
        hit = c->jc_z[j] == gsl_vector_get(z, j);
    if (!hit) {
        gsl_vector *zz = gsl_vector_alloc(p);
        if (!zz) return GSL_ENOMEM;
        c->jc_ok = 0;
        for (size_t j = 0; j <= p; j++) { /* j = 0: z itself; j: column j - 1 */
            gsl_vector_memcpy(zz, z);
            if (j > 0) gsl_vector_set(zz, j - 1, gsl_vector_get(z, j - 1) + c->fd_step);
            if (predict(c, zz) != 0) {
                gsl_vector_free(zz);
                return GSL_EBADFUNC;
            }
            memcpy(c->jc_pred + j * n, c->pred, sizeof(double) * n);
        }
        gsl_vector_free(zz);
        for (size_t j = 0; j < p; j++)
            c->jc_z[j] = gsl_vector_get(z, j);
        c->jc_rep = c->rep;
        c->jc_ok = 1;
    }
    for (size_t j = 0; j < p; j++)
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(J, i, j,
                           (resid_of(c, c->jc_pred + (j + 1) * n, (int32_t)i) -
                            resid_of(c, c->jc_pred, (int32_t)i)) /
                               c->fd_step);
    return GSL_SUCCESS;
}

/* One least-squares fit from z (in place).  Returns the GSL status; *iters. */
static int fit(cal *c, gsl_vector *z, int32_t max_iter, size_t *iters, gsl_matrix *J_out)
{
    size_t n = (size_t)c->ref.n_rows, p = (size_t)c->np;
    gsl_multifit_nlinear_fdf fdf = {.f = resid_f, .df = resid_df, .fvv = NULL, .n = n, .p = p,
                                    .params = c};
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    c->w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
    if (!c->w) cal_raise(c, FS_EXIT_SOFTWARE, "out of memory for the fit");
    int status = gsl_multifit_nlinear_init(z, &fdf, c->w);
    int info = 0;
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver((size_t)max_iter, 1e-6, 1e-8, 1e-10, NULL, NULL,
                                             &info, c->w);
    *iters = gsl_multifit_nlinear_niter(c->w);
    gsl_vector_memcpy(z, gsl_multifit_nlinear_position(c->w));
    if (J_out) gsl_matrix_memcpy(J_out, gsl_multifit_nlinear_jac(c->w));
    gsl_multifit_nlinear_free(c->w);
    c->w = NULL;
    rethrow(c); /* an evaluation failed: its error, now that GSL is out of the way */
    return status;
}

/* --------------------------------------------------------------- options */

static double num_field(cal *c, int idx, int i, const char *pname)
{
    lua_rawgeti(c->L, idx, i);
    if (!lua_isnumber(c->L, -1))
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: params.%s must be { start, lo, "
                  "hi } (numbers)", c->chunk, c->line, pname);
    double x = lua_tonumber(c->L, -1);
    lua_pop(c->L, 1);
    return x;
}

static int cmp_param(const void *a, const void *b)
{
    return strcmp(((const cal_param *)a)->name, ((const cal_param *)b)->name);
}

static int device_double_key(const char *name)
{
    for (const eng_param_desc *d = sim_device_keys(); d->name; d++)
        if (!strcmp(d->name, name)) return d->type == ENG_PARAM_DOUBLE;
    return 0;
}

static void read_params(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "params");
    int t = lua_gettop(L);
    if (!lua_istable(L, t))
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: 'params' must be a table of "
                  "name = { start, lo, hi }", c->chunk, c->line);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: params keys must be names",
                      c->chunk, c->line);
        const char *name = lua_tostring(L, -2);
        if (c->np == CAL_MAX_PARAMS)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: more than %d params",
                      c->chunk, c->line, CAL_MAX_PARAMS);
        if (strlen(name) >= CAL_NAME_CAP || !*name)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: bad parameter name '%s'",
                      c->chunk, c->line, name);
        if (!lua_istable(L, -1) || lua_rawlen(L, -1) != 3)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: params.%s must be { start, "
                      "lo, hi }", c->chunk, c->line, name);
        cal_param *p = &c->par[c->np++];
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "%s", name);
        int v = lua_gettop(L);
        p->start = num_field(c, v, 1, name);
        p->lo = num_field(c, v, 2, name);
        p->hi = num_field(c, v, 3, name);
        if (!(isfinite(p->lo) && isfinite(p->hi) && p->lo < p->hi))
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: params.%s: bounds [%g, %g] "
                      "must be finite with lo < hi", c->chunk, c->line, name, p->lo, p->hi);
        if (!(p->start > p->lo && p->start < p->hi))
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: params.%s: start %g violates "
                      "its bounds (it must lie strictly inside (%g, %g))", c->chunk, c->line,
                      name, p->start, p->lo, p->hi);
        /* the logistic map is flat near a bound: a start there could not move
         * within the difference step, and the fit would report it unmoved */
        double u = (p->start - p->lo) / (p->hi - p->lo);
        if (u < 1e-4 || u > 1.0 - 1e-4)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: params.%s: start %g is too "
                      "close to a bound of (%g, %g) for the fit to move it; widen the bounds",
                      c->chunk, c->line, name, p->start, p->lo, p->hi);
        p->device_key = device_double_key(name);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (!c->np)
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: 'params' is empty", c->chunk,
                  c->line);
    qsort(c->par, (size_t)c->np, sizeof c->par[0], cmp_param); /* deterministic order */
}

static const char *const cal_keys[] = {
    "reference", "params", "points",  "profile",   "name",           "loo", "max_iter",
    "fd_step",   "starts", "holdout", "bootstrap", "bootstrap_seed", NULL};

static void check_keys(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int ok = 0;
        for (int i = 0; k && cal_keys[i]; i++) ok |= !strcmp(k, cal_keys[i]);
        if (!ok) {
            const char *best = NULL;
            int32_t bd = 1 << 30;
            for (int i = 0; k && cal_keys[i]; i++) {
                int32_t d = eng_params_distance(k, cal_keys[i]);
                if (d < bd) bd = d, best = cal_keys[i];
            }
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: unknown key '%s'%s%s%s",
                      c->chunk, c->line, k ? k : "(not a string)", best && bd <= 3 ? " (did you mean '" : "",
                      best && bd <= 3 ? best : "", best && bd <= 3 ? "'?)" : "");
        }
    }
}

/* holdout = SOURCE or { SOURCE, ... }: marks the reference rows of those
 * sources (c->hold); each name must match at least one row. */
static void mark_source(cal *c, const char *src)
{
    int any = 0;
    for (int32_t k = 0; k < c->ref.n_rows; k++) {
        if (strcmp(c->ref.rows[k].source, src) != 0) continue;
        any = 1;
        c->n_hold += !c->hold[k];
        c->hold[k] = 1;
    }
    if (!any)
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: holdout '%s' matches no "
                  "reference row's source (%s)",
                  c->chunk, c->line, src, c->ref_arg);
}

static void read_holdout(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "holdout");
    int t = lua_gettop(L);
    if (!lua_isnil(L, t)) {
        int ok = lua_type(L, t) == LUA_TSTRING || (lua_istable(L, t) && lua_rawlen(L, t) >= 1);
        if (!ok)
            cal_raise(c, FS_EXIT_CONFIG,
                      "%s:%d: flashspec.calibrate: holdout must be a source "
                      "name or a list of them",
                      c->chunk, c->line);
        if (lua_type(L, t) == LUA_TSTRING) {
            mark_source(c, lua_tostring(L, t));
        } else {
            lua_Integer nn = (lua_Integer)lua_rawlen(L, t);
            for (lua_Integer i = 1; i <= nn; i++) {
                if (lua_rawgeti(L, t, i) != LUA_TSTRING)
                    cal_raise(c, FS_EXIT_CONFIG,
                              "%s:%d: flashspec.calibrate: holdout must be a "
                              "source name or a list of them",
                              c->chunk, c->line);
                mark_source(c, lua_tostring(L, -1));
                lua_pop(L, 1);
            }
        }
    }
    lua_pop(L, 1);
}

/* ------------------------------------------------------------ reporting */

typedef sim_strbuf buf; /* the report, residuals and profile, formatted in memory */
#define bprintf sim_strbuf_printf

/* A quoted CSV field with its quotes doubled (RFC 4180), then sep. */
static void bcsv(buf *b, const char *s, const char *sep)
{
    bprintf(b, "\"");
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1)
        bprintf(b, "%.*s\"\"", (int)(q - s), s);
    bprintf(b, "%s\"%s", s, sep);
}

static void add_output(cal *c, const char *name, buf *b)
{
    if (b->oom) {
        free(b->p);
        cal_raise(c, FS_EXIT_SOFTWARE, "out of memory for the calibration report");
    }
    if (fs_api_add_output(c->a, name, b->p ? b->p : "", b->n) != 0) {
        free(b->p);
        cal_raise(c, FS_EXIT_SOFTWARE, "out of memory for the calibration report");
    }
    /* fs_api_add_output copied it */
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------- bootstrap */

/* bootstrap = N (0..10000), bootstrap_seed = S (default 1). */
static void read_bootstrap(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "bootstrap");
    if (!lua_isnil(L, -1)) {
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0 || lua_tointeger(L, -1) > 10000)
            cal_raise(c, FS_EXIT_CONFIG,
                      "%s:%d: flashspec.calibrate: bootstrap must be an "
                      "integer in [0, 10000] (replicates)",
                      c->chunk, c->line);
        c->boot_n = (int32_t)lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
    c->boot_seed = 1;
    lua_getfield(L, idx, "bootstrap_seed");
    if (!lua_isnil(L, -1)) {
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0 ||
            lua_tointeger(L, -1) > 4294967295LL)
            cal_raise(c, FS_EXIT_CONFIG,
                      "%s:%d: flashspec.calibrate: bootstrap_seed must be an "
                      "integer in [0, 2^32 - 1]",
                      c->chunk, c->line);
        c->boot_seed = (unsigned long)lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
}

/* One replicate's pseudo-measurements: the model at the fitted z with the
 * replicate's own randomness (points(p, rep): the spec draws its traces from
 * other seeds), times 1 + s e, e standard normal (GSL), s the fit's relative
 * residual standard deviation.  Writes them over the reference values. */
static void pseudo_data(cal *c, const gsl_vector *z, int32_t rep, double s)
{
    c->rep = rep;
    int rc = evaluate_protected(c, z);
    c->rep = 0;
    if (rc != 0) rethrow(c);
    for (int32_t k = 0; k < c->ref.n_rows; k++) {
        double v = c->pred[k] * (1.0 + s * gsl_ran_gaussian(c->rng, 1.0));
        c->ref.rows[k].value = v > 0.0 ? v : c->pred[k];
    }
}

/* Parametric bootstrap of the fit at z: each replicate draws pseudo-
 * measurements (pseudo_data) and refits them from z as the fit did (the
 * spec's own traces); the replicates' spread is the estimate's.  Fills each
 * parameter's se_boot (standard deviation) and ci_lo / ci_hi (2.5% and 97.5%
 * quantiles: the percentile interval), GSL's statistics on the sorted draws.
 * A replicate whose refit fails to converge is counted in boot_failed. */
static void bootstrap(cal *c, const gsl_vector *z, double s)
{
    int32_t n = c->ref.n_rows, p = c->np, B = c->boot_n;
    for (int32_t i = 0; i < p; i++)
        c->par[i].se_boot = c->par[i].ci_lo = c->par[i].ci_hi = NAN;
    if (B <= 0) return;
    c->ref_keep = malloc(sizeof(double) * (size_t)n);
    c->boot_all = malloc(sizeof(double) * (size_t)B * (size_t)p);
    c->boot_x = malloc(sizeof(double) * (size_t)B);
    c->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!c->ref_keep || !c->boot_all || !c->boot_x || !c->rng)
        cal_raise(c, FS_EXIT_SOFTWARE, "out of memory for the bootstrap");
    gsl_rng_set(c->rng, c->boot_seed);
    for (int32_t k = 0; k < n; k++)
        c->ref_keep[k] = c->ref.rows[k].value;
    int32_t m = 0;
    for (int32_t b = 1; b <= B; b++) {
        pseudo_data(c, z, b, isfinite(s) ? s : 0.0);
        gsl_vector_memcpy(c->zk, z);
        size_t it;
        int st = fit(c, c->zk, c->max_iter, &it, NULL);
        for (int32_t k = 0; k < n; k++)
            c->ref.rows[k].value = c->ref_keep[k];
        if (st != GSL_SUCCESS && st != GSL_ENOPROG) {
            c->boot_failed++;
            continue;
        }
        for (int32_t i = 0; i < p; i++)
            c->boot_all[(size_t)m * (size_t)p + (size_t)i] =
                to_x(&c->par[i], gsl_vector_get(c->zk, (size_t)i));
        m++;
    }
    c->boot_m = m;
    if (m < 2) return;
    for (int32_t i = 0; i < p; i++) {
        for (int32_t b = 0; b < m; b++)
            c->boot_x[b] = c->boot_all[(size_t)b * (size_t)p + (size_t)i];
        gsl_sort(c->boot_x, 1, (size_t)m);
        c->par[i].se_boot = gsl_stats_sd(c->boot_x, 1, (size_t)m);
        c->par[i].ci_lo = gsl_stats_quantile_from_sorted_data(c->boot_x, 1, (size_t)m, 0.025);
        c->par[i].ci_hi = gsl_stats_quantile_from_sorted_data(c->boot_x, 1, (size_t)m, 0.975);
    }
}

/* ------------------------------------------------------------------ main */

/* The calibration state is a userdata with __gc, so that an error raised at
 * any point frees what it owns (and a second call is harmless). */
static int cal_gc(lua_State *L)
{
    cal *c = luaL_checkudata(L, 1, "flashspec.calibration");
    fs_ref_free(&c->ref);
    free(c->pred);
    free(c->jc_pred);
    free(c->matches);
    free(c->best_pred);
    free(c->loo_e);
    free(c->resid);
    free(c->skip_mem);
    free(c->hold);
    free(c->boot_x);
    free(c->boot_all);
    free(c->ref_keep);
    gsl_rng_free(c->rng);
    fs_memo_free(&c->memo);
    if (c->a && c->a->memo == &c->memo) c->a->memo = NULL;
    gsl_vector_free(c->z);
    gsl_vector_free(c->f);
    gsl_vector_free(c->zk);
    gsl_matrix_free(c->J);
    gsl_matrix_free(c->Jk);
    gsl_matrix_free(c->cov);
    if (c->w) gsl_multifit_nlinear_free(c->w);
    if (c->fn_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, c->fn_ref);
    if (c->err_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, c->err_ref);
    memset(c, 0, sizeof *c);
    c->fn_ref = c->err_ref = LUA_NOREF;
    return 0;
}

/* Fields of the table on top of the stack. */
static void set_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

int fs_l_calibrate(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cal *c = lua_newuserdatauv(L, sizeof *c, 0);
    memset(c, 0, sizeof *c);
    c->fn_ref = c->err_ref = LUA_NOREF;
    c->L = L;
    if (luaL_newmetatable(L, "flashspec.calibration")) {
        lua_pushcfunction(L, cal_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    c->a = fs_api_get(L);
    c->traces0 = c->a->n_traces;
    fs_caller_src(L, c->chunk, sizeof c->chunk, &c->line);
    check_keys(c, 1);

    /* options */
    char name[CAL_NAME_CAP] = "calibration", loo[16] = "approx";
    snprintf(c->name, sizeof c->name, "%s", name);
    c->tty = !c->a->quiet && c->a->ex.rank == 0 && isatty(STDERR_FILENO);
    char prof_base[SIM_NAME_CAP] = "", prof_name[SIM_NAME_CAP] = "";
    lua_getfield(L, 1, "name");
    if (!lua_isnil(L, -1)) {
        const char *s = lua_tostring(L, -1);
        int ok = s && *s && strlen(s) < sizeof name && lua_type(L, -1) == LUA_TSTRING;
        for (const char *q = s; ok && *q; q++)
            ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
                 strchr("._-", *q);
        if (!ok || *s == '.')
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: name must be a file name "
                      "of letters, digits and . _ - (not starting with .)", c->chunk, c->line);
        snprintf(name, sizeof name, "%s", s);
        snprintf(c->name, sizeof c->name, "%s", s);
    }
    lua_pop(L, 1);
    /* NAME.md and NAME.csv go beside the run's own results.csv / results.h5, and
     * beside the outputs of earlier calibrations of the same run */
    if (strcasecmp(name, "results") == 0)
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: name '%s' would overwrite the "
                  "run's results.csv; choose another name", c->chunk, c->line, name);
    for (int32_t i = 0; i < c->a->n_outputs; i++) {
        char md[CAL_NAME_CAP + 8];
        snprintf(md, sizeof md, "%s.md", name);
        if (strcasecmp(c->a->outputs[i].name, md) == 0)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: name '%s' is already taken "
                      "by an earlier calibration of this run (its %s would be overwritten); give "
                      "each calibration its own name", c->chunk, c->line, name, md);
    }
    lua_getfield(L, 1, "loo");
    if (!lua_isnil(L, -1)) {
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        if (strcmp(s, "approx") && strcmp(s, "exact") && strcmp(s, "none"))
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: loo must be \"approx\", "
                      "\"exact\" or \"none\"", c->chunk, c->line);
        snprintf(loo, sizeof loo, "%s", s);
    }
    lua_pop(L, 1);
    c->max_iter = 100;
    lua_getfield(L, 1, "max_iter");
    if (!lua_isnil(L, -1)) {
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > 10000)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: max_iter must be an integer "
                      "in [1, 10000]", c->chunk, c->line);
        c->max_iter = (int32_t)lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
    c->starts = 1;
    lua_getfield(L, 1, "starts");
    if (!lua_isnil(L, -1)) {
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > 64)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: starts must be an integer "
                      "in [1, 64]", c->chunk, c->line);
        c->starts = (int32_t)lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
    c->fd_step = 0.05;
    lua_getfield(L, 1, "fd_step");
    if (!lua_isnil(L, -1)) {
        double h = lua_tonumber(L, -1);
        if (!lua_isnumber(L, -1) || !(h >= 1e-8 && h <= 1.0))
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: fd_step must be a number in "
                      "[1e-8, 1]", c->chunk, c->line);
        c->fd_step = h;
    }
    lua_pop(L, 1);
    lua_getfield(L, 1, "profile");
    if (!lua_isnil(L, -1)) {
        if (!lua_istable(L, -1))
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: profile must be { base = "
                      "NAME, name = NAME }", c->chunk, c->line);
        lua_getfield(L, -1, "base");
        lua_getfield(L, -2, "name");
        const char *b = lua_tostring(L, -2), *n = lua_tostring(L, -1);
        char path[PATH_MAX];
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING ||
            strlen(b) >= sizeof prof_base || strlen(n) >= sizeof prof_name ||
            sim_profile_path("devices", b, path, sizeof path) != 0 ||
            sim_profile_path("devices", n, path, sizeof path) != 0)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: profile must be { base = "
                      "NAME, name = NAME } with device profile names", c->chunk, c->line);
        /* the derived profile must load: its base must exist and load now */
        sim_device dev;
        char err[512];
        sim_profile_path("devices", b, path, sizeof path);
        int prc = sim_profile_load_device(path, &dev, err, sizeof err);
        if (prc != SIM_PROFILE_OK) {
            struct stat st;
            char hint[1024] = "";
            if (stat(path, &st) != 0) {
                sim_profile_suggest("devices", b, hint, sizeof hint);
                cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: profile.base: unknown "
                          "device '%s'%s (no %s)", c->chunk, c->line, b, hint, path);
            }
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: profile.base '%s' does "
                      "not load: %s", c->chunk, c->line, b, err);
        }
        if (strcasecmp(n, "results") == 0)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: profile.name 'results' is "
                      "reserved for the run's results; choose another name", c->chunk, c->line);
        snprintf(prof_base, sizeof prof_base, "%s", b);
        snprintf(prof_name, sizeof prof_name, "%s", n);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    read_params(c, 1);
    read_bootstrap(c, 1);
    lua_getfield(L, 1, "points");
    if (!lua_isfunction(L, -1))
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: 'points' must be a function "
                  "p -> sweep table", c->chunk, c->line);
    c->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_getfield(L, 1, "reference");
    if (lua_type(L, -1) != LUA_TSTRING)
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: 'reference' must be the path of "
                  "a reference CSV", c->chunk, c->line);
    char rpath[PATH_MAX], err[2 * PATH_MAX + 64], tried[2 * PATH_MAX + 16];
    snprintf(c->ref_arg, sizeof c->ref_arg, "%s", lua_tostring(L, -1));
    if (fs_api_find_file(c->a, lua_tostring(L, -1), rpath, sizeof rpath, tried, sizeof tried)) {
        /* something that exists but is no regular file (a directory, a FIFO) is
         * bad data, for fs_ref_load to name; only a missing file is exit 66 */
        struct stat st;
        const char *arg = lua_tostring(L, -1);
        /* the places fs_api_find_file looked: the spec's folder, the project */
        const char *roots[2] = {c->a->script_dir, fs_home_dir()};
        int found = 0;
        for (int i = 0; i < (arg[0] == '/' ? 1 : 2) && !found; i++) {
            int n = arg[0] == '/' ? snprintf(rpath, sizeof rpath, "%s", arg)
                                  : snprintf(rpath, sizeof rpath, "%s/%s", roots[i], arg);
            found = n > 0 && (size_t)n < sizeof rpath && stat(rpath, &st) == 0;
        }
        if (!found)
            cal_raise(c, FS_EXIT_NOINPUT,
                      "%s:%d: flashspec.calibrate: reference '%s' not found%s", c->chunk,
                      c->line, arg, tried);
    }
    lua_pop(L, 1);
    int rc = fs_ref_load(rpath, &c->ref, err, sizeof err);
    if (rc != FS_REF_OK)
        cal_raise(c, rc == FS_REF_E_MISSING ? FS_EXIT_NOINPUT
                     : rc == FS_REF_E_NOMEM ? FS_EXIT_SOFTWARE : FS_EXIT_DATA, "%s", err);
    int32_t n = c->ref.n_rows, p = c->np;
    c->hold = calloc((size_t)n, 1);
    if (!c->hold) cal_raise(c, FS_EXIT_SOFTWARE, "out of memory");
    read_holdout(c, 1);
    if (n - c->n_hold < p)
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: %d parameters but only %d "
                  "reference rows%s",
                  c->chunk, c->line, p, n - c->n_hold, c->n_hold ? " not held out" : "");
    c->pred = calloc((size_t)n, sizeof *c->pred);
    c->jc_pred = calloc((size_t)n * (size_t)(c->np + 1), sizeof *c->jc_pred);
    c->matches = calloc((size_t)n, sizeof *c->matches);
    if (!c->pred || !c->matches || !c->jc_pred) cal_raise(c, FS_EXIT_SOFTWARE, "out of memory");

    /* the fit */
    gsl_set_error_handler_off();
    c->z = gsl_vector_alloc((size_t)p);
    c->f = gsl_vector_alloc((size_t)n);
    c->zk = gsl_vector_alloc((size_t)p);
    c->J = gsl_matrix_alloc((size_t)n, (size_t)p);
    c->Jk = gsl_matrix_alloc((size_t)n, (size_t)p);
    c->cov = gsl_matrix_alloc((size_t)p, (size_t)p);
    c->best_pred = malloc(sizeof(double) * (size_t)n);
    c->loo_e = malloc(sizeof(double) * (size_t)n);
    c->resid = malloc(sizeof(double) * (size_t)n);
    c->skip_mem = calloc((size_t)n, 1);
    if (c->skip_mem && c->n_hold) {
        memcpy(c->skip_mem, c->hold, (size_t)n);
        c->skip = c->skip_mem; /* held-out rows stay out of every fit */
    }
    if (!c->z || !c->f || !c->zk || !c->J || !c->Jk || !c->cov || !c->best_pred || !c->loo_e || !c->resid ||
        !c->skip_mem)
        cal_raise(c, FS_EXIT_SOFTWARE, "out of memory for the fit");
    gsl_vector *z = c->z, *f = c->f;
    gsl_matrix *J = c->J, *cov = c->cov;
    double *pred = c->best_pred, *loo_e = c->loo_e, *resid = c->resid;
    for (int32_t i = 0; i < p; i++) gsl_vector_set(z, (size_t)i, to_z(&c->par[i], c->par[i].start));
    resid_f(z, c, f); /* first evaluation: every row must match a point */
    rethrow(c);
    double rss0;
    gsl_blas_ddot(f, f, &rss0);
    /* starts: the spec's values, then deterministic scatters around them
     * (z + 0.5 (2 h - 1), h a Halton point); the lowest converged RSS wins */
    size_t iters = 0;
    int status = GSL_FAILURE, last = GSL_FAILURE;
    double best = INFINITY;
    static const int primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
    for (int32_t k = 0; k < c->starts; k++) {
        for (int32_t i = 0; i < p; i++) {
            double zi = to_z(&c->par[i], c->par[i].start);
            if (k > 0) {
                int b = primes[i % 16];
                double h = 0.0, fr = 1.0 / b;
                for (int32_t n = k + i / 16; n > 0; n /= b, fr /= b) h += fr * (n % b);
                zi += 0.5 * (2.0 * h - 1.0);
            }
            gsl_vector_set(c->zk, (size_t)i, zi);
        }
        size_t it = 0;
        last = fit(c, c->zk, c->max_iter, &it, c->Jk);
        iters += it;
        if (last != GSL_SUCCESS && last != GSL_ENOPROG) continue;
        resid_f(c->zk, c, f);
        rethrow(c);
        double r;
        gsl_blas_ddot(f, f, &r);
        if (r < best) {
            best = r;
            status = last;
            gsl_vector_memcpy(z, c->zk);
            gsl_matrix_memcpy(J, c->Jk);
        }
    }
    if (!isfinite(best))
        cal_raise(c, FS_EXIT_DATA, "%s:%d: flashspec.calibrate: the fit did not converge in %d "
                  "iterations (%s); nothing written", c->chunk, c->line, c->max_iter,
                  gsl_strerror(last));
    resid_f(z, c, f); /* predictions at the solution */
    rethrow(c);
    double rss;
    gsl_blas_ddot(f, f, &rss);
    memcpy(pred, c->pred, sizeof *pred * (size_t)n);
    for (int32_t k = 0; k < n; k++)
        resid[k] = c->hold[k] ? (pred[k] - c->ref.rows[k].value) / c->ref.rows[k].value
                              : gsl_vector_get(f, (size_t)k);
    int32_t nf = n - c->n_hold; /* the fitted rows */
    int dof = nf - p;
    double s2 = dof > 0 ? rss / dof : NAN;
    gsl_multifit_nlinear_covar(J, 0.0, cov);
    for (int32_t i = 0; i < p; i++) {
        cal_param *q = &c->par[i];
        double zi = gsl_vector_get(z, (size_t)i);
        q->value = to_x(q, zi);
        double vz = gsl_matrix_get(cov, (size_t)i, (size_t)i);
        q->se = dof > 0 && vz >= 0 ? dx_dz(q, zi) * sqrt(s2 * vz) : NAN;
    }
    bootstrap(c, z, sqrt(s2));
    /* leave-one-out */
    for (int32_t k = 0; k < n; k++) loo_e[k] = NAN;
    if (!strcmp(loo, "approx")) {
        for (int32_t k = 0; k < n; k++) {
            double hkk = 0.0; /* J_k C J_k^T with C = (J^T J)^-1 */
            for (int32_t i = 0; i < p; i++)
                for (int32_t j = 0; j < p; j++)
                    hkk += gsl_matrix_get(J, (size_t)k, (size_t)i) *
                           gsl_matrix_get(cov, (size_t)i, (size_t)j) *
                           gsl_matrix_get(J, (size_t)k, (size_t)j);
            loo_e[k] = hkk < 1.0 - 1e-9 ? resid[k] / (1.0 - hkk) : NAN;
        }
        for (int32_t k = 0; k < n; k++)
            if (c->hold[k]) loo_e[k] = NAN;
    } else if (!strcmp(loo, "exact")) {
        uint8_t *skip = c->skip_mem;
        const uint8_t *base = c->skip;
        for (int32_t k = 0; k < n; k++) {
            if (c->hold[k]) continue;
            skip[k] = 1;
            c->skip = skip;
            gsl_vector_memcpy(c->zk, z);
            size_t it;
            fit(c, c->zk, c->max_iter, &it, NULL); /* the last iterate if it stops early */
            c->skip = base;
            if (evaluate_protected(c, c->zk) != 0) rethrow(c);
            loo_e[k] = (c->pred[k] - c->ref.rows[k].value) / c->ref.rows[k].value;
            skip[k] = 0;
        }
    }
    double loo_ss = 0.0;
    int32_t loo_n = 0;
    for (int32_t k = 0; k < n; k++)
        if (isfinite(loo_e[k])) loo_ss += loo_e[k] * loo_e[k], loo_n++;
    double rms = sqrt(rss / nf), loo_rms = loo_n ? sqrt(loo_ss / loo_n) : NAN;
    /* a leave-one-out error far beyond the in-sample RMS: the fit leans on
     * that row (over 3x the RMS and over 10%), said once on stderr */
    double far_at = 3.0 * rms > 0.10 ? 3.0 * rms : 0.10;
    int32_t n_far = 0, worst = -1;
    for (int32_t k = 0; k < n; k++) {
        if (c->hold[k] || !isfinite(loo_e[k]) || fabs(loo_e[k]) <= far_at) continue;
        n_far++;
        if (worst < 0 || fabs(loo_e[k]) > fabs(loo_e[worst])) worst = k;
    }
    if (n_far && c->a->ex.rank == 0)
        fprintf(stderr,
                "flashspec: warning: %s:%d: calibration %s: %d leave-one-out error%s beyond "
                "%.0f%% (3x the in-sample RMS of %.1f%%, at least 10%%); worst %s:%d %s %+.1f%%: "
                "the fit leans on %s\n",
                c->chunk, c->line, name, (int)n_far, n_far == 1 ? "" : "s", 100 * far_at, 100 * rms,
                c->ref.path, c->ref.rows[worst].line, c->ref.rows[worst].metric, 100 * loo_e[worst],
                n_far == 1 ? "that row" : "those rows");
    double aic = nf * log(rss / nf) + 2.0 * p, bic = nf * log(rss / nf) + p * log((double)nf);
    double hold_ss = 0.0;
    for (int32_t k = 0; k < n; k++)
        if (c->hold[k]) hold_ss += resid[k] * resid[k];
    double hold_rms = c->n_hold ? sqrt(hold_ss / c->n_hold) : NAN;

    if (c->tty) fputs(PROGRESS_CLEAR, stderr); /* the progress line is done */
    /* ---- the Lua result ---- */
    lua_createtable(L, 0, 16);
    set_str(L, "name", name);
    lua_createtable(L, p, 0); /* order */
    lua_createtable(L, 0, p); /* params */
    for (int32_t i = 0; i < p; i++) {
        cal_param *q = &c->par[i];
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
        /* the converged replicates' values, in replicate order: what ci_lo,
         * ci_hi (2.5% and 97.5% quantiles) and se_boot summarise */
        lua_createtable(L, c->boot_m, 0);
        for (int32_t b = 0; b < c->boot_m && c->boot_all; b++) {
            lua_pushnumber(L, c->boot_all[(size_t)b * (size_t)p + (size_t)i]);
            lua_rawseti(L, -2, b + 1);
        }
        lua_setfield(L, -2, "boot");
        lua_setfield(L, -2, q->name);
    }
    lua_setfield(L, -3, "params");
    lua_setfield(L, -2, "order");
    lua_createtable(L, n, 0);
    for (int32_t k = 0; k < n; k++) {
        const fs_ref_row *r = &c->ref.rows[k];
        lua_createtable(L, 0, 10);
        fs_set_int(L, "line", r->line);
        set_str(L, "metric", r->metric);
        fs_set_num(L, "measured", r->value);
        fs_set_num(L, "predicted", pred[k]);
        fs_set_num(L, "error", resid[k]);
        fs_set_num(L, "loo_error", loo_e[k]);
        lua_pushboolean(L, !c->hold[k] && isfinite(loo_e[k]) && fabs(loo_e[k]) > far_at);
        lua_setfield(L, -2, "loo_far");
        fs_set_int(L, "points", c->matches[k]);
        set_str(L, "source", r->source);
        set_str(L, "note", r->note);
        lua_pushboolean(L, c->hold[k]);
        lua_setfield(L, -2, "heldout");
        for (int32_t j = 0; j < c->ref.n_keys; j++) {
            lua_pushstring(L, r->keys[j]);
            lua_setfield(L, -2, c->ref.key_names[j]);
        }
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "rows");
    fs_set_num(L, "rms", rms);
    fs_set_num(L, "loo_rms", loo_rms);
    fs_set_num(L, "start_rms", sqrt(rss0 / nf));
    fs_set_num(L, "aic", aic);
    fs_set_num(L, "bic", bic);
    fs_set_num(L, "holdout_rms", hold_rms);
    fs_set_int(L, "n_holdout", c->n_hold);
    fs_set_int(L, "n", nf);
    fs_set_int(L, "p", p);
    fs_set_int(L, "bootstrap", c->boot_n);
    fs_set_int(L, "bootstrap_failed", c->boot_failed);
    fs_set_int(L, "iterations", (lua_Integer)iters);
    fs_set_int(L, "evaluations", (lua_Integer)c->evals);
    fs_set_int(L, "points_run", (lua_Integer)c->memo.runs);
    fs_set_int(L, "points_reused", (lua_Integer)c->memo.hits);
    set_str(L, "status", status == GSL_SUCCESS
                             ? "converged"
                             : "converged (no further progress at the step resolution)");

    /* ---- outputs ---- */
    buf md = {0}, csv = {0}, pf = {0};
    bprintf(&md, "# Calibration `%s`\n\n", name);
    bprintf(&md, "Reference: `%s` (%d rows).  Spec: `%s`.  Fitted by `flashspec calibrate` "
                 "(GSL trust-region Levenberg-Marquardt on relative errors, bounds by a "
                 "logistic map, forward-difference Jacobian with step %g).\n\n",
            c->ref_arg, n, c->chunk, c->fd_step);
    bprintf(&md, "Starts: %d (the lowest converged fit is kept).  ", c->starts);
    bprintf(&md,
            "Status: %s after %zu iterations (%lld evaluations).  RMS relative error "
            "%.2f%% (start %.2f%%); leave-one-out (%s) RMS %.2f%%.  n = %d, p = %d, "
            "AIC %.2f, BIC %.2f.\n\n",
            status == GSL_SUCCESS ? "converged" : "converged (no further progress)", iters,
            (long long)c->evals, 100 * rms, 100 * sqrt(rss0 / nf), loo, 100 * loo_rms, nf, p, aic,
            bic);
    if (c->n_hold)
        bprintf(&md, "Held out (predicted, not fitted): %d rows, RMS relative error %.2f%%.\n\n",
                c->n_hold, 100 * hold_rms);
    if (c->boot_n)
        bprintf(&md,
                "Parametric bootstrap: %d replicates (seed %lu), %d refits did not "
                "converge; each replicate re-draws the spec's randomness (points(p, rep)) "
                "and the measurement noise, and is refitted.\n\n",
                c->boot_n, c->boot_seed, c->boot_failed);
    bprintf(&md, "## Parameters\n\n| parameter | value | standard error (delta method) | "
                 "bootstrap SE | 95%% interval (bootstrap) | start | bounds |\n"
                 "|---|---|---|---|---|---|---|\n");
    for (int32_t i = 0; i < p; i++) {
        cal_param *q = &c->par[i];
        bprintf(&md, "| `%s` | %.6g | %.3g | %.3g | [%.6g, %.6g] | %.6g | [%g, %g] |\n", q->name,
                q->value, q->se, q->se_boot, q->ci_lo, q->ci_hi, q->start, q->lo, q->hi);
    }
    bprintf(&md, "\n## Residuals\n\n|");
    for (int32_t j = 0; j < c->ref.n_keys; j++) bprintf(&md, " %s |", c->ref.key_names[j]);
    bprintf(&md, " metric | measured | predicted | error | leave-one-out | source |\n|");
    for (int32_t j = 0; j < c->ref.n_keys + 6; j++) bprintf(&md, "---|");
    bprintf(&md, "\n");
    for (int32_t j = 0; j < c->ref.n_keys; j++) bprintf(&csv, "%s,", c->ref.key_names[j]);
    bprintf(&csv, "metric,measured,predicted,error,loo_error,points,source\n");
    for (int32_t k = 0; k < n; k++) {
        const fs_ref_row *r = &c->ref.rows[k];
        bprintf(&md, "|");
        for (int32_t j = 0; j < c->ref.n_keys; j++) {
            bprintf(&md, " %s |", r->keys[j][0] ? r->keys[j] : "*");
            bcsv(&csv, r->keys[j], ",");
        }
        if (c->hold[k])
            bprintf(&md, " `%s` | %.6g | %.6g | %+.1f%% | held out | %s |\n", r->metric, r->value,
                    pred[k], 100 * resid[k], r->source);
        else if (isfinite(loo_e[k]) && fabs(loo_e[k]) > far_at)
            bprintf(&md, " `%s` | %.6g | %.6g | %+.1f%% | **%+.1f%%** (far) | %s |\n", r->metric,
                    r->value, pred[k], 100 * resid[k], 100 * loo_e[k], r->source);
        else
            bprintf(&md, " `%s` | %.6g | %.6g | %+.1f%% | %+.1f%% | %s |\n", r->metric, r->value,
                    pred[k], 100 * resid[k], 100 * loo_e[k], r->source);
        bcsv(&csv, r->metric, ",");
        bprintf(&csv, "%.17g,%.17g,%.17g,%.17g,%d,", r->value, pred[k], resid[k], loo_e[k],
                c->matches[k]);
        bcsv(&csv, r->source, "\n");
    }
    if (n_far)
        bprintf(&md,
                "\n(far): a leave-one-out error over %.0f%% (3x the in-sample RMS, at least "
                "10%%): the fit leans on that row.\n",
                100 * far_at);
    char fname[CAL_NAME_CAP + 8];
    snprintf(fname, sizeof fname, "%s.md", name);
    add_output(c, fname, &md);
    snprintf(fname, sizeof fname, "%s.csv", name);
    add_output(c, fname, &csv);
    if (prof_base[0]) {
        bprintf(&pf, "-- %s: device profile fitted by `flashspec calibrate` (spec %s, calibration "
                     "'%s').\n-- Reference measurements: %s (%d rows); RMS relative error "
                     "%.2f%%, leave-one-out (%s) %.2f%%.\n-- Every value below: fitted value, "
                     "standard error, the bounds of the fit.\nreturn {\n  name = \"%s\",\n  "
                     "base = \"%s\",\n",
                prof_name, c->chunk, name, c->ref_arg, n, 100 * rms, loo, 100 * loo_rms,
                prof_name, prof_base);
        for (int32_t i = 0; i < p; i++) {
            cal_param *q = &c->par[i];
            if (!q->device_key) continue;
            bprintf(&pf, "  %s = %.6g, -- fitted: %.6g +/- %.3g (bounds %g..%g)", q->name, q->value,
                    q->value, q->se, q->lo, q->hi);
            if (isfinite(q->ci_lo))
                bprintf(&pf, "; bootstrap 95%% interval %.6g..%.6g", q->ci_lo, q->ci_hi);
            bprintf(&pf, "\n");
        }
        bprintf(&pf, "}\n");
        snprintf(fname, sizeof fname, "%s.lua", prof_name);
        add_output(c, fname, &pf);
    }
    return 1;
}
