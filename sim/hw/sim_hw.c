/*
 * sim_hw.c -- the phone model's handle and the speculative cycle (semantics in
 * sim_hw.h): creation, the checks of a cycle, and the cycle run on events
 * (sim_des or sim_lite) or handed to the walk without events (sim_hw_walk.c).
 * What each step costs comes from the part that models it (sim_hw_impl.h
 * lists the files).
 *
 * Structure: a cycle is a small state machine ("cyc") driven by DES events.
 * Verification ops are indexed 0..L: ops 0..L-1 are the target's layers, op L
 * is the output projection.  Invariants while a verification runs:
 *   - computed   = ops whose compute finished, in order (compute is serial);
 *   - next_read  = first op not yet considered for a read; every op below it is
 *                  either resident (ready at once) or has a read queued/done;
 *   - a resident op is ready at once; the streamed ops (layers pinned..L-1,
 *     then the head unless it is resident) take turns in the loader's ring of
 *     prefetch + 1 buffers: the first prefetch + 1 of them are read at once,
 *     a later op i once the compute of op i - 1 - prefetch has finished (its
 *     buffer recycled);
 *   - reads are issued when the verification starts, or with the cycle when
 *     the device reads during drafting (read_during_draft); compute waits
 *     for the verification;
 *   - ready[i] = 1 once op i's weights are in DRAM, 2 once its compute is issued
 *     (so a later read completion can never issue it a second time).
 * Everything per cycle lives in preallocated memory (ready[] sized L + 1 at
 * creation); durations are computed once per cycle (all layers share one shape).
 */
#include "sim_hw.h"
#include "sim_hw_impl.h"

#include "sim/des/sim_des.h"
#include "sim/des/sim_lite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cyc {
    struct sim_hw *hw;
    sim_des *des;
    sim_lite *lite; /* non-NULL: the services run on it instead of des (sim_lite.h) */
    sim_res *flash, *npu, *cpu;
    int spans; /* emit spans (main simulation only) */
    /* draft phase */
    const sim_draft_call *calls;
    int32_t n_calls, next_call;
    double *call_ms;
    int64_t call_t0;
    /* verification */
    const sim_verify_shape *v;
    int32_t n_ops, next_read, computed, kv_pending;
    uint8_t *ready;
    uint8_t *slow_read; /* [L + 1] 1: op's read was issued under contention */
    int64_t *read_end;  /* [L + 1] when op's weights are (or will be) in DRAM */
    int64_t flash_free; /* when the flash channel finishes what is queued */
    int64_t compute_ns; /* duration of the target compute in service */
    int32_t tgt_issued; /* target compute ops issued and not finished (0 or 1) */
    /* overlapping draft calls ("Overlap") */
    const sim_overlap *ov;
    int32_t ov_next, ov_active, ov_done;
    int32_t ov_dur_of; /* the call whose duration ov_dur holds, -1 none */
    int64_t ov_dur;
    int64_t ov_t0, ov_busy_ns;
    int verify_started;
    int reads_started; /* the loader's reads of this cycle's verification were set up */
    int64_t lay_a_ns, lay_b_ns, head_ns, kv_ns;
    int64_t layer_read_ns, head_read_ns; /* of the verification's runtime */
    int32_t prefetch;                    /* of the verification's runtime */
    sim_res *head_res;
    sim_res *layer_res; /* the NPU, or the CPU when the runtime verifies there */
    int64_t t_draft_end, t_end;
    double flash_bytes;
    double slow; /* compute service-time factor: 1, or 1 / (1 - throttle) when throttled */
    int err;
} cyc;

/* ---- creation ---- */

static int sim_init(sim_sim *s)
{
    s->des = sim_des_create(64);
    if (!s->des) return -1;
    s->flash = sim_des_add_resource(s->des, "flash");
    s->npu = sim_des_add_resource(s->des, "npu");
    s->cpu = sim_des_add_resource(s->des, "cpu");
    return (s->flash && s->npu && s->cpu) ? 0 : -1;
}

