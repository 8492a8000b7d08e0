/*
 * pol_sequoia.c -- Sequoia (Chen et al., NeurIPS 2024; public tree_search.py):
 * a static, hardware-aware tree from a dynamic programme.
 *
 * Inputs.  The positional acceptance vector p[k] (probability that the draft's
 * rank-k candidate is the target's token) and the verification latency of an
 * m-row tree t_verify(m), plus the latency of one draft call.  The engine never
 * measures them itself: they arrive through the optional calibrate hook as an
 * eng_cost_profile (the replay measures p[k] on the trace's recorded
 * reference-path nodes and prices t_verify / t_draft on the phone model
 * before the first cycle).  Until calibrate is called the
 * `prior` vector is used with a flat t_verify and free drafting, which picks the
 * largest, deepest tree.
 *
 * DP (as in the public tree_search.py; docs/policies.md "`sequoia`").
 * T[m][l][b] = best expected tokens per cycle (accepted + bonus) of a tree of
 * m nodes (root included), at most l levels (root = level 1), whose root has b
 * children, the i-th child being the rank-i candidate:
 *   T[1][l][0] = 1
 *   T[m][l][1] = 1 + p[1] * max_b T[m-1][l-1][b]
 *   T[m][l][b] = max_{1<=y<m} T[y][l][b-1] + p[b] * max_b' T[m-y][l-1][b']
 * (b <= |p|).  Best[m][l] = max_b T[m][l][b].  O(M^2 L B) time, O(M L B) memory.
 *
 * Choice of size and depth: minimise
 *   ( (l - 1) * t_draft(ceil((m - 1) / (l - 1))) + t_verify(m) ) / Best[m][l]
 * over m <= max_nodes, l - 1 <= max_depth: one batched draft call per level
 * (rows = the level's mean width), then one verification.  Ties keep the
 * smaller m, then the smaller l.  The shape is then fixed for the whole run.
 *
 * Drafting follows the shape level by level, one batched oracle call per level
 * over the nodes that have children in the shape; a shape node whose rank is
 * missing from its parent's candidate set is skipped with its subtree.  Levels
 * are capped by lim->max_depth and lim->remaining - 1, nodes by lim->max_nodes.
 *
 * State: tables and shape sized from the params in create; calibrate reuses
 * them.  The DP runs once: in calibrate, or from the prior at the first build
 * (or eng_sequoia_shape) when nothing calibrated it.  Nothing is allocated
 * per cycle.
 */
#include "pol_sequoia.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const unit_choices[] = {"cpu", "npu", NULL};
static const double default_prior[] = {0.55, 0.12, 0.05, 0.03, 0.02, 0.01, 0.01, 0.01};

#define P(f) offsetof(eng_sequoia_params, f)
const eng_param_desc eng_sequoia_param_table[] = {
    {.name = "max_nodes", .type = ENG_PARAM_INT, .offset = P(max_nodes), .min = 1, .max = 256,
     .def = 64, .doc = "largest tree considered, root included"},
    {.name = "max_depth", .type = ENG_PARAM_INT, .offset = P(max_depth), .min = 1, .max = 32,
     .def = 8, .doc = "deepest tree level considered (root = 0)"},
    {.name = "prior", .type = ENG_PARAM_DOUBLE_LIST, .offset = P(prior), .min = 0, .max = 1,
     .def = 0.55, .cap = ENG_POL_MAX_LIST, .count_offset = P(n_prior), .def_list = default_prior,
     .def_count = 8,
     .doc = "positional acceptance p[k] used until the runtime measures one"},
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = P(unit), .min = 0, .max = 1, .def = 1,
     .choices = unit_choices, .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};
#undef P

/* ---- the DP ---- */

typedef struct dp {
    int32_t M, Lm, B; /* sizes: m in [1, M], l in [1, Lm], b in [0, B] */
    double *T;        /* [(M+1)(Lm+1)(B+1)] */
    int32_t *Y;       /* split y of T[m][l][b], b >= 2 */
    double *best;     /* [(M+1)(Lm+1)] */
    int32_t *best_b;
} dp;

