/*
 * sim_device.h -- the phone: parameters of flash, DRAM, NPU and CPU.
 *
 * A sim_device is a plain params struct described by an eng_param_desc table
 * (sim_device_keys), so Lua profiles (configs/devices/NAME.lua) are validated
 * generically: unknown keys, types and ranges.  Units are in the key names.
 * Runtime choices that belong to the phone's inference runtime rather than to
 * silicon (how far flash reads may run ahead of compute, the compiled NPU graph
 * shapes) live here too, because a profile describes "this phone running that
 * runtime".  Cost formulas using these fields are in sim/hw
 * (sim_flash.c, sim_npu.c, sim_cpu.c).
 *
 * Conventions: GB and GB/s are decimal (1e9 bytes); kb is KiB (1024 bytes);
 * GFLOP/s counts a multiply-add as 2 FLOPs.
 */
#ifndef SIM_DEVICE_H
#define SIM_DEVICE_H

#include "engine/eng_param.h"

#include <stdint.h>

#define SIM_NAME_CAP 48

/* Where the runtime runs the target's verification (device key verify_unit;
 * sim_hw.h "Two runtimes"): NPU graphs (the default) or the CPU. */
typedef enum sim_verify_unit { SIM_VERIFY_NPU = 0, SIM_VERIFY_CPU = 1 } sim_verify_unit;
#define SIM_NPU_SHAPES_MAX 96

