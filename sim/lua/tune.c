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
 * of the discrete knobs is tried (at most SIM_FIT_TUNE_MAX_COMBOS); with
 * continuous knobs, each combination runs GSL's Nelder-Mead simplex on them,
 * in the unbounded coordinate z of x = lo + (hi - lo) / (1 + exp(-z)), from the
 * policy's own value (or the middle of the range when that lies outside),
 * until the simplex is small or the combination's share of max_evals is
 * spent.  A purely discrete space is evaluated in one batch on the worker
 * threads.  Repeated knob vectors (rounded integers) are evaluated once.  The
 * driver and the search are sim/fit's (sim_fit_tune.h: the space's checks,
 * the prompt split, the search per point, the checks of what it chose;
 * sim_fit.h: sim_fit_search); this file is the translation between the Lua
 * tables and them: the knobs read from the policy's parameters, the points
 * run at knob vectors, the rows pushed.
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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fit/sim_fit_tune.h"
#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/lfit.h"
#include "sim/config/lparams.h"
#include "sim/lua/api_lpolicy.h"
#include "sim/out/rows.h"
#include "sim/sweep/sim_sweep.h"
#include "traces/trc.h"

#define TUNE_MAX_KNOBS SIM_FIT_MAX_KNOBS
#define WHAT "flashspec.tune"

#define TO(f) offsetof(sim_fit_tune_opts, f)
static const eng_param_desc tune_keys[] = {
    {"objective", ENG_PARAM_STRING, TO(objective), 0, 0, 0, NULL, SIM_FIT_TUNE_OBJECTIVE_CAP, 0,
     "tokens_per_s", NULL, 0, "the numeric result column maximised"},
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
    const ud_policy *pol;
    sim_fit_tune ft;                       /* the driver: options, knobs, choices */
    const lp_knob *lk[TUNE_MAX_KNOBS]; /* a Lua policy's declared param, or NULL */
    lp_knob lks[TUNE_MAX_KNOBS];       /* (lk points into it) */
    int lua;                               /* the policy is a Lua policy (fs.policy.lua) */
    fs_guard guard;                        /* evaluations run Lua under it (lfit.h) */
    int pts;                               /* stack index of the points' list */
    int point_idx;                         /* stack index of the point being built */
} tune;

/* Raises the driver's failure: the error a callback raised (kept by the
 * guard), else the driver's line. */
static void tune_check(tune *t, int rc)
{
    if (rc == SIM_OK) return;
    fs_guard_rethrow(&t->guard);
    fs_raise(t->L, rc, 0, "%s", t->ft.err);
}

/* ------------------------------------------------------------- knobs */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The value at idx of knob i, as a number (a bool 0/1, a choice its index),
 * checked against the parameter's limits (sim_fit_tune_knob_check). */
static double knob_number(tune *t, int i, int idx)
{
    lua_State *L = t->L;
    const eng_param_desc *d = t->ft.d[i];
    double v = 0;
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
                     t->ft.chunk, t->ft.line, d->name, s);
        v = j;
    } else if (lua_type(L, idx) == LUA_TNUMBER) {
        v = lua_tonumber(L, idx);
    } else {
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: knob '%s': values must be "
                 "numbers%s (got %s)",
                 t->ft.chunk, t->ft.line, d->name,
                 d->type == ENG_PARAM_ENUM ? " or choice names" : "", luaL_typename(L, idx));
    }
    return v;
}

/* The policy's own value of knob i (its default or what the script set). */
static double knob_current(const tune *t, int i)
{
    if (t->lk[i]) return t->lk[i]->current;
    const unsigned char *p = t->pol->params + t->ft.d[i]->offset;
    if (t->ft.d[i]->type == ENG_PARAM_DOUBLE) {
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
                     t->ft.chunk, t->ft.line);
        if (n == TUNE_MAX_KNOBS)
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: more than %d knobs", t->ft.chunk,
                     t->ft.line, TUNE_MAX_KNOBS);
        names[n++] = lua_tostring(L, -1); /* kept alive by the knobs table */
    }
    if (n == 0)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: knobs is empty", t->ft.chunk,
                 t->ft.line);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    return n;
}

