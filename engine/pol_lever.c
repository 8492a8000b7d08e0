/*
 * pol_lever.c -- Lever (Lever §4; docs/policies.md "`lever`"): gain-cost
 * greedy drafting, early-exit verification pruning and CPU-NPU hybrid
 * execution, each switchable for ablations.
 *
 * Drafting (gain_cost).  Reach P^(c) = P^(u) * beta * q(x|u) / sum_{C_u} q;
 * gain G = 1 + sum P^; cost C = C_draft + C_verify(rows, leaves) with the
 * estimates of the policy's own eng_costmodel.  The frontier holds one entry
 * per expanded node u: its best candidate not yet in the tree (candidates are
 * sorted, so that is the next rank).  An entry's marginal cost Delta C depends
 * only on (a) whether u is still a leaf (next rank 0) and (b) whether the new
 * node is expandable (depth < d_max): four classes, each a max-heap keyed by
 * reach, so the argmax of P^ / Delta C (Eq. 5) is the best of four heap tops.
 * Eq. 6 stops the construction; n_max and d_max are safety caps.  Cost per
 * inserted node O(log n) plus, in hybrid mode, a readiness count that stops
 * after b_min candidates.
 *
 * Speed (the replay runs this ~100k times a second).  The cost model does not
 * change during a build and every Delta C of one step reads the same three
 * verification estimates -- V(n, l), V(n + 1, l) and V(n + 1, l + 1) for the
 * current rows n and leaves l -- so the build caches them (vc_*) and refreshes
 * them only when the tree grows; best_class, count_ready and Eq. 6 then cost
 * no table lookups.  Each expanded node's clamped candidate count is kept
 * beside its q = exp(log q) values, computed once per candidate at expansion.
 * The arithmetic is exactly that of eng_lever_delta_cost (same operands, same
 * order), so results are bit-identical to the uncached rules.
 *
 * Schedule.  cpu / npu: every inserted expandable node is expanded at once by
 * a single-node call on that unit (draft cost per node: the CPU node average
 * or the NPU batch-1 average).  hybrid (choice): while fewer than b_min
 * frontier candidates pass Eq. 6 priced as NPU batch members (per-node cost
 * npu(b_min) / b_min), one node is inserted and expanded on the CPU; once at
 * least b_min pass, up to b_max nodes are inserted in greedy order (the nodes
 * of one round cannot be each other's parents) and expanded as ONE NPU call.
 *
 * Other drafting variants (specinfer, opt_tree, eagle2, sequoia) build with
 * the registered policy of that name at its default parameters (its own
 * build and calibrate hooks, no copy), so that only the construction changes.
 *
 * Pruning (eng_prune.h): at the exit layer the runtime names through
 * calibrate (exit_layers[exit_index]); no exit layer or no exit_scores hook
 * means no pruning.  The plan sends every row through layers 0 .. l_e and
 * only kept rows past it; projection per the `projection` switch.
 *
 * Learning (observe).  beta: one EMA step (rate eta) per verified expanded
 * node with a known target token, indicator "g(u) in C_u", clamped to
 * [LV_BETA_MIN, 1].  Verification profile: the measured latency at the
 * drafted (rows, leaves) shape, as executed (pruning and projection
 * included).  Draft: each measured call (CPU per node, NPU per batch size).
 * calibrate seeds the profile (shape table, else the rows table with
 * (rows + 1) / 2 leaves) and the draft averages.
 *
 * Memory: one state struct plus score/normalisation scratch for
 * ENG_POL_MAX_NODES nodes, all in create; nothing per cycle.
 */
#include "pol_lever.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define LV_MAX_K 64
#define LV_BETA_MIN 1e-3
#define LV_NCLASS 4 /* (parent is leaf) x (expandable) */

static const char *const drafting_choices[] = {"gain_cost", "specinfer", "opt_tree",
                                               "eagle2",    "sequoia",   NULL};
static const char *const pruning_choices[] = {"none", "threshold", "shadow", "full", NULL};
static const char *const schedule_choices[] = {"hybrid", "cpu", "npu", NULL};
static const char *const projection_choices[] = {"cpu_on_demand", "npu_eager", "npu_on_demand",
                                                 NULL};

