/*
 * pol_lyanna.c -- Lyanna: token-info sampling over a hidden-state draft, with
 * re-sampling after rejections and verification fusion (Chen et al., "Make
 * Every Draft Count: Hidden State based Speculative Decoding", §4-6;
 * docs/policies.md "`lyanna`").
 *
 * The draft model of this policy advances a chain of hidden states h_1 .. h_N
 * that does not depend on the tokens sampled along the way; token information
 * enters only when logits are turned into candidates.  A cycle therefore costs
 * N draft forwards whatever the tree's width, and the hidden states stay valid
 * after a rejection.
 *
 * Token-info tree (Algorithm 1).  frontier = {root}; for each step i = 1 .. N:
 * every frontier node gets its top-k candidates under the step's logits l_i
 * (with the node's token information added) as children, scored by joint draft
 * log-probability (sum of log q from the root); all of them join the tree, and
 * the k best of this step's children (by joint score) form the next frontier.
 * The tree holds k + (N - 1) k^2 draft nodes; the B best by joint score are
 * verified (budget pruning).  Ties are broken by depth (shallower first), then
 * by insertion order: a parent always ranks before its children (scores never
 * increase along a path, log q is clamped to <= 0), so the selection is
 * ancestor-closed without repair.  B counts draft nodes, root excluded
 * **(choice)**, like EAGLE-2's total_tokens.
 *
 * Modelling a step through the oracle interface **(choice)**: a step is ONE
 * draft forward of one row -- the hidden-state chain is canonical -- issued on
 * the step's best frontier node (`expand`, or `expand_body` under the one-pass
 * head); the other frontier nodes of the step get their candidate sets from
 * `resample(..., 0.0)`: the same hidden state with a different token's
 * information, no forward.  A draft without `resample` falls back to one
 * batched forward over the whole frontier (rows = frontier size), the cost a
 * token-conditioned draft would pay.
 *
 * One-pass LM head (§4.2, `one_pass_head`): the N step forwards run as
 * body-only forwards (`expand_body`) and one `project` call then runs the LM
 * head over all N rows as one GEMM, instead of N full forwards each ending in
 * its own GEMV.  Without `expand_body` or `project` the policy runs full
 * forwards.
 *
 * Re-sampling (Algorithm 2, §5.3).  After verification (observe), the walk
 * accepted `a` draft tokens and the target gave the bonus token at depth
 * j = a + 1.  The hidden states of steps j + 1 .. N (N = steps the cycle ran)
 * are still valid: when N - j > r, the next build re-samples a subtree of
 * N - j steps rooted at the bonus token -- which is the next cycle's root --
 * with Algorithm 1 over `resample` candidate sets (no draft forward), pruned to
 * the same budget B **(choice: the paper gives the re-sampled tree no budget
 * of its own)**.  Then:
 *   - fusion (§6.2): the next cycle drafts its normal tree (N forwards) and the
 *     re-sampled subtree is merged into it -- a node whose path of tokens the
 *     normal tree already holds is shared, the others are extra rows of the
 *     same single verification (kind ENG_LYANNA_FUSED);
 *   - no fusion: the next cycle is the re-sampled subtree alone -- no draft
 *     forward, one target invocation of its own (ENG_LYANNA_RESAMPLED); the
 *     cycle after it drafts normally.
 * A re-sampled subtree never triggers another re-sampling **(choice)**: its
 * rejection leads to a normal cycle.  No re-sampling either when the bonus
 * token is unknown (a lossy walk that stopped without one), when the draft has
 * no `resample` hook, or when `resampling` is off.  Re-sampling is free of
 * draft cost: the logits exist already, and token-information lookup and top-k
 * are not priced.  Shared nodes keep their normal candidate sets (the
 * re-sampled ones are read and the node's set is restored), so acceptance
 * rules that read C_u see the sets the normal tree was drafted from.
 *
 * The replay serves `resample` from the recorded tree of the next cycle's
 * position with the quality penalty `resample_penalty` (sim/replay/README.md
 * "Re-sampling"); a runtime ignores the penalty.
 *
 * Limits: levels <= min(N, lim->max_depth, lim->remaining - 1); nodes <=
 * min(lim->max_nodes, ENG_POL_MAX_NODES), extra candidates past the cap are
 * dropped.  Cost: O(P) to fill the pool, P <= k + (N - 1) k^2, plus merges of
 * its runs for each step's k best and the budget, whose keys are read off the
 * candidate lists as the merges take them (eng_select_cands); a list out of
 * order, or with a log-prob above 0 (clamped) or NaN, has the pool's entries
 * written out and selected over instead, with the same result.
 * State: mallocs in create (sized from the params), nothing after.
 */
