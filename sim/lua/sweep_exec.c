/*
 * sweep_exec.c -- expansion of sweep tables and execution of staged points
 * (see sweep_exec.h for the pipeline and the error policy).
 *
 * Invariants:
 *   - expansion is a pure function of the sweep table: every MPI rank, running
 *     the same script, expands the same points in the same order;
 *   - the point tables stay referenced (on the Lua stack of the caller) while
 *     their points execute, since each sim_point borrows from their userdata;
 *   - nothing here writes results files: the script's end does, once.
 */
#include "sim/lua/sweep_exec.h"

#include <lauxlib.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/lua/api.h"
#include "sim/lua/api_impl.h"
#include "sim/config/lparams.h"
#include "sim/out/sim_timeline.h"
#include "sim/sweep/sim_sweep.h"

#define MAX_POINTS ((lua_Integer)1 << 40)

/* ------------------------------------------------------------- expand */

static int is_plain_table(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    if (lua_getmetatable(L, idx)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

/* src.policy = a list holding lists of policies (what a constructor with
 * alternatives returns: { fs.policy.chain{ k = {4, 8} }, fs.policy.lever{} })
 * becomes one flat list. */
static void flatten_policies(lua_State *L, int src, const char *chunk, int line)
{
    lua_getfield(L, src, "policy");
    int p = lua_gettop(L);
    lua_Integer n = is_plain_table(L, p) ? slp_list_len(L, p, "flashspec.sweep", "policy", chunk,
                                                         line)
                                         : 0,
                nested = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, p, i);
        nested += is_plain_table(L, -1);
        lua_pop(L, 1);
    }
    if (nested) {
        lua_newtable(L);
        lua_Integer at = 0;
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, p, i);
            lua_Integer m = is_plain_table(L, -1) ? slp_list_len(L, -1, "flashspec.sweep",
                                                                 "policy", chunk, line)
                                                  : 0;
            if (!is_plain_table(L, -1)) {
                lua_rawseti(L, -2, ++at);
                continue;
            }
            for (lua_Integer j = 1; j <= m; j++) {
                lua_rawgeti(L, -1, j);
                lua_rawseti(L, -3, ++at);
            }
            lua_pop(L, 1);
        }
        lua_setfield(L, src, "policy");
    }
    lua_settop(L, p - 1);
}

/* Appends to the array `out` the Cartesian product of the point table at
 * `src` (list-valued keys vary, canonical order, last fastest). */
static void expand_product(lua_State *L, int src, int out, lua_Integer *count,
                           const char *const *keys, int nk, const char *chunk, int line)
{
    lua_Integer len[64], at[64], total = 1;
    flatten_policies(L, src, chunk, line);
    for (int i = 0; i < nk; i++) {
        lua_getfield(L, src, keys[i]);
        len[i] = is_plain_table(L, -1)
                     ? slp_list_len(L, -1, "flashspec.sweep", keys[i], chunk, line)
                     : 0;
        if (len[i] > 0 && strcmp(keys[i], "tags") == 0) {
            /* a map of tags is one value; a list of such maps, alternatives */
            lua_rawgeti(L, -1, 1);
            if (lua_type(L, -1) != LUA_TTABLE) len[i] = 0;
            lua_pop(L, 1);
        }
        if (is_plain_table(L, -1) && len[i] == 0 && strcmp(keys[i], "tags") != 0)
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.sweep: key '%s' is an empty list",
                          chunk, slp_key_line(chunk, line, keys[i]), keys[i]);
        lua_pop(L, 1);
        at[i] = 0;
        if (len[i] > 0) {
            if (total > MAX_POINTS / len[i])
                fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.sweep: too many points",
                              chunk, line);
            total *= len[i];
        }
    }
    if (*count > MAX_POINTS - total)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.sweep: too many points", chunk, line);
    for (lua_Integer p = 0; p < total; p++) {
        lua_createtable(L, 0, nk);
        int pt = lua_gettop(L);
        for (int i = 0; i < nk; i++) {
            lua_getfield(L, src, keys[i]);
            if (len[i] > 0) {
                lua_rawgeti(L, -1, at[i] + 1);
                lua_remove(L, -2);
            }
            lua_setfield(L, pt, keys[i]);
        }
        lua_rawseti(L, out, ++*count);
        for (int i = nk - 1; i >= 0; i--) {
            if (len[i] == 0) continue;
            if (++at[i] < len[i]) break;
            at[i] = 0;
        }
    }
}

