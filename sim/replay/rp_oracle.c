/*
 * rp_oracle.c -- trace-backed draft/target oracles; see rp_oracle.h for the
 * serving rules.  Cost per cycle is O(nodes built × K); no allocation after init.
 */
#include "rp_oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void bind(rp_oracle *o);

/* The stride of synthesised token ids: the integer nearest vocab times the
 * golden ratio's fraction (consecutive ids land far apart), moved up to the
 * first one coprime to vocab. */
static uint32_t synth_stride(uint32_t v)
{
    if (v < 3) return 1;
    uint32_t s = (uint32_t)((double)v * 0.6180339887498949 + 0.5);
    for (;; s = s + 1 < v ? s + 1 : 1) {
        uint32_t a = v, b = s;
        while (b) {
            uint32_t r = a % b;
            a = b;
            b = r;
        }
        if (a == 1) return s;
    }
}

int rp_synth_fit(const trc_trace *t, rp_synth_stats *st)
{
    memset(st, 0, sizeof *st);
    const trc_stats *ts = trc_get_stats(t); /* sums over the whole trace */
    if (!ts) return -1;
    st->k = ts->k;
    for (int32_t j = 0; j < ts->k; j++) {
        st->mean_logp[j] = ts->logp_sum[j];
        st->accept_pos[j] = (double)ts->accept_pos[j];
    }
    for (int32_t d = 0; d < TRC_MAX_DEPTH; d++) {
        st->depth_nodes[d] = ts->depth_nodes[d];
        for (int32_t j = 0; j < ts->k; j++)
            st->mean_logp_depth[d][j] = ts->logp_sum_depth[d][j];
    }
    st->accept_n = ts->accept_n;
    st->off_path_nodes = ts->off_path_nodes;
    int64_t deep_n = ts->deep_n, deep_top1 = ts->deep_top1, deep_in = ts->deep_in;
    for (int32_t j = 0; j < st->k; j++) {
        if (st->off_path_nodes > 0) {
            st->mean_logp[j] /= (double)st->off_path_nodes;
        } else {
            /* no off-path data at all: a geometric profile, halving per rank */
            st->mean_logp[j] = -(double)(j + 1) * log(2.0);
        }
    }
    for (int32_t d = 0; d < TRC_MAX_DEPTH; d++) {
        if (st->depth_nodes[d] == 0) continue;
        st->fitted_depths = d + 1;
        for (int32_t j = 0; j < st->k; j++)
            st->mean_logp_depth[d][j] /= (double)st->depth_nodes[d];
    }
    for (int32_t j = 0; j < st->k && st->accept_n > 0; j++)
        st->accept_pos[j] /= (double)st->accept_n;
    st->deep_top1 = deep_n ? (double)deep_top1 / (double)deep_n : 0.0;
    st->deep_inset = deep_n ? (double)deep_in / (double)deep_n : 0.0;
    return 0;
}

int rp_oracle_init(rp_oracle *o, const trc_trace *t, const rp_synth_stats *st, gsl_rng *rng,
                   int32_t cap)
{
    const trc_meta *m = trc_get_meta(t);
    memset(o, 0, sizeof *o);
    o->trace = t;
    o->stats = st;
    o->rng = rng;
    o->k = m->k;
    o->n_exit = m->n_exit;
    o->vocab = m->vocab;
    o->stride = synth_stride((uint32_t)m->vocab);
    rp_uniform_int_init(&o->vocab_draw, rng, (unsigned long)m->vocab);
    for (int32_t j = 0; j < m->k; j++) /* j < k <= vocab: no overflow before the modulo */
        o->stride_at[j] = (uint32_t)((uint64_t)j * o->stride % (uint64_t)m->vocab);
    /* the log-prob profile of each depth, as candidates hold it: the depth's
     * own; the pooled one where the depth had no off-path node; past the
     * fitted depths, the deepest row */
    o->prof_rows = st->fitted_depths > 0 ? st->fitted_depths : 1;
    for (int32_t d = 0; d < o->prof_rows; d++) {
        const double *src = d < st->fitted_depths && st->depth_nodes[d] > 0 ? st->mean_logp_depth[d]
                                                                            : st->mean_logp;
        for (int32_t j = 0; j < o->k && j < TRC_MAX_K; j++)
            o->prof[d][j] = (float)src[j];
    }
    o->cap = cap;
    o->cap_calls = cap + 8;
    o->tnode = malloc(sizeof(int32_t) * (size_t)cap);
    o->on_ref = malloc((size_t)cap);
    o->m_parent = malloc(sizeof(int32_t) * (size_t)cap);
    o->m_tok = malloc(sizeof(eng_token) * (size_t)cap);
    o->slot = malloc(sizeof(int32_t) * (size_t)cap);
    o->calls = malloc(sizeof(rp_call) * (size_t)o->cap_calls);
    if (!o->tnode || !o->on_ref || !o->m_parent || !o->m_tok || !o->slot || !o->calls) {
        rp_oracle_free(o);
        return -1;
    }
    bind(o);
    return 0;
}

