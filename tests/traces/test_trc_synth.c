/*
 * test_trc_synth.c -- the synthetic generator: parameter checks name their key,
 * same params + seed give the same trace, and the statistics measured on a few
 * thousand positions match the knobs (per-depth acceptance, coverage and its
 * clamp, calibration, predictor accuracy by exit layer, off-path agreement,
 * best-first tree order).  Tolerances are ~4-5 binomial standard deviations.
 * trc_synth_save writes the same trace to a file prompt by prompt.
 */
#include "trc.h"

#include "trc_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void base_params(trc_synth_params *p)
{
    trc_synth_default_params(p);
    p->prompts = 8;
    p->prompt_len = 4;
    p->output_len = 512;
    p->vocab = 32000;
    p->max_nodes = 16;
    p->n_exit = 2;
    p->exit_layers[0] = 9;
    p->exit_layers[1] = 18;
    p->seed = 7;
}

static trc_trace *make(const trc_synth_params *p)
{
    trc_trace *t = NULL;
    trc_err err;
    int rc = trc_synth(p, &t, &err);
    CHECK_EQ_INT(rc, TRC_OK);
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    return t;
}

static int rank_of(const int32_t *v, int k, int32_t x)
{
    for (int j = 0; j < k; j++)
        if (v[j] == x) return j;
    return -1;
}

typedef struct meas {
    long long n[TRC_MAX_DEPTH + 1], top1[TRC_MAX_DEPTH + 1], topk[TRC_MAX_DEPTH + 1];
    double q1_ok, q1_bad, q1_all; /* root draft top-1 probability sums */
    long long n_ok, n_bad;
    long long pred_n[TRC_MAX_EXIT], pred_hit[TRC_MAX_EXIT];
    long long off_n, off_agree;
    double off_expect;
    long long trees_not_full, order_breaks;
} meas;

static void measure(const trc_trace *t, const trc_synth_params *p, meas *s)
{
    const trc_meta *m = trc_get_meta(t);
    memset(s, 0, sizeof *s);
    char *onpath = malloc((size_t)m->max_nodes);
    double *joint = malloc((size_t)m->max_nodes * sizeof *joint);
    for (int32_t pi = 0; pi < m->n_prompts; pi++) {
        const int32_t *ref;
        int32_t L = trc_ref(t, pi, &ref);
        for (int32_t pos = 0; pos < L; pos++) {
            trc_tree tr;
            trc_tree_get(t, pi, pos, &tr);
            int K = tr.k;
            int32_t dref = L - pos < m->max_depth ? L - pos : m->max_depth;
            memset(onpath, 0, (size_t)tr.n);
            int32_t u = 0;
            onpath[0] = 1;
            for (int32_t d = 1; d <= dref; d++) {
                int r = rank_of(tr.draft_tok + u * K, K, ref[pos + d - 1]);
                s->n[d]++;
                s->top1[d] += r == 0;
                s->topk[d] += r >= 0;
                if (d == 1) {
                    double q1 = exp(tr.draft_logp[0]);
                    s->q1_all += q1;
                    if (r == 0)
                        s->q1_ok += q1, s->n_ok++;
                    else
                        s->q1_bad += q1, s->n_bad++;
                }
                u = trc_tree_child(&tr, u, ref[pos + d - 1]);
                onpath[u] = 1;
            }
            s->trees_not_full += tr.n != m->max_nodes;
            joint[0] = 1.0;
            for (int32_t i = 0; i < tr.n; i++) {
                const int32_t *dt = tr.draft_tok + i * K;
                int g = rank_of(dt, K, tr.tgt_tok[i * K]);
                if (i > 0) {
                    const float *pl = tr.draft_logp + tr.parent[i] * K;
                    int r = rank_of(tr.draft_tok + tr.parent[i] * K, K, tr.token[i]);
                    joint[i] = joint[tr.parent[i]] * (r >= 0 ? exp(pl[r]) : 0.5 * exp(pl[K - 1]));
                    if (i > dref + 1 && joint[i] > joint[i - 1] * (1 + 1e-5)) s->order_breaks++;
                }
                if (!onpath[i]) {
                    int d = tr.depth[i];
                    s->off_n++;
                    s->off_agree += tr.tgt_tok[i * K] == dt[0];
                    s->off_expect += p->accept[d < p->n_accept ? d : p->n_accept - 1];
                }
                if (g < 0) continue;
                for (int e = 0; e < tr.n_exit; e++) {
                    const float *sc = tr.exit_score + (i * tr.n_exit + e) * K;
                    int best = 0;
                    for (int j = 1; j < K; j++)
                        if (sc[j] > sc[best]) best = j;
                    s->pred_n[e]++;
                    s->pred_hit[e] += best == g;
                }
            }
        }
    }
    free(onpath);
    free(joint);
}

