/*
 * sim_trace_cache.h -- the traces a script run holds: one entry per trace,
 * found by key (a resolved path, or "synth:<checksum>"), so that a file or a
 * synthetic trace asked for again is loaded or made once; entries stamped
 * with the generation they were last used in, so that a calibration can free
 * the traces its recent evaluations no longer use.  Each entry is allocated
 * on its own and stays until the cache is freed: a script's trace objects
 * borrow them (a released entry keeps its name, with trace NULL).
 */
#ifndef SIM_REPLAY_TRACE_CACHE_H
#define SIM_REPLAY_TRACE_CACHE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/trc.h"

typedef struct sim_trace_entry {
    char key[PATH_MAX]; /* resolved path, or "synth:<checksum>" */
    char name[128];     /* what the results call it */
    trc_trace *trace;   /* owned; NULL once released (sim_trace_cache_release) */
    int64_t used_at;    /* the generation when last made or looked up */
    void *pending;      /* the caller's: a trace recorded, not made yet (trace NULL
                           until then); the cache never reads or frees it */
    /* for DIR/run.json: the path as the script gave it, or (is_synth) the
     * generator's settings */
    char given[PATH_MAX];
    int is_synth;
    trc_synth_params synth;
} sim_trace_entry;

typedef struct sim_trace_cache {
    sim_trace_entry **e;
    int32_t n, cap;
} sim_trace_cache; /* {0}: empty */

/* The entry of key that holds a trace or a pending one, or NULL. */
sim_trace_entry *sim_trace_cache_find(const sim_trace_cache *c, const char *key);

/* A new entry for trace t (taken; may be NULL with a pending one to come),
 * named name, used at generation; given "", not synthetic, nothing pending.
 * NULL when memory runs out (t is then not taken). */
sim_trace_entry *sim_trace_cache_add(sim_trace_cache *c, const char *key, const char *name,
                                     trc_trace *t, int64_t generation);

/* Frees the traces of the entries [from, n) last used before generation
 * `before` (from < 0: 0); the entries stay, with trace NULL.  Returns the
 * bytes freed (trc_bytes of each). */
size_t sim_trace_cache_release(sim_trace_cache *c, int32_t from, int64_t before);

/* Frees every entry and its trace (not a pending one's); the cache is empty. */
void sim_trace_cache_free(sim_trace_cache *c);

#endif
