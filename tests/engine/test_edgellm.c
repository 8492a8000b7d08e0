/*
 * test_edgellm.c -- the EdgeLLM policy against an in-test draft oracle.
 *
 * The oracle gives every expanded node K = 3 candidates with fixed draft
 * probabilities (q1, q2, q3 chosen per test) and tokens derived from the node's
 * token, so every path is distinct.  Checks: the pacer's choices on hand-built
 * branch sets, the alpha rule (Eq. 3), chain / forked / fallback tree shapes,
 * the batched-branch plan (rows = sum of depth + 1 over leaves), and the
 * provisional pipeline's keep / discard decisions, including that kept tokens
 * enter the next tree without draft calls (down to the 2-call boundary), where
 * provisional drafting stops under the fallback rule, and that provisional
 * nodes leave alpha and the pacer's M as they are without them.
 */
#include "pol_edgellm.h"

#include "../check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { KC = 3, MAXN = 512 };

typedef struct orc {
    int32_t calls;
    double q[KC];
} orc;

static int expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    (void)unit;
    orc *o = ctx;
    o->calls++;
    for (int32_t i = 0; i < count; i++) {
        eng_token ut = t->nodes[ids[i]].tok;
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], KC);
        if (!c) return ENG_E_FULL;
        for (int32_t j = 0; j < KC; j++) {
            c[j].tok = (eng_token)(((int64_t)ut * 7 + j + 1) % 1000003);
            c[j].logp = (float)log(o->q[j]);
        }
    }
    return ENG_OK;
}

static _Alignas(8) unsigned char mem[MAXN * sizeof(eng_node) + MAXN * KC * sizeof(eng_cand)];

static void tree_init(eng_tree *t, eng_token root)
{
    eng_tree_init(t, mem, sizeof mem, MAXN, MAXN * KC);
    eng_tree_reset(t, root);
}

static eng_policy make(const eng_edgellm_params *p)
{
    eng_policy pol = {NULL, NULL};
    CHECK_EQ_INT(eng_edgellm_create(p, &pol), ENG_OK);
    return pol;
}

static eng_edgellm_params defaults(void)
{
    eng_edgellm_params p;
    eng_params_defaults(eng_edgellm_param_table, &p);
    return p;
}

static void test_pace(void)
{
    /* deficits 10*0.6-3 = 3, 10*0.3-1 = 2, 10*0.1-0 = 1 */
    double c1[] = {0.6, 0.3, 0.1};
    int32_t l1[] = {3, 1, 0};
    CHECK_EQ_INT(eng_edgellm_pace(c1, l1, 3, 10), 0);
    /* the first branch has its share: the fork gets the step */
    double c2[] = {0.5, 0.5};
    int32_t l2[] = {4, 0};
    CHECK_EQ_INT(eng_edgellm_pace(c2, l2, 2, 8), 1);
    /* unnormalised confidences are normalised: same answer scaled */
    double c3[] = {0.05, 0.05};
    CHECK_EQ_INT(eng_edgellm_pace(c3, l2, 2, 8), 1);
    /* ties go to the lowest index */
    double c4[] = {0.5, 0.5};
    int32_t l4[] = {1, 1};
    CHECK_EQ_INT(eng_edgellm_pace(c4, l4, 2, 6), 0);
    CHECK_EQ_INT(eng_edgellm_pace(c4, l4, 0, 6), -1);
}

static void test_alpha(void)
{
    CHECK_NEAR(eng_edgellm_alpha_update(0.01, 0.5, 5, 5), 0.005, 1e-15);
    CHECK_NEAR(eng_edgellm_alpha_update(0.01, 0.5, 3, 5), 0.4, 1e-15);
    CHECK_NEAR(eng_edgellm_alpha_update(0.2, 0.5, 0, 4), 1.0, 1e-15);
    CHECK_NEAR(eng_edgellm_alpha_update(0.2, 0.25, 8, 8), 0.05, 1e-15);
    CHECK_NEAR(eng_edgellm_alpha_update(0.3, 0.5, 0, 0), 0.3, 1e-15); /* nothing drafted */
}

