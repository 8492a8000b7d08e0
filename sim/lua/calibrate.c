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
 * once, reusing by id the points earlier evaluations ran (fs_memo, with the
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
 * here.
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
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/config/home.h"
#include "sim/config/profile.h"
#include "sim/fit/refcsv.h"
#include "sim/fit/sim_fit.h"
#include "sim/hw/sim_device.h"
#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/lfit.h"
#include "sim/lua/lparams.h"
#include "sim/out/sim_strbuf.h"
#include "sim/sweep/sim_sweep.h"

/* A progress line's width of spaces between carriage returns. */
#define PROGRESS_CLEAR                                                                             \
    "\r                                                                              \r"
#define CAL_NAME_CAP SIM_FIT_NAME_CAP
#define WHAT "flashspec.calibrate"

/* The options checked against cal_keys. */
typedef struct cal_opts {
    char name[CAL_NAME_CAP];
    int32_t loo; /* index into loo_choices */
    int32_t max_iter, starts, bootstrap;
    double fd_step, bootstrap_seed;
} cal_opts;

static const char *const loo_choices[] = {"approx", "exact", "none", NULL};
static const sim_fit_loo_kind loo_kinds[] = {SIM_FIT_LOO_APPROX, SIM_FIT_LOO_EXACT,
                                             SIM_FIT_LOO_NONE};

#define CO(f) offsetof(cal_opts, f)
static const eng_param_desc cal_keys[] = {
    {"name", ENG_PARAM_STRING, CO(name), 0, 0, 0, NULL, CAL_NAME_CAP, 0, "calibration", NULL, 0,
     "the calibration's name: its outputs are NAME.md and NAME.csv"},
    {"loo", ENG_PARAM_ENUM, CO(loo), 0, 2, 0, loo_choices, 0, 0, NULL, NULL, 0,
     "leave-one-out: approx (leverage), exact (refits) or none"},
    {"max_iter", ENG_PARAM_INT, CO(max_iter), 1, 10000, 100, NULL, 0, 0, NULL, NULL, 0,
     "iterations of each least-squares fit, at most"},
    {"fd_step", ENG_PARAM_DOUBLE, CO(fd_step), 1e-8, 1, 0.05, NULL, 0, 0, NULL, NULL, 0,
     "forward-difference step of the Jacobian, in the unbounded coordinate"},
    {"starts", ENG_PARAM_INT, CO(starts), 1, 64, 1, NULL, 0, 0, NULL, NULL, 0,
     "fits from this many starting points, the lowest converged RSS kept"},
    {"bootstrap", ENG_PARAM_INT, CO(bootstrap), 0, 10000, 0, NULL, 0, 0, NULL, NULL, 0,
     "replicates of the parametric bootstrap (0: none)"},
    {"bootstrap_seed", ENG_PARAM_DOUBLE, CO(bootstrap_seed), 0, 4294967295.0, 1, NULL, 0, 0, NULL,
     NULL, 0, "seed of the bootstrap's measurement noise (an integer)"},
    {NULL, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
#undef CO

/* The keys checked here rather than against cal_keys. */
static const char *const cal_object_keys[] = {"reference", "params",  "points",
                                              "profile",   "holdout", NULL};

typedef struct cal {
    lua_State *L;
    fs_api *a;
    char chunk[PATH_MAX];
    int line;
    fs_guard guard; /* evaluations run Lua under it (lfit.h) */
    int fn_ref;     /* registry reference of the points function */
    cal_opts o;
    char prof_base[SIM_NAME_CAP], prof_name[SIM_NAME_CAP]; /* "" = no profile */
    fs_ref ref;
    char ref_arg[256]; /* the reference as the spec names it (for the outputs) */
    sim_fit f;         /* the fit (sim/fit): parameters, rows, results */
    uint8_t device_key[SIM_FIT_MAX_PARAMS]; /* 1: a numeric key of sim_device (profiled) */
    int32_t n_hold;
    int32_t *matches; /* [n_rows] points matched in the last evaluation */
    int32_t traces0;  /* traces made before the fit: never released */
    fs_memo memo;     /* points already run, by id: a difference step replays only
                         the points its parameter moves (sweep_exec.h) */
    int tty;          /* progress lines: stderr is a terminal, no -q */
    int memos_on;     /* 1 while the fit holds the run's draw memos on */
    int need_interval; /* a reference row reads tokens_per_s_lo/hi: points bootstrap them */
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

/* A sim/fit call's failure: the error an evaluation raised (kept by the
 * guard), else memory. */
static void cal_check(cal *c, int rc, const char *what)
{
    if (rc == SIM_FIT_OK) return;
    if (c->tty) fputs(PROGRESS_CLEAR, stderr); /* the progress line gives way */
    fs_guard_rethrow(&c->guard);
    cal_raise(c, FS_EXIT_SOFTWARE, "out of memory for %s", what);
}

/* ------------------------------------------------------------ evaluation */

/* On a terminal (and without -q): one line, rewritten after every
 * evaluation, with the count and the RMS relative error of the fitted rows. */
static void progress(const cal *c, const double *pred, int32_t rep, int64_t eval)
{
    if (!c->tty) return;
    double rms = sim_fit_rms_of(&c->f, pred);
    /* padded to a whole line: the stderr filter passes no terminal escapes */
    fprintf(stderr, "\rflashspec: calibrate %s: evaluation %lld%s, RMS %.2f%%%-20s", c->o.name,
            (long long)eval, rep ? " (bootstrap)" : "", 100 * rms, "");
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
    cal_raise(c, FS_EXIT_DATA, "%s:%d: no point matches this reference row (%s)", ref->path,
              ref->rows[k].line, keys);
}

/* Each reference row's prediction: the mean of its metric over the points
 * that match its keys. */
static void match_rows(cal *c, const fs_staged *sp, int64_t n, double *pred)
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
                cal_raise(c, FS_EXIT_DATA,
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
        cal_raise(c, FS_EXIT_INTERRUPTED, "%s:%d: interrupted", c->chunk, c->line);
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
        cal_raise(c, FS_EXIT_CONFIG,
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
    fs_eval *ev = lua_newuserdatauv(L, sizeof *ev * (size_t)m, 0);
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
            if (ev[j].sp[i].code) cal_raise(c, ev[j].sp[i].code, "%s", ev[j].sp[i].err);
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

/* --------------------------------------------------------------- options */

/* Closest calibrate key to k, or NULL (as the run keys: lparams.h). */
static const char *nearest_key(const char *k)
{
    const char *best = eng_params_nearest(cal_keys, k);
    int32_t best_d = best ? eng_params_distance(k, best) : INT32_MAX;
    int32_t limit = (int32_t)strlen(k) / 2 < 2 ? 2 : (int32_t)strlen(k) / 2;
    for (int i = 0; cal_object_keys[i]; i++) {
        int32_t d = eng_params_distance(k, cal_object_keys[i]);
        if (d <= limit && d < best_d) {
            best = cal_object_keys[i];
            best_d = d;
        }
    }
    return best;
}

static int is_object_key(const char *k)
{
    for (int i = 0; cal_object_keys[i]; i++)
        if (!strcmp(k, cal_object_keys[i])) return 1;
    return 0;
}

/* Unknown keys, then the options of cal_keys (lparams.h). */
static void check_options(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: %s: keys must be names", c->chunk, c->line, WHAT);
        const char *k = lua_tostring(L, -1);
        if (is_object_key(k) || eng_params_find(cal_keys, k)) continue;
        const char *near = nearest_key(k);
        int kl = slp_key_line(c->chunk, c->line, k);
        if (near)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: unknown key '%s' in %s (did you mean '%s'?)",
                      c->chunk, kl, k, WHAT, near);
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: unknown key '%s' in %s", c->chunk, kl, k, WHAT);
    }
    lua_newtable(L);
    int tmp = lua_gettop(L);
    for (const eng_param_desc *d = cal_keys; d->name; d++) {
        lua_getfield(L, idx, d->name);
        lua_setfield(L, tmp, d->name);
    }
    slp_check_table(L, tmp, cal_keys, &c->o, WHAT, c->chunk, c->line);
    lua_pop(L, 1);
    if (c->o.bootstrap_seed != floor(c->o.bootstrap_seed))
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: %s: key 'bootstrap_seed' must be an integer (got %.14g)", c->chunk,
                  slp_key_line(c->chunk, c->line, "bootstrap_seed"), WHAT, c->o.bootstrap_seed);
}

/* name: a file name, not the run's results, not an earlier calibration's. */
static void check_name(cal *c)
{
    const char *s = c->o.name;
    int ok = *s != 0;
    for (const char *q = s; ok && *q; q++)
        ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
             strchr("._-", *q);
    if (!ok || *s == '.')
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: name must be a file name "
                  "of letters, digits and . _ - (not starting with .)",
                  c->chunk, c->line);
    /* NAME.md and NAME.csv go beside the run's own results.csv / results.h5, and
     * beside the outputs of earlier calibrations of the same run */
    if (strcasecmp(s, "results") == 0)
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: name '%s' would overwrite the "
                  "run's results.csv; choose another name",
                  c->chunk, c->line, s);
    for (int32_t i = 0; i < c->a->n_outputs; i++) {
        char md[CAL_NAME_CAP + 8];
        snprintf(md, sizeof md, "%s.md", s);
        if (strcasecmp(c->a->outputs[i].name, md) == 0)
            cal_raise(c, FS_EXIT_CONFIG,
                      "%s:%d: flashspec.calibrate: name '%s' is already taken "
                      "by an earlier calibration of this run (its %s would be overwritten); give "
                      "each calibration its own name",
                      c->chunk, c->line, s, md);
    }
}

/* The base of the derived profile must exist and load now. */
static void check_profile_base(cal *c, const char *b)
{
    sim_device dev;
    char path[PATH_MAX], err[512];
    sim_profile_path("devices", b, path, sizeof path);
    int prc = sim_profile_load_device(path, &dev, err, sizeof err);
    if (prc == SIM_PROFILE_OK) return;
    struct stat st;
    char hint[1024] = "";
    if (stat(path, &st) != 0) {
        sim_profile_suggest("devices", b, hint, sizeof hint);
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: profile.base: unknown "
                  "device '%s'%s (no %s)",
                  c->chunk, c->line, b, hint, path);
    }
    cal_raise(c, FS_EXIT_CONFIG,
              "%s:%d: flashspec.calibrate: profile.base '%s' does "
              "not load: %s",
              c->chunk, c->line, b, err);
}