static void derive(sim_hw *hw)
{
    const sim_model *t = &hw->tgt;
    hw->L = t->layers;
    hw->pinned = hw->mem.resident_layers;
    hw->layer_bytes = sim_model_layer_bytes(t);
    hw->stream_layer_bytes = sim_hwi_stream_layer_bytes(&hw->dev, t);
    hw->head_bytes = sim_model_head_bytes(t);
    hw->kv_layer_bytes = sim_model_kv_layer_bytes(t);
    hw->kv_token_bytes = sim_model_kv_token_bytes(t);
    hw->layer_flops = 2.0 * sim_model_layer_params(t);
    hw->head_flops = 2.0 * (double)t->vocab * t->hidden;
    /* QK^T and PV: 2 FLOPs per multiply-add, H * d each, per attended token */
    hw->attn_flops_per_tok = 4.0 * (double)t->heads * t->head_dim;
    sim_hwi_flash_derive(hw);
    hw->tree_setup_ms = sim_hw_tree_setup_ms(hw, NULL);
    sim_hwi_draft_derive(hw);
}

int sim_hw_create(const sim_device *dev, const sim_model *target, const sim_model *draft,
                  double dram_fraction, int32_t max_ctx_tokens, sim_hw **out, char *err,
                  size_t errlen)
{
    *out = NULL;
    sim_hw_memory mem;
    int rc =
        sim_hwi_memory_plan(dev, target, draft, dram_fraction, max_ctx_tokens, &mem, err, errlen);
    if (rc != SIM_OK) return rc;
    sim_hw *hw = calloc(1, sizeof *hw);
    if (!hw) goto nomem;
    /* hw is zeroed (calloc): padding and an absent draft stay zero bytes */
    memcpy(&hw->in.device, dev, sizeof *dev);
    memcpy(&hw->in.target, target, sizeof *target);
    if (draft) memcpy(&hw->in.draft, draft, sizeof *draft);
    hw->in.dram_fraction = dram_fraction;
    hw->in.has_draft = draft != NULL;
    hw->in.max_ctx_tokens = max_ctx_tokens;
    hw->dev = *dev;
    hw->tgt = *target;
    if (draft) hw->dft = *draft;
    hw->has_draft = draft != NULL;
    hw->mem = mem;
    hw->ready = calloc(4 * ((size_t)target->layers + 1), 1);
    if (!hw->ready || sim_init(&hw->main) || sim_init(&hw->scratch)) goto nomem;
    hw->main.ready = hw->ready;
    hw->scratch.ready = hw->ready + target->layers + 1;
    hw->main.slow_read = hw->ready + 2 * (target->layers + 1);
    hw->scratch.slow_read = hw->ready + 3 * (target->layers + 1);
    hw->read_end = calloc(2 * ((size_t)target->layers + 1), sizeof(int64_t));
    if (!hw->read_end) goto nomem;
    hw->main.read_end = hw->read_end;
    hw->scratch.read_end = hw->read_end + target->layers + 1;
    derive(hw);
    *out = hw;
    return SIM_OK;
nomem:
    sim_hw_destroy(hw);
    sim_hwi_set_err(err, errlen, "out of memory creating the hardware model");
    return SIM_NOMEM;
}

void sim_hw_destroy(sim_hw *hw)
{
    if (!hw) return;
    sim_des_destroy(hw->main.des);
    sim_des_destroy(hw->scratch.des);
    free(hw->ready);
    free(hw->read_end);
    free(hw);
}

void sim_hw_get_inputs(const sim_hw *hw, sim_hw_inputs *out)
{
    memcpy(out, &hw->in, sizeof *out);
}

const sim_device *sim_hw_device(const sim_hw *hw)
{
    return &hw->dev;
}

const sim_model *sim_hw_target(const sim_hw *hw)
{
    return &hw->tgt;
}

const sim_model *sim_hw_draft(const sim_hw *hw)
{
    return hw->has_draft ? &hw->dft : NULL;
}

int64_t sim_hw_now(const sim_hw *hw)
{
    return sim_des_now(hw->main.des);
}

void sim_hw_set_span_fn(sim_hw *hw, sim_hw_span_fn fn, void *ctx)
{
    hw->span_fn = fn;
    hw->span_ctx = ctx;
}

/* ---- the cycle state machine ---- */

