/*
 * test_lyanna.c -- the Lyanna policy against a deterministic in-test draft.
 *
 * The draft gives every node K = 4 candidates whose tokens derive from the
 * node's token and depth and whose log-probs fall with rank and vary with the
 * token (joint scores rarely tie).  It implements every optional hook and logs
 * each call: expand (full forward), expand_body, project (rows) and resample
 * (count, penalty).  Its resample serves the same sets as expand -- the same
 * hidden state with the node's token information -- and, when the penalty is
 * positive, always moves the rank-1 token to the last rank, so a re-sampled
 * subtree differs from the drafted tree in a known way.
 *
 * Checks: the token-info tree against a naive Algorithm 1 (every step's k best
 * leaves expanded, budget B by joint score, ancestor-closed), the call pattern
 * of a step (one forward, the rest re-sampled), the one-pass head (N body
 * calls + one head call of N rows vs N full calls) and the fallbacks when hooks
 * are missing, re-sampling only when more than r steps remain, no chaining,
 * fusion (extra rows, shared tokens merged, draft forwards as in a normal
 * cycle, candidate sets of shared nodes kept) vs a verification of its own
 * (no draft call at all), parameter validation, and lists out of order or
 * with a log-prob above 0 (the selection over entries written out) against
 * the same lists in order.
 */
#include "pol_chain.h"
#include "pol_lyanna.h"

#include "../check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { KC = 4, MAXN = 1024, MAXCALLS = 256 };

enum { C_FULL = 0, C_BODY = 1, C_HEAD = 2, C_RESAMPLE = 3 };

typedef struct call {
    int kind;
    int32_t rows;
    double penalty;
} call;

typedef struct orc {
    int32_t n;
    call c[MAXCALLS];
} orc;

static eng_token cand_tok(eng_token parent_tok, int32_t depth, int32_t j)
{
    return (eng_token)(((int64_t)parent_tok * 31 + 7 * j + depth * 101 + 13) % 100003);
}

static float cand_logp(eng_token tok, int32_t j)
{
    return (float)(-0.3 * (j + 1) - 0.05 * (double)((tok + j) % 5));
}

static void log_call(orc *o, int kind, int32_t rows, double penalty)
{
    if (o->n < MAXCALLS) o->c[o->n] = (call){kind, rows, penalty};
    o->n++;
}

/* candidate j of node u; degraded: rank 1 moved to the last rank */
static eng_token tok_at(const eng_node *u, int32_t j, int degraded)
{
    int32_t src = degraded ? (j + 1) % KC : j;
    return cand_tok(u->tok, u->depth, src);
}

/* How fill lays a set out: 0 in rank order; 1 reversed (out of order);
 * 2 rank 1 with a log-prob above 0 (+0.25); 3 rank 1 with log-prob 0. */
static int g_layout;

static int fill(eng_tree *t, const int32_t *ids, int32_t count, int degraded)
{
    for (int32_t i = 0; i < count; i++) {
        const eng_node *u = &t->nodes[ids[i]];
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], KC);
        if (!c) return ENG_E_FULL;
        for (int32_t j = 0; j < KC; j++) {
            c[j].tok = tok_at(u, j, degraded);
            c[j].logp = cand_logp(u->tok, j); /* the log-probs stay with the ranks */
        }
        if (g_layout == 1)
            for (int32_t j = 0; j < KC / 2; j++) {
                eng_cand x = c[j];
                c[j] = c[KC - 1 - j];
                c[KC - 1 - j] = x;
            }
        if (g_layout >= 2) c[0].logp = g_layout == 2 ? 0.25f : 0.0f;
    }
    return ENG_OK;
}

static int expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    (void)unit;
    log_call(ctx, C_FULL, count, 0);
    return fill(t, ids, count, 0);
}

static int expand_body(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    (void)unit;
    log_call(ctx, C_BODY, count, 0);
    return fill(t, ids, count, 0);
}

static int project(void *ctx, int32_t rows, eng_unit unit)
{
    (void)unit;
    log_call(ctx, C_HEAD, rows, 0);
    return ENG_OK;
}

static int resample(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, double penalty)
{
    log_call(ctx, C_RESAMPLE, count, penalty);
    return fill(t, ids, count, penalty > 0);
}

