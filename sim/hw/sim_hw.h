/*
 * sim_hw.h -- the phone model: DRAM residency plus a timed speculative cycle.
 *
 * A sim_hw joins a device, a flash-resident target and an optional DRAM-resident
 * draft.  It owns a discrete-event simulation (sim_des) with three FIFO
 * resources -- FLASH (one read channel), NPU, CPU -- and a persistent virtual
 * clock.  The replay loop calls sim_hw_cycle() once per speculative cycle.
 *
 * Where each part is modelled (sim/hw): sim_flash.c the flash reads and the
 * loader's ring of buffers; sim_npu.c NPU graphs (padding, launch / sync,
 * npu_call_us) and the target on its verifying unit; sim_cpu.c CPU passes
 * and the CPU-only runtime; sim_draft.c draft calls; sim_runtime.c the tree
 * set-up and KV management; sim_hw_memory.c residency and the budget;
 * sim_energy.c and sim_thermal.c; the cycle itself in sim_hw.c (events) and
 * sim_hw_walk.c (without events).
 *
 * DRAM residency and accounting (sim_hw_memory; GB = 1e9 bytes):
 *   - the first floor(x * L) target layers are pinned in DRAM (x =
 *     dram_fraction in [0, 1]); the others are streamed from flash at every
 *     verification;
 *   - LM head placement: with tied embeddings the shared embedding/LM-head
 *     matrix is always DRAM-resident (every token needs an embedding row, and
 *     the rows are the head's); an untied LM head is resident when the runtime
 *     keeps it (head_resident), else streamed like a layer after the last
 *     layer, unless all L layers are pinned and pin_head is set.  An untied
 *     input embedding stays in flash and is read one row per token (a few KB:
 *     neglected);
 *   - streaming buffers: one layer-sized buffer per layer in flight,
 *     min(prefetch_layers + 1, streamed layers), plus one head-sized buffer when
 *     the head is streamed (with pin_head = 0 an untied head is always streamed);
 *   - KV caches of target and draft for max_ctx_tokens;
 *   - the draft's weights (layers, fusion, LM head), always resident.
 *   The sum must not exceed the device's dram_budget_gb, the memory left to the
 *   LLM runtime (Lever §2.1: far below physical DRAM, which the OS and apps
 *   share), else sim_hw_create
 *   returns SIM_CONFIG_NOFIT with the numbers in the message.
 *
 * One cycle (sim_hw_cycle), all on the virtual clock, starting at sim_hw_now():
 *   1. draft calls, serially, each one forward of `rows` nodes of the whole
 *      draft on its unit (CPU or NPU; sim_draft.c; the draft reads its weights
 *      and its KV over ctx_len from DRAM);
 *   2. verification (if a shape is given):
 *      - KV / temporary-sequence management on the CPU: with leaves > 1 every
 *        leaf gets a temporary sequence: per leaf, the KV of the tree rows is
 *        copied (rows * KV bytes per token / cpu_gbps) plus kv_seq_us fixed
 *        overhead.  A single chain (leaves = 1) runs in place: no cost.  It runs
 *        while the flash channel fetches the first layers; layer 0 waits for it;
 *      - layers 0..L-1 on the NPU (on the CPU with verify_unit = cpu: "Two
 *        runtimes"), one graph execution each, rows through
 *        layer exit_layer and rows_after_exit after it; each layer reads its
 *        weights plus the KV over ctx_len and attends over ctx_len + rows;
 *      - streaming, by the runtime's loader: the streamed ops (layers
 *        pinned..L-1, then the head as op L unless it is resident) take turns
 *        in a ring of prefetch_layers + 1 buffers.  The first prefetch + 1 of
 *        them are read at once -- when the verification starts, or when the
 *        cycle starts with read_during_draft -- and a later op i once the
 *        compute of op i - 1 - prefetch has freed its buffer (prefetch 0 and
 *        nothing pinned: read, compute, read, ...: verify = compute + I/O
 *        exactly; with pinned layers the first streamed read runs while they
 *        compute).  Reads are FIFO on the flash channel; pinned ops need no
 *        read; the compute of op i waits for its read, for op i - 1 and for
 *        the verification's start;
 *      - output projection by proj mode: EAGER_NPU: one NPU execution of the
 *        head over all final rows; ONDEMAND_CPU: proj_rows sequential CPU GEMVs
 *        of the head; ONDEMAND_NPU: proj_rows NPU executions of one row each.
 *   The cycle returns when the last event has fired; the clock is then at the
 *   cycle's end.  The breakdown reports wall times and per-resource busy times.
 *
 * The runtime.  How the phone's inference runtime streams weights and drives
 * the NPU is a property of the runtime, not of the silicon, so its mechanisms
 * are device keys (each cited in the device profile), and one runtime serves
 * every policy -- Flash-AR verifies one row with the same runtime that verifies
 * a tree:
 *   - prefetch_layers / queue_depth: how far reads run ahead of compute and how
 *     many flash requests are kept in flight (Lever Table 1: compute + I/O =
 *     total, i.e. 0 and 1 on the OnePlus 12);
 *   - npu_shapes: the compiled graph row counts (padding); verify_min_rows: the
 *     smallest compiled multi-row verification graph (a 2-row verification runs
 *     at least that many rows; one row uses the decode graph);
 *   - launch_us + sync_us per graph execution; npu_gflops per padded row;
 *   - head_resident: whether the runtime keeps the LM head in DRAM;
 *   - read_during_draft: whether the loader reads while the cycle drafts;
 *   - the tree set-up (below), and per leaf the tree rows' KV copy at cpu_gbps
 *     plus kv_seq_us (temporary sequences) -- the "KV / temporary-sequence
 *     management" above;
 *   - npu_call_us: what a stand-alone NPU call issued by CPU-side control flow
 *     (a draft call, an on-demand head row) pays on top of its graph.
 *
 * The set-up.  What a tree verification costs on the CPU before its first layer
 * beyond its rows, by mechanism (device keys, each 0 = not charged; the profile
 * cites each magnitude):
 *   verify_setup_us                   a constant per verification: switching to
 *                                     the tree graph, the tree mask and positions,
 *                                     batch and KV bookkeeping, the merge;
 *   verify_setup_streamed_us_per_gb   per GB of weights the verification streams:
 *                                     re-laying out freshly read weights into the
 *                                     NPU's buffers (gone when the target is pinned);
 *   verify_setup_resident_us_per_gb   per GB of weights resident in DRAM (pinned
 *                                     layers, a resident head);
 *   verify_setup_layer_us             per streamed op (layer, streamed head):
 *                                     mapping or preparing each fresh buffer;
 *   verify_graph_us                   per target graph run in a tree shape (L +
 *                                     1 of them): switching each layer's graph
 *                                     to the tree's shape, binding its buffers;
 *   verify_row_us                     per verified row: its mask row, position
 *                                     and the gather of its hidden state;
 *   verify_kv_snapshot                a copy of the target's KV over the
 *                                     context (read and written at cpu_gbps):
 *                                     the state rejected rows roll back to.
 * Streamed plus resident are the whole target, so equal per-GB costs are a
 * set-up that scales with the target's weights whatever the DRAM fraction.
 * Who pays: every verification of 2+ rows; one of a single row only with
 * verify_setup_one_row = 1 and only when it is a tree (decode = 0: the cycle
 * drafted and kept the root alone); a plain decode step (decode = 1: Flash-AR,
 * an autoregressive fallback) never pays.  The parts are charged together
 * before layer 0 (on the CPU, while the first read runs): with this phone's
 * serial runtime (prefetch 0) only the sum matters.
 * verify_overlap = 1: every tree verification (decode = 0) streams with the
 * spec_* keys -- the verification pipeline overlaps each layer's read with the
 * compute before it (Lever §4.4 speaks of layer-wise compute/I/O overlap) --
 * while a plain decode step keeps prefetch_layers / queue_depth (Table 1).
 * pin_head = 0: the DRAM fraction pins layers only; an untied LM head stays
 * streamed even with every layer pinned.
 * SIM_RUNTIME_SPEC is an alternative runtime of the same phone, the spec_*
 * keys (reads spec_prefetch_layers ahead, spec_queue_depth requests in
 * flight): a what-if that a point selects with runtime = "speculative".
 * DRAM accounting sizes the streaming buffers for the larger of the two
 * prefetch depths.
 *
 * Two runtimes: where the target verifies (device key verify_unit).
 *   npu (the default): the target's layers and an eager head run as static
 *     NPU graphs -- padded to npu_shapes, at least verify_min_rows rows from 2
 *     rows on, launch_us + sync_us per execution, at npu_gbps / npu_gflops --
 *     and draft calls run on the unit they name.
 *   cpu: a CPU-only runtime (llama.cpp on the phone's cores): every compute
 *     of the cycle is a CPU service at the CPU's rates, charged to cpu_ms and
 *     never to npu_ms.  A layer over r rows is one batched pass,
 *         max( (W + ctx x KV) / cpu_gbps , r x F / cpu_gflops ) / cpu_efficiency
 *     (sim_cpu.c's formula, the one CPU drafting uses) with F the
 *     layer's FLOPs per row plus attention over ctx + r: no padding (any
 *     batch size runs as it is), no smallest graph, no launch or sync.  The
 *     eager head is one batched pass over the final rows; the on-demand
 *     modes are proj_rows GEMVs (ONDEMAND_NPU as ONDEMAND_CPU: there is no
 *     NPU call).  A draft call naming the NPU runs on the CPU at the CPU's
 *     price: the runtime has no NPU path, so the NPU keys are read by
 *     nothing.  The draft and the target share the cores: they serialise on
 *     the CPU resource, FIFO, one service at a time (llama.cpp runs one graph
 *     at a time over all its threads), so a cycle's cpu_ms never exceeds its
 *     wall time.  An overlapping draft call ("Overlap") therefore never
 *     computes beside a target layer: ungated it queues with the layers (the
 *     runtime's contention_compute, a sharing slowdown, is 1 there); gated it
 *     runs only while the target waits for its weights from flash, when the
 *     cores are idle.
 *   The set-up keys, the KV management and the loader keys apply unchanged.
 *
 * Memory-mapped weights (the cpu runtime's loader, in the existing keys): the
 * streamed layers are not read by a loader but paged in by faults as the
 * compute touches them.  Each fault reads request_kb (the block device's
 * readahead, read_ahead_kb) and pays request_latency_us; each compute thread
 * has one fault in flight, so queue_depth is the thread count and the flash
 * formula (sim_flash.c) divides the latency by it; nothing reads ahead
 * of the compute (prefetch_layers = 0, read_during_draft = 0): a layer's
 * pages arrive, then it computes -- the fine-grained interleaving within a
 * layer is priced as read-then-compute, an upper bound that differs from it
 * by at most the layer's compute (a few percent where the reads dominate).
 * The page cache between verifications: dram_fraction is the share of the
 * target's layers the page cache keeps (the first floor(x L), accounted in
 * the budget as pinned layers; never faulted); the rest faults in at every
 * verification.  x = 0 is strict LRU with a target larger than the cache: a
 * sequential pass evicts what the next pass needs first, so nothing
 * survives (LRU's failure on loops larger than the cache: Jiang and Zhang,
 * LIRS, SIGMETRICS 2002).  x > 0 is Linux's two-list page cache: pages used
 * twice sit on the active list, and a refault whose distance exceeds it is
 * not activated, so a scan larger than memory streams through the inactive
 * list and leaves the active set in place (mm/workingset.c, "thrash
 * detection-based file cache sizing", Linux 3.15): the part of the target
 * that fits beside the draft and the KV caches stays.  The one streaming
 * buffer is the layer being computed (its pages must stay mapped until it
 * finishes).
 *
 * Energy (per cycle, mJ = W x ms; device power states, all 0 = not modelled):
 *     energy = base_w x wall
 *            + sum over r in {flash, npu, cpu} of
 *                  r_active_w x busy_r + r_idle_w x (wall - busy_r)
 *            + dram_j_per_gb x dram_bytes / 1e9
 *   dram_bytes counts what the compute reads (the draft's weights and KV per
 *   call -- per NPU execution when the call runs as several --, each layer's
 *   weights and KV per NPU execution, the head per eager execution or per
 *   on-demand row, temporary-sequence KV rows read and written) plus the flash
 *   bytes landing in DRAM.  Energy never changes a time.
 *
 * Thermal (device key thermal, off by default): once the virtual clock has run
 * thermal_onset_s past the start of the current generation
 * (sim_hw_generation_start; the replay marks each prompt, assuming the phone
 * cools between prompts), every NPU and CPU service of the next cycle takes
 * 1 / (1 - thermal_throttle) times as long: the clocks, and so the compute
 * throughput, drop by thermal_throttle.  Flash reads are unaffected.  The
 * decision is taken per cycle at its start (a cycle never straddles the
 * onset); power states are unchanged when throttled (energy upper bound).
 *
 * Overlap (sim_cycle_req.overlap; EdgeLLM's provisional generation): draft
 * calls that run while the target verifies.  They start in order once the
 * verification has started, one at a time on their unit (FIFO with the target's
 * work there: on the NPU they delay its layers); with gate set a call starts
 * only while no target compute is issued (EdgeLLM runs the draft only while
 * the target loads weights).  No call starts after the verification has
 * finished; a call in flight then runs to its end, and the cycle ends with it.
 * Contention (EdgeLLM's measurements, device keys): a target compute issued
 * while an overlapping call runs takes contention_compute times as long, a
 * flash read issued then contention_load times as long (decided when the
 * service is issued: an approximation of rate sharing).  verify_ms is the
 * verification's own span; cycle_ms includes an overlapping call's tail.
 * Memory: overlapping drafting may fill DRAM only up to mem_upper_bound x
 * budget (sim_hw_overlap_cap); the runtime caps its tokens by that.
 *
 * KV sharing (device key kv_shared): separate caches by default; shared, the
 * draft writes its cache into the target's region (one memory-mapped region
 * sized for the larger of the two), so the accounting keeps only the larger
 * under kv_target and reports kv_draft as 0.
 *
 * Determinism: integer-ns clock, (time, priority, sequence) event order, no
 * randomness.  Cost: allocation-free after sim_hw_create; ~2 events per layer
 * (on sim_lite), or an O(L) walk -- O(1) with prefetch 0 and no overlap --
 * for a cycle without overlap or with gated overlap (sim_hw_set_events_always).
 * Threading: a sim_hw is single-threaded; make one per worker.
 */
