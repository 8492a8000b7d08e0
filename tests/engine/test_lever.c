/*
 * test_lever.c -- Lever's rules on small hand-built trees: the Eq. 6 stopping
 * rule, the marginal cost with and without the child-expansion cost, shadow
 * normalisation of a lone child, ancestor closure, backbone, rejection, the
 * online profile's neighbour estimate, the beta update, and gain-cost
 * construction against a scripted draft oracle.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "eng_prune.h"
#include "pol_lever.h"

static _Alignas(8) unsigned char tree_mem[1 << 16];

static void tree_new(eng_tree *t)
{
    CHECK_EQ_INT(eng_tree_init(t, tree_mem, sizeof tree_mem, 64, 512), ENG_OK);
    eng_tree_reset(t, 100);
}

static void set_cands(eng_tree *t, int32_t u, const eng_token *tok, int32_t n)
{
    eng_cand *c = eng_tree_cands_alloc(t, u, n);
    for (int32_t j = 0; j < n; j++) {
        c[j].tok = tok[j];
        c[j].logp = (float)log(1.0 / (j + 2));
    }
}

static void test_stop_and_delta(void)
{
    CHECK_EQ_INT(eng_lever_stop(0.5, 10.0, 2.0, 100.0), 0); /* 0.05 > 0.02 */
    CHECK_EQ_INT(eng_lever_stop(0.1, 10.0, 2.0, 100.0), 1); /* 0.01 <= 0.02 */
    CHECK_EQ_INT(eng_lever_stop(0.2, 10.0, 2.0, 100.0), 1); /* equal: stop */
    /* the tie, exactly representable, and one ulp either side of it */
    CHECK_EQ_INT(eng_lever_stop(0.25, 4.0, 1.0, 16.0), 1);
    CHECK_EQ_INT(eng_lever_stop(nextafter(0.25, 1.0), 4.0, 1.0, 16.0), 0);
    CHECK_EQ_INT(eng_lever_stop(nextafter(0.25, 0.0), 4.0, 1.0, 16.0), 1);
    static eng_costmodel cm;
    eng_costmodel_init(&cm, NULL);
    eng_costmodel_seed_verify(&cm, 2, 1, 100.0);
    eng_costmodel_seed_verify(&cm, 3, 1, 103.0);
    eng_costmodel_seed_verify(&cm, 3, 2, 110.0);
    CHECK_NEAR(eng_lever_delta_cost(&cm, 2, 1, 1, 5.0), 8.0, 1e-9);  /* parent leaf + draft */
    CHECK_NEAR(eng_lever_delta_cost(&cm, 2, 1, 0, 5.0), 15.0, 1e-9); /* new leaf + draft */
    CHECK_NEAR(eng_lever_delta_cost(&cm, 2, 1, 0, 0.0), 10.0, 1e-9); /* not expandable */
    eng_costmodel_seed_verify(&cm, 3, 1, 90.0);                      /* cheaper: clamped */
    CHECK_NEAR(eng_lever_delta_cost(&cm, 2, 1, 1, 0.0), ENG_LEVER_MIN_DELTA_MS, 1e-12);
}

