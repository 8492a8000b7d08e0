/*
 * test_tree_policies.c -- adaptive_chain, specinfer, eagle2, opt_tree and
 * sequoia against a deterministic in-test draft oracle.
 *
 * The oracle gives every expanded node K = 4 candidates whose tokens derive
 * from the node's token and depth (distinct among siblings) and whose
 * log-probs fall strictly with rank and vary with the token, so joint scores
 * rarely tie.  It logs every call's row count.  Checks: hand-worked shapes
 * (SpecInfer's default configuration, OPT-Tree's stopping decisions), naive
 * references (EAGLE-2's pool re-ranking and OPT-Tree's beam vs full sorts),
 * Sequoia's DP vs exhaustive search over all small trees, adaptive-k window
 * behaviour, the tree compaction the pool/beam policies rely on, the same
 * trees from unsorted candidate lists, and well-formed trees from an oracle
 * whose log-probs are partly NaN (a merge then hands out fewer picks).
 */
#include "pol_adaptive_chain.h"
#include "pol_eagle2.h"
#include "pol_opt_tree.h"
#include "pol_sequoia.h"
#include "pol_specinfer.h"

#include "../check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { KC = 4, MAXN = 1024, MAXCALLS = 64 };

typedef struct orc {
    int32_t calls, rows[MAXCALLS];
} orc;

static eng_token cand_tok(eng_token parent_tok, int32_t depth, int32_t j)
{
    return (eng_token)(((int64_t)parent_tok * 31 + 7 * j + depth * 101 + 13) % 100003);
}

/* g_free_top: every rank-0 candidate costs nothing (log-prob 0), so a node
 * ties with its first child, one level deeper: ties that depth breaks. */
static int g_free_top;

static float cand_logp(eng_token tok, int32_t j)
{
    if (g_free_top && j == 0) return 0.0f;
    return (float)(-0.3 * (j + 1) - 0.05 * (double)((tok + j) % 5));
}

static int expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    (void)unit;
    orc *o = ctx;
    if (o->calls < MAXCALLS) o->rows[o->calls] = count;
    o->calls++;
    for (int32_t i = 0; i < count; i++) {
        const eng_node *u = &t->nodes[ids[i]];
        eng_token ut = u->tok;
        int32_t d = u->depth;
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], KC);
        if (!c) return ENG_E_FULL;
        for (int32_t j = 0; j < KC; j++) {
            c[j].tok = cand_tok(ut, d, j);
            c[j].logp = cand_logp(ut, j);
        }
    }
    return ENG_OK;
}

static _Alignas(8) unsigned char mem[MAXN * sizeof(eng_node) + MAXN * KC * sizeof(eng_cand)];

static void tree_init(eng_tree *t)
{
    eng_tree_init(t, mem, sizeof mem, MAXN, MAXN * KC);
    eng_tree_reset(t, 5);
}

static int build(const char *name, void *params, eng_tree *t, orc *o, eng_build_limits lim)
{
    const eng_policy_desc *d = eng_policy_lookup(name);
    eng_policy pol = {NULL, NULL};
    CHECK(d != NULL);
    if (!d) return -100;
    CHECK_EQ_INT(d->create(params, &pol), ENG_OK);
    memset(o, 0, sizeof *o);
    tree_init(t);
    eng_draft_oracle dr = {.expand = expand, .ctx = o, .k = KC};
    int rc = pol.i->build(pol.self, t, &dr, &lim);
    eng_policy_destroy(&pol);
    return rc;
}

static const eng_build_limits BIG = {MAXN, 64, 1000};

/* ---- naive references: nodes as explicit token paths ---- */

typedef struct vnode {
    double score;
    int32_t depth, order, parent; /* parent index into the same array, -1 = root */
    eng_token tok;
} vnode;

static int vcmp(const void *x, const void *y)
{
    const vnode *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return a->order < b->order ? -1 : (a->order > b->order);
}

/* the children (top-kk) of v, appended to out; returns new count */
static int32_t v_children(const vnode *all, int32_t v, int32_t kk, vnode *out, int32_t n)
{
    eng_token pt = v < 0 ? 5 : all[v].tok;
    int32_t d = v < 0 ? 0 : all[v].depth;
    double base = v < 0 ? 0.0 : all[v].score;
    for (int32_t j = 0; j < kk && j < KC; j++) {
        out[n] = (vnode){base + (double)(float)cand_logp(pt, j), d + 1, 0, v, cand_tok(pt, d, j)};
        n++;
    }
    return n;
}

static int keycmp(const void *x, const void *y)
{
    const vnode *a = x, *b = y;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return a->tok < b->tok ? -1 : (a->tok > b->tok);
}

/* multiset of (depth, tok, score) of a tree vs the same of a naive set, both
 * sorted by (depth, tok) so that float/double rounding of tied scores cannot
 * reorder them */
