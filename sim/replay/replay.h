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
 * the point (SIM_MISMATCH) under the greedy rule.  The loop is
 * sequential and deterministic: the same point gives the same statistics bit
 * for bit; the seed drives the synthesis of unrecorded draft nodes and, under
 * the sampling rule, the acceptance draws.
 *
 * Lossy acceptance (top_p, sampling): the emitted tokens may leave the
 * reference.  The replay counts them (token_mismatch) and re-synchronises at
 * the same output position: the next cycle starts from the trace's recorded
 * tree at position pos + emitted, i.e. as if the reference tokens had been
 * emitted.  This approximates the continuation the target would have produced
 * after a different prefix by the recorded one (the trace holds no other).
 *
 * Runtimes: every policy, Flash-AR included, verifies on the phone's runtime
 * (sim_hw.h "The runtime"); sim_point.runtime = SPEC selects the device's
 * spec_* alternative for every policy (a what-if).
 *
 * Calibration: a policy with a calibrate hook receives, before the first
 * cycle, an eng_cost_profile: the positional acceptance p[k] measured on the
 * trace's reference paths (rp_synth_stats.accept_pos), and the verification
 * latency of 1 .. RP_PROFILE_ROWS-row trees and the draft-call latency of 1 ..
 * RP_PROFILE_ROWS rows on each unit, priced on the phone model (sim_hw_cycle
 * pricing a verification alone, sim_hw_draft_ms) at the point's mean context
 * length; the verification latency by shape (rows 1 ..
 * RP_PROFILE_NL_ROWS, leaves 1 .. RP_PROFILE_NL_LEAVES, on-demand CPU
 * projection of one row); and the trace's exit layers mapped onto the
 * simulated target (layer l_e of a trace recorded on T layers becomes the
 * 0-based layer round(l_e * L / T) - 1 of an L-layer target, within [0, L - 2]).
 *
 * Pruning (policies with a prune hook): under greedy acceptance the replay
 * also accepts on the unpruned tree with the same target tokens, checks that
 * the pruned cycle's emitted tokens are a prefix of the unpruned ones (a
 * difference fails the point as SIM_MISMATCH) and reports rows_kept
 * and retention.
 */
#ifndef SIM_REPLAY_H
#define SIM_REPLAY_H

#define RP_PROFILE_ROWS 256
#define RP_PROFILE_NL_ROWS 128  /* shape table of the profile: rows 1 .. 128 */
#define RP_PROFILE_NL_LEAVES 32 /* ... by leaves 1 .. 32 (leaves <= rows) */

#include <stdint.h>

#include "engine/eng_policy.h"
#include "sim/hw/sim_hw.h"
#include "sim/sim_status.h"
#include "traces/trc.h"

struct sim_cycle_info;

/* A memo of the calibration profiles' latency tables (replay.h
 * "Calibration"), for the points one owner replays: keyed on the phone
 * model's inputs (sim_hw_inputs), the mean context and the runtime; a hit
 * gives the very numbers pricing them again would, so results are the same
 * bytes with it or without.  Thread-safe (its own lock): the threads that
 * replay a script's points may share one.  create: NULL when out of memory
 * (then points simply price their own tables); destroy is NULL-safe. */
typedef struct sim_profile_cache sim_profile_cache;
sim_profile_cache *sim_profile_cache_create(void);
void sim_profile_cache_destroy(sim_profile_cache *c);

#define RP_HIST_BINS 33

