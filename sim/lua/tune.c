/*
 * tune.c -- flashspec.tune: a policy's knobs chosen per point by search.
 *
 *   local rows = flashspec.tune {
 *     device = ..., target = ..., draft = ..., trace = ...,   -- as flashspec.sweep,
 *     dram_fraction = { 0, 0.25, 0.5 },                       -- lists included
 *     policy = flashspec.policy.lever {},                     -- the starting point
 *     knobs = { theta = { 0.05, 0.95 },                       -- continuous [lo, hi]
 *               n_max = { 8, 64 },                            -- integer range
 *               b_min = { values = { 1, 2, 4 } } },           -- a discrete set
 *     objective = "tokens_per_s",  -- a numeric result column, maximised
 *     holdout = 0.5,               -- share of each point's prompts held out
 *     max_evals = 200,             -- evaluations per point, at most
 *   }
 *
 * Every point of the sweep is tuned on its own.  Its prompts are split in
 * order: the first (1 - holdout) share tunes the knobs, the rest -- which the
 * search never sees -- gives the reported row, so a tuned figure is not an
 * in-sample one (holdout = 0 tunes and reports on the same prompts, and the
 * rows say so: prompt_offset 0 and tune_train equal to the reported value).
 *
 * Search space.  A knob of type int, bool or enum, a `values` list, or an
 * integer range of at most TUNE_INT_EXHAUSTIVE values is discrete; a double
 * range (or a wider integer range, rounded) is continuous.  Every combination
 * of the discrete knobs is tried (at most TUNE_MAX_COMBOS); with continuous
 * knobs, each combination runs GSL's Nelder-Mead simplex
 * (gsl_multimin_fminimizer_nmsimplex2) on them, in the unbounded coordinate
 * z of x = lo + (hi - lo) / (1 + exp(-z)), from the policy's own value (or the
 * middle of the range when that lies outside), until the simplex is smaller
 * than TUNE_SIZE_TOL or the combination's share of max_evals is spent.  A
 * purely discrete space is evaluated in one batch on the worker threads.
 * Repeated knob vectors (rounded integers) are evaluated once.
 *
 * Determinism: the search order is fixed (knobs by name, values in order,
 * the simplex deterministic) and every evaluation is an ordinary point (its
 * id, hence its seed, from its parameters), so rows are identical at any -j
 * and MPI rank count.  Ties keep the first knob vector found.
 *
 * Rows: one per point, as flashspec.sweep returns and records them, with the
 * chosen knobs in the policy and policy_params, tune_evals (evaluations the
 * search made), tune_train (the objective on the tuning prompts); the Lua
 * rows also carry `tuned` = { knob = value }.
 *
 * Errors (one line, exit 78, nothing run): an unknown knob (nearest name), a
 * knob of a type that cannot be searched (string, list), an empty range
 * (lo >= hi), a range or value outside the parameter's limits, an unknown or
 * non-numeric objective, a holdout outside [0, 1) or leaving a point with no
 * prompt on either side, too many combinations, max_evals too small for the
 * space; an objective that is not a finite number at any knob vector a
 * point's search tried (NaN or infinite everywhere), or that is the same at
 * every vector tried at every point (the knobs do not move it).  A failing
 * evaluation fails the call with that point's error.
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/lpolicy.h"
#include "sim/lua/rows.h"
#include "sim/sweep/sim_sweep.h"
#include "traces/trc.h"

#define TUNE_MAX_KNOBS 16
#define TUNE_MAX_VALUES 256
#define TUNE_MAX_COMBOS 4096
#define TUNE_INT_EXHAUSTIVE 16
#define TUNE_SIZE_TOL 1e-3
#define TUNE_DEFAULT_EVALS 200

typedef struct knob {
    const eng_param_desc *d;
    int discrete;
    int n_values;
    double values[TUNE_MAX_VALUES];
    double lo, hi, start; /* continuous */
    int integer;          /* continuous values are rounded */
    const fs_lua_knob *lk; /* a Lua policy's declared param (d points into it), or NULL */
} knob;

