/*
 * sim_hw_memory.c -- the phone model's DRAM accounting (semantics in
 * sim_hw.h): what a point keeps in DRAM (draft weights, pinned target layers,
 * the LM head, KV caches, streaming buffers) against the device's budget, and
 * the room it leaves overlapping drafting (mem_upper_bound).
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

int sim_hwi_memory_plan(const sim_device *dev, const sim_model *target, const sim_model *draft,
                       double dram_fraction, int32_t max_ctx_tokens, sim_hw_memory *out, char *err,
                       size_t errlen)
{
    char buf[256];
    memset(out, 0, sizeof *out);
    if (!(dram_fraction >= 0.0 && dram_fraction <= 1.0) || max_ctx_tokens < 1) {
        sim_hwi_set_err(err, errlen, "dram_fraction must be in [0, 1] and max context >= 1 token");
        return SIM_CONFIG_INVALID;
    }
    if (sim_device_check(dev, buf, sizeof buf) || sim_model_check(target, buf, sizeof buf) ||
        (draft && sim_model_check(draft, buf, sizeof buf))) {
        sim_hwi_set_err(err, errlen, buf);
        return SIM_CONFIG_INVALID;
    }
    int32_t L = target->layers;
    /* floor with a guard against x * L landing a hair below an integer */
    int32_t pinned = (int32_t)floor(dram_fraction * L + 1e-9);
    if (pinned > L) pinned = L;
    int32_t streamed = L - pinned;
    int head_resident =
        target->tied_embeddings || dev->head_resident || (pinned == L && dev->pin_head);
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
        return SIM_CONFIG_NOFIT;
    }
    return SIM_OK;
}

void sim_hw_get_memory(const sim_hw *hw, sim_hw_memory *out)
{
    *out = hw->mem;
}

int32_t sim_hw_overlap_cap(const sim_hw *hw)
{
    if (!hw->has_draft) return 0;
    double room = hw->dev.mem_upper_bound * hw->mem.budget_bytes - hw->mem.total_bytes;
    if (room <= 0) return 0;
    /* each overlapping draft token adds a draft KV row and a hidden-state row */
    double per_tok = hw->d_kv_bytes + 2.0 * hw->dft.hidden;
    double n = per_tok > 0 ? floor(room / per_tok) : 1e9;
    return n > 1e6 ? 1000000 : (int32_t)n;
}