static void test_neighbours(void)
{
    static eng_costmodel cm;
    eng_costmodel_init(&cm, NULL);
    CHECK_NEAR(eng_costmodel_verify(&cm, 7, 2), 7.0, 1e-9); /* empty: prior 1 ms per row */
    eng_costmodel_seed_verify(&cm, 10, 1, 100.0);
    eng_costmodel_seed_verify(&cm, 20, 1, 200.0);
    CHECK_NEAR(eng_costmodel_verify(&cm, 10, 1), 100.0, 1e-9);       /* seen */
    CHECK_NEAR(eng_costmodel_verify(&cm, 15, 1), 150.0 * 1.1, 1e-9); /* interpolated + 10% */
    CHECK_NEAR(eng_costmodel_verify(&cm, 30, 1), 200.0 * 1.1, 1e-9); /* nearest below */
    CHECK_NEAR(eng_costmodel_verify(&cm, 15, 3), 200.0 * 1.1, 1e-9); /* L1 tie: larger */
    eng_costmodel_observe_verify(&cm, 10, 1, 200.0);                 /* EMA 0.2 */
    CHECK_NEAR(eng_costmodel_verify(&cm, 10, 1), 120.0, 1e-9);
    eng_costmodel_observe_verify(&cm, 15, 1, 50.0); /* unseen entry takes the value */
    CHECK_NEAR(eng_costmodel_verify(&cm, 15, 1), 50.0, 1e-9);
    eng_costmodel_seed_npu(&cm, 1, 10.0);
    eng_costmodel_seed_npu(&cm, 4, 16.0);
    CHECK_NEAR(eng_costmodel_npu_call(&cm, 2), 12.0 * 1.1, 1e-9);
    eng_costmodel_observe_draft(&cm, 0, 2, 8.0); /* CPU: per node */
    CHECK_NEAR(eng_costmodel_cpu_node(&cm), 4.0, 1e-9);
}

/* root (cands 1,2,3) -> a (tok 1) -> b (tok 4); root -> c (tok 2) */
static void small_tree(eng_tree *t, float *scores, int32_t k)
{
    tree_new(t);
    static const eng_token r[] = {1, 2, 3}, ac[] = {4, 5};
    set_cands(t, 0, r, 3);
    int32_t a = eng_tree_add(t, 0, 1, -1.0f);
    int32_t c = eng_tree_add(t, 0, 2, -1.0f);
    set_cands(t, a, ac, 2);
    eng_tree_add(t, a, 4, -1.0f);
    (void)c;
    for (int32_t i = 0; i < t->n_nodes * k; i++)
        scores[i] = NAN;
    scores[0] = 0.0f;         /* s(root, 1): a, shadow-normalised 1 / (1 + 2e^3) */
    scores[1] = 3.0f;         /* s(root, 2): c */
    scores[2] = 3.0f;         /* shadow token 3 */
    scores[1 * k + 0] = 5.0f; /* b */
    scores[1 * k + 1] = 0.0f;
}

static void test_pruning(void)
{
    eng_tree t;
    float scores[8 * 4];
    double norm[8];
    uint8_t keep[8];
    const int32_t k = 4;
    small_tree(&t, scores, k);
    /* ids: 0 root, 1 a, 2 c, 3 b */
    eng_prune_normalise(&t, scores, k, 1.0, 1, norm);
    CHECK_NEAR(norm[1], 1.0 / (1.0 + 2.0 * exp(3.0)), 1e-9);
    CHECK_NEAR(norm[3], exp(5.0) / (exp(5.0) + 1.0), 1e-9);
    /* a lone child: 1 without shadows, its share of C_u with them */
    eng_tree one;
    float s1[2 * 4] = {0.0f, 0.0f, 0.0f, NAN};
    tree_new(&one);
    static const eng_token r[] = {1, 2, 3};
    set_cands(&one, 0, r, 3);
    eng_tree_add(&one, 0, 1, -1.0f);
    eng_prune_normalise(&one, s1, 4, 1.0, 0, norm);
    CHECK_NEAR(norm[1], 1.0, 1e-12);
    eng_prune_normalise(&one, s1, 4, 1.0, 1, norm);
    CHECK_NEAR(norm[1], 1.0 / 3.0, 1e-9);

    small_tree(&t, scores, k);
    eng_prune_params p;
    eng_prune_default_params(&p);
    p.d0 = 0;
    p.m0 = 0;
    p.n_min = 0;
    p.l_min = 0;
    /* shadow, no safeguards: a fails theta, its subtree goes with it */
    p.mode = ENG_PRUNE_SHADOW;
    CHECK_EQ_INT(eng_prune_tree(&t, scores, k, &p, norm, keep), 2);
    CHECK(keep[0] && !keep[1] && keep[2] && !keep[3]);
    /* threshold (children only): a = 1/(1+e^3) = 0.047 < 0.1 as well */
    p.mode = ENG_PRUNE_THRESHOLD;
    CHECK_EQ_INT(eng_prune_tree(&t, scores, k, &p, norm, keep), 2);
    CHECK(!keep[1] && !keep[3]);
    /* full: b passes, so its ancestor a is kept (closure) */
    p.mode = ENG_PRUNE_FULL;
    CHECK_EQ_INT(eng_prune_tree(&t, scores, k, &p, norm, keep), 4);
    CHECK(keep[1] && keep[3] && keep[2]);
    /* backbone: nothing passes theta = 0.999; the best child chain stays */
    p.theta = 0.999;
    CHECK_EQ_INT(eng_prune_tree(&t, scores, k, &p, norm, keep), 2);
    CHECK(keep[0] && keep[2] && !keep[1] && !keep[3]); /* c beats a at the root */
    /* near-root coverage: the root's top-2 children */
    p.d0 = 1;
    p.m0 = 2;
    CHECK_EQ_INT(eng_prune_tree(&t, scores, k, &p, norm, keep), 3);
    CHECK(keep[1] && keep[2] && !keep[3]);
    /* rejection: fewer than n_min nodes kept -> the whole tree */
    p.n_min = 3;
    CHECK_EQ_INT(eng_prune_tree(&t, scores, k, &p, norm, keep), 4);
    CHECK(keep[1] && keep[2] && keep[3]);
    p.n_min = 0;
    p.l_min = 3; /* 2 leaves kept < 3 */
    CHECK_EQ_INT(eng_prune_tree(&t, scores, k, &p, norm, keep), 4);
    p.mode = ENG_PRUNE_NONE;
    CHECK_EQ_INT(eng_prune_tree(&t, NULL, 0, &p, norm, keep), 4);
}

