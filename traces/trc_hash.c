/*
 * trc_hash.c -- the content checksum of a trace (trc_checksum).
 *
 * Definition (also in traces/README.md, so other tools can reproduce it): four
 * interleaved FNV-1a lanes with 64-bit state over a stream of 32-bit words: word n
 * goes to lane n % 4 (lane l starts at 0xcbf29ce484222325 ^ l; per word w:
 * h ^= w; h *= 0x100000001b3).  The four lanes are then folded, low word then
 * high word of each, into one more FNV-1a state, followed by the splitmix64
 * finaliser.  The stream is, in order:
 *   header: version, vocab, k, max_depth, max_nodes, n_exit, the n_exit exit
 *           layers, target_layers, n_prompts, then n_trees, n_nodes and the number
 *           of prompt tokens as 64-bit values (low word, then high word);
 *   names:  target, draft, tokenizer, source, each as its byte length followed by
 *           its bytes packed four per word, little-endian, zero-padded;
 *   arrays: /prompts/offset, /prompts/tokens, /reference/offset,
 *           /reference/tokens, /trees/node_offset, /nodes/parent, /nodes/token,
 *           /nodes/depth (one word per byte), /nodes/draft_tok, /nodes/draft_logp,
 *           /nodes/target_tok, /nodes/target_logp, /nodes/exit_score; int64
 *           entries as two words (low, high), float32 entries as their IEEE-754
 *           bit patterns.
 * Words are values, not memory bytes, so the result does not depend on the host's
 * byte order.  Derived arrays (tree links) are not hashed.  Cost: one multiply per
 * 4 bytes of content in four independent chains (several GB/s); computed once
 * per trace by trci_validate().
 */
#include "trc_impl.h"

#include <string.h>

#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define LANES 4

/* Word n of the stream goes to lane n % LANES: four independent multiply chains
 * instead of one, so the hash runs at memory speed. */
typedef trci_hasher hasher;

static inline void mix(hasher *s, uint32_t w)
{
    s->h[s->next] = (s->h[s->next] ^ w) * FNV_PRIME;
    s->next = (s->next + 1) % LANES;
}

static void mix64(hasher *s, int64_t v)
{
    uint64_t u = (uint64_t)v;
    mix(s, (uint32_t)u);
    mix(s, (uint32_t)(u >> 32));
}

static void mix_str(hasher *s, const char *str)
{
    size_t n = strlen(str);
    mix(s, (uint32_t)n);
    for (size_t i = 0; i < n; i += 4) {
        uint32_t w = 0;
        for (size_t j = 0; j < 4 && i + j < n; j++)
            w |= (uint32_t)(unsigned char)str[i + j] << (8 * j);
        mix(s, w);
    }
}

/* Bulk words: single steps until lane 0 is next, then four lanes per step. */
static void mix_u32(hasher *s, const uint32_t *v, int64_t n)
{
    int64_t i = 0;
    for (; i < n && s->next != 0; i++)
        mix(s, v[i]);
    uint64_t h0 = s->h[0], h1 = s->h[1], h2 = s->h[2], h3 = s->h[3];
    for (; i + LANES <= n; i += LANES) {
        h0 = (h0 ^ v[i]) * FNV_PRIME;
        h1 = (h1 ^ v[i + 1]) * FNV_PRIME;
        h2 = (h2 ^ v[i + 2]) * FNV_PRIME;
        h3 = (h3 ^ v[i + 3]) * FNV_PRIME;
    }
    s->h[0] = h0;
    s->h[1] = h1;
    s->h[2] = h2;
    s->h[3] = h3;
    for (; i < n; i++)
        mix(s, v[i]);
}

/* int32 data read as uint32 (same representation; this aliasing is allowed). */
static void mix_i32(hasher *s, const int32_t *v, int64_t n)
{
    mix_u32(s, (const uint32_t *)v, n);
}

/* float32 data by bit pattern, copied out in blocks (no type punning). */
static void mix_f32(hasher *s, const float *v, int64_t n)
{
    uint32_t buf[1024];
    for (int64_t i = 0; i < n; i += 1024) {
        int64_t m = n - i < 1024 ? n - i : 1024;
        memcpy(buf, v + i, (size_t)m * sizeof *buf);
        mix_u32(s, buf, m);
    }
}

static void mix_u8(hasher *s, const uint8_t *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        mix(s, v[i]);
}

static void mix_i64(hasher *s, const int64_t *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        mix64(s, v[i]);
}