void rp_oracle_free(rp_oracle *o)
{
    if (!o) return;
    free(o->tnode);
    free(o->on_ref);
    free(o->m_parent);
    free(o->m_tok);
    free(o->slot);
    free(o->calls);
    o->tnode = NULL;
    o->on_ref = NULL;
    o->m_parent = NULL;
    o->m_tok = NULL;
    o->calls = NULL;
}

/* Asks for the first rows of the recorded tree ahead of use.  The recorder
 * adds nodes best first, so a tree's first rows are those a policy is most
 * likely to walk, and the walk is a chain of dependent loads (a child lookup,
 * then the child's candidates) that would otherwise miss the cache one after
 * another on a large trace. */
static void prefetch_tree(const trc_tree *tr)
{
    enum { LINE = 64, NODES = 16 };
    size_t n = (size_t)(tr->n < NODES ? tr->n : NODES);
    size_t rows = n * (size_t)tr->k * sizeof(int32_t), links = n * sizeof(int32_t);
    for (size_t b = 0; b < rows; b += LINE) {
        __builtin_prefetch((const char *)tr->draft_tok + b);
        __builtin_prefetch((const char *)tr->draft_logp + b);
        __builtin_prefetch((const char *)tr->tgt_tok + b);
    }
    for (size_t b = 0; b < links; b += LINE) {
        __builtin_prefetch((const char *)tr->token + b);
        __builtin_prefetch((const char *)tr->first_child + b);
        __builtin_prefetch((const char *)tr->next_sibling + b);
    }
}

void rp_oracle_begin(rp_oracle *o, int32_t p, int32_t pos)
{
    trc_tree_get(o->trace, p, pos, &o->tree);
    prefetch_tree(&o->tree);
    const int32_t *prompt;
    o->prompt_len = trc_prompt(o->trace, p, &prompt);
    o->ref_len = trc_ref(o->trace, p, &o->ref);
    o->pos = pos;
    o->mapped = 0;
    o->tagged = 1;
    o->n_calls = 0;
}

/* Maps node i afresh from its parent's mapping and its token; ahead: fetch
 * the rows its expansion or verification reads next. */
static inline void map_node(rp_oracle *o, const eng_node *n, int32_t i, int ahead)
{
    o->m_parent[i] = n->parent;
    o->m_tok[i] = n->tok;
    if (i == 0) {
        o->tnode[0] = 0;
        o->on_ref[0] = 1;
        return;
    }
    int32_t par = n->parent;
    int32_t pt = o->tnode[par];
    int32_t tn = pt >= 0 ? trc_tree_child(&o->tree, pt, n->tok) : -1;
    o->tnode[i] = tn;
    if (tn >= 0 && ahead) { /* its rows are read next: fetch them while mapping the rest */
        __builtin_prefetch(o->tree.draft_tok + (size_t)tn * o->k);
        __builtin_prefetch(o->tree.draft_logp + (size_t)tn * o->k);
        __builtin_prefetch(o->tree.tgt_tok + (size_t)tn * o->k);
        __builtin_prefetch(o->tree.first_child + tn);
        if (o->n_exit > 0) /* read by exit_scores (pruning) */
            __builtin_prefetch(o->tree.exit_score + (size_t)tn * o->n_exit * o->k);
    }
    int32_t at = o->pos + n->depth - 1; /* reference index this node would emit */
    o->on_ref[i] = (uint8_t)(o->on_ref[par] && at < o->ref_len && o->ref[at] == n->tok);
}

/* Maps the nodes added since the last mapping (rp_oracle_map); with tag
 * set, tags each with its id (map_draft). */
static inline void map_new_tag(rp_oracle *o, const eng_tree *t, eng_node *tag)
{
    int32_t n = t->n_nodes < o->cap ? t->n_nodes : o->cap;
    /* one new node (a chain's step) is read at once: nothing to fetch ahead of */
    const int ahead = n - o->mapped > 1;
    for (int32_t i = o->mapped; i < n; i++) {
        map_node(o, &t->nodes[i], i, ahead);
        if (tag) tag[i].user = (uint32_t)i + 1;
    }
    o->mapped = n;
}

