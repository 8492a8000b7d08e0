/*
 * test_oracle.c -- the trace-backed oracles of the replay loop: node mapping,
 * reference-path tracking beyond the recorded depth, recorded vs synthesised
 * expansions, target tokens and the expansion log.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "sim/replay/rp_oracle.h"
#include "synth_fixture.h"

static trc_trace *make_trace(double accept, double coverage)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 2;
    p.output_len = 40;
    p.max_depth = 4;
    p.max_nodes = 12;
    p.n_accept = 1;
    p.accept[0] = accept;
    p.coverage = coverage;
    p.seed = 11;
    return synth_or_exit(&p);
}

static void test_mapping_and_targets(void)
{
    trc_trace *t = make_trace(0.7, 0.9);
    oracle_fixture f;
    oracle_fixture_open(&f, t, 3, 64, 1);
    CHECK(f.st.off_path_nodes > 0);
    for (int32_t j = 1; j < f.st.k; j++)
        CHECK(f.st.mean_logp[j] <= f.st.mean_logp[j - 1]);

    const int32_t *ref;
    int32_t L = trc_ref(t, 1, &ref);
    CHECK(L == 40);
    int32_t pos = 10;
    eng_tree_reset(&f.tree, ref[pos - 1]);
    rp_oracle_begin(&f.o, 1, pos);

    /* the reference path, 3 levels deeper than recorded (D = 4) */
    int32_t ids[8];
    ids[0] = 0;
    for (int32_t d = 1; d <= 7; d++)
        ids[d] = eng_tree_add(&f.tree, ids[d - 1], ref[pos + d - 1], -0.1f);
    /* an off-path child of the root: the draft's second candidate, recorded or not */
    trc_tree tr;
    CHECK(trc_tree_get(t, 1, pos, &tr) == TRC_OK);
    int32_t alt_tok = tr.draft_tok[1] != ref[pos] ? tr.draft_tok[1] : tr.draft_tok[2];
    int32_t alt = eng_tree_add(&f.tree, 0, alt_tok, -2.0f);
    rp_oracle_map(&f.o, &f.tree);
    for (int32_t d = 0; d <= 7; d++)
        CHECK(f.o.on_ref[ids[d]] == 1);
    for (int32_t d = 0; d <= 4; d++)
        CHECK(f.o.tnode[ids[d]] >= 0);
    for (int32_t d = 5; d <= 7; d++)
        CHECK(f.o.tnode[ids[d]] == -1);
    CHECK(f.o.on_ref[alt] == 0);
    CHECK(f.o.tnode[alt] == trc_tree_child(&tr, 0, alt_tok));

    /* target tokens: the next reference token along the path at any depth */
    eng_token g[64];
    CHECK(f.o.target.verify(f.o.target.ctx, &f.tree, NULL, g) == ENG_OK);
    for (int32_t d = 0; d <= 7; d++) CHECK_EQ_INT(g[ids[d]], ref[pos + d]);
    if (f.o.tnode[alt] >= 0)
        CHECK_EQ_INT(g[alt], tr.tgt_tok[(size_t)f.o.tnode[alt] * tr.k]);
    else
        CHECK_EQ_INT(g[alt], ENG_NO_TOKEN);
    /* pruned nodes get no target token */
    uint8_t keep[64];
    memset(keep, 1, sizeof keep);
    keep[ids[3]] = 0;
    CHECK(f.o.target.verify(f.o.target.ctx, &f.tree, keep, g) == ENG_OK);
    CHECK_EQ_INT(g[ids[3]], ENG_NO_TOKEN);
    CHECK_EQ_INT(g[ids[2]], ref[pos + 2]);

    /* expansions: a recorded node copies the trace, a deep one is synthesised */
    int32_t e1[2] = {ids[1], ids[6]};
    CHECK(f.o.draft.expand(f.o.draft.ctx, &f.tree, e1, 2, ENG_UNIT_NPU) == ENG_OK);
    int32_t n;
    const eng_cand *c = eng_tree_cands(&f.tree, ids[1], &n);
    CHECK(n == f.o.k);
    for (int32_t j = 0; j < n; j++) {
        CHECK_EQ_INT(c[j].tok, tr.draft_tok[(size_t)f.o.tnode[ids[1]] * tr.k + j]);
        CHECK(c[j].logp == tr.draft_logp[(size_t)f.o.tnode[ids[1]] * tr.k + j]);
    }
    c = eng_tree_cands(&f.tree, ids[6], &n);
    CHECK(n == f.o.k);
    /* the per-depth profile of the deepest fitted depth (depth 6 > D) */
    CHECK(f.st.fitted_depths >= 1);
    int32_t fd = f.st.fitted_depths - 1;
    const double *prof = f.st.depth_nodes[fd] > 0 ? f.st.mean_logp_depth[fd] : f.st.mean_logp;
    for (int32_t j = 0; j < n; j++) {
        CHECK(fabs(c[j].logp - prof[j]) < 1e-5);
        for (int32_t q = 0; q < j; q++) CHECK(c[q].tok != c[j].tok);
        CHECK(c[j].tok >= 0 && c[j].tok < trc_get_meta(t)->vocab);
    }
    CHECK_EQ_INT(f.o.expansions, 2);
    CHECK_EQ_INT(f.o.recorded_expansions, 1);
    CHECK_EQ_INT(f.o.n_calls, 1);
    CHECK(f.o.calls[0].unit == ENG_UNIT_NPU && f.o.calls[0].rows == 2);

    oracle_fixture_close(&f);
    trc_free(t);
}