#ifndef SIM_HW_H
#define SIM_HW_H

#include "sim_device.h"
#include "sim_model.h"
#include "engine/eng_oracle.h"
#include "engine/eng_policy.h"
#include "sim/sim_status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sim_hw sim_hw;

/* DRAM accounting categories (enum only grows). */
typedef enum sim_mem_cat {
    SIM_MEM_DRAFT = 0,     /* draft weights */
    SIM_MEM_PINNED = 1,    /* pinned target layers */
    SIM_MEM_HEAD = 2,      /* DRAM-resident target LM head / tied embedding */
    SIM_MEM_KV_TARGET = 3, /* target KV cache at max_ctx_tokens */
    SIM_MEM_KV_DRAFT = 4,  /* draft KV cache at max_ctx_tokens */
    SIM_MEM_BUFFERS = 5,   /* streaming buffers (layers in flight + streamed head) */
    SIM_MEM_NCAT = 6
} sim_mem_cat;

typedef struct sim_hw_memory {
    double bytes[SIM_MEM_NCAT];
    double total_bytes;      /* sum of bytes[] */
    double budget_bytes;     /* dram_budget_gb * 1e9 */
    int32_t layers;          /* target layers L */
    int32_t resident_layers; /* floor(x * L) */
    int32_t streamed_layers; /* L - resident_layers */
    int32_t buffers;         /* layer-sized streaming buffers */
    int32_t head_resident;   /* 1: LM head in DRAM; 0: streamed each verification */
    double streamed_bytes;   /* flash bytes read per verification */
} sim_hw_memory;

