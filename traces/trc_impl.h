/*
 * trc_impl.h -- private to traces/: the layout of struct trc_trace and the helpers
 * shared by the builder, the HDF5 reader/writer, the checksum and the generator.
 * Nothing outside traces/ (and the white-box tests in tests/traces/) includes it.
 *
 * Representation: one flat array per schema dataset, exactly as in the file, so
 * loading is "read each dataset into its array" and saving is the reverse.  The
 * only derived arrays are first_child/next_sibling (tree links), which
 * trci_validate() fills.  A trc_trace handed to a caller has always passed
 * trci_validate(); until then its arrays may hold anything.
 *
 * Internal names use the trci_ prefix; file-local helpers are static.
 */
#ifndef TRC_IMPL_H
#define TRC_IMPL_H

#include "trc.h"

#include <hdf5.h>

#include <pthread.h>
#include <stdarg.h>

/* Log-probs may exceed 0 by this much (rounding in the recorder's softmax). */
#define TRCI_LOGP_EPS 1e-4f

/* A window of node rows [base, base + n) in global numbering: the whole node
 * arrays of a trace held whole (base 0), or one prompt's rows read by
 * trc_lazy.c.  Row i of the trace is element i - base of every array. */
typedef struct trci_nodes {
    int64_t base, n;
    int32_t *parent, *token;
    uint8_t *depth;
    int32_t *first_child, *next_sibling;
    int32_t *draft_tok;
    float *draft_logp;
    int32_t *tgt_tok;
    float *tgt_logp;
    float *exit_score; /* NULL when E = 0 */
} trci_nodes;

struct trci_lazy; /* trc_lazy.c: the file, the prompt cache */

struct trc_trace {
    trc_meta meta;         /* n_prompts, n_trees, n_nodes are the array sizes */
    int64_t n_prompt_tok;  /* length of prompt_tok */
    int64_t *prompt_off;   /* [P+1] */
    int32_t *prompt_tok;   /* [n_prompt_tok] */
    int64_t *ref_off;      /* [P+1] */
    int32_t *ref_tok;      /* [T] */
    int64_t *node_off;     /* [T+1] */
    int32_t *parent;       /* [N] tree-local */
    int32_t *token;        /* [N] */
    uint8_t *depth;        /* [N] */
    int32_t *first_child;  /* [N] derived, tree-local */
    int32_t *next_sibling; /* [N] derived, tree-local */
    int32_t *draft_tok;    /* [N*K] */
    float *draft_logp;     /* [N*K] */
    int32_t *tgt_tok;      /* [N*K] */
    float *tgt_logp;       /* [N*K] */
    float *exit_score;     /* [N*E*K]; NULL when E = 0 */
    uint64_t checksum;     /* set by trci_validate (or from the index) */
    /* lazily opened traces: the node arrays above are NULL and prompts come
     * from the cache (trc_lazy.c); NULL for a trace held whole */
    struct trci_lazy *lazy;
    /* trc_get_stats: computed on first use (under memo_lock) or read from the
     * index; stats_ok says which of the two has happened */
    trc_stats stats;
    int stats_ok;
    /* trc_memo: derived data, the only mutable part of a shared trace; every
     * access under memo_lock (initialised by trci_memo_init) */
    int memo_ok; /* memo_lock initialised */
    pthread_mutex_t memo_lock;
    int n_memo;
    struct trci_memo {
        const char *key;
        void *obj;
        void (*free_fn)(void *);
    } memo[TRC_MEMO_MAX];
};

/* Initialises the memo of a freshly allocated (zeroed) trace; 0, or -1 when
 * the lock cannot be created (trc_free still works). */
int trci_memo_init(trc_trace *t);

/* Allocates a trace whose arrays fit the counts in meta (n_prompts, n_trees,
 * n_nodes, k, n_exit) and n_prompt_tok; contents zeroed.  NULL on out of memory or
 * counts that do not fit in size_t.  Caller owns it (trc_free). */
trc_trace *trci_trace_alloc(const trc_meta *meta, int64_t n_prompt_tok);
/* Bytes of n node rows in memory: the node arrays and the tree links. */
size_t trci_node_bytes(const trc_meta *m, int64_t n);