#include "pol_lyanna.h"
#include "eng_select.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define LY_MAX_N 16
#define LY_MAX_K 16
#define LY_MAX_B 480

static const char *const unit_choices[] = {"cpu", "npu", NULL};

#define P(f) offsetof(eng_lyanna_params, f)
const eng_param_desc eng_lyanna_param_table[] = {
    {.name = "n", .type = ENG_PARAM_INT, .offset = P(n), .min = 1, .max = LY_MAX_N, .def = 7,
     .doc = "N, draft steps (hidden states) per cycle; (choice) the paper gives no value, "
            "7 = EAGLE-2's depth + 1, within the traces' recorded depth 8"},
    {.name = "k", .type = ENG_PARAM_INT, .offset = P(k), .min = 1, .max = LY_MAX_K, .def = 2,
     .doc = "branch number: children per frontier node and frontier width; 2 as in the "
            "paper's worked example of token-info sampling (§5.2)"},
    {.name = "b", .type = ENG_PARAM_INT, .offset = P(b), .min = 1, .max = LY_MAX_B, .def = 16,
     .doc = "B, verification budget: draft nodes kept per tree by joint probability, root "
            "excluded; (choice) the paper gives no value, 16 keeps a fused tree within the "
            "phone model's cheap verification shapes"},
    {.name = "r", .type = ENG_PARAM_INT, .offset = P(r), .min = 0, .max = LY_MAX_N, .def = 1,
     .doc = "re-sample threshold of Algorithm 2: re-sample only when more than r draft steps "
            "remain after the rejection; (choice) the paper gives no value"},
    {.name = "resampling", .type = ENG_PARAM_BOOL, .offset = P(resampling), .min = 0, .max = 1,
     .def = 1, .doc = "re-sample a subtree from the remaining hidden states after a rejection "
                      "(paper §5.3, on in the full system)"},
    {.name = "fusion", .type = ENG_PARAM_BOOL, .offset = P(fusion), .min = 0, .max = 1, .def = 1,
     .doc = "verify the re-sampled subtree inside the next cycle's tree (1, paper §6.2) or in "
            "a target invocation of its own (0)"},
    {.name = "one_pass_head", .type = ENG_PARAM_BOOL, .offset = P(one_pass_head), .min = 0,
     .max = 1, .def = 1,
     .doc = "N body-only draft forwards then one LM-head pass over N rows (paper §4.2) instead "
            "of N full forwards"},
    {.name = "resample_penalty", .type = ENG_PARAM_DOUBLE, .offset = P(resample_penalty),
     .min = 0, .max = 1, .def = 0.2,
     .doc = "replay only: probability that a re-sampled node's candidate ranking is degraded "
            "(sim/replay/README.md); (choice)"},
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = P(unit), .min = 0, .max = 1, .def = 1,
     .choices = unit_choices,
     .doc = "processor the draft runs on: cpu or npu; (choice) npu, the faster one-row draft "
            "step on the bundled phone profile"},
    {.name = NULL},
};
#undef P

/* A candidate of the pool written out: for runs whose keys cannot be read
 * off the candidate list (see ly_run_ok).  Virtual (parent node, token)
 * until materialised. */
typedef struct ly_entry {
    double score;    /* joint log q from the (sub)tree root */
    int32_t depth;   /* of the candidate itself */
    int32_t order;   /* pool index at insertion (tie-break) */
    int32_t parent;  /* tree node id of the parent */
    eng_token tok;
    float logp;
} ly_entry;

enum { LY_MODE_DRAFT = 0, LY_MODE_RESAMPLE = 1 };

#define LY_RUNS (1 + (LY_MAX_N - 1) * LY_MAX_K) /* expanded nodes of a subtree */

