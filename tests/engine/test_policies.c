/*
 * test_policies.c -- Flash-AR and Chain-SD against a deterministic in-test draft
 * oracle, the registry, parameter tables and "did you mean" suggestions.
 *
 * The oracle knows one token sequence seq[]: a node at depth d gets the
 * candidates {seq[d + 1], 1000 + d, 2000 + d, ...} with decreasing log-probs, so
 * a chain built from top-1s must spell seq[1..n] exactly.  It records every call
 * (count, unit, ids) so the tests can check how the policy used it.
 */
#include "pol_chain.h"
#include "pol_flash_ar.h"

#include "../check.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

enum { SEQ_LEN = 80, KCAND = 4, MAXN = 80 };

typedef struct test_oracle {
    eng_token seq[SEQ_LEN];
    int32_t calls;
    int32_t bad_batches;  /* calls with count != 1 */
    int32_t units[2];     /* calls per unit */
    int32_t fail_at_call; /* -1: never; else return fail_rc on that call */
    int fail_rc;
    int no_cands_at_depth; /* -1: never; else leave that depth unexpanded */
} test_oracle;

static int oracle_expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    test_oracle *o = ctx;
    if (o->fail_at_call == o->calls) {
        o->calls++;
        return o->fail_rc;
    }
    o->calls++;
    if (count != 1) o->bad_batches++;
    o->units[unit == ENG_UNIT_NPU]++;
    for (int32_t i = 0; i < count; i++) {
        int32_t d = t->nodes[ids[i]].depth;
        if (d == o->no_cands_at_depth) continue;
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], KCAND);
        if (!c) return ENG_E_FULL;
        c[0].tok = o->seq[d + 1];
        c[0].logp = -0.1f;
        for (int32_t j = 1; j < KCAND; j++) {
            c[j].tok = 1000 * j + d;
            c[j].logp = -1.0f - (float)j;
        }
    }
    return ENG_OK;
}

static void oracle_init(test_oracle *o)
{
    memset(o, 0, sizeof *o);
    for (int32_t i = 0; i < SEQ_LEN; i++)
        o->seq[i] = (eng_token)(7 + (i * 37) % 101);
    o->fail_at_call = -1;
    o->no_cands_at_depth = -1;
}

static _Alignas(8) unsigned char mem[MAXN * sizeof(eng_node) + MAXN * KCAND * sizeof(eng_cand)];

static void tree_init(eng_tree *t, const test_oracle *o)
{
    eng_tree_init(t, mem, sizeof mem, MAXN, MAXN * KCAND);
    eng_tree_reset(t, o->seq[0]);
}

/* The tree is one chain spelling seq[1..n]. */
static int is_seq_chain(const eng_tree *t, const test_oracle *o, int32_t n)
{
    if (t->n_nodes != n + 1) return 0;
    for (int32_t v = 1; v <= n; v++) {
        const eng_node *x = &t->nodes[v];
        if (x->parent != v - 1 || x->tok != o->seq[v] || x->depth != v) return 0;
        if (x->logq != -0.1f) return 0;
    }
    return eng_tree_leaves(t) == 1;
}

static int32_t chain_len(int32_t k, eng_unit unit, eng_build_limits lim, test_oracle *o,
                         eng_tree *t, int *rc)
{
    eng_chain_params p = {k, unit};
    eng_policy pol;
    CHECK_EQ_INT(eng_chain_create(&p, &pol), ENG_OK);
    tree_init(t, o);
    *rc = pol.i->build(pol.self, t, &(eng_draft_oracle){.expand = oracle_expand, .ctx = o, .k = KCAND}, &lim);
    eng_policy_destroy(&pol);
    return eng_tree_size(t);
}

