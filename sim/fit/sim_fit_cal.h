/*
 * sim_fit_cal.h -- the driver of a calibration (flashspec.calibrate, whose
 * contract is the header comment of sim/lua/calibrate.c): reference rows
 * matched to the points an evaluation ran, the fit, its bootstrap and
 * leave-one-out (sim_fit.h), the progress line, the warnings about the fit,
 * and the files a calibration writes.  No Lua: the binding reads the spec
 * into a sim_fit_cal and gives the model as a callback that runs points.
 *
 * The model.  For m parameter vectors at once (a Jacobian's columns) and a
 * replicate rep (0: the fit; 1..B: the bootstrap's), the callback `run`
 * builds and runs each vector's points and hands back, per vector, the
 * points it ran (sim_fit_point: the result row, or the failure).  The driver
 * then takes the vectors in order: a point that failed fails the
 * calibration with its own status and line; else each reference row's
 * prediction is the mean of its metric over the points that match its keys
 * (a row that no point matches, or whose metric is not a finite number at a
 * matching point, is SIM_DATA), and the progress line is rewritten.
 *
 * Progress (progress != NULL, a terminal): one line, rewritten after every
 * evaluation -- "\rflashspec: calibrate NAME: evaluation N[ (bootstrap)],
 * RMS X%" and an ETA (sim_fit_cal_eta) --, cleared when the calibration
 * ends, failed or not, so that whatever is printed next starts a clean line.
 *
 * Failures.  Every function returns SIM_OK or a SIM_* status with one line
 * in err -- but when the callback failed: its status is returned as it gave
 * it, err untouched ("" unless it wrote there); the binding then raises the
 * error it kept.  Nothing here exits or raises.  The caller owns the struct;
 * sim_fit_cal_free frees what the driver allocated and the reference.
 */
#ifndef SIM_FIT_CAL_H
#define SIM_FIT_CAL_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/fit/refcsv.h"
#include "sim/fit/sim_fit.h"
#include "sim/fit/sim_fit_rows.h"
#include "sim/hw/sim_device.h"
#include "sim/out/rows.h"
#include "sim/out/sim_strbuf.h"

/* The options of a calibration (the spec's values, checked by the binding). */
typedef struct sim_fit_cal_opts {
    char name[SIM_FIT_NAME_CAP]; /* a file name: the outputs NAME.md, NAME.csv */
    int32_t loo;                 /* index into sim_fit_loo_names */
    int32_t max_iter, starts;    /* per least-squares fit; fits from this many starts */
    int32_t bootstrap;           /* replicates (0: none, else >= SIM_FIT_BOOT_MIN) */
    double fd_step;              /* the Jacobian's step in the unbounded coordinate */
    double bootstrap_seed;       /* an integer in [0, 2^32) */
} sim_fit_cal_opts;

/* The options' table (flashspec.calibrate's keys: name, type, range,
 * default, doc; NULL-terminated), which the binding checks a spec against. */
const eng_param_desc *sim_fit_cal_option_keys(void);

/* The defaults of that table: "calibration", approx, 100 iterations, one
 * start, no bootstrap, step 0.05, seed 1. */
sim_fit_cal_opts sim_fit_cal_default_opts(void);

/* The leave-one-out kinds by name (NULL-terminated) and sim_fit's kinds, in
 * the same order: sim_fit_cal_opts.loo indexes both. */
extern const char *const sim_fit_loo_names[];
extern const sim_fit_loo_kind sim_fit_loo_kinds[];

/* The points one parameter vector's evaluation ran: pts[0..n), borrowed from
 * the binding until it is called again or the calibration is freed. */
typedef struct sim_fit_cal_eval {
    const sim_fit_point *pts;
    int64_t n;
} sim_fit_cal_eval;

/* Runs the points of the m parameter vectors x[j * np .. (j + 1) * np)
 * (natural units, in par's order) for replicate rep, and fills out[0..m).
 * SIM_OK, or a status of the binding's own (it keeps the error to raise). */
typedef int (*sim_fit_cal_run_fn)(void *ctx, int32_t m, const double *x, int32_t rep,
                                  sim_fit_cal_eval *out);

