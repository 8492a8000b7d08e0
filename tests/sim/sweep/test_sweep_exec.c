/*
 * test_sweep_exec.c -- the execution of staged points in C
 * (sim/sweep/sim_sweep_exec.h), no Lua:
 *   - the memo of point statistics a calibration keeps: an entry is found by
 *     its whole id only (ids differing in one bit of either half miss), ids
 *     on one slot all found by probing, an id added twice only marked used,
 *     pending entries filled once, entries unused for SIM_SWEEP_MEMO_KEEP
 *     evaluations dropped (the boundary evaluation either side) and the rest
 *     found after the index is rebuilt, a full memo keeping what it has;
 *   - the failure ranking: a fault of flashspec over damaged data over a
 *     configuration error, each pair in both orders, ties keeping the first,
 *     extended statuses with their primary;
 *   - sim_sweep_exec_run: only the points the memo did not give run; every
 *     outcome back in point order (statistics, or the error line naming the
 *     point, cut with "..." exactly past its field); the failed points'
 *     report lines, count and status, the summary line; the timeline point's
 *     hooks and outcome, a resumed one replayed again to record it;
 *   - the timeline's file after the script: written with its line, refused
 *     for a point or prompt the script did not run, none for a failed point;
 *   - a calibration's evaluations batched: each id run once, the memo's
 *     counts and entries those of the evaluations run in turn;
 *   - the line of a run a signal or the time limit stopped: what it saved.
 */
#include "sim/sweep/sim_sweep_exec.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"
#include "../hw/hw_fixtures.h"
#include "engine/pol_flash_ar.h"
#include "sim/out/sim_timeline.h"
#include "sim/sweep/sim_sweep.h"

int hdr_sim_sweep_exec_ok(void);

static sim_point_stats stats_of(int64_t v)
{
    sim_point_stats st;
    memset(&st, 0, sizeof st);
    st.tokens = v;
    return st;
}

/* ---------------------------------------------------------------- memo */

static void test_memo_whole_id(void)
{
    sim_sweep_memo m = {0};
    sim_id id = {0x0123456789abcdefull, 0xfedcba9876543210ull};
    sim_point_stats st = stats_of(42);
    CHECK(sim_sweep_memo_find(&m, id) == NULL); /* empty */
    CHECK(sim_sweep_memo_put(&m, id, &st) == 0);
    sim_sweep_memo_entry *e = sim_sweep_memo_find(&m, id);
    CHECK(e && e->st.tokens == 42 && !e->pending);
    for (int half = 0; half < 2; half++)
        for (int bit = 0; bit < 64; bit++) {
            sim_id near = id;
            if (half)
                near.hi ^= 1ull << bit;
            else
                near.lo ^= 1ull << bit;
            CHECK(sim_sweep_memo_find(&m, near) == NULL);
        }
    sim_sweep_memo_free(&m);
    CHECK(m.n == 0 && m.e == NULL && m.slot == NULL && m.n_slot == 0);
}

/* Ids on one slot of the first index (128 slots: lo's low 7 bits, hi 0):
 * each found by probing past the others, an absent one of that slot missed. */
static void test_memo_probe(void)
{
    sim_sweep_memo m = {0};
    for (uint64_t k = 0; k < 5; k++) {
        sim_point_stats st = stats_of((int64_t)k + 10);
        CHECK(sim_sweep_memo_put(&m, (sim_id){0, 3 + 128 * k}, &st) == 0);
    }
    CHECK_EQ_INT(m.n_slot, 128);
    for (uint64_t k = 0; k < 5; k++) {
        sim_sweep_memo_entry *e = sim_sweep_memo_find(&m, (sim_id){0, 3 + 128 * k});
        CHECK(e && e->st.tokens == (int64_t)k + 10);
    }
    CHECK(sim_sweep_memo_find(&m, (sim_id){0, 3 + 128 * 5}) == NULL);
    CHECK(sim_sweep_memo_find(&m, (sim_id){1, 3}) == NULL); /* same lo, other hi */
    sim_sweep_memo_free(&m);
}

/* An id put again is only marked used; a pending entry is filled once. */
static void test_memo_put_fill(void)
{
    sim_sweep_memo m = {0};
    sim_id a = {7, 7}, b = {8, 8};
    sim_point_stats s1 = stats_of(1), s2 = stats_of(2);
    m.now = 3;
    CHECK(sim_sweep_memo_put(&m, a, &s1) == 0);
    m.now = 5;
    CHECK(sim_sweep_memo_put(&m, a, &s2) == 0);
    CHECK_EQ_INT(m.n, 1);
    sim_sweep_memo_entry *e = sim_sweep_memo_find(&m, a);
    CHECK(e && e->st.tokens == 1 && e->used_at == 5);
    sim_sweep_memo_fill(&m, a, &s2); /* not pending: kept */
    CHECK(e && e->st.tokens == 1);
    CHECK(sim_sweep_memo_put(&m, b, NULL) == 0);
    e = sim_sweep_memo_find(&m, b);
    CHECK(e && e->pending == 1);
    sim_sweep_memo_fill(&m, b, &s2);
    CHECK(e && e->pending == 0 && e->st.tokens == 2);
    sim_sweep_memo_fill(&m, b, &s1); /* filled already */
    CHECK(e && e->st.tokens == 2);
    sim_sweep_memo_fill(&m, (sim_id){9, 9}, &s1); /* absent: nothing added */
    CHECK_EQ_INT(m.n, 2);
    sim_sweep_memo_free(&m);
}

