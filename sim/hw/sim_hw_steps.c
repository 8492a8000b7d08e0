/*
 * sim_hw_steps.c -- the latency of each step of a cycle that the phone model
 * derives from the device and model profiles (semantics in sim_hw.h): layer
 * and head reads, NPU and CPU passes, draft calls, the output projection, the
 * verification set-up and KV management.  Pure functions of the handle's
 * constants, used by the cycle (sim_hw.c) and by `flashspec profile`.
 */
#include "sim_hw.h"
#include "sim_hw_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double sim_hw_layer_read_ms(const sim_hw *hw)
{
    return sim_hw_layer_read_rt_ms(hw, SIM_RUNTIME_BASELINE);
}

double sim_hw_head_read_ms(const sim_hw *hw)
{
    return sim_hw_head_read_rt_ms(hw, SIM_RUNTIME_BASELINE);
}

static int32_t runtime_queue(const sim_hw *hw, int32_t runtime)
{
    return runtime == SIM_RUNTIME_SPEC ? hw->dev.spec_queue_depth : hw->dev.queue_depth;
}

double sim_hw_layer_read_rt_ms(const sim_hw *hw, int32_t runtime)
{
    return sim_cost_flash_q_ms(&hw->dev, hw->layer_bytes, hw->tgt.flash_efficiency,
                               runtime_queue(hw, runtime));
}

double sim_hw_head_read_rt_ms(const sim_hw *hw, int32_t runtime)
{
    return sim_cost_flash_q_ms(&hw->dev, hw->head_bytes, hw->tgt.flash_efficiency,
                               runtime_queue(hw, runtime));
}

int32_t sim_hw_verify_graph_rows(const sim_hw *hw, int32_t rows)
{
    if (sim_hwi_cpu_only(hw)) return rows; /* no compiled graph: any batch runs as it is */
    return rows >= 2 && rows < hw->dev.verify_min_rows ? hw->dev.verify_min_rows : rows;
}

int32_t sim_hwi_verify_pad(const sim_hw *hw, int32_t rows, int32_t *execs)
{
    if (sim_hwi_cpu_only(hw)) {
        if (execs) *execs = rows > 0;
        return rows > 0 ? rows : 0;
    }
    return sim_cost_npu_pad(&hw->dev, sim_hw_verify_graph_rows(hw, rows), execs);
}

double sim_hw_layer_npu_ms(const sim_hw *hw, int32_t rows, int32_t ctx_len)
{
    int32_t execs, p = sim_hwi_verify_pad(hw, rows, &execs);
    return sim_hwi_layer_npu_pad_ms(hw, p, execs, ctx_len);
}

double sim_hwi_layer_npu_pad_ms(const sim_hw *hw, int32_t p, int32_t execs, int32_t ctx_len)
{
    /* padded rows attend too: the static graph attends over ctx + padded rows */
    double bytes = hw->layer_bytes + (double)ctx_len * hw->kv_layer_bytes;
    double flops = hw->layer_flops + hw->attn_flops_per_tok * ((double)ctx_len + (double)p * execs);
    if (sim_hwi_cpu_only(hw)) /* one batched pass over the rows at the CPU's rates */
        return sim_cost_cpu_ms(&hw->dev, p * execs, bytes, flops, hw->tgt.cpu_efficiency);
    return sim_cost_npu_exec_ms(&hw->dev, p, execs, bytes, flops, hw->tgt.npu_efficiency);
}

double sim_hw_head_npu_ms(const sim_hw *hw, int32_t rows)
{
    if (sim_hwi_cpu_only(hw)) /* one batched GEMM over the rows */
        return sim_cost_cpu_ms(&hw->dev, rows, hw->head_bytes, hw->head_flops,
                               hw->tgt.cpu_efficiency);
    return sim_cost_npu_ms(&hw->dev, sim_hw_verify_graph_rows(hw, rows), hw->head_bytes,
                           hw->head_flops, hw->tgt.npu_efficiency);
}

double sim_hw_head_cpu_ms(const sim_hw *hw, int32_t rows)
{
    /* each row is its own GEMV: the path is only known token by token */
    return rows *
           sim_cost_cpu_ms(&hw->dev, 1, hw->head_bytes, hw->head_flops, hw->tgt.cpu_efficiency);
}

double sim_hw_draft_ms(const sim_hw *hw, eng_unit unit, int32_t rows, int32_t ctx_len)
{
    return sim_hw_draft_part_ms(hw, unit, rows, ctx_len, SIM_DRAFT_FULL);
}

double sim_hwi_draft_part_bytes(const sim_hw *hw, int32_t ctx_len, int32_t part)
{
    if (part == SIM_DRAFT_HEAD) return hw->d_head_bytes;
    double w = part == SIM_DRAFT_BODY ? hw->d_bytes - hw->d_head_bytes : hw->d_bytes;
    return w + (double)ctx_len * hw->d_kv_bytes;
}

