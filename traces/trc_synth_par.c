/*
 * trc_synth_par.c -- node-stream synthesis on several threads
 * (trci_synth_run_parallel, trc_gen.h), for trc_synth and trc_synth_save
 * when node_streams is set and threads > 1.
 *
 * With node_streams a tree is a pure function of (seed, prompt, position, the
 * prompt's reference and root): the main stream draws every prompt, reference
 * and root first, in the order of the sequential run() of trc_synth.c; then
 * `threads` workers generate the trees of a batch into per-tree slots, and the
 * slots go to the sink in order.  The output does not depend on the thread
 * count (traces/tests: synth_threads).
 *
 * Memory: one generator per worker (its tree buffers) and the slots of one
 * batch, about PAR_BATCH_BYTES, besides the prompt and reference tokens of
 * the whole trace, which the main stream draws first.
 */
#include "trc_gen.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PAR_BATCH_BYTES ((size_t)8 << 20)

typedef struct par_batch {
    const trc_synth_params *p;
    const int32_t *prompt_tok, *ref_tok, *root; /* [P*plen], [P*L], [P] */
    int64_t first, count;                       /* trees [first, first + count) */
    int32_t threads;
    /* slots: tree i of the batch at i * M (nodes), i * MK, i * MKE */
    int32_t *n, *parent, *token, *dtok, *ttok;
    float *dlp, *tlp, *exit;
} par_batch;

typedef struct par_worker {
    par_batch *b;
    gen g;
    int32_t idx;
} par_worker;

static void *par_work(void *arg)
{
    par_worker *w = arg;
    par_batch *b = w->b;
    gen *g = &w->g;
    const trc_synth_params *p = b->p;
    int64_t L = p->output_len;
    size_t M = (size_t)g->M, MK = M * (size_t)g->K, MKE = MK * (size_t)g->E;
    for (int64_t i = w->idx; i < b->count; i += b->threads) {
        int64_t t = b->first + i, pi = t / L, pos = t % L;
        const int32_t *ref = b->ref_tok + pi * L;
        int32_t root = pos > 0 ? ref[pos - 1] : b->root[pi];
        g->prompt = (int32_t)pi;
        int32_t n = trci_gen_tree(g, ref, L, pos, root);
        b->n[i] = n;
        memcpy(b->parent + (size_t)i * M, g->parent, sizeof(int32_t) * (size_t)n);
        memcpy(b->token + (size_t)i * M, g->token, sizeof(int32_t) * (size_t)n);
        memcpy(b->dtok + (size_t)i * MK, g->dtok, sizeof(int32_t) * (size_t)n * (size_t)g->K);
        memcpy(b->ttok + (size_t)i * MK, g->ttok, sizeof(int32_t) * (size_t)n * (size_t)g->K);
        memcpy(b->dlp + (size_t)i * MK, g->dlp, sizeof(float) * (size_t)n * (size_t)g->K);
        memcpy(b->tlp + (size_t)i * MK, g->tlp, sizeof(float) * (size_t)n * (size_t)g->K);
        if (g->E)
            memcpy(b->exit + (size_t)i * MKE, g->exit,
                   sizeof(float) * (size_t)n * (size_t)g->K * (size_t)g->E);
    }
    return NULL;
}

/* The batch's slots for `batch` trees (0, or TRC_E_NOMEM). */
static int par_batch_alloc(par_batch *b, size_t M, size_t MK, size_t MKE, int64_t batch)
{
    b->n = malloc(sizeof(int32_t) * (size_t)batch);
    b->parent = malloc(sizeof(int32_t) * M * (size_t)batch);
    b->token = malloc(sizeof(int32_t) * M * (size_t)batch);
    b->dtok = malloc(sizeof(int32_t) * MK * (size_t)batch);
    b->ttok = malloc(sizeof(int32_t) * MK * (size_t)batch);
    b->dlp = malloc(sizeof(float) * MK * (size_t)batch);
    b->tlp = malloc(sizeof(float) * MK * (size_t)batch);
    b->exit = MKE ? malloc(sizeof(float) * MKE * (size_t)batch) : NULL;
    return b->n && b->parent && b->token && b->dtok && b->ttok && b->dlp && b->tlp &&
                   (!MKE || b->exit)
               ? TRC_OK
               : TRC_E_NOMEM;
}