/* The same without the node arrays (a lazily opened trace). */
trc_trace *trci_trace_alloc_resident(const trc_meta *meta, int64_t n_prompt_tok);

/* Makes room in b for prompt_tok more prompt tokens, `trees` more trees
 * (reference tokens) and `nodes` more nodes, so that adding them moves no
 * data (trc_synth knows its sizes, at most, before it starts; room left over
 * is given back at trc_builder_finish).  0, TRC_E_ARG or TRC_E_NOMEM. */
int trci_builder_reserve(trc_builder *b, int64_t prompt_tok, int64_t trees, int64_t nodes);

/* The single validation routine behind trc_load and trc_builder_finish: checks the
 * header values, offsets, tree structure, reference paths, token ranges, log-probs
 * and exit scores; derives first_child/next_sibling and the checksum.  name
 * prefixes messages ("FILE: /dataset: ...").  Returns TRC_OK or the error code. */
int trci_validate(trc_trace *t, const char *name, trc_err *err);

/* Computes the content checksum (traces/README.md, "Checksum"). */
uint64_t trci_hash(const trc_trace *t);
/* The same in pieces, for a trace read in slabs: the header and resident
 * arrays, then the node datasets in table order (TRCI_DS_*), each fed whole
 * in one or more consecutive calls of n entries, then the fold. */
typedef struct trci_hasher {
    uint64_t h[4];
    unsigned next; /* lane of the next word */
} trci_hasher;
enum {
    TRCI_DS_PARENT,
    TRCI_DS_TOKEN,
    TRCI_DS_DEPTH,
    TRCI_DS_DRAFT_TOK,
    TRCI_DS_DRAFT_LOGP,
    TRCI_DS_TGT_TOK,
    TRCI_DS_TGT_LOGP,
    TRCI_DS_EXIT,
    TRCI_DS_COUNT
};
void trci_hash_resident(const trc_trace *t, trci_hasher *s);
void trci_hash_rows(trci_hasher *s, int ds, const void *v, int64_t n);
uint64_t trci_hash_finish(const trci_hasher *s);
/* The hash of prompt p (traces/README.md, "Index"): its tokens, reference,
 * tree sizes and node rows, read from w (which holds the prompt's rows). */
uint64_t trci_prompt_hash(const trc_trace *t, const trci_nodes *w, int32_t p);

/* The window over the node arrays of a trace held whole, and over prompt
 * p's rows of them. */
void trci_nodes_all(const trc_trace *t, trci_nodes *w);
void trci_nodes_prompt(const trc_trace *t, int32_t p, trci_nodes *w);

/* Validation of a lazily opened trace, in two parts with the same rules and
 * messages as trci_validate: the resident part (header, offsets, prompt and
 * reference tokens; does not compute the checksum), and the nodes of prompt p
 * held in w (fills w's tree links).  Returns TRC_OK or the error code. */
int trci_validate_resident(const trc_trace *t, const char *name, trc_err *err);
int trci_validate_prompt(const trc_trace *t, const trci_nodes *w, int32_t p, const char *name,
                         trc_err *err);

/* Adds prompt p (rows in w, tree links filled) to the statistics st, in the
 * order trc_get_stats defines; trci_stats_begin sets st up for t. */
void trci_stats_begin(const trc_trace *t, trc_stats *st);
void trci_stats_add(const trc_trace *t, const trci_nodes *w, int32_t p, trc_stats *st);

/* trc_h5write.c: a trace file written prompt by prompt.  trci_stream_open
 * creates a temporary beside path holding the header and the datasets that
 * are not per node, taken from resident (meta with every count, prompt and
 * reference tokens and offsets, node offsets), and the per-node datasets at
 * their full size, laid out as trc_save lays them out; trci_stream_rows
 * appends the node rows of part (a trace of the next prompts, validated);
 * trci_stream_finish (ok = 0: abandon) checks that every row came, adds the
 * index by reading the file back (trc_add_index), syncs and renames the
 * temporary over path.  The stream is freed by finish, whatever happens. */
typedef struct trci_stream trci_stream;
int trci_stream_open(const char *path, const trc_trace *resident, trci_stream **out, trc_err *err);
int trci_stream_rows(trci_stream *s, const trc_trace *part, trc_err *err);
int trci_stream_finish(trci_stream *s, int ok, trc_err *err);

