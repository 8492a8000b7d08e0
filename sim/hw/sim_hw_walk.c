/*
 * sim_hw_walk.c -- a verification's schedule without events: the recurrence
 * over the target's ops (reads FIFO on the flash channel, running ahead by
 * the prefetch depth; compute serial, after the set-up work) that gives the
 * numbers the event simulation gives, a closed form when reads do not run
 * ahead, a fast-forward through repeating layers when they do, and gated
 * overlapping draft calls placed in the gaps where the target waits for
 * weights.  sim_hw.c runs cycles with it (direct_walk).
 */
#include "sim_hw_impl.h"

#include <string.h>

/* Starts gated overlapping calls back to back from `now` while the next one
 * ends by gap_end, the arrival of the weights the target waits for; a call
 * that does not fit waits for a later gap.  That is what the event-driven
 * cycle does at the same instants: with the gate a call only starts while no
 * target compute is issued and ends before the weights it waits for arrive,
 * so no compute and no read is ever issued while it runs (no contention) and
 * it starts at once on an idle unit.  Returns 0, or -1 where the two would
 * need the events' order: a call ending exactly when the weights arrive (its
 * end and the read's race for the compute's contention factor) or a call of
 * no duration. */
static int overlap_fill(const sim_hw *hw, walk_ov *o, double slow, int64_t now, int64_t gap_end,
                        cyc_sum *w)
{
    while (o->next < o->ov->n_calls) {
        const sim_draft_call *k = &o->ov->calls[o->next];
        if (o->dur_of != o->next) { /* once per call, as the events compute it */
            o->dur =
                sim_hwi_ms_to_ns(sim_hw_draft_part_ms(hw, k->unit, k->rows, k->ctx_len, k->part) * slow);
            o->dur_of = o->next;
        }
        if (now + o->dur > gap_end) return 0;
        if (now + o->dur == gap_end || o->dur <= 0) return -1;
        if (sim_hwi_on_npu(hw, k->unit))
            w->npu_ns += o->dur;
        else
            w->cpu_ns += o->dur;
        w->events++;
        w->ov_done++;
        w->ov_busy_ns += o->dur;
        now += o->dur;
        o->next++;
    }
    return 0;
}

_Static_assert(sizeof(sim_verify_shape) == 9 * sizeof(int32_t),
               "sim_verify_shape compares as bytes (shape_memo)");

/* The memo slot holding what verify_walk prices for v's shape at slow apart
 * from the context length (sim_hwi_memo), filled now on a miss with the same
 * calls the walk made for every cycle: the layers' padded graphs of rows and
 * of final rows (sim_hw_layer_npu_ms pads the same way), the head and the
 * set-up.  The key drops what those ignore: the context length,
 * rows_after_exit without an exit layer, proj_rows for the eager head. */
static const sim_hwi_memo *shape_memo(sim_hw *hw, const sim_verify_shape *v, double slow)
{
    sim_verify_shape k = *v;
    k.ctx_len = 0;
    if (k.exit_layer < 0) k.rows_after_exit = k.rows;
    if (k.proj == ENG_PROJ_EAGER_NPU) k.proj_rows = 0;
    sim_hwi_memo *m = &hw->memo[(uint32_t)v->rows % SIM_HWI_MEMO];
    if (m->valid && m->slow == slow && memcmp(&m->key, &k, sizeof k) == 0) return m;
    int32_t final_rows = v->exit_layer >= 0 ? v->rows_after_exit : v->rows;
    m->p_a = sim_hwi_verify_pad(hw, v->rows, &m->execs_a);
    m->p_b = sim_hwi_verify_pad(hw, final_rows, &m->execs_b);
    m->head_ns = sim_hwi_ms_to_ns(sim_hw_proj_ms(hw, v) * slow);
    m->kv_ns = sim_hwi_ms_to_ns(sim_hw_setup_ms(hw, v) * slow);
    m->key = k;
    m->slow = slow;
    m->valid = 1;
    return m;
}

/* Fast-forward through a run of identical layers.  Op i (a streamed layer
 * whose read waits on the ring, i > prefetch) has just ended at *prev; its
 * read began from ff_before (the channel's time before it) and its compute
 * waited for prev_end (op i - 1's end).  The recurrence is a max-plus
 * system: when the last prefetch + 1 ends and the channel all moved by the
 * same d, every later op with the same read and compute moves by d again
 * (the KV work, the one constant in it, binds op 0 only: every later op
 * starts after its predecessor, which started after the KV work), so the
 * state at the run's last layer is this one moved by d for each op between:
 * the same integers the loop would reach, without walking them.  Returns the
 * op the loop continues after (i, or the run's last layer). */