static size_t dp_cells(int32_t M, int32_t Lm, int32_t B)
{
    return (size_t)(M + 1) * (size_t)(Lm + 1) * (size_t)(B + 1);
}

size_t eng_sequoia_dp_bytes(int32_t m, int32_t l, int32_t n_p)
{
    if (m < 1 || l < 1 || n_p < 0) return 0;
    size_t c = dp_cells(m, l, n_p), c2 = (size_t)(m + 1) * (size_t)(l + 1);
    return c * (sizeof(double) + sizeof(int32_t)) + c2 * (sizeof(double) + sizeof(int32_t));
}

static void dp_bind(dp *d, void *mem, int32_t M, int32_t Lm, int32_t B)
{
    size_t c = dp_cells(M, Lm, B), c2 = (size_t)(M + 1) * (size_t)(Lm + 1);
    d->M = M;
    d->Lm = Lm;
    d->B = B;
    d->T = mem;
    d->best = d->T + c;
    d->Y = (int32_t *)(d->best + c2);
    d->best_b = d->Y + c;
}

#define AT(d, m, l, b) (((size_t)(m) * (size_t)((d)->Lm + 1) + (size_t)(l)) * (size_t)((d)->B + 1) + (size_t)(b))
#define AT2(d, m, l) ((size_t)(m) * (size_t)((d)->Lm + 1) + (size_t)(l))

static void dp_run(dp *d, const double *p)
{
    /* strides of m in T and in best */
    const size_t sT = (size_t)(d->Lm + 1) * (size_t)(d->B + 1), sB = (size_t)(d->Lm + 1);
    for (int32_t l = 1; l <= d->Lm; l++) {
        for (int32_t m = 1; m <= d->M; m++) {
            double bv = -INFINITY;
            int32_t bb = 0;
            for (int32_t b = 0; b <= d->B; b++) {
                double v = -INFINITY;
                int32_t y_best = 0;
                if (b == 0) {
                    v = m == 1 ? 1.0 : -INFINITY;
                } else if (l >= 2 && m >= b + 1) {
                    if (b == 1) {
                        v = 1.0 + p[0] * d->best[AT2(d, m - 1, l - 1)];
                    } else {
                        /* y walks T[y][l][b - 1] up and Best[m - y][l - 1]
                         * down.  An unreachable T (-inf) needs no test: -inf
                         * plus a product is -inf or NaN, which never beats v. */
                        const double *ty = &d->T[AT(d, b, l, b - 1)];
                        const double *by = &d->best[AT2(d, m - b, l - 1)];
                        const double pb = p[b - 1];
                        for (int32_t y = b; y <= m - 1; y++, ty += sT, by -= sB) {
                            double x = *ty + pb * *by;
                            if (x > v) {
                                v = x;
                                y_best = y;
                            }
                        }
                    }
                }
                d->T[AT(d, m, l, b)] = v;
                d->Y[AT(d, m, l, b)] = y_best;
                if (v > bv) {
                    bv = v;
                    bb = b;
                }
            }
            d->best[AT2(d, m, l)] = bv;
            d->best_b[AT2(d, m, l)] = bb;
        }
    }
}

double eng_sequoia_dp(const double *p, int32_t n_p, int32_t m, int32_t l, void *scratch)
{
    if (!p || !scratch || m < 1 || l < 1 || n_p < 0) return NAN;
    dp d;
    int32_t B = n_p < m - 1 ? n_p : m - 1;
    dp_bind(&d, scratch, m, l, B < 0 ? 0 : B);
    dp_run(&d, p);
    return d.best[AT2(&d, m, l)];
}

/* ---- the policy ---- */

typedef struct sq_state {
    eng_sequoia_params p;
    dp d;
    void *dp_mem;
    double acc[ENG_POL_MAX_LIST];
    int32_t n_acc;
    /* the chosen shape: node s has parent sh_par[s] (-1 for the root, s = 0),
     * rank sh_rank[s] (1-based) and depth sh_depth[s]; parents precede children */
    int32_t n_shape, shape_depth, shape_m;
    int32_t planned; /* the shape is fixed (by calibrate, else at first use from the prior) */
    int32_t *sh_par, *sh_rank, *sh_depth, *sh_node;
    int32_t ids[ENG_POL_MAX_NODES];
} sq_state;