/* profile = { base = NAME, name = NAME } (optional). */
static void read_profile(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "profile");
    if (!lua_isnil(L, -1)) {
        if (!lua_istable(L, -1))
            cal_raise(c, FS_EXIT_CONFIG,
                      "%s:%d: flashspec.calibrate: profile must be { base = "
                      "NAME, name = NAME }",
                      c->chunk, c->line);
        lua_getfield(L, -1, "base");
        lua_getfield(L, -2, "name");
        const char *b = lua_tostring(L, -2), *n = lua_tostring(L, -1);
        char path[PATH_MAX];
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING ||
            strlen(b) >= sizeof c->prof_base || strlen(n) >= sizeof c->prof_name ||
            sim_profile_path("devices", b, path, sizeof path) != 0 ||
            sim_profile_path("devices", n, path, sizeof path) != 0)
            cal_raise(c, FS_EXIT_CONFIG,
                      "%s:%d: flashspec.calibrate: profile must be { base = "
                      "NAME, name = NAME } with device profile names",
                      c->chunk, c->line);
        check_profile_base(c, b);
        if (strcasecmp(n, "results") == 0)
            cal_raise(c, FS_EXIT_CONFIG,
                      "%s:%d: flashspec.calibrate: profile.name 'results' is "
                      "reserved for the run's results; choose another name",
                      c->chunk, c->line);
        snprintf(c->prof_base, sizeof c->prof_base, "%s", b);
        snprintf(c->prof_name, sizeof c->prof_name, "%s", n);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
}