static int same_nodes(const eng_tree *t, vnode *ref, int32_t n)
{
    if (eng_tree_size(t) != n) {
        fprintf(stderr, "size %d vs %d\n", eng_tree_size(t), n);
        return 0;
    }
    vnode got[MAXN];
    for (int32_t v = 1; v < t->n_nodes; v++)
        got[v - 1] = (vnode){t->nodes[v].cum_logq, t->nodes[v].depth, 0, 0, t->nodes[v].tok};
    qsort(got, (size_t)n, sizeof *got, keycmp);
    qsort(ref, (size_t)n, sizeof *ref, keycmp);
    for (int32_t i = 0; i < n; i++)
        if (got[i].tok != ref[i].tok || got[i].depth != ref[i].depth ||
            fabs(got[i].score - ref[i].score) > 1e-4) {
            fprintf(stderr, "%d: %d/%d/%g vs %d/%d/%g\n", i, got[i].tok, got[i].depth,
                    got[i].score, ref[i].tok, ref[i].depth, ref[i].score);
            return 0;
        }
    return 1;
}

static int parents_precede(const eng_tree *t)
{
    for (int32_t v = 1; v < t->n_nodes; v++)
        if (t->nodes[v].parent < 0 || t->nodes[v].parent >= v ||
            t->nodes[v].depth != t->nodes[t->nodes[v].parent].depth + 1)
            return 0;
    return 1;
}

/* ---- SpecInfer ---- */

static void test_specinfer(void)
{
    eng_specinfer_params p;
    eng_params_defaults(eng_specinfer_param_table, &p);
    CHECK_EQ_INT(p.n_widths, 8);
    CHECK_EQ_INT(p.widths[2], 3);
    eng_tree t;
    orc o;
    CHECK_EQ_INT(build("specinfer", &p, &t, &o, BIG), ENG_OK);
    /* <1,1,3,1,1,1,1,1>: 1 + 1 + 3 + 5 x 3 = 20 nodes, 3 leaves, depth 8 */
    CHECK_EQ_INT(eng_tree_size(&t), 20);
    CHECK_EQ_INT(eng_tree_leaves(&t), 3);
    CHECK_EQ_INT(eng_tree_depth(&t), 8);
    /* one batched call per level: widths of levels 0..7 */
    static const int32_t rows[] = {1, 1, 1, 3, 3, 3, 3, 3};
    CHECK_EQ_INT(o.calls, 8);
    for (int32_t i = 0; i < 8; i++)
        CHECK_EQ_INT(o.rows[i], rows[i]);
    /* depth 3 holds the top-3 of the depth-2 node, in rank order */
    int32_t d2 = t.nodes[t.nodes[0].first_child].first_child, j = 0;
    for (int32_t c = t.nodes[d2].first_child; c != ENG_NO_NODE; c = t.nodes[c].next_sibling, j++)
        CHECK_EQ_INT(t.nodes[c].tok, cand_tok(t.nodes[d2].tok, 2, j));
    CHECK_EQ_INT(j, 3);
    /* limits: remaining 4 -> depth 3; max_nodes 6 -> 5 draft nodes */
    CHECK_EQ_INT(build("specinfer", &p, &t, &o, (eng_build_limits){MAXN, 64, 4}), ENG_OK);
    CHECK_EQ_INT(eng_tree_depth(&t), 3);
    CHECK_EQ_INT(eng_tree_size(&t), 5);
    CHECK_EQ_INT(build("specinfer", &p, &t, &o, (eng_build_limits){6, 64, 100}), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 5);
    CHECK(parents_precede(&t));
}

/* ---- EAGLE-2 ---- */

/* kf: frontier width (top_k); k: children per node (min(top_k, K)) */
static int32_t naive_eagle2(int32_t kf, int32_t k, int32_t depth, int32_t total, vnode *all,
                            vnode *sel)
{
    int32_t n = v_children(all, -1, k, all, 0), order = 0;
    for (int32_t i = 0; i < n; i++) all[i].order = order++;
    int32_t front[64], nf = 0;
    vnode tmp[MAXN];
    memcpy(tmp, all, sizeof(vnode) * (size_t)n);
    qsort(tmp, (size_t)n, sizeof *tmp, vcmp);
    for (int32_t i = 0; i < n && nf < kf; i++) front[nf++] = tmp[i].order;
    for (int32_t s = 1; s <= depth; s++) {
        int32_t lo = n;
        for (int32_t i = 0; i < nf; i++) n = v_children(all, front[i], k, all, n);
        for (int32_t i = lo; i < n; i++) all[i].order = order++;
        int32_t m = n - lo;
        memcpy(tmp, all + lo, sizeof(vnode) * (size_t)m);
        qsort(tmp, (size_t)m, sizeof *tmp, vcmp);
        nf = 0;
        for (int32_t i = 0; i < m && nf < kf; i++) front[nf++] = tmp[i].order;
    }
    memcpy(sel, all, sizeof(vnode) * (size_t)n);
    qsort(sel, (size_t)n, sizeof *sel, vcmp);
    return n < total ? n : total;
}