/* Knob i's parameter: a Lua policy's declared param, or the C policy's. */
static void knob_param(tune *t, int i, const char *name)
{
    const eng_policy_desc *desc = t->pol->desc;
    const eng_param_desc *d;
    t->lk[i] = NULL;
    if (t->lua) { /* a Lua policy: its knobs are the params it declares */
        char err[512];
        if (lp_knob_read(t->pol->params, name, &t->lks[i], err, sizeof err) != 0)
            fs_raise(t->L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: %s", t->ft.chunk, t->ft.line,
                     err);
        t->lk[i] = &t->lks[i];
        d = &t->lks[i].d;
    } else {
        d = eng_params_find(desc->params, name);
    }
    if (!d) {
        const char *near = eng_params_nearest(desc->params, name);
        char hint[96] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        fs_raise(t->L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: policy %s has no knob '%s'%s",
                 t->ft.chunk, t->ft.line, desc->name, name, hint);
    }
    tune_check(t, sim_fit_tune_knob(&t->ft, i, d));
}

/* knob = { values = { ... } }: the list at vi. */
static void knob_values(tune *t, int i, const char *name, int vi)
{
    lua_State *L = t->L;
    if (!lua_istable(L, vi))
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: knob '%s': values must be a list",
                 t->ft.chunk, t->ft.line, name);
    lua_Integer nv = slp_list_len(L, vi, "flashspec.tune", "values", t->ft.chunk, t->ft.line);
    tune_check(t, sim_fit_tune_knob_list(&t->ft, i, nv));
    for (lua_Integer j = 1; j <= nv; j++) {
        lua_rawgeti(L, vi, j);
        tune_check(t, sim_fit_tune_knob_add(&t->ft, i, knob_number(t, i, lua_gettop(L))));
        lua_pop(L, 1);
    }
}

/* knob = { lo, hi }: the table at spec. */
static void knob_range(tune *t, int i, const char *name, int spec)
{
    lua_State *L = t->L;
    if (slp_list_len(L, spec, "flashspec.tune", name, t->ft.chunk, t->ft.line) != 2)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: knob '%s' needs { lo, hi } or { values = "
                 "{ ... } }",
                 t->ft.chunk, t->ft.line, name);
    lua_rawgeti(L, spec, 1);
    lua_rawgeti(L, spec, 2);
    double lo = knob_number(t, i, lua_gettop(L) - 1);
    tune_check(t, sim_fit_tune_knob_check(&t->ft, i, lo));
    double hi = knob_number(t, i, lua_gettop(L));
    lua_pop(L, 2);
    tune_check(t, sim_fit_tune_knob_range(&t->ft, i, lo, hi, knob_current(t, i)));
}

/* Knob i, name = its spec in the knobs table at idx. */
static void read_knob(tune *t, int idx, int i, const char *name)
{
    lua_State *L = t->L;
    knob_param(t, i, name);
    lua_getfield(L, idx, name);
    int spec = lua_gettop(L);
    if (!lua_istable(L, spec))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: knob '%s' needs { lo, hi } or { values = "
                 "{ ... } }",
                 t->ft.chunk, t->ft.line, name);
    lua_getfield(L, spec, "values");
    if (!lua_isnil(L, -1))
        knob_values(t, i, name, lua_gettop(L));
    else
        knob_range(t, i, name, spec);
    lua_settop(L, spec - 1);
    tune_check(t, sim_fit_tune_knob_done(&t->ft, i));
}

/* The knobs table at idx: the search space, checked against max_evals. */
static void read_knobs(tune *t, int idx)
{
    const char *names[TUNE_MAX_KNOBS + 1];
    int n = knob_names(t, idx, names);
    for (int i = 0; i < n; i++)
        read_knob(t, idx, i, names[i]);
    tune_check(t, sim_fit_tune_space(&t->ft, n));
}

/* -------------------------------------------------------- evaluation */

/* Pushes the policy with its knobs set to x: a C policy's params struct with
 * the values written in, or a Lua policy's file with them in its params table. */
static void push_policy(tune *t, const double *x)
{
    lua_State *L = t->L;
    int nk = t->ft.s.nk;
    if (t->lua) {
        fs_lua_policy_with(L, t->pol, nk, t->lk, x, "flashspec.tune", t->ft.chunk, t->ft.line);
        return;
    }
    const eng_policy_desc *desc = t->pol->desc;
    unsigned char *params = malloc(desc->params_size ? desc->params_size : 1);
    if (!params) fs_raise(L, SIM_NOMEM, 0, "out of memory");
    memcpy(params, t->pol->params, desc->params_size);
    for (int i = 0; i < nk; i++) {
        unsigned char *f = params + t->ft.d[i]->offset;
        if (t->ft.d[i]->type == ENG_PARAM_DOUBLE) {
            memcpy(f, &x[i], sizeof x[i]);
        } else {
            int32_t v = (int32_t)x[i];
            memcpy(f, &v, sizeof v);
        }
    }
    fs_policy_push(L, desc, params);
    free(params);
}