static void test_statistics(void)
{
    trc_synth_params p;
    base_params(&p);
    trc_trace *t = make(&p);
    if (!t) return;
    meas s;
    measure(t, &p, &s);
    long long nk = 0, hit = 0;
    for (int d = 1; d <= p.max_depth; d++) {
        CHECK(s.n[d] > 4000);
        CHECK_NEAR((double)s.top1[d] / (double)s.n[d], p.accept[d - 1], 0.035);
        nk += s.n[d];
        hit += s.topk[d];
    }
    CHECK_NEAR((double)hit / (double)nk, p.coverage, 0.015);
    double chance = 1.0 / p.k;
    CHECK(s.pred_n[1] > 50000);
    CHECK_NEAR((double)s.pred_hit[1] / (double)s.pred_n[1], p.predictor_accuracy, 0.015);
    CHECK_NEAR((double)s.pred_hit[0] / (double)s.pred_n[0],
               chance + (p.predictor_accuracy - chance) * 9.0 / 18.0, 0.02);
    CHECK(s.off_n > 25000);
    CHECK_NEAR((double)s.off_agree / (double)s.off_n, s.off_expect / (double)s.off_n, 0.015);
    /* calibration 0.7 at depth 1 (a = 0.8, kappa = 4):
     * E[q1 | right] = 0.7 * 4.2/5 + 0.3 * 0.8, E[q1 | wrong] = 0.7 * 3.2/5 + 0.3 * 0.8 */
    CHECK_NEAR(s.q1_ok / (double)s.n_ok, 0.7 * 0.84 + 0.3 * 0.8, 0.02);
    CHECK_NEAR(s.q1_bad / (double)s.n_bad, 0.7 * 0.64 + 0.3 * 0.8, 0.03);
    CHECK_EQ_INT(s.trees_not_full, 0);
    CHECK_EQ_INT(s.order_breaks, 0);
    trc_free(t);

    /* calibration extremes: informative vs not, same marginal mean */
    p.calibration = 1.0;
    t = make(&p);
    if (t) {
        measure(t, &p, &s);
        CHECK_NEAR(s.q1_ok / (double)s.n_ok, 0.84, 0.02);
        CHECK_NEAR(s.q1_bad / (double)s.n_bad, 0.64, 0.03);
        CHECK_NEAR(s.q1_all / (double)(s.n_ok + s.n_bad), 0.8, 0.015);
    }
    trc_free(t);
    p.calibration = 0.0;
    t = make(&p);
    if (t) {
        measure(t, &p, &s);
        CHECK_NEAR(s.q1_ok / (double)s.n_ok, 0.8, 0.02);
        CHECK_NEAR(s.q1_bad / (double)s.n_bad, 0.8, 0.03);
    }
    trc_free(t);

    /* coverage below acceptance is clamped to it; the last accept value repeats */
    base_params(&p);
    p.coverage = 0.5;
    p.n_accept = 2;
    p.accept[0] = 0.9;
    p.accept[1] = 0.3;
    t = make(&p);
    if (t) {
        measure(t, &p, &s);
        CHECK_NEAR((double)s.topk[1] / (double)s.n[1], 0.9, 0.02);
        CHECK_NEAR((double)s.top1[1] / (double)s.n[1], 0.9, 0.02);
        CHECK_NEAR((double)s.top1[6] / (double)s.n[6], 0.3, 0.035);
        CHECK_NEAR((double)s.topk[6] / (double)s.n[6], 0.5, 0.035);
    }
    trc_free(t);

    /* K = 1: the reference is either the only candidate or absent */
    base_params(&p);
    p.k = 1;
    p.prompts = 2;
    t = make(&p);
    if (t) {
        measure(t, &p, &s);
        for (int d = 1; d <= p.max_depth; d++)
            CHECK_EQ_INT(s.topk[d], s.top1[d]);
        CHECK_NEAR((double)s.top1[1] / (double)s.n[1], p.accept[0], 0.05);
    }
    trc_free(t);
}