static int32_t count_kind(const orc *o, int kind)
{
    int32_t n = 0;
    for (int32_t i = 0; i < o->n && i < MAXCALLS; i++) n += o->c[i].kind == kind;
    return n;
}

static _Alignas(8) unsigned char mem[MAXN * sizeof(eng_node) + MAXN * KC * 4 * sizeof(eng_cand)];

static void tree_init(eng_tree *t, eng_token root)
{
    eng_tree_init(t, mem, sizeof mem, MAXN, MAXN * KC * 4);
    eng_tree_reset(t, root);
}

static eng_lyanna_params params(int32_t n, int32_t k, int32_t b)
{
    eng_lyanna_params p;
    eng_params_defaults(eng_lyanna_param_table, &p);
    p.n = n;
    p.k = k;
    p.b = b;
    p.one_pass_head = 0;
    p.resampling = 0;
    return p;
}

static eng_draft_oracle full_oracle(orc *o)
{
    return (eng_draft_oracle){.expand = expand, .ctx = o, .k = KC, .expand_body = expand_body,
                              .project = project, .resample = resample};
}

static const eng_build_limits BIG = {MAXN, 64, 1000};

/* ---- naive Algorithm 1: explicit token paths ---- */

typedef struct vnode {
    double score;
    int32_t depth, parent; /* index into the same array, -1 = root */
    eng_token tok;
} vnode;

static int by_score(const void *x, const void *y)
{
    const vnode *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->depth < b->depth ? -1 : (a->depth > b->depth);
}

static int by_key(const void *x, const void *y)
{
    const vnode *a = x, *b = y;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return a->tok < b->tok ? -1 : (a->tok > b->tok);
}

/* All nodes of the token-info tree (before the budget) of a draft whose
 * candidates are cand_tok/cand_logp (degraded: rank 1 last).  Returns the
 * count; expanded[i] = 1 for the nodes whose children were added. */
static int32_t naive_tree(eng_token root, int32_t steps, int32_t k, int degraded, vnode *all,
                          uint8_t *expanded)
{
    int32_t n = 0, front[64], nf = 1;
    front[0] = -1;
    for (int32_t i = 1; i <= steps; i++) {
        int32_t first = n;
        for (int32_t f = 0; f < nf; f++) {
            int32_t v = front[f];
            eng_token pt = v < 0 ? root : all[v].tok;
            int32_t d = v < 0 ? 0 : all[v].depth;
            double base = v < 0 ? 0.0 : all[v].score;
            if (v >= 0) expanded[v] = 1;
            for (int32_t j = 0; j < k && j < KC; j++) {
                int32_t src = degraded ? (j + 1) % KC : j;
                all[n] = (vnode){base + (double)cand_logp(pt, j), d + 1, v, cand_tok(pt, d, src)};
                expanded[n++] = 0;
            }
        }
        /* the k best of this step's children (a sorted copy of indices) */
        int32_t idx[256], m = n - first;
        for (int32_t q = 0; q < m; q++) idx[q] = first + q;
        for (int32_t a = 1; a < m; a++)
            for (int32_t b = a; b > 0 && all[idx[b]].score > all[idx[b - 1]].score; b--) {
                int32_t x = idx[b];
                idx[b] = idx[b - 1];
                idx[b - 1] = x;
            }
        nf = m < k ? m : k;
        for (int32_t q = 0; q < nf; q++) front[q] = idx[q];
    }
    return n;
}

/* the tree's non-root nodes as (depth, tok, cum_logq) sorted by key */
static int32_t tree_nodes(const eng_tree *t, vnode *out)
{
    for (int32_t v = 1; v < t->n_nodes; v++)
        out[v - 1] = (vnode){t->nodes[v].cum_logq, t->nodes[v].depth, 0, t->nodes[v].tok};
    qsort(out, (size_t)(t->n_nodes - 1), sizeof *out, by_key);
    return t->n_nodes - 1;
}