/* Copies the string-keyed fields of table `from` into table `to`, except
 * `points`. */
static void copy_fields(lua_State *L, int from, int to)
{
    lua_pushnil(L);
    while (lua_next(L, from)) {
        if (lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "points") == 0) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, to);
    }
}

void fs_sweep_expand(lua_State *L, int idx, const char *const *keys, int nk,
                     fs_sweep_check_fn check, const char *chunk, int line)
{
    idx = lua_absindex(L, idx);
    if (nk > 64) fs_raise(L, SIM_INTERNAL, 0, "too many point keys");
    lua_newtable(L);
    int shared = lua_gettop(L);
    copy_fields(L, idx, shared);
    check(L, shared, "flashspec.sweep", chunk, line);
    lua_newtable(L);
    int out = lua_gettop(L);
    lua_Integer count = 0;
    lua_getfield(L, idx, "points");
    int pts = lua_gettop(L);
    if (lua_isnil(L, pts)) {
        expand_product(L, shared, out, &count, keys, nk, chunk, line);
    } else {
        int pl = slp_key_line(chunk, line, "points");
        lua_Integer n =
            is_plain_table(L, pts) ? slp_list_len(L, pts, "flashspec.sweep", "points", chunk, line)
                                   : 0;
        if (n == 0)
            fs_raise(L, SIM_CONFIG, 0,
                          "%s:%d: flashspec.sweep: key 'points' must be a non-empty list of "
                          "point tables",
                          chunk, pl);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, pts, i);
            int e = lua_gettop(L);
            char what[64];
            snprintf(what, sizeof what, "flashspec.sweep points[%lld]", (long long)i);
            if (!is_plain_table(L, e))
                fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s must be a table of point keys", chunk,
                              pl, what);
            lua_getfield(L, e, "points");
            if (!lua_isnil(L, -1))
                fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: 'points' cannot be nested", chunk,
                              pl, what);
            lua_pop(L, 1);
            check(L, e, what, chunk, line);
            lua_newtable(L);
            int merged = lua_gettop(L);
            copy_fields(L, shared, merged);
            copy_fields(L, e, merged);
            expand_product(L, merged, out, &count, keys, nk, chunk, line);
            lua_settop(L, e - 1);
        }
    }
    lua_settop(L, out);
    lua_remove(L, shared);
}

/* -------------------------------------------------------------- stage */

typedef struct stage_ctx {
    fs_stage_fn stage;
    fs_staged *s;
    const char *chunk;
    int line;
} stage_ctx;

/* lua_pcall body: (point table, stage_ctx) -> stages the point. */
static int stage_protected(lua_State *L)
{
    stage_ctx *c = lua_touserdata(L, 2);
    c->stage(L, 1, "flashspec.sweep", c->chunk, c->line, c->s);
    return 0;
}

fs_staged *fs_sweep_stage_all(lua_State *L, int pts, fs_stage_fn stage, const char *chunk,
                              int line, int64_t *n)
{
    pts = lua_absindex(L, pts);
    lua_Integer len = (lua_Integer)lua_rawlen(L, pts);
    if ((lua_Unsigned)len > SIZE_MAX / sizeof(fs_staged))
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: flashspec.sweep: too many points", chunk, line);
    fs_staged *sp = lua_newuserdatauv(L, sizeof *sp * (size_t)(len ? len : 1), 0);
    int top = lua_gettop(L);
    stage_ctx ctx = {.stage = stage, .chunk = chunk, .line = line};
    for (lua_Integer i = 0; i < len; i++) {
        ctx.s = &sp[i];
        lua_pushcfunction(L, stage_protected);
        lua_rawgeti(L, pts, i + 1);
        lua_pushlightuserdata(L, &ctx);
        if (lua_pcall(L, 2, 0, 0) == LUA_OK) continue;
        const char *m;
        int code = fs_error_status(L, -1, SIM_CONFIG, &m);
        memset(&sp[i], 0, sizeof sp[i]);
        sp[i].code = code;
        snprintf(sp[i].err, sizeof sp[i].err, "%s", m ? m : "invalid point");
        char *nl = strchr(sp[i].err, '\n');
        if (nl) *nl = 0;
        lua_settop(L, top);
    }
    *n = (int64_t)len;
    return sp;
}

