/*
 * trc_gen.h -- private to the synthetic generator: what trc_synth.c (the
 * model: a tree's draws, the sequential run, trc_synth and trc_synth_save)
 * shares with trc_synth_par.c (node streams generated on several threads).
 * Nothing else includes it.
 *
 * A gen is one generator: the parameters (borrowed, checked by
 * trc_synth_check), its random streams and the buffers of one tree of up to
 * M nodes, which trci_gen_tree overwrites.  It is not shared between threads:
 * each worker of trc_synth_par.c has its own, seeded the same way.
 */
#ifndef TRC_GEN_H
#define TRC_GEN_H

#include "trc_impl.h"

#include <gsl/gsl_rng.h>

typedef struct frontier {
    double joint;
    int64_t seq;
    int32_t node, cand;
} frontier;

typedef struct gen {
    const trc_synth_params *p;
    gsl_rng *rng;
    gsl_rng *main_rng, *node_rng; /* node_streams: rng is node_rng inside gen_node */
    int32_t prompt;
    int K, D, M, E;
    double exit_acc[TRC_MAX_EXIT];
    /* one tree, M nodes */
    int32_t *parent, *token, *depth, *dtok, *ttok;
    float *dlp, *tlp, *exit;
    double *q, *joint; /* draft probabilities [M*K], joint probability [M] */
    frontier *heap;    /* capacity M*K */
    int hn;
    int64_t seq;
    /* node_streams with a draw memo (trc_synth_memo.c): the node's record
     * while gen_node runs on its stream, else NULL; segments served / drawn */
    trc_synth_memo *memo;
    unsigned char *rec;
    int64_t hits, misses;
} gen;

/* Sets g up for p (borrowed: it must outlive g), the main stream seeded from
 * p->seed; TRC_OK, or TRC_E_NOMEM with nothing left to free. */
int trci_gen_init(gen *g, const trc_synth_params *p);
/* Frees what g holds and zeroes it (twice is harmless). */
void trci_gen_free(gen *g);
/* A prompt's draws from the main stream, in the order every run makes them:
 * its prompt_len prompt tokens, its output_len reference tokens and, when
 * it has no prompt tokens, the root token of its first tree (*root; else
 * the last prompt token). */
void trci_gen_prompt(gen *g, int32_t *prompt, int32_t *ref, int32_t *root);
/* Builds the tree at position pos of prompt g->prompt, whose reference is
 * ref[0..L), with root token root_tok, into g's tree buffers; its node count. */
int32_t trci_gen_tree(gen *g, const int32_t *ref, int64_t L, int64_t pos, int32_t root_tok);

/* Where the generator's output goes: one prompt, then its output_len trees,
 * prompt after prompt (trc_builder's order). */
typedef struct sink {
    int (*prompt)(void *ctx, const int32_t *prompt, int32_t plen, const int32_t *ref, int32_t len);
    int (*tree)(void *ctx, const gen *g, int32_t n);
    void *ctx;
} sink;

/* trc_synth_par.c: the whole trace into out, as trc_synth.c's sequential run
 * would send it, with node_streams and threads > 1: the main stream's draws
 * from g, the trees on p->threads workers (at most 64).  TRC_OK, the sink's
 * code or TRC_E_NOMEM; g->hits and g->misses gain the workers' memo counts. */
int trci_synth_run_parallel(gen *g, const sink *out);

#endif
