/*
 * eng_accept.h -- acceptance rules.
 *
 * Greedy (lossless): walk from the root; at node u the target emits g(u); if a
 * child c of u has tok(c) == g(u) (and survived pruning) the walk moves to c,
 * otherwise the cycle ends.  The cycle emits the accepted draft tokens followed
 * by one bonus token g(u) at the last accepted node.  The emitted text therefore
 * equals the target's own greedy output exactly.
 */
#ifndef ENG_ACCEPT_H
#define ENG_ACCEPT_H

#include "eng_tree.h"

typedef struct eng_outcome {
    int32_t accepted;  /* accepted draft tokens (excludes the bonus) */
    int32_t last_node; /* node where the walk stopped */
    eng_token bonus;   /* g(last_node); ENG_NO_TOKEN if the target gave none */
    int32_t emitted;   /* tokens written to emit: accepted + (bonus known) */
} eng_outcome;

/* Greedy acceptance.  g: per-node target tokens (ENG_NO_TOKEN = unknown);
 * keep: NULL or per-node mask of verified nodes.  path (optional, cap entries)
 * receives accepted node ids in order; emit (cap entries, cap >= 1) receives the
 * emitted tokens.  Never emits more than cap tokens: the walk stops after cap - 1
 * accepted drafts, so the bonus always fits.  The root is verified whatever
 * keep[0] says; cap < 1 or NULL t/g/emit yields an empty outcome. */
eng_outcome eng_accept_greedy(const eng_tree *t, const eng_token *g, const uint8_t *keep,
                              int32_t *path, eng_token *emit, int32_t cap);

#endif