typedef struct tune {
    lua_State *L;
    fs_api *a;
    char chunk[PATH_MAX];
    int line;
    const ud_policy *pol;
    knob k[TUNE_MAX_KNOBS];
    int nk;
    int cont[TUNE_MAX_KNOBS]; /* indices of the continuous knobs */
    int nc;
    char objective[64];
    double holdout;
    int max_evals;
    /* the point being tuned */
    int point_idx; /* stack index of its table */
    int32_t train_offset, train_count;
    double x[TUNE_MAX_KNOBS]; /* the knob vector being evaluated */
    int64_t evals;
    double *cx, *cv; /* evaluated vectors (nk each) and their values */
    int64_t n_cache, cap_cache;
    int err_ref;
    /* the objective over the current point's search: finite values seen, their
     * range; and whether any point's search saw it move */
    int64_t n_finite, n_seen;
    double seen_lo, seen_hi;
    int moved;
    int lua;                         /* the policy is a Lua policy (fs.policy.lua) */
    fs_lua_knob lks[TUNE_MAX_KNOBS]; /* its knobs, from its params declaration */
} tune;

/* One line, exit 78: "CHUNK:LINE: flashspec.tune: " and the message. */
static int tune_raise(tune *t, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fs_raise(t->L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: %s", t->chunk, t->line, msg);
}

/* ------------------------------------------------------------- knobs */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static double knob_number(tune *t, const knob *k, int idx)
{
    lua_State *L = t->L;
    const eng_param_desc *d = k->d;
    double v;
    if (d->type == ENG_PARAM_BOOL && lua_isboolean(L, idx)) {
        v = lua_toboolean(L, idx);
    } else if (d->type == ENG_PARAM_ENUM && lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        int i = 0;
        while (d->choices[i] && strcmp(d->choices[i], s) != 0) i++;
        if (!d->choices[i])
            fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: knob '%s': '%s' is not one of "
                     "its choices", t->chunk, t->line, d->name, s);
        v = i;
    } else if (lua_type(L, idx) == LUA_TNUMBER) {
        v = lua_tonumber(L, idx);
    } else {
        fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: knob '%s': values must be "
                 "numbers%s (got %s)", t->chunk, t->line, d->name,
                 d->type == ENG_PARAM_ENUM ? " or choice names" : "", luaL_typename(L, idx));
        v = 0;
    }
    int whole = d->type != ENG_PARAM_DOUBLE;
    if (!isfinite(v) || (whole && v != floor(v)))
        fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: knob '%s': %g is not %s",
                 t->chunk, t->line, d->name, v, whole ? "a whole number" : "finite");
    double lo = d->min, hi = d->max;
    if (d->type == ENG_PARAM_BOOL) lo = 0, hi = 1;
    if (d->type == ENG_PARAM_ENUM) {
        lo = 0;
        hi = 0;
        while (d->choices[(int)hi + 1]) hi++;
    }
    if (v < lo || v > hi)
        fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: knob '%s': %g is outside the "
                 "parameter's range [%g, %g]", t->chunk, t->line, d->name, v, lo, hi);
    return v;
}