static void test_eagle2(void)
{
    static vnode all[MAXN], sel[MAXN];
    eng_tree t;
    orc o;
    int32_t cases[][3] = {{10, 6, 60}, {4, 6, 60}, {2, 3, 5}, {3, 4, 13}, {4, 2, 100}, {1, 5, 3}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        eng_eagle2_params p = {cases[c][0], cases[c][1], cases[c][2], ENG_UNIT_NPU};
        CHECK_EQ_INT(build("eagle2", &p, &t, &o, BIG), ENG_OK);
        int32_t kk = p.top_k < KC ? p.top_k : KC;
        int32_t n = naive_eagle2(p.top_k, kk, p.depth, p.total_tokens, all, sel);
        CHECK(same_nodes(&t, sel, n));
        CHECK(parents_precede(&t));
        CHECK(eng_tree_depth(&t) <= p.depth + 1);
        /* root call + one batched call per step */
        CHECK_EQ_INT(o.calls, 1 + p.depth);
        CHECK_EQ_INT(o.rows[0], 1);
        if (p.depth >= 1) CHECK_EQ_INT(o.rows[1], kk);
    }
    /* defaults */
    eng_eagle2_params d;
    eng_params_defaults(eng_eagle2_param_table, &d);
    CHECK(d.top_k == 10 && d.depth == 6 && d.total_tokens == 60 && d.unit == ENG_UNIT_NPU);
    /* remaining caps the depth */
    CHECK_EQ_INT(build("eagle2", &d, &t, &o, (eng_build_limits){MAXN, 64, 3}), ENG_OK);
    CHECK(eng_tree_depth(&t) <= 2);
}

/* ---- OPT-Tree ---- */

static int32_t naive_opt(int32_t n, double delta, int32_t max_depth, vnode *all, vnode *sel,
                         int32_t *layers_out)
{
    static vnode tmp[MAXN * KC];
    int32_t cnt = 0, order = 0;
    int32_t lay_lo = 0, lay_hi = 0; /* the last materialised layer in all[] */
    /* layer 1 */
    int32_t m = v_children(all, -1, KC, tmp, 0);
    for (int32_t i = 0; i < m; i++) tmp[i].order = order++;
    qsort(tmp, (size_t)m, sizeof *tmp, vcmp);
    for (int32_t i = 0; i < m && i < n; i++) all[cnt++] = tmp[i];
    lay_hi = cnt;
    double w_prev = 0.0;
    int32_t L;
    for (L = 2;; L++) {
        if (L - 1 >= max_depth) break;
        m = 0;
        for (int32_t v = lay_lo; v < lay_hi; v++) m = v_children(all, v, KC, tmp, m);
        for (int32_t i = 0; i < m; i++) tmp[i].order = order++;
        qsort(tmp, (size_t)m, sizeof *tmp, vcmp);
        memcpy(sel, all, sizeof(vnode) * (size_t)cnt);
        qsort(sel, (size_t)cnt, sizeof *sel, vcmp);
        double w = 0.0;
        for (int32_t i = 0; i < cnt && i < n; i++) w += exp(sel[i].score);
        int more = w - w_prev > delta;
        w_prev = w;
        if (!more) break;
        lay_lo = cnt;
        for (int32_t i = 0; i < m && i < n; i++) all[cnt++] = tmp[i];
        lay_hi = cnt;
    }
    *layers_out = L - 1;
    memcpy(sel, all, sizeof(vnode) * (size_t)cnt);
    qsort(sel, (size_t)cnt, sizeof *sel, vcmp);
    return cnt < n ? cnt : n;
}

/* OPT-Tree with p against naive_opt: the same nodes, parents first.
 * Returns the naive layer count. */
static int32_t opt_vs_naive(eng_opt_tree_params p, eng_tree *t, orc *o)
{
    static vnode all[MAXN], sel[MAXN];
    CHECK_EQ_INT(build("opt_tree", &p, t, o, BIG), ENG_OK);
    int32_t layers;
    int32_t n = naive_opt(p.nodes, p.delta, p.max_depth, all, sel, &layers);
    CHECK(same_nodes(t, sel, n));
    CHECK(parents_precede(t));
    return layers;
}

