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
 * Selection: every expanded node's candidates enter the pool ranked, as a
 * run (the node, its candidates and its score), so a level's best k and the
 * pool's best total_tokens are merges of these runs whose keys (score, then
 * (depth, pool index)) are computed as the merge reads them
 * (eng_select_cands): only the entries taken and the runs' heads are ever
 * scored.  When an oracle's lists are not sorted the keys are written out
 * and selected over the whole pool.
 * Cost: O(P) to test the lists' order, P <= k + depth * k^2, plus
 * O((R + total) log R) to select, R = runs <= 1 + depth * k.
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

/* A pool entry written out, for oracles whose lists are out of order: the
 * key (score, then depth << 32 | pool index), the pool index and its run. */
typedef struct e2_entry {
    double score;
    long long tie;
    int32_t idx, run;
} e2_entry;

typedef struct e2_state {
    eng_eagle2_params p;
    int32_t cap_pool, cap_runs; /* cap_runs = 1 + depth * k */
    /* the pool as runs: run r holds the ranked candidates of tree node
     * run_node[r], pool indices run[r] .. run[r + 1), keyed by cr[r]
     * (eng_select_cands: score = parent score + logp, tie = depth << 32 |
     * pool index) as the merges read them */
    int *run;               /* [cap_runs + 1] */
    eng_cand_run *cr;       /* [cap_runs] */
    int32_t *run_node;      /* [cap_runs] */
    int32_t *node_of;       /* [cap_pool] tree node of a materialised entry */
    uint8_t *made;          /* [cap_pool / 8 + 1] bit idx: entry idx is materialised */
    int *level, *level_run; /* [k * k] one step's best: pool indices, runs */
    int *pick, *pick_run;   /* [cap_pool] the global best */
    int *heap, *next;       /* [cap_runs] eng_select scratch */
    /* keys written out, for lists out of order only */
    eng_rank *key; /* [cap_pool] */
    e2_entry *all; /* [cap_pool] */
    int32_t ids[ENG_POL_MAX_NODES];
    int32_t map[ENG_POL_MAX_NODES];
    uint8_t keep[ENG_POL_MAX_NODES];
} e2_state;

/* total order: score desc, then tie (depth, pool index) asc */
static int e2_before(const e2_entry *a, const e2_entry *b)
{
    if (a->score != b->score) return a->score > b->score;
    return a->tie < b->tie;
}

static int e2_cmp(const void *x, const void *y)
{
    const e2_entry *a = x, *b = y;
    return e2_before(a, b) ? -1 : (e2_before(b, a) ? 1 : 0);
}

/* The score of pool entry idx of run r. */
static double e2_score(const e2_state *s, int32_t idx, int32_t r)
{
    return eng_cand_key(&s->cr[r], idx - s->run[r], 1).score;
}

static int made(const e2_state *s, int32_t idx)
{
    return s->made[idx >> 3] >> (idx & 7) & 1;
}

/* Tree node of pool entry idx (run r), not yet materialised: a new child. */
static int32_t e2_make(e2_state *s, eng_tree *t, int32_t idx, int32_t r)
{
    const eng_cand *c = &s->cr[r].cand[idx - s->run[r]];
    int32_t id = eng_tree_add(t, s->run_node[r], c->tok, c->logp);
    if (id >= 0) {
        s->node_of[idx] = id;
        s->made[idx >> 3] |= (uint8_t)(1u << (idx & 7));
    }
    return id;
}

/* Tree node of pool entry idx (run r): the one it became, or e2_make. */
static inline int32_t materialise(e2_state *s, eng_tree *t, int32_t idx, int32_t r)
{
    return made(s, idx) ? s->node_of[idx] : e2_make(s, t, idx, r);
}

/* Adds the top-k candidates of tree node u (score base) to the pool as run
 * *runs; 0 when one of them has a logp above its predecessor's (the
 * oracle's list is out of order), else 1. */
static inline int e2_propose(e2_state *s, const eng_tree *t, int32_t u, double base,
                             int32_t *n_pool, int32_t *runs)
{
    int32_t cn = 0, n = *n_pool, r = (*runs)++;
    const eng_cand *c = eng_tree_cands(t, u, &cn);
    int32_t end = cn < s->p.top_k ? cn : s->p.top_k;
    if (end > s->cap_pool - n) end = s->cap_pool - n;
    s->cr[r] = (eng_cand_run){c, base, (long long)(t->nodes[u].depth + 1) << 32 | n};
    s->run_node[r] = u;
    *n_pool = n + end;
    s->run[r + 1] = n + end;
    return eng_cands_ranked(c, end);
}

/* Writes out the keys of runs r0 .. r1 (lists out of order). */
static void e2_keys(e2_state *s, int32_t r0, int32_t r1)
{
    for (int32_t r = r0; r < r1; r++)
        for (int32_t i = s->run[r]; i < s->run[r + 1]; i++) {
            s->key[i] = eng_cand_key(&s->cr[r], i - s->run[r], 1);
        }
}

/* The best k of the runs r0 .. r1 (their pool indices contiguous) into
 * s->level and s->level_run, best first; returns how many.  Each expanded
 * node's candidates are a run in rank order, so the best are a merge of the
 * runs; when an oracle's lists are not sorted (in_order = 0: e2_propose
 * tested them), a selection over the keys written out -- the same entries
 * in the same order (eng_select_cands_or_keys). */
static int32_t e2_pick(e2_state *s, int32_t r0, int32_t r1, int32_t k, int in_order, int *sorted)
{
    if (!in_order) {
        *sorted = 0;
        e2_keys(s, r0, r1);
    }
    int m = eng_select_cands_or_keys(s->run + r0, s->cr + r0, r1 - r0, 1, k, in_order, s->key,
                                     s->heap, s->next, s->level, s->level_run);
    for (int i = 0; i < m; i++)
        s->level_run[i] += r0;
    return m;
}

