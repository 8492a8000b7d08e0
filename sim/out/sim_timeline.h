/*
 * sim_timeline.h -- Chrome trace-event timeline of one replayed prompt.
 *
 * `flashspec run|sweep --timeline FILE.json` records the services the phone
 * model runs while one prompt of one point replays (sim_point.span_fn, the
 * sim_hw_span_fn hook) and that prompt's cycles (sim_point.cycle_fn), buffers
 * them here, and writes them once, atomically, as trace-event JSON that
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Workload: one prompt, i.e. up to max_new_tokens cycles of ~2 events per
 * target layer: 1e4 .. 1e6 events.  Recording is an amortised O(1) append;
 * the layout work (sorting, lanes) happens once, in sim_timeline_format.
 *
 * The file (JSON object format):
 *   {"displayTimeUnit": "ms",
 *    "otherData": {KEY: VALUE, ..., "clock_origin_ns": N, "events": N,
 *                  "truncated": "yes"|"no"},
 *    "traceEvents": [ metadata..., events... ]}
 *   - one process (pid 1) named by the "title" meta value (default
 *     "flashspec timeline");
 *   - tracks (threads, "M" thread_name + thread_sort_index metadata): tid 1
 *     "cycles" (one "X" event per cycle, with the cycle's "draft" and "verify"
 *     phases nested inside it), then per resource in the order CPU, NPU,
 *     flash, others (by first appearance): the resource's track, and its
 *     "provisional" track for spans labelled "provisional" (draft work that
 *     overlaps the target on the same unit).  A span that would overlap
 *     another on its track goes to the next lane of that track ("NPU (2)",
 *     ...), so no two "X" events of one track overlap at all (interval
 *     partitioning by start time: the fewest lanes);
 *   - "X" events: name = label, plus " INDEX" when index >= 0; cat = the
 *     resource; args.index;
 *   - "C" counter events at every cycle start and at the last cycle's end:
 *     "DRAM" {"used_MB"} and "tokens" {"emitted", "accepted"};
 *   - ts and dur in microseconds of the simulated clock, relative to the
 *     earliest recorded time (clock_origin_ns), printed exactly with three
 *     decimals (ns resolution), never from floating point.
 *   Events come in a deterministic order (tracks in tid order, each in time
 *   order; counters last), so equal recordings give byte-identical files.
 *
 * Ownership: the handle owns copies of meta keys/values; resource and label
 * strings of spans are copied into a small intern table (the hook's strings
 * are static, but the writer does not rely on it).  Not thread-safe: one
 * handle is fed by one thread at a time (the worker replaying the point).
 */
#ifndef SIM_TIMELINE_H
#define SIM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include "sim/sim_status.h"

/* Default cap on recorded spans + cycles; later ones are dropped and the file
 * says "truncated": "yes". */
#define SIM_TIMELINE_MAX_EVENTS ((int64_t)1 << 22)

typedef struct sim_timeline sim_timeline; /* opaque */

/* One cycle as the writer needs it (the replay's sim_cycle_info, flattened). */
typedef struct sim_timeline_cycle {
    int32_t prompt, pos, ctx_len;
    int32_t emitted, accepted;
    int32_t rows, leaves;
    int32_t draft_calls, provisional_calls, provisional_done;
    double dram_used_bytes;
    int64_t t0_ns, t1_ns;      /* cycle start and end on the virtual clock */
    double draft_ms, verify_ms; /* wall time of the two phases */
    double flash_ms, npu_ms, cpu_ms, kv_ms, idle_ms; /* busy times */
} sim_timeline_cycle;

/* New empty timeline (cap: max_events, <= 0 = SIM_TIMELINE_MAX_EVENTS), or
 * NULL when out of memory.  Free with sim_timeline_destroy. */
sim_timeline *sim_timeline_create(int64_t max_events);
void sim_timeline_destroy(sim_timeline *tl); /* NULL-safe */

/* Sets (or replaces) a string of "otherData"; "title" also names the process.
 * Returns SIM_OK or SIM_TIMELINE_E_*. */
int sim_timeline_set_meta(sim_timeline *tl, const char *key, const char *value);

/* Records one finished service; the signature is sim_hw_span_fn's (sim_hw.h),
 * ctx = the sim_timeline.  t1_ns < t0_ns is recorded as a zero-length span.
 * An allocation failure is remembered and reported by sim_timeline_write. */
void sim_timeline_span(void *ctx, const char *resource, const char *label, int32_t index,
                       int64_t t0_ns, int64_t t1_ns);

/* Records one cycle (copied). */
void sim_timeline_cycle_add(sim_timeline *tl, const sim_timeline_cycle *c);

int64_t sim_timeline_n_spans(const sim_timeline *tl);
int64_t sim_timeline_n_cycles(const sim_timeline *tl);
int sim_timeline_truncated(const sim_timeline *tl); /* 1 when events were dropped */

/* Formats the JSON into a malloc'ed NUL-terminated buffer (*out, owned by the
 * caller; *len excludes the NUL).  Same bytes as the file. */
int sim_timeline_format(const sim_timeline *tl, char **out, size_t *len);

/* Writes the JSON to path atomically: a temporary file in path's directory,
 * fsync'ed, renamed over path.  On failure no temporary file remains, path is
 * untouched, err (errlen bytes, may be NULL) gets one line naming the path and
 * the cause, and the result is SIM_CANTCREATE (or E_NOMEM). */
int sim_timeline_write(const sim_timeline *tl, const char *path, char *err, size_t errlen);

#endif
