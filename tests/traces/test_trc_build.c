/*
 * test_trc_build.c -- the builder, the shared validation routine and the
 * accessors.  Every validation rule of traces/README.md has a case here that
 * breaks it on the hand-made fixture (trc_fixture.h) and checks the status code
 * and that the one-line message names the dataset or attribute.  Rules that the
 * builder cannot break (offsets, stored depths) are broken white-box on a built
 * trace through trc_impl.h and re-validated with trci_validate.
 */
#include "trc.h"
#include "trc_impl.h"

#include "trc_check.h"
#include "trc_fixture.h"

#include <math.h>
#include <stdlib.h>

static void expect(const fix *f, int code, const char *ds, const char *what)
{
    trc_trace *t = (trc_trace *)1;
    trc_err err;
    int rc = fix_build(f, "unit", &t, &err);
    CHECK_EQ_INT(rc, code);
    CHECK(t == NULL);
    CHECK_ERR(err, code, ds, what);
    CHECK(strncmp(err.msg, "unit: ", 6) == 0);
    trc_free(t);
}

static void test_valid(fix *f)
{
    fix_init(f, 3, 1);
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    if (!t) return;
    const trc_meta *m = trc_get_meta(t);
    CHECK_EQ_INT(m->version, TRC_VERSION);
    CHECK_EQ_INT(m->n_prompts, 1);
    CHECK_EQ_INT(m->n_trees, 3);
    CHECK_EQ_INT(m->n_nodes, 4 + 4 + 3);
    CHECK(strcmp(m->target, "unit-target") == 0);
    CHECK(trc_bytes(t) > 11 * 3 * 16);
    const int32_t *tok;
    CHECK_EQ_INT(trc_prompt(t, 0, &tok), 2);
    CHECK_EQ_INT(tok[1], 6);
    CHECK_EQ_INT(trc_ref(t, 0, &tok), 3);
    CHECK_EQ_INT(tok[2], 12);
    CHECK_EQ_INT(trc_prompt(t, 1, &tok), 0);
    CHECK(tok == NULL);
    CHECK_EQ_INT(trc_ref(t, -1, NULL), 0);

    trc_tree tr;
    CHECK_EQ_INT(trc_tree_get(t, 0, 3, &tr), TRC_E_ARG);
    CHECK_EQ_INT(trc_tree_get(t, 1, 0, &tr), TRC_E_ARG);
    CHECK_EQ_INT(trc_tree_get(t, 0, -1, &tr), TRC_E_ARG);
    CHECK_EQ_INT(trc_tree_get(t, 0, 0, &tr), TRC_OK);
    CHECK_EQ_INT(tr.n, 4);
    CHECK_EQ_INT(tr.k, 3);
    CHECK_EQ_INT(tr.n_exit, 1);
    CHECK_EQ_INT(tr.parent[0], -1);
    CHECK_EQ_INT(tr.depth[2], 2);
    CHECK_EQ_INT(tr.first_child[0], 1); /* children in index order: 1 then 3 */
    CHECK_EQ_INT(tr.next_sibling[1], 3);
    CHECK_EQ_INT(tr.next_sibling[3], -1);
    CHECK_EQ_INT(tr.first_child[1], 2);
    CHECK_EQ_INT(tr.first_child[2], -1);
    CHECK_EQ_INT(trc_tree_child(&tr, 0, 10), 1);
    CHECK_EQ_INT(trc_tree_child(&tr, 0, 40), 3);
    CHECK_EQ_INT(trc_tree_child(&tr, 0, 11), -1);
    CHECK_EQ_INT(trc_tree_child(&tr, 1, 11), 2);
    CHECK_EQ_INT(trc_tree_child(&tr, 9, 11), -1);
    CHECK_EQ_INT(tr.tgt_tok[1 * 3], 11);
    CHECK(tr.exit_score[3 * 3 + 2] == 0.5f - 0.2f);
    CHECK_EQ_INT(trc_tree_get(t, 0, 2, &tr), TRC_OK);
    CHECK_EQ_INT(tr.n, 3);
    CHECK_EQ_INT(tr.token[0], 11);

    /* the same content gives the same checksum; any change gives another */
    trc_trace *t2 = NULL;
    CHECK_EQ_INT(fix_build(f, "again", &t2, &err), TRC_OK);
    if (t2) CHECK(trc_checksum(t) == trc_checksum(t2));
    trc_free(t2);
    f->dlp[1][2] = -2.5f;
    CHECK_EQ_INT(fix_build(f, "changed", &t2, &err), TRC_OK);
    if (t2) CHECK(trc_checksum(t) != trc_checksum(t2));
    trc_free(t2);
    fix_init(f, 3, 1);
    strcpy(f->meta.draft, "other-draft");
    CHECK_EQ_INT(fix_build(f, "renamed", &t2, &err), TRC_OK);
    if (t2) CHECK(trc_checksum(t) != trc_checksum(t2));
    trc_free(t2);
    trc_free(t);
    trc_free(NULL);
}