static int32_t walk_jump(int32_t exit_layer, int32_t L, int32_t p, int32_t i, int64_t ff_before,
                         int64_t prev_end, int64_t *end, int64_t *flash_free, int64_t *prev)
{
    /* the run of layers that compute like op i: up to the exit layer, or to
     * the last layer */
    int32_t last = exit_layer >= 0 && i <= exit_layer ? exit_layer : L - 1;
    if (last <= i || p + 2 > WALK_RING) return i;
    int64_t d = *prev - prev_end;
    if (*flash_free - ff_before != d) return i;
    for (int32_t j = i - p; j <= i; j++)
        if (end[j % WALK_RING] - end[(j - 1) % WALK_RING] != d) return i;
    int64_t shift = (int64_t)(last - i) * d, kept[WALK_RING];
    for (int32_t j = 0; j <= p; j++) /* ends i - p .. i, before the ring is rewritten */
        kept[j] = end[(i - p + j) % WALK_RING];
    for (int32_t j = 0; j <= p; j++) /* the ring as the loop leaves it at `last` */
        end[(last - p + j) % WALK_RING] = kept[j] + shift;
    *flash_free += shift;
    *prev += shift;
    return last;
}

/* What the walk over a verification's ops reads (verify_walk). */
typedef struct walk_in {
    int64_t t0, t_read, kv, kv_end, lr, hr, lay_a, lay_b, head;
    int32_t p, n, L, pinned, exit_layer, head_resident;
    double slow;
} walk_in;

/* Forced inline where the compiler allows it: verify_walk calls it with
 * gated constant, so the walk with gated calls and the one without each
 * get a copy without the other's tests. */
#if defined(__GNUC__)
#define WALK_INLINE static inline __attribute__((always_inline))
#else
#define WALK_INLINE static inline
#endif

/* The recurrence over ops 0..n-1 (verify_walk's comment): with gated
 * overlapping calls placed in the gaps (gated), or with the fast-forward
 * through repeating layers (walk_jump) otherwise. */
WALK_INLINE int64_t walk_ops(const sim_hw *hw, const walk_in *in, cyc_sum *w, walk_ov *ov,
                             const int gated)
{
    int64_t end[WALK_RING], flash_free = in->t_read, prev = in->t0;
    for (int32_t i = 0; i < in->n; i++) {
        int is_head = i == in->n - 1;
        int resident = is_head ? in->head_resident : i < in->pinned;
        /* resident: ready at once; streamed: the ring's first buffers at
         * once, a later op once op i - 1 - p has freed its buffer */
        int32_t wait = sim_hwi_ring_wait(i, in->pinned, in->p);
        int64_t issue = resident || wait < 0 ? in->t_read : end[wait % WALK_RING];
        int64_t ready = issue, ff_before = flash_free;
        if (!resident) {
            flash_free = (flash_free > issue ? flash_free : issue) + (is_head ? in->hr : in->lr);
            ready = flash_free;
        }
        /* the gap before op i's weights: from the verification's start (op
         * 0, no KV work) or from op i - 1's end, the instants the events try
         * an overlapping call */
        if (gated && (i > 0 || in->kv == 0) && ready > prev &&
            overlap_fill(hw, ov, in->slow, prev, ready, w) < 0)
            return -1;
        int64_t start = ready > prev ? ready : prev;
        if (in->kv_end > start) start = in->kv_end;
        int64_t prev_end = prev;
        prev = start + (is_head                                       ? in->head
                        : (in->exit_layer >= 0 && i > in->exit_layer) ? in->lay_b
                                                                      : in->lay_a);
        end[i % WALK_RING] = prev;
        if (!gated && !is_head && wait >= 0 && !resident)
            i = walk_jump(in->exit_layer, in->L, in->p, i, ff_before, prev_end, end, &flash_free,
                          &prev);
    }
    return prev;
}