/* Stable name of a category ("draft", "pinned", "head", "kv_target", ...). */
const char *sim_mem_cat_name(sim_mem_cat c);

/* Creates the phone model.  dev, target, draft (NULL = none) are copied.
 * dram_fraction in [0, 1]; max_ctx_tokens >= 1 sizes the KV caches.
 * Returns SIM_OK and *out (free with sim_hw_destroy), or an error code with
 * a one-line message in err and *out = NULL. */
int sim_hw_create(const sim_device *dev, const sim_model *target, const sim_model *draft,
                  double dram_fraction, int32_t max_ctx_tokens, sim_hw **out, char *err,
                  size_t errlen);

void sim_hw_destroy(sim_hw *hw); /* NULL-safe */

/* Copies the DRAM accounting into *out. */
void sim_hw_get_memory(const sim_hw *hw, sim_hw_memory *out);

/* What a phone model was created from: every argument of sim_hw_create, so
 * that two handles with equal inputs price everything alike.  Padding and an
 * absent draft are zero bytes: inputs compare as bytes (a memo's key). */
typedef struct sim_hw_inputs {
    sim_device device;
    sim_model target;
    sim_model draft; /* zero when has_draft is 0 */
    double dram_fraction;
    int32_t has_draft;
    int32_t max_ctx_tokens;
} sim_hw_inputs;

