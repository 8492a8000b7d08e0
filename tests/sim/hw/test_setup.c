/*
 * test_setup.c -- the set-up of a tree verification by mechanism (sim_hw.h
 * "The set-up"): how each part scales with the DRAM fraction, the streamed and
 * resident bytes, the streamed ops and the target's size; who pays it (2+ rows,
 * a one-row tree only with verify_setup_one_row, a plain decode step never);
 * that the cycle charges exactly it; the head pinning rule and tree
 * verifications reading ahead (verify_overlap); and that Flash-AR and a fixed-shape
 * chain never get slower as more of the target is pinned, under random
 * set-up mixes (the physical invariants of the phone model).
 */
#include "sim/hw/sim_hw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "hw_fixtures.h"

static const double fractions[] = {0.0, 0.2, 0.5, 0.8, 1.0};
#define NFRAC (int)(sizeof fractions / sizeof fractions[0])

static double setup_at(const sim_device *d, const sim_model *t, double x, int32_t rows, int decode)
{
    sim_hw *hw = make(d, t, NULL, x);
    sim_verify_shape v = shape(rows, 1);
    v.decode = decode;
    double ms = sim_hw_setup_ms(hw, &v);
    sim_hw_destroy(hw);
    return ms;
}

static double weight_gb(const sim_model *t)
{
    return (t->layers * sim_model_layer_bytes(t) + sim_model_head_bytes(t)) / 1e9;
}

/* Each part alone, at several DRAM fractions, against its closed form. */
static void test_parts_scale(void)
{
    sim_model t = q8();
    double lb = sim_model_layer_bytes(&t), hb = sim_model_head_bytes(&t);
    for (int i = 0; i < NFRAC; i++) {
        double x = fractions[i];
        sim_hw_memory mem;
        sim_device d = phone();
        CHECK(plan_memory(&d, &t, NULL, x, 4096, &mem, NULL, 0) == SIM_OK);
        double streamed = mem.streamed_layers * lb + (mem.head_resident ? 0.0 : hb);
        double resident = mem.resident_layers * lb + (mem.head_resident ? hb : 0.0);
        CHECK(NEAR(streamed + resident, weight_gb(&t) * 1e9));

        d.verify_setup_us = 300000; /* constant: the same at every fraction */
        CHECK(NEAR(setup_at(&d, &t, x, 8, 0), 300.0));
        d = phone();
        d.verify_setup_streamed_us_per_gb = 80000; /* per streamed GB: gone when pinned */
        CHECK(NEAR(setup_at(&d, &t, x, 8, 0), streamed / 1e9 * 80.0));
        d = phone();
        d.verify_setup_resident_us_per_gb = 50000; /* per resident GB: grows with pinning */
        CHECK(NEAR(setup_at(&d, &t, x, 8, 0), resident / 1e9 * 50.0));
        d = phone();
        d.verify_setup_layer_us = 9000; /* per streamed op: layers + a streamed head */
        CHECK(NEAR(setup_at(&d, &t, x, 8, 0), 9.0 * (mem.streamed_layers + !mem.head_resident)));
        /* equal per-GB costs: a set-up proportional to the whole target,
         * whatever is pinned */
        d = phone();
        d.verify_setup_streamed_us_per_gb = d.verify_setup_resident_us_per_gb = 70000;
        CHECK(NEAR(setup_at(&d, &t, x, 8, 0), weight_gb(&t) * 70.0));
        double parts[SIM_HW_SETUP_PARTS];
        sim_hw *hw = make(&d, &t, NULL, x);
        CHECK(NEAR(sim_hw_tree_setup_ms(hw, parts), weight_gb(&t) * 70.0));
        CHECK(parts[0] == 0.0 && parts[3] == 0.0);
        CHECK(NEAR(parts[1], streamed / 1e9 * 70.0) && NEAR(parts[2], resident / 1e9 * 70.0));
        sim_hw_destroy(hw);
    }
    /* monotone in the fraction: streamed parts fall, resident parts rise */
    sim_device a = phone(), b = phone();
    a.verify_setup_streamed_us_per_gb = 80000;
    b.verify_setup_resident_us_per_gb = 80000;
    for (int i = 1; i < NFRAC; i++) {
        CHECK(setup_at(&a, &t, fractions[i], 8, 0) < setup_at(&a, &t, fractions[i - 1], 8, 0));
        CHECK(setup_at(&b, &t, fractions[i], 8, 0) > setup_at(&b, &t, fractions[i - 1], 8, 0));
    }
    CHECK(setup_at(&a, &t, 1.0, 8, 0) == 0.0 && setup_at(&b, &t, 0.0, 8, 0) == 0.0);
}

