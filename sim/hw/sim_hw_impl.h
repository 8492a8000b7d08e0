/*
 * sim_hw_impl.h -- private to sim/hw: the phone model's handle and what its
 * files share.  The phone model is split by what it models:
 *   sim_flash.c      flash reads: request latency, queue depth, per-runtime
 *                    read times, what every verification streams;
 *   sim_npu.c        NPU graph executions: shapes and padding, the smallest
 *                    verification graph, launch / sync, npu_call_us; the
 *                    target's layers and head on the verifying unit, the
 *                    output projection by mode;
 *   sim_cpu.c        CPU passes: GEMV / GEMM rates, the head's CPU rows, the
 *                    CPU-only verification runtime;
 *   sim_draft.c      draft calls: a part of the draft on its unit;
 *   sim_runtime.c    runtime management: the tree set-up, KV copies and
 *                    temporary sequences, the runtime a verification streams
 *                    with;
 *   sim_hw_memory.c  the memory plan: residency, buffers, KV, the budget;
 *   sim_energy.c     DRAM traffic and energy of a cycle;
 *   sim_thermal.c    throttling after the thermal onset;
 *   sim_hw.c         the handle, the cycle entry point and the event-driven
 *                    cycle;
 *   sim_hw_walk.c    the verification without events.
 * Tests may include this header for the formulas (sim_cost_*); nothing else
 * outside sim/hw does.
 */
#ifndef SIM_HW_IMPL_H
#define SIM_HW_IMPL_H

#include "sim_hw.h"

#include "sim/des/sim_des.h"

#include <math.h>
#include <stdio.h>

/* ---- the primitive formulas (closed form, ms; sizes bytes, work FLOPs) ----
 *
 * Flash read of B bytes (sim_flash.c; one FIFO channel, requests of R =
 * request_kb KiB, Q requests kept in flight by the runtime):
 *     t = ( B / read_gbps + ceil(B / R) * request_latency_us / Q ) / eff
 *   Q = 1 is a synchronous reader that pays every request's latency in full;
 *   with Q requests queued (UFS command queueing) the latency of one request
 *   overlaps the transfers of the others.
 *
 * NPU graph execution over r rows (sim_npu.c; static shapes S = npu_shapes,
 * ascending): rows are padded to the smallest shape >= r; above the largest
 * shape Smax the work runs as ceil(r / Smax) executions of Smax rows.  Each
 * execution pays
 *     launch_us + sync_us + max( W / npu_gbps , p * F / npu_gflops )
 *   (a roofline: reading the operation's weights and KV, W bytes, once per
 *   execution, against the padded rows p times F FLOPs per row), all / eff.
 *   Padded rows cost compute like real ones: the graph cannot skip them.
 *
 * CPU operation over r rows (sim_cpu.c; no padding, no launch):
 *     t = max( W / cpu_gbps , r * F / cpu_gflops ) / eff
 *
 * Unit conventions: x_gbps * 1e6 = bytes per ms; x_gflops * 1e6 = FLOPs per ms.
 */

double sim_cost_flash_q_ms(const sim_device *d, double bytes, double eff, int32_t queue_depth);
/* Rows per execution after padding; *execs (may be NULL) gets the execution
 * count.  rows <= 0 gives 0 and *execs = 0. */
int32_t sim_cost_npu_pad(const sim_device *d, int32_t rows, int32_t *execs);
double sim_cost_npu_ms(const sim_device *d, int32_t rows, double bytes, double flops_per_row,
                       double eff);
/* sim_cost_npu_ms once the rows are padded: p rows per execution, execs
 * executions (sim_cost_npu_pad's result for the rows). */
double sim_cost_npu_exec_ms(const sim_device *d, int32_t p, int32_t execs, double bytes,
                            double flops_per_row, double eff);
double sim_cost_cpu_ms(const sim_device *d, int32_t rows, double bytes, double flops_per_row,
                       double eff);

typedef struct sim_sim { /* a DES with the three resources */
    sim_des *des;
    sim_res *flash, *npu, *cpu;
    uint8_t *ready;     /* L + 1 op flags */
    uint8_t *slow_read; /* L + 1 contention flags */
    int64_t *read_end;  /* L + 1 read completion times */
} sim_sim;

/* What verify_walk prices for a verification shape apart from its context
 * length (the layers' graphs padded, the head, the set-up), for the last
 * shapes it met: a slot per rows % SIM_HWI_MEMO, keyed by every field it
 * depends on.  A hit gives the very numbers a miss computes. */