/* The global best keep_n of the pool into s->pick and s->pick_run, best
 * first: a merge of every run, or (lists out of order) a selection over the
 * entries written out -- the same entries in the same order.  Returns how
 * many. */
static int32_t e2_select(e2_state *s, int32_t runs, int32_t n_pool, int32_t keep_n, int sorted)
{
    if (sorted) /* fewer than keep_n only for keys without an order (NaN) */
        return eng_select_cands(s->run, s->cr, runs, 1, keep_n, s->heap, s->next, s->pick,
                                s->pick_run);
    e2_keys(s, 0, runs);
    for (int32_t r = 0; r < runs; r++)
        for (int32_t i = s->run[r]; i < s->run[r + 1]; i++)
            s->all[i] = (e2_entry){s->key[i].score, s->key[i].tie, i, r};
    eng_select_sorted(s->all, (size_t)n_pool, sizeof *s->all, (size_t)keep_n, e2_cmp);
    for (int32_t i = 0; i < keep_n; i++) {
        s->pick[i] = s->all[i].idx;
        s->pick_run[i] = s->all[i].run;
    }
    return keep_n;
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
    memset(s->made, 0, (size_t)s->cap_pool / 8 + 1);
    s->run[0] = 0;
    int in_order = e2_propose(s, t, 0, 0.0, &n_pool, &runs);
    int32_t nf = e2_pick(s, 0, runs, k, in_order, &sorted);
    for (int32_t step = 1; step < max_d && nf > 0; step++) {
        /* materialise the frontier (the best k of the last step) and expand it */
        int32_t n = nf < k ? nf : k, front[64], front_run[64];
        for (int32_t i = 0; i < n; i++) {
            front[i] = s->level[i];
            front_run[i] = s->level_run[i];
            if (t->n_nodes >= cap) return ENG_E_FULL;
            int32_t id = materialise(s, t, front[i], front_run[i]);
            if (id < 0) return id;
            s->ids[i] = id;
        }
        rc = draft->expand(draft->ctx, t, s->ids, n, s->p.unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        int32_t r0 = runs;
        in_order = 1;
        for (int32_t i = 0; i < n; i++)
            in_order &=
                e2_propose(s, t, s->ids[i], e2_score(s, front[i], front_run[i]), &n_pool, &runs);
        if (step + 1 == max_d) { /* the last level's best would expand nothing */
            sorted &= in_order;
            break;
        }
        nf = e2_pick(s, r0, runs, k, in_order, &sorted);
    }

    /* global top-total: the best `total` of the pool, best first.  Parents are
     * tree nodes, so materialising in rank order is safe: a parent ranks
     * before its child and was materialised as a frontier node. */
    int32_t keep_n = n_pool < total ? n_pool : total;
    keep_n = e2_select(s, runs, n_pool, keep_n, sorted);
    memset(s->keep, 0, (size_t)cap);
    s->keep[0] = 1;
    for (int32_t i = 0; i < keep_n; i++) {
        int32_t idx = s->pick[i];
        if (!made(s, idx) && t->n_nodes >= cap) break;
        int32_t id = materialise(s, t, idx, s->pick_run[i]);
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
    free(s->run);
    free(s->cr);
    free(s->run_node);
    free(s->node_of);
    free(s->made);
    free(s->level);
    free(s->level_run);
    free(s->pick);
    free(s->pick_run);
    free(s->heap);
    free(s->next);
    free(s->key);
    free(s->all);
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
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_eagle2_param_table, params)) return ENG_E_ARG;
    e2_state *s = calloc(1, sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    s->cap_pool = in->top_k + in->depth * in->top_k * in->top_k;
    s->cap_runs = 1 + in->depth * in->top_k;
    size_t pool = (size_t)s->cap_pool, runs = (size_t)s->cap_runs,
           lvl = (size_t)in->top_k * in->top_k;
    s->run = malloc(sizeof *s->run * (runs + 1));
    s->cr = malloc(sizeof *s->cr * runs);
    s->run_node = malloc(sizeof *s->run_node * runs);
    s->node_of = malloc(sizeof *s->node_of * pool);
    s->made = malloc(pool / 8 + 1);
    s->level = malloc(sizeof *s->level * lvl);
    s->level_run = malloc(sizeof *s->level_run * lvl);
    s->pick = malloc(sizeof *s->pick * pool);
    s->pick_run = malloc(sizeof *s->pick_run * pool);
    s->heap = malloc(sizeof *s->heap * runs);
    s->next = malloc(sizeof *s->next * runs);
    s->key = malloc(sizeof *s->key * pool);
    s->all = malloc(sizeof *s->all * pool);
    if (!s->run || !s->cr || !s->run_node || !s->node_of || !s->made || !s->level ||
        !s->level_run || !s->pick || !s->pick_run || !s->heap || !s->next || !s->key || !s->all) {
        e2_destroy(s);
        return ENG_E_NOMEM;
    }
    out->i = &e2_i;
    out->self = s;
    return ENG_OK;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_eagle2 = {
    .name = "eagle2",
    .doc = "EAGLE-2 dynamic tree: frontier expansion, global top-total_tokens re-rank",
    .params_size = sizeof(eng_eagle2_params),
    .params = eng_eagle2_param_table,
    .create = eng_eagle2_create,
    .needs_draft = 1,
    .tree = {.rule = ENG_TREE_PLUS_ROOT, .fixed = 1, .param = "total_tokens"},
};
