/*
 * test_tune.c -- the tune driver (sim/fit/sim_fit_tune.h) without Lua: each
 * knob check at its boundaries (types, whole numbers, ranges of numbers,
 * booleans and choices, value lists, empty ranges), the grid of discrete
 * knobs (integer ranges expanded, the combination cap, max_evals against the
 * space), the prompt split at its boundaries and its rounding tie, and a
 * tuning through a fake binding -- the best knob chosen, a tie kept first,
 * the split handed to the points, an objective never finite or never moved,
 * a failed point, a failing callback -- and the rows' search columns.
 */
#include "sim/fit/sim_fit_tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"

#define MAXN 64 /* vectors one call may ask for */

static const char *const choices[] = {"low", "mid", "high", NULL};
static const eng_param_desc p_int = {"k", ENG_PARAM_INT, 0,    1, 64,          8, NULL, 0,
                                     0,   NULL,          NULL, 0, "an integer"};
static const eng_param_desc p_dbl = {
    "theta", ENG_PARAM_DOUBLE, 0, 0, 1, 0.5, NULL, 0, 0, NULL, NULL, 0, "a share"};
static const eng_param_desc p_bool = {"on", ENG_PARAM_BOOL, 0,    0, 1,         0, NULL, 0,
                                      0,    NULL,           NULL, 0, "a switch"};
static const eng_param_desc p_enum = {"unit", ENG_PARAM_ENUM, 0,    0, 2,         0, choices, 0,
                                      0,      NULL,           NULL, 0, "a choice"};
static const eng_param_desc p_str = {"name", ENG_PARAM_STRING, 0, 0, 0, 0, NULL, 16, 0, "x", NULL,
                                     0,      "a string"};
static const eng_param_desc p_list = {
    "ws", ENG_PARAM_DOUBLE_LIST, 0, 0, 1, 0, NULL, 4, 0, NULL, NULL, 0, "a list"};

static fs_rows_meta meta; /* zeroed */

static void init(sim_fit_tune *t, int32_t max_evals, double holdout)
{
    sim_fit_tune_init(t);
    snprintf(t->o.objective, sizeof t->o.objective, "tokens_per_s");
    t->o.max_evals = max_evals;
    t->o.holdout = holdout;
    snprintf(t->chunk, sizeof t->chunk, "tune.lua");
    t->line = 3;
    t->meta = &meta;
}

/* ---------------------------------------------------------------- knobs */

static void test_knob_types(void)
{
    sim_fit_tune t;
    init(&t, 200, 0.5);
    CHECK_EQ_INT(sim_fit_tune_knob(&t, 0, &p_int), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob(&t, 1, &p_dbl), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob(&t, 2, &p_bool), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob(&t, 3, &p_enum), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob(&t, 4, &p_str), SIM_CONFIG);
    CHECK(!strcmp(t.err, "tune.lua:3: flashspec.tune: knob 'name' is a string parameter; only "
                         "numbers, booleans and choices can be searched"));
    CHECK_EQ_INT(sim_fit_tune_knob(&t, 4, &p_list), SIM_CONFIG);
    CHECK(strstr(t.err, "knob 'ws' is a list parameter"));
    sim_fit_tune_free(&t);
}

static void test_knob_check(void)
{
    sim_fit_tune t;
    init(&t, 200, 0.5);
    sim_fit_tune_knob(&t, 0, &p_int);
    sim_fit_tune_knob(&t, 1, &p_dbl);
    sim_fit_tune_knob(&t, 2, &p_bool);
    sim_fit_tune_knob(&t, 3, &p_enum);
    /* an integer: whole, inside [1, 64] at both ends */
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 0, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 0, 64), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 0, 0), SIM_CONFIG);
    CHECK(!strcmp(t.err, "tune.lua:3: flashspec.tune: knob 'k': 0 is outside the parameter's "
                         "range [1, 64]"));
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 0, 65), SIM_CONFIG);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 0, 2.5), SIM_CONFIG);
    CHECK(strstr(t.err, "knob 'k': 2.5 is not a whole number"));
    /* a double: finite, inside [0, 1] */
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 1, 0.25), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 1, 0), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 1, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 1, 1.0000001), SIM_CONFIG);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 1, NAN), SIM_CONFIG);
    CHECK(strstr(t.err, "knob 'theta': nan is not finite"));
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 1, INFINITY), SIM_CONFIG);
    /* a boolean: 0 or 1 */
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 2, 1), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 2, 2), SIM_CONFIG);
    CHECK(strstr(t.err, "knob 'on': 2 is outside the parameter's range [0, 1]"));
    /* a choice: an index below the choice count */
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 3, 2), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 3, 3), SIM_CONFIG);
    CHECK(strstr(t.err, "knob 'unit': 3 is outside the parameter's range [0, 2]"));
    CHECK_EQ_INT(sim_fit_tune_knob_check(&t, 3, -1), SIM_CONFIG);
    sim_fit_tune_free(&t);
}

