/*
 * eng_select.c -- partial selection (eng_select.h): quickselect with a
 * median-of-three pivot down to the k-th position, then a sort of the k
 * elements before it; and the merge of runs already in order (a tree of
 * losers), through a comparator callback or with rank keys compared inline;
 * and a partial insertion sort over rank keys for pools out of order.
 */
#include "eng_select.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void swap(unsigned char *a, unsigned char *b, size_t size)
{
    unsigned char tmp[ENG_SELECT_MAX_SIZE];
    if (a == b) return;
    memcpy(tmp, a, size);
    memcpy(a, b, size);
    memcpy(b, tmp, size);
}

void eng_select_sorted(void *base, size_t n, size_t size, size_t k,
                       int (*cmp)(const void *, const void *))
{
    unsigned char *b = base;
    if (!base || size == 0 || size > ENG_SELECT_MAX_SIZE || k == 0 || n == 0) return;
    if (k >= n) {
        qsort(base, n, size, cmp);
        return;
    }
    /* invariant: the k smallest lie in [lo, hi) or before lo */
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2, last = hi - 1;
        /* median of three to position last, then Lomuto partition */
        if (cmp(b + mid * size, b + lo * size) < 0) swap(b + mid * size, b + lo * size, size);
        if (cmp(b + last * size, b + lo * size) < 0) swap(b + last * size, b + lo * size, size);
        if (cmp(b + mid * size, b + last * size) < 0) swap(b + mid * size, b + last * size, size);
        size_t store = lo;
        for (size_t i = lo; i < last; i++)
            if (cmp(b + i * size, b + last * size) < 0)
                swap(b + i * size, b + store++ * size, size);
        swap(b + store * size, b + last * size, size);
        /* b[store] is in its sorted place */
        if (store == k || store + 1 == k) break;
        if (store > k)
            hi = store;
        else
            lo = store + 1;
    }
    qsort(base, k, size, cmp);
}

typedef int (*before_fn)(const void *ctx, int a, int b);

/* 1 when no element of a run comes before its predecessor. */
static inline int runs_in_order(const int *start, int runs, before_fn before, const void *ctx)
{
    for (int r = 0; r < runs; r++)
        for (int i = start[r] + 1; i < start[r + 1]; i++)
            if (before(ctx, i, i - 1)) return 0;
    return 1;
}

/* The merge itself (runs in order): a tree of losers over the runs.  Run r
 * is leaf runs + r of an implicit binary tree (node p's children 2p and
 * 2p + 1); internal node p in [1, runs) holds the run that lost the match
 * played there, heap[0] the overall winner.  Taking the winner's next element
 * replays only the matches on its leaf's path: one comparison per level,
 * against the loser stored there.  An exhausted run (or an empty one) loses
 * every match.  Static and called with constant comparators, so the compiler
 * can specialise it for each (for rank keys, without branches). */
static inline int run_before(const int *start, const int *next, int a, int b, before_fn before,
                             const void *ctx)
{
    int va = next[a] < start[a + 1], vb = next[b] < start[b + 1];
    if (!va) return 0;
    if (!vb) return 1;
    return before(ctx, next[a], next[b]);
}

/* The winner of the subtree at node p; the losers of its matches in heap. */
static inline int build_losers(const int *start, const int *next, int runs, int p, before_fn before,
                               const void *ctx, int *heap)
{
    if (p >= runs) return p - runs;
    int a = build_losers(start, next, runs, 2 * p, before, ctx, heap);
    int b = build_losers(start, next, runs, 2 * p + 1, before, ctx, heap);
    int a_wins =
        !run_before(start, next, b, a, before, ctx); /* a on a tie: never, order is strict */
    heap[p] = a_wins ? b : a;
    return a_wins ? a : b;
}

