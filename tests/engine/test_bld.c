/*
 * test_bld.c -- the Big Little Decoder policy against an in-test draft oracle.
 *
 * The oracle gives every expanded node K = 2 candidates; the top one's draft
 * probability is set per depth of the expanded node (conf[d]), so a test
 * decides at which step the draft's confidence drops.  Tokens derive from the
 * parent's token and the depth, so every chain is distinct.  Checks: the
 * fallback rule at its boundary (a confidence equal to fallback drafts on,
 * one just above it stops), the first token under the same rule (no forced
 * token), the max_len cap and the limits of the cycle (remaining, depth,
 * capacity), a NaN confidence, an oracle that returns no candidates or
 * fails, the range checks of create, and one whole cycle under greedy
 * acceptance: the chain is kept up to the first token the target disagrees
 * with and the target's token replaces it.
 */
#include "pol_bld.h"

#include "../check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { KC = 2, MAXN = 256, MAXD = 80 };

typedef struct orc {
    int32_t calls;
    int32_t empty_at; /* depth whose expansion returns no candidate, -1 none */
    int32_t fail_at;  /* depth whose expansion fails, -1 none */
    eng_unit unit;    /* unit of the last call */
    float logp[MAXD]; /* log-probability of the top candidate by depth */
} orc;

static eng_token child_tok(eng_token parent, int32_t depth, int32_t j)
{
    return (eng_token)(((int64_t)parent * 31 + depth * 7 + j + 1) % 100003);
}

static int expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    orc *o = ctx;
    o->calls++;
    o->unit = unit;
    for (int32_t i = 0; i < count; i++) {
        const eng_node *u = &t->nodes[ids[i]];
        int32_t d = u->depth;
        if (d == o->fail_at) return ENG_E_ORACLE;
        if (d == o->empty_at) continue;
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], KC);
        if (!c) return ENG_E_FULL;
        c[0].tok = child_tok(u->tok, d, 0);
        c[0].logp = o->logp[d < MAXD ? d : MAXD - 1];
        c[1].tok = child_tok(u->tok, d, 1);
        c[1].logp = c[0].logp - 3.0f;
    }
    return ENG_OK;
}

/* every depth at top-1 probability q */
static void orc_init(orc *o, double q)
{
    memset(o, 0, sizeof *o);
    o->empty_at = o->fail_at = -1;
    for (int32_t d = 0; d < MAXD; d++)
        o->logp[d] = (float)log(q);
}

/* the confidence the policy computes from depth d's candidate */
static double conf_at(const orc *o, int32_t d)
{
    return exp((double)o->logp[d]);
}

static _Alignas(8) unsigned char mem[MAXN * sizeof(eng_node) + MAXN * KC * sizeof(eng_cand)];

static eng_bld_params defaults(void)
{
    eng_bld_params p;
    memset(&p, 0xAB, sizeof p);
    eng_params_defaults(eng_bld_param_table, &p);
    return p;
}

/* one build from a fresh tree rooted at token 5; returns the build's code */
static int build(const eng_bld_params *p, orc *o, eng_tree *t, eng_build_limits lim)
{
    eng_policy pol = {NULL, NULL};
    CHECK_EQ_INT(eng_bld_create(p, &pol), ENG_OK);
    if (!pol.i) return -100;
    eng_tree_init(t, mem, sizeof mem, MAXN, MAXN * KC);
    eng_tree_reset(t, 5);
    eng_draft_oracle dr = {.expand = expand, .ctx = o, .k = KC};
    o->calls = 0;
    int rc = eng_policy_build(&pol, t, &dr, &lim);
    eng_policy_destroy(&pol);
    return rc;
}

static const eng_build_limits BIG = {MAXN, 64, 1000};

/* the tree is one chain of n draft tokens, each the top-1 of its parent */
static int is_chain(const eng_tree *t, int32_t n)
{
    if (eng_tree_size(t) != n) return 0;
    for (int32_t u = 1; u < t->n_nodes; u++) {
        const eng_node *x = &t->nodes[u];
        if (x->parent != u - 1 || x->depth != u) return 0;
        if (x->tok != child_tok(t->nodes[u - 1].tok, u - 1, 0)) return 0;
    }
    return 1;
}

