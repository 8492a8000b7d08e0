/*
 * sim_lite.h -- the part of sim_des a small model needs, without its
 * generality: SIM_LITE_RES FIFO resources used with known durations
 * (sim_res_use), and nothing else -- no free-standing events, no
 * request/release, no priorities.  Every event is a service's end.
 *
 * Same order as sim_des, so a model gets the same run on either: events fire
 * in (time, sequence) order, the sequence taken from one counter when a
 * service starts (at once on a free resource, else when it leaves the line);
 * at a service's end the next request in line starts first, then the done
 * handler runs.  Busy time per resource, the time with no resource busy and
 * the events fired are accounted as sim_des accounts them.
 *
 * What it buys: no heap (the next event is the earliest of at most
 * SIM_LITE_RES services in progress), no allocation (each waiting line holds
 * SIM_LITE_LINE requests; sim_lite_use refuses more with SIM_INTERNAL_DES_FULL and
 * the model reruns on sim_des), and it lives on the caller's stack.
 * Handlers receive des = NULL; the time is sim_lite_now().
 */
#ifndef SIM_LITE_H
#define SIM_LITE_H

#include "sim_des.h"

#include <stdint.h>

enum { SIM_LITE_RES = 3, SIM_LITE_LINE = 16 };

typedef struct sim_lite_req {
    int64_t dur;
    sim_event_fn fn;
    void *ctx;
    int64_t arg;
} sim_lite_req;

typedef struct sim_lite_res {
    int busy;
    int64_t since, end; /* the current service: [since, end) */
    int64_t busy_ns;    /* completed service time */
    uint64_t seq;       /* its end's sequence number */
    sim_lite_req cur;   /* its done handler */
    sim_lite_req line[SIM_LITE_LINE];
    int head, len;
} sim_lite_res;

/* Fields are private; the struct is public so that it can live on the stack. */
typedef struct sim_lite {
    int64_t now, idle_since, idle_ns;
    uint64_t next_seq, fired;
    int n_busy;
    sim_lite_res res[SIM_LITE_RES];
} sim_lite;

/* Starts a run at time now (every resource free, counters at 0). */
void sim_lite_init(sim_lite *l, int64_t now);

/* sim_res_use on resource r in [0, SIM_LITE_RES): SIM_OK, SIM_INTERNAL_DES_PAST
 * (negative duration), SIM_INTERNAL_DES_FULL (the line is full; nothing queued) or
 * SIM_INTERNAL_DES_LIMIT (no such resource). */
int sim_lite_use(sim_lite *l, int r, int64_t duration_ns, sim_event_fn done, void *ctx,
                 int64_t arg);

/* Fires events until none is left, or until stop is set non-zero (checked
 * after each handler; a handler may point it at its own flag).  Returns the
 * events fired by this call. */
int64_t sim_lite_run(sim_lite *l, const int *stop);

int64_t sim_lite_now(const sim_lite *l);
int64_t sim_lite_busy_ns(const sim_lite *l, int r); /* completed and current service */
int64_t sim_lite_idle_ns(const sim_lite *l);        /* since init, up to now */
uint64_t sim_lite_fired(const sim_lite *l);

#endif
