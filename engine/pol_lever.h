/*
 * pol_lever.h -- Lever (pol_lever.c): gain-cost tree construction, early-exit
 * verification pruning (eng_prune.h) and CPU-NPU hybrid drafting, over the
 * latency estimators of eng_costmodel.h.
 */
#ifndef POL_LEVER_H
#define POL_LEVER_H

#include "eng_policy.h"
#include "eng_costmodel.h"
#include "eng_prune.h"

/* Tree construction of Lever; the others reuse the named policy's build
 * (ablation of the construction alone). Enum only grows. */
typedef enum eng_lever_drafting {
    ENG_LEVER_GAIN_COST = 0,
    ENG_LEVER_SPECINFER = 1,
    ENG_LEVER_OPT_TREE = 2,
    ENG_LEVER_EAGLE2 = 3,
    ENG_LEVER_SEQUOIA = 4
} eng_lever_drafting;

/* Where gain-cost drafting expands nodes. */
typedef enum eng_lever_schedule {
    ENG_LEVER_HYBRID = 0, /* single-node CPU calls; NPU batches once b_min nodes are ready */
    ENG_LEVER_CPU = 1,    /* every expansion one CPU call */
    ENG_LEVER_NPU = 2     /* every expansion one single-node NPU call */
} eng_lever_schedule;

/* Projection placement; maps onto eng_proj_mode. */
typedef enum eng_lever_projection {
    ENG_LEVER_PROJ_CPU_ON_DEMAND = 0, /* ENG_PROJ_ONDEMAND_CPU */
    ENG_LEVER_PROJ_NPU_EAGER = 1,     /* ENG_PROJ_EAGER_NPU */
    ENG_LEVER_PROJ_NPU_ON_DEMAND = 2  /* ENG_PROJ_ONDEMAND_NPU */
} eng_lever_projection;

#define ENG_LEVER_MAX_NODES 256 /* largest gain-cost tree, root included */

typedef struct eng_lever_params {
    int32_t drafting;       /* eng_lever_drafting, default gain_cost */
    int32_t pruning;        /* eng_prune_mode, default full */
    int32_t draft_schedule; /* eng_lever_schedule, default hybrid */
    int32_t projection;     /* eng_lever_projection, default cpu_on_demand */
    int32_t n_max;          /* safety cap on draft nodes (root excluded), default 64 */
    int32_t d_max;          /* safety cap on depth, default 10 */
    double eta;             /* EMA rate of the reliability factor beta, default 0.1 */
    double beta_init;       /* beta before any feedback, default 1 */
    int32_t b_min, b_max;   /* hybrid NPU batch: at least / at most, default 4 / 16 */
    double tau, theta;      /* pruning temperature and threshold, default 1 / 0.1 */
    int32_t d0, m0;         /* near-root coverage, default 1 / 2 */
    int32_t n_min, l_min;   /* rejection of over-aggressive pruning, default 4 / 2 */
    int32_t exit_index;     /* recorded exit layer used by the predictor, default 0 */
    double cost_ema;        /* moving-average rate of the latency estimators, default 0.2 */
    double unseen_penalty;  /* unseen-shape penalty of the verification profile, default 0.1 */
} eng_lever_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_lever_param_table[];
int eng_lever_create(const void *params, eng_policy *out);

/* Marginal latency of inserting a node into a tree of `rows` verification rows
 * (root included) and `leaves` leaves (Eq. 5's Delta C): verify(rows + 1,
 * leaves') - verify(rows, leaves) with leaves' = leaves when the new node's
 * parent is a leaf and leaves + 1 otherwise, plus child_draft_ms (the draft
 * cost of expanding the node, 0 when it will not be expanded).  Clamped to at
 * least ENG_LEVER_MIN_DELTA_MS; verify() is eng_costmodel_verify of cm. */
#define ENG_LEVER_MIN_DELTA_MS 1e-3
double eng_lever_delta_cost(const eng_costmodel *cm, int32_t rows, int32_t leaves,
                            int32_t parent_is_leaf, double child_draft_ms);
/* Eq. 6: 1 when a node of reach probability `reach` and marginal cost `delta_ms`
 * must not be inserted into a tree of gain g and cost c_ms (reach / delta <=
 * g / c). */
int32_t eng_lever_stop(double reach, double delta_ms, double g, double c_ms);

/* Introspection: current reliability factor beta (NaN for another policy). */
double eng_lever_beta(const eng_policy *p);

#endif