/* Pushes a point table: the point at t->point_idx with the policy's knobs set
 * to x, replaying prompts [offset, offset + count). */
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

/* What a guarded callback is given (the points' list is its argument 2). */
typedef struct tune_call {
    tune *t;
    int64_t point; /* 0-based */
    int64_t n;
    const double *x; /* [n * nk] */
    int32_t offset, count;
    sim_fit_point *out;        /* [n] */
    sim_fit_tune_prompts *ptr; /* prompts_lua's answer */
} tune_call;

/* lua_CFunction: [1] = tune_call, [2] = the points' list.  Where the point's
 * prompts lie: its trace's prompt count, its prompt_offset and prompts. */
static int prompts_lua(lua_State *L)
{
    tune_call *e = lua_touserdata(L, 1);
    tune *t = e->t;
    lua_rawgeti(L, 2, (lua_Integer)e->point + 1);
    int pt = lua_gettop(L);
    lua_getfield(L, pt, "trace");
    const ud_trace *tr = luaL_testudata(L, -1, MT_TRACE);
    lua_getfield(L, pt, "prompts");
    lua_getfield(L, pt, "prompt_offset");
    e->ptr->offset = (int32_t)lua_tointeger(L, -1);
    e->ptr->asked = (int32_t)lua_tointeger(L, -2);
    if (!tr)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: every point needs a trace", t->ft.chunk,
                 t->ft.line);
    e->ptr->total = trc_get_meta(fs_trace_get(L, tr, t->ft.chunk, t->ft.line))->n_prompts;
    return 0;
}

/* lua_CFunction: [1] = tune_call, [2] = the points' list.  The point run at
 * each knob vector on the tuning prompts -- one vector alone, or all of them
 * in one sweep on the workers --, handed to the driver and kept alive until
 * the next callback (fs_guard_keep). */
static int evaluate_lua(lua_State *L)
{
    tune_call *e = lua_touserdata(L, 1);
    tune *t = e->t;
    lua_rawgeti(L, 2, (lua_Integer)e->point + 1);
    t->point_idx = lua_gettop(L);
    int keep = t->point_idx + 1;
    if (e->n == 1) {
        if (sim_sweep_interrupted())
            fs_raise(L, SIM_INTERRUPTED, 0, "%s:%d: interrupted", t->ft.chunk, t->ft.line);
        push_point_table(t, e->x, e->offset, e->count);
    } else {
        lua_createtable(L, 0, 1);
        lua_createtable(L, (int)e->n, 0);
        for (int64_t c = 0; c < e->n; c++) {
            push_point_table(t, e->x + c * t->ft.s.nk, e->offset, e->count);
            lua_rawseti(L, -2, (lua_Integer)c + 1);
        }
        lua_setfield(L, -2, "points");
    }
    int64_t n;
    sim_sweep_staged *sp = fs_api_sweep(L, -1, t->ft.chunk, t->ft.line, 0, &n);
    for (int64_t c = 0; c < n && c < e->n; c++)
        e->out[c] = (sim_fit_point){.row = &sp[c].row, .code = sp[c].code, .err = sp[c].err};
    fs_guard_keep(&t->guard, keep);
    return 0;
}

/* The driver's callbacks: each behind the guard, with the points' list. */
static int tune_prompts(void *ctx, int64_t point, sim_fit_tune_prompts *p)
{
    tune *t = ctx;
    tune_call e = {.t = t, .point = point, .ptr = p};
    return fs_guard_call(&t->guard, prompts_lua, &e, t->pts);
}