#define P(f) offsetof(eng_lever_params, f)
const eng_param_desc eng_lever_param_table[] = {
    {.name = "drafting",
     .type = ENG_PARAM_ENUM,
     .offset = P(drafting),
     .min = 0,
     .max = 4,
     .def = 0,
     .choices = drafting_choices,
     .doc = "tree construction: gain_cost, specinfer, opt_tree, eagle2 or sequoia"},
    {.name = "pruning",
     .type = ENG_PARAM_ENUM,
     .offset = P(pruning),
     .min = 0,
     .max = 3,
     .def = 3,
     .choices = pruning_choices,
     .doc = "verification pruning: none, threshold, shadow or full (shadow + safeguards)"},
    {.name = "draft_schedule",
     .type = ENG_PARAM_ENUM,
     .offset = P(draft_schedule),
     .min = 0,
     .max = 2,
     .def = 0,
     .choices = schedule_choices,
     .doc = "gain-cost expansions: hybrid (CPU, then NPU batches), cpu or npu"},
    {.name = "projection",
     .type = ENG_PARAM_ENUM,
     .offset = P(projection),
     .min = 0,
     .max = 2,
     .def = 0,
     .choices = projection_choices,
     .doc = "output projection: cpu_on_demand, npu_eager or npu_on_demand"},
    {.name = "n_max",
     .type = ENG_PARAM_INT,
     .offset = P(n_max),
     .min = 1,
     .max = ENG_LEVER_MAX_NODES - 1,
     .def = 64,
     .doc = "safety cap on draft nodes, root excluded (a tree of at most n_max + 1 nodes)"},
    {.name = "d_max",
     .type = ENG_PARAM_INT,
     .offset = P(d_max),
     .min = 1,
     .max = 32,
     .def = 10,
     .doc = "safety cap on tree depth"},
    {.name = "eta",
     .type = ENG_PARAM_DOUBLE,
     .offset = P(eta),
     .min = 0,
     .max = 1,
     .def = 0.1,
     .doc = "EMA rate of the reliability factor beta"},
    {.name = "beta_init",
     .type = ENG_PARAM_DOUBLE,
     .offset = P(beta_init),
     .min = LV_BETA_MIN,
     .max = 1,
     .def = 1.0,
     .doc = "reliability factor before any feedback"},
    {.name = "b_min",
     .type = ENG_PARAM_INT,
     .offset = P(b_min),
     .min = 1,
     .max = 64,
     .def = 4,
     .doc = "hybrid: ready frontier nodes that switch expansion to one NPU batch"},
    {.name = "b_max",
     .type = ENG_PARAM_INT,
     .offset = P(b_max),
     .min = 1,
     .max = 64,
     .def = 16,
     .doc = "hybrid: largest NPU draft batch"},
    {.name = "tau",
     .type = ENG_PARAM_DOUBLE,
     .offset = P(tau),
     .min = 1e-3,
     .max = 1e3,
     .def = 1.0,
     .doc = "temperature of the predictor score normalisation"},
    {.name = "theta",
     .type = ENG_PARAM_DOUBLE,
     .offset = P(theta),
     .min = 0,
     .max = 1,
     .def = 0.1,
     .doc = "edges with a normalised score below theta are removable"},
    {.name = "d0",
     .type = ENG_PARAM_INT,
     .offset = P(d0),
     .min = 0,
     .max = 32,
     .def = 1,
     .doc = "near-root coverage depth"},
    {.name = "m0",
     .type = ENG_PARAM_INT,
     .offset = P(m0),
     .min = 0,
     .max = 64,
     .def = 2,
     .doc = "children kept per node above depth d0"},
    {.name = "n_min",
     .type = ENG_PARAM_INT,
     .offset = P(n_min),
     .min = 0,
     .max = ENG_POL_MAX_NODES,
     .def = 4,
     .doc = "reject pruning that keeps fewer nodes"},
    {.name = "l_min",
     .type = ENG_PARAM_INT,
     .offset = P(l_min),
     .min = 0,
     .max = ENG_POL_MAX_NODES,
     .def = 2,
     .doc = "reject pruning that keeps fewer leaves"},
    {.name = "exit_index",
     .type = ENG_PARAM_INT,
     .offset = P(exit_index),
     .min = 0,
     .max = 7,
     .def = 0,
     .doc = "which recorded exit layer the predictor reads"},
    {.name = "cost_ema",
     .type = ENG_PARAM_DOUBLE,
     .offset = P(cost_ema),
     .min = 1e-6,
     .max = 1,
     .def = 0.2,
     .doc = "moving-average rate of the latency estimators"},
    {.name = "unseen_penalty",
     .type = ENG_PARAM_DOUBLE,
     .offset = P(unseen_penalty),
     .min = 0,
     .max = 10,
     .def = 0.1,
     .doc = "penalty on estimates of unseen verification shapes"},
    {.name = NULL},
};
#undef P

