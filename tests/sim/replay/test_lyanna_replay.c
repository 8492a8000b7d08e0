/*
 * test_lyanna_replay.c -- the Lyanna policy on the replay: the oracle's
 * Lyanna hooks, then every variant on both bundled traces.
 *
 *  1. rp_oracle hooks: expand_body serves expand's sets and logs a body call
 *     (part 1); project logs a head-only call (part 2) of `rows` rows and
 *     expands nothing; resample serves expand's sets without logging a call,
 *     and with penalty 1 moves the rank-1 token to the last rank.
 *  2. sim_replay_run, greedy, every variant (re-sampling off / on without
 *     fusion / on with fusion x one-pass head on/off x cpu/npu) on
 *     synth-small.h5 and synth-default.h5: the point succeeds (the replay
 *     fails one that emits a non-reference token) and emits every reference
 *     token; the one-pass head leaves the trees alone (same cycles, tokens,
 *     rows) and prices less draft time.
 *  3. A cycle-by-cycle driver with the real oracle and policy (the replay's
 *     loop without pricing) counts target invocations: it reproduces the
 *     replay's cycle count; with fusion every verification is a drafting
 *     cycle and some carry extra re-sampled rows; without fusion a
 *     verification-only cycle (no draft call) follows exactly the drafting
 *     cycles whose rejection left more than r steps; the call pattern is N
 *     body calls + one head call of N rows (one-pass) or N full calls.
 *
 * argv[1]: the configs directory; argv[2]: the bundled traces directory.
 */
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "engine/pol_lyanna.h"
#include "sim/config/profile.h"
#include "sim/replay/replay.h"
#include "sim/replay/rp_oracle.h"
#include "../profiles_fixture.h"
#include "synth_fixture.h"

#define CAP 1024 /* the replay's tree capacity (RP_TREE_CAP) */
#define MAX_NEW 128

static void test_hooks(const trc_trace *tr)
{
    oracle_fixture f;
    oracle_fixture_open(&f, tr, 5, 64, 4);
    rp_oracle *o = &f.o;
    eng_tree *t = &f.tree;
    CHECK(o->draft.expand_body != NULL && o->draft.project != NULL && o->draft.resample != NULL);
    const int32_t *ref;
    trc_ref(tr, 0, &ref);
    eng_tree_reset(t, ref[4]);
    rp_oracle_begin(o, 0, 5);
    int32_t root = 0;

    CHECK_EQ_INT(o->draft.expand(o->draft.ctx, t, &root, 1, ENG_UNIT_CPU), ENG_OK);
    eng_cand full[64];
    int32_t n = 0;
    const eng_cand *c = eng_tree_cands(t, 0, &n);
    CHECK_EQ_INT(n, o->k);
    memcpy(full, c, sizeof(eng_cand) * (size_t)n);
    CHECK_EQ_INT(o->n_calls, 1);
    CHECK_EQ_INT(o->calls[0].part, 0);

    /* body-only forward: the same candidates, a part-1 call */
    CHECK_EQ_INT(o->draft.expand_body(o->draft.ctx, t, &root, 1, ENG_UNIT_NPU), ENG_OK);
    c = eng_tree_cands(t, 0, &n);
    for (int32_t j = 0; j < n; j++) CHECK(c[j].tok == full[j].tok && c[j].logp == full[j].logp);
    CHECK_EQ_INT(o->n_calls, 2);
    CHECK_EQ_INT(o->calls[1].part, 1);
    CHECK_EQ_INT(o->calls[1].rows, 1);
    CHECK_EQ_INT(o->calls[1].unit, ENG_UNIT_NPU);

    /* head-only: a part-2 call of 5 rows, no expansion */
    int64_t ex = o->expansions;
    CHECK_EQ_INT(o->draft.project(o->draft.ctx, 5, ENG_UNIT_NPU), ENG_OK);
    CHECK_EQ_INT(o->n_calls, 3);
    CHECK_EQ_INT(o->calls[2].part, 2);
    CHECK_EQ_INT(o->calls[2].rows, 5);
    CHECK(o->calls[2].ctx_len >= 0);
    CHECK_EQ_INT(o->expansions, ex);
    CHECK_EQ_INT(o->draft.project(o->draft.ctx, 0, ENG_UNIT_NPU), ENG_E_ARG);

    /* resample: no call; penalty 0 = expand's set; penalty 1 = rank 1 last */
    CHECK_EQ_INT(o->draft.resample(o->draft.ctx, t, &root, 1, 0.0), ENG_OK);
    CHECK_EQ_INT(o->n_calls, 3);
    c = eng_tree_cands(t, 0, &n);
    for (int32_t j = 0; j < n; j++) CHECK(c[j].tok == full[j].tok && c[j].logp == full[j].logp);
    CHECK_EQ_INT(o->resampled_expansions, 1);
    CHECK_EQ_INT(o->penalised_expansions, 0);
    CHECK_EQ_INT(o->draft.resample(o->draft.ctx, t, &root, 1, 1.0), ENG_OK);
    CHECK_EQ_INT(o->n_calls, 3);
    c = eng_tree_cands(t, 0, &n);
    for (int32_t j = 0; j + 1 < n; j++) {
        CHECK_EQ_INT(c[j].tok, full[j + 1].tok);
        CHECK(c[j].logp == full[j].logp);
    }
    CHECK_EQ_INT(c[n - 1].tok, full[0].tok);
    CHECK_EQ_INT(o->resampled_expansions, 2);
    CHECK_EQ_INT(o->penalised_expansions, 1);
    CHECK_EQ_INT(o->expansions, ex + 2);
    CHECK_EQ_INT(o->draft.resample(o->draft.ctx, t, &root, 1, 1.5), ENG_E_ARG);
    CHECK_EQ_INT(o->draft.resample(o->draft.ctx, t, &root, 1, -0.1), ENG_E_ARG);
    /* a re-sampled node deeper in the tree is mapped like an expanded one */
    int32_t child = eng_tree_add(t, 0, ref[5], -0.1f);
    CHECK_EQ_INT(o->draft.resample(o->draft.ctx, t, &child, 1, 0.0), ENG_OK);
    CHECK(o->on_ref[child] == 1);
    CHECK_EQ_INT(o->n_calls, 3);
    /* target tokens are never the draft's: verify gives the reference */
    eng_token g[64];
    CHECK_EQ_INT(o->target.verify(o->target.ctx, t, NULL, g), ENG_OK);
    CHECK_EQ_INT(g[0], ref[5]);
    CHECK_EQ_INT(g[child], ref[6]);
    oracle_fixture_close(&f);
}

