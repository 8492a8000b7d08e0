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
    uint64_t checksum;     /* set by trci_validate */
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

/* The single validation routine behind trc_load and trc_builder_finish: checks the
 * header values, offsets, tree structure, reference paths, token ranges, log-probs
 * and exit scores; derives first_child/next_sibling and the checksum.  name
 * prefixes messages ("FILE: /dataset: ...").  Returns TRC_OK or the error code. */
int trci_validate(trc_trace *t, const char *name, trc_err *err);

/* Computes the content checksum (traces/README.md, "Checksum"). */
uint64_t trci_hash(const trc_trace *t);

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

#endif
