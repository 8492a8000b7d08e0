/*
 * sim_fit_tune.h -- the driver of flashspec.tune (whose contract is the
 * header comment of sim/lua/tune.c): the knobs' search space checked, each
 * point's prompts split into tuning and held-out ones, the search run per
 * point (sim_fit_search), and the values it chose checked.  No Lua: the
 * binding reads the spec, hands each knob to the functions below, and gives
 * two callbacks -- where a point's prompts lie, and the points run at knob
 * vectors.
 *
 * Knobs.  For knob i the binding calls sim_fit_tune_knob (its parameter's
 * descriptor: a number, a boolean or a choice), then either
 * sim_fit_tune_knob_list and sim_fit_tune_knob_add per value, or
 * sim_fit_tune_knob_check per bound and sim_fit_tune_knob_range; then
 * sim_fit_tune_knob_done (at most SIM_FIT_TUNE_MAX_COMBOS combinations of
 * the discrete knobs), and once all are read sim_fit_tune_space (max_evals
 * enough for the space).  A value is a number: a boolean 0 or 1, a choice
 * its index.
 *
 * The search.  sim_fit_tune_run tunes points 0..n-1 in order: the prompts
 * callback says where a point's prompts lie, sim_fit_tune_split splits them,
 * the search maximises the objective column of the points the eval callback
 * runs on the tuning prompts, and the choice (knobs, objective on the tuning
 * prompts, evaluations, the held-out prompts) is kept in ch[i].  A point's
 * search that never saw a finite objective, or an objective the same at
 * every vector of every point, is SIM_CONFIG.
 *
 * Failures.  SIM_OK or a SIM_* status with one line in err; when a callback
 * failed, its status as it gave it (the binding raises the error it kept).
 * A point that failed fails the search with its own status and line.
 */
#ifndef SIM_FIT_TUNE_H
#define SIM_FIT_TUNE_H

#include <limits.h>
#include <stdint.h>

#include "engine/eng_param.h"
#include "sim/fit/sim_fit.h"
#include "sim/fit/sim_fit_rows.h"
#include "sim/out/rows.h"

#define SIM_FIT_TUNE_MAX_COMBOS 4096
#define SIM_FIT_TUNE_OBJECTIVE_CAP 64

/* The options (the spec's values, checked by the binding: objective a
 * numeric result column, holdout in [0, 1), max_evals >= 1). */
typedef struct sim_fit_tune_opts {
    char objective[SIM_FIT_TUNE_OBJECTIVE_CAP]; /* the result column maximised */
    double holdout;    /* share of each point's prompts held out of the search */
    int32_t max_evals; /* evaluations per point, at most */
} sim_fit_tune_opts;

/* Where a point's prompts lie. */
typedef struct sim_fit_tune_prompts {
    int32_t offset; /* its first prompt (the point's prompt_offset) */
    int32_t asked;  /* the prompts it asks for (0: all from offset on) */
    int32_t total;  /* prompts in its trace */
} sim_fit_tune_prompts;

/* What the search chose for one point. */
typedef struct sim_fit_tune_choice {
    double x[SIM_FIT_MAX_KNOBS];       /* the knobs */
    double train;                      /* the objective on the tuning prompts
                                          (-HUGE_VAL: none finite) */
    int64_t evals;                     /* evaluations the search made */
    int32_t train_offset, train_count; /* the tuning prompts */
    int32_t offset, count;             /* the prompts its row reports on */
} sim_fit_tune_choice;

/* Where point `point`'s prompts lie, into *p.  SIM_OK or the binding's
 * status. */
typedef int (*sim_fit_tune_prompts_fn)(void *ctx, int64_t point, sim_fit_tune_prompts *p);
/* Runs point `point` with its knobs at each of the n vectors xs[c * nk ..]
 * on prompts [offset, offset + count), and fills out[c] (left as it is for a
 * vector it did not run: no value), borrowed until the next call.  SIM_OK or
 * the binding's status. */
typedef int (*sim_fit_tune_eval_fn)(void *ctx, int64_t point, int64_t n, const double *xs,
                                    int32_t offset, int32_t count, sim_fit_point *out);

