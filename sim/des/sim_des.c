/*
 * sim_des.c -- clock, run loop and FIFO resources (contracts in sim_des.h).
 *
 * Invariants:
 *   - des->now never decreases; every queued event has t_ns >= des->now.
 *   - seq values are handed out from des->next_seq, strictly increasing.
 *   - a resource is busy iff it has a current holder; its waiting line is
 *     non-empty only while it is busy.
 *   - des->n_busy is the number of busy resources; des->idle_since is the time
 *     n_busy last dropped to 0 (meaningful while n_busy == 0).
 *
 * A sim_res_use() service schedules exactly one event (its end).  The holder's
 * done handler is kept in the resource itself -- a resource serves one request
 * at a time -- so the end event only needs the resource as its context.
 *
 * Speed: the hardware model fires ~150 events per simulated cycle, so the
 * per-event path (schedule, pop, use_end, release) is written to stay in this
 * translation unit: the heap operations come inline from sim_evq_inl.h and a
 * free resource starts a service without building an intermediate request.
 */
#include "sim_des.h"
#include "sim_evq_inl.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct res_req {
    int64_t duration_ns; /* >= 0: sim_res_use; -1: sim_res_request */
    int64_t t_enqueued;
    sim_event_fn fn;
    void *ctx;
    void *payload;
    int64_t arg;
} res_req;

struct sim_res {
    sim_des *des;
    char name[32];
    int busy;
    int64_t since;   /* start of the current service */
    int64_t busy_ns; /* completed service time */
    uint64_t served, waited;
    int64_t wait_ns;
    res_req cur;   /* current holder (use: its done handler) */
    res_req *line; /* ring buffer of waiting requests */
    size_t head, len, cap;
};

struct sim_des {
    sim_evq q;
    int64_t now;
    uint64_t next_seq;
    uint64_t fired;
    int stop;
    int n_busy;
    int64_t idle_since, idle_ns;
    int n_res;
    sim_res res[SIM_DES_MAX_RESOURCES];
};

sim_des *sim_des_create(size_t event_cap)
{
    sim_des *des = calloc(1, sizeof *des);
    if (!des) return NULL;
    if (sim_evq_init(&des->q, NULL, event_cap) != SIM_OK) {
        free(des);
        return NULL;
    }
    return des;
}

void sim_des_destroy(sim_des *des)
{
    if (!des) return;
    for (int i = 0; i < des->n_res; i++)
        free(des->res[i].line);
    sim_evq_free(&des->q);
    free(des);
}

int64_t sim_des_now(const sim_des *des)
{
    return des->now;
}

size_t sim_des_pending(const sim_des *des)
{
    return sim_evq_size(&des->q);
}

uint64_t sim_des_fired(const sim_des *des)
{
    return des->fired;
}

int64_t sim_des_idle_ns(const sim_des *des)
{
    return des->idle_ns + (des->n_busy == 0 ? des->now - des->idle_since : 0);
}

static inline int schedule_at(sim_des *des, int64_t t_ns, int32_t prio, sim_event_fn fn,
                              void *ctx, void *payload, int64_t arg)
{
    sim_event ev = {.t_ns = t_ns,
                    .prio = prio,
                    .seq = des->next_seq++,
                    .fn = fn,
                    .ctx = ctx,
                    .payload = payload,
                    .arg = arg};
    return sim_evqi_push(&des->q, &ev);
}

int sim_des_schedule_at(sim_des *des, int64_t t_ns, int32_t prio, sim_event_fn fn, void *ctx,
                        void *payload, int64_t arg)
{
    assert(fn != NULL);
    if (t_ns < des->now) return SIM_INTERNAL_DES_PAST;
    return schedule_at(des, t_ns, prio, fn, ctx, payload, arg);
}

int sim_des_schedule(sim_des *des, int64_t delay_ns, int32_t prio, sim_event_fn fn, void *ctx,
                     void *payload, int64_t arg)
{
    if (delay_ns < 0) return SIM_INTERNAL_DES_PAST;
    return sim_des_schedule_at(des, des->now + delay_ns, prio, fn, ctx, payload, arg);
}

static inline void fire_next(sim_des *des)
{
    sim_event ev;
    sim_evqi_pop(&des->q, &ev);
    assert(ev.t_ns >= des->now);
    des->now = ev.t_ns;
    des->fired++;
    ev.fn(ev.ctx, des, &ev);
}

int64_t sim_des_run(sim_des *des)
{
    int64_t n = 0;
    des->stop = 0;
    while (!des->stop && des->q.n > 0) {
        fire_next(des);
        n++;
    }
    return n;
}

int64_t sim_des_run_until(sim_des *des, int64_t t_end_ns)
{
    int64_t n = 0;
    des->stop = 0;
    for (;;) {
        const sim_event *top = sim_evq_peek(&des->q);
        if (des->stop || !top || top->t_ns > t_end_ns) break;
        fire_next(des);
        n++;
    }
    if (!des->stop && des->now < t_end_ns) des->now = t_end_ns;
    return n;
}

