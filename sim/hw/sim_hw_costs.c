/*
 * sim_hw_costs.c -- the phone model's DRAM accounting and the costs it derives
 * from the device and model profiles (semantics in sim_hw.h): pure functions of
 * the handle's constants, used by the cycle (sim_hw.c) and by `flashspec
 * profile`.
 */
#include "sim_hw.h"
#include "sim_hw_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const mem_names[SIM_MEM_NCAT] = {"draft",     "pinned",   "head",
                                                    "kv_target", "kv_draft", "buffers"};

const char *sim_mem_cat_name(sim_mem_cat c)
{
    return (unsigned)c < SIM_MEM_NCAT ? mem_names[c] : "?";
}

/* ---- DRAM accounting ---- */

int sim_hw_memory_plan(const sim_device *dev, const sim_model *target, const sim_model *draft,
                       double dram_fraction, int32_t max_ctx_tokens, sim_hw_memory *out, char *err,
                       size_t errlen)
{
    char buf[256];
    memset(out, 0, sizeof *out);
    if (!(dram_fraction >= 0.0 && dram_fraction <= 1.0) || max_ctx_tokens < 1) {
        sim_hwi_set_err(err, errlen, "dram_fraction must be in [0, 1] and max context >= 1 token");
        return SIM_HW_E_INVALID;
    }
    if (sim_device_check(dev, buf, sizeof buf) || sim_model_check(target, buf, sizeof buf) ||
        (draft && sim_model_check(draft, buf, sizeof buf))) {
        sim_hwi_set_err(err, errlen, buf);
        return SIM_HW_E_INVALID;
    }
    int32_t L = target->layers;
    /* floor with a guard against x * L landing a hair below an integer */
    int32_t pinned = (int32_t)floor(dram_fraction * L + 1e-9);
    if (pinned > L) pinned = L;
    int32_t streamed = L - pinned;
    int head_resident = target->tied_embeddings || (pinned == L && dev->pin_head);
    double lb = sim_model_layer_bytes(target), hb = sim_model_head_bytes(target);
    int32_t ahead = dev->prefetch_layers > dev->spec_prefetch_layers ? dev->prefetch_layers
                                                                     : dev->spec_prefetch_layers;
    int32_t buffers = streamed ? (ahead + 1 < streamed ? ahead + 1 : streamed) : 0;

    out->layers = L;
    out->resident_layers = pinned;
    out->streamed_layers = streamed;
    out->buffers = buffers;
    out->head_resident = head_resident;
    out->streamed_bytes = streamed * lb + (head_resident ? 0.0 : hb);
    out->bytes[SIM_MEM_DRAFT] = draft ? sim_model_weight_bytes(draft) : 0.0;
    out->bytes[SIM_MEM_PINNED] = pinned * lb;
    out->bytes[SIM_MEM_HEAD] = head_resident ? hb : 0.0;
    out->bytes[SIM_MEM_KV_TARGET] = (double)max_ctx_tokens * sim_model_kv_token_bytes(target);
    out->bytes[SIM_MEM_KV_DRAFT] =
        draft ? (double)max_ctx_tokens * sim_model_kv_token_bytes(draft) : 0.0;
    if (dev->kv_shared && draft) { /* one region, sized for the larger cache */
        if (out->bytes[SIM_MEM_KV_DRAFT] > out->bytes[SIM_MEM_KV_TARGET])
            out->bytes[SIM_MEM_KV_TARGET] = out->bytes[SIM_MEM_KV_DRAFT];
        out->bytes[SIM_MEM_KV_DRAFT] = 0.0;
    }
    out->bytes[SIM_MEM_BUFFERS] = buffers * lb + (head_resident ? 0.0 : hb);
    for (int c = 0; c < SIM_MEM_NCAT; c++)
        out->total_bytes += out->bytes[c];
    out->budget_bytes = dev->dram_budget_gb * 1e9;
    if (out->total_bytes > out->budget_bytes) {
        if (err && errlen)
            snprintf(err, errlen,
                     "does not fit: %s at dram_fraction %.2f needs %.2f GB of DRAM (draft %.2f + "
                     "pinned %.2f + head %.2f + kv %.2f + buffers %.2f) but device '%s' leaves "
                     "the LLM %.2f GB",
                     target->name, dram_fraction, out->total_bytes / 1e9,
                     out->bytes[SIM_MEM_DRAFT] / 1e9, out->bytes[SIM_MEM_PINNED] / 1e9,
                     out->bytes[SIM_MEM_HEAD] / 1e9,
                     (out->bytes[SIM_MEM_KV_TARGET] + out->bytes[SIM_MEM_KV_DRAFT]) / 1e9,
                     out->bytes[SIM_MEM_BUFFERS] / 1e9, dev->name, out->budget_bytes / 1e9);
        return SIM_HW_E_NOFIT;
    }
    return SIM_HW_OK;
}