static void test_knob_lists(void)
{
    sim_fit_tune t;
    init(&t, 200, 0.5);
    sim_fit_tune_knob(&t, 0, &p_int);
    CHECK_EQ_INT(sim_fit_tune_knob_list(&t, 0, 0), SIM_CONFIG);
    CHECK(!strcmp(t.err, "tune.lua:3: flashspec.tune: knob 'k': values must hold 1 to 256 "
                         "entries"));
    CHECK_EQ_INT(sim_fit_tune_knob_list(&t, 0, SIM_FIT_MAX_VALUES + 1), SIM_CONFIG);
    CHECK_EQ_INT(sim_fit_tune_knob_list(&t, 0, SIM_FIT_MAX_VALUES), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_list(&t, 0, 1), SIM_OK);
    CHECK(t.s.k[0].discrete);
    CHECK_EQ_INT(sim_fit_tune_knob_add(&t, 0, 4), SIM_OK);
    CHECK_EQ_INT(sim_fit_tune_knob_add(&t, 0, 0), SIM_CONFIG); /* checked as it is added */
    CHECK_EQ_INT(sim_fit_tune_knob_add(&t, 0, 16), SIM_OK);
    CHECK_EQ_INT(t.s.k[0].n_values, 2);
    CHECK(t.s.k[0].values[0] == 4 && t.s.k[0].values[1] == 16);
    sim_fit_tune_free(&t);
}

/* Ranges: empty ones refused, integer ranges of at most
 * SIM_FIT_INT_EXHAUSTIVE values expanded, others continuous from the
 * policy's value (or the middle when it lies outside). */
static void test_knob_ranges(void)
{
    sim_fit_tune t;
    init(&t, 200, 0.5);
    sim_fit_tune_knob(&t, 0, &p_int);
    CHECK_EQ_INT(sim_fit_tune_knob_range(&t, 0, 4, 4, 8), SIM_CONFIG);
    CHECK(!strcmp(t.err, "tune.lua:3: flashspec.tune: knob 'k': empty range [4, 4] (lo must be "
                         "below hi)"));
    CHECK_EQ_INT(sim_fit_tune_knob_range(&t, 0, 8, 4, 8), SIM_CONFIG);
    CHECK_EQ_INT(sim_fit_tune_knob_range(&t, 0, 0, 8, 8), SIM_CONFIG); /* lo outside */
    CHECK(strstr(t.err, "knob 'k': 0 is outside"));
    CHECK_EQ_INT(sim_fit_tune_knob_range(&t, 0, 1, 65, 8), SIM_CONFIG); /* hi outside */
    CHECK(strstr(t.err, "knob 'k': 65 is outside"));
    CHECK_EQ_INT(sim_fit_tune_knob_range(&t, 0, 1, SIM_FIT_INT_EXHAUSTIVE, 8), SIM_OK);
    CHECK(t.s.k[0].discrete && t.s.k[0].n_values == SIM_FIT_INT_EXHAUSTIVE);
    CHECK(t.s.k[0].values[0] == 1 &&
          t.s.k[0].values[SIM_FIT_INT_EXHAUSTIVE - 1] == SIM_FIT_INT_EXHAUSTIVE);
    sim_fit_tune_knob(&t, 0, &p_int); /* read again: from scratch */
    CHECK(!t.s.k[0].discrete && t.s.k[0].n_values == 0);
    CHECK_EQ_INT(sim_fit_tune_knob_range(&t, 0, 1, SIM_FIT_INT_EXHAUSTIVE + 1, 8), SIM_OK);
    CHECK(!t.s.k[0].discrete && t.s.k[0].integer && t.s.k[0].start == 8);
    sim_fit_tune_knob(&t, 1, &p_dbl);
    CHECK_EQ_INT(sim_fit_tune_knob_range(&t, 1, 0.2, 0.4, 0.9), SIM_OK);
    CHECK(!t.s.k[1].discrete && !t.s.k[1].integer);
    CHECK_NEAR(t.s.k[1].start, 0.3, 1e-12); /* 0.9 lies outside: the middle */
    sim_fit_tune_free(&t);
}

