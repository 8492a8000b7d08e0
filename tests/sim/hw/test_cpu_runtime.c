/*
 * test_cpu_runtime.c -- the runtime that verifies on the CPU (device key
 * verify_unit = cpu; sim/hw/sim_hw.h "Two runtimes"): the target's layers and
 * head at the CPU's rates, charged to cpu_ms and never to npu_ms; no padding to
 * compiled shapes, no launch or sync; draft calls naming the NPU run on the
 * CPU; the draft and the target serialise on the cores; memory-mapped reads
 * counted in requests of the readahead size; and the default runtime (NPU)
 * unchanged by the key's existence.
 */
#include "sim/hw/sim_hw.h"
#include "sim/hw/sim_hw_impl.h" /* the formulas (sim_cost_*) */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "hw_fixtures.h"

static sim_device cpu_phone(void)
{
    sim_device d = phone();
    d.verify_unit = SIM_VERIFY_CPU;
    d.request_kb = 128; /* read_ahead_kb */
    d.queue_depth = 4;  /* one fault in flight per compute thread */
    d.request_latency_us = 8;
    return d;
}

/* What a layer of `rows` rows costs on the CPU by the roofline of
 * sim_cpu.c: weights and KV from DRAM at cpu_gbps against the rows'
 * FLOPs at cpu_gflops, over the target's cpu_efficiency. */
static double layer_cpu_ms(const sim_device *d, const sim_model *t, int32_t rows, int32_t ctx)
{
    double bytes = sim_model_layer_bytes(t) + (double)ctx * sim_model_kv_layer_bytes(t);
    double flops = 2.0 * sim_model_layer_params(t) +
                   4.0 * (double)t->heads * t->head_dim * ((double)ctx + rows);
    double mem = bytes / (d->cpu_gbps * 1e6), comp = rows * flops / (d->cpu_gflops * 1e6);
    return (mem > comp ? mem : comp) / t->cpu_efficiency;
}

/* The key: an enum, npu by default, cpu the other choice. */
static void test_key(void)
{
    const eng_param_desc *k = eng_params_find(sim_device_keys(), "verify_unit");
    CHECK(k && k->type == ENG_PARAM_ENUM);
    CHECK(k && !strcmp(k->choices[0], "npu") && !strcmp(k->choices[1], "cpu") && !k->choices[2]);
    sim_device d = phone();
    CHECK(d.verify_unit == SIM_VERIFY_NPU);
}

/* A layer's compute on the CPU: the roofline at every row count, no padding
 * (3 rows cost less than 4 once compute-bound), the crossover between memory
 * and compute exactly where the formula puts it, no launch or sync. */
static void test_layer_rates(void)
{
    sim_model t = q8();
    t.cpu_efficiency = 0.8; /* the CPU's residual, not the NPU's, applies */
    t.npu_efficiency = 1.3;
    sim_device d = cpu_phone();
    sim_hw *hw = make(&d, &t, NULL, 0.0);
    double bytes = sim_model_layer_bytes(&t) + 256.0 * sim_model_kv_layer_bytes(&t);
    int crossed = 0;
    for (int32_t r = 1; r <= 300; r++) {
        double want = layer_cpu_ms(&d, &t, r, 256), got = sim_hw_layer_npu_ms(hw, r, 256);
        CHECK(NEAR(got, want));
        if (r > 1) CHECK(got >= sim_hw_layer_npu_ms(hw, r - 1, 256));
        /* below the crossover the rows ride on the weights' read */
        double mem = bytes / (d.cpu_gbps * 1e6) / t.cpu_efficiency;
        if (got > mem * (1 + 1e-12) && !crossed) {
            crossed = r;
            CHECK(r >= 2 && NEAR(sim_hw_layer_npu_ms(hw, r - 1, 256), mem));
        }
    }
    CHECK(crossed >= 2 && crossed < 300);
    /* compute-bound: every row counts, none padded to a compiled shape */
    int32_t r = crossed + 1;
    CHECK(sim_hw_layer_npu_ms(hw, r, 256) < sim_hw_layer_npu_ms(hw, r + 1, 256));
    CHECK(sim_hw_verify_graph_rows(hw, r) == r);
    sim_hw_destroy(hw);
    /* NPU graph keys do not reach the CPU runtime */
    sim_device e = d;
    e.launch_us = e.sync_us = 50000;
    e.npu_gflops = 1;
    e.npu_shapes[0] = 64;
    e.n_npu_shapes = 1;
    e.verify_min_rows = 16;
    e.npu_call_us = 90000;
    sim_hw *a = make(&d, &t, NULL, 0.0), *b = make(&e, &t, NULL, 0.0);
    CHECK(sim_hw_verify_graph_rows(b, 3) == 3 && sim_hw_verify_graph_rows(b, 2) == 2);
    for (int32_t k = 1; k <= 70; k += 3) {
        CHECK(sim_hw_layer_npu_ms(a, k, 100) == sim_hw_layer_npu_ms(b, k, 100));
        CHECK(sim_hw_head_npu_ms(a, k) == sim_hw_head_npu_ms(b, k));
    }
    sim_hw_destroy(a);
    sim_hw_destroy(b);
}

