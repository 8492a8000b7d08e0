/*
 * trc_mem.c -- the in-memory trace: allocation, the builder and the accessors.
 *
 * Design.  A trace is a handful of flat arrays mirroring the schema datasets
 * (trc_impl.h).  Both ways of obtaining one -- trc_load() and
 * trc_builder_finish() -- end in trci_validate(), so a trc_trace seen by a caller
 * always satisfies every rule listed in traces/README.md ("Validation"), and the
 * accessors below do no checking beyond argument ranges.
 *
 * Validation (trci_validate) lives in trc_validate.c.
 *
 * The builder grows one vector per array and hands the buffers to the trace on
 * finish (no copy).  Misuse (trees before a prompt, too many/few trees) is sticky:
 * the first such error is reported by trc_builder_finish().
 */
#include "trc_impl.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

int trci_err(trc_err *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    for (char *c = err->msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    err->code = code;
    return code;
}

void trci_strcpy(char *dst, size_t cap, const char *src)
{
    if (cap == 0) return;
    size_t n = 0;
    if (src)
        while (n + 1 < cap && src[n])
            n++;
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}

static void *xmalloc(size_t n, size_t esz)
{
    if (n == 0) n = 1; /* never NULL for an empty array: pointer arithmetic stays defined */
    if (n > SIZE_MAX / esz) return NULL;
    return calloc(n, esz);
}

static trc_trace *trace_alloc(const trc_meta *meta, int64_t n_prompt_tok, int nodes)
{
    int64_t P = meta->n_prompts, T = meta->n_trees, N = meta->n_nodes;
    int64_t K = meta->k, E = meta->n_exit;
    if (P < 0 || T < 0 || N < 0 || K < 1 || E < 0 || n_prompt_tok < 0) return NULL;
    if ((uint64_t)N > (uint64_t)(SIZE_MAX / 8) / (uint64_t)(K * (E + 1))) return NULL;
    trc_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (trci_memo_init(t) != 0) {
        free(t);
        return NULL;
    }
    t->meta = *meta;
    t->n_prompt_tok = n_prompt_tok;
    size_t nk = (size_t)N * (size_t)K;
    t->prompt_off = xmalloc((size_t)P + 1, sizeof(int64_t));
    t->prompt_tok = xmalloc((size_t)n_prompt_tok, sizeof(int32_t));
    t->ref_off = xmalloc((size_t)P + 1, sizeof(int64_t));
    t->ref_tok = xmalloc((size_t)T, sizeof(int32_t));
    t->node_off = xmalloc((size_t)T + 1, sizeof(int64_t));
    if (!nodes) {
        if (!t->prompt_off || !t->prompt_tok || !t->ref_off || !t->ref_tok || !t->node_off) {
            trc_free(t);
            return NULL;
        }
        return t;
    }
    t->parent = xmalloc((size_t)N, sizeof(int32_t));
    t->token = xmalloc((size_t)N, sizeof(int32_t));
    t->depth = xmalloc((size_t)N, sizeof(uint8_t));
    t->first_child = xmalloc((size_t)N, sizeof(int32_t));
    t->next_sibling = xmalloc((size_t)N, sizeof(int32_t));
    t->draft_tok = xmalloc(nk, sizeof(int32_t));
    t->draft_logp = xmalloc(nk, sizeof(float));
    t->tgt_tok = xmalloc(nk, sizeof(int32_t));
    t->tgt_logp = xmalloc(nk, sizeof(float));
    t->exit_score = E ? xmalloc(nk * (size_t)E, sizeof(float)) : NULL;
    if (!t->prompt_off || !t->prompt_tok || !t->ref_off || !t->ref_tok || !t->node_off ||
        !t->parent || !t->token || !t->depth || !t->first_child || !t->next_sibling ||
        !t->draft_tok || !t->draft_logp || !t->tgt_tok || !t->tgt_logp || (E && !t->exit_score)) {
        trc_free(t);
        return NULL;
    }
    return t;
}

trc_trace *trci_trace_alloc(const trc_meta *meta, int64_t n_prompt_tok)
{
    return trace_alloc(meta, n_prompt_tok, 1);
}

trc_trace *trci_trace_alloc_resident(const trc_meta *meta, int64_t n_prompt_tok)
{
    return trace_alloc(meta, n_prompt_tok, 0);
}

int trci_memo_init(trc_trace *t)
{
    if (pthread_mutex_init(&t->memo_lock, NULL) != 0) return -1;
    t->memo_ok = 1;
    return 0;
}

const void *trc_memo(const trc_trace *ct, const char *key,
                     void *(*make)(const trc_trace *t, void *arg), void *arg,
                     void (*free_fn)(void *obj))
{
    if (!ct || !key || !make || !ct->memo_ok) return NULL;
    trc_trace *t = (trc_trace *)(uintptr_t)ct; /* the memo is the mutable part */
    void *obj = NULL;
    pthread_mutex_lock(&t->memo_lock);
    int i = 0;
    while (i < t->n_memo && strcmp(t->memo[i].key, key) != 0)
        i++;
    if (i < t->n_memo) {
        obj = t->memo[i].obj;
    } else if (t->n_memo < TRC_MEMO_MAX && (obj = make(ct, arg)) != NULL) {
        t->memo[i].key = key;
        t->memo[i].obj = obj;
        t->memo[i].free_fn = free_fn;
        t->n_memo++;
    }
    pthread_mutex_unlock(&t->memo_lock);
    return obj;
}

void trc_free(trc_trace *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_memo; i++)
        if (t->memo[i].free_fn) t->memo[i].free_fn(t->memo[i].obj);
    if (t->memo_ok) pthread_mutex_destroy(&t->memo_lock);
    trci_lazy_free(t);
    free(t->prompt_off);
    free(t->prompt_tok);
    free(t->ref_off);
    free(t->ref_tok);
    free(t->node_off);
    free(t->parent);
    free(t->token);
    free(t->depth);
    free(t->first_child);
    free(t->next_sibling);
    free(t->draft_tok);
    free(t->draft_logp);
    free(t->tgt_tok);
    free(t->tgt_logp);
    free(t->exit_score);
    free(t);
}