#define SIM_HWI_MEMO 8
typedef struct sim_hwi_memo {
    int valid;
    sim_verify_shape key; /* ctx_len 0; rows_after_exit = rows without an exit layer */
    double slow;
    int32_t p_a, execs_a, p_b, execs_b; /* padded graphs of rows and of final rows */
    int64_t head_ns, kv_ns;
} sim_hwi_memo;

struct sim_hw {
    sim_hw_inputs in; /* as created (sim_hw_get_inputs); dev, tgt, dft copy its parts */
    sim_device dev;
    sim_model tgt, dft;
    int has_draft;
    sim_hw_memory mem;
    /* derived constants */
    int32_t L, pinned;
    double layer_bytes, head_bytes, kv_layer_bytes, kv_token_bytes;
    double stream_layer_bytes; /* what a streamed layer's read carries (sim_hwi_stream_layer_bytes) */
    double layer_flops, head_flops;                /* per row, excluding attention */
    double attn_flops_per_tok;                     /* per row per attended token per layer */
    int64_t layer_read_ns, head_read_ns;           /* baseline runtime */
    int64_t spec_layer_read_ns, spec_head_read_ns; /* speculative runtime */
    /* what every verification streams: reads, bytes (summed in op order, as
     * the event simulation sums them), read time per runtime (sim_runtime) */
    int32_t stream_reads;
    double stream_bytes;
    int64_t stream_ns[2];
    double tree_setup_ms; /* sim_hw_tree_setup_ms: the same for every cycle */
    double d_bytes, d_flops, d_kv_bytes, d_attn_flops_per_tok;
    double d_head_bytes, d_head_flops; /* the draft's LM head (part of d_bytes, d_flops) */
    sim_sim main, scratch;
    uint8_t *ready;    /* 4 * (L + 1): main's and scratch's ready, then their slow_read */
    int64_t *read_end; /* 2 * (L + 1): main's, then scratch's */
    int broken;        /* a cycle failed mid-way (out of memory): refuse further cycles */
    int64_t gen_t0_ns; /* main clock at the start of the current generation (thermal) */
    sim_hw_span_fn span_fn;
    void *span_ctx;
    int events_always; /* sim_hw_set_events_always */
    sim_hwi_memo memo[SIM_HWI_MEMO];
};

/* 1 when the runtime runs every compute on the CPU (verify_unit = cpu,
 * sim_hw.h "Two runtimes"): the target's layers and head, and every draft
 * call whatever unit it names. */
static inline int sim_hwi_cpu_only(const sim_hw *hw)
{
    return hw->dev.verify_unit == SIM_VERIFY_CPU;
}

/* 1 when a draft call naming unit runs on the NPU resource. */
static inline int sim_hwi_on_npu(const sim_hw *hw, eng_unit unit)
{
    return unit == ENG_UNIT_NPU && !sim_hwi_cpu_only(hw);
}

/* Rows per execution of a verification pass of `rows` rows, *execs the
 * executions: on the NPU the graph rows (sim_hw_verify_graph_rows) padded to
 * npu_shapes; on the CPU the rows themselves in one pass. */
int32_t sim_hwi_verify_pad(const sim_hw *hw, int32_t rows, int32_t *execs);

/* Bytes one execution of a draft part reads: weights (without or only the LM
 * head) and, unless it is the head alone, the KV over ctx_len. */
double sim_hwi_draft_part_bytes(const sim_hw *hw, int32_t ctx_len, int32_t part);

/* sim_hw_layer_npu_ms once the verification graph is padded (p rows per
 * execution, execs executions). */
double sim_hwi_layer_npu_pad_ms(const sim_hw *hw, int32_t p, int32_t execs, int32_t ctx_len);

/* llround(ms * 1e6): halves away from zero.  Below 2^52 in magnitude the
 * fraction x - trunc(x) is exact, so comparing it with one half rounds as
 * llround does, without the library call (several per cycle). */
static inline int64_t sim_hwi_ms_to_ns(double ms)
{
    double x = ms * 1e6;
    if (!(fabs(x) < 4503599627370496.0)) return (int64_t)llround(x);
    int64_t i = (int64_t)x;
    double f = x - (double)i;
    return i + (f >= 0.5) - (f <= -0.5);
}

/* What a finished cycle measured, however it was run. */
typedef struct cyc_sum {
    int64_t t0, t_draft_end, t_verify_end, t1;
    int64_t flash_ns, npu_ns, cpu_ns, idle_ns, kv_ns, events;
    double flash_bytes, slow;
    int32_t ov_done;
    int64_t ov_busy_ns;
} cyc_sum;

enum { WALK_RING = 16 }; /* > the largest prefetch depth (sim_device_check: 8) */

