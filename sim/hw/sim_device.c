/*
 * sim_device.c -- key table and semantic checks of sim_device.
 * Required keys (default NAN) are the ones without a physically neutral value;
 * the rest default to the neutral choice (no request latency, serial streaming).
 */
#include "sim_device.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

static const double default_shapes[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
static const char *const verify_units[] = {"npu", "cpu", NULL};

#define DBL(key, field, lo, hi, def, doc)                                                          \
    {                                                                                              \
        key, ENG_PARAM_DOUBLE, offsetof(sim_device, field), lo, hi, def, NULL, 0, 0, NULL, NULL,   \
            0, doc                                                                                 \
    }

static const eng_param_desc keys[] = {
    {"name", ENG_PARAM_STRING, offsetof(sim_device, name), 0, 0, 0, NULL, SIM_NAME_CAP, 0, "", NULL,
     0, "profile name (informational)"},
    DBL("read_gbps", read_gbps, 1e-3, 100, NAN, "flash streaming read rate, GB/s"),
    DBL("request_kb", request_kb, 4, 1048576, 512, "bytes per flash read request, KiB"),
    DBL("request_latency_us", request_latency_us, 0, 1e5, 0, "fixed cost per flash request, us"),
    {"prefetch_layers", ENG_PARAM_INT, offsetof(sim_device, prefetch_layers), 0, 8, 0, NULL, 0, 0,
     NULL, NULL, 0, "layers flash reads may run ahead of compute (0 = serial)"},
    {"queue_depth", ENG_PARAM_INT, offsetof(sim_device, queue_depth), 1, 64, 1, NULL, 0, 0, NULL,
     NULL, 0, "flash read requests kept in flight"},
    DBL("stream_bits", stream_bits, 0, 32, 0,
        "bits per weight a streamed layer is read at (0 = the model's weight_bits)"),
    DBL("dram_budget_gb", dram_budget_gb, 1e-3, 1024, NAN, "DRAM available to the LLM, GB"),
    DBL("dram_gbps", dram_gbps, 1e-3, 1000, NAN, "peak DRAM bandwidth, GB/s"),
    DBL("npu_gbps", npu_gbps, 1e-3, 1000, NAN, "NPU weight/KV read rate, GB/s"),
    DBL("npu_gflops", npu_gflops, 1e-3, 1e6, NAN, "NPU effective throughput, GFLOP/s"),
    DBL("launch_us", launch_us, 0, 1e6, NAN, "NPU graph launch cost, us"),
    DBL("sync_us", sync_us, 0, 1e6, NAN, "NPU graph completion sync cost, us"),
    {"npu_shapes", ENG_PARAM_INT_LIST, offsetof(sim_device, npu_shapes), 1, 65536, 0, NULL,
     SIM_NPU_SHAPES_MAX, offsetof(sim_device, n_npu_shapes), NULL, default_shapes,
     (int32_t)(sizeof default_shapes / sizeof default_shapes[0]),
     "compiled NPU row counts, ascending"},
    {"verify_min_rows", ENG_PARAM_INT, offsetof(sim_device, verify_min_rows), 1, 65536, 1, NULL, 0,
     0, NULL, NULL, 0, "smallest compiled multi-row verification graph, rows (1 = none)"},
    DBL("verify_setup_us", verify_setup_us, 0, 1e7, 0,
        "fixed CPU cost of a tree verification (mask, batch, KV bookkeeping, merge), us"),
    DBL("npu_call_us", npu_call_us, 0, 1e6, 0,
        "extra cost of a stand-alone NPU call (draft call, on-demand head row), us"),
    DBL("cpu_gbps", cpu_gbps, 1e-3, 1000, NAN, "DRAM bandwidth achieved by the CPU, GB/s"),
    DBL("cpu_gflops", cpu_gflops, 1e-3, 1e6, NAN, "CPU effective throughput, GFLOP/s"),
    DBL("kv_seq_us", kv_seq_us, 0, 1e6, 0, "fixed CPU cost per temporary KV sequence, us"),
    {"spec_prefetch_layers", ENG_PARAM_INT, offsetof(sim_device, spec_prefetch_layers), 0, 8, 0,
     NULL, 0, 0, NULL, NULL, 0,
     "speculative runtime: layers flash reads may run ahead of compute (0 = serial)"},
    {"spec_queue_depth", ENG_PARAM_INT, offsetof(sim_device, spec_queue_depth), 1, 64, 1, NULL, 0,
     0, NULL, NULL, 0, "speculative runtime: flash read requests kept in flight"},
    DBL("base_w", base_w, 0, 100, 0, "device baseline power over the wall time, W"),
    DBL("cpu_active_w", cpu_active_w, 0, 100, 0, "CPU power while busy, W"),
    DBL("cpu_idle_w", cpu_idle_w, 0, 100, 0, "CPU power while idle, W"),
    DBL("npu_active_w", npu_active_w, 0, 100, 0, "NPU power while busy, W"),
    DBL("npu_idle_w", npu_idle_w, 0, 100, 0, "NPU power while idle, W"),
    DBL("flash_active_w", flash_active_w, 0, 100, 0, "flash power while reading, W"),
    DBL("flash_idle_w", flash_idle_w, 0, 100, 0, "flash power while idle, W"),
    DBL("dram_j_per_gb", dram_j_per_gb, 0, 100, 0, "DRAM access energy, J per GB moved"),
    {"thermal", ENG_PARAM_BOOL, offsetof(sim_device, thermal), 0, 1, 0, NULL, 0, 0, NULL, NULL, 0,
     "1: model thermal throttling of NPU and CPU; 0: off"},
    DBL("thermal_onset_s", thermal_onset_s, 0, 1e6, 17.5,
        "generation time after which NPU/CPU clocks throttle, s"),
    DBL("thermal_throttle", thermal_throttle, 0, 0.95, 0.35,
        "share of NPU/CPU throughput lost once throttled"),
    {"kv_shared", ENG_PARAM_BOOL, offsetof(sim_device, kv_shared), 0, 1, 0, NULL, 0, 0, NULL, NULL,
     0, "1: draft and target share one KV cache region (sized for the larger)"},
    DBL("contention_compute", contention_compute, 1, 10, 2.25,
        "target compute slowdown while an overlapping draft call runs"),
    DBL("contention_load", contention_load, 1, 10, 1.07,
        "target flash-read slowdown while an overlapping draft call runs"),
    DBL("mem_upper_bound", mem_upper_bound, 0.01, 1, 0.9,
        "share of the DRAM budget that overlapping drafting may fill"),
    {"verify_setup_one_row", ENG_PARAM_BOOL, offsetof(sim_device, verify_setup_one_row), 0, 1, 0,
     NULL, 0, 0, NULL, NULL, 0,
     "1: a drafted cycle verifying the root alone pays the tree set-up too (plain decode never)"},
    DBL("verify_setup_streamed_us_per_gb", verify_setup_streamed_us_per_gb, 0, 1e7, 0,
        "tree verification set-up per GB of target weights streamed, us"),
    DBL("verify_setup_resident_us_per_gb", verify_setup_resident_us_per_gb, 0, 1e7, 0,
        "tree verification set-up per GB of target weights resident in DRAM, us"),
    DBL("verify_setup_layer_us", verify_setup_layer_us, 0, 1e6, 0,
        "tree verification set-up per streamed target layer (and streamed head), us"),
    {"verify_overlap", ENG_PARAM_BOOL, offsetof(sim_device, verify_overlap), 0, 1, 0, NULL, 0, 0,
     NULL, NULL, 0,
     "1: tree verifications stream as the spec_* runtime (reads ahead of compute); decode does "
     "not"},
    {"pin_head", ENG_PARAM_BOOL, offsetof(sim_device, pin_head), 0, 1, 1, NULL, 0, 0, NULL, NULL, 0,
     "1: an untied LM head is pinned once every layer is; 0: always streamed"},
    {"read_during_draft", ENG_PARAM_BOOL, offsetof(sim_device, read_during_draft), 0, 1, 0, NULL,
     0, 0, NULL, NULL, 0,
     "1: a verification's first reads start with the cycle, while it drafts; 0: with the "
     "verification"},
    {"head_resident", ENG_PARAM_BOOL, offsetof(sim_device, head_resident), 0, 1, 0, NULL, 0, 0,
     NULL, NULL, 0, "1: the runtime keeps an untied LM head in DRAM at every budget"},
    DBL("verify_graph_us", verify_graph_us, 0, 1e6, 0,
        "per target graph run in a tree shape (L + 1 per tree verification), us"),
    DBL("verify_row_us", verify_row_us, 0, 1e6, 0,
        "per verified row of a tree (mask row, position, gather), us"),
    {"verify_kv_snapshot", ENG_PARAM_BOOL, offsetof(sim_device, verify_kv_snapshot), 0, 1, 0, NULL,
     0, 0, NULL, NULL, 0,
     "1: every tree verification copies the target's KV over the context once, at cpu_gbps"},
    {"verify_unit", ENG_PARAM_ENUM, offsetof(sim_device, verify_unit), 0, 1, 0, verify_units, 0, 0,
     NULL, NULL, 0,
     "where the runtime verifies: npu (static graphs) or cpu (every compute on the CPU cores)"},
    {NULL, ENG_PARAM_INT, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};

const eng_param_desc *sim_device_keys(void)
{
    return keys;
}

int sim_device_check(const sim_device *d, char *err, size_t errlen)
{
    if (d->n_npu_shapes < 1) {
        snprintf(err, errlen, "device '%s': npu_shapes is empty", d->name);
        return -1;
    }
    for (int32_t i = 1; i < d->n_npu_shapes; i++) {
        if (d->npu_shapes[i] <= d->npu_shapes[i - 1]) {
            snprintf(err, errlen, "device '%s': npu_shapes must be strictly ascending", d->name);
            return -1;
        }
    }
    if (d->npu_gbps > d->dram_gbps || d->cpu_gbps > d->dram_gbps) {
        snprintf(err, errlen,
                 "device '%s': npu_gbps (%g) and cpu_gbps (%g) cannot exceed dram_gbps (%g)",
                 d->name, d->npu_gbps, d->cpu_gbps, d->dram_gbps);
        return -1;
    }
    if (!(d->read_gbps > 0) || !(d->npu_gflops > 0) || !(d->cpu_gflops > 0) || !(d->npu_gbps > 0) ||
        !(d->cpu_gbps > 0) || !(d->dram_budget_gb > 0)) {
        snprintf(err, errlen, "device '%s': rates and budget must be positive", d->name);
        return -1;
    }
    return 0;
}