/* The policy's own value of knob k (its default or what the script set). */
static double knob_current(const tune *t, const knob *k)
{
    if (k->lk) return k->lk->current;
    const unsigned char *p = t->pol->params + k->d->offset;
    if (k->d->type == ENG_PARAM_DOUBLE) {
        double v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void read_knobs(tune *t, int idx)
{
    lua_State *L = t->L;
    const char *names[TUNE_MAX_KNOBS + 1];
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: knobs are named by the "
                     "policy's parameter names", t->chunk, t->line);
        if (n == TUNE_MAX_KNOBS)
            fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: more than %d knobs", t->chunk,
                     t->line, TUNE_MAX_KNOBS);
        names[n++] = lua_tostring(L, -1); /* kept alive by the knobs table */
    }
    if (n == 0) tune_raise(t, "knobs is empty");
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    const eng_policy_desc *desc = t->pol->desc;
    int64_t combos = 1;
    for (int i = 0; i < n; i++) {
        knob *k = &t->k[i];
        memset(k, 0, sizeof *k);
        if (t->lua) { /* a Lua policy: its knobs are the params it declares */
            char err[512];
            if (fs_lua_policy_knob(t->pol->params, names[i], &t->lks[i], err, sizeof err) != 0)
                tune_raise(t, "%s", err);
            k->lk = &t->lks[i];
            k->d = &t->lks[i].d;
        } else {
            k->d = eng_params_find(desc->params, names[i]);
        }
        if (!k->d) {
            const char *near = eng_params_nearest(desc->params, names[i]);
            char hint[96] = "";
            if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
            fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: policy %s has no knob '%s'%s",
                     t->chunk, t->line, desc->name, names[i], hint);
        }
        eng_param_type ty = k->d->type;
        if (ty != ENG_PARAM_INT && ty != ENG_PARAM_DOUBLE && ty != ENG_PARAM_BOOL &&
            ty != ENG_PARAM_ENUM)
            tune_raise(t, "knob '%s' is a %s parameter; only numbers, "
                          "booleans and choices can be searched", names[i],
                       ty == ENG_PARAM_STRING ? "string" : "list");
        lua_getfield(L, idx, names[i]);
        int spec = lua_gettop(L);
        if (!lua_istable(L, spec))
            tune_raise(t, "knob '%s' needs { lo, hi } or { values = "
                          "{ ... } }", names[i]);
        lua_getfield(L, spec, "values");
        if (!lua_isnil(L, -1)) {
            if (!lua_istable(L, -1))
                tune_raise(t, "knob '%s': values must be a list", names[i]);
            int vi = lua_gettop(L);
            lua_Integer nv = (lua_Integer)lua_rawlen(L, vi);
            if (nv < 1 || nv > TUNE_MAX_VALUES)
                fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: knob '%s': values must "
                         "hold 1 to %d entries", t->chunk, t->line, names[i], TUNE_MAX_VALUES);
            k->discrete = 1;
            for (lua_Integer j = 1; j <= nv; j++) {
                lua_rawgeti(L, vi, j);
                k->values[k->n_values++] = knob_number(t, k, lua_gettop(L));
                lua_pop(L, 1);
            }
        } else {
            if (lua_rawlen(L, spec) != 2)
                tune_raise(t, "knob '%s' needs { lo, hi } or { values = "
                              "{ ... } }", names[i]);
            lua_rawgeti(L, spec, 1);
            lua_rawgeti(L, spec, 2);
            double lo = knob_number(t, k, lua_gettop(L) - 1), hi = knob_number(t, k, lua_gettop(L));
            lua_pop(L, 2);
            if (!(lo < hi))
                fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: knob '%s': empty range "
                         "[%g, %g] (lo must be below hi)", t->chunk, t->line, names[i], lo, hi);
            if (ty != ENG_PARAM_DOUBLE && hi - lo + 1 <= TUNE_INT_EXHAUSTIVE) {
                k->discrete = 1;
                for (double v = lo; v <= hi; v += 1.0) k->values[k->n_values++] = v;
            } else {
                k->lo = lo;
                k->hi = hi;
                k->integer = ty != ENG_PARAM_DOUBLE;
                double cur = knob_current(t, k);
                k->start = cur > lo && cur < hi ? cur : 0.5 * (lo + hi);
                t->cont[t->nc++] = i;
            }
        }
        lua_settop(L, spec - 1);
        if (k->discrete) {
            combos *= k->n_values;
            if (combos > TUNE_MAX_COMBOS)
                fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: the discrete knobs make "
                         "more than %d combinations; narrow their ranges", t->chunk, t->line,
                         TUNE_MAX_COMBOS);
        }
    }
    t->nk = n;
    int64_t per = t->max_evals / combos;
    if (t->nc == 0 && combos > t->max_evals)
        fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: %lld combinations but max_evals = "
                 "%d", t->chunk, t->line, (long long)combos, t->max_evals);
    if (t->nc > 0 && per < 2 * (t->nc + 1) + 1)
        fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: max_evals = %d leaves %lld "
                 "evaluations for each of %lld combinations; a simplex over %d knob%s needs at "
                 "least %d", t->chunk, t->line, t->max_evals, (long long)per, (long long)combos,
                 t->nc, t->nc == 1 ? "" : "s", 2 * (t->nc + 1) + 1);
}