static void span(cyc *c, sim_res *r, const char *label, int32_t index, int64_t dur_ns)
{
    if (!c->spans) return;
    int64_t t1 = sim_des_now(c->des);
    c->hw->span_fn(c->hw->span_ctx, sim_res_name(r), label, index, t1 - dur_ns, t1);
}

static void fail(cyc *c, int rc)
{
    if (rc != SIM_OK && !c->err) {
        c->err = rc;
        sim_des_stop(c->des);
    }
}

static int64_t now_ns(const cyc *c)
{
    return c->lite ? sim_lite_now(c->lite) : sim_des_now(c->des);
}

/* sim_res_use on the cycle's simulation, whichever it is. */
static void use(cyc *c, sim_res *r, int64_t dur, sim_event_fn fn, int64_t arg)
{
    if (!c->lite) {
        fail(c, sim_res_use(c->des, r, dur, fn, c, NULL, arg));
        return;
    }
    int rc = sim_lite_use(c->lite, r == c->flash ? 0 : r == c->npu ? 1 : 2, dur, fn, c, arg);
    if (rc != SIM_OK && !c->err) c->err = rc; /* sim_lite_run stops on it */
}

static void start_call(cyc *c);
static void start_reads(cyc *c);
static void start_verify(cyc *c);
static void try_reads(cyc *c);
static void try_compute(cyc *c);
static void try_overlap(cyc *c);

/* The resource a draft call naming unit runs on (sim_hwi_on_npu). */
static sim_res *unit_res(const cyc *c, eng_unit unit)
{
    return sim_hwi_on_npu(c->hw, unit) ? c->npu : c->cpu;
}

static int64_t call_ns(const cyc *c, int32_t i)
{
    const sim_draft_call *k = &c->calls[i];
    return sim_hwi_ms_to_ns(sim_hw_draft_part_ms(c->hw, k->unit, k->rows, k->ctx_len, k->part) *
                            c->slow);
}

static void on_call_done(void *ctx, sim_des *des, const sim_event *ev)
{
    (void)des; /* NULL on sim_lite */
    cyc *c = ctx;
    int64_t now = now_ns(c);
    if (c->call_ms) c->call_ms[ev->arg] = (double)(now - c->call_t0) * 1e-6;
    span(c, unit_res(c, c->calls[ev->arg].unit), "draft", (int32_t)ev->arg, now - c->call_t0);
    c->next_call++;
    if (c->next_call < c->n_calls)
        start_call(c);
    else
        start_verify(c);
}

static void start_call(cyc *c)
{
    int32_t i = c->next_call;
    sim_res *r = unit_res(c, c->calls[i].unit);
    c->call_t0 = now_ns(c);
    use(c, r, call_ns(c, i), on_call_done, i);
}

static void on_kv_done(void *ctx, sim_des *des, const sim_event *ev)
{
    (void)des, (void)ev;
    cyc *c = ctx;
    span(c, c->cpu, "kv", -1, c->kv_ns);
    c->kv_pending = 0;
    try_compute(c);
}

static void on_read_done(void *ctx, sim_des *des, const sim_event *ev)
{
    (void)des;
    cyc *c = ctx;
    int32_t op = (int32_t)ev->arg;
    int is_head = op == c->n_ops - 1;
    int64_t dur = is_head ? c->head_read_ns : c->layer_read_ns;
    if (c->slow_read[op]) dur = sim_hwi_ms_to_ns((double)dur * 1e-6 * c->hw->dev.contention_load);
    span(c, c->flash, is_head ? "read_head" : "read", is_head ? -1 : op, dur);
    c->ready[op] = 1;
    try_compute(c);
}

static void on_compute_done(void *ctx, sim_des *des, const sim_event *ev)
{
    (void)des; /* NULL on sim_lite */
    cyc *c = ctx;
    int32_t op = (int32_t)ev->arg;
    if (op == c->n_ops - 1)
        span(c, c->head_res, "head", -1, c->compute_ns);
    else
        span(c, c->layer_res, "layer", op, c->compute_ns);
    c->tgt_issued = 0;
    c->computed = op + 1;
    if (c->computed == c->n_ops) {
        c->t_end = now_ns(c);
        return;
    }
    try_reads(c);
    try_compute(c);
    try_overlap(c);
}