typedef struct lv_entry {
    double key; /* reach of the candidate before beta: P^(u) * q / sum q */
    int32_t u;  /* expanded tree node; its candidate next_rank[u] */
} lv_entry;

typedef struct lv_heap {
    int32_t n;
    lv_entry e[ENG_LEVER_MAX_NODES];
} lv_heap;

typedef struct lv_state {
    eng_lever_params p;
    eng_costmodel cm;
    double beta;
    int32_t exit_layer;
    eng_policy inner;   /* drafting != gain_cost */
    void *inner_params; /* owned */
    /* build scratch */
    lv_heap heap[LV_NCLASS];
    double reach[ENG_LEVER_MAX_NODES], sumq[ENG_LEVER_MAX_NODES];
    double *q; /* [ENG_LEVER_MAX_NODES * LV_MAX_K] q = exp(logq) of each candidate */
    int32_t ncand[ENG_LEVER_MAX_NODES]; /* candidates of an expanded node, <= LV_MAX_K */
    int32_t next_rank[ENG_LEVER_MAX_NODES];
    int32_t pending[ENG_LEVER_MAX_NODES];
    /* draft calls of the cycle (for observe) */
    uint8_t call_npu[ENG_LEVER_MAX_NODES + 1];
    int32_t call_rows[ENG_LEVER_MAX_NODES + 1];
    int32_t n_calls;
    /* prune scratch */
    float *scores; /* [ENG_POL_MAX_NODES * LV_MAX_K] */
    double *norm;  /* [ENG_POL_MAX_NODES] */
} lv_state;

/* ---- the rules, exposed for tests ---- */

double eng_lever_delta_cost(const eng_costmodel *cm, int32_t rows, int32_t leaves,
                            int32_t parent_is_leaf, double child_draft_ms)
{
    int32_t l2 = parent_is_leaf ? leaves : leaves + 1;
    double d = eng_costmodel_verify(cm, rows + 1, l2) - eng_costmodel_verify(cm, rows, leaves) +
               child_draft_ms;
    return d > ENG_LEVER_MIN_DELTA_MS ? d : ENG_LEVER_MIN_DELTA_MS;
}

int32_t eng_lever_stop(double reach, double delta_ms, double g, double c_ms)
{
    /* reach / delta <= g / c, cross-multiplied (both costs positive) */
    return reach * c_ms <= g * delta_ms;
}

/* ---- frontier heaps ---- */

static void heap_push(lv_heap *h, double key, int32_t u)
{
    int32_t i = h->n++;
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (h->e[p].key >= key) break;
        h->e[i] = h->e[p];
        i = p;
    }
    h->e[i].key = key;
    h->e[i].u = u;
}

static lv_entry heap_pop(lv_heap *h)
{
    lv_entry top = h->e[0], x = h->e[--h->n];
    int32_t i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->e[c + 1].key > h->e[c].key) c++;
        if (x.key >= h->e[c].key) break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->n > 0) h->e[i] = x;
    return top;
}

static int32_t cls(int32_t parent_is_leaf, int32_t expandable)
{
    return parent_is_leaf * 2 + expandable;
}

