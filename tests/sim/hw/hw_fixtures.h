/*
 * hw_fixtures.h -- the phone-model tests' profiles and helpers, built in C so
 * that the tests do not depend on the shipped Lua files: a test phone and its
 * powered variant, decoders the size of Qwen3 8B / 14B / 4B, an EAGLE-3 draft,
 * handle and shape constructors, a span counter and a fixed random stream.
 * Include check.h first.
 */
#ifndef FS_TEST_HW_FIXTURES_H
#define FS_TEST_HW_FIXTURES_H

#include "sim/hw/sim_hw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-6 * (1.0 + fabs(b)))

static inline sim_device phone(void)
{
    sim_device d;
    eng_params_defaults(sim_device_keys(), &d);
    snprintf(d.name, sizeof d.name, "testphone");
    d.read_gbps = 5.0;
    d.request_kb = 512;
    d.request_latency_us = 20;
    d.prefetch_layers = 0;
    d.dram_budget_gb = 6.0;
    d.dram_gbps = 76.8;
    d.npu_gbps = 76.8;
    d.npu_gflops = 1000;
    d.launch_us = 500;
    d.sync_us = 500;
    d.cpu_gbps = 17.2;
    d.cpu_gflops = 200;
    d.kv_seq_us = 100;
    return d;
}

static inline sim_model decoder(int32_t layers, int32_t hidden, int32_t heads, int32_t ffn,
                                int32_t vocab, int tied)
{
    sim_model m;
    eng_params_defaults(sim_model_keys(), &m);
    snprintf(m.name, sizeof m.name, "m%d", (int)hidden);
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.ffn = ffn;
    m.vocab = vocab;
    m.tied_embeddings = tied;
    m.weight_bits = 4.5;
    return m;
}

static inline sim_model q8(void)
{
    return decoder(36, 4096, 32, 12288, 151936, 0);
}

static inline sim_model q14(void)
{
    return decoder(40, 5120, 40, 17408, 151936, 0);
}

static inline sim_model q4(void)
{
    return decoder(36, 2560, 32, 9728, 151936, 1);
}

static inline sim_model eagle(int32_t hidden, int32_t ffn)
{
    sim_model m = decoder(1, hidden, 32, ffn, 32000, 0);
    m.kind = SIM_MODEL_EAGLE3;
    m.attn_in_mult = 2;
    m.fusion_in = 3;
    return m;
}

static inline sim_hw *make(const sim_device *d, const sim_model *t, const sim_model *dr, double x)
{
    sim_hw *hw = NULL;
    char err[512];
    int rc = sim_hw_create(d, t, dr, x, 4096, &hw, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK && hw);
    return hw;
}

static inline sim_verify_shape shape(int32_t rows, int32_t leaves)
{
    sim_verify_shape v = {.rows = rows,
                          .leaves = leaves,
                          .ctx_len = 256,
                          .exit_layer = -1,
                          .rows_after_exit = rows,
                          .proj = ENG_PROJ_EAGER_NPU,
                          .proj_rows = 1};
    return v;
}

/* Power states of the test phone: every resource distinct so that a wrong term
 * shows up in the total. */
static inline sim_device powered(void)
{
    sim_device d = phone();
    d.base_w = 1.0;
    d.cpu_active_w = 2.962;
    d.cpu_idle_w = 0.2;
    d.npu_active_w = 3.0;
    d.npu_idle_w = 0.1;
    d.flash_active_w = 1.5;
    d.flash_idle_w = 0.05;
    d.dram_j_per_gb = 0.04;
    return d;
}

typedef struct spans_count {
    int layers, heads, reads;
} spans_count;

static inline void count_span(void *ctx, const char *res, const char *label, int32_t index,
                              int64_t t0, int64_t t1)
{
    spans_count *n = ctx;
    (void)res, (void)index;
    CHECK(t0 <= t1);
    n->layers += strcmp(label, "layer") == 0;
    n->heads += strcmp(label, "head") == 0;
    n->reads += strcmp(label, "read") == 0;
}

static inline uint64_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* The DRAM accounting of a phone model made from these inputs (through
 * sim_hw_create): its status, and *out when it is SIM_OK. */
static inline int plan_memory(const sim_device *dev, const sim_model *target,
                              const sim_model *draft, double dram_fraction, int32_t max_ctx,
                              sim_hw_memory *out, char *err, size_t errlen)
{
    sim_hw *hw;
    int rc = sim_hw_create(dev, target, draft, dram_fraction, max_ctx, &hw, err, errlen);
    if (rc != SIM_OK) return rc;
    sim_hw_get_memory(hw, out);
    sim_hw_destroy(hw);
    return rc;
}

/* The set-up and KV management of a tree shape (decode = 0) of rows and
 * leaves (sim_hw_setup_ms). */
static inline double kv_ms(const sim_hw *hw, int32_t rows, int32_t leaves)
{
    sim_verify_shape v = {.rows = rows, .leaves = leaves};
    return sim_hw_setup_ms(hw, &v);
}

/* The cycle through its one entry point (sim_hw_cycle), in the shapes the
 * tests ask for: run on the clock, with overlapping calls, priced on the
 * scratch simulation, wall times only (accepted: unchecked), and a
 * verification priced alone (its verify_ms, NaN when refused). */
static inline int hw_run_ov(sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                            const sim_verify_shape *v, const sim_overlap *ov, sim_cycle_time *out,
                            double *call_ms)
{
    sim_cycle_req q = {.calls = calls, .n_calls = n_calls, .verify = v, .call_ms = call_ms};
    if (ov) q.overlap = *ov;
    return sim_hw_cycle(hw, &q, out);
}

static inline int hw_run(sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                         const sim_verify_shape *v, sim_cycle_time *out, double *call_ms)
{
    return hw_run_ov(hw, calls, n_calls, v, NULL, out, call_ms);
}

static inline int hw_price(sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                           const sim_verify_shape *v, sim_cycle_time *out, double *call_ms)
{
    sim_cycle_req q = {
        .calls = calls, .n_calls = n_calls, .verify = v, .call_ms = call_ms, .price = 1};
    return sim_hw_cycle(hw, &q, out);
}

static inline int hw_walls(sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                           const sim_verify_shape *v, const sim_overlap *ov, int accepted,
                           double *cycle_ms)
{
    sim_cycle_req q = {
        .calls = calls, .n_calls = n_calls, .verify = v, .walls_only = 1, .accepted = accepted};
    if (ov) q.overlap = *ov;
    sim_cycle_time t = {0};
    int rc = sim_hw_cycle(hw, &q, &t);
    if (rc == SIM_OK) *cycle_ms = t.cycle_ms; /* untouched otherwise */
    return rc;
}

static inline int hw_run_ms(sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                            const sim_verify_shape *v, const sim_overlap *ov, double *cycle_ms)
{
    return hw_walls(hw, calls, n_calls, v, ov, 0, cycle_ms);
}

static inline int hw_run_ms_accepted(sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                                     const sim_verify_shape *v, const sim_overlap *ov,
                                     double *cycle_ms)
{
    return hw_walls(hw, calls, n_calls, v, ov, 1, cycle_ms);
}

static inline int hw_verify_ms(sim_hw *hw, const sim_verify_shape *v, double *verify_ms)
{
    sim_cycle_req q = {.verify = v, .price = 1, .walls_only = 1};
    sim_cycle_time t = {0};
    int rc = sim_hw_cycle(hw, &q, &t);
    *verify_ms = rc == SIM_OK ? t.verify_ms : NAN;
    return rc;
}

#endif
