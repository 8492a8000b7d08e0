/*
 * trc_synth_memo.c -- the draw memo of node-stream synthesis (trc.h,
 * trc_synth_memo): what the costly draws of each node gave, by the state of
 * the node's stream they started from.
 *
 * A node's draws come from its own taus2 stream (trc_synth.c, node_streams),
 * and the costly ones -- the Beta draws of the draft's top-1 probability and
 * of the stick-breaking, the draft's and the target's tokens with the
 * target's probabilities, the exit-score logits -- are each a pure function
 * of the stream's state when they start (and of the Beta's shapes for the
 * top-1, of the rank of g(u) and the reference token for the tokens).  A record holds, per node and
 * per such run of draws ("segment"), the state it started from, the state it left and what it gave.
 * When a later synthesis reaches the same node with the same state (the knobs moved only the cheap
 * decisions before it, or nothing that changes how many numbers those draws took), the record gives
 * the same numbers without drawing them: the trace is the same bit for bit, and a difference step
 * of the acceptance redraws a few percent of its nodes.
 *
 * Layout: records of the same size, one per node slot ((prompt * output_len
 * + position) * max_nodes + node index); in a record, segment s at off[s]:
 * a flag byte (padded to 8), the state in, the state out (each ss bytes,
 * padded to 8), the key (nkey doubles) and the values.
 */
#include "trc_impl.h"

#include <gsl/gsl_rng.h>

#include <stdlib.h>
#include <string.h>

#define PAD8(x) (((x) + 7) & ~(size_t)7)
#define MEMO_SEGS (TRCI_SEG_EXIT + TRC_MAX_EXIT)

struct trc_synth_memo {
    uint64_t seed;
    int32_t prompts, output_len, max_nodes, k, n_exit;
    size_t ss;                 /* bytes of a node stream's state */
    size_t off[MEMO_SEGS + 1]; /* segment offsets; off[nseg] = record size */
    size_t nkey[MEMO_SEGS];    /* key doubles per segment */
    size_t nval[MEMO_SEGS];    /* value bytes per segment */
    int nseg;
    unsigned char *rec; /* [prompts * output_len * max_nodes] records */
    size_t bytes;
    pthread_mutex_t lock; /* held by the synthesis using the memo */
    int64_t hits, misses; /* segments served / drawn, over its uses */
};

/* Segment sizes for p's k and n_exit (TRCI_SEG_* order). */
static void memo_layout(trc_synth_memo *m)
{
    size_t K = (size_t)m->k;
    m->nseg = TRCI_SEG_EXIT + m->n_exit;
    for (int s = 0; s < m->nseg; s++) {
        m->nkey[s] = s == TRCI_SEG_TOP1 || s == TRCI_SEG_TOKENS ? 2 : 0;
        m->nval[s] = s == TRCI_SEG_TOP1     ? sizeof(double)
                     : s == TRCI_SEG_DRAFT  ? sizeof(double) * (K - 1)
                     : s == TRCI_SEG_TOKENS ? 3 * sizeof(int32_t) * K
                                            : sizeof(float) * K;
    }
    size_t at = 0;
    for (int s = 0; s < m->nseg; s++) {
        m->off[s] = at;
        at += 8 + 2 * PAD8(m->ss) + 8 * m->nkey[s] + PAD8(m->nval[s]);
    }
    m->off[m->nseg] = at;
}

trc_synth_memo *trc_synth_memo_new(const trc_synth_params *p, size_t max_bytes)
{
    if (!p->node_streams || p->prompts < 1 || p->output_len < 1 || p->max_nodes < 1 || p->k < 1 ||
        p->k > TRC_MAX_K || p->n_exit < 0 || p->n_exit > TRC_MAX_EXIT ||
        gsl_rng_taus2->size > TRCI_MEMO_STATE_MAX)
        return NULL;
    trc_synth_memo *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->seed = p->seed;
    m->prompts = p->prompts;
    m->output_len = p->output_len;
    m->max_nodes = p->max_nodes;
    m->k = p->k;
    m->n_exit = p->n_exit;
    m->ss = gsl_rng_taus2->size;
    memo_layout(m);
    double slots = (double)p->prompts * p->output_len * p->max_nodes;
    double bytes = slots * (double)m->off[m->nseg];
    if (bytes > (double)max_bytes || bytes > (double)SIZE_MAX / 2 ||
        pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return NULL;
    }
    m->bytes = (size_t)bytes;
    m->rec = calloc((size_t)slots, m->off[m->nseg]); /* every flag 0: nothing recorded */
    if (!m->rec) {
        pthread_mutex_destroy(&m->lock);
        free(m);
        return NULL;
    }
    return m;
}