static int32_t branches(const eng_tree *t)
{
    int32_t n = 0;
    for (int32_t v = 0; v < t->n_nodes; v++) n += t->nodes[v].first_child == ENG_NO_NODE;
    return n;
}

static void test_shapes(void)
{
    eng_tree t;
    orc o = {.q = {0.6, 0.3, 0.1}};
    eng_draft_oracle dr = {.expand = expand, .ctx = &o, .k = KC};
    eng_build_limits lim = {MAXN, 64, 1000};

    /* no navigation, no fallback: a chain of budget tokens, one call each */
    eng_edgellm_params p = defaults();
    p.navigation = 0;
    p.fallback = 0;
    p.budget = 6;
    eng_policy pol = make(&p);
    tree_init(&t, 11);
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 6);
    CHECK_EQ_INT(eng_tree_depth(&t), 6);
    CHECK_EQ_INT(o.calls, 6);
    eng_policy_destroy(&pol);

    /* navigation: same budget, a fork once the main branch has its share:
     * M = 6, shares 0.6/0.9 and 0.3/0.9 of the first fork -> main grows to 4,
     * the fork (2nd-best token at the root) takes a step */
    p.navigation = 1;
    pol = make(&p);
    o.calls = 0;
    tree_init(&t, 11);
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 6);
    CHECK(branches(&t) >= 2);
    CHECK(eng_tree_depth(&t) < 6);
    /* the root has the fork: its 2nd-best candidate is a child */
    const eng_cand *rc = NULL;
    int32_t rn = 0;
    rc = eng_tree_cands(&t, 0, &rn);
    CHECK(rn == KC && eng_tree_child(&t, 0, rc[1].tok) != ENG_NO_NODE);
    /* batched branches: rows = sum over leaves of depth + 1 */
    eng_verify_plan plan;
    pol.i->plan(pol.self, &t, NULL, &plan);
    int32_t want = 0;
    for (int32_t v = 0; v < t.n_nodes; v++)
        if (t.nodes[v].first_child == ENG_NO_NODE) want += t.nodes[v].depth + 1;
    CHECK_EQ_INT(plan.rows, want);
    CHECK(plan.rows > eng_tree_size(&t) + 1); /* shared prefixes repeated */
    CHECK_EQ_INT(plan.leaves, branches(&t));
    CHECK_EQ_INT(plan.overlap_gate, 1);
    eng_policy_destroy(&pol);

    /* tree attention instead: one row per node */
    p.verify = ENG_EDGELLM_TREE;
    pol = make(&p);
    tree_init(&t, 11);
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    pol.i->plan(pol.self, &t, NULL, &plan);
    CHECK_EQ_INT(plan.rows, eng_tree_size(&t) + 1);
    eng_policy_destroy(&pol);

    /* fallback without navigation: stop once 0.5^n < alpha0 = 0.01 -> n = 7 */
    orc h = {.q = {0.5, 0.3, 0.2}};
    eng_draft_oracle dh = {.expand = expand, .ctx = &h, .k = KC};
    p = defaults();
    p.navigation = 0;
    pol = make(&p);
    tree_init(&t, 3);
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dh, &lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 7);
    CHECK_NEAR(eng_edgellm_alpha(&pol), 0.01, 1e-15);

    /* observe: 3 of the 7 accepted -> alpha = 4/7; next tree: 0.5^1 < 4/7 -> 1 token */
    eng_token g[MAXN];
    for (int32_t v = 0; v < t.n_nodes; v++) g[v] = ENG_NO_TOKEN;
    int32_t v = 0;
    for (int32_t d = 0; d < 3; d++) v = t.nodes[v].first_child;
    eng_feedback fb = {.tree = &t, .g = g,
                       .outcome = {.accepted = 3, .last_node = v, .bonus = 99, .emitted = 4}};
    pol.i->observe(pol.self, &fb);
    CHECK_NEAR(eng_edgellm_alpha(&pol), 4.0 / 7.0, 1e-12);
    tree_init(&t, 3);
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dh, &lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 1);
    /* fully correct branch: alpha halves */
    fb.outcome = (eng_outcome){.accepted = 1, .last_node = 1, .bonus = 5, .emitted = 2};
    pol.i->observe(pol.self, &fb);
    CHECK_NEAR(eng_edgellm_alpha(&pol), 2.0 / 7.0, 1e-12);
    eng_policy_destroy(&pol);

    /* limits: remaining caps the depth, max_nodes the size */
    p = defaults();
    p.fallback = 0;
    p.budget = 20;
    pol = make(&p);
    tree_init(&t, 3);
    eng_build_limits small = {MAXN, 64, 4};
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &small), ENG_OK);
    CHECK(eng_tree_depth(&t) <= 3);
    eng_build_limits few = {5, 64, 1000};
    tree_init(&t, 3);
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &few), ENG_OK);
    CHECK(t.n_nodes <= 5);
    eng_policy_destroy(&pol);
}