static int same_set(vnode *a, int32_t na, vnode *b, int32_t nb)
{
    if (na != nb) {
        fprintf(stderr, "size %d vs %d\n", na, nb);
        return 0;
    }
    qsort(a, (size_t)na, sizeof *a, by_key);
    qsort(b, (size_t)nb, sizeof *b, by_key);
    for (int32_t i = 0; i < na; i++)
        if (a[i].tok != b[i].tok || a[i].depth != b[i].depth ||
            fabs(a[i].score - b[i].score) > 1e-4) {
            fprintf(stderr, "%d: %d/%d/%g vs %d/%d/%g\n", i, a[i].tok, a[i].depth, a[i].score,
                    b[i].tok, b[i].depth, b[i].score);
            return 0;
        }
    return 1;
}

static int no_duplicate_siblings(const eng_tree *t)
{
    for (int32_t v = 0; v < t->n_nodes; v++)
        for (int32_t a = t->nodes[v].first_child; a != ENG_NO_NODE; a = t->nodes[a].next_sibling)
            for (int32_t b = t->nodes[a].next_sibling; b != ENG_NO_NODE;
                 b = t->nodes[b].next_sibling)
                if (t->nodes[a].tok == t->nodes[b].tok) return 0;
    return 1;
}

/* a tree node holding the token path of naive node v, or ENG_NO_NODE */
static int32_t find_path(const eng_tree *t, const vnode *all, int32_t v)
{
    if (v < 0) return 0;
    int32_t p = find_path(t, all, all[v].parent);
    return p == ENG_NO_NODE ? ENG_NO_NODE : eng_tree_child(t, p, all[v].tok);
}

static int build(eng_policy *pol, eng_tree *t, orc *o, eng_draft_oracle *dr, eng_token root,
                 eng_build_limits lim)
{
    memset(o, 0, sizeof *o);
    tree_init(t, root);
    return pol->i->build(pol->self, t, dr, &lim);
}

static void observe(eng_policy *pol, const eng_tree *t, int32_t accepted, eng_token bonus)
{
    eng_feedback fb = {.tree = t, .outcome = {.accepted = accepted, .last_node = 0,
                                              .bonus = bonus, .emitted = accepted + 1}};
    pol->i->observe(pol->self, &fb);
}

/* ---- tests ---- */

static void test_shape_unpruned(void)
{
    /* B large: the whole tree, k + (N - 1) k^2 nodes, each step's k best expanded */
    for (int32_t k = 1; k <= 3; k++) {
        eng_lyanna_params p = params(5, k, 400);
        eng_policy pol = {0};
        CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
        orc o;
        eng_tree t;
        eng_draft_oracle dr = full_oracle(&o);
        CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
        CHECK_EQ_INT(eng_tree_size(&t), k + 4 * k * k);
        static vnode all[MAXN], got[MAXN];
        static uint8_t expanded[MAXN];
        int32_t n = naive_tree(5, 5, k, 0, all, expanded);
        CHECK_EQ_INT(n, k + 4 * k * k);
        int32_t ng = tree_nodes(&t, got);
        /* the naive nodes that were expanded have children in the tree, the others none */
        for (int32_t v = 0; v < n; v++) {
            int32_t id = find_path(&t, all, v);
            CHECK(id != ENG_NO_NODE);
            if (id == ENG_NO_NODE) continue;
            CHECK_EQ_INT(t.nodes[id].first_child != ENG_NO_NODE, expanded[v]);
        }
        static vnode ref[MAXN];
        memcpy(ref, all, sizeof(vnode) * (size_t)n);
        CHECK(same_set(got, ng, ref, n));
        /* per depth >= 1 below the last: exactly k nodes carry children */
        for (int32_t d = 1; d < 5; d++) {
            int32_t parents = 0;
            for (int32_t v = 1; v < t.n_nodes; v++)
                parents += t.nodes[v].depth == d && t.nodes[v].first_child != ENG_NO_NODE;
            CHECK_EQ_INT(parents, d == 1 ? k : k);
        }
        CHECK_EQ_INT(eng_tree_depth(&t), 5);
        CHECK(no_duplicate_siblings(&t));
        eng_policy_destroy(&pol);
    }
}