static void test_chain(void)
{
    test_oracle o;
    eng_tree t;
    int rc;
    eng_build_limits big = {MAXN, 64, 1000};

    /* default-like: k = 8 top-1 tokens, 8 single-node CPU calls */
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(8, ENG_UNIT_CPU, big, &o, &t, &rc), 8);
    CHECK_EQ_INT(rc, ENG_OK);
    CHECK(is_seq_chain(&t, &o, 8));
    CHECK_EQ_INT(o.calls, 8);
    CHECK_EQ_INT(o.bad_batches, 0);
    CHECK_EQ_INT(o.units[0], 8);
    CHECK_EQ_INT(o.units[1], 0);
    /* the last tip is not expanded; every earlier node is */
    CHECK_EQ_INT(t.nodes[8].cand_off, ENG_NO_NODE);
    CHECK_EQ_INT(t.nodes[7].cand_n, KCAND);

    /* unit npu honoured */
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(3, ENG_UNIT_NPU, big, &o, &t, &rc), 3);
    CHECK(is_seq_chain(&t, &o, 3));
    CHECK_EQ_INT(o.units[1], 3);
    CHECK_EQ_INT(o.units[0], 0);

    /* k = 64, the table's maximum */
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(64, ENG_UNIT_CPU, big, &o, &t, &rc), 64);
    CHECK(is_seq_chain(&t, &o, 64));

    /* remaining - 1 caps the chain (room for the bonus token) */
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(8, ENG_UNIT_CPU, (eng_build_limits){MAXN, 64, 4}, &o, &t, &rc), 3);
    CHECK(is_seq_chain(&t, &o, 3));
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(8, ENG_UNIT_CPU, (eng_build_limits){MAXN, 64, 1}, &o, &t, &rc), 0);
    CHECK_EQ_INT(o.calls, 0);
    CHECK_EQ_INT(rc, ENG_OK);

    /* max_nodes counts the root */
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(8, ENG_UNIT_CPU, (eng_build_limits){5, 64, 100}, &o, &t, &rc), 4);
    CHECK(is_seq_chain(&t, &o, 4));
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(8, ENG_UNIT_CPU, (eng_build_limits){1, 64, 100}, &o, &t, &rc), 0);
    CHECK_EQ_INT(o.calls, 0);

    /* max_depth */
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(8, ENG_UNIT_CPU, (eng_build_limits){MAXN, 2, 100}, &o, &t, &rc), 2);
    CHECK(is_seq_chain(&t, &o, 2));
    oracle_init(&o);
    CHECK_EQ_INT(chain_len(8, ENG_UNIT_CPU, (eng_build_limits){MAXN, 0, 100}, &o, &t, &rc), 0);

    /* oracle failure is propagated */
    oracle_init(&o);
    o.fail_at_call = 2;
    o.fail_rc = ENG_E_FULL;
    chain_len(8, ENG_UNIT_CPU, big, &o, &t, &rc);
    CHECK_EQ_INT(rc, ENG_E_FULL);
    CHECK_EQ_INT(o.calls, 3);
    oracle_init(&o);
    o.fail_at_call = 0;
    o.fail_rc = 5; /* a positive code is not a valid status: reported as oracle failure */
    chain_len(8, ENG_UNIT_CPU, big, &o, &t, &rc);
    CHECK_EQ_INT(rc, ENG_E_ORACLE);

    /* a node the draft leaves without candidates ends the chain */
    oracle_init(&o);
    o.no_cands_at_depth = 3;
    CHECK_EQ_INT(chain_len(8, ENG_UNIT_CPU, big, &o, &t, &rc), 3);
    CHECK_EQ_INT(rc, ENG_OK);
    CHECK(is_seq_chain(&t, &o, 3));
}

/* The target agrees with seq up to position agree, then diverges. */
typedef struct test_target {
    const test_oracle *o;
    int32_t agree;
} test_target;

static int target_verify(void *ctx, const eng_tree *t, const uint8_t *keep, eng_token *g)
{
    const test_target *tt = ctx;
    for (int32_t v = 0; v < t->n_nodes; v++) {
        int32_t d = t->nodes[v].depth;
        if (keep && !keep[v])
            g[v] = ENG_NO_TOKEN;
        else
            g[v] = d + 1 < tt->agree ? tt->o->seq[d + 1] : 5000 + d;
    }
    return ENG_OK;
}

static void test_chain_cycle(void)
{
    /* build -> plan -> verify -> accept: the emitted text is the target's own */
    test_oracle o;
    oracle_init(&o);
    const eng_policy_desc *d = eng_policy_lookup("chain");
    CHECK(d != NULL);
    if (!d) return;
    eng_chain_params p;
    eng_params_defaults(d->params, &p);
    eng_policy pol;
    CHECK_EQ_INT(d->create(&p, &pol), ENG_OK);
    for (int32_t agree = 0; agree < 12; agree++) {
        eng_tree t;
        tree_init(&t, &o);
        eng_build_limits lim = {MAXN, 64, 100};
        eng_draft_oracle dr = {.expand = oracle_expand, .ctx = &o, .k = KCAND};
        CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
        eng_verify_plan plan;
        CHECK(pol.i->plan == NULL);
        eng_plan_default(&t, NULL, &plan);
        CHECK_EQ_INT(plan.rows, 9);
        CHECK_EQ_INT(plan.leaves, 1);
        test_target tt = {&o, agree};
        eng_target_oracle tg = {target_verify, NULL, &tt, NULL, 0};
        eng_token g[MAXN], emit[MAXN];
        CHECK_EQ_INT(tg.verify(tg.ctx, &t, NULL, g), ENG_OK);
        eng_outcome out = eng_accept_greedy(&t, g, NULL, NULL, emit, 100);
        int32_t want_acc = agree - 1 < 0 ? 0 : (agree - 1 > 8 ? 8 : agree - 1);
        CHECK_EQ_INT(out.accepted, want_acc);
        CHECK_EQ_INT(out.emitted, want_acc + 1);
        int ok = 1;
        for (int32_t i = 0; i < out.emitted; i++) {
            eng_token want = i + 1 < agree ? o.seq[i + 1] : 5000 + i;
            ok &= emit[i] == want;
        }
        CHECK(ok);
    }
    eng_policy_destroy(&pol);
}

