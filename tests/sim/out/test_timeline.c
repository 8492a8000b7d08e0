/*
 * test_timeline.c -- the Chrome trace-event timeline writer (sim_timeline.h):
 * track layout (canonical resource order, provisional work on its own track,
 * overlapping spans split into lanes so no track has partial overlaps), the
 * cycles track with its nested phases, counters, exact microsecond printing,
 * JSON string escaping, byte-determinism, the event cap, and the atomic write
 * (replacing a file, failing on a missing directory without leaving a
 * temporary).  The overlap check re-parses the output line by line (the writer
 * puts one event per line) and compares every pair of "X" events of a track.
 *
 * Files live under a fresh mkdtemp directory removed at the end.
 */
#include "sim/out/sim_timeline.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"

typedef struct xev {
    int tid;
    long long ts_ns, dur_ns;
} xev;

/* "12.345" (three decimals) -> ns; -1 when malformed. */
static long long parse_us(const char *p)
{
    long long whole = 0, frac = 0;
    int nd = 0;
    if (*p < '0' || *p > '9') return -1;
    while (*p >= '0' && *p <= '9') whole = whole * 10 + (*p++ - '0');
    if (*p++ != '.') return -1;
    while (*p >= '0' && *p <= '9' && nd < 4) frac = frac * 10 + (*p++ - '0'), nd++;
    if (nd != 3) return -1;
    return whole * 1000 + frac;
}

/* Collects the "X" events of text; returns their count (<= cap). */
static int collect_x(const char *text, xev *out, int cap)
{
    int n = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "{\"ph\":\"X\"", 9) != 0) continue;
        const char *t = strstr(l, "\"tid\":"), *ts = strstr(l, "\"ts\":"), *d = strstr(l, "\"dur\":");
        CHECK(t && ts && d);
        if (!t || !ts || !d || n == cap) continue;
        out[n].tid = atoi(t + 6);
        out[n].ts_ns = parse_us(ts + 5);
        out[n].dur_ns = parse_us(d + 6);
        CHECK(out[n].ts_ns >= 0 && out[n].dur_ns >= 0);
        n++;
    }
    return n;
}

/* No two X events of one track overlap partially (nesting or disjoint). */
static int strictly_nested(const xev *e, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j || e[i].tid != e[j].tid) continue;
            long long a0 = e[i].ts_ns, a1 = a0 + e[i].dur_ns;
            long long b0 = e[j].ts_ns, b1 = b0 + e[j].dur_ns;
            int disjoint = a1 <= b0 || b1 <= a0;
            int nested = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
            if (!disjoint && !nested) return 0;
        }
    return 1;
}

static int count(const char *hay, const char *needle)
{
    int k = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) k++;
    return k;
}

/* A small recording: two cycles; the second overlaps draft work on the NPU
 * (provisional) and has two overlapping flash reads. */
static sim_timeline *sample(void)
{
    sim_timeline *tl = sim_timeline_create(0);
    CHECK(tl != NULL);
    CHECK(sim_timeline_set_meta(tl, "title", "point 0 \"quoted\"\\x") == SIM_OK);
    CHECK(sim_timeline_set_meta(tl, "policy", "lever") == SIM_OK);
    CHECK(sim_timeline_set_meta(tl, "policy", "chain") == SIM_OK); /* replaced */
    int64_t o = 5000000; /* the clock does not start at 0 */
    /* cycle 0: draft on the CPU, then read/compute of two layers */
    sim_timeline_span(tl, "cpu", "draft", 0, o + 0, o + 1500);
    sim_timeline_span(tl, "flash", "read", 0, o + 1500, o + 4000);
    sim_timeline_span(tl, "npu", "layer", 0, o + 4000, o + 5000);
    sim_timeline_span(tl, "flash", "read", 1, o + 4000, o + 6500);
    sim_timeline_span(tl, "npu", "layer", 1, o + 6500, o + 7500);
    sim_timeline_span(tl, "cpu", "head", -1, o + 7500, o + 8001);
    sim_timeline_cycle c = {.prompt = 0, .pos = 0, .ctx_len = 16, .emitted = 3, .accepted = 2,
                            .rows = 4, .leaves = 1, .draft_calls = 1,
                            .dram_used_bytes = 2.5e9, .t0_ns = o, .t1_ns = o + 8001,
                            .draft_ms = 0.0015, .verify_ms = 0.006501};
    sim_timeline_cycle_add(tl, &c);
    /* cycle 1: provisional drafting on the NPU while layers run; two reads in
     * flight at once (queue depth 2) */
    int64_t s = o + 8001;
    sim_timeline_span(tl, "npu", "layer", 0, s + 1000, s + 2000);
    sim_timeline_span(tl, "npu", "provisional", 0, s + 1200, s + 1800);
    sim_timeline_span(tl, "flash", "read", 0, s + 0, s + 1000);
    sim_timeline_span(tl, "flash", "read", 1, s + 500, s + 2500);
    sim_timeline_span(tl, "flash", "read", 2, s + 1000, s + 3000);
    sim_timeline_span(tl, "npu", "layer", 1, s + 2500, s + 3500);
    sim_timeline_span(tl, "npu", "layer", 2, s + 3000, s + 4000); /* overlaps layer 1 */
    sim_timeline_span(tl, "cpu", "kv", -1, s + 0, s - 5);        /* t1 < t0: zero length */
    c = (sim_timeline_cycle){.prompt = 0, .pos = 3, .ctx_len = 19, .emitted = 1,
                             .dram_used_bytes = 2.6e9, .t0_ns = s, .t1_ns = s + 4000,
                             .draft_ms = 0, .verify_ms = 0.004, .provisional_calls = 1};
    sim_timeline_cycle_add(tl, &c);
    return tl;
}