static int tune_eval(void *ctx, int64_t point, int64_t n, const double *xs, int32_t offset,
                     int32_t count, sim_fit_point *out)
{
    tune *t = ctx;
    tune_call e = {
        .t = t, .point = point, .n = n, .x = xs, .offset = offset, .count = count, .out = out};
    return fs_guard_call(&t->guard, evaluate_lua, &e, t->pts);
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
    sim_fit_tune_free(&t->ft);
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
    sim_fit_tune_opts *o = &t->ft.o;
    slp_check_fields(L, idx, tune_keys, o, WHAT, t->ft.chunk, t->ft.line);
    if (fs_row_column_kind(o->objective) != FS_COL_NUMBER)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: objective '%s' is not a numeric result column",
                 t->ft.chunk, t->ft.line, o->objective);
    if (!(o->holdout < 1))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: %s: key 'holdout' = %.14g leaves no prompt to tune "
                 "on (it must be below 1)",
                 t->ft.chunk, slp_key_line(t->ft.chunk, t->ft.line, "holdout"), WHAT, o->holdout);
}

/* policy: the starting point, a C policy or a Lua one. */
static void read_policy(tune *t, int idx)
{
    lua_getfield(t->L, idx, "policy");
    t->pol = luaL_testudata(t->L, -1, MT_POLICY);
    if (!t->pol)
        fs_raise(t->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: key 'policy' must be a policy (from "
                 "flashspec.policy.NAME)",
                 t->ft.chunk, t->ft.line);
    t->lua = lp_is(t->pol->desc);
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
    fs_api_expand(L, base, t->ft.chunk, t->ft.line);
    int pts = lua_gettop(L);
    if (lua_rawlen(L, pts) < 1)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.tune: the sweep has no point", t->ft.chunk,
                 t->ft.line);
    return pts;
}

/* Pushes the sweep of the chosen points on their held-out prompts
 * ({ points = ... }). */
static void push_chosen(tune *t, lua_Integer np)
{
    lua_State *L = t->L;
    lua_createtable(L, 0, 1);
    lua_createtable(L, (int)np, 0);
    int final = lua_gettop(L);
    for (lua_Integer i = 1; i <= np; i++) {
        const sim_fit_tune_choice *ch = &t->ft.ch[i - 1];
        lua_rawgeti(L, t->pts, i);
        t->point_idx = lua_gettop(L);
        push_point_table(t, ch->x, ch->offset, ch->count);
        lua_rawseti(L, final, i);
        lua_pop(L, 1);
    }
    lua_setfield(L, final - 1, "points");
}

/* Pushes a Lua row's `tuned` = { knob = value } for the knobs x. */
static void push_tuned(tune *t, const double *x)
{
    lua_State *L = t->L;
    lua_createtable(L, 0, t->ft.s.nk);
    for (int j = 0; j < t->ft.s.nk; j++) {
        const eng_param_desc *d = t->ft.d[j];
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
static void run_chosen(tune *t, lua_Integer np)
{
    lua_State *L = t->L;
    int64_t n;
    sim_sweep_staged *sp = fs_api_sweep(L, lua_gettop(L), t->ft.chunk, t->ft.line, 1, &n);
    for (int64_t i = 0; i < n && i < np; i++)
        sim_fit_tune_fill_row(&t->ft, i, &sp[i].row);
    fs_api_push_rows(L, sp, n, 1);
    int rows = lua_gettop(L);
    for (int64_t i = 0; i < n && i < np; i++) {
        lua_rawgeti(L, rows, (lua_Integer)i + 1);
        push_tuned(t, t->ft.ch[i].x);
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
    sim_fit_tune *ft = &t->ft;
    sim_fit_tune_init(ft);
    fs_caller_src(L, ft->chunk, sizeof ft->chunk, &ft->line);
    ft->meta = &t->a->meta;
    ft->prompts = tune_prompts;
    ft->eval = tune_eval;
    ft->ctx = t;

    read_policy(t, 1);
    read_options(t, 1);
    lua_getfield(L, 1, "knobs");
    if (!lua_istable(L, -1))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.tune: key 'knobs' must be a table of knob = { lo, hi } "
                 "or { values = { ... } }",
                 ft->chunk, ft->line);
    read_knobs(t, lua_gettop(L));
    lua_pop(L, 1);
    t->pts = expand_points(t, 1);
    /* tune each point, then run every chosen point on its held-out prompts */
    lua_Integer np = (lua_Integer)lua_rawlen(L, t->pts);
    tune_check(t, sim_fit_tune_run(ft, np));
    fs_guard_free(&t->guard); /* lets go of the last evaluation's points */
    push_chosen(t, np);
    run_chosen(t, np);
    return 1;
}
