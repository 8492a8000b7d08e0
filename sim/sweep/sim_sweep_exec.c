/*
 * sim_sweep_exec.c -- staged points executed (sim_sweep_exec.h): the jobs of
 * the points that run, their outcomes back in point order, the failed points'
 * report and status, the memo of point statistics, the timeline hooks.
 *
 * Invariants:
 *   - the staged points' objects (device, models, trace, policy parameters)
 *     stay alive while their points execute, since each sim_point borrows
 *     from them;
 *   - nothing here writes results files: the script's end does, once.
 */
#include "sim/sweep/sim_sweep_exec.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/out/sim_strbuf.h"
#include "sim/out/sim_timeline.h"
#include "sim/sweep/sim_sweep.h"
#include "sim/sweep/sim_sweep_mpi.h"

/* ----------------------------------------------------------- timeline */

/* sim_point.cycle_fn of the timeline point: flattens the replay's cycle for
 * the writer (sim/out stays independent of the replay). */
static void timeline_cycle(void *ctx, const sim_cycle_info *ci)
{
    const sim_cycle_time *ct = ci->ct;
    sim_timeline_cycle c = {
        .prompt = ci->prompt,
        .pos = ci->pos,
        .ctx_len = ci->ctx_len,
        .emitted = ci->emitted,
        .accepted = ci->accepted,
        .rows = ci->rows,
        .leaves = ci->leaves,
        .draft_calls = ci->draft_calls,
        .provisional_calls = ci->provisional_calls,
        .provisional_done = ci->provisional_done,
        .dram_used_bytes = ci->dram_used_bytes,
    };
    if (ct) {
        c.t0_ns = ct->t0_ns;
        c.t1_ns = ct->t1_ns;
        c.draft_ms = ct->draft_ms;
        c.verify_ms = ct->verify_ms;
        c.flash_ms = ct->flash_ms;
        c.npu_ms = ct->npu_ms;
        c.cpu_ms = ct->cpu_ms;
        c.kv_ms = ct->kv_ms;
        c.idle_ms = ct->idle_ms;
    }
    sim_timeline_cycle_add(ctx, &c);
}

/* Names the timeline after the chosen point (otherData and process name). */
static void timeline_describe(sim_sweep_exec *ex, const sim_sweep_staged *s)
{
    char v[FS_LABEL_CAP + 512];
    snprintf(v, sizeof v, "flashspec point %lld prompt %d: %s%s%s, %s on %s, dram_fraction=%g",
             (long long)ex->tl_point, (int)ex->tl_prompt, s->row.policy,
             s->row.policy_params[0] ? " " : "", s->row.policy_params, s->row.target,
             s->row.device, s->row.dram_fraction);
    sim_timeline_set_meta(ex->tl, "title", v);
    snprintf(v, sizeof v, "%lld", (long long)ex->tl_point);
    sim_timeline_set_meta(ex->tl, "point", v);
    snprintf(v, sizeof v, "%d", (int)ex->tl_prompt);
    sim_timeline_set_meta(ex->tl, "prompt", v);
    sim_timeline_set_meta(ex->tl, "policy", s->row.policy);
    sim_timeline_set_meta(ex->tl, "policy_params", s->row.policy_params);
    sim_timeline_set_meta(ex->tl, "device", s->row.device);
    sim_timeline_set_meta(ex->tl, "target", s->row.target);
    sim_timeline_set_meta(ex->tl, "draft", s->row.draft);
    sim_timeline_set_meta(ex->tl, "trace", s->row.trace);
    sim_out_fmt_exact(v, sizeof v, s->row.dram_fraction); /* as run.json: reads back exactly */
    sim_timeline_set_meta(ex->tl, "dram_fraction", v);
    sim_timeline_set_meta(ex->tl, "flashspec_version", FS_VERSION);
    sim_timeline_set_meta(ex->tl, "time_unit", "simulated microseconds");
}

/* ---------------------------------------------------------------- memo */

static uint32_t memo_hash(sim_id id, int32_t n_slot)
{
    return (uint32_t)((id.lo ^ (id.hi >> 7)) & (uint64_t)(n_slot - 1));
}