static void try_reads(cyc *c)
{
    const sim_hw *hw = c->hw;
    int32_t p = c->prefetch;
    while (c->next_read < c->n_ops) {
        int32_t op = c->next_read;
        int is_head = op == c->n_ops - 1;
        int resident = is_head ? hw->mem.head_resident : op < hw->pinned;
        /* a streamed op past the ring's first buffers waits for one to be recycled */
        int32_t wait = sim_hwi_ring_wait(op, hw->pinned, p);
        if (!resident && wait >= 0 && wait >= c->computed) break;
        c->next_read++;
        int64_t now = now_ns(c);
        if (resident) {
            c->ready[op] = 1;
            c->read_end[op] = now;
            continue;
        }
        int64_t dur = is_head ? c->head_read_ns : c->layer_read_ns;
        c->slow_read[op] = c->ov_active > 0;
        if (c->slow_read[op]) dur = sim_hwi_ms_to_ns((double)dur * 1e-6 * hw->dev.contention_load);
        /* FIFO channel: this read ends once everything queued before it has */
        c->flash_free = (c->flash_free > now ? c->flash_free : now) + dur;
        c->read_end[op] = c->flash_free;
        c->flash_bytes += is_head ? hw->head_bytes : hw->stream_layer_bytes;
        use(c, c->flash, dur, on_read_done, op);
    }
}

static void try_compute(cyc *c)
{
    int32_t op = c->computed;
    /* compute is serial: only op `computed` can start, once, when ready, and
     * not before the verification (reads may have started while drafting) */
    if (!c->verify_started || op >= c->n_ops || c->ready[op] != 1 || c->kv_pending) return;
    c->ready[op] = 2; /* issued */
    int head = op == c->n_ops - 1;
    int after = c->v->exit_layer >= 0 && op > c->v->exit_layer;
    int64_t dur = head ? c->head_ns : after ? c->lay_b_ns : c->lay_a_ns;
    if (c->ov_active) dur = sim_hwi_ms_to_ns((double)dur * 1e-6 * c->hw->dev.contention_compute);
    c->compute_ns = dur;
    c->tgt_issued = 1;
    use(c, head ? c->head_res : c->layer_res, dur, on_compute_done, op);
}

/* ---- overlapping draft calls ---- */

static void on_ov_done(void *ctx, sim_des *des, const sim_event *ev)
{
    (void)des; /* NULL on sim_lite */
    cyc *c = ctx;
    int64_t now = now_ns(c);
    const sim_draft_call *k = &c->ov->calls[ev->arg];
    span(c, unit_res(c, k->unit), "provisional", (int32_t)ev->arg, now - c->ov_t0);
    c->ov_busy_ns += now - c->ov_t0;
    c->ov_active = 0;
    c->ov_done++;
    try_overlap(c);
}

/* Starts the next overlapping call when the verification runs and none is in
 * flight.  Gate: only while the target loads -- no target compute issued, and
 * the call ends before the next layer's weights arrive (it would otherwise
 * share the processors with that layer); a call that fits no gap never runs. */
static void try_overlap(cyc *c)
{
    if (!c->ov || c->ov_active || c->ov_next >= c->ov->n_calls || !c->verify_started ||
        c->t_end >= 0)
        return;
    int32_t i = c->ov_next, op = c->computed;
    const sim_draft_call *k = &c->ov->calls[i];
    if (c->ov->gate && (c->tgt_issued || c->kv_pending || op >= c->n_ops || c->ready[op] != 0))
        return;
    if (c->ov_dur_of != i) { /* the call's duration, once per call */
        c->ov_dur = sim_hwi_ms_to_ns(
            sim_hw_draft_part_ms(c->hw, k->unit, k->rows, k->ctx_len, k->part) * c->slow);
        c->ov_dur_of = i;
    }
    int64_t now = now_ns(c), dur = c->ov_dur;
    if (c->ov->gate && now + dur > c->read_end[op]) return;
    c->ov_next++;
    c->ov_active = 1;
    c->ov_t0 = now;
    use(c, unit_res(c, k->unit), dur, on_ov_done, i);
}