/* -------------------------------------------------------- evaluation */

/* Pushes the policy with its knobs set to x: a C policy's params struct with
 * the values written in, or a Lua policy's file with them in its params table. */
static void push_policy(tune *t, const double *x)
{
    lua_State *L = t->L;
    if (t->lua) {
        const fs_lua_knob *ks[TUNE_MAX_KNOBS];
        for (int i = 0; i < t->nk; i++)
            ks[i] = t->k[i].lk;
        fs_lua_policy_with(L, t->pol, t->nk, ks, x, "flashspec.tune", t->chunk, t->line);
        return;
    }
    const eng_policy_desc *desc = t->pol->desc;
    unsigned char *params = malloc(desc->params_size ? desc->params_size : 1);
    if (!params) fs_raise(L, FS_EXIT_SOFTWARE, 0, "out of memory");
    memcpy(params, t->pol->params, desc->params_size);
    for (int i = 0; i < t->nk; i++) {
        unsigned char *f = params + t->k[i].d->offset;
        if (t->k[i].d->type == ENG_PARAM_DOUBLE) {
            memcpy(f, &x[i], sizeof x[i]);
        } else {
            int32_t v = (int32_t)x[i];
            memcpy(f, &v, sizeof v);
        }
    }
    fs_policy_push(L, desc, params);
    free(params);
}

/* Pushes a point table: the point being tuned with the policy's knobs set to
 * x, replaying prompts [offset, offset + count). */
static void push_point_table(tune *t, const double *x, int32_t offset, int32_t count)
{
    lua_State *L = t->L;
    lua_newtable(L);
    int dst = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, t->point_idx)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, dst);
    }
    push_policy(t, x);
    lua_setfield(L, dst, "policy");
    lua_pushinteger(L, offset);
    lua_setfield(L, dst, "prompt_offset");
    lua_pushinteger(L, count);
    lua_setfield(L, dst, "prompts");
}

static double objective_of(tune *t, const fs_staged *s)
{
    if (s->code) fs_raise(t->L, s->code, 0, "%s", s->err);
    double v = NAN;
    char text[64];
    fs_row_get(&t->a->meta, &s->row, t->objective, &v, text, sizeof text);
    t->n_seen++;
    if (!isfinite(v)) return -HUGE_VAL;
    if (!t->n_finite++) t->seen_lo = t->seen_hi = v;
    if (v < t->seen_lo) t->seen_lo = v;
    if (v > t->seen_hi) t->seen_hi = v;
    return v;
}

static int cache_find(const tune *t, const double *x, double *v)
{
    for (int64_t i = 0; i < t->n_cache; i++)
        if (memcmp(t->cx + i * t->nk, x, sizeof(double) * (size_t)t->nk) == 0) {
            *v = t->cv[i];
            return 1;
        }
    return 0;
}

static void cache_add(tune *t, const double *x, double v)
{
    if (t->n_cache == t->cap_cache) {
        int64_t cap = t->cap_cache ? 2 * t->cap_cache : 64;
        double *cx = realloc(t->cx, sizeof(double) * (size_t)(cap * t->nk));
        if (cx) t->cx = cx;
        double *cv = cx ? realloc(t->cv, sizeof(double) * (size_t)cap) : NULL;
        if (cv) t->cv = cv;
        if (!cx || !cv) fs_raise(t->L, FS_EXIT_SOFTWARE, 0, "out of memory");
        t->cap_cache = cap;
    }
    memcpy(t->cx + t->n_cache * t->nk, x, sizeof(double) * (size_t)t->nk);
    t->cv[t->n_cache++] = v;
}

/* The objective at x on the tuning prompts (cached). */
static double evaluate(tune *t, const double *x)
{
    double v;
    if (cache_find(t, x, &v)) return v;
    if (sim_sweep_interrupted())
        fs_raise(t->L, FS_EXIT_INTERRUPTED, 0, "%s:%d: interrupted", t->chunk, t->line);
    lua_State *L = t->L;
    int top = lua_gettop(L);
    push_point_table(t, x, t->train_offset, t->train_count);
    int64_t n;
    fs_staged *sp = fs_api_sweep(L, -1, t->chunk, t->line, 0, &n);
    v = objective_of(t, &sp[0]);
    lua_settop(L, top);
    t->evals++;
    cache_add(t, x, v);
    return v;
}