typedef struct sim_device {
    char name[SIM_NAME_CAP]; /* profile name, informational */
    /* flash channel (one FIFO channel) */
    double read_gbps;          /* streaming read rate, (0, 100] */
    double request_kb;         /* bytes per read request, KiB, [4, 1048576] */
    double request_latency_us; /* fixed cost per request, [0, 1e5] */
    int32_t prefetch_layers;   /* reads may run this many layers ahead of compute, [0, 8];
                                  0 = read-then-compute, strictly serial */
    int32_t queue_depth;       /* flash requests kept in flight, [1, 64]; default 1 */
    double stream_bits;        /* bits per weight a streamed layer is read at, [0, 32]: a
                                  loader reading reduced-precision versions of the streamed
                                  layers (STI's shards); 0, or a width at or above the
                                  model's weight_bits, reads the model as stored */
    /* DRAM */
    double dram_budget_gb; /* DRAM the LLM runtime may use (not physical), (0, 1024] */
    double dram_gbps;      /* peak DRAM bandwidth, (0, 1000] */
    /* NPU (static graphs) */
    double npu_gbps;                        /* weight/KV read rate of an NPU graph, <= dram_gbps */
    double npu_gflops;                      /* effective dense throughput, (0, 1e6] */
    double launch_us;                       /* per graph execution: launch, [0, 1e6] */
    double sync_us;                         /* per graph execution: completion sync, [0, 1e6] */
    int32_t npu_shapes[SIM_NPU_SHAPES_MAX]; /* compiled row counts, ascending */
    int32_t n_npu_shapes;
    int32_t verify_min_rows;   /* smallest compiled multi-row verification graph: a
                                  verification of 2+ rows runs at least this many, [1, 65536];
                                  default 1 (no minimum); 1 row uses the decode graph */
    double verify_setup_us;    /* fixed CPU cost of every tree verification of 2+ rows (tree
                                  mask, positions, batch and KV bookkeeping, merge of the
                                  accepted path), [0, 1e7]; default 0; the parts that scale
                                  are at the end of the struct */
    double npu_call_us;        /* extra cost of a stand-alone NPU call issued by CPU-side
                                  control flow (a draft call, an on-demand head row): request
                                  round trip, input/output transfer, cache maintenance,
                                  [0, 1e6]; default 0 */
    /* CPU */
    double cpu_gbps;   /* DRAM bandwidth the CPU achieves on GEMV/memcpy, <= dram_gbps */
    double cpu_gflops; /* effective dense throughput, (0, 1e6] */
    double kv_seq_us;  /* fixed CPU cost per temporary KV sequence, [0, 1e6] */
    /* the speculative runtime (tree/chain verification, sim_hw.h "Two runtimes");
       the defaults make it identical to the baseline runtime above */
    int32_t spec_prefetch_layers; /* reads may run this many layers ahead, [0, 8]; default 0 */
    int32_t spec_queue_depth;     /* flash requests in flight, [1, 64]; default 1 */
    /* power states (sim_hw.h "Energy"); W, [0, 100]; default 0 = not modelled */
    double base_w;         /* device baseline drawn for the whole wall time */
    double cpu_active_w;   /* CPU cluster while it runs a service */
    double cpu_idle_w;     /* CPU cluster otherwise */
    double npu_active_w;   /* NPU while it runs a graph */
    double npu_idle_w;     /* NPU otherwise */
    double flash_active_w; /* flash device + link while a read is in service */
    double flash_idle_w;   /* flash otherwise */
    double dram_j_per_gb;  /* DRAM access energy per GB moved, J/GB, [0, 100] */
    /* thermal throttling (sim_hw.h "Thermal"), off by default */
    int32_t thermal;         /* 1: model throttling; 0 (default): off */
    double thermal_onset_s;  /* generation time after which clocks drop, s, [0, 1e6] */
    double thermal_throttle; /* fraction of compute throughput lost once throttled, [0, 0.95] */
    /* memory */
    int32_t kv_shared; /* 1: draft and target share one KV region (the larger); 0: separate */
    /* draft work overlapping a verification (sim_hw.h "Overlap") */
    double contention_compute; /* target compute slowdown while a draft call runs, [1, 10] */
    double contention_load;    /* target flash-read slowdown while a draft call runs, [1, 10] */
    double mem_upper_bound;    /* share of dram_budget_gb overlapping drafting may fill, (0, 1] */
    /* the set-up of a tree verification by mechanism (sim_hw.h "The set-up"), on
       top of verify_setup_us; each part defaults to 0 (not charged) */
    int32_t verify_setup_one_row; /* 1: a tree verification of the root alone (a cycle that
                                     drafted, then verifies one row) pays the set-up too; a
                                     plain decode step never does; default 0 */
    double
        verify_setup_streamed_us_per_gb; /* per GB of target weights the verification streams
                                            (re-laying out fresh weights for the NPU), [0, 1e7] */
    double
        verify_setup_resident_us_per_gb; /* per GB of target weights resident in DRAM, [0, 1e7] */
    double verify_setup_layer_us; /* per streamed target op (layer, streamed head), [0, 1e6] */
    int32_t verify_overlap;       /* 1: a tree verification streams as the spec_* runtime does
                                     (reads running ahead of compute); a plain decode step keeps
                                     prefetch_layers / queue_depth; default 0 */
    int32_t pin_head;             /* 1 (default): an untied LM head is pinned once every layer is;
                                     0: the budget pins layers only, the head is always streamed */
    /* the runtime's loader and head placement (sim_hw.h "The runtime") */
    int32_t read_during_draft; /* 1: the loader issues a verification's first reads (as many as
                                  it has buffers for) when the cycle starts, while it drafts;
                                  0 (default): when the verification starts */
    int32_t head_resident;     /* 1: the runtime keeps an untied LM head in DRAM at every
                                  budget (counted in it); 0 (default): pin_head decides */
    /* runtime management of a tree verification by mechanism (sim_hw.h "The set-up");
       each defaults to 0 (not charged) */
    double verify_graph_us;     /* per target graph run in a tree shape (L + 1 per tree
                                   verification): switching the graph to the tree's shape and
                                   binding its buffers, [0, 1e6] */
    double verify_row_us;       /* per verified row of a tree: its mask row, position and the
                                   gather of its hidden state, [0, 1e6] */
    int32_t verify_kv_snapshot; /* 1: every tree verification copies the target's KV over the
                                   committed context once (the state rejected rows roll back
                                   to), read and written at cpu_gbps; 0: none */
    int32_t verify_unit;        /* sim_verify_unit: NPU (default, static graphs) or CPU (the
                                   runtime's every compute on the CPU cores: no padding, no
                                   launch or sync; sim_hw.h "Two runtimes") */
} sim_device;

/* NULL-terminated key table (static, never freed). */
const eng_param_desc *sim_device_keys(void);

/* Semantic checks beyond per-key ranges (shapes ascending, npu/cpu bandwidth
 * <= DRAM peak).  Returns 0, or -1 with a one-line message in err. */
int sim_device_check(const sim_device *d, char *err, size_t errlen);

#endif
