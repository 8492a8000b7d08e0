/*
 * pol_opt_tree.c -- OPT-Tree (Wang et al., TACL 2025; public opt_classic/tree.py).
 *
 * Beam drafting of width n = `nodes`, scored by cumulative draft probability
 * (product of q along the path; kept as a sum of log q):
 *   layer 1     = the top-n candidates of the root (one call expands the root);
 *   layer l + 1 = the best n of the children of layer l's nodes (one batched
 *                 call expands all of layer l).
 * Stopping rule.  After layer L is generated (L >= 2), the candidate tree C_L
 * is the top-n nodes by cumulative probability over layers 1 .. L - 1 (all but
 * the newest), and W_L = sum of their cumulative probabilities, the expected
 * acceptance length of C_L; W_1 = 0 (no candidate yet).  Another layer is
 * drafted while W_L - W_{L-1} > delta and C_L's depth limit L - 1 is below
 * max_depth.  The verified tree is the last candidate tree C_L (choice: the
 * newest layer only served to measure the gain, as in the rule above).
 * Verification cost is ignored, which is what Lever criticises.
 *
 * Order and ancestor closure: nodes are ranked by (cumulative log-prob desc,
 * depth asc, id asc).  A child's cumulative log-prob never exceeds its
 * parent's, so the top-n set is ancestor-closed and the beam's parents are
 * always inside it.  Layers 1 .. L - 1 are tree nodes (they were expanded); the
 * newest layer is virtual (parent, rank) until it is expanded in turn.  The
 * final tree is obtained with eng_tree_compact.  Depth is also capped by
 * lim->max_depth and lim->remaining - 1, nodes by lim->max_nodes.
 *
 * Cost per layer: O(n K) to test the parents' lists' order and O(n log n)
 * to merge the beam out of them (a selection over the n K candidates when
 * they are out of order), a pass that checks the new layer is in order
 * (it is by construction; an insertion sort if not) and its O(n) merge
 * into C_L.  The beam of the layer whose gain stops the drafting is never
 * ranked.  State: one malloc in create.
 */
#include "pol_opt_tree.h"
#include "eng_select.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const unit_choices[] = {"cpu", "npu", NULL};

#define OT_MAX_K 64