static void test_memo_prune_and_growth(void)
{
    sim_sweep_memo m = {0};
    enum { N = 3000 };
    for (int64_t i = 0; i < N; i++) {
        m.now = i / 1000; /* three evaluations of 1000 points */
        sim_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        sim_point_stats st = stats_of(i);
        CHECK(sim_sweep_memo_put(&m, id, &st) == 0);
    }
    for (int64_t i = 0; i < N; i++) {
        sim_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        sim_sweep_memo_entry *e = sim_sweep_memo_find(&m, id);
        CHECK(e && e->st.tokens == i);
    }
    /* SIM_SWEEP_MEMO_KEEP evaluations later only the last one's entries stay */
    m.now = 2 + SIM_SWEEP_MEMO_KEEP - 1;
    sim_sweep_memo_prune(&m);
    CHECK_EQ_INT(m.n, 1000);
    for (int64_t i = 0; i < N; i++) {
        sim_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        sim_sweep_memo_entry *e = sim_sweep_memo_find(&m, id);
        if (i >= 2000)
            CHECK(e && e->st.tokens == i);
        else
            CHECK(e == NULL);
    }
    sim_sweep_memo_free(&m);
}

/* The boundary: used SIM_SWEEP_MEMO_KEEP - 1 evaluations ago stays, KEEP ago
 * goes; a prune that drops nothing keeps everything. */
static void test_memo_prune_edge(void)
{
    sim_sweep_memo m = {0};
    sim_point_stats st = stats_of(1);
    m.now = 10 - SIM_SWEEP_MEMO_KEEP;
    CHECK(sim_sweep_memo_put(&m, (sim_id){1, 1}, &st) == 0);
    m.now = 10 - SIM_SWEEP_MEMO_KEEP + 1;
    CHECK(sim_sweep_memo_put(&m, (sim_id){2, 2}, &st) == 0);
    m.now = 9;
    sim_sweep_memo_prune(&m);
    CHECK_EQ_INT(m.n, 2);
    m.now = 10;
    sim_sweep_memo_prune(&m);
    CHECK_EQ_INT(m.n, 1);
    CHECK(sim_sweep_memo_find(&m, (sim_id){1, 1}) == NULL);
    CHECK(sim_sweep_memo_find(&m, (sim_id){2, 2}) != NULL);
    sim_sweep_memo_free(&m);
}

/* A full memo adds nothing more (and says so with 0, not an error) but
 * still marks an entry it holds used. */
static void test_memo_full(void)
{
    sim_sweep_memo m = {0};
    sim_point_stats st = stats_of(5);
    for (int64_t i = 0; i < SIM_SWEEP_MEMO_MAX; i++)
        CHECK(sim_sweep_memo_put(&m, (sim_id){(uint64_t)i, (uint64_t)i * 31}, &st) == 0);
    CHECK_EQ_INT(m.n, SIM_SWEEP_MEMO_MAX);
    sim_id extra = {1ull << 40, 17};
    CHECK(sim_sweep_memo_put(&m, extra, &st) == 0);
    CHECK_EQ_INT(m.n, SIM_SWEEP_MEMO_MAX);
    CHECK(sim_sweep_memo_find(&m, extra) == NULL);
    m.now = 3;
    CHECK(sim_sweep_memo_put(&m, (sim_id){5, 5 * 31}, &st) == 0);
    sim_sweep_memo_entry *e = sim_sweep_memo_find(&m, (sim_id){5, 5 * 31});
    CHECK(e && e->used_at == 3);
    sim_sweep_memo_free(&m);
}

/* ------------------------------------------------------------- ranking */

/* The status owed after a then b. */
static int owed(int a, int b)
{
    sim_sweep_exec ex;
    memset(&ex, 0, sizeof ex);
    sim_sweep_exec_note(&ex, a);
    sim_sweep_exec_note(&ex, b);
    return ex.point_code;
}