/* Sets up the loader of the cycle's verification and issues the reads it
 * can: at the verification's start, or at the cycle's with read_during_draft. */
static void start_reads(cyc *c)
{
    sim_hw *hw = c->hw;
    sim_hwi_ring ring;
    sim_hwi_loader(hw, c->v, &ring);
    c->n_ops = hw->L + 1;
    c->prefetch = ring.prefetch;
    c->layer_read_ns = ring.layer_read_ns;
    c->head_read_ns = ring.head_read_ns;
    memset(c->ready, 0, (size_t)c->n_ops);
    memset(c->slow_read, 0, (size_t)c->n_ops);
    c->flash_free = now_ns(c);
    c->next_read = c->computed = 0;
    c->reads_started = 1;
    try_reads(c);
}

static void start_verify(cyc *c)
{
    sim_hw *hw = c->hw;
    const sim_verify_shape *v = c->v;
    c->t_draft_end = now_ns(c);
    if (!v) {
        c->t_end = c->t_draft_end;
        return;
    }
    int32_t final_rows = v->exit_layer >= 0 ? v->rows_after_exit : v->rows;
    c->lay_a_ns = sim_hwi_ms_to_ns(sim_hw_layer_npu_ms(hw, v->rows, v->ctx_len) * c->slow);
    c->lay_b_ns = v->exit_layer >= 0
                      ? sim_hwi_ms_to_ns(sim_hw_layer_npu_ms(hw, final_rows, v->ctx_len) * c->slow)
                      : c->lay_a_ns;
    c->head_ns = sim_hwi_ms_to_ns(sim_hw_proj_ms(hw, v) * c->slow);
    switch (v->proj) {
    case ENG_PROJ_ONDEMAND_CPU:
        c->head_res = c->cpu;
        break;
    case ENG_PROJ_ONDEMAND_NPU:
        c->head_res = c->npu;
        break;
    case ENG_PROJ_EAGER_NPU:
    default:
        c->head_res = c->npu;
        break;
    }
    c->layer_res = c->npu;
    if (sim_hwi_cpu_only(hw)) c->layer_res = c->head_res = c->cpu; /* "Two runtimes" */
    if (!c->reads_started) start_reads(c);
    c->kv_ns = sim_hwi_ms_to_ns(sim_hw_setup_ms(hw, v) * c->slow);
    c->kv_pending = c->kv_ns > 0;
    if (c->kv_pending) use(c, c->cpu, c->kv_ns, on_kv_done, 0);
    c->verify_started = 1;
    try_compute(c);
    try_overlap(c);
}

static int check_shape(const sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                       const sim_verify_shape *v)
{
    if (n_calls < 0 || (n_calls > 0 && !calls)) return 0;
    for (int32_t i = 0; i < n_calls; i++) {
        if (calls[i].rows < 1 || calls[i].ctx_len < 0) return 0;
        if (calls[i].unit != ENG_UNIT_CPU && calls[i].unit != ENG_UNIT_NPU) return 0;
        if (calls[i].part < SIM_DRAFT_FULL || calls[i].part > SIM_DRAFT_HEAD) return 0;
        if (!hw->has_draft) return 0;
    }
    if (!v) return 1;
    if (v->rows < 1 || v->leaves < 1 || v->leaves > v->rows || v->ctx_len < 0) return 0;
    if (v->runtime != SIM_RUNTIME_BASELINE && v->runtime != SIM_RUNTIME_SPEC) return 0;
    if ((v->decode != 0 && v->decode != 1) || (v->decode && v->rows != 1)) return 0;
    if (v->exit_layer < -1 || v->exit_layer >= hw->L) return 0;
    if (v->exit_layer >= 0 && (v->rows_after_exit < 1 || v->rows_after_exit > v->rows)) return 0;
    if (v->proj != ENG_PROJ_EAGER_NPU && v->proj != ENG_PROJ_ONDEMAND_CPU &&
        v->proj != ENG_PROJ_ONDEMAND_NPU)
        return 0;
    if (v->proj != ENG_PROJ_EAGER_NPU && (v->proj_rows < 1 || v->proj_rows > v->rows)) return 0;
    return 1;
}