static inline int merge_runs(const int *start, int runs, int k, before_fn before, const void *ctx,
                             int *heap, int *next, int *out)
{
    int n = 0;
    for (int r = 0; r < runs; r++) {
        next[r] = start[r];
        n += start[r + 1] - start[r];
    }
    if (runs < 1 || n < 1 || k < 1) return 0;
    int w = build_losers(start, next, runs, 1, before, ctx, heap); /* runs == 1: the leaf */
    int m = 0;
    while (m < k && next[w] < start[w + 1]) {
        out[m++] = next[w]++;
        for (int p = (w + runs) / 2; p >= 1; p /= 2) {
            int l = heap[p];
            int l_wins = run_before(start, next, l, w, before, ctx);
            heap[p] = l_wins ? w : l;
            w = l_wins ? l : w;
        }
    }
    return m;
}

int eng_select_runs(const int *start, int runs, int k, int (*before)(const void *ctx, int a, int b),
                    const void *ctx, int *heap, int *next, int *out)
{
    if (!runs_in_order(start, runs, before, ctx)) return -1;
    return merge_runs(start, runs, k, before, ctx, heap, next, out);
}

static int ranked_before(const void *ctx, int a, int b)
{
    const eng_rank *x = (const eng_rank *)ctx + a, *y = (const eng_rank *)ctx + b;
    /* x.score != y.score ? x.score > y.score : x.tie < y.tie, as flags (no
     * branch to mispredict; the same answer for NaN too) */
    return (x->score > y->score) | ((x->score == y->score) & (x->tie < y->tie));
}

/* The same tree of losers with the keys of the runs' heads held in the tree
 * itself: the matches on a path read nodes whose addresses are known before
 * the first of them is played, so the chain from one level to the next is a
 * comparison and a few conditional moves instead of three dependent loads.
 * For up to ENG_SELECT_TREE_RUNS runs (the tree lives on the stack, 24 bytes
 * a run).  The keys come from an array (eng_select_ranked) or are computed
 * from candidate runs as they are read (eng_select_cands). */
/* A run's head in the tree; an exhausted (or empty) run holds the key
 * {-inf, LLONG_MAX}, which every element's key comes before (eng_rank: a
 * tie is below LLONG_MAX), so no match needs to ask whether a run is live. */
typedef struct sel_node {
    double score;
    long long tie;
    int run;
} sel_node;

/* Where the keys come from: key[i], or run r's candidates (cr != NULL). */
typedef struct sel_src {
    const int *start;
    const eng_rank *key;
    const eng_cand_run *cr;
    long long step;
} sel_src;

static inline int node_before(const sel_node *a, const sel_node *b)
{
    return (a->score > b->score) | ((a->score == b->score) & (a->tie < b->tie));
}

/* Forced inline where the compiler allows it, so that each caller of the
 * merge gets a copy specialised for its kind of key (cand is a constant). */
#if defined(__GNUC__)
#define SEL_INLINE static inline __attribute__((always_inline))
#else
#define SEL_INLINE static inline
#endif

SEL_INLINE void node_load(sel_node *x, const sel_src *src, int cand, int run, int at)
{
    x->run = run;
    if (at >= src->start[run + 1]) {
        x->score = -INFINITY;
        x->tie = LLONG_MAX;
    } else if (!cand) {
        x->score = src->key[at].score;
        x->tie = src->key[at].tie;
    } else {
        eng_rank k = eng_cand_key(&src->cr[run], at - src->start[run], src->step);
        x->score = k.score;
        x->tie = k.tie;
    }
}

/* The tree's first matches, bottom up: win[p] is the winner of the subtree
 * at p (leaf runs + r holds run r's head), tree[p] its loser; the same
 * matches as playing each subtree's winners against each other from the
 * root down.  Returns the overall winner. */
SEL_INLINE sel_node build_nodes(const sel_src *src, int cand, int runs, sel_node *tree)
{
    sel_node win[2 * ENG_SELECT_TREE_RUNS];
    for (int r = 0; r < runs; r++)
        node_load(&win[runs + r], src, cand, r, src->start[r]);
    for (int p = runs - 1; p >= 1; p--) {
        const sel_node *a = &win[2 * p], *b = &win[2 * p + 1];
        int b_wins = node_before(b, a);
        tree[p] = b_wins ? *a : *b;
        win[p] = b_wins ? *b : *a;
    }
    return win[1]; /* runs == 1: the leaf itself */
}

/* Stops when the winner's run is exhausted: every run is then (keys that
 * are not NaN order every element before an exhausted run). */