static void test_determinism(void)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    trc_trace *a = make(&p), *b = make(&p);
    p.seed = 2;
    trc_trace *c = make(&p);
    if (a && b && c) {
        CHECK(trc_checksum(a) == trc_checksum(b));
        CHECK(trc_checksum(a) != trc_checksum(c));
        /* golden value: the defaults' trace must not drift between builds or
         * library versions (a change here invalidates recorded results) */
        CHECK(trc_checksum(a) == 0xd7d44ca8d1db80adULL);
        const trc_meta *m = trc_get_meta(a);
        CHECK_EQ_INT(m->n_prompts, 4);
        CHECK_EQ_INT(m->n_trees, 4 * 128);
        CHECK_EQ_INT(m->n_nodes, 4 * 128 * 32);
        CHECK_EQ_INT(m->vocab, 151936);
        CHECK_EQ_INT(m->n_exit, 1);
        CHECK_EQ_INT(m->exit_layers[0], 18);
        CHECK(strcmp(m->target, "synthetic-target") == 0);
        CHECK(strstr(m->source, "seed=1") != NULL);
        const int32_t *pr, *ref;
        CHECK_EQ_INT(trc_prompt(a, 3, &pr), 64);
        CHECK_EQ_INT(trc_ref(a, 3, &ref), 128);
        trc_tree tr;
        CHECK_EQ_INT(trc_tree_get(a, 3, 0, &tr), TRC_OK);
        CHECK_EQ_INT(tr.token[0], pr[63]);
    }
    trc_free(a);
    trc_free(b);
    trc_free(c);
    trc_synth_default_params(&p);
    p.prompt_len = 0; /* root token of pos 0 is then drawn */
    a = make(&p);
    trc_free(a);
}