static void test_flash_ar(void)
{
    test_oracle o;
    oracle_init(&o);
    const eng_policy_desc *d = eng_policy_lookup("flash_ar");
    CHECK(d != NULL);
    if (!d) return;
    CHECK(d->params != NULL && d->params[0].name == NULL);
    eng_flash_ar_params p;
    eng_params_defaults(d->params, &p);
    eng_policy pol = {NULL, NULL};
    CHECK_EQ_INT(d->create(&p, &pol), ENG_OK);
    CHECK(pol.i != NULL && strcmp(pol.i->name, "flash_ar") == 0);
    eng_tree t;
    tree_init(&t, &o);
    eng_build_limits lim = {MAXN, 64, 100};
    eng_draft_oracle dr = {.expand = oracle_expand, .ctx = &o, .k = KCAND};
    CHECK_EQ_INT(pol.i->build(pol.self, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, 1);
    CHECK_EQ_INT(o.calls, 0);
    eng_verify_plan plan;
    eng_plan_default(&t, NULL, &plan);
    CHECK_EQ_INT(plan.rows, 1);
    CHECK_EQ_INT(plan.leaves, 1);
    eng_policy_destroy(&pol);
    CHECK(pol.i == NULL && pol.self == NULL);
}

static void test_plan_default(void)
{
    /* root -> {1, 2}; 1 -> {3, 4}; 3 -> {5}; 2 -> {6} */
    eng_tree t;
    static _Alignas(8) unsigned char m[16 * sizeof(eng_node)];
    eng_tree_init(&t, m, sizeof m, 16, 0);
    eng_tree_reset(&t, 0);
    eng_tree_add(&t, 0, 1, 0);
    eng_tree_add(&t, 0, 2, 0);
    eng_tree_add(&t, 1, 3, 0);
    eng_tree_add(&t, 1, 4, 0);
    eng_tree_add(&t, 3, 5, 0);
    eng_tree_add(&t, 2, 6, 0);
    eng_verify_plan plan;
    eng_plan_default(&t, NULL, &plan);
    CHECK_EQ_INT(plan.rows, 7);
    CHECK_EQ_INT(plan.leaves, 3); /* 4, 5, 6 */
    CHECK_EQ_INT(plan.exit_layer, -1);
    CHECK_EQ_INT(plan.rows_after_exit, 7);
    CHECK_EQ_INT(plan.proj, ENG_PROJ_EAGER_NPU);

    /* prune 5 and the whole branch under 2: 3 becomes a leaf, 2's branch vanishes */
    uint8_t keep[7] = {1, 1, 0, 1, 1, 0, 0};
    eng_plan_default(&t, keep, &plan);
    CHECK_EQ_INT(plan.rows, 4);   /* root, 1, 3, 4 */
    CHECK_EQ_INT(plan.leaves, 2); /* 3, 4 */
    CHECK_EQ_INT(plan.rows_after_exit, 4);

    /* everything pruned: the root alone, whatever keep[0] says */
    uint8_t none[7] = {0};
    eng_plan_default(&t, none, &plan);
    CHECK_EQ_INT(plan.rows, 1);
    CHECK_EQ_INT(plan.leaves, 1);

    /* keep all ones counts as no keep (the two take different loops) */
    uint8_t all[7] = {1, 1, 1, 1, 1, 1, 1};
    eng_verify_plan every;
    eng_plan_default(&t, all, &every);
    eng_plan_default(&t, NULL, &plan);
    CHECK(every.rows == plan.rows && every.leaves == plan.leaves);
}

/* A policy of test hooks: each counts its calls; prune checks that keep
 * arrived all ones and drops node 1. */
typedef struct hook_log {
    int32_t reset, build, prune, plan, observe, calibrate, provisional, error;
    int32_t keep_all_ones;
} hook_log;

static void hk_reset(void *self)
{
    ((hook_log *)self)->reset++;
}

static int hk_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    (void)draft, (void)lim;
    ((hook_log *)self)->build++;
    eng_tree_add(t, 0, 11, -0.5f);
    eng_tree_add(t, 0, 12, -0.7f);
    return ENG_OK;
}

