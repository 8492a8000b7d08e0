/*
 * test_baselines.c -- the rules of the baselines that are loaders, not
 * policies (docs/policies.md, "Baselines that are runtimes"), each on the CPU
 * runtime with the target streamed, one decode step of one row:
 *   Std  read, then compute, layer after layer (prefetch_layers = 0): a step
 *        is the sum of every read and every compute;
 *   SPL  the next layer read while this one computes (prefetch_layers = 1):
 *        once reads dominate, a step is every read and the last compute;
 *        once compute dominates, the first read and every compute;
 *   STI  SPL reading the streamed layers at stream_bits bits a weight: a
 *        streamed layer's read carries params x stream_bits / 8 bytes; the
 *        head, pinned layers, every compute and the DRAM plan keep the
 *        model's width; 0, the model's own width or more read the model as
 *        stored; a lower width is never slower.
 */
#include "sim/hw/sim_hw.h"
#include "sim/hw/sim_hw_impl.h" /* the formulas (sim_cost_*) */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../check.h"
#include "hw_fixtures.h"

static sim_device cpu_phone(int32_t prefetch, double stream_bits)
{
    sim_device d = phone();
    d.verify_unit = SIM_VERIFY_CPU;
    d.request_kb = 128;
    d.queue_depth = 4;
    d.request_latency_us = 8;
    d.prefetch_layers = prefetch;
    d.stream_bits = stream_bits;
    return d;
}

/* One decode step of one row on d: its times. */
static sim_cycle_time step(const sim_device *d, const sim_model *t, double x, sim_hw **out_hw)
{
    sim_hw *hw = make(d, t, NULL, x);
    sim_verify_shape v = shape(1, 1);
    v.decode = 1;
    sim_cycle_time o;
    CHECK(hw_run(hw, NULL, 0, &v, &o, NULL) == SIM_OK);
    if (out_hw)
        *out_hw = hw;
    else
        sim_hw_destroy(hw);
    return o;
}

/* The parts of a step: layer read R, head read Rh, layer compute C, head
 * compute Ch. */
typedef struct parts {
    double R, Rh, C, Ch;
} parts;

static parts parts_of(const sim_device *d, const sim_model *t)
{
    sim_hw *hw = make(d, t, NULL, 0.0);
    sim_verify_shape v = shape(1, 1);
    v.decode = 1;
    parts p = {sim_hw_layer_read_ms(hw), sim_hw_head_read_ms(hw), sim_hw_layer_npu_ms(hw, 1, 256),
               sim_hw_proj_ms(hw, &v)};
    sim_hw_destroy(hw);
    return p;
}

/* Std: every read, then its compute. */
static void test_std(void)
{
    sim_model t = q8();
    sim_device d = cpu_phone(0, 0);
    parts p = parts_of(&d, &t);
    sim_cycle_time o = step(&d, &t, 0.0, NULL);
    CHECK_NEAR(o.verify_ms, t.layers * (p.R + p.C) + p.Rh + p.Ch, 1e-5 * t.layers);
    CHECK_NEAR(o.flash_ms, t.layers * p.R + p.Rh, 1e-5 * t.layers);
}

/* SPL: reads back to back while they dominate (each layer's compute hides
 * under the next read); the first read and every compute once compute
 * dominates (fast flash). */
static void test_spl(void)
{
    sim_model t = q8();
    sim_device d = cpu_phone(1, 0);
    parts p = parts_of(&d, &t);
    CHECK(p.R > p.C && p.Rh > p.C); /* flash-bound */
    sim_cycle_time o = step(&d, &t, 0.0, NULL);
    CHECK_NEAR(o.verify_ms, t.layers * p.R + p.Rh + p.Ch, 1e-5 * t.layers);
    sim_device serial = cpu_phone(0, 0);
    sim_cycle_time std = step(&serial, &t, 0.0, NULL);
    CHECK(o.verify_ms < std.verify_ms); /* the pipeline saves the hidden computes */
    CHECK_NEAR(std.verify_ms - o.verify_ms, t.layers * p.C, 1e-5 * t.layers);
    /* compute-bound: the reads hide under the computes but the first */
    sim_device fast = cpu_phone(1, 0);
    fast.read_gbps = 100;
    fast.request_latency_us = 0;
    sim_model tc = q8();
    tc.cpu_efficiency = 0.05; /* slow CPU */
    parts q = parts_of(&fast, &tc);
    CHECK(q.C > q.R && q.C > q.Rh);
    sim_cycle_time oc = step(&fast, &tc, 0.0, NULL);
    CHECK_NEAR(oc.verify_ms, q.R + tc.layers * q.C + q.Ch, 1e-5 * tc.layers);
}