/* Copies the handle's inputs into *out (whole, padding included). */
void sim_hw_get_inputs(const sim_hw *hw, sim_hw_inputs *out);

/* Borrowed views, valid for the handle's lifetime. */
const sim_device *sim_hw_device(const sim_hw *hw);
const sim_model *sim_hw_target(const sim_hw *hw);
const sim_model *sim_hw_draft(const sim_hw *hw); /* NULL when none */

/* Virtual clock, ns since creation. */
int64_t sim_hw_now(const sim_hw *hw);

/* ---- one speculative cycle ---- */

/* Which part of the draft a call runs (enum only grows; 0 = the whole forward). */
typedef enum sim_draft_part {
    SIM_DRAFT_FULL = 0, /* fusion + layers + LM head */
    SIM_DRAFT_BODY = 1, /* fusion + layers: stops at the hidden states */
    SIM_DRAFT_HEAD = 2  /* the LM head alone over `rows` hidden states (one GEMM) */
} sim_draft_part;

typedef struct sim_draft_call {
    eng_unit unit;   /* CPU or NPU */
    int32_t rows;    /* nodes expanded in this forward, >= 1 */
    int32_t ctx_len; /* committed context tokens the draft attends over, >= 0 */
    int32_t part;    /* sim_draft_part, 0 = FULL */
} sim_draft_call;