/* ---- the cycle without events ---- */

static void finish_cycle(const sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                         const sim_verify_shape *v, const sim_overlap *ov, const cyc_sum *m,
                         sim_cycle_time *out)
{
    sim_cycle_time o;
    memset(&o, 0, sizeof o);
    o.t0_ns = m->t0;
    o.t1_ns = m->t1;
    o.cycle_ms = (double)(m->t1 - m->t0) * 1e-6;
    o.draft_ms = (double)(m->t_draft_end - m->t0) * 1e-6;
    o.verify_ms = (double)(m->t1 - m->t_draft_end) * 1e-6;
    o.flash_ms = (double)m->flash_ns * 1e-6;
    o.npu_ms = (double)m->npu_ns * 1e-6;
    o.cpu_ms = (double)m->cpu_ns * 1e-6;
    o.kv_ms = v ? (double)m->kv_ns * 1e-6 : 0.0;
    o.idle_ms = (double)m->idle_ns * 1e-6;
    o.overlap_ms =
        (double)(m->flash_ns + m->npu_ns + m->cpu_ns - ((m->t1 - m->t0) - m->idle_ns)) * 1e-6;
    o.flash_bytes = m->flash_bytes;
    o.events = m->events;
    o.dram_bytes = sim_hwi_dram_bytes(hw, calls, n_calls, v) + m->flash_bytes;
    if (ov) {
        o.dram_bytes += sim_hwi_dram_bytes(hw, ov->calls, m->ov_done, NULL);
        o.verify_ms = (double)(m->t_verify_end - m->t_draft_end) * 1e-6;
    }
    o.overlap_calls = m->ov_done;
    o.overlap_draft_ms = (double)m->ov_busy_ns * 1e-6;
    o.energy_mj = sim_hwi_energy_mj(&hw->dev, &o);
    o.throttled = m->slow > 1.0;
    if (out) *out = o;
}

/* A cycle without overlapping calls, or with gated ones, walked without
 * events: the draft calls back to back, then verify_walk (which places gated
 * overlapping calls in its gaps).  Every number equals the event-driven
 * cycle's (tests/sim/hw compares them field by field): no resource ever
 * waits for another's queue but the flash channel's, which the walk models;
 * and no instant of such a cycle has every resource idle -- the draft calls
 * abut, the KV work covers the start of the verification, and a layer that
 * waits for its weights waits on a read that is running or on reads queued
 * back to back before it -- so idle_ms is 0.  The clock then jumps to the
 * cycle's end.  direct_walk fills *m and moves the clock; direct_cycle also
 * summarises the cycle into *out.  Returns 0, or -1 (nothing done) when the
 * walk cannot run. */
static int direct_walk(sim_hw *hw, sim_sim *s, const sim_draft_call *calls, int32_t n_calls,
                       const sim_verify_shape *v, const sim_overlap *ov, cyc_sum *m,
                       double *call_ms)
{
    *m = (cyc_sum){.t0 = sim_des_now(s->des), .slow = sim_hwi_cycle_slow(hw)};
    int64_t t = m->t0;
    for (int32_t i = 0; i < n_calls; i++) {
        const sim_draft_call *k = &calls[i];
        int64_t d = sim_hwi_ms_to_ns(
            sim_hw_draft_part_ms(hw, k->unit, k->rows, k->ctx_len, k->part) * m->slow);
        if (call_ms) call_ms[i] = (double)d * 1e-6;
        if (sim_hwi_on_npu(hw, k->unit))
            m->npu_ns += d;
        else
            m->cpu_ns += d;
        m->events++;
        t += d;
    }
    m->t_draft_end = m->t_verify_end = m->t1 = t;
    if (v) {
        walk_ov o = {.ov = ov, .dur_of = -1};
        int64_t t_read = hw->dev.read_during_draft ? m->t0 : t;
        m->t1 = m->t_verify_end =
            sim_hwi_verify_walk(hw, v, m->slow, t, t_read, m, ov ? &o : NULL);
        if (m->t1 < 0) return -1;
    }
    sim_des_run_until(s->des, m->t1); /* the queue is empty: only the clock moves */
    return 0;
}

