/*
 * sim_fit_tune.c -- the driver of flashspec.tune (sim_fit_tune.h): the
 * knobs' space checked as the binding hands it over, then per point the
 * prompt split, the search (sim_fit_search, whose objective is this file's:
 * the binding runs the points, this file reads their objective column) and
 * the checks of what it chose.
 *
 * Every message names the spec's call ("FILE:LINE: flashspec.tune: ..."),
 * as the binding's own do, so a script's author reads one voice.
 */
#include "sim/fit/sim_fit_tune.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SIM_CONFIG (or status) with "CHUNK:LINE: flashspec.tune: " and the
 * message in err. */
static int tune_fail(sim_fit_tune *t, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int tune_fail(sim_fit_tune *t, int status, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* a longer line is cut, as fs_raise cuts one */
    size_t at = (size_t)snprintf(t->err, sizeof t->err, "%s:%d: ", t->chunk, t->line);
    if (at < sizeof t->err) snprintf(t->err + at, sizeof t->err - at, "flashspec.tune: %s", msg);
    return status;
}

/* SIM_NOMEM, its line without the call's place (as every "out of memory"). */
static int nomem(sim_fit_tune *t)
{
    snprintf(t->err, sizeof t->err, "out of memory");
    return SIM_NOMEM;
}

void sim_fit_tune_init(sim_fit_tune *t)
{
    memset(t, 0, sizeof *t);
    t->combos = 1;
}

void sim_fit_tune_free(sim_fit_tune *t)
{
    if (!t) return;
    sim_fit_search_free(&t->s);
    free(t->ch);
    t->ch = NULL;
    free(t->out);
    t->out = NULL;
    t->out_cap = 0;
}

/* ----------------------------------------------------------------- knobs */

int sim_fit_tune_knob(sim_fit_tune *t, int i, const eng_param_desc *d)
{
    memset(&t->s.k[i], 0, sizeof t->s.k[i]);
    t->d[i] = d;
    eng_param_type ty = d->type;
    if (ty != ENG_PARAM_INT && ty != ENG_PARAM_DOUBLE && ty != ENG_PARAM_BOOL &&
        ty != ENG_PARAM_ENUM)
        return tune_fail(t, SIM_CONFIG,
                         "knob '%s' is a %s parameter; only numbers, "
                         "booleans and choices can be searched",
                         d->name, ty == ENG_PARAM_STRING ? "string" : "list");
    return SIM_OK;
}

int sim_fit_tune_knob_check(sim_fit_tune *t, int i, double v)
{
    const eng_param_desc *d = t->d[i];
    int whole = d->type != ENG_PARAM_DOUBLE;
    if (!isfinite(v) || (whole && v != floor(v)))
        return tune_fail(t, SIM_CONFIG, "knob '%s': %g is not %s", d->name, v,
                         whole ? "a whole number" : "finite");
    double lo = d->min, hi = d->max;
    if (d->type == ENG_PARAM_BOOL) lo = 0, hi = 1;
    if (d->type == ENG_PARAM_ENUM) { /* a choice is its index */
        lo = 0;
        hi = 0;
        while (d->choices[(int)hi + 1])
            hi++;
    }
    if (v < lo || v > hi)
        return tune_fail(t, SIM_CONFIG,
                         "knob '%s': %g is outside the "
                         "parameter's range [%g, %g]",
                         d->name, v, lo, hi);
    return SIM_OK;
}

int sim_fit_tune_knob_list(sim_fit_tune *t, int i, int64_t n)
{
    if (n < 1 || n > SIM_FIT_MAX_VALUES)
        return tune_fail(t, SIM_CONFIG,
                         "knob '%s': values must "
                         "hold 1 to %d entries",
                         t->d[i]->name, SIM_FIT_MAX_VALUES);
    t->s.k[i].discrete = 1;
    t->s.k[i].n_values = 0;
    return SIM_OK;
}

int sim_fit_tune_knob_add(sim_fit_tune *t, int i, double v)
{
    sim_fit_knob *k = &t->s.k[i];
    int rc = sim_fit_tune_knob_check(t, i, v);
    if (rc != SIM_OK) return rc;
    if (k->n_values >= SIM_FIT_MAX_VALUES) /* sim_fit_tune_knob_list said how many */
        return tune_fail(t, SIM_INTERNAL, "knob '%s': more values than announced", t->d[i]->name);
    k->values[k->n_values++] = v;
    return SIM_OK;
}

int sim_fit_tune_knob_range(sim_fit_tune *t, int i, double lo, double hi, double current)
{
    int rc = sim_fit_tune_knob_check(t, i, lo);
    if (rc == SIM_OK) rc = sim_fit_tune_knob_check(t, i, hi);
    if (rc != SIM_OK) return rc;
    if (!(lo < hi))
        return tune_fail(t, SIM_CONFIG,
                         "knob '%s': empty range "
                         "[%g, %g] (lo must be below hi)",
                         t->d[i]->name, lo, hi);
    sim_fit_knob_range(&t->s.k[i], lo, hi, t->d[i]->type != ENG_PARAM_DOUBLE, current);
    return SIM_OK;
}

int sim_fit_tune_knob_done(sim_fit_tune *t, int i)
{
    if (!t->s.k[i].discrete) return SIM_OK;
    t->combos *= t->s.k[i].n_values;
    if (t->combos > SIM_FIT_TUNE_MAX_COMBOS)
        return tune_fail(t, SIM_CONFIG,
                         "the discrete knobs make "
                         "more than %d combinations; narrow their ranges",
                         SIM_FIT_TUNE_MAX_COMBOS);
    return SIM_OK;
}

int sim_fit_tune_space(sim_fit_tune *t, int32_t nk)
{
    t->s.nk = nk;
    t->s.max_evals = t->o.max_evals;
    int32_t nc = sim_fit_search_continuous(&t->s);
    int64_t combos = t->combos, per = t->o.max_evals / combos;
    if (nc == 0 && combos > t->o.max_evals)
        return tune_fail(t, SIM_CONFIG, "%lld combinations but max_evals = %d", (long long)combos,
                         t->o.max_evals);
    if (nc > 0 && per < sim_fit_search_min_budget(nc))
        return tune_fail(t, SIM_CONFIG,
                         "max_evals = %d leaves %lld "
                         "evaluations for each of %lld combinations; a simplex over %d knob%s "
                         "needs at least %d",
                         t->o.max_evals, (long long)per, (long long)combos, nc, nc == 1 ? "" : "s",
                         (int)sim_fit_search_min_budget(nc));
    return SIM_OK;
}

/* ---------------------------------------------------------------- points */

int sim_fit_tune_split(sim_fit_tune *t, const sim_fit_tune_prompts *p, sim_fit_tune_choice *ch)
{
    int32_t total = p->total - p->offset;
    int32_t n = p->asked > 0 && p->asked < total ? p->asked : total;
    int32_t hold = (int32_t)floor(t->o.holdout * n + 0.5);
    if (t->o.holdout > 0 && (hold < 1 || n - hold < 1))
        return tune_fail(t, SIM_CONFIG,
                         "holdout = %g of %d prompt%s "
                         "leaves none on one side; use more prompts or holdout = 0",
                         t->o.holdout, (int)n, n == 1 ? "" : "s");
    ch->train_offset = p->offset;
    ch->train_count = n - hold;
    ch->offset = hold ? p->offset + n - hold : p->offset;
    ch->count = hold ? hold : n;
    return SIM_OK;
}

double sim_fit_tune_objective(const sim_fit_tune *t, const fs_row *row)
{
    double v = NAN;
    char text[64];
    fs_row_get(t->meta, row, t->o.objective, &v, text, sizeof text);
    return isfinite(v) ? v : -HUGE_VAL;
}

/* The objective at n vectors on the tuning prompts (-HUGE_VAL where no
 * point ran), counted in the current search's range. */
static int evaluate(sim_fit_tune *t, int64_t n, const double *xs, double *values)
{
    if (n > t->out_cap) {
        sim_fit_point *o = realloc(t->out, sizeof *o * (size_t)n);
        if (!o) return SIM_NOMEM;
        t->out = o;
        t->out_cap = n;
    }
    for (int64_t c = 0; c < n; c++) {
        t->out[c] = (sim_fit_point){0};
        values[c] = -HUGE_VAL;
    }
    int rc = t->eval(t->ctx, t->point, n, xs, t->train_offset, t->train_count, t->out);
    for (int64_t c = 0; c < n && rc == SIM_OK; c++) {
        const sim_fit_point *p = &t->out[c];
        if (p->code) {
            snprintf(t->err, sizeof t->err, "%s", p->err ? p->err : "");
            rc = p->code;
        } else if (p->row) {
            double v = sim_fit_tune_objective(t, p->row);
            t->n_seen++;
            if (v == -HUGE_VAL) continue;
            if (!t->n_finite++) t->seen_lo = t->seen_hi = v;
            if (v < t->seen_lo) t->seen_lo = v;
            if (v > t->seen_hi) t->seen_hi = v;
            values[c] = v;
        }
    }
    t->failed |= rc != SIM_OK;
    return rc;
}

/* sim_fit_search's objective at one vector, and at many. */
static int objective_one(void *ctx, const double *x, double *value)
{
    return evaluate(ctx, 1, x, value);
}

static int objective_batch(void *ctx, int64_t n, const double *xs, double *values)
{
    return evaluate(ctx, n, xs, values);
}

/* Tunes point i into ch (its split already there). */
static int tune_point(sim_fit_tune *t, int64_t i, sim_fit_tune_choice *ch)
{
    t->point = i;
    t->train_offset = ch->train_offset;
    t->train_count = ch->train_count;
    t->n_finite = t->n_seen = 0;
    int rc = sim_fit_search_run(&t->s);
    if (rc != SIM_OK) return t->failed ? rc : nomem(t);
    memcpy(ch->x, t->s.best_x, sizeof ch->x);
    ch->train = t->s.best;
    ch->evals = t->s.evals;
    /* a search that never saw a number chose nothing: the start is no answer */
    if (t->n_finite == 0)
        return tune_fail(t, SIM_CONFIG,
                         "objective '%s' is not a finite number at any of the %lld knob "
                         "vectors tried for point %lld (NaN or infinite everywhere); tune a "
                         "column these points give a value",
                         t->o.objective, (long long)t->n_seen, (long long)i + 1);
    t->moved |= t->seen_hi > t->seen_lo || t->n_seen < 2;
    return SIM_OK;
}

/* An objective the knobs never moved, at any point, was not tuned. */
static int check_moved(sim_fit_tune *t)
{
    if (t->moved) return SIM_OK;
    char names[256] = "";
    size_t at = 0;
    for (int j = 0; j < t->s.nk && at < sizeof names; j++)
        at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", j ? ", " : "", t->d[j]->name);
    return tune_fail(t, SIM_CONFIG,
                     "objective '%s' is the same at every knob vector tried, at every point "
                     "(%.17g): the knobs (%s) do not move it, so nothing was tuned",
                     t->o.objective, t->seen_lo, names);
}

int sim_fit_tune_run(sim_fit_tune *t, int64_t n_points)
{
    t->err[0] = 0;
    t->failed = 0;
    t->moved = 0;
    t->s.f = objective_one;
    t->s.batch = objective_batch;
    t->s.ctx = t;
    free(t->ch);
    t->ch = calloc((size_t)(n_points > 0 ? n_points : 1), sizeof *t->ch);
    if (!t->ch) return nomem(t);
    t->n_points = n_points;
    for (int64_t i = 0; i < n_points; i++) {
        sim_fit_tune_prompts p = {0};
        int rc = t->prompts(t->ctx, i, &p);
        if (rc != SIM_OK) return rc;
        rc = sim_fit_tune_split(t, &p, &t->ch[i]);
        if (rc == SIM_OK) rc = tune_point(t, i, &t->ch[i]);
        if (rc != SIM_OK) return rc;
    }
    return check_moved(t);
}

void sim_fit_tune_fill_row(const sim_fit_tune *t, int64_t i, fs_row *row)
{
    const sim_fit_tune_choice *ch = &t->ch[i];
    row->tune_evals = ch->evals;
    row->tune_train = ch->train == -HUGE_VAL ? NAN : ch->train;
    snprintf(row->tune_objective, sizeof row->tune_objective, "%s", t->o.objective);
}