static int hk_prune(void *self, const eng_tree *t, eng_target_oracle *target, uint8_t *keep)
{
    hook_log *h = self;
    (void)target;
    h->prune++;
    h->keep_all_ones = 1;
    for (int32_t u = 0; u < t->n_nodes; u++)
        h->keep_all_ones &= keep[u] == 1;
    keep[1] = 0;
    return ENG_OK;
}

static void hk_plan(void *self, const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan)
{
    ((hook_log *)self)->plan++;
    eng_plan_default(t, keep, plan);
    plan->proj = ENG_PROJ_ONDEMAND_CPU;
}

static void hk_observe(void *self, const eng_feedback *fb)
{
    (void)fb;
    ((hook_log *)self)->observe++;
}

static int hk_calibrate(void *self, const eng_cost_profile *prof)
{
    (void)prof;
    ((hook_log *)self)->calibrate++;
    return ENG_E_ORACLE;
}

static int hk_provisional(void *self, eng_tree *t, eng_draft_oracle *draft,
                          const eng_build_limits *lim)
{
    (void)draft, (void)lim;
    ((hook_log *)self)->provisional++;
    eng_tree_add(t, 2, 13, -0.1f);
    return ENG_OK;
}

static const char *hk_error(void *self)
{
    ((hook_log *)self)->error++;
    return "hook error";
}

/* The eng_policy_* wrappers: every optional hook missing gives its documented
 * default; every hook present is called as it is. */
