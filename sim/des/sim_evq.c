/*
 * sim_evq.c -- binary min-heap of events (see sim_evq.h for the order).
 *
 * The sift operations live in sim_evq_inl.h (shared with sim_des.c): each
 * level costs one comparison and one 56-byte copy.  The heap never shrinks; an owned heap doubles
 * when full, so the amortised cost of growth is O(1) per push and a steady-state
 * workload stops allocating after its first high-water mark.
 */
#include "sim_evq_inl.h"

#include <stdlib.h>
#include <string.h>

enum { EVQ_DEFAULT_CAP = 64 };

int sim_evq_init(sim_evq *q, sim_event *arena, size_t cap)
{
    q->n = 0;
    if (arena) {
        q->heap = arena;
        q->cap = cap;
        q->owned = 0;
        return SIM_OK;
    }
    if (cap == 0) cap = EVQ_DEFAULT_CAP;
    q->heap = malloc(cap * sizeof *q->heap);
    q->cap = q->heap ? cap : 0;
    q->owned = 1;
    return q->heap ? SIM_OK : SIM_NOMEM;
}

void sim_evq_free(sim_evq *q)
{
    if (!q) return;
    if (q->owned) free(q->heap);
    q->heap = NULL;
    q->n = q->cap = 0;
}

int sim_evqi_grow(sim_evq *q)
{
    if (!q->owned) return SIM_INTERNAL_DES_FULL;
    size_t ncap = q->cap ? q->cap * 2 : EVQ_DEFAULT_CAP;
    sim_event *h = realloc(q->heap, ncap * sizeof *h);
    if (!h) return SIM_NOMEM;
    q->heap = h;
    q->cap = ncap;
    return SIM_OK;
}

int sim_evq_push(sim_evq *q, const sim_event *ev)
{
    return sim_evqi_push(q, ev);
}

int sim_evq_pop(sim_evq *q, sim_event *out)
{
    if (q->n == 0) return SIM_INTERNAL_DES_EMPTY;
    sim_evqi_pop(q, out);
    return SIM_OK;
}
