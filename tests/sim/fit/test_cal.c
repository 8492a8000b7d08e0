/*
 * test_cal.c -- the calibration's driver (sim/fit/sim_fit_cal.h) without
 * Lua: a fake binding whose points give a known response, tokens_per_s =
 * a exp(-b dram_fraction), from which the loop -- the points run per
 * parameter vector, the reference rows matched, the fit -- recovers a and b;
 * matching (a row no point matches, a row two points tie on, a metric that is
 * not finite, a failed point, a failing callback); the progress line and its
 * ETA at each boundary; held-out rows and the count of rows left; the rows
 * that read the throughput's interval; the files a calibration writes.
 *
 * Writes its reference into a fresh directory under $TMPDIR (or /tmp),
 * removed at the end.
 */
#include "sim/fit/sim_fit_cal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../check.h"

#define MAXM 8 /* vectors one call may ask for (a Jacobian's np columns) */
#define NPTS 6 /* points per vector */
#define TRUE_A 20.0
#define TRUE_B 1.5

static char dir[512];
static fs_rows_meta meta; /* zeroed */

/* ------------------------------------------------------------ the fake */

static const double dram[NPTS] = {0.0, 0.25, 0.5, 0.75, 1.0, 0.5};

typedef struct fake {
    fs_row rows[MAXM][NPTS];
    sim_fit_point pts[MAXM][NPTS];
    int64_t calls;     /* run calls */
    int32_t max_m;     /* the most vectors one call asked for */
    int32_t max_rep;   /* the largest replicate asked for */
    int64_t fail_call; /* this call fails with fail_code (0: none) */
    int fail_code;
    int64_t point_call; /* in this call, vector 0's point 2 fails (0: none) */
    double flash_ms;    /* every point's flash_ms */
} fake;

/* tokens_per_s at dram fraction d; the second point at 0.5 (trace w2) is
 * 1.2x the first, so a row keyed on dram_fraction alone averages the two. */
static double response(double a, double b, int i)
{
    return a * exp(-b * dram[i]) * (i == 5 ? 1.2 : 1.0);
}

static void fill_row(fs_row *r, double a, double b, int i, double flash_ms)
{
    memset(r, 0, sizeof *r);
    snprintf(r->policy, sizeof r->policy, "pol");
    snprintf(r->target, sizeof r->target, "tgt");
    snprintf(r->device, sizeof r->device, "dev");
    snprintf(r->trace, sizeof r->trace, "%s", i == 5 ? "w2" : "w1");
    r->dram_fraction = dram[i];
    r->st.tokens_per_s = response(a, b, i);
    r->st.tokens_per_s_lo = 0.9 * r->st.tokens_per_s;
    r->st.tokens_per_s_hi = 1.1 * r->st.tokens_per_s;
    r->st.flash_ms = flash_ms;
}

static int fake_run(void *ctx, int32_t m, const double *x, int32_t rep, sim_fit_cal_eval *out)
{
    fake *k = ctx;
    k->calls++;
    if (m > k->max_m) k->max_m = m;
    if (rep > k->max_rep) k->max_rep = rep;
    if (k->calls == k->fail_call) return k->fail_code;
    CHECK(m >= 1 && m <= MAXM);
    for (int32_t j = 0; j < m && j < MAXM; j++) {
        for (int i = 0; i < NPTS; i++) {
            fill_row(&k->rows[j][i], x[2 * j], x[2 * j + 1], i, k->flash_ms);
            k->pts[j][i] = (sim_fit_point){.row = &k->rows[j][i]};
        }
        if (k->calls == k->point_call && j == 0)
            k->pts[j][2] = (sim_fit_point){.code = SIM_DATA_FORMAT, .err = "w1: a bad prompt"};
        out[j] = (sim_fit_cal_eval){.pts = k->pts[j], .n = NPTS};
    }
    return SIM_OK;
}

/* --------------------------------------------------------------- set-up */

static const char *write_ref(const char *name, const char *text)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

/* The truth at the five dram fractions, with the tie at 0.5 averaged. */
static const char *truth_csv(void)
{
    static char text[2048];
    size_t at = (size_t)snprintf(text, sizeof text, "dram_fraction,metric,value,source\n");
    for (int i = 0; i < 5; i++) {
        double v = response(TRUE_A, TRUE_B, i);
        if (i == 2) v = 0.5 * (v + response(TRUE_A, TRUE_B, 5));
        at += (size_t)snprintf(text + at, sizeof text - at, "%.2f,tokens_per_s,%.17g,%s\n", dram[i],
                               v, i < 4 ? "table A" : "table B");
    }
    return text;
}

