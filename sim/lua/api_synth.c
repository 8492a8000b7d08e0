/*
 * api_synth.c -- what flashspec.calibrate adds to flashspec.trace.synth
 * (api_objects.c) while it fits: draw memos, and traces generated together.
 *
 * Draw memos (fs_api_synth_memos): one trc_synth_memo per shape of
 * node-stream trace, for the length of a fit, so that an evaluation redraws
 * only what its knobs move (trc.h).  Held against the memory limit; a shape
 * that does not fit is synthesised without one.
 *
 * Traces generated together (fs_api.synth_defer): while an evaluation calls
 * the spec's points function, a named synthetic trace that is not made yet
 * is only recorded -- its parameters checked, its entry made, its userdata
 * handed back -- and fs_api_synth_resolve then generates every recorded one
 * at once (trc_synth_many, trc.h): each on its own worker (one thread each)
 * when there are several, else on all of them.  The traces are the ones flashspec.trace.synth makes
 * (the same at any thread count), charged to the memory limit in the order
 * they were asked for; a trace is recorded only when the most the recorded
 * ones may take still fits, so the limit sees what it would have seen.
 * Anything that reads a recorded trace before then (fs_trace_get) generates
 * it first.
 */
#include "api_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fs_synth_pending {
    trc_synth_job job; /* its parameters; once generated, the trace or error */
    size_t most;       /* the most the trace may take (every tree full) */
    char chunk[PATH_MAX];
    int line;
};

/* ------------------------------------------------------------------ memos */

void fs_api_synth_memos(fs_api *a, int on)
{
    a->synth_memo_on += on ? 1 : -1;
    if (a->synth_memo_on > 0) return;
    a->synth_memo_on = 0;
    for (int32_t i = 0; i < a->n_synth_memo; i++) {
        fs_api_release(a, trc_synth_memo_bytes(a->synth_memo[i]));
        trc_synth_memo_free(a->synth_memo[i]);
    }
    a->n_synth_memo = 0;
}

trc_synth_memo *fs_api_synth_memo_for(fs_api *a, const trc_synth_params *p)
{
    if (a->synth_memo_on <= 0 || !p->node_streams) return NULL;
    for (int32_t i = 0; i < a->n_synth_memo; i++)
        if (trc_synth_memo_fits(a->synth_memo[i], p)) return a->synth_memo[i];
    if (a->n_synth_memo == FS_SYNTH_MEMO_MAX) return NULL;
    trc_synth_memo *m = trc_synth_memo_new(p, FS_SYNTH_MEMO_BYTES);
    if (m && fs_api_try_hold(a, trc_synth_memo_bytes(m)) != 0) {
        trc_synth_memo_free(m);
        m = NULL;
    }
    if (m) a->synth_memo[a->n_synth_memo++] = m;
    return m;
}

/* --------------------------------------------------------------- deferred */

int fs_api_synth_can_defer(const fs_api *a, size_t most)
{
    if (a->synth_defer <= 0) return 0;
    return !fs_api_over_limit(a, fs_api_mem_in_use(a) + a->synth_pending_most, most);
}

void fs_api_synth_defer(lua_State *L, fs_api *a, fs_trace_entry *e, const trc_synth_params *p,
                        size_t most, const char *chunk, int line)
{
    fs_synth_pending *q = calloc(1, sizeof *q);
    if (!q) fs_raise(L, SIM_NOMEM, 0, "out of memory");
    q->job.p = *p;
    q->most = most;
    snprintf(q->chunk, sizeof q->chunk, "%s", chunk);
    q->line = line;
    e->pending = q;
    a->synth_pending_most += most;
    a->n_synth_pending++;
}

/* Generates q[0..n) (trc_synth_many): one thread each on up to `workers`
 * threads (all of them for one trace), each through its shape's draw memo. */
static void synth_all(fs_api *a, trc_synth_job **q, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        q[i]->memo = fs_api_synth_memo_for(a, &q[i]->p);
    trc_synth_many(q, n, a->ex.workers);
}

/* The recorded entries, in the order their traces were asked for. */
static int32_t pending_entries(fs_api *a, fs_trace_entry **out)
{
    int32_t n = 0;
    for (int32_t i = 0; i < a->traces.n; i++)
        if (a->traces.e[i]->pending) out[n++] = a->traces.e[i];
    return n;
}

/* Drops entry e's recorded trace (generated or not): an error leaves it
 * gone, as a trace released by flashspec.calibrate. */
static void drop_pending(fs_api *a, fs_trace_entry *e)
{
    fs_synth_pending *p = e->pending;
    trc_free(p->job.t);
    a->synth_pending_most -= p->most;
    a->n_synth_pending--;
    free(p);
    e->pending = NULL;
}

/* Gives entry e its generated trace, charged to the memory limit: 0, or -1
 * (nothing changed) when it failed or the charge is refused. */
static int attach(fs_api *a, fs_trace_entry *e)
{
    fs_synth_pending *p = e->pending;
    if (p->job.rc != TRC_OK || fs_api_try_hold(a, trc_bytes(p->job.t)) != 0) return -1;
    e->trace = p->job.t;
    a->synth_pending_most -= p->most;
    a->n_synth_pending--;
    free(p);
    e->pending = NULL;
    return 0;
}

void fs_api_synth_resolve(lua_State *L, fs_api *a)
{
    if (a->n_synth_pending <= 0) return;
    fs_trace_entry **e = malloc(sizeof *e * (size_t)a->n_synth_pending);
    trc_synth_job **q = malloc(sizeof *q * (size_t)a->n_synth_pending);
    if (!e || !q) {
        free(e), free(q);
        fs_raise(L, SIM_NOMEM, 0, "out of memory");
    }
    int32_t n = pending_entries(a, e), i = 0;
    for (int32_t k = 0; k < n; k++)
        q[k] = &((fs_synth_pending *)e[k]->pending)->job;
    synth_all(a, q, n);
    free(q);
    while (i < n && attach(a, e[i]) == 0)
        i++;
    if (i == n) {
        free(e);
        return;
    }
    /* the first that failed, in the order asked: its error, the rest dropped
     * (the parameters were checked, so the generator ran out of memory) */
    fs_synth_pending p = *(fs_synth_pending *)e[i]->pending;
    size_t need = p.job.rc == TRC_OK ? trc_bytes(p.job.t) : 0;
    for (int32_t k = i; k < n; k++)
        drop_pending(a, e[k]);
    free(e);
    if (p.job.rc != TRC_OK)
        fs_raise(L, sim_status_from_trc(p.job.rc), 0, "%s:%d: %s", p.chunk, p.line,
                 p.job.err.msg);
    fs_api_charge(L, a, need, p.chunk, p.line, "flashspec.trace.synth"); /* refused: raises */
    fs_api_release(a, need); /* memory came free meanwhile: the trace is gone all the same */
}

void fs_api_synth_free_pending(fs_api *a)
{
    for (int32_t i = 0; i < a->traces.n; i++)
        if (a->traces.e[i]->pending) drop_pending(a, a->traces.e[i]);
}