/* With a perfect draft, synthesised reference-path nodes propose the reference. */
static void test_perfect_synthesis(void)
{
    trc_trace *t = make_trace(1.0, 1.0);
    oracle_fixture f;
    oracle_fixture_open(&f, t, 0, 64, 1);
    CHECK(f.st.deep_top1 == 1.0 && f.st.deep_inset == 1.0);
    const int32_t *ref;
    trc_ref(t, 0, &ref);
    eng_tree_reset(&f.tree, ref[4]);
    rp_oracle_begin(&f.o, 0, 5);
    int32_t id = 0;
    for (int32_t d = 1; d <= 6; d++) {
        CHECK(f.o.draft.expand(f.o.draft.ctx, &f.tree, &id, 1, ENG_UNIT_CPU) == ENG_OK);
        int32_t n;
        const eng_cand *c = eng_tree_cands(&f.tree, id, &n);
        CHECK_EQ_INT(c[0].tok, ref[5 + d - 1]);
        id = eng_tree_add(&f.tree, id, c[0].tok, c[0].logp);
    }
    CHECK_EQ_INT(f.o.expansions, 6);
    CHECK_EQ_INT(f.o.recorded_expansions, 5); /* depths 0..4 recorded, 5 synthesised */
    oracle_fixture_close(&f);
    trc_free(t);
}

/* The recorded node a tree node's path leads to (-1: none), and whether the
 * path is the reference's, by walking the path from the root. */
static int32_t path_tnode(const trc_tree *tr, const eng_tree *t, int32_t v, const int32_t *ref,
                          int32_t ref_len, int32_t pos, int *on_ref)
{
    int32_t path[64], n = 0;
    for (int32_t u = v; u > 0; u = t->nodes[u].parent)
        path[n++] = u;
    int32_t tn = 0;
    *on_ref = 1;
    for (int32_t q = n - 1; q >= 0; q--) {
        const eng_node *x = &t->nodes[path[q]];
        int32_t at = pos + x->depth - 1;
        *on_ref = *on_ref && at < ref_len && ref[at] == x->tok;
        tn = tn >= 0 ? trc_tree_child(tr, tn, x->tok) : -1;
    }
    return tn;
}

/* Every node's mapping is its path's, and an expanded recorded node holds its
 * recorded row. */
static void check_mapping(const rp_oracle *o, const trc_tree *tr, const eng_tree *t,
                          const int32_t *ref, int32_t ref_len, int32_t pos)
{
    for (int32_t v = 0; v < t->n_nodes; v++) {
        int on_ref;
        int32_t tn = path_tnode(tr, t, v, ref, ref_len, pos, &on_ref);
        CHECK_EQ_INT(o->tnode[v], tn);
        CHECK_EQ_INT(o->on_ref[v], on_ref);
    }
}

/* A policy may compact its tree (ids renumbered) and go on drafting, as
 * Lyanna's fusion does and script policies may: expansions and re-sampled
 * sets after the compaction must map every node by its path, not by the id
 * it had before; so must verification. */