static double knob_x(const knob *k, double z)
{
    double x = k->lo + (k->hi - k->lo) / (1.0 + exp(-z));
    if (k->integer) x = floor(x + 0.5);
    return x < k->lo ? k->lo : x > k->hi ? k->hi : x;
}

static double knob_z(const knob *k, double x)
{
    double u = (x - k->lo) / (k->hi - k->lo);
    u = u < 0.01 ? 0.01 : u > 0.99 ? 0.99 : u;
    return log(u / (1.0 - u));
}

/* lua_CFunction: [1] = tune, [2] = double *, [3] = the point table (stack
 * indices are this call's own, so the point is passed in). */
static int evaluate_lua(lua_State *L)
{
    tune *t = lua_touserdata(L, 1);
    double *out = lua_touserdata(L, 2);
    t->point_idx = 3;
    *out = evaluate(t, t->x);
    return 0;
}

/* The simplex's function: minus the objective, an error kept for later
 * (a Lua error never unwinds through GSL). */
static double simplex_f(const gsl_vector *z, void *ctx)
{
    tune *t = ctx;
    if (t->err_ref != LUA_NOREF) return GSL_POSINF;
    for (int c = 0; c < t->nc; c++)
        t->x[t->cont[c]] = knob_x(&t->k[t->cont[c]], gsl_vector_get(z, (size_t)c));
    double v = 0.0;
    lua_State *L = t->L;
    int point = t->point_idx;
    lua_pushcfunction(L, evaluate_lua);
    lua_pushlightuserdata(L, t);
    lua_pushlightuserdata(L, &v);
    lua_pushvalue(L, point);
    int rc = lua_pcall(L, 3, 0, 0);
    t->point_idx = point;
    if (rc != LUA_OK) {
        t->err_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        return GSL_POSINF;
    }
    return -v;
}

static void rethrow(tune *t)
{
    if (t->err_ref == LUA_NOREF) return;
    lua_rawgeti(t->L, LUA_REGISTRYINDEX, t->err_ref);
    luaL_unref(t->L, LUA_REGISTRYINDEX, t->err_ref);
    t->err_ref = LUA_NOREF;
    lua_error(t->L);
}

/* GSL objects of one simplex run, freed by __gc also when an error unwinds. */
typedef struct simplex_mem {
    gsl_multimin_fminimizer *s;
    gsl_vector *z, *step;
} simplex_mem;

static void simplex_free(simplex_mem *m)
{
    if (m->s) gsl_multimin_fminimizer_free(m->s);
    if (m->z) gsl_vector_free(m->z);
    if (m->step) gsl_vector_free(m->step);
    memset(m, 0, sizeof *m);
}

/* A zeroed userdata of size bytes on the stack whose finaliser gc frees what
 * it holds, so that an error unwinding through the caller leaks nothing. */
static void *new_owned(lua_State *L, size_t size, lua_CFunction gc)
{
    void *p = lua_newuserdatauv(L, size, 0);
    memset(p, 0, size);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    return p;
}

static int simplex_gc(lua_State *L)
{
    simplex_free(lua_touserdata(L, 1));
    return 0;
}

/* Simplex over the continuous knobs, the discrete ones fixed in t->x; at
 * most budget evaluations.  Updates *best / best_x. */