static int direct_cycle(sim_hw *hw, sim_sim *s, const sim_draft_call *calls, int32_t n_calls,
                        const sim_verify_shape *v, const sim_overlap *ov, sim_cycle_time *out,
                        double *call_ms)
{
    cyc_sum m;
    if (direct_walk(hw, s, calls, n_calls, v, ov, &m, call_ms) != 0) return -1;
    finish_cycle(hw, calls, n_calls, v, ov, &m, out);
    return 0;
}

/* Issues a cycle's first service: its first draft call, or the verification. */
static void start_cycle(cyc *c)
{
    if (c->v && c->hw->dev.read_during_draft) start_reads(c);
    if (c->n_calls > 0)
        start_call(c);
    else
        start_verify(c);
}

/* The summary of a cycle run on events (sim_lite or sim_des): its handlers'
 * state plus what the simulation accounted from t0 to t1. */
static cyc_sum summary(const cyc *c, int64_t t0, int64_t t1, int64_t flash_ns, int64_t npu_ns,
                       int64_t cpu_ns, int64_t idle_ns, int64_t events)
{
    return (cyc_sum){.t0 = t0,
                     .t_draft_end = c->t_draft_end,
                     .t_verify_end = c->t_end,
                     .t1 = t1,
                     .flash_ns = flash_ns,
                     .npu_ns = npu_ns,
                     .cpu_ns = cpu_ns,
                     .idle_ns = idle_ns,
                     .kv_ns = c->kv_ns,
                     .events = events,
                     .flash_bytes = c->flash_bytes,
                     .slow = c->slow,
                     .ov_done = c->ov_done,
                     .ov_busy_ns = c->ov_busy_ns};
}

/* What every cycle checks first; *ov becomes NULL without overlapping calls.
 * SIM_OK, SIM_NOMEM (a broken handle) or SIM_CONFIG_INVALID. */
static int cycle_check(const sim_hw *hw, const sim_draft_call *calls, int32_t n_calls,
                       const sim_verify_shape *v, const sim_overlap **ov)
{
    if (hw->broken) return SIM_NOMEM;
    if (!check_shape(hw, calls, n_calls, v)) return SIM_CONFIG_INVALID;
    if (*ov && (*ov)->n_calls > 0) {
        if (!v || !check_shape(hw, (*ov)->calls, (*ov)->n_calls, NULL)) return SIM_CONFIG_INVALID;
    } else {
        *ov = NULL;
    }
    return SIM_OK;
}

/* 1 when a cycle may skip the event queue (no spans to report, events not
 * forced): sim_lite, or the direct walk when every overlapping call is gated. */
static int cycle_fast(const sim_hw *hw, int spans)
{
    return !spans && !hw->events_always;
}

static int cycle_direct(const sim_hw *hw, int spans, const sim_overlap *ov)
{
    return cycle_fast(hw, spans) && (!ov || ov->gate);
}

