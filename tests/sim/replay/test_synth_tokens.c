/*
 * test_synth_tokens.c -- the token ids of synthesised candidate sets: one
 * uniform draw and a fixed stride per set (the replay's construction) against
 * every id its own uniform draw (the reference, as re-sampled sets keep it).
 *
 * Results may depend on synthesised ids only through three properties: the
 * ids of a set are distinct, lie in [0, vocab), and hold the reference token
 * exactly when the oracle placed it.  Both constructions are checked for
 * those on every set, and two-sample chi-square tests compare what results
 * are made of:
 *
 *  - candidate ranks: on one fixed node set (reference paths deeper than the
 *    trace recorded, and off-path children), the rank at which each
 *    synthesised reference-path set holds the reference token (or none),
 *    over REPS seeds per construction;
 *  - acceptance depth: the tokens each replayed cycle accepted, for every
 *    tree policy under greedy and sampling acceptance, over SEEDS seeds per
 *    construction on a bundled trace whose trees are smaller than theirs.
 *
 * Every test runs at alpha = ALPHA / (number of tests): with seeds drawn at
 * random the chance that any test rejects two equal distributions is at most
 * ALPHA (0.1%), Bonferroni -- nominally: a replay's cycles are not quite
 * independent draws (adaptive policies carry state from cycle to cycle), so
 * the seeds, not the cycles, are the independent units.  The seeds are fixed,
 * so the outcome repeats.  On the bundled trace most policies never reach an
 * unrecorded reference-path set, and their histograms agree count for count
 * (p = 1); the streams part where a placement or a re-sampling penalty (Lyanna)
 * follows a synthesised set, which the rank test and Lyanna's rows exercise.
 * A test that cannot fail says nothing, so the same statistic must reject two
 * distributions that do differ: greedy against sampling acceptance.
 *
 * argv[1]: the configs directory; argv[2]: the bundled traces directory.
 */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../check.h"
#include "sim/config/profile.h"
#include "sim/replay/replay.h"
#include "sim/replay/rp_oracle.h"
#include "synth_fixture.h"
#include "../profiles_fixture.h"

#define ALPHA 1e-3
#define REPS 300
#define SEEDS 24
#define BINS 16 /* accepted tokens per cycle, the last bin holding the rest */
#define MAX_BINS (TRC_MAX_K + 1 > BINS ? TRC_MAX_K + 1 : BINS) /* ranks, or depths */

enum { N_RANK_TESTS = 1, N_POLICIES = 7, N_RULES = 2 };
static const char *const policies[N_POLICIES] = {"specinfer", "eagle2",  "opt_tree", "sequoia",
                                                 "lyanna",    "edgellm", "lever"};
static const double alpha = ALPHA / (N_RANK_TESTS + N_POLICIES * N_RULES);

/* p-value of the chi-square test that histograms a and b (n bins) come from
 * one distribution.  Adjacent bins are pooled, from the first, until each
 * pooled bin expects at least 5 counts in either sample (a short tail joins
 * the last bin); fewer than two bins: 1. */
static double chi2_two_sample(const int64_t *a, const int64_t *b, int n, int *dof)
{
    double na = 0, nb = 0;
    for (int i = 0; i < n; i++) {
        na += (double)a[i];
        nb += (double)b[i];
    }
    *dof = 0;
    if (n > MAX_BINS) return 0.0; /* more bins than it holds: a rejection, never a pass */
    if (na <= 0 || nb <= 0) return 1.0;
    double small = na < nb ? na : nb, ra = sqrt(nb / na), rb = sqrt(na / nb);
    double pa[MAX_BINS], pb[MAX_BINS];
    int bins = 0;
    double ca = 0, cb = 0;
    for (int i = 0; i < n; i++) {
        ca += (double)a[i];
        cb += (double)b[i];
        if ((ca + cb) * small / (na + nb) >= 5.0) {
            pa[bins] = ca;
            pb[bins++] = cb;
            ca = cb = 0;
        }
    }
    if (bins == 0) return 1.0;
    pa[bins - 1] += ca;
    pb[bins - 1] += cb;
    double x2 = 0;
    for (int i = 0; i < bins; i++) {
        double d = pa[i] * ra - pb[i] * rb;
        x2 += d * d / (pa[i] + pb[i]);
    }
    *dof = bins - 1;
    return bins < 2 ? 1.0 : gsl_cdf_chisq_Q(x2, (double)(bins - 1));
}

