/*
 * trc.h -- flashspec traces, schema v1: the compact read-only in-memory form,
 * its HDF5 reader/validator and writer, and the synthetic generator.
 *
 * A trace holds, per prompt, the prompt tokens and the target's greedy reference
 * continuation (length L_p), and for every decode position pos in [0, L_p) one
 * recorded draft tree rooted at the last committed token.  Node 0 of a tree is the
 * root; parent[i] < i; the reference path (root -> ref[pos] -> ref[pos+1] ...) is
 * always recorded down to depth min(D, L_p - pos).  Per node: the draft's top-K
 * candidates (sorted by decreasing log-prob), the target's top-K next tokens
 * (sorted; the first is the greedy token g(node)), and for every exit layer the
 * predictor's scores of the node's K draft candidates.  Full layout of the file:
 * traces/README.md.
 *
 * Lifetime: a trc_trace is immutable once built; share it freely across threads.
 * Every pointer handed out by an accessor is borrowed from the trace and lives as
 * long as it does.  Every loaded or built trace has passed full validation
 * (versions, shapes, offsets, token ranges, finiteness), so accessors do not check.
 */
#ifndef TRC_H
#define TRC_H

#include <stddef.h>
#include <stdint.h>

#define TRC_FORMAT "flashspec-trace"
#define TRC_VERSION 1
#define TRC_MAX_EXIT 8   /* exit layers per trace */
#define TRC_MAX_K 64     /* candidates per node */
#define TRC_MAX_DEPTH 64 /* D */
#define TRC_NAME_CAP 64

/* Status codes; the CLI maps them to exit codes (traces/README.md). */
enum {
    TRC_OK = 0,
    TRC_E_MISSING = 1, /* file absent or unreadable (exit 66) */
    TRC_E_FORMAT = 2,  /* not HDF5, truncated or corrupt (exit 65) */
    TRC_E_SCHEMA = 3,  /* wrong format name/version, missing or misshapen dataset (65) */
    TRC_E_DATA = 4,    /* values out of range, NaN/inf, inconsistent offsets (65) */
    TRC_E_WRITE = 5,   /* cannot create the output file (exit 73) */
    TRC_E_ARG = 6,     /* invalid parameters (exit 64 from the CLI, 78 from Lua) */
    TRC_E_NOMEM = 7    /* (exit 70) */
};

/* Error: one line naming the file and the dataset/attribute and the problem. */
typedef struct trc_err {
    int code;
    char msg[512];
} trc_err;

typedef struct trc_meta {
    int32_t version;                   /* TRC_VERSION */
    int32_t vocab;                     /* token ids lie in [0, vocab) */
    int32_t k;                         /* candidates per node (draft and target) */
    int32_t max_depth;                 /* D */
    int32_t max_nodes;                 /* M, nodes per tree including the root */
    int32_t n_exit;                    /* exit layers recorded (0..TRC_MAX_EXIT) */
    int32_t exit_layers[TRC_MAX_EXIT]; /* ascending, each in [1, target_layers) */
    int32_t target_layers;
    int32_t n_prompts;
    int64_t n_trees;                   /* = total reference tokens */
    int64_t n_nodes;
    char target[TRC_NAME_CAP];         /* model names, free text */
    char draft[TRC_NAME_CAP];
    char tokenizer[TRC_NAME_CAP];
    char source[256];                  /* recorder or generator provenance */
} trc_meta;

typedef struct trc_trace trc_trace;

/* One recorded tree, as views into the trace. */
typedef struct trc_tree {
    int32_t n;                    /* nodes, root included (1..M) */
    int32_t k, n_exit;
    const int32_t *parent;        /* [n]; parent[0] = -1 */
    const int32_t *token;         /* [n]; token[0] = root token */
    const uint8_t *depth;         /* [n] */
    const int32_t *first_child;   /* [n]; -1 if leaf (derived at load) */
    const int32_t *next_sibling;  /* [n]; -1 at the end (derived at load) */
    const int32_t *draft_tok;     /* [n*k] */
    const float *draft_logp;      /* [n*k], non-increasing per node, <= 0 */
    const int32_t *tgt_tok;       /* [n*k]; tgt_tok[i*k] = g(node i) */
    const float *tgt_logp;        /* [n*k] */
    const float *exit_score;      /* [(i*n_exit + e)*k + j]; NULL when n_exit = 0 */
} trc_tree;

/* ---- reading ---- */

/* Loads and fully validates path.  On failure *out is NULL and err says why. */
int trc_load(const char *path, trc_trace **out, trc_err *err);
/* Same, from an HDF5 file image of n bytes in memory (borrowed; HDF5 reads a
 * copy).  name labels errors in place of FILE (NULL: "(image)").  Missing or
 * unreadable data is TRC_E_FORMAT here (there is no file to miss). */
