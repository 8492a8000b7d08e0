/*
 * test_tree.c -- eng_tree: layout and capacity errors, child lookup, leaves and
 * depth, the candidate arena, and reuse across resets.
 */
#include "eng_tree.h"

#include "../check.h"

#include <stdint.h>
#include <string.h>

static _Alignas(8) unsigned char mem[4096];

static void test_init_errors(void)
{
    eng_tree t;
    size_t need = eng_tree_bytes(4, 8);
    CHECK_EQ_INT(need, 4 * sizeof(eng_node) + 8 * sizeof(eng_cand));
    CHECK_EQ_INT(eng_tree_bytes(0, 8), 0);
    CHECK_EQ_INT(eng_tree_bytes(4, -1), 0);
    CHECK_EQ_INT(eng_tree_init(&t, mem, need - 1, 4, 8), ENG_E_ARG);
    CHECK_EQ_INT(eng_tree_init(&t, mem, need, 0, 8), ENG_E_ARG);
    CHECK_EQ_INT(eng_tree_init(&t, mem, need, 4, -1), ENG_E_ARG);
    CHECK_EQ_INT(eng_tree_init(&t, NULL, need, 4, 8), ENG_E_ARG);
    CHECK_EQ_INT(eng_tree_init(NULL, mem, need, 4, 8), ENG_E_ARG);
    CHECK_EQ_INT(eng_tree_init(&t, mem + 4, need, 4, 8), ENG_E_ARG); /* misaligned */
    CHECK_EQ_INT(eng_tree_init(&t, mem, need, 4, 8), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, 1);
    CHECK_EQ_INT(t.n_cands, 0);
    CHECK_EQ_INT(eng_tree_size(&t), 0);
    CHECK_EQ_INT(eng_tree_leaves(&t), 1);
    CHECK_EQ_INT(eng_tree_depth(&t), 0);
    /* the candidate arena follows the nodes inside the caller's block */
    CHECK((unsigned char *)t.cands == mem + 4 * sizeof(eng_node));
    CHECK((unsigned char *)(t.cands + 8) <= mem + need);
    /* a tree with no candidate arena is valid */
    CHECK_EQ_INT(eng_tree_init(&t, mem, eng_tree_bytes(2, 0), 2, 0), ENG_OK);
    CHECK(eng_tree_cands_alloc(&t, 0, 1) == NULL);
}

static void test_add_and_lookup(void)
{
    eng_tree t;
    CHECK_EQ_INT(eng_tree_init(&t, mem, sizeof mem, 6, 16), ENG_OK);
    eng_tree_reset(&t, 42);
    CHECK_EQ_INT(t.nodes[0].tok, 42);
    CHECK_EQ_INT(t.nodes[0].parent, ENG_NO_NODE);
    CHECK_EQ_INT(t.nodes[0].depth, 0);

    int32_t a = eng_tree_add(&t, 0, 10, -0.5f);
    int32_t b = eng_tree_add(&t, 0, 20, -1.0f);
    int32_t c = eng_tree_add(&t, a, 11, -0.25f);
    int32_t d = eng_tree_add(&t, c, 12, -2.0f);
    int32_t e = eng_tree_add(&t, 0, 30, -3.0f);
    CHECK_EQ_INT(a, 1);
    CHECK_EQ_INT(b, 2);
    CHECK_EQ_INT(c, 3);
    CHECK_EQ_INT(d, 4);
    CHECK_EQ_INT(e, 5);
    /* capacity reached: ENG_E_FULL, tree unchanged */
    CHECK_EQ_INT(eng_tree_add(&t, 0, 40, 0.0f), ENG_E_FULL);
    CHECK_EQ_INT(t.n_nodes, 6);
    /* invalid parents are argument errors */
    CHECK_EQ_INT(eng_tree_add(&t, 6, 40, 0.0f), ENG_E_ARG);
    CHECK_EQ_INT(eng_tree_add(&t, -1, 40, 0.0f), ENG_E_ARG);

    CHECK_EQ_INT(eng_tree_child(&t, 0, 10), a);
    CHECK_EQ_INT(eng_tree_child(&t, 0, 20), b);
    CHECK_EQ_INT(eng_tree_child(&t, 0, 30), e);
    CHECK_EQ_INT(eng_tree_child(&t, 0, 11), ENG_NO_NODE); /* grandchild, not child */
    CHECK_EQ_INT(eng_tree_child(&t, a, 11), c);
    CHECK_EQ_INT(eng_tree_child(&t, c, 12), d);
    CHECK_EQ_INT(eng_tree_child(&t, d, 12), ENG_NO_NODE);
    CHECK_EQ_INT(eng_tree_child(&t, 17, 12), ENG_NO_NODE);

    /* children in insertion order */
    CHECK_EQ_INT(t.nodes[0].first_child, a);
    CHECK_EQ_INT(t.nodes[a].next_sibling, b);
    CHECK_EQ_INT(t.nodes[b].next_sibling, e);
    CHECK_EQ_INT(t.nodes[e].next_sibling, ENG_NO_NODE);
    CHECK_EQ_INT(t.nodes[0].last_child, e);

    CHECK_EQ_INT(t.nodes[d].depth, 3);
    CHECK(t.nodes[d].cum_logq == -0.5f + -0.25f + -2.0f);
    CHECK(t.nodes[c].logq == -0.25f);
    CHECK_EQ_INT(eng_tree_size(&t), 5);
    CHECK_EQ_INT(eng_tree_leaves(&t), 3); /* b, d, e */
    CHECK_EQ_INT(eng_tree_depth(&t), 3);

    /* reset reuses the same memory */
    eng_tree_reset(&t, 7);
    CHECK_EQ_INT(t.n_nodes, 1);
    CHECK_EQ_INT(t.nodes[0].tok, 7);
    CHECK_EQ_INT(t.nodes[0].first_child, ENG_NO_NODE);
    CHECK_EQ_INT(eng_tree_child(&t, 0, 10), ENG_NO_NODE);
    CHECK_EQ_INT(eng_tree_leaves(&t), 1);
}