SEL_INLINE int merge_ranked(const sel_src *src, int cand, int runs, int k, int *next, int *out,
                            int *out_run)
{
    sel_node tree[ENG_SELECT_TREE_RUNS];
    const int *start = src->start;
    for (int r = 0; r < runs; r++)
        next[r] = start[r];
    if (runs < 1 || k < 1) return 0;
    sel_node w = build_nodes(src, cand, runs, tree); /* runs all empty: the exhausted key */
    int m = 0;
    while (m < k && w.tie != LLONG_MAX) { /* LLONG_MAX: the winner's run is exhausted */
        int r = w.run;
        if (cand && out_run) out_run[m] = r;
        out[m++] = next[r]++;
        node_load(&w, src, cand, r, next[r]);
        for (int p = (r + runs) / 2; p >= 1; p /= 2) {
            sel_node *l = &tree[p];
            int l_wins = node_before(l, &w);
            /* swap the winner and the stored loser when the loser now wins,
             * field by field (the compiler may branch around the swap; a
             * swap through bit masks, with no branch, took more instructions
             * and no less time) */
            double ls = l->score, ws = w.score;
            long long lt = l->tie, wt = w.tie;
            int lr = l->run, wr = w.run;
            l->score = l_wins ? ws : ls;
            l->tie = l_wins ? wt : lt;
            l->run = l_wins ? wr : lr;
            w.score = l_wins ? ls : ws;
            w.tie = l_wins ? lt : wt;
            w.run = l_wins ? lr : wr;
        }
    }
    return m;
}

int eng_select_ranked(const int *start, int runs, int k, const eng_rank *key, int check, int *heap,
                      int *next, int *out)
{
    if (check && !runs_in_order(start, runs, ranked_before, key)) return -1;
    sel_src src = {.start = start, .key = key};
    if (runs <= ENG_SELECT_TREE_RUNS) return merge_ranked(&src, 0, runs, k, next, out, NULL);
    return merge_runs(start, runs, k, ranked_before, key, heap, next, out);
}

int eng_run_of(const int *start, int runs, int i)
{
    int lo = 0, hi = runs - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (start[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

typedef struct cand_ctx {
    sel_src src;
    int runs;
} cand_ctx;

/* For the comparator of the merge past the stack tree. */
static sel_node cand_key(const cand_ctx *x, int i)
{
    sel_node n;
    node_load(&n, &x->src, 1, eng_run_of(x->src.start, x->runs, i), i);
    return n;
}

static int cands_before(const void *ctx, int a, int b)
{
    sel_node x = cand_key(ctx, a), y = cand_key(ctx, b);
    return node_before(&x, &y);
}

int eng_select_cands(const int *start, const eng_cand_run *run, int runs, long long tie_step, int k,
                     int *heap, int *next, int *out, int *out_run)
{
    cand_ctx x = {{.start = start, .cr = run, .step = tie_step}, runs};
    if (runs <= ENG_SELECT_TREE_RUNS) return merge_ranked(&x.src, 1, runs, k, next, out, out_run);
    int m = merge_runs(start, runs, k, cands_before, &x, heap, next, out);
    for (int i = 0; out_run && i < m; i++)
        out_run[i] = eng_run_of(start, runs, out[i]);
    return m;
}

int eng_select_top_runs(const int *start, int runs, int k, const eng_rank *key, int *out,
                        int *out_run)
{
    if (runs < 1) return 0;
    int n = 0;
    for (int i = start[0]; i < start[runs]; i++)
        out[n++] = i;
    int m = eng_select_top(key, out, n, k);
    for (int q = 0; out_run && q < m; q++)
        out_run[q] = eng_run_of(start, runs, out[q]);
    return m;
}

int eng_select_top(const eng_rank *key, int *idx, int n, int k)
{
    int m = 0;
    if (k < 1) return 0;
    for (int i = 0; i < n; i++) {
        int x = idx[i];
        if (m == k && !ranked_before(key, x, idx[m - 1])) continue;
        int j = m < k ? m++ : m - 1;
        while (j > 0 && ranked_before(key, x, idx[j - 1])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
    return m;
}