static inline void map_new(rp_oracle *o, const eng_tree *t)
{
    map_new_tag(o, t, NULL);
}

void rp_oracle_map(rp_oracle *o, const eng_tree *t)
{
    map_new(o, t);
}

/* Nodes i .. of a tree whose node i is no longer the node mapped as i (a
 * policy compacted the tree: ids renumbered, order kept).  A node keeps the
 * mapping of the node it was, found through its tag (user = the id it was
 * mapped as, plus 1; the draft calls tag) and checked: the slot it names
 * was mapped with the same token and with the node its parent was -- by
 * induction the same path, so the same recorded node.  Any other node is
 * mapped afresh.  Slots are rewritten in id order, and a node's old id is at
 * least its new one, so each slot is read before it is overwritten. */
static void translate(rp_oracle *o, const eng_tree *t, int32_t i)
{
    int32_t old = o->mapped, n = t->n_nodes < o->cap ? t->n_nodes : o->cap;
    for (int32_t v = i; v < n; v++) {
        const eng_node *x = &t->nodes[v];
        int32_t j = (int32_t)x->user - 1, p = x->parent;
        int32_t ps = p >= 0 && p < v ? (p < i ? p : o->slot[p]) : -1;
        if (o->tagged && j >= v && j < old && o->m_tok[j] == x->tok && ps >= 0 &&
            o->m_parent[j] == ps) {
            o->tnode[v] = o->tnode[j];
            o->on_ref[v] = o->on_ref[j];
            o->m_parent[v] = p;
            o->m_tok[v] = x->tok;
            o->slot[v] = j;
        } else {
            map_node(o, x, v, 0);
            o->slot[v] = -1; /* no old slot: its children are mapped afresh too */
        }
    }
    o->mapped = n;
}

/* Brings the mapping up to date with the tree: the nodes whose parent and
 * token are what they were mapped with keep their mapping, up to the first
 * that differs; from there on translate; new nodes are mapped.  Without
 * writing tags (the tree is the caller's to read), so a translation leaves
 * the slots renumbered under tags that no longer name them. */
static void remap(rp_oracle *o, const eng_tree *t)
{
    int32_t n = t->n_nodes < o->mapped ? t->n_nodes : o->mapped, i = n > 0 ? 1 : 0;
    while (i < n && t->nodes[i].parent == o->m_parent[i] && t->nodes[i].tok == o->m_tok[i])
        i++;
    if (i < n) {
        translate(o, t, i);
        o->tagged = 0;
    } else if (o->mapped > n) {
        o->mapped = n; /* the tree lost nodes after the last it kept */
    }
    map_new(o, t);
}

/* Remaps a tree that moved, then tags every mapped node (map_draft). */
static void map_draft_moved(rp_oracle *o, eng_tree *t)
{
    remap(o, t);
    for (int32_t v = 0; v < o->mapped; v++)
        t->nodes[v].user = (uint32_t)v + 1;
    o->tagged = 1;
}

/* The mapping before a draft call: the tree is as it was mapped when the last
 * node mapped still carries its own tag (a compaction that dropped any node
 * before it has moved it, and a node added since carries none); else remap.
 * Then every mapped node is tagged with its id, for translate.  Inline for
 * the common case, where only the new nodes are mapped and tagged. */
static inline void map_draft(rp_oracle *o, eng_tree *t)
{
    int32_t m = o->mapped;
    if (!o->tagged || (m > 0 && (t->n_nodes < m || t->nodes[m - 1].user != (uint32_t)m)))
        map_draft_moved(o, t);
    else
        map_new_tag(o, t, t->nodes);
}

/* Empties the token set of a synthesised candidate set (a new stamp; when
 * the stamps wrap, every slot is cleared). */
static void syn_clear(rp_oracle *o)
{
    if (++o->syn_stamp == 0) {
        memset(o->syn, 0, sizeof o->syn);
        o->syn_stamp = 1;
    }
}

/* Adds x to the token set: 1, or 0 when it holds x already. */
static int syn_insert(rp_oracle *o, eng_token x)
{
    _Static_assert(RP_SYN_SLOTS == 256, "the hash keeps 8 bits");
    uint32_t h = ((uint32_t)x * 2654435761u) >> 24;
    for (;; h = (h + 1) & (RP_SYN_SLOTS - 1)) {
        struct rp_syn_slot *s = &o->syn[h];
        if (s->stamp != o->syn_stamp) {
            s->tok = x;
            s->stamp = o->syn_stamp;
            return 1;
        }
        if (s->tok == x) return 0;
    }
}

