/*
 * test_accept_lossy.c -- top-p and speculative-sampling acceptance on
 * hand-built trees and distributions.
 *
 * Top-p: which children the top-p set admits, the preference for the most
 * probable admitted child, stopping where the target distribution is unknown,
 * the cap.  Sampling: the acceptance frequency of a single child matches
 * min(1, p/q) within 4 standard errors over 200,000 seeded draws, a rejected
 * child leads to a bonus drawn from norm(max(0, p - q)), and greedy-like
 * distributions reduce to greedy acceptance.
 */
#include "eng_accept.h"

#include "../check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { K = 4, MAXN = 16 };

static _Alignas(8) unsigned char mem[MAXN * sizeof(eng_node) + MAXN * K * sizeof(eng_cand)];

typedef struct lcg {
    uint64_t s;
} lcg;

static double uniform(void *ctx)
{
    lcg *g = ctx;
    g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(g->s >> 11) / 9007199254740992.0;
}

static void set_dist(eng_cand *tc, int32_t *tn, int32_t u, const eng_token *tok, const double *p,
                     int32_t n)
{
    for (int32_t j = 0; j < n; j++) {
        tc[u * K + j].tok = tok[j];
        tc[u * K + j].logp = (float)log(p[j]);
    }
    tn[u] = n;
}

static void set_cands(eng_tree *t, int32_t u, const eng_token *tok, const double *q, int32_t n)
{
    eng_cand *c = eng_tree_cands_alloc(t, u, n);
    for (int32_t j = 0; j < n; j++) {
        c[j].tok = tok[j];
        c[j].logp = (float)log(q[j]);
    }
}

static void test_top_p(void)
{
    eng_tree t;
    eng_tree_init(&t, mem, sizeof mem, MAXN, MAXN * K);
    eng_tree_reset(&t, 1);
    /* root children B (id 1) and C (id 2); B -> D (id 3) */
    eng_tree_add(&t, 0, 'B', -1.0f);
    eng_tree_add(&t, 0, 'C', -1.5f);
    eng_tree_add(&t, 1, 'D', -0.5f);
    eng_cand tc[MAXN * K];
    int32_t tn[MAXN] = {0};
    const eng_token tt[4] = {'A', 'B', 'C', 'E'};
    const double pp[4] = {0.5, 0.3, 0.15, 0.05};
    set_dist(tc, tn, 0, tt, pp, 4);
    const eng_token t1[2] = {'D', 'F'};
    const double p1[2] = {0.6, 0.4};
    set_dist(tc, tn, 1, t1, p1, 2);
    eng_token emit[8];
    int32_t path[8];
    /* top_p 0.5: the set is {A}: nothing accepted, bonus A */
    eng_outcome o = eng_accept_top_p(&t, tc, tn, K, NULL, 0.5, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 0);
    CHECK_EQ_INT(o.bonus, 'A');
    CHECK_EQ_INT(o.emitted, 1);
    /* top_p 0.7: {A, B}: B accepted, then D (top-1 at B) is in any set */
    o = eng_accept_top_p(&t, tc, tn, K, NULL, 0.7, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 2);
    CHECK(emit[0] == 'B' && emit[1] == 'D' && path[0] == 1 && path[1] == 3);
    /* D has no target distribution: no bonus */
    CHECK_EQ_INT(o.bonus, ENG_NO_TOKEN);
    CHECK_EQ_INT(o.emitted, 2);
    /* top_p 0.9: {A, B, C}: B preferred over C (more probable) */
    o = eng_accept_top_p(&t, tc, tn, K, NULL, 0.9, path, emit, 8);
    CHECK(o.accepted >= 1 && emit[0] == 'B');
    /* B pruned: C wins at 0.9, not at 0.7 */
    uint8_t keep[4] = {1, 0, 1, 1};
    o = eng_accept_top_p(&t, tc, tn, K, keep, 0.9, path, emit, 8);
    CHECK(o.accepted == 1 && emit[0] == 'C');
    CHECK_EQ_INT(o.bonus, ENG_NO_TOKEN); /* C: unknown distribution */
    o = eng_accept_top_p(&t, tc, tn, K, keep, 0.7, path, emit, 8);
    CHECK(o.accepted == 0 && emit[0] == 'A');
    /* cap 2: one draft plus the bonus at B (its top-1 D) */
    o = eng_accept_top_p(&t, tc, tn, K, NULL, 0.7, path, emit, 2);
    CHECK(o.accepted == 1 && o.emitted == 2 && emit[1] == 'D');
    /* the truncated distribution never reaches 0.99: all K entries are in */
    o = eng_accept_top_p(&t, tc, tn, K, keep, 0.99, path, emit, 8);
    CHECK(o.accepted == 1 && emit[0] == 'C');
    /* degenerate inputs */
    o = eng_accept_top_p(NULL, tc, tn, K, NULL, 0.9, path, emit, 8);
    CHECK_EQ_INT(o.emitted, 0);
}

