/*
 * test_select.c -- eng_select_sorted against a full sort: for random arrays
 * (with repeated keys broken by a unique order field, as the policies' pools
 * are), every k, and element sizes of the policies' pools, the first k
 * elements equal the first k of qsort, and the array stays a permutation;
 * eng_select_runs over random ordered runs (empty ones and ties included)
 * picks the same first k, and refuses a run out of order; so does
 * eng_select_ranked with the same order as keys (checked or not), with few
 * runs and with more than it merges on the stack; eng_select_cands over
 * candidate runs keyed as it reads them picks what eng_select_ranked picks
 * over the same keys written out, with each pick's run, and
 * eng_cands_ranked tells ranked candidates from others.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "eng_select.h"

typedef struct item {
    double score;
    int32_t depth, order;
    int64_t pad[3]; /* a pool entry's size */
} item;

static int before(const item *a, const item *b)
{
    if (a->score != b->score) return a->score > b->score;
    if (a->depth != b->depth) return a->depth < b->depth;
    return a->order < b->order;
}

static int cmp(const void *x, const void *y)
{
    const item *a = x, *b = y;
    return before(a, b) ? -1 : (before(b, a) ? 1 : 0);
}

static int before_idx(const void *ctx, int x, int y)
{
    const item *v = ctx;
    return before(&v[x], &v[y]);
}

static uint64_t rng = 88172645463325252ULL;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Candidate runs (a parent's score plus its ranked children's logp, ties
 * growing by a step along each run): eng_select_cands against
 * eng_select_ranked over the same keys written out. */
static void test_cand_runs(void)
{
    enum { NC = 2600 };
    static eng_cand cand[NC];
    static eng_rank key[NC];
    static int out[NC], out2[NC], orun[NC];
    int cases = 0;
    for (int trial = 0; trial < 300; trial++) {
        int runs = trial % 4 ? 1 + (int)(next() % 60) : 129 + (int)(next() % 60);
        int start[190], heap[190], nxt[190], owner[NC];
        eng_cand_run cr[190];
        /* EAGLE-2's ties (depth, then pool index: step 1) or interleaved
         * ones (run r's element j ties r + 256 j: the step decides) */
        long long step = trial % 3 ? 1 : 256;
        int n = 0;
        for (int r = 0; r < runs; r++) {
            start[r] = n;
            int len = (int)(next() % 12); /* empty runs too */
            /* few distinct bases and logps: ties across runs and within one */
            cr[r].base = -(double)(next() % 5) / 2.0;
            cr[r].cand = &cand[n];
            cr[r].tie = step == 1 ? (long long)(1 + r % 3) << 40 | n : r;
            float lp = 0.0f;
            for (int j = 0; j < len && n < NC; j++, n++) {
                lp -= (float)(next() % 3) / 4.0f;
                cand[n] = (eng_cand){(eng_token)j, lp};
                key[n] = (eng_rank){cr[r].base + (double)lp, cr[r].tie + j * step};
                owner[n] = r;
            }
            CHECK(eng_cands_ranked(cr[r].cand, n - start[r]));
        }
        start[runs] = n;
        int ks[] = {0, 1, 10, n / 2, n, n + 3, 63};
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            int k = ks[j];
            int want = eng_select_ranked(start, runs, k, key, 1, heap, nxt, out);
            int got = eng_select_cands(start, cr, runs, step, k, heap, nxt, out2, orun);
            CHECK_EQ_INT(got, want);
            int same = got == want;
            for (int i = 0; same && i < got; i++)
                same = out2[i] == out[i] && orun[i] == owner[out[i]];
            CHECK(same);
            CHECK_EQ_INT(eng_select_cands(start, cr, runs, step, k, heap, nxt, out2, NULL), want);
            cases++;
        }
    }
    /* NaN scores have no place in the order: fewer picks at worst, each a
     * distinct index inside its run */
    for (int trial = 0; trial < 50; trial++) {
        int runs = 1 + (int)(next() % 150), start[151], heap[151], nxt[151], owner[NC], n = 0;
        eng_cand_run cr[151];
        for (int r = 0; r < runs; r++) {
            start[r] = n;
            int len = (int)(next() % 6);
            cr[r] = (eng_cand_run){&cand[n], -(double)(next() % 3), (long long)n};
            for (int j = 0; j < len; j++, n++) {
                float lp = next() % 4 ? -(float)j : NAN;
                cand[n] = (eng_cand){(eng_token)j, lp};
                key[n] = (eng_rank){cr[r].base + (double)lp, n};
                owner[n] = r;
            }
        }
        start[runs] = n;
        for (int pass = 0; pass < 2; pass++) {
            int k = 1 + (int)(next() % 80);
            int m = pass ? eng_select_cands(start, cr, runs, 1, k, heap, nxt, out, orun)
                         : eng_select_ranked(start, runs, k, key, 0, heap, nxt, out);
            CHECK(m >= 0 && m <= (k < n ? k : n));
            static unsigned char seen[NC];
            memset(seen, 0, sizeof seen);
            int ok = 1;
            for (int i = 0; ok && i < m; i++) {
                ok = out[i] >= 0 && out[i] < n && !seen[out[i]] &&
                     (!pass || orun[i] == owner[out[i]]);
                if (ok) seen[out[i]] = 1;
            }
            CHECK(ok);
            cases++;
        }
    }
    eng_cand up[3] = {{1, -2.0f}, {2, -1.0f}, {3, -3.0f}};
    CHECK(!eng_cands_ranked(up, 3));
    CHECK(eng_cands_ranked(up, 1) && eng_cands_ranked(up + 1, 2) && eng_cands_ranked(up, 0));
    /* every length (8 has a path of its own) against the plain scan: lists
     * from few values (ties, runs in order) with a NaN now and then */
    for (int trial = 0; trial < 4000; trial++) {
        eng_cand c[12];
        int len = (int)(next() % 13), sorted = next() % 2;
        for (int j = 0; j < len; j++) {
            float v = -(float)(next() % 4);
            if (sorted && j > 0 && v > c[j - 1].logp) v = c[j - 1].logp;
            c[j] = (eng_cand){j, next() % 50 ? v : NAN};
        }
        int want = 1;
        for (int j = 1; j < len; j++)
            want &= !(c[j].logp > c[j - 1].logp);
        CHECK_EQ_INT(eng_cands_ranked(c, len), want);
    }
    fprintf(stderr, "test_select: %d candidate-run cases\n", cases);
}