typedef struct ly_state {
    eng_lyanna_params p;
    int32_t cap_pool;
    /* the pool as runs, one per expanded node: run r holds the first
     * candidates of tree node run_node[r], pool indices run[r] .. run[r + 1),
     * keyed by cr[r] as the merges read them (eng_select_cands: score = the
     * node's joint score + logp, tie = depth << 32 | pool index) */
    int run[LY_RUNS + 1];
    eng_cand_run cr[LY_RUNS];
    int32_t run_node[LY_RUNS];
    int heap[LY_RUNS], next[LY_RUNS]; /* merge scratch */
    int32_t *node_of;                 /* [cap_pool] tree node of a materialised entry */
    uint8_t *made;                    /* [cap_pool / 8 + 1] bit idx: entry idx is materialised */
    /* once a run's keys cannot be read off its list, every entry of runs
     * [0, written) is written out: pool[idx] and key[idx] */
    ly_entry *pool; /* [cap_pool] */
    eng_rank *key;  /* [cap_pool] each entry's rank: score, then (depth, order) */
    int32_t written;
    int step[LY_MAX_K * LY_MAX_K], step_run[LY_MAX_K * LY_MAX_K]; /* a step's best */
    int pick[LY_MAX_B], pick_run[LY_MAX_B]; /* the budget's pool indices, best first */
    int32_t front[LY_MAX_K];           /* frontier: tree node ids */
    double front_score[LY_MAX_K];
    int32_t ids[LY_MAX_K];
    int32_t old_off[LY_MAX_K], old_n[LY_MAX_K];
    int32_t body_rows;    /* rows of body-only forwards awaiting project */
    int32_t map[ENG_POL_MAX_NODES];
    uint8_t keep[ENG_POL_MAX_NODES];
    int32_t pending;      /* steps of the subtree owed to the next build */
    eng_lyanna_cycle last;
} ly_state;

/* total order: score desc, depth asc, order asc */
static int ly_before(const ly_entry *a, const ly_entry *b)
{
    if (a->score != b->score) return a->score > b->score;
    if (a->depth != b->depth) return a->depth < b->depth;
    return a->order < b->order;
}

static int ly_cmp(const void *x, const void *y)
{
    const ly_entry *a = x, *b = y;
    return ly_before(a, b) ? -1 : (ly_before(b, a) ? 1 : 0);
}

/* Tree node of pool entry idx, a child (tok, logp) of node parent, not yet
 * materialised: the parent's existing child with the same token (merging)
 * or a new child.  Returns the id, or a negative code (ENG_E_FULL at the
 * cap). */
static int32_t ly_make(ly_state *s, eng_tree *t, int32_t idx, int32_t parent, eng_token tok,
                       float logp, int32_t cap)
{
    int32_t id = eng_tree_child(t, parent, tok);
    if (id == ENG_NO_NODE) {
        if (t->n_nodes >= cap) return ENG_E_FULL;
        id = eng_tree_add(t, parent, tok, logp);
    }
    if (id >= 0) {
        s->node_of[idx] = id;
        s->made[idx >> 3] |= (uint8_t)(1u << (idx & 7));
    }
    return id;
}

/* Tree node of pool entry idx: the one it became, or ly_make. */
static inline int32_t ly_materialise(ly_state *s, eng_tree *t, int32_t idx, int32_t parent,
                                     eng_token tok, float logp, int32_t cap)
{
    if (s->made[idx >> 3] >> (idx & 7) & 1) return s->node_of[idx];
    return ly_make(s, t, idx, parent, tok, logp, cap);
}

/* Pool entry idx of run r: its candidate. */
static const eng_cand *ly_cand(const ly_state *s, int32_t idx, int32_t r)
{
    return &s->cr[r].cand[idx - s->run[r]];
}

static int ly_rc(int rc)
{
    return rc == ENG_OK ? ENG_OK : (rc < 0 ? rc : ENG_E_ORACLE);
}

/* One draft forward over ids[0..n): body-only under the one-pass head. */
static int ly_forward(ly_state *s, eng_tree *t, eng_draft_oracle *d, const int32_t *ids,
                      int32_t n)
{
    if (s->p.one_pass_head && d->expand_body && d->project) {
        int rc = d->expand_body(d->ctx, t, ids, n, s->p.unit);
        if (rc == ENG_OK) s->body_rows += n;
        return ly_rc(rc);
    }
    return ly_rc(d->expand(d->ctx, t, ids, n, s->p.unit));
}

/* Candidate sets of the frontier for one step.  DRAFT: one forward on the best
 * frontier node, re-sampled sets (penalty 0) for the others; RESAMPLE: every
 * set re-sampled with the penalty.  A node that already had a set keeps it:
 * the new one is read into the pool by the caller through old_off/old_n. */