static double num_field(cal *c, int idx, int i, const char *pname)
{
    lua_rawgeti(c->L, idx, i);
    if (!lua_isnumber(c->L, -1))
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: params.%s must be { start, lo, "
                  "hi } (numbers)",
                  c->chunk, c->line, pname);
    double x = lua_tonumber(c->L, -1);
    lua_pop(c->L, 1);
    return x;
}

/* One entry name = { start, lo, hi } of params, its value on top of the stack. */
static void read_param(cal *c, const char *name)
{
    lua_State *L = c->L;
    if (c->f.np == SIM_FIT_MAX_PARAMS)
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: more than %d params", c->chunk,
                  c->line, SIM_FIT_MAX_PARAMS);
    if (strlen(name) >= CAL_NAME_CAP || !*name)
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: bad parameter name '%s'",
                  c->chunk, c->line, name);
    if (!lua_istable(L, -1) || lua_rawlen(L, -1) != 3)
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: params.%s must be { start, "
                  "lo, hi }",
                  c->chunk, c->line, name);
    sim_fit_param *p = &c->f.par[c->f.np++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    int v = lua_gettop(L);
    p->start = num_field(c, v, 1, name);
    p->lo = num_field(c, v, 2, name);
    p->hi = num_field(c, v, 3, name);
    switch (sim_fit_param_check(p->start, p->lo, p->hi)) {
    case SIM_FIT_PARAM_BOUNDS:
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: params.%s: bounds [%g, %g] "
                  "must be finite with lo < hi",
                  c->chunk, c->line, name, p->lo, p->hi);
        break;
    case SIM_FIT_PARAM_START:
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: params.%s: start %g violates "
                  "its bounds (it must lie strictly inside (%g, %g))",
                  c->chunk, c->line, name, p->start, p->lo, p->hi);
        break;
    case SIM_FIT_PARAM_EDGE:
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: params.%s: start %g is too "
                  "close to a bound of (%g, %g) for the fit to move it; widen the bounds",
                  c->chunk, c->line, name, p->start, p->lo, p->hi);
        break;
    }
}