static void test_layout(void)
{
    sim_timeline *tl = sample();
    CHECK_EQ_INT(sim_timeline_n_spans(tl), 14);
    CHECK_EQ_INT(sim_timeline_n_cycles(tl), 2);
    CHECK(!sim_timeline_truncated(tl));
    char *text = NULL;
    size_t len = 0;
    CHECK(sim_timeline_format(tl, &text, &len) == SIM_OK);
    CHECK(text && strlen(text) == len);
    if (!text) return;
    /* object format with the metadata and escaping */
    CHECK(strncmp(text, "{\"displayTimeUnit\":\"ms\"", 23) == 0);
    CHECK(strstr(text, "\"traceEvents\":[") != NULL);
    CHECK(strstr(text, "point 0 \\\"quoted\\\"\\\\x") != NULL);
    CHECK(strstr(text, "\"policy\":\"chain\"") != NULL && !strstr(text, "lever"));
    CHECK(strstr(text, "\"clock_origin_ns\":\"5000000\"") != NULL);
    CHECK(strstr(text, "\"truncated\":\"no\"") != NULL);
    /* tracks: cycles, CPU, NPU, NPU (2), NPU provisional, flash, flash (2) */
    CHECK(strstr(text, "\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"cycles\"}"));
    CHECK(strstr(text, "\"tid\":2,\"name\":\"thread_name\",\"args\":{\"name\":\"CPU\"}"));
    CHECK(strstr(text, "\"tid\":3,\"name\":\"thread_name\",\"args\":{\"name\":\"NPU\"}"));
    CHECK(strstr(text, "\"tid\":4,\"name\":\"thread_name\",\"args\":{\"name\":\"NPU (2)\"}"));
    CHECK(strstr(text, "\"tid\":5,\"name\":\"thread_name\",\"args\":{\"name\":\"NPU "
                       "provisional\"}"));
    CHECK(strstr(text, "\"tid\":6,\"name\":\"thread_name\",\"args\":{\"name\":\"flash\"}"));
    CHECK(strstr(text, "\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":\"flash (2)\"}"));
    CHECK(!strstr(text, "\"tid\":8,"));
    CHECK_EQ_INT(count(text, "\"name\":\"thread_sort_index\""), 7);
    /* events: 14 spans + 2 cycles + 1 draft + 2 verify phases */
    CHECK_EQ_INT(count(text, "{\"ph\":\"X\""), 19);
    CHECK(strstr(text, "\"name\":\"provisional 0\",\"cat\":\"npu\"") != NULL);
    CHECK(strstr(text, "\"name\":\"head\",\"cat\":\"cpu\",\"ts\":7.500,\"dur\":0.501") != NULL);
    CHECK(strstr(text, "\"name\":\"cycle 0\",\"cat\":\"cycle\",\"ts\":0.000,\"dur\":8.001") !=
          NULL);
    CHECK(strstr(text, "\"name\":\"draft\",\"cat\":\"cycle\",\"ts\":0.000,\"dur\":1.500") != NULL);
    CHECK(strstr(text, "\"name\":\"verify\",\"cat\":\"cycle\",\"ts\":1.500,\"dur\":6.501") !=
          NULL);
    CHECK(strstr(text, "\"name\":\"kv\",\"cat\":\"cpu\",\"ts\":8.001,\"dur\":0.000") != NULL);
    /* counters: 2 cycle starts + the end, two series each */
    CHECK_EQ_INT(count(text, "{\"ph\":\"C\",\"pid\":1,\"name\":\"DRAM\""), 3);
    CHECK_EQ_INT(count(text, "{\"ph\":\"C\",\"pid\":1,\"name\":\"tokens\""), 3);
    CHECK(strstr(text, "\"used_MB\":2500.000000") != NULL);
    CHECK(strstr(text, "\"emitted\":4,\"accepted\":2") != NULL);
    /* no partial overlaps on any track */
    xev ev[64];
    int n = collect_x(text, ev, 64);
    CHECK_EQ_INT(n, 19);
    CHECK(strictly_nested(ev, n));
    /* the sample really overlapped: without lanes the NPU would not nest */
    xev bad[2] = {{3, 1000, 1000}, {3, 1500, 1000}};
    CHECK(!strictly_nested(bad, 2));
    CHECK(text[len - 1] == '\n');
    free(text);
    sim_timeline_destroy(tl);
}