static void run_simplex(tune *t, int64_t budget, double *best, double *best_x)
{
    lua_State *L = t->L;
    simplex_mem *m = new_owned(L, sizeof *m, simplex_gc);
    m->s = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, (size_t)t->nc);
    m->z = gsl_vector_alloc((size_t)t->nc);
    m->step = gsl_vector_alloc((size_t)t->nc);
    if (!m->s || !m->z || !m->step) fs_raise(L, FS_EXIT_SOFTWARE, 0, "out of memory");
    for (int c = 0; c < t->nc; c++) {
        const knob *k = &t->k[t->cont[c]];
        gsl_vector_set(m->z, (size_t)c, knob_z(k, k->start));
        gsl_vector_set(m->step, (size_t)c, 1.0);
    }
    gsl_multimin_function fn = {.f = simplex_f, .n = (size_t)t->nc, .params = t};
    int64_t start = t->evals;
    gsl_multimin_fminimizer_set(m->s, &fn, m->z, m->step);
    rethrow(t);
    for (int it = 0; it < 10000 && t->evals - start < budget; it++) {
        int st = gsl_multimin_fminimizer_iterate(m->s);
        rethrow(t);
        if (st) break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m->s), TUNE_SIZE_TOL) ==
            GSL_SUCCESS)
            break;
    }
    /* the best vector seen, from the cache (the simplex's own minimum is one
     * of them; scanning keeps the first of equal values) */
    for (int64_t i = 0; i < t->n_cache; i++) {
        const double *x = t->cx + i * t->nk;
        int same = 1;
        for (int j = 0; j < t->nk && same; j++)
            if (t->k[j].discrete && x[j] != t->x[j]) same = 0;
        if (same && t->cv[i] > *best) {
            *best = t->cv[i];
            memcpy(best_x, x, sizeof(double) * (size_t)t->nk);
        }
    }
    simplex_free(m);
    lua_pop(L, 1);
}

/* ------------------------------------------------------------- main */

static const char *const tune_only[] = {"knobs", "objective", "holdout", "max_evals", NULL};

static int is_tune_key(const char *k)
{
    for (int i = 0; tune_only[i]; i++)
        if (strcmp(k, tune_only[i]) == 0) return 1;
    return 0;
}

static void read_options(tune *t, int idx)
{
    lua_State *L = t->L;
    lua_getfield(L, idx, "objective");
    if (lua_isnil(L, -1)) {
        snprintf(t->objective, sizeof t->objective, "tokens_per_s");
    } else {
        const char *o = lua_tostring(L, -1);
        if (lua_type(L, -1) != LUA_TSTRING || fs_row_column_kind(o) != FS_COL_NUMBER)
            tune_raise(t, "objective '%s' is not a numeric result column",
                       o ? o : luaL_typename(L, -1));
        snprintf(t->objective, sizeof t->objective, "%s", o);
    }
    lua_getfield(L, idx, "holdout");
    t->holdout = lua_isnil(L, -1) ? 0.5 : lua_tonumber(L, -1);
    if (!lua_isnil(L, -1) && (!lua_isnumber(L, -1) || !(t->holdout >= 0 && t->holdout < 1)))
        tune_raise(t, "holdout must be a number in [0, 1)");
    lua_getfield(L, idx, "max_evals");
    if (lua_isnil(L, -1)) {
        t->max_evals = TUNE_DEFAULT_EVALS;
    } else {
        int ok;
        lua_Integer m = lua_tointegerx(L, -1, &ok);
        if (!ok || m < 1 || m > 1000000)
            tune_raise(t, "max_evals must be an integer in [1, 1e6]");
        t->max_evals = (int)m;
    }
    lua_pop(L, 3);
}

/* Sets the tuning split of the point table at t->point_idx; returns the
 * held-out offset and count through *off / *cnt. */
static void split_prompts(tune *t, int32_t *off, int32_t *cnt)
{
    lua_State *L = t->L;
    lua_getfield(L, t->point_idx, "trace");
    const ud_trace *tr = luaL_testudata(L, -1, MT_TRACE);
    lua_getfield(L, t->point_idx, "prompts");
    lua_getfield(L, t->point_idx, "prompt_offset");
    int32_t base = (int32_t)lua_tointeger(L, -1), want = (int32_t)lua_tointeger(L, -2);
    lua_pop(L, 3);
    if (!tr) tune_raise(t, "every point needs a trace");
    const trc_trace *tt = fs_trace_get(L, tr, t->chunk, t->line);
    int32_t total = trc_get_meta(tt)->n_prompts - base;
    int32_t n = want > 0 && want < total ? want : total;
    int32_t hold = (int32_t)floor(t->holdout * n + 0.5);
    if (t->holdout > 0 && (hold < 1 || n - hold < 1))
        fs_raise(L, FS_EXIT_CONFIG, 0, "%s:%d: flashspec.tune: holdout = %g of %d prompt%s "
                 "leaves none on one side; use more prompts or holdout = 0", t->chunk, t->line,
                 t->holdout, (int)n, n == 1 ? "" : "s");
    t->train_offset = base;
    t->train_count = n - hold;
    *off = hold ? base + n - hold : base;
    *cnt = hold ? hold : n;
}

