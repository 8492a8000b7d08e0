/*
 * sim_run.c -- a script run's state without the script API (sim_run.h): the
 * memory it holds, the warnings it said, the files it writes, the files it
 * finds, the synthetic traces recorded and generated together, and the
 * phases of a run around its script: checked, locked, written, freed.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sim/sweep/sim_run.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "sim/config/home.h"
#include "sim/config/sandbox.h"
#include "sim/config/profile.h"
#include "sim/config/sim_paths.h"
#include "sim/out/runrec.h"
#include "sim/out/sim_out.h"
#include "sim/out/sim_timeline.h"
#include "sim/sim_status.h"
#include "sim/sweep/sim_sweep.h"
#include "sim/sweep/sim_sweep_mpi.h"

size_t sim_run_mem_in_use(const sim_run *r)
{
    const fs_lua_limits *lim = r->lim;
    if (!lim) return r->held_bytes;
    if (lim->pool) return atomic_load(&lim->pool->used); /* held bytes are in it */
    return lim->mem_used + r->held_bytes;
}

int sim_run_over_limit(const sim_run *r, size_t used, size_t bytes)
{
    const fs_lua_limits *lim = r->lim;
    return lim && lim->mem_limit_bytes &&
           (bytes > lim->mem_limit_bytes || used > lim->mem_limit_bytes - bytes);
}

int sim_run_try_hold(sim_run *r, size_t bytes)
{
    const fs_lua_limits *lim = r->lim;
    if (sim_run_over_limit(r, sim_run_mem_in_use(r), bytes)) return -1;
    if (lim && lim->pool && fs_mem_pool_take(lim->pool, bytes) != 0) return -1;
    r->held_bytes += bytes;
    return 0;
}

void sim_run_release(sim_run *r, size_t bytes)
{
    if (bytes > r->held_bytes) bytes = r->held_bytes;
    r->held_bytes -= bytes;
    if (r->lim && r->lim->pool) fs_mem_pool_put(r->lim->pool, bytes);
}

int sim_run_warn_once(sim_run *r, uint64_t key)
{
    for (int32_t i = 0; i < r->n_warned; i++)
        if (r->warned[i] == key) return 0;
    if (r->n_warned == r->cap_warned) {
        int32_t cap = r->cap_warned ? 2 * r->cap_warned : 16;
        uint64_t *n = realloc(r->warned, sizeof *n * (size_t)cap);
        if (!n) return 1; /* cannot remember it: print it again */
        r->warned = n;
        r->cap_warned = cap;
    }
    r->warned[r->n_warned++] = key;
    return 1;
}

int sim_run_add_output(sim_run *r, const char *name, const char *data, size_t len)
{
    if (sim_out_name_reserved(name)) return SIM_RUN_OUTPUT_RESERVED;
    for (int32_t i = 0; i < r->n_outputs; i++)
        if (strcasecmp(r->outputs[i].name, name) == 0) return SIM_RUN_OUTPUT_TAKEN;
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, data, len);
    copy[len] = 0;
    if (r->n_outputs == r->cap_outputs) {
        int32_t cap = r->cap_outputs ? 2 * r->cap_outputs : 4;
        sim_out_file *n = realloc(r->outputs, sizeof *n * (size_t)cap);
        if (!n) {
            free(copy);
            return -1;
        }
        r->outputs = n;
        r->cap_outputs = cap;
    }
    sim_out_file *o = &r->outputs[r->n_outputs++];
    snprintf(o->name, sizeof o->name, "%s", name);
    o->data = copy;
    o->len = len;
    return 0;
}

void sim_run_release_traces(sim_run *r, int32_t from, int64_t before)
{
    sim_run_release(r, sim_trace_cache_release(&r->traces, from, before));
}

int sim_run_find_any(const sim_run *r, const char *path, char *out, size_t n)
{
    return sim_paths_find_any(r->script_dir, fs_home_dir(), path, out, n);
}

int sim_run_find_file(const sim_run *r, const char *path, char *out, size_t n, char *tried,
                      size_t tn)
{
    return sim_paths_find_file(r->script_dir, fs_home_dir(), path, out, n, tried, tn);
}

