/*
 * sim_evq.h -- the event queue of the discrete-event core.
 *
 * A binary min-heap of sim_event values ordered by the total order
 * (t_ns, prio, seq): earlier time first; at equal time the lower priority value
 * first; at equal time and priority the lower sequence number (= scheduled
 * earlier) first.  Because seq is unique per queue user (sim_des assigns it from
 * a counter), the order is total and a run is deterministic: the same schedule
 * calls always pop in the same order, whatever the heap's internal layout.
 *
 * Memory: either a caller-provided arena of fixed capacity (push fails with
 * SIM_INTERNAL_DES_FULL when it is full) or an owned array that doubles when full.
 * Either way, once the queue has reached its high-water mark no operation
 * allocates.  push and pop are O(log n); peek, size and clear are O(1).
 *
 * The workload it is tuned for: a hardware model schedules ~100-200 events per
 * speculative cycle with at most a handful pending at any time, so the heap is
 * tiny and the constant factor (events are copied by value, 56 bytes) dominates.
 */
#ifndef SIM_EVQ_H
#define SIM_EVQ_H

#include <stddef.h>
#include <stdint.h>
#include "sim/sim_status.h"

typedef struct sim_des sim_des;
typedef struct sim_event sim_event;

/* Event handler.  ctx and ev->payload are the pointers given at scheduling time
 * (borrowed: the core never frees them).  ev is valid only during the call. */
typedef void (*sim_event_fn)(void *ctx, sim_des *des, const sim_event *ev);

struct sim_event {
    int64_t t_ns;    /* virtual time the event fires, >= 0 */
    int32_t prio;    /* lower fires first at equal time */
    uint64_t seq;    /* tie-breaker, unique within one queue user */
    sim_event_fn fn; /* handler, non-NULL */
    void *ctx;       /* handler context (borrowed) */
    void *payload;   /* event payload (borrowed) */
    int64_t arg;     /* small integer payload */
};

typedef struct sim_evq {
    sim_event *heap; /* heap[0] is the minimum */
    size_t n;        /* events queued */
    size_t cap;      /* slots in heap */
    int owned;       /* 1: heap is malloc'd here and grows; 0: caller's arena */
} sim_evq;

/* Nonzero when a fires strictly before b in (t_ns, prio, seq) order. */
static inline int sim_event_before(const sim_event *a, const sim_event *b)
{
    if (a->t_ns != b->t_ns) return a->t_ns < b->t_ns;
    if (a->prio != b->prio) return a->prio < b->prio;
    return a->seq < b->seq;
}

/* Initialises q.  arena != NULL: use arena[0..cap) (borrowed, fixed capacity,
 * cap >= 1).  arena == NULL: allocate cap slots (cap 0 means a small default)
 * and grow on demand.  Returns SIM_OK or SIM_NOMEM. */
int sim_evq_init(sim_evq *q, sim_event *arena, size_t cap);

/* Frees an owned heap; q can be re-initialised afterwards.  NULL-safe. */
void sim_evq_free(sim_evq *q);

/* Copies *ev into the queue.  SIM_OK, SIM_INTERNAL_DES_FULL or SIM_NOMEM. */
int sim_evq_push(sim_evq *q, const sim_event *ev);

/* Removes the first event into *out.  SIM_OK or SIM_INTERNAL_DES_EMPTY. */
int sim_evq_pop(sim_evq *q, sim_event *out);

/* First event (borrowed until the next push/pop), or NULL when empty. */
static inline const sim_event *sim_evq_peek(const sim_evq *q)
{
    return q->n ? &q->heap[0] : NULL;
}

static inline size_t sim_evq_size(const sim_evq *q)
{
    return q->n;
}

/* Drops every queued event (keeps the memory). */
static inline void sim_evq_clear(sim_evq *q)
{
    q->n = 0;
}

#endif