/* A weight-proportional set-up scales with the target's size (Qwen3-4B /
 * 8B / 14B shapes); a constant one does not. */
static void test_target_size(void)
{
    sim_model m4 = q4(), m8 = q8(), m14 = q14();
    sim_device d = phone();
    d.dram_budget_gb = 64; /* large enough for any fraction */
    d.verify_setup_streamed_us_per_gb = d.verify_setup_resident_us_per_gb = 70000;
    double s4 = setup_at(&d, &m4, 0.0, 8, 0), s8 = setup_at(&d, &m8, 0.0, 8, 0),
           s14 = setup_at(&d, &m14, 0.5, 8, 0);
    CHECK(NEAR(s4 / s8, weight_gb(&m4) / weight_gb(&m8)));
    CHECK(NEAR(s14 / s8, weight_gb(&m14) / weight_gb(&m8)));
    CHECK(s4 < s8 && s8 < s14);
    sim_device c = phone();
    c.dram_budget_gb = 64;
    c.verify_setup_us = 250000;
    CHECK(setup_at(&c, &m4, 0.0, 8, 0) == setup_at(&c, &m14, 1.0, 8, 0));
}

/* Who pays: 2+ rows always; one row only as a tree with verify_setup_one_row;
 * a decode step never.  Leaves add their KV copies on top either way. */
static void test_who_pays(void)
{
    sim_model t = q8();
    sim_device d = phone();
    d.verify_setup_us = 200000;
    d.verify_setup_layer_us = 1000;
    for (int i = 0; i < NFRAC; i++) {
        double x = fractions[i], tree = setup_at(&d, &t, x, 2, 0);
        CHECK(tree > 200.0 - 1e-9);
        CHECK(setup_at(&d, &t, x, 1, 0) == 0.0); /* one_row off: the old rule */
        CHECK(setup_at(&d, &t, x, 1, 1) == 0.0);
        sim_device o = d;
        o.verify_setup_one_row = 1;
        CHECK(NEAR(setup_at(&o, &t, x, 1, 0), tree)); /* a one-row tree pays it all */
        CHECK(setup_at(&o, &t, x, 1, 1) == 0.0);      /* a decode step never */
    }
    /* leaves: the KV copies come on top of the set-up */
    sim_hw *hw = make(&d, &t, NULL, 0.0);
    sim_verify_shape v = shape(8, 3);
    double per_leaf = 8 * sim_model_kv_token_bytes(&t) / (d.cpu_gbps * 1e6) + d.kv_seq_us * 1e-3;
    CHECK(NEAR(sim_hw_setup_ms(hw, &v), sim_hw_tree_setup_ms(hw, NULL) + 3 * per_leaf));
    CHECK(NEAR(kv_ms(hw, 8, 3), sim_hw_setup_ms(hw, &v)));
    sim_hw_destroy(hw);
}

/* The cycle charges the set-up: with the whole target pinned nothing hides
 * it, so a one-row tree costs exactly the set-up more than a decode step; a
 * decode shape of two rows is refused. */