static void test_param_errors(void)
{
    static const struct {
        int which;
        const char *key;
    } cases[] = {
        {0, "synth: prompts "},
        {1, "synth: prompt_len "},
        {2, "synth: output_len "},
        {3, "synth: vocab "},
        {4, "synth: k "},
        {5, "synth: k "},
        {6, "synth: max_depth "},
        {7, "synth: max_nodes "},
        {8, "synth: target_layers "},
        {9, "synth: exit_layers "},
        {10, "synth: exit_layers "},
        {11, "synth: exit_layers "},
        {12, "synth: accept "},
        {13, "synth: accept "},
        {14, "synth: calibration "},
        {15, "synth: coverage "},
        {16, "synth: coverage "},
        {17, "synth: predictor_accuracy "},
        {18, "synth: target "},
        {19, "synth: draft "},
        {20, "synth: prompts * output_len"},
        {21, "synth: max_nodes "},
        {22, "synth: accept "},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trc_synth_params p;
        trc_synth_default_params(&p);
        switch (cases[c].which) {
        case 0:
            p.prompts = 0;
            break;
        case 1:
            p.prompt_len = -1;
            break;
        case 2:
            p.output_len = 0;
            break;
        case 3:
            p.vocab = 8;
            break;
        case 4:
            p.k = 0;
            break;
        case 5:
            p.k = TRC_MAX_K + 1;
            break;
        case 6:
            p.max_depth = 0;
            break;
        case 7:
            p.max_nodes = 8;
            break;
        case 8:
            p.target_layers = 1;
            break;
        case 9:
            p.exit_layers[0] = 36;
            break;
        case 10:
            p.n_exit = 2;
            p.exit_layers[1] = 18;
            break;
        case 11:
            p.n_exit = TRC_MAX_EXIT + 1;
            break;
        case 12:
            p.accept[3] = 1.5;
            break;
        case 13:
            p.n_accept = 0;
            break;
        case 14:
            p.calibration = -0.1;
            break;
        case 15:
            p.coverage = 1.5;
            break;
        case 16:
            p.coverage = NAN;
            break;
        case 17:
            p.predictor_accuracy = 2;
            break;
        case 18:
            memset(p.target, 'x', sizeof p.target);
            break;
        case 19:
            memset(p.draft, 'y', sizeof p.draft);
            break;
        case 20:
            p.prompts = 1000000;
            p.output_len = 1000;
            break;
        case 21:
            p.max_nodes = 65537;
            break;
        case 22:
            p.accept[0] = NAN;
            break;
        }
        trc_trace *t = (trc_trace *)1;
        trc_err err;
        CHECK_EQ_INT(trc_synth(&p, &t, &err), TRC_E_ARG);
        CHECK(t == NULL);
        CHECK_ERR(err, TRC_E_ARG, cases[c].key, NULL);
    }
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.coverage = 1.5;
    trc_trace *t;
    trc_err err;
    trc_synth(&p, &t, &err);
    CHECK(strcmp(err.msg, "synth: coverage must be in [0,1] (got 1.5)") == 0);
}

/* The depth-d top-1 outcome along the reference path of every tree, as a bit
 * per (prompt, position, depth): out[(pi * L + pos) * D + d - 1]. */
static void ref_top1(const trc_trace *t, uint8_t *out)
{
    const trc_meta *m = trc_get_meta(t);
    int32_t D = m->max_depth;
    for (int32_t pi = 0; pi < m->n_prompts; pi++) {
        const int32_t *ref;
        int32_t L = trc_ref(t, pi, &ref);
        for (int32_t pos = 0; pos < L; pos++) {
            trc_tree tr;
            trc_tree_get(t, pi, pos, &tr);
            int32_t dref = L - pos < D ? L - pos : D, u = 0;
            for (int32_t d = 1; d <= D; d++) {
                uint8_t hit = 0;
                if (d <= dref) {
                    hit = rank_of(tr.draft_tok + u * tr.k, tr.k, ref[pos + d - 1]) == 0;
                    u = trc_tree_child(&tr, u, ref[pos + d - 1]);
                }
                out[((size_t)pi * (size_t)L + (size_t)pos) * (size_t)D + (size_t)d - 1] = hit;
            }
        }
    }
}

/* node_streams: raising accept only turns wrong top-1 decisions right (each
 * decision compares a fixed draw with a_d), so a chain's acceptance grows
 * monotonically; prompts and references do not move.  coverage_share: the
 * top-K holds the target's token with probability a_d + share (1 - a_d). */