typedef struct sim_point {
    const sim_device *device;      /* borrowed */
    const sim_model *target;       /* borrowed */
    const sim_model *draft;        /* borrowed; NULL when the policy drafts nothing */
    const trc_trace *trace;        /* borrowed, shared read-only */
    const eng_policy_desc *policy; /* borrowed registry row */
    const void *policy_params;     /* borrowed, validated */
    double dram_fraction;          /* [0, 1]: first x of target layers pinned */
    int32_t max_new_tokens;        /* per prompt; capped by the reference length */
    int32_t prompts;               /* 0 = all prompts of the trace (from prompt_offset) */
    int32_t prompt_offset;         /* first trace prompt replayed (0-based) */
    uint64_t seed;
    /* acceptance rule (zero-initialised = greedy, the lossless default) */
    int32_t accept;                /* sim_accept_rule */
    double top_p;                  /* SIM_ACCEPT_TOP_P: mass of the accepted set, (0, 1] */
    double temperature;            /* SIM_ACCEPT_SAMPLING: > 0 */
    int32_t runtime;               /* sim_point_runtime (0 = auto) */
    /* optional timeline (zero-initialised = none): while prompt trace_prompt
     * (0-based) replays, every finished service goes to span_fn (sim_hw.h
     * sim_hw_set_span_fn) and every cycle to cycle_fn; both get trace_ctx. */
    sim_hw_span_fn span_fn;
    void (*cycle_fn)(void *ctx, const struct sim_cycle_info *ci);
    void *trace_ctx;
    int32_t trace_prompt;
    /* the device's standing variants (zero-initialised = none): the point is
     * also replayed on each, same seed, no timeline; tokens_per_s_model_lo/hi
     * span the throughputs of the device and its variants.  For a built-in
     * policy that never sees a latency (no calibrate or provisional hook, and
     * an observe hook only if it reads the outcome alone,
     * eng_policy_observes_outcome) the variants' phone models price the
     * point's own cycles as it replays (the trees, plans and tokens are the
     * same on any phone); the numbers are those of a replay of its own
     * either way */
    const sim_device *variants; /* borrowed, n_variants entries */
    int32_t n_variants;
    /* the trace's acceptance bracket (zero-initialised = none): traces of
     * the same prompts in which the draft agrees with the target at the ends
     * of what the data leave open (an acceptance transferred from another
     * model pair or source).  The point is also replayed on each, on its own
     * device, same seed, no timeline and no interval, with the device's
     * standing variants priced or replayed on it as on the point's own
     * trace; tokens_per_s_model_lo/hi span every such replay, the corners
     * (a slow variant on a low bracket end) included.  Each must hold the
     * prompts the point replays. */
    const trc_trace *const *trace_variants; /* borrowed, n_trace_variants entries */
    int32_t n_trace_variants;
    /* 1: no bootstrap over the prompts -- tokens_per_s_lo/hi are the point
     * estimate (a caller that reads neither: a calibration's evaluations) */
    int32_t no_interval;
    /* 1: every token id of a synthesised candidate set its own uniform draw
     * (as re-sampled sets have them), instead of one uniform start and a
     * fixed stride (rp_oracle.h); the same distribution of every result at
     * several times the draws -- the reference the construction is tested
     * against (zero-initialised = the construction) */
    int32_t synth_drawn;
    /* borrowed, may be shared by threads: where a policy's calibration
     * profile keeps its tables for later points (NULL: priced every time;
     * the same numbers either way) */
    sim_profile_cache *profile_cache;
} sim_point;

/* One replayed cycle, for sim_point.cycle_fn. */
typedef struct sim_cycle_info {
    int32_t prompt, pos;      /* output position the cycle started at */
    int32_t ctx_len;          /* committed context tokens at its start */
    int32_t emitted, accepted;
    int32_t rows, leaves;     /* verification shape */
    int32_t draft_calls;      /* calls before verification */
    int32_t provisional_calls, provisional_done; /* draft calls overlapping it */
    double dram_used_bytes;   /* DRAM in use: weights, buffers, KV at ctx_len */
    const sim_cycle_time *ct; /* borrowed for the call */
} sim_cycle_info;

/* Which phone runtime verifies (sim_hw.h "The runtime"): auto and baseline =
 * the device's runtime, for every policy; spec = the device's spec_*
 * alternative, for every policy. */
typedef enum sim_point_runtime {
    SIM_POINT_RUNTIME_AUTO = 0,
    SIM_POINT_RUNTIME_BASELINE = 1,
    SIM_POINT_RUNTIME_SPEC = 2
} sim_point_runtime;