static uint64_t finish(const hasher *s)
{
    /* fold the lanes, low word then high word of each, then splitmix64 */
    uint64_t h = FNV_BASIS;
    for (int l = 0; l < LANES; l++) {
        h = (h ^ (uint32_t)s->h[l]) * FNV_PRIME;
        h = (h ^ (uint32_t)(s->h[l] >> 32)) * FNV_PRIME;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

/* Prompt p's hash (traces/README.md, "Index"): the same lanes over p, the
 * prompt tokens, the reference tokens and the node count of each tree (each
 * list after its length), then the prompt's rows of the node datasets in
 * table order. */
uint64_t trci_prompt_hash(const trc_trace *t, const trci_nodes *w, int32_t p)
{
    const trc_meta *m = &t->meta;
    hasher s = {{FNV_BASIS, FNV_BASIS ^ 1, FNV_BASIS ^ 2, FNV_BASIS ^ 3}, 0};
    int64_t pl = t->prompt_off[p + 1] - t->prompt_off[p];
    int64_t L = t->ref_off[p + 1] - t->ref_off[p], tr0 = t->ref_off[p];
    mix(&s, (uint32_t)p);
    mix64(&s, pl);
    mix_i32(&s, t->prompt_tok + t->prompt_off[p], pl);
    mix64(&s, L);
    mix_i32(&s, t->ref_tok + tr0, L);
    for (int64_t i = 0; i < L; i++)
        mix(&s, (uint32_t)(t->node_off[tr0 + i + 1] - t->node_off[tr0 + i]));
    int64_t n = w->n, nk = n * m->k;
    mix_i32(&s, w->parent, n);
    mix_i32(&s, w->token, n);
    mix_u8(&s, w->depth, n);
    mix_i32(&s, w->draft_tok, nk);
    mix_f32(&s, w->draft_logp, nk);
    mix_i32(&s, w->tgt_tok, nk);
    mix_f32(&s, w->tgt_logp, nk);
    if (m->n_exit) mix_f32(&s, w->exit_score, nk * m->n_exit);
    return finish(&s);
}

void trci_hash_resident(const trc_trace *t, trci_hasher *s)
{
    const trc_meta *m = &t->meta;
    int64_t P = m->n_prompts, T = m->n_trees, N = m->n_nodes;
    *s = (trci_hasher){{FNV_BASIS, FNV_BASIS ^ 1, FNV_BASIS ^ 2, FNV_BASIS ^ 3}, 0};
    const int32_t head[] = {m->version, m->vocab, m->k, m->max_depth, m->max_nodes, m->n_exit};
    mix_i32(s, head, 6);
    mix_i32(s, m->exit_layers, m->n_exit);
    mix(s, (uint32_t)m->target_layers);
    mix(s, (uint32_t)m->n_prompts);
    mix64(s, T);
    mix64(s, N);
    mix64(s, t->n_prompt_tok);
    mix_str(s, m->target);
    mix_str(s, m->draft);
    mix_str(s, m->tokenizer);
    mix_str(s, m->source);
    mix_i64(s, t->prompt_off, P + 1);
    mix_i32(s, t->prompt_tok, t->n_prompt_tok);
    mix_i64(s, t->ref_off, P + 1);
    mix_i32(s, t->ref_tok, T);
    mix_i64(s, t->node_off, T + 1);
}

void trci_hash_rows(trci_hasher *s, int ds, const void *v, int64_t n)
{
    switch (ds) {
    case TRCI_DS_DEPTH:
        mix_u8(s, v, n);
        break;
    case TRCI_DS_DRAFT_LOGP:
    case TRCI_DS_TGT_LOGP:
    case TRCI_DS_EXIT:
        mix_f32(s, v, n);
        break;
    default:
        mix_i32(s, v, n);
        break;
    }
}

uint64_t trci_hash_finish(const trci_hasher *s)
{
    return finish(s);
}

uint64_t trci_hash(const trc_trace *t)
{
    const trc_meta *m = &t->meta;
    int64_t N = m->n_nodes, nk = N * m->k;
    trci_hasher s;
    trci_hash_resident(t, &s);
    trci_hash_rows(&s, TRCI_DS_PARENT, t->parent, N);
    trci_hash_rows(&s, TRCI_DS_TOKEN, t->token, N);
    trci_hash_rows(&s, TRCI_DS_DEPTH, t->depth, N);
    trci_hash_rows(&s, TRCI_DS_DRAFT_TOK, t->draft_tok, nk);
    trci_hash_rows(&s, TRCI_DS_DRAFT_LOGP, t->draft_logp, nk);
    trci_hash_rows(&s, TRCI_DS_TGT_TOK, t->tgt_tok, nk);
    trci_hash_rows(&s, TRCI_DS_TGT_LOGP, t->tgt_logp, nk);
    if (m->n_exit) trci_hash_rows(&s, TRCI_DS_EXIT, t->exit_score, nk * m->n_exit);
    return finish(&s);
}