/* ---- candidate ranks on one node set ---- */

static trc_trace *make_trace(int32_t vocab, int32_t k)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 2;
    p.output_len = 60;
    p.vocab = vocab;
    p.k = k;
    p.max_depth = 3;
    p.max_nodes = 8;
    p.n_accept = 1;
    p.accept[0] = 0.7;
    p.coverage = 0.8;
    p.seed = 5;
    return synth_or_exit(&p);
}

/* The node set of (prompt, pos): the reference path 10 deep (the trace
 * recorded 3) and, under every path node, a child one id past the reference
 * token (recorded or not, off the path). */
static void build_nodes(eng_tree *tree, const int32_t *ref, int32_t pos, int32_t vocab)
{
    eng_tree_reset(tree, ref[pos - 1]);
    int32_t u = 0;
    for (int32_t d = 0; d < 10; d++) {
        eng_tree_add(tree, u, (ref[pos + d] + 1) % vocab, -1.0f);
        u = eng_tree_add(tree, u, ref[pos + d], -0.5f);
    }
}

/* Expands the node set of every (prompt, pos) once; checks every
 * synthesised set and counts, per reference-path set, the reference token's
 * rank (k: not in the set) into rank[]. */
static void expand_sets(rp_oracle *o, eng_tree *tree, const trc_trace *t, int64_t *rank)
{
    for (int32_t p = 0; p < 2; p++) {
        const int32_t *ref;
        int32_t L = trc_ref(t, p, &ref);
        for (int32_t pos = 1; pos + 11 < L; pos += 4) {
            build_nodes(tree, ref, pos, o->vocab);
            rp_oracle_begin(o, p, pos);
            int32_t ids[32], n = tree->n_nodes;
            for (int32_t i = 0; i < n; i++)
                ids[i] = i;
            CHECK_EQ_INT(o->draft.expand(o, tree, ids, n, ENG_UNIT_NPU), ENG_OK);
            for (int32_t i = 0; i < n; i++) {
                if (o->tnode[i] >= 0) continue; /* recorded: not synthesised */
                int32_t cn = 0, at = pos + tree->nodes[i].depth, r = o->k;
                const eng_cand *c = eng_tree_cands(tree, i, &cn);
                CHECK_EQ_INT(cn, o->k);
                for (int32_t j = 0; j < cn; j++) {
                    CHECK(c[j].tok >= 0 && c[j].tok < o->vocab);
                    for (int32_t q = 0; q < j; q++)
                        CHECK(c[q].tok != c[j].tok);
                    if (at < L && c[j].tok == ref[at]) r = j;
                }
                if (!o->on_ref[i]) continue;
                CHECK(at >= L || r < o->k || o->k < o->vocab); /* a whole vocabulary holds it */
                rank[r]++;
            }
        }
    }
}

/* rank[] over `reps` seeds of one construction. */
static void rank_histogram(const trc_trace *t, int drawn, int reps, int64_t *rank)
{
    rp_synth_stats st;
    CHECK(rp_synth_fit(t, &st) == 0);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    rp_oracle o;
    CHECK(rp_oracle_init(&o, t, &st, rng, 64) == 0);
    o.synth_drawn = drawn;
    size_t bytes = eng_tree_bytes(64, 64 * o.k);
    void *mem = malloc(bytes);
    eng_tree tree;
    CHECK(eng_tree_init(&tree, mem, bytes, 64, 64 * o.k) == ENG_OK);
    for (int s = 0; s < reps; s++) {
        gsl_rng_set(rng, (unsigned long)(1000 + s));
        expand_sets(&o, &tree, t, rank);
    }
    free(mem);
    rp_oracle_free(&o);
    gsl_rng_free(rng);
}

