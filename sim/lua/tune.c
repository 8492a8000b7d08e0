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
 * integer range of at most SIM_FIT_INT_EXHAUSTIVE values is discrete; a double
 * range (or a wider integer range, rounded) is continuous.  Every combination
 * of the discrete knobs is tried (at most TUNE_MAX_COMBOS); with continuous
 * knobs, each combination runs GSL's Nelder-Mead simplex on them, in the
 * unbounded coordinate z of x = lo + (hi - lo) / (1 + exp(-z)), from the
 * policy's own value (or the middle of the range when that lies outside),
 * until the simplex is small or the combination's share of max_evals is
 * spent.  A purely discrete space is evaluated in one batch on the worker
 * threads.  Repeated knob vectors (rounded integers) are evaluated once.  The
 * search itself is sim/fit's (sim_fit.h, sim_fit_search); this file is the
 * translation between the Lua tables and it: the knobs read from the policy's
 * parameters, the objective a point run on the tuning prompts.
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
 * Options: objective, holdout and max_evals are checked against tune_keys
 * (lparams.h: type and range, one line naming the key's line).
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
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fit/sim_fit.h"
#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/lfit.h"
#include "sim/config/lparams.h"
#include "sim/lua/lpolicy.h"
#include "sim/out/rows.h"
#include "sim/sweep/sim_sweep.h"
#include "traces/trc.h"

#define TUNE_MAX_KNOBS SIM_FIT_MAX_KNOBS
#define TUNE_MAX_VALUES SIM_FIT_MAX_VALUES
#define TUNE_MAX_COMBOS 4096
#define WHAT "flashspec.tune"

/* The options checked against tune_keys. */
typedef struct tune_opts {
    char objective[64];
    double holdout;
    int32_t max_evals;
} tune_opts;

#define TO(f) offsetof(tune_opts, f)
static const eng_param_desc tune_keys[] = {
    {"objective", ENG_PARAM_STRING, TO(objective), 0, 0, 0, NULL, 64, 0, "tokens_per_s", NULL, 0,
     "the numeric result column maximised"},
    {"holdout", ENG_PARAM_DOUBLE, TO(holdout), 0, 1, 0.5, NULL, 0, 0, NULL, NULL, 0,
     "share of each point's prompts held out of the search (below 1)"},
    {"max_evals", ENG_PARAM_INT, TO(max_evals), 1, 1000000, 200, NULL, 0, 0, NULL, NULL, 0,
     "evaluations per point, at most"},
    {NULL, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
#undef TO

typedef struct tune {
    lua_State *L;
    fs_api *a;
    char chunk[PATH_MAX];
    int line;
    const ud_policy *pol;
    tune_opts o;
    sim_fit_search s;                        /* the knobs and the search (sim/fit) */
    const eng_param_desc *d[TUNE_MAX_KNOBS]; /* each knob's parameter */
    const fs_lua_knob *lk[TUNE_MAX_KNOBS];   /* a Lua policy's declared param, or NULL */
    fs_lua_knob lks[TUNE_MAX_KNOBS];         /* (lk points into it) */
    int lua;                                 /* the policy is a Lua policy (fs.policy.lua) */
    fs_guard guard;                          /* evaluations run Lua under it (lfit.h) */
    /* the point being tuned */
    int point_idx; /* stack index of its table */
    int32_t train_offset, train_count;
    /* the objective over the current point's search: finite values seen, their
     * range; and whether any point's search saw it move */
    int64_t n_finite, n_seen;
    double seen_lo, seen_hi;
    int moved;
} tune;

/* One line, exit 78: "CHUNK:LINE: flashspec.tune: " and the message. */
static int tune_raise(tune *t, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fs_raise(t->L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: %s", t->chunk, t->line, msg);
}

/* ------------------------------------------------------------- knobs */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The value at idx of knob i, as a number (a bool 0/1, a choice its index),
 * checked against the parameter's limits. */
static double knob_number(tune *t, int i, int idx)
{
    lua_State *L = t->L;
    const eng_param_desc *d = t->d[i];
    double v;
    if (d->type == ENG_PARAM_BOOL && lua_isboolean(L, idx)) {
        v = lua_toboolean(L, idx);
    } else if (d->type == ENG_PARAM_ENUM && lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        int j = 0;
        while (d->choices[j] && strcmp(d->choices[j], s) != 0)
            j++;
        if (!d->choices[j])
            fs_raise(L, SIM_CONFIG, 0,
                     "%s:%d: flashspec.tune: knob '%s': '%s' is not one of "
                     "its choices",
                     t->chunk, t->line, d->name, s);
        v = j;
    } else if (lua_type(L, idx) == LUA_TNUMBER) {
        v = lua_tonumber(L, idx);
    } else {
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: knob '%s': values must be "
                 "numbers%s (got %s)",
                 t->chunk, t->line, d->name, d->type == ENG_PARAM_ENUM ? " or choice names" : "",
                 luaL_typename(L, idx));
        v = 0;
    }
    int whole = d->type != ENG_PARAM_DOUBLE;
    if (!isfinite(v) || (whole && v != floor(v)))
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: knob '%s': %g is not %s", t->chunk,
                 t->line, d->name, v, whole ? "a whole number" : "finite");
    double lo = d->min, hi = d->max;
    if (d->type == ENG_PARAM_BOOL) lo = 0, hi = 1;
    if (d->type == ENG_PARAM_ENUM) {
        lo = 0;
        hi = 0;
        while (d->choices[(int)hi + 1])
            hi++;
    }
    if (v < lo || v > hi)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: knob '%s': %g is outside the "
                 "parameter's range [%g, %g]",
                 t->chunk, t->line, d->name, v, lo, hi);
    return v;
}

/* The policy's own value of knob i (its default or what the script set). */
static double knob_current(const tune *t, int i)
{
    if (t->lk[i]) return t->lk[i]->current;
    const unsigned char *p = t->pol->params + t->d[i]->offset;
    if (t->d[i]->type == ENG_PARAM_DOUBLE) {
        double v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The knobs' names (the keys of the table at idx), sorted; returns the count. */
static int knob_names(tune *t, int idx, const char **names)
{
    lua_State *L = t->L;
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            fs_raise(L, SIM_CONFIG, 0,
                     "%s:%d: flashspec.tune: knobs are named by the "
                     "policy's parameter names",
                     t->chunk, t->line);
        if (n == TUNE_MAX_KNOBS)
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: more than %d knobs", t->chunk,
                     t->line, TUNE_MAX_KNOBS);
        names[n++] = lua_tostring(L, -1); /* kept alive by the knobs table */
    }
    if (n == 0) tune_raise(t, "knobs is empty");
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    return n;
}

/* Knob i's parameter: a Lua policy's declared param, or the C policy's. */
static void knob_param(tune *t, int i, const char *name)
{
    const eng_policy_desc *desc = t->pol->desc;
    t->lk[i] = NULL;
    if (t->lua) { /* a Lua policy: its knobs are the params it declares */
        char err[512];
        if (fs_lua_policy_knob(t->pol->params, name, &t->lks[i], err, sizeof err) != 0)
            tune_raise(t, "%s", err);
        t->lk[i] = &t->lks[i];
        t->d[i] = &t->lks[i].d;
    } else {
        t->d[i] = eng_params_find(desc->params, name);
    }
    if (!t->d[i]) {
        const char *near = eng_params_nearest(desc->params, name);
        char hint[96] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        fs_raise(t->L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: policy %s has no knob '%s'%s",
                 t->chunk, t->line, desc->name, name, hint);
    }
    eng_param_type ty = t->d[i]->type;
    if (ty != ENG_PARAM_INT && ty != ENG_PARAM_DOUBLE && ty != ENG_PARAM_BOOL &&
        ty != ENG_PARAM_ENUM)
        tune_raise(t,
                   "knob '%s' is a %s parameter; only numbers, "
                   "booleans and choices can be searched",
                   name, ty == ENG_PARAM_STRING ? "string" : "list");
}

/* knob = { values = { ... } }: the list at vi. */
static void knob_values(tune *t, int i, const char *name, int vi)
{
    lua_State *L = t->L;
    sim_fit_knob *k = &t->s.k[i];
    if (!lua_istable(L, vi)) tune_raise(t, "knob '%s': values must be a list", name);
    lua_Integer nv = slp_list_len(L, vi, "flashspec.tune", "values", t->chunk, t->line);
    if (nv < 1 || nv > TUNE_MAX_VALUES)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: knob '%s': values must "
                 "hold 1 to %d entries",
                 t->chunk, t->line, name, TUNE_MAX_VALUES);
    k->discrete = 1;
    for (lua_Integer j = 1; j <= nv; j++) {
        lua_rawgeti(L, vi, j);
        k->values[k->n_values++] = knob_number(t, i, lua_gettop(L));
        lua_pop(L, 1);
    }
}