static void test_opt_tree(void)
{
    eng_tree t;
    orc o;
    struct {
        int32_t n;
        double delta;
        int32_t md;
    } cases[] = {{60, 0.5, 10}, {8, 0.5, 10},    {8, 0.0, 4},
                 {5, 0.05, 10}, {3, 1000.0, 10}, {16, 0.2, 3}},
      ties[] = {{3, 0.5, 6}, {5, 0.5, 6}, {9, 0.3, 5}, {12, 2.0, 8}, {60, 0.5, 10}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        eng_opt_tree_params p = {cases[c].n, cases[c].delta, cases[c].md, ENG_UNIT_NPU};
        int32_t layers = opt_vs_naive(p, &t, &o);
        CHECK(eng_tree_depth(&t) <= p.max_depth);
        /* one call per generated layer: the root + layers 1 .. L - 1 */
        CHECK_EQ_INT(o.calls, layers + (layers < p.max_depth ? 1 : 0));
    }
    /* scores that tie across depths (a free first child): the shallower
     * node ranks first, in the beam and in C_L, as in the naive order */
    g_free_top = 1;
    for (size_t c = 0; c < sizeof ties / sizeof ties[0]; c++)
        opt_vs_naive((eng_opt_tree_params){ties[c].n, ties[c].delta, ties[c].md, ENG_UNIT_NPU}, &t,
                     &o);
    g_free_top = 0;
    /* hand-worked stopping decisions.  delta huge: W_2 - 0 <= delta at once, so
     * the tree is layer 1 (the root's top-min(n, K) children), two calls */
    eng_opt_tree_params p = {3, 1000.0, 10, ENG_UNIT_NPU};
    CHECK_EQ_INT(build("opt_tree", &p, &t, &o, BIG), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 3);
    CHECK_EQ_INT(eng_tree_depth(&t), 1);
    CHECK_EQ_INT(o.calls, 2);
    /* delta 0 keeps drafting until max_depth: 4 calls (root + layers 1..3; no
     * lookahead layer is drafted once the candidate tree reaches the limit) */
    p = (eng_opt_tree_params){8, 0.0, 4, ENG_UNIT_NPU};
    CHECK_EQ_INT(build("opt_tree", &p, &t, &o, BIG), ENG_OK);
    CHECK(eng_tree_depth(&t) <= 4);
    CHECK_EQ_INT(o.calls, 4);
    CHECK_EQ_INT(eng_tree_size(&t), 8);
    /* n = 4, delta = 1: the root's children have q = e^-0.3, e^-0.65, e^-1.0,
     * e^-1.35, so W_2 = 0.741 + 0.522 + 0.368 + 0.259 = 1.890 > 1: layer 2 is
     * drafted; its best node 0.741 x 0.741 = 0.549 and 0.741 x 0.522 = 0.387
     * push out 0.368 and 0.259: W_3 = 0.741 + 0.549 + 0.522 + 0.387 = 2.199,
     * a gain of 0.309 <= 1: stop after 3 calls with a depth-2 tree */
    p = (eng_opt_tree_params){4, 1.0, 10, ENG_UNIT_NPU};
    CHECK_EQ_INT(build("opt_tree", &p, &t, &o, BIG), ENG_OK);
    CHECK_EQ_INT(o.calls, 3);
    CHECK_EQ_INT(eng_tree_depth(&t), 2);
    CHECK_EQ_INT(eng_tree_size(&t), 4);
    eng_opt_tree_params d;
    eng_params_defaults(eng_opt_tree_param_table, &d);
    CHECK(d.nodes == 60 && d.delta == 0.5 && d.max_depth == 10);
}

/* A library caller may hand OPT-Tree a tree that already holds nodes: they
 * enter the candidate tree C by the full order (cumulative log-prob desc,
 * depth asc, id asc), deeper ones included.  Here A (id 1) and C (id 3) at
 * depth 1 and B (id 2, A's free first child) at depth 2 tie at -0.01, above
 * every drafted candidate; n = 2 keeps the two shallow ones.  With A and B
 * alone tying, n = 2 keeps both; with A and C alone, n = 1 keeps A (the
 * lower id). */
static void test_opt_tree_given_tree(void)
{
    const eng_policy_desc *d = eng_policy_lookup("opt_tree");
    for (int shape = 0; shape < 3; shape++) {
        eng_opt_tree_params p = {shape == 2 ? 1 : 2, 0.5, 1, ENG_UNIT_NPU};
        eng_policy pol = {NULL, NULL};
        CHECK_EQ_INT(d->create(&p, &pol), ENG_OK);
        eng_tree t;
        orc o;
        memset(&o, 0, sizeof o);
        tree_init(&t);
        int32_t a = eng_tree_add(&t, 0, 11, -0.01f);
        int32_t b = shape < 2 ? eng_tree_add(&t, a, 12, 0.0f) : -1;
        int32_t c = shape != 1 ? eng_tree_add(&t, 0, 13, -0.01f) : -1;
        CHECK(a == 1 && (shape == 2 || b == 2) && (shape == 1 || c == 3 - (shape == 2)));
        eng_draft_oracle dr = {.expand = expand, .ctx = &o, .k = KC};
        CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &BIG), ENG_OK);
        eng_policy_destroy(&pol);
        CHECK_EQ_INT(eng_tree_size(&t), p.nodes); /* n nodes beside the root */
        int has[3] = {0, 0, 0};
        for (int32_t v = 1; v < t.n_nodes; v++)
            for (int k = 0; k < 3; k++)
                has[k] |= t.nodes[v].tok == 11 + k;
        if (shape == 0)
            CHECK(has[0] && !has[1] && has[2]); /* A and C: depth 1 before depth 2 */
        else if (shape == 1)
            CHECK(has[0] && has[1]);
        else
            CHECK(has[0] && !has[2]); /* A: id 1 before id 2 */
        CHECK(parents_precede(&t));
    }
}

/* OPT-Tree picks each layer's beam by merging the parents' candidate lists
 * when they are sorted, and by a selection over all candidates when they are
 * not: an oracle serving the same candidates in rotated order (so unsorted)
 * must give the same tree.  The log-probs get a small per-token offset (less
 * than their step, so sorted lists stay sorted) to make scores tie-free.
 * With g_nan, every third candidate's log-prob is NaN instead. */
