/*
 * trc_fixture.h -- a tiny hand-made valid trace for the traces tests, kept as
 * plain arrays so a test can break exactly one rule before building it.
 *
 * Header: vocab 100, K = k (3 by default), D 2, M 6, one exit layer (2 of 4).
 * One prompt {5, 6}, reference {10, 11, 12}; one tree per position, each holding
 * the reference path to depth min(2, 3 - pos) (nodes 1..dref) plus `extra`
 * off-path children of the root (tokens 40, 41, ...).  Candidates: draft tokens
 * 60+j, target tokens g(u) then 20+j; g(u) is the next reference token on the
 * reference path, 90 at the end of the reference, 91 off the path.
 */
#ifndef TRC_FIXTURE_H
#define TRC_FIXTURE_H

#include "trc.h"

#include <string.h>

#define FIX_TREES 3
#define FIX_MAXN 48
#define FIX_MAXK 20

typedef struct fix {
    trc_meta meta;
    int32_t prompt[2], ref[3];
    int32_t prompt_len;
    int32_t n[FIX_TREES];
    int32_t parent[FIX_TREES][FIX_MAXN], token[FIX_TREES][FIX_MAXN];
    int32_t dtok[FIX_TREES][FIX_MAXN * FIX_MAXK], ttok[FIX_TREES][FIX_MAXN * FIX_MAXK];
    float dlp[FIX_TREES][FIX_MAXN * FIX_MAXK], tlp[FIX_TREES][FIX_MAXN * FIX_MAXK];
    float ex[FIX_TREES][FIX_MAXN * FIX_MAXK];
} fix;

static void fix_node(fix *f, int tr, int i, int32_t g)
{
    int K = f->meta.k;
    for (int j = 0; j < K; j++) {
        f->dtok[tr][i * K + j] = 60 + j;
        f->dlp[tr][i * K + j] = -0.1f - (float)j;
        f->ttok[tr][i * K + j] = j ? 20 + j : g;
        f->tlp[tr][i * K + j] = -0.2f - (float)j;
        f->ex[tr][i * K + j] = 0.5f - 0.1f * (float)j;
    }
}

/* k in [1, FIX_MAXK]; extra off-path root children in tree 0 (>= 1). */
static void fix_init(fix *f, int k, int extra)
{
    memset(f, 0, sizeof *f);
    f->meta.vocab = 100;
    f->meta.k = k;
    f->meta.max_depth = 2;
    f->meta.max_nodes = 6;
    f->meta.n_exit = 1;
    f->meta.exit_layers[0] = 2;
    f->meta.target_layers = 4;
    strcpy(f->meta.target, "unit-target");
    strcpy(f->meta.draft, "unit-draft");
    strcpy(f->meta.tokenizer, "unit-tok");
    strcpy(f->meta.source, "trc_fixture.h");
    f->prompt[0] = 5;
    f->prompt[1] = 6;
    f->prompt_len = 2;
    for (int i = 0; i < 3; i++)
        f->ref[i] = 10 + i;
    for (int pos = 0; pos < FIX_TREES; pos++) {
        int dref = 3 - pos < 2 ? 3 - pos : 2, n = 0;
        int nextra = pos == 0 ? extra : 1;
        f->parent[pos][n] = -1;
        f->token[pos][n] = pos ? f->ref[pos - 1] : 6;
        fix_node(f, pos, n++, f->ref[pos]);
        for (int d = 1; d <= dref; d++) {
            f->parent[pos][n] = d - 1;
            f->token[pos][n] = f->ref[pos + d - 1];
            fix_node(f, pos, n++, pos + d < 3 ? f->ref[pos + d] : 90);
        }
        for (int c = 0; c < nextra; c++) {
            f->parent[pos][n] = 0;
            f->token[pos][n] = 40 + c;
            fix_node(f, pos, n++, 91);
        }
        f->n[pos] = n;
    }
}

static int fix_build(const fix *f, const char *name, trc_trace **out, trc_err *err)
{
    trc_builder *b = trc_builder_new(&f->meta);
    if (!b) {
        *out = NULL;
        err->code = TRC_E_ARG;
        strcpy(err->msg, "trc_builder_new refused the meta");
        return TRC_E_ARG;
    }
    trc_builder_add_prompt(b, f->prompt, f->prompt_len, f->ref, 3);
    for (int t = 0; t < FIX_TREES; t++)
        trc_builder_add_tree(b, f->n[t], f->parent[t], f->token[t], f->dtok[t], f->dlp[t],
                             f->ttok[t], f->tlp[t], f->meta.n_exit ? f->ex[t] : NULL);
    return trc_builder_finish(b, name, out, err);
}

#endif