static void test_node_streams_and_share(void)
{
    trc_synth_params p;
    base_params(&p);
    p.node_streams = 1;
    p.prompts = 6;
    p.n_accept = 1;
    int32_t D = p.max_depth;
    size_t n = (size_t)p.prompts * (size_t)p.output_len * (size_t)D;
    uint8_t *lo = calloc(n, 1), *hi = calloc(n, 1);
    p.accept[0] = 0.50;
    trc_trace *a = make(&p);
    p.accept[0] = 0.53;
    trc_trace *b = make(&p);
    CHECK(a && b && lo && hi);
    if (a && b && lo && hi) {
        ref_top1(a, lo);
        ref_top1(b, hi);
        size_t flips = 0, backwards = 0;
        for (size_t i = 0; i < n; i++) {
            flips += lo[i] != hi[i];
            backwards += lo[i] && !hi[i];
        }
        CHECK(backwards == 0);
        CHECK(flips > 0 && flips < n / 10); /* ~3% of decisions cross */
        const int32_t *ra, *rb;
        CHECK(trc_ref(a, 2, &ra) == trc_ref(b, 2, &rb) && memcmp(ra, rb, sizeof *ra * 8) == 0);
    }
    trc_free(a);
    trc_free(b);
    free(lo);
    free(hi);
    /* one stream (the default) re-draws after the first changed decision */
    p.node_streams = 0;
    p.accept[0] = 0.50;
    a = make(&p);
    p.accept[0] = 0.53;
    b = make(&p);
    lo = calloc(n, 1), hi = calloc(n, 1);
    if (a && b && lo && hi) {
        ref_top1(a, lo);
        ref_top1(b, hi);
        size_t backwards = 0;
        for (size_t i = 0; i < n; i++) backwards += lo[i] && !hi[i];
        CHECK(backwards > 0);
    }
    trc_free(a);
    trc_free(b);
    free(lo);
    free(hi);
    /* coverage share: per depth, top-K hits = a_d + 0.6 (1 - a_d) */
    base_params(&p);
    p.prompts = 8;
    p.n_accept = 3;
    p.accept[0] = 0.9, p.accept[1] = 0.5, p.accept[2] = 0.2;
    p.coverage_share = 0.6;
    trc_trace *t = make(&p);
    meas s;
    if (t) {
        measure(t, &p, &s);
        for (int d = 1; d <= 3; d++) {
            double ad = p.accept[d - 1];
            CHECK_NEAR((double)s.top1[d] / (double)s.n[d], ad, 0.04);
            CHECK_NEAR((double)s.topk[d] / (double)s.n[d], ad + 0.6 * (1 - ad), 0.04);
        }
    }
    trc_free(t);
    p.coverage_share = -0.5; /* neither off (-1) nor in [0, 1] */
    trc_err err;
    CHECK(trc_synth(&p, &t, &err) == TRC_E_ARG && strstr(err.msg, "coverage_share"));
}

/* node_streams with threads: the same trace at every thread count -- in
 * memory and saved prompt by prompt --, with exit scores or without, with
 * prompts or without (the main stream then draws each prompt's root), and
 * with batches smaller than the trace (many nodes); without node_streams
 * threads change nothing either. */
static void test_synth_threads(const char *dir)
{
    char path[1300], tmp_dir[1200];
    snprintf(tmp_dir, sizeof tmp_dir, "%s/synth-threads-XXXXXX", dir);
    CHECK(mkdtemp(tmp_dir) != NULL);
    snprintf(path, sizeof path, "%s/t.h5", tmp_dir);
    for (int c = 0; c < 4; c++) {
        trc_synth_params p;
        base_params(&p);
        p.prompts = 5;
        p.output_len = 37;
        p.node_streams = c < 3;
        if (c == 1) {
            p.n_exit = 0;
            p.prompt_len = 0;
        }
        if (c == 2) { /* 8 MiB batches of 168 KiB trees: two batches */
            p.prompts = 2;
            p.output_len = 40;
            p.k = 8;
            p.max_nodes = 1000;
            p.max_depth = 16;
        }
        trc_trace *one = make(&p);
        CHECK(one != NULL);
        if (!one) continue;
        p.threads = 3;
        trc_trace *t = make(&p);
        CHECK(t && trc_checksum(t) == trc_checksum(one));
        CHECK(t && memcmp(trc_get_stats(t), trc_get_stats(one), sizeof(trc_stats)) == 0);
        trc_free(t);
        uint64_t sum = 0;
        trc_err err;
        CHECK_EQ_INT(trc_synth_save(&p, path, NULL, &sum, &err), TRC_OK);
        CHECK(sum == trc_checksum(one));
        unlink(path);
        trc_free(one);
    }
    CHECK(rmdir(tmp_dir) == 0);
}

/* 1 when a and b hold the same trees, byte for byte: every node array of
 * every tree (not only the checksum that summarises them). */