/* knob = { lo, hi }: the table at spec. */
static void knob_range(tune *t, int i, const char *name, int spec)
{
    lua_State *L = t->L;
    if (slp_list_len(L, spec, "flashspec.tune", name, t->chunk, t->line) != 2)
        tune_raise(t,
                   "knob '%s' needs { lo, hi } or { values = "
                   "{ ... } }",
                   name);
    lua_rawgeti(L, spec, 1);
    lua_rawgeti(L, spec, 2);
    double lo = knob_number(t, i, lua_gettop(L) - 1), hi = knob_number(t, i, lua_gettop(L));
    lua_pop(L, 2);
    if (!(lo < hi))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: knob '%s': empty range "
                 "[%g, %g] (lo must be below hi)",
                 t->chunk, t->line, name, lo, hi);
    sim_fit_knob_range(&t->s.k[i], lo, hi, t->d[i]->type != ENG_PARAM_DOUBLE, knob_current(t, i));
}

/* Knob i, name = its spec in the knobs table at idx. */
static void read_knob(tune *t, int idx, int i, const char *name)
{
    lua_State *L = t->L;
    memset(&t->s.k[i], 0, sizeof t->s.k[i]);
    knob_param(t, i, name);
    lua_getfield(L, idx, name);
    int spec = lua_gettop(L);
    if (!lua_istable(L, spec))
        tune_raise(t,
                   "knob '%s' needs { lo, hi } or { values = "
                   "{ ... } }",
                   name);
    lua_getfield(L, spec, "values");
    if (!lua_isnil(L, -1))
        knob_values(t, i, name, lua_gettop(L));
    else
        knob_range(t, i, name, spec);
    lua_settop(L, spec - 1);
}