/* STI: the streamed layers' reads at stream_bits; nothing else moves. */
static void test_sti(void)
{
    sim_model t = q8(); /* 4.5 bits a weight */
    double lb = sim_model_layer_bytes(&t), hb = sim_model_head_bytes(&t);
    /* 0, the model's width and above: the model as stored, byte for byte */
    sim_device base = cpu_phone(1, 0);
    sim_hw *h0 = NULL;
    sim_cycle_time o0 = step(&base, &t, 0.0, &h0);
    sim_hw_memory m0;
    sim_hw_get_memory(h0, &m0);
    const double same[] = {4.5, 9.0, 32.0};
    for (int i = 0; i < 3; i++) {
        sim_device d = cpu_phone(1, same[i]);
        sim_cycle_time o = step(&d, &t, 0.0, NULL);
        CHECK(memcmp(&o, &o0, sizeof o) == 0);
    }
    CHECK(NEAR(o0.flash_bytes, t.layers * lb + hb));
    /* half the model's width: each streamed layer's read carries half */
    sim_device half = cpu_phone(1, 2.25);
    sim_hw *h = NULL;
    sim_cycle_time o = step(&half, &t, 0.0, &h);
    CHECK(NEAR(o.flash_bytes, t.layers * lb / 2 + hb));
    { /* the event-driven cycle reads the same bytes in the same time as the walk */
        sim_hw *he = make(&half, &t, NULL, 0.0);
        sim_hw_set_events_always(he, 1);
        sim_verify_shape v = shape(1, 1);
        v.decode = 1;
        sim_cycle_time oe;
        CHECK(hw_run(he, NULL, 0, &v, &oe, NULL) == SIM_OK);
        CHECK(NEAR(oe.flash_bytes, o.flash_bytes) && NEAR(oe.verify_ms, o.verify_ms));
        sim_hw_destroy(he);
    }
    CHECK(NEAR(sim_hw_layer_read_ms(h), sim_cost_flash_q_ms(&half, lb / 2, t.flash_efficiency,
                                                            half.queue_depth)));
    CHECK(NEAR(sim_hw_head_read_ms(h), sim_hw_head_read_ms(h0)));           /* head as stored */
    CHECK(NEAR(sim_hw_layer_npu_ms(h, 1, 256), sim_hw_layer_npu_ms(h0, 1, 256))); /* compute */
    sim_hw_memory m;
    sim_hw_get_memory(h, &m);
    CHECK(memcmp(&m, &m0, sizeof m) == 0); /* the DRAM plan: buffers of a full layer */
    CHECK(o.verify_ms < o0.verify_ms);
    sim_hw_destroy(h);
    sim_hw_destroy(h0);
    /* pinned layers are not read: half the layers pinned, half streamed at the width */
    sim_hw *hp = NULL;
    sim_cycle_time op = step(&half, &t, 0.5, &hp);
    sim_hw_memory mp;
    sim_hw_get_memory(hp, &mp);
    int32_t streamed = t.layers - mp.resident_layers;
    CHECK(streamed > 0 && streamed < t.layers);
    CHECK(NEAR(op.flash_bytes, streamed * lb / 2 + hb));
    sim_hw_destroy(hp);
    /* a lower width is never slower; strictly faster while reads dominate */
    double prev = INFINITY;
    for (double b = 4.5; b >= 1.0; b -= 0.25) {
        sim_device d = cpu_phone(1, b);
        double ms = step(&d, &t, 0.0, NULL).verify_ms;
        CHECK(ms < prev);
        prev = ms;
    }
    /* the key: a double in [0, 32], default 0 */
    const eng_param_desc *k = eng_params_find(sim_device_keys(), "stream_bits");
    CHECK(k && k->type == ENG_PARAM_DOUBLE && k->min == 0 && k->max == 32 && k->def == 0);
}

int main(void)
{
    test_std();
    test_spl();
    test_sti();
    return check_done("test_baselines");
}