static eng_lyanna_params variant(int32_t resampling, int32_t fusion, int32_t one_pass,
                                 eng_unit unit)
{
    eng_lyanna_params p;
    eng_params_defaults(eng_lyanna_param_table, &p);
    p.resampling = resampling;
    p.fusion = fusion;
    p.one_pass_head = one_pass;
    p.unit = unit;
    return p;
}

static int run(const trc_trace *t, const eng_lyanna_params *p, sim_point_stats *st)
{
    sim_point pt = {.device = &dev, .target = &tgt, .draft = &drf, .trace = t,
                    .policy = eng_policy_lookup("lyanna"), .policy_params = p,
                    .dram_fraction = 0.0, .max_new_tokens = MAX_NEW, .prompts = 0, .seed = 1};
    char err[256] = "";
    int rc = sim_replay_run(&pt, st, err, sizeof err);
    if (rc != SIM_OK) fprintf(stderr, "lyanna: %s\n", err);
    return rc;
}

static int64_t reference_tokens(const trc_trace *t)
{
    int64_t n = 0;
    for (int32_t p = 0; p < trc_get_meta(t)->n_prompts; p++) {
        const int32_t *ref;
        int32_t L = trc_ref(t, p, &ref);
        n += L < MAX_NEW ? L : MAX_NEW;
    }
    return n;
}

static void test_variants(const trc_trace *t)
{
    int64_t want = reference_tokens(t);
    for (int32_t mode = 0; mode < 3; mode++) {
        for (int32_t unit = ENG_UNIT_CPU; unit <= ENG_UNIT_NPU; unit++) {
            sim_point_stats st[2];
            for (int32_t op = 0; op <= 1; op++) {
                eng_lyanna_params p = variant(mode > 0, mode == 2, op, (eng_unit)unit);
                CHECK_EQ_INT(run(t, &p, &st[op]), SIM_OK);
                CHECK_EQ_INT(st[op].tokens, want);
                CHECK_EQ_INT(st[op].mismatched, 0);
                CHECK(st[op].cycles > 0 && st[op].mean_accepted > 0);
                CHECK(st[op].coverage > 0 && st[op].coverage <= 1);
            }
            /* the one-pass head changes the cost, never the trees */
            CHECK_EQ_INT(st[1].cycles, st[0].cycles);
            CHECK_EQ_INT(st[1].verify_rows, st[0].verify_rows);
            CHECK_EQ_INT(st[1].accepted, st[0].accepted);
            CHECK(st[1].draft_ms < st[0].draft_ms);
            CHECK(st[1].total_ms < st[0].total_ms);
        }
    }
}