/* The verification of *v from t0 as a recurrence over ops 0..L: op i's read
 * is issued at t0 when i <= prefetch, else when op i - 1 - prefetch's compute
 * ends; reads are FIFO on the flash channel; op i computes after its weights
 * are in, after op i - 1, and after the temporary-sequence KV work.  Durations
 * are rounded exactly as the event-driven cycle rounds them, and what the
 * event simulation would account is added to *w: busy times, kv_ns, one event
 * per service, flash_bytes.  With prefetch 0 the recurrence has a closed form
 * (the busy sums are integers, so any order of summing gives the same).
 * With ov (gated overlapping calls), overlap_fill places them in the gaps
 * where the target waits for weights.  Returns the end of the last op, or -1
 * when the prefetch depth exceeds the ring or overlap_fill cannot decide. */
int64_t sim_hwi_verify_walk(sim_hw *hw, const sim_verify_shape *v, double slow, int64_t t0,
                           int64_t t_read, cyc_sum *w, walk_ov *ov)
{
    sim_hwi_ring ring;
    int32_t spec = sim_hwi_loader(hw, v, &ring), p = ring.prefetch;
    if (p < 0 || p >= WALK_RING) return -1;
    const sim_hwi_memo *m = shape_memo(hw, v, slow);
    int64_t lay_a = sim_hwi_ms_to_ns(sim_hwi_layer_npu_pad_ms(hw, m->p_a, m->execs_a, v->ctx_len) * slow);
    int64_t lay_b =
        v->exit_layer >= 0
            ? sim_hwi_ms_to_ns(sim_hwi_layer_npu_pad_ms(hw, m->p_b, m->execs_b, v->ctx_len) * slow)
            : lay_a;
    int64_t head = m->head_ns;
    /* the KV snapshot depends on the context, which the memo does not key */
    int64_t kv = hw->dev.verify_kv_snapshot ? sim_hwi_ms_to_ns(sim_hw_setup_ms(hw, v) * slow)
                                            : m->kv_ns;
    int64_t lr = ring.layer_read_ns, hr = ring.head_read_ns;
    int32_t L = hw->L, n = L + 1;
    int32_t after = v->exit_layer >= 0 ? L - 1 - v->exit_layer : 0; /* layers at lay_b */
    int64_t kv_end = t0 + kv;
    /* busy times and counts do not depend on the schedule */
    w->flash_ns += hw->stream_ns[spec];
    w->flash_bytes += hw->stream_bytes;
    w->events += hw->stream_reads + n + (kv > 0);
    int cpu = sim_hwi_cpu_only(hw); /* the target computes on the CPU ("Two runtimes") */
    *(cpu ? &w->cpu_ns : &w->npu_ns) += (int64_t)(L - after) * lay_a + (int64_t)after * lay_b;
    if (cpu || v->proj == ENG_PROJ_ONDEMAND_CPU)
        w->cpu_ns += head;
    else
        w->npu_ns += head;
    w->cpu_ns += kv;
    w->kv_ns = kv;
    int64_t compute = (int64_t)(L - after) * lay_a + (int64_t)after * lay_b + head;
    if (p == 0 && !ov) {
        /* one buffer: the pinned layers compute after the KV work while the
         * first streamed op is read (from t_read); every later streamed op is
         * read once the op before it ends (the channel is idle by then) */
        int32_t pin = hw->pinned, before = v->exit_layer >= 0 ? v->exit_layer + 1 : L;
        int64_t pinned = pin <= before ? (int64_t)pin * lay_a
                                       : (int64_t)before * lay_a + (int64_t)(pin - before) * lay_b;
        if (hw->stream_reads == 0) return kv_end + compute;
        int64_t rd0 = pin < L ? lr : hr;
        int64_t start = kv_end + pinned > t_read + rd0 ? kv_end + pinned : t_read + rd0;
        return start + (hw->stream_ns[spec] - rd0) + (compute - pinned);
    }
    walk_in in = {.t0 = t0,
                  .t_read = t_read,
                  .kv = kv,
                  .kv_end = kv_end,
                  .lr = lr,
                  .hr = hr,
                  .lay_a = lay_a,
                  .lay_b = lay_b,
                  .head = head,
                  .p = p,
                  .n = n,
                  .L = L,
                  .pinned = hw->pinned,
                  .exit_layer = v->exit_layer,
                  .head_resident = hw->mem.head_resident,
                  .slow = slow};
    return ov ? walk_ops(hw, &in, w, ov, 1) : walk_ops(hw, &in, w, NULL, 0);
}