static void test_cycle_charges(void)
{
    sim_model t = q8();
    sim_device d = phone();
    d.verify_setup_us = 123000;
    d.verify_setup_resident_us_per_gb = 10000;
    d.verify_setup_one_row = 1;
    sim_hw *hw = make(&d, &t, NULL, 1.0);
    sim_verify_shape dec = shape(1, 1), tree = shape(1, 1);
    dec.decode = 1;
    double a, b;
    CHECK(hw_verify_ms(hw, &dec, &a) == SIM_OK);
    CHECK(hw_verify_ms(hw, &tree, &b) == SIM_OK);
    CHECK(fabs((b - a) - sim_hw_tree_setup_ms(hw, NULL)) <= 1e-5);
    sim_cycle_time ct;
    CHECK(hw_price(hw, NULL, 0, &tree, &ct, NULL) == SIM_OK);
    CHECK(fabs(ct.verify_ms - b) <= 1e-9 && fabs(ct.kv_ms - sim_hw_tree_setup_ms(hw, NULL)) < 1e-5);
    sim_verify_shape bad = shape(2, 1);
    bad.decode = 1;
    CHECK(hw_price(hw, NULL, 0, &bad, &ct, NULL) == SIM_CONFIG_INVALID);
    bad = shape(1, 1);
    bad.decode = 2;
    CHECK(hw_price(hw, NULL, 0, &bad, &ct, NULL) == SIM_CONFIG_INVALID);
    sim_hw_destroy(hw);
}

/* pin_head = 0: the fraction pins layers only, an untied head stays streamed
 * (and in the streamed set-up parts); a tied head is resident either way. */
static void test_pin_head(void)
{
    sim_model t = q8(), tied = q4();
    sim_device d = phone();
    d.pin_head = 0;
    d.verify_setup_layer_us = 1000;
    sim_hw_memory mem;
    CHECK(plan_memory(&d, &t, NULL, 1.0, 4096, &mem, NULL, 0) == SIM_OK);
    CHECK(!mem.head_resident && mem.streamed_layers == 0);
    CHECK(mem.streamed_bytes == sim_model_head_bytes(&t));
    CHECK(mem.bytes[SIM_MEM_BUFFERS] == sim_model_head_bytes(&t));
    CHECK(NEAR(setup_at(&d, &t, 1.0, 8, 0), 1.0)); /* the head is the one streamed op */
    CHECK(plan_memory(&d, &tied, NULL, 1.0, 4096, &mem, NULL, 0) == SIM_OK);
    CHECK(mem.head_resident && mem.streamed_bytes == 0.0);
    sim_device p = phone(); /* the default pins it with the last layer */
    CHECK(plan_memory(&p, &t, NULL, 1.0, 4096, &mem, NULL, 0) == SIM_OK);
    CHECK(mem.head_resident && mem.streamed_bytes == 0.0);
    /* a Flash-AR token with every layer pinned still reads the head, from
     * the token's start (the loader's buffer is free) while the pinned
     * layers compute: it waits only for what the read takes beyond them */
    sim_hw *a = make(&d, &t, NULL, 1.0), *b = make(&p, &t, NULL, 1.0);
    sim_verify_shape v = shape(1, 1);
    v.decode = 1;
    double ta, tb;
    CHECK(hw_verify_ms(a, &v, &ta) == SIM_OK);
    CHECK(hw_verify_ms(b, &v, &tb) == SIM_OK);
    double layers = t.layers * sim_hw_layer_npu_ms(a, 1, 0), hr = sim_hw_head_read_ms(a);
    double wait = hr > layers ? hr - layers : 0.0;
    CHECK(fabs(ta - (tb + wait)) < 1e-5);
    sim_cycle_time ct;
    CHECK(hw_price(a, NULL, 0, &v, &ct, NULL) == SIM_OK);
    CHECK(fabs(ct.flash_ms - hr) < 1e-5 && ct.flash_bytes == sim_model_head_bytes(&t));
    /* head_resident = 1: the runtime keeps it in DRAM at every budget */
    d.head_resident = 1;
    CHECK(plan_memory(&d, &t, NULL, 0.0, 4096, &mem, NULL, 0) == SIM_OK);
    CHECK(mem.head_resident && mem.bytes[SIM_MEM_HEAD] == sim_model_head_bytes(&t));
    CHECK(mem.streamed_bytes == t.layers * sim_model_layer_bytes(&t));
    sim_hw_destroy(a);
    sim_hw_destroy(b);
}