void fs_sweep_push_failed(lua_State *L, const fs_staged *s, int64_t i)
{
    lua_createtable(L, 0, 3);
    lua_pushstring(L, s->err);
    lua_setfield(L, -2, "error");
    lua_pushinteger(L, sim_status_exit(s->code)); /* scripts see the exit code */
    lua_setfield(L, -2, "code");
    lua_pushinteger(L, (lua_Integer)i + 1);
    lua_setfield(L, -2, "point");
}

/* ------------------------------------------------------------ execute */

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
static void timeline_describe(fs_exec *ex, const fs_staged *s)
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
    fs_fmt_exact(v, sizeof v, s->row.dram_fraction); /* as run.json: reads back exactly */
    sim_timeline_set_meta(ex->tl, "dram_fraction", v);
    sim_timeline_set_meta(ex->tl, "flashspec_version", FS_VERSION);
    sim_timeline_set_meta(ex->tl, "time_unit", "simulated microseconds");
}

/* ---------------------------------------------------------------- memo */

static uint32_t memo_hash(sim_id id, int32_t n_slot)
{
    return (uint32_t)((id.lo ^ (id.hi >> 7)) & (uint64_t)(n_slot - 1));
}

static int memo_index(fs_memo *m, int32_t n_slot)
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

fs_memo_entry *fs_memo_find(fs_memo *m, sim_id id)
{
    if (!m->n_slot) return NULL;
    for (uint32_t h = memo_hash(id, m->n_slot);; h = (h + 1) & (uint32_t)(m->n_slot - 1)) {
        int32_t i = m->slot[h];
        if (i < 0) return NULL;
        if (m->e[i].id.hi == id.hi && m->e[i].id.lo == id.lo) return &m->e[i];
    }
}

int fs_memo_put(fs_memo *m, sim_id id, const sim_point_stats *st)
{
    fs_memo_entry *old = fs_memo_find(m, id);
    if (old) {
        old->used_at = m->now;
        return 0;
    }
    if (m->n == FS_MEMO_MAX) return 0;
    if (m->n == m->cap) {
        int32_t cap = m->cap ? 2 * m->cap : 64;
        if (cap > FS_MEMO_MAX) cap = FS_MEMO_MAX;
        fs_memo_entry *e = realloc(m->e, sizeof *e * (size_t)cap);
        if (!e) return -1;
        m->e = e;
        m->cap = cap;
    }
    m->e[m->n] = (fs_memo_entry){.id = id, .used_at = m->now, .pending = !st};
    if (st) m->e[m->n].st = *st;
    m->n++;
    if (2 * m->n > m->n_slot) return memo_index(m, m->n_slot ? 2 * m->n_slot : 128);
    uint32_t h = memo_hash(id, m->n_slot);
    while (m->slot[h] >= 0)
        h = (h + 1) & (uint32_t)(m->n_slot - 1);
    m->slot[h] = m->n - 1;
    return 0;
}

void fs_memo_fill(fs_memo *m, sim_id id, const sim_point_stats *st)
{
    fs_memo_entry *e = fs_memo_find(m, id);
    if (!e || !e->pending) return;
    e->st = *st;
    e->pending = 0;
}

void fs_memo_prune(fs_memo *m)
{
    int32_t k = 0;
    for (int32_t i = 0; i < m->n; i++)
        if (m->e[i].used_at > m->now - FS_MEMO_KEEP) m->e[k++] = m->e[i];
    if (k == m->n) return;
    m->n = k;
    if (memo_index(m, m->n_slot) != 0) { /* cannot index: forget everything */
        m->n = 0;
        for (int32_t i = 0; i < m->n_slot; i++)
            m->slot[i] = -1;
    }
}

