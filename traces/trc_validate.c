/*
 * trc_validate.c -- trci_validate(), the one validation routine shared by the
 * HDF5 reader and the builder (trc_mem.c): every rule of traces/README.md
 * ("Validation"), the tree links and the content checksum.
 *
 * Invariants established by trci_validate():
 *   - offsets start at 0, never decrease and end at their dataset's length;
 *     every prompt has >= 1 reference token; every tree has 1..M nodes;
 *   - in every tree, node 0 is the root (parent -1, depth 0), parent[i] < i,
 *     depth[i] = depth[parent[i]] + 1 <= D, no two children share a token;
 *   - the reference path is recorded to depth min(D, L_p - pos) and the target's
 *     top-1 along it is the next reference token; the root token is the previous
 *     reference token (or the last prompt token);
 *   - tokens lie in [0, vocab); log-probs are finite, <= TRCI_LOGP_EPS and
 *     non-increasing within a node; candidate lists hold distinct tokens; exit
 *     scores are finite.
 * Cost: O(N*K) plus O(c log c) per parent with c > 16 children; one pass per
 * array, memory bound.  Tree links are filled in the same pass.
 *
 * Parallel validation.  After the header and the offsets (cheap, checked
 * first: every other check indexes through the offsets), the remaining checks
 * and the checksum are independent: each reads its own arrays, and only the
 * tree check writes (the tree links, which nothing else reads).  They run as
 * tasks on up to VAL_MAX_THREADS threads (the caller's included), large arrays
 * cut into ranges.  Each task stops at its first failure and keeps its own
 * message; the error reported is that of the first failing task in the
 * sequential order (checks in the order below, ranges in index order), which
 * is exactly the error the one-thread pass reports, so results and messages do
 * not depend on the thread count.  The checksum is computed alongside and
 * dropped when a check fails.
 *
 */
#include "trc_impl.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- validation */

#define VAL_BLOCK 1024         /* entries per branch-free scan block */
#define VAL_MAX_THREADS 16     /* validation threads, the caller's included */
#define VAL_RANGES 8           /* most ranges one check is cut into */
#define VAL_MIN_RANGE 65536    /* fewest nodes (or entries) per range */
#define VAL_MIN_PARALLEL 4194304 /* fewer candidate entries: one thread */

/* Locates global tree index tr as (prompt, pos) for messages. */
static void tree_where(const trc_trace *t, int64_t tr, int32_t *p, int64_t *pos)
{
    int32_t lo = 0, hi = t->meta.n_prompts - 1;
    while (lo < hi) { /* last prompt whose ref_off <= tr */
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (t->ref_off[mid] <= tr)
            lo = mid;
        else
            hi = mid - 1;
    }
    *p = lo;
    *pos = tr - t->ref_off[lo];
}

