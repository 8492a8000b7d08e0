/*
 * sim_cpu.c -- the CPU: batched passes at the cores' rates (semantics in
 * sim_hw.h, "Two runtimes"; the formula is in sim_hw_impl.h).
 *
 * A pass over r rows reads its weights and KV at cpu_gbps against r times
 * its FLOPs per row at cpu_gflops: no padding, no launch or sync.  The CPU
 * serves draft calls (sim_draft.c), the head's on-demand rows (one GEMV
 * each: the path is only known token by token), the KV and set-up work of a
 * verification (sim_runtime.c), and with verify_unit = cpu the whole target:
 * each layer one batched pass over the rows, the eager head one batched
 * GEMM (the CPU-only runtime; sim_npu.c dispatches to it).
 */
#include "sim_hw_impl.h"

double sim_cost_cpu_ms(const sim_device *d, int32_t rows, double bytes, double flops_per_row,
                       double eff)
{
    if (rows <= 0) return 0.0;
    double mem = bytes / (d->cpu_gbps * 1e6);
    double comp = (double)rows * flops_per_row / (d->cpu_gflops * 1e6);
    return (mem > comp ? mem : comp) / eff;
}

int32_t sim_hwi_cpu_verify_pad(int32_t rows, int32_t *execs)
{
    if (execs) *execs = rows > 0;
    return rows > 0 ? rows : 0;
}

double sim_hwi_cpu_layer_ms(const sim_hw *hw, int32_t rows, double bytes, double flops)
{
    return sim_cost_cpu_ms(&hw->dev, rows, bytes, flops, hw->tgt.cpu_efficiency);
}

double sim_hwi_cpu_head_batch_ms(const sim_hw *hw, int32_t rows)
{
    return sim_cost_cpu_ms(&hw->dev, rows, hw->head_bytes, hw->head_flops, hw->tgt.cpu_efficiency);
}

double sim_hw_head_cpu_ms(const sim_hw *hw, int32_t rows)
{
    /* each row is its own GEMV: the path is only known token by token */
    return rows *
           sim_cost_cpu_ms(&hw->dev, 1, hw->head_bytes, hw->head_flops, hw->tgt.cpu_efficiency);
}