double sim_hw_draft_part_ms(const sim_hw *hw, eng_unit unit, int32_t rows, int32_t ctx_len,
                            int32_t part)
{
    if (!hw->has_draft || rows <= 0) return 0.0;
    double bytes = sim_hwi_draft_part_bytes(hw, ctx_len, part);
    double base = part == SIM_DRAFT_HEAD   ? hw->d_head_flops
                  : part == SIM_DRAFT_BODY ? hw->d_flops - hw->d_head_flops
                                           : hw->d_flops;
    double attn = part == SIM_DRAFT_HEAD ? 0.0 : hw->d_attn_flops_per_tok;
    if (sim_hwi_on_npu(hw, unit)) {
        int32_t execs, p = sim_cost_npu_pad(&hw->dev, rows, &execs);
        double flops = base + attn * ((double)ctx_len + (double)p * execs);
        return sim_cost_npu_ms(&hw->dev, rows, bytes, flops, hw->dft.npu_efficiency) +
               hw->dev.npu_call_us * 1e-3;
    }
    double flops = base + attn * ((double)ctx_len + rows);
    return sim_cost_cpu_ms(&hw->dev, rows, bytes, flops, hw->dft.cpu_efficiency);
}

double sim_hw_proj_ms(const sim_hw *hw, const sim_verify_shape *v)
{
    int32_t final_rows = v->exit_layer >= 0 ? v->rows_after_exit : v->rows;
    switch (v->proj) {
    case ENG_PROJ_ONDEMAND_CPU:
        return sim_hw_head_cpu_ms(hw, v->proj_rows);
    case ENG_PROJ_ONDEMAND_NPU: /* one stand-alone single-row call per visited row */
        if (sim_hwi_cpu_only(hw)) return sim_hw_head_cpu_ms(hw, v->proj_rows);
        return v->proj_rows * (sim_hw_head_npu_ms(hw, 1) + hw->dev.npu_call_us * 1e-3);
    case ENG_PROJ_EAGER_NPU:
    default:
        return sim_hw_head_npu_ms(hw, final_rows);
    }
}

double sim_hw_tree_setup_ms(const sim_hw *hw, double part_ms[SIM_HW_SETUP_PARTS])
{
    const sim_device *d = &hw->dev;
    double resident = hw->mem.bytes[SIM_MEM_PINNED] + hw->mem.bytes[SIM_MEM_HEAD];
    double p[SIM_HW_SETUP_PARTS] = {
        d->verify_setup_us * 1e-3,
        hw->mem.streamed_bytes * 1e-9 * d->verify_setup_streamed_us_per_gb * 1e-3,
        resident * 1e-9 * d->verify_setup_resident_us_per_gb * 1e-3,
        (hw->mem.streamed_layers + !hw->mem.head_resident) * d->verify_setup_layer_us * 1e-3,
        (hw->L + 1) * d->verify_graph_us * 1e-3,
    };
    if (part_ms) memcpy(part_ms, p, sizeof p);
    return p[0] + p[1] + p[2] + p[3] + p[4];
}

int32_t sim_hw_stream_runtime(const sim_hw *hw, const sim_verify_shape *v)
{
    if (v->runtime == SIM_RUNTIME_SPEC || (hw->dev.verify_overlap && !v->decode))
        return SIM_RUNTIME_SPEC;
    return SIM_RUNTIME_BASELINE;
}

int sim_hw_pays_setup(const sim_hw *hw, const sim_verify_shape *v)
{
    return v->rows >= 2 || (hw->dev.verify_setup_one_row && !v->decode);
}

double sim_hw_setup_ms(const sim_hw *hw, const sim_verify_shape *v)
{
    const sim_device *d = &hw->dev;
    double setup = 0.0;
    if (sim_hw_pays_setup(hw, v)) {
        setup = hw->tree_setup_ms + (double)v->rows * d->verify_row_us * 1e-3;
        if (d->verify_kv_snapshot) /* read and written once */
            setup += 2.0 * (double)v->ctx_len * hw->kv_token_bytes / (d->cpu_gbps * 1e6);
    }
    if (v->leaves <= 1) return setup;
    double per_leaf =
        (double)v->rows * hw->kv_token_bytes / (d->cpu_gbps * 1e6) + d->kv_seq_us * 1e-3;
    return setup + v->leaves * per_leaf;
}

double sim_hw_kv_ms(const sim_hw *hw, int32_t rows, int32_t leaves)
{
    sim_verify_shape v = {.rows = rows, .leaves = leaves};
    return sim_hw_setup_ms(hw, &v);
}
