/*
 * eng_prune.h -- verification pruning with an early-exit predictor (Lever).
 *
 * The predictor at exit layer l_e scores each candidate x of a node u's draft
 * candidate set C_u: s(u, x) (scores[u * k + j] for candidate rank j, as the
 * target oracle's exit_scores hook writes them).  An edge u -> c of the tree
 * (tok(c) in C_u) has normalised score
 *     shadow:     s^(u, c) = exp(s(u,c)/tau) / sum_{y in C_u} exp(s(u,y)/tau)
 *     no shadow:  the same sum over u's children in the tree only
 * and is removable when s^ < theta.  Modes (ENG_PRUNE_*; documented choices):
 *   NONE       keep every node;
 *   THRESHOLD  no-shadow normalisation; a node is kept iff every edge on its
 *              root path passes theta (the subtree under a removed edge goes
 *              with it); no safeguard;
 *   SHADOW     as THRESHOLD with the shadow normalisation;
 *   FULL       shadow normalisation, then the safeguards in order:
 *              1. ancestor closure: the nodes whose own edge passes theta and
 *                 every ancestor of theirs are kept;
 *              2. backbone: from the root, repeatedly the child with the
 *                 highest s^ (ties: lower id), down to a leaf or depth d_max;
 *              3. near the root: every kept node at depth < d0 keeps up to m0
 *                 of its highest-scoring children (d0 = 1, m0 = 2 by default);
 *              4. rejection: when fewer than n_min non-root nodes or l_min
 *                 leaves remain, every node is kept.
 * Acceptance is decided by the final layer on the kept tree: pruning can lower
 * the accepted length, never change an emitted token.  A NaN score (no
 * predictor output) counts as s^ = 1: the edge is never removed.
 *
 * Cost O(n K); scratch memory from the caller; no allocation.
 */
#ifndef ENG_PRUNE_H
#define ENG_PRUNE_H

#include <stdint.h>

#include "eng_tree.h"

typedef enum eng_prune_mode {
    ENG_PRUNE_NONE = 0,
    ENG_PRUNE_THRESHOLD = 1,
    ENG_PRUNE_SHADOW = 2,
    ENG_PRUNE_FULL = 3
} eng_prune_mode;

typedef struct eng_prune_params {
    int32_t mode;   /* eng_prune_mode */
    double tau;     /* softmax temperature, > 0, default 1 */
    double theta;   /* removal threshold on s^, [0, 1], default 0.1 */
    int32_t d0, m0; /* near-root coverage, default 1, 2 */
    int32_t n_min;  /* rejection: fewer kept non-root nodes, default 4 */
    int32_t l_min;  /* rejection: fewer kept leaves, default 2 */
    int32_t d_max;  /* deepest backbone node, default 64 */
} eng_prune_params;

void eng_prune_default_params(eng_prune_params *p);

/* Normalised score s^(par(c), c) of every non-root node c into norm[c]
 * (norm[0] = 1), in the given mode's normalisation (shadow for SHADOW and
 * FULL).  scores: t->n_nodes * k entries. */
void eng_prune_normalise(const eng_tree *t, const float *scores, int32_t k, double tau, int shadow,
                         double *norm);

/* Fills keep[0 .. t->n_nodes) (1 = continues past l_e; keep[0] = 1) by the
 * rules above.  norm: scratch of t->n_nodes doubles.  Returns the number of
 * kept nodes including the root, or ENG_E_ARG. */
int32_t eng_prune_tree(const eng_tree *t, const float *scores, int32_t k, const eng_prune_params *p,
                       double *norm, uint8_t *keep);

#endif
