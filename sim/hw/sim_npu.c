/*
 * sim_npu.c -- the NPU: static graph executions (semantics in sim_hw.h, "The
 * runtime" and "Two runtimes"; the formula is in sim_hw_impl.h).
 *
 * Rows are padded to the compiled shapes (npu_shapes), above the largest
 * shape run as several executions; a multi-row verification runs at least
 * verify_min_rows rows (one row uses the decode graph); every execution pays
 * launch_us + sync_us and a roofline of its weights and KV against its padded
 * rows' FLOPs; a stand-alone call from CPU-side control flow (a draft call,
 * an on-demand head row) also pays npu_call_us.
 *
 * The target's compute is priced here on the unit the runtime verifies on:
 * NPU graphs, or with verify_unit = cpu the CPU passes of sim_cpu.c.  The
 * output projection by mode (eager head, on-demand rows) is here too.
 */
#include "sim_hw_impl.h"

int32_t sim_cost_npu_pad(const sim_device *d, int32_t rows, int32_t *execs)
{
    if (rows <= 0) {
        if (execs) *execs = 0;
        return 0;
    }
    int32_t smax = d->npu_shapes[d->n_npu_shapes - 1];
    if (rows > smax) {
        if (execs) *execs = (rows + smax - 1) / smax;
        return smax;
    }
    if (execs) *execs = 1;
    for (int32_t i = 0; i < d->n_npu_shapes; i++)
        if (d->npu_shapes[i] >= rows) return d->npu_shapes[i];
    return smax;
}

double sim_cost_npu_ms(const sim_device *d, int32_t rows, double bytes, double flops_per_row,
                       double eff)
{
    int32_t execs;
    int32_t p = sim_cost_npu_pad(d, rows, &execs);
    return sim_cost_npu_exec_ms(d, p, execs, bytes, flops_per_row, eff);
}

double sim_cost_npu_exec_ms(const sim_device *d, int32_t p, int32_t execs, double bytes,
                            double flops_per_row, double eff)
{
    if (execs == 0) return 0.0;
    double mem = bytes / (d->npu_gbps * 1e6);
    double comp = (double)p * flops_per_row / (d->npu_gflops * 1e6);
    double one = (d->launch_us + d->sync_us) * 1e-3 + (mem > comp ? mem : comp);
    return execs * one / eff;
}

int32_t sim_hw_verify_graph_rows(const sim_hw *hw, int32_t rows)
{
    if (sim_hwi_cpu_only(hw)) return rows; /* no compiled graph: any batch runs as it is */
    return rows >= 2 && rows < hw->dev.verify_min_rows ? hw->dev.verify_min_rows : rows;
}

int32_t sim_hwi_verify_pad(const sim_hw *hw, int32_t rows, int32_t *execs)
{
    if (sim_hwi_cpu_only(hw)) return sim_hwi_cpu_verify_pad(rows, execs);
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
        return sim_hwi_cpu_layer_ms(hw, p * execs, bytes, flops);
    return sim_cost_npu_exec_ms(&hw->dev, p, execs, bytes, flops, hw->tgt.npu_efficiency);
}

double sim_hw_head_npu_ms(const sim_hw *hw, int32_t rows)
{
    if (sim_hwi_cpu_only(hw)) /* one batched GEMM over the rows */
        return sim_hwi_cpu_head_batch_ms(hw, rows);
    return sim_cost_npu_ms(&hw->dev, sim_hw_verify_graph_rows(hw, rows), hw->head_bytes,
                           hw->head_flops, hw->tgt.npu_efficiency);
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