static void test_defaults(void)
{
    eng_bld_params p = defaults();
    CHECK(p.fallback == 0.6);
    CHECK_EQ_INT(p.max_len, 10);
    CHECK_EQ_INT(p.unit, ENG_UNIT_CPU);
    const eng_policy_desc *d = eng_policy_lookup("bld");
    CHECK(d && d->params == eng_bld_param_table && d->create == eng_bld_create &&
          d->needs_draft == 1 && d->params_size == sizeof(eng_bld_params));
    /* no observe: trees depend on the draft alone, never on feedback */
    eng_policy pol = {NULL, NULL};
    CHECK_EQ_INT(eng_bld_create(&p, &pol), ENG_OK);
    CHECK(pol.i && !strcmp(pol.i->name, "bld") && pol.i->build && !pol.i->observe &&
          !pol.i->prune && !pol.i->plan && !pol.i->calibrate && !pol.i->provisional);
    eng_policy_destroy(&pol);
}

/* The fallback rule at its boundary: depth 2's confidence is exactly the
 * threshold (drafting goes on), then one ulp above it (drafting stops after
 * two tokens, the third candidate read but not added). */
static void test_fallback_boundary(void)
{
    orc o;
    eng_tree t;
    orc_init(&o, 0.95);
    o.logp[2] = (float)log(0.5);
    eng_bld_params p = defaults();
    p.fallback = conf_at(&o, 2); /* equal: not below */
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 10));
    CHECK_EQ_INT(o.calls, 10); /* the tenth tip is not expanded */
    p.fallback = nextafter(conf_at(&o, 2), 1.0); /* the confidence is just below */
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 2));
    CHECK_EQ_INT(o.calls, 3); /* the third call read the unconfident token */
    /* the default threshold with a plainly lower confidence */
    p = defaults();
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 2));
    /* a confidence of exactly 1 against fallback = 1: drafts on */
    orc_init(&o, 1.0);
    CHECK(conf_at(&o, 0) == 1.0);
    p.fallback = 1.0;
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 10));
    /* fallback = 0 never falls back: the chain runs to max_len */
    orc_init(&o, 1e-6);
    p.fallback = 0.0;
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 10));
    /* a NaN confidence stops like a low one */
    orc_init(&o, 0.95);
    o.logp[3] = NAN;
    p = defaults();
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 3));
    CHECK_EQ_INT(o.calls, 4);
}

/* The first token obeys the same rule: below fallback, the cycle verifies
 * the root alone after one draft call; at fallback, it is drafted. */
static void test_first_token(void)
{
    orc o;
    eng_tree t;
    orc_init(&o, 0.95);
    o.logp[0] = (float)log(0.3);
    eng_bld_params p = defaults();
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 0);
    CHECK_EQ_INT(o.calls, 1);
    eng_verify_plan plan;
    eng_plan_default(&t, NULL, &plan);
    CHECK_EQ_INT(plan.rows, 1);
    p.fallback = nextafter(conf_at(&o, 0), 1.0);
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK_EQ_INT(eng_tree_size(&t), 0);
    p.fallback = conf_at(&o, 0);
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 10));
    /* only the first step unconfident, fallback 0.6: nothing, then with the
     * second unconfident instead: exactly one token */
    orc_init(&o, 0.95);
    o.logp[1] = (float)log(0.3);
    p = defaults();
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 1));
    CHECK_EQ_INT(o.calls, 2);
}

/* max_len caps the chain; so do the cycle's limits (remaining - 1 for the
 * bonus, max_depth, max_nodes - 1); the last tip is never expanded. */
static void test_cap(void)
{
    orc o;
    eng_tree t;
    orc_init(&o, 0.99);
    eng_bld_params p = defaults();
    for (int32_t len = 1; len <= 64; len += 21) {
        p.max_len = len;
        CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
        CHECK(is_chain(&t, len));
        CHECK_EQ_INT(o.calls, len);
    }
    p.max_len = 10;
    CHECK_EQ_INT(build(&p, &o, &t, (eng_build_limits){MAXN, 64, 4}), ENG_OK);
    CHECK(is_chain(&t, 3));
    CHECK_EQ_INT(build(&p, &o, &t, (eng_build_limits){MAXN, 64, 1}), ENG_OK);
    CHECK(is_chain(&t, 0));
    CHECK_EQ_INT(o.calls, 0);
    CHECK_EQ_INT(build(&p, &o, &t, (eng_build_limits){MAXN, 6, 1000}), ENG_OK);
    CHECK(is_chain(&t, 6));
    CHECK_EQ_INT(build(&p, &o, &t, (eng_build_limits){8, 64, 1000}), ENG_OK);
    CHECK(is_chain(&t, 7));
    CHECK_EQ_INT(o.calls, 7);
    /* the cap and the threshold together: whichever comes first */
    o.logp[4] = (float)log(0.1);
    p.max_len = 4;
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 4));
    CHECK_EQ_INT(o.calls, 4); /* the unconfident depth-4 step never ran */
    p.max_len = 5;
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 4));
    CHECK_EQ_INT(o.calls, 5);
}