void trc_synth_memo_free(trc_synth_memo *m)
{
    if (!m) return;
    pthread_mutex_destroy(&m->lock);
    free(m->rec);
    free(m);
}

size_t trc_synth_memo_bytes(const trc_synth_memo *m)
{
    return m ? m->bytes + sizeof *m : 0;
}

int trc_synth_memo_fits(const trc_synth_memo *m, const trc_synth_params *p)
{
    return m && p->node_streams && p->seed == m->seed && p->prompts == m->prompts &&
           p->output_len == m->output_len && p->max_nodes == m->max_nodes && p->k == m->k &&
           p->n_exit == m->n_exit;
}

void trc_synth_memo_counts(const trc_synth_memo *m, int64_t *hits, int64_t *misses)
{
    *hits = m ? m->hits : 0;
    *misses = m ? m->misses : 0;
}

int trci_memo_acquire(trc_synth_memo *m, const trc_synth_params *p)
{
    return trc_synth_memo_fits(m, p) && pthread_mutex_trylock(&m->lock) == 0;
}

void trci_memo_release(trc_synth_memo *m, int64_t hits, int64_t misses)
{
    m->hits += hits;
    m->misses += misses;
    pthread_mutex_unlock(&m->lock);
}

unsigned char *trci_memo_node(trc_synth_memo *m, int32_t prompt, int64_t pos, int32_t node)
{
    size_t slot = ((size_t)prompt * (size_t)m->output_len + (size_t)pos) * (size_t)m->max_nodes +
                  (size_t)node;
    return m->rec + slot * m->off[m->nseg];
}

/* a[0..n) == b[0..n), by 8-byte words where it can (the hot comparison:
 * a call to memcmp would cost as much as the rest of a hit) */
static int same_bytes(const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return 0;
    }
    for (; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* The parts of segment seg of a record (memo_layout): its flag byte, the
 * stream state in and out, the key and the values. */
typedef struct seg_parts {
    unsigned char *flag, *in, *out, *key, *val;
} seg_parts;

static seg_parts seg_at(const trc_synth_memo *m, const unsigned char *rec, int seg)
{
    seg_parts p;
    p.flag = (unsigned char *)rec + m->off[seg];
    p.in = p.flag + 8;
    p.out = p.in + PAD8(m->ss);
    p.key = p.out + PAD8(m->ss);
    p.val = p.key + 8 * m->nkey[seg];
    return p;
}

int trci_memo_get(const trc_synth_memo *m, const unsigned char *rec, int seg, void *state,
                  const double *key, void *val)
{
    seg_parts s = seg_at(m, rec, seg);
    if (!s.flag[0] || !same_bytes(s.in, state, m->ss)) return 0;
    if (m->nkey[seg] && !same_bytes(s.key, (const unsigned char *)key, 8 * m->nkey[seg])) return 0;
    memcpy(val, s.val, m->nval[seg]);
    memcpy(state, s.out, m->ss);
    return 1;
}

void trci_memo_put(trc_synth_memo *m, unsigned char *rec, int seg, const void *state_in,
                   const void *state_out, const double *key, const void *val)
{
    seg_parts s = seg_at(m, rec, seg);
    memcpy(s.in, state_in, m->ss);
    memcpy(s.out, state_out, m->ss);
    if (m->nkey[seg]) memcpy(s.key, key, sizeof(double) * m->nkey[seg]);
    memcpy(s.val, val, m->nval[seg]);
    s.flag[0] = 1;
}