/* A calibration of a and b against the CSV text, the fake as its binding;
 * SIM_OK when it loaded and initialised. */
static int set_up(sim_fit_cal *c, fake *k, const char *csv)
{
    memset(c, 0, sizeof *c);
    memset(k, 0, sizeof *k);
    k->flash_ms = 50;
    c->o = sim_fit_cal_default_opts();
    snprintf(c->o.name, sizeof c->o.name, "toy");
    snprintf(c->chunk, sizeof c->chunk, "spec.lua");
    c->line = 7;
    snprintf(c->ref_arg, sizeof c->ref_arg, "ref.csv");
    c->cols = fs_ref_result_cols(&meta);
    c->run = fake_run;
    c->ctx = k;
    c->f.np = 2;
    c->f.par[0] = (sim_fit_param){.name = "a", .start = 10, .lo = 1, .hi = 100};
    c->f.par[1] = (sim_fit_param){.name = "b", .start = 1, .lo = 0.1, .hi = 5};
    char err[1024];
    const char *path = write_ref("ref.csv", csv);
    int rc = path ? fs_ref_load(path, &c->cols, &c->ref, err, sizeof err) : SIM_CANTCREATE;
    if (rc != SIM_OK) {
        fprintf(stderr, "  %s\n", err);
        return rc;
    }
    return sim_fit_cal_init(c);
}

/* ---------------------------------------------------------------- tests */

static void test_recover(void)
{
    sim_fit_cal c;
    fake k;
    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    c.o.loo = 1; /* exact: refits through the same loop */
    c.f.fd_step = 0.01;
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_OK);
    CHECK_NEAR(c.f.par[0].value, TRUE_A, 1e-4 * TRUE_A);
    CHECK_NEAR(c.f.par[1].value, TRUE_B, 1e-4 * TRUE_B);
    CHECK(c.f.rms < 1e-6);
    CHECK(c.f.start_rms > 0.1);
    CHECK_EQ_INT(c.matches[0], 1);
    CHECK_EQ_INT(c.matches[2], 2); /* the tie at 0.5: both points */
    CHECK_EQ_INT(c.matches[4], 1);
    CHECK_EQ_INT(k.max_m, 2); /* a Jacobian's columns in one call: np */
    CHECK(k.max_rep == 0);    /* no bootstrap asked */
    CHECK(c.f.evals >= 4);
    for (int32_t r = 0; r < c.ref.n_rows; r++)
        CHECK(isfinite(c.f.loo_e[r]) && fabs(c.f.loo_e[r]) < 1e-4);
    CHECK_EQ_INT(c.need_interval, 0);
    sim_fit_cal_free(&c);
    sim_fit_cal_free(&c); /* twice is harmless */
}

static void test_bootstrap_reps(void)
{
    sim_fit_cal c;
    fake k;
    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    c.o.bootstrap = SIM_FIT_BOOT_MIN;
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_OK);
    CHECK_EQ_INT(k.max_rep, SIM_FIT_BOOT_MIN); /* each replicate asked by number */
    CHECK_EQ_INT(c.f.boot_n, SIM_FIT_BOOT_MIN);
    sim_fit_cal_free(&c);
}