/* verify_overlap = 1: a tree verification reads as the spec_* runtime does,
 * a decode step as the device's runtime; 0: both as the device's. */
static void test_verify_overlap(void)
{
    sim_model t = q8();
    sim_device d = phone();
    d.spec_prefetch_layers = 2;
    d.spec_queue_depth = 32;
    d.verify_setup_us = 100000;
    sim_device o = d;
    o.verify_overlap = 1;
    sim_hw *base = make(&d, &t, NULL, 0.3), *ov = make(&o, &t, NULL, 0.3);
    sim_verify_shape tree = shape(8, 2), spec = shape(8, 2), dec = shape(1, 1);
    spec.runtime = SIM_RUNTIME_SPEC;
    dec.decode = 1;
    double a, b, c;
    CHECK(sim_hw_stream_runtime(ov, &tree) == SIM_RUNTIME_SPEC);
    CHECK(sim_hw_stream_runtime(ov, &dec) == SIM_RUNTIME_BASELINE);
    CHECK(sim_hw_stream_runtime(base, &tree) == SIM_RUNTIME_BASELINE);
    CHECK(hw_verify_ms(ov, &tree, &a) == SIM_OK);
    CHECK(hw_verify_ms(base, &spec, &b) == SIM_OK);
    CHECK(a == b); /* the same reads as the speculative runtime */
    CHECK(hw_verify_ms(base, &tree, &c) == SIM_OK);
    CHECK(a < c); /* reads running ahead hide part of the I/O */
    CHECK(hw_verify_ms(ov, &dec, &a) == SIM_OK);
    CHECK(hw_verify_ms(base, &dec, &b) == SIM_OK);
    CHECK(a == b); /* a decode step keeps the device's runtime */
    sim_cycle_time ct;
    CHECK(hw_price(ov, NULL, 0, &tree, &ct, NULL) == SIM_OK);
    CHECK(hw_verify_ms(ov, &tree, &a) == SIM_OK && fabs(ct.verify_ms - a) < 1e-9);
    sim_hw_destroy(base);
    sim_hw_destroy(ov);
}

/* Physical invariants over random profiles: a Flash-AR token (a decode step)
 * and a fixed 9-row chain verification never get slower as the pinned share
 * rises, whatever the set-up mix, prefetch depth and queue; and the step
 * between neighbouring fractions is at most the streamed ops they pin (their
 * reads, plus what the set-up charges per streamed op and byte). */