typedef struct synth_pending {
    trc_synth_job job; /* its parameters; once generated, the trace or error */
    size_t most;       /* the most the trace may take (every tree full) */
    char chunk[PATH_MAX];
    int line;
} synth_pending;

/* ------------------------------------------------------------------ memos */

void sim_run_synth_memos(sim_run *r, int on)
{
    r->synth_memo_on += on ? 1 : -1;
    if (r->synth_memo_on > 0) return;
    r->synth_memo_on = 0;
    for (int32_t i = 0; i < r->n_synth_memo; i++) {
        sim_run_release(r, trc_synth_memo_bytes(r->synth_memo[i]));
        trc_synth_memo_free(r->synth_memo[i]);
    }
    r->n_synth_memo = 0;
}

trc_synth_memo *sim_run_synth_memo_for(sim_run *r, const trc_synth_params *p)
{
    if (r->synth_memo_on <= 0 || !p->node_streams) return NULL;
    for (int32_t i = 0; i < r->n_synth_memo; i++)
        if (trc_synth_memo_fits(r->synth_memo[i], p)) return r->synth_memo[i];
    if (r->n_synth_memo == SIM_RUN_SYNTH_MEMO_MAX) return NULL;
    trc_synth_memo *m = trc_synth_memo_new(p, SIM_RUN_SYNTH_MEMO_BYTES);
    if (m && sim_run_try_hold(r, trc_synth_memo_bytes(m)) != 0) {
        trc_synth_memo_free(m);
        m = NULL;
    }
    if (m) r->synth_memo[r->n_synth_memo++] = m;
    return m;
}

/* --------------------------------------------------------------- deferred */

int sim_run_synth_can_defer(const sim_run *r, size_t most)
{
    if (r->synth_defer <= 0) return 0;
    return !sim_run_over_limit(r, sim_run_mem_in_use(r) + r->synth_pending_most, most);
}

int sim_run_synth_defer(sim_run *r, sim_trace_entry *e, const trc_synth_params *p, size_t most,
                        const char *chunk, int line)
{
    synth_pending *q = calloc(1, sizeof *q);
    if (!q) return -1;
    q->job.p = *p;
    q->most = most;
    snprintf(q->chunk, sizeof q->chunk, "%s", chunk);
    q->line = line;
    e->pending = q;
    r->synth_pending_most += most;
    r->n_synth_pending++;
    return 0;
}

/* Generates q[0..n) (trc_synth_many): one thread each on up to `workers`
 * threads (all of them for one trace), each through its shape's draw memo. */
static void synth_all(sim_run *r, trc_synth_job **q, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        q[i]->memo = sim_run_synth_memo_for(r, &q[i]->p);
    trc_synth_many(q, n, r->ex.workers);
}

/* The recorded entries, in the order their traces were asked for. */
static int32_t pending_entries(sim_run *r, sim_trace_entry **out)
{
    int32_t n = 0;
    for (int32_t i = 0; i < r->traces.n; i++)
        if (r->traces.e[i]->pending) out[n++] = r->traces.e[i];
    return n;
}

/* Drops entry e's recorded trace (generated or not): an error leaves it
 * gone, as a trace released by flashspec.calibrate. */
static void drop_pending(sim_run *r, sim_trace_entry *e)
{
    synth_pending *p = e->pending;
    trc_free(p->job.t);
    r->synth_pending_most -= p->most;
    r->n_synth_pending--;
    free(p);
    e->pending = NULL;
}

/* Gives entry e its generated trace, charged to the memory limit: 0, or -1
 * (nothing changed) when it failed or the charge is refused. */
static int attach(sim_run *r, sim_trace_entry *e)
{
    synth_pending *p = e->pending;
    if (p->job.rc != TRC_OK || sim_run_try_hold(r, trc_bytes(p->job.t)) != 0) return -1;
    e->trace = p->job.t;
    r->synth_pending_most -= p->most;
    r->n_synth_pending--;
    free(p);
    e->pending = NULL;
    return 0;
}