typedef struct lv_build {
    lv_state *s;
    eng_tree *t;
    int32_t d_max, cap; /* depth cap, node capacity (root included) */
    int32_t leaves;
    double g, c_draft;
    /* verification estimates at the current shape (n = t->n_nodes rows, l =
     * leaves), valid while vc_rows == n and vc_leaves == l */
    int32_t vc_rows, vc_leaves;
    double vc_cur, vc_leaf, vc_branch; /* V(n, l), V(n + 1, l), V(n + 1, l + 1) */
} lv_build;

static void refresh_costs(lv_build *b)
{
    int32_t n = b->t->n_nodes, l = b->leaves;
    if (n == b->vc_rows && l == b->vc_leaves) return;
    const eng_costmodel *cm = &b->s->cm;
    b->vc_rows = n;
    b->vc_leaves = l;
    b->vc_cur = eng_costmodel_verify(cm, n, l);
    b->vc_leaf = eng_costmodel_verify(cm, n + 1, l);
    b->vc_branch = eng_costmodel_verify(cm, n + 1, l + 1);
}

/* eng_lever_delta_cost at the current shape, from the cached estimates */
static double delta_cost(const lv_build *b, int32_t parent_is_leaf, double child_draft_ms)
{
    double d = (parent_is_leaf ? b->vc_leaf : b->vc_branch) - b->vc_cur + child_draft_ms;
    return d > ENG_LEVER_MIN_DELTA_MS ? d : ENG_LEVER_MIN_DELTA_MS;
}

static double tree_cost(const lv_build *b)
{
    return b->c_draft + b->vc_cur;
}

/* pushes u's candidate next_rank[u] (if any) into its class heap */
static void push_next(lv_build *b, int32_t u)
{
    lv_state *s = b->s;
    int32_t r = s->next_rank[u];
    if (r >= s->ncand[u] || s->sumq[u] <= 0) return;
    double key = s->reach[u] * s->q[(size_t)u * LV_MAX_K + (size_t)r] / s->sumq[u];
    int32_t expandable = b->t->nodes[u].depth + 1 < b->d_max;
    heap_push(&s->heap[cls(r == 0, expandable)], key, u);
}

/* after u's expansion: its reach normaliser and first frontier entry */
static void add_expanded(lv_build *b, int32_t u)
{
    lv_state *s = b->s;
    int32_t cn = 0;
    const eng_cand *c = eng_tree_cands(b->t, u, &cn);
    if (cn > LV_MAX_K) cn = LV_MAX_K; /* candidates past LV_MAX_K are not drafted */
    double z = 0.0, *q = s->q + (size_t)u * LV_MAX_K;
    for (int32_t j = 0; j < cn; j++)
        z += q[j] = exp((double)c[j].logp);
    s->sumq[u] = z;
    s->ncand[u] = cn;
    s->next_rank[u] = 0;
    push_next(b, u);
}

static int expand(lv_build *b, eng_draft_oracle *draft, const int32_t *ids, int32_t n, int npu)
{
    lv_state *s = b->s;
    int rc = draft->expand(draft->ctx, b->t, ids, n, npu ? ENG_UNIT_NPU : ENG_UNIT_CPU);
    if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
    if (s->n_calls <= ENG_LEVER_MAX_NODES) {
        s->call_npu[s->n_calls] = (uint8_t)npu;
        s->call_rows[s->n_calls++] = n;
    }
    for (int32_t i = 0; i < n; i++)
        add_expanded(b, ids[i]);
    return ENG_OK;
}

/* best class by P^ / Delta C for per-node draft cost dv; -1 when empty */
static int32_t best_class(const lv_build *b, double dv, double *delta)
{
    int32_t best = -1;
    double best_ratio = -1.0;
    for (int32_t k = 0; k < LV_NCLASS; k++) {
        const lv_heap *h = &b->s->heap[k];
        if (h->n == 0) continue;
        double d = delta_cost(b, k >= 2, (k & 1) ? dv : 0.0);
        double ratio = h->e[0].key / d;
        if (ratio > best_ratio) {
            best_ratio = ratio;
            best = k;
            *delta = d;
        }
    }
    return best;
}

