/*
 * eng_oracle.h -- the only way the engine learns what the models say.
 *
 * Draft oracle: "expand these nodes": one draft forward over `count` nodes (one
 * node on a unit, or a batch with a tree mask).  It fills each node's candidate set
 * (top-K draft tokens with log-probs, sorted by decreasing log-prob) through
 * eng_tree_cands_alloc.  On a phone it runs the draft model; in replay it reads the
 * trace and tells the simulator that a draft step of that shape happened.
 *
 * Target oracle: "verify this tree": the target's greedy token g(u) for every
 * verified node, and, when asked, the early-exit predictor's scores of each node's
 * candidates at an exit layer.  Timing is never returned here: the engine learns
 * latencies only through eng_feedback, as a runtime measures them.
 *
 * Ownership: ctx is borrowed by the engine for the oracle's lifetime.
 */
#ifndef ENG_ORACLE_H
#define ENG_ORACLE_H

#include "eng_tree.h"

typedef enum eng_unit { ENG_UNIT_CPU = 0, ENG_UNIT_NPU = 1 } eng_unit;

typedef struct eng_draft_oracle {
    /* required: expand ids[0..count) of t as one forward on unit.  Returns ENG_OK
     * or a negative ENG_E_* code (ENG_E_FULL when the candidate arena is full). */
    int (*expand)(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit);
    void *ctx;
    int32_t k; /* candidates per expanded node (the trace's K) */
    /* optional (one-pass LM head, Lyanna): expand_body is expand without the
     * draft's LM head -- the forward stops at the hidden states; the policy
     * later turns the deferred rows into logits with one project() call (one
     * GEMM over `rows` hidden states on unit).  The candidate sets are filled by
     * expand_body already: a runtime that defers the head fills them when
     * project runs, before the policy reads them. */
    int (*expand_body)(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit);
    int (*project)(void *ctx, int32_t rows, eng_unit unit);
    /* optional (re-sampling, Lyanna): candidate sets for ids from draft hidden
     * states already computed in an earlier forward, with token information
     * re-injected -- no draft forward runs.  penalty in [0, 1] is the quality
     * loss a trace-backed oracle applies to stand in for re-sampled logits it
     * never recorded (sim/replay/README.md); a real runtime ignores it. */
    int (*resample)(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, double penalty);
} eng_draft_oracle;

typedef struct eng_target_oracle {
    /* required: writes g(u) into g[u] for every node u with keep == NULL or
     * keep[u] != 0, and ENG_NO_TOKEN for the others.  g has t->n_nodes entries.
     * Returns ENG_OK or a negative code. */
    int (*verify)(void *ctx, const eng_tree *t, const uint8_t *keep, eng_token *g);
    /* optional: scores[u * K + j] = predictor score of candidate j of node u at
     * exit layer index exit_idx (NAN where the node has no candidates). */
    int (*exit_scores)(void *ctx, const eng_tree *t, int32_t exit_idx, float *scores);
    void *ctx;
    /* optional (lossy acceptance rules): the target's top-k next tokens with
     * log-probs at every verified node: cands[u * k + j], j < n[u], sorted by
     * decreasing log-prob; n[u] = 0 where the distribution is unknown.  cands has
     * n_nodes * k entries, n has n_nodes. */
    int (*dists)(void *ctx, const eng_tree *t, const uint8_t *keep, eng_cand *cands, int32_t *n);
    int32_t k; /* entries per node that dists writes */
} eng_target_oracle;

#endif