/* A row no point matches, a metric not finite, the tie averaged. */
static void test_match(void)
{
    sim_fit_cal c;
    fake k;
    const char *csv = "dram_fraction,trace,metric,value,source\n"
                      "0.5,,tokens_per_s,1,s\n"         /* line 2: both points */
                      "0.5,w2,tokens_per_s,1,s\n"       /* line 3: one of them */
                      "0.9,,tokens_per_s,1,s\n"         /* line 4: none */
                      "0,,tokens_per_s/flash_ms,1,s\n"; /* line 5 */
    CHECK_EQ_INT(set_up(&c, &k, csv), SIM_OK);
    sim_fit_point pts[NPTS];
    fs_row rows[NPTS];
    for (int i = 0; i < NPTS; i++) {
        fill_row(&rows[i], 10, 1, i, 0); /* flash_ms 0: line 5 divides by zero */
        pts[i] = (sim_fit_point){.row = &rows[i]};
    }
    double pred[4] = {0};
    CHECK_EQ_INT(sim_fit_cal_match(&c, pts, NPTS, pred), SIM_DATA);
    CHECK_NEAR(pred[0], 0.5 * (response(10, 1, 2) + response(10, 1, 5)), 1e-12);
    CHECK_EQ_INT(c.matches[0], 2);
    CHECK_NEAR(pred[1], response(10, 1, 5), 1e-12);
    CHECK_EQ_INT(c.matches[1], 1);
    CHECK(strstr(c.err, "ref.csv:4: no point matches this reference row (dram_fraction=0.9)"));
    /* without the unmatched row's point missing: the metric's failure */
    rows[1].dram_fraction = 0.9;
    CHECK_EQ_INT(sim_fit_cal_match(&c, pts, NPTS, pred), SIM_DATA);
    CHECK(strstr(c.err, "ref.csv:5: metric 'tokens_per_s/flash_ms' is not a finite number for "
                        "the point pol tgt on dev (trace w1)"));
    for (int i = 0; i < NPTS; i++)
        rows[i].st.flash_ms = 2;
    CHECK_EQ_INT(sim_fit_cal_match(&c, pts, NPTS, pred), SIM_OK);
    CHECK_NEAR(pred[2], response(10, 1, 1), 1e-12);
    CHECK_NEAR(pred[3], response(10, 1, 0) / 2, 1e-12);
    /* a point that did not run matches nothing */
    pts[1].row = NULL;
    CHECK_EQ_INT(sim_fit_cal_match(&c, pts, NPTS, pred), SIM_DATA);
    CHECK(strstr(c.err, ":4: no point matches"));
    sim_fit_cal_free(&c);
}

/* A failed point fails the calibration with its status and line; a callback
 * that fails hands its status back and leaves err to the binding. */
static void test_failures(void)
{
    sim_fit_cal c;
    fake k;
    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    k.point_call = 2;
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_DATA_FORMAT);
    CHECK(!strcmp(c.err, "w1: a bad prompt"));
    CHECK_EQ_INT(k.calls, 2); /* nothing runs after the failure */
    sim_fit_cal_free(&c);

    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    k.fail_call = 3;
    k.fail_code = SIM_INTERNAL;
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_INTERNAL);
    CHECK_EQ_INT(c.err[0], 0);
    CHECK_EQ_INT(k.calls, 3);
    sim_fit_cal_free(&c);

    /* a row the points never match fails the first evaluation */
    CHECK_EQ_INT(set_up(&c, &k,
                        "dram_fraction,metric,value,source\n0.3,tokens_per_s,1,s\n"
                        "0,tokens_per_s,1,s\n1,tokens_per_s,1,s\n"),
                 SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_DATA);
    CHECK(strstr(c.err, "ref.csv:2: no point matches this reference row (dram_fraction=0.3)"));
    CHECK_EQ_INT(k.calls, 1);
    sim_fit_cal_free(&c);
}

/* holdout: rows of a source held out (once each), one naming no row, and
 * the rows left against the parameters at the boundary. */
static void test_holdout(void)
{
    sim_fit_cal c;
    fake k;
    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_hold(&c, "table B"), SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_hold(&c, "table B"), SIM_OK); /* twice counts once */
    CHECK_EQ_INT(c.n_hold, 1);
    CHECK(c.f.hold[4] && !c.f.hold[3]);
    CHECK_EQ_INT(sim_fit_cal_hold(&c, "table C"), SIM_CONFIG);
    CHECK(!strcmp(c.err, "spec.lua:7: flashspec.calibrate: holdout 'table C' matches no "
                         "reference row's source (ref.csv)"));
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_OK);
    CHECK_EQ_INT(c.f.nf, 4);
    CHECK(isfinite(c.f.hold_rms) && c.f.hold_rms < 1e-4); /* the fit transfers */
    CHECK_NEAR(c.f.par[0].value, TRUE_A, 1e-3 * TRUE_A);
    sim_fit_cal_free(&c);

    /* 2 parameters: 2 rows left is enough, 1 is not */
    const char *three = "dram_fraction,metric,value,source\n0,tokens_per_s,20,x\n"
                        "1,tokens_per_s,4.46,y\n0.25,tokens_per_s,13.7,z\n";
    CHECK_EQ_INT(set_up(&c, &k, three), SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_hold(&c, "z"), SIM_OK);
    CHECK(sim_fit_cal_run(&c) != SIM_CONFIG);
    sim_fit_cal_free(&c);
    CHECK_EQ_INT(set_up(&c, &k, three), SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_hold(&c, "z"), SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_hold(&c, "y"), SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_CONFIG);
    CHECK(!strcmp(c.err, "spec.lua:7: flashspec.calibrate: 2 parameters but only 1 reference "
                         "rows not held out"));
    CHECK_EQ_INT(k.calls, 0);
    sim_fit_cal_free(&c);
    CHECK_EQ_INT(set_up(&c, &k, "dram_fraction,metric,value,source\n0,tokens_per_s,20,x\n"),
                 SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_CONFIG);
    CHECK(strstr(c.err, "2 parameters but only 1 reference rows") && !strstr(c.err, "held out"));
    sim_fit_cal_free(&c);
}