static int ly_fill(ly_state *s, eng_tree *t, eng_draft_oracle *d, int32_t nf, int mode)
{
    for (int32_t i = 0; i < nf; i++) {
        s->ids[i] = s->front[i];
        s->old_off[i] = t->nodes[s->front[i]].cand_off;
        s->old_n[i] = t->nodes[s->front[i]].cand_n;
    }
    if (mode == LY_MODE_RESAMPLE)
        return ly_rc(d->resample(d->ctx, t, s->ids, nf, s->p.resample_penalty));
    if (!d->resample) return ly_forward(s, t, d, s->ids, nf);
    int rc = ly_forward(s, t, d, s->ids, 1);
    if (rc == ENG_OK && nf > 1) rc = ly_rc(d->resample(d->ctx, t, s->ids + 1, nf - 1, 0.0));
    return rc;
}

/* 1 when the keys of a run can be read off its list: no log-prob above 0
 * (or NaN) and none above its predecessor's.  The score base + min(logp, 0)
 * is then base + logp, and the run is in rank order (eng_select_cands). */
static int ly_run_ok(const eng_cand *c, int32_t n)
{
    if (n > 0 && !(c[0].logp <= 0.0f)) return 0;
    for (int32_t j = 1; j < n; j++)
        if (!(c[j].logp <= c[j - 1].logp)) return 0;
    return 1;
}

/* The frontier's candidates into the pool, each node's first k as a run
 * (runs *runs ..., pool indices from *n_pool); a node that had a set before
 * keeps it (the run points at the new one, which stays in the arena).
 * Returns 1 when every run's keys can be read off its list, else 0. */
static int ly_pool_step(ly_state *s, eng_tree *t, int32_t nf, int32_t *n_pool, int32_t *runs)
{
    int32_t n = *n_pool;
    int ok = 1;
    for (int32_t f = 0; f < nf; f++) {
        int32_t u = s->front[f], cn = 0, r = (*runs)++;
        const eng_cand *c = eng_tree_cands(t, u, &cn);
        int32_t end = cn < s->p.k ? cn : s->p.k;
        if (end > s->cap_pool - n) end = s->cap_pool - n;
        s->run[r] = n;
        s->cr[r] =
            (eng_cand_run){c, s->front_score[f], (long long)(t->nodes[u].depth + 1) << 32 | n};
        s->run_node[r] = u;
        ok &= ly_run_ok(c, end);
        n += end;
        if (s->old_off[f] != ENG_NO_NODE) {
            t->nodes[u].cand_off = s->old_off[f];
            t->nodes[u].cand_n = s->old_n[f];
        }
    }
    s->run[*runs] = n;
    *n_pool = n;
    return ok;
}

/* Writes out the entries of runs s->written .. runs (score base + min(logp,
 * 0), as the paper's joint probability clamps q to 1). */
static void ly_write(ly_state *s, const eng_tree *t, int32_t runs)
{
    for (int32_t r = s->written; r < runs; r++)
        for (int32_t i = s->run[r]; i < s->run[r + 1]; i++) {
            const eng_cand *c = ly_cand(s, i, r);
            double lq = c->logp < 0.0f ? (double)c->logp : 0.0;
            ly_entry *e = &s->pool[i];
            *e = (ly_entry){s->cr[r].base + lq,
                            t->nodes[s->run_node[r]].depth + 1,
                            i,
                            s->run_node[r],
                            c->tok,
                            c->logp};
            s->key[i] = (eng_rank){e->score, (long long)e->depth << 32 | e->order};
        }
    s->written = runs;
}

/* The k best children of the step's runs r0 .. runs into s->step (pool
 * indices) and s->step_run, best first; returns how many.  A merge of the
 * runs, or (entries written out) a selection over their keys -- the same
 * entries in the same order (eng_select_cands_or_keys). */
static int32_t ly_step_best(ly_state *s, int32_t r0, int32_t runs, int ok)
{
    int m = eng_select_cands_or_keys(s->run + r0, s->cr + r0, runs - r0, 1, s->p.k, ok, s->key,
                                     s->heap, s->next, s->step, s->step_run);
    for (int q = 0; q < m; q++)
        s->step_run[q] += r0;
    return m;
}

/* Budget: the global top-B of the pool marked in s->keep; parents were
 * materialised as frontier nodes and rank before their children.  A merge
 * of the runs, or (entries written out) a selection over the whole pool --
 * the same entries in the same order. */