static int same_trees(const trc_trace *a, const trc_trace *b)
{
    const trc_meta *ma = trc_get_meta(a), *mb = trc_get_meta(b);
    if (ma->n_prompts != mb->n_prompts || ma->n_nodes != mb->n_nodes || ma->k != mb->k ||
        ma->n_exit != mb->n_exit)
        return 0;
    for (int32_t p = 0; p < ma->n_prompts; p++) {
        const int32_t *ra, *rb;
        int32_t L = trc_ref(a, p, &ra);
        if (L != trc_ref(b, p, &rb) || memcmp(ra, rb, sizeof *ra * (size_t)L) != 0) return 0;
        for (int32_t pos = 0; pos < L; pos++) {
            trc_tree x, y;
            if (trc_tree_get(a, p, pos, &x) != TRC_OK || trc_tree_get(b, p, pos, &y) != TRC_OK ||
                x.n != y.n)
                return 0;
            size_t n = (size_t)x.n, nk = n * (size_t)x.k, ne = nk * (size_t)x.n_exit;
            if (memcmp(x.parent, y.parent, 4 * n) || memcmp(x.token, y.token, 4 * n) ||
                memcmp(x.draft_tok, y.draft_tok, 4 * nk) ||
                memcmp(x.draft_logp, y.draft_logp, 4 * nk) ||
                memcmp(x.tgt_tok, y.tgt_tok, 4 * nk) || memcmp(x.tgt_logp, y.tgt_logp, 4 * nk) ||
                (ne && memcmp(x.exit_score, y.exit_score, 4 * ne)))
                return 0;
        }
    }
    return trc_checksum(a) == trc_checksum(b) &&
           memcmp(trc_get_stats(a), trc_get_stats(b), sizeof(trc_stats)) == 0;
}

/* Several traces at once (trc_synth_many): at 1 worker, at as many workers
 * as traces, at more (each trace's synthesis on the rest) and at fewer, each
 * trace is byte for byte the one trc_synth makes alone, with its statistics;
 * threads is set to the share of workers; a job whose parameters are wrong
 * fails alone, with trc_synth's error; through a memo the same. */
static void test_synth_many(void)
{
    enum { N = 3 };
    trc_synth_params p[N];
    trc_trace *alone[N];
    for (int i = 0; i < N; i++) {
        base_params(&p[i]);
        p[i].prompts = 3;
        p[i].output_len = 40;
        p[i].node_streams = i != 1; /* one without: threads change nothing */
        p[i].seed = 11 + (uint64_t)i;
        alone[i] = make(&p[i]);
    }
    const int32_t workers[] = {0, 1, 2, N, 8};
    const int32_t threads[] = {1, 1, 1, 1, 2};
    trc_synth_memo *memo = trc_synth_memo_new(&p[0], (size_t)1 << 30);
    CHECK(memo != NULL);
    for (size_t w = 0; w < sizeof workers / sizeof *workers; w++) {
        trc_synth_job job[N + 1], *q[N + 1];
        for (int i = 0; i <= N; i++) {
            memset(&job[i], 0, sizeof job[i]);
            job[i].p = p[i < N ? i : 0];
            job[i].memo = i == 0 ? memo : NULL;
            q[i] = &job[i];
        }
        job[N].p.k = 0; /* invalid: its error alone */
        trc_synth_many(q, N + 1, workers[w]);
        for (int i = 0; i < N; i++) {
            CHECK_EQ_INT(job[i].rc, TRC_OK);
            CHECK_EQ_INT(job[i].p.threads, threads[w]);
            CHECK(job[i].t && alone[i] && same_trees(job[i].t, alone[i]));
            trc_free(job[i].t);
        }
        trc_err want;
        CHECK_EQ_INT(trc_synth_check(&job[N].p, &want), TRC_E_ARG);
        CHECK_EQ_INT(job[N].rc, TRC_E_ARG);
        CHECK(job[N].t == NULL && strcmp(job[N].err.msg, want.msg) == 0);
    }
    /* one trace on 4 workers: its synthesis on all 4 */
    trc_synth_job one = {.p = p[2]}, *q1 = &one;
    trc_synth_many(&q1, 1, 4);
    CHECK_EQ_INT(one.rc, TRC_OK);
    CHECK_EQ_INT(one.p.threads, 4);
    CHECK(one.t && alone[2] && same_trees(one.t, alone[2]));
    trc_free(one.t);
    trc_synth_many(&q1, 0, 4); /* nothing to do */
    trc_synth_memo_free(memo);
    for (int i = 0; i < N; i++)
        trc_free(alone[i]);
}