static int memo_index(sim_sweep_memo *m, int32_t n_slot)
{
    int32_t *slot = malloc(sizeof *slot * (size_t)n_slot);
    if (!slot) return -1;
    for (int32_t i = 0; i < n_slot; i++)
        slot[i] = -1;
    for (int32_t i = 0; i < m->n; i++) {
        uint32_t h = memo_hash(m->e[i].id, n_slot);
        while (slot[h] >= 0)
            h = (h + 1) & (uint32_t)(n_slot - 1);
        slot[h] = i;
    }
    free(m->slot);
    m->slot = slot;
    m->n_slot = n_slot;
    return 0;
}

sim_sweep_memo_entry *sim_sweep_memo_find(sim_sweep_memo *m, sim_id id)
{
    if (!m->n_slot) return NULL;
    for (uint32_t h = memo_hash(id, m->n_slot);; h = (h + 1) & (uint32_t)(m->n_slot - 1)) {
        int32_t i = m->slot[h];
        if (i < 0) return NULL;
        if (m->e[i].id.hi == id.hi && m->e[i].id.lo == id.lo) return &m->e[i];
    }
}

int sim_sweep_memo_put(sim_sweep_memo *m, sim_id id, const sim_point_stats *st)
{
    sim_sweep_memo_entry *old = sim_sweep_memo_find(m, id);
    if (old) {
        old->used_at = m->now;
        return 0;
    }
    if (m->n == SIM_SWEEP_MEMO_MAX) return 0;
    if (m->n == m->cap) {
        int32_t cap = m->cap ? 2 * m->cap : 64;
        if (cap > SIM_SWEEP_MEMO_MAX) cap = SIM_SWEEP_MEMO_MAX;
        sim_sweep_memo_entry *e = realloc(m->e, sizeof *e * (size_t)cap);
        if (!e) return -1;
        m->e = e;
        m->cap = cap;
    }
    m->e[m->n] = (sim_sweep_memo_entry){.id = id, .used_at = m->now, .pending = !st};
    if (st) m->e[m->n].st = *st;
    m->n++;
    if (2 * m->n > m->n_slot) return memo_index(m, m->n_slot ? 2 * m->n_slot : 128);
    uint32_t h = memo_hash(id, m->n_slot);
    while (m->slot[h] >= 0)
        h = (h + 1) & (uint32_t)(m->n_slot - 1);
    m->slot[h] = m->n - 1;
    return 0;
}

void sim_sweep_memo_fill(sim_sweep_memo *m, sim_id id, const sim_point_stats *st)
{
    sim_sweep_memo_entry *e = sim_sweep_memo_find(m, id);
    if (!e || !e->pending) return;
    e->st = *st;
    e->pending = 0;
}

void sim_sweep_memo_prune(sim_sweep_memo *m)
{
    int32_t k = 0;
    for (int32_t i = 0; i < m->n; i++)
        if (m->e[i].used_at > m->now - SIM_SWEEP_MEMO_KEEP) m->e[k++] = m->e[i];
    if (k == m->n) return;
    m->n = k;
    if (memo_index(m, m->n_slot) != 0) { /* cannot index: forget everything */
        m->n = 0;
        for (int32_t i = 0; i < m->n_slot; i++)
            m->slot[i] = -1;
    }
}