static void test_ranks(void)
{
    trc_trace *t = make_trace(32000, 8);
    int64_t a[TRC_MAX_K + 1] = {0}, b[TRC_MAX_K + 1] = {0};
    rank_histogram(t, 0, REPS, a);
    rank_histogram(t, 1, REPS, b);
    int dof = 0;
    double p = chi2_two_sample(a, b, 9, &dof);
    printf("ranks of the reference token (0..7, 8 = absent), %d seeds each\n  offset:", REPS);
    for (int j = 0; j <= 8; j++)
        printf(" %lld", (long long)a[j]);
    printf("\n  drawn: ");
    for (int j = 0; j <= 8; j++)
        printf(" %lld", (long long)b[j]);
    printf("\n  chi-square p = %.4f (%d dof), alpha %.2g\n", p, dof, alpha);
    CHECK(a[0] > 0 && a[8] > 0 && dof >= 2);
    CHECK(p > alpha);
    trc_free(t);
    /* a vocabulary one id larger than a set (the smallest a synthetic trace
     * takes): every set is still distinct and in range, both ways */
    t = make_trace(9, 8);
    int64_t r[TRC_MAX_K + 1] = {0};
    rank_histogram(t, 0, 3, r);
    rank_histogram(t, 1, 3, r);
    CHECK(r[0] > 0);
    trc_free(t);
}

/* A trace whose vocabulary is its top-k (2 ids): the candidate set of an
 * unrecorded reference-path node must hold the reference token even when the
 * placement draw left it out (at the last rank), under both constructions;
 * there is no other id to draw. */
static void test_whole_vocabulary(void)
{
    enum { L = 6 };
    trc_meta m;
    memset(&m, 0, sizeof m);
    m.vocab = 2;
    m.k = 2;
    m.max_depth = 1;
    m.max_nodes = 2;
    m.target_layers = 4;
    strcpy(m.target, "unit-target");
    strcpy(m.draft, "unit-draft");
    strcpy(m.tokenizer, "unit-tok");
    strcpy(m.source, "test_synth_tokens.c");
    const int32_t prompt[2] = {0, 1}, ref[L] = {0, 1, 1, 0, 1, 0};
    trc_builder *b = trc_builder_new(&m);
    CHECK(b != NULL);
    if (!b) return;
    CHECK_EQ_INT(trc_builder_add_prompt(b, prompt, 2, ref, L), TRC_OK);
    for (int32_t pos = 0; pos < L; pos++) {
        int32_t n = 2, parent[2] = {-1, 0};
        int32_t token[2] = {pos ? ref[pos - 1] : prompt[1], ref[pos]};
        int32_t tok[4];
        float lp[4] = {-0.1f, -2.5f, -0.1f, -2.5f};
        for (int32_t i = 0; i < n; i++) { /* node i predicts ref[pos + i] */
            int32_t next = pos + i < L ? ref[pos + i] : 0;
            tok[2 * i] = next;
            tok[2 * i + 1] = 1 - next;
        }
        CHECK_EQ_INT(trc_builder_add_tree(b, n, parent, token, tok, lp, tok, lp, NULL), TRC_OK);
    }
    trc_trace *t = NULL;
    trc_err err;
    if (trc_builder_finish(b, "whole", &t, &err) != TRC_OK) fprintf(stderr, "%s\n", err.msg);
    CHECK(t != NULL);
    if (!t) return;
    rp_synth_stats st;
    CHECK(rp_synth_fit(t, &st) == 0);
    st.deep_top1 = st.deep_inset = 0.0; /* the placement draw never places it */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    size_t bytes = eng_tree_bytes(8, 8 * 2);
    void *mem = malloc(bytes);
    eng_tree tree;
    CHECK(eng_tree_init(&tree, mem, bytes, 8, 16) == ENG_OK);
    for (int drawn = 0; drawn < 2; drawn++) {
        rp_oracle o;
        CHECK(rp_oracle_init(&o, t, &st, rng, 8) == 0);
        o.synth_drawn = drawn;
        for (int32_t pos = 1; pos + 2 < L; pos++) {
            eng_tree_reset(&tree, ref[pos - 1]);
            int32_t u = eng_tree_add(&tree, 0, ref[pos], -0.1f);
            int32_t v = eng_tree_add(&tree, u, ref[pos + 1], -0.1f); /* depth 2: unrecorded */
            rp_oracle_begin(&o, 0, pos);
            CHECK_EQ_INT(o.draft.expand(&o, &tree, &v, 1, ENG_UNIT_NPU), ENG_OK);
            CHECK(o.tnode[v] < 0 && o.on_ref[v]);
            int32_t cn = 0;
            const eng_cand *c = eng_tree_cands(&tree, v, &cn);
            CHECK(cn == 2 && c && c[1].tok == ref[pos + 2] && c[0].tok == 1 - ref[pos + 2]);
        }
        rp_oracle_free(&o);
    }
    free(mem);
    gsl_rng_free(rng);
    trc_free(t);
}