/* frontier candidates (all ranks) passing Eq. 6 at per-node draft cost dv,
 * counted up to `enough` */
static int32_t count_ready(const lv_build *b, double dv, int32_t enough)
{
    const lv_state *s = b->s;
    double g = b->g, c = tree_cost(b);
    /* Delta C of a rank-0 and of a later candidate, per expandability */
    double d_first[2] = {delta_cost(b, 1, 0.0), delta_cost(b, 1, dv)};
    double d_later[2] = {delta_cost(b, 0, 0.0), delta_cost(b, 0, dv)};
    int32_t ready = 0;
    for (int32_t k = 0; k < LV_NCLASS && ready < enough; k++) {
        const lv_heap *h = &s->heap[k];
        int32_t expandable = k & 1;
        for (int32_t i = 0; i < h->n && ready < enough; i++) {
            int32_t u = h->e[i].u, cn = s->ncand[u];
            const double *q = s->q + (size_t)u * LV_MAX_K;
            for (int32_t r = s->next_rank[u]; r < cn && ready < enough; r++) {
                double d = r == 0 ? d_first[expandable] : d_later[expandable];
                double reach = s->beta * s->reach[u] * q[r] / s->sumq[u];
                if (eng_lever_stop(reach, d, g, c)) break;
                ready++;
            }
        }
    }
    return ready;
}

static int gain_cost_build(lv_state *s, eng_tree *t, eng_draft_oracle *draft,
                           const eng_build_limits *lim)
{
    lv_build b = {.s = s, .t = t, .leaves = 1, .g = 1.0, .vc_rows = -1};
    b.d_max = s->p.d_max;
    if (lim->max_depth < b.d_max) b.d_max = lim->max_depth;
    if (lim->remaining - 1 < b.d_max) b.d_max = lim->remaining - 1;
    b.cap = s->p.n_max + 1;
    if (lim->max_nodes < b.cap) b.cap = lim->max_nodes;
    if (b.d_max < 1 || b.cap < 2) return ENG_OK;
    for (int32_t k = 0; k < LV_NCLASS; k++)
        s->heap[k].n = 0;
    int sched = s->p.draft_schedule;
    int single_npu = sched == ENG_LEVER_NPU;
    double d_single =
        single_npu ? eng_costmodel_npu_call(&s->cm, 1) : eng_costmodel_cpu_node(&s->cm);
    double d_batch = eng_costmodel_npu_call(&s->cm, s->p.b_min) / s->p.b_min;
    s->reach[0] = 1.0;
    int32_t root = 0;
    int rc = expand(&b, draft, &root, 1, single_npu);
    if (rc != ENG_OK) return rc;
    b.c_draft = d_single;
    for (;;) {
        refresh_costs(&b);
        int batch = sched == ENG_LEVER_HYBRID && count_ready(&b, d_batch, s->p.b_min) >= s->p.b_min;
        double dv = batch ? d_batch : d_single;
        int32_t limit = batch ? s->p.b_max : 1, picked = 0, n_pend = 0;
        while (picked < limit && t->n_nodes < b.cap) {
            refresh_costs(&b);
            double delta = 0.0;
            int32_t k = best_class(&b, dv, &delta);
            if (k < 0) break;
            double reach = s->beta * s->heap[k].e[0].key;
            if (eng_lever_stop(reach, delta, b.g, tree_cost(&b))) break;
            lv_entry e = heap_pop(&s->heap[k]);
            int32_t cn = 0, r = s->next_rank[e.u];
            const eng_cand *c = eng_tree_cands(t, e.u, &cn);
            int32_t v = eng_tree_add(t, e.u, c[r].tok, c[r].logp);
            if (v < 0) return v;
            if (r > 0) b.leaves++;
            b.g += reach;
            s->reach[v] = reach;
            s->next_rank[e.u] = r + 1;
            push_next(&b, e.u);
            if (k & 1) {
                b.c_draft += dv;
                s->pending[n_pend++] = v;
            }
            picked++;
        }
        if (n_pend > 0) {
            rc = batch ? expand(&b, draft, s->pending, n_pend, 1)
                       : expand(&b, draft, s->pending, 1, single_npu);
            if (rc != ENG_OK) return rc;
        }
        if (picked == 0 || t->n_nodes >= b.cap) break;
    }
    return ENG_OK;
}