void sim_sweep_memo_free(sim_sweep_memo *m)
{
    free(m->e);
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------- execute */

int sim_sweep_failure_rank(int status)
{
    switch (sim_status_primary(status)) {
    case SIM_NOMEM:
    case SIM_INTERNAL:
    case SIM_MISMATCH: return 3;
    case SIM_DATA: return 2;
    default: return 1;
    }
}

void sim_sweep_exec_note(sim_sweep_exec *ex, int status)
{
    /* the most serious kind of failure names the run */
    if (ex->point_code == 0 ||
        sim_sweep_failure_rank(status) > sim_sweep_failure_rank(ex->point_code))
        ex->point_code = status;
}

/* The jobs of the points of sp[0..n) that run (not failed, not reused),
 * the timeline point's with the timeline hooks; *tl_k its job (-1: none).
 * Returns how many. */
static int64_t exec_jobs(sim_sweep_exec *ex, const sim_sweep_staged *sp, int64_t n,
                         sim_sweep_job *jobs, int64_t tl_i, int64_t *tl_k)
{
    int64_t k = 0;
    *tl_k = -1;
    for (int64_t i = 0; i < n; i++) {
        if (sp[i].code || sp[i].memo) continue;
        jobs[k].pt = sp[i].pt;
        jobs[k].pt.profile_cache = ex->profile_cache;
        jobs[k].id = sp[i].id;
        jobs[k].trace_checksum = sim_point_content_key(&sp[i].pt);
        if (i == tl_i) {
            *tl_k = k;
            jobs[k].pt.span_fn = sim_timeline_span;
            jobs[k].pt.cycle_fn = timeline_cycle;
            jobs[k].pt.trace_ctx = ex->tl;
            jobs[k].pt.trace_prompt = ex->tl_prompt;
        }
        k++;
    }
    return k;
}

/* Each run point's outcome back to sp[]: its statistics, or its error line
 * naming the point (a longer line is cut, and then ends in "..."). */
static void exec_collect(sim_sweep_staged *sp, int64_t n, const sim_sweep_job *jobs, int single,
                         const char *chunk, int line)
{
    for (int64_t i = 0, k = 0; i < n; i++) {
        sim_sweep_staged *s = &sp[i];
        if (s->code || s->memo) continue;
        const sim_sweep_job *j = &jobs[k++];
        s->state = j->state;
        if (j->state == SIM_SWEEP_COMPUTED || j->state == SIM_SWEEP_RESUMED) {
            s->row.st = j->st;
        } else if (j->state == SIM_SWEEP_FAILED) {
            s->code = j->replay_rc;
            int w = snprintf(s->err, sizeof s->err,
                     "%s:%d: flashspec.%s (%s%s%s on %s, %s, trace %s, dram_fraction=%g): %s",
                     chunk, line, single ? "run" : "sweep", s->row.policy,
                     s->row.policy_params[0] ? " " : "", s->row.policy_params, s->row.device,
                     s->row.target, s->row.trace, s->row.dram_fraction, j->err);
            if (w < 0 || (size_t)w >= sizeof s->err) memcpy(s->err + sizeof s->err - 4, "...", 4);
        }
    }
}

/* The timeline point's outcome (s; job its job, NULL when it did not run):
 * failed, or ran -- and a point resumed from the store, which did not
 * replay, replayed again to record it (deterministic: the same statistics;
 * rank 0 alone).  0, or -1 with err when that replay fails. */
static int exec_timeline(sim_sweep_exec *ex, const sim_sweep_staged *s, const sim_sweep_job *job,
                         char *err, size_t errlen)
{
    if (s->code) {
        ex->tl_state = SIM_SWEEP_TL_FAILED;
        ex->tl_code = s->code;
        return 0;
    }
    if (s->state != SIM_SWEEP_COMPUTED && s->state != SIM_SWEEP_RESUMED) return 0;
    ex->tl_state = SIM_SWEEP_TL_RAN;
    ex->tl_prompts = s->row.st.prompts;
    timeline_describe(ex, s);
    if (!job || s->state != SIM_SWEEP_RESUMED || ex->rank != 0 ||
        sim_timeline_n_cycles(ex->tl) != 0 || sim_timeline_n_spans(ex->tl) != 0)
        return 0;
    sim_point_stats st;
    return sim_replay_run(&job->pt, &st, err, errlen) == SIM_OK ? 0 : -1;
}

/* A sweep's failed points: each on one line (rank 0), the run's exit code
 * noted, and the summary line unless quiet. */
static void exec_report(sim_sweep_exec *ex, const sim_sweep_staged *sp, int64_t n,
                        const sim_sweep_summary *sum)
{
    int64_t failed = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!sp[i].code) continue;
        failed++;
        sim_sweep_exec_note(ex, sp[i].code);
        if (ex->rank == 0)
            fprintf(stderr, "flashspec: point %lld of %lld failed: %s\n", (long long)i + 1,
                    (long long)n, sp[i].err);
    }
    ex->failed += failed;
    if (!ex->quiet && ex->rank == 0)
        fprintf(stderr,
                "flashspec: sweep of %lld point%s: %lld computed, %lld resumed, %lld failed "
                "in %.2f s\n",
                (long long)n, n == 1 ? "" : "s", (long long)sum->computed, (long long)sum->resumed,
                (long long)failed, sum->wall_s);
}