/* The knobs table at idx: the search space, checked against max_evals. */
static void read_knobs(tune *t, int idx)
{
    const char *names[TUNE_MAX_KNOBS + 1];
    int n = knob_names(t, idx, names);
    int64_t combos = 1;
    for (int i = 0; i < n; i++) {
        read_knob(t, idx, i, names[i]);
        if (t->s.k[i].discrete) {
            combos *= t->s.k[i].n_values;
            if (combos > TUNE_MAX_COMBOS)
                fs_raise(t->L, SIM_CONFIG, 0,
                         "%s:%d: flashspec.tune: the discrete knobs make "
                         "more than %d combinations; narrow their ranges",
                         t->chunk, t->line, TUNE_MAX_COMBOS);
        }
    }
    t->s.nk = n;
    t->s.max_evals = t->o.max_evals;
    int32_t nc = sim_fit_search_continuous(&t->s);
    int64_t per = t->o.max_evals / combos;
    if (nc == 0 && combos > t->o.max_evals)
        fs_raise(t->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: %lld combinations but max_evals = "
                 "%d",
                 t->chunk, t->line, (long long)combos, t->o.max_evals);
    if (nc > 0 && per < sim_fit_search_min_budget(nc))
        fs_raise(t->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: max_evals = %d leaves %lld "
                 "evaluations for each of %lld combinations; a simplex over %d knob%s needs at "
                 "least %d",
                 t->chunk, t->line, t->o.max_evals, (long long)per, (long long)combos, nc,
                 nc == 1 ? "" : "s", (int)sim_fit_search_min_budget(nc));
}

/* -------------------------------------------------------- evaluation */

/* Pushes the policy with its knobs set to x: a C policy's params struct with
 * the values written in, or a Lua policy's file with them in its params table. */
