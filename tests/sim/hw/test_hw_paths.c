/*
 * test_hw_paths.c -- the phone model's three ways of running a cycle hold the
 * same numbers: sim_des (events; with a span hook or sim_hw_set_events_always),
 * the event-free walk (no overlapping draft calls) and sim_lite (overlapping
 * calls).  Against a naive recurrence of the verification schedule, and
 * against each other field by field on random phones, shapes and cycles;
 * a cycle asked for its wall times alone (sim_cycle_req.walls_only, also
 * accepted unchecked) gives the same duration and clock; the walk's
 * fast-forward through repeating layers gives the naive recurrence's end.
 */
#include "sim/hw/sim_hw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "hw_fixtures.h"

/* Naive reference of the verification schedule: the recurrences of sim_hw.h
 * (FIFO flash channel in op order, serial compute, read of op i after the
 * compute of op i - 1 - prefetch, layer 0 after the KV work), in integer ns. */
static int64_t ns(double ms)
{
    return (int64_t)llround(ms * 1e6);
}

static int64_t naive_verify_ns(const sim_hw *hw, const sim_verify_shape *v)
{
    const sim_device *d = sim_hw_device(hw);
    sim_hw_memory mem;
    sim_hw_get_memory(hw, &mem);
    int32_t L = mem.layers, n = L + 1, p = d->prefetch_layers;
    int32_t fin = v->exit_layer >= 0 ? v->rows_after_exit : v->rows;
    int64_t comp[65], read_end[65], comp_end[65], flash_free = 0;
    CHECK(n <= 65);
    for (int32_t i = 0; i < L; i++)
        comp[i] = ns(sim_hw_layer_npu_ms(
            hw, v->exit_layer >= 0 && i > v->exit_layer ? fin : v->rows, v->ctx_len));
    if (v->proj == ENG_PROJ_ONDEMAND_CPU)
        comp[L] = ns(sim_hw_head_cpu_ms(hw, v->proj_rows));
    else if (v->proj == ENG_PROJ_ONDEMAND_NPU)
        comp[L] = ns(v->proj_rows * sim_hw_head_npu_ms(hw, 1));
    else
        comp[L] = ns(sim_hw_head_npu_ms(hw, fin));
    int64_t kv_end = ns(kv_ms(hw, v->rows, v->leaves));
    for (int32_t i = 0; i < n; i++) {
        int resident = i == L ? mem.head_resident : i < mem.resident_layers;
        if (resident) {
            read_end[i] = 0;
        } else {
            int64_t start = flash_free;
            /* the loader's ring: the first p + 1 streamed ops are read at
             * once, op i after op i - 1 - p has computed */
            int32_t gate = i - 1 - p;
            if (i - mem.resident_layers > p && comp_end[gate] > start) start = comp_end[gate];
            read_end[i] = start + ns(i == L ? sim_hw_head_read_ms(hw) : sim_hw_layer_read_ms(hw));
            flash_free = read_end[i];
        }
        int64_t start = read_end[i];
        if (i > 0 && comp_end[i - 1] > start) start = comp_end[i - 1];
        if (i == 0 && kv_end > start) start = kv_end;
        comp_end[i] = start + comp[i];
    }
    return comp_end[L];
}

/* A random verification shape of m: up to max_rows rows, any leaves,
 * context, exit layer (or none), projection mode, and up to max_proj rows
 * projected on demand. */
static sim_verify_shape random_shape(uint64_t *seed, const sim_model *m, int32_t max_rows,
                                     int32_t max_proj)
{
    sim_verify_shape v = shape(1 + (int32_t)(next_rand(seed) % (uint64_t)max_rows), 1);
    v.leaves = 1 + (int32_t)(next_rand(seed) % (uint64_t)v.rows);
    v.ctx_len = (int32_t)(next_rand(seed) % 4000);
    if (next_rand(seed) % 2) {
        v.exit_layer = (int32_t)(next_rand(seed) % (uint64_t)m->layers);
        v.rows_after_exit = 1 + (int32_t)(next_rand(seed) % (uint64_t)v.rows);
    }
    v.proj = (eng_proj_mode)(next_rand(seed) % 3);
    int32_t pmax = v.rows < max_proj ? v.rows : max_proj;
    v.proj_rows = 1 + (int32_t)(next_rand(seed) % (uint64_t)pmax);
    return v;
}