/* Builds a 3-token chain, drafts 4 provisional tokens and observes an outcome. */
static int32_t provisional_round(eng_policy *pol, orc *o, eng_tree *t, int full, int bonus_ok,
                                 int32_t done, int32_t *tip_out, int32_t *first_out)
{
    eng_draft_oracle dr = {.expand = expand, .ctx = o, .k = KC};
    eng_build_limits lim = {MAXN, 64, 1000};
    tree_init(t, 21);
    CHECK_EQ_INT(pol->i->build(pol->self, t, &dr, &lim), ENG_OK);
    int32_t verified = t->n_nodes, tip = verified - 1;
    CHECK_EQ_INT(eng_tree_size(t), 3);
    o->calls = 0;
    CHECK_EQ_INT(pol->i->provisional(pol->self, t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(o->calls, 4);
    CHECK_EQ_INT(t->n_nodes, verified + 4); /* one node per call */
    CHECK_EQ_INT(t->nodes[verified].parent, tip);
    eng_token g[MAXN];
    for (int32_t v = 0; v < t->n_nodes; v++) g[v] = ENG_NO_TOKEN;
    eng_outcome oc = {.accepted = full ? 3 : 1, .last_node = full ? tip : 1,
                      .bonus = bonus_ok ? t->nodes[verified].tok : 4242, .emitted = 4};
    eng_feedback fb = {.tree = t, .g = g, .outcome = oc, .verified_nodes = verified,
                       .provisional_calls = 4, .provisional_done = done};
    pol->i->observe(pol->self, &fb);
    *tip_out = tip;
    *first_out = verified;
    return eng_edgellm_carried(pol);
}

static void test_provisional(void)
{
    orc o = {.q = {0.9, 0.05, 0.05}};
    eng_tree t;
    eng_edgellm_params p = defaults();
    p.navigation = 0;
    p.fallback = 0;
    p.budget = 3;
    p.prov_max = 4;
    eng_policy pol = make(&p);
    int32_t tip, first;

    /* whole branch accepted, bonus = first provisional token, 3 of 4 calls ran:
     * p1 (the bonus, next root), p2, p3 are carried */
    CHECK_EQ_INT(provisional_round(&pol, &o, &t, 1, 1, 3, &tip, &first), 3);
    eng_token p1 = t.nodes[first].tok, p2 = t.nodes[first + 1].tok, p3 = t.nodes[first + 2].tok;
    /* the next tree starts with p2, p3 under the root p1: only 1 call for the
     * third token (p3 was never expanded: its call did not run) */
    eng_draft_oracle dr = {.expand = expand, .ctx = &o, .k = KC};
    eng_build_limits lim = {MAXN, 64, 1000};
    tree_init(&t, p1);
    o.calls = 0;
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 3);
    CHECK_EQ_INT(o.calls, 1);
    CHECK_EQ_INT(t.nodes[1].tok, p2);
    CHECK_EQ_INT(t.nodes[2].tok, p3);
    int32_t cn = 0;
    const eng_cand *c = eng_tree_cands(&t, 0, &cn); /* p1's set, from call 2 */
    CHECK_EQ_INT(cn, KC);
    CHECK_EQ_INT(c[0].tok, p2);
    c = eng_tree_cands(&t, 1, &cn); /* p2's, from call 3 */
    CHECK_EQ_INT(cn, KC);
    CHECK_EQ_INT(c[0].tok, p3);
    CHECK_EQ_INT(eng_edgellm_carried(&pol), 0); /* consumed */

    /* the boundary: 2 of 4 calls ran -- p1 (the next root) with the candidate
     * set call 2 gave it, and p2 without one (its call did not run): the next
     * tree reuses p1's set and expands p2 and the token after it */
    CHECK_EQ_INT(provisional_round(&pol, &o, &t, 1, 1, 2, &tip, &first), 2);
    p1 = t.nodes[first].tok;
    p2 = t.nodes[first + 1].tok;
    tree_init(&t, p1);
    o.calls = 0;
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 3);
    CHECK_EQ_INT(o.calls, 2);
    CHECK_EQ_INT(t.nodes[1].tok, p2);
    CHECK_EQ_INT(t.nodes[1].parent, 0);
    c = eng_tree_cands(&t, 0, &cn);
    CHECK_EQ_INT(cn, KC);
    CHECK_EQ_INT(c[0].tok, p2);

    /* discarded: branch not fully accepted */
    CHECK_EQ_INT(provisional_round(&pol, &o, &t, 0, 1, 4, &tip, &first), 0);
    /* discarded: the bonus is not the first provisional token */
    CHECK_EQ_INT(provisional_round(&pol, &o, &t, 1, 0, 4, &tip, &first), 0);
    /* nothing usable: only the first call ran (its token is the bonus itself) */
    CHECK_EQ_INT(provisional_round(&pol, &o, &t, 1, 1, 1, &tip, &first), 0);
    /* a carried chain whose root does not match the next root is dropped */
    CHECK_EQ_INT(provisional_round(&pol, &o, &t, 1, 1, 4, &tip, &first), 4);
    tree_init(&t, 77);
    o.calls = 0;
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(o.calls, 3);
    eng_policy_destroy(&pol);

    /* provisional off: the hook drafts nothing */
    p.provisional = 0;
    pol = make(&p);
    tree_init(&t, 21);
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    int32_t n = t.n_nodes;
    o.calls = 0;
    CHECK_EQ_INT(pol.i->provisional(pol.self, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, n);
    CHECK_EQ_INT(o.calls, 0);
    /* the memory bound: max_nodes caps provisional nodes */
    eng_policy_destroy(&pol);
    p.provisional = 1;
    pol = make(&p);
    tree_init(&t, 21);
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    eng_build_limits tight = {t.n_nodes + 2, 64, 1000};
    CHECK_EQ_INT(pol.i->provisional(pol.self, &t, &dr, &tight), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, 6);
    eng_policy_destroy(&pol);

    /* bad params are refused */
    p = defaults();
    p.max_branches = 0;
    eng_policy bad = {NULL, NULL};
    CHECK_EQ_INT(eng_edgellm_create(&p, &bad), ENG_E_ARG);
}

/* A fallback chain (alpha0 = 0.5, q1 = 0.9: 7 tokens, 0.9^7 < 0.5), its
 * provisional drafting, and the observation of an outcome that accepted
 * `accepted` tokens (the whole branch when 7, the bonus then the first
 * provisional token).  Returns the provisional calls made. */
static int32_t fallback_round(eng_policy *pol, orc *o, eng_tree *t, int32_t accepted)
{
    eng_draft_oracle dr = {.expand = expand, .ctx = o, .k = KC};
    eng_build_limits lim = {MAXN, 64, 1000};
    tree_init(t, 21);
    CHECK_EQ_INT(pol->i->build(pol->self, t, &dr, &lim), ENG_OK);
    int32_t verified = t->n_nodes;
    CHECK_EQ_INT(eng_tree_size(t), 7);
    CHECK_EQ_INT(eng_tree_depth(t), 7);
    o->calls = 0;
    CHECK_EQ_INT(pol->i->provisional(pol->self, t, &dr, &lim), ENG_OK);
    int32_t calls = o->calls;
    CHECK_EQ_INT(t->n_nodes, verified + calls);
    eng_token g[MAXN];
    for (int32_t v = 0; v < t->n_nodes; v++) g[v] = ENG_NO_TOKEN;
    eng_token first = calls > 0 ? t->nodes[verified].tok : 4242;
    eng_outcome oc = {.accepted = accepted, .last_node = accepted,
                      .bonus = accepted == 7 ? first : 4242, .emitted = accepted + 1};
    eng_feedback fb = {.tree = t, .g = g, .outcome = oc, .verified_nodes = verified,
                       .provisional_calls = calls, .provisional_done = calls};
    pol->i->observe(pol->self, &fb);
    return calls;
}

/* Provisional drafting under the fallback rule: where it stops, that its nodes
 * (children of the verified tip) leave alpha and the pacer's M as they are
 * without it, and how a carried chain meets the next tree's fallback. */
static void test_provisional_fallback(void)
{
    orc o = {.q = {0.9, 0.05, 0.05}};
    eng_tree t;
    eng_edgellm_params p = defaults();
    p.navigation = 0;
    p.alpha0 = 0.5;
    for (int prov = 0; prov <= 1; prov++) {
        p.provisional = prov;
        /* whole branch accepted: the tip is the best-matching branch's leaf
         * although provisional nodes hang below it, so alpha halves */
        eng_policy pol = make(&p);
        /* provisional drafting stops before the call whose token would take the
         * next tree's confidence (its second token on) below alpha: 0.9^7 < 0.5
         * after the 8th token */
        CHECK_EQ_INT(fallback_round(&pol, &o, &t, 7), prov ? 8 : 0);
        CHECK_NEAR(eng_edgellm_alpha(&pol), 0.25, 1e-12);
        CHECK_NEAR(eng_edgellm_pace_m(&pol), 7.5, 1e-12); /* (8 + 7) / 2: 7 verified tokens */
        CHECK_EQ_INT(eng_edgellm_carried(&pol), prov ? 8 : 0);
        /* the next tree: 7 carried tokens with their sets but the last, then
         * the fallback (alpha 0.25) grows it to 14 tokens (0.9^14 < 0.25) */
        eng_draft_oracle dr = {.expand = expand, .ctx = &o, .k = KC};
        eng_build_limits lim = {MAXN, 64, 1000};
        eng_token root = t.nodes[t.n_nodes - 8].tok;
        tree_init(&t, prov ? root : 21);
        o.calls = 0;
        CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
        CHECK_EQ_INT(eng_tree_size(&t), 14);
        CHECK_EQ_INT(o.calls, prov ? 7 : 14);
        eng_policy_destroy(&pol);

        /* 3 of 7 accepted: the best-matching branch is the verified chain (7
         * tokens, not 15 with the provisional ones): alpha = 4 / 7 */
        pol = make(&p);
        fallback_round(&pol, &o, &t, 3);
        CHECK_NEAR(eng_edgellm_alpha(&pol), 4.0 / 7.0, 1e-12);
        CHECK_NEAR(eng_edgellm_pace_m(&pol), 7.5, 1e-12);
        CHECK_EQ_INT(eng_edgellm_carried(&pol), 0);
        eng_policy_destroy(&pol);
    }
}

int main(void)
{
    test_pace();
    test_alpha();
    test_shapes();
    test_provisional();
    test_provisional_fallback();
    return check_done("test_edgellm");
}