static void par_batch_free(par_batch *b)
{
    free(b->n);
    free(b->parent);
    free(b->token);
    free(b->dtok);
    free(b->ttok);
    free(b->dlp);
    free(b->tlp);
    free(b->exit);
}

/* One batch: the workers fill its slots (a thread that cannot start has its
 * share run here), then its trees go to the sink in order. */
static int par_run_batch(gen *g, const sink *out, par_batch *b, par_worker *w, pthread_t *th,
                         size_t M, size_t MK, size_t MKE)
{
    const trc_synth_params *p = g->p;
    int64_t plen = p->prompt_len, L = p->output_len;
    int32_t T = b->threads;
    int ok[64] = {0};
    for (int32_t k = 1; k < T; k++)
        ok[k] = pthread_create(&th[k], NULL, par_work, &w[k]) == 0;
    par_work(&w[0]);
    for (int32_t k = 1; k < T; k++) {
        if (ok[k])
            pthread_join(th[k], NULL);
        else
            par_work(&w[k]);
    }
    int rc = TRC_OK;
    for (int64_t i = 0; i < b->count && !rc; i++) {
        int64_t t = b->first + i, pi = t / L;
        if (t % L == 0)
            rc = out->prompt(out->ctx, b->prompt_tok + pi * plen, p->prompt_len,
                             b->ref_tok + pi * L, p->output_len);
        gen view = *g;
        view.parent = b->parent + (size_t)i * M;
        view.token = b->token + (size_t)i * M;
        view.dtok = b->dtok + (size_t)i * MK;
        view.ttok = b->ttok + (size_t)i * MK;
        view.dlp = b->dlp + (size_t)i * MK;
        view.tlp = b->tlp + (size_t)i * MK;
        view.exit = MKE ? b->exit + (size_t)i * MKE : NULL;
        if (!rc) rc = out->tree(out->ctx, &view, b->n[i]);
    }
    return rc;
}

int trci_synth_run_parallel(gen *g, const sink *out)
{
    const trc_synth_params *p = g->p;
    int64_t P = p->prompts, plen = p->prompt_len, L = p->output_len, total = P * L;
    int32_t T = p->threads > 64 ? 64 : p->threads;
    size_t M = (size_t)g->M, MK = M * (size_t)g->K, MKE = MK * (size_t)g->E;
    size_t per_tree = sizeof(int32_t) * (1 + 2 * M + 2 * MK) + sizeof(float) * (2 * MK + MKE);
    int64_t batch = (int64_t)(PAR_BATCH_BYTES / per_tree);
    if (batch < T) batch = T;
    if (batch > total) batch = total;
    par_batch b = {.p = p, .threads = T};
    int32_t *prompt_tok = malloc(sizeof(int32_t) * (size_t)(P * plen > 0 ? P * plen : 1));
    int32_t *ref_tok = malloc(sizeof(int32_t) * (size_t)(P * L));
    int32_t *root = malloc(sizeof(int32_t) * (size_t)P);
    par_worker *w = calloc((size_t)T, sizeof *w);
    pthread_t *th = calloc((size_t)T, sizeof *th);
    int rc = par_batch_alloc(&b, M, MK, MKE, batch);
    if (!prompt_tok || !ref_tok || !root || !w || !th) rc = TRC_E_NOMEM;
    int32_t ready = 0;
    for (; ready < T && !rc; ready++) {
        w[ready].b = &b;
        w[ready].idx = ready;
        rc = trci_gen_init(&w[ready].g, p);
        w[ready].g.memo = g->memo; /* the workers' trees use disjoint records */
    }
    /* the main stream's draws, in run()'s order */
    for (int64_t pi = 0; pi < P && !rc; pi++)
        trci_gen_prompt(g, prompt_tok + pi * plen, ref_tok + pi * L, &root[pi]);
    b.prompt_tok = prompt_tok;
    b.ref_tok = ref_tok;
    b.root = root;
    for (int64_t first = 0; first < total && !rc; first += batch) {
        b.first = first;
        b.count = total - first < batch ? total - first : batch;
        rc = par_run_batch(g, out, &b, w, th, M, MK, MKE);
    }
    for (int32_t k = 0; k < ready; k++) {
        g->hits += w[k].g.hits;
        g->misses += w[k].g.misses;
        trci_gen_free(&w[k].g);
    }
    free(w);
    free(th);
    free(prompt_tok);
    free(ref_tok);
    free(root);
    par_batch_free(&b);
    return rc;
}
