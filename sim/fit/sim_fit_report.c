/*
 * sim_fit_report.c -- the files a calibration writes after its fit, formatted
 * in memory (sim_fit_report.h): NAME.md, the report -- the summary, the
 * parameters with their delta-method and bootstrap errors, the residuals with
 * leave-one-out errors --; NAME.csv, the residuals at full precision (%.17g);
 * PROFILE.lua, the device profile deriving from a base with the fitted
 * device keys.
 *
 * No Lua and no I/O: the calibration's driver (sim_fit_cal.c) fills a
 * sim_fit_report, and the binding hands the texts to the run, which writes
 * them only when it succeeds.  Every text is a
 * pure function of the report, so the same fit gives the same bytes.
 */
#include "sim/fit/sim_fit_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* NAME.md: the summary and the parameters. */
static void report_head(const sim_fit_report *rep, buf *md)
{
    const sim_fit *f = rep->f;
    bprintf(md, "# Calibration `%s`\n\n", rep->name);
    bprintf(md,
            "Reference: `%s` (%d rows).  Spec: `%s`.  Fitted by `flashspec calibrate` "
            "(GSL trust-region Levenberg-Marquardt on relative errors, bounds by a "
            "logistic map, forward-difference Jacobian with step %g).\n\n",
            rep->ref_arg, f->n, rep->spec, rep->fd_step);
    bprintf(md, "Starts: %d (the lowest converged fit is kept).  ", rep->starts);
    bprintf(md,
            "Status: %s after %zu iterations (%lld evaluations).  RMS relative error "
            "%.2f%% (start %.2f%%); leave-one-out (%s) RMS %.2f%%.  n = %d, p = %d, "
            "AIC %.2f, BIC %.2f.\n\n",
            !f->no_progress ? "converged" : "converged (no further progress)", f->iters,
            (long long)f->evals, 100 * f->rms, 100 * f->start_rms, rep->loo, 100 * f->loo_rms,
            f->nf, f->np, f->aic, f->bic);
    if (rep->n_hold)
        bprintf(md, "Held out (predicted, not fitted): %d rows, RMS relative error %.2f%%.\n\n",
                rep->n_hold, 100 * f->hold_rms);
    if (f->boot_n)
        bprintf(md,
                "Parametric bootstrap: %d replicates (seed %lu), %d refits did not "
                "converge; each replicate re-draws the spec's randomness (points(p, rep)) "
                "and the measurement noise, and is refitted.\n\n",
                f->boot_n, (unsigned long)rep->bootstrap_seed, f->boot_failed);
    if (f->boot_n && f->boot_m < SIM_FIT_BOOT_MIN_CONVERGED)
        bprintf(md,
                "**No bootstrap interval**: %d of %d refits converged, fewer than the %d an "
                "interval needs.\n\n",
                f->boot_m, f->boot_n, SIM_FIT_BOOT_MIN_CONVERGED);
    else if (f->boot_n && f->boot_m < SIM_FIT_BOOT_MIN)
        bprintf(md,
                "**A rough bootstrap interval**: drawn from %d converged refits, fewer than "
                "%d.\n\n",
                f->boot_m, SIM_FIT_BOOT_MIN);
    bprintf(md, "## Parameters\n\n| parameter | value | standard error (delta method) | "
                "bootstrap SE | 95%% interval (bootstrap) | start | bounds |\n"
                "|---|---|---|---|---|---|---|\n");
    int bound = 0;
    for (int32_t i = 0; i < f->np; i++) {
        const sim_fit_param *q = &f->par[i];
        bound |= q->at_bound != 0;
        if (!q->at_bound) {
            bprintf(md, "| `%s` | %.6g | %.3g | %.3g | [%.6g, %.6g] | %.6g | [%g, %g] |\n",
                    q->name, q->value, q->se, q->se_boot, q->ci_lo, q->ci_hi, q->start, q->lo,
                    q->hi);
        } else {
            char ci[64] = "none";
            if (q->at_bound > 0 && isfinite(q->ci_lo))
                snprintf(ci, sizeof ci, "[%.6g, +inf) one-sided", q->ci_lo);
            else if (q->at_bound < 0 && isfinite(q->ci_hi))
                snprintf(ci, sizeof ci, "(-inf, %.6g] one-sided", q->ci_hi);
            bprintf(md,
                    "| `%s` | **%.6g (at its %s bound)** | does not apply | %.3g | %s | %.6g | "
                    "[%g, %g] |\n",
                    q->name, q->value, q->at_bound > 0 ? "upper" : "lower", q->se_boot, ci,
                    q->start, q->lo, q->hi);
        }
    }
    if (bound)
        bprintf(md, "\n**At a bound**: the data pull these parameters to or beyond the bound "
                    "the fit keeps them in; the delta method's standard error does not apply "
                    "there and the interval (95%%, from the bootstrap) is one-sided, open on the "
                    "bound's side.  Widen the bounds or check the reference.\n");
}