/* The discrete knobs' combinations: SIM_FIT_TUNE_MAX_COMBOS at most. */
static void test_combos(void)
{
    sim_fit_tune t;
    init(&t, 1000000, 0.5);
    sim_fit_tune_knob(&t, 0, &p_int);
    sim_fit_tune_knob_list(&t, 0, 64);
    for (int v = 1; v <= 64; v++)
        sim_fit_tune_knob_add(&t, 0, v);
    CHECK_EQ_INT(sim_fit_tune_knob_done(&t, 0), SIM_OK);
    sim_fit_tune_knob(&t, 1, &p_int);
    sim_fit_tune_knob_list(&t, 1, 64);
    for (int v = 1; v <= 64; v++)
        sim_fit_tune_knob_add(&t, 1, v);
    CHECK_EQ_INT(sim_fit_tune_knob_done(&t, 1), SIM_OK); /* 4096: the cap itself */
    CHECK_EQ_INT(t.combos, SIM_FIT_TUNE_MAX_COMBOS);
    sim_fit_tune_knob(&t, 2, &p_dbl); /* continuous: no combinations */
    sim_fit_tune_knob_range(&t, 2, 0, 1, 0.5);
    CHECK_EQ_INT(sim_fit_tune_knob_done(&t, 2), SIM_OK);
    sim_fit_tune_knob(&t, 3, &p_bool);
    sim_fit_tune_knob_range(&t, 3, 0, 1, 0);
    CHECK_EQ_INT(sim_fit_tune_knob_done(&t, 3), SIM_CONFIG);
    CHECK(!strcmp(t.err, "tune.lua:3: flashspec.tune: the discrete knobs make more than 4096 "
                         "combinations; narrow their ranges"));
    sim_fit_tune_free(&t);
}

/* A space of `values` discrete values (knob k) and, when cont, a continuous
 * knob theta; max_evals against it. */
static int space(int32_t max_evals, int values, int cont, char *err, size_t n)
{
    sim_fit_tune t;
    init(&t, max_evals, 0.5);
    sim_fit_tune_knob(&t, 0, &p_int);
    sim_fit_tune_knob_list(&t, 0, values);
    for (int v = 1; v <= values; v++)
        sim_fit_tune_knob_add(&t, 0, v);
    sim_fit_tune_knob_done(&t, 0);
    if (cont) {
        sim_fit_tune_knob(&t, 1, &p_dbl);
        sim_fit_tune_knob_range(&t, 1, 0, 1, 0.5);
        sim_fit_tune_knob_done(&t, 1);
    }
    int rc = sim_fit_tune_space(&t, cont ? 2 : 1);
    snprintf(err, n, "%s", t.err);
    sim_fit_tune_free(&t);
    return rc;
}

