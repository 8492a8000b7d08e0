/*
 * sim_timeline.c -- buffering and Chrome trace-event output of one replayed
 * prompt (contract and file layout in sim_timeline.h).
 *
 * Design: recording appends fixed-size records to two growable arrays (spans,
 * cycles); strings of spans (resource, label) are interned in a table of at
 * most MAX_NAMES entries so a record holds two small indices.  Everything
 * else happens in sim_timeline_format:
 *   1. groups: each span belongs to (resource, provisional?) -- provisional
 *      when its label starts with "provisional"; groups are ordered CPU, NPU,
 *      flash, then other resources by first appearance, the provisional group
 *      right after its resource's;
 *   2. lanes: within a group, spans sorted by (t0, t1, sequence) go to the
 *      first lane whose last span ended at or before their start, else to a new
 *      lane (interval partitioning: the minimum number of lanes, and no two
 *      spans of one lane overlap);
 *   3. output: metadata, the cycles track, each lane in time order, counters.
 * Invariants: times are integer ns on the simulated clock; printed times are
 * (t - origin) / 1000 with exactly three decimals, computed in integers; the
 * output depends only on the recorded sequence (qsort keys include the
 * recording sequence, so ties never depend on qsort's stability).
 */
#include "sim/out/sim_timeline.h"
#include "sim/out/sim_strbuf.h"
#include "sim/out/sim_tmp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_NAMES 64   /* distinct resource/label strings kept */
#define NAME_CAP 48    /* bytes kept of each (longer ones are cut) */

typedef struct span_rec {
    int64_t t0, t1, seq;
    int32_t index;
    uint8_t res, label; /* intern-table indices */
    int32_t group, lane;
} span_rec;

typedef struct meta_kv {
    char *key, *value;
} meta_kv;

struct sim_timeline {
    span_rec *spans;
    int64_t n_spans, cap_spans;
    sim_timeline_cycle *cycles;
    int64_t n_cycles, cap_cycles;
    int64_t max_events;
    int truncated, nomem;
    char names[MAX_NAMES][NAME_CAP];
    int32_t n_names;
    meta_kv *meta;
    int32_t n_meta;
};

/* ------------------------------------------------------------- recording */

sim_timeline *sim_timeline_create(int64_t max_events)
{
    sim_timeline *tl = calloc(1, sizeof *tl);
    if (!tl) return NULL;
    tl->max_events = max_events > 0 ? max_events : SIM_TIMELINE_MAX_EVENTS;
    return tl;
}