void sim_des_stop(sim_des *des)
{
    des->stop = 1;
}

/* ---- resources ---- */

sim_res *sim_des_add_resource(sim_des *des, const char *name)
{
    if (des->n_res >= SIM_DES_MAX_RESOURCES) return NULL;
    sim_res *r = &des->res[des->n_res];
    memset(r, 0, sizeof *r);
    r->des = des;
    r->cap = 8;
    r->line = malloc(r->cap * sizeof *r->line);
    if (!r->line) return NULL;
    size_t n = strlen(name);
    if (n >= sizeof r->name) n = sizeof r->name - 1;
    memcpy(r->name, name, n);
    r->name[n] = '\0';
    des->n_res++;
    return r;
}

static void use_end(void *ctx, sim_des *des, const sim_event *ev);

/* Makes req the current holder at the current time. */
static int start(sim_des *des, sim_res *r, const res_req *req)
{
    if (!r->busy && des->n_busy++ == 0) des->idle_ns += des->now - des->idle_since;
    r->busy = 1;
    r->since = des->now;
    r->cur = *req;
    if (req->duration_ns >= 0)
        return schedule_at(des, des->now + req->duration_ns, 0, use_end, r, NULL, 0);
    return schedule_at(des, des->now, 0, req->fn, req->ctx, req->payload, req->arg);
}

static int enqueue(sim_res *r, const res_req *req)
{
    if (r->len == r->cap) {
        size_t ncap = r->cap * 2;
        res_req *nl = malloc(ncap * sizeof *nl);
        if (!nl) return SIM_NOMEM;
        for (size_t i = 0; i < r->len; i++)
            nl[i] = r->line[(r->head + i) % r->cap];
        free(r->line);
        r->line = nl;
        r->head = 0;
        r->cap = ncap;
    }
    r->line[(r->head + r->len) % r->cap] = *req;
    r->len++;
    r->waited++;
    return SIM_OK;
}

static int submit(sim_des *des, sim_res *r, const res_req *req)
{
    assert(r->des == des);
    if (!r->busy) return start(des, r, req);
    return enqueue(r, req);
}

int sim_res_use(sim_des *des, sim_res *r, int64_t duration_ns, sim_event_fn done, void *ctx,
                void *payload, int64_t arg)
{
    if (duration_ns < 0) return SIM_INTERNAL_DES_PAST;
    assert(r->des == des);
    if (!r->busy) { /* start() without the intermediate request */
        if (des->n_busy++ == 0) des->idle_ns += des->now - des->idle_since;
        r->busy = 1;
        r->since = des->now;
        r->cur.duration_ns = duration_ns;
        r->cur.t_enqueued = des->now;
        r->cur.fn = done;
        r->cur.ctx = ctx;
        r->cur.payload = payload;
        r->cur.arg = arg;
        return schedule_at(des, des->now + duration_ns, 0, use_end, r, NULL, 0);
    }
    res_req req = {duration_ns, des->now, done, ctx, payload, arg};
    return enqueue(r, &req);
}

int sim_res_request(sim_des *des, sim_res *r, sim_event_fn granted, void *ctx, void *payload,
                    int64_t arg)
{
    assert(granted != NULL);
    res_req req = {-1, des->now, granted, ctx, payload, arg};
    return submit(des, r, &req);
}

int sim_res_release(sim_des *des, sim_res *r)
{
    if (!r->busy) return SIM_INTERNAL_DES_STATE;
    r->busy_ns += des->now - r->since;
    r->served++;
    if (r->len > 0) { /* hand over: the resource stays busy */
        res_req next = r->line[r->head];
        r->head = (r->head + 1) % r->cap;
        r->len--;
        r->wait_ns += des->now - next.t_enqueued;
        return start(des, r, &next);
    }
    r->busy = 0;
    if (--des->n_busy == 0) des->idle_since = des->now;
    return SIM_OK;
}

static void use_end(void *ctx, sim_des *des, const sim_event *ev)
{
    sim_res *r = ctx;
    sim_event uev = {.t_ns = ev->t_ns,
                     .prio = ev->prio,
                     .seq = ev->seq,
                     .fn = r->cur.fn,
                     .ctx = r->cur.ctx,
                     .payload = r->cur.payload,
                     .arg = r->cur.arg};
    int rc = sim_res_release(des, r);
    (void)rc;
    assert(rc == SIM_OK);
    if (uev.fn) uev.fn(uev.ctx, des, &uev);
}

const char *sim_res_name(const sim_res *r)
{
    return r->name;
}

int sim_res_busy(const sim_res *r)
{
    return r->busy;
}

size_t sim_res_queue_len(const sim_res *r)
{
    return r->len;
}

int64_t sim_res_busy_ns(const sim_res *r)
{
    return r->busy_ns + (r->busy ? r->des->now - r->since : 0);
}

uint64_t sim_res_served(const sim_res *r)
{
    return r->served;
}

uint64_t sim_res_waited(const sim_res *r)
{
    return r->waited;
}

int64_t sim_res_wait_ns(const sim_res *r)
{
    return r->wait_ns;
}