/* A phone model of d on one of the two models ms (*m), with a random share
 * of DRAM pinning its layers; NULL when the phone cannot hold it. */
static sim_hw *random_hw(const sim_device *d, sim_model *ms, uint64_t *seed, sim_model **m)
{
    *m = &ms[next_rand(seed) % 2];
    double x = (double)(next_rand(seed) % 5) / 4.0;
    sim_hw *hw = NULL;
    char err[512];
    if (sim_hw_create(d, *m, NULL, x, 2048, &hw, err, sizeof err) != SIM_OK) return NULL;
    return hw;
}

static void test_schedule_differential(void)
{
    sim_device d = phone();
    sim_model ms[2] = {q8(), q4()};
    uint64_t seed = 42;
    for (int trial = 0; trial < 400; trial++) {
        d.prefetch_layers = (int32_t)(next_rand(&seed) % 4);
        d.spec_prefetch_layers = (int32_t)(next_rand(&seed) % 9);
        d.spec_queue_depth = 1 + (int32_t)(next_rand(&seed) % 32);
        sim_model *m = NULL;
        sim_hw *hw = random_hw(&d, ms, &seed, &m);
        if (!hw) continue;
        sim_verify_shape v = random_shape(&seed, m, 300, 9);
        spans_count sc = {0};
        sim_hw_set_span_fn(hw, count_span, &sc);
        sim_cycle_time t;
        CHECK(hw_run(hw, NULL, 0, &v, &t, NULL) == SIM_OK);
        CHECK(t.t1_ns - t.t0_ns == naive_verify_ns(hw, &v));
        /* the event-free recurrence gives the same verification, in both runtimes */
        double direct = -1;
        CHECK(hw_verify_ms(hw, &v, &direct) == SIM_OK);
        CHECK(direct == t.verify_ms);
        sim_verify_shape vs = v;
        vs.runtime = SIM_RUNTIME_SPEC;
        sim_cycle_time ts;
        CHECK(hw_price(hw, NULL, 0, &vs, &ts, NULL) == SIM_OK);
        CHECK(hw_verify_ms(hw, &vs, &direct) == SIM_OK);
        CHECK(direct == ts.verify_ms);
        CHECK(sc.layers == m->layers && sc.heads == 1);
        CHECK(t.idle_ms == 0.0 && t.overlap_ms >= 0.0);
        sim_hw_destroy(hw);
    }
}

/* Reads running ahead (prefetch 1-8): the walk fast-forwards through a run
 * of identical layers once its schedule repeats.  Against the naive
 * recurrence in flash-bound and compute-bound phones, with set-up work that
 * binds for a few layers or for most of them, pinned layers and exit layers. */
static void test_walk_fast_forward(void)
{
    static const double gbps[] = {0.3, 1.0, 5.0, 20.0, 200.0};
    static const double setup_us[] = {0.0, 50.0, 2000.0, 50000.0, 400000.0};
    sim_device d = phone();
    sim_model ms[2] = {q8(), q4()};
    uint64_t seed = 7;
    int runs = 0;
    for (int trial = 0; trial < 600; trial++) {
        d.prefetch_layers = 1 + (int32_t)(next_rand(&seed) % 8);
        d.read_gbps = gbps[next_rand(&seed) % 5];
        d.verify_setup_us = setup_us[next_rand(&seed) % 5];
        sim_model *m = NULL;
        sim_hw *hw = random_hw(&d, ms, &seed, &m);
        if (!hw) continue;
        sim_verify_shape v = random_shape(&seed, m, 300, 9);
        double direct = -1;
        CHECK(hw_verify_ms(hw, &v, &direct) == SIM_OK);
        CHECK(direct == (double)naive_verify_ns(hw, &v) * 1e-6);
        runs++;
        sim_hw_destroy(hw);
    }
    CHECK(runs > 500);
}