static void test_tolerances(fix *f)
{
    trc_trace *t = NULL;
    trc_err err;
    fix_init(f, 3, 1);
    f->dlp[0][0] = 5e-5f;                /* rounding above 0 is tolerated */
    f->dlp[0][1] = f->dlp[0][2] = -3.0f; /* ties are non-increasing */
    f->tlp[2][0] = 0.0f;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    trc_free(t);
    /* empty prompt: the root token at pos 0 is free */
    fix_init(f, 3, 1);
    f->prompt_len = 0;
    f->token[0][0] = 77;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    trc_free(t);
    /* no exit layers */
    fix_init(f, 3, 1);
    f->meta.n_exit = 0;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    if (t) {
        trc_tree tr;
        trc_tree_get(t, 0, 0, &tr);
        CHECK(tr.exit_score == NULL);
    }
    trc_free(t);
}

static void test_header_rules(fix *f)
{
    fix_init(f, 3, 1);
    f->meta.vocab = 0;
    expect(f, TRC_E_DATA, "@vocab", "must be");
    fix_init(f, 3, 1);
    f->meta.vocab = 2; /* k = 3 > vocab */
    expect(f, TRC_E_DATA, "@k", "got 3");
    fix_init(f, 3, 1);
    f->meta.max_depth = 0;
    expect(f, TRC_E_DATA, "@max_depth", "got 0");
    fix_init(f, 3, 1);
    f->meta.max_depth = TRC_MAX_DEPTH + 1;
    expect(f, TRC_E_DATA, "@max_depth", "got 65");
    fix_init(f, 3, 1);
    f->meta.max_nodes = 2;
    expect(f, TRC_E_DATA, "@max_nodes", "got 2");
    fix_init(f, 3, 1);
    f->meta.target_layers = 0;
    expect(f, TRC_E_DATA, "@target_layers", "got 0");
    fix_init(f, 3, 1);
    f->meta.exit_layers[0] = 4; /* = target_layers */
    expect(f, TRC_E_DATA, "@exit_layers", "not in [1, target_layers 4)");
    fix_init(f, 3, 1);
    f->meta.exit_layers[0] = 0;
    expect(f, TRC_E_DATA, "@exit_layers", "layer 0");
    fix_init(f, 3, 1);
    f->meta.target_layers = 10;
    f->meta.n_exit = 2;
    f->meta.exit_layers[0] = 5;
    f->meta.exit_layers[1] = 5;
    for (int t = 0; t < FIX_TREES; t++) /* exit scores for two layers */
        memcpy(f->ex[t] + f->n[t] * 3, f->ex[t], sizeof(float) * (size_t)f->n[t] * 3);
    expect(f, TRC_E_DATA, "@exit_layers", "ascending");
}

static void test_structure_rules(fix *f)
{
    fix_init(f, 3, 1);
    f->parent[1][0] = 0;
    expect(f, TRC_E_DATA, "/nodes/parent", "root parent");
    fix_init(f, 3, 1);
    f->parent[0][2] = 2; /* parent[i] must be < i */
    expect(f, TRC_E_DATA, "/nodes/parent", "not in [0, 2)");
    fix_init(f, 3, 1);
    f->parent[0][3] = -1;
    expect(f, TRC_E_DATA, "/nodes/parent", "not in [0, 3)");
    fix_init(f, 3, 1);
    f->parent[0][3] = 2; /* off-path node at depth 3 > D = 2 */
    expect(f, TRC_E_DATA, "/nodes/depth", "exceeds max_depth 2");
    fix_init(f, 3, 3); /* tree 0: 3 + 3 nodes = M, fine; one more is too many */
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    trc_free(t);
    fix_init(f, 3, 4);
    expect(f, TRC_E_DATA, "/trees/node_offset", "7 nodes");
    fix_init(f, 3, 1);
    f->token[0][3] = 10; /* second child of the root with token 10 */
    expect(f, TRC_E_DATA, "/nodes/token", "two children carry token 10");
    fix_init(f, 3, 1);
    f->meta.max_nodes = 40; /* > 16 children: the sorting duplicate check */
    fix_init(f, 3, 20);
    f->meta.max_nodes = 40;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    trc_free(t);
    f->token[0][3 + 17] = 43;
    expect(f, TRC_E_DATA, "/nodes/token", "two children carry token 43");
}