static void test_dram_monotone(void)
{
    uint64_t seed = 12345;
    sim_model m = q8(), e = eagle(4096, 12288);
    for (int trial = 0; trial < 200; trial++) {
        sim_device d = phone();
        d.dram_budget_gb = 64;
        d.read_gbps = 1.0 + (double)(next_rand(&seed) % 8000) / 1000.0;
        d.request_latency_us = (double)(next_rand(&seed) % 60);
        d.prefetch_layers = (int32_t)(next_rand(&seed) % 3);
        d.queue_depth = 1 + (int32_t)(next_rand(&seed) % 4);
        d.npu_gflops = 200.0 + (double)(next_rand(&seed) % 2000);
        d.verify_setup_us = (double)(next_rand(&seed) % 500000);
        d.verify_setup_streamed_us_per_gb = (double)(next_rand(&seed) % 100000);
        d.verify_setup_resident_us_per_gb = trial % 2 ? 0.0 : (double)(next_rand(&seed) % 20000);
        d.verify_setup_layer_us = (double)(next_rand(&seed) % 10000);
        d.verify_setup_one_row = (int32_t)(next_rand(&seed) % 2);
        d.pin_head = (int32_t)(next_rand(&seed) % 2);
        d.spec_prefetch_layers = (int32_t)(next_rand(&seed) % 3);
        d.spec_queue_depth = 1 + (int32_t)(next_rand(&seed) % 32);
        d.verify_overlap = (int32_t)(next_rand(&seed) % 2);
        d.head_resident = (int32_t)(next_rand(&seed) % 2);
        d.verify_graph_us = (double)(next_rand(&seed) % 10000);
        d.verify_row_us = (double)(next_rand(&seed) % 1000);
        d.verify_kv_snapshot = (int32_t)(next_rand(&seed) % 2);
        double prev_ar = INFINITY, prev_chain = INFINITY;
        for (int32_t k = 0; k <= 36; k++) {
            double x = k / 36.0;
            sim_hw *hw = make(&d, &m, &e, x);
            sim_verify_shape ar = shape(1, 1), chain = shape(9, 1);
            ar.decode = 1;
            double t_ar, t_chain;
            CHECK(hw_verify_ms(hw, &ar, &t_ar) == SIM_OK);
            CHECK(hw_verify_ms(hw, &chain, &t_chain) == SIM_OK);
            /* a resident-byte set-up may outgrow the reads it saves only
             * for chains; a decode step pays no set-up */
            CHECK(t_ar <= prev_ar + 1e-9);
            if (d.verify_setup_resident_us_per_gb == 0.0) CHECK(t_chain <= prev_chain + 1e-9);
            /* no jump beyond one layer's read and set-up, or the head's */
            if (isfinite(prev_ar)) {
                double one = sim_hw_layer_read_ms(hw) + sim_hw_head_read_ms(hw);
                CHECK(prev_ar - t_ar <= one + 1e-6);
            }
            prev_ar = t_ar;
            prev_chain = t_chain;
            sim_hw_destroy(hw);
        }
    }
}

/* The loader's ring (sim_hw.h "The runtime"): with one buffer, a tree
 * verification reads its first streamed layer while the set-up and the pinned
 * layers run, so pinning the first layer saves that read even when the set-up
 * is longer than it; at 0% DRAM the set-up hides the first read. */
static void test_loader_ring(void)
{
    sim_model t = q8();
    sim_device d = phone();
    d.verify_setup_us = 300000; /* longer than a layer's read (~22 ms) */
    d.dram_budget_gb = 64;
    sim_hw *h0 = make(&d, &t, NULL, 0.0), *h1 = make(&d, &t, NULL, 1.0 / 36.0);
    sim_verify_shape v = shape(8, 1);
    double a, b;
    CHECK(hw_verify_ms(h0, &v, &a) == SIM_OK);
    CHECK(hw_verify_ms(h1, &v, &b) == SIM_OK);
    double lr = sim_hw_layer_read_ms(h0), lay = sim_hw_layer_npu_ms(h0, 8, 256);
    double head = sim_hw_head_npu_ms(h0, 8), hr = sim_hw_head_read_ms(h0);
    /* 0%: max(set-up, read 0) + 35 more reads and the head's, serial with 36 layers */
    double want0 = 300.0 + 35 * lr + hr + 36 * lay + head;
    CHECK(fabs(a - want0) < 1e-4);
    /* layer 0 pinned: read 1 runs under the set-up; one read fewer */
    CHECK(fabs((a - b) - lr) < 1e-4);
    /* the pinned layer and the set-up longer than the read: nothing waits */
    sim_device s = d;
    s.verify_setup_us = 1000; /* 1 ms: now the first read binds */
    sim_hw *g0 = make(&s, &t, NULL, 0.0), *g1 = make(&s, &t, NULL, 1.0 / 36.0);
    CHECK(hw_verify_ms(g0, &v, &a) == SIM_OK);
    CHECK(hw_verify_ms(g1, &v, &b) == SIM_OK);
    /* 0%: read 0 (> set-up) then layer 0; pinned: layer 0 (after the set-up)
     * overlaps read 1, and layer 1 waits for what is left of it; the rest is
     * the same in both */
    double over = 1.0 + lay > lr ? 1.0 + lay : lr;
    CHECK(fabs((a - (2 * lr + lay)) - (b - over)) < 1e-4);
    sim_hw_destroy(h0);
    sim_hw_destroy(h1);
    sim_hw_destroy(g0);
    sim_hw_destroy(g1);
}