/* ---- the replay's loop, counting target invocations ---- */

typedef struct drive_stats {
    int64_t cycles, tokens, drafting, no_forward, root_only, fused, fused_extra_rows;
    int64_t expected_no_forward;
    int64_t resampled_expansions, penalised_expansions, bad_pattern, mismatches;
} drive_stats;

static void drive(const trc_trace *tr, const eng_lyanna_params *p, drive_stats *ds)
{
    memset(ds, 0, sizeof *ds);
    const trc_meta *meta = trc_get_meta(tr);
    rp_synth_stats st;
    rp_synth_fit(tr, &st);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 1);
    rp_oracle o;
    CHECK(rp_oracle_init(&o, tr, &st, rng, CAP) == 0);
    size_t bytes = eng_tree_bytes(CAP, CAP * meta->k);
    void *mem = malloc(bytes);
    eng_token *g = malloc(sizeof(eng_token) * CAP), *emit = malloc(sizeof(eng_token) * (CAP + 1));
    int32_t *path = malloc(sizeof(int32_t) * CAP);
    eng_tree t;
    CHECK(eng_tree_init(&t, mem, bytes, CAP, CAP * meta->k) == ENG_OK);
    eng_policy pol = {0};
    CHECK_EQ_INT(eng_lyanna_create(p, &pol), ENG_OK);
    for (int32_t pr = 0; pr < meta->n_prompts; pr++) {
        const int32_t *prompt, *ref;
        int32_t plen = trc_prompt(tr, pr, &prompt);
        int32_t L = trc_ref(tr, pr, &ref);
        int32_t gen = L < MAX_NEW ? L : MAX_NEW, pos = 0;
        pol.i->reset(pol.self);
        int expect_rs = 0;
        while (pos < gen) {
            eng_tree_reset(&t, pos > 0 ? ref[pos - 1] : (plen > 0 ? prompt[plen - 1] : 0));
            rp_oracle_begin(&o, pr, pos);
            eng_build_limits lim = {CAP, CAP - 1, gen - pos};
            CHECK_EQ_INT(pol.i->build(pol.self, &t, &o.draft, &lim), ENG_OK);
            eng_lyanna_cycle info;
            eng_lyanna_last(&pol, &info);
            o.target.verify(o.target.ctx, &t, NULL, g);
            eng_outcome oc = eng_accept_greedy(&t, g, NULL, path, emit, CAP + 1);
            int32_t emitted = oc.emitted < gen - pos ? oc.emitted : gen - pos;
            for (int32_t j = 0; j < emitted; j++) ds->mismatches += emit[j] != ref[pos + j];
            ds->cycles++;
            if (o.n_calls == 0 && eng_tree_size(&t) > 0) {
                ds->no_forward++;
                if (info.kind != ENG_LYANNA_RESAMPLED || !expect_rs) ds->bad_pattern++;
            } else if (o.n_calls == 0) {
                ds->root_only++; /* the last token of a prompt: nothing to draft */
            } else {
                ds->drafting++;
                if ((expect_rs && p->fusion) != (info.kind == ENG_LYANNA_FUSED)) ds->bad_pattern++;
                if (expect_rs && !p->fusion) ds->bad_pattern++;
                if (info.kind == ENG_LYANNA_FUSED) {
                    ds->fused++;
                    ds->fused_extra_rows += info.extra_rows;
                }
                /* N body calls of one row then one head call of N rows, or N full calls */
                int32_t body = 0, full = 0, head = 0;
                for (int32_t c = 0; c < o.n_calls; c++) {
                    body += o.calls[c].part == 1;
                    full += o.calls[c].part == 0;
                    head += o.calls[c].part == 2;
                    if (o.calls[c].part != 2 && o.calls[c].rows != 1) ds->bad_pattern++;
                }
                if (p->one_pass_head) {
                    if (body != info.steps || full != 0 || head != 1 ||
                        o.calls[o.n_calls - 1].part != 2 ||
                        o.calls[o.n_calls - 1].rows != info.steps)
                        ds->bad_pattern++;
                } else if (full != info.steps || body != 0 || head != 0) {
                    ds->bad_pattern++;
                }
            }
            /* the next cycle re-samples iff this drafting cycle's rejection left
             * more than r steps and the next cycle may draft at all */
            expect_rs = 0;
            if (p->resampling && o.n_calls > 0 && info.steps - (oc.accepted + 1) > p->r) {
                int32_t next = pos + emitted;
                expect_rs = next < gen && gen - next - 1 >= 1;
                if (expect_rs && !p->fusion) ds->expected_no_forward++;
            }
            eng_feedback fb = {.tree = &t, .g = g, .outcome = oc, .draft_calls = o.n_calls};
            eng_plan_default(&t, NULL, &fb.plan);
            pol.i->observe(pol.self, &fb);
            ds->tokens += emitted;
            pos += emitted;
        }
    }
    ds->resampled_expansions = o.resampled_expansions;
    ds->penalised_expansions = o.penalised_expansions;
    eng_policy_destroy(&pol);
    rp_oracle_free(&o);
    gsl_rng_free(rng);
    free(mem);
    free(g);
    free(emit);
    free(path);
}

