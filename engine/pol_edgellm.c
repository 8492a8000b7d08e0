/*
 * pol_edgellm.c -- EdgeLLM: confidence-paced branches, self-adaptive fallback,
 * batched multi-branch verification and provisional drafting
 * (the EdgeLLM paper, §III; its rules restated here with every choice).
 *
 * Branches.  A branch is a root-to-tip path that owns the nodes it drafted
 * itself; its cumulative confidence C is the product of the draft
 * probabilities on the whole path (kept as a log).  A fork candidate is the
 * second-best draft token at a position some branch extended: C = C(prefix) x
 * q(that token), own length 0, not yet in the tree.
 *
 * Pacer (Eq. 1-2, navigation on).  Each draft step extends the entry -- branch
 * or fork candidate -- with the largest deficit M x C_i / sum_j C_j - T_i
 * (T_i = own length; choice: C normalised over all branches and candidates),
 * lowest index on ties.  M is the tree size the pacer aims for (choice):
 * `budget` without fallback, else the running mean of the verified tree sizes
 * (seeded with `budget`), and never less than the tokens drafted + 1.
 * Extending a branch expands its tip (one draft call of one row: the branch
 * decoder, masked attention over the tree) and appends the tip's top-1
 * candidate; a fork candidate first enters the tree as a node (its token is
 * known from its parent's expansion: no call) and is then extended the same
 * way in the same step.  Without navigation only the first branch grows: a
 * chain.  At most max_branches entries are kept (a new candidate replaces the
 * least confident candidate when full).
 *
 * Fallback (Eq. 3).  With fallback on, drafting stops as soon as the tree
 * confidence T_c = max over branches of C_i falls below alpha (alpha0 at
 * start), or at max_tokens; without it, at `budget` tokens.  After each
 * verification, on the best-matching branch -- the shortest branch through the
 * node where the accepted walk stopped (choice) -- with n_all draft tokens of
 * which n_correct were accepted: alpha <- alpha x alpha_decay when all were,
 * else (n_all - n_correct) / n_all.
 *
 * Verification (plan).  verify = branches: every branch is one sequence of a
 * mini-batch, root included, so rows = sum over leaves of (depth + 1) (shared
 * prefixes repeated) and leaves = branches; tree: tree attention, one row per
 * node.  The head runs eagerly on the NPU.
 *
 * Provisional drafting (the provisional hook).  While the target verifies,
 * the most confident branch keeps growing one token per draft call (at most
 * prov_max, and what the runtime's memory bound allows); plan.overlap_gate =
 * gate asks the runtime to run these calls only while the target is not
 * computing.  If the verification accepts that whole branch and its bonus
 * token is the first provisional token, the provisional tokens the runtime ran
 * are kept: the next tree starts with them (the first becomes the root, the
 * rest a ready-made chain with their candidate sets, no draft call); else they
 * are discarded.  With fallback on, provisional drafting also stops where the
 * next tree's confidence (from its second token on) falls below alpha.
 *
 * Limits: tokens <= max_nodes - 1, depth <= min(max_depth, remaining - 1).
 * State: malloc'ed in create, freed in destroy; the carried chain's candidate
 * sets are allocated on first use (prov_max + 1 sets of the draft's K).
 */
#include "pol_edgellm.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define P(f) offsetof(eng_edgellm_params, f)

static const char *const unit_choices[] = {"cpu", "npu", NULL};
static const char *const verify_choices[] = {"branches", "tree", NULL};

