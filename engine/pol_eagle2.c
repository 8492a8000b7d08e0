/*
 * pol_eagle2.c -- EAGLE-2 dynamic draft tree (Li et al.).
 *
 * Scores are joint draft log-probabilities (sum of log q along the path).
 *   1. expand the root (one call); its top-k candidates form the first frontier
 *      and enter the candidate pool;
 *   2. `depth` times: expand the frontier (ONE batched oracle call of its
 *      nodes); each frontier node proposes its top-k candidates with score
 *      parent score + log q -- k^2 candidates, all added to the pool; the k best
 *      of them (by score) become the next frontier;
 *   3. keep the global top-`total_tokens` of the pool.
 * Ties are broken by depth (shallower first), then by pool order, a total order
 * under which a parent always ranks before its children (scores never increase
 * along a path): the selection is ancestor-closed without any repair.
 *
 * Materialisation: pool entries are virtual (parent node, candidate rank,
 * score) until they are needed -- frontier nodes become tree nodes so that the
 * oracle can expand them; after the selection the chosen leaves are added and
 * eng_tree_compact drops the frontier nodes that were not selected, so the tree
 * handed to verification is exactly the selection.  Levels are capped by
 * lim->max_depth and lim->remaining - 1, nodes by lim->max_nodes.
 *
 * Selection: every expanded node's candidates enter the pool ranked, so a
 * level's best k and the pool's best total_tokens are merges of these runs
 * (eng_select_ranked, keys score then (depth, order); a selection over the
 * whole pool when an oracle's lists are not sorted).
 * Cost: O(P) to fill the pool, P <= k + depth * k^2, plus O((R + total) log R)
 * to select, R = runs <= 1 + depth * k.
 * State: mallocs in create (sized from the params), nothing after.
 */
#include "pol_eagle2.h"
#include "eng_select.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const unit_choices[] = {"cpu", "npu", NULL};

#define P(f) offsetof(eng_eagle2_params, f)
const eng_param_desc eng_eagle2_param_table[] = {
    {.name = "top_k", .type = ENG_PARAM_INT, .offset = P(top_k), .min = 1, .max = 64, .def = 10,
     .doc = "children proposed per expanded node and frontier width"},
    {.name = "depth", .type = ENG_PARAM_INT, .offset = P(depth), .min = 0, .max = 32, .def = 6,
     .doc = "draft steps after the root's expansion (tree depth <= depth + 1)"},
    {.name = "total_tokens", .type = ENG_PARAM_INT, .offset = P(total_tokens), .min = 1,
     .max = ENG_POL_MAX_NODES - 1, .def = 60,
     .doc = "draft nodes kept for verification, root excluded: the tree has total_tokens + 1 nodes"},
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = P(unit), .min = 0, .max = 1, .def = 1,
     .choices = unit_choices, .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};
#undef P

typedef struct e2_entry {
    double score;
    int32_t depth, order; /* order = pool index (tie-break) */
    int32_t parent;       /* tree node id of the parent */
    int32_t rank;         /* candidate rank in the parent's set */
    int32_t node;         /* tree node id once materialised, else ENG_NO_NODE */
} e2_entry;

typedef struct e2_state {
    eng_eagle2_params p;
    int32_t cap_pool;
    e2_entry *pool;  /* [cap_pool] */
    eng_rank *key;   /* [cap_pool] each entry's rank: score, then (depth, order) */
    int32_t *level;  /* [k * k] pool indices of one step's candidates */
    /* the pool as runs: each expanded node's candidates, ranked, are pool
     * indices run[r] .. run[r + 1); cap_runs = 1 + depth * k */
    int32_t cap_runs;
    int *run, *heap, *next, *pick; /* [cap_runs + 1], eng_select_ranked scratch, [cap_pool] */
    int32_t ids[ENG_POL_MAX_NODES];
    int32_t map[ENG_POL_MAX_NODES];
    uint8_t keep[ENG_POL_MAX_NODES];
} e2_state;

