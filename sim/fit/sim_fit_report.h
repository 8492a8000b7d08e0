/*
 * sim_fit_report.h -- the files flashspec.calibrate writes after a fit
 * (sim/lua/calibrate.c, "Outputs"), formatted from the fit and its reference
 * rows: NAME.md (the report), NAME.csv (per-row residuals and leave-one-out
 * errors) and PROFILE.lua (a device profile deriving from a base, whose keys
 * are the fitted device keys, each with its value, standard error, bounds and
 * bootstrap interval).  No Lua, no I/O: each function appends text to a
 * sim_strbuf, and the caller writes it.
 */
#ifndef SIM_FIT_REPORT_H
#define SIM_FIT_REPORT_H

#include <stdint.h>

#include "sim/fit/refcsv.h"
#include "sim/fit/sim_fit.h"
#include "sim/out/sim_strbuf.h"

/* What the outputs say, all borrowed for the duration of a call. */
typedef struct sim_fit_report {
    const sim_fit *f;          /* after sim_fit_stats, sim_fit_bootstrap and sim_fit_loo */
    const fs_ref *ref;         /* the reference: row k is the fit's observation k */
    const int32_t *matches;    /* [f->n] points each row's prediction is the mean of */
    const uint8_t *device_key; /* [f->np] 1: a numeric device key (in PROFILE.lua) */
    const char *name;          /* the calibration's name */
    const char *spec;          /* the spec's file */
    const char *ref_arg;       /* the reference file as the spec names it */
    const char *loo;           /* the leave-one-out kind: "approx", "exact" or "none" */
    const char *prof_name;     /* the derived profile's name */
    const char *prof_base;     /* the profile it derives from */
    double fd_step;            /* the Jacobian's step, in the unbounded coordinate */
    double bootstrap_seed;     /* an integer */
    int32_t starts, n_hold;    /* starting points; held-out rows */
} sim_fit_report;

/* NAME.md: the summary, the parameters and the residuals table. */
void sim_fit_report_md(const sim_fit_report *rep, sim_strbuf *md);
/* NAME.csv: the reference's keys, then metric, measured, predicted, error,
 * loo_error, points and source per reference row. */
void sim_fit_report_csv(const sim_fit_report *rep, sim_strbuf *csv);
/* PROFILE.lua: a profile named prof_name deriving from prof_base. */
void sim_fit_report_profile(const sim_fit_report *rep, sim_strbuf *pf);

#endif