const eng_param_desc eng_edgellm_param_table[] = {
    {.name = "navigation", .type = ENG_PARAM_BOOL, .offset = P(navigation), .min = 0, .max = 1,
     .def = 1, .doc = "confidence-paced branches with forking (off: a single branch)"},
    {.name = "fallback", .type = ENG_PARAM_BOOL, .offset = P(fallback), .min = 0, .max = 1,
     .def = 1, .doc = "verify once the tree confidence drops below alpha (off: at budget tokens)"},
    {.name = "provisional", .type = ENG_PARAM_BOOL, .offset = P(provisional), .min = 0, .max = 1,
     .def = 1, .doc = "keep drafting the most confident branch while the target verifies"},
    {.name = "budget", .type = ENG_PARAM_INT, .offset = P(budget), .min = 1, .max = 255,
     .def = 8,
     .doc = "draft tokens per tree without fallback and the pacer's first M (8: Chain-SD's k)"},
    {.name = "max_tokens", .type = ENG_PARAM_INT, .offset = P(max_tokens), .min = 1, .max = 255,
     .def = 32, .doc = "safety cap on draft tokens per tree with fallback (root excluded)"},
    {.name = "max_branches", .type = ENG_PARAM_INT, .offset = P(max_branches), .min = 1,
     .max = ENG_EDGELLM_MAX_BRANCHES, .def = 8,
     .doc = "branches plus fork candidates the pacer keeps"},
    {.name = "alpha0", .type = ENG_PARAM_DOUBLE, .offset = P(alpha0), .min = 1e-9, .max = 1,
     .def = 0.01, .doc = "initial fallback threshold (EdgeLLM's default 0.01)"},
    {.name = "alpha_decay", .type = ENG_PARAM_DOUBLE, .offset = P(alpha_decay), .min = 1e-3,
     .max = 1, .def = 0.5, .doc = "alpha factor after a fully correct branch (EdgeLLM: 0.5)"},
    {.name = "prov_max", .type = ENG_PARAM_INT, .offset = P(prov_max), .min = 0, .max = 255,
     .def = 16, .doc = "provisional tokens per verification at most"},
    {.name = "gate", .type = ENG_PARAM_BOOL, .offset = P(gate), .min = 0, .max = 1, .def = 1,
     .doc = "provisional drafting only while the target loads weights, not while it computes"},
    {.name = "verify", .type = ENG_PARAM_ENUM, .offset = P(verify), .min = 0, .max = 1, .def = 0,
     .choices = verify_choices,
     .doc = "branches: batched branch sequences (rows = sum of lengths); tree: tree attention"},
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = P(unit), .min = 0, .max = 1, .def = 0,
     .choices = unit_choices, .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};

typedef struct el_entry {
    int32_t tip;    /* tree node of the branch's tip; ENG_NO_NODE: a fork candidate */
    int32_t parent; /* candidate: the node it forks from */
    eng_token tok;  /* candidate: its first token */
    float logq;     /* candidate: log q of that token */
    double logc;    /* log of the cumulative confidence (candidate: including tok) */
    int32_t len;    /* own tokens */
    int32_t done;   /* cannot grow (depth limit or no candidate) */
} el_entry;

typedef struct el_state {
    eng_edgellm_params p;
    el_entry e[ENG_EDGELLM_MAX_BRANCHES];
    int32_t n_e;
    double alpha, pace_m;
    int64_t trees; /* verified trees seen (running mean of pace_m) */
    /* provisional drafting of the current cycle */
    int32_t prov_tip, prov_first, prov_n;
    /* chain carried into the next tree: entry 0 becomes the root */
    int32_t n_carry, carry_k, carry_cap;
    eng_token *carry_tok;
    float *carry_logq;
    int32_t *carry_cn;
    eng_cand *carry_cands; /* [carry_cap * carry_k] */
} el_state;

double eng_edgellm_alpha_update(double alpha, double decay, int32_t n_correct, int32_t n_all)
{
    if (n_all <= 0) return alpha;
    double a = n_correct >= n_all ? alpha * decay : (double)(n_all - n_correct) / n_all;
    return a < 1e-12 ? 1e-12 : a > 1.0 ? 1.0 : a;
}

int32_t eng_edgellm_pace(const double *conf, const int32_t *len, int32_t n, double m)
{
    if (n < 1) return -1;
    double sum = 0.0;
    for (int32_t i = 0; i < n; i++) sum += conf[i];
    int32_t best = 0;
    double best_d = -INFINITY;
    for (int32_t i = 0; i < n; i++) {
        double share = sum > 0 ? conf[i] / sum : 1.0 / n;
        double d = m * share - len[i];
        if (d > best_d) {
            best_d = d;
            best = i;
        }
    }
    return best;
}

static void el_reset(void *self)
{
    el_state *s = self;
    s->n_carry = 0;
    s->prov_n = 0;
}

/* Adds the fork candidate (parent, cands[1]) when navigation is on. */
static void push_fork(el_state *s, const eng_tree *t, int32_t parent, double parent_logc)
{
    if (!s->p.navigation) return;
    int32_t cn = 0;
    const eng_cand *c = eng_tree_cands(t, parent, &cn);
    if (cn < 2) return;
    el_entry f = {.tip = ENG_NO_NODE, .parent = parent, .tok = c[1].tok, .logq = c[1].logp,
                  .logc = parent_logc + c[1].logp};
    if (s->n_e < s->p.max_branches) {
        s->e[s->n_e++] = f;
        return;
    }
    int32_t worst = -1;
    for (int32_t i = 0; i < s->n_e; i++)
        if (s->e[i].tip == ENG_NO_NODE && (worst < 0 || s->e[i].logc < s->e[worst].logc)) worst = i;
    if (worst >= 0 && s->e[worst].logc < f.logc) s->e[worst] = f;
}