static void test_deterministic(void)
{
    sim_timeline *a = sample(), *b = sample();
    char *ta = NULL, *tb = NULL, *tc = NULL;
    size_t la = 0, lb = 0, lc = 0;
    CHECK(sim_timeline_format(a, &ta, &la) == SIM_OK);
    CHECK(sim_timeline_format(b, &tb, &lb) == SIM_OK);
    CHECK(sim_timeline_format(a, &tc, &lc) == SIM_OK); /* formatting is pure */
    CHECK(la == lb && ta && tb && memcmp(ta, tb, la) == 0);
    CHECK(la == lc && tc && memcmp(ta, tc, la) == 0);
    free(ta);
    free(tb);
    free(tc);
    sim_timeline_destroy(a);
    sim_timeline_destroy(b);
    sim_timeline_destroy(NULL);
}

static void test_empty_and_cap(void)
{
    sim_timeline *tl = sim_timeline_create(5);
    char *t = NULL;
    size_t n = 0;
    CHECK(sim_timeline_format(tl, &t, &n) == SIM_OK);
    CHECK(t && strstr(t, "\"traceEvents\":[") && strstr(t, "flashspec timeline"));
    free(t);
    for (int i = 0; i < 9; i++) sim_timeline_span(tl, "npu", "layer", i, i * 10, i * 10 + 5);
    CHECK_EQ_INT(sim_timeline_n_spans(tl), 5);
    CHECK(sim_timeline_truncated(tl));
    CHECK(sim_timeline_format(tl, &t, &n) == SIM_OK);
    CHECK(t && strstr(t, "\"truncated\":\"yes\""));
    free(t);
    CHECK(sim_timeline_set_meta(tl, "", "x") == SIM_INTERNAL_ARG);
    CHECK(sim_timeline_format(NULL, &t, &n) == SIM_INTERNAL_ARG);
    sim_timeline_destroy(tl);
}

static int n_entries(const char *dir)
{
    int k = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) k++;
    if (d) closedir(d);
    return k;
}

static void test_write(const char *base)
{
    sim_timeline *tl = sample();
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/tl.json", base);
    FILE *f = fopen(path, "w"); /* an older file is replaced */
    CHECK(f != NULL);
    if (f) {
        fputs("old", f);
        fclose(f);
    }
    CHECK(sim_timeline_write(tl, path, err, sizeof err) == SIM_OK);
    char *want = NULL;
    size_t wn = 0;
    CHECK(sim_timeline_format(tl, &want, &wn) == SIM_OK);
    f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f && want) {
        char *got = malloc(wn + 1);
        size_t k = got ? fread(got, 1, wn + 1, f) : 0;
        CHECK(k == wn && memcmp(got, want, wn) == 0);
        free(got);
    }
    if (f) fclose(f);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0444) == 0444);
    CHECK_EQ_INT(n_entries(base), 1); /* no temporary left */
    free(want);

    /* a missing directory: E_CREATE, one line naming the path */
    snprintf(path, sizeof path, "%s/missing/tl.json", base);
    err[0] = 0;
    CHECK(sim_timeline_write(tl, path, err, sizeof err) == SIM_CANTCREATE);
    CHECK(strstr(err, path) != NULL && !strchr(err, '\n'));
    CHECK_EQ_INT(n_entries(base), 1);
    /* a directory in the way of the final name: the rename fails, nothing left */
    snprintf(path, sizeof path, "%s/adir", base);
    CHECK(mkdir(path, 0755) == 0);
    CHECK(sim_timeline_write(tl, path, err, sizeof err) == SIM_CANTCREATE);
    CHECK_EQ_INT(n_entries(base), 2);
    CHECK(rmdir(path) == 0);
    CHECK(sim_timeline_write(tl, NULL, err, sizeof err) == SIM_INTERNAL_ARG);
    snprintf(path, sizeof path, "%s/tl.json", base);
    unlink(path);
    sim_timeline_destroy(tl);
}

int main(void)
{
    char base[] = "/tmp/fs-timeline-XXXXXX";
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    test_layout();
    test_deterministic();
    test_empty_and_cap();
    test_write(base);
    rmdir(base);
    return check_done("test_timeline");
}