/* The head: eager over the final rows as one batched pass on the CPU; the
 * on-demand modes as proj_rows GEMVs (the NPU one with no NPU call). */
static void test_head(void)
{
    sim_model t = q8();
    t.cpu_efficiency = 0.9;
    t.npu_efficiency = 1.2;
    sim_device d = cpu_phone();
    d.npu_call_us = 7000;
    sim_hw *hw = make(&d, &t, NULL, 0.0);
    double hb = sim_model_head_bytes(&t), hf = 2.0 * (double)t.vocab * t.hidden;
    for (int32_t r = 1; r <= 64; r *= 2) {
        double mem = hb / (d.cpu_gbps * 1e6), comp = r * hf / (d.cpu_gflops * 1e6);
        CHECK(NEAR(sim_hw_head_npu_ms(hw, r), (mem > comp ? mem : comp) / t.cpu_efficiency));
    }
    sim_verify_shape v = shape(8, 1);
    v.proj = ENG_PROJ_ONDEMAND_NPU;
    v.proj_rows = 3;
    CHECK(NEAR(sim_hw_proj_ms(hw, &v), sim_hw_head_cpu_ms(hw, 3)));
    v.proj = ENG_PROJ_ONDEMAND_CPU;
    CHECK(NEAR(sim_hw_proj_ms(hw, &v), sim_hw_head_cpu_ms(hw, 3)));
    sim_hw_destroy(hw);
}

/* A whole cycle: the verification is charged to the CPU, never the NPU; with
 * nothing pinned and prefetch 0 it is the reads plus the compute exactly. */
static void test_cycle_charges_cpu(void)
{
    sim_model t = q8(), dr = eagle(4096, 12288);
    sim_device d = cpu_phone();
    for (int proj = 0; proj < 3; proj++) {
        sim_hw *hw = make(&d, &t, &dr, 0.0);
        sim_draft_call calls[3] = {
            {ENG_UNIT_CPU, 1, 256, 0}, {ENG_UNIT_NPU, 1, 257, 0}, {ENG_UNIT_NPU, 4, 258, 0}};
        sim_verify_shape v = shape(6, 1);
        v.proj = (eng_proj_mode)proj;
        v.proj_rows = 2;
        sim_cycle_time o;
        double call_ms[3];
        CHECK(hw_run(hw, calls, 3, &v, &o, call_ms) == SIM_OK);
        CHECK(o.npu_ms == 0.0);
        /* NPU-named draft calls are CPU calls at the CPU's price */
        CHECK(NEAR(call_ms[1], sim_hw_draft_ms(hw, ENG_UNIT_CPU, 1, 257)));
        CHECK(NEAR(sim_hw_draft_ms(hw, ENG_UNIT_NPU, 4, 258),
                   sim_hw_draft_ms(hw, ENG_UNIT_CPU, 4, 258)));
        double draft = call_ms[0] + call_ms[1] + call_ms[2];
        double compute = t.layers * sim_hw_layer_npu_ms(hw, 6, 256) + sim_hw_proj_ms(hw, &v);
        double reads = t.layers * sim_hw_layer_read_ms(hw) + sim_hw_head_read_ms(hw);
        CHECK_NEAR(o.cpu_ms, draft + compute + sim_hw_setup_ms(hw, &v), 1e-5 * t.layers);
        CHECK_NEAR(o.flash_ms, reads, 1e-5 * t.layers);
        CHECK_NEAR(o.verify_ms, reads + compute + sim_hw_setup_ms(hw, &v), 1e-5 * t.layers);
        CHECK(o.cpu_ms <= o.cycle_ms + 1e-9); /* one resource: never busier than the wall */
        sim_hw_destroy(hw);
    }
}