int sim_run_synth_resolve(sim_run *r, sim_run_synth_failure *f)
{
    memset(f, 0, sizeof *f);
    if (r->n_synth_pending <= 0) return 0;
    sim_trace_entry **e = malloc(sizeof *e * (size_t)r->n_synth_pending);
    trc_synth_job **q = calloc((size_t)r->n_synth_pending, sizeof *q);
    if (!e || !q) {
        free(e), free(q);
        f->status = SIM_NOMEM;
        snprintf(f->msg, sizeof f->msg, "out of memory");
        return -1;
    }
    int32_t n = pending_entries(r, e), i = 0;
    for (int32_t k = 0; k < n; k++)
        q[k] = &((synth_pending *)e[k]->pending)->job;
    synth_all(r, q, n);
    free(q);
    while (i < n && attach(r, e[i]) == 0)
        i++;
    if (i == n) {
        free(e);
        return 0;
    }
    /* the first that failed, in the order asked: its error, the rest dropped
     * (the parameters were checked, so the generator ran out of memory) */
    synth_pending *p = e[i]->pending;
    f->status = p->job.rc == TRC_OK ? SIM_OK : sim_status_from_trc(p->job.rc);
    f->need = p->job.rc == TRC_OK ? trc_bytes(p->job.t) : 0;
    snprintf(f->chunk, sizeof f->chunk, "%s", p->chunk);
    f->line = p->line;
    snprintf(f->msg, sizeof f->msg, "%s", p->job.rc == TRC_OK ? "" : p->job.err.msg);
    for (int32_t k = i; k < n; k++)
        drop_pending(r, e[k]);
    free(e);
    return -1;
}

void sim_run_synth_free_pending(sim_run *r)
{
    for (int32_t i = 0; i < r->traces.n; i++)
        if (r->traces.e[i]->pending) drop_pending(r, r->traces.e[i]);
}

/* ------------------------------------------------------------ checks */

/* 1 when the model profile called name loads (along the search path) into *m. */
static int recorded_profile(sim_run *a, const char *name, sim_model *m)
{
    char path[PATH_MAX], err[512];
    if (sim_profile_find("models", name, 0, path, sizeof path) < 0) return 0;
    return sim_profile_cache_model(&a->profiles, path, m, err, sizeof err) == SIM_OK;
}

/* Why point model m, in role `role`, is not the recorded model `rec` (""
 * when it is, or when the recorded name is no profile to compare with). */
static void role_mismatch(sim_run *a, const char *role, const sim_model *m, const char *name,
                          const char *rec, char *why, size_t n)
{
    why[0] = 0;
    sim_model r;
    if (!rec[0] || !strcmp(name, rec) || !recorded_profile(a, rec, &r)) return;
    if (r.layers != m->layers || r.hidden != m->hidden || r.vocab != m->vocab || r.kind != m->kind)
        snprintf(why, n,
                 "the %s %s (layers %d, hidden %d, vocab %d) is another model than the "
                 "recorded %s (layers %d, hidden %d, vocab %d)",
                 role, name, (int)m->layers, (int)m->hidden, (int)m->vocab, rec, (int)r.layers,
                 (int)r.hidden, (int)r.vocab);
}

int sim_run_check_model_pair(sim_run *a, const trc_trace *t, const char *trace_name,
                             const char *tgt_name, const sim_model *tgt, const char *drf_name,
                             const sim_model *drf, const char *what, const char *chunk, int line,
                             char *err, size_t errlen)
{
    const trc_meta *meta = trc_get_meta(t);
    uint64_t key = trc_checksum(t) ^ 0x6d6f64656c706169ull;
    for (const char *p = tgt_name; *p; p++)
        key = (key ^ (unsigned char)*p) * 0x100000001b3ull;
    key ^= 0x2f;
    for (const char *p = drf ? drf_name : ""; *p; p++)
        key = (key ^ (unsigned char)*p) * 0x100000001b3ull;
    if (!sim_run_warn_once(a, key)) return SIM_OK; /* checked for this trace and pair */
    char why[512] = "";
    if (drf && meta->target[0] && !strcmp(drf_name, meta->target) &&
        strcmp(tgt_name, meta->target) != 0)
        snprintf(why, sizeof why, "its draft %s is the recorded target%s", drf_name,
                 meta->draft[0] && !strcmp(tgt_name, meta->draft) ? " and its target the "
                                                                     "recorded draft (swapped)"
                                                                   : "");
    else if (meta->draft[0] && !strcmp(tgt_name, meta->draft))
        snprintf(why, sizeof why, "its target %s is the recorded draft", tgt_name);
    if (!why[0]) role_mismatch(a, "target", tgt, tgt_name, meta->target, why, sizeof why);
    if (!why[0] && drf)
        role_mismatch(a, "draft", drf, drf_name, meta->draft, why, sizeof why);
    if (!why[0]) return SIM_OK;
    if (a->strict) {
        snprintf(err, errlen,
                 "%s:%d: %s: trace '%s' was recorded with target %s and draft %s, but %s "
                 "(--strict)",
                 chunk, line, what, trace_name, meta->target, meta->draft, why);
        return SIM_CONFIG;
    }
    if (a->ex.rank == 0)
        fprintf(stderr,
                "flashspec: warning: %s:%d: trace '%s' was recorded with target %s and draft "
                "%s, but %s; its acceptance belongs to the recorded pair (an error under "
                "--strict)\n",
                chunk, line, trace_name, meta->target, meta->draft, why);
    return SIM_OK;
}