int trc_load_image(const void *buf, size_t n, const char *name, trc_trace **out, trc_err *err);
void trc_free(trc_trace *t); /* NULL-safe */

const trc_meta *trc_get_meta(const trc_trace *t);
/* 64-bit checksum of the trace content (not of the file bytes): equal for a trace
 * and its saved-then-loaded copy. */
uint64_t trc_checksum(const trc_trace *t);
/* Approximate resident bytes of the in-memory form; for a lazily opened trace
 * its resident part plus the most its prompt cache may hold. */
size_t trc_bytes(const trc_trace *t);

/* Opens path for reading prompt by prompt: the header, the offsets and the
 * prompt and reference tokens are read and validated now; a prompt's trees
 * are read with HDF5 hyperslab reads and validated when a caller first
 * acquires it (trc_prompt_acquire), and kept in a cache of at most
 * cache_bytes (least recently used prompts go first; prompts in use are never
 * dropped, so a prompt larger than the cache still loads).  Files written by
 * trc_save carry an index (traces/README.md, "Index": the checksum, one hash
 * per prompt, the statistics), which is what lets a trace open without reading
 * its nodes; a prompt whose data does not match its hash fails to load
 * (TRC_E_DATA).  A file without an index is loaded whole and validated (as
 * trc_load) when it fits in cache_bytes; a larger one is read once, prompt by
 * prompt, to validate it and build the index in memory, then served lazily.
 * Either way the trace answers every accessor as a loaded one does, with the
 * same checksum and statistics. */
int trc_open(const char *path, size_t cache_bytes, trc_trace **out, trc_err *err);

/* Validates path completely -- every prompt, and the index against the
 * data -- using about mem_bytes at most: a trace that fits is loaded whole
 * (as trc_load); a larger one is read prompt by prompt (as trc_open of a file
 * without an index: the first damaged prompt is the error) and its index made
 * again and compared with the stored one.  On success *out is the trace (one
 * read prompt by prompt keeps no prompt cached). */
int trc_check(const char *path, size_t mem_bytes, trc_trace **out, trc_err *err);

/* Makes prompt p's trees readable by trc_tree_get until the matching
 * trc_prompt_release; loads and validates the prompt on first use.
 * Acquisitions nest and may come from several threads.  On failure (the
 * prompt's data is damaged: TRC_E_FORMAT/TRC_E_DATA, or TRC_E_NOMEM) err
 * names the file, the dataset and the prompt; every later acquisition of the
 * prompt fails with the same error, and other prompts are unaffected.  For a
 * loaded or built trace every prompt is always readable (no-ops). */
int trc_prompt_acquire(const trc_trace *t, int32_t p, trc_err *err);
void trc_prompt_release(const trc_trace *t, int32_t p);
/* 1 for a trace opened prompt by prompt, 0 for one held whole. */
int trc_is_lazy(const trc_trace *t);
/* Prompt p's hash (traces/README.md "Checksum") for a trace opened prompt by
 * prompt: the index's, which trc_prompt_acquire checks the prompt's data
 * against when it reads it.  0 for a trace held whole (its checksum was
 * computed from its data) and for p out of range. */
uint64_t trc_prompt_hash(const trc_trace *t, int32_t p);

typedef struct trc_cache_info {
    size_t capacity, bytes, peak_bytes; /* prompt cache: limit, now, most held */
    int64_t loads, hits, evictions;     /* prompt reads, reuses, drops */
    int64_t failed;                     /* prompts that failed to load */
} trc_cache_info;
/* Cache counters of a lazily opened trace (all zero for one held whole). */
void trc_cache_get(const trc_trace *t, trc_cache_info *out);

/* Statistics of the recorded trees relative to the reference path, summed
 * over the whole trace in prompt, tree and node order (traces/README.md,
 * "Statistics"); the replay fits its synthesis of unrecorded nodes on them.
 * A loaded trace computes them on first use; an opened one reads them from
 * its index. */
typedef struct trc_stats {
    int32_t k, depths;                  /* candidates per node; depth rows in use */
    int64_t accept_n;                   /* reference-path parents that propose a token */
    int64_t accept_pos[TRC_MAX_K];      /* ... whose draft rank j holds the reference token */
    int64_t deep_n, deep_top1, deep_in; /* the same at depth max_depth - 1 */
    int64_t off_path_nodes;             /* recorded nodes off the reference path */
    int64_t depth_nodes[TRC_MAX_DEPTH]; /* ... by depth (depth >= 63 in the last row) */
    double logp_sum[TRC_MAX_K];         /* their draft log-probs summed by rank */
    double logp_sum_depth[TRC_MAX_DEPTH][TRC_MAX_K]; /* ... by depth and rank */
} trc_stats;
const trc_stats *trc_get_stats(const trc_trace *t); /* NULL only when out of memory */