/* Gated overlapping calls placed in a verification's gaps (overlap_fill). */
typedef struct walk_ov {
    const sim_overlap *ov;
    int32_t next;   /* the next call to start */
    int32_t dur_of; /* the call whose duration dur holds, -1 none */
    int64_t dur;
} walk_ov;

/* The verification of *v from t0 without events (sim_hw_walk.c), its loader's
 * first reads issued at t_read <= t0 (t0, or the cycle's start with
 * read_during_draft): its end, with what the event simulation would account
 * added to *w; ov places gated overlapping calls in its gaps (NULL: none).
 * -1 when it cannot be walked. */
int64_t sim_hwi_verify_walk(sim_hw *hw, const sim_verify_shape *v, double slow, int64_t t0,
                            int64_t t_read, cyc_sum *w, walk_ov *ov);

/* Copies msg into err (err NULL or n 0: nothing). */
static inline void sim_hwi_set_err(char *err, size_t n, const char *msg)
{
    if (err && n) snprintf(err, n, "%s", msg);
}

/* ---- shared between the files (each declared where it is defined) ---- */

/* sim_hw_memory.c: the accounting sim_hw_create does before it creates
 * anything.  draft may be NULL.  Returns SIM_OK, SIM_CONFIG_NOFIT (out
 * filled) or SIM_CONFIG_INVALID; a one-line message goes to err (may be
 * NULL) on failure. */
int sim_hwi_memory_plan(const sim_device *dev, const sim_model *target, const sim_model *draft,
                        double dram_fraction, int32_t max_ctx_tokens, sim_hw_memory *out, char *err,
                        size_t errlen);

/* sim_flash.c: the read times per runtime and what every verification
 * streams (stream_reads, stream_bytes, stream_ns), from the handle's sizes. */
void sim_hwi_flash_derive(sim_hw *hw);

/* What one streamed layer of t's read carries: the layer as stored, or, on
 * a loader that reads reduced-precision versions (d->stream_bits below the
 * model's weight_bits; STI's shards), the same weights at that width.
 * Pinned layers, the head and every compute keep the model's width. */
double sim_hwi_stream_layer_bytes(const sim_device *d, const sim_model *t);

/* The loader of one verification: its ring of prefetch + 1 buffers and its
 * read times (sim_flash.c). */
typedef struct sim_hwi_ring {
    int32_t prefetch;
    int64_t layer_read_ns, head_read_ns;
} sim_hwi_ring;

/* Fills *ring for the runtime that streams *v; returns that runtime
 * (sim_hw_stream_runtime, an index of stream_ns). */
int32_t sim_hwi_loader(const sim_hw *hw, const sim_verify_shape *v, sim_hwi_ring *ring);

/* The ring's rule for a streamed op (sim_flash.c), pinned layers before it:
 * the op whose compute must have ended -- freeing a buffer -- before op's
 * read is issued, or -1 when it is one of the ring's first prefetch + 1
 * streamed ops, read at once.  The event-driven cycle and the walk both
 * schedule reads by it. */
static inline int32_t sim_hwi_ring_wait(int32_t op, int32_t pinned, int32_t prefetch)
{
    return op - pinned > prefetch ? op - 1 - prefetch : -1;
}

/* sim_cpu.c: the CPU-only runtime's passes.  Rows per pass (no padding, one
 * pass: *execs = 1, or 0 for no rows); a target layer's pass over rows
 * reading bytes with flops per row; the eager head as one batched GEMM. */
int32_t sim_hwi_cpu_verify_pad(int32_t rows, int32_t *execs);
double sim_hwi_cpu_layer_ms(const sim_hw *hw, int32_t rows, double bytes, double flops);
double sim_hwi_cpu_head_batch_ms(const sim_hw *hw, int32_t rows);

/* sim_draft.c: the draft's sizes and FLOPs (nothing without a draft). */
void sim_hwi_draft_derive(sim_hw *hw);

/* sim_thermal.c: the next cycle's compute service-time factor: 1, or 1 / (1
 * - thermal_throttle) once the generation has run past the onset. */
double sim_hwi_cycle_slow(const sim_hw *hw);

/* sim_energy.c: bytes the compute of calls and *v (NULL: none) moves
 * through DRAM, flash reads apart: weights and KV read once per NPU
 * execution or CPU pass, each on-demand head row a full head read, the KV
 * rows of temporary sequences read and written; and a cycle's energy from
 * its times and dram_bytes. */
double sim_hwi_dram_bytes(const sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                          const sim_verify_shape *v);
double sim_hwi_energy_mj(const sim_device *d, const sim_cycle_time *o);

#endif
