/*
 * pol_lyanna.h -- Lyanna (pol_lyanna.c): token-info sampling tree over a
 * hidden-state draft (Algorithm 1), pruned to a verification budget;
 * re-sampling after a rejection from the hidden states already computed
 * (Algorithm 2), verified fused into the next cycle or on its own; one-pass
 * draft LM head.  Rules and modelling in pol_lyanna.c's header comment.
 */
#ifndef POL_LYANNA_H
#define POL_LYANNA_H

#include "eng_policy.h"

typedef struct eng_lyanna_params {
    int32_t n;               /* N: draft steps (hidden states) per cycle, default 7 */
    int32_t k;               /* branch number: children per frontier node and frontier
                                width, default 2 */
    int32_t b;               /* B: verification budget, draft nodes kept (root excluded)
                                per tree, default 16 */
    int32_t r;               /* re-sample only when more than r draft steps remain, default 1 */
    int32_t resampling;      /* bool, default 1 */
    int32_t fusion;          /* bool: re-sampled subtree verified inside the next cycle's
                                tree (1) or in a verification of its own (0), default 1 */
    int32_t one_pass_head;   /* bool: N body-only forwards + one LM-head pass, default 1 */
    double resample_penalty; /* [0, 1]: replay-only quality loss of re-sampled candidate
                                sets (eng_draft_oracle.resample), default 0.2 */
    eng_unit unit;           /* draft unit, default NPU */
} eng_lyanna_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_lyanna_param_table[];
int eng_lyanna_create(const void *params, eng_policy *out);

/* What the last build did (kind) and what observe decided (pending). Enum only
 * grows. */
typedef enum eng_lyanna_kind {
    ENG_LYANNA_DRAFT = 0,    /* a token-info tree from N draft steps */
    ENG_LYANNA_FUSED = 1,    /* the same, merged with the re-sampled subtree */
    ENG_LYANNA_RESAMPLED = 2 /* the re-sampled subtree alone: no draft forward */
} eng_lyanna_kind;

typedef struct eng_lyanna_cycle {
    int32_t kind;           /* eng_lyanna_kind of the last build */
    int32_t steps;          /* draft steps run (forwards over the hidden-state chain) */
    int32_t draft_nodes;    /* token-info tree after budget pruning (root excluded) */
    int32_t resample_steps; /* depth of the re-sampled subtree, 0 = none */
    int32_t resample_nodes; /* re-sampled subtree after pruning (root excluded), shared
                               nodes included */
    int32_t extra_rows;     /* nodes the re-sampled subtree added to the tree */
    int32_t pending;        /* steps of the subtree owed to the next build (after
                               observe), 0 = none */
} eng_lyanna_cycle;

/* Introspection for tests and tools: the last cycle of a lyanna policy.
 * Returns ENG_OK, or ENG_E_ARG when p is not a lyanna policy. */
int eng_lyanna_last(const eng_policy *p, eng_lyanna_cycle *out);

#endif