static int g_rotate, g_nan;
static int32_t g_rotate_depth; /* only nodes this deep or deeper get rotated lists */

static float cand_logp_distinct(eng_token tok, int32_t j)
{
    return cand_logp(tok, j) - 1e-4f * (float)(((uint32_t)tok * 2654435761u >> 8) % 997u);
}

static int expand_rotated(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    (void)unit;
    orc *o = ctx;
    o->calls++;
    for (int32_t i = 0; i < count; i++) {
        const eng_node *u = &t->nodes[ids[i]];
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], KC);
        if (!c) return ENG_E_FULL;
        for (int32_t j = 0; j < KC; j++) {
            int32_t jj = (j + (u->depth >= g_rotate_depth ? g_rotate : 0)) % KC;
            eng_token tok = cand_tok(u->tok, u->depth, jj);
            c[j].tok = tok;
            c[j].logp = g_nan && (j + u->depth) % 3 == 1 ? NAN : cand_logp_distinct(tok, jj);
        }
    }
    return ENG_OK;
}

static int node_key_cmp(const void *x, const void *y)
{
    const vnode *a = x, *b = y;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    if (a->tok != b->tok) return a->tok < b->tok ? -1 : 1;
    return a->score < b->score ? -1 : (a->score > b->score);
}

/* Builds a tree with policy d (params p) under the rotated oracle and writes
 * its nodes, sorted by key, to out; returns how many. */
static int32_t build_rotated(const eng_policy_desc *d, const void *p, vnode *out)
{
    static _Alignas(8) unsigned char mem2[sizeof mem];
    eng_tree t;
    orc o;
    eng_policy pol = {NULL, NULL};
    CHECK_EQ_INT(d->create(p, &pol), ENG_OK);
    if (!pol.i) return 0;
    memset(&o, 0, sizeof o);
    eng_tree_init(&t, mem2, sizeof mem2, MAXN, MAXN * KC);
    eng_tree_reset(&t, 5);
    eng_draft_oracle dr = {.expand = expand_rotated, .ctx = &o, .k = KC};
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &BIG), ENG_OK);
    eng_policy_destroy(&pol);
    int32_t n = 0;
    for (int32_t v = 1; v < t.n_nodes; v++)
        out[n++] = (vnode){t.nodes[v].cum_logq, t.nodes[v].depth, 0, 0, t.nodes[v].tok};
    qsort(out, (size_t)n, sizeof *out, node_key_cmp);
    return n;
}

/* The same tree from sorted (g_rotate 0) and rotated lists, for each of the
 * n parameter sets params[i] (psize bytes each). */
static void same_tree_unsorted(const char *name, const void *params, size_t psize, int n)
{
    static vnode ref[MAXN], got[MAXN];
    const eng_policy_desc *d = eng_policy_lookup(name);
    CHECK(d != NULL);
    if (!d) return;
    for (int c = 0; c < n; c++) {
        const void *p = (const unsigned char *)params + (size_t)c * psize;
        g_rotate = 0;
        int32_t nref = build_rotated(d, p, ref);
        CHECK(nref > 0);
        for (g_rotate = 1; g_rotate < 3; g_rotate++) {
            int32_t ng = build_rotated(d, p, got);
            CHECK_EQ_INT(ng, nref);
            int same = ng == nref;
            for (int32_t i = 0; same && i < ng; i++)
                same = got[i].tok == ref[i].tok && got[i].depth == ref[i].depth &&
                       got[i].score == ref[i].score;
            CHECK(same);
        }
    }
    g_rotate = 0;
}

static void test_opt_tree_unsorted_oracle(void)
{
    eng_opt_tree_params p[] = {
        {60, 0.05, 8, ENG_UNIT_NPU}, {16, 0.05, 8, ENG_UNIT_NPU}, {5, 0.05, 8, ENG_UNIT_NPU}};
    same_tree_unsorted("opt_tree", p, sizeof p[0], 3);
}

/* An oracle whose log-probs are partly NaN (expand_rotated with g_nan):
 * such scores have no place in the ranking, so a merge may hand out fewer
 * candidates than asked; the policy must still return a well-formed tree
 * (or an error), never read past what the merge gave it. */
static void test_nan_oracle(void)
{
    static _Alignas(8) unsigned char mem2[sizeof mem];
    eng_eagle2_params e2 = {KC, 6, 60, ENG_UNIT_NPU};
    eng_opt_tree_params ot = {60, 0.05, 8, ENG_UNIT_NPU};
    const char *names[] = {"eagle2", "opt_tree"};
    const void *params[] = {&e2, &ot};
    for (int c = 0; c < 2; c++) {
        const eng_policy_desc *d = eng_policy_lookup(names[c]);
        CHECK(d != NULL);
        if (!d) continue;
        eng_policy pol = {NULL, NULL};
        CHECK_EQ_INT(d->create(params[c], &pol), ENG_OK);
        if (!pol.i) continue;
        eng_tree t;
        orc o;
        memset(&o, 0, sizeof o);
        eng_tree_init(&t, mem2, sizeof mem2, MAXN, MAXN * KC);
        eng_tree_reset(&t, 5);
        eng_draft_oracle dr = {.expand = expand_rotated, .ctx = &o, .k = KC};
        g_nan = 1;
        int rc = pol.i->build(pol.self, &t, &dr, &BIG);
        g_nan = 0;
        CHECK(rc == ENG_OK || rc < 0);
        CHECK(t.n_nodes >= 1 && t.n_nodes <= MAXN);
        int ok = 1;
        for (int32_t v = 1; ok && v < t.n_nodes; v++)
            ok = t.nodes[v].parent >= 0 && t.nodes[v].parent < v &&
                 t.nodes[v].depth == t.nodes[t.nodes[v].parent].depth + 1;
        CHECK(ok);
        eng_policy_destroy(&pol);
    }
}