/* Exactly equal, field by field (bitwise for the doubles: same operations). */
static int same_cycle(const sim_cycle_time *a, const sim_cycle_time *b)
{
    return a->cycle_ms == b->cycle_ms && a->draft_ms == b->draft_ms &&
           a->verify_ms == b->verify_ms && a->flash_ms == b->flash_ms && a->npu_ms == b->npu_ms &&
           a->cpu_ms == b->cpu_ms && a->kv_ms == b->kv_ms && a->idle_ms == b->idle_ms &&
           a->overlap_ms == b->overlap_ms && a->flash_bytes == b->flash_bytes &&
           a->t0_ns == b->t0_ns && a->t1_ns == b->t1_ns && a->events == b->events &&
           a->dram_bytes == b->dram_bytes && a->energy_mj == b->energy_mj &&
           a->throttled == b->throttled && a->overlap_calls == b->overlap_calls &&
           a->overlap_draft_ms == b->overlap_draft_ms;
}

/* By default a cycle without overlapping calls is walked without events, and
 * one with them runs on the three-server loop instead of sim_des; both must
 * give every number the event simulation gives: random phones (prefetch
 * depths, queue depths, power states, thermal onset within the run,
 * contention factors), residency, draft calls of every part and unit, shapes
 * with exit layers, every projection mode and both runtimes, draft-only
 * cycles, overlapping calls gated or not, and a sequence of cycles on one
 * clock (so the thermal decision and t0/t1 are compared too). */