/* A uniform token id: gsl_rng_uniform_int(o->rng, vocab), its scale kept
 * (rp_draw.h) where it could be worked out. */
static inline uint32_t vocab_draw(const rp_oracle *o)
{
    if (o->vocab_draw.scale == 0)
        return (uint32_t)gsl_rng_uniform_int(o->rng, (unsigned long)o->vocab);
    return (uint32_t)rp_uniform_int_draw(&o->vocab_draw);
}

/* A uniform token id the set does not hold yet (drawn again until one is
 * new), added to it. */
static int32_t random_token(rp_oracle *o)
{
    for (;;) {
        eng_token x = (eng_token)vocab_draw(o);
        if (syn_insert(o, x)) return x;
    }
}

/* The tokens of ranks other than want_rank, each its own uniform draw among
 * the ids the set does not hold yet: re-sampled sets, and the reference the
 * offset construction is tested against (tests/sim/replay/test_synth_tokens.c). */
static void tokens_drawn(rp_oracle *o, eng_token want, int32_t want_rank, eng_cand *c)
{
    syn_clear(o);
    syn_insert(o, want);
    for (int32_t j = 0; j < o->k; j++)
        c[j].tok = (j == want_rank) ? want : random_token(o);
}

/* The id s after x, modulo v (x, s < v). */
static inline uint32_t id_step(uint32_t x, uint32_t s, uint32_t v)
{
    return x + s >= v ? x + s - v : x + s;
}

/* The same tokens from one draw: a uniform start x, then x + s, x + 2s, ...
 * (mod vocab) with the stride s coprime to the vocabulary, skipping the
 * reference token (a set off the reference path, with nothing to place or
 * skip, takes the same ids through fill_offset).  The ids are distinct
 * (k + 1 <= vocab steps of a stride coprime to vocab never repeat), each is
 * uniform over the vocabulary, and none is the reference token unless it
 * was placed.  Nothing downstream reads a synthesised token but through
 * those properties (sim/replay/README.md, "Off-path synthesis"), so every
 * result has the distribution it has with tokens_drawn, at a fraction of
 * the cost. */
static void tokens_offset(rp_oracle *o, eng_token want, int32_t want_rank, eng_cand *c)
{
    const uint32_t v = (uint32_t)o->vocab, s = o->stride;
    const int32_t k = o->k;
    uint32_t x = vocab_draw(o);
    for (int32_t j = 0; j < k; j++) {
        if (j == want_rank) {
            c[j].tok = want;
            continue;
        }
        if ((eng_token)x == want) x = id_step(x, s, v);
        c[j].tok = (eng_token)x;
        x = id_step(x, s, v);
    }
}

/* The depth's log-prob profile into a candidate set. */
static inline void copy_logp(eng_cand *restrict c, const float *restrict lp, int32_t k)
{
    for (int32_t j = 0; j < k; j++)
        c[j].logp = lp[j];
}

/* An off-path set (nothing to place or skip) from one uniform start x: the
 * ids x + j s mod vocab for each j at once (s's multiples from the table:
 * the same ids as stepping), and the depth's log-prob profile, in one pass
 * the compiler can vectorise. */
static inline void fill_offset(eng_cand *restrict c, uint32_t x, const uint32_t *restrict at,
                               const float *restrict lp, uint32_t v, int32_t k)
{
    for (int32_t j = 0; j < k; j++) {
        uint32_t y = x + at[j];
        c[j].tok = (eng_token)(y >= v ? y - v : y);
        c[j].logp = lp[j];
    }
}

/* Node id's synthesised candidate set: the depth's log-prob profile, the
 * reference token placed (on the reference path) or kept out, and distinct
 * token ids, drawn one by one when `drawn`, else from one offset. */