typedef struct sim_fit_cal {
    /* ---- in: set before sim_fit_cal_init ---- */
    sim_fit_cal_opts o;
    char chunk[PATH_MAX]; /* the spec's file and line, for messages */
    int line;
    fs_ref ref;        /* the reference (owned: sim_fit_cal_free frees it) */
    char ref_arg[256]; /* the reference as the spec names it (for the outputs) */
    /* the derived profile's base and name ("" = no profile), and the
     * parameters it sets: 1 where par[i] is a numeric device key */
    char prof_base[SIM_NAME_CAP], prof_name[SIM_NAME_CAP];
    uint8_t device_key[SIM_FIT_MAX_PARAMS];
    sim_fit f;        /* np and par set (sorted: sim_fit_sort_params); the rest here */
    fs_ref_cols cols; /* the columns of the rows the points give (fs_ref_result_cols) */
    sim_fit_cal_run_fn run;
    void *ctx;             /* passed to run */
    FILE *progress;        /* the progress line's stream (NULL: none) */
    FILE *warn;            /* the warnings' stream (NULL: none) */
    double (*clock)(void); /* seconds for the ETA (NULL: CLOCK_MONOTONIC) */

    /* ---- out ---- */
    int32_t n_hold;    /* held-out rows (sim_fit_cal_hold) */
    int32_t *matches;  /* [ref.n_rows] points matched in the last evaluation */
    int need_interval; /* a reference row reads tokens_per_s_lo/hi: points must
                          draw their bootstrap interval over the prompts */
    char err[1024];    /* the line of the last failure */

    /* ---- private ---- */
    double phase_s;        /* the ETA: when and at which evaluation the current */
    int64_t phase_eval;    /* phase (the fit, the bootstrap) began, and the */
    int32_t phase_rep;     /* replicate it is at */
    int failed;            /* the model failed (its status is the fit's) */
    sim_fit_cal_eval *evs; /* [evs_cap] what run fills */
    int32_t evs_cap;
} sim_fit_cal;

/* After the inputs are set: the fit's problem (the reference rows as
 * observations), matches, need_interval.  SIM_OK or SIM_NOMEM. */
int sim_fit_cal_init(sim_fit_cal *c);

/* Holds out the reference rows whose source is `source` (after
 * sim_fit_cal_init; n_hold counts them).  SIM_CONFIG when it names no row. */
int sim_fit_cal_hold(sim_fit_cal *c, const char *source);

/* The calibration: enough rows not held out for the parameters (SIM_CONFIG),
 * the fit from the starts (SIM_DATA_NOCONV when none converges), its
 * statistics, the bootstrap, leave-one-out; then on warn the rows the fit
 * leans on and what it cannot vouch for (a parameter at its bound, refits
 * that did not converge, an interval that does not hold its estimate).  The
 * results are in f and matches. */
int sim_fit_cal_run(sim_fit_cal *c);

/* A file a calibration writes: its name and its text (owned). */
typedef struct sim_fit_cal_file {
    char name[SIM_FIT_NAME_CAP + 8];
    sim_strbuf text;
} sim_fit_cal_file;

/* After sim_fit_cal_run: NAME.md, NAME.csv and, with a profile,
 * PROFILE.lua (sim_fit_report.h) into files[0..*n).  SIM_OK, or SIM_NOMEM
 * (nothing left to free).  sim_fit_cal_files_free frees their texts. */
int sim_fit_cal_files(sim_fit_cal *c, sim_fit_cal_file files[3], int *n);
void sim_fit_cal_files_free(sim_fit_cal_file *files, int n);

/* Frees what the driver holds and the reference; NULL-safe, twice is
 * harmless (the inputs other than ref stay). */
void sim_fit_cal_free(sim_fit_cal *c);

/* ---- the steps, exposed for their tests ---- */

/* Each reference row's prediction pred[ref.n_rows] from the points pts[0..n)
 * (matches: how many each row averaged).  SIM_DATA when a row matches no
 * point (naming its keys) or its metric is not a finite number at a
 * matching point. */
int sim_fit_cal_match(sim_fit_cal *c, const sim_fit_point *pts, int64_t n, double *pred);

/* The ETA part of the progress line after evaluation `eval` of replicate rep
 * (0: the fit), at time now_s.  The fit: the seconds each evaluation took
 * and at most how long the rest can take (every start running max_iter
 * iterations of 1 + np evaluations each), while that bound lies ahead.  The
 * bootstrap: the replicate it is at of how many and, once a replicate is
 * done, the time the replicates left take at the pace of those done. */
void sim_fit_cal_eta(sim_fit_cal *c, int32_t rep, int64_t eval, double now_s, char *out, size_t n);

#endif