static int ly_budget(ly_state *s, eng_tree *t, int32_t runs, int32_t n_pool, int ok, int32_t cap,
                     int32_t *out_sel)
{
    int32_t sel = n_pool < s->p.b ? n_pool : s->p.b;
    if (ok) /* fewer than sel only for keys without an order (NaN) */
        sel = eng_select_cands(s->run, s->cr, runs, 1, sel, s->heap, s->next, s->pick, s->pick_run);
    else
        eng_select_sorted(s->pool, (size_t)n_pool, sizeof *s->pool, (size_t)sel, ly_cmp);
    for (int32_t q = 0; q < sel; q++) {
        int32_t id;
        if (ok) {
            const eng_cand *c = ly_cand(s, s->pick[q], s->pick_run[q]);
            id =
                ly_materialise(s, t, s->pick[q], s->run_node[s->pick_run[q]], c->tok, c->logp, cap);
        } else {
            const ly_entry *e = &s->pool[q];
            id = ly_materialise(s, t, e->order, e->parent, e->tok, e->logp, cap);
        }
        if (id == ENG_E_FULL) break;
        if (id < 0) return id;
        s->keep[id] = 1;
        (*out_sel)++;
    }
    return ENG_OK;
}

/* The step's best (ly_step_best) become the frontier: materialised, with
 * their joint scores.  Returns the frontier's size or a negative code. */
static int32_t ly_frontier(ly_state *s, eng_tree *t, int32_t m, int ok, int32_t cap)
{
    int32_t nf = 0;
    for (int32_t q = 0; q < m && nf < s->p.k; q++) {
        int32_t idx = s->step[q], r = s->step_run[q];
        const eng_cand *c = ly_cand(s, idx, r);
        int32_t id = ly_materialise(s, t, idx, s->run_node[r], c->tok, c->logp, cap);
        if (id == ENG_E_FULL) break;
        if (id < 0) return id;
        s->front[nf] = id;
        s->front_score[nf++] = ok ? s->cr[r].base + (double)c->logp : s->pool[idx].score;
    }
    return nf;
}

/* Algorithm 1 from the root (node 0) over `steps` steps, budget B.  Marks the
 * selected nodes in s->keep (which the caller cleared); *out_steps = steps
 * whose candidate sets were filled, *out_sel = nodes selected. */
static int ly_subtree(ly_state *s, eng_tree *t, eng_draft_oracle *d, int32_t steps, int mode,
                      int32_t cap, int32_t *out_steps, int32_t *out_sel)
{
    int32_t n_pool = 0, nf = 1, done = 0, runs = 0;
    int all_ok = 1; /* every run's keys read off its list so far */
    *out_steps = 0;
    *out_sel = 0;
    s->written = 0;
    memset(s->made, 0, (size_t)s->cap_pool / 8 + 1);
    s->front[0] = 0;
    s->front_score[0] = 0.0;
    for (int32_t i = 1; i <= steps && nf > 0; i++) {
        int rc = ly_fill(s, t, d, nf, mode);
        if (rc != ENG_OK) return rc;
        done = i;
        int32_t r0 = runs;
        int ok = ly_pool_step(s, t, nf, &n_pool, &runs);
        all_ok &= ok;
        if (!all_ok) ly_write(s, t, runs); /* from the first run that needs it on */
        if (i == steps) break;
        nf = ly_frontier(s, t, ly_step_best(s, r0, runs, ok), ok, cap);
        if (nf < 0) return nf;
    }
    *out_steps = done;
    return ly_budget(s, t, runs, n_pool, all_ok, cap, out_sel);
}