/* EAGLE-2 merges the ranked runs of the pool for each level's frontier and for
 * the global top total_tokens; with unsorted lists it selects over the pool.
 * top_k = KC: every candidate enters the pool, so the pool (and the tree) do
 * not depend on the lists' order. */
static void test_eagle2_unsorted_oracle(void)
{
    eng_eagle2_params p[] = {{KC, 6, 60, ENG_UNIT_NPU},
                             {KC, 3, 10, ENG_UNIT_NPU},
                             {KC, 8, 200, ENG_UNIT_CPU},
                             {KC, 0, 3, ENG_UNIT_NPU}};
    same_tree_unsorted("eagle2", p, sizeof p[0], 4);
    /* lists in order but for the last level's (depth 3 nodes, the last
     * expanded): the final selection must not merge those as ranked runs */
    eng_eagle2_params last[] = {{KC, 3, 40, ENG_UNIT_NPU}, {KC, 3, 44, ENG_UNIT_NPU}};
    g_rotate_depth = 3;
    same_tree_unsorted("eagle2", last, sizeof last[0], 2);
    g_rotate_depth = 0;
}

/* Ties on the path for lists out of order (the selection over all
 * candidates, not the merge): the root lists tokens 7, 8, 9 at log-probs
 * -1.0, -0.5, -0.5 (8 and 9 tie, and the list is not sorted).  OPT-Tree
 * with a beam of one and EAGLE-2 keeping one node must both take 8, the
 * earlier of the tied candidates. */
static int expand_tied(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    (void)unit;
    orc *o = ctx;
    o->calls++;
    static const float lp[3] = {-1.0f, -0.5f, -0.5f};
    for (int32_t i = 0; i < count; i++) {
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], 3);
        if (!c) return ENG_E_FULL;
        for (int32_t j = 0; j < 3; j++) {
            c[j].tok = (eng_token)(7 + j + 10 * t->nodes[ids[i]].depth);
            c[j].logp = lp[j];
        }
    }
    return ENG_OK;
}

static void test_unsorted_ties(void)
{
    eng_opt_tree_params ot = {1, 1000.0, 10, ENG_UNIT_NPU};
    eng_eagle2_params e2 = {3, 0, 1, ENG_UNIT_NPU};
    const char *names[] = {"opt_tree", "eagle2"};
    const void *params[] = {&ot, &e2};
    for (int c = 0; c < 2; c++) {
        const eng_policy_desc *d = eng_policy_lookup(names[c]);
        eng_policy pol = {NULL, NULL};
        CHECK(d && d->create(params[c], &pol) == ENG_OK);
        if (!pol.i) continue;
        eng_tree t;
        orc o;
        memset(&o, 0, sizeof o);
        tree_init(&t);
        eng_draft_oracle dr = {.expand = expand_tied, .ctx = &o, .k = 3};
        CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &BIG), ENG_OK);
        eng_policy_destroy(&pol);
        CHECK_EQ_INT(eng_tree_size(&t), 1);
        CHECK(t.n_nodes == 2 && t.nodes[1].tok == 8);
    }
}

/* ---- Sequoia ---- */

/* exhaustive: every tree of m nodes as a parent array (parent[v] < v), children
 * ranked by creation order; expected tokens = sum over nodes of the product of
 * p[rank] along the path (root 1) */
static double brute_best(const double *p, int32_t np, int32_t m, int32_t l)
{
    int32_t par[8];
    double best = -1;
    int64_t total = 1;
    for (int32_t v = 1; v < m; v++) total *= v;
    for (int64_t code = 0; code < total; code++) {
        int64_t x = code;
        for (int32_t v = 1; v < m; v++) {
            par[v] = (int32_t)(x % v);
            x /= v;
        }
        int32_t depth[8] = {0}, nch[8] = {0};
        double reach[8] = {1};
        int ok = 1;
        double e = 1;
        for (int32_t v = 1; v < m && ok; v++) {
            int32_t r = nch[par[v]]++;
            depth[v] = depth[par[v]] + 1;
            if (r >= np || depth[v] > l - 1) ok = 0;
            else {
                reach[v] = reach[par[v]] * p[r];
                e += reach[v];
            }
        }
        if (ok && e > best) best = e;
    }
    return best;
}