/* The ETA at each boundary, the clock given. */
static void test_eta(void)
{
    sim_fit_cal c;
    memset(&c, 0, sizeof c);
    c.o = sim_fit_cal_default_opts();
    c.o.max_iter = 2;
    c.f.np = 2; /* at most 1 start x 2 iterations x 3 evaluations = 6 */
    char s[128];
    sim_fit_cal_eta(&c, 0, 1, 10.0, s, sizeof s);
    CHECK(!strcmp(s, ", 0.00 s each, ETA at most ~0 s (max_iter)"));
    sim_fit_cal_eta(&c, 0, 3, 13.0, s, sizeof s);
    CHECK(!strcmp(s, ", 1.00 s each, ETA at most ~3 s (max_iter)"));
    sim_fit_cal_eta(&c, 0, 5, 15.0, s, sizeof s);
    CHECK(!strcmp(s, ", 1.00 s each, ETA at most ~1 s (max_iter)"));
    sim_fit_cal_eta(&c, 0, 6, 16.0, s, sizeof s); /* the bound reached: no ETA */
    CHECK(!strcmp(s, ", 1.00 s each"));
    sim_fit_cal_eta(&c, 0, 7, 17.0, s, sizeof s);
    CHECK(!strcmp(s, ", 1.00 s each"));
    /* the bootstrap: a phase of its own, paced once a replicate is done */
    c.o.bootstrap = 20;
    sim_fit_cal_eta(&c, 1, 8, 20.0, s, sizeof s);
    CHECK(!strcmp(s, ", replicate 1 of 20"));
    sim_fit_cal_eta(&c, 1, 9, 21.0, s, sizeof s);
    CHECK(!strcmp(s, ", replicate 1 of 20"));
    sim_fit_cal_eta(&c, 2, 10, 24.0, s, sizeof s); /* 4 s a replicate, 19 to go */
    CHECK(!strcmp(s, ", replicate 2 of 20, ETA ~76 s"));
    sim_fit_cal_eta(&c, 20, 30, 96.0, s, sizeof s); /* the last: 76 s / 19 */
    CHECK(!strcmp(s, ", replicate 20 of 20, ETA ~4 s"));
    /* starts multiply the bound */
    memset(&c, 0, sizeof c);
    c.o = sim_fit_cal_default_opts();
    c.o.max_iter = 2;
    c.o.starts = 2;
    c.f.np = 2;
    sim_fit_cal_eta(&c, 0, 1, 10.0, s, sizeof s);
    sim_fit_cal_eta(&c, 0, 6, 16.0, s, sizeof s);
    CHECK(!strcmp(s, ", 1.00 s each, ETA at most ~6 s (max_iter)"));
}

static double fixed_clock(void)
{
    static double t = 100.0;
    return t += 0.5;
}

/* The progress line: one per evaluation, cleared at the end and before a
 * failure; none without a stream. */
static void test_progress(void)
{
    sim_fit_cal c;
    fake k;
    char *text = NULL;
    size_t len = 0;
    FILE *p = open_memstream(&text, &len);
    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    c.progress = p;
    c.clock = fixed_clock;
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_OK);
    fflush(p);
    CHECK(strncmp(text, "\rflashspec: calibrate toy: evaluation 1, RMS ", 44) == 0);
    CHECK(strstr(text, "\rflashspec: calibrate toy: evaluation 2, RMS "));
    CHECK(!strstr(text, "(bootstrap)"));
    CHECK(len > 2 && text[len - 1] == '\r' && text[len - 2] == ' '); /* cleared */
    int lines = 0;
    for (const char *q = text; (q = strstr(q, "flashspec: calibrate")); q++)
        lines++;
    CHECK_EQ_INT(lines, c.f.evals);
    sim_fit_cal_free(&c);
    fclose(p);
    free(text);

    text = NULL;
    p = open_memstream(&text, &len);
    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    c.progress = p;
    c.clock = fixed_clock;
    k.point_call = 3;
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_DATA_FORMAT);
    fflush(p);
    CHECK(len > 2 && text[len - 1] == '\r' && text[len - 2] == ' '); /* gives way to the error */
    sim_fit_cal_free(&c);
    fclose(p);
    free(text);
}