#define P(f) offsetof(eng_opt_tree_params, f)
const eng_param_desc eng_opt_tree_param_table[] = {
    {.name = "nodes",
     .type = ENG_PARAM_INT,
     .offset = P(nodes),
     .min = 1,
     .max = 256,
     .def = 60,
     .doc = "node budget n: beam width and verified draft nodes (root excluded)"},
    {.name = "delta",
     .type = ENG_PARAM_DOUBLE,
     .offset = P(delta),
     .min = 0,
     .max = 1000,
     .def = 0.5,
     .doc = "draft another layer while the expected acceptance grows by more"},
    {.name = "max_depth",
     .type = ENG_PARAM_INT,
     .offset = P(max_depth),
     .min = 1,
     .max = 64,
     .def = 10,
     .doc = "deepest level of the verified tree"},
    {.name = "unit",
     .type = ENG_PARAM_ENUM,
     .offset = P(unit),
     .min = 0,
     .max = 1,
     .def = 1,
     .choices = unit_choices,
     .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};
#undef P

typedef struct ot_cand {
    double score; /* cumulative log-prob */
    int32_t parent, rank, order;
} ot_cand;

typedef struct ot_state {
    eng_opt_tree_params p;
    ot_cand *cands; /* [n * OT_MAX_K] children of one layer */
    /* one layer's candidates of parent i, keyed as the merge reads them:
     * score cum_logq + logp, tie (order << OT_RUN_BITS | i) */
    eng_cand_run cr[ENG_POL_MAX_NODES];
    int pick_run[ENG_POL_MAX_NODES];
    int32_t ids[ENG_POL_MAX_NODES];
    int32_t map[ENG_POL_MAX_NODES];
    int32_t best[2][ENG_POL_MAX_NODES]; /* C: the top-n tree nodes, sorted (ping-pong) */
    float best_q[2][ENG_POL_MAX_NODES]; /* their cum_logq, for the merges */
    int32_t layer[ENG_POL_MAX_NODES];   /* the newest layer's nodes, sorted */
    float layer_q[ENG_POL_MAX_NODES];
    /* one layer's candidates of parent i are cands[first[i] .. first[i+1]) */
    int first[ENG_POL_MAX_NODES + 1];
    int heap[ENG_POL_MAX_NODES], next[ENG_POL_MAX_NODES]; /* eng_select_ranked scratch */
    int pick[ENG_POL_MAX_NODES];                          /* the beam's candidates, best first */
    uint8_t keep[ENG_POL_MAX_NODES];
    /* exp(cum_logq) of a tree node, computed once per build: a node stays
     * in C from layer to layer, and W sums C at every layer */
    double q[ENG_POL_MAX_NODES];
    uint8_t has_q[ENG_POL_MAX_NODES];
} ot_state;

static double node_q(ot_state *s, const eng_tree *t, int32_t id)
{
    if (!s->has_q[id]) {
        s->q[id] = exp((double)t->nodes[id].cum_logq);
        s->has_q[id] = 1;
    }
    return s->q[id];
}

static int cand_before(const ot_cand *a, const ot_cand *b)
{
    if (a->score != b->score) return a->score > b->score;
    return a->order < b->order;
}

static int cand_cmp(const void *x, const void *y)
{
    const ot_cand *a = x, *b = y;
    return cand_before(a, b) ? -1 : (cand_before(b, a) ? 1 : 0);
}

/* A candidate's tie-break key: its order (the index of the candidate in the
 * layer) above the index of its parent in the layer (below
 * ENG_POL_MAX_NODES), where it decides nothing (orders differ). */
#define OT_RUN_BITS 16
_Static_assert(ENG_POL_MAX_NODES <= (1 << OT_RUN_BITS), "a parent index fits its bits");

/* The best `beam` of the nc candidates of parents lo .. lo + parents - 1 into
 * cands[0..beam), best first; returns how many.  Each parent's candidates
 * come in rank order with non-increasing logp (draft candidates are sorted
 * by log-prob; the caller tested it: in_order) and increasing order, so the
 * best are a merge of the parents' lists whose keys are computed as the
 * merge reads them (eng_select_cands: O(beam log parents), and only the heads
 * and the picked candidates are ever scored); an oracle whose lists are not
 * sorted gets the selection over every candidate.  Both give the same
 * candidates in the same order (cand_before is a strict total order). */
static int32_t pick_beam(ot_state *s, int32_t lo, int32_t parents, int32_t nc, int32_t beam,
                         int in_order)
{
    if (in_order) {
        int m = eng_select_cands(s->first, s->cr, parents, 1LL << OT_RUN_BITS, beam, s->heap,
                                 s->next, s->pick, s->pick_run);
        for (int i = 0; i < m; i++) {
            int32_t x = s->pick[i], r = s->pick_run[i], j = x - s->first[r];
            s->cands[i] = (ot_cand){s->cr[r].base + (double)s->cr[r].cand[j].logp, lo + r, j, x};
        }
        return m; /* fewer than beam only for keys without an order (NaN) */
    }
    for (int32_t r = 0; r < parents; r++)
        for (int32_t x = s->first[r]; x < s->first[r + 1]; x++) {
            int32_t j = x - s->first[r];
            s->cands[x] = (ot_cand){s->cr[r].base + (double)s->cr[r].cand[j].logp, lo + r, j, x};
        }
    eng_select_sorted(s->cands, (size_t)nc, sizeof *s->cands, (size_t)beam, cand_cmp);
    return beam;
}

/* nodes: cum_logq desc, depth asc, id asc (insertion sort reading the tree) */
static int node_before(const eng_tree *t, int32_t a, int32_t b)
{
    const eng_node *x = &t->nodes[a], *y = &t->nodes[b];
    if (x->cum_logq != y->cum_logq) return x->cum_logq > y->cum_logq;
    if (x->depth != y->depth) return x->depth < y->depth;
    return a < b;
}

/* Merges tree nodes [lo, hi) into the top-n list s->best[*cur][0..*m): the
 * layer is sorted (insertion: a layer is at most a beam) and merged, so C is
 * kept up to date layer by layer instead of re-ranking every node each time;
 * node_before is a strict total order, so C equals the top n of all nodes.
 * A beam layer (beam = 1: deeper than every node of C, ids in the beam's
 * order) is in node_before's order already when no node's cum_logq
 * is above its predecessor's (the beam ranks by the exact sums, and
 * rounding them to float keeps their order; nodes of equal cum_logq go by
 * id, the beam's order), which one pass checks; and against C, whose nodes
 * are shallower, node_before is a comparison of cum_logq alone (a tie goes
 * to C's node), read from arrays beside the ids. */
static void add_layer(ot_state *s, const eng_tree *t, int32_t lo, int32_t hi, int32_t n, int beam,
                      int32_t *cur, int32_t *m)
{
    int32_t cnt = hi - lo, sorted = beam;
    for (int32_t v = lo; v < hi; v++) {
        s->layer[v - lo] = v;
        s->layer_q[v - lo] = t->nodes[v].cum_logq;
    }
    for (int32_t j = 1; sorted && j < cnt; j++)
        sorted = !(s->layer_q[j] > s->layer_q[j - 1]);
    if (!sorted) {
        for (int32_t v = lo, c = 0; v < hi; v++) {
            int32_t j = c++;
            while (j > 0 && node_before(t, v, s->layer[j - 1])) {
                s->layer[j] = s->layer[j - 1];
                j--;
            }
            s->layer[j] = v;
        }
        for (int32_t j = 0; j < cnt; j++)
            s->layer_q[j] = t->nodes[s->layer[j]].cum_logq;
    }
    const int32_t *a = s->best[*cur];
    const float *aq = s->best_q[*cur];
    int32_t *out = s->best[1 - *cur], i = 0, j = 0, k = 0;
    float *oq = s->best_q[1 - *cur];
    while (k < n && (i < *m || j < cnt)) {
        int take_a;
        if (j >= cnt)
            take_a = 1;
        else if (i >= *m)
            take_a = 0;
        else if (beam) /* node_before(a[i], layer[j]): C's node is shallower */
            take_a = (aq[i] > s->layer_q[j]) | (aq[i] == s->layer_q[j]);
        else
            take_a = node_before(t, a[i], s->layer[j]);
        if (take_a) {
            oq[k] = aq[i];
            out[k++] = a[i++];
        } else {
            oq[k] = s->layer_q[j];
            out[k++] = s->layer[j++];
        }
    }
    *m = k;
    *cur = 1 - *cur;
}

static int ot_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    ot_state *s = self;
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    int32_t max_d = s->p.max_depth;
    if (lim->max_depth < max_d) max_d = lim->max_depth;
    if (lim->remaining - 1 < max_d) max_d = lim->remaining - 1;
    int32_t cap = lim->max_nodes < ENG_POL_MAX_NODES ? lim->max_nodes : ENG_POL_MAX_NODES;
    int32_t n = s->p.nodes < cap - 1 ? s->p.nodes : cap - 1;
    if (max_d < 1 || n < 1) return ENG_OK;

    memset(s->has_q, 0, (size_t)cap);
    int32_t lo = 0, hi = 1; /* the layer to expand next: tree ids [lo, hi) */
    double w_prev = 0.0;
    int32_t cur = 0, m = 0; /* C: the top n of the tree's non-root nodes, best first */
    /* nodes the tree came with may be deeper than a new layer: their layers
     * merge by node_before in full */
    int beam_layers = t->n_nodes <= 1;
    if (!beam_layers) add_layer(s, t, 1, t->n_nodes, n, 0, &cur, &m);
    for (int32_t L = 1;; L++) {
        /* C_L could not grow past max_d whatever W says: stop before drafting */
        if (L >= 2 && L - 1 >= max_d) break;
        /* generate layer L (virtual) by expanding layer L - 1 (ids [lo, hi)) */
        int32_t cnt = hi - lo;
        for (int32_t i = 0; i < cnt; i++)
            s->ids[i] = lo + i;
        int rc = draft->expand(draft->ctx, t, s->ids, cnt, s->p.unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        if (L >= 2) {
            /* candidate tree C_L over layers 1 .. L - 1 (all tree nodes): its
             * gain decides before the new layer's lists are read, which only
             * a layer that is kept needs */
            double w = 0.0;
            for (int32_t i = 0; i < m; i++)
                w += node_q(s, t, s->best[cur][i]);
            int more = w - w_prev > s->p.delta;
            w_prev = w;
            if (!more) break;
        }
        int32_t nc = 0;
        int in_order = 1; /* no candidate ranks before its predecessor */
        for (int32_t u = lo; u < hi; u++) {
            int32_t cn = 0, r = u - lo;
            const eng_cand *c = eng_tree_cands(t, u, &cn);
            if (cn > OT_MAX_K) cn = OT_MAX_K;
            s->first[r] = nc;
            s->cr[r] =
                (eng_cand_run){c, (double)t->nodes[u].cum_logq, (long long)nc << OT_RUN_BITS | r};
            in_order &= eng_cands_ranked(c, cn);
            nc += cn;
        }
        s->first[cnt] = nc;
        /* the beam: the best n candidates, in order */
        int32_t beam = pick_beam(s, lo, cnt, nc, nc < n ? nc : n, in_order);
        if (beam == 0) break;
        /* materialise layer L's beam so that it can be expanded next */
        if (t->n_nodes + beam > cap) break;
        int32_t first_new = t->n_nodes;
        for (int32_t i = 0; i < beam; i++) {
            const ot_cand *x = &s->cands[i];
            const eng_cand *c = &s->cr[x->parent - lo].cand[x->rank];
            int32_t id = eng_tree_add(t, x->parent, c->tok, c->logp);
            if (id < 0) return id;
        }
        lo = first_new;
        hi = t->n_nodes;
        add_layer(s, t, lo, hi, n, beam_layers, &cur, &m);
    }
    /* keep C_L: the tree holds exactly layers 1 .. L - 1 here */
    memset(s->keep, 0, (size_t)t->n_nodes);
    s->keep[0] = 1;
    for (int32_t i = 0; i < m; i++)
        s->keep[s->best[cur][i]] = 1;
    eng_tree_compact(t, s->keep, s->map);
    return ENG_OK;
}

static void ot_destroy(void *self)
{
    ot_state *s = self;
    if (!s) return;
    free(s->cands);
    free(s);
}

static const eng_policy_i ot_i = {
    .name = "opt_tree",
    .build = ot_build,
    .destroy = ot_destroy,
};

int eng_opt_tree_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_opt_tree_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_opt_tree_param_table, params)) return ENG_E_ARG;
    ot_state *s = calloc(1, sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    s->cands = malloc(sizeof *s->cands * (size_t)(in->nodes + 1) * OT_MAX_K);
    if (!s->cands) {
        ot_destroy(s);
        return ENG_E_NOMEM;
    }
    out->i = &ot_i;
    out->self = s;
    return ENG_OK;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_opt_tree = {
    .name = "opt_tree",
    .doc = "OPT-Tree: beam drafting until expected acceptance stops growing by delta",
    .params_size = sizeof(eng_opt_tree_params),
    .params = eng_opt_tree_param_table,
    .create = eng_opt_tree_create,
    .needs_draft = 1,
    .tree = {.rule = ENG_TREE_PLUS_ROOT, .fixed = 0, .param = "nodes"},
};