/* read_during_draft: the first read starts with the cycle, so a draft phase
 * longer than the read hides it (the verification then waits only for the
 * set-up); without it the read starts with the verification.  The flash does
 * the same work either way. */
static void test_read_during_draft(void)
{
    sim_model t = q8(), e = eagle(4096, 12288);
    sim_device d = phone();
    sim_verify_shape v = shape(8, 1);
    sim_draft_call call = {.unit = ENG_UNIT_CPU, .rows = 1, .ctx_len = 256};
    for (int during = 0; during <= 1; during++) {
        for (int k = 0; k < 2; k++) {
            d.read_during_draft = during;
            d.verify_setup_us = k ? 0.0 : 5000.0;
            sim_hw *hw = make(&d, &t, &e, 0.0);
            double draft = sim_hw_draft_ms(hw, ENG_UNIT_CPU, 1, 256), lr = sim_hw_layer_read_ms(hw);
            int32_t n = (int32_t)(lr / draft) + 2; /* drafting outlasts the read */
            sim_draft_call calls[64];
            CHECK(n < 64);
            for (int32_t i = 0; i < n; i++)
                calls[i] = call;
            sim_cycle_time ct, none;
            CHECK(hw_price(hw, calls, n, &v, &ct, NULL) == SIM_OK);
            CHECK(hw_price(hw, NULL, 0, &v, &none, NULL) == SIM_OK);
            double setup = d.verify_setup_us * 1e-3;
            double first = setup > lr ? setup : lr; /* what the verification waits for first */
            double want = during ? none.verify_ms - first + setup : none.verify_ms;
            CHECK(fabs(ct.verify_ms - want) < 1e-5);
            CHECK(ct.flash_ms == none.flash_ms && ct.flash_bytes == none.flash_bytes);
            CHECK(fabs(ct.cycle_ms - (ct.draft_ms + ct.verify_ms)) < 1e-9);
            CHECK(ct.idle_ms == 0.0);
            sim_hw_destroy(hw);
        }
    }
}

/* The shape-dependent parts of the set-up: per tree graph (L + 1), per row,
 * and the KV snapshot over the context (read and written at cpu_gbps, in the
 * DRAM bytes too); a decode step pays none of them. */