/* A reference row that reads tokens_per_s_lo or _hi: points must draw their
 * interval. */
static void test_interval(void)
{
    sim_fit_cal c;
    fake k;
    CHECK_EQ_INT(set_up(&c, &k, "dram_fraction,metric,value,source\n0,tokens_per_s_hi,1,s\n"),
                 SIM_OK);
    CHECK_EQ_INT(c.need_interval, 1);
    sim_fit_cal_free(&c);
    CHECK_EQ_INT(set_up(&c, &k, "tokens_per_s_lo,metric,value,source\n1,tokens_per_s,1,s\n"),
                 SIM_OK);
    CHECK_EQ_INT(c.need_interval, 1);
    sim_fit_cal_free(&c);
    CHECK_EQ_INT(set_up(&c, &k, "dram_fraction,metric,value,source\n0,tokens_per_s*2,1,s\n"),
                 SIM_OK);
    CHECK_EQ_INT(c.need_interval, 0);
    sim_fit_cal_free(&c);
}

/* The files: NAME.md and NAME.csv, and PROFILE.lua with a profile. */
static void test_files(void)
{
    sim_fit_cal c;
    fake k;
    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    CHECK_EQ_INT(sim_fit_cal_run(&c), SIM_OK);
    sim_fit_cal_file files[3];
    int n = -1;
    CHECK_EQ_INT(sim_fit_cal_files(&c, files, &n), SIM_OK);
    CHECK_EQ_INT(n, 2);
    CHECK(!strcmp(files[0].name, "toy.md") && !strcmp(files[1].name, "toy.csv"));
    CHECK(files[0].text.n > 0 && strstr(files[0].text.p, "toy"));
    CHECK(files[1].text.n > 0 && strstr(files[1].text.p, "dram_fraction"));
    sim_fit_cal_files_free(files, n);
    CHECK(files[0].text.p == NULL);
    snprintf(c.prof_base, sizeof c.prof_base, "base");
    snprintf(c.prof_name, sizeof c.prof_name, "derived");
    CHECK_EQ_INT(sim_fit_cal_files(&c, files, &n), SIM_OK);
    CHECK_EQ_INT(n, 3);
    CHECK(!strcmp(files[2].name, "derived.lua") && strstr(files[2].text.p, "base"));
    sim_fit_cal_files_free(files, n);
    sim_fit_cal_free(&c);
}

/* The warnings: a parameter the data pull beyond its bound, on warn only. */
static void test_warnings(void)
{
    sim_fit_cal c;
    fake k;
    char *text = NULL;
    size_t len = 0;
    FILE *w = open_memstream(&text, &len);
    CHECK_EQ_INT(set_up(&c, &k, truth_csv()), SIM_OK);
    c.f.par[1].hi = 1.2; /* the truth 1.5 lies beyond */
    c.f.par[1].start = 1;
    c.warn = w;
    int rc = sim_fit_cal_run(&c);
    fflush(w);
    CHECK(rc == SIM_OK);
    if (rc == SIM_OK && c.f.par[1].at_bound > 0)
        CHECK(strstr(text, "flashspec: warning: spec.lua:7: calibration toy: b = ") &&
              strstr(text, "is at its upper bound (bounds 0.1..1.2)"));
    CHECK(c.f.par[1].at_bound > 0);
    sim_fit_cal_free(&c);
    fclose(w);
    free(text);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_cal.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(errno));
        return 2;
    }
    test_recover();
    test_bootstrap_reps();
    test_match();
    test_failures();
    test_holdout();
    test_eta();
    test_progress();
    test_interval();
    test_files();
    test_warnings();
    char path[600];
    snprintf(path, sizeof path, "%s/ref.csv", dir);
    unlink(path);
    rmdir(dir);
    return check_done("test_cal");
}