/* total order: score desc, depth asc, order asc */
static int e2_before(const e2_entry *a, const e2_entry *b)
{
    if (a->score != b->score) return a->score > b->score;
    if (a->depth != b->depth) return a->depth < b->depth;
    return a->order < b->order;
}

static int e2_cmp(const void *x, const void *y)
{
    const e2_entry *a = x, *b = y;
    return e2_before(a, b) ? -1 : (e2_before(b, a) ? 1 : 0);
}

static int32_t materialise(eng_tree *t, e2_entry *e)
{
    if (e->node != ENG_NO_NODE) return e->node;
    int32_t cn = 0;
    const eng_cand *c = eng_tree_cands(t, e->parent, &cn);
    if (e->rank >= cn) return ENG_E_ARG;
    int32_t id = eng_tree_add(t, e->parent, c[e->rank].tok, c[e->rank].logp);
    if (id >= 0) e->node = id;
    return id;
}

/* adds the top-k candidates of tree node u (score base) to the pool; 0 when
 * one of them ranks before its predecessor (the oracle's list is out of
 * order), else 1 */
static int e2_propose(e2_state *s, const eng_tree *t, int32_t u, double base, int32_t *n_pool)
{
    int32_t cn = 0, n = *n_pool, depth = t->nodes[u].depth + 1;
    const eng_cand *c = eng_tree_cands(t, u, &cn);
    int32_t end = cn < s->p.top_k ? cn : s->p.top_k;
    if (end > s->cap_pool - n) end = s->cap_pool - n;
    int in_order = 1;
    double prev = INFINITY;
    for (int32_t j = 0; j < end; j++, n++) {
        double score = base + (double)c[j].logp;
        in_order &= !(score > prev);
        prev = score;
        s->pool[n] = (e2_entry){score, depth, n, u, j, ENG_NO_NODE};
        s->key[n] = (eng_rank){score, (long long)depth << 32 | n};
    }
    *n_pool = n;
    return in_order;
}

/* The best k of the runs run[r0 .. r1) (their pool indices contiguous) into
 * s->level, best first; returns how many.  Each expanded node's candidates
 * enter the pool in rank order with non-increasing scores and increasing
 * order, so the best are a merge of the runs (eng_select_ranked); when an
 * oracle's lists are not sorted (in_order = 0: e2_propose tested them while
 * filling the pool), a partial insertion over every index (eng_select_top).  Both give the same
 * indices in the same order: the keys' order, e2_before's, is a strict total order. */
static int32_t e2_pick(e2_state *s, int32_t r0, int32_t r1, int32_t k, int in_order, int *sorted)
{
    if (in_order)
        return eng_select_ranked(s->run + r0, r1 - r0, k, s->key, 0, s->heap, s->next, s->level);
    *sorted = 0;
    int32_t n = 0;
    for (int32_t i = s->run[r0]; i < s->run[r1]; i++)
        s->level[n++] = i;
    return eng_select_top(s->key, s->level, n, k);
}