/* -------------------------------------------------------------- accessors */

const trc_meta *trc_get_meta(const trc_trace *t)
{
    return &t->meta;
}

uint64_t trc_checksum(const trc_trace *t)
{
    return t->checksum;
}

size_t trci_node_bytes(const trc_meta *m, int64_t n)
{
    size_t N = (size_t)n, nk = N * (size_t)m->k;
    return N * (4 * 4 + 1) + nk * 16 + nk * (size_t)m->n_exit * 4;
}

size_t trc_bytes(const trc_trace *t)
{
    const trc_meta *m = &t->meta;
    size_t P = (size_t)m->n_prompts, T = (size_t)m->n_trees;
    size_t resident =
        sizeof *t + 2 * (P + 1) * 8 + (size_t)t->n_prompt_tok * 4 + T * 4 + (T + 1) * 8;
    if (t->lazy) return resident + trci_lazy_bytes(t);
    return resident + trci_node_bytes(m, m->n_nodes);
}

int32_t trc_prompt(const trc_trace *t, int32_t p, const int32_t **tokens)
{
    if (p < 0 || p >= t->meta.n_prompts) {
        if (tokens) *tokens = NULL;
        return 0;
    }
    if (tokens) *tokens = t->prompt_tok + t->prompt_off[p];
    return (int32_t)(t->prompt_off[p + 1] - t->prompt_off[p]);
}

int32_t trc_ref(const trc_trace *t, int32_t p, const int32_t **tokens)
{
    if (p < 0 || p >= t->meta.n_prompts) {
        if (tokens) *tokens = NULL;
        return 0;
    }
    if (tokens) *tokens = t->ref_tok + t->ref_off[p];
    return (int32_t)(t->ref_off[p + 1] - t->ref_off[p]);
}

int trc_tree_get(const trc_trace *t, int32_t p, int32_t pos, trc_tree *out)
{
    if (p < 0 || p >= t->meta.n_prompts || pos < 0 || pos >= t->ref_off[p + 1] - t->ref_off[p])
        return TRC_E_ARG;
    int64_t tr = t->ref_off[p] + pos, b = t->node_off[tr];
    int64_t K = t->meta.k, E = t->meta.n_exit;
    out->n = (int32_t)(t->node_off[tr + 1] - b);
    out->k = (int32_t)K;
    out->n_exit = (int32_t)E;
    /* the rows: the prompt's block of a lazy trace (which the caller
     * holds), else the whole arrays */
    trci_nodes all;
    const trci_nodes *w = t->lazy ? trci_lazy_window(t, p) : NULL;
    if (!t->lazy) {
        trci_nodes_all(t, &all);
        w = &all;
    }
    if (!w) return TRC_E_ARG;
    b -= w->base;
    out->parent = w->parent + b;
    out->token = w->token + b;
    out->depth = w->depth + b;
    out->first_child = w->first_child + b;
    out->next_sibling = w->next_sibling + b;
    out->draft_tok = w->draft_tok + b * K;
    out->draft_logp = w->draft_logp + b * K;
    out->tgt_tok = w->tgt_tok + b * K;
    out->tgt_logp = w->tgt_logp + b * K;
    out->exit_score = E ? w->exit_score + b * E * K : NULL;
    return TRC_OK;
}