/* The default runtime keeps the NPU: the same phone with verify_unit npu
 * charges the layers to npu_ms, and the CPU runtime's numbers differ. */
static void test_default_npu(void)
{
    sim_model t = q8();
    sim_device n = phone(), c = phone();
    c.verify_unit = SIM_VERIFY_CPU;
    sim_hw *a = make(&n, &t, NULL, 0.0), *b = make(&c, &t, NULL, 0.0);
    sim_verify_shape v = shape(3, 1);
    sim_cycle_time oa, ob;
    CHECK(hw_run(a, NULL, 0, &v, &oa, NULL) == SIM_OK);
    CHECK(hw_run(b, NULL, 0, &v, &ob, NULL) == SIM_OK);
    CHECK(oa.npu_ms > 0 && oa.cpu_ms == oa.kv_ms);
    CHECK(ob.npu_ms == 0 && ob.cpu_ms > ob.kv_ms);
    /* the NPU pads 3 rows to 4 and pays launch + sync; the CPU does neither */
    int32_t execs;
    CHECK(sim_cost_npu_pad(&n, 3, &execs) == 4);
    double bytes = sim_model_layer_bytes(&t) + 256.0 * sim_model_kv_layer_bytes(&t);
    double flops = 2.0 * sim_model_layer_params(&t) + 4.0 * t.heads * t.head_dim * (256.0 + 4);
    CHECK(NEAR(sim_hw_layer_npu_ms(a, 3, 256),
               sim_cost_npu_ms(&n, 4, bytes, flops, t.npu_efficiency)));
    CHECK(NEAR(sim_hw_layer_npu_ms(b, 3, 256), layer_cpu_ms(&c, &t, 3, 256)));
    sim_hw_destroy(a);
    sim_hw_destroy(b);
}

/* Overlapping draft calls share the cores with the target: ungated, they
 * queue with its layers (cpu_ms never exceeds the wall time); gated, they run
 * while the target waits for its pages.  The walk and both event
 * simulations give the same numbers. */
static void test_overlap_serialises(void)
{
    sim_model t = q8(), dr = eagle(4096, 12288);
    sim_device d = cpu_phone();
    d.contention_compute = 1.0;
    sim_draft_call ovc[6];
    for (int i = 0; i < 6; i++)
        ovc[i] = (sim_draft_call){i % 2 ? ENG_UNIT_NPU : ENG_UNIT_CPU, 1, 300 + i, 0};
    for (int gate = 0; gate < 2; gate++) {
        sim_cycle_time o[2];
        for (int ev = 0; ev < 2; ev++) {
            sim_hw *hw = make(&d, &t, &dr, 0.25);
            sim_hw_set_events_always(hw, ev);
            sim_verify_shape v = shape(4, 2);
            sim_overlap ov = {ovc, 6, gate};
            CHECK(hw_run_ov(hw, NULL, 0, &v, &ov, &o[ev], NULL) == SIM_OK);
            CHECK(o[ev].npu_ms == 0.0);
            CHECK(o[ev].cpu_ms <= o[ev].cycle_ms + 1e-9);
            CHECK(o[ev].overlap_calls > 0);
            sim_hw_destroy(hw);
        }
        CHECK(o[0].cycle_ms == o[1].cycle_ms && o[0].cpu_ms == o[1].cpu_ms &&
              o[0].flash_ms == o[1].flash_ms && o[0].energy_mj == o[1].energy_mj &&
              o[0].overlap_calls == o[1].overlap_calls);
    }
}

