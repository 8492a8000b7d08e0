/*
 * test_accept.c -- greedy acceptance: hand-built cases (mismatch, unknown target
 * tokens, cap, keep mask pruning the child the target wanted) and a differential
 * test against a naive reference walk over thousands of random trees.
 *
 * The reference finds children by scanning the whole node array for parent == u
 * (instead of the sibling lists) and applies the cap by truncating an unbounded
 * walk, so it shares no code path with eng_accept_greedy.
 */
#include "eng_accept.h"

#include "../check.h"

#include <stdint.h>
#include <string.h>

enum { MAXN = 96 };

static _Alignas(8) unsigned char mem[MAXN * sizeof(eng_node) + 8];

/* root 5 -> {1:10, 2:20}; 1 -> {3:11}; 3 -> {4:12}; 2 -> {5:21} */
static void build_fixture(eng_tree *t)
{
    eng_tree_init(t, mem, sizeof mem, MAXN, 0);
    eng_tree_reset(t, 5);
    eng_tree_add(t, 0, 10, -0.1f);
    eng_tree_add(t, 0, 20, -2.0f);
    eng_tree_add(t, 1, 11, -0.2f);
    eng_tree_add(t, 3, 12, -0.3f);
    eng_tree_add(t, 2, 21, -0.3f);
}

static void test_hand_built(void)
{
    eng_tree t;
    build_fixture(&t);
    eng_token emit[8];
    int32_t path[8];

    /* full path accepted, bonus at the deepest node */
    eng_token g[6] = {10, 11, 99, 12, 13, 98};
    eng_outcome o = eng_accept_greedy(&t, g, NULL, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 3);
    CHECK_EQ_INT(o.last_node, 4);
    CHECK_EQ_INT(o.bonus, 13);
    CHECK_EQ_INT(o.emitted, 4);
    CHECK(path[0] == 1 && path[1] == 3 && path[2] == 4);
    CHECK(emit[0] == 10 && emit[1] == 11 && emit[2] == 12 && emit[3] == 13);

    /* second branch: target picks 20 then 21 */
    eng_token g2[6] = {20, 0, 21, 0, 0, 22};
    o = eng_accept_greedy(&t, g2, NULL, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 2);
    CHECK_EQ_INT(o.last_node, 5);
    CHECK_EQ_INT(o.emitted, 3);
    CHECK(path[0] == 2 && path[1] == 5);
    CHECK(emit[0] == 20 && emit[1] == 21 && emit[2] == 22);

    /* mismatch at the root: only the bonus */
    eng_token g3[6] = {77, 11, 0, 12, 13, 0};
    o = eng_accept_greedy(&t, g3, NULL, NULL, emit, 8);
    CHECK_EQ_INT(o.accepted, 0);
    CHECK_EQ_INT(o.last_node, 0);
    CHECK_EQ_INT(o.bonus, 77);
    CHECK_EQ_INT(o.emitted, 1);
    CHECK_EQ_INT(emit[0], 77);

    /* target token unknown at the root: nothing emitted */
    eng_token g4[6] = {ENG_NO_TOKEN, 11, 0, 12, 13, 0};
    o = eng_accept_greedy(&t, g4, NULL, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 0);
    CHECK_EQ_INT(o.bonus, ENG_NO_TOKEN);
    CHECK_EQ_INT(o.emitted, 0);

    /* unknown at an accepted node: drafts emitted, no bonus */
    eng_token g5[6] = {10, 11, 0, ENG_NO_TOKEN, 13, 0};
    o = eng_accept_greedy(&t, g5, NULL, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 2);
    CHECK_EQ_INT(o.last_node, 3);
    CHECK_EQ_INT(o.bonus, ENG_NO_TOKEN);
    CHECK_EQ_INT(o.emitted, 2);

    /* keep mask prunes the child the target wanted: walk stops at its parent */
    uint8_t keep[6] = {1, 1, 1, 0, 0, 1};
    eng_token g6[6] = {10, 11, 0, ENG_NO_TOKEN, ENG_NO_TOKEN, 0};
    o = eng_accept_greedy(&t, g6, keep, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 1);
    CHECK_EQ_INT(o.last_node, 1);
    CHECK_EQ_INT(o.bonus, 11);
    CHECK_EQ_INT(o.emitted, 2);
    CHECK(emit[0] == 10 && emit[1] == 11);
    /* even if the pruned node carried a target token, it is not accepted */
    o = eng_accept_greedy(&t, g, keep, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 1);
    CHECK_EQ_INT(o.bonus, 11);
    /* the root is verified whatever keep[0] says */
    uint8_t keep0[6] = {0, 1, 1, 1, 1, 1};
    o = eng_accept_greedy(&t, g, keep0, path, emit, 8);
    CHECK_EQ_INT(o.accepted, 3);

    /* cap: at most cap tokens, bonus always fits */
    o = eng_accept_greedy(&t, g, NULL, path, emit, 1);
    CHECK_EQ_INT(o.accepted, 0);
    CHECK_EQ_INT(o.emitted, 1);
    CHECK_EQ_INT(o.bonus, 10);
    CHECK_EQ_INT(emit[0], 10);
    for (int i = 0; i < 8; i++)
        emit[i] = 7777, path[i] = 7777;
    o = eng_accept_greedy(&t, g, NULL, path, emit, 3);
    CHECK(emit[3] == 7777 && path[2] == 7777); /* nothing written past the cap */
    CHECK_EQ_INT(o.accepted, 2);
    CHECK_EQ_INT(o.last_node, 3);
    CHECK_EQ_INT(o.bonus, 12);
    CHECK_EQ_INT(o.emitted, 3);
    CHECK(emit[0] == 10 && emit[1] == 11 && emit[2] == 12);
    /* invalid cap: nothing emitted */
    o = eng_accept_greedy(&t, g, NULL, path, emit, 0);
    CHECK_EQ_INT(o.emitted, 0);

    /* root-only tree (a Flash-AR cycle) */
    eng_tree_reset(&t, 5);
    eng_token g7[1] = {31};
    o = eng_accept_greedy(&t, g7, NULL, NULL, emit, 4);
    CHECK_EQ_INT(o.accepted, 0);
    CHECK_EQ_INT(o.emitted, 1);
    CHECK_EQ_INT(emit[0], 31);
}