static void test_sequoia(void)
{
    uint64_t seed = 7;
    static unsigned char scratch[1 << 16];
    for (int32_t trial = 0; trial < 30; trial++) {
        double p[4];
        double left = 1.0;
        for (int32_t i = 0; i < 4; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            double u = (double)(seed >> 11) / 9007199254740992.0;
            p[i] = left * u;
            left -= p[i];
        }
        for (int32_t m = 1; m <= 7; m++) {
            for (int32_t l = 1; l <= 4; l++) {
                CHECK(eng_sequoia_dp_bytes(m, l, 4) <= sizeof scratch);
                double dp = eng_sequoia_dp(p, 4, m, l, scratch);
                double bf = brute_best(p, 4, m, l);
                if (bf < 0) CHECK(dp == -INFINITY);
                else CHECK_NEAR(dp, bf, 1e-9);
            }
        }
    }
    /* hand-worked: p = {0.5, 0.2}, 3 nodes, depth 2: chain 1 + .5 + .25 = 1.75
     * beats two children 1 + .5 + .2 = 1.7; with l = 2 only the bush is possible */
    double p2[2] = {0.5, 0.2};
    CHECK_NEAR(eng_sequoia_dp(p2, 2, 3, 3, scratch), 1.75, 1e-12);
    CHECK_NEAR(eng_sequoia_dp(p2, 2, 3, 2, scratch), 1.7, 1e-12);

    /* calibrate: flat verification cost -> the largest, deepest tree; steep
     * cost -> the root alone */
    eng_sequoia_params sp;
    eng_params_defaults(eng_sequoia_param_table, &sp);
    sp.max_nodes = 16;
    sp.max_depth = 4;
    const eng_policy_desc *d = eng_policy_lookup("sequoia");
    eng_policy pol;
    CHECK_EQ_INT(d->create(&sp, &pol), ENG_OK);
    int32_t depth = 0;
    CHECK_EQ_INT(eng_sequoia_shape(&pol, &depth), 16);
    CHECK(depth >= 2 && depth <= 4);
    double ver[16], dr[16], acc[3] = {0.8, 0.1, 0.05};
    for (int32_t m = 0; m < 16; m++) {
        ver[m] = 100.0 * pow(10.0, m); /* each row costs 10x */
        dr[m] = 0.0;
    }
    eng_cost_profile prof = {.accept_pos = acc, .n_pos = 3, .verify_ms = ver, .n_verify = 16,
                             .draft_cpu_ms = dr, .draft_npu_ms = dr, .n_draft = 16};
    CHECK(pol.i->calibrate != NULL);
    CHECK_EQ_INT(pol.i->calibrate(pol.self, &prof), ENG_OK);
    CHECK_EQ_INT(eng_sequoia_shape(&pol, &depth), 1);
    /* linear cost of 10 per row over a base of 100: a mid-sized tree, and the
     * built tree has exactly that shape */
    for (int32_t m = 0; m < 16; m++) ver[m] = 100.0 + 10.0 * m;
    CHECK_EQ_INT(pol.i->calibrate(pol.self, &prof), ENG_OK);
    int32_t size = eng_sequoia_shape(&pol, &depth);
    CHECK(size > 1 && size <= 16 && depth >= 1 && depth <= 4);
    eng_tree t;
    tree_init(&t);
    orc o;
    memset(&o, 0, sizeof o);
    eng_draft_oracle dro = {.expand = expand, .ctx = &o, .k = KC};
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dro, &BIG), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, size);
    CHECK_EQ_INT(eng_tree_depth(&t), depth);
    CHECK_EQ_INT(o.calls, depth);
    CHECK(parents_precede(&t));
    eng_policy_destroy(&pol);
}

/* ---- adaptive chain ---- */

static void feed(eng_policy *pol, int32_t proposed, int32_t accepted)
{
    eng_tree t;
    tree_init(&t);
    for (int32_t i = 0; i < proposed; i++) eng_tree_add(&t, i, 100 + i, -0.1f);
    eng_feedback fb;
    memset(&fb, 0, sizeof fb);
    fb.tree = &t;
    fb.outcome.accepted = accepted;
    pol->i->observe(pol->self, &fb);
}