/* Tree holding global node row i (node_off is validated before this is used). */
static int64_t node_tree(const trc_trace *t, int64_t i)
{
    int64_t lo = 0, hi = t->meta.n_trees - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (t->node_off[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int node_err(const trc_trace *t, trc_err *err, int code, const char *name, const char *ds,
                    int64_t i, const char *what)
{
    int64_t tr = node_tree(t, i), pos;
    int32_t p;
    tree_where(t, tr, &p, &pos);
    return trci_err(err, code, "%s: %s: node %lld (prompt %d, pos %lld, tree node %lld): %s", name,
                    ds, (long long)i, p, (long long)pos, (long long)(i - t->node_off[tr]), what);
}

static int check_header(const trc_meta *m, const char *name, trc_err *err)
{
    if (m->vocab < 1)
        return trci_err(err, TRC_E_DATA, "%s: @vocab: must be >= 1 (got %d)", name, m->vocab);
    if (m->k < 1 || m->k > TRC_MAX_K || m->k > m->vocab)
        return trci_err(err, TRC_E_DATA, "%s: @k: must be in [1, min(%d, vocab %d)] (got %d)", name,
                        TRC_MAX_K, m->vocab, m->k);
    if (m->max_depth < 1 || m->max_depth > TRC_MAX_DEPTH)
        return trci_err(err, TRC_E_DATA, "%s: @max_depth: must be in [1, %d] (got %d)", name,
                        TRC_MAX_DEPTH, m->max_depth);
    if (m->max_nodes < m->max_depth + 1)
        return trci_err(err, TRC_E_DATA,
                        "%s: @max_nodes: must be >= max_depth + 1 = %d to hold the reference "
                        "path (got %d)",
                        name, m->max_depth + 1, m->max_nodes);
    if (m->target_layers < 1)
        return trci_err(err, TRC_E_DATA, "%s: @target_layers: must be >= 1 (got %d)", name,
                        m->target_layers);
    if (m->n_exit < 0 || m->n_exit > TRC_MAX_EXIT)
        return trci_err(err, TRC_E_DATA, "%s: @exit_layers: %d layers, at most %d allowed", name,
                        m->n_exit, TRC_MAX_EXIT);
    for (int e = 0; e < m->n_exit; e++) {
        int32_t l = m->exit_layers[e];
        if (l < 1 || l >= m->target_layers)
            return trci_err(err, TRC_E_DATA,
                            "%s: @exit_layers: layer %d (index %d) not in [1, target_layers %d)",
                            name, l, e, m->target_layers);
        if (e > 0 && l <= m->exit_layers[e - 1])
            return trci_err(err, TRC_E_DATA,
                            "%s: @exit_layers: not strictly ascending at index %d (%d after %d)",
                            name, e, l, m->exit_layers[e - 1]);
    }
    if (m->n_prompts < 1) return trci_err(err, TRC_E_DATA, "%s: /prompts/offset: no prompts", name);
    return TRC_OK;
}

static int check_offsets(const int64_t *off, int64_t n, int64_t total, int min_len, int64_t max_len,
                         const char *name, const char *ds, const char *unit, trc_err *err)
{
    if (off[0] != 0)
        return trci_err(err, TRC_E_DATA, "%s: %s: first offset is %lld, expected 0", name, ds,
                        (long long)off[0]);
    for (int64_t i = 0; i < n; i++) {
        int64_t len = off[i + 1] - off[i];
        if (off[i + 1] < off[i])
            return trci_err(err, TRC_E_DATA, "%s: %s: decreases at index %lld (%lld after %lld)",
                            name, ds, (long long)(i + 1), (long long)off[i + 1], (long long)off[i]);
        if (len < min_len || len > max_len)
            return trci_err(err, TRC_E_DATA, "%s: %s: entry %lld has %lld %s, expected %d..%lld",
                            name, ds, (long long)i, (long long)len, unit, min_len,
                            (long long)max_len);
    }
    if (off[n] != total)
        return trci_err(err, TRC_E_DATA,
                        "%s: %s: final offset %lld does not match the %lld %s in the data", name,
                        ds, (long long)off[n], (long long)total, unit);
    return TRC_OK;
}

/* Token range check; stride 0 for per-prompt data, else entries per node (1 for
 * /nodes/token, K for candidate lists). */
static int check_tokens(const trc_trace *t, const int32_t *tok, int64_t n, int64_t base,
                        const char *name, const char *ds, int stride, trc_err *err)
{
    int32_t V = t->meta.vocab;
    int64_t i = 0;
    /* blocks scanned without branches (vectorised); the block holding a bad
     * token is then scanned again below to name it */
    for (; i + VAL_BLOCK <= n; i += VAL_BLOCK) {
        uint32_t bad = 0;
        for (int64_t j = i; j < i + VAL_BLOCK; j++)
            bad |= (uint32_t)tok[j] >= (uint32_t)V;
        if (bad) break;
    }
    for (; i < n; i++) {
        if (tok[i] >= 0 && tok[i] < V) continue;
        if (!stride)
            return trci_err(err, TRC_E_DATA, "%s: %s: token %d at index %lld out of range [0, %d)",
                            name, ds, tok[i], (long long)i, V);
        char what[128];
        if (stride == 1)
            snprintf(what, sizeof what, "token %d out of range [0, %d)", tok[i], V);
        else
            snprintf(what, sizeof what, "token %d out of range [0, %d) at candidate %d", tok[i], V,
                     (int)(i % stride));
        return node_err(t, err, TRC_E_DATA, name, ds, base + i / stride, what);
    }
    return TRC_OK;
}

/* Nonzero when row[0..K) holds a value check_logp rejects (branch-free). */
static inline int logp_row_bad(const float *row, int K)
{
    int bad = 0;
    for (int j = 0; j < K; j++)
        bad |= !(row[j] > -INFINITY && row[j] <= TRCI_LOGP_EPS); /* NaN, inf, > eps */
    for (int j = 1; j < K; j++)
        bad |= row[j] > row[j - 1];
    return bad;
}

/* Rows [i0, i1) of a log-prob array whose row 0 is the trace's row base. */
static int check_logp(const trc_trace *t, const float *lp, int64_t i0, int64_t i1, int64_t base,
                      const char *name, const char *ds, trc_err *err)
{
    int K = t->meta.k;
    char what[160];
    int64_t i = i0;
    if (K == 8) { /* the common K, unrolled by the compiler */
        for (; i < i1 && !logp_row_bad(lp + i * 8, 8); i++)
            ;
    } else {
        for (; i < i1 && !logp_row_bad(lp + i * K, K); i++)
            ;
    }
    for (; i < i1; i++) {
        const float *row = lp + i * K;
        for (int j = 0; j < K; j++) {
            float v = row[j];
            if (!isfinite(v)) {
                snprintf(what, sizeof what, "log-prob %s at candidate %d",
                         isnan(v) ? "NaN" : "infinite", j);
                return node_err(t, err, TRC_E_DATA, name, ds, base + i, what);
            }
            if (v > TRCI_LOGP_EPS) {
                snprintf(what, sizeof what, "log-prob %g > 0 at candidate %d", (double)v, j);
                return node_err(t, err, TRC_E_DATA, name, ds, base + i, what);
            }
            if (j > 0 && v > row[j - 1]) {
                snprintf(what, sizeof what,
                         "log-probs not sorted: candidate %d (%g) above candidate %d (%g)", j,
                         (double)v, j - 1, (double)row[j - 1]);
                return node_err(t, err, TRC_E_DATA, name, ds, base + i, what);
            }
        }
    }
    return TRC_OK;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Returns a token occurring twice in v[0..n), or -1.  scratch holds n entries.
 * Short lists (the common case: K candidates, a few children) first go through a
 * 256-bin bit filter, so the quadratic scan runs only when two tokens share a bin
 * (~10% of rows for K = 8); long lists are sorted. */
static int32_t find_dup(const int32_t *v, int n, int32_t *scratch)
{
    if (n <= 16) {
        if (n > 4) {
            uint64_t seen[4] = {0, 0, 0, 0};
            int clash = 0;
            for (int a = 0; a < n; a++) {
                uint32_t bin = ((uint32_t)v[a] * 0x9e3779b1u) >> 24;
                uint64_t bit = 1ull << (bin & 63);
                clash |= (seen[bin >> 6] & bit) != 0;
                seen[bin >> 6] |= bit;
            }
            if (!clash) return -1;
        }
        for (int a = 1; a < n; a++)
            for (int b = 0; b < a; b++)
                if (v[a] == v[b]) return v[a];
        return -1;
    }
    memcpy(scratch, v, (size_t)n * sizeof *v);
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_i32);
    for (int a = 1; a < n; a++)
        if (scratch[a] == scratch[a - 1]) return scratch[a];
    return -1;
}

static int check_candidates(const trc_trace *t, const int32_t *tok, int64_t i0, int64_t i1,
                            int64_t base, const char *name, const char *ds, int32_t *scratch,
                            trc_err *err)
{
    int K = t->meta.k;
    for (int64_t i = i0; i < i1; i++) {
        int32_t d = find_dup(tok + i * K, K, scratch);
        if (d >= 0) {
            char what[96];
            snprintf(what, sizeof what, "token %d listed twice among the top-%d", d, K);
            return node_err(t, err, TRC_E_DATA, name, ds, base + i, what);
        }
    }
    return TRC_OK;
}

/* The reference path of tree tr (prompt p, position pos), whose rows w holds
 * with their links made: from the root down to depth min(L - pos,
 * max_depth), each node's target top-1 is the next reference token and a
 * child carries it. */
static int check_ref_path(const trc_trace *t, const trci_nodes *w, int32_t p, int64_t pos,
                          int64_t tr, const char *name, trc_err *err)
{
    const trc_meta *m = &t->meta;
    int64_t b = t->node_off[tr], bl = b - w->base;
    const int32_t *tok = w->token + bl, *fc = w->first_child + bl, *ns = w->next_sibling + bl;
    const int32_t *top = w->tgt_tok + bl * m->k; /* target candidates of the tree's rows */
    const int32_t *ref = t->ref_tok + t->ref_off[p];
    int64_t L = t->ref_off[p + 1] - t->ref_off[p];
    int K = m->k;
    char what[200];
    int32_t depth_ref = (int32_t)(L - pos < m->max_depth ? L - pos : m->max_depth);
    int32_t u = 0;
    for (int32_t d = 0;; d++) {
        if (pos + d < L && top[u * K] != ref[pos + d]) {
            snprintf(what, sizeof what,
                     "target top-1 %d on the reference path (depth %d) differs from the "
                     "reference token %d",
                     top[u * K], d, ref[pos + d]);
            return node_err(t, err, TRC_E_DATA, name, "/nodes/target_tok", b + u, what);
        }
        if (d == depth_ref) break;
        int32_t v = fc[u];
        while (v >= 0 && tok[v] != ref[pos + d])
            v = ns[v];
        if (v < 0) {
            snprintf(what, sizeof what,
                     "reference path missing: no child with reference token %d (depth %d of "
                     "%d)",
                     ref[pos + d], d + 1, depth_ref);
            return node_err(t, err, TRC_E_DATA, name, "/nodes/token", b + u, what);
        }
        u = v;
    }
    return TRC_OK;
}

/* Structure, links, duplicates and the reference path of one tree, whose
 * rows w holds. */
static int check_tree(const trc_trace *t, const trci_nodes *w, int32_t p, int64_t pos, int64_t tr,
                      int32_t *scratch, const char *name, trc_err *err)
{
    const trc_meta *m = &t->meta;
    int64_t b = t->node_off[tr], bl = b - w->base;
    int32_t n = (int32_t)(t->node_off[tr + 1] - b);
    int32_t *par = w->parent + bl, *tok = w->token + bl;
    uint8_t *dep = w->depth + bl;
    int32_t *fc = w->first_child + bl, *ns = w->next_sibling + bl;
    const int32_t *ref = t->ref_tok + t->ref_off[p];
    char what[200];

    if (par[0] != -1) {
        snprintf(what, sizeof what, "root parent is %d, expected -1", par[0]);
        return node_err(t, err, TRC_E_DATA, name, "/nodes/parent", b, what);
    }
    if (dep[0] != 0) {
        snprintf(what, sizeof what, "root depth is %d, expected 0", dep[0]);
        return node_err(t, err, TRC_E_DATA, name, "/nodes/depth", b, what);
    }
    int32_t want_root = -1;
    if (pos > 0)
        want_root = ref[pos - 1];
    else if (t->prompt_off[p + 1] > t->prompt_off[p])
        want_root = t->prompt_tok[t->prompt_off[p + 1] - 1];
    if (want_root >= 0 && tok[0] != want_root) {
        snprintf(what, sizeof what, "root token %d, expected %d (the %s)", tok[0], want_root,
                 pos > 0 ? "previous reference token" : "last prompt token");
        return node_err(t, err, TRC_E_DATA, name, "/nodes/token", b, what);
    }
    for (int32_t i = 0; i < n; i++)
        fc[i] = ns[i] = -1;
    for (int32_t i = 1; i < n; i++) {
        if (par[i] < 0 || par[i] >= i) {
            snprintf(what, sizeof what, "parent %d not in [0, %d)", par[i], i);
            return node_err(t, err, TRC_E_DATA, name, "/nodes/parent", b + i, what);
        }
        if (dep[i] != dep[par[i]] + 1) {
            snprintf(what, sizeof what, "depth %d, expected parent's depth + 1 = %d", dep[i],
                     dep[par[i]] + 1);
            return node_err(t, err, TRC_E_DATA, name, "/nodes/depth", b + i, what);
        }
        if (dep[i] > m->max_depth) {
            snprintf(what, sizeof what, "depth %d exceeds max_depth %d", dep[i], m->max_depth);
            return node_err(t, err, TRC_E_DATA, name, "/nodes/depth", b + i, what);
        }
    }
    for (int32_t i = n - 1; i >= 1; i--) { /* children end up in index order */
        ns[i] = fc[par[i]];
        fc[par[i]] = i;
    }
    for (int32_t u = 0; u < n; u++) {
        int c = 0;
        for (int32_t v = fc[u]; v >= 0; v = ns[v])
            scratch[c++] = tok[v];
        int32_t d = find_dup(scratch, c, scratch + c);
        if (d >= 0) {
            snprintf(what, sizeof what, "two children carry token %d", d);
            return node_err(t, err, TRC_E_DATA, name, "/nodes/token", b + u, what);
        }
    }
    return check_ref_path(t, w, p, pos, tr, name, err);
}

/* ---- the parallel part of validation (see the file comment) ---- */

enum {
    VT_TOK_PROMPT, /* in the sequential order of the checks */
    VT_TOK_REF,
    VT_TOK_NODE,
    VT_TOK_DRAFT,
    VT_TOK_TGT,
    VT_LOGP_DRAFT,
    VT_LOGP_TGT,
    VT_EXIT,
    VT_CAND_DRAFT,
    VT_CAND_TGT,
    VT_TREES,
    VT_HASH
};

typedef struct vtask {
    int kind;
    int64_t i0, i1; /* range: entries, nodes or trees */
    int rc;
    trc_err err;
} vtask;

typedef struct vpool {
    trc_trace *t;
    trci_nodes w; /* the whole node arrays */
    const char *name;
    vtask *tasks;
    size_t n;
    size_t scratch_n; /* int32 entries of tree/candidate scratch per thread */
    atomic_size_t next;
    atomic_int nomem;
} vpool;

/* Exit scores [i0, i1) (flat indices into x, whose row 0 is the trace's row
 * base) must be finite. */
static int check_exit(const trc_trace *t, const float *x, int64_t i0, int64_t i1, int64_t base,
                      const char *name, trc_err *err)
{
    int64_t i = i0;
    for (; i + VAL_BLOCK <= i1; i += VAL_BLOCK) {
        int bad = 0;
        for (int64_t j = i; j < i + VAL_BLOCK; j++)
            bad |= !(x[j] > -INFINITY && x[j] < INFINITY);
        if (bad) break;
    }
    for (; i < i1; i++)
        if (!isfinite(x[i])) {
            const trc_meta *m = &t->meta;
            char what[96];
            int64_t per = (int64_t)m->n_exit * m->k;
            snprintf(what, sizeof what, "%s score at exit %d, candidate %d",
                     isnan(x[i]) ? "NaN" : "infinite", (int)(i % per / m->k), (int)(i % m->k));
            return node_err(t, err, TRC_E_DATA, name, "/nodes/exit_score", base + i / per, what);
        }
    return TRC_OK;
}

/* Trees [tr0, tr1) in global order; w holds their rows. */
static int check_trees(const trc_trace *t, const trci_nodes *w, int64_t tr0, int64_t tr1,
                       int32_t *scratch, const char *name, trc_err *err)
{
    if (tr0 >= tr1) return TRC_OK;
    int32_t p;
    int64_t pos;
    tree_where(t, tr0, &p, &pos);
    for (int64_t tr = tr0; tr < tr1; tr++) {
        while (tr >= t->ref_off[p + 1]) /* prompts hold >= 1 tree (offsets checked) */
            p++;
        int rc = check_tree(t, w, p, tr - t->ref_off[p], tr, scratch, name, err);
        if (rc) return rc;
    }
    return TRC_OK;
}

static void run_task(vpool *vp, vtask *k, int32_t *scratch)
{
    trc_trace *t = vp->t;
    const trci_nodes *w = &vp->w;
    const trc_meta *m = &t->meta;
    const char *name = vp->name;
    trc_err *e = &k->err;
    switch (k->kind) {
    case VT_TOK_PROMPT:
        k->rc = check_tokens(t, t->prompt_tok, t->n_prompt_tok, 0, name, "/prompts/tokens", 0, e);
        break;
    case VT_TOK_REF:
        k->rc = check_tokens(t, t->ref_tok, m->n_trees, 0, name, "/reference/tokens", 0, e);
        break;
    case VT_TOK_NODE:
        k->rc = check_tokens(t, w->token, m->n_nodes, 0, name, "/nodes/token", 1, e);
        break;
    case VT_TOK_DRAFT:
    case VT_TOK_TGT: {
        /* a range of nodes; check_tokens counts from the array start */
        const int32_t *a = k->kind == VT_TOK_DRAFT ? w->draft_tok : w->tgt_tok;
        const char *ds = k->kind == VT_TOK_DRAFT ? "/nodes/draft_tok" : "/nodes/target_tok";
        int64_t K = m->k;
        k->rc = TRC_OK;
        /* scan the range; on a hit, rerun from 0 up to it for the exact message */
        int32_t V = m->vocab;
        for (int64_t i = k->i0 * K; i < k->i1 * K; i++)
            if ((uint32_t)a[i] >= (uint32_t)V) {
                k->rc = check_tokens(t, a, i + 1, 0, name, ds, m->k, e);
                break;
            }
        break;
    }
    case VT_LOGP_DRAFT:
        k->rc = check_logp(t, w->draft_logp, k->i0, k->i1, 0, name, "/nodes/draft_logp", e);
        break;
    case VT_LOGP_TGT:
        k->rc = check_logp(t, w->tgt_logp, k->i0, k->i1, 0, name, "/nodes/target_logp", e);
        break;
    case VT_EXIT:
        k->rc = check_exit(t, w->exit_score, k->i0, k->i1, 0, name, e);
        break;
    case VT_CAND_DRAFT:
        k->rc = check_candidates(t, w->draft_tok, k->i0, k->i1, 0, name, "/nodes/draft_tok",
                                 scratch, e);
        break;
    case VT_CAND_TGT:
        k->rc =
            check_candidates(t, w->tgt_tok, k->i0, k->i1, 0, name, "/nodes/target_tok", scratch, e);
        break;
    case VT_TREES:
        k->rc = check_trees(t, w, k->i0, k->i1, scratch, name, e);
        break;
    case VT_HASH:
        t->checksum = trci_hash(t);
        k->rc = TRC_OK;
        break;
    }
}

static void *vworker(void *arg)
{
    vpool *vp = arg;
    int32_t *scratch = malloc(vp->scratch_n * sizeof *scratch);
    if (!scratch) {
        atomic_store(&vp->nomem, 1);
        return NULL;
    }
    for (;;) {
        size_t i = atomic_fetch_add(&vp->next, 1);
        if (i >= vp->n) break;
        run_task(vp, &vp->tasks[i], scratch);
    }
    free(scratch);
    return NULL;
}

static int val_threads(int64_t work)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cpus > 0 ? (int)(cpus < VAL_MAX_THREADS ? cpus : VAL_MAX_THREADS) : 1;
    if (work < VAL_MIN_PARALLEL) n = 1; /* small traces: threads cost more than they save */
    return n;
}

/* Appends tasks of kind covering [0, n) in ranges of at least min_range. */
static size_t add_ranges(vtask *tk, size_t at, int kind, int64_t n, int64_t min_range)
{
    int64_t parts = n / min_range;
    if (parts < 1) parts = 1;
    if (parts > VAL_RANGES) parts = VAL_RANGES;
    for (int64_t q = 0; q < parts; q++) {
        tk[at].kind = kind;
        tk[at].i0 = n * q / parts;
        tk[at].i1 = n * (q + 1) / parts;
        at++;
    }
    return at;
}

/* Header and offsets: checked first, every other check indexes through the
 * offsets. */
static int check_frame(const trc_trace *t, const char *name, trc_err *err)
{
    const trc_meta *m = &t->meta;
    int rc = check_header(m, name, err);
    if (rc) return rc;
    rc = check_offsets(t->prompt_off, m->n_prompts, t->n_prompt_tok, 0, INT32_MAX, name,
                       "/prompts/offset", "prompt tokens", err);
    if (!rc)
        rc = check_offsets(t->ref_off, m->n_prompts, m->n_trees, 1, INT32_MAX, name,
                           "/reference/offset", "reference tokens", err);
    if (!rc)
        rc = check_offsets(t->node_off, m->n_trees, m->n_nodes, 1, m->max_nodes, name,
                           "/trees/node_offset", "nodes", err);
    return rc;
}

void trci_nodes_all(const trc_trace *t, trci_nodes *w)
{
    *w = (trci_nodes){.base = 0,
                      .n = t->meta.n_nodes,
                      .parent = t->parent,
                      .token = t->token,
                      .depth = t->depth,
                      .first_child = t->first_child,
                      .next_sibling = t->next_sibling,
                      .draft_tok = t->draft_tok,
                      .draft_logp = t->draft_logp,
                      .tgt_tok = t->tgt_tok,
                      .tgt_logp = t->tgt_logp,
                      .exit_score = t->exit_score};
}

void trci_nodes_prompt(const trc_trace *t, int32_t p, trci_nodes *w)
{
    int64_t row0 = t->node_off[t->ref_off[p]], K = t->meta.k, E = t->meta.n_exit;
    *w = (trci_nodes){.base = row0,
                      .n = t->node_off[t->ref_off[p + 1]] - row0,
                      .parent = t->parent + row0,
                      .token = t->token + row0,
                      .depth = t->depth + row0,
                      .first_child = t->first_child + row0,
                      .next_sibling = t->next_sibling + row0,
                      .draft_tok = t->draft_tok + row0 * K,
                      .draft_logp = t->draft_logp + row0 * K,
                      .tgt_tok = t->tgt_tok + row0 * K,
                      .tgt_logp = t->tgt_logp + row0 * K,
                      .exit_score = E ? t->exit_score + row0 * K * E : NULL};
}

int trci_validate_resident(const trc_trace *t, const char *name, trc_err *err)
{
    int rc = check_frame(t, name, err);
    if (!rc)
        rc = check_tokens(t, t->prompt_tok, t->n_prompt_tok, 0, name, "/prompts/tokens", 0, err);
    if (!rc)
        rc = check_tokens(t, t->ref_tok, t->meta.n_trees, 0, name, "/reference/tokens", 0, err);
    return rc;
}

/* The node checks of trci_validate over one prompt's rows, in the same
 * order, on the calling thread. */
int trci_validate_prompt(const trc_trace *t, const trci_nodes *w, int32_t p, const char *name,
                         trc_err *err)
{
    const trc_meta *m = &t->meta;
    int64_t tr0 = t->ref_off[p], tr1 = t->ref_off[p + 1], n = w->n, b = w->base;
    int K = m->k;
    int32_t scratch_buf[2 * (TRC_MAX_K > 256 ? TRC_MAX_K : 256)];
    int32_t *scratch = scratch_buf, *heap = NULL;
    size_t need = 2 * (size_t)(m->max_nodes > K ? m->max_nodes : K);
    if (need > sizeof scratch_buf / sizeof *scratch_buf) {
        heap = malloc(need * sizeof *heap);
        if (!heap) return trci_err(err, TRC_E_NOMEM, "%s: out of memory while validating", name);
        scratch = heap;
    }
    int rc = check_tokens(t, w->token, n, b, name, "/nodes/token", 1, err);
    if (!rc) rc = check_tokens(t, w->draft_tok, n * K, b, name, "/nodes/draft_tok", K, err);
    if (!rc) rc = check_tokens(t, w->tgt_tok, n * K, b, name, "/nodes/target_tok", K, err);
    if (!rc) rc = check_logp(t, w->draft_logp, 0, n, b, name, "/nodes/draft_logp", err);
    if (!rc) rc = check_logp(t, w->tgt_logp, 0, n, b, name, "/nodes/target_logp", err);
    if (!rc && m->n_exit) rc = check_exit(t, w->exit_score, 0, n * m->n_exit * K, b, name, err);
    if (!rc)
        rc = check_candidates(t, w->draft_tok, 0, n, b, name, "/nodes/draft_tok", scratch, err);
    if (!rc) rc = check_candidates(t, w->tgt_tok, 0, n, b, name, "/nodes/target_tok", scratch, err);
    if (!rc) rc = check_trees(t, w, tr0, tr1, scratch, name, err);
    free(heap);
    return rc;
}

int trci_validate(trc_trace *t, const char *name, trc_err *err)
{
    const trc_meta *m = &t->meta;
    int rc = check_frame(t, name, err);
    if (rc) return rc;

    int32_t max_n = 1;
    for (int64_t tr = 0; tr < m->n_trees; tr++)
        if (t->node_off[tr + 1] - t->node_off[tr] > max_n)
            max_n = (int32_t)(t->node_off[tr + 1] - t->node_off[tr]);
    int64_t N = m->n_nodes, nk = N * m->k;
    vtask tk[4 + 8 * VAL_RANGES];
    memset(tk, 0, sizeof tk);
    size_t n = 0;
    tk[n++].kind = VT_HASH; /* the longest single task: first */
    tk[n++].kind = VT_TOK_PROMPT;
    tk[n++].kind = VT_TOK_REF;
    tk[n++].kind = VT_TOK_NODE;
    n = add_ranges(tk, n, VT_TOK_DRAFT, N, VAL_MIN_RANGE);
    n = add_ranges(tk, n, VT_TOK_TGT, N, VAL_MIN_RANGE);
    n = add_ranges(tk, n, VT_LOGP_DRAFT, N, VAL_MIN_RANGE);
    n = add_ranges(tk, n, VT_LOGP_TGT, N, VAL_MIN_RANGE);
    if (m->n_exit) n = add_ranges(tk, n, VT_EXIT, nk * m->n_exit, VAL_MIN_RANGE * 8);
    n = add_ranges(tk, n, VT_CAND_DRAFT, N, VAL_MIN_RANGE);
    n = add_ranges(tk, n, VT_CAND_TGT, N, VAL_MIN_RANGE);
    n = add_ranges(tk, n, VT_TREES, m->n_trees, VAL_MIN_RANGE / 16);
    vpool vp = {.t = t,
                .name = name,
                .tasks = tk,
                .n = n,
                .scratch_n = 2 * (size_t)(max_n > m->k ? max_n : m->k)};
    trci_nodes_all(t, &vp.w);
    atomic_init(&vp.next, 0);
    atomic_init(&vp.nomem, 0);
    int nt = val_threads(nk);
    pthread_t th[VAL_MAX_THREADS];
    int started = 0;
    for (int i = 1; i < nt; i++) {
        if (pthread_create(&th[started], NULL, vworker, &vp) != 0) break;
        started++;
    }
    vworker(&vp);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (atomic_load(&vp.nomem) || atomic_load(&vp.next) < n) {
        /* a thread could not start its scratch: finish what is left here */
        int32_t *scratch = malloc(vp.scratch_n * sizeof *scratch);
        if (!scratch)
            return trci_err(err, TRC_E_NOMEM, "%s: out of memory while validating", name);
        for (size_t i = atomic_fetch_add(&vp.next, 1); i < n; i = atomic_fetch_add(&vp.next, 1))
            run_task(&vp, &tk[i], scratch);
        free(scratch);
    }
    /* the first failure in the sequential order of the checks (the hash is
     * not a check; kinds sort in that order and ranges within a kind) */
    const vtask *first = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!tk[i].rc) continue;
        if (!first || tk[i].kind < first->kind ||
            (tk[i].kind == first->kind && tk[i].i0 < first->i0))
            first = &tk[i];
    }
    if (first) {
        if (err) *err = first->err;
        t->checksum = 0;
        return first->rc;
    }
    return TRC_OK;
}