/* ---- differential test ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static eng_outcome reference(int32_t n, const int32_t *parent, const eng_token *tok,
                             const eng_token *g, const uint8_t *keep, int32_t *path,
                             eng_token *emit, int32_t cap)
{
    int32_t full_path[MAXN];
    int32_t depth = 0, u = 0;
    for (;;) {
        if (g[u] == ENG_NO_TOKEN) break;
        int32_t next = -1;
        for (int32_t v = 1; v < n && next < 0; v++)
            if (parent[v] == u && tok[v] == g[u] && (!keep || keep[v])) next = v;
        if (next < 0) break;
        full_path[depth++] = next;
        u = next;
    }
    if (depth > cap - 1) depth = cap - 1;
    eng_outcome o;
    o.accepted = depth;
    o.last_node = depth ? full_path[depth - 1] : 0;
    o.bonus = g[o.last_node];
    for (int32_t i = 0; i < depth; i++) {
        path[i] = full_path[i];
        emit[i] = tok[full_path[i]];
    }
    o.emitted = depth;
    if (o.bonus != ENG_NO_TOKEN) emit[o.emitted++] = o.bonus;
    return o;
}

static void test_differential(void)
{
    enum { TRIALS = 20000 };
    eng_tree t;
    int32_t parent[MAXN];
    eng_token tok[MAXN], g[MAXN];
    uint8_t keep[MAXN];
    int mismatches = 0;
    int64_t total_accepted = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
        int32_t n = 1 + (int32_t)rnd(MAXN);
        uint32_t vocab = 2 + rnd(6);  /* small vocab: many matches, some duplicate siblings */
        uint32_t chain_bias = rnd(4); /* 0: bushy, 3: mostly chains */
        CHECK_EQ_INT(eng_tree_init(&t, mem, sizeof mem, MAXN, 0), ENG_OK);
        eng_tree_reset(&t, 0);
        parent[0] = -1;
        tok[0] = 0;
        for (int32_t v = 1; v < n; v++) {
            int32_t p = rnd(4) < chain_bias ? v - 1 : (int32_t)rnd((uint32_t)v);
            tok[v] = (eng_token)rnd(vocab);
            parent[v] = p;
            if (eng_tree_add(&t, p, tok[v], -1.0f) != v) mismatches++;
        }
        for (int32_t v = 0; v < n; v++) {
            g[v] = rnd(16) == 0 ? ENG_NO_TOKEN : (eng_token)rnd(vocab);
            keep[v] = rnd(8) != 0;
        }
        const uint8_t *km = rnd(2) ? keep : NULL;
        int32_t cap = 1 + (int32_t)rnd(12);
        if (rnd(4) == 0) cap = MAXN + 1;

        int32_t path_a[MAXN + 1], path_b[MAXN + 1];
        eng_token emit_a[MAXN + 1], emit_b[MAXN + 1];
        eng_outcome a = eng_accept_greedy(&t, g, km, path_a, emit_a, cap);
        eng_outcome b = reference(n, parent, tok, g, km, path_b, emit_b, cap);
        total_accepted += a.accepted;
        int same = a.accepted == b.accepted && a.last_node == b.last_node && a.bonus == b.bonus &&
                   a.emitted == b.emitted && a.emitted <= cap &&
                   memcmp(path_a, path_b, sizeof(int32_t) * (size_t)a.accepted) == 0 &&
                   memcmp(emit_a, emit_b, sizeof(eng_token) * (size_t)a.emitted) == 0;
        if (!same) {
            if (mismatches < 5)
                fprintf(stderr, "trial %d: n=%d cap=%d accepted %d vs %d, emitted %d vs %d\n",
                        trial, n, cap, a.accepted, b.accepted, a.emitted, b.emitted);
            mismatches++;
        }
    }
    CHECK_EQ_INT(mismatches, 0);
    /* the random trees must exercise real walks, not just root mismatches */
    CHECK(total_accepted > TRIALS / 2);
}

int main(void)
{
    test_hand_built();
    test_differential();
    return check_done("test_accept");
}