/* Acceptance rules of a point (enum only grows; names are the Lua values). */
typedef enum sim_accept_rule {
    SIM_ACCEPT_GREEDY = 0,  /* "greedy": exact; every emitted token checked */
    SIM_ACCEPT_TOP_P = 1,   /* "top_p": eng_accept_top_p, lossy */
    SIM_ACCEPT_SAMPLING = 2 /* "sampling": eng_accept_sampling, lossy */
} sim_accept_rule;

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
    int64_t verify_rows_max;   /* most rows one verification sent through the layers */
    double effective_new_tokens; /* new tokens generated per prompt, mean: max_new_tokens
                                    unless a prompt's reference is shorter */
    double coverage;           /* recorded / all expansions; 1 when nothing was expanded */
    int64_t dram_bytes;        /* DRAM the point occupies */
    int32_t resident_layers;
    double sim_wall_s;         /* host time the point took */
    /* waste: per cycle, the verification time minus the time the same phone
     * would take to verify only the rows that turned out useful (the root and
     * the accepted path: accepted + 1 rows, one leaf, same context and runtime,
     * priced alone by sim_hw_cycle); 0 when every row was accepted.  waste_ms is its
     * mean per cycle, waste_frac = total waste / total verification time. */
    double waste_ms, waste_frac;
    int64_t mismatched;        /* emitted tokens that differ from the reference */
    double token_mismatch;     /* mismatched / tokens; 0 under greedy */
    /* verification pruning: rows past the exit layer over rows through the
     * layers (1 without pruning); accepted draft tokens of the pruned trees
     * over those of the same trees verified unpruned (greedy; 1 when nothing
     * was pruned or nothing would have been accepted) */
    int64_t rows_after_exit;   /* sum over cycles */
    int64_t accepted_unpruned; /* sum over cycles */
    double rows_kept, retention;
    double proj_ms;            /* mean compute time of the output projection per cycle */
    /* energy (sim_hw.h "Energy"): total over the decode, per emitted token, and
     * mean power = energy / virtual decode time; 0 when the device models no power */
    double energy_mj, joules_per_token, avg_power_w;
    int64_t throttled_cycles;  /* cycles run thermally throttled (sim_hw.h "Thermal") */
    /* 95% confidence interval of tokens_per_s over prompts: percentile
     * bootstrap (RP_BOOTSTRAP resamples of the prompts with replacement, each
     * giving sum tokens / sum time, GSL mt19937 seeded from the point's seed);
     * both equal tokens_per_s with a single prompt */
    double tokens_per_s_lo, tokens_per_s_hi;
    /* model uncertainty: the least and the most tokens_per_s over the device
     * and its standing variants (sim_point.variants), on the trace and on
     * each end of its acceptance bracket (sim_point.trace_variants); NaN
     * when the point has neither */
    double tokens_per_s_model_lo, tokens_per_s_model_hi;
    /* provisional drafting (EdgeLLM): draft calls run while the target
     * verified, and draft tokens they produced that later cycles kept */
    int64_t provisional_calls, provisional_kept;
    /* re-sampling (Lyanna): candidate sets served by the draft oracle's
     * resample hook, and those its quality penalty degraded
     * (sim/replay/README.md) */
    int64_t resampled_expansions, penalised_expansions;
    /* cycles by accepted draft tokens: bin k counts cycles that accepted k,
     * the last bin those that accepted RP_HIST_BINS - 1 or more */
    int64_t accepted_hist[RP_HIST_BINS];
} sim_point_stats;

#define RP_BOOTSTRAP 1000

/* Runs the point.  Returns SIM_OK or an error code with a one-line
 * message in err. */
int sim_replay_run(const sim_point *pt, sim_point_stats *out, char *err, size_t errlen);

/* What a resume record of the point is keyed on: the trace's checksum, and for
 * a trace read prompt by prompt (whose checksum is its index's) also the
 * hashes of the prompts the point replays -- so a record made on other data
 * under the same checksum is not taken for this point's. */
uint64_t sim_point_content_key(const sim_point *pt);

/* Before a record is trusted: reads every prompt the point replays from a
 * trace read prompt by prompt, each checked against its hash (the data a
 * record's key names is the data in the file).  0, or an error code of
 * SIM_REPLAY_* with err.  No-op for a trace held whole. */
int sim_point_verify_content(const sim_point *pt, char *err, size_t errlen);

#endif