static void test_budget(void)
{
    /* B small: the global top-B by joint score, ancestor-closed */
    static const int32_t budgets[] = {1, 3, 7, 12, 20};
    for (size_t q = 0; q < sizeof budgets / sizeof budgets[0]; q++) {
        int32_t b = budgets[q];
        eng_lyanna_params p = params(4, 3, b);
        eng_policy pol = {0};
        CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
        orc o;
        eng_tree t;
        eng_draft_oracle dr = full_oracle(&o);
        CHECK_EQ_INT(build(&pol, &t, &o, &dr, 9, BIG), ENG_OK);
        static vnode all[MAXN], got[MAXN];
        static uint8_t expanded[MAXN];
        int32_t n = naive_tree(9, 4, 3, 0, all, expanded);
        qsort(all, (size_t)n, sizeof *all, by_score);
        int32_t want = b < n ? b : n;
        CHECK_EQ_INT(eng_tree_size(&t), want);
        int32_t ng = tree_nodes(&t, got);
        CHECK(same_set(got, ng, all, want));
        /* the lowest kept score is no lower than the best dropped one */
        double lo = 0.0;
        for (int32_t v = 1; v < t.n_nodes; v++)
            if (t.nodes[v].cum_logq < lo) lo = t.nodes[v].cum_logq;
        if (want < n) CHECK(all[want].score <= lo + 1e-6);
        for (int32_t v = 1; v < t.n_nodes; v++) CHECK(t.nodes[v].parent < v);
        /* the same drafting whatever the budget: 4 forwards */
        CHECK_EQ_INT(count_kind(&o, C_FULL), 4);
        eng_policy_destroy(&pol);
    }
}

static void test_call_pattern(void)
{
    eng_lyanna_params p = params(6, 3, 16);
    eng_policy pol = {0};
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    orc o;
    eng_tree t;
    eng_draft_oracle dr = full_oracle(&o);

    /* one full forward of one row per step; the other frontier nodes re-sampled
     * with no penalty */
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    CHECK_EQ_INT(count_kind(&o, C_FULL), 6);
    CHECK_EQ_INT(count_kind(&o, C_BODY), 0);
    CHECK_EQ_INT(count_kind(&o, C_HEAD), 0);
    CHECK_EQ_INT(count_kind(&o, C_RESAMPLE), 5);
    for (int32_t i = 0; i < o.n; i++) {
        if (o.c[i].kind == C_FULL) CHECK_EQ_INT(o.c[i].rows, 1);
        if (o.c[i].kind == C_RESAMPLE) {
            CHECK_EQ_INT(o.c[i].rows, 2);
            CHECK(o.c[i].penalty == 0.0);
        }
    }
    eng_lyanna_cycle info;
    CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_DRAFT);
    CHECK_EQ_INT(info.steps, 6);
    CHECK_EQ_INT(info.draft_nodes, 16);
    eng_tree t_full = t;
    static vnode a[MAXN], b[MAXN];
    int32_t na = tree_nodes(&t_full, a);

    /* one-pass head: N body-only forwards, then one head call over N rows; same tree */
    eng_policy_destroy(&pol);
    p.one_pass_head = 1;
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    CHECK_EQ_INT(count_kind(&o, C_FULL), 0);
    CHECK_EQ_INT(count_kind(&o, C_BODY), 6);
    CHECK_EQ_INT(count_kind(&o, C_HEAD), 1);
    CHECK_EQ_INT(o.c[o.n - 1].kind, C_HEAD);
    CHECK_EQ_INT(o.c[o.n - 1].rows, 6);
    int32_t nb = tree_nodes(&t, b);
    CHECK(same_set(a, na, b, nb));

    /* no expand_body/project: full forwards whatever one_pass_head says */
    dr.expand_body = NULL;
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    CHECK_EQ_INT(count_kind(&o, C_FULL), 6);
    CHECK_EQ_INT(count_kind(&o, C_HEAD), 0);
    dr.expand_body = expand_body;
    dr.project = NULL;
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    CHECK_EQ_INT(count_kind(&o, C_FULL), 6);
    CHECK_EQ_INT(count_kind(&o, C_BODY), 0);

    /* no resample: one batched forward over the frontier per step */
    dr.project = project;
    dr.resample = NULL;
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    CHECK_EQ_INT(count_kind(&o, C_BODY), 6);
    CHECK_EQ_INT(count_kind(&o, C_RESAMPLE), 0);
    CHECK_EQ_INT(o.c[0].rows, 1);
    for (int32_t i = 1; i < 6; i++) CHECK_EQ_INT(o.c[i].rows, 3);
    CHECK_EQ_INT(o.c[6].kind, C_HEAD);
    CHECK_EQ_INT(o.c[6].rows, 1 + 5 * 3);
    nb = tree_nodes(&t, b);
    CHECK(same_set(a, na, b, nb));

    /* limits: remaining 4 allows 3 levels; max_depth 2 allows 2 */
    dr.resample = resample;
    eng_build_limits lim = {MAXN, 64, 4};
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_depth(&t), 3);
    CHECK_EQ_INT(count_kind(&o, C_BODY), 3);
    lim = (eng_build_limits){MAXN, 2, 1000};
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_depth(&t), 2);
    lim = (eng_build_limits){MAXN, 64, 1};
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, lim), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, 1);
    CHECK_EQ_INT(o.n, 0);
    lim = (eng_build_limits){8, 64, 1000};
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, lim), ENG_OK);
    CHECK(t.n_nodes <= 8);
    eng_policy_destroy(&pol);
}