typedef struct sim_fit_tune {
    /* ---- in ---- */
    sim_fit_tune_opts o;
    char chunk[PATH_MAX]; /* the spec's file and line, for messages */
    int line;
    const fs_rows_meta *meta; /* of the rows the points give (borrowed) */
    sim_fit_tune_prompts_fn prompts;
    sim_fit_tune_eval_fn eval;
    void *ctx; /* passed to both */
    /* ---- the knobs (sim_fit_tune_knob*) ---- */
    const eng_param_desc *d[SIM_FIT_MAX_KNOBS]; /* each knob's parameter (borrowed) */
    sim_fit_search s;                           /* the space and the search */
    int64_t combos;                             /* of the discrete knobs so far */
    /* ---- out: sim_fit_tune_run ---- */
    int64_t n_points;
    sim_fit_tune_choice *ch; /* [n_points] (owned) */
    char err[1024];
    /* ---- private ---- */
    int64_t point;                     /* the point being tuned */
    int32_t train_offset, train_count; /* its tuning prompts */
    int64_t n_finite, n_seen;          /* objective values over its search: finite, all */
    double seen_lo, seen_hi;           /* the finite ones' range */
    int moved;                         /* some point's search saw the objective move */
    int failed;                        /* a callback or a point failed */
    sim_fit_point *out;                /* [out_cap] what eval fills */
    int64_t out_cap;
} sim_fit_tune;

/* A zeroed driver, no knob read yet (the inputs are set after it). */
void sim_fit_tune_init(sim_fit_tune *t);
/* Frees what the driver holds; NULL-safe, twice is harmless. */
void sim_fit_tune_free(sim_fit_tune *t);

/* Knob i (i < SIM_FIT_MAX_KNOBS) is parameter d (borrowed): SIM_CONFIG when
 * its type cannot be searched (a string or a list). */
int sim_fit_tune_knob(sim_fit_tune *t, int i, const eng_param_desc *d);
/* v is a value knob i may take: finite, whole unless the parameter is a
 * double, inside the parameter's range (a boolean's [0, 1], a choice's
 * indices).  SIM_CONFIG otherwise. */
int sim_fit_tune_knob_check(sim_fit_tune *t, int i, double v);
/* Knob i takes one of n values (1 to SIM_FIT_MAX_VALUES), added in order
 * by sim_fit_tune_knob_add (each checked). */
int sim_fit_tune_knob_list(sim_fit_tune *t, int i, int64_t n);
int sim_fit_tune_knob_add(sim_fit_tune *t, int i, double v);
/* Knob i ranges over [lo, hi] (both checked; lo < hi), started from the
 * policy's own value current (sim_fit_knob_range). */
int sim_fit_tune_knob_range(sim_fit_tune *t, int i, double lo, double hi, double current);
/* Knob i is read: the discrete knobs' combinations so far, at most
 * SIM_FIT_TUNE_MAX_COMBOS. */
int sim_fit_tune_knob_done(sim_fit_tune *t, int i);
/* The nk knobs read: max_evals covers the combinations of a discrete
 * space, and leaves each combination a simplex's least budget. */
int sim_fit_tune_space(sim_fit_tune *t, int32_t nk);

/* Splits the prompts p into the tuning prompts (the first 1 - holdout share
 * of those the point replays) and the held-out ones that follow (all of them
 * when holdout is 0), into ch.  SIM_CONFIG when holdout > 0 leaves none on
 * one side. */
int sim_fit_tune_split(sim_fit_tune *t, const sim_fit_tune_prompts *p, sim_fit_tune_choice *ch);

/* Tunes points 0..n_points-1 into ch. */
int sim_fit_tune_run(sim_fit_tune *t, int64_t n_points);

/* The search's columns of point i's row: tune_evals, tune_train (NaN when
 * none was finite), tune_objective. */
void sim_fit_tune_fill_row(const sim_fit_tune *t, int64_t i, fs_row *row);

/* The objective of a point's row (-HUGE_VAL: not a finite number). */
double sim_fit_tune_objective(const sim_fit_tune *t, const fs_row *row);

#endif