/* Tunes the point at t->point_idx: best_x, its training value and the
 * evaluations made. */
static void tune_point(tune *t, double *best_x, double *best)
{
    lua_State *L = t->L;
    int64_t combos = 1;
    for (int i = 0; i < t->nk; i++)
        if (t->k[i].discrete) combos *= t->k[i].n_values;
    *best = -HUGE_VAL;
    int have = 0;
    t->n_cache = 0;
    int idx[TUNE_MAX_KNOBS] = {0};
    if (t->nc == 0) {
        /* every combination, one batch on the workers */
        int top = lua_gettop(L);
        lua_createtable(L, 0, 1);
        lua_createtable(L, (int)combos, 0);
        for (int64_t c = 0; c < combos; c++) {
            for (int i = 0; i < t->nk; i++) t->x[i] = t->k[i].values[idx[i]];
            push_point_table(t, t->x, t->train_offset, t->train_count);
            lua_rawseti(L, -2, (lua_Integer)c + 1);
            for (int i = t->nk - 1; i >= 0; i--) /* last knob fastest */
                if (++idx[i] < t->k[i].n_values) break; else idx[i] = 0;
        }
        lua_setfield(L, -2, "points");
        int64_t n;
        fs_staged *sp = fs_api_sweep(L, -1, t->chunk, t->line, 0, &n);
        memset(idx, 0, sizeof idx);
        for (int64_t c = 0; c < n; c++) {
            for (int i = 0; i < t->nk; i++) t->x[i] = t->k[i].values[idx[i]];
            double v = objective_of(t, &sp[c]);
            if (!have || v > *best) {
                *best = v;
                memcpy(best_x, t->x, sizeof(double) * (size_t)t->nk);
                have = 1;
            }
            for (int i = t->nk - 1; i >= 0; i--)
                if (++idx[i] < t->k[i].n_values) break; else idx[i] = 0;
        }
        t->evals += n;
        lua_settop(L, top);
        return;
    }
    int64_t budget = t->max_evals / combos;
    for (int64_t c = 0; c < combos; c++) {
        for (int i = 0; i < t->nk; i++)
            t->x[i] = t->k[i].discrete ? t->k[i].values[idx[i]] : t->k[i].start;
        if (!have) memcpy(best_x, t->x, sizeof(double) * (size_t)t->nk);
        have = 1;
        run_simplex(t, budget, best, best_x);
        for (int i = t->nk - 1; i >= 0; i--) {
            if (!t->k[i].discrete) continue;
            if (++idx[i] < t->k[i].n_values) break;
            idx[i] = 0;
        }
    }
}

static int tune_gc(lua_State *L)
{
    tune *t = lua_touserdata(L, 1);
    free(t->cx);
    free(t->cv);
    t->cx = t->cv = NULL;
    return 0;
}

