/*
 * pol_adaptive_chain.h -- adaptive-k chain (pol_adaptive_chain.c): a chain of
 * k draft top-1 tokens, k steered by a window of per-cycle acceptance rates;
 * optional fallback to autoregressive decoding.
 */
#ifndef POL_ADAPTIVE_CHAIN_H
#define POL_ADAPTIVE_CHAIN_H

#include "eng_policy.h"

typedef struct eng_adaptive_chain_params {
    int32_t window;        /* W, default 32 */
    int32_t k_start;       /* default 4 */
    int32_t k_min, k_max;  /* default 2, 8 */
    double raise_above;    /* k + 1 when the window mean exceeds it, default 0.80 */
    double lower_below;    /* k - 1 when the window mean is below it, default 0.50 */
    int32_t fallback;      /* bool, default 0 */
    double fallback_below; /* autoregressive when the mean is below it, default 0.40 */
    int32_t probe_period;  /* while autoregressive, draft one chain every N cycles, default 16 */
    eng_unit unit;         /* default CPU */
} eng_adaptive_chain_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_adaptive_chain_param_table[];
int eng_adaptive_chain_create(const void *params, eng_policy *out);

/* Introspection for tests and tools: the k of the next cycle and whether it
 * runs autoregressively. */
int32_t eng_adaptive_chain_k(const eng_policy *p, int32_t *autoregressive);

#endif