/* The sweep parameters of ex for a call (single: an fs.run point, no
 * progress). */
static void exec_params(const sim_sweep_exec *ex, int single, sim_sweep_params *p)
{
    sim_sweep_default_params(p);
    p->workers = ex->workers;
    p->store_dir = ex->store_dir[0] ? ex->store_dir : NULL;
    p->resume = ex->resume;
    p->progress = !ex->quiet && !single;
    p->what = "sweep";
    p->version = ex->build_key;
    p->lock = ex->lock;
}

int sim_sweep_exec_run(sim_sweep_exec *ex, sim_sweep_staged *sp, int64_t n, int single,
                       const char *chunk, int line, char *err, size_t errlen)
{
    int64_t nj = 0;
    for (int64_t i = 0; i < n; i++)
        nj += sp[i].code == 0 && !sp[i].memo;
    sim_sweep_job *jobs = calloc((size_t)(nj ? nj : 1), sizeof *jobs);
    if (!jobs) {
        snprintf(err, errlen, "out of memory for %lld points", (long long)n);
        return SIM_NOMEM;
    }
    /* the timeline point, if it is one of these: only it gets the hooks */
    int64_t tl_i = -1, tl_k = -1;
    if (ex->tl && ex->tl_point >= ex->points_seen && ex->tl_point - ex->points_seen < n)
        tl_i = ex->tl_point - ex->points_seen;
    ex->points_seen += n;
    exec_jobs(ex, sp, n, jobs, tl_i, &tl_k);
    sim_sweep_params p;
    exec_params(ex, single, &p);
    sim_sweep_summary sum;
    char serr[512] = "";
    int rc = sim_sweep_run(&p, jobs, nj, &sum, serr, sizeof serr);
    exec_collect(sp, n, jobs, single, chunk, line);
    char rerr[SIM_SWEEP_ERR_CAP];
    if (tl_i >= 0 &&
        exec_timeline(ex, &sp[tl_i], tl_k >= 0 ? &jobs[tl_k] : NULL, rerr, sizeof rerr) != 0) {
        free(jobs);
        snprintf(err, errlen, "%s:%d: timeline replay: %s", chunk, line, rerr);
        return SIM_INTERNAL;
    }
    free(jobs);
    ex->computed += sum.computed;
    ex->resumed += sum.resumed;
    if (rc == SIM_INTERRUPTED)
        snprintf(err, errlen, "%s:%d: interrupted", chunk, line);
    else if (rc == SIM_CONFIG_RANKS)
        snprintf(err, errlen, "%s:%d: %s", chunk, line, serr);
    else if (rc != SIM_OK)
        snprintf(err, errlen, "%s", serr);
    if (rc != SIM_OK) return rc;
    if (!single) exec_report(ex, sp, n, &sum);
    return SIM_OK;
}

/* -------------------------------------------------------- evaluations */

int sim_sweep_evals_lookup(sim_sweep_eval *ev, int32_t m, sim_sweep_memo *memo)
{
    for (int32_t j = 0; j < m; j++) {
        if (!memo) { /* every point runs */
            for (int64_t i = 0; i < ev[j].n; i++)
                ev[j].sp[i].memo = 0;
            continue;
        }
        sim_sweep_staged *sp = ev[j].sp;
        memo->now = ev[j].now;
        for (int64_t i = 0; i < ev[j].n; i++) {
            sim_sweep_memo_entry *e = sim_sweep_memo_find(memo, sp[i].id);
            sp[i].memo = e ? (e->pending ? 2 : 1) : 0;
            if (!e) continue;
            if (!e->pending) sp[i].row.st = e->st;
            sp[i].state = SIM_SWEEP_COMPUTED;
            e->used_at = memo->now;
            memo->hits++;
        }
        for (int64_t i = 0; i < ev[j].n; i++) {
            if (sp[i].memo) continue;
            memo->runs++;
            if (sim_sweep_memo_put(memo, sp[i].id, NULL) != 0) return SIM_NOMEM;
        }
        sim_sweep_memo_prune(memo);
    }
    return SIM_OK;
}

int64_t sim_sweep_evals_total(const sim_sweep_eval *ev, int32_t m)
{
    int64_t total = 0;
    for (int32_t j = 0; j < m; j++)
        total += ev[j].n;
    return total;
}