static eng_lever_params defaults(void)
{
    eng_lever_params p;
    eng_params_defaults(eng_lever_param_table, &p);
    return p;
}

/* The root's children A (id 1) and B (id 2), A's child C (id 3); the root's
 * two candidates A, B scored sa, sb; C alone under A.  FULL pruning with
 * the coverage pass off (d0 = 0) and no rejection unless asked. */
static int32_t prune_ab(float sa, float sb, int32_t mode, double theta, int32_t n_min,
                        int32_t l_min, uint8_t keep[4])
{
    eng_tree t;
    tree_new(&t);
    static const eng_token r[] = {1, 2}, ac[] = {4};
    set_cands(&t, 0, r, 2);
    int32_t a = eng_tree_add(&t, 0, 1, -1.0f);
    int32_t b = eng_tree_add(&t, 0, 2, -1.0f);
    set_cands(&t, a, ac, 1);
    int32_t c = eng_tree_add(&t, a, 4, -1.0f);
    CHECK(a == 1 && b == 2 && c == 3);
    float scores[4 * 2] = {sa, sb, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    eng_prune_params p;
    eng_prune_default_params(&p);
    p.mode = mode;
    p.theta = theta;
    p.d0 = 0;
    p.n_min = n_min;
    p.l_min = l_min;
    double norm[4];
    return eng_prune_tree(&t, scores, 2, &p, norm, keep);
}

/* Pruning's ties and edges, each decided one way: a score exactly at theta
 * passes (both modes); the backbone follows the first of equal children;
 * a pruned tree with exactly n_min nodes or l_min leaves is kept, one
 * fewer rejected. */
static void test_prune_edges(void)
{
    uint8_t keep[4];
    /* equal scores: s^ = 0.5 each, exactly theta: both pass */
    CHECK_EQ_INT(prune_ab(0.0f, 0.0f, ENG_PRUNE_FULL, 0.5, 0, 0, keep), 4);
    CHECK(keep[1] && keep[2] && keep[3]);
    CHECK_EQ_INT(prune_ab(0.0f, 0.0f, ENG_PRUNE_THRESHOLD, 0.5, 0, 0, keep), 4);
    CHECK(keep[1] && keep[2] && keep[3]);
    /* nothing passes theta 0.9: the backbone alone, down the first of the
     * equal children (A, then C) */
    CHECK_EQ_INT(prune_ab(0.0f, 0.0f, ENG_PRUNE_FULL, 0.9, 0, 0, keep), 3);
    CHECK(keep[0] && keep[1] && !keep[2] && keep[3]);
    /* B at s^ = 1 / (1 + e^2) = 0.12 fails theta 0.5: kept {root, A, C} --
     * 2 non-root nodes, 1 leaf */
    CHECK_EQ_INT(prune_ab(0.0f, -2.0f, ENG_PRUNE_FULL, 0.5, 2, 1, keep), 3);
    CHECK(!keep[2]);
    /* n_min 3 or l_min 2: over-aggressive, rejected -- everything kept */
    CHECK_EQ_INT(prune_ab(0.0f, -2.0f, ENG_PRUNE_FULL, 0.5, 3, 1, keep), 4);
    CHECK(keep[2]);
    CHECK_EQ_INT(prune_ab(0.0f, -2.0f, ENG_PRUNE_FULL, 0.5, 2, 2, keep), 4);
    CHECK(keep[2]);
}

static void test_beta(void)
{
    eng_lever_params p = defaults();
    p.eta = 0.5;
    eng_policy pol;
    CHECK_EQ_INT(eng_lever_create(&p, &pol), ENG_OK);
    CHECK_NEAR(eng_lever_beta(&pol), 1.0, 1e-12);
    eng_tree t;
    tree_new(&t);
    static const eng_token rc[] = {1, 2, 3}, ac[] = {4, 5};
    set_cands(&t, 0, rc, 3);
    int32_t a = eng_tree_add(&t, 0, 1, -1.0f);
    set_cands(&t, a, ac, 2);
    eng_token g[2] = {9, 4}; /* root: 9 not in C_root; a: 4 in C_a */
    eng_feedback fb = {.tree = &t, .g = g};
    pol.i->observe(pol.self, &fb);
    CHECK_NEAR(eng_lever_beta(&pol), 0.75, 1e-12); /* 1 -> 0.5 -> 0.75 */
    eng_policy_destroy(&pol);
}

/* scripted draft: every node proposes tokens 1, 2 with q = 0.9, 0.1 */
static int32_t calls, call_rows;
static int mock_expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t n, eng_unit unit)
{
    (void)ctx;
    (void)unit;
    calls++;
    call_rows += n;
    for (int32_t i = 0; i < n; i++) {
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], 2);
        if (!c) return ENG_E_FULL;
        c[0].tok = 1;
        c[0].logp = (float)log(0.9);
        c[1].tok = 2;
        c[1].logp = (float)log(0.1);
    }
    return ENG_OK;
}