typedef struct sim_verify_shape {
    int32_t rows;            /* rows through the layers (root included), >= 1 */
    int32_t leaves;          /* leaves of the verified tree, [1, rows] */
    int32_t ctx_len;         /* committed context tokens, >= 0 */
    int32_t exit_layer;      /* -1 none, else [0, L-1]: rows_after_exit continue after it */
    int32_t rows_after_exit; /* [1, rows]; ignored when exit_layer == -1 */
    eng_proj_mode proj;      /* where the LM head runs */
    int32_t proj_rows;       /* on-demand modes: rows projected (accepted path + 1), >= 1 */
    int32_t runtime;         /* sim_runtime: BASELINE (0, the device's runtime) or SPEC */
    int32_t decode;          /* 1: a plain decode step (one row, nothing drafted): never pays
                                a tree verification's set-up ("The set-up"); 0: a tree */
} sim_verify_shape;

/* Which runtime streams the weights of a verification (see "The runtime"):
 * BASELINE is the device's runtime, SPEC its spec_* alternative. */
typedef enum sim_runtime { SIM_RUNTIME_BASELINE = 0, SIM_RUNTIME_SPEC = 1 } sim_runtime;

typedef struct sim_cycle_time {
    double cycle_ms;   /* wall time of the cycle */
    double draft_ms;   /* wall time of the draft phase */
    double verify_ms;  /* wall time of the verification */
    double flash_ms;   /* busy time of the flash channel within the cycle */
    double npu_ms;     /* busy time of the NPU */
    double cpu_ms;     /* busy time of the CPU (draft, KV management, CPU head) */
    double kv_ms;      /* part of cpu_ms spent on KV / temporary sequences */
    double idle_ms;    /* wall time with no resource busy */
    double overlap_ms; /* flash + npu + cpu - (cycle - idle): time saved by overlap */
    double flash_bytes;
    int64_t t0_ns, t1_ns;    /* cycle start and end on the clock */
    int64_t events;          /* DES events fired */
    double dram_bytes;       /* bytes moved through DRAM: compute reads + flash reads landing */
    double energy_mj;        /* energy of the cycle ("Energy"), mJ */
    int32_t throttled;       /* 1: NPU/CPU ran throttled in this cycle ("Thermal") */
    int32_t overlap_calls;   /* overlapping draft calls that ran ("Overlap") */
    double overlap_draft_ms; /* their busy time (part of cpu_ms / npu_ms) */
} sim_cycle_time;