int32_t trc_tree_child(const trc_tree *tr, int32_t node, int32_t token)
{
    if (node < 0 || node >= tr->n) return -1;
    for (int32_t v = tr->first_child[node]; v >= 0; v = tr->next_sibling[v])
        if (tr->token[v] == token) return v;
    return -1;
}

/* ---------------------------------------------------------------- builder */

typedef struct vec {
    void *p;
    size_t n, cap; /* elements */
} vec;

/* Room for cap elements in all (a no-op when there is).  0 or TRC_E_NOMEM. */
static int vec_reserve(vec *v, size_t esz, size_t cap)
{
    if (cap <= v->cap) return TRC_OK;
    if (cap > SIZE_MAX / esz) return TRC_E_NOMEM;
    void *q = realloc(v->p, cap * esz);
    if (!q) return TRC_E_NOMEM;
    v->p = q;
    v->cap = cap;
    return TRC_OK;
}

static int vec_push(vec *v, size_t esz, const void *src, size_t count)
{
    if (count == 0) return TRC_OK;
    if (count > SIZE_MAX / esz - v->n) return TRC_E_NOMEM;
    if (v->n + count > v->cap) {
        size_t cap = v->cap ? v->cap : 64;
        while (cap < v->n + count)
            cap = cap > SIZE_MAX / 2 / esz ? v->n + count : cap * 2;
        if (vec_reserve(v, esz, cap) != TRC_OK) return TRC_E_NOMEM;
    }
    if (src)
        memcpy((char *)v->p + v->n * esz, src, count * esz);
    else
        memset((char *)v->p + v->n * esz, 0, count * esz);
    v->n += count;
    return TRC_OK;
}

/* Hands the buffer over (at least one element, so never NULL; room reserved
 * beyond the elements is given back); the vec is emptied. */
static void *vec_take(vec *v, size_t esz)
{
    void *p = v->p;
    if (p && v->n && v->n < v->cap) {
        void *q = realloc(p, v->n * esz);
        if (q) p = q;
    }
    if (!p) p = calloc(1, esz);
    v->p = NULL;
    v->n = v->cap = 0;
    return p;
}

enum {
    V_POFF,
    V_PTOK,
    V_ROFF,
    V_RTOK,
    V_NOFF,
    V_PAR,
    V_TOK,
    V_DEP,
    V_DTOK,
    V_DLP,
    V_TTOK,
    V_TLP,
    V_EXIT,
    V_COUNT
};

struct trc_builder {
    trc_meta meta;
    vec v[V_COUNT];
    int64_t trees_due; /* trees still owed to the current prompt */
    int code;          /* first misuse, sticky */
    char msg[256];
};

trc_builder *trc_builder_new(const trc_meta *meta)
{
    if (!meta || meta->k < 1 || meta->k > TRC_MAX_K || meta->n_exit < 0 ||
        meta->n_exit > TRC_MAX_EXIT)
        return NULL;
    trc_builder *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->meta = *meta;
    b->meta.version = TRC_VERSION;
    for (int e = b->meta.n_exit; e < TRC_MAX_EXIT; e++)
        b->meta.exit_layers[e] = 0;
    b->meta.target[TRC_NAME_CAP - 1] = b->meta.draft[TRC_NAME_CAP - 1] = '\0';
    b->meta.tokenizer[TRC_NAME_CAP - 1] = '\0';
    b->meta.source[sizeof b->meta.source - 1] = '\0';
    b->meta.n_prompts = 0;
    b->meta.n_trees = b->meta.n_nodes = 0;
    int64_t zero = 0;
    if (vec_push(&b->v[V_POFF], 8, &zero, 1) || vec_push(&b->v[V_ROFF], 8, &zero, 1) ||
        vec_push(&b->v[V_NOFF], 8, &zero, 1)) {
        trc_builder_free(b);
        return NULL;
    }
    return b;
}

