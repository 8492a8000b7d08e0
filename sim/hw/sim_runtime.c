/*
 * sim_runtime.c -- runtime management: what the inference runtime does on the
 * CPU around a verification besides the target's compute (semantics in
 * sim_hw.h, "The set-up" and "One cycle"), and which of the phone's two
 * runtimes streams a verification's weights ("The runtime").
 *
 *   - the tree set-up: a constant, per streamed and per resident GB of
 *     weights, per streamed op, per tree graph, per verified row, and the KV
 *     snapshot over the context; paid by a tree verification, never by a
 *     plain decode step;
 *   - KV copies and temporary sequences: with leaves > 1, per leaf the tree
 *     rows' KV copied at cpu_gbps plus kv_seq_us;
 *   - verify_overlap: a tree verification streams with the spec_* runtime.
 * The cycle charges the sum on the CPU before layer 0, while the first read
 * runs.
 */
#include "sim_hw_impl.h"

#include <string.h>

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