int32_t trc_prompt(const trc_trace *t, int32_t p, const int32_t **tokens); /* length */
int32_t trc_ref(const trc_trace *t, int32_t p, const int32_t **tokens);    /* L_p */
/* Tree at (p, pos), pos in [0, L_p).  Returns TRC_OK or TRC_E_ARG (also for
 * a lazily opened trace whose prompt p the caller has not acquired). */
int trc_tree_get(const trc_trace *t, int32_t p, int32_t pos, trc_tree *out);
/* Child of node holding token, or -1 when not recorded. */
int32_t trc_tree_child(const trc_tree *tr, int32_t node, int32_t token);

/* ---- derived data ---- */

/* Data its users derive from a trace (e.g. the replay's statistics of the
 * recorded off-path nodes), computed once per trace and key and kept with the
 * trace, so that the sweep points sharing one trace stop recomputing it.
 * Thread-safe: the first caller of a key runs make(t, arg) under the trace's
 * lock; later and concurrent callers get the same object.  The object belongs
 * to the trace (free_fn, may be NULL, releases it in trc_free); callers must
 * treat it as read-only.  key is compared as a string and borrowed for the
 * trace's lifetime (use a literal).  Returns the object, or NULL when make
 * returned NULL (nothing is kept; a later call tries again) or TRC_MEMO_MAX
 * keys are in use (the caller computes the data itself). */
#define TRC_MEMO_MAX 8
const void *trc_memo(const trc_trace *t, const char *key,
                     void *(*make)(const trc_trace *t, void *arg), void *arg,
                     void (*free_fn)(void *obj));

/* ---- writing ---- */

/* Writes t to path atomically (temporary file in the same directory, then
 * rename): on failure nothing is left at path. */
int trc_save(const trc_trace *t, const char *path, trc_err *err);

/* Adds the index (traces/README.md, "Index") to a trace file that has none,
 * such as one written by the Python recorder, so that trc_open reads it
 * prompt by prompt from then on.  The file is checked completely first
 * (trc_check, in little memory); the index is written into a copy beside it
 * (same permissions), the copy is checked completely again (the index against
 * the data) and renamed over the file last: on any failure (a full disk, a
 * file-size limit) the file is as it was.  A file that already has an index
 * is only checked.  *added (may be NULL) says whether an index was written.
 * TRC_E_WRITE when the copy cannot be written. */
int trc_add_index(const char *path, int *added, trc_err *err);

typedef struct trc_builder trc_builder;
/* meta: vocab, k, max_depth, max_nodes, n_exit, exit_layers, target_layers and the
 * names are taken; counts are computed.  Returns NULL when meta is NULL, k is not
 * in [1, TRC_MAX_K], n_exit not in [0, TRC_MAX_EXIT], or memory runs out; the
 * caller owns the builder (trc_builder_finish or trc_builder_free). */
trc_builder *trc_builder_new(const trc_meta *meta);
/* Adds prompt p (in order), then exactly ref_len trees for it via add_tree. */
int trc_builder_add_prompt(trc_builder *b, const int32_t *prompt, int32_t prompt_len,
                           const int32_t *ref, int32_t ref_len);
/* Arrays as in trc_tree (exit_score may be NULL when n_exit = 0).  Copied. */
int trc_builder_add_tree(trc_builder *b, int32_t n, const int32_t *parent,
                         const int32_t *token, const int32_t *draft_tok,
                         const float *draft_logp, const int32_t *tgt_tok,
                         const float *tgt_logp, const float *exit_score);
/* Validates everything exactly as trc_load does and yields the trace; the builder
 * is consumed either way.  name labels errors (e.g. "synth"). */
int trc_builder_finish(trc_builder *b, const char *name, trc_trace **out, trc_err *err);
void trc_builder_free(trc_builder *b); /* NULL-safe */

/* ---- synthetic generator (GSL RNG) ---- */