void trc_builder_free(trc_builder *b)
{
    if (!b) return;
    for (int i = 0; i < V_COUNT; i++)
        free(b->v[i].p);
    free(b);
}

int trci_builder_reserve(trc_builder *b, int64_t prompt_tok, int64_t trees, int64_t nodes)
{
    const uint64_t KE = (uint64_t)b->meta.k * (uint64_t)(b->meta.n_exit + 1);
    if (prompt_tok < 0 || trees < 0 || nodes < 0 || (uint64_t)nodes > SIZE_MAX / 8 / KE)
        return TRC_E_ARG;
    size_t n = (size_t)nodes, nk = n * (size_t)b->meta.k, ne = nk * (size_t)b->meta.n_exit;
    vec *v = b->v;
    if (vec_reserve(&v[V_PTOK], 4, v[V_PTOK].n + (size_t)prompt_tok) ||
        vec_reserve(&v[V_RTOK], 4, v[V_RTOK].n + (size_t)trees) ||
        vec_reserve(&v[V_NOFF], 8, v[V_NOFF].n + (size_t)trees) ||
        vec_reserve(&v[V_PAR], 4, v[V_PAR].n + n) || vec_reserve(&v[V_TOK], 4, v[V_TOK].n + n) ||
        vec_reserve(&v[V_DEP], 1, v[V_DEP].n + n) || vec_reserve(&v[V_DTOK], 4, v[V_DTOK].n + nk) ||
        vec_reserve(&v[V_DLP], 4, v[V_DLP].n + nk) ||
        vec_reserve(&v[V_TTOK], 4, v[V_TTOK].n + nk) ||
        vec_reserve(&v[V_TLP], 4, v[V_TLP].n + nk) ||
        (ne && vec_reserve(&v[V_EXIT], 4, v[V_EXIT].n + ne)))
        return TRC_E_NOMEM;
    return TRC_OK;
}

static int misuse(trc_builder *b, int code, const char *what)
{
    if (!b->code) {
        b->code = code;
        trci_strcpy(b->msg, sizeof b->msg, what);
    }
    return code;
}

int trc_builder_add_prompt(trc_builder *b, const int32_t *prompt, int32_t prompt_len,
                           const int32_t *ref, int32_t ref_len)
{
    if (b->code) return b->code;
    if (b->trees_due) return misuse(b, TRC_E_ARG, "add_prompt before the previous prompt's trees");
    if (prompt_len < 0 || ref_len < 1 || (prompt_len > 0 && !prompt) || !ref)
        return misuse(b, TRC_E_ARG, "add_prompt: bad lengths or NULL tokens");
    if (b->meta.n_prompts == INT32_MAX) return misuse(b, TRC_E_ARG, "too many prompts");
    int64_t poff = (int64_t)b->v[V_PTOK].n + prompt_len;
    int64_t roff = (int64_t)b->v[V_RTOK].n + ref_len;
    if (vec_push(&b->v[V_PTOK], 4, prompt, (size_t)prompt_len) ||
        vec_push(&b->v[V_RTOK], 4, ref, (size_t)ref_len) || vec_push(&b->v[V_POFF], 8, &poff, 1) ||
        vec_push(&b->v[V_ROFF], 8, &roff, 1))
        return misuse(b, TRC_E_NOMEM, "out of memory");
    b->meta.n_prompts++;
    b->trees_due = ref_len;
    return TRC_OK;
}

