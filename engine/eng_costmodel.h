/*
 * eng_costmodel.h -- the online cost estimators a Lever runtime keeps itself.
 *
 * Three estimators, all learned from latencies the runtime measured (never from
 * a clock or a hardware model), all optionally seeded from an offline profile:
 *
 *   - draft latency per node on the CPU: an exponential moving average of
 *     call_ms / rows over single-node CPU draft calls;
 *   - draft latency per NPU call of batch size b (1 <= b <= ENG_CM_MAX_BATCH):
 *     one moving average per b;
 *   - verification latency per shape (rows r = n + 1 with the root, leaves l),
 *     1 <= r <= ENG_CM_MAX_ROWS, 1 <= l <= ENG_CM_MAX_LEAVES: one moving average
 *     per shape (end-to-end latency as measured, I/O overlap included).
 *
 * Every entry carries a "seen" bit: set by an offline seed or an observation.
 * A lookup of a seen entry returns it.  An unseen entry is estimated from its
 * neighbours (Lever §4.2: nearby observed shapes plus a conservative penalty;
 * the penalty, default +10%, is the lever policy's unseen_penalty,
 * docs/policies.md "`lever`"):
 *   1. along its line(s) -- for the verification table the same-leaves row line
 *      and the same-rows leaves line; for NPU batches the batch line -- the
 *      nearest seen entries below and above: linear interpolation when both
 *      exist, else the nearer one; the estimate is the largest line estimate;
 *   2. when no line holds a seen entry: the seen entry nearest in L1 distance
 *      (ties: the larger value);
 *   3. times (1 + penalty).
 * An entirely empty table falls back to a prior: prior_verify_ms_per_row * r
 * for verification, prior_draft_ms per node or per call for drafting.
 *
 * Memory: the struct is sized once by eng_costmodel_bytes (tables of fixed
 * dimension, no allocation afterwards).  Lookup of a seen entry is O(1); of an
 * unseen one O(ENG_CM_MAX_ROWS + ENG_CM_MAX_LEAVES) (O(table) in case 2).
 */
#ifndef ENG_COSTMODEL_H
#define ENG_COSTMODEL_H

#include <stddef.h>
#include <stdint.h>

#define ENG_CM_MAX_ROWS 256  /* verification rows tracked, root included */
#define ENG_CM_MAX_LEAVES 64 /* verification leaves tracked */
#define ENG_CM_MAX_BATCH 64  /* NPU draft batch sizes tracked */

typedef struct eng_costmodel_params {
    double ema;                     /* moving-average rate of observations, (0, 1], default 0.2 */
    double penalty;                 /* unseen-shape penalty, >= 0, default 0.10 (+10%) */
    double prior_verify_ms_per_row; /* empty-table verification prior, default 1.0 */
    double prior_draft_ms;          /* empty-table draft prior (node or call), default 1.0 */
} eng_costmodel_params;

typedef struct eng_costmodel {
    eng_costmodel_params p;
    double cpu_node_ms;
    int32_t cpu_seen;
    int32_t n_verify_seen, n_batch_seen;
    double npu_ms[ENG_CM_MAX_BATCH];
    uint8_t npu_seen[ENG_CM_MAX_BATCH];
    double verify_ms[ENG_CM_MAX_ROWS * ENG_CM_MAX_LEAVES]; /* [(r-1) * MAX_LEAVES + (l-1)] */
    uint8_t verify_seen[ENG_CM_MAX_ROWS * ENG_CM_MAX_LEAVES];
} eng_costmodel;

void eng_costmodel_default_params(eng_costmodel_params *p);

/* Empties every table and sets the parameters (p NULL: defaults). */
void eng_costmodel_init(eng_costmodel *cm, const eng_costmodel_params *p);

/* Offline seeds: overwrite an entry and mark it seen.  Out-of-range shapes and
 * non-finite or negative values are ignored. */
void eng_costmodel_seed_verify(eng_costmodel *cm, int32_t rows, int32_t leaves, double ms);
void eng_costmodel_seed_cpu(eng_costmodel *cm, double node_ms);
void eng_costmodel_seed_npu(eng_costmodel *cm, int32_t batch, double call_ms);

/* Observations: a seen entry (seeded or observed) moves by the moving average,
 * v <- (1 - ema) * v + ema * ms; an unseen entry takes ms.  observe_draft: npu
 * = 0 records call_ms / rows as one CPU node, npu = 1 one call of batch rows. */
void eng_costmodel_observe_verify(eng_costmodel *cm, int32_t rows, int32_t leaves, double ms);
void eng_costmodel_observe_draft(eng_costmodel *cm, int32_t npu, int32_t rows, double call_ms);

/* Estimates (ms).  Shapes beyond the tables are clamped to the largest tracked
 * rows / leaves / batch and scaled linearly in rows (verification) or batch
 * (NPU draft). */
double eng_costmodel_verify(const eng_costmodel *cm, int32_t rows, int32_t leaves);
double eng_costmodel_cpu_node(const eng_costmodel *cm);
double eng_costmodel_npu_call(const eng_costmodel *cm, int32_t batch);

#endif