static void test_reference_rules(fix *f)
{
    fix_init(f, 3, 1);
    f->token[0][2] = 13; /* depth-2 reference node carries the wrong token */
    expect(f, TRC_E_DATA, "/nodes/token", "reference path missing");
    fix_init(f, 3, 1);
    f->token[1][1] = 40; /* tree at pos 1 lacks its depth-1 reference child */
    f->token[1][3] = 41;
    expect(f, TRC_E_DATA, "/nodes/token", "reference token 11 (depth 1");
    fix_init(f, 3, 1);
    f->token[1][0] = 9;
    expect(f, TRC_E_DATA, "/nodes/token", "previous reference token");
    fix_init(f, 3, 1);
    f->token[0][0] = 5;
    expect(f, TRC_E_DATA, "/nodes/token", "last prompt token");
    fix_init(f, 3, 1);
    f->ttok[0][1 * 3] = 13; /* g(depth-1 node of pos 0) must be ref[1] = 11 */
    expect(f, TRC_E_DATA, "/nodes/target_tok", "reference token 11");
    fix_init(f, 3, 1);
    f->ttok[2][0] = 11; /* root of pos 2 must predict ref[2] = 12 */
    expect(f, TRC_E_DATA, "/nodes/target_tok", "depth 0");
    /* the end of the reference: no constraint past L */
    fix_init(f, 3, 1);
    f->ttok[2][1 * 3] = 55;
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    trc_free(t);
}

static void test_value_rules(fix *f)
{
    fix_init(f, 3, 1);
    f->prompt[0] = 100;
    expect(f, TRC_E_DATA, "/prompts/tokens", "token 100");
    fix_init(f, 3, 1);
    f->ref[1] = -1;
    expect(f, TRC_E_DATA, "/reference/tokens", "token -1");
    fix_init(f, 3, 1);
    f->token[2][2] = 100;
    expect(f, TRC_E_DATA, "/nodes/token", "token 100 out of range");
    fix_init(f, 3, 1);
    f->token[2][2] = -5;
    expect(f, TRC_E_DATA, "/nodes/token", "token -5");
    fix_init(f, 3, 1);
    f->dtok[1][4] = 100;
    expect(f, TRC_E_DATA, "/nodes/draft_tok", "candidate 1");
    fix_init(f, 3, 1);
    f->ttok[1][5] = 1000;
    expect(f, TRC_E_DATA, "/nodes/target_tok", "token 1000");
    fix_init(f, 3, 1);
    f->dtok[0][2] = 60;
    expect(f, TRC_E_DATA, "/nodes/draft_tok", "listed twice");
    fix_init(f, 3, 1);
    f->ttok[0][4] = 11; /* node 1: g = 11 then 11 again */
    expect(f, TRC_E_DATA, "/nodes/target_tok", "listed twice");
    fix_init(f, 20, 1); /* K > 16: the sorting duplicate check */
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    trc_free(t);
    f->dtok[0][19] = 61;
    expect(f, TRC_E_DATA, "/nodes/draft_tok", "token 61 listed twice");

    fix_init(f, 3, 1);
    f->dlp[0][4] = NAN;
    expect(f, TRC_E_DATA, "/nodes/draft_logp", "NaN at candidate 1");
    fix_init(f, 3, 1);
    f->dlp[0][0] = -INFINITY;
    expect(f, TRC_E_DATA, "/nodes/draft_logp", "infinite");
    fix_init(f, 3, 1);
    f->dlp[0][0] = 0.01f;
    expect(f, TRC_E_DATA, "/nodes/draft_logp", "> 0");
    fix_init(f, 3, 1);
    f->dlp[2][5] = -0.5f; /* candidate 2 above candidate 1 */
    expect(f, TRC_E_DATA, "/nodes/draft_logp", "not sorted");
    fix_init(f, 3, 1);
    f->tlp[1][3] = NAN;
    expect(f, TRC_E_DATA, "/nodes/target_logp", "NaN");
    fix_init(f, 3, 1);
    f->tlp[1][2] = 0.0f;
    expect(f, TRC_E_DATA, "/nodes/target_logp", "not sorted");
    fix_init(f, 3, 1);
    f->ex[2][7] = NAN;
    expect(f, TRC_E_DATA, "/nodes/exit_score", "NaN score at exit 0, candidate 1");
    fix_init(f, 3, 1);
    f->ex[0][0] = INFINITY;
    expect(f, TRC_E_DATA, "/nodes/exit_score", "infinite");
}