/* appends the subtree (m, l, b) rooted at shape node `at` */
static void emit_shape(sq_state *s, int32_t at, int32_t m, int32_t l, int32_t b)
{
    int32_t size[ENG_POL_MAX_LIST + 1];
    int32_t cm = m;
    for (int32_t cb = b; cb >= 1; cb--) {
        if (cb == 1) {
            size[1] = cm - 1;
        } else {
            int32_t y = s->d.Y[AT(&s->d, cm, l, cb)];
            size[cb] = cm - y;
            cm = y;
        }
    }
    int32_t first = s->n_shape;
    for (int32_t r = 1; r <= b; r++) {
        int32_t c = s->n_shape++;
        s->sh_par[c] = at;
        s->sh_rank[c] = r;
        s->sh_depth[c] = s->sh_depth[at] + 1;
    }
    for (int32_t r = 1; r <= b; r++) {
        int32_t sz = size[r];
        emit_shape(s, first + r - 1, sz, l - 1, s->d.best_b[AT2(&s->d, sz, l - 1)]);
    }
}

/* DP over the current acceptance vector and cost tables; fixes the shape */
static void sq_plan(sq_state *s, const double *verify_ms, int32_t n_verify, const double *draft_ms,
                    int32_t n_draft)
{
    int32_t B = s->n_acc < s->p.max_nodes - 1 ? s->n_acc : s->p.max_nodes - 1;
    if (B < 0) B = 0;
    int32_t M = s->p.max_nodes;
    if (verify_ms && n_verify < M) M = n_verify < 1 ? 1 : n_verify;
    dp_bind(&s->d, s->dp_mem, M, s->p.max_depth + 1, B);
    dp_run(&s->d, s->acc);
    double best_cost = INFINITY;
    int32_t bm = 1, bl = 1;
    for (int32_t m = 1; m <= M; m++) {
        for (int32_t l = 1; l <= s->d.Lm; l++) {
            double e = s->d.best[AT2(&s->d, m, l)];
            if (!(e > 0)) continue;
            double tv = verify_ms ? verify_ms[m - 1] : 1.0, td = 0.0;
            if (draft_ms && l > 1) {
                int32_t w = (m - 1 + l - 2) / (l - 1);
                if (w > n_draft) w = n_draft;
                td = w >= 1 ? (double)(l - 1) * draft_ms[w - 1] : 0.0;
            }
            double cost = (td + tv) / e;
            if (cost < best_cost) {
                best_cost = cost;
                bm = m;
                bl = l;
            }
        }
    }
    s->n_shape = 1;
    s->sh_par[0] = -1;
    s->sh_rank[0] = 0;
    s->sh_depth[0] = 0;
    emit_shape(s, 0, bm, bl, s->d.best_b[AT2(&s->d, bm, bl)]);
    s->shape_m = bm;
    s->shape_depth = 0;
    for (int32_t i = 0; i < s->n_shape; i++)
        if (s->sh_depth[i] > s->shape_depth) s->shape_depth = s->sh_depth[i];
    s->planned = 1;
}

/* The shape from the prior when calibrate has not fixed one: a runtime that
 * calibrates (the replay, always) pays for one DP, not two. */
static void sq_plan_prior(sq_state *s)
{
    if (!s->planned) sq_plan(s, NULL, 0, NULL, 0);
}

static int sq_calibrate(void *self, const eng_cost_profile *prof)
{
    sq_state *s = self;
    if (!prof) return ENG_E_ARG;
    if (prof->accept_pos && prof->n_pos > 0) {
        s->n_acc = prof->n_pos < ENG_POL_MAX_LIST ? prof->n_pos : ENG_POL_MAX_LIST;
        for (int32_t i = 0; i < s->n_acc; i++)
            s->acc[i] = prof->accept_pos[i];
    }
    const double *dr = s->p.unit == ENG_UNIT_NPU ? prof->draft_npu_ms : prof->draft_cpu_ms;
    sq_plan(s, prof->n_verify > 0 ? prof->verify_ms : NULL, prof->n_verify,
            prof->n_draft > 0 ? dr : NULL, prof->n_draft);
    return ENG_OK;
}