/* ---- derived costs ---- */

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
    return rows >= 2 && rows < hw->dev.verify_min_rows ? hw->dev.verify_min_rows : rows;
}

double sim_hw_layer_npu_ms(const sim_hw *hw, int32_t rows, int32_t ctx_len)
{
    /* padded rows attend too: the static graph attends over ctx + padded rows */
    rows = sim_hw_verify_graph_rows(hw, rows);
    int32_t execs, p = sim_cost_npu_pad(&hw->dev, rows, &execs);
    double bytes = hw->layer_bytes + (double)ctx_len * hw->kv_layer_bytes;
    double flops = hw->layer_flops + hw->attn_flops_per_tok * ((double)ctx_len + (double)p * execs);
    return sim_cost_npu_ms(&hw->dev, rows, bytes, flops, hw->tgt.npu_efficiency);
}

double sim_hw_head_npu_ms(const sim_hw *hw, int32_t rows)
{
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
    if (unit == ENG_UNIT_NPU) {
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
        return v->proj_rows * (sim_hw_head_npu_ms(hw, 1) + hw->dev.npu_call_us * 1e-3);
    case ENG_PROJ_EAGER_NPU:
    default:
        return sim_hw_head_npu_ms(hw, final_rows);
    }
}

double sim_hw_tree_setup_ms(const sim_hw *hw, double part_ms[4])
{
    const sim_device *d = &hw->dev;
    double resident = hw->mem.bytes[SIM_MEM_PINNED] + hw->mem.bytes[SIM_MEM_HEAD];
    double p[4] = {
        d->verify_setup_us * 1e-3,
        hw->mem.streamed_bytes * 1e-9 * d->verify_setup_streamed_us_per_gb * 1e-3,
        resident * 1e-9 * d->verify_setup_resident_us_per_gb * 1e-3,
        (hw->mem.streamed_layers + !hw->mem.head_resident) * d->verify_setup_layer_us * 1e-3,
    };
    if (part_ms) memcpy(part_ms, p, sizeof p);
    return p[0] + p[1] + p[2] + p[3];
}

int32_t sim_hw_stream_runtime(const sim_hw *hw, const sim_verify_shape *v)
{
    if (v->runtime == SIM_RUNTIME_SPEC || (hw->dev.verify_overlap && !v->decode))
        return SIM_RUNTIME_SPEC;
    return SIM_RUNTIME_BASELINE;
}

double sim_hw_setup_ms(const sim_hw *hw, const sim_verify_shape *v)
{
    int tree = v->rows >= 2 || (hw->dev.verify_setup_one_row && !v->decode);
    double setup = tree ? hw->tree_setup_ms : 0.0;
    if (v->leaves <= 1) return setup;
    double per_leaf =
        (double)v->rows * hw->kv_token_bytes / (hw->dev.cpu_gbps * 1e6) + hw->dev.kv_seq_us * 1e-3;
    return setup + v->leaves * per_leaf;
}

double sim_hw_kv_ms(const sim_hw *hw, int32_t rows, int32_t leaves)
{
    sim_verify_shape v = {.rows = rows, .leaves = leaves};
    return sim_hw_setup_ms(hw, &v);
}