/* NAME.md: the residuals table. */
static void report_residuals(const sim_fit_report *rep, buf *md)
{
    const sim_fit *f = rep->f;
    bprintf(md, "\n## Residuals\n\n|");
    for (int32_t j = 0; j < rep->ref->n_keys; j++)
        bprintf(md, " %s |", rep->ref->key_names[j]);
    bprintf(md, " metric | measured | predicted | error | leave-one-out | source |\n|");
    for (int32_t j = 0; j < rep->ref->n_keys + 6; j++)
        bprintf(md, "---|");
    bprintf(md, "\n");
    for (int32_t k = 0; k < f->n; k++) {
        const fs_ref_row *r = &rep->ref->rows[k];
        double pred = f->pred[k], e = f->resid[k], le = f->loo_e[k];
        bprintf(md, "|");
        for (int32_t j = 0; j < rep->ref->n_keys; j++)
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
void sim_fit_report_csv(const sim_fit_report *rep, sim_strbuf *csv)
{
    const sim_fit *f = rep->f;
    for (int32_t j = 0; j < rep->ref->n_keys; j++)
        bprintf(csv, "%s,", rep->ref->key_names[j]);
    bprintf(csv, "metric,measured,predicted,error,loo_error,points,source\n");
    for (int32_t k = 0; k < f->n; k++) {
        const fs_ref_row *r = &rep->ref->rows[k];
        for (int32_t j = 0; j < rep->ref->n_keys; j++)
            bcsv(csv, r->keys[j], ",");
        bcsv(csv, r->metric, ",");
        bprintf(csv, "%.17g,%.17g,%.17g,%.17g,%d,", r->value, f->pred[k], f->resid[k], f->loo_e[k],
                rep->matches[k]);
        bcsv(csv, r->source, "\n");
    }
}

/* s as the body of a Lua "..." string, at most max bytes of it: quotes and
 * backslashes escaped, control characters as spaces. */
static void blua(buf *b, const char *s, size_t max)
{
    for (size_t i = 0; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            bprintf(b, "\\%c", c);
        else
            bprintf(b, "%c", c < 0x20 || c == 0x7f ? ' ' : c);
    }
}

/* PROFILE.lua: a device profile deriving from the base with the fitted keys;
 * its `fit` table marks them as fits (flashspec profiles --explain). */
void sim_fit_report_profile(const sim_fit_report *rep, sim_strbuf *pf)
{
    const sim_fit *f = rep->f;
    bprintf(pf,
            "-- %s: device profile fitted by `flashspec calibrate` (spec %s, calibration "
            "'%s').\n-- Reference measurements: %s (%d rows); RMS relative error "
            "%.2f%%, leave-one-out (%s) %.2f%%.\n-- Every value below: fitted value, "
            "standard error, the bounds of the fit.\nreturn {\n  name = \"%s\",\n  "
            "base = \"%s\",\n",
            rep->prof_name, rep->spec, rep->name, rep->ref_arg, f->n, 100 * f->rms, rep->loo,
            100 * f->loo_rms, rep->prof_name, rep->prof_base);
    for (int32_t i = 0; i < f->np; i++) {
        const sim_fit_param *q = &f->par[i];
        if (!rep->device_key[i]) continue;
        if (q->at_bound)
            bprintf(pf, "  %s = %.6g, -- fitted AT ITS %s BOUND (bounds %g..%g): the data pull "
                        "it beyond",
                    q->name, q->value, q->at_bound > 0 ? "UPPER" : "LOWER", q->lo, q->hi);
        else
            bprintf(pf, "  %s = %.6g, -- fitted: %.6g +/- %.3g (bounds %g..%g)", q->name,
                    q->value, q->value, q->se, q->lo, q->hi);
        if (q->at_bound > 0 && isfinite(q->ci_lo))
            bprintf(pf, "; bootstrap one-sided 95%% interval >= %.6g", q->ci_lo);
        else if (q->at_bound < 0 && isfinite(q->ci_hi))
            bprintf(pf, "; bootstrap one-sided 95%% interval <= %.6g", q->ci_hi);
        else if (!q->at_bound && isfinite(q->ci_lo))
            bprintf(pf, "; bootstrap 95%% interval %.6g..%.6g", q->ci_lo, q->ci_hi);
        bprintf(pf, "\n");
    }
    bprintf(pf, "  fit = {\n");
    for (int32_t i = 0; i < f->np; i++) {
        const sim_fit_param *q = &f->par[i];
        if (!rep->device_key[i]) continue;
        bprintf(pf, "    %s = \"flashspec calibrate (spec ", q->name);
        blua(pf, rep->spec, 200);
        bprintf(pf, ", calibration '");
        blua(pf, rep->name, 100);
        bprintf(pf, "'): %.6g +/- %.3g\",\n", q->value, q->se);
    }
    bprintf(pf, "  },\n}\n");
}

void sim_fit_report_md(const sim_fit_report *rep, sim_strbuf *md)
{
    report_head(rep, md);
    report_residuals(rep, md);
}