/* ---- acceptance depth over replays ---- */

static void on_cycle(void *ctx, const sim_cycle_info *ci)
{
    int64_t *h = ctx;
    h[ci->accepted < BINS - 1 ? ci->accepted : BINS - 1]++;
}

/* Accepted tokens per cycle into h, over every prompt of t and SEEDS seeds;
 * returns the share of expansions the trace did not record. */
static double depth_histogram(const trc_trace *t, const eng_policy_desc *d, int32_t accept,
                              int drawn, int64_t *h)
{
    _Alignas(8) unsigned char params[1024];
    eng_params_defaults(d->params, params);
    int64_t exp = 0, rec = 0;
    int32_t prompts = trc_get_meta(t)->n_prompts;
    for (int s = 0; s < SEEDS; s++) {
        for (int32_t p = 0; p < prompts; p++) {
            sim_point pt = {.device = &dev,
                            .target = &tgt,
                            .draft = &drf,
                            .trace = t,
                            .policy = d,
                            .policy_params = params,
                            .max_new_tokens = 64,
                            .prompts = 1,
                            .prompt_offset = p,
                            .seed = (uint64_t)(7 + s),
                            .accept = accept,
                            .temperature = 1.0,
                            .cycle_fn = on_cycle,
                            .trace_ctx = h,
                            .trace_prompt = 0,
                            .no_interval = 1,
                            .synth_drawn = drawn};
            sim_point_stats st;
            char err[256] = "";
            int rc = sim_replay_run(&pt, &st, err, sizeof err);
            if (rc != SIM_OK) fprintf(stderr, "%s: %s\n", d->name, err);
            CHECK_EQ_INT(rc, SIM_OK);
            exp += st.expansions;
            rec += st.recorded_expansions;
        }
    }
    return exp > 0 ? 1.0 - (double)rec / (double)exp : 0.0;
}

static void test_depths(const char *traces)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/synth-default.h5", traces);
    trc_trace *t = NULL;
    trc_err e;
    CHECK(trc_load(path, &t, &e) == TRC_OK);
    if (!t) return;
    static const int32_t rules[N_RULES] = {SIM_ACCEPT_GREEDY, SIM_ACCEPT_SAMPLING};
    static const char *const rule_names[N_RULES] = {"greedy", "sampling"};
    printf("accepted tokens per cycle, offset vs drawn ids, %d seeds x %d prompts each\n", SEEDS,
           trc_get_meta(t)->n_prompts);
    for (int i = 0; i < N_POLICIES; i++) {
        const eng_policy_desc *d = eng_policy_lookup(policies[i]);
        CHECK(d != NULL);
        if (!d) continue;
        int64_t h[N_RULES][2][BINS] = {{{0}}};
        for (int r = 0; r < N_RULES; r++) {
            double syn = depth_histogram(t, d, rules[r], 0, h[r][0]);
            depth_histogram(t, d, rules[r], 1, h[r][1]);
            int dof = 0;
            double p = chi2_two_sample(h[r][0], h[r][1], BINS, &dof);
            printf("  %-10s %-8s synthesised %4.1f%%  p = %.4f (%d dof)\n", d->name, rule_names[r],
                   100.0 * syn, p, dof);
            CHECK(p > alpha);
            if (i == 0) CHECK(syn > 0.3); /* the comparison is about something */
        }
        if (i == 0) { /* the statistic tells different distributions apart */
            int dof = 0;
            double p = chi2_two_sample(h[0][1], h[1][1], BINS, &dof);
            printf("  %-10s greedy against sampling (must differ): p = %.3g\n", d->name, p);
            CHECK(p < alpha);
        }
    }
    trc_free(t);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_synth_tokens CONFIG_DIR TRACE_DIR\n");
        return 2;
    }
    alarm(100); /* a construction that cannot find distinct ids would loop */
    test_ranks();
    test_whole_vocabulary();
    load_profiles(argv[1]);
    test_depths(argv[2]);
    return check_done("replay/synth_tokens");
}