static int device_double_key(const char *name)
{
    for (const eng_param_desc *d = sim_device_keys(); d->name; d++)
        if (!strcmp(d->name, name)) return d->type == ENG_PARAM_DOUBLE;
    return 0;
}

/* params = { name = { start, lo, hi }, ... }, in the order of their names. */
static void read_params(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "params");
    int t = lua_gettop(L);
    if (!lua_istable(L, t))
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: 'params' must be a table of "
                  "name = { start, lo, hi }",
                  c->chunk, c->line);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: params keys must be names",
                      c->chunk, c->line);
        read_param(c, lua_tostring(L, -2));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (!c->f.np)
        cal_raise(c, FS_EXIT_CONFIG, "%s:%d: flashspec.calibrate: 'params' is empty", c->chunk,
                  c->line);
    sim_fit_sort_params(c->f.par, c->f.np); /* deterministic order */
    for (int32_t i = 0; i < c->f.np; i++)
        c->device_key[i] = (uint8_t)device_double_key(c->f.par[i].name);
}

/* points: the function p [, rep] -> sweep table, kept in the registry. */
static void read_points(cal *c, int idx)
{
    lua_getfield(c->L, idx, "points");
    if (!lua_isfunction(c->L, -1))
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: 'points' must be a function "
                  "p -> sweep table",
                  c->chunk, c->line);
    c->fn_ref = luaL_ref(c->L, LUA_REGISTRYINDEX);
}