static int sq_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    sq_state *s = self;
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    sq_plan_prior(s);
    int32_t max_d = s->shape_depth;
    if (lim->max_depth < max_d) max_d = lim->max_depth;
    if (lim->remaining - 1 < max_d) max_d = lim->remaining - 1;
    int32_t cap = lim->max_nodes < ENG_POL_MAX_NODES ? lim->max_nodes : ENG_POL_MAX_NODES;
    s->sh_node[0] = 0;
    for (int32_t i = 1; i < s->n_shape; i++)
        s->sh_node[i] = ENG_NO_NODE;
    for (int32_t d = 1; d <= max_d; d++) {
        /* expand the level-(d-1) nodes that have children in the shape */
        int32_t n = 0;
        for (int32_t i = 1; i < s->n_shape; i++) {
            if (s->sh_depth[i] != d) continue;
            int32_t pn = s->sh_node[s->sh_par[i]];
            if (pn == ENG_NO_NODE || t->nodes[pn].cand_off != ENG_NO_NODE) continue;
            int dup = 0;
            for (int32_t j = 0; j < n && !dup; j++)
                dup = s->ids[j] == pn;
            if (!dup) s->ids[n++] = pn;
        }
        if (n == 0) break;
        int rc = draft->expand(draft->ctx, t, s->ids, n, s->p.unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        for (int32_t i = 1; i < s->n_shape; i++) {
            if (s->sh_depth[i] != d) continue;
            int32_t pn = s->sh_node[s->sh_par[i]];
            if (pn == ENG_NO_NODE || t->n_nodes >= cap) continue;
            int32_t cn = 0;
            const eng_cand *c = eng_tree_cands(t, pn, &cn);
            int32_t r = s->sh_rank[i] - 1;
            if (r >= cn) continue;
            int32_t id = eng_tree_add(t, pn, c[r].tok, c[r].logp);
            if (id < 0) return id;
            s->sh_node[i] = id;
        }
    }
    return ENG_OK;
}

static void sq_destroy(void *self)
{
    sq_state *s = self;
    if (!s) return;
    free(s->dp_mem);
    free(s->sh_par);
    free(s);
}

static const eng_policy_i sq_i = {
    .name = "sequoia",
    .build = sq_build,
    .destroy = sq_destroy,
    .calibrate = sq_calibrate,
};

int eng_sequoia_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_sequoia_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_sequoia_param_table, params)) return ENG_E_ARG;
    sq_state *s = calloc(1, sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    s->n_acc = in->n_prior;
    for (int32_t i = 0; i < in->n_prior; i++)
        s->acc[i] = in->prior[i];
    s->dp_mem = malloc(eng_sequoia_dp_bytes(in->max_nodes, in->max_depth + 1, ENG_POL_MAX_LIST));
    s->sh_par = malloc(sizeof(int32_t) * 4 * (size_t)in->max_nodes);
    if (!s->dp_mem || !s->sh_par) {
        sq_destroy(s);
        return ENG_E_NOMEM;
    }
    s->sh_rank = s->sh_par + in->max_nodes;
    s->sh_depth = s->sh_rank + in->max_nodes;
    s->sh_node = s->sh_depth + in->max_nodes;
    out->i = &sq_i;
    out->self = s;
    return ENG_OK;
}

int32_t eng_sequoia_shape(const eng_policy *p, int32_t *depth)
{
    if (!p || p->i != &sq_i) return -1;
    sq_state *s = p->self;
    sq_plan_prior(s);
    if (depth) *depth = s->shape_depth;
    return s->shape_m;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_sequoia = {
    .name = "sequoia",
    .doc = "Sequoia: static tree from a DP over positional acceptance and verify cost",
    .params_size = sizeof(eng_sequoia_params),
    .params = eng_sequoia_param_table,
    .create = eng_sequoia_create,
    .needs_draft = 1,
    .tree = {.rule = ENG_TREE_EQUAL, .fixed = 0, .param = "max_nodes"},
};