static void test_oracle_edges(void)
{
    orc o;
    eng_tree t;
    orc_init(&o, 0.99);
    eng_bld_params p = defaults();
    p.unit = ENG_UNIT_NPU;
    o.empty_at = 2;
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
    CHECK(is_chain(&t, 2));
    CHECK_EQ_INT(o.calls, 3); /* no second try at the node without candidates */
    CHECK_EQ_INT(o.unit, ENG_UNIT_NPU);
    o.empty_at = -1;
    o.fail_at = 1;
    CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_E_ORACLE);
    /* a policy handed no oracle or no limits refuses */
    eng_policy pol = {NULL, NULL};
    CHECK_EQ_INT(eng_bld_create(&p, &pol), ENG_OK);
    eng_tree_init(&t, mem, sizeof mem, MAXN, MAXN * KC);
    eng_tree_reset(&t, 5);
    eng_draft_oracle none = {0};
    CHECK_EQ_INT(eng_policy_build(&pol, &t, &none, &BIG), ENG_E_ARG);
    eng_draft_oracle dr = {.expand = expand, .ctx = &o, .k = KC};
    CHECK_EQ_INT(eng_policy_build(&pol, &t, &dr, NULL), ENG_E_ARG);
    eng_policy_destroy(&pol);
}

/* create refuses every value outside the table's ranges (a C caller gets
 * ENG_E_ARG; the Lua layer names the key first). */
static void test_ranges(void)
{
    eng_policy pol = {NULL, NULL};
    const double bad_fb[] = {-0.01, nextafter(0.0, -1.0), nextafter(1.0, 2.0), 1.5, NAN,
                             INFINITY};
    for (size_t i = 0; i < sizeof bad_fb / sizeof bad_fb[0]; i++) {
        eng_bld_params p = defaults();
        p.fallback = bad_fb[i];
        CHECK_EQ_INT(eng_bld_create(&p, &pol), ENG_E_ARG);
    }
    const int32_t bad_len[] = {0, -1, 65};
    for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
        eng_bld_params p = defaults();
        p.max_len = bad_len[i];
        CHECK_EQ_INT(eng_bld_create(&p, &pol), ENG_E_ARG);
    }
    eng_bld_params p = defaults();
    p.unit = (eng_unit)2;
    CHECK_EQ_INT(eng_bld_create(&p, &pol), ENG_E_ARG);
    CHECK_EQ_INT(eng_bld_create(NULL, &pol), ENG_E_ARG);
    CHECK(pol.i == NULL && pol.self == NULL);
    p = defaults();
    CHECK_EQ_INT(eng_bld_create(&p, NULL), ENG_E_ARG);
    /* the ends of the ranges are accepted */
    const double ok_fb[] = {0.0, 1.0};
    const int32_t ok_len[] = {1, 64};
    for (int e = 0; e < 2; e++) {
        p = defaults();
        p.fallback = ok_fb[e];
        p.max_len = ok_len[e];
        CHECK_EQ_INT(eng_bld_create(&p, &pol), ENG_OK);
        eng_policy_destroy(&pol);
    }
}

/* One cycle under greedy acceptance: the target agrees with the first
 * `agree` chain tokens; the walk keeps them, and the target's own token
 * (never the draft's) follows -- BiLD's rollback to the first disagreement. */
static void test_cycle(void)
{
    orc o;
    eng_tree t;
    orc_init(&o, 0.9);
    o.logp[6] = (float)log(0.2); /* the draft falls back after 6 tokens */
    eng_bld_params p = defaults();
    for (int32_t agree = 0; agree <= 6; agree++) {
        CHECK_EQ_INT(build(&p, &o, &t, BIG), ENG_OK);
        CHECK(is_chain(&t, 6));
        eng_token g[MAXN], emit[MAXN];
        for (int32_t u = 0; u < t.n_nodes; u++)
            g[u] = u < agree ? t.nodes[u + 1].tok : 90000 + u; /* the target's next token */
        eng_outcome out = eng_accept_greedy(&t, g, NULL, NULL, emit, 100);
        CHECK_EQ_INT(out.accepted, agree);
        CHECK_EQ_INT(out.emitted, agree + 1);
        int ok = 1;
        for (int32_t i = 0; i < agree; i++)
            ok &= emit[i] == t.nodes[i + 1].tok;
        ok &= emit[agree] == 90000 + agree;
        CHECK(ok);
    }
}

int main(void)
{
    test_defaults();
    test_fallback_boundary();
    test_first_token();
    test_cap();
    test_oracle_edges();
    test_ranges();
    test_cycle();
    return check_done("test_bld");
}