typedef struct trc_synth_params {
    uint64_t seed;
    int32_t prompts;            /* number of prompts */
    int32_t prompt_len;         /* tokens per prompt */
    int32_t output_len;         /* reference tokens per prompt (L) */
    int32_t vocab;
    int32_t k, max_depth, max_nodes;
    int32_t target_layers;
    int32_t n_exit;
    int32_t exit_layers[TRC_MAX_EXIT];
    int32_t n_accept;
    double accept[TRC_MAX_DEPTH]; /* P(draft top-1 == reference | accepted so far), by
                                     depth 1..; the last value repeats */
    double calibration;         /* 0 = draft confidence says nothing about correctness,
                                   1 = confidence is a calibrated probability */
    double coverage;            /* P(reference token within the draft's top-K) */
    double predictor_accuracy;  /* P(predictor ranks the target's token first among
                                   the candidates, when it is among them), at the
                                   deepest exit layer; shallower exits are weaker */
    char target[TRC_NAME_CAP], draft[TRC_NAME_CAP];
    double coverage_share;      /* -1 (default): coverage applies at every depth; in
                                   [0, 1]: instead, at depth d the top-K holds the
                                   target's token with probability a_d + share (1 - a_d)
                                   -- the top-K recovers that share of the top-1
                                   misses at every depth */
    int32_t node_streams;       /* 0 (default): one random stream in a fixed order;
                                   1: every node draws from its own stream, seeded
                                   from (seed, prompt, position, node index), so a
                                   knob moves only the draws it governs: a small
                                   change of accept flips only the decisions it
                                   crosses (smooth for fitting, trc_synth.c) */
    int32_t threads;            /* with node_streams: trees generated by this many
                                   threads (0, 1: the caller's alone; at most 64);
                                   the trace is the same at any count */
} trc_synth_params;

void trc_synth_default_params(trc_synth_params *p);
/* Checks p alone: TRC_OK, or TRC_E_ARG with the offending key in err (what
 * trc_synth and trc_synth_save check first). */
int trc_synth_check(const trc_synth_params *p, trc_err *err);
/* Checks p (TRC_E_ARG with the offending key in err) and generates the trace. */
int trc_synth(const trc_synth_params *p, trc_trace **out, trc_err *err);

/* A draw memo for node-stream synthesis: traces of one shape generated again
 * and again with other knobs (flashspec.calibrate fits the acceptance).  Each
 * node's costly draws -- the Beta draws of the draft's probabilities, the
 * target's probabilities, the exit-score logits -- are a pure function of
 * the state of the node's stream where they start; the memo keeps, per node,
 * what they gave and from which state, and a later synthesis that reaches a
 * node's draws from the same state takes them from it.  The trace is the
 * same bit for bit with or without a memo, whatever the memo holds.
 *
 * trc_synth_memo_new: a memo for traces with p's seed, prompts, output_len,
 * max_nodes, k and n_exit (trc_synth_memo_fits); NULL when p has no
 * node_streams, the memo would take more than max_bytes, or memory runs
 * out.  trc_synth_memo_run is trc_synth drawing through memo (NULL: none);
 * a memo serves one synthesis at a time -- one that finds it in use by
 * another thread, or made for another shape, draws everything itself.
 * trc_synth_memo_counts: the segments of draws taken from the memo and
 * drawn, over its uses (not while it is in use). */
typedef struct trc_synth_memo trc_synth_memo;
trc_synth_memo *trc_synth_memo_new(const trc_synth_params *p, size_t max_bytes);
int trc_synth_memo_fits(const trc_synth_memo *m, const trc_synth_params *p);
size_t trc_synth_memo_bytes(const trc_synth_memo *m); /* 0 for NULL */
void trc_synth_memo_counts(const trc_synth_memo *m, int64_t *hits, int64_t *misses);
void trc_synth_memo_free(trc_synth_memo *m); /* NULL-safe */
int trc_synth_memo_run(const trc_synth_params *p, trc_synth_memo *memo, trc_trace **out,
                       trc_err *err);

/* Several traces generated at once (trc_synth_many.c): jobs[0..n) each by
 * trc_synth_memo_run on its own parameters and memo (NULL: none), on up to
 * `workers` threads (<= 0: 1, at most 64): one trace per thread while there
 * are at least as many traces as workers (p.threads = 1), else each trace on
 * its own thread and its synthesis on workers / n of them (p.threads).
 * Each job's rc, err and trace t (owned by the caller) are those of
 * trc_synth_memo_run; a trace made also has its statistics computed.  The
 * traces are the same at any worker count. */
typedef struct trc_synth_job {
    trc_synth_params p;
    trc_synth_memo *memo;
    trc_trace *t;
    trc_err err;
    int rc;
} trc_synth_job;
void trc_synth_many(trc_synth_job *const *jobs, int32_t n, int32_t workers);
/* The same trace written to path prompt by prompt, holding about one prompt's
 * trees in memory (traces larger than memory): the generator runs twice, once
 * to size the file and once to fill it; each prompt is checked as trc_load
 * checks it, and the index is made by reading the file back (trc_add_index).
 * The file holds the trace trc_synth gives -- the same checksum, statistics
 * and index -- though not the same bytes as trc_save of it (its chunks come
 * in another order; the same parameters give the same bytes again).  Atomic
 * like trc_save.  meta_out and checksum_out (may
 * be NULL) receive the file's header with its counts and its checksum. */
int trc_synth_save(const trc_synth_params *p, const char *path, trc_meta *meta_out,
                   uint64_t *checksum_out, trc_err *err);

#endif