static void test_walk_equals_events(void)
{
    sim_model ms[3] = {q8(), q4(), q14()};
    sim_model e = eagle(4096, 12288);
    uint64_t seed = 7;
    int cycles = 0, throttled = 0, with_idle = 0, overlapped = 0;
    for (int trial = 0; trial < 150; trial++) {
        sim_device d = powered();
        d.prefetch_layers = (int32_t)(next_rand(&seed) % 9);
        d.spec_prefetch_layers = (int32_t)(next_rand(&seed) % 9);
        d.queue_depth = 1 + (int32_t)(next_rand(&seed) % 8);
        d.spec_queue_depth = 1 + (int32_t)(next_rand(&seed) % 32);
        d.verify_min_rows = 1 + (int32_t)(next_rand(&seed) % 16);
        d.verify_setup_us = (double)(next_rand(&seed) % 3) * 150.0;
        d.kv_seq_us = (double)(next_rand(&seed) % 3) * 80.0;
        d.thermal = (int32_t)(next_rand(&seed) % 2);
        d.thermal_onset_s = (double)(next_rand(&seed) % 4) * 0.5;
        d.thermal_throttle = 0.3;
        d.contention_compute = 1.0 + (double)(next_rand(&seed) % 4) * 0.2;
        d.contention_load = 1.0 + (double)(next_rand(&seed) % 4) * 0.15;
        d.read_during_draft = (int32_t)(next_rand(&seed) % 2);
        d.head_resident = (int32_t)(next_rand(&seed) % 2);
        d.verify_kv_snapshot = (int32_t)(next_rand(&seed) % 2);
        d.verify_row_us = (double)(next_rand(&seed) % 3) * 40.0;
        d.verify_graph_us = (double)(next_rand(&seed) % 3) * 25.0;
        sim_model *m = &ms[next_rand(&seed) % 3];
        double x = (double)(next_rand(&seed) % 5) / 4.0;
        sim_hw *ev = NULL, *wk = NULL, *du = NULL, *due = NULL, *acc = NULL;
        char err[512];
        if (sim_hw_create(&d, m, &e, x, 8192, &ev, err, sizeof err) != SIM_OK) continue;
        CHECK(sim_hw_create(&d, m, &e, x, 8192, &wk, err, sizeof err) == SIM_OK);
        CHECK(sim_hw_create(&d, m, &e, x, 8192, &du, err, sizeof err) == SIM_OK);
        CHECK(sim_hw_create(&d, m, &e, x, 8192, &due, err, sizeof err) == SIM_OK);
        CHECK(sim_hw_create(&d, m, &e, x, 8192, &acc, err, sizeof err) == SIM_OK);
        sim_hw_set_events_always(ev, 1);
        sim_hw_set_events_always(due, 1);
        for (int k = 0; k < 20; k++) {
            sim_draft_call calls[6];
            int32_t n_calls = (int32_t)(next_rand(&seed) % 7);
            for (int32_t i = 0; i < n_calls; i++) {
                calls[i].unit = next_rand(&seed) % 2 ? ENG_UNIT_NPU : ENG_UNIT_CPU;
                calls[i].rows = 1 + (int32_t)(next_rand(&seed) % 64);
                calls[i].ctx_len = (int32_t)(next_rand(&seed) % 4000);
                calls[i].part = (int32_t)(next_rand(&seed) % 3);
            }
            sim_verify_shape v = random_shape(&seed, m, 128, 128);
            v.runtime = (int32_t)(next_rand(&seed) % 2);
            const sim_verify_shape *vp = next_rand(&seed) % 8 ? &v : NULL;
            if (next_rand(&seed) % 10 == 0) {
                sim_hw_generation_start(ev);
                sim_hw_generation_start(wk);
                sim_hw_generation_start(du);
                sim_hw_generation_start(due);
                sim_hw_generation_start(acc);
            }
            sim_draft_call prov[6];
            sim_overlap ov = {prov, 0, (int32_t)(next_rand(&seed) % 2)};
            if (vp && next_rand(&seed) % 2) {
                ov.n_calls = 1 + (int32_t)(next_rand(&seed) % 6);
                for (int32_t i = 0; i < ov.n_calls; i++) {
                    prov[i].unit = next_rand(&seed) % 2 ? ENG_UNIT_NPU : ENG_UNIT_CPU;
                    prov[i].rows = 1 + (int32_t)(next_rand(&seed) % 8);
                    prov[i].ctx_len = (int32_t)(next_rand(&seed) % 4000);
                    prov[i].part = (int32_t)(next_rand(&seed) % 3);
                }
            }
            sim_cycle_time a, b;
            double ca[6], cb[6];
            int ra = hw_run_ov(ev, calls, n_calls, vp, &ov, &a, ca);
            int rb = hw_run_ov(wk, calls, n_calls, vp, &ov, &b, cb);
            overlapped += b.overlap_calls > 0;
            CHECK(ra == SIM_OK && rb == SIM_OK);
            CHECK(same_cycle(&a, &b));
            for (int32_t i = 0; i < n_calls; i++)
                CHECK(ca[i] == cb[i]);
            CHECK(sim_hw_now(ev) == sim_hw_now(wk));
            /* the duration alone, on its own clocks (walked, and on events) */
            double dm = -1, dme = -2;
            CHECK(hw_run_ms(du, calls, n_calls, vp, &ov, &dm) == SIM_OK);
            CHECK(hw_run_ms(due, calls, n_calls, vp, &ov, &dme) == SIM_OK);
            CHECK(dm == a.cycle_ms && dme == a.cycle_ms);
            CHECK(sim_hw_now(du) == sim_hw_now(ev) && sim_hw_now(due) == sim_hw_now(ev));
            /* and without the checks, for a cycle another phone accepted */
            double dma = -3;
            CHECK(hw_run_ms_accepted(acc, calls, n_calls, vp, &ov, &dma) ==
                  SIM_OK);
            CHECK(dma == a.cycle_ms && sim_hw_now(acc) == sim_hw_now(ev));
            if (vp) {
                double da = -1, db = -2;
                CHECK(hw_verify_ms(ev, vp, &da) == SIM_OK);
                CHECK(hw_verify_ms(wk, vp, &db) == SIM_OK);
                CHECK(da == db);
            }
            cycles++;
            throttled += a.throttled;
            with_idle += ov.n_calls == 0 && a.idle_ms != 0.0;
        }
        /* the estimate (scratch simulation) walks too */
        sim_verify_shape v = shape(9, 3);
        sim_cycle_time a, b;
        CHECK(hw_price(ev, NULL, 0, &v, &a, NULL) == SIM_OK);
        CHECK(hw_price(wk, NULL, 0, &v, &b, NULL) == SIM_OK);
        CHECK(same_cycle(&a, &b));
        /* a shape the phone refuses: nothing priced, the clock stays */
        int64_t now = sim_hw_now(du);
        double dm = -1;
        v.leaves = v.rows + 1;
        CHECK(hw_run_ms(du, NULL, 0, &v, NULL, &dm) == SIM_CONFIG_INVALID);
        CHECK(dm == -1 && sim_hw_now(du) == now);
        sim_hw_destroy(ev);
        sim_hw_destroy(wk);
        sim_hw_destroy(du);
        sim_hw_destroy(due);
        sim_hw_destroy(acc);
    }
    CHECK(cycles > 1000 && throttled > 100);
    CHECK(overlapped > 300);
    CHECK(with_idle == 0); /* a cycle without overlap never leaves every resource idle */
}