static void test_compaction(void)
{
    trc_trace *t = make_trace(0.7, 0.9);
    oracle_fixture f;
    oracle_fixture_open(&f, t, 5, 64, 4);
    const int32_t *ref;
    int32_t L = trc_ref(t, 1, &ref);
    gsl_rng *pick = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(pick, 9);
    int fails = 0;
    for (int trial = 0; trial < 200; trial++) {
        int32_t pos = 1 + (int32_t)gsl_rng_uniform_int(pick, 30);
        eng_tree_reset(&f.tree, ref[pos - 1]);
        rp_oracle_begin(&f.o, 1, pos);
        trc_tree tr;
        CHECK(trc_tree_get(t, 1, pos, &tr) == TRC_OK);
        for (int round = 0; round < 4; round++) {
            /* expand a few nodes, add children from their candidate sets */
            int32_t ids[4], n = 0;
            for (int q = 0; q < 4; q++) {
                int32_t v = (int32_t)gsl_rng_uniform_int(pick, (unsigned long)f.tree.n_nodes);
                if (f.tree.nodes[v].cand_off == ENG_NO_NODE && (n == 0 || ids[n - 1] != v))
                    ids[n++] = v;
            }
            if (n > 0) {
                /* a forward, or a re-sampling without penalty (served alike) */
                CHECK((round % 2 ? f.o.draft.resample(f.o.draft.ctx, &f.tree, ids, n, 0.0)
                                 : f.o.draft.expand(f.o.draft.ctx, &f.tree, ids, n,
                                                    ENG_UNIT_NPU)) == ENG_OK);
                int before = check_failures;
                check_mapping(&f.o, &tr, &f.tree, ref, L, pos);
                for (int q = 0; q < n; q++) {
                    int32_t cn, on_ref, tn = path_tnode(&tr, &f.tree, ids[q], ref, L, pos, &on_ref);
                    const eng_cand *c = eng_tree_cands(&f.tree, ids[q], &cn);
                    for (int32_t j = 0; tn >= 0 && j < cn; j++)
                        CHECK_EQ_INT(c[j].tok, tr.draft_tok[(size_t)tn * tr.k + j]);
                    for (int32_t j = 0; j < cn && f.tree.n_nodes < 60; j++)
                        if (gsl_rng_uniform(pick) < 0.4)
                            eng_tree_add(&f.tree, ids[q], c[j].tok, c[j].logp);
                }
                fails += check_failures > before;
            }
            /* drop about a third of the nodes (and their subtrees) */
            uint8_t keep[64];
            int32_t map[64];
            for (int32_t v = 0; v < f.tree.n_nodes; v++)
                keep[v] = gsl_rng_uniform(pick) > 0.3;
            eng_tree_compact(&f.tree, keep, map);
            /* the tags are the owner's, but a node is checked before its tag
             * is trusted: scrambled ones cost a fresh mapping, never a wrong one */
            if (trial % 3 == 0)
                for (int32_t v = 0; v < f.tree.n_nodes; v++)
                    if (gsl_rng_uniform(pick) < 0.3)
                        f.tree.nodes[v].user = (uint32_t)gsl_rng_uniform_int(pick, 70);
        }
        /* verification after the last compaction */
        eng_token g[64];
        CHECK(f.o.target.verify(f.o.target.ctx, &f.tree, NULL, g) == ENG_OK);
        check_mapping(&f.o, &tr, &f.tree, ref, L, pos);
    }
    CHECK_EQ_INT(fails, 0);
    gsl_rng_free(pick);
    oracle_fixture_close(&f);
    trc_free(t);
}

/* A tag is trusted only for the node it was given to: after a compaction, a
 * node carrying the tag of another node with its token but another parent
 * (a cousin) is mapped by its own path. */
static void test_borrowed_tag(void)
{
    trc_trace *t = make_trace(0.7, 0.9);
    oracle_fixture f;
    oracle_fixture_open(&f, t, 0, 64, 1);
    const int32_t *ref;
    trc_ref(t, 1, &ref);
    int32_t pos = 10;
    trc_tree tr;
    CHECK(trc_tree_get(t, 1, pos, &tr) == TRC_OK);
    eng_tree_reset(&f.tree, ref[pos - 1]);
    rp_oracle_begin(&f.o, 1, pos);
    /* root -> a (recorded) -> x (a's recorded child); root -> b (unrecorded) -> x */
    int32_t ra = tr.first_child[0], rx = tr.first_child[ra];
    CHECK(ra >= 0 && rx >= 0);
    eng_token tok_a = tr.token[ra], tok_x = tr.token[rx], tok_b = 0;
    while (trc_tree_child(&tr, 0, tok_b) >= 0)
        tok_b++;
    int32_t a = eng_tree_add(&f.tree, 0, tok_a, -0.1f), b = eng_tree_add(&f.tree, 0, tok_b, -3.0f);
    int32_t ax = eng_tree_add(&f.tree, a, tok_x, -0.1f),
            bx = eng_tree_add(&f.tree, b, tok_x, -0.1f);
    CHECK(f.o.draft.expand(f.o.draft.ctx, &f.tree, &a, 1, ENG_UNIT_NPU) == ENG_OK);
    CHECK(f.o.tnode[ax] == rx && f.o.tnode[bx] == -1);
    uint8_t keep[64] = {1, 0, 1, 0, 1};
    int32_t map[64];
    eng_tree_compact(&f.tree, keep, map);
    CHECK(f.tree.n_nodes == 3 && map[bx] == 2);
    f.tree.nodes[2].user = f.tree.nodes[2].user - (uint32_t)(bx - ax); /* a's x's tag */
    eng_token g[64];
    CHECK(f.o.target.verify(f.o.target.ctx, &f.tree, NULL, g) == ENG_OK);
    CHECK_EQ_INT(f.o.tnode[2], -1);
    CHECK(f.o.draft.expand(f.o.draft.ctx, &f.tree, map + bx, 1, ENG_UNIT_NPU) == ENG_OK);
    CHECK_EQ_INT(f.o.tnode[2], -1);
    oracle_fixture_close(&f);
    trc_free(t);
}

int main(void)
{
    test_mapping_and_targets();
    test_perfect_synthesis();
    test_compaction();
    test_borrowed_tag();
    return check_done("replay/oracle");
}