/* Top-p's three ties, each decided one way only.  (1) Two target entries of
 * equal probability straddle the top_p mass: the one of the lower token is
 * inside, the other not, whatever order the entries and the children come
 * in.  (2) Two admitted children of equal probability: the first child
 * wins.  (3) The bonus among equal top target entries: the first entry. */
static void test_top_p_ties(void)
{
    eng_tree t;
    eng_token emit[8];
    int32_t path[8];
    eng_cand tc[MAXN * K];
    int32_t tn[MAXN] = {0};
    for (int order = 0; order < 2; order++) {
        eng_tree_init(&t, mem, sizeof mem, MAXN, MAXN * K);
        eng_tree_reset(&t, 1);
        /* children 'Y' then 'X' (or 'X' then 'Y'); target X 0.4, Y 0.4, Z 0.2 */
        int32_t x = -1, y = -1;
        if (order) {
            x = eng_tree_add(&t, 0, 'X', -1.0f);
            y = eng_tree_add(&t, 0, 'Y', -1.0f);
        } else {
            y = eng_tree_add(&t, 0, 'Y', -1.0f);
            x = eng_tree_add(&t, 0, 'X', -1.0f);
        }
        const eng_token t0[3] = {order ? 'X' : 'Y', order ? 'Y' : 'X', 'Z'};
        const double p0[3] = {0.4, 0.4, 0.2};
        set_dist(tc, tn, 0, t0, p0, 3);
        tn[x] = tn[y] = 0;
        /* (1) top_p 0.4: X (the lower token) is the set; Y is past it */
        eng_outcome o = eng_accept_top_p(&t, tc, tn, K, NULL, 0.4, path, emit, 8);
        CHECK(o.accepted == 1 && emit[0] == 'X' && path[0] == x);
        /* only Y kept: nothing accepted, the bonus is the first top entry */
        uint8_t keep[3] = {1, 0, 0};
        keep[y] = 1;
        o = eng_accept_top_p(&t, tc, tn, K, keep, 0.4, path, emit, 8);
        CHECK(o.accepted == 0 && o.emitted == 1);
        /* (3) the bonus: the first of the equal top entries, as listed */
        CHECK_EQ_INT(o.bonus, t0[0]);
        /* (2) top_p 0.9: both inside at 0.4; the first child wins */
        o = eng_accept_top_p(&t, tc, tn, K, NULL, 0.9, path, emit, 8);
        CHECK(o.accepted == 1 && path[0] == (order ? x : y));
    }
}