static int e2_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    e2_state *s = self;
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    int32_t max_d = s->p.depth + 1;
    if (lim->max_depth < max_d) max_d = lim->max_depth;
    if (lim->remaining - 1 < max_d) max_d = lim->remaining - 1;
    int32_t cap = lim->max_nodes < ENG_POL_MAX_NODES ? lim->max_nodes : ENG_POL_MAX_NODES;
    int32_t total = s->p.total_tokens < cap - 1 ? s->p.total_tokens : cap - 1;
    if (max_d < 1 || total < 1) return ENG_OK;
    int32_t k = s->p.top_k, n_pool = 0, runs = 0;
    int sorted = 1; /* every run tested in order by its level's pick */

    int32_t root = 0;
    int rc = draft->expand(draft->ctx, t, &root, 1, s->p.unit);
    if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
    s->run[runs++] = 0;
    int in_order = e2_propose(s, t, 0, 0.0, &n_pool);
    s->run[runs] = n_pool;
    int32_t nf = e2_pick(s, 0, runs, k, in_order, &sorted);
    for (int32_t step = 1; step < max_d && nf > 0; step++) {
        /* materialise the frontier (the best k of the last step) and expand it */
        int32_t n = nf < k ? nf : k, front[64];
        for (int32_t i = 0; i < n; i++) {
            front[i] = s->level[i];
            if (t->n_nodes >= cap) return ENG_E_FULL;
            int32_t id = materialise(t, &s->pool[front[i]]);
            if (id < 0) return id;
            s->ids[i] = id;
        }
        rc = draft->expand(draft->ctx, t, s->ids, n, s->p.unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        int32_t r0 = runs;
        in_order = 1;
        for (int32_t i = 0; i < n; i++) {
            const e2_entry *f = &s->pool[front[i]];
            in_order &= e2_propose(s, t, f->node, f->score, &n_pool);
            s->run[++runs] = n_pool;
        }
        nf = e2_pick(s, r0, runs, k, in_order, &sorted);
    }

    /* global top-total: the best `total` of the pool, best first.  Parents are
     * tree nodes, so materialising in rank order is safe: a parent ranks
     * before its child and was materialised as a frontier node. */
    int32_t keep_n = n_pool < total ? n_pool : total;
    const int *pick = s->pick;
    if (!sorted ||
        eng_select_ranked(s->run, runs, keep_n, s->key, 0, s->heap, s->next, s->pick) < 0) {
        /* unsorted lists: select over the pool itself (orders stay the pool
         * indices, so the ranking is the same) */
        eng_select_sorted(s->pool, (size_t)n_pool, sizeof *s->pool, (size_t)keep_n, e2_cmp);
        for (int32_t i = 0; i < keep_n; i++)
            s->pick[i] = i;
    }
    memset(s->keep, 0, (size_t)cap);
    s->keep[0] = 1;
    for (int32_t i = 0; i < keep_n; i++) {
        e2_entry *e = &s->pool[pick[i]];
        if (e->node == ENG_NO_NODE && t->n_nodes >= cap) break;
        int32_t id = materialise(t, e);
        if (id < 0) return id;
        s->keep[id] = 1;
    }
    eng_tree_compact(t, s->keep, s->map);
    return ENG_OK;
}

static void e2_destroy(void *self)
{
    e2_state *s = self;
    if (!s) return;
    free(s->pool);
    free(s->key);
    free(s->level);
    free(s->run);
    free(s->heap);
    free(s->next);
    free(s->pick);
    free(s);
}

static const eng_policy_i e2_i = {
    .name = "eagle2",
    .build = e2_build,
    .destroy = e2_destroy,
};

int eng_eagle2_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_eagle2_params *in = params;
    if (in->top_k < 1 || in->top_k > 64 || in->depth < 0 || in->depth > 32 ||
        in->total_tokens < 1 || in->total_tokens > ENG_POL_MAX_NODES - 1 ||
        (in->unit != ENG_UNIT_CPU && in->unit != ENG_UNIT_NPU))
        return ENG_E_ARG;
    e2_state *s = calloc(1, sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    s->cap_pool = in->top_k + in->depth * in->top_k * in->top_k;
    s->pool = malloc(sizeof *s->pool * (size_t)s->cap_pool);
    s->key = malloc(sizeof *s->key * (size_t)s->cap_pool);
    s->level = malloc(sizeof *s->level * (size_t)(in->top_k * in->top_k));
    s->cap_runs = 1 + in->depth * in->top_k;
    s->run = malloc(sizeof *s->run * (size_t)(s->cap_runs + 1));
    s->heap = malloc(sizeof *s->heap * (size_t)s->cap_runs);
    s->next = malloc(sizeof *s->next * (size_t)s->cap_runs);
    s->pick = malloc(sizeof *s->pick * (size_t)s->cap_pool);
    if (!s->pool || !s->key || !s->level || !s->run || !s->heap || !s->next || !s->pick) {
        e2_destroy(s);
        return ENG_E_NOMEM;
    }
    out->i = &e2_i;
    out->self = s;
    return ENG_OK;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_eagle2 = {"eagle2", "EAGLE-2 dynamic tree: frontier expansion, global top-total_tokens re-rank", sizeof(eng_eagle2_params),
                                        eng_eagle2_param_table, eng_eagle2_create, 1};