static int lv_build_hook(void *self, eng_tree *t, eng_draft_oracle *draft,
                         const eng_build_limits *lim)
{
    lv_state *s = self;
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    s->n_calls = 0;
    if (s->inner.i) return eng_policy_build(&s->inner, t, draft, lim);
    return gain_cost_build(s, t, draft, lim);
}

static int lv_prune(void *self, const eng_tree *t, eng_target_oracle *target, uint8_t *keep)
{
    lv_state *s = self;
    if (!t || !keep) return ENG_E_ARG;
    if (s->p.pruning == ENG_PRUNE_NONE || s->exit_layer < 0 || !target || !target->exit_scores ||
        target->k < 1 || target->k > LV_MAX_K || t->n_nodes > ENG_POL_MAX_NODES)
        return ENG_OK;
    int rc = target->exit_scores(target->ctx, t, s->p.exit_index, s->scores);
    if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
    eng_prune_params pp = {.mode = s->p.pruning,
                           .tau = s->p.tau,
                           .theta = s->p.theta,
                           .d0 = s->p.d0,
                           .m0 = s->p.m0,
                           .n_min = s->p.n_min,
                           .l_min = s->p.l_min,
                           .d_max = ENG_POL_MAX_NODES};
    int32_t kept = eng_prune_tree(t, s->scores, target->k, &pp, s->norm, keep);
    return kept < 0 ? kept : ENG_OK;
}

static void lv_plan(void *self, const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan)
{
    lv_state *s = self;
    eng_plan_default(t, NULL, plan);
    if (keep && s->exit_layer >= 0) {
        eng_verify_plan kp;
        eng_plan_default(t, keep, &kp);
        if (kp.rows < plan->rows) {
            plan->exit_layer = s->exit_layer;
            plan->rows_after_exit = kp.rows;
        }
    }
    static const eng_proj_mode proj[] = {ENG_PROJ_ONDEMAND_CPU, ENG_PROJ_EAGER_NPU,
                                         ENG_PROJ_ONDEMAND_NPU};
    plan->proj = proj[s->p.projection];
}

static void lv_observe(void *self, const eng_feedback *fb)
{
    lv_state *s = self;
    if (!fb || !fb->tree) return;
    const eng_tree *t = fb->tree;
    if (fb->g) {
        for (int32_t v = 0; v < t->n_nodes; v++) {
            if ((fb->keep && v > 0 && !fb->keep[v]) || fb->g[v] == ENG_NO_TOKEN) continue;
            int32_t cn = 0;
            const eng_cand *c = eng_tree_cands(t, v, &cn);
            if (cn == 0) continue;
            int in = 0;
            for (int32_t j = 0; j < cn && !in; j++)
                in = c[j].tok == fb->g[v];
            s->beta = (1.0 - s->p.eta) * s->beta + s->p.eta * in;
            if (s->beta < LV_BETA_MIN) s->beta = LV_BETA_MIN;
        }
    }
    eng_costmodel_observe_verify(&s->cm, fb->plan.rows, fb->plan.leaves, fb->verify_ms);
    if (fb->call_ms && !s->inner.i) {
        int32_t n = fb->draft_calls < s->n_calls ? fb->draft_calls : s->n_calls;
        for (int32_t i = 0; i < n; i++)
            eng_costmodel_observe_draft(&s->cm, s->call_npu[i], s->call_rows[i], fb->call_ms[i]);
    }
}