/* After a normal cycle that accepted `accepted` tokens, the next build. */
static void next_after(eng_policy *pol, orc *o, eng_tree *t, eng_draft_oracle *dr,
                       int32_t accepted, eng_lyanna_cycle *info)
{
    CHECK_EQ_INT(build(pol, t, o, dr, 5, BIG), ENG_OK);
    CHECK_EQ_INT(eng_lyanna_last(pol, info), ENG_OK);
    CHECK_EQ_INT(info->kind, ENG_LYANNA_DRAFT);
    observe(pol, t, accepted, 77);
    CHECK_EQ_INT(build(pol, t, o, dr, 77, BIG), ENG_OK);
    CHECK_EQ_INT(eng_lyanna_last(pol, info), ENG_OK);
}

static void test_resample_threshold(void)
{
    /* N = 6, r = 2: after the bonus token at depth j = accepted + 1, the
     * remaining steps are 6 - j; re-sampled only when 6 - j > 2 */
    eng_lyanna_params p = params(6, 2, 400);
    p.resampling = 1;
    p.fusion = 0;
    p.r = 2;
    p.resample_penalty = 0.3;
    eng_policy pol = {0};
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    orc o;
    eng_tree t;
    eng_draft_oracle dr = full_oracle(&o);
    for (int32_t a = 0; a <= 6; a++) {
        eng_lyanna_cycle info;
        next_after(&pol, &o, &t, &dr, a, &info);
        int32_t remain = 6 - (a + 1);
        if (remain > 2) {
            CHECK_EQ_INT(info.kind, ENG_LYANNA_RESAMPLED);
            CHECK_EQ_INT(info.resample_steps, remain);
            /* no draft forward at all: only re-sampling, with the penalty */
            CHECK_EQ_INT(count_kind(&o, C_FULL) + count_kind(&o, C_BODY), 0);
            CHECK_EQ_INT(count_kind(&o, C_HEAD), 0);
            CHECK_EQ_INT(count_kind(&o, C_RESAMPLE), remain);
            for (int32_t i = 0; i < o.n; i++) CHECK(o.c[i].penalty == 0.3);
            CHECK_EQ_INT(eng_tree_depth(&t), remain);
            CHECK_EQ_INT(eng_tree_size(&t), 2 + (remain - 1) * 4);
            CHECK_EQ_INT(t.nodes[0].tok, 77);
            /* the re-sampled tree is Algorithm 1 over the degraded sets */
            static vnode all[MAXN], got[MAXN];
            static uint8_t expanded[MAXN];
            int32_t n = naive_tree(77, remain, 2, 1, all, expanded);
            int32_t ng = tree_nodes(&t, got);
            CHECK(same_set(got, ng, all, n));
            /* no chaining: whatever its outcome, the next cycle drafts */
            observe(&pol, &t, 0, 12);
            CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
            CHECK_EQ_INT(info.pending, 0);
            CHECK_EQ_INT(build(&pol, &t, &o, &dr, 12, BIG), ENG_OK);
            CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
            CHECK_EQ_INT(info.kind, ENG_LYANNA_DRAFT);
            CHECK_EQ_INT(count_kind(&o, C_FULL), 6);
        } else {
            CHECK_EQ_INT(info.kind, ENG_LYANNA_DRAFT);
            CHECK_EQ_INT(count_kind(&o, C_FULL), 6);
        }
        observe(&pol, &t, 6, 3); /* all accepted: nothing pending */
    }
    /* an unknown bonus token (a lossy walk without one): nothing to re-sample from */
    eng_lyanna_cycle info;
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    observe(&pol, &t, 0, ENG_NO_TOKEN);
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_DRAFT);
    /* a reset (new prompt) drops what is pending */
    observe(&pol, &t, 0, 9);
    pol.i->reset(pol.self);
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_DRAFT);
    /* the subtree never exceeds what the next cycle may emit */
    observe(&pol, &t, 0, 9);
    eng_build_limits lim = {MAXN, 64, 3};
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 9, lim), ENG_OK);
    CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_RESAMPLED);
    CHECK_EQ_INT(eng_tree_depth(&t), 2);
    /* resampling off, or a draft without the hook: never */
    dr.resample = NULL;
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 9, BIG), ENG_OK);
    observe(&pol, &t, 0, 9);
    CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
    CHECK_EQ_INT(info.pending, 5);
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 9, BIG), ENG_OK);
    CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_DRAFT);
    eng_policy_destroy(&pol);
    dr.resample = resample;
    p.resampling = 0;
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    next_after(&pol, &o, &t, &dr, 0, &info);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_DRAFT);
    CHECK_EQ_INT(count_kind(&o, C_RESAMPLE), 5);
    for (int32_t i = 0; i < o.n; i++) CHECK(o.c[i].penalty == 0.0);
    eng_policy_destroy(&pol);
}