int fs_l_tune(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    tune *t = new_owned(L, sizeof *t, tune_gc);
    t->L = L;
    t->a = fs_api_get(L);
    t->err_ref = LUA_NOREF;
    fs_caller_src(L, t->chunk, sizeof t->chunk, &t->line);
    gsl_set_error_handler_off();

    lua_getfield(L, 1, "policy");
    t->pol = luaL_testudata(L, -1, MT_POLICY);
    if (!t->pol)
        tune_raise(t, "key 'policy' must be a policy (from "
                      "flashspec.policy.NAME)");
    t->lua = fs_lua_policy_is(t->pol->desc);
    lua_pop(L, 1);
    read_options(t, 1);
    lua_getfield(L, 1, "knobs");
    if (!lua_istable(L, -1))
        tune_raise(t, "key 'knobs' must be a table of knob = { lo, hi } "
                      "or { values = { ... } }");
    read_knobs(t, lua_gettop(L));
    lua_pop(L, 1);

    /* the sweep without the tuning keys, expanded into its points */
    lua_newtable(L);
    int base = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) == LUA_TSTRING && is_tune_key(lua_tostring(L, -2))) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, base);
    }
    fs_api_expand(L, base, t->chunk, t->line);
    int pts = lua_gettop(L);
    lua_Integer np = (lua_Integer)lua_rawlen(L, pts);
    if (np < 1) tune_raise(t, "the sweep has no point");

    /* tune each point, then run every chosen point on its held-out prompts */
    /* Lua-owned buffers: an error unwinding from any point frees them */
    size_t bx = sizeof(double) * (size_t)np * TUNE_MAX_KNOBS, bv = sizeof(double) * (size_t)np;
    unsigned char *mem = lua_newuserdatauv(L, bx + bv + sizeof(int64_t) * (size_t)np, 0);
    double *best_x = (double *)mem, *best_v = (double *)(mem + bx);
    int64_t *evals = (int64_t *)(mem + bx + bv);
    lua_createtable(L, 0, 1);
    lua_createtable(L, (int)np, 0);
    int final = lua_gettop(L);
    for (lua_Integer i = 1; i <= np; i++) {
        lua_rawgeti(L, pts, i);
        t->point_idx = lua_gettop(L);
        int32_t off, cnt;
        split_prompts(t, &off, &cnt);
        int64_t e0 = t->evals;
        t->n_finite = t->n_seen = 0;
        tune_point(t, best_x + (i - 1) * TUNE_MAX_KNOBS, &best_v[i - 1]);
        evals[i - 1] = t->evals - e0;
        /* a search that never saw a number chose nothing: the start is no answer */
        if (t->n_finite == 0)
            tune_raise(t, "objective '%s' is not a finite number at any of the %lld knob "
                          "vectors tried for point %lld (NaN or infinite everywhere); tune a "
                          "column these points give a value", t->objective,
                       (long long)t->n_seen, (long long)i);
        t->moved |= t->seen_hi > t->seen_lo || t->n_seen < 2;
        push_point_table(t, best_x + (i - 1) * TUNE_MAX_KNOBS, off, cnt);
        lua_rawseti(L, final, i);
        lua_pop(L, 1);
    }
    /* an objective the knobs never moved, at any point, was not tuned */
    if (!t->moved) {
        char names[256] = "";
        size_t at = 0;
        for (int j = 0; j < t->nk && at < sizeof names; j++)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", j ? ", " : "",
                                   t->k[j].d->name);
        tune_raise(t, "objective '%s' is the same at every knob vector tried, at every point "
                      "(%.17g): the knobs (%s) do not move it, so nothing was tuned",
                   t->objective, t->seen_lo, names);
    }
    lua_setfield(L, final - 1, "points");
    int64_t n;
    fs_staged *sp = fs_api_sweep(L, final - 1, t->chunk, t->line, 1, &n);
    for (int64_t i = 0; i < n && i < np; i++) {
        sp[i].row.tune_evals = evals[i];
        sp[i].row.tune_train = best_v[i] == -HUGE_VAL ? NAN : best_v[i];
    }
    fs_api_push_rows(L, sp, n);
    int rows = lua_gettop(L);
    for (int64_t i = 0; i < n && i < np; i++) {
        lua_rawgeti(L, rows, (lua_Integer)i + 1);
        lua_createtable(L, 0, t->nk);
        for (int j = 0; j < t->nk; j++) {
            const knob *k = &t->k[j];
            double v = best_x[i * TUNE_MAX_KNOBS + j];
            if (k->d->type == ENG_PARAM_DOUBLE)
                lua_pushnumber(L, v);
            else if (k->d->type == ENG_PARAM_BOOL)
                lua_pushboolean(L, v != 0);
            else if (k->d->type == ENG_PARAM_ENUM)
                lua_pushstring(L, k->d->choices[(int)v]);
            else
                lua_pushinteger(L, (lua_Integer)v);
            lua_setfield(L, -2, k->d->name);
        }
        lua_setfield(L, -2, "tuned");
        lua_pop(L, 1);
    }
    return 1;
}