/* trc_lazy.c.  trci_lazy_attach makes t lazy: it takes the open file f, the
 * node datasets ds[8] (table order, /nodes/parent to /nodes/exit_score) and
 * the per-prompt hashes (malloc'ed, [P]) -- on success only; on failure the
 * caller still owns them.  trci_lazy_free closes and frees it all (trc_free). */
int trci_lazy_attach(trc_trace *t, const char *path, hid_t f, const hid_t *ds, uint64_t *hash,
                     size_t cap, uint64_t file_bytes, trc_err *err);
void trci_lazy_free(trc_trace *t);
/* For a lazily attached trace without an index (hash zeroed): reads every
 * prompt once (validated, hashed, its statistics summed) and the node
 * datasets once more in slabs for the checksum, filling the index in memory.
 * On failure the first damaged prompt's error. */
int trci_lazy_index(trc_trace *t, trc_err *err);
const uint64_t *trci_lazy_hashes(const trc_trace *t);              /* [P] */
const trci_nodes *trci_lazy_window(const trc_trace *t, int32_t p); /* acquired prompt */
size_t trci_lazy_bytes(const trc_trace *t);

/* trc_synth_memo.c: the draw memo's records.  A node's record has one
 * segment per run of costly draws: the draft's top-1 Beta (keyed by its two
 * shapes as well), the draft's stick-breaking weights (k - 1 doubles), the
 * draft's and the target's tokens and the target's log-probs (keyed by the
 * rank of g(u) and the reference token; 3 k values) and each exit layer's
 * scores (k floats). */
enum { TRCI_SEG_TOP1, TRCI_SEG_DRAFT, TRCI_SEG_TOKENS, TRCI_SEG_EXIT };
#define TRCI_MEMO_STATE_MAX 64 /* bytes of a stream state the memo keeps */
/* 1 when m fits p and was free: the caller now holds it until release, which
 * adds the caller's counts. */
int trci_memo_acquire(trc_synth_memo *m, const trc_synth_params *p);
void trci_memo_release(trc_synth_memo *m, int64_t hits, int64_t misses);
/* The record of node `node` of the tree at (prompt, pos). */
unsigned char *trci_memo_node(trc_synth_memo *m, int32_t prompt, int64_t pos, int32_t node);
/* When segment seg of rec was recorded from the stream state `state` (and
 * key), copies its values to val, sets state to where those draws left the
 * stream and returns 1; else 0. */
int trci_memo_get(const trc_synth_memo *m, const unsigned char *rec, int seg, void *state,
                  const double *key, void *val);
/* Records segment seg: its draws went from state_in to state_out (key, val). */
void trci_memo_put(trc_synth_memo *m, unsigned char *rec, int seg, const void *state_in,
                   const void *state_out, const double *key, const void *val);

/* Fills err (may be NULL) with code and a printf-formatted message; control
 * characters are replaced so the message stays on one line.  Returns code. */
int trci_err(trc_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Copies a NUL-terminated string into dst[cap], truncating. */
void trci_strcpy(char *dst, size_t cap, const char *src);

/* trc_h5chunk.c: reads the whole dataset d (rank 1..3, shape dims) into buf
 * as mem_type by inflating its chunks on several threads.  Returns 0 on
 * success, -1 when the data is damaged, TRCI_CHUNK_FALLBACK when the dataset's
 * layout, filters or type do not allow it (the caller then uses H5Dread; buf
 * may have been partly written).  file_bytes bounds the compressed bytes. */
#define TRCI_CHUNK_FALLBACK 1
int trci_read_chunks(hid_t d, hid_t mem_type, int rank, const hsize_t *dims, void *buf,
                     uint64_t file_bytes);
/* The same for rows [row0, row0 + n) of the first dimension, on the calling
 * thread: the chunks holding them are fetched (H5Dread_chunk) and inflated
 * outside HDF5, so several threads reading prompts at once inflate in
 * parallel.  Same return values; a last partial chunk holds fewer rows. */
int trci_read_rows(hid_t d, hid_t mem_type, int rank, const hsize_t *dims, uint64_t row0,
                   uint64_t n, void *buf, uint64_t file_bytes);

#endif