/* Index of id among the points run (open addressing over run[0..nrun)),
 * adding it when absent; *added says which. */
static int64_t evals_slot(int64_t *slot, int64_t n_slot, const sim_sweep_staged *run, sim_id id,
                          int64_t nrun, int *added)
{
    uint64_t h = (id.lo ^ (id.hi >> 7)) & (uint64_t)(n_slot - 1);
    for (;; h = (h + 1) & (uint64_t)(n_slot - 1)) {
        if (slot[h] < 0) break;
        if (run[slot[h]].id.hi == id.hi && run[slot[h]].id.lo == id.lo) {
            *added = 0;
            return slot[h];
        }
    }
    slot[h] = nrun;
    *added = 1;
    return nrun;
}

/* Each id to run once -- a copy of its first point in run[] (*nrun of
 * them) -- and where[k] the run index of the batch's point k (-1: the memo
 * gave it).  0, or -1 out of memory. */
static int evals_gather(sim_sweep_eval *ev, int32_t m, sim_sweep_staged *run, int64_t *where,
                        int64_t *nrun)
{
    int64_t total = sim_sweep_evals_total(ev, m), n_slot = 2;
    while (n_slot < 2 * total)
        n_slot *= 2;
    int64_t *slot = malloc(sizeof *slot * (size_t)n_slot);
    if (!slot) return -1;
    for (int64_t h = 0; h < n_slot; h++)
        slot[h] = -1;
    *nrun = 0;
    for (int32_t j = 0, k = 0; j < m; j++)
        for (int64_t i = 0; i < ev[j].n; i++, k++) {
            sim_sweep_staged *s = &ev[j].sp[i];
            int added = 0;
            where[k] = s->memo == 1 ? -1 : evals_slot(slot, n_slot, run, s->id, *nrun, &added);
            if (added) {
                run[*nrun] = *s;
                run[(*nrun)++].memo = 0;
            }
        }
    free(slot);
    return 0;
}

int sim_sweep_exec_evals(const sim_sweep_exec *ex, sim_sweep_eval *ev, int32_t m,
                         sim_sweep_memo *memo, sim_sweep_staged *run, int64_t *where,
                         const char *chunk, int line, char *err, size_t errlen)
{
    int64_t nrun;
    if (evals_gather(ev, m, run, where, &nrun) != 0) {
        snprintf(err, errlen, "out of memory");
        return SIM_NOMEM;
    }
    /* no results rows, no resume store, no progress, no timeline */
    sim_sweep_exec x = *ex;
    x.store_dir[0] = 0;
    x.quiet = 1;
    x.tl = NULL;
    x.points_seen = 0;
    int rc = sim_sweep_exec_run(&x, run, nrun, 1, chunk, line, err, errlen);
    if (rc != SIM_OK) return rc;
    for (int32_t j = 0, k = 0; j < m; j++)
        for (int64_t i = 0; i < ev[j].n; i++, k++) {
            sim_sweep_staged *s = &ev[j].sp[i], *r = where[k] >= 0 ? &run[where[k]] : NULL;
            if (!r) continue;
            s->row.st = r->row.st;
            if (s->memo) continue; /* reused: its evaluation counted it so */
            s->state = r->state;
            s->code = r->code;
            memcpy(s->err, r->err, sizeof s->err);
        }
    for (int64_t r = 0; memo && r < nrun; r++)
        if (!run[r].code && run[r].state == SIM_SWEEP_COMPUTED)
            sim_sweep_memo_fill(memo, run[r].id, &run[r].row.st);
    return SIM_OK;
}