/* The reference file the spec names (arg): its path into rpath, or a raised
 * error when it does not exist. */
static void find_reference(cal *c, const char *arg, char *rpath, size_t n)
{
    char tried[2 * PATH_MAX + 16];
    if (!fs_api_find_file(c->a, arg, rpath, n, tried, sizeof tried)) return;
    /* something that exists but is no regular file (a directory, a FIFO) is
     * bad data, for fs_ref_load to name; only a missing file is exit 66 */
    struct stat st;
    /* the places fs_api_find_file looked: the spec's folder, the project */
    const char *roots[2] = {c->a->script_dir, fs_home_dir()};
    int found = 0;
    for (int i = 0; i < (arg[0] == '/' ? 1 : 2) && !found; i++) {
        int w = arg[0] == '/' ? snprintf(rpath, n, "%s", arg)
                              : snprintf(rpath, n, "%s/%s", roots[i], arg);
        found = w > 0 && (size_t)w < n && stat(rpath, &st) == 0;
    }
    if (!found)
        cal_raise(c, FS_EXIT_NOINPUT, "%s:%d: flashspec.calibrate: reference '%s' not found%s",
                  c->chunk, c->line, arg, tried);
}

/* reference = PATH: the reference CSV, read and checked (refcsv.h). */
static void read_reference(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "reference");
    if (lua_type(L, -1) != LUA_TSTRING)
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: 'reference' must be the path of "
                  "a reference CSV",
                  c->chunk, c->line);
    char rpath[PATH_MAX], err[2 * PATH_MAX + 64];
    snprintf(c->ref_arg, sizeof c->ref_arg, "%s", lua_tostring(L, -1));
    find_reference(c, lua_tostring(L, -1), rpath, sizeof rpath);
    lua_pop(L, 1);
    fs_ref_cols cols = fs_ref_result_cols(&c->a->meta);
    int rc = fs_ref_load(rpath, &cols, &c->ref, err, sizeof err);
    if (rc != FS_REF_OK) cal_raise(c, sim_status_exit(rc), "%s", err);
}

/* holdout = SOURCE or { SOURCE, ... }: marks the reference rows of those
 * sources (f.hold); each name must match at least one row. */
