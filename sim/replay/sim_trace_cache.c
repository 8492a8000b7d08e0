/*
 * sim_trace_cache.c -- the traces a script run holds.  See sim_trace_cache.h.
 */
#include "sim/replay/sim_trace_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sim_trace_entry *sim_trace_cache_find(const sim_trace_cache *c, const char *key)
{
    for (int32_t i = 0; i < c->n; i++)
        if ((c->e[i]->trace || c->e[i]->pending) && strcmp(c->e[i]->key, key) == 0)
            return c->e[i];
    return NULL;
}

sim_trace_entry *sim_trace_cache_add(sim_trace_cache *c, const char *key, const char *name,
                                     trc_trace *t, int64_t generation)
{
    if (c->n == c->cap) {
        int32_t cap = c->cap ? 2 * c->cap : 8;
        sim_trace_entry **n = realloc(c->e, sizeof *n * (size_t)cap);
        if (!n) return NULL;
        c->e = n;
        c->cap = cap;
    }
    sim_trace_entry *e = malloc(sizeof *e);
    if (!e) return NULL;
    c->e[c->n++] = e;
    snprintf(e->key, sizeof e->key, "%s", key);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->trace = t;
    e->used_at = generation;
    e->pending = NULL;
    e->given[0] = 0;
    e->is_synth = 0;
    return e;
}

size_t sim_trace_cache_release(sim_trace_cache *c, int32_t from, int64_t before)
{
    size_t freed = 0;
    for (int32_t i = from < 0 ? 0 : from; i < c->n; i++) {
        if (c->e[i]->used_at >= before || !c->e[i]->trace) continue;
        freed += trc_bytes(c->e[i]->trace);
        trc_free(c->e[i]->trace);
        c->e[i]->trace = NULL;
    }
    return freed;
}

void sim_trace_cache_free(sim_trace_cache *c)
{
    for (int32_t i = 0; i < c->n; i++) {
        trc_free(c->e[i]->trace);
        free(c->e[i]);
    }
    free(c->e);
    *c = (sim_trace_cache){0};
}