int sim_sweep_exec_timeline_write(const sim_sweep_exec *ex, const char *path, int quiet, char *err,
                                  size_t errlen)
{
    if (ex->tl_state == SIM_SWEEP_TL_NOT_REACHED) {
        snprintf(err, errlen,
                 "--timeline-point %lld: the script ran %lld point%s (indices 0..%lld); no "
                 "timeline written",
                 (long long)ex->tl_point, (long long)ex->points_seen,
                 ex->points_seen == 1 ? "" : "s", (long long)ex->points_seen - 1);
        return SIM_USAGE;
    }
    if (ex->tl_state == SIM_SWEEP_TL_FAILED) { /* the failed points' exit code follows */
        if (ex->rank == 0)
            fprintf(stderr, "flashspec: --timeline-point %lld: that point failed (error "
                            "above); no timeline written\n",
                    (long long)ex->tl_point);
        return SIM_OK;
    }
    if (ex->tl_prompt >= ex->tl_prompts) {
        snprintf(err, errlen,
                 "--timeline-prompt %d: point %lld replayed %d prompt%s (indices 0..%d); no "
                 "timeline written",
                 (int)ex->tl_prompt, (long long)ex->tl_point, (int)ex->tl_prompts,
                 ex->tl_prompts == 1 ? "" : "s", (int)ex->tl_prompts - 1);
        return SIM_USAGE;
    }
    /* the rank that replayed the point holds the recording (collective: every
     * rank reaches this line, having run the same script) */
    int mine = sim_timeline_n_cycles(ex->tl) > 0;
    if (!sim_mpi_max_int(mine)) {
        snprintf(err, errlen, "%s: the replay reported no cycles for point %lld prompt %d",
                 path, (long long)ex->tl_point, (int)ex->tl_prompt);
        return SIM_INTERNAL;
    }
    if (!mine) return SIM_OK; /* another MPI rank writes it */
    int rc = sim_timeline_write(ex->tl, path, err, errlen);
    if (rc != SIM_OK) return rc;
    if (!quiet || sim_timeline_truncated(ex->tl))
        fprintf(stderr, "flashspec: wrote the timeline of point %lld prompt %d to %s (%lld "
                        "cycles, %lld spans%s)\n",
                (long long)ex->tl_point, (int)ex->tl_prompt, path,
                (long long)sim_timeline_n_cycles(ex->tl), (long long)sim_timeline_n_spans(ex->tl),
                sim_timeline_truncated(ex->tl) ? "; truncated: event limit reached" : "");
    return SIM_OK;
}

int sim_sweep_exec_stopped(const sim_sweep_exec *ex, int sig, const char *script,
                           double max_seconds, int calibrating, char *err, size_t errlen)
{
    const char *s = ex->computed == 1 ? "" : "s", *are = ex->computed == 1 ? "is" : "are";
    char why[PATH_MAX + 64], saved[PATH_MAX + 200];
    if (sig == SIGALRM)
        snprintf(why, sizeof why, "%s: time limit of %g s exceeded (--max-seconds)", script,
                 max_seconds);
    else
        snprintf(why, sizeof why, "interrupted");
    /* what a second run can take up: the points this one saved (a
     * calibration's evaluations are never saved, so a fit starts over) */
    if (ex->store_dir[0] && ex->computed > 0)
        snprintf(saved, sizeof saved, ": %lld point%s computed in this run %s saved in %s; run the "
                 "same command again to resume%s", (long long)ex->computed, s, are, ex->store_dir,
                 calibrating ? " (the calibration itself starts over)" : "");
    else if (calibrating)
        snprintf(saved, sizeof saved, " during flashspec.calibrate: a fit is not saved as it "
                 "goes, so nothing is kept; running the command again starts it over");
    else if (ex->store_dir[0])
        snprintf(saved, sizeof saved, ": no point had finished, nothing is saved");
    else
        snprintf(saved, sizeof saved, " (no output directory: nothing saved)");
    snprintf(err, errlen, "%s%s", why, saved);
    return sig == SIGALRM ? SIM_CONFIG : SIM_INTERRUPTED;
}

double sim_sweep_tree_cap(const eng_policy_desc *desc, const void *params)
{
    return eng_tree_param(desc, params) ? eng_tree_nodes(desc, params) : NAN;
}

int64_t sim_sweep_unbound_caps(const sim_sweep_staged *sp, int64_t n,
                               int (*capped)(const sim_sweep_staged *s), int64_t *ran,
                               int64_t *first)
{
    int64_t count = 0;
    *ran = 0;
    *first = -1;
    for (int64_t i = 0; i < n; i++) {
        if (sp[i].code) continue;
        double cap = sim_sweep_tree_cap(sp[i].pt.policy, sp[i].pt.policy_params);
        if (!capped(&sp[i]) || isnan(cap)) continue;
        (*ran)++;
        if ((double)sp[i].row.st.verify_rows_max < cap) {
            count++;
            if (*first < 0) *first = i;
        }
    }
    return count;
}