static void synthesise(rp_oracle *o, const eng_tree *t, int32_t id, eng_cand *c, int drawn)
{
    const rp_synth_stats *st = o->stats;
    int32_t k = o->k, d = t->nodes[id].depth;
    eng_token want = ENG_NO_TOKEN;
    int32_t want_rank = -1;
    if (o->on_ref[id]) {
        int32_t at = o->pos + d;
        if (at < o->ref_len) {
            want = o->ref[at];
            double u = gsl_rng_uniform(o->rng);
            if (u < st->deep_top1)
                want_rank = 0;
            else if (u < st->deep_inset && k > 1)
                want_rank = 1 + (int32_t)gsl_rng_uniform_int(o->rng, (unsigned long)(k - 1));
            /* a top-k over a vocabulary of k ids holds every id: the reference
             * token too, last (the other ids are all it has left to give) */
            if (want_rank < 0 && k >= o->vocab) want_rank = k - 1;
        }
    }
    const float *lp = o->prof[d < o->prof_rows ? d : o->prof_rows - 1];
    if (want == ENG_NO_TOKEN && !drawn) { /* off the reference path: one draw */
        uint32_t v = (uint32_t)o->vocab;
        uint32_t x = vocab_draw(o);
        if (k == 8) /* the common K: a fixed count the compiler unrolls */
            fill_offset(c, x, o->stride_at, lp, v, 8);
        else
            fill_offset(c, x, o->stride_at, lp, v, k);
        return;
    }
    if (k == 8)
        copy_logp(c, lp, 8);
    else
        copy_logp(c, lp, k);
    /* distinct tokens, none of them the reference token unless placed */
    if (drawn)
        tokens_drawn(o, want, want_rank, c);
    else
        tokens_offset(o, want, want_rank, c);
}

/* Copies a recorded row into a candidate set (the trace's rows and the
 * tree's slots never overlap). */
static inline void copy_row(eng_cand *restrict c, const int32_t *restrict tok,
                            const float *restrict lp, int32_t k)
{
    for (int32_t j = 0; j < k; j++) {
        c[j].tok = tok[j];
        c[j].logp = lp[j];
    }
}

/* Fills node id's candidate set from the recorded tree, or synthesises it
 * (its tokens drawn one by one when `drawn`); counts the expansion. */
static inline int fill_cands(rp_oracle *o, eng_tree *t, int32_t id, int drawn)
{
    if (id < 0 || id >= t->n_nodes || id >= o->cap) return ENG_E_ARG;
    eng_cand *c = eng_tree_cands_reserve(t, id, o->k); /* every slot is written below */
    if (!c) return ENG_E_FULL;
    int32_t tn = o->tnode[id];
    o->expansions++;
    if (tn >= 0) {
        const int32_t k = o->k;
        const int32_t *tok = o->tree.draft_tok + (size_t)tn * k;
        const float *lp = o->tree.draft_logp + (size_t)tn * k;
        if (k == 8) /* the common K: a fixed count the compiler unrolls */
            copy_row(c, tok, lp, 8);
        else
            copy_row(c, tok, lp, k);
        o->recorded_expansions++;
    } else {
        synthesise(o, t, id, c, drawn);
    }
    return ENG_OK;
}

static int log_call(rp_oracle *o, eng_unit unit, int32_t rows, int32_t ctx_len, int32_t part)
{
    if (o->n_calls >= o->cap_calls) return ENG_E_FULL;
    rp_call *call = &o->calls[o->n_calls++];
    call->unit = unit;
    call->part = part;
    call->rows = rows;
    call->ctx_len = ctx_len;
    return ENG_OK;
}

/* One logged draft forward (part 0 full, 1 body) over ids. */
static int draft_forward(rp_oracle *o, eng_tree *t, const int32_t *ids, int32_t count,
                         eng_unit unit, int32_t part)
{
    if (count < 1 || !ids) return ENG_E_ARG;
    map_draft(o, t);
    int32_t max_depth = 0;
    for (int32_t q = 0; q < count; q++) {
        int rc = fill_cands(o, t, ids[q], o->synth_drawn);
        if (rc != ENG_OK) return rc;
        if (t->nodes[ids[q]].depth > max_depth) max_depth = t->nodes[ids[q]].depth;
    }
    return log_call(o, unit, count, o->prompt_len + o->pos + max_depth + 1, part);
}

static int draft_expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    return draft_forward(ctx, t, ids, count, unit, 0);
}

/* Body-only forward: the candidate sets are filled at once (the replay knows
 * them), the call is priced without the draft's LM head. */
static int draft_expand_body(void *ctx, eng_tree *t, const int32_t *ids, int32_t count,
                             eng_unit unit)
{
    return draft_forward(ctx, t, ids, count, unit, 1);
}

/* The LM head alone over `rows` deferred hidden states: a priced call, no
 * expansion. */
static int draft_project(void *ctx, int32_t rows, eng_unit unit)
{
    rp_oracle *o = ctx;
    if (rows < 1) return ENG_E_ARG;
    return log_call(o, unit, rows, o->prompt_len + o->pos, 2);
}

