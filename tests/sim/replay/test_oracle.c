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
    rp_synth_stats st;
    rp_synth_fit(t, &st);
    CHECK(st.off_path_nodes > 0);
    for (int32_t j = 1; j < st.k; j++) CHECK(st.mean_logp[j] <= st.mean_logp[j - 1]);

    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 3);
    rp_oracle o;
    CHECK(rp_oracle_init(&o, t, &st, rng, 64) == 0);
    size_t bytes = eng_tree_bytes(64, 64 * o.k);
    void *mem = malloc(bytes);
    eng_tree tree;
    CHECK(eng_tree_init(&tree, mem, bytes, 64, 64 * o.k) == ENG_OK);

    const int32_t *ref;
    int32_t L = trc_ref(t, 1, &ref);
    CHECK(L == 40);
    int32_t pos = 10;
    eng_tree_reset(&tree, ref[pos - 1]);
    rp_oracle_begin(&o, 1, pos);

    /* the reference path, 3 levels deeper than recorded (D = 4) */
    int32_t ids[8];
    ids[0] = 0;
    for (int32_t d = 1; d <= 7; d++) ids[d] = eng_tree_add(&tree, ids[d - 1], ref[pos + d - 1], -0.1f);
    /* an off-path child of the root: the draft's second candidate, recorded or not */
    trc_tree tr;
    CHECK(trc_tree_get(t, 1, pos, &tr) == TRC_OK);
    int32_t alt_tok = tr.draft_tok[1] != ref[pos] ? tr.draft_tok[1] : tr.draft_tok[2];
    int32_t alt = eng_tree_add(&tree, 0, alt_tok, -2.0f);
    rp_oracle_map(&o, &tree);
    for (int32_t d = 0; d <= 7; d++) CHECK(o.on_ref[ids[d]] == 1);
    for (int32_t d = 0; d <= 4; d++) CHECK(o.tnode[ids[d]] >= 0);
    for (int32_t d = 5; d <= 7; d++) CHECK(o.tnode[ids[d]] == -1);
    CHECK(o.on_ref[alt] == 0);
    CHECK(o.tnode[alt] == trc_tree_child(&tr, 0, alt_tok));

    /* target tokens: the next reference token along the path at any depth */
    eng_token g[64];
    CHECK(o.target.verify(o.target.ctx, &tree, NULL, g) == ENG_OK);
    for (int32_t d = 0; d <= 7; d++) CHECK_EQ_INT(g[ids[d]], ref[pos + d]);
    if (o.tnode[alt] >= 0)
        CHECK_EQ_INT(g[alt], tr.tgt_tok[(size_t)o.tnode[alt] * tr.k]);
    else
        CHECK_EQ_INT(g[alt], ENG_NO_TOKEN);
    /* pruned nodes get no target token */
    uint8_t keep[64];
    memset(keep, 1, sizeof keep);
    keep[ids[3]] = 0;
    CHECK(o.target.verify(o.target.ctx, &tree, keep, g) == ENG_OK);
    CHECK_EQ_INT(g[ids[3]], ENG_NO_TOKEN);
    CHECK_EQ_INT(g[ids[2]], ref[pos + 2]);

    /* expansions: a recorded node copies the trace, a deep one is synthesised */
    int32_t e1[2] = {ids[1], ids[6]};
    CHECK(o.draft.expand(o.draft.ctx, &tree, e1, 2, ENG_UNIT_NPU) == ENG_OK);
    int32_t n;
    const eng_cand *c = eng_tree_cands(&tree, ids[1], &n);
    CHECK(n == o.k);
    for (int32_t j = 0; j < n; j++) {
        CHECK_EQ_INT(c[j].tok, tr.draft_tok[(size_t)o.tnode[ids[1]] * tr.k + j]);
        CHECK(c[j].logp == tr.draft_logp[(size_t)o.tnode[ids[1]] * tr.k + j]);
    }
    c = eng_tree_cands(&tree, ids[6], &n);
    CHECK(n == o.k);
    /* the per-depth profile of the deepest fitted depth (depth 6 > D) */
    CHECK(st.fitted_depths >= 1);
    int32_t fd = st.fitted_depths - 1;
    const double *prof = st.depth_nodes[fd] > 0 ? st.mean_logp_depth[fd] : st.mean_logp;
    for (int32_t j = 0; j < n; j++) {
        CHECK(fabs(c[j].logp - prof[j]) < 1e-5);
        for (int32_t q = 0; q < j; q++) CHECK(c[q].tok != c[j].tok);
        CHECK(c[j].tok >= 0 && c[j].tok < trc_get_meta(t)->vocab);
    }
    CHECK_EQ_INT(o.expansions, 2);
    CHECK_EQ_INT(o.recorded_expansions, 1);
    CHECK_EQ_INT(o.n_calls, 1);
    CHECK(o.calls[0].unit == ENG_UNIT_NPU && o.calls[0].rows == 2);

    free(mem);
    rp_oracle_free(&o);
    gsl_rng_free(rng);
    trc_free(t);
}

/* With a perfect draft, synthesised reference-path nodes propose the reference. */
static void test_perfect_synthesis(void)
{
    trc_trace *t = make_trace(1.0, 1.0);
    rp_synth_stats st;
    rp_synth_fit(t, &st);
    CHECK(st.deep_top1 == 1.0 && st.deep_inset == 1.0);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    rp_oracle o;
    CHECK(rp_oracle_init(&o, t, &st, rng, 64) == 0);
    size_t bytes = eng_tree_bytes(64, 64 * o.k);
    void *mem = malloc(bytes);
    eng_tree tree;
    eng_tree_init(&tree, mem, bytes, 64, 64 * o.k);
    const int32_t *ref;
    trc_ref(t, 0, &ref);
    eng_tree_reset(&tree, ref[4]);
    rp_oracle_begin(&o, 0, 5);
    int32_t id = 0;
    for (int32_t d = 1; d <= 6; d++) {
        CHECK(o.draft.expand(o.draft.ctx, &tree, &id, 1, ENG_UNIT_CPU) == ENG_OK);
        int32_t n;
        const eng_cand *c = eng_tree_cands(&tree, id, &n);
        CHECK_EQ_INT(c[0].tok, ref[5 + d - 1]);
        id = eng_tree_add(&tree, id, c[0].tok, c[0].logp);
    }
    CHECK_EQ_INT(o.expansions, 6);
    CHECK_EQ_INT(o.recorded_expansions, 5); /* depths 0..4 recorded, 5 synthesised */
    free(mem);
    rp_oracle_free(&o);
    gsl_rng_free(rng);
    trc_free(t);
}

int main(void)
{
    test_mapping_and_targets();
    test_perfect_synthesis();
    return check_done("replay/oracle");
}
