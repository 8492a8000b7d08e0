/*
 * sim_lite.c -- a few FIFO resources without sim_des's queue (contract in
 * sim_lite.h).
 *
 * Invariants: a resource is busy iff it has a current service; its line is
 * non-empty only while it is busy; n_busy counts busy resources; idle_since is
 * when n_busy last dropped to 0 (meaningful while it is 0).  The next event is
 * the busy resource with the smallest (end, seq): ends are never before now,
 * and seq values are handed out in increasing order, so the order is total.
 */
#include "sim_lite.h"

#include <assert.h>

void sim_lite_init(sim_lite *l, int64_t now)
{
    l->now = l->idle_since = now;
    l->idle_ns = 0;
    l->next_seq = l->fired = 0;
    l->n_busy = 0;
    for (int r = 0; r < SIM_LITE_RES; r++) {
        l->res[r].busy = 0;
        l->res[r].busy_ns = 0;
        l->res[r].head = l->res[r].len = 0;
    }
}

static void start(sim_lite *l, sim_lite_res *x, const sim_lite_req *q)
{
    x->since = l->now;
    x->end = l->now + q->dur;
    x->seq = l->next_seq++;
    x->cur = *q;
}

int sim_lite_use(sim_lite *l, int r, int64_t duration_ns, sim_event_fn done, void *ctx, int64_t arg)
{
    if (r < 0 || r >= SIM_LITE_RES) return SIM_INTERNAL_DES_LIMIT;
    if (duration_ns < 0) return SIM_INTERNAL_DES_PAST;
    sim_lite_res *x = &l->res[r];
    sim_lite_req q = {duration_ns, done, ctx, arg};
    if (x->busy) {
        if (x->len == SIM_LITE_LINE) return SIM_INTERNAL_DES_FULL;
        x->line[(x->head + x->len++) % SIM_LITE_LINE] = q;
        return SIM_OK;
    }
    if (l->n_busy++ == 0) l->idle_ns += l->now - l->idle_since;
    x->busy = 1;
    start(l, x, &q);
    return SIM_OK;
}

int64_t sim_lite_run(sim_lite *l, const int *stop)
{
    int64_t n = 0;
    for (;;) {
        sim_lite_res *x = NULL;
        for (int r = 0; r < SIM_LITE_RES; r++) {
            sim_lite_res *y = &l->res[r];
            if (y->busy && (!x || y->end < x->end || (y->end == x->end && y->seq < x->seq))) x = y;
        }
        if (!x) break;
        assert(x->end >= l->now);
        l->now = x->end;
        l->fired++;
        n++;
        sim_event ev = {
            .t_ns = x->end, .seq = x->seq, .fn = x->cur.fn, .ctx = x->cur.ctx, .arg = x->cur.arg};
        x->busy_ns += l->now - x->since;
        if (x->len > 0) { /* hand over: the next in line starts now */
            sim_lite_req q = x->line[x->head];
            x->head = (x->head + 1) % SIM_LITE_LINE;
            x->len--;
            start(l, x, &q);
        } else {
            x->busy = 0;
            if (--l->n_busy == 0) l->idle_since = l->now;
        }
        if (ev.fn) ev.fn(ev.ctx, NULL, &ev);
        if (stop && *stop) break;
    }
    return n;
}

int64_t sim_lite_now(const sim_lite *l)
{
    return l->now;
}

int64_t sim_lite_busy_ns(const sim_lite *l, int r)
{
    if (r < 0 || r >= SIM_LITE_RES) return 0;
    const sim_lite_res *x = &l->res[r];
    return x->busy_ns + (x->busy ? l->now - x->since : 0);
}

int64_t sim_lite_idle_ns(const sim_lite *l)
{
    return l->idle_ns + (l->n_busy == 0 ? l->now - l->idle_since : 0);
}

uint64_t sim_lite_fired(const sim_lite *l)
{
    return l->fired;
}