static void test_fusion(void)
{
    eng_lyanna_params p = params(6, 2, 400);
    p.resampling = 1;
    p.fusion = 1;
    p.r = 1;
    p.one_pass_head = 1;
    eng_policy pol = {0};
    orc o;
    eng_tree t;
    eng_draft_oracle dr = full_oracle(&o);
    eng_lyanna_cycle info;
    static vnode all[MAXN], sub[MAXN], got[MAXN];
    static uint8_t expanded[MAXN];

    /* penalty 0: the re-sampled subtree holds the same tokens as the drafted
     * tree's first levels -- every node shared, no extra row */
    p.resample_penalty = 0.0;
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    next_after(&pol, &o, &t, &dr, 1, &info);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_FUSED);
    CHECK_EQ_INT(info.resample_steps, 4);
    CHECK_EQ_INT(info.extra_rows, 0);
    CHECK_EQ_INT(eng_tree_size(&t), 2 + 5 * 4);
    eng_policy_destroy(&pol);

    /* penalty > 0: a different subtree, merged into the drafted one */
    p.resample_penalty = 1.0;
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    next_after(&pol, &o, &t, &dr, 1, &info);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_FUSED);
    /* the draft forwards of a normal cycle, one head pass, no extra invocation */
    CHECK_EQ_INT(count_kind(&o, C_BODY), 6);
    CHECK_EQ_INT(count_kind(&o, C_HEAD), 1);
    CHECK_EQ_INT(count_kind(&o, C_FULL), 0);
    CHECK_EQ_INT(info.steps, 6);
    CHECK_EQ_INT(info.draft_nodes, 2 + 5 * 4);
    CHECK_EQ_INT(info.resample_steps, 4);
    CHECK_EQ_INT(info.resample_nodes, 2 + 3 * 4);
    CHECK(info.extra_rows > 0);
    CHECK(info.extra_rows < info.resample_nodes); /* the root's children share tokens */
    CHECK_EQ_INT(eng_tree_size(&t), info.draft_nodes + info.extra_rows);
    CHECK(no_duplicate_siblings(&t));
    /* union of both trees: every drafted and every re-sampled path is there */
    int32_t nd = naive_tree(77, 6, 2, 0, all, expanded);
    int32_t ns = naive_tree(77, 4, 2, 1, sub, expanded);
    for (int32_t v = 0; v < nd; v++) CHECK(find_path(&t, all, v) != ENG_NO_NODE);
    for (int32_t v = 0; v < ns; v++) CHECK(find_path(&t, sub, v) != ENG_NO_NODE);
    /* ... and nothing else */
    int32_t shared = 0;
    for (int32_t v = 0; v < ns; v++) {
        int in = 0;
        for (int32_t w = 0; w < nd && !in; w++)
            in = sub[v].depth == all[w].depth && find_path(&t, sub, v) == find_path(&t, all, w);
        shared += in;
    }
    CHECK_EQ_INT(eng_tree_size(&t), nd + ns - shared);
    CHECK_EQ_INT(info.extra_rows, ns - shared);
    (void)got;
    /* shared nodes keep their drafted candidate sets (the root's: undegraded) */
    int32_t cn = 0;
    const eng_cand *c = eng_tree_cands(&t, 0, &cn);
    CHECK_EQ_INT(cn, KC);
    if (cn == KC) CHECK_EQ_INT(c[0].tok, cand_tok(77, 0, 0));
    eng_policy_destroy(&pol);

    /* budget: the subtree is pruned to B as well; the fused tree holds at most 2B */
    p.b = 5;
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    next_after(&pol, &o, &t, &dr, 0, &info);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_FUSED);
    CHECK_EQ_INT(info.draft_nodes, 5);
    CHECK_EQ_INT(info.resample_nodes, 5);
    CHECK(eng_tree_size(&t) <= 10 && eng_tree_size(&t) > 5);
    for (int32_t v = 1; v < t.n_nodes; v++) CHECK(t.nodes[v].parent < v);
    eng_policy_destroy(&pol);
}