static int lv_calibrate(void *self, const eng_cost_profile *prof)
{
    lv_state *s = self;
    if (!prof) return ENG_E_ARG;
    if (prof->verify_nl_ms && prof->n_nl_rows > 0 && prof->n_nl_leaves > 0) {
        for (int32_t r = 1; r <= prof->n_nl_rows; r++)
            for (int32_t l = 1; l <= prof->n_nl_leaves && l <= r; l++)
                eng_costmodel_seed_verify(
                    &s->cm, r, l,
                    prof->verify_nl_ms[(size_t)(r - 1) * prof->n_nl_leaves + (size_t)(l - 1)]);
    } else if (prof->verify_ms) {
        for (int32_t r = 1; r <= prof->n_verify; r++)
            eng_costmodel_seed_verify(&s->cm, r, r > 1 ? (r + 1) / 2 : 1, prof->verify_ms[r - 1]);
    }
    if (prof->n_draft > 0 && prof->draft_cpu_ms)
        eng_costmodel_seed_cpu(&s->cm, prof->draft_cpu_ms[0]);
    for (int32_t b = 1; prof->draft_npu_ms && b <= prof->n_draft && b <= ENG_CM_MAX_BATCH; b++)
        eng_costmodel_seed_npu(&s->cm, b, prof->draft_npu_ms[b - 1]);
    s->exit_layer = -1;
    if (s->p.pruning != ENG_PRUNE_NONE && prof->exit_layers && s->p.exit_index < prof->n_exit)
        s->exit_layer = prof->exit_layers[s->p.exit_index];
    return s->inner.i ? eng_policy_calibrate(&s->inner, prof) : ENG_OK;
}

static void lv_destroy(void *self)
{
    lv_state *s = self;
    if (!s) return;
    eng_policy_destroy(&s->inner);
    free(s->inner_params);
    free(s->scores);
    free(s->norm);
    free(s->q);
    free(s);
}

static const eng_policy_i lv_i = {
    .name = "lever",
    .build = lv_build_hook,
    .prune = lv_prune,
    .plan = lv_plan,
    .observe = lv_observe,
    .destroy = lv_destroy,
    .calibrate = lv_calibrate,
};

int eng_lever_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_lever_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_lever_param_table, params)) return ENG_E_ARG;
    lv_state *s = calloc(1, sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    s->beta = in->beta_init;
    s->exit_layer = -1;
    eng_costmodel_params cp;
    eng_costmodel_default_params(&cp);
    cp.ema = in->cost_ema;
    cp.penalty = in->unseen_penalty;
    eng_costmodel_init(&s->cm, &cp);
    s->scores = malloc(sizeof(float) * ENG_POL_MAX_NODES * LV_MAX_K);
    s->norm = malloc(sizeof(double) * ENG_POL_MAX_NODES);
    s->q = malloc(sizeof(double) * ENG_LEVER_MAX_NODES * LV_MAX_K);
    if (!s->scores || !s->norm || !s->q) {
        lv_destroy(s);
        return ENG_E_NOMEM;
    }
    if (in->drafting != ENG_LEVER_GAIN_COST) {
        const char *name = drafting_choices[in->drafting];
        const eng_policy_desc *d = eng_policy_lookup(name);
        s->inner_params = d ? calloc(1, d->params_size) : NULL;
        if (!s->inner_params) {
            lv_destroy(s);
            return ENG_E_NOMEM;
        }
        eng_params_defaults(d->params, s->inner_params);
        int rc = d->create(s->inner_params, &s->inner);
        if (rc != ENG_OK) {
            lv_destroy(s);
            return rc;
        }
    }
    out->i = &lv_i;
    out->self = s;
    return ENG_OK;
}

double eng_lever_beta(const eng_policy *p)
{
    return p && p->i == &lv_i ? ((const lv_state *)p->self)->beta : NAN;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_lever = {
    .name = "lever",
    .doc = "Lever: gain-cost tree, early-exit verification pruning, CPU-NPU hybrid",
    .params_size = sizeof(eng_lever_params),
    .params = eng_lever_param_table,
    .create = eng_lever_create,
    .needs_draft = 1,
    .tree = {.rule = ENG_TREE_PLUS_ROOT, .fixed = 0, .param = "n_max"},
};