/* The draw memo: a sequence of node-stream traces of one shape whose knobs
 * move (the acceptance by a difference step and by more, its fall with depth,
 * coverage, calibration, predictor accuracy, the coverage share), each made
 * through one memo, is byte for byte the trace made without it -- on one
 * thread and on three --; the memo serves most of a small step's draws; a
 * memo of another shape is not used; no memo without node streams or room. */
static void test_synth_memo(void)
{
    trc_synth_params p;
    base_params(&p);
    p.prompts = 3;
    p.output_len = 48;
    p.max_nodes = 12;
    p.k = 4;
    p.node_streams = 1;
    p.n_accept = 8;
    trc_synth_memo *m = trc_synth_memo_new(&p, (size_t)1 << 30);
    CHECK(m != NULL && trc_synth_memo_fits(m, &p) && trc_synth_memo_bytes(m) > 0);
    const double a1[] = {0.80, 0.803, 0.803, 0.85, 0.40, 0.40, 0.41, 0.41, 0.41, 0.41};
    int64_t hits = 0, misses = 0;
    for (int i = 0; i < 10 && m; i++) {
        p.accept[0] = a1[i];
        for (int d = 1; d < 8; d++) /* falling with depth; step 2 moves the fall only */
            p.accept[d] = p.accept[d - 1] * (i == 2 ? 0.76 : 0.75);
        p.coverage = i == 5 ? 0.5 : 0.92;
        p.calibration = i == 6 ? 0.2 : 0.7;
        p.predictor_accuracy = i == 7 ? 0.5 : 0.85;
        p.coverage_share = i == 8 ? 0.6 : -1.0;
        p.threads = i % 2 ? 3 : 1;
        trc_trace *plain = make(&p), *t = NULL;
        trc_err err;
        CHECK_EQ_INT(trc_synth_memo_run(&p, m, &t, &err), TRC_OK);
        CHECK(plain && t && same_trees(plain, t));
        int64_t h, mi;
        trc_synth_memo_counts(m, &h, &mi);
        if (i == 0) CHECK(h == 0 && mi > 0);
        if (i == 1) CHECK(h - hits > 2 * (mi - misses)); /* the top-1 Beta moves, little else */
        if (i == 9) CHECK(h - hits > 3 * (mi - misses)); /* the same knobs: all but one */
        hits = h, misses = mi;
        trc_free(plain);
        trc_free(t);
    }
    /* another shape (more prompts): drawn without the memo, the same trace */
    p.prompts = 4;
    CHECK(!trc_synth_memo_fits(m, &p));
    trc_trace *plain = make(&p), *t = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_synth_memo_run(&p, m, &t, &err), TRC_OK);
    CHECK(plain && t && same_trees(plain, t));
    int64_t h, mi;
    trc_synth_memo_counts(m, &h, &mi);
    CHECK(h == hits && mi == misses);
    trc_free(plain);
    trc_free(t);
    trc_synth_memo_free(m);
    CHECK(trc_synth_memo_new(&p, 1024) == NULL); /* no room */
    p.node_streams = 0;
    CHECK(trc_synth_memo_new(&p, (size_t)1 << 30) == NULL);
    trc_synth_memo_free(NULL);
}

/* 1 when files a and b hold the same bytes. */
static int same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    int same = x && y;
    while (same) {
        int cx = fgetc(x), cy = fgetc(y);
        same = cx == cy;
        if (cx == EOF) break;
    }
    if (x) fclose(x);
    if (y) fclose(y);
    return same;
}