static void test_wrappers(void)
{
    static _Alignas(8) unsigned char m[8 * sizeof(eng_node)];
    eng_tree t;
    eng_build_limits lim = {8, 4, 100};
    eng_draft_oracle dr = {.expand = oracle_expand, .ctx = NULL, .k = KCAND};
    eng_target_oracle tg = {.verify = NULL};
    eng_cost_profile prof = {.n_pos = 0};
    eng_feedback fb = {.tree = &t};
    eng_verify_plan plan, want;
    uint8_t keep[8];
    uint8_t *mask = keep;

    hook_log none_log = {0};
    const eng_policy_i none_i = {.name = "none", .build = hk_build};
    eng_policy none = {&none_i, &none_log};
    eng_tree_init(&t, m, sizeof m, 8, 0);
    eng_tree_reset(&t, 1);
    CHECK_EQ_INT(eng_policy_calibrates(&none), 0);
    CHECK_EQ_INT(eng_policy_calibrate(&none, &prof), ENG_OK);
    eng_policy_reset(&none);
    CHECK_EQ_INT(eng_policy_build(&none, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, 3);
    memset(keep, 7, sizeof keep);
    CHECK_EQ_INT(eng_policy_prune(&none, &t, &tg, keep, &mask), ENG_OK);
    CHECK(mask == NULL);
    CHECK(keep[0] == 7 && keep[2] == 7); /* untouched */
    eng_policy_plan(&none, &t, mask, &plan);
    eng_plan_default(&t, NULL, &want);
    CHECK(memcmp(&plan, &want, sizeof plan) == 0);
    CHECK_EQ_INT(eng_policy_provisional(&none, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, 3);
    eng_policy_observe(&none, &fb);
    CHECK(eng_policy_error(&none) == NULL);
    CHECK_EQ_INT(none_log.build, 1);
    eng_policy_destroy(&none); /* no destroy hook: only forgets */
    CHECK(none.i == NULL && none.self == NULL);
    const eng_policy_i nobuild_i = {.name = "nobuild"};
    eng_policy nobuild = {&nobuild_i, NULL};
    CHECK_EQ_INT(eng_policy_build(&nobuild, &t, &dr, &lim), ENG_E_ARG);

    hook_log all_log = {0};
    const eng_policy_i all_i = {.name = "all",
                                .reset = hk_reset,
                                .build = hk_build,
                                .prune = hk_prune,
                                .plan = hk_plan,
                                .observe = hk_observe,
                                .calibrate = hk_calibrate,
                                .provisional = hk_provisional,
                                .error = hk_error};
    eng_policy all = {&all_i, &all_log};
    eng_tree_reset(&t, 1);
    CHECK_EQ_INT(eng_policy_calibrates(&all), 1);
    CHECK_EQ_INT(eng_policy_calibrate(&all, &prof), ENG_E_ORACLE);
    eng_policy_reset(&all);
    CHECK_EQ_INT(eng_policy_build(&all, &t, &dr, &lim), ENG_OK);
    memset(keep, 0, sizeof keep);
    CHECK_EQ_INT(eng_policy_prune(&all, &t, &tg, keep, &mask), ENG_OK);
    CHECK(mask == keep);
    CHECK_EQ_INT(all_log.keep_all_ones, 1);
    CHECK(keep[0] == 1 && keep[1] == 0 && keep[2] == 1);
    eng_policy_plan(&all, &t, mask, &plan);
    CHECK_EQ_INT(plan.rows, 2);
    CHECK_EQ_INT(plan.proj, ENG_PROJ_ONDEMAND_CPU);
    CHECK_EQ_INT(eng_policy_provisional(&all, &t, &dr, &lim), ENG_OK);
    CHECK_EQ_INT(t.n_nodes, 4);
    eng_policy_observe(&all, &fb);
    CHECK(eng_policy_error(&all) != NULL && strcmp(eng_policy_error(&all), "hook error") == 0);
    CHECK(all_log.reset == 1 && all_log.build == 1 && all_log.prune == 1 && all_log.plan == 1 &&
          all_log.observe == 1 && all_log.calibrate == 1 && all_log.provisional == 1 &&
          all_log.error == 2);
}

static void test_registry(void)
{
    int32_t n = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&n);
    CHECK_EQ_INT(n, 11);
    CHECK(reg != NULL);
    if (!reg || n < 11) return;
    static const char *const order[] = {"flash_ar", "chain",  "adaptive_chain", "specinfer",
                                        "eagle2",   "opt_tree", "sequoia",      "lever",
                                        "lyanna",   "edgellm",  "bld"};
    for (int32_t i = 0; i < 11; i++) {
        CHECK(strcmp(reg[i]->name, order[i]) == 0);
        CHECK_EQ_INT(reg[i]->needs_draft, i > 0);
    }
    CHECK(eng_policy_lookup("flash_ar") == reg[0]);
    CHECK(eng_policy_lookup("chain") == reg[1]);
    CHECK(eng_policy_lookup("chain2") == NULL);
    CHECK(eng_policy_lookup("") == NULL);
    CHECK(eng_policy_lookup(NULL) == NULL);
    CHECK(reg[0]->params == eng_flash_ar_param_table);
    CHECK(reg[1]->params == eng_chain_param_table);
    CHECK_EQ_INT(reg[1]->params_size, sizeof(eng_chain_params));

    for (int32_t i = 0; i < n; i++) {
        const eng_policy_desc *d = reg[i];
        CHECK(d->doc && d->doc[0] && !strchr(d->doc, '\n'));
        CHECK(d->create != NULL && d->params != NULL);
        /* every row: documented on one line, default inside its range, unique name */
        for (const eng_param_desc *r = d->params; r->name; r++) {
            CHECK(r->doc && r->doc[0] && !strchr(r->doc, '\n'));
            CHECK(isnan(r->def) || (r->def >= r->min && r->def <= r->max));
            CHECK(eng_params_find(d->params, r->name) == r);
            if (r->type == ENG_PARAM_ENUM) {
                int32_t nc = 0;
                while (r->choices && r->choices[nc])
                    nc++;
                CHECK_EQ_INT(nc, (int32_t)r->max + 1);
            }
        }
        /* defaults -> create -> a working instance named like its descriptor */
        _Alignas(8) unsigned char params[512];
        CHECK(d->params_size <= sizeof params);
        memset(params, 0xAB, sizeof params);
        eng_params_defaults(d->params, params);
        eng_policy pol = {NULL, NULL};
        CHECK_EQ_INT(d->create(params, &pol), ENG_OK);
        CHECK(pol.i && strcmp(pol.i->name, d->name) == 0 && pol.i->build);
        /* these two state observes_outcome, each with an observe hook and
         * with neither a calibrate nor a provisional one */
        int outcome = strcmp(d->name, "adaptive_chain") == 0 || strcmp(d->name, "lyanna") == 0;
        CHECK_EQ_INT(d->observes_outcome, outcome);
        CHECK_EQ_INT(eng_policy_observes_outcome(d), outcome);
        if (outcome && pol.i) CHECK(pol.i->observe && !pol.i->calibrate && !pol.i->provisional);
        eng_policy_destroy(&pol);
        eng_policy_destroy(&pol); /* second destroy is a no-op */
    }
    eng_policy_destroy(NULL);
    /* the descriptor's flag decides, wherever the descriptor lives (a
     * plug-in's copy); zeroed (an ABI 1 plug-in's) or NULL: 0 */
    const eng_policy_desc *listed = eng_policy_lookup("lyanna");
    CHECK(listed != NULL);
    eng_policy_desc copy = *listed;
    CHECK_EQ_INT(eng_policy_observes_outcome(listed), 1);
    CHECK_EQ_INT(eng_policy_observes_outcome(&copy), 1);
    copy.observes_outcome = 0;
    CHECK_EQ_INT(eng_policy_observes_outcome(&copy), 0);
    copy.observes_outcome = 2; /* only 1 says yes */
    CHECK_EQ_INT(eng_policy_observes_outcome(&copy), 0);
    CHECK_EQ_INT(eng_policy_observes_outcome(NULL), 0);

    /* direct C callers get their params range-checked by create */
    eng_policy bad = {NULL, NULL};
    CHECK_EQ_INT(eng_chain_create(&(eng_chain_params){0, ENG_UNIT_CPU}, &bad), ENG_E_ARG);
    CHECK_EQ_INT(eng_chain_create(&(eng_chain_params){65, ENG_UNIT_CPU}, &bad), ENG_E_ARG);
    CHECK_EQ_INT(eng_chain_create(&(eng_chain_params){8, (eng_unit)2}, &bad), ENG_E_ARG);
    CHECK_EQ_INT(eng_chain_create(NULL, &bad), ENG_E_ARG);
    CHECK(bad.i == NULL && bad.self == NULL);

    eng_chain_params cp;
    memset(&cp, 0xAB, sizeof cp);
    eng_params_defaults(eng_chain_param_table, &cp);
    CHECK_EQ_INT(cp.k, 8);
    CHECK_EQ_INT(cp.unit, ENG_UNIT_CPU);
    const eng_param_desc *k = eng_params_find(eng_chain_param_table, "k");
    CHECK(k && k->type == ENG_PARAM_INT && k->min == 1 && k->max == 64);
    const eng_param_desc *u = eng_params_find(eng_chain_param_table, "unit");
    CHECK(u && u->type == ENG_PARAM_ENUM && strcmp(u->choices[0], "cpu") == 0 &&
          strcmp(u->choices[1], "npu") == 0);
    CHECK(eng_params_find(eng_chain_param_table, "K") == NULL);
}

/* Each built-in policy's create accepts every numeric parameter at the
 * ends of the range its table states (the others at their defaults) and
 * refuses it one step past either end -- 1 for an integer, the next double
 * for a real: create and the table state one range.  An edge a rule
 * between parameters refuses with the others at their defaults (Adaptive
 * Chain's k_min <= k_max) is left out of the "accepts" half. */
static void test_create_ranges(void)
{
    int32_t n = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&n);
    static _Alignas(max_align_t) unsigned char params[1 << 16];
    int bad = 0;
    for (int32_t i = 0; i < n; i++) {
        const eng_policy_desc *d = reg[i];
        CHECK(d->params_size <= sizeof params);
        for (const eng_param_desc *r = d->params; r && r->name; r++) {
            if (r->type != ENG_PARAM_INT && r->type != ENG_PARAM_DOUBLE) continue;
            const double edge[2] = {r->min, r->max};
            for (int e = 0; e < 2; e++)
                for (int past = 0; past <= 1; past++) {
                    double v = edge[e];
                    if (past)
                        v = r->type == ENG_PARAM_INT ? v + (e ? 1 : -1)
                                                     : nextafter(v, e ? INFINITY : -INFINITY);
                    if (r->type == ENG_PARAM_INT && fabs(v) > 2147483647.0) continue;
                    eng_params_defaults(d->params, params);
                    if (r->type == ENG_PARAM_INT) {
                        int32_t x = (int32_t)v;
                        memcpy(params + r->offset, &x, sizeof x);
                    } else {
                        memcpy(params + r->offset, &v, sizeof v);
                    }
                    eng_policy pol = {NULL, NULL};
                    int rc = d->create(params, &pol);
                    int cross = !strcmp(d->name, "adaptive_chain") &&
                                ((!strcmp(r->name, "k_min") && e == 1) ||
                                 (!strcmp(r->name, "k_max") && e == 0));
                    int ok = past ? rc == ENG_E_ARG : rc == ENG_OK || (cross && rc == ENG_E_ARG);
                    if (!ok && bad++ < 40)
                        fprintf(stderr, "  %s.%s = %.17g: create gave %d\n", d->name, r->name, v,
                                rc);
                    CHECK(ok);
                    eng_policy_destroy(&pol);
                }
        }
    }
}