static void test_sampling(void)
{
    eng_tree t;
    eng_tree_init(&t, mem, sizeof mem, MAXN, MAXN * K);
    eng_cand tc[MAXN * K];
    int32_t tn[MAXN];
    eng_token emit[8];
    lcg g = {42};
    const eng_token toks[3] = {'X', 'Y', 'Z'};
    struct { double px, qx; } cases[] = {{0.3, 0.6}, {0.6, 0.3}, {0.1, 0.8}, {0.45, 0.5}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        eng_tree_reset(&t, 1);
        double q[3] = {cases[c].qx, (1 - cases[c].qx) / 2, (1 - cases[c].qx) / 2};
        double p[3] = {cases[c].px, (1 - cases[c].px) / 2, (1 - cases[c].px) / 2};
        set_cands(&t, 0, toks, q, 3);
        eng_tree_add(&t, 0, 'X', (float)log(q[0]));
        memset(tn, 0, sizeof tn);
        set_dist(tc, tn, 0, toks, p, 3);
        const int32_t n = 200000;
        int32_t acc = 0, bonus_y = 0, rejected = 0;
        for (int32_t i = 0; i < n; i++) {
            eng_outcome o = eng_accept_sampling(&t, tc, tn, K, NULL, 1.0, uniform, &g, NULL, emit, 8);
            if (o.accepted == 1) {
                acc++;
                CHECK_EQ_INT(o.emitted, 1); /* X has no target distribution: no bonus */
            } else {
                rejected++;
                bonus_y += o.bonus == 'Y';
                if (o.bonus == 'X') CHECK(0); /* the residual gives X no mass */
            }
        }
        double want = cases[c].px / cases[c].qx < 1 ? cases[c].px / cases[c].qx : 1.0;
        double se = sqrt(want * (1 - want) / n) + 1e-9;
        CHECK(fabs((double)acc / n - want) < 4 * se + 1e-12);
        /* residual norm(max(0, p - q)) puts equal mass on Y and Z */
        if (rejected > 1000) CHECK(fabs((double)bonus_y / rejected - 0.5) < 0.02);
    }
    /* temperature: p_t ∝ p^(1/t); at t = 0.5 and p = q the ratio is still 1 */
    eng_tree_reset(&t, 1);
    double q[3] = {0.5, 0.3, 0.2};
    set_cands(&t, 0, toks, q, 3);
    eng_tree_add(&t, 0, 'X', (float)log(q[0]));
    memset(tn, 0, sizeof tn);
    set_dist(tc, tn, 0, toks, q, 3);
    int32_t acc = 0;
    for (int32_t i = 0; i < 1000; i++)
        acc += eng_accept_sampling(&t, tc, tn, K, NULL, 0.5, uniform, &g, NULL, emit, 8).accepted;
    CHECK_EQ_INT(acc, 1000);
    /* a near-deterministic target whose top-1 is the child: always accepted, and
     * a chain of two such nodes emits both plus a sampled bonus */
    eng_tree_reset(&t, 1);
    const eng_token a2[2] = {'X', 'Y'};
    const double one[2] = {0.999999, 0.000001};
    set_cands(&t, 0, a2, (const double[]){0.6, 0.4}, 2);
    eng_tree_add(&t, 0, 'X', (float)log(0.6));
    set_cands(&t, 1, a2, (const double[]){0.6, 0.4}, 2);
    eng_tree_add(&t, 1, 'X', (float)log(0.6));
    memset(tn, 0, sizeof tn);
    set_dist(tc, tn, 0, a2, one, 2);
    set_dist(tc, tn, 1, a2, one, 2);
    set_dist(tc, tn, 2, a2, one, 2);
    eng_outcome o = eng_accept_sampling(&t, tc, tn, K, NULL, 1.0, uniform, &g, NULL, emit, 8);
    CHECK_EQ_INT(o.accepted, 2);
    CHECK_EQ_INT(o.emitted, 3);
    CHECK(emit[0] == 'X' && emit[1] == 'X' && emit[2] == 'X');
    /* bad arguments give an empty outcome */
    o = eng_accept_sampling(&t, tc, tn, K, NULL, 0.0, uniform, &g, NULL, emit, 8);
    CHECK_EQ_INT(o.emitted, 0);
    o = eng_accept_sampling(&t, tc, tn, K, NULL, 1.0, NULL, &g, NULL, emit, 8);
    CHECK_EQ_INT(o.emitted, 0);
}

int main(void)
{
    test_top_p();
    test_top_p_ties();
    test_sampling();
    return check_done("engine/accept_lossy");
}