/* The end of the first weights' read, from the spans. */
static void first_read_end(void *ctx, const char *resource, const char *label, int32_t index,
                           int64_t t0_ns, int64_t t1_ns)
{
    (void)resource, (void)t0_ns;
    int64_t *end = ctx;
    if (*end < 0 && strcmp(label, "read") == 0 && index == 0) *end = t1_ns;
}

/* How long the first weights' read of a verification of *v takes on phone d
 * (the gap an overlapping call may fill when there is no KV work). */
static int64_t first_read_ns(const sim_device *d, const sim_model *m, const sim_model *e,
                             const sim_verify_shape *v)
{
    sim_hw *hw = make(d, m, e, 0.0);
    sim_hw_set_events_always(hw, 1);
    int64_t end = -1;
    sim_cycle_time t;
    sim_hw_set_span_fn(hw, first_read_end, &end);
    CHECK(hw_run(hw, NULL, 0, v, &t, NULL) == SIM_OK);
    sim_hw_destroy(hw);
    return end - t.t0_ns;
}

/* A gated overlapping call that ends exactly when the weights the target
 * waits for arrive: whether the target's compute then counts as contended
 * depends on the order of the two events, which only the events know, so the
 * walk hands such a cycle to them.  The phone's read bandwidth is bisected
 * until the first read lasts exactly as long as the call (no KV work, so the
 * gap opens when the verification starts); the default path must still give
 * every number the event simulation gives, with compute contention at 2x so
 * that a wrong order would show. */
static void test_overlap_tie(void)
{
    sim_device d = powered();
    d.kv_seq_us = 0;
    d.verify_setup_us = 0;
    d.contention_compute = 2.0;
    d.contention_load = 1.5;
    sim_model m = q8(), e = eagle(4096, 12288);
    sim_verify_shape v = shape(9, 1);
    int ties = 0;
    for (int32_t ctx = 100; ctx < 4000 && ties < 3; ctx += 97) {
        sim_draft_call prov[2] = {{.unit = ENG_UNIT_NPU, .rows = 4, .ctx_len = ctx, .part = 0},
                                  {.unit = ENG_UNIT_CPU, .rows = 1, .ctx_len = 0, .part = 0}};
        sim_hw *probe = make(&d, &m, &e, 0.0);
        int64_t call = (int64_t)llround(
            sim_hw_draft_part_ms(probe, ENG_UNIT_NPU, prov[0].rows, ctx, prov[0].part) * 1e6);
        sim_hw_destroy(probe);
        /* the read shortens as the bandwidth grows */
        double lo = 1.0, hi = 1000.0;
        int64_t got = -1;
        for (int it = 0; it < 80 && got != call; it++) {
            d.read_gbps = 0.5 * (lo + hi);
            got = first_read_ns(&d, &m, &e, &v);
            if (got > call)
                lo = d.read_gbps;
            else
                hi = d.read_gbps;
        }
        if (got != call) continue;
        sim_hw *ev = make(&d, &m, &e, 0.0), *wk = make(&d, &m, &e, 0.0);
        sim_hw_set_events_always(ev, 1);
        sim_overlap ov = {prov, 2, 1};
        sim_cycle_time a, b;
        CHECK(hw_run_ov(ev, NULL, 0, &v, &ov, &a, NULL) == SIM_OK);
        CHECK(hw_run_ov(wk, NULL, 0, &v, &ov, &b, NULL) == SIM_OK);
        CHECK(a.overlap_calls >= 1);
        CHECK(same_cycle(&a, &b));
        CHECK(sim_hw_now(ev) == sim_hw_now(wk));
        sim_hw_destroy(ev);
        sim_hw_destroy(wk);
        ties++;
    }
    CHECK(ties > 0);
}