void fs_memo_free(fs_memo *m)
{
    free(m->e);
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------- execute */

/* How serious a failed point's status is: a fault of flashspec or a policy
 * over damaged data over a configuration error. */
static int failure_rank(int status)
{
    switch (sim_status_primary(status)) {
    case SIM_NOMEM:
    case SIM_INTERNAL:
    case SIM_MISMATCH: return 3;
    case SIM_DATA: return 2;
    default: return 1;
    }
}

static void note_point_code(fs_exec *ex, int code)
{
    /* the most serious kind of failure names the run */
    if (ex->point_code == 0 || failure_rank(code) > failure_rank(ex->point_code))
        ex->point_code = code;
}

/* The jobs of the points of sp[0..n) that run (not failed, not reused),
 * the timeline point's with the timeline hooks; *tl_k its job (-1: none).
 * Returns how many. */
static int64_t exec_jobs(fs_exec *ex, const fs_staged *sp, int64_t n, sim_sweep_job *jobs,
                         int64_t tl_i, int64_t *tl_k)
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
static void exec_collect(fs_staged *sp, int64_t n, const sim_sweep_job *jobs, int single,
                         const char *chunk, int line)
{
    for (int64_t i = 0, k = 0; i < n; i++) {
        fs_staged *s = &sp[i];
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
static int exec_timeline(fs_exec *ex, const fs_staged *s, const sim_sweep_job *job, char *err,
                         size_t errlen)
{
    if (s->code) {
        ex->tl_state = FS_TL_FAILED;
        ex->tl_code = s->code;
        return 0;
    }
    if (s->state != SIM_SWEEP_COMPUTED && s->state != SIM_SWEEP_RESUMED) return 0;
    ex->tl_state = FS_TL_RAN;
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
static void exec_report(fs_exec *ex, const fs_staged *sp, int64_t n, const sim_sweep_summary *sum)
{
    int64_t failed = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!sp[i].code) continue;
        failed++;
        note_point_code(ex, sp[i].code);
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

void fs_exec_run(lua_State *L, fs_exec *ex, fs_staged *sp, int64_t n, int single, const char *chunk,
                 int line)
{
    int64_t nj = 0;
    for (int64_t i = 0; i < n; i++)
        nj += sp[i].code == 0 && !sp[i].memo;
    sim_sweep_job *jobs = calloc((size_t)(nj ? nj : 1), sizeof *jobs);
    if (!jobs) fs_raise(L, SIM_NOMEM, 0, "out of memory for %lld points", (long long)n);
    /* the timeline point, if it is one of these: only it gets the hooks */
    int64_t tl_i = -1, tl_k = -1;
    if (ex->tl && ex->tl_point >= ex->points_seen && ex->tl_point - ex->points_seen < n)
        tl_i = ex->tl_point - ex->points_seen;
    ex->points_seen += n;
    exec_jobs(ex, sp, n, jobs, tl_i, &tl_k);
    sim_sweep_params p;
    sim_sweep_default_params(&p);
    p.workers = ex->workers;
    p.store_dir = ex->store_dir[0] ? ex->store_dir : NULL;
    p.resume = ex->resume;
    p.progress = !ex->quiet && !single;
    p.what = "sweep";
    p.version = ex->build_key;
    p.lock = ex->lock;
    sim_sweep_summary sum;
    char err[512] = "";
    int rc = sim_sweep_run(&p, jobs, nj, &sum, err, sizeof err);
    exec_collect(sp, n, jobs, single, chunk, line);
    char rerr[SIM_SWEEP_ERR_CAP];
    if (tl_i >= 0 &&
        exec_timeline(ex, &sp[tl_i], tl_k >= 0 ? &jobs[tl_k] : NULL, rerr, sizeof rerr) != 0) {
        free(jobs);
        fs_raise(L, SIM_INTERNAL, 0, "%s:%d: timeline replay: %s", chunk, line, rerr);
    }
    free(jobs);
    ex->computed += sum.computed;
    ex->resumed += sum.resumed;
    if (rc == SIM_INTERRUPTED)
        fs_raise(L, rc, 0, "%s:%d: interrupted", chunk, line);
    if (rc == SIM_CONFIG_RANKS)
        fs_raise(L, rc, 0, "%s:%d: %s", chunk, line, err);
    if (rc != SIM_OK) fs_raise(L, rc, 0, "%s", err);
    if (!single) exec_report(ex, sp, n, &sum);
}