/* Fusion vs a verification of its own over a scripted run: a cycle = one
 * build (one target invocation); the scripted walk accepts `acc[i]` tokens. */
static void test_invocations(void)
{
    static const int32_t acc[] = {0, 2, 6, 1, 4, 0, 3, 5, 0, 1};
    int32_t n_acc = (int32_t)(sizeof acc / sizeof acc[0]);
    int32_t verifications[2] = {0, 0}, drafting[2] = {0, 0}, no_forward[2] = {0, 0};
    for (int fusion = 0; fusion <= 1; fusion++) {
        eng_lyanna_params p = params(6, 2, 16);
        p.resampling = 1;
        p.fusion = fusion;
        p.r = 1;
        eng_policy pol = {0};
        CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
        orc o;
        eng_tree t;
        eng_draft_oracle dr = full_oracle(&o);
        int32_t normal = 0; /* cycles that drafted: one per scripted outcome */
        int32_t expected_rs = 0;
        while (normal < n_acc) {
            CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
            verifications[fusion]++;
            eng_lyanna_cycle info;
            eng_lyanna_last(&pol, &info);
            int32_t forwards = count_kind(&o, C_FULL) + count_kind(&o, C_BODY);
            if (forwards > 0) {
                drafting[fusion]++;
                int32_t a = acc[normal++];
                if (6 - (a + 1) > 1) expected_rs++;
                observe(&pol, &t, a, 42);
            } else {
                no_forward[fusion]++;
                CHECK_EQ_INT(info.kind, ENG_LYANNA_RESAMPLED);
                observe(&pol, &t, 0, 42);
            }
        }
        if (!fusion) CHECK_EQ_INT(no_forward[0], expected_rs - (6 - (acc[n_acc - 1] + 1) > 1));
        eng_policy_destroy(&pol);
    }
    /* fusion: one verification per drafting cycle; without: extra ones that draft nothing */
    CHECK_EQ_INT(verifications[1], drafting[1]);
    CHECK_EQ_INT(no_forward[1], 0);
    CHECK(no_forward[0] > 0);
    CHECK_EQ_INT(verifications[0], drafting[0] + no_forward[0]);
    CHECK_EQ_INT(drafting[0], drafting[1]);
}