static void test_failure_rank(void)
{
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_NOMEM), 3);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_INTERNAL), 3);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_MISMATCH), 3);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_INTERNAL_DES_FULL), 3);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_DATA), 2);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_DATA_FORMAT), 2);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_DATA_NOCONV), 2);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_CONFIG), 1);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_CONFIG_NOFIT), 1);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_MISSING), 1);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_USAGE), 1);
    CHECK_EQ_INT(sim_sweep_failure_rank(SIM_CANTCREATE), 1);
    /* each pair in both orders: the more serious one is owed */
    CHECK_EQ_INT(owed(SIM_INTERNAL, SIM_DATA), SIM_INTERNAL);
    CHECK_EQ_INT(owed(SIM_DATA, SIM_INTERNAL), SIM_INTERNAL);
    CHECK_EQ_INT(owed(SIM_DATA, SIM_CONFIG), SIM_DATA);
    CHECK_EQ_INT(owed(SIM_CONFIG, SIM_DATA), SIM_DATA);
    CHECK_EQ_INT(owed(SIM_INTERNAL, SIM_CONFIG), SIM_INTERNAL);
    CHECK_EQ_INT(owed(SIM_CONFIG, SIM_INTERNAL), SIM_INTERNAL);
    CHECK_EQ_INT(owed(SIM_CONFIG_NOFIT, SIM_DATA_FORMAT), SIM_DATA_FORMAT);
    CHECK_EQ_INT(owed(SIM_DATA_FORMAT, SIM_CONFIG_NOFIT), SIM_DATA_FORMAT);
    CHECK_EQ_INT(owed(SIM_DATA_FORMAT, SIM_MISMATCH), SIM_MISMATCH);
    CHECK_EQ_INT(owed(SIM_NOMEM, SIM_DATA_SCHEMA), SIM_NOMEM);
    /* ties: the first stays */
    CHECK_EQ_INT(owed(SIM_INTERNAL, SIM_NOMEM), SIM_INTERNAL);
    CHECK_EQ_INT(owed(SIM_NOMEM, SIM_INTERNAL), SIM_NOMEM);
    CHECK_EQ_INT(owed(SIM_DATA, SIM_DATA_FORMAT), SIM_DATA);
    CHECK_EQ_INT(owed(SIM_DATA_FORMAT, SIM_DATA), SIM_DATA_FORMAT);
    CHECK_EQ_INT(owed(SIM_CONFIG, SIM_MISSING), SIM_CONFIG);
    CHECK_EQ_INT(owed(SIM_MISSING, SIM_CONFIG_NOFIT), SIM_MISSING);
    CHECK_EQ_INT(owed(SIM_CONFIG, 0), SIM_CONFIG); /* none owed: the first */
}

/* ------------------------------------------------------- tree-size caps */

/* The test's points set their cap unless their memo field is 9. */
static int cap_set_unless_9(const sim_sweep_staged *s)
{
    return s->memo != 9;
}

/* sim_sweep_tree_cap: a tree policy's cap from its params, NAN for a
 * policy without trees; sim_sweep_unbound_caps: only points that ran, with a
 * cap, that the script set count; one that verified fewer rows than its cap
 * never bound it (as many: it did); the first such is named. */
static void test_unbound_caps(void)
{
    int32_t nd = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&nd), *tree = NULL;
    static _Alignas(max_align_t) unsigned char params[4096];
    for (int32_t i = 0; i < nd && !tree; i++) {
        if (reg[i]->params_size > sizeof params) continue;
        eng_params_defaults(reg[i]->params, params);
        if (eng_tree_param(reg[i], params)) tree = reg[i];
    }
    CHECK(tree != NULL);
    if (!tree) return;
    double cap = sim_sweep_tree_cap(tree, params);
    CHECK(cap >= 2 && cap == eng_tree_nodes(tree, params));
    eng_flash_ar_params fp;
    eng_params_defaults(eng_flash_ar_param_table, &fp);
    const eng_policy_desc *flat = eng_policy_lookup("flash_ar");
    CHECK(flat && isnan(sim_sweep_tree_cap(flat, &fp)));
    sim_sweep_staged s[6];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 6; i++) {
        s[i].pt.policy = tree;
        s[i].pt.policy_params = params;
        s[i].row.st.verify_rows_max = (int64_t)cap; /* bound */
    }
    int64_t ran = -5, first = -5;
    CHECK_EQ_INT(sim_sweep_unbound_caps(s, 6, cap_set_unless_9, &ran, &first), 0);
    CHECK_EQ_INT(ran, 6);
    CHECK_EQ_INT(first, -1);
    s[1].code = SIM_CONFIG; /* failed: not counted */
    s[1].row.st.verify_rows_max = 0;
    s[2].memo = 9; /* the script left the cap alone */
    s[2].row.st.verify_rows_max = 0;
    s[3].pt.policy = flat; /* no trees */
    s[3].pt.policy_params = &fp;
    s[4].row.st.verify_rows_max = (int64_t)cap - 1; /* one below: never bound */
    s[5].row.st.verify_rows_max = 0;
    CHECK_EQ_INT(sim_sweep_unbound_caps(s, 6, cap_set_unless_9, &ran, &first), 2);
    CHECK_EQ_INT(ran, 3);
    CHECK_EQ_INT(first, 4);
    CHECK_EQ_INT(sim_sweep_unbound_caps(s, 4, cap_set_unless_9, &ran, &first), 0);
    CHECK_EQ_INT(ran, 1);
    CHECK_EQ_INT(first, -1);
}

/* ------------------------------------------------------------- execute */

typedef struct fixture {
    sim_device dev;
    sim_model tgt;
    trc_trace *tr;
    eng_flash_ar_params fp;
} fixture;

static int fixture_open(fixture *f)
{
    f->dev = phone();
    f->dev.dram_budget_gb = 64.0;
    f->tgt = q8();
    trc_synth_params sp;
    trc_synth_default_params(&sp);
    sp.prompts = 1;
    sp.output_len = 16;
    f->tr = NULL;
    trc_err terr;
    CHECK_EQ_INT(trc_synth(&sp, &f->tr, &terr), TRC_OK);
    eng_params_defaults(eng_flash_ar_param_table, &f->fp);
    return f->tr ? 0 : -1;
}