static void test_nearest(void)
{
    const char *s = eng_params_nearest(eng_chain_param_table, "unti");
    CHECK(s && strcmp(s, "unit") == 0);
    s = eng_params_nearest(eng_chain_param_table, "units");
    CHECK(s && strcmp(s, "unit") == 0);
    s = eng_params_nearest(eng_chain_param_table, "kk");
    CHECK(s && strcmp(s, "k") == 0);
    CHECK(eng_params_nearest(eng_chain_param_table, "temperature") == NULL);
    CHECK(eng_params_nearest(eng_flash_ar_param_table, "k") == NULL);
}

/* A row is required exactly when it has no default of its kind. */
static void test_required(void)
{
    static const double two[] = {1.0, 2.0};
    eng_param_desc d;
    memset(&d, 0, sizeof d);
    d.type = ENG_PARAM_DOUBLE;
    d.def = NAN;
    CHECK(eng_param_required(&d));
    d.def = 0.0; /* a zero default is a default */
    CHECK(!eng_param_required(&d));
    d.type = ENG_PARAM_INT;
    CHECK(!eng_param_required(&d));
    d.def = NAN;
    CHECK(eng_param_required(&d));
    d.type = ENG_PARAM_STRING; /* a string's default is def_str, whatever def */
    CHECK(eng_param_required(&d));
    d.def_str = "";
    CHECK(!eng_param_required(&d));
    d.type = ENG_PARAM_DOUBLE_LIST;
    d.def_str = NULL;
    CHECK(eng_param_required(&d)); /* no list, no count, def NaN */
    d.def_list = two;
    d.def_count = 2;
    CHECK(!eng_param_required(&d));
    d.def_list = NULL;
    CHECK(!eng_param_required(&d)); /* a count alone */
    d.def_count = 0;
    d.def = 3.0;
    CHECK(!eng_param_required(&d)); /* a scalar default fills the list */
    d.type = ENG_PARAM_INT_LIST;
    d.def = NAN;
    CHECK(eng_param_required(&d));
}