static void push_policy(tune *t, const double *x)
{
    lua_State *L = t->L;
    if (t->lua) {
        fs_lua_policy_with(L, t->pol, t->s.nk, t->lk, x, "flashspec.tune", t->chunk, t->line);
        return;
    }
    const eng_policy_desc *desc = t->pol->desc;
    unsigned char *params = malloc(desc->params_size ? desc->params_size : 1);
    if (!params) fs_raise(L, SIM_NOMEM, 0, "out of memory");
    memcpy(params, t->pol->params, desc->params_size);
    for (int i = 0; i < t->s.nk; i++) {
        unsigned char *f = params + t->d[i]->offset;
        if (t->d[i]->type == ENG_PARAM_DOUBLE) {
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

/* The objective of a point's result (-HUGE_VAL: not a finite number); its
 * failure raised. */
static double objective_of(tune *t, const sim_sweep_staged *s)
{
    if (s->code) fs_raise(t->L, s->code, 0, "%s", s->err);
    double v = NAN;
    char text[64];
    fs_row_get(&t->a->meta, &s->row, t->o.objective, &v, text, sizeof text);
    t->n_seen++;
    if (!isfinite(v)) return -HUGE_VAL;
    if (!t->n_finite++) t->seen_lo = t->seen_hi = v;
    if (v < t->seen_lo) t->seen_lo = v;
    if (v > t->seen_hi) t->seen_hi = v;
    return v;
}

/* What a guarded evaluation is given: one knob vector, or n of them. */
typedef struct tune_eval {
    tune *t;
    int64_t n;
    const double *x; /* [n * nk] */
    double *values;  /* [n] */
} tune_eval;

/* lua_CFunction: [1] = tune_eval, [2] = the point table (stack indices are
 * this call's own, so the point is passed in).  The objective at one vector
 * on the tuning prompts. */
static int evaluate_lua(lua_State *L)
{
    tune_eval *e = lua_touserdata(L, 1);
    tune *t = e->t;
    t->point_idx = 2;
    if (sim_sweep_interrupted())
        fs_raise(L, SIM_INTERRUPTED, 0, "%s:%d: interrupted", t->chunk, t->line);
    push_point_table(t, e->x, t->train_offset, t->train_count);
    int64_t n;
    sim_sweep_staged *sp = fs_api_sweep(L, -1, t->chunk, t->line, 0, &n);
    e->values[0] = objective_of(t, &sp[0]);
    return 0;
}

/* The same at every vector, one sweep on the workers. */
static int evaluate_batch_lua(lua_State *L)
{
    tune_eval *e = lua_touserdata(L, 1);
    tune *t = e->t;
    t->point_idx = 2;
    lua_createtable(L, 0, 1);
    lua_createtable(L, (int)e->n, 0);
    for (int64_t c = 0; c < e->n; c++) {
        push_point_table(t, e->x + c * t->s.nk, t->train_offset, t->train_count);
        lua_rawseti(L, -2, (lua_Integer)c + 1);
    }
    lua_setfield(L, -2, "points");
    int64_t n;
    sim_sweep_staged *sp = fs_api_sweep(L, -1, t->chunk, t->line, 0, &n);
    for (int64_t c = 0; c < n && c < e->n; c++)
        e->values[c] = objective_of(t, &sp[c]);
    return 0;
}

/* fn behind the guard, with the point being tuned. */
static int guarded(tune *t, lua_CFunction fn, int64_t n, const double *xs, double *values)
{
    tune_eval e = {.t = t, .n = n, .x = xs, .values = values};
    int point = t->point_idx;
    int rc = fs_guard_call(&t->guard, fn, &e, point);
    t->point_idx = point;
    return rc;
}

/* sim/fit's objective at one vector, and at many. */
static int tune_objective(void *ctx, const double *x, double *value)
{
    return guarded(ctx, evaluate_lua, 1, x, value);
}

static int tune_batch(void *ctx, int64_t n, const double *xs, double *values)
{
    for (int64_t c = 0; c < n; c++)
        values[c] = -HUGE_VAL;
    return guarded(ctx, evaluate_batch_lua, n, xs, values);
}

/* ------------------------------------------------------------- main */

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

static int tune_gc(lua_State *L)
{
    tune *t = lua_touserdata(L, 1);
    sim_fit_search_free(&t->s);
    fs_guard_free(&t->guard);
    return 0;
}

static int is_tune_key(const char *k)
{
    return strcmp(k, "knobs") == 0 || eng_params_find(tune_keys, k) != NULL;
}

/* objective, holdout, max_evals (tune_keys). */
static void read_options(tune *t, int idx)
{
    lua_State *L = t->L;
    slp_check_fields(L, idx, tune_keys, &t->o, WHAT, t->chunk, t->line);
    if (fs_row_column_kind(t->o.objective) != FS_COL_NUMBER)
        tune_raise(t, "objective '%s' is not a numeric result column", t->o.objective);
    if (!(t->o.holdout < 1))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: %s: key 'holdout' = %.14g leaves no prompt to tune "
                 "on (it must be below 1)",
                 t->chunk, slp_key_line(t->chunk, t->line, "holdout"), WHAT, t->o.holdout);
}

/* policy: the starting point, a C policy or a Lua one. */
static void read_policy(tune *t, int idx)
{
    lua_getfield(t->L, idx, "policy");
    t->pol = luaL_testudata(t->L, -1, MT_POLICY);
    if (!t->pol)
        tune_raise(t, "key 'policy' must be a policy (from "
                      "flashspec.policy.NAME)");
    t->lua = fs_lua_policy_is(t->pol->desc);
    lua_pop(t->L, 1);
}

/* Pushes the sweep at idx without the tuning keys, expanded into its points;
 * returns the stack index of their list. */
static int expand_points(tune *t, int idx)
{
    lua_State *L = t->L;
    lua_newtable(L);
    int base = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
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
    if (lua_rawlen(L, pts) < 1) tune_raise(t, "the sweep has no point");
    return pts;
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
    int32_t hold = (int32_t)floor(t->o.holdout * n + 0.5);
    if (t->o.holdout > 0 && (hold < 1 || n - hold < 1))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: holdout = %g of %d prompt%s "
                 "leaves none on one side; use more prompts or holdout = 0",
                 t->chunk, t->line, t->o.holdout, (int)n, n == 1 ? "" : "s");
    t->train_offset = base;
    t->train_count = n - hold;
    *off = hold ? base + n - hold : base;
    *cnt = hold ? hold : n;
}

/* What the search chose for each point, in a Lua-owned buffer (an error
 * unwinding from any point frees it). */
typedef struct tune_choice {
    double x[TUNE_MAX_KNOBS]; /* the knobs */
    double train;             /* the objective on the tuning prompts */
    int64_t evals;            /* evaluations the search made */
} tune_choice;

/* Tunes the point at t->point_idx (point i, 1-based) into *ch. */
static void tune_point(tune *t, lua_Integer i, tune_choice *ch)
{
    t->n_finite = t->n_seen = 0;
    if (sim_fit_search_run(&t->s) != SIM_OK) {
        fs_guard_rethrow(&t->guard);
        fs_raise(t->L, SIM_NOMEM, 0, "out of memory");
    }
    memcpy(ch->x, t->s.best_x, sizeof ch->x);
    ch->train = t->s.best;
    ch->evals = t->s.evals;
    /* a search that never saw a number chose nothing: the start is no answer */
    if (t->n_finite == 0)
        tune_raise(t,
                   "objective '%s' is not a finite number at any of the %lld knob "
                   "vectors tried for point %lld (NaN or infinite everywhere); tune a "
                   "column these points give a value",
                   t->o.objective, (long long)t->n_seen, (long long)i);
    t->moved |= t->seen_hi > t->seen_lo || t->n_seen < 2;
}

/* An objective the knobs never moved, at any point, was not tuned. */
static void check_moved(tune *t)
{
    if (t->moved) return;
    char names[256] = "";
    size_t at = 0;
    for (int j = 0; j < t->s.nk && at < sizeof names; j++)
        at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", j ? ", " : "", t->d[j]->name);
    tune_raise(t,
               "objective '%s' is the same at every knob vector tried, at every point "
               "(%.17g): the knobs (%s) do not move it, so nothing was tuned",
               t->o.objective, t->seen_lo, names);
}

/* Tunes each point of the list at pts; pushes the sweep of the chosen points
 * on their held-out prompts ({ points = ... }) and returns the choices. */
static tune_choice *tune_points(tune *t, int pts)
{
    lua_State *L = t->L;
    lua_Integer np = (lua_Integer)lua_rawlen(L, pts);
    tune_choice *ch = lua_newuserdatauv(L, sizeof *ch * (size_t)np, 0);
    lua_createtable(L, 0, 1);
    lua_createtable(L, (int)np, 0);
    int final = lua_gettop(L);
    for (lua_Integer i = 1; i <= np; i++) {
        lua_rawgeti(L, pts, i);
        t->point_idx = lua_gettop(L);
        int32_t off, cnt;
        split_prompts(t, &off, &cnt);
        tune_point(t, i, &ch[i - 1]);
        push_point_table(t, ch[i - 1].x, off, cnt);
        lua_rawseti(L, final, i);
        lua_pop(L, 1);
    }
    check_moved(t);
    lua_setfield(L, final - 1, "points");
    return ch;
}

/* Pushes a Lua row's `tuned` = { knob = value } for the knobs x. */
static void push_tuned(tune *t, const double *x)
{
    lua_State *L = t->L;
    lua_createtable(L, 0, t->s.nk);
    for (int j = 0; j < t->s.nk; j++) {
        const eng_param_desc *d = t->d[j];
        double v = x[j];
        if (d->type == ENG_PARAM_DOUBLE)
            lua_pushnumber(L, v);
        else if (d->type == ENG_PARAM_BOOL)
            lua_pushboolean(L, v != 0);
        else if (d->type == ENG_PARAM_ENUM)
            lua_pushstring(L, d->choices[(int)v]);
        else
            lua_pushinteger(L, (lua_Integer)v);
        lua_setfield(L, -2, d->name);
    }
}

/* Runs the sweep on top of the stack (the chosen points), recorded; pushes
 * its rows with the search's columns and `tuned`. */
static void run_chosen(tune *t, const tune_choice *ch, lua_Integer np)
{
    lua_State *L = t->L;
    int64_t n;
    sim_sweep_staged *sp = fs_api_sweep(L, lua_gettop(L), t->chunk, t->line, 1, &n);
    for (int64_t i = 0; i < n && i < np; i++) {
        sp[i].row.tune_evals = ch[i].evals;
        sp[i].row.tune_train = ch[i].train == -HUGE_VAL ? NAN : ch[i].train;
        snprintf(sp[i].row.tune_objective, sizeof sp[i].row.tune_objective, "%s",
                 t->o.objective);
    }
    fs_api_push_rows(L, sp, n);
    int rows = lua_gettop(L);
    for (int64_t i = 0; i < n && i < np; i++) {
        lua_rawgeti(L, rows, (lua_Integer)i + 1);
        push_tuned(t, ch[i].x);
        lua_setfield(L, -2, "tuned");
        lua_pop(L, 1);
    }
}

int fs_l_tune(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    tune *t = new_owned(L, sizeof *t, tune_gc);
    t->L = L;
    t->a = fs_api_get(L);
    fs_guard_init(&t->guard, L);
    fs_caller_src(L, t->chunk, sizeof t->chunk, &t->line);
    t->s.f = tune_objective;
    t->s.batch = tune_batch;
    t->s.ctx = t;

    read_policy(t, 1);
    read_options(t, 1);
    lua_getfield(L, 1, "knobs");
    if (!lua_istable(L, -1))
        tune_raise(t, "key 'knobs' must be a table of knob = { lo, hi } "
                      "or { values = { ... } }");
    read_knobs(t, lua_gettop(L));
    lua_pop(L, 1);
    int pts = expand_points(t, 1);
    /* tune each point, then run every chosen point on its held-out prompts */
    tune_choice *ch = tune_points(t, pts);
    run_chosen(t, ch, (lua_Integer)lua_rawlen(L, pts));
    return 1;
}