static int32_t build_with(double verify_per_row, int32_t d_max, int32_t sched)
{
    eng_lever_params p = defaults();
    p.d_max = d_max;
    p.draft_schedule = sched;
    eng_policy pol;
    CHECK_EQ_INT(eng_lever_create(&p, &pol), ENG_OK);
    static double ver[64], dc[64], dn[64];
    for (int32_t i = 0; i < 64; i++) {
        ver[i] = 100.0 + verify_per_row * i;
        dc[i] = 10.0 * (i + 1);
        dn[i] = 5.0 + i;
    }
    eng_cost_profile prof = {
        .verify_ms = ver, .n_verify = 64, .draft_cpu_ms = dc, .draft_npu_ms = dn, .n_draft = 64};
    CHECK_EQ_INT(pol.i->calibrate(pol.self, &prof), ENG_OK);
    eng_tree t;
    tree_new(&t);
    eng_draft_oracle d = {.expand = mock_expand, .k = 2};
    eng_build_limits lim = {64, 32, 100};
    calls = call_rows = 0;
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &d, &lim), ENG_OK);
    eng_policy_destroy(&pol);
    return eng_tree_size(&t);
}

/* every node proposes tokens 1, 2, 3 with q = 0.5, 0.3, 0.2 */
static int mock_expand_532(void *ctx, eng_tree *t, const int32_t *ids, int32_t n, eng_unit unit)
{
    (void)ctx;
    (void)unit;
    static const double q[3] = {0.5, 0.3, 0.2};
    for (int32_t i = 0; i < n; i++) {
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], 3);
        if (!c) return ENG_E_FULL;
        for (int j = 0; j < 3; j++) {
            c[j].tok = (eng_token)(j + 1);
            c[j].logp = (float)log(q[j]);
        }
    }
    return ENG_OK;
}