static void mark_source(cal *c, const char *src)
{
    int any = 0;
    for (int32_t k = 0; k < c->ref.n_rows; k++) {
        if (strcmp(c->ref.rows[k].source, src) != 0) continue;
        any = 1;
        c->n_hold += !c->f.hold[k];
        c->f.hold[k] = 1;
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
    fs_memo_free(&c->memo);
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

/* Everything the spec table at idx says, checked; the reference loaded. */
static void read_spec(cal *c, int idx)
{
    check_options(c, idx);
    check_name(c);
    read_profile(c, idx);
    read_params(c, idx);
    read_points(c, idx);
    read_reference(c, idx);
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
    if (sim_fit_init(f, n) != SIM_FIT_OK || !c->matches)
        cal_raise(c, FS_EXIT_SOFTWARE, "out of memory");
    for (int32_t k = 0; k < n; k++)
        f->y[k] = c->ref.rows[k].value;
    c->need_interval = reads_interval(&c->ref);
    read_holdout(c, idx);
    if (n - c->n_hold < f->np)
        cal_raise(c, FS_EXIT_CONFIG,
                  "%s:%d: flashspec.calibrate: %d parameters but only %d "
                  "reference rows%s",
                  c->chunk, c->line, f->np, n - c->n_hold, c->n_hold ? " not held out" : "");
}

/* The fit from the starts; a fit that never converges is an error. */
static void fit(cal *c)
{
    int rc = sim_fit_run(&c->f, c->o.starts);
    if (rc == SIM_FIT_E_NOCONV)
        cal_raise(c, sim_status_exit(rc),
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
    cal_check(c, sim_fit_loo(&c->f, loo_kinds[c->o.loo]), "the fit");
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

/* NAME.md: the summary and the parameters. */
static void report_head(const cal *c, buf *md)
{
    const sim_fit *f = &c->f;
    bprintf(md, "# Calibration `%s`\n\n", c->o.name);
    bprintf(md,
            "Reference: `%s` (%d rows).  Spec: `%s`.  Fitted by `flashspec calibrate` "
            "(GSL trust-region Levenberg-Marquardt on relative errors, bounds by a "
            "logistic map, forward-difference Jacobian with step %g).\n\n",
            c->ref_arg, f->n, c->chunk, c->o.fd_step);
    bprintf(md, "Starts: %d (the lowest converged fit is kept).  ", c->o.starts);
    bprintf(md,
            "Status: %s after %zu iterations (%lld evaluations).  RMS relative error "
            "%.2f%% (start %.2f%%); leave-one-out (%s) RMS %.2f%%.  n = %d, p = %d, "
            "AIC %.2f, BIC %.2f.\n\n",
            !f->no_progress ? "converged" : "converged (no further progress)", f->iters,
            (long long)f->evals, 100 * f->rms, 100 * f->start_rms, loo_choices[c->o.loo],
            100 * f->loo_rms, f->nf, f->np, f->aic, f->bic);
    if (c->n_hold)
        bprintf(md, "Held out (predicted, not fitted): %d rows, RMS relative error %.2f%%.\n\n",
                c->n_hold, 100 * f->hold_rms);
    if (f->boot_n)
        bprintf(md,
                "Parametric bootstrap: %d replicates (seed %lu), %d refits did not "
                "converge; each replicate re-draws the spec's randomness (points(p, rep)) "
                "and the measurement noise, and is refitted.\n\n",
                f->boot_n, (unsigned long)c->o.bootstrap_seed, f->boot_failed);
    bprintf(md, "## Parameters\n\n| parameter | value | standard error (delta method) | "
                "bootstrap SE | 95%% interval (bootstrap) | start | bounds |\n"
                "|---|---|---|---|---|---|---|\n");
    for (int32_t i = 0; i < f->np; i++) {
        const sim_fit_param *q = &f->par[i];
        bprintf(md, "| `%s` | %.6g | %.3g | %.3g | [%.6g, %.6g] | %.6g | [%g, %g] |\n", q->name,
                q->value, q->se, q->se_boot, q->ci_lo, q->ci_hi, q->start, q->lo, q->hi);
    }
}

/* NAME.md: the residuals table. */
static void report_residuals(const cal *c, buf *md)
{
    const sim_fit *f = &c->f;
    bprintf(md, "\n## Residuals\n\n|");
    for (int32_t j = 0; j < c->ref.n_keys; j++)
        bprintf(md, " %s |", c->ref.key_names[j]);
    bprintf(md, " metric | measured | predicted | error | leave-one-out | source |\n|");
    for (int32_t j = 0; j < c->ref.n_keys + 6; j++)
        bprintf(md, "---|");
    bprintf(md, "\n");
    for (int32_t k = 0; k < f->n; k++) {
        const fs_ref_row *r = &c->ref.rows[k];
        double pred = f->pred[k], e = f->resid[k], le = f->loo_e[k];
        bprintf(md, "|");
        for (int32_t j = 0; j < c->ref.n_keys; j++)
            bprintf(md, " %s |", r->keys[j][0] ? r->keys[j] : "*");
        if (f->hold[k])
            bprintf(md, " `%s` | %.6g | %.6g | %+.1f%% | held out | %s |\n", r->metric, r->value,
                    pred, 100 * e, r->source);
        else if (sim_fit_loo_far(f, k))
            bprintf(md, " `%s` | %.6g | %.6g | %+.1f%% | **%+.1f%%** (far) | %s |\n", r->metric,
                    r->value, pred, 100 * e, 100 * le, r->source);
        else
            bprintf(md, " `%s` | %.6g | %.6g | %+.1f%% | %+.1f%% | %s |\n", r->metric, r->value,
                    pred, 100 * e, 100 * le, r->source);
    }
    if (f->n_far)
        bprintf(md,
                "\n(far): a leave-one-out error over %.0f%% (3x the in-sample RMS, at least "
                "10%%): the fit leans on that row.\n",
                100 * f->far_at);
}

/* NAME.csv: per-row residuals and leave-one-out errors. */
static void residuals_csv(const cal *c, buf *csv)
{
    const sim_fit *f = &c->f;
    for (int32_t j = 0; j < c->ref.n_keys; j++)
        bprintf(csv, "%s,", c->ref.key_names[j]);
    bprintf(csv, "metric,measured,predicted,error,loo_error,points,source\n");
    for (int32_t k = 0; k < f->n; k++) {
        const fs_ref_row *r = &c->ref.rows[k];
        for (int32_t j = 0; j < c->ref.n_keys; j++)
            bcsv(csv, r->keys[j], ",");
        bcsv(csv, r->metric, ",");
        bprintf(csv, "%.17g,%.17g,%.17g,%.17g,%d,", r->value, f->pred[k], f->resid[k], f->loo_e[k],
                c->matches[k]);
        bcsv(csv, r->source, "\n");
    }
}

/* PROFILE.lua: a device profile deriving from the base with the fitted keys. */
static void profile_lua(const cal *c, buf *pf)
{
    const sim_fit *f = &c->f;
    bprintf(pf,
            "-- %s: device profile fitted by `flashspec calibrate` (spec %s, calibration "
            "'%s').\n-- Reference measurements: %s (%d rows); RMS relative error "
            "%.2f%%, leave-one-out (%s) %.2f%%.\n-- Every value below: fitted value, "
            "standard error, the bounds of the fit.\nreturn {\n  name = \"%s\",\n  "
            "base = \"%s\",\n",
            c->prof_name, c->chunk, c->o.name, c->ref_arg, f->n, 100 * f->rms,
            loo_choices[c->o.loo], 100 * f->loo_rms, c->prof_name, c->prof_base);
    for (int32_t i = 0; i < f->np; i++) {
        const sim_fit_param *q = &f->par[i];
        if (!c->device_key[i]) continue;
        bprintf(pf, "  %s = %.6g, -- fitted: %.6g +/- %.3g (bounds %g..%g)", q->name, q->value,
                q->value, q->se, q->lo, q->hi);
        if (isfinite(q->ci_lo))
            bprintf(pf, "; bootstrap 95%% interval %.6g..%.6g", q->ci_lo, q->ci_hi);
        bprintf(pf, "\n");
    }
    bprintf(pf, "}\n");
}

/* The outputs the run writes: NAME.md, NAME.csv and the profile. */
static void write_outputs(cal *c)
{
    buf md = {0}, csv = {0}, pf = {0};
    char fname[CAL_NAME_CAP + 8];
    report_head(c, &md);
    report_residuals(c, &md);
    snprintf(fname, sizeof fname, "%s.md", c->o.name);
    add_output(c, fname, &md);
    residuals_csv(c, &csv);
    snprintf(fname, sizeof fname, "%s.csv", c->o.name);
    add_output(c, fname, &csv);
    if (c->prof_base[0]) {
        profile_lua(c, &pf);
        snprintf(fname, sizeof fname, "%s.lua", c->prof_name);
        add_output(c, fname, &pf);
    }
}

int fs_l_calibrate(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cal *c = cal_new(L);
    read_spec(c, 1);
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
    push_result(c);
    write_outputs(c);
    return 1;
}