static void test_invocations(const trc_trace *t)
{
    int64_t want = reference_tokens(t);
    drive_stats d[3];
    for (int32_t mode = 0; mode < 3; mode++) {
        for (int32_t op = 0; op <= 1; op++) {
            eng_lyanna_params p = variant(mode > 0, mode == 2, op, ENG_UNIT_NPU);
            drive(t, &p, &d[mode]);
            sim_point_stats st;
            CHECK_EQ_INT(run(t, &p, &st), SIM_OK);
            /* the driver is the replay's loop: same verifications, same tokens */
            CHECK_EQ_INT(d[mode].cycles, st.cycles);
            CHECK_EQ_INT(d[mode].tokens, want);
            CHECK_EQ_INT(d[mode].mismatches, 0);
            CHECK_EQ_INT(d[mode].bad_pattern, 0);
        }
    }
    for (int32_t m = 0; m < 3; m++)
        fprintf(stderr,
                "mode %d: %lld verifications (%lld drafting, %lld verification-only, %lld "
                "root-only), %lld fused (+%lld rows), %lld re-sampled sets (%lld penalised)\n",
                m, (long long)d[m].cycles, (long long)d[m].drafting, (long long)d[m].no_forward,
                (long long)d[m].root_only, (long long)d[m].fused,
                (long long)d[m].fused_extra_rows, (long long)d[m].resampled_expansions,
                (long long)d[m].penalised_expansions);
    /* off: every verification drafts; nothing is re-sampled beyond the step fills */
    CHECK_EQ_INT(d[0].no_forward, 0);
    CHECK_EQ_INT(d[0].fused, 0);
    CHECK_EQ_INT(d[0].penalised_expansions, 0);
    /* no fusion: extra verification-only cycles, exactly where the rule says */
    CHECK(d[1].no_forward > 0);
    CHECK_EQ_INT(d[1].no_forward, d[1].expected_no_forward);
    CHECK_EQ_INT(d[1].cycles, d[1].drafting + d[1].no_forward + d[1].root_only);
    CHECK_EQ_INT(d[1].fused, 0);
    CHECK(d[1].penalised_expansions > 0);
    /* fusion: no verification without drafting; re-sampled rows ride along */
    CHECK_EQ_INT(d[2].no_forward, 0);
    CHECK_EQ_INT(d[2].cycles, d[2].drafting + d[2].root_only);
    CHECK(d[2].fused > 0);
    CHECK(d[2].fused_extra_rows > 0);
    CHECK(d[2].resampled_expansions > d[0].resampled_expansions);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_lyanna_replay CONFIG_DIR TRACE_DIR\n");
        return 2;
    }
    load_profiles(argv[1]);
    CHECK(eng_policy_lookup("lyanna") != NULL);
    if (!eng_policy_lookup("lyanna")) return check_done("replay/lyanna");
    static const char *const files[] = {"synth-small.h5", "synth-default.h5"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", argv[2], files[f]);
        trc_trace *t = NULL;
        trc_err e;
        CHECK(trc_load(path, &t, &e) == TRC_OK);
        if (!t) continue;
        if (f == 0) test_hooks(t);
        test_variants(t);
        test_invocations(t);
        trc_free(t);
    }
    return check_done("replay/lyanna");
}