/* trc_synth_save writes the trace trc_synth makes, prompt by prompt: the
 * file loads whole to the same checksum and statistics, opens prompt by prompt
 * from its index with the same, passes trc_check (which compares the index
 * with the data), and reports the counts and checksum it wrote -- with and
 * without exit scores, with node streams, with empty prompts; the same
 * parameters give the same bytes again; a file that cannot be created is an
 * error that leaves nothing behind. */
static void test_save_by_prompt(const char *dir)
{
    char path[1300], again[1300], tmp_dir[1200], bad[1300];
    snprintf(tmp_dir, sizeof tmp_dir, "%s/synth-save-XXXXXX", dir);
    CHECK(mkdtemp(tmp_dir) != NULL);
    snprintf(path, sizeof path, "%s/t.h5", tmp_dir);
    snprintf(again, sizeof again, "%s/again.h5", tmp_dir);
    for (int c = 0; c < 3; c++) {
        trc_synth_params p;
        base_params(&p);
        p.prompts = 5;
        p.output_len = 40 + 7 * c;
        p.max_nodes = 12;
        if (c == 1) p.node_streams = 1;
        if (c == 2) {
            p.n_exit = 0;
            p.prompt_len = 0;
        }
        trc_trace *t = make(&p), *u = NULL;
        trc_meta m;
        uint64_t sum = 0;
        trc_err err;
        CHECK_EQ_INT(trc_synth_save(&p, path, &m, &sum, &err), TRC_OK);
        if (!t) continue;
        const trc_meta *tm = trc_get_meta(t);
        CHECK(sum == trc_checksum(t));
        CHECK(m.n_prompts == tm->n_prompts && m.n_trees == tm->n_trees &&
              m.n_nodes == tm->n_nodes && m.n_exit == tm->n_exit);
        CHECK(strcmp(m.source, tm->source) == 0);
        const trc_stats *st = trc_get_stats(t);
        CHECK_EQ_INT(trc_load(path, &u, &err), TRC_OK);
        if (u) {
            CHECK(trc_checksum(u) == trc_checksum(t));
            CHECK(memcmp(trc_get_stats(u), st, sizeof *st) == 0);
            trc_free(u);
        }
        CHECK_EQ_INT(trc_open(path, 0, &u, &err), TRC_OK);
        if (u) {
            CHECK(trc_is_lazy(u));
            CHECK(trc_checksum(u) == trc_checksum(t));
            CHECK(memcmp(trc_get_stats(u), st, sizeof *st) == 0);
            trc_free(u);
        }
        CHECK_EQ_INT(trc_check(path, 0, &u, &err), TRC_OK);
        trc_free(u);
        trc_free(t);
        CHECK_EQ_INT(trc_synth_save(&p, again, NULL, NULL, &err), TRC_OK);
        CHECK(same_file(path, again));
        unlink(again);
        unlink(path);
    }
    /* nothing is created where the file cannot be */
    trc_synth_params p;
    base_params(&p);
    p.prompts = 2;
    p.output_len = 8;
    snprintf(bad, sizeof bad, "%s/no-such-dir/t.h5", tmp_dir);
    trc_err err;
    CHECK_EQ_INT(trc_synth_save(&p, bad, NULL, NULL, &err), TRC_E_WRITE);
    CHECK(strstr(err.msg, "no-such-dir") != NULL);
    p.k = 0; /* bad parameters: nothing written either */
    CHECK_EQ_INT(trc_synth_save(&p, path, NULL, NULL, &err), TRC_E_ARG);
    CHECK(access(path, F_OK) != 0);
    CHECK(rmdir(tmp_dir) == 0); /* empty: no temporary left */
}

int main(int argc, char **argv)
{
    test_save_by_prompt(argc > 3 ? argv[3] : ".");
    test_synth_threads(argc > 3 ? argv[3] : ".");
    test_synth_memo();
    test_synth_many();
    test_param_errors();
    test_node_streams_and_share();
    test_determinism();
    test_statistics();
    return check_done("test_trc_synth");
}