static void test_cands(void)
{
    eng_tree t;
    CHECK_EQ_INT(eng_tree_init(&t, mem, sizeof mem, 4, 5), ENG_OK);
    eng_tree_reset(&t, 1);
    int32_t n = -1;
    CHECK(eng_tree_cands(&t, 0, &n) == NULL);
    CHECK_EQ_INT(n, 0);

    eng_cand *c = eng_tree_cands_alloc(&t, 0, 3);
    CHECK(c != NULL);
    if (c) {
        for (int32_t j = 0; j < 3; j++) {
            CHECK_EQ_INT(c[j].tok, 0); /* slots come zeroed */
            c[j].tok = 100 + j;
            c[j].logp = -(float)j;
        }
    }
    int32_t a = eng_tree_add(&t, 0, 100, 0.0f);
    eng_cand *ca = eng_tree_cands_alloc(&t, a, 2);
    CHECK(ca != NULL);
    if (ca) {
        ca[0].tok = 200;
        ca[1].tok = 201;
    }
    CHECK_EQ_INT(t.n_cands, 5);
    /* arena full; bad ids and sizes are refused */
    CHECK(eng_tree_cands_alloc(&t, a, 1) == NULL);
    CHECK(eng_tree_cands_alloc(&t, 3, 1) == NULL);
    CHECK(eng_tree_cands_alloc(&t, 0, 0) == NULL);
    CHECK_EQ_INT(t.n_cands, 5);

    const eng_cand *r = eng_tree_cands(&t, 0, &n);
    CHECK_EQ_INT(n, 3);
    CHECK(r && r[0].tok == 100 && r[2].tok == 102 && r[2].logp == -2.0f);
    r = eng_tree_cands(&t, a, &n);
    CHECK_EQ_INT(n, 2);
    CHECK(r && r[0].tok == 200 && r[1].tok == 201);
    CHECK(eng_tree_cands(&t, 9, &n) == NULL);
    CHECK_EQ_INT(n, 0);

    /* reset frees the arena */
    eng_tree_reset(&t, 1);
    CHECK_EQ_INT(t.n_cands, 0);
    CHECK(eng_tree_cands_alloc(&t, 0, 5) != NULL);
    CHECK(eng_tree_cands_alloc(&t, 0, 1) == NULL);

    /* reserve: the same bookkeeping and refusals, the slots as the arena
     * held them (a set written before the reset shows through) */
    eng_tree_reset(&t, 1);
    eng_cand *w = eng_tree_cands_alloc(&t, 0, 2);
    CHECK(w != NULL);
    if (w) w[1].tok = 77;
    eng_tree_reset(&t, 1);
    eng_cand *rs = eng_tree_cands_reserve(&t, 0, 2);
    CHECK(rs != NULL && rs == w && t.n_cands == 2);
    if (rs) CHECK_EQ_INT(rs[1].tok, 77);
    int32_t rn = 0;
    CHECK(eng_tree_cands(&t, 0, &rn) == rs && rn == 2);
    CHECK(eng_tree_cands_reserve(&t, 0, 4) == NULL); /* 3 slots left */
    CHECK(eng_tree_cands_reserve(&t, 0, 0) == NULL);
    CHECK(eng_tree_cands_reserve(&t, 3, 1) == NULL);
    CHECK_EQ_INT(t.n_cands, 2);
}

static void test_chain_full_capacity(void)
{
    /* a chain that exactly fills the node capacity */
    enum { CAP = 64 };
    eng_tree t;
    CHECK_EQ_INT(eng_tree_init(&t, mem, sizeof mem, CAP, 0), ENG_OK);
    eng_tree_reset(&t, 0);
    int32_t tip = 0;
    for (int32_t i = 1; i < CAP; i++)
        tip = eng_tree_add(&t, tip, i, -0.1f);
    CHECK_EQ_INT(tip, CAP - 1);
    CHECK_EQ_INT(eng_tree_add(&t, tip, 0, 0.0f), ENG_E_FULL);
    CHECK_EQ_INT(eng_tree_depth(&t), CAP - 1);
    CHECK_EQ_INT(eng_tree_leaves(&t), 1);
    CHECK_EQ_INT(eng_tree_size(&t), CAP - 1);
}

int main(void)
{
    test_init_errors();
    test_add_and_lookup();
    test_cands();
    test_chain_full_capacity();
    return check_done("test_tree");
}
