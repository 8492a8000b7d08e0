/*
 * eng_select.c -- partial selection (eng_select.h): quickselect with a
 * median-of-three pivot down to the k-th position, then a sort of the k
 * elements before it; and the merge of runs already in order, through a
 * comparator callback or with rank keys compared inline.
 */
#include "eng_select.h"

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

/* The merge itself (runs in order).  Static and called with constant
 * comparators, so the compiler can specialise it for each. */
static inline int merge_runs(const int *start, int runs, int k, before_fn before, const void *ctx,
                             int *heap, int *next, int *out)
{
    /* a heap of the non-empty runs by their next element, the best on top */
    int h = 0;
    for (int r = 0; r < runs; r++) {
        if (start[r] >= start[r + 1]) continue;
        next[r] = start[r];
        int j = h++;
        while (j > 0 && before(ctx, next[r], next[heap[(j - 1) / 2]])) {
            heap[j] = heap[(j - 1) / 2];
            j = (j - 1) / 2;
        }
        heap[j] = r;
    }
    int m = 0;
    while (m < k && h > 0) {
        int r = heap[0];
        out[m++] = next[r];
        if (++next[r] == start[r + 1]) r = heap[--h]; /* run done: the last one sinks */
        if (h == 0) break;
        int j = 0;
        for (;;) {
            int c = 2 * j + 1;
            if (c >= h) break;
            if (c + 1 < h && before(ctx, next[heap[c + 1]], next[heap[c]])) c++;
            if (!before(ctx, next[heap[c]], next[r])) break;
            heap[j] = heap[c];
            j = c;
        }
        heap[j] = r;
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
    return x->score != y->score ? x->score > y->score : x->tie < y->tie;
}

int eng_select_ranked(const int *start, int runs, int k, const eng_rank *key, int check, int *heap,
                      int *next, int *out)
{
    if (check && !runs_in_order(start, runs, ranked_before, key)) return -1;
    return merge_runs(start, runs, k, ranked_before, key, heap, next, out);
}