static void test_adaptive_chain(void)
{
    eng_adaptive_chain_params p;
    eng_params_defaults(eng_adaptive_chain_param_table, &p);
    CHECK(p.window == 32 && p.k_start == 4 && p.k_min == 2 && p.k_max == 8);
    CHECK(p.raise_above == 0.80 && p.lower_below == 0.50 && p.fallback == 0);
    eng_policy pol;
    CHECK_EQ_INT(eng_adaptive_chain_create(&p, &pol), ENG_OK);
    int32_t ar = -1;
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, &ar), 4);
    CHECK_EQ_INT(ar, 0);
    /* all accepted: k grows by one per cycle up to 8 */
    for (int32_t i = 0; i < 6; i++) feed(&pol, 4, 4);
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 8);
    /* the built chain has k nodes */
    eng_tree t;
    orc o;
    tree_init(&t);
    memset(&o, 0, sizeof o);
    eng_draft_oracle dr = {.expand = expand, .ctx = &o, .k = KC};
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &BIG), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 8);
    CHECK_EQ_INT(eng_tree_leaves(&t), 1);
    /* the window remembers: 6 rates of 1.0, then zeros; the mean drops below
     * 0.8 after 2 zeros (6/8 = 0.75: k stays), below 0.5 after 7 (6/13) */
    feed(&pol, 8, 0);
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 8); /* 6/7 = 0.857 > 0.8: capped */
    feed(&pol, 8, 0);
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 8); /* 0.75: hold */
    for (int32_t i = 0; i < 4; i++) feed(&pol, 8, 0);  /* 6/12 = 0.5: hold */
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 8);
    feed(&pol, 8, 0); /* 6/13 < 0.5 */
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 7);
    for (int32_t i = 0; i < 20; i++) feed(&pol, 8, 0);
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 2);
    /* cycles that proposed nothing do not enter the window */
    feed(&pol, 0, 0);
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 2);
    /* W = 32: after 32 full acceptances the old zeros have left the window */
    for (int32_t i = 0; i < 32; i++) feed(&pol, 2, 2);
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 8);
    /* reset: a new prompt starts again at k_start */
    pol.i->reset(pol.self);
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, NULL), 4);
    eng_policy_destroy(&pol);

    /* fallback: mean < 0.4 -> autoregressive, probing every probe_period */
    p.fallback = 1;
    p.probe_period = 3;
    CHECK_EQ_INT(eng_adaptive_chain_create(&p, &pol), ENG_OK);
    feed(&pol, 4, 1); /* 0.25 */
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, &ar), 3);
    CHECK_EQ_INT(ar, 1);
    int32_t drafted[6];
    for (int32_t c = 0; c < 6; c++) {
        tree_init(&t);
        CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &BIG), ENG_OK);
        drafted[c] = eng_tree_size(&t);
        feed(&pol, drafted[c], 0);
    }
    /* two autoregressive cycles, then a probe chain of k, and so on */
    CHECK(drafted[0] == 0 && drafted[1] == 0 && drafted[2] == 3);
    CHECK(drafted[3] == 0 && drafted[4] == 0 && drafted[5] == 2);
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, &ar), 2);
    CHECK_EQ_INT(ar, 1);
    /* good probes lift the mean back: rates 0.25, 0, 0, then probes of 1.0 at
     * cycles 3 and 6: 1.25 / 4 = 0.31 (still autoregressive), 2.25 / 5 = 0.45 */
    for (int32_t c = 0; c < 6; c++) {
        tree_init(&t);
        pol.i->build(pol.self, &t, &dr, &BIG);
        feed(&pol, eng_tree_size(&t), eng_tree_size(&t));
        eng_adaptive_chain_k(&pol, &ar);
        CHECK_EQ_INT(ar, c < 5);
    }
    CHECK_EQ_INT(eng_adaptive_chain_k(&pol, &ar), 2);
    CHECK_EQ_INT(ar, 0);
    eng_policy_destroy(&pol);
}

/* ---- compaction ---- */

static void test_compact(void)
{
    eng_tree t;
    tree_init(&t);
    /* root -> 1, 2; 1 -> 3, 4; 2 -> 5; 3 -> 6 */
    eng_tree_add(&t, 0, 1, -0.1f);
    eng_tree_add(&t, 0, 2, -0.2f);
    eng_tree_add(&t, 1, 3, -0.3f);
    eng_tree_add(&t, 1, 4, -0.4f);
    eng_tree_add(&t, 2, 5, -0.5f);
    eng_tree_add(&t, 3, 6, -0.6f);
    eng_tree_cands_alloc(&t, 3, 2)[0].tok = 77;
    uint8_t keep[7] = {0, 1, 0, 1, 0, 1, 1}; /* 5 is under dropped 2 */
    int32_t map[7];
    CHECK_EQ_INT(eng_tree_compact(&t, keep, map), 4);
    CHECK(map[0] == 0 && map[1] == 1 && map[2] == ENG_NO_NODE && map[3] == 2);
    CHECK(map[4] == ENG_NO_NODE && map[5] == ENG_NO_NODE && map[6] == 3);
    CHECK(t.nodes[2].tok == 3 && t.nodes[2].parent == 1 && t.nodes[3].parent == 2);
    CHECK(t.nodes[0].first_child == 1 && t.nodes[0].last_child == 1);
    CHECK(t.nodes[1].first_child == 2 && t.nodes[2].next_sibling == ENG_NO_NODE);
    int32_t n;
    const eng_cand *c = eng_tree_cands(&t, 2, &n);
    CHECK(n == 2 && c && c[0].tok == 77);
    CHECK(fabs(t.nodes[3].cum_logq - (-1.0f)) < 1e-6);
    CHECK_EQ_INT(eng_tree_leaves(&t), 1);
    CHECK(parents_precede(&t));
}

int main(void)
{
    test_compact();
    test_specinfer();
    test_eagle2();
    test_opt_tree();
    test_opt_tree_given_tree();
    test_unsorted_ties();
    test_opt_tree_unsorted_oracle();
    test_eagle2_unsorted_oracle();
    test_nan_oracle();
    test_sequoia();
    test_adaptive_chain();
    return check_done("engine/tree_policies");
}