/* The walk remembers what it priced for the last shapes of each row count:
 * shapes that share their rows but differ in any other field (leaves, exit
 * layer and rows after it, projection and its rows, runtime, decode step,
 * context, thermal slow-down), met in any order on one handle, are priced as
 * the event simulation prices each alone. */
static void test_shape_memo(void)
{
    sim_model m = q8(), e = eagle(4096, 12288);
    uint64_t seed = 11;
    for (int trial = 0; trial < 40; trial++) {
        sim_device d = powered();
        d.prefetch_layers = (int32_t)(next_rand(&seed) % 3);
        d.verify_min_rows = 1 + (int32_t)(next_rand(&seed) % 12);
        d.verify_setup_us = 300.0;
        d.verify_setup_one_row = (int32_t)(next_rand(&seed) % 2);
        d.verify_overlap = (int32_t)(next_rand(&seed) % 2);
        d.kv_seq_us = 90.0;
        d.thermal = 1;
        d.thermal_onset_s = 0.5;
        d.thermal_throttle = 0.3;
        sim_hw *wk = NULL, *ev = NULL;
        char err[512];
        CHECK(sim_hw_create(&d, &m, &e, 0.25, 8192, &wk, err, sizeof err) == SIM_OK);
        CHECK(sim_hw_create(&d, &m, &e, 0.25, 8192, &ev, err, sizeof err) == SIM_OK);
        if (!wk || !ev) break;
        sim_hw_set_events_always(ev, 1);
        for (int k = 0; k < 200; k++) {
            /* few values per field, so that shapes differing in one field
             * only meet in one memo slot */
            sim_verify_shape v = shape(1 + (int32_t)(next_rand(&seed) % 2) * 8, 1);
            v.leaves = next_rand(&seed) % 2 ? v.rows : 1;
            v.ctx_len = next_rand(&seed) % 2 ? 2000 : 100;
            v.exit_layer = next_rand(&seed) % 2 ? 5 : -1;
            v.rows_after_exit = next_rand(&seed) % 2 ? v.rows : 1;
            v.proj = (eng_proj_mode)(next_rand(&seed) % 3);
            v.proj_rows = next_rand(&seed) % 2 ? v.rows : 1;
            v.runtime = (int32_t)(next_rand(&seed) % 2);
            v.decode = v.rows == 1 && next_rand(&seed) % 2;
            sim_cycle_time a, b;
            CHECK(hw_run(ev, NULL, 0, &v, &a, NULL) == SIM_OK);
            CHECK(hw_run(wk, NULL, 0, &v, &b, NULL) == SIM_OK);
            CHECK(same_cycle(&a, &b));
            if (k % 50 == 0) {
                sim_hw_generation_start(ev);
                sim_hw_generation_start(wk);
            }
        }
        sim_hw_destroy(wk);
        sim_hw_destroy(ev);
    }
}

int main(void)
{
    test_schedule_differential();
    test_walk_fast_forward();
    test_shape_memo();
    test_walk_equals_events();
    test_overlap_tie();
    printf("hw paths: ok\n");
    return check_done("hw/paths");
}
