/*
 * sim_flash.c -- the flash: how the phone reads the target's streamed weights
 * (semantics in sim_hw.h, "The runtime" and "Memory-mapped weights").
 *
 * One read channel, FIFO.  A read of B bytes is split into requests of
 * request_kb KiB, each paying request_latency_us, of which the runtime keeps
 * queue_depth in flight (spec_queue_depth in the speculative runtime), so a
 * request's latency overlaps the others' transfers (the formula is in
 * sim_hw_impl.h).  The target's layers and an untied, non-resident LM head
 * are read at every verification: this file derives their read times per
 * runtime and what a verification streams (reads, bytes, channel time).
 *
 * The loader's ring of buffers: the streamed ops (layers pinned..L-1, then
 * the head unless it is resident) take turns in prefetch + 1 buffers
 * (spec_prefetch_layers + 1 in the speculative runtime).  The first prefetch
 * + 1 are read at once, a later op i once the compute of op i - 1 - prefetch
 * has freed its buffer (sim_hwi_ring_wait, sim_hw_impl.h).  sim_hwi_loader
 * gives a verification's ring and read times; the event-driven cycle
 * (sim_hw.c: try_reads) and the walk (sim_hw_walk.c: walk_ops) schedule the
 * reads by that rule.
 */
#include "sim_hw_impl.h"

#include <math.h>

double sim_cost_flash_q_ms(const sim_device *d, double bytes, double eff, int32_t queue_depth)
{
    if (bytes <= 0) return 0.0;
    double req_bytes = d->request_kb * 1024.0;
    double requests = ceil(bytes / req_bytes);
    double q = queue_depth > 1 ? (double)queue_depth : 1.0;
    return (bytes / (d->read_gbps * 1e6) + requests * d->request_latency_us * 1e-3 / q) / eff;
}

/* The reads of a streamed layer and of the streamed head in runtime
 * (sim_runtime): its queue depth. */
static int32_t runtime_queue(const sim_hw *hw, int32_t runtime)
{
    return runtime == SIM_RUNTIME_SPEC ? hw->dev.spec_queue_depth : hw->dev.queue_depth;
}

double sim_hwi_stream_layer_bytes(const sim_device *d, const sim_model *t)
{
    double full = sim_model_layer_bytes(t);
    if (d->stream_bits <= 0.0 || d->stream_bits >= t->weight_bits) return full;
    return full * d->stream_bits / t->weight_bits;
}

static double layer_read_ms(const sim_hw *hw, int32_t runtime)
{
    return sim_cost_flash_q_ms(&hw->dev, hw->stream_layer_bytes, hw->tgt.flash_efficiency,
                               runtime_queue(hw, runtime));
}

static double head_read_ms(const sim_hw *hw, int32_t runtime)
{
    return sim_cost_flash_q_ms(&hw->dev, hw->head_bytes, hw->tgt.flash_efficiency,
                               runtime_queue(hw, runtime));
}

double sim_hw_layer_read_ms(const sim_hw *hw)
{
    return layer_read_ms(hw, SIM_RUNTIME_BASELINE);
}

double sim_hw_head_read_ms(const sim_hw *hw)
{
    return head_read_ms(hw, SIM_RUNTIME_BASELINE);
}

void sim_hwi_flash_derive(sim_hw *hw)
{
    hw->layer_read_ns = sim_hwi_ms_to_ns(layer_read_ms(hw, SIM_RUNTIME_BASELINE));
    hw->head_read_ns = sim_hwi_ms_to_ns(head_read_ms(hw, SIM_RUNTIME_BASELINE));
    hw->spec_layer_read_ns = sim_hwi_ms_to_ns(layer_read_ms(hw, SIM_RUNTIME_SPEC));
    hw->spec_head_read_ns = sim_hwi_ms_to_ns(head_read_ms(hw, SIM_RUNTIME_SPEC));
    hw->stream_reads = 0;
    hw->stream_bytes = 0.0;
    for (int32_t i = hw->pinned; i < hw->L; i++) {
        hw->stream_reads++;
        hw->stream_bytes += hw->stream_layer_bytes;
    }
    if (!hw->mem.head_resident) {
        hw->stream_reads++;
        hw->stream_bytes += hw->head_bytes;
    }
    int64_t streamed = hw->L - hw->pinned, head_streamed = !hw->mem.head_resident;
    hw->stream_ns[SIM_RUNTIME_BASELINE] =
        streamed * hw->layer_read_ns + head_streamed * hw->head_read_ns;
    hw->stream_ns[SIM_RUNTIME_SPEC] =
        streamed * hw->spec_layer_read_ns + head_streamed * hw->spec_head_read_ns;
}

int32_t sim_hwi_loader(const sim_hw *hw, const sim_verify_shape *v, sim_hwi_ring *ring)
{
    int32_t rt = sim_hw_stream_runtime(hw, v);
    int spec = rt == SIM_RUNTIME_SPEC;
    ring->prefetch = spec ? hw->dev.spec_prefetch_layers : hw->dev.prefetch_layers;
    ring->layer_read_ns = spec ? hw->spec_layer_read_ns : hw->layer_read_ns;
    ring->head_read_ns = spec ? hw->spec_head_read_ns : hw->head_read_ns;
    return rt;
}
