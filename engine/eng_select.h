/*
 * eng_select.h -- the k smallest elements of an array, in order, without
 * sorting the rest.
 *
 * Tree policies rank a pool of candidates by a total order and keep the
 * best few; sorting the whole pool every cycle cost more than the rest of
 * their work.  When the pool is made of runs already in order (each
 * parent's candidates come ranked), merging the runs is cheaper still.
 * Pure C11, no allocation, no I/O.
 */
#ifndef ENG_SELECT_H
#define ENG_SELECT_H

#include <stddef.h>

#include "eng_tree.h" /* eng_cand */

/* Reorders base[0..n) (elements of size bytes, at most ENG_SELECT_MAX_SIZE)
 * so that base[0..k) holds the k smallest elements by cmp in ascending
 * order; the order of base[k..n) is unspecified.  k >= n sorts everything.
 * With a strict total order (cmp returns 0 only for an element and itself)
 * the result equals the first k elements of a full sort, whatever the input
 * order.  Expected O(n + k log k). */
#define ENG_SELECT_MAX_SIZE 128
void eng_select_sorted(void *base, size_t n, size_t size, size_t k,
                       int (*cmp)(const void *, const void *));

/* The best k of n elements that arrive as runs, each already in order: run r
 * is elements [start[r], start[r + 1]) (start has runs + 1 entries,
 * non-decreasing), and within a run no element comes before its predecessor
 * (the candidates of one parent, ranked).  before(ctx, a, b) is a strict
 * total order on element indices.  Writes the indices of the best
 * min(k, n) elements, best first, to out and returns how many: the same
 * elements in the same order as a full sort would put first.  A tree of
 * losers over the runs, so O(runs + k log runs) calls of before.  heap and next are scratch
 * of runs entries each.  Returns -1, writing nothing, when a run is not in
 * order (checked in O(n)): the caller then selects over all elements. */
int eng_select_runs(const int *start, int runs, int k, int (*before)(const void *ctx, int a, int b),
                    const void *ctx, int *heap, int *next, int *out);

/* A rank key: a higher score comes first, then a lower tie (a ranking by
 * score with ties broken by, say, depth and arrival packed into tie).  a
 * comes before b when a.score != b.score ? a.score > b.score : a.tie < b.tie.
 * A tie is below LLONG_MAX (the merges mark an exhausted run with it).  A
 * NaN score has no place in this order: a selection over such keys may
 * return fewer than it was asked for, never an index out of its runs. */
typedef struct eng_rank {
    double score;
    long long tie;
} eng_rank;

/* eng_select_runs over elements given by their keys (key[i] for element i),
 * the order above compared inline: the same result as eng_select_runs with
 * that order, at a fraction of the cost.  check = 0 skips the O(n) test that
 * each run is in order: only for runs the caller has already tested (for
 * instance by an earlier call with check = 1 over them). */
int eng_select_ranked(const int *start, int runs, int k, const eng_rank *key, int check, int *heap,
                      int *next, int *out);

/* The best k of the elements idx[0..n) (indices into key), by the order
 * above, into idx[0..min(n, k)), best first; returns how many (0 when k < 1).
 * The rest of idx is left in no particular order.  A partial insertion sort,
 * O(n k): for a small k over a pool whose runs are not in order (where
 * eng_select_ranked returns -1), with the same result as a full sort. */
int eng_select_top(const eng_rank *key, int *idx, int n, int k);

/* Runs of draft candidates whose keys are computed as the merge reads them,
 * instead of being written out for every candidate first: element i of run r
 * (start[r] <= i < start[r + 1], j = i - start[r]) has the key
 *   score = run[r].base + (double)run[r].cand[j].logp,
 *   tie   = run[r].tie + j * tie_step.
 * A merge reads only the heads of the runs and what it takes, so a policy
 * that keeps the best few of many candidates (a parent's score plus each
 * child's log-probability) pays for those, not for every candidate. */
typedef struct eng_cand_run {
    const eng_cand *cand; /* the run's candidates, in the draft's rank order */
    double base;          /* the score that every candidate's logp adds to */
    long long tie;        /* element 0's tie */
} eng_cand_run;

/* The key of element j of run r, as above. */
static inline eng_rank eng_cand_key(const eng_cand_run *r, int j, long long tie_step)
{
    return (eng_rank){r->base + (double)r->cand[j].logp, r->tie + j * tie_step};
}

/* The run holding global index i (start[0] <= i < start[runs]): the last run
 * starting at or before i (an empty run starts where the next one does, so
 * the last is never empty).  O(log runs). */
int eng_run_of(const int *start, int runs, int i);

/* 1 when no candidate of c[0..n) has a logp above its predecessor's (the
 * draft's order).  Runs whose candidates pass this, with tie_step > 0, are
 * in order under the keys above: base + x is non-decreasing in x, and ties
 * grow along the run. */
static inline int eng_cands_ranked(const eng_cand *c, int n)
{
    if (n == 8) /* the traces' usual K: every pair at once, no branch */
        return !((c[1].logp > c[0].logp) | (c[2].logp > c[1].logp) | (c[3].logp > c[2].logp) |
                 (c[4].logp > c[3].logp) | (c[5].logp > c[4].logp) | (c[6].logp > c[5].logp) |
                 (c[7].logp > c[6].logp));
    for (int j = 1; j < n; j++)
        if (c[j].logp > c[j - 1].logp) return 0;
    return 1;
}

/* eng_select_ranked over runs of candidates keyed as above, which the caller
 * has tested in order (eng_cands_ranked, tie_step > 0): the same indices in
 * the same order as eng_select_ranked over the keys written out.  Writes the
 * global index of each pick to out and, when out_run is not NULL, its run to
 * out_run; returns how many (min(k, n)).  next is scratch of runs entries;
 * heap of runs entries is needed only past ENG_SELECT_TREE_RUNS runs (NULL
 * is allowed below that). */
#define ENG_SELECT_TREE_RUNS 128
int eng_select_cands(const int *start, const eng_cand_run *run, int runs, long long tie_step, int k,
                     int *heap, int *next, int *out, int *out_run);

/* eng_select_top over the elements of runs (key[i] for start[0] <= i <
 * start[runs]) into out (start[runs] - start[0] entries), with each pick's
 * run into out_run when not NULL; returns how many. */
int eng_select_top_runs(const int *start, int runs, int k, const eng_rank *key, int *out,
                        int *out_run);

/* The best k of candidate runs whether or not they passed eng_cands_ranked:
 * eng_select_cands when ranked, else eng_select_top_runs over their keys as
 * the caller wrote them out -- the same picks in the same order, the keys'
 * order being a strict total order.  out needs start[runs] - start[0]
 * entries when not ranked (k otherwise). */
static inline int eng_select_cands_or_keys(const int *start, const eng_cand_run *run, int runs,
                                           long long tie_step, int k, int ranked,
                                           const eng_rank *key, int *heap, int *next, int *out,
                                           int *out_run)
{
    if (ranked) return eng_select_cands(start, run, runs, tie_step, k, heap, next, out, out_run);
    return eng_select_top_runs(start, runs, k, key, out, out_run);
}

#endif