void sim_timeline_destroy(sim_timeline *tl)
{
    if (!tl) return;
    for (int32_t i = 0; i < tl->n_meta; i++) {
        free(tl->meta[i].key);
        free(tl->meta[i].value);
    }
    free(tl->meta);
    free(tl->spans);
    free(tl->cycles);
    free(tl);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int sim_timeline_set_meta(sim_timeline *tl, const char *key, const char *value)
{
    if (!tl || !key || !*key || !value) return SIM_INTERNAL_ARG;
    char *v = dup_str(value);
    if (!v) return SIM_NOMEM;
    for (int32_t i = 0; i < tl->n_meta; i++) {
        if (strcmp(tl->meta[i].key, key) == 0) {
            free(tl->meta[i].value);
            tl->meta[i].value = v;
            return SIM_OK;
        }
    }
    char *k = dup_str(key);
    meta_kv *m = realloc(tl->meta, sizeof *m * (size_t)(tl->n_meta + 1));
    if (!k || !m) {
        free(k);
        free(v);
        if (m) tl->meta = m;
        return SIM_NOMEM;
    }
    tl->meta = m;
    m[tl->n_meta].key = k;
    m[tl->n_meta].value = v;
    tl->n_meta++;
    return SIM_OK;
}

/* Index of s in the intern table; the last slot collects the overflow. */
static uint8_t intern(sim_timeline *tl, const char *s)
{
    if (!s || !*s) s = "?";
    for (int32_t i = 0; i < tl->n_names; i++)
        if (strncmp(tl->names[i], s, NAME_CAP - 1) == 0) return (uint8_t)i;
    if (tl->n_names == MAX_NAMES - 1) {
        snprintf(tl->names[MAX_NAMES - 1], NAME_CAP, "%s", "other");
        return MAX_NAMES - 1;
    }
    snprintf(tl->names[tl->n_names], NAME_CAP, "%s", s);
    return (uint8_t)tl->n_names++;
}

static int room(sim_timeline *tl)
{
    if (tl->n_spans + tl->n_cycles < tl->max_events) return 1;
    tl->truncated = 1;
    return 0;
}

static int grow(void **arr, int64_t *cap, size_t elem)
{
    int64_t c = *cap ? 2 * *cap : 1024;
    void *n = realloc(*arr, elem * (size_t)c);
    if (!n) return -1;
    *arr = n;
    *cap = c;
    return 0;
}

void sim_timeline_span(void *ctx, const char *resource, const char *label, int32_t index,
                       int64_t t0_ns, int64_t t1_ns)
{
    sim_timeline *tl = ctx;
    if (!tl || tl->nomem || !room(tl)) return;
    if (tl->n_spans == tl->cap_spans &&
        grow((void **)&tl->spans, &tl->cap_spans, sizeof *tl->spans) != 0) {
        tl->nomem = 1;
        return;
    }
    span_rec *s = &tl->spans[tl->n_spans];
    s->t0 = t0_ns;
    s->t1 = t1_ns < t0_ns ? t0_ns : t1_ns;
    s->seq = tl->n_spans++;
    s->index = index;
    s->res = intern(tl, resource);
    s->label = intern(tl, label);
    s->group = s->lane = 0;
}

void sim_timeline_cycle_add(sim_timeline *tl, const sim_timeline_cycle *c)
{
    if (!tl || !c || tl->nomem || !room(tl)) return;
    if (tl->n_cycles == tl->cap_cycles &&
        grow((void **)&tl->cycles, &tl->cap_cycles, sizeof *tl->cycles) != 0) {
        tl->nomem = 1;
        return;
    }
    tl->cycles[tl->n_cycles++] = *c;
}

int64_t sim_timeline_n_spans(const sim_timeline *tl)
{
    return tl ? tl->n_spans : 0;
}

int64_t sim_timeline_n_cycles(const sim_timeline *tl)
{
    return tl ? tl->n_cycles : 0;
}

int sim_timeline_truncated(const sim_timeline *tl)
{
    return tl ? tl->truncated : 0;
}

/* ------------------------------------------------------------ text buffer */

typedef sim_strbuf buf;
#define put sim_strbuf_printf

/* A JSON string literal of s. */
static void put_str(buf *b, const char *s)
{
    sim_strbuf_json(b, s, strlen(s));
}

/* Microseconds with ns resolution, from integer ns >= 0. */
static void put_us(buf *b, int64_t ns)
{
    if (ns < 0) ns = 0;
    put(b, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* ------------------------------------------------------------------ layout */

typedef struct group {
    uint8_t res;
    int provisional;
    int32_t lanes;
    int32_t tid0; /* tid of lane 0 */
} group;

static int is_provisional(const char *label)
{
    return strncmp(label, "provisional", 11) == 0;
}

/* Canonical order of resources: cpu, npu, flash, then first appearance. */
static int res_rank(const char *name)
{
    if (strcmp(name, "cpu") == 0) return 0;
    if (strcmp(name, "npu") == 0) return 1;
    if (strcmp(name, "flash") == 0) return 2;
    return 3;
}

static int cmp_span_group_time(const void *a, const void *b)
{
    const span_rec *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    if (x->t1 != y->t1) return x->t1 < y->t1 ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_span_lane_time(const void *a, const void *b)
{
    const span_rec *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->lane != y->lane) return x->lane < y->lane ? -1 : 1;
    return cmp_span_group_time(a, b);
}

static const char *res_title(const char *name)
{
    if (strcmp(name, "cpu") == 0) return "CPU";
    if (strcmp(name, "npu") == 0) return "NPU";
    return name;
}

static void put_thread_meta(buf *b, int32_t tid, const char *name, const char *suffix,
                            int32_t lane, int *first)
{
    char title[160];
    if (lane > 0)
        snprintf(title, sizeof title, "%s%s (%d)", name, suffix, (int)lane + 1);
    else
        snprintf(title, sizeof title, "%s%s", name, suffix);
    put(b, "%s\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":",
        *first ? "" : ",", (int)tid);
    put_str(b, title);
    put(b, "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\","
           "\"args\":{\"sort_index\":%d}}",
        (int)tid, (int)tid);
    *first = 0;
}

static void put_x(buf *b, int32_t tid, const char *name, const char *cat, int64_t t0, int64_t t1,
                  int64_t origin)
{
    put(b, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":", (int)tid);
    put_str(b, name);
    put(b, ",\"cat\":");
    put_str(b, cat);
    put(b, ",\"ts\":");
    put_us(b, t0 - origin);
    put(b, ",\"dur\":");
    put_us(b, t1 - t0);
}

static int64_t ms_to_ns(double ms)
{
    if (!(ms > 0)) return 0; /* also NaN */
    if (ms > 9e12) ms = 9e12;
    return (int64_t)(ms * 1e6 + 0.5);
}

static void put_counters(buf *b, const sim_timeline_cycle *c, int64_t t, int64_t origin,
                         int64_t emitted_total, int64_t accepted_total)
{
    put(b, ",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"DRAM\",\"ts\":");
    put_us(b, t - origin);
    put(b, ",\"args\":{\"used_MB\":%.6f}}", c->dram_used_bytes / 1e6);
    put(b, ",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"tokens\",\"ts\":");
    put_us(b, t - origin);
    put(b, ",\"args\":{\"emitted\":%lld,\"accepted\":%lld}}", (long long)emitted_total,
        (long long)accepted_total);
}

/* Phase 1: the groups (resource, provisional or not) in canonical order --
 * by resource rank, then first appearance -- and each span's group. */
static int32_t assign_groups(const sim_timeline *tl, span_rec *sp, int64_t ns, group *groups)
{
    int32_t ng = 0;
    for (int rank = 0; rank <= 3; rank++) {
        /* resources of this rank by first appearance (intern order) */
        for (int32_t r = 0; r < tl->n_names; r++) {
            if (res_rank(tl->names[r]) != rank) continue;
            for (int prov = 0; prov <= 1; prov++) {
                int used = 0;
                for (int64_t i = 0; i < ns && !used; i++)
                    used = sp[i].res == r && is_provisional(tl->names[sp[i].label]) == prov;
                if (!used) continue;
                groups[ng] = (group){.res = (uint8_t)r, .provisional = prov};
                for (int64_t i = 0; i < ns; i++)
                    if (sp[i].res == r && is_provisional(tl->names[sp[i].label]) == prov)
                        sp[i].group = ng;
                ng++;
            }
        }
    }
    return ng;
}

/* Phase 2: lanes by interval partitioning, group by group; then the spans in
 * lane order and each group's first thread id (1 is the cycles track).
 * Returns 0 or SIM_NOMEM. */
static int assign_lanes(span_rec *sp, int64_t ns, group *groups, int32_t ng)
{
    if (ns > 0) qsort(sp, (size_t)ns, sizeof *sp, cmp_span_group_time);
    int64_t *lane_end = NULL;
    int32_t lane_cap = 0;
    for (int64_t i = 0; i < ns; i++) {
        group *g = &groups[sp[i].group];
        if (i == 0 || sp[i].group != sp[i - 1].group) g->lanes = 0; /* a new group */
        int32_t l = 0;
        while (l < g->lanes && lane_end[l] > sp[i].t0) l++;
        if (l == g->lanes) {
            if (g->lanes == lane_cap) {
                int32_t c = lane_cap ? 2 * lane_cap : 8;
                int64_t *n = realloc(lane_end, sizeof *n * (size_t)c);
                if (!n) {
                    free(lane_end);
                    return SIM_NOMEM;
                }
                lane_end = n;
                lane_cap = c;
            }
            g->lanes++;
        }
        lane_end[l] = sp[i].t1;
        sp[i].lane = l;
    }
    free(lane_end);
    if (ns > 0) qsort(sp, (size_t)ns, sizeof *sp, cmp_span_lane_time);
    int32_t tid = 2;
    for (int32_t g = 0; g < ng; g++) {
        groups[g].tid0 = tid;
        tid += groups[g].lanes;
    }
    return 0;
}

/* The earliest time of any span or cycle: the trace's clock origin. */
static int64_t clock_origin(const sim_timeline *tl, const span_rec *sp, int64_t ns)
{
    int64_t origin = 0;
    int have = 0;
    for (int64_t i = 0; i < ns; i++)
        if (!have || sp[i].t0 < origin) origin = sp[i].t0, have = 1;
    for (int64_t i = 0; i < tl->n_cycles; i++)
        if (!have || tl->cycles[i].t0_ns < origin) origin = tl->cycles[i].t0_ns, have = 1;
    return origin;
}

/* The header: metadata, process and thread names. */
static void put_header(buf *b, const sim_timeline *tl, const group *groups, int32_t ng,
                       int64_t origin, int64_t ns)
{
    const char *title = "flashspec timeline";
    for (int32_t i = 0; i < tl->n_meta; i++)
        if (strcmp(tl->meta[i].key, "title") == 0) title = tl->meta[i].value;
    put(b, "{\"displayTimeUnit\":\"ms\",\n\"otherData\":{");
    for (int32_t i = 0; i < tl->n_meta; i++) {
        put_str(b, tl->meta[i].key);
        put(b, ":");
        put_str(b, tl->meta[i].value);
        put(b, ",");
    }
    put(b, "\"clock_origin_ns\":\"%lld\",\"events\":\"%lld\",\"truncated\":\"%s\"},\n",
        (long long)origin, (long long)(ns + tl->n_cycles), tl->truncated ? "yes" : "no");
    put(b, "\"traceEvents\":[");
    put(b, "\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":");
    put_str(b, title);
    put(b, "}}");
    int first = 0;
    put_thread_meta(b, 1, "cycles", "", 0, &first);
    for (int32_t g = 0; g < ng; g++)
        for (int32_t l = 0; l < groups[g].lanes; l++)
            put_thread_meta(b, groups[g].tid0 + l, res_title(tl->names[groups[g].res]),
                            groups[g].provisional ? " provisional" : "", l, &first);
}

/* The cycles track: each cycle, with its draft and verify phases inside. */
static void put_cycles(buf *b, const sim_timeline *tl, int64_t origin)
{
    for (int64_t i = 0; i < tl->n_cycles; i++) {
        const sim_timeline_cycle *c = &tl->cycles[i];
        int64_t t0 = c->t0_ns, t1 = c->t1_ns < c->t0_ns ? c->t0_ns : c->t1_ns;
        char name[64];
        snprintf(name, sizeof name, "cycle %lld", (long long)i);
        put_x(b, 1, name, "cycle", t0, t1, origin);
        put(b,
            ",\"args\":{\"prompt\":%d,\"pos\":%d,\"ctx_len\":%d,\"emitted\":%d,"
            "\"accepted\":%d,\"rows\":%d,\"leaves\":%d,\"draft_calls\":%d,"
            "\"provisional_calls\":%d,\"provisional_done\":%d,\"draft_ms\":%.6f,"
            "\"verify_ms\":%.6f,\"flash_ms\":%.6f,\"npu_ms\":%.6f,\"cpu_ms\":%.6f,"
            "\"kv_ms\":%.6f,\"idle_ms\":%.6f}}",
            (int)c->prompt, (int)c->pos, (int)c->ctx_len, (int)c->emitted, (int)c->accepted,
            (int)c->rows, (int)c->leaves, (int)c->draft_calls, (int)c->provisional_calls,
            (int)c->provisional_done, c->draft_ms, c->verify_ms, c->flash_ms, c->npu_ms, c->cpu_ms,
            c->kv_ms, c->idle_ms);
        int64_t d = ms_to_ns(c->draft_ms), v = ms_to_ns(c->verify_ms);
        int64_t d_end = t0 + d < t1 ? t0 + d : t1;
        int64_t v_start = t1 - v > d_end ? t1 - v : d_end;
        if (d > 0) {
            put_x(b, 1, "draft", "cycle", t0, d_end, origin);
            put(b, "}");
        }
        if (v > 0) {
            put_x(b, 1, "verify", "cycle", v_start, t1, origin);
            put(b, "}");
        }
    }
}

/* The resource lanes' spans, then the counters: at each cycle start, and the
 * state after the last cycle. */
static void put_spans_and_counters(buf *b, const sim_timeline *tl, const span_rec *sp, int64_t ns,
                                   const group *groups, int64_t origin)
{
    for (int64_t i = 0; i < ns; i++) {
        const span_rec *s = &sp[i];
        char name[NAME_CAP + 16];
        if (s->index >= 0)
            snprintf(name, sizeof name, "%s %d", tl->names[s->label], (int)s->index);
        else
            snprintf(name, sizeof name, "%s", tl->names[s->label]);
        put_x(b, groups[s->group].tid0 + s->lane, name, tl->names[s->res], s->t0, s->t1, origin);
        put(b, ",\"args\":{\"index\":%d}}", (int)s->index);
    }
    int64_t emitted = 0, accepted = 0;
    for (int64_t i = 0; i < tl->n_cycles; i++) {
        const sim_timeline_cycle *c = &tl->cycles[i];
        put_counters(b, c, c->t0_ns, origin, emitted, accepted);
        emitted += c->emitted;
        accepted += c->accepted;
        if (i == tl->n_cycles - 1)
            put_counters(b, c, c->t1_ns < c->t0_ns ? c->t0_ns : c->t1_ns, origin, emitted,
                         accepted);
    }
}

int sim_timeline_format(const sim_timeline *tl, char **out, size_t *len)
{
    if (!tl || !out) return SIM_INTERNAL_ARG;
    *out = NULL;
    if (len) *len = 0;
    if (tl->nomem) return SIM_NOMEM;
    int64_t ns = tl->n_spans;
    span_rec *sp = NULL;
    if (ns > 0) {
        sp = malloc(sizeof *sp * (size_t)ns);
        if (!sp) return SIM_NOMEM;
        memcpy(sp, tl->spans, sizeof *sp * (size_t)ns);
    }
    group groups[2 * MAX_NAMES];
    int32_t ng = assign_groups(tl, sp, ns, groups);
    if (assign_lanes(sp, ns, groups, ng) != 0) {
        free(sp);
        return SIM_NOMEM;
    }
    int64_t origin = clock_origin(tl, sp, ns);
    buf b = {0};
    put_header(&b, tl, groups, ng, origin, ns);
    put_cycles(&b, tl, origin);
    put_spans_and_counters(&b, tl, sp, ns, groups, origin);
    put(&b, "\n]}\n");
    free(sp);
    if (b.oom) {
        free(b.p);
        return SIM_NOMEM;
    }
    *out = b.p;
    if (len) *len = b.n;
    return SIM_OK;
}

/* ----------------------------------------------------------------- writing */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int sim_timeline_write(const sim_timeline *tl, const char *path, char *err, size_t errlen)
{
    if (!tl || !path || !*path) {
        set_err(err, errlen, "timeline: no output path");
        return SIM_INTERNAL_ARG;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = sim_timeline_format(tl, &text, &len);
    if (rc != SIM_OK) {
        set_err(err, errlen, "%s: out of memory formatting the timeline", path);
        return rc;
    }
    /* temporary next to the target: DIR/.NAME.fstmp-PID-HOST-XXXXXX */
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    const char *base = slash ? slash + 1 : path;
    size_t tlen = dlen + strlen(base) + 64;
    char *tmp = malloc(tlen);
    char *tdir = malloc(dlen + 2); /* "" (cwd), "/" (root) or the directory */
    if (tmp && tdir) {
        snprintf(tdir, dlen + 2, "%.*s", (int)dlen, dlen ? path : slash ? "/" : "");
        if (sim_tmp_name(tmp, tlen, tdir, base, "XXXXXX") != 0) tmp[0] = 0;
    }
    free(tdir);
    if (!tmp || !tmp[0]) {
        free(tmp);
        free(text);
        set_err(err, errlen, "%s: out of memory", path);
        return SIM_NOMEM;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        set_err(err, errlen, "cannot write output '%s': %s", path, strerror(errno));
        free(tmp);
        free(text);
        return SIM_CANTCREATE;
    }
    int e = 0;
    if (write_all(fd, text, len) != 0 || fsync(fd) != 0) e = errno ? errno : EIO;
    if (close(fd) != 0 && !e) e = errno;
    if (!e && chmod(tmp, 0644) != 0) e = errno; /* mkstemp made it 0600 */
    if (!e && rename(tmp, path) != 0) e = errno;
    free(text);
    if (e) {
        unlink(tmp);
        free(tmp);
        set_err(err, errlen, "cannot write output '%s': %s", path, strerror(e));
        return SIM_CANTCREATE;
    }
    free(tmp);
    return SIM_OK;
}