/* Re-creates the carried chain under the root.  Returns the draft tokens added. */
static int32_t insert_carry(el_state *s, eng_tree *t, int32_t depth_cap, int32_t cap)
{
    int32_t n = s->n_carry;
    s->n_carry = 0;
    if (n < 1 || t->nodes[0].tok != s->carry_tok[0]) return 0;
    el_entry *b = &s->e[0];
    int32_t node = 0, added = 0;
    for (int32_t j = 0; j < n; j++) {
        if (j > 0) {
            if (added >= cap || t->nodes[node].depth + 1 > depth_cap) break;
            int32_t c = eng_tree_add(t, node, s->carry_tok[j], s->carry_logq[j]);
            if (c < 0) break;
            node = c;
            added++;
            b->logc += s->carry_logq[j];
        }
        int32_t cn = s->carry_cn[j];
        if (cn > 0) {
            eng_cand *dst = eng_tree_cands_alloc(t, node, cn);
            if (!dst) break;
            memcpy(dst, s->carry_cands + (size_t)j * s->carry_k, sizeof(eng_cand) * (size_t)cn);
        }
    }
    b->tip = node;
    b->len = added;
    return added;
}

/* One pacer step on entry i: materialise a candidate, then grow the tip by
 * its top-1 candidate.  Returns the tokens added (0: entry finished) or a
 * negative code. */
static int32_t grow(el_state *s, int32_t i, eng_tree *t, eng_draft_oracle *draft,
                    int32_t depth_cap, int32_t room)
{
    el_entry *b = &s->e[i];
    int32_t added = 0;
    if (b->tip == ENG_NO_NODE) {
        if (t->nodes[b->parent].depth + 1 > depth_cap) {
            b->done = 1;
            return 0;
        }
        int32_t c = eng_tree_add(t, b->parent, b->tok, b->logq);
        if (c < 0) return c;
        b->tip = c;
        b->len = 1;
        added = 1;
        if (added >= room) return added;
    }
    int32_t tip = b->tip;
    if (t->nodes[tip].depth + 1 > depth_cap) {
        b->done = 1;
        return added;
    }
    int32_t cn = 0;
    const eng_cand *c = eng_tree_cands(t, tip, &cn);
    if (cn < 1) {
        int rc = draft->expand(draft->ctx, t, &tip, 1, s->p.unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        c = eng_tree_cands(t, tip, &cn);
    }
    if (cn < 1) {
        b->done = 1;
        return added;
    }
    int32_t child = eng_tree_add(t, tip, c[0].tok, c[0].logp);
    if (child < 0) return child;
    double parent_logc = b->logc;
    b->tip = child;
    b->logc += c[0].logp;
    b->len++;
    push_fork(s, t, tip, parent_logc); /* may move entries: b is not used after */
    return added + 1;
}

static int el_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    el_state *s = self;
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    s->prov_n = 0;
    int32_t depth_cap = lim->max_depth < lim->remaining - 1 ? lim->max_depth : lim->remaining - 1;
    int32_t cap = s->p.fallback ? s->p.max_tokens : s->p.budget;
    if (lim->max_nodes - 1 < cap) cap = lim->max_nodes - 1;
    if (cap > ENG_POL_MAX_NODES - 1) cap = ENG_POL_MAX_NODES - 1;
    s->n_e = 1;
    s->e[0] = (el_entry){.tip = 0, .parent = ENG_NO_NODE, .logc = 0.0};
    if (depth_cap < 1 || cap < 1) {
        s->n_carry = 0;
        return ENG_OK;
    }
    int32_t tokens = insert_carry(s, t, depth_cap, cap);
    /* fork candidates along the carried chain */
    double logc = 0.0;
    for (int32_t v = 0; v < t->n_nodes; v++) {
        if (v > 0) logc += t->nodes[v].logq;
        if (v + 1 < t->n_nodes) push_fork(s, t, v, logc);
    }
    double m = s->p.fallback ? s->pace_m : (double)s->p.budget;
    double conf[ENG_EDGELLM_MAX_BRANCHES];
    int32_t lens[ENG_EDGELLM_MAX_BRANCHES], idx[ENG_EDGELLM_MAX_BRANCHES];
    while (tokens < cap) {
        /* tree confidence over the branches; the pacer sees the entries that can grow */
        double best = -INFINITY;
        int32_t n = 0;
        for (int32_t i = 0; i < s->n_e; i++) {
            if (s->e[i].tip != ENG_NO_NODE && s->e[i].logc > best) best = s->e[i].logc;
            if (s->e[i].done) continue;
            conf[n] = exp(s->e[i].logc);
            lens[n] = s->e[i].len;
            idx[n++] = i;
        }
        if (s->p.fallback && exp(best) < s->alpha) break;
        if (n == 0 || (!s->p.navigation && s->e[0].done)) break;
        int32_t i = 0;
        if (s->p.navigation)
            i = idx[eng_edgellm_pace(conf, lens, n, m > tokens + 1 ? m : tokens + 1)];
        int32_t got = grow(s, i, t, draft, depth_cap, cap - tokens);
        if (got < 0) return got;
        tokens += got;
    }
    return ENG_OK;
}