static int run_cycle(sim_hw *hw, sim_sim *s, int spans, const sim_draft_call *calls,
                     int32_t n_calls, const sim_verify_shape *v, const sim_overlap *ov,
                     sim_cycle_time *out, double *call_ms)
{
    int rc = cycle_check(hw, calls, n_calls, v, &ov);
    if (rc != SIM_OK) return rc;
    spans = spans && hw->span_fn != NULL;
    int fast = cycle_fast(hw, spans);
    if (cycle_direct(hw, spans, ov) &&
        direct_cycle(hw, s, calls, n_calls, v, ov, out, call_ms) == 0)
        return SIM_OK;
    const cyc c0 = {.hw = hw,
                    .des = s->des,
                    .flash = s->flash,
                    .npu = s->npu,
                    .cpu = s->cpu,
                    .spans = spans,
                    .calls = calls,
                    .n_calls = n_calls,
                    .call_ms = call_ms,
                    .v = v,
                    .ready = s->ready,
                    .slow_read = s->slow_read,
                    .read_end = s->read_end,
                    .ov = ov,
                    .ov_dur_of = -1,
                    .t_end = -1,
                    .slow = sim_hwi_cycle_slow(hw)};
    int64_t t0 = sim_des_now(s->des);
    if (fast) { /* the same handlers on sim_lite (three resources, no queue) */
        sim_lite lite;
        sim_lite_init(&lite, t0);
        cyc c = c0;
        c.lite = &lite;
        start_cycle(&c);
        if (!c.err) sim_lite_run(&lite, &c.err);
        if (!c.err) {
            cyc_sum m = summary(&c, t0, sim_lite_now(&lite), sim_lite_busy_ns(&lite, 0),
                                sim_lite_busy_ns(&lite, 1), sim_lite_busy_ns(&lite, 2),
                                sim_lite_idle_ns(&lite), (int64_t)sim_lite_fired(&lite));
            sim_des_run_until(s->des, m.t1); /* the queue is empty: only the clock moves */
            finish_cycle(hw, calls, n_calls, v, ov, &m, out);
            return SIM_OK;
        }
        /* a waiting line overflowed (not with a valid profile: at most
         * prefetch + 1 reads wait): the cycle again, on sim_des */
    }
    cyc c = c0;
    int64_t idle0 = sim_des_idle_ns(s->des);
    int64_t f0 = sim_res_busy_ns(s->flash), n0 = sim_res_busy_ns(s->npu),
            p0 = sim_res_busy_ns(s->cpu);
    uint64_t e0 = sim_des_fired(s->des);
    start_cycle(&c);
    sim_des_run(s->des);
    if (c.err) {
        hw->broken = 1; /* events of the aborted cycle may remain queued */
        return SIM_NOMEM;
    }
    cyc_sum m = summary(&c, t0, sim_des_now(s->des), sim_res_busy_ns(s->flash) - f0,
                        sim_res_busy_ns(s->npu) - n0, sim_res_busy_ns(s->cpu) - p0,
                        sim_des_idle_ns(s->des) - idle0, (int64_t)(sim_des_fired(s->des) - e0));
    finish_cycle(hw, calls, n_calls, v, ov, &m, out);
    return SIM_OK;
}

void sim_hw_set_events_always(sim_hw *hw, int on)
{
    hw->events_always = on != 0;
}

/* The wall times of a cycle alone, as finish_cycle computes them. */
static void walls_only(const cyc_sum *m, int overlap, sim_cycle_time *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    out->cycle_ms = (double)(m->t1 - m->t0) * 1e-6;
    out->draft_ms = (double)(m->t_draft_end - m->t0) * 1e-6;
    out->verify_ms = (double)((overlap ? m->t_verify_end : m->t1) - m->t_draft_end) * 1e-6;
}

int sim_hw_cycle(sim_hw *hw, const sim_cycle_req *req, sim_cycle_time *out)
{
    sim_sim *s = req->price ? &hw->scratch : &hw->main;
    int spans = !req->price;
    const sim_overlap *ov = &req->overlap;
    if (!req->walls_only)
        return run_cycle(hw, s, spans, req->calls, req->n_calls, req->verify, ov, out,
                         req->call_ms);
    /* the wall times alone: o is the overlap cycle_check leaves (NULL without
     * overlapping calls) */
    const sim_overlap *o = ov;
    if (req->accepted) {
        if (hw->broken) return SIM_NOMEM;
        o = ov->n_calls > 0 ? ov : NULL;
    } else {
        int rc = cycle_check(hw, req->calls, req->n_calls, req->verify, &o);
        if (rc != SIM_OK) return rc;
    }
    cyc_sum m;
    if (cycle_direct(hw, spans && hw->span_fn != NULL, o) &&
        direct_walk(hw, s, req->calls, req->n_calls, req->verify, o, &m, req->call_ms) == 0) {
        walls_only(&m, o != NULL, out);
        return SIM_OK;
    }
    sim_cycle_time ct;
    int rc = run_cycle(hw, s, spans, req->calls, req->n_calls, req->verify, ov, &ct, req->call_ms);
    if (rc == SIM_OK && out) {
        memset(out, 0, sizeof *out);
        out->cycle_ms = ct.cycle_ms;
        out->draft_ms = ct.draft_ms;
        out->verify_ms = ct.verify_ms;
    }
    return rc;
}