/* Marks the start of a generation (a prompt) on the clock: the thermal onset
 * counts from here.  sim_hw_create marks clock 0. */
void sim_hw_generation_start(sim_hw *hw);

/* Draft calls that overlap a verification ("Overlap"), in order. */
typedef struct sim_overlap {
    const sim_draft_call *calls;
    int32_t n_calls;
    int32_t gate; /* 1: a call starts only while no target compute is issued */
} sim_overlap;

/* One cycle to run or to price (zero-initialised fields: none, off). */
typedef struct sim_cycle_req {
    const sim_draft_call *calls; /* draft calls before the verification, in order */
    int32_t n_calls;
    const sim_verify_shape *verify; /* the verification; NULL: none */
    sim_overlap overlap;            /* draft calls overlapping the verification ("Overlap");
                                       n_calls 0: none; needs a verification */
    double *call_ms;                /* NULL, or n_calls entries: each draft call's latency */
    int32_t price;      /* 0: on the phone's clock, which the cycle advances, reporting each
                           service to the span hook; 1: priced on a private scratch simulation --
                           the same numbers, but the clock does not move and no spans are
                           emitted (offline cost profiles, a verification priced alone) */
    int32_t walls_only; /* 1: only the wall times (cycle_ms, draft_ms, verify_ms) are filled,
                           the rest of *out is 0: for a caller that only adds up time (the
                           replay's standing variants, its waste and calibration tables);
                           the same times, the same effect on the clock */
    int32_t accepted;   /* 1: a phone model of the same target and draft has just accepted these
                           calls, shape and overlap (returned SIM_OK for them): they are not
                           checked again -- whether they are valid depends on the models, not
                           on the phone.  The replay prices its standing variants this way */
} sim_cycle_req;

/* Runs one cycle (the one entry point): req->calls in order, then the
 * verification of req->verify with req->overlap's calls beside it; *out (may
 * be NULL) receives its times.  Without price, advances the clock.  Returns
 * SIM_OK, or SIM_CONFIG_INVALID (nothing simulated, clock unchanged) for a
 * bad shape or call, or SIM_NOMEM.  A cycle without draft calls and without
 * overlap, priced with walls_only, is the verification alone: a recurrence
 * with exactly the cycle's semantics and rounding, O(L) arithmetic. */
int sim_hw_cycle(sim_hw *hw, const sim_cycle_req *req, sim_cycle_time *out);

/* How cycles are run.  Without a span hook, a cycle without overlapping draft
 * calls, or with gated ones, is walked as a recurrence (the draft calls back
 * to back, then the verification's reads and layers, gated calls placed in
 * the gaps where the target waits for weights), and one with ungated calls --
 * or a gated call ending exactly when the weights arrive, where the events'
 * order decides -- runs on sim_lite (three
 * resources, no event queue: sim/des/sim_lite.h); every number -- times, busy
 * times, events, bytes, energy, clock -- equals what the general event
 * simulation (sim_des) gives.  With a span hook cycles run on sim_des.  on = 1
 * runs every cycle on sim_des (for tests comparing them); 0 (the default)
 * restores the faster paths. */
void sim_hw_set_events_always(sim_hw *hw, int on);