static void test_params(void)
{
    eng_lyanna_params p;
    eng_params_defaults(eng_lyanna_param_table, &p);
    CHECK_EQ_INT(p.n, 7);
    CHECK_EQ_INT(p.k, 2);
    CHECK_EQ_INT(p.b, 16);
    CHECK_EQ_INT(p.r, 1);
    CHECK_EQ_INT(p.resampling, 1);
    CHECK_EQ_INT(p.fusion, 1);
    CHECK_EQ_INT(p.one_pass_head, 1);
    CHECK(p.resample_penalty == 0.2);
    CHECK_EQ_INT(p.unit, ENG_UNIT_NPU);
    const eng_policy_desc *d = eng_policy_lookup("lyanna");
    CHECK(d != NULL);
    if (d) {
        CHECK_EQ_INT(d->needs_draft, 1);
        CHECK(d->params == eng_lyanna_param_table);
        CHECK_EQ_INT((int64_t)d->params_size, (int64_t)sizeof(eng_lyanna_params));
    }
    eng_policy pol = {0};
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    eng_lyanna_cycle info;
    CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_OK);
    CHECK_EQ_INT(info.kind, ENG_LYANNA_DRAFT);
    eng_policy_destroy(&pol);
    /* not a lyanna policy */
    eng_chain_params cp = {8, ENG_UNIT_CPU};
    CHECK_EQ_INT(eng_chain_create(&cp, &pol), ENG_OK);
    CHECK_EQ_INT(eng_lyanna_last(&pol, &info), ENG_E_ARG);
    eng_policy_destroy(&pol);
    CHECK_EQ_INT(eng_lyanna_last(NULL, &info), ENG_E_ARG);
    /* out of range */
    eng_lyanna_params bad[9];
    for (int i = 0; i < 9; i++) bad[i] = p;
    bad[0].n = 0;
    bad[1].k = 17;
    bad[2].b = 0;
    bad[3].r = -1;
    bad[4].resampling = 2;
    bad[5].fusion = -1;
    bad[6].one_pass_head = 3;
    bad[7].resample_penalty = 1.5;
    bad[8].unit = (eng_unit)2;
    for (int i = 0; i < 9; i++) CHECK_EQ_INT(eng_lyanna_create(&bad[i], &pol), ENG_E_ARG);
    bad[0] = p;
    bad[0].resample_penalty = NAN;
    CHECK_EQ_INT(eng_lyanna_create(&bad[0], &pol), ENG_E_ARG);
    CHECK_EQ_INT(eng_lyanna_create(NULL, &pol), ENG_E_ARG);
    /* the largest configuration fits the policy scratch */
    p.n = 16;
    p.k = 16;
    p.b = 480;
    CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
    orc o;
    eng_tree t;
    eng_draft_oracle dr = full_oracle(&o);
    CHECK_EQ_INT(build(&pol, &t, &o, &dr, 5, BIG), ENG_OK);
    CHECK(t.n_nodes <= ENG_POL_MAX_NODES);
    CHECK_EQ_INT(eng_tree_size(&t), 480);
    eng_policy_destroy(&pol);
}

/* The sets' layout does not change the tree: lists out of order (every
 * candidate taken, k = K) give the tree of the same lists in order, and a
 * log-prob above 0 counts as 0 in the joint score (q clamped to 1) -- the
 * policy's selection over entries written out agrees with its merges. */
static void test_layouts(void)
{
    static const int32_t budgets[] = {3, 9, 30, 200};
    for (size_t q = 0; q < sizeof budgets / sizeof budgets[0]; q++)
        for (int pair = 0; pair < 2; pair++) {
            static vnode got[2][MAXN];
            int32_t ng[2];
            for (int side = 0; side < 2; side++) {
                eng_lyanna_params p = params(5, pair == 0 ? KC : 2, budgets[q]);
                eng_policy pol = {0};
                CHECK_EQ_INT(eng_lyanna_create(&p, &pol), ENG_OK);
                orc o;
                eng_tree t;
                eng_draft_oracle dr = full_oracle(&o);
                g_layout = pair == 0 ? side : 2 + side; /* sorted vs reversed; 0.25 vs 0 */
                CHECK_EQ_INT(build(&pol, &t, &o, &dr, 21, BIG), ENG_OK);
                g_layout = 0;
                ng[side] = tree_nodes(&t, got[side]);
                for (int32_t v = 0; pair == 1 && v < ng[side]; v++)
                    got[side][v].score = 0.0; /* cum_logq holds the log-probs as given */
                CHECK(no_duplicate_siblings(&t));
                eng_policy_destroy(&pol);
            }
            CHECK(ng[0] > 0);
            CHECK(same_set(got[0], ng[0], got[1], ng[1]));
        }
}

int main(void)
{
    test_shape_unpruned();
    test_budget();
    test_call_pattern();
    test_resample_threshold();
    test_fusion();
    test_invocations();
    test_params();
    test_layouts();
    return check_done("test_lyanna");
}
