/*
 * sim_evq_inl.h -- private to sim/des: the heap operations of sim_evq as
 * static inline functions, so that sim_des.c (one push and one pop per event,
 * ~150 events per simulated cycle) runs them without a call into another
 * translation unit.  sim_evq.c implements the public sim_evq_push/pop with the
 * same functions, so there is exactly one definition of the order.
 *
 * Sift operations move a "hole" instead of swapping: each level costs one
 * comparison and one event copy.
 */
#ifndef SIM_EVQ_INL_H
#define SIM_EVQ_INL_H

#include "sim_evq.h"

/* Doubles an owned heap (SIM_INTERNAL_DES_FULL for a caller's arena, SIM_NOMEM). */
int sim_evqi_grow(sim_evq *q);

/* sim_evq_push. */
static inline int sim_evqi_push(sim_evq *q, const sim_event *ev)
{
    if (q->n == q->cap) {
        int rc = sim_evqi_grow(q);
        if (rc != SIM_OK) return rc;
    }
    sim_event *h = q->heap;
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!sim_event_before(ev, &h[parent])) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = *ev;
    return SIM_OK;
}

/* sim_evq_pop on a non-empty queue. */
static inline void sim_evqi_pop(sim_evq *q, sim_event *out)
{
    sim_event *h = q->heap;
    *out = h[0];
    size_t n = --q->n;
    if (n == 0) return;
    /* sift the last element down from the root */
    const sim_event *last = &h[n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && sim_event_before(&h[c + 1], &h[c])) c++;
        if (!sim_event_before(&h[c], last)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = *last;
}

#endif