/* The leaf count the build keeps: a first child takes its parent's place
 * as a leaf, a later child adds one.  Verification costs V(leaves) = 100,
 * 110, 200, 300, ... ms (rows free), a CPU expansion 10 ms, depth 1 (only
 * the root's three children, 0.5, 0.3 and 0.2).  Eq. 6 takes a candidate
 * unless reach x C <= G x Delta C.  The first costs nothing more: taken, G =
 * 1.5, one leaf, C = 10 + 100.  The second adds the second leaf (+10 ms):
 * 0.3 x 110 = 33 > 1.5 x 10, taken, G = 1.8, two leaves, C = 120.  The third
 * adds the third (+90 ms): 0.2 x 120 = 24 <= 1.8 x 90, not taken -- two
 * nodes.  Counting the first child as a leaf too stops after it (the second
 * would cost V(3) - V(2) = 90); never counting the later ones takes the
 * third (its leaf would seem to cost V(2) - V(1) = 10). */
static void test_leaf_count(void)
{
    eng_lever_params p = defaults();
    p.d_max = 1;
    p.draft_schedule = ENG_LEVER_CPU;
    eng_policy pol;
    CHECK_EQ_INT(eng_lever_create(&p, &pol), ENG_OK);
    enum { R = 8 };
    static double nl[R * R], dc[R], dn[R];
    for (int32_t r = 1; r <= R; r++) {
        for (int32_t l = 1; l <= R; l++)
            nl[(r - 1) * R + (l - 1)] = l == 1 ? 100.0 : l == 2 ? 110.0 : 200.0 + 100.0 * (l - 3);
        dc[r - 1] = 10.0 * r;
        dn[r - 1] = 5.0 + r;
    }
    eng_cost_profile prof = {.verify_nl_ms = nl, .n_nl_rows = R, .n_nl_leaves = R,
                             .draft_cpu_ms = dc, .draft_npu_ms = dn, .n_draft = R};
    CHECK_EQ_INT(pol.i->calibrate(pol.self, &prof), ENG_OK);
    CHECK_NEAR(eng_lever_beta(&pol), 1.0, 0);
    eng_tree t;
    tree_new(&t);
    eng_draft_oracle d = {.expand = mock_expand_532, .k = 3};
    eng_build_limits lim = {64, 32, 100};
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &d, &lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 2);
    CHECK(t.n_nodes == 3 && t.nodes[1].tok == 1 && t.nodes[2].tok == 2);
    eng_policy_destroy(&pol);
}

static void test_build(void)
{
    /* verification 100 ms + 200 ms per row: the first child (0.9 / 210) is
     * below G / C = 1 / 110, so Eq. 6 stops at the root */
    CHECK_EQ_INT(build_with(200.0, 8, ENG_LEVER_CPU), 0);
    CHECK_EQ_INT(calls, 1);
    /* depth 1 and flat verification: both root candidates, no expansion cost */
    CHECK_EQ_INT(build_with(0.0, 1, ENG_LEVER_CPU), 2);
    CHECK_EQ_INT(calls, 1);
    /* flat verification, 10 ms per CPU expansion: the chain of 0.9^d grows
     * while 0.9^d / 10 > G / C, and every expansion is one CPU call */
    int32_t n = build_with(0.0, 32, ENG_LEVER_CPU);
    CHECK(n >= 8 && n <= 64);
    CHECK_EQ_INT(calls, call_rows);
    /* hybrid batches several expansions into NPU calls */
    n = build_with(0.0, 32, ENG_LEVER_HYBRID);
    CHECK(n >= 8);
    CHECK(call_rows > calls);
}

int main(void)
{
    test_stop_and_delta();
    test_neighbours();
    test_pruning();
    test_prune_edges();
    test_beta();
    test_build();
    test_leaf_count();
    return check_done("engine/lever");
}
