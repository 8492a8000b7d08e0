/*
 * sim_energy.c -- a cycle's DRAM traffic and energy (semantics in sim_hw.h,
 * "Energy"): base power over the wall time, each resource's active power over
 * its busy time and idle power over the rest, and a cost per GB moved through
 * DRAM.  Energy never changes a time.
 */
#include "sim_hw_impl.h"

double sim_hwi_dram_bytes(const sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                          const sim_verify_shape *v)
{
    double b = 0.0;
    int32_t execs;
    for (int32_t i = 0; i < n_calls; i++) {
        double call = sim_hwi_draft_part_bytes(hw, calls[i].ctx_len, calls[i].part);
        if (sim_hwi_on_npu(hw, calls[i].unit)) {
            sim_cost_npu_pad(&hw->dev, calls[i].rows, &execs);
            call *= execs;
        }
        b += call;
    }
    if (!v) return b;
    double layer = hw->layer_bytes + (double)v->ctx_len * hw->kv_layer_bytes;
    int32_t final_rows = v->exit_layer >= 0 ? v->rows_after_exit : v->rows;
    int32_t before = v->exit_layer >= 0 ? v->exit_layer + 1 : hw->L;
    sim_hwi_verify_pad(hw, v->rows, &execs);
    b += (double)before * execs * layer;
    sim_hwi_verify_pad(hw, final_rows, &execs);
    b += (double)(hw->L - before) * execs * layer;
    if (v->proj == ENG_PROJ_EAGER_NPU) {
        b += (double)execs * hw->head_bytes;
    } else {
        b += (double)v->proj_rows * hw->head_bytes;
    }
    if (v->leaves > 1) b += 2.0 * v->leaves * (double)v->rows * hw->kv_token_bytes;
    if (hw->dev.verify_kv_snapshot && sim_hw_pays_setup(hw, v))
        b += 2.0 * (double)v->ctx_len * hw->kv_token_bytes;
    return b;
}

/* W x ms = mJ; J/GB x bytes / 1e9 = J = 1e3 mJ. */
double sim_hwi_energy_mj(const sim_device *d, const sim_cycle_time *o)
{
    double w = o->cycle_ms;
    return d->base_w * w + d->flash_active_w * o->flash_ms + d->flash_idle_w * (w - o->flash_ms) +
           d->npu_active_w * o->npu_ms + d->npu_idle_w * (w - o->npu_ms) +
           d->cpu_active_w * o->cpu_ms + d->cpu_idle_w * (w - o->cpu_ms) +
           d->dram_j_per_gb * o->dram_bytes * 1e-6;
}