int main(void)
{
    enum { N = 700 };
    static item a[N], b[N];
    static eng_rank key[N];
    int cases = 0;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 1 + next() % N;
        int distinct = 1 + (int)(next() % 20); /* few distinct scores: many ties */
        for (size_t i = 0; i < n; i++) {
            memset(&a[i], 0, sizeof a[i]);
            a[i].score = -(double)(next() % (uint32_t)distinct) / 4.0;
            a[i].depth = (int32_t)(next() % 4);
            a[i].order = (int32_t)i;
        }
        size_t ks[] = {0, 1, 2, n / 3, n / 2, n - 1, n, n + 5, 10, 60};
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            size_t k = ks[j];
            memcpy(b, a, n * sizeof *a);
            eng_select_sorted(b, n, sizeof *b, k, cmp);
            item *full = malloc(n * sizeof *full);
            CHECK(full != NULL);
            memcpy(full, a, n * sizeof *a);
            qsort(full, n, sizeof *full, cmp);
            size_t kk = k < n ? k : n;
            CHECK(memcmp(b, full, kk * sizeof *b) == 0);
            /* still a permutation: every order appears once */
            unsigned char *seen = calloc(n, 1);
            CHECK(seen != NULL);
            for (size_t i = 0; i < n; i++) {
                CHECK(b[i].order >= 0 && (size_t)b[i].order < n && !seen[b[i].order]);
                seen[b[i].order] = 1;
            }
            free(seen);
            free(full);
            cases++;
        }
    }
    /* runs already in order (a parent's ranked candidates): eng_select_runs
     * gives the indices of the same first k as a full sort; a run out of
     * order is refused with -1 */
    int runs_cases = 0;
    for (int trial = 0; trial < 300; trial++) {
        /* one trial in four with more runs than the merge keeps on the stack */
        int runs = trial % 4 ? (int)(next() % 40) : 129 + (int)(next() % 100);
        int start[232], heap[231], nxt[231], out[N];
        int n = 0;
        int distinct = 1 + (int)(next() % 30);
        for (int r = 0; r < runs; r++) {
            start[r] = n;
            int len = (int)(next() % 12); /* empty runs too */
            double base = -(double)(next() % (uint32_t)distinct) / 4.0;
            for (int i = 0; i < len && n < N; i++, n++) {
                memset(&a[n], 0, sizeof a[n]);
                base -= (double)(next() % 3) / 4.0; /* non-increasing: ties in a run */
                a[n].score = base;
                a[n].depth = 1 + r % 3; /* equal scores across runs: depth decides */
                a[n].order = n;
                key[n] = (eng_rank){a[n].score, (long long)a[n].depth << 32 | a[n].order};
            }
        }
        start[runs] = n;
        int ks[] = {0, 1, 7, n / 2, n, n + 3, 63};
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            int k = ks[j];
            int m = eng_select_runs(start, runs, k, before_idx, a, heap, nxt, out);
            memcpy(b, a, (size_t)n * sizeof *a);
            qsort(b, (size_t)n, sizeof *b, cmp);
            int kk = k < n ? k : n;
            CHECK_EQ_INT(m, kk);
            int same = m == kk;
            for (int i = 0; same && i < kk; i++)
                same = out[i] == b[i].order;
            CHECK(same);
            for (int check = 0; check < 2; check++) {
                int mr = eng_select_ranked(start, runs, k, key, check, heap, nxt, out);
                CHECK_EQ_INT(mr, kk);
                same = mr == kk;
                for (int i = 0; same && i < kk; i++)
                    same = out[i] == b[i].order;
                CHECK(same);
            }
            runs_cases++;
        }
        /* a run out of order */
        if (runs > 0 && start[runs - 1] + 1 < start[runs]) {
            int r0 = start[runs - 1];
            item tmp = a[r0];
            a[r0] = a[r0 + 1];
            a[r0 + 1] = tmp;
            eng_rank kt = key[r0];
            key[r0] = key[r0 + 1];
            key[r0 + 1] = kt;
            if (before(&a[r0 + 1], &a[r0])) {
                CHECK_EQ_INT(eng_select_runs(start, runs, 5, before_idx, a, heap, nxt, out), -1);
                CHECK_EQ_INT(eng_select_ranked(start, runs, 5, key, 1, heap, nxt, out), -1);
            }
        }
    }
    fprintf(stderr, "test_select: %d run cases\n", runs_cases);
    test_cand_runs();

    /* degenerate arguments are no-ops */
    int one = 5;
    eng_select_sorted(NULL, 3, sizeof(int), 1, cmp);
    eng_select_sorted(&one, 1, 0, 1, cmp);
    eng_select_sorted(&one, 1, ENG_SELECT_MAX_SIZE + 1, 1, cmp);
    CHECK(one == 5);
    fprintf(stderr, "test_select: %d cases\n", cases);
    return check_done("test_select");
}