/* A point asking for more tokens than the trace's references hold generates
 * what they hold: said once per trace and value. */
void sim_run_warn_short_trace(sim_run *a, const trc_trace *tt, const char *name,
                              int32_t max_new_tokens, const char *chunk, int line)
{
    int32_t longest = 0;
    const int32_t *tok;
    for (int32_t p = 0; p < trc_get_meta(tt)->n_prompts; p++) {
        int32_t len = trc_ref(tt, p, &tok);
        if (len > longest) longest = len;
    }
    if (max_new_tokens > longest &&
        sim_run_warn_once(a, trc_checksum(tt) ^ ((uint64_t)max_new_tokens << 1) ^ 0x5bd1e995ull) &&
        a->ex.rank == 0)
        fprintf(stderr,
                "flashspec: warning: %s:%d: max_new_tokens = %d but trace '%s' holds at most %d "
                "reference tokens per prompt; its points generate %d (result column "
                "effective_new_tokens)\n",
                chunk, line, (int)max_new_tokens, name, (int)longest, (int)longest);
}

/* ---------------------------------------------------------- the phases */

/* Phase 1: the run's settings and every check that needs no lock -- the
 * output paths writable, the script a readable file, the timeline made.
 * SIM_OK, or the exit code with err. */
int sim_run_check(sim_run *a, const fs_script_opts *o, const fs_timeline_opts *t, char *err,
                  size_t errlen)
{
    a->ex.rank = sim_mpi_rank();
    a->quiet = o->quiet || a->ex.rank != 0; /* under MPI only rank 0 talks */
    a->ex.quiet = a->quiet;
    a->ex.workers = o->jobs > 0 ? o->jobs : 1;
    a->ex.resume = o->no_resume ? 0 : o->resume_any_build ? SIM_SWEEP_RESUME_ANY_BUILD : 1;
    sim_sweep_build_key(FS_VERSION, a->ex.build_key);
    if (o->out_dir && (size_t)snprintf(a->ex.store_dir, sizeof a->ex.store_dir, "%s/points",
                                       o->out_dir) >= sizeof a->ex.store_dir) {
        snprintf(err, errlen, "%s: output path too long", o->out_dir);
        return SIM_CANTCREATE;
    }
    /* every output path is checked before the script runs a single point */
    if (o->out_dir && sim_out_dir_check(o->out_dir, err, errlen) != SIM_OK) return SIM_CANTCREATE;
    if (t && sim_out_path_check(t->path, err, errlen) != SIM_OK) return SIM_CANTCREATE;
    struct stat st;
    if (stat(o->script, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open script: %s", o->script, strerror(errno));
        return SIM_MISSING;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: cannot open script: %s", o->script,
                 S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        return SIM_MISSING;
    }
    char real[PATH_MAX];
    if (!realpath(o->script, real)) snprintf(real, sizeof real, "%s", o->script);
    snprintf(a->script_dir, sizeof a->script_dir, "%s", real);
    char *slash = strrchr(a->script_dir, '/');
    if (slash) *slash = 0;
    if (o->script_dir) snprintf(a->script_dir, sizeof a->script_dir, "%s", o->script_dir);
    if (!t) return SIM_OK;
    if (sim_out_path_creatable(t->path, err, errlen) != SIM_OK) return SIM_CANTCREATE;
    a->ex.tl = sim_timeline_create(0);
    if (!a->ex.tl) {
        snprintf(err, errlen, "out of memory for the timeline");
        return SIM_INTERNAL;
    }
    a->ex.tl_point = t->point;
    a->ex.tl_prompt = t->prompt;
    return SIM_OK;
}

/* Phase 2: one writer per output directory (sim/out/sim_outdir.h), the lock
 * held until the run ends; only then are another run's temporaries ours to
 * clean.  SIM_OK, or SIM_CANTCREATE with err. */
int sim_run_lock(sim_run *a, const fs_script_opts *o, char *err, size_t errlen)
{
    if (!o->out_dir || a->ex.rank != 0) return SIM_OK;
    int rc = sim_out_dir_lock(&a->lock, o->out_dir, a->ex.store_dir, a->quiet, &a->made_dir, err,
                              errlen);
    if (rc == SIM_OK) a->ex.lock = &a->lock; /* every record written asks that it still holds DIR */
    return rc;
}

/* Phase 5, when the script succeeded: the timeline, the run record and the
 * results, the script's files, then a failed point's code.  SIM_OK, or
 * the exit code with err. */
int sim_run_write(sim_run *a, const fs_script_opts *o, const fs_timeline_opts *t, char *err,
                  size_t errlen)
{
    int code = t ? sim_sweep_exec_timeline_write(&a->ex, t->path, a->quiet, err, errlen) : SIM_OK;
    if (code == SIM_OK && o->out_dir && a->ex.rank == 0) {
        fs_runrec_plugin plugins[FS_MAX_PLUGINS];
        int np = a->n_plugins < FS_MAX_PLUGINS ? a->n_plugins : FS_MAX_PLUGINS;
        for (int i = 0; i < np; i++)
            plugins[i] = (fs_runrec_plugin){a->plugins[i].desc, a->plugins[i].path,
                                            a->plugins[i].sha256};
        sim_out_results w = {
            .dir = o->out_dir, .lock = &a->lock, .meta = &a->meta,
            .rows = a->rows, .n_rows = a->n_rows, .rec = a->rec,
            .run = {.version = FS_VERSION, .plugins = plugins, .n_plugins = np,
                    .build_key = a->ex.build_key, .argv = o->argv, .argc = o->argc,
                    .script_path = o->script, .script_hash = a->meta.script_hash,
                    .args = o->args, .n_args = o->n_args, .script_bytes = a->src,
                    .script_len = a->len},
            .traces = &a->traces, .profiles = &a->profiles, .home = fs_home_dir(),
            .files = a->outputs, .n_files = a->n_outputs,
            .computed = a->ex.computed, .resumed = a->ex.resumed, .quiet = a->quiet};
        code = sim_out_results_write(&w, err, errlen);
    }
    if (code == SIM_OK && a->ex.point_code) {
        code = a->ex.point_code;
        snprintf(err, errlen, "%lld point%s failed (errors above); %s %d good point%s",
                 (long long)a->ex.failed, a->ex.failed == 1 ? "" : "s",
                 o->out_dir ? "the results hold the" : "the script ran its", a->n_rows,
                 a->n_rows == 1 ? "" : "s");
    }
    return code;
}

void sim_run_free(sim_run *a, const fs_script_opts *o, int code)
{
    a->synth_memo_on = 1;
    sim_run_synth_memos(a, 0); /* a fit the script's error cut short */
    sim_run_synth_free_pending(a);
    sim_trace_cache_free(&a->traces);
    free(a->rows);
    for (int32_t i = 0; i < a->n_outputs; i++)
        free(a->outputs[i].data);
    free(a->outputs);
    free(a->warned);
    sim_run_free_names(a);
    sim_profile_cache_free(&a->profiles);
    fs_runrec_free(a->rec);
    free(a->src);
    sim_timeline_destroy(a->ex.tl);
    sim_profile_cache_destroy(a->ex.profile_cache);
    sim_out_dir_release(&a->lock, o->out_dir, a->made_dir, code != SIM_OK, a->quiet);
}