int trc_builder_add_tree(trc_builder *b, int32_t n, const int32_t *parent, const int32_t *token,
                         const int32_t *draft_tok, const float *draft_logp, const int32_t *tgt_tok,
                         const float *tgt_logp, const float *exit_score)
{
    if (b->code) return b->code;
    if (b->trees_due <= 0) return misuse(b, TRC_E_ARG, "add_tree without a prompt owing trees");
    if (n < 1 || !parent || !token || !draft_tok || !draft_logp || !tgt_tok || !tgt_logp ||
        (b->meta.n_exit > 0 && !exit_score))
        return misuse(b, TRC_E_ARG, "add_tree: n < 1 or a NULL array");
    size_t nk = (size_t)n * (size_t)b->meta.k;
    size_t nd = b->v[V_DEP].n;
    if (vec_push(&b->v[V_PAR], 4, parent, (size_t)n) ||
        vec_push(&b->v[V_TOK], 4, token, (size_t)n) || vec_push(&b->v[V_DEP], 1, NULL, (size_t)n) ||
        vec_push(&b->v[V_DTOK], 4, draft_tok, nk) || vec_push(&b->v[V_DLP], 4, draft_logp, nk) ||
        vec_push(&b->v[V_TTOK], 4, tgt_tok, nk) || vec_push(&b->v[V_TLP], 4, tgt_logp, nk) ||
        (b->meta.n_exit > 0 && vec_push(&b->v[V_EXIT], 4, exit_score, nk * (size_t)b->meta.n_exit)))
        return misuse(b, TRC_E_NOMEM, "out of memory");
    /* Depths follow the parents; a bad parent leaves 0 for validation to report. */
    uint8_t *dep = (uint8_t *)b->v[V_DEP].p + nd;
    for (int32_t i = 1; i < n; i++)
        if (parent[i] >= 0 && parent[i] < i)
            dep[i] = dep[parent[i]] < UINT8_MAX ? (uint8_t)(dep[parent[i]] + 1) : UINT8_MAX;
    b->meta.n_nodes += n;
    b->meta.n_trees++;
    int64_t noff = b->meta.n_nodes;
    if (vec_push(&b->v[V_NOFF], 8, &noff, 1)) return misuse(b, TRC_E_NOMEM, "out of memory");
    b->trees_due--;
    return TRC_OK;
}

int trc_builder_finish(trc_builder *b, const char *name, trc_trace **out, trc_err *err)
{
    *out = NULL;
    if (!name) name = "builder";
    if (!b) return trci_err(err, TRC_E_NOMEM, "%s: no builder (out of memory)", name);
    int rc;
    if (b->code) {
        rc = trci_err(err, b->code, "%s: builder: %s", name, b->msg);
    } else if (b->trees_due) {
        rc = trci_err(err, TRC_E_ARG, "%s: builder: prompt %d still owes %lld trees", name,
                      b->meta.n_prompts - 1, (long long)b->trees_due);
    } else {
        trc_trace *t = calloc(1, sizeof *t);
        if (t && trci_memo_init(t) != 0) {
            free(t);
            t = NULL;
        }
        if (!t) {
            rc = trci_err(err, TRC_E_NOMEM, "%s: out of memory", name);
        } else {
            t->meta = b->meta;
            t->n_prompt_tok = (int64_t)b->v[V_PTOK].n;
            t->prompt_off = vec_take(&b->v[V_POFF], 8);
            t->prompt_tok = vec_take(&b->v[V_PTOK], 4);
            t->ref_off = vec_take(&b->v[V_ROFF], 8);
            t->ref_tok = vec_take(&b->v[V_RTOK], 4);
            t->node_off = vec_take(&b->v[V_NOFF], 8);
            t->parent = vec_take(&b->v[V_PAR], 4);
            t->token = vec_take(&b->v[V_TOK], 4);
            t->depth = vec_take(&b->v[V_DEP], 1);
            t->draft_tok = vec_take(&b->v[V_DTOK], 4);
            t->draft_logp = vec_take(&b->v[V_DLP], 4);
            t->tgt_tok = vec_take(&b->v[V_TTOK], 4);
            t->tgt_logp = vec_take(&b->v[V_TLP], 4);
            t->exit_score = b->meta.n_exit ? vec_take(&b->v[V_EXIT], 4) : NULL;
            size_t nn = (size_t)(b->meta.n_nodes ? b->meta.n_nodes : 1);
            t->first_child = malloc(nn * sizeof(int32_t));
            t->next_sibling = malloc(nn * sizeof(int32_t));
            if (!t->prompt_off || !t->prompt_tok || !t->ref_off || !t->ref_tok || !t->node_off ||
                !t->parent || !t->token || !t->depth || !t->draft_tok || !t->draft_logp ||
                !t->tgt_tok || !t->tgt_logp || !t->first_child || !t->next_sibling ||
                (b->meta.n_exit && !t->exit_score)) {
                rc = trci_err(err, TRC_E_NOMEM, "%s: out of memory", name);
            } else {
                rc = trci_validate(t, name, err);
            }
            if (rc)
                trc_free(t);
            else
                *out = t;
        }
    }
    trc_builder_free(b);
    return rc;
}