/* Offsets and stored depths come from files only: break them on a built trace. */
static void test_whitebox(fix *f)
{
    struct {
        int which;
        int64_t delta;
        const char *ds, *what;
    } cases[] = {
        {0, 1, "/prompts/offset", "first offset"},
        {1, -3, "/prompts/offset", "decreases"},
        {2, 1, "/prompts/offset", "final offset"},
        {3, 1, "/reference/offset", "final offset"},
        {4, -3, "/reference/offset", "has 0 reference tokens"},
        {5, -1, "/trees/node_offset", "final offset"},
        {6, -5, "/trees/node_offset", "decreases"},
        {7, 1, "/nodes/depth", "expected parent's depth + 1"},
        {8, 1, "/nodes/depth", "root depth"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fix_init(f, 3, 1);
        trc_trace *t = NULL;
        trc_err err;
        CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
        if (!t) continue;
        switch (cases[c].which) {
        case 0:
            t->prompt_off[0] += cases[c].delta;
            break;
        case 1:
            t->prompt_off[1] += cases[c].delta;
            break;
        case 2:
            t->prompt_off[1] += cases[c].delta;
            break;
        case 3:
            t->ref_off[1] += cases[c].delta;
            break;
        case 4:
            t->ref_off[1] += cases[c].delta;
            break;
        case 5:
            t->node_off[3] += cases[c].delta;
            break;
        case 6:
            t->node_off[2] += cases[c].delta;
            break;
        case 7:
            t->depth[2] = (uint8_t)(t->depth[2] + cases[c].delta);
            break;
        case 8:
            t->depth[4] = (uint8_t)(t->depth[4] + cases[c].delta);
            break;
        }
        int rc = trci_validate(t, "unit", &err);
        CHECK_EQ_INT(rc, TRC_E_DATA);
        CHECK_ERR(err, TRC_E_DATA, cases[c].ds, cases[c].what);
        trc_free(t);
    }
}

/* A forward parent with consistent depths: node 3 of tree 0 (an off-path
 * child of the root) re-hung under node 4, its later sibling, at depth 2.
 * Every other rule holds (depths, tokens, sizes); only "a parent comes before
 * its child" refuses it. */
static void test_forward_parent(fix *f)
{
    fix_init(f, 3, 3);
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(fix_build(f, "unit", &t, &err), TRC_OK);
    if (!t) return;
    CHECK(t->parent[3] == 0 && t->parent[4] == 0 && t->depth[4] == 1);
    t->parent[3] = 4;
    t->depth[3] = 2;
    CHECK_EQ_INT(trci_validate(t, "unit", &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, "/nodes/parent", "parent 4 not in [0, 3)");
    trc_free(t);
}

static void test_builder_misuse(fix *f)
{
    fix_init(f, 3, 1);
    trc_trace *t = (trc_trace *)1;
    trc_err err;
    trc_meta bad = f->meta;
    bad.k = 0;
    CHECK(trc_builder_new(&bad) == NULL);
    bad.k = TRC_MAX_K + 1;
    CHECK(trc_builder_new(&bad) == NULL);
    bad = f->meta;
    bad.n_exit = TRC_MAX_EXIT + 1;
    CHECK(trc_builder_new(&bad) == NULL);
    trc_builder_free(NULL);

    trc_builder *b = trc_builder_new(&f->meta);
    CHECK_EQ_INT(trc_builder_add_tree(b, f->n[0], f->parent[0], f->token[0], f->dtok[0], f->dlp[0],
                                      f->ttok[0], f->tlp[0], f->ex[0]),
                 TRC_E_ARG);
    CHECK_EQ_INT(trc_builder_finish(b, "unit", &t, &err), TRC_E_ARG);
    CHECK(t == NULL);
    CHECK_ERR(err, TRC_E_ARG, "unit: builder", "without a prompt");

    b = trc_builder_new(&f->meta);
    CHECK_EQ_INT(trc_builder_add_prompt(b, f->prompt, 2, f->ref, 3), TRC_OK);
    CHECK_EQ_INT(trc_builder_add_tree(b, f->n[0], f->parent[0], f->token[0], f->dtok[0], f->dlp[0],
                                      f->ttok[0], f->tlp[0], f->ex[0]),
                 TRC_OK);
    CHECK_EQ_INT(trc_builder_finish(b, "unit", &t, &err), TRC_E_ARG);
    CHECK_ERR(err, TRC_E_ARG, "unit: builder", "owes 2 trees");

    b = trc_builder_new(&f->meta);
    CHECK_EQ_INT(trc_builder_add_prompt(b, f->prompt, 2, f->ref, 0), TRC_E_ARG);
    CHECK_EQ_INT(trc_builder_finish(b, "unit", &t, &err), TRC_E_ARG);
    CHECK_ERR(err, TRC_E_ARG, "unit: builder", "add_prompt");

    b = trc_builder_new(&f->meta);
    trc_builder_add_prompt(b, f->prompt, 2, f->ref, 3);
    CHECK_EQ_INT(trc_builder_add_prompt(b, f->prompt, 2, f->ref, 3), TRC_E_ARG);
    CHECK_EQ_INT(trc_builder_add_tree(b, 0, f->parent[0], f->token[0], f->dtok[0], f->dlp[0],
                                      f->ttok[0], f->tlp[0], f->ex[0]),
                 TRC_E_ARG); /* sticky: still the first error */
    CHECK_EQ_INT(trc_builder_finish(b, "unit", &t, &err), TRC_E_ARG);
    CHECK_ERR(err, TRC_E_ARG, "previous prompt", NULL);

    b = trc_builder_new(&f->meta);
    trc_builder_add_prompt(b, f->prompt, 2, f->ref, 3);
    CHECK_EQ_INT(trc_builder_add_tree(b, 2, f->parent[0], f->token[0], f->dtok[0], f->dlp[0],
                                      f->ttok[0], f->tlp[0], NULL),
                 TRC_E_ARG); /* exit scores required when n_exit > 0 */
    trc_builder_free(b);

    /* a builder with no prompt at all */
    b = trc_builder_new(&f->meta);
    CHECK_EQ_INT(trc_builder_finish(b, "unit", &t, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, "/prompts/offset", "no prompts");
}

/* The token range [0, vocab) on arrays long enough for the validator's
 * branch-free blocks (1024 entries): a token equal to the vocabulary size,
 * and -1, placed inside a full block and at the array's last entry, in each
 * token array, is named with its dataset -- never passed. */
static void test_token_blocks(void)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 2;
    p.prompt_len = 1100; /* prompt tokens: two full blocks and a tail */
    p.output_len = 600;  /* 1200 trees, thousands of nodes */
    p.vocab = 5000;
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_synth(&p, &t, &err), TRC_OK);
    if (!t) return;
    CHECK(trci_validate(t, "blocks", &err) == TRC_OK);
    int32_t V = t->meta.vocab, K = t->meta.k;
    CHECK(t->n_prompt_tok > 2048 && t->meta.n_trees > 1024 && t->meta.n_nodes * K > 2048);
    struct {
        int32_t *a;
        int64_t n;
        const char *ds;
    } arrays[] = {
        {t->prompt_tok, t->n_prompt_tok, "/prompts/tokens"},
        {t->ref_tok, t->meta.n_trees, "/reference/tokens"},
        {t->token, t->meta.n_nodes, "/nodes/token"},
        {t->draft_tok, t->meta.n_nodes * K, "/nodes/draft_tok"},
        {t->tgt_tok, t->meta.n_nodes * K, "/nodes/target_tok"},
    };
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        const int64_t at[] = {5, 1030, arrays[a].n - 1};
        const int32_t bad[] = {V, -1, V + 7};
        for (size_t i = 0; i < 3; i++)
            for (size_t b = 0; b < 3; b++) {
                int32_t *x = &arrays[a].a[at[i]], keep = *x;
                *x = bad[b];
                char what[64];
                snprintf(what, sizeof what, "token %d", (int)bad[b]);
                CHECK_EQ_INT(trci_validate(t, "blocks", &err), TRC_E_DATA);
                CHECK_ERR(err, TRC_E_DATA, arrays[a].ds, what);
                *x = keep;
            }
    }
    CHECK(trci_validate(t, "blocks", &err) == TRC_OK); /* restored */
    trc_free(t);
}

int main(void)
{
    test_token_blocks();
    fix *f = malloc(sizeof *f);
    if (!f) return 1;
    test_valid(f);
    test_tolerances(f);
    test_header_rules(f);
    test_structure_rules(f);
    test_reference_rules(f);
    test_value_rules(f);
    test_whitebox(f);
    test_forward_parent(f);
    test_builder_misuse(f);
    free(f);
    return check_done("test_trc_build");
}