/* Memory-mapped reads: requests of read_ahead_kb, one fault in flight per
 * compute thread -- the flash formula's request count at the boundary of a
 * request and its latency over the queue. */
static void test_fault_requests(void)
{
    sim_device d = cpu_phone();
    double req = 128.0 * 1024.0, lat = 8e-3 / 4;
    for (int n = 1; n <= 2000; n += 333) {
        double b = n * req;
        CHECK(NEAR(sim_cost_flash_q_ms(&d, b, 1.0, 4), b / (d.read_gbps * 1e6) + n * lat));
        CHECK(NEAR(sim_cost_flash_q_ms(&d, b + 1, 1.0, 4),
                   (b + 1) / (d.read_gbps * 1e6) + (n + 1) * lat));
    }
    sim_model t = q8();
    sim_hw *hw = make(&d, &t, NULL, 0.0);
    double lb = sim_model_layer_bytes(&t);
    CHECK(NEAR(sim_hw_layer_read_ms(hw),
               (lb / (d.read_gbps * 1e6) + ceil(lb / req) * lat) / t.flash_efficiency));
    sim_hw_destroy(hw);
}

/* The page cache keeps the first floor(x L) layers: each kept layer leaves
 * the reads of every verification; the compute stays on the CPU. */
static void test_page_cache(void)
{
    sim_model t = q8();
    sim_device d = cpu_phone();
    double prev = INFINITY;
    for (int i = 0; i <= 4; i++) {
        double x = i / 4.0;
        sim_hw *hw = make(&d, &t, NULL, x);
        sim_hw_memory m;
        sim_hw_get_memory(hw, &m);
        sim_verify_shape v = shape(1, 1);
        v.decode = 1;
        sim_cycle_time o;
        CHECK(hw_run(hw, NULL, 0, &v, &o, NULL) == SIM_OK);
        CHECK(NEAR(o.flash_bytes, m.streamed_bytes));
        CHECK(o.npu_ms == 0.0 && o.verify_ms <= prev);
        prev = o.verify_ms;
        sim_hw_destroy(hw);
    }
}

/* Spans name the CPU for the target's layers and head. */
typedef struct res_count {
    int npu, cpu_layers;
} res_count;

static void count_res(void *ctx, const char *res, const char *label, int32_t index, int64_t t0,
                      int64_t t1)
{
    res_count *n = ctx;
    (void)index, (void)t0, (void)t1;
    n->npu += !strcmp(res, "npu");
    n->cpu_layers += !strcmp(res, "cpu") && !strcmp(label, "layer");
}

static void test_spans(void)
{
    sim_model t = q8(), dr = eagle(4096, 12288);
    sim_device d = cpu_phone();
    sim_hw *hw = make(&d, &t, &dr, 0.0);
    res_count n = {0, 0};
    sim_hw_set_span_fn(hw, count_res, &n);
    sim_draft_call c = {ENG_UNIT_NPU, 2, 100, 0};
    sim_verify_shape v = shape(3, 1);
    CHECK(hw_run(hw, &c, 1, &v, NULL, NULL) == SIM_OK);
    CHECK(n.npu == 0 && n.cpu_layers == t.layers);
    sim_hw_destroy(hw);
}

int main(void)
{
    test_key();
    test_layer_rates();
    test_head();
    test_cycle_charges_cpu();
    test_default_npu();
    test_overlap_serialises();
    test_fault_requests();
    test_page_cache();
    test_spans();
    return check_done("test_cpu_runtime");
}