/* Staged point i of a fixture: flash_ar at dram, 8 tokens, its own id. */
static void stage(fixture *f, sim_sweep_staged *s, int i, double dram)
{
    memset(s, 0, sizeof *s);
    s->pt = (sim_point){.device = &f->dev, .target = &f->tgt, .trace = f->tr,
                        .policy = eng_policy_lookup("flash_ar"), .policy_params = &f->fp,
                        .dram_fraction = dram, .max_new_tokens = 8, .seed = 1};
    s->id = (sim_id){0x1234u + (uint64_t)i, 7};
    snprintf(s->row.policy, sizeof s->row.policy, "flash_ar");
    snprintf(s->row.device, sizeof s->row.device, "phone");
    snprintf(s->row.target, sizeof s->row.target, "q8");
    snprintf(s->row.trace, sizeof s->row.trace, "synth");
    s->row.dram_fraction = dram;
}

static void quiet_exec(sim_sweep_exec *ex)
{
    memset(ex, 0, sizeof *ex);
    ex->workers = 2;
    ex->quiet = 1;
}

/* Points a memo gave (memo 1 and 2) are not run and keep their statistics;
 * the others run, each its own point, at any position among them. */
static void test_exec_skips_memo(fixture *f)
{
    const double dram[4] = {0.0, 0.25, 0.5, 1.0};
    const int32_t memo[4] = {0, 1, 0, 2};
    sim_sweep_staged s[4];
    for (int i = 0; i < 4; i++) {
        stage(f, &s[i], i, dram[i]);
        s[i].memo = memo[i];
        s[i].row.st.tokens = memo[i] ? -100 - i : 0; /* what the memo gave */
    }
    sim_sweep_exec ex;
    quiet_exec(&ex);
    char err[1024] = "";
    CHECK_EQ_INT(sim_sweep_exec_run(&ex, s, 4, 0, "test", 1, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(ex.computed, 2);
    CHECK_EQ_INT(ex.points_seen, 4);
    CHECK(s[1].row.st.tokens == -101 && s[3].row.st.tokens == -103); /* not run */
    CHECK(s[1].state == 0 && s[3].state == 0);
    CHECK(s[0].code == 0 && s[2].code == 0);
    CHECK(s[0].state == SIM_SWEEP_COMPUTED && s[2].state == SIM_SWEEP_COMPUTED);
    CHECK(s[0].row.st.tokens == 8 && s[2].row.st.tokens == 8);
    /* each its own: half the layers pinned reads less than none */
    CHECK(s[2].row.st.tokens_per_s > s[0].row.st.tokens_per_s);
}

/* Runs sp[0..n) with stderr captured into out (at most cap bytes). */
static int run_captured(sim_sweep_exec *ex, sim_sweep_staged *sp, int64_t n, int single,
                        char *out, size_t cap, char *err, size_t errlen)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *t = tmpfile();
    if (saved < 0 || !t) return -99;
    dup2(fileno(t), 2);
    int rc = sim_sweep_exec_run(ex, sp, n, single, "t.lua", 7, err, errlen);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(t);
    size_t got = fread(out, 1, cap - 1, t);
    out[got] = 0;
    fclose(t);
    return rc;
}

/* Outcomes in point order around a point that failed staging (code set), one
 * that fails when it runs, one the memo gave; the report names each failed
 * point, counts them, owes the most serious status, and sums up. */
static void test_exec_collect_report(fixture *f)
{
    sim_sweep_staged s[5];
    for (int i = 0; i < 5; i++)
        stage(f, &s[i], i, 0.25 * i);
    s[1].code = SIM_DATA; /* failed staging */
    snprintf(s[1].err, sizeof s[1].err, "bad trace");
    s[2].pt.max_new_tokens = 0; /* fails when it runs: SIM_CONFIG */
    s[3].memo = 1;
    s[3].row.st.tokens = -3;
    sim_sweep_exec ex;
    quiet_exec(&ex);
    ex.quiet = 0;
    char out[4096], err[1024] = "";
    CHECK_EQ_INT(run_captured(&ex, s, 5, 0, out, sizeof out, err, sizeof err), SIM_OK);
    CHECK(s[0].state == SIM_SWEEP_COMPUTED && s[0].row.st.tokens == 8 && s[0].code == 0);
    CHECK(s[1].code == SIM_DATA && s[1].state == 0 && strcmp(s[1].err, "bad trace") == 0);
    CHECK(s[2].state == SIM_SWEEP_FAILED && sim_status_primary(s[2].code) == SIM_CONFIG);
    const char *want2 = "t.lua:7: flashspec.sweep (flash_ar on phone, q8, trace synth, "
                        "dram_fraction=0.5): ";
    CHECK(strncmp(s[2].err, want2, strlen(want2)) == 0);
    CHECK(strstr(s[2].err, "max_new_tokens") != NULL);
    CHECK(s[3].row.st.tokens == -3 && s[3].code == 0);
    CHECK(s[4].state == SIM_SWEEP_COMPUTED && s[4].row.st.tokens == 8);
    CHECK(s[4].row.st.tokens_per_s > s[0].row.st.tokens_per_s);
    CHECK_EQ_INT(ex.failed, 2);
    CHECK_EQ_INT(ex.computed, 2);
    CHECK_EQ_INT(ex.point_code, SIM_DATA); /* data over configuration, though first */
    char line[1200];
    snprintf(line, sizeof line, "flashspec: point 2 of 5 failed: bad trace\n"
                                "flashspec: point 3 of 5 failed: %s\n", s[2].err);
    CHECK(strstr(out, line) != NULL);
    CHECK(strstr(out, "flashspec: sweep of 5 points: 2 computed, 0 resumed, 2 failed in ") !=
          NULL);
    /* quiet: the failed points' lines only; rank 1: nothing, still counted */
    stage(f, &s[0], 0, 0.0);
    s[0].pt.max_new_tokens = 0;
    quiet_exec(&ex);
    CHECK_EQ_INT(run_captured(&ex, s, 1, 0, out, sizeof out, err, sizeof err), SIM_OK);
    const char *want = "flashspec: point 1 of 1 failed: t.lua:7: flashspec.sweep (";
    CHECK(strncmp(out, want, strlen(want)) == 0);
    CHECK(strstr(out, "flashspec: sweep of") == NULL);
    stage(f, &s[0], 0, 0.0);
    s[0].pt.max_new_tokens = 0;
    quiet_exec(&ex);
    ex.rank = 1;
    CHECK_EQ_INT(run_captured(&ex, s, 1, 0, out, sizeof out, err, sizeof err), SIM_OK);
    CHECK(out[0] == 0 && ex.failed == 1 && sim_status_primary(ex.point_code) == SIM_CONFIG);
    /* single (fs.run): the error line says so; nothing reported, nothing owed */
    stage(f, &s[0], 0, 0.0);
    s[0].pt.max_new_tokens = 0;
    quiet_exec(&ex);
    ex.quiet = 0;
    CHECK_EQ_INT(run_captured(&ex, s, 1, 1, out, sizeof out, err, sizeof err), SIM_OK);
    want = "t.lua:7: flashspec.run (flash_ar on ";
    CHECK(strncmp(s[0].err, want, strlen(want)) == 0);
    CHECK(out[0] == 0 && ex.failed == 0 && ex.point_code == 0);
}

/* The error line of a point failing with policy_params of pad letters. */
static void failing_line(fixture *f, size_t pad, char *err, size_t n)
{
    sim_sweep_staged s;
    stage(f, &s, 0, 0.0);
    s.pt.max_new_tokens = 0;
    memset(s.row.policy_params, 'p', pad);
    s.row.policy_params[pad] = 0;
    sim_sweep_exec ex;
    quiet_exec(&ex);
    char e[1024];
    CHECK_EQ_INT(sim_sweep_exec_run(&ex, &s, 1, 1, "t.lua", 7, e, sizeof e), SIM_OK);
    snprintf(err, n, "%s", s.err);
}

/* An error line that fills its field to the last byte is whole; one byte
 * more and it is cut, ending in "...". */
static void test_exec_error_cut(fixture *f)
{
    char e[512];
    sim_sweep_staged s;
    failing_line(f, 1, e, sizeof e);
    size_t base = strlen(e), cap = sizeof s.err - 1;
    CHECK(base < cap);
    if (base >= cap) return;
    failing_line(f, 1 + cap - base, e, sizeof e);
    CHECK_EQ_INT(strlen(e), cap);
    CHECK(strcmp(e + cap - 3, "...") != 0 && e[cap - 1] != '.');
    failing_line(f, 2 + cap - base, e, sizeof e);
    CHECK_EQ_INT(strlen(e), cap);
    CHECK(strcmp(e + cap - 3, "...") == 0);
}

/* The timeline's file after the script, ex holding a recorded point (4,
 * prompt 0, one prompt replayed, cycles of them): the prompt's edge, the
 * file written and its line; a point never reached, a failed one, no cycle. */
static void timeline_file(sim_sweep_exec *ex, int64_t cycles)
{
    char dir[] = "/tmp/fs_sweep_tl_XXXXXX", path[64], err[1024] = "", out[2048], want[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/tl.json", dir);
    ex->tl_prompt = 1;
    CHECK_EQ_INT(sim_sweep_exec_timeline_write(ex, path, 1, err, sizeof err), SIM_USAGE);
    CHECK(strcmp(err, "--timeline-prompt 1: point 4 replayed 1 prompt (indices 0..0); no "
                      "timeline written") == 0);
    ex->tl_prompt = 0;
    fflush(stderr);
    int saved = dup(2);
    FILE *t = tmpfile();
    if (saved < 0 || !t) return;
    dup2(fileno(t), 2);
    int rc = sim_sweep_exec_timeline_write(ex, path, 0, err, sizeof err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(t);
    out[fread(out, 1, sizeof out - 1, t)] = 0;
    fclose(t);
    CHECK_EQ_INT(rc, SIM_OK);
    snprintf(want, sizeof want, "flashspec: wrote the timeline of point 4 prompt 0 to %s (%lld "
             "cycles, %lld spans)\n", path, (long long)cycles,
             (long long)sim_timeline_n_spans(ex->tl));
    CHECK(strcmp(out, want) == 0);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size > 0);
    unlink(path);
    sim_sweep_exec other = *ex; /* never reached: 3 points, or 1 */
    other.tl_state = SIM_SWEEP_TL_NOT_REACHED;
    other.points_seen = 3;
    CHECK_EQ_INT(sim_sweep_exec_timeline_write(&other, path, 1, err, sizeof err), SIM_USAGE);
    CHECK(strcmp(err, "--timeline-point 4: the script ran 3 points (indices 0..2); no "
                      "timeline written") == 0);
    other.points_seen = 1;
    CHECK_EQ_INT(sim_sweep_exec_timeline_write(&other, path, 1, err, sizeof err), SIM_USAGE);
    CHECK(strcmp(err, "--timeline-point 4: the script ran 1 point (indices 0..0); no "
                      "timeline written") == 0);
    other.tl_state = SIM_SWEEP_TL_FAILED; /* its status follows; nothing written */
    other.rank = 1;
    CHECK_EQ_INT(sim_sweep_exec_timeline_write(&other, path, 1, err, sizeof err), SIM_OK);
    other.tl_state = SIM_SWEEP_TL_RAN;
    other.tl = sim_timeline_create(0); /* no cycle recorded anywhere */
    CHECK_EQ_INT(sim_sweep_exec_timeline_write(&other, path, 1, err, sizeof err), SIM_INTERNAL);
    snprintf(want, sizeof want, "%s: the replay reported no cycles for point 4 prompt 0", path);
    CHECK(strcmp(err, want) == 0);
    sim_timeline_destroy(other.tl);
    CHECK(stat(path, &st) != 0);
    rmdir(dir);
}

/* The timeline point: its index counts every point the script staged
 * (points_seen), it alone gets the hooks, its outcome lands in ex.tl_*;
 * a point resumed from the store is replayed again to record it. */
static void test_exec_timeline(fixture *f)
{
    sim_sweep_staged s[2];
    sim_sweep_exec ex;
    quiet_exec(&ex);
    char err[1024] = "";
    ex.tl = sim_timeline_create(0);
    CHECK(ex.tl != NULL);
    if (!ex.tl) return;
    ex.points_seen = 3;
    ex.tl_point = 4;
    ex.tl_prompt = 0;
    /* index 4 is just past points 3..3 (the next one, failed: it would say) */
    stage(f, &s[0], 0, 0.5);
    stage(f, &s[1], 1, 0.5);
    s[1].code = SIM_CONFIG;
    CHECK_EQ_INT(sim_sweep_exec_run(&ex, s, 1, 0, "t.lua", 7, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(ex.tl_state, SIM_SWEEP_TL_NOT_REACHED);
    CHECK_EQ_INT(sim_timeline_n_cycles(ex.tl), 0);
    ex.points_seen = 3;
    stage(f, &s[0], 0, 0.5);
    stage(f, &s[1], 1, 0.1 + 0.2); /* 0.30000000000000004: %g would say 0.3 */
    CHECK_EQ_INT(sim_sweep_exec_run(&ex, s, 2, 0, "t.lua", 7, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(ex.points_seen, 5);
    CHECK_EQ_INT(ex.tl_state, SIM_SWEEP_TL_RAN);
    CHECK_EQ_INT(ex.tl_prompts, 1);
    int64_t cycles = sim_timeline_n_cycles(ex.tl);
    CHECK(cycles > 0 && sim_timeline_n_spans(ex.tl) > 0);
    char *json = NULL;
    size_t len = 0;
    CHECK(sim_timeline_format(ex.tl, &json, &len) == SIM_OK);
    CHECK(json && strstr(json, "flashspec point 4 prompt 0: flash_ar, q8 on phone, "
                               "dram_fraction=0.3\"") != NULL);
    CHECK(json && strstr(json, "\"0.30000000000000004\"") != NULL); /* reads back exactly */
    CHECK(json && strstr(json, "\"flashspec_version\"") != NULL);
    free(json);
    timeline_file(&ex, cycles);
    /* points past it: no hooks, nothing recorded, the outcome kept */
    stage(f, &s[0], 0, 0.5);
    CHECK_EQ_INT(sim_sweep_exec_run(&ex, s, 1, 0, "t.lua", 7, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(sim_timeline_n_cycles(ex.tl), cycles);
    CHECK_EQ_INT(ex.tl_state, SIM_SWEEP_TL_RAN);
    sim_timeline_destroy(ex.tl);
    /* a failed timeline point: its status */
    quiet_exec(&ex);
    ex.tl = sim_timeline_create(0);
    ex.tl_point = 1;
    for (int i = 0; i < 2; i++)
        stage(f, &s[i], i, 0.5);
    s[1].pt.max_new_tokens = 0;
    char out[2048];
    CHECK_EQ_INT(run_captured(&ex, s, 2, 0, out, sizeof out, err, sizeof err), SIM_OK);
    CHECK(strstr(out, "flashspec: point 2 of 2 failed: ") != NULL);
    CHECK_EQ_INT(ex.tl_state, SIM_SWEEP_TL_FAILED);
    CHECK(sim_status_primary(ex.tl_code) == SIM_CONFIG);
    CHECK_EQ_INT(sim_timeline_n_cycles(ex.tl), 0);
    sim_timeline_destroy(ex.tl);
}

/* A timeline point resumed from the store did not replay: it is replayed
 * again (rank 0) so that the timeline holds its cycles. */
static void test_exec_timeline_resumed(fixture *f)
{
    char dir[] = "/tmp/fs_sweep_exec_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    sim_sweep_staged s;
    sim_sweep_exec ex;
    quiet_exec(&ex);
    snprintf(ex.store_dir, sizeof ex.store_dir, "%s/points", dir);
    snprintf(ex.build_key, sizeof ex.build_key, "test");
    ex.resume = 1;
    char err[1024] = "";
    stage(f, &s, 0, 0.5);
    CHECK_EQ_INT(sim_sweep_exec_run(&ex, &s, 1, 0, "t.lua", 7, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(ex.computed, 1);
    ex.tl = sim_timeline_create(0);
    ex.tl_point = 1;
    stage(f, &s, 0, 0.5);
    CHECK_EQ_INT(sim_sweep_exec_run(&ex, &s, 1, 0, "t.lua", 7, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(ex.resumed, 1);
    CHECK_EQ_INT(s.state, SIM_SWEEP_RESUMED);
    CHECK_EQ_INT(ex.tl_state, SIM_SWEEP_TL_RAN);
    CHECK(sim_timeline_n_cycles(ex.tl) > 0);
    sim_timeline_destroy(ex.tl);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* ---------------------------------------------------------- evaluations */

/* Runs the m evaluations of ev with memo (both steps). */
static int run_evals(sim_sweep_exec *ex, sim_sweep_eval *ev, int32_t m, sim_sweep_memo *memo)
{
    char err[1024] = "";
    if (sim_sweep_evals_lookup(ev, m, memo) != SIM_OK) return -1;
    int64_t total = sim_sweep_evals_total(ev, m);
    sim_sweep_staged *run = calloc((size_t)(total ? total : 1), sizeof *run);
    int64_t *where = calloc((size_t)(total ? total : 1), sizeof *where);
    int rc = run && where ? sim_sweep_exec_evals(ex, ev, m, memo, run, where, "t.lua", 7, err,
                                                 sizeof err)
                          : -1;
    free(run);
    free(where);
    return rc;
}

/* Two evaluations at once: an id twice in one (run once: the second point,
 * though its own parameters differ, gets the first's statistics), an id of
 * the first again in the second (pending: from the batch), a new one; the
 * memo's counts and entries those of the two run in turn; ex untouched. */
static void test_evals_batch(fixture *f)
{
    sim_sweep_memo memo = {0};
    sim_sweep_exec ex;
    quiet_exec(&ex);
    sim_sweep_staged a[3], b[2];
    stage(f, &a[0], 1, 0.0);
    stage(f, &a[1], 2, 0.5);
    stage(f, &a[2], 1, 1.0); /* id 1 again */
    stage(f, &b[0], 2, 0.5); /* id 2 of the first evaluation */
    stage(f, &b[1], 3, 0.25);
    sim_sweep_eval ev[2] = {{a, 3, 0}, {b, 2, 1}};
    CHECK_EQ_INT(sim_sweep_evals_total(ev, 2), 5);
    CHECK_EQ_INT(run_evals(&ex, ev, 2, &memo), SIM_OK);
    CHECK_EQ_INT(memo.hits, 1);
    CHECK_EQ_INT(memo.runs, 4);
    CHECK_EQ_INT(memo.n, 3);
    CHECK(a[0].memo == 0 && a[2].memo == 0 && b[0].memo == 2 && b[1].memo == 0);
    CHECK(a[0].state == SIM_SWEEP_COMPUTED && a[2].state == SIM_SWEEP_COMPUTED);
    CHECK(a[2].row.st.tokens_per_s == a[0].row.st.tokens_per_s); /* id 1's statistics */
    CHECK(a[1].row.st.tokens_per_s > a[0].row.st.tokens_per_s);
    CHECK(b[0].state == SIM_SWEEP_COMPUTED && b[0].row.st.tokens_per_s == a[1].row.st.tokens_per_s);
    CHECK(b[1].state == SIM_SWEEP_COMPUTED && b[1].row.st.tokens == 8);
    CHECK(ex.computed == 0 && ex.points_seen == 0); /* a copy ran them */
    for (uint64_t id = 1; id <= 3; id++) {
        sim_sweep_memo_entry *e = sim_sweep_memo_find(&memo, (sim_id){0x1234u + id, 7});
        CHECK(e && e->pending == 0 && e->st.tokens == 8);
    }
    /* a later evaluation: id 1 from the memo (not run: its staged statistics
     * would differ), a failing point keeps its error, its entry stays pending */
    stage(f, &a[0], 1, 1.0);
    stage(f, &a[1], 4, 0.0);
    a[1].pt.max_new_tokens = 0;
    sim_sweep_eval later = {a, 2, 2};
    CHECK_EQ_INT(run_evals(&ex, &later, 1, &memo), SIM_OK);
    CHECK(a[0].memo == 1 && a[0].row.st.tokens_per_s == a[2].row.st.tokens_per_s);
    CHECK(sim_status_primary(a[1].code) == SIM_CONFIG && a[1].state == SIM_SWEEP_FAILED);
    CHECK(strncmp(a[1].err, "t.lua:7: flashspec.run (", 24) == 0);
    sim_sweep_memo_entry *e4 = sim_sweep_memo_find(&memo, (sim_id){0x1234u + 4, 7});
    CHECK(e4 && e4->pending == 1);
    CHECK_EQ_INT(memo.hits, 2);
    CHECK_EQ_INT(memo.runs, 5);
    /* SIM_SWEEP_MEMO_KEEP evaluations on, what was not used since is gone;
     * the failed id, pending still, is the first of its batch: it runs */
    stage(f, &a[0], 5, 0.0);
    stage(f, &a[1], 4, 0.0);
    later = (sim_sweep_eval){a, 2, 2 + SIM_SWEEP_MEMO_KEEP};
    CHECK_EQ_INT(run_evals(&ex, &later, 1, &memo), SIM_OK);
    CHECK_EQ_INT(memo.n, 2);
    CHECK(sim_sweep_memo_find(&memo, (sim_id){0x1234u + 5, 7}) != NULL);
    CHECK(a[1].memo == 2 && a[1].code == 0 && a[1].row.st.tokens == 8);
    e4 = sim_sweep_memo_find(&memo, (sim_id){0x1234u + 4, 7});
    CHECK(e4 && e4->pending == 0 && e4->st.tokens == 8);
    sim_sweep_memo_free(&memo);
    /* no memo: every point runs, an id still once */
    stage(f, &a[0], 1, 0.0);
    stage(f, &a[1], 1, 1.0);
    a[1].memo = 1; /* whatever it said before */
    sim_sweep_eval none = {a, 2, 0};
    CHECK_EQ_INT(run_evals(&ex, &none, 1, NULL), SIM_OK);
    CHECK(a[0].memo == 0 && a[1].memo == 0 && a[1].state == SIM_SWEEP_COMPUTED);
    CHECK(a[1].row.st.tokens_per_s == a[0].row.st.tokens_per_s);
}

/* ------------------------------------------------------------- stopped */

static void test_exec_stopped(void)
{
    sim_sweep_exec ex;
    memset(&ex, 0, sizeof ex);
    char err[1024];
    snprintf(ex.store_dir, sizeof ex.store_dir, "out/points");
    ex.computed = 3;
    CHECK_EQ_INT(sim_sweep_exec_stopped(&ex, SIGALRM, "s.lua", 2.5, 0, err, sizeof err),
                 SIM_CONFIG);
    CHECK(strcmp(err, "s.lua: time limit of 2.5 s exceeded (--max-seconds): 3 points computed "
                      "in this run are saved in out/points; run the same command again to "
                      "resume") == 0);
    ex.computed = 1;
    CHECK_EQ_INT(sim_sweep_exec_stopped(&ex, SIGINT, "s.lua", 0, 1, err, sizeof err),
                 SIM_INTERRUPTED);
    CHECK(strcmp(err, "interrupted: 1 point computed in this run is saved in out/points; run "
                      "the same command again to resume (the calibration itself starts "
                      "over)") == 0);
    ex.computed = 0;
    CHECK_EQ_INT(sim_sweep_exec_stopped(&ex, SIGTERM, "s.lua", 0, 1, err, sizeof err),
                 SIM_INTERRUPTED);
    CHECK(strcmp(err, "interrupted during flashspec.calibrate: a fit is not saved as it goes, "
                      "so nothing is kept; running the command again starts it over") == 0);
    sim_sweep_exec_stopped(&ex, SIGINT, "s.lua", 0, 0, err, sizeof err);
    CHECK(strcmp(err, "interrupted: no point had finished, nothing is saved") == 0);
    ex.store_dir[0] = 0;
    ex.computed = 5;
    sim_sweep_exec_stopped(&ex, SIGINT, "s.lua", 0, 0, err, sizeof err);
    CHECK(strcmp(err, "interrupted (no output directory: nothing saved)") == 0);
    sim_sweep_exec_stopped(&ex, SIGINT, "s.lua", 0, 1, err, sizeof err);
    CHECK(strncmp(err, "interrupted during flashspec.calibrate: ", 40) == 0);
}

int main(void)
{
    CHECK(hdr_sim_sweep_exec_ok());
    test_memo_whole_id();
    test_memo_probe();
    test_memo_put_fill();
    test_memo_prune_and_growth();
    test_memo_prune_edge();
    test_memo_full();
    test_failure_rank();
    test_unbound_caps();
    test_exec_stopped();
    fixture f;
    if (fixture_open(&f) == 0) {
        test_exec_skips_memo(&f);
        test_exec_collect_report(&f);
        test_exec_error_cut(&f);
        test_exec_timeline(&f);
        test_exec_timeline_resumed(&f);
        test_evals_batch(&f);
        trc_free(f.tr);
    }
    return check_done("test_sweep_exec");
}