static void test_runtime_parts(void)
{
    sim_model t = q8();
    sim_device d = phone();
    d.verify_graph_us = 2000;
    d.verify_row_us = 300;
    d.verify_kv_snapshot = 1;
    sim_hw *hw = make(&d, &t, NULL, 0.0);
    double parts[SIM_HW_SETUP_PARTS];
    CHECK(NEAR(sim_hw_tree_setup_ms(hw, parts), 37 * 2.0) && NEAR(parts[4], 74.0));
    CHECK(parts[0] == 0.0 && parts[1] == 0.0 && parts[2] == 0.0 && parts[3] == 0.0);
    sim_verify_shape v = shape(16, 1), dec = shape(1, 1);
    v.ctx_len = 1000;
    dec.decode = 1;
    dec.ctx_len = 1000;
    double snap = 2.0 * 1000 * sim_model_kv_token_bytes(&t) / (d.cpu_gbps * 1e6);
    CHECK(NEAR(sim_hw_setup_ms(hw, &v), 74.0 + 16 * 0.3 + snap));
    CHECK(sim_hw_setup_ms(hw, &dec) == 0.0 && !sim_hw_pays_setup(hw, &dec));
    /* the snapshot grows with the context, the rest does not */
    sim_verify_shape w = v;
    w.ctx_len = 2000;
    CHECK(NEAR(sim_hw_setup_ms(hw, &w) - sim_hw_setup_ms(hw, &v), snap));
    /* the cycle charges it and counts the snapshot's bytes */
    sim_cycle_time a, b;
    CHECK(hw_price(hw, NULL, 0, &v, &a, NULL) == SIM_OK);
    d.verify_kv_snapshot = 0;
    sim_hw *h2 = make(&d, &t, NULL, 0.0);
    CHECK(hw_price(h2, NULL, 0, &v, &b, NULL) == SIM_OK);
    CHECK(NEAR(a.kv_ms - b.kv_ms, snap));
    CHECK(NEAR(a.dram_bytes - b.dram_bytes, 2.0 * 1000 * sim_model_kv_token_bytes(&t)));
    sim_hw_destroy(hw);
    sim_hw_destroy(h2);
}

/* A verification never gets cheaper with more rows (the same leaves,
 * context, exit layer and projection), and the same cycle never gets slower
 * with one more layer pinned (without a resident-byte set-up): random phones
 * and runtimes, trees of 1-80 rows, pruned after an exit layer or not, every
 * projection mode. */
static void test_rows_monotone(void)
{
    uint64_t seed = 777;
    sim_model m = q8(), e = eagle(4096, 12288);
    for (int trial = 0; trial < 60; trial++) {
        sim_device d = phone();
        d.dram_budget_gb = 64;
        d.prefetch_layers = (int32_t)(next_rand(&seed) % 3);
        d.verify_min_rows = 1 + (int32_t)(next_rand(&seed) % 9);
        d.verify_setup_us = (double)(next_rand(&seed) % 400000);
        d.verify_graph_us = (double)(next_rand(&seed) % 5000);
        d.verify_row_us = (double)(next_rand(&seed) % 2000);
        d.verify_kv_snapshot = (int32_t)(next_rand(&seed) % 2);
        d.kv_seq_us = (double)(next_rand(&seed) % 3000);
        d.head_resident = (int32_t)(next_rand(&seed) % 2);
        d.verify_overlap = (int32_t)(next_rand(&seed) % 2);
        d.spec_prefetch_layers = (int32_t)(next_rand(&seed) % 3);
        double x = (double)(next_rand(&seed) % 36) / 36.0;
        sim_hw *hw = make(&d, &m, &e, x), *more = make(&d, &m, &e, x + 1.0 / 36.0);
        int32_t exit = next_rand(&seed) % 2 ? 17 : -1;
        eng_proj_mode proj = (eng_proj_mode)(next_rand(&seed) % 3);
        double prev = 0.0;
        for (int32_t rows = 1; rows <= 80; rows++) {
            sim_verify_shape v = shape(rows, 1);
            v.ctx_len = 300;
            v.exit_layer = exit;
            v.rows_after_exit = (rows * 4 + 4) / 5;
            v.proj = proj;
            v.proj_rows = 1;
            double t, t_more;
            CHECK(hw_verify_ms(hw, &v, &t) == SIM_OK);
            CHECK(t >= prev - 1e-9);
            CHECK(hw_verify_ms(more, &v, &t_more) == SIM_OK);
            CHECK(t_more <= t + 1e-9);
            prev = t;
        }
        sim_hw_destroy(hw);
        sim_hw_destroy(more);
    }
}

int main(void)
{
    test_parts_scale();
    test_target_size();
    test_who_pays();
    test_cycle_charges();
    test_pin_head();
    test_verify_overlap();
    test_dram_monotone();
    test_loader_ring();
    test_read_during_draft();
    test_runtime_parts();
    test_rows_monotone();
    return check_done("hw/setup");
}
