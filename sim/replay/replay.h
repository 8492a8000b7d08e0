/*
 * replay.h -- the replay loop: where engine, trace and phone model meet.
 *
 * One experiment point = (device, target, draft, trace, policy + params, DRAM
 * fraction, output length, seed).  For every prompt the loop runs speculative
 * cycles from position 0 until max_new_tokens reference tokens are emitted:
 *
 *   root = last committed token -> policy.build (draft oracle calls, logged)
 *   -> policy.prune -> policy.plan -> target oracle verify -> greedy acceptance
 *   -> every emitted token checked against the trace's reference
 *   -> the phone model prices the cycle (draft calls, then the verification)
 *   -> the measured latencies flow back to policy.observe.
 *
 * A replay that emits a token different from the reference is a bug and fails
 * the point (SIM_REPLAY_E_MISMATCH).  The loop is sequential and deterministic:
 * the same point gives the same statistics bit for bit; the seed only drives the
 * synthesis of unrecorded draft nodes.
 */
#ifndef SIM_REPLAY_H
#define SIM_REPLAY_H

#include <stdint.h>

#include "engine/eng_policy.h"
#include "sim/hw/sim_hw.h"
#include "traces/trc.h"

enum {
    SIM_REPLAY_OK = 0,
    SIM_REPLAY_E_CONFIG = 1,   /* the point cannot run as configured (exit 78) */
    SIM_REPLAY_E_NOFIT = 2,    /* does not fit the DRAM budget (exit 78) */
    SIM_REPLAY_E_MISMATCH = 3, /* emitted token differs from the reference (exit 70) */
    SIM_REPLAY_E_INTERNAL = 4  /* allocation or engine failure (exit 70) */
};

typedef struct sim_point {
    const sim_device *device;      /* borrowed */
    const sim_model *target;       /* borrowed */
    const sim_model *draft;        /* borrowed; NULL when the policy drafts nothing */
    const trc_trace *trace;        /* borrowed, shared read-only */
    const eng_policy_desc *policy; /* borrowed registry row */
    const void *policy_params;     /* borrowed, validated */
    double dram_fraction;          /* [0, 1]: first x of target layers pinned */
    int32_t max_new_tokens;        /* per prompt; capped by the reference length */
    int32_t prompts;               /* 0 = all prompts of the trace */
    uint64_t seed;
} sim_point;

/* Aggregates over all prompts of a point.  Per-cycle means are over all cycles;
 * the resource times are busy times. */
typedef struct sim_point_stats {
    int64_t tokens;            /* emitted tokens */
    int64_t cycles;
    int64_t accepted;          /* accepted draft tokens */
    int64_t proposed;          /* draft nodes sent to verification */
    int64_t verify_rows;       /* rows through the target's layers */
    int64_t expansions, recorded_expansions;
    int32_t prompts;
    double total_ms;           /* virtual decode time (prefill excluded) */
    double tokens_per_s, ms_per_token, tokens_per_cycle, mean_accepted;
    double cycle_ms, draft_ms, verify_ms, flash_ms, npu_ms, cpu_ms, kv_ms, idle_ms;
    double rows_per_cycle;
    double coverage;           /* recorded / all expansions; 1 when nothing was expanded */
    int64_t dram_bytes;        /* DRAM the point occupies */
    int32_t resident_layers;
    double sim_wall_s;         /* host time the point took */
} sim_point_stats;

/* Runs the point.  Returns SIM_REPLAY_OK or an error code with a one-line
 * message in err. */
int sim_replay_run(const sim_point *pt, sim_point_stats *out, char *err, size_t errlen);

#endif