static void test_space(void)
{
    char err[1024];
    CHECK_EQ_INT(space(8, 8, 0, err, sizeof err), SIM_OK); /* every combination once */
    CHECK_EQ_INT(space(7, 8, 0, err, sizeof err), SIM_CONFIG);
    CHECK(!strcmp(err, "tune.lua:3: flashspec.tune: 8 combinations but max_evals = 7"));
    /* a simplex over 1 knob needs 2 (1 + 1) + 1 = 5 per combination */
    CHECK_EQ_INT(sim_fit_search_min_budget(1), 5);
    CHECK_EQ_INT(space(10, 2, 1, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(space(9, 2, 1, err, sizeof err), SIM_CONFIG);
    CHECK(!strcmp(err, "tune.lua:3: flashspec.tune: max_evals = 9 leaves 4 evaluations for each "
                       "of 2 combinations; a simplex over 1 knob needs at least 5"));
    CHECK_EQ_INT(space(5, 1, 1, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(space(4, 1, 1, err, sizeof err), SIM_CONFIG);
}

/* ---------------------------------------------------------------- split */

static int split(double holdout, int32_t offset, int32_t asked, int32_t total,
                 sim_fit_tune_choice *ch, char *err, size_t n)
{
    sim_fit_tune t;
    init(&t, 200, holdout);
    sim_fit_tune_prompts p = {.offset = offset, .asked = asked, .total = total};
    memset(ch, 0, sizeof *ch);
    int rc = sim_fit_tune_split(&t, &p, ch);
    snprintf(err, n, "%s", t.err);
    return rc;
}

static void test_split(void)
{
    sim_fit_tune_choice ch;
    char err[1024];
    CHECK_EQ_INT(split(0.5, 0, 0, 10, &ch, err, sizeof err), SIM_OK);
    CHECK(ch.train_offset == 0 && ch.train_count == 5 && ch.offset == 5 && ch.count == 5);
    /* holdout 0: tuned and reported on the same prompts */
    CHECK_EQ_INT(split(0, 2, 0, 10, &ch, err, sizeof err), SIM_OK);
    CHECK(ch.train_offset == 2 && ch.train_count == 8 && ch.offset == 2 && ch.count == 8);
    /* prompts asked: fewer than there are from the offset on, or not */
    CHECK_EQ_INT(split(0.5, 2, 4, 10, &ch, err, sizeof err), SIM_OK);
    CHECK(ch.train_offset == 2 && ch.train_count == 2 && ch.offset == 4 && ch.count == 2);
    CHECK_EQ_INT(split(0.5, 2, 8, 10, &ch, err, sizeof err), SIM_OK); /* 8 of 8: all */
    CHECK(ch.train_count == 4 && ch.offset == 6 && ch.count == 4);
    CHECK_EQ_INT(split(0.5, 2, 9, 10, &ch, err, sizeof err), SIM_OK); /* more: all 8 */
    CHECK(ch.train_count == 4 && ch.count == 4);
    /* the held-out count rounds half up: 0.25 of 2 is 1 */
    CHECK_EQ_INT(split(0.25, 0, 0, 2, &ch, err, sizeof err), SIM_OK);
    CHECK(ch.train_count == 1 && ch.offset == 1 && ch.count == 1);
    CHECK_EQ_INT(split(0.7, 0, 0, 3, &ch, err, sizeof err), SIM_OK); /* 2.1 -> 2 */
    CHECK(ch.train_count == 1 && ch.count == 2);
    /* none on one side */
    CHECK_EQ_INT(split(0.5, 0, 0, 2, &ch, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(split(0.5, 0, 0, 1, &ch, err, sizeof err), SIM_CONFIG);
    CHECK(!strcmp(err, "tune.lua:3: flashspec.tune: holdout = 0.5 of 1 prompt leaves none on "
                       "one side; use more prompts or holdout = 0"));
    CHECK_EQ_INT(split(0.1, 0, 0, 4, &ch, err, sizeof err), SIM_CONFIG); /* 0.4 rounds to 0 */
    CHECK(strstr(err, "holdout = 0.1 of 4 prompts leaves none"));
    CHECK_EQ_INT(split(0.1, 0, 0, 5, &ch, err, sizeof err), SIM_OK); /* 0.5 rounds to 1 */
    CHECK(ch.train_count == 4 && ch.count == 1);
    CHECK_EQ_INT(split(0.9, 0, 0, 5, &ch, err, sizeof err), SIM_CONFIG); /* 4.5 -> 5: none left */
    CHECK_EQ_INT(split(0, 0, 0, 1, &ch, err, sizeof err), SIM_OK);
}

/* ------------------------------------------------------------ the search */

typedef struct fake {
    fs_row rows[MAXN];
    int objective;               /* 0: peak at k = 4; 1: NaN; 2: constant; 3: tie of 2 and 3 */
    int64_t calls, evals;        /* eval calls, vectors */
    int64_t fail_call;           /* this eval call fails with SIM_INTERNAL (0: none) */
    int64_t point_call;          /* in this call the first point failed (0: none) */
    int64_t bad_point;           /* prompts fails for this point (-1: none) */
    int32_t offset[4], count[4]; /* the prompts each point's evaluations ran */
    int32_t nk;
} fake;

static int fake_prompts(void *ctx, int64_t point, sim_fit_tune_prompts *p)
{
    fake *k = ctx;
    if (point == k->bad_point) return SIM_MISSING;
    *p = (sim_fit_tune_prompts){.offset = (int32_t)point, .asked = 0, .total = 10};
    return SIM_OK;
}

static double value_at(const fake *k, double x)
{
    switch (k->objective) {
    case 1:
        return NAN;
    case 2:
        return 5;
    case 3:
        return x == 2 || x == 3 ? 9 : x;
    default:
        return 10 - (x - 4) * (x - 4);
    }
}

static int fake_eval(void *ctx, int64_t point, int64_t n, const double *xs, int32_t offset,
                     int32_t count, sim_fit_point *out)
{
    fake *k = ctx;
    k->calls++;
    if (k->calls == k->fail_call) return SIM_INTERNAL;
    CHECK(n >= 1 && n <= MAXN);
    if (point < 4) {
        k->offset[point] = offset;
        k->count[point] = count;
    }
    for (int64_t c = 0; c < n && c < MAXN; c++) {
        memset(&k->rows[c], 0, sizeof k->rows[c]);
        k->rows[c].st.tokens_per_s = value_at(k, xs[c * k->nk]);
        out[c] = (sim_fit_point){.row = &k->rows[c]};
        k->evals++;
    }
    if (k->calls == k->point_call) out[0] = (sim_fit_point){.code = SIM_NOMEM, .err = "no room"};
    return SIM_OK;
}

/* A tuning of knob k over values 1..nv (or a continuous range when nv is
 * 0) for n_points points. */
static int tune(fake *k, sim_fit_tune *t, int nv, int64_t n_points)
{
    init(t, 200, 0.5);
    t->prompts = fake_prompts;
    t->eval = fake_eval;
    t->ctx = k;
    k->nk = 1;
    sim_fit_tune_knob(t, 0, &p_int);
    if (nv) {
        sim_fit_tune_knob_list(t, 0, nv);
        for (int v = 1; v <= nv; v++)
            sim_fit_tune_knob_add(t, 0, v);
    } else {
        sim_fit_tune_knob(t, 0, &p_dbl);
        sim_fit_tune_knob_range(t, 0, 0, 1, 0.5);
    }
    sim_fit_tune_knob_done(t, 0);
    CHECK_EQ_INT(sim_fit_tune_space(t, 1), SIM_OK);
    return sim_fit_tune_run(t, n_points);
}

static void test_run(void)
{
    fake k = {.bad_point = -1};
    sim_fit_tune t;
    CHECK_EQ_INT(tune(&k, &t, 8, 2), SIM_OK);
    CHECK_EQ_INT(t.n_points, 2);
    for (int i = 0; i < 2; i++) {
        CHECK(t.ch[i].x[0] == 4 && t.ch[i].train == 10 && t.ch[i].evals == 8);
        /* point i's prompts: from offset i, 10 - i of them, half held out */
        CHECK_EQ_INT(k.offset[i], i);
        CHECK_EQ_INT(k.count[i], (10 - i) - (int)floor(0.5 * (10 - i) + 0.5));
        CHECK_EQ_INT(t.ch[i].offset, i + k.count[i]);
    }
    CHECK_EQ_INT(k.calls, 2); /* a discrete space: one batch per point */
    fs_row row;
    memset(&row, 0, sizeof row);
    sim_fit_tune_fill_row(&t, 1, &row);
    CHECK(row.tune_evals == 8 && row.tune_train == 10 &&
          !strcmp(row.tune_objective, "tokens_per_s"));
    t.ch[1].train = -HUGE_VAL; /* no finite value: NaN in the row */
    sim_fit_tune_fill_row(&t, 1, &row);
    CHECK(isnan(row.tune_train));
    sim_fit_tune_free(&t);
    sim_fit_tune_free(&t); /* twice is harmless */

    /* a tie: the first vector found is kept */
    k = (fake){.objective = 3, .bad_point = -1};
    CHECK_EQ_INT(tune(&k, &t, 3, 1), SIM_OK);
    CHECK(t.ch[0].x[0] == 2 && t.ch[0].train == 9);
    sim_fit_tune_free(&t);

    /* continuous: the simplex, one vector at a time */
    k = (fake){.objective = 0, .bad_point = -1};
    CHECK_EQ_INT(tune(&k, &t, 0, 1), SIM_OK);
    CHECK(k.calls == t.ch[0].evals && k.calls > 1);
    CHECK(t.ch[0].x[0] > 0.9); /* the objective climbs to the range's top */
    sim_fit_tune_free(&t);
}

/* What the search chose, checked; failures handed back. */
static void test_run_checks(void)
{
    fake k = {.objective = 1, .bad_point = -1};
    sim_fit_tune t;
    CHECK_EQ_INT(tune(&k, &t, 4, 2), SIM_CONFIG);
    CHECK(!strcmp(t.err, "tune.lua:3: flashspec.tune: objective 'tokens_per_s' is not a finite "
                         "number at any of the 4 knob vectors tried for point 1 (NaN or infinite "
                         "everywhere); tune a column these points give a value"));
    sim_fit_tune_free(&t);

    k = (fake){.objective = 2, .bad_point = -1};
    CHECK_EQ_INT(tune(&k, &t, 4, 2), SIM_CONFIG);
    CHECK(!strcmp(t.err, "tune.lua:3: flashspec.tune: objective 'tokens_per_s' is the same at "
                         "every knob vector tried, at every point (5): the knobs (k) do not "
                         "move it, so nothing was tuned"));
    CHECK_EQ_INT(k.calls, 2); /* after every point */
    sim_fit_tune_free(&t);

    /* one vector tried: nothing to compare, so nothing unmoved */
    k = (fake){.objective = 2, .bad_point = -1};
    CHECK_EQ_INT(tune(&k, &t, 1, 2), SIM_OK);
    sim_fit_tune_free(&t);

    /* a failed point: its status and line */
    k = (fake){.objective = 0, .point_call = 2, .bad_point = -1};
    CHECK_EQ_INT(tune(&k, &t, 4, 3), SIM_NOMEM);
    CHECK(!strcmp(t.err, "no room"));
    CHECK_EQ_INT(k.calls, 2);
    sim_fit_tune_free(&t);

    /* the callbacks' own failures: their status, err left empty */
    k = (fake){.objective = 0, .fail_call = 1, .bad_point = -1};
    CHECK_EQ_INT(tune(&k, &t, 4, 2), SIM_INTERNAL);
    CHECK_EQ_INT(t.err[0], 0);
    sim_fit_tune_free(&t);
    k = (fake){.objective = 0, .bad_point = 1};
    CHECK_EQ_INT(tune(&k, &t, 4, 2), SIM_MISSING);
    CHECK_EQ_INT(k.calls, 1); /* point 0 tuned, point 1 never */
    sim_fit_tune_free(&t);

    /* a split that fails stops before the search */
    k = (fake){.objective = 0, .bad_point = -1};
    init(&t, 200, 0.5);
    t.prompts = fake_prompts;
    t.eval = fake_eval;
    t.ctx = &k;
    k.nk = 1;
    sim_fit_tune_knob(&t, 0, &p_int);
    sim_fit_tune_knob_range(&t, 0, 1, 4, 1);
    sim_fit_tune_knob_done(&t, 0);
    sim_fit_tune_space(&t, 1);
    CHECK_EQ_INT(sim_fit_tune_run(&t, 10), SIM_CONFIG); /* point 9: 1 prompt */
    CHECK(strstr(t.err, "holdout = 0.5 of 1 prompt leaves none"));
    CHECK_EQ_INT(k.calls, 9);
    sim_fit_tune_free(&t);
}

int main(void)
{
    test_knob_types();
    test_knob_check();
    test_knob_lists();
    test_knob_ranges();
    test_combos();
    test_space();
    test_split();
    test_run();
    test_run_checks();
    return check_done("test_tune");
}