static int ly_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    ly_state *s = self;
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    int32_t pending = s->pending;
    s->pending = 0;
    memset(&s->last, 0, sizeof s->last);
    s->body_rows = 0;
    int32_t max_d = s->p.n;
    if (lim->max_depth < max_d) max_d = lim->max_depth;
    if (lim->remaining - 1 < max_d) max_d = lim->remaining - 1;
    int32_t cap = lim->max_nodes < ENG_POL_MAX_NODES ? lim->max_nodes : ENG_POL_MAX_NODES;
    if (max_d < 1 || cap < 2) return ENG_OK;
    int32_t rs = pending < max_d ? pending : max_d;
    if (!s->p.resampling || !draft->resample) rs = 0;
    int32_t steps = 0, sel = 0, rc;

    if (rs > 0 && !s->p.fusion) {
        /* the re-sampled subtree alone: its own verification, no forward */
        memset(s->keep, 0, (size_t)cap);
        s->keep[0] = 1;
        rc = ly_subtree(s, t, draft, rs, LY_MODE_RESAMPLE, cap, &steps, &sel);
        if (rc != ENG_OK) return rc;
        eng_tree_compact(t, s->keep, s->map);
        s->last.kind = ENG_LYANNA_RESAMPLED;
        s->last.resample_steps = steps;
        s->last.resample_nodes = sel;
        s->last.extra_rows = eng_tree_size(t);
        return ENG_OK;
    }

    memset(s->keep, 0, (size_t)cap);
    s->keep[0] = 1;
    rc = ly_subtree(s, t, draft, max_d, LY_MODE_DRAFT, cap, &steps, &sel);
    if (rc != ENG_OK) return rc;
    if (s->body_rows > 0) {
        rc = ly_rc(draft->project(draft->ctx, s->body_rows, s->p.unit));
        if (rc != ENG_OK) return rc;
    }
    eng_tree_compact(t, s->keep, s->map);
    s->last.kind = ENG_LYANNA_DRAFT;
    s->last.steps = steps;
    s->last.draft_nodes = eng_tree_size(t);
    if (rs > 0) {
        /* fusion: merge the re-sampled subtree into this cycle's tree */
        int32_t before = t->n_nodes;
        memset(s->keep, 0, (size_t)cap);
        memset(s->keep, 1, (size_t)before);
        rc = ly_subtree(s, t, draft, rs, LY_MODE_RESAMPLE, cap, &steps, &sel);
        if (rc != ENG_OK) return rc;
        eng_tree_compact(t, s->keep, s->map);
        s->last.kind = ENG_LYANNA_FUSED;
        s->last.resample_steps = steps;
        s->last.resample_nodes = sel;
        s->last.extra_rows = t->n_nodes - before;
    }
    return ENG_OK;
}

static void ly_observe(void *self, const eng_feedback *fb)
{
    ly_state *s = self;
    s->pending = 0;
    s->last.pending = 0;
    /* no chaining: a re-sampled subtree's rejection leads to a normal cycle */
    if (!s->p.resampling || s->last.kind == ENG_LYANNA_RESAMPLED || s->last.steps < 1) return;
    if (fb->outcome.bonus == ENG_NO_TOKEN) return;
    int32_t j = fb->outcome.accepted + 1; /* depth of the bonus token */
    int32_t remain = s->last.steps - j;
    if (remain > s->p.r) s->pending = remain;
    s->last.pending = s->pending;
}

static void ly_reset(void *self)
{
    ly_state *s = self;
    s->pending = 0;
    memset(&s->last, 0, sizeof s->last);
}

static void ly_destroy(void *self)
{
    ly_state *s = self;
    if (!s) return;
    free(s->pool);
    free(s->key);
    free(s->node_of);
    free(s->made);
    free(s);
}

static const eng_policy_i ly_i = {
    .name = "lyanna",
    .reset = ly_reset,
    .build = ly_build,
    .observe = ly_observe,
    .destroy = ly_destroy,
};

int eng_lyanna_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_lyanna_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_lyanna_param_table, params)) return ENG_E_ARG;
    ly_state *s = calloc(1, sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    s->cap_pool = in->k + (in->n - 1) * in->k * in->k;
    s->pool = malloc(sizeof *s->pool * (size_t)s->cap_pool);
    s->key = malloc(sizeof *s->key * (size_t)s->cap_pool);
    s->node_of = malloc(sizeof *s->node_of * (size_t)s->cap_pool);
    s->made = malloc((size_t)s->cap_pool / 8 + 1);
    if (!s->pool || !s->key || !s->node_of || !s->made) {
        ly_destroy(s);
        return ENG_E_NOMEM;
    }
    out->i = &ly_i;
    out->self = s;
    return ENG_OK;
}

int eng_lyanna_last(const eng_policy *p, eng_lyanna_cycle *out)
{
    if (!p || !out || p->i != &ly_i || !p->self) return ENG_E_ARG;
    *out = ((const ly_state *)p->self)->last;
    return ENG_OK;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_lyanna = {
    .name = "lyanna",
    .doc = "Lyanna: token-info sampling tree, re-sampling after rejection, fused verify",
    .params_size = sizeof(eng_lyanna_params),
    .params = eng_lyanna_param_table,
    .create = eng_lyanna_create,
    .needs_draft = 1,
    .observes_outcome = 1,
    .tree = {.rule = ENG_TREE_PLUS_ROOT, .fixed = 0, .param = "b"},
};
