/*
 * sim_draft.c -- draft calls: one forward of a part of the DRAM-resident
 * draft over `rows` nodes on its unit (semantics in sim_hw.h, "One cycle").
 *
 * A call reads the part's weights (the whole draft, the body without the LM
 * head, or the head alone) and, unless it is the head alone, the draft's KV
 * over ctx_len, and does the part's FLOPs per row plus attention over ctx_len
 * and the rows.  On the NPU it is a graph execution padded to npu_shapes
 * (sim_npu.c) plus npu_call_us, the price of a stand-alone call from CPU-side
 * control flow; on the CPU one pass (sim_cpu.c).  With verify_unit = cpu a
 * call naming the NPU runs on the CPU: that runtime has no NPU path.
 */
#include "sim_hw_impl.h"

void sim_hwi_draft_derive(sim_hw *hw)
{
    if (!hw->has_draft) return;
    const sim_model *d = &hw->dft;
    hw->d_bytes = sim_model_weight_bytes(d);
    hw->d_flops =
        2.0 * (d->layers * sim_model_layer_params(d) +
               (double)d->fusion_in * d->hidden * d->hidden + (double)d->vocab * d->hidden);
    hw->d_kv_bytes = sim_model_kv_token_bytes(d);
    hw->d_head_bytes = sim_model_head_bytes(d);
    hw->d_head_flops = 2.0 * (double)d->vocab * d->hidden;
    hw->d_attn_flops_per_tok = 4.0 * (double)d->layers * d->heads * d->head_dim;
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

double sim_hw_draft_ms(const sim_hw *hw, eng_unit unit, int32_t rows, int32_t ctx_len)
{
    return sim_hw_draft_part_ms(hw, unit, rows, ctx_len, SIM_DRAFT_FULL);
}