/* The tree size every registered policy states, against the documented rule
 * (docs/policies.md, "One tree-size knob"): the parameter, nodes = param +
 * offset (-1: widths, 1 + w1 + w1 w2 + ...; -2: one row), fixed or a cap,
 * and EdgeLLM's budget with its fallback off. */
static void test_tree_rule(void)
{
    static const struct {
        const char *policy, *param;
        int32_t offset, fixed;
        const char *flag, *off_param;
    } want[] = {
        {"flash_ar", NULL, -2, 1, NULL, NULL},
        {"chain", "k", 1, 1, NULL, NULL},
        {"adaptive_chain", "k_max", 1, 0, NULL, NULL},
        {"specinfer", "widths", -1, 1, NULL, NULL},
        {"eagle2", "total_tokens", 1, 1, NULL, NULL},
        {"opt_tree", "nodes", 1, 0, NULL, NULL},
        {"sequoia", "max_nodes", 0, 0, NULL, NULL},
        {"lever", "n_max", 1, 0, NULL, NULL},
        {"lyanna", "b", 1, 0, NULL, NULL},
        {"edgellm", "max_tokens", 1, 0, "fallback", "budget"},
        {"bld", "max_len", 1, 0, NULL, NULL},
    };
    int32_t n = 0;
    eng_policy_registry(&n);
    CHECK_EQ_INT(n, (int32_t)(sizeof want / sizeof want[0])); /* a new policy adds a row */
    static _Alignas(max_align_t) unsigned char params[1 << 16];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const eng_policy_desc *d = eng_policy_lookup(want[i].policy);
        CHECK(d != NULL);
        if (!d) continue;
        CHECK_EQ_INT(d->tree.fixed, want[i].fixed);
        eng_params_defaults(d->params, params);
        const eng_param_desc *p = eng_tree_param(d, params);
        if (want[i].offset == -2) { /* one row: no parameter, one node */
            CHECK_EQ_INT(d->tree.rule, ENG_TREE_ONE_ROW);
            CHECK(p == NULL && eng_tree_param_flag(d, 1) == NULL);
            CHECK_NEAR(eng_tree_nodes(d, params), 1.0, 0);
            CHECK_NEAR(eng_tree_nodes_of(d, NULL, 0), 1.0, 0);
            continue;
        }
        CHECK(p != NULL && strcmp(p->name, want[i].param) == 0);
        if (!p) continue;
        if (want[i].offset == -1) { /* widths 2/3: 1 + 2 + 6 */
            CHECK_EQ_INT(d->tree.rule, ENG_TREE_WIDTHS);
            CHECK_EQ_INT(p->type, ENG_PARAM_INT_LIST);
            const int32_t w[2] = {2, 3}, two = 2;
            memcpy(params + p->offset, w, sizeof w);
            memcpy(params + p->count_offset, &two, sizeof two);
            CHECK_NEAR(eng_tree_nodes(d, params), 9.0, 0);
            const double v[3] = {1, 1, 3};
            CHECK_NEAR(eng_tree_nodes_of(d, v, 3), 6.0, 0);
            CHECK_NEAR(eng_tree_nodes_of(d, v, 1), 2.0, 0);
            CHECK(isnan(eng_tree_nodes_of(d, (const double[]){2, 0}, 2)));
            CHECK(isnan(eng_tree_nodes_of(d, v, 0)));
            continue;
        }
        CHECK_EQ_INT(eng_tree_rule_offset(d->tree.rule), want[i].offset);
        CHECK_EQ_INT(p->type, ENG_PARAM_INT);
        const int32_t x = 7;
        memcpy(params + p->offset, &x, sizeof x);
        CHECK_NEAR(eng_tree_nodes(d, params), 7.0 + want[i].offset, 0);
        CHECK_NEAR(eng_tree_nodes_of(d, (const double[]){12}, 1), 12.0 + want[i].offset, 0);
        CHECK(isnan(eng_tree_nodes_of(d, NULL, 0)));
        /* the flag: its parameter when off, the main one when on */
        const eng_param_desc *off = eng_tree_param_flag(d, 0);
        if (!want[i].flag) {
            CHECK(d->tree.unless_off == NULL && off == p);
            continue;
        }
        CHECK(d->tree.unless_off && strcmp(d->tree.unless_off, want[i].flag) == 0);
        CHECK(off != NULL && strcmp(off->name, want[i].off_param) == 0);
        CHECK(eng_tree_param(d, NULL) == NULL); /* the flag cannot be read */
        const eng_param_desc *f = eng_params_find(d->params, want[i].flag);
        CHECK(f && f->type == ENG_PARAM_BOOL && f->def == 1);
        if (!f || !off) continue;
        const int32_t zero = 0, y = 5;
        memcpy(params + f->offset, &zero, sizeof zero);
        memcpy(params + off->offset, &y, sizeof y);
        CHECK(eng_tree_param(d, params) == off);
        CHECK_NEAR(eng_tree_nodes(d, params), 5.0 + want[i].offset, 0);
    }
    CHECK_EQ_INT(eng_tree_rule_offset(ENG_TREE_PLUS_ROOT), 1);
    CHECK_EQ_INT(eng_tree_rule_offset(ENG_TREE_EQUAL), 0);
    CHECK_EQ_INT(eng_tree_rule_offset(ENG_TREE_WIDTHS), -1);
    CHECK_EQ_INT(eng_tree_rule_offset(ENG_TREE_ONE_ROW), -1);
    CHECK_EQ_INT(eng_tree_rule_offset(ENG_TREE_UNSTATED), -1);

    /* a descriptor with the fields zeroed (a plug-in that states nothing, an
     * ABI 1 one): no tree size, not outcome-only */
    eng_policy_desc bare = *eng_policy_lookup("chain");
    memset(&bare.tree, 0, sizeof bare.tree);
    bare.observes_outcome = 0;
    eng_params_defaults(bare.params, params);
    CHECK(eng_tree_param(&bare, params) == NULL && eng_tree_param_flag(&bare, 1) == NULL);
    CHECK(isnan(eng_tree_nodes(&bare, params)));
    CHECK(isnan(eng_tree_nodes_of(&bare, (const double[]){8}, 1)));
    CHECK_EQ_INT(eng_policy_observes_outcome(&bare), 0);
    /* a parameter the table lacks, or of the wrong type: none */
    bare.tree = (eng_tree_knob){ENG_TREE_PLUS_ROOT, 1, "no_such", NULL, NULL};
    CHECK(eng_tree_param(&bare, params) == NULL);
    bare.tree = (eng_tree_knob){ENG_TREE_WIDTHS, 1, "k", NULL, NULL};
    CHECK(eng_tree_param(&bare, params) == NULL);
    bare.tree = (eng_tree_knob){ENG_TREE_PLUS_ROOT, 1, "unit", NULL, NULL};
    CHECK(eng_tree_param(&bare, params) == NULL);
    bare.tree = (eng_tree_knob){ENG_TREE_EQUAL, 1, "k", NULL, NULL};
    CHECK_NEAR(eng_tree_nodes(&bare, params), 8.0, 0); /* chain's default k = 8 */
    CHECK(isnan(eng_tree_nodes(NULL, params)) && eng_tree_param(NULL, params) == NULL);
    CHECK(isnan(eng_tree_nodes(&bare, NULL)));
}

int main(void)
{
    test_required();
    test_chain();
    test_chain_cycle();
    test_flash_ar();
    test_plan_default();
    test_wrappers();
    test_registry();
    test_create_ranges();
    test_tree_rule();
    test_nearest();
    return check_done("test_policies");
}