/* Overlapping draft tokens the memory upper bound allows: (mem_upper_bound x
 * budget - accounted DRAM) / (draft KV + one fp16 hidden-state row per
 * token), 0 when the accounting already exceeds the bound. */
int32_t sim_hw_overlap_cap(const sim_hw *hw);

/* Optional timeline hook: one call per finished service, resource "flash",
 * "npu" or "cpu", label "draft", "kv", "read", "layer", "read_head", "head",
 * "provisional" (an overlapping draft call);
 * index = layer or draft-call index (-1 for none).  Strings are static.  The
 * hook must not call back into this sim_hw. */
typedef void (*sim_hw_span_fn)(void *ctx, const char *resource, const char *label, int32_t index,
                               int64_t t0_ns, int64_t t1_ns);
void sim_hw_set_span_fn(sim_hw *hw, sim_hw_span_fn fn, void *ctx); /* fn NULL = off */

/* ---- derived costs (what `flashspec profile` prints), ms ----
 * The *_npu_ms functions price the target's compute on the unit the runtime
 * verifies on: NPU graphs, or one CPU pass with verify_unit = cpu ("Two
 * runtimes"); sim_hw_draft_ms(NPU) is a CPU call there. */

double sim_hw_layer_read_ms(const sim_hw *hw); /* one streamed target layer (baseline) */
double sim_hw_head_read_ms(const sim_hw *hw);  /* the streamed LM head (baseline) */
double sim_hw_layer_npu_ms(const sim_hw *hw, int32_t rows, int32_t ctx_len);
double sim_hw_head_npu_ms(const sim_hw *hw, int32_t rows); /* one eager execution */
double sim_hw_head_cpu_ms(const sim_hw *hw, int32_t rows); /* rows sequential GEMVs */
double sim_hw_draft_ms(const sim_hw *hw, eng_unit unit, int32_t rows, int32_t ctx_len);
/* One call of a part of the draft (sim_draft_part); FULL = sim_hw_draft_ms.
 * BODY reads the weights without the LM head and the KV; HEAD reads only the
 * LM head and does rows x 2 x vocab x hidden FLOPs (no attention). */
double sim_hw_draft_part_ms(const sim_hw *hw, eng_unit unit, int32_t rows, int32_t ctx_len,
                            int32_t part);
/* CPU time of a verification's set-up and KV / temporary-sequence management
 * ("The set-up"): the tree set-up when the shape pays it, plus, with leaves >
 * 1, per leaf the tree rows' KV copied at cpu_gbps and kv_seq_us. */
double sim_hw_setup_ms(const sim_hw *hw, const sim_verify_shape *v);
/* The runtime whose reads a verification uses: v->runtime, or SPEC for a
 * tree (decode = 0) when the device sets verify_overlap ("The runtime"). */
int32_t sim_hw_stream_runtime(const sim_hw *hw, const sim_verify_shape *v);
/* The tree set-up that is the same for every tree verification of the point,
 * its parts (each ms): the constant, per streamed GB, per resident GB, per
 * streamed op, per tree graph (L + 1 of them).  Returns their sum.  The parts
 * that depend on the shape (per row, the KV snapshot over the context, per
 * leaf) are in sim_hw_setup_ms. */
#define SIM_HW_SETUP_PARTS 5
double sim_hw_tree_setup_ms(const sim_hw *hw, double part_ms[SIM_HW_SETUP_PARTS]);
/* 1 when the verification *v pays a tree's set-up ("The set-up"): 2+ rows, or
 * a drafted one-row tree with verify_setup_one_row. */
int sim_hw_pays_setup(const sim_hw *hw, const sim_verify_shape *v);
/* Rows a verification graph of `rows` rows runs: at least verify_min_rows
 * when rows >= 2 (before padding to npu_shapes); 1 row uses the decode graph;
 * the rows themselves with verify_unit = cpu (no compiled graph). */
int32_t sim_hw_verify_graph_rows(const sim_hw *hw, int32_t rows);
/* Compute time of the output projection of a verification shape by its proj
 * mode (the head's flash read, if streamed, not included). */
double sim_hw_proj_ms(const sim_hw *hw, const sim_verify_shape *v);

#endif