/* Re-sampled candidate sets (sim/replay/README.md "Re-sampling"): served like
 * an expansion from the recorded tree of the current position, no call logged;
 * with probability penalty per node the draft's rank-1 token moves to the
 * last rank (the others move up one rank; log-probs stay with the ranks). */
static int draft_resample(void *ctx, eng_tree *t, const int32_t *ids, int32_t count,
                          double penalty)
{
    rp_oracle *o = ctx;
    if (count < 1 || !ids || !(penalty >= 0.0 && penalty <= 1.0)) return ENG_E_ARG;
    map_draft(o, t);
    for (int32_t q = 0; q < count; q++) {
        int rc = fill_cands(o, t, ids[q], 1);
        if (rc != ENG_OK) return rc;
        o->resampled_expansions++;
        if (penalty > 0.0 && o->k > 1 && gsl_rng_uniform(o->rng) < penalty) {
            int32_t n = 0;
            eng_cand *c = (eng_cand *)eng_tree_cands(t, ids[q], &n);
            eng_token top = c[0].tok;
            for (int32_t j = 0; j + 1 < n; j++) c[j].tok = c[j + 1].tok;
            c[n - 1].tok = top;
            o->penalised_expansions++;
        }
    }
    return ENG_OK;
}

static int target_verify(void *ctx, const eng_tree *t, const uint8_t *keep, eng_token *g)
{
    rp_oracle *o = ctx;
    remap(o, t);
    for (int32_t i = 0; i < t->n_nodes; i++) {
        g[i] = ENG_NO_TOKEN;
        if (i >= o->cap || (keep && i > 0 && !keep[i])) continue;
        if (o->on_ref[i]) {
            int32_t at = o->pos + t->nodes[i].depth;
            if (at < o->ref_len) g[i] = o->ref[at];
        } else if (o->tnode[i] >= 0) {
            g[i] = o->tree.tgt_tok[(size_t)o->tnode[i] * o->k];
        }
    }
    return ENG_OK;
}

static int target_exit_scores(void *ctx, const eng_tree *t, int32_t exit_idx, float *scores)
{
    rp_oracle *o = ctx;
    if (exit_idx < 0 || exit_idx >= o->n_exit) return ENG_E_ARG;
    remap(o, t);
    for (int32_t i = 0; i < t->n_nodes; i++) {
        int32_t tn = i < o->cap ? o->tnode[i] : -1, cn = 0;
        /* an unrecorded node: its draft log-probs stand in for the scores */
        const eng_cand *c = tn >= 0 ? NULL : eng_tree_cands(t, i, &cn);
        for (int32_t j = 0; j < o->k; j++) {
            scores[(size_t)i * o->k + j] =
                tn >= 0  ? o->tree.exit_score[((size_t)tn * o->n_exit + exit_idx) * o->k + j]
                : j < cn ? c[j].logp
                         : NAN;
        }
    }
    return ENG_OK;
}

static int target_dists(void *ctx, const eng_tree *t, const uint8_t *keep, eng_cand *cands,
                        int32_t *n)
{
    rp_oracle *o = ctx;
    remap(o, t);
    for (int32_t i = 0; i < t->n_nodes; i++) {
        n[i] = 0;
        if (i >= o->cap || (keep && i > 0 && !keep[i])) continue;
        eng_cand *c = cands + (size_t)i * (size_t)o->k;
        int32_t tn = o->tnode[i];
        if (tn >= 0) {
            for (int32_t j = 0; j < o->k; j++) {
                c[j].tok = o->tree.tgt_tok[(size_t)tn * o->k + j];
                c[j].logp = o->tree.tgt_logp[(size_t)tn * o->k + j];
            }
            n[i] = o->k;
        } else if (o->on_ref[i]) {
            int32_t at = o->pos + t->nodes[i].depth;
            if (at < o->ref_len) {
                c[0].tok = o->ref[at];
                c[0].logp = 0.0f;
                n[i] = 1;
            }
        }
    }
    return ENG_OK;
}

static void bind(rp_oracle *o)
{
    o->target.dists = target_dists;
    o->target.k = o->k;
    o->draft.expand = draft_expand;
    o->draft.expand_body = draft_expand_body;
    o->draft.project = draft_project;
    o->draft.resample = draft_resample;
    o->draft.ctx = o;
    o->draft.k = o->k;
    o->target.verify = target_verify;
    o->target.exit_scores = target_exit_scores;
    o->target.ctx = o;
}