static void el_plan(void *self, const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan)
{
    el_state *s = self;
    eng_plan_default(t, keep, plan);
    plan->overlap_gate = s->p.gate;
    if (s->p.verify != ENG_EDGELLM_BRANCHES) return;
    int32_t rows = 0, leaves = 0;
    for (int32_t v = 0; v < t->n_nodes; v++) {
        if (keep && v > 0 && !keep[v]) continue;
        int32_t kept_child = 0;
        for (int32_t c = t->nodes[v].first_child; c != ENG_NO_NODE && !kept_child;
             c = t->nodes[c].next_sibling)
            kept_child = !keep || keep[c];
        if (kept_child) continue;
        leaves++;
        rows += t->nodes[v].depth + 1;
    }
    plan->rows = rows;
    plan->leaves = leaves;
    plan->rows_after_exit = rows;
}

static int el_provisional(void *self, eng_tree *t, eng_draft_oracle *draft,
                          const eng_build_limits *lim)
{
    el_state *s = self;
    s->prov_n = 0;
    if (!s->p.provisional || s->p.prov_max < 1 || !draft || !draft->expand) return ENG_OK;
    int32_t best = -1;
    for (int32_t i = 0; i < s->n_e; i++)
        if (s->e[i].tip != ENG_NO_NODE && (best < 0 || s->e[i].logc > s->e[best].logc)) best = i;
    if (best < 0) return ENG_OK;
    int32_t tip = s->e[best].tip, cn = 0;
    if (tip == 0) return ENG_OK; /* nothing drafted: no branch to continue */
    eng_tree_cands(t, tip, &cn);
    if (cn > 0) return ENG_OK; /* one call per node would not hold */
    int32_t n = s->p.prov_max;
    if (lim->max_nodes - t->n_nodes < n) n = lim->max_nodes - t->n_nodes;
    if (lim->max_depth - t->nodes[tip].depth < n) n = lim->max_depth - t->nodes[tip].depth;
    if (s->carry_cap < n + 1) n = s->carry_cap - 1;
    s->prov_tip = tip;
    s->prov_first = t->n_nodes;
    double next_logc = 0.0; /* confidence of the next tree: from the second token on */
    for (int32_t j = 0; j < n; j++) {
        /* the fallback rule ends provisional drafting as it would end the next tree */
        if (s->p.fallback && j >= 2 && exp(next_logc) < s->alpha) break;
        int rc = draft->expand(draft->ctx, t, &tip, 1, s->p.unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        const eng_cand *c = eng_tree_cands(t, tip, &cn);
        if (cn < 1) break;
        int32_t child = eng_tree_add(t, tip, c[0].tok, c[0].logp);
        if (child < 0) break;
        if (j >= 1) next_logc += c[0].logp;
        tip = child;
        s->prov_n++;
    }
    return ENG_OK;
}

static int ensure_carry(el_state *s, int32_t k)
{
    int32_t cap = s->p.prov_max + 1;
    if (s->carry_cands && s->carry_k == k) return 0;
    free(s->carry_cands);
    s->carry_cands = malloc(sizeof(eng_cand) * (size_t)cap * (size_t)(k > 0 ? k : 1));
    s->carry_k = k;
    return s->carry_cands ? 0 : -1;
}

/* Keeps the provisional tokens the runtime ran when the verification accepted
 * their whole branch and the bonus equals the first of them. */
static void carry_provisional(el_state *s, const eng_feedback *fb)
{
    const eng_tree *t = fb->tree;
    int32_t done = fb->provisional_done < s->prov_n ? fb->provisional_done : s->prov_n;
    if (done < 2 || fb->outcome.last_node != s->prov_tip ||
        fb->outcome.bonus != t->nodes[s->prov_first].tok)
        return;
    int32_t k = 0;
    for (int32_t j = 0; j < done; j++) {
        int32_t cn = 0;
        eng_tree_cands(t, s->prov_first + j, &cn);
        if (cn > k) k = cn;
    }
    if (ensure_carry(s, k) != 0) return;
    for (int32_t j = 0; j < done && j < s->carry_cap; j++) {
        int32_t v = s->prov_first + j, cn = 0;
        const eng_cand *c = eng_tree_cands(t, v, &cn);
        /* the set of node j came from call j + 1: valid only if that call ran */
        if (j + 1 >= done) cn = 0;
        s->carry_tok[j] = t->nodes[v].tok;
        s->carry_logq[j] = t->nodes[v].logq;
        s->carry_cn[j] = cn;
        if (cn > 0)
            memcpy(s->carry_cands + (size_t)j * s->carry_k, c, sizeof(eng_cand) * (size_t)cn);
        s->n_carry = j + 1;
    }
}

static void el_observe(void *self, const eng_feedback *fb)
{
    el_state *s = self;
    const eng_tree *t = fb->tree;
    int32_t verified = fb->verified_nodes > 0 ? fb->verified_nodes : t->n_nodes;
    int32_t size = verified - 1;
    if (size > 0) {
        /* shortest verified branch through the node where the walk stopped */
        int32_t stop = fb->outcome.last_node, n_all = -1;
        for (int32_t v = stop; v < verified; v++) {
            int32_t u = v;
            while (u > stop) u = t->nodes[u].parent;
            if (u != stop) continue;
            int32_t leaf = 1;
            for (int32_t c = t->nodes[v].first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling)
                leaf &= c >= verified;
            if (leaf && (n_all < 0 || t->nodes[v].depth < n_all)) n_all = t->nodes[v].depth;
        }
        if (s->p.fallback && n_all > 0)
            s->alpha = eng_edgellm_alpha_update(s->alpha, s->p.alpha_decay, fb->outcome.accepted,
                                                n_all);
        s->trees++;
        s->pace_m += ((double)size - s->pace_m) / (double)(s->trees + 1);
    }
    if (s->prov_n > 0) carry_provisional(s, fb);
    s->prov_n = 0;
}

static void el_destroy(void *self)
{
    el_state *s = self;
    if (!s) return;
    free(s->carry_tok);
    free(s->carry_logq);
    free(s->carry_cn);
    free(s->carry_cands);
    free(s);
}

static const eng_policy_i el_i = {
    .name = "edgellm",
    .reset = el_reset,
    .build = el_build,
    .plan = el_plan,
    .observe = el_observe,
    .destroy = el_destroy,
    .provisional = el_provisional,
};

int eng_edgellm_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_edgellm_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_edgellm_param_table, params)) return ENG_E_ARG;
    el_state *s = calloc(1, sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    s->p.navigation = !!in->navigation;
    s->p.fallback = !!in->fallback;
    s->p.provisional = !!in->provisional;
    s->p.gate = !!in->gate;
    s->alpha = in->alpha0;
    s->pace_m = in->budget;
    s->carry_cap = in->prov_max + 1;
    s->carry_tok = malloc(sizeof(eng_token) * (size_t)s->carry_cap);
    s->carry_logq = malloc(sizeof(float) * (size_t)s->carry_cap);
    s->carry_cn = malloc(sizeof(int32_t) * (size_t)s->carry_cap);
    if (!s->carry_tok || !s->carry_logq || !s->carry_cn) {
        el_destroy(s);
        return ENG_E_NOMEM;
    }
    out->i = &el_i;
    out->self = s;
    return ENG_OK;
}

double eng_edgellm_alpha(const eng_policy *p)
{
    return p && p->i == &el_i ? ((const el_state *)p->self)->alpha : NAN;
}

double eng_edgellm_pace_m(const eng_policy *p)
{
    return p && p->i == &el_i ? ((const el_state *)p->self)->pace_m : NAN;
}

int32_t eng_edgellm_carried(const eng_policy *p)
{
    return p && p->i == &el_i ? ((const el_state *)p->self)->n_carry : 0;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_edgellm = {
    .name = "edgellm",
    .doc = "EdgeLLM: confidence-paced branches, adaptive fallback, provisional drafting",
    .params_size = sizeof(eng_edgellm_params),
    .params = eng_edgellm_param_table,
    .create = eng_edgellm_create,
    .needs_draft = 1,
    .tree = {.rule = ENG_TREE_PLUS_ROOT, .fixed = 0, .param = "max_tokens",
             .unless_off = "fallback", .off_param = "budget"},
};
