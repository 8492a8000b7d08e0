/*
 * eng_prune.c -- predictor-based verification pruning (rules in eng_prune.h).
 *
 * Invariant of every keep mask produced here: keep[par(v)] = 1 whenever
 * keep[v] = 1 (ancestor-closed), so the kept nodes form a tree rooted at 0.
 * Node ids satisfy parent < child, so one forward pass in id order sees every
 * parent before its children.
 *
 * Speed: in shadow normalisation every candidate's exp() is computed once
 * (PR_EXP_CACHE of them kept on the stack) and reused for the children's
 * shares, with the same operands as the uncached expression, so the values
 * are bit-identical.
 */
#include "eng_prune.h"

#include <math.h>

#define PR_EXP_CACHE 64 /* candidates whose exp() is kept per node */

void eng_prune_default_params(eng_prune_params *p)
{
    p->mode = ENG_PRUNE_FULL;
    p->tau = 1.0;
    p->theta = 0.1;
    p->d0 = 1;
    p->m0 = 2;
    p->n_min = 4;
    p->l_min = 2;
    p->d_max = 64;
}

/* rank of tok in u's candidate set, or -1 */
static int32_t cand_rank(const eng_tree *t, int32_t u, eng_token tok)
{
    int32_t n = 0;
    const eng_cand *c = eng_tree_cands(t, u, &n);
    for (int32_t j = 0; j < n; j++)
        if (c[j].tok == tok) return j;
    return -1;
}

void eng_prune_normalise(const eng_tree *t, const float *scores, int32_t k, double tau, int shadow,
                         double *norm)
{
    norm[0] = 1.0;
    for (int32_t u = 0; u < t->n_nodes; u++) {
        const eng_node *nu = &t->nodes[u];
        if (nu->first_child == ENG_NO_NODE) continue;
        const float *s = scores + (size_t)u * (size_t)k;
        int32_t cn = 0;
        eng_tree_cands(t, u, &cn);
        if (cn > k) cn = k;
        /* max over the normalisation set, for a stable softmax */
        double mx = -INFINITY;
        int bad = 0;
        if (shadow) {
            for (int32_t j = 0; j < cn; j++) {
                if (isnan(s[j])) bad = 1;
                if (s[j] > mx) mx = s[j];
            }
        } else {
            for (int32_t c = nu->first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling) {
                int32_t j = cand_rank(t, u, t->nodes[c].tok);
                if (j < 0 || j >= cn || isnan(s[j]))
                    bad = 1;
                else if (s[j] > mx)
                    mx = s[j];
            }
        }
        double z = 0.0, e[PR_EXP_CACHE];
        int cached = shadow && !bad && cn <= PR_EXP_CACHE;
        if (!bad) {
            if (cached) {
                for (int32_t j = 0; j < cn; j++)
                    z += e[j] = exp(((double)s[j] - mx) / tau);
            } else if (shadow) {
                for (int32_t j = 0; j < cn; j++)
                    z += exp(((double)s[j] - mx) / tau);
            } else {
                for (int32_t c = nu->first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling)
                    z += exp(((double)s[cand_rank(t, u, t->nodes[c].tok)] - mx) / tau);
            }
        }
        for (int32_t c = nu->first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling) {
            int32_t j = cand_rank(t, u, t->nodes[c].tok);
            if (bad || j < 0 || j >= cn || !(z > 0)) {
                norm[c] = 1.0;
                continue;
            }
            norm[c] = (cached ? e[j] : exp(((double)s[j] - mx) / tau)) / z;
        }
    }
}

static int32_t count_leaves(const eng_tree *t, const uint8_t *keep, int32_t *kept)
{
    int32_t leaves = 0, n = 0;
    for (int32_t v = 0; v < t->n_nodes; v++) {
        if (!keep[v]) continue;
        n++;
        int has = 0;
        for (int32_t c = t->nodes[v].first_child; c != ENG_NO_NODE && !has;
             c = t->nodes[c].next_sibling)
            has = keep[c];
        leaves += !has;
    }
    *kept = n;
    return leaves;
}

int32_t eng_prune_tree(const eng_tree *t, const float *scores, int32_t k, const eng_prune_params *p,
                       double *norm, uint8_t *keep)
{
    if (!t || !p || !keep || !norm || (p->mode != ENG_PRUNE_NONE && (!scores || k < 1)) ||
        !(p->tau > 0))
        return ENG_E_ARG;
    int32_t n = t->n_nodes;
    for (int32_t v = 0; v < n; v++)
        keep[v] = 1;
    if (p->mode == ENG_PRUNE_NONE || n <= 1) return n;
    eng_prune_normalise(t, scores, k, p->tau, p->mode != ENG_PRUNE_THRESHOLD, norm);
    if (p->mode != ENG_PRUNE_FULL) {
        int32_t kept = 1;
        for (int32_t v = 1; v < n; v++) {
            keep[v] = keep[t->nodes[v].parent] && !(norm[v] < p->theta);
            kept += keep[v];
        }
        return kept;
    }
    /* 1. passing edges plus ancestor closure (children before parents: ids
     * descend, so a kept child marks its parent before the parent is visited) */
    for (int32_t v = 1; v < n; v++)
        keep[v] = !(norm[v] < p->theta);
    for (int32_t v = n - 1; v >= 1; v--)
        if (keep[v]) keep[t->nodes[v].parent] = 1;
    keep[0] = 1;
    /* 2. backbone */
    for (int32_t u = 0;;) {
        int32_t best = ENG_NO_NODE;
        if (t->nodes[u].depth >= p->d_max) break;
        for (int32_t c = t->nodes[u].first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling)
            if (best == ENG_NO_NODE || norm[c] > norm[best]) best = c;
        if (best == ENG_NO_NODE) break;
        keep[best] = 1;
        u = best;
    }
    /* 3. near-root coverage: top-m0 children of kept nodes above depth d0 */
    for (int32_t u = 0; u < n; u++) {
        if (!keep[u] || t->nodes[u].depth >= p->d0) continue;
        for (int32_t m = 0; m < p->m0; m++) {
            int32_t best = ENG_NO_NODE;
            for (int32_t c = t->nodes[u].first_child; c != ENG_NO_NODE;
                 c = t->nodes[c].next_sibling) {
                if (keep[c] == 2) continue;
                if (best == ENG_NO_NODE || norm[c] > norm[best]) best = c;
            }
            if (best == ENG_NO_NODE) break;
            keep[best] = 2; /* chosen in this pass; reset to 1 below */
        }
        for (int32_t c = t->nodes[u].first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling)
            if (keep[c] == 2) keep[c] = 1;
    }
    /* 4. rejection of over-aggressive pruning */
    int32_t kept = 0;
    int32_t leaves = count_leaves(t, keep, &kept);
    if (kept - 1 < p->n_min || leaves < p->l_min) {
        for (int32_t v = 0; v < n; v++)
            keep[v] = 1;
        return n;
    }
    return kept;
}
