/*
 * test_edgellm_replay.c -- EdgeLLM end to end on the bundled traces.
 *
 * Every combination of navigation, fallback, provisional, verify mode, gate
 * and draft unit replays greedily on both bundled traces (the replay fails a
 * point whose emitted token differs from the reference).  Also: provisional
 * drafting runs only with its switch on and within the memory upper bound;
 * kept provisional tokens never exceed the calls that ran; the bootstrap
 * interval brackets the point estimate; the timeline hooks see exactly one
 * prompt's cycles and spans (provisional ones included); replays are
 * deterministic.
 *
 * argv[1]: the configs directory; argv[2]: the bundled traces directory.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"
#include "engine/pol_edgellm.h"
#include "sim/config/profile.h"
#include "sim/replay/replay.h"
#include "../profiles_fixture.h"

typedef struct hooks {
    int cycles, spans, provisional_spans, other_prompt;
    int32_t prompt;
    int64_t last_t1;
} hooks;

static void on_span(void *ctx, const char *res, const char *label, int32_t index, int64_t t0,
                    int64_t t1)
{
    hooks *h = ctx;
    (void)res, (void)index;
    CHECK(t0 <= t1);
    h->spans++;
    h->provisional_spans += strcmp(label, "provisional") == 0;
}

static void on_cycle(void *ctx, const sim_cycle_info *ci)
{
    hooks *h = ctx;
    h->cycles++;
    h->other_prompt += ci->prompt != h->prompt;
    CHECK(ci->ct != NULL && ci->ct->t0_ns >= h->last_t1);
    if (ci->ct) h->last_t1 = ci->ct->t1_ns;
    CHECK(ci->provisional_done <= ci->provisional_calls);
    CHECK(ci->dram_used_bytes > 0);
    CHECK(ci->emitted >= 1 && ci->rows >= 1);
}

static int run(const trc_trace *t, const eng_edgellm_params *p, const sim_device *d, hooks *h,
               sim_point_stats *st)
{
    const eng_policy_desc *desc = eng_policy_lookup("edgellm");
    sim_point pt = {.device = d, .target = &tgt, .draft = &drf, .trace = t, .policy = desc,
                    .policy_params = p, .max_new_tokens = 128, .seed = 1,
                    .accept = SIM_ACCEPT_GREEDY, .top_p = 0.9, .temperature = 1.0};
    if (h) {
        pt.span_fn = on_span;
        pt.cycle_fn = on_cycle;
        pt.trace_ctx = h;
        pt.trace_prompt = h->prompt;
    }
    char err[256] = "";
    int rc = sim_replay_run(&pt, st, err, sizeof err);
    if (rc != SIM_OK) fprintf(stderr, "edgellm: %s\n", err);
    return rc;
}

static void test_variants(const trc_trace *t)
{
    for (int v = 0; v < 64; v++) {
        eng_edgellm_params p;
        eng_params_defaults(eng_edgellm_param_table, &p);
        p.navigation = v & 1;
        p.fallback = (v >> 1) & 1;
        p.provisional = (v >> 2) & 1;
        p.verify = (v >> 3) & 1;
        p.gate = (v >> 4) & 1;
        p.unit = (v >> 5) & 1 ? ENG_UNIT_NPU : ENG_UNIT_CPU;
        sim_point_stats st;
        CHECK_EQ_INT(run(t, &p, &dev, NULL, &st), SIM_OK);
        CHECK(st.tokens > 0 && st.mismatched == 0);
        CHECK(st.provisional_kept <= st.provisional_calls);
        if (!p.provisional) CHECK(st.provisional_calls == 0 && st.provisional_kept == 0);
        CHECK(st.tokens_per_s_lo <= st.tokens_per_s + 1e-9);
        CHECK(st.tokens_per_s <= st.tokens_per_s_hi + 1e-9);
    }
}

static void test_provisional_and_hooks(const trc_trace *t)
{
    eng_edgellm_params p;
    eng_params_defaults(eng_edgellm_param_table, &p);
    p.fallback = 0; /* fixed trees: the main branch is often fully accepted */
    sim_point_stats a, b, off;
    hooks h = {.prompt = 1};
    CHECK_EQ_INT(run(t, &p, &dev, &h, &a), SIM_OK);
    CHECK(a.provisional_calls > 0);
    CHECK(a.provisional_kept > 0);
    CHECK(h.cycles > 0 && h.cycles < a.cycles); /* one prompt of several */
    CHECK_EQ_INT(h.other_prompt, 0);
    CHECK(h.spans > h.cycles);
    CHECK(h.provisional_spans > 0);
    /* deterministic */
    CHECK_EQ_INT(run(t, &p, &dev, NULL, &b), SIM_OK);
    CHECK(a.tokens == b.tokens && a.total_ms == b.total_ms && a.cycles == b.cycles);
    CHECK(a.provisional_kept == b.provisional_kept && a.energy_mj == b.energy_mj);
    CHECK(a.tokens_per_s_lo == b.tokens_per_s_lo && a.tokens_per_s_hi == b.tokens_per_s_hi);
    /* the memory upper bound below what the point already uses: no provisional work */
    sim_device tight = dev;
    tight.mem_upper_bound = 0.01;
    CHECK_EQ_INT(run(t, &p, &tight, NULL, &off), SIM_OK);
    CHECK_EQ_INT(off.provisional_calls, 0);
    /* with the contention factors at 1 and ungated, overlapping never slows the
     * target: decode time can only drop with provisional drafting on */
    sim_device free_dev = dev;
    free_dev.contention_compute = free_dev.contention_load = 1.0;
    p.gate = 0;
    sim_point_stats on, no;
    CHECK_EQ_INT(run(t, &p, &free_dev, NULL, &on), SIM_OK);
    p.provisional = 0;
    CHECK_EQ_INT(run(t, &p, &free_dev, NULL, &no), SIM_OK);
    CHECK(on.verify_ms <= no.verify_ms + 1e-6);
    CHECK(on.draft_ms < no.draft_ms);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_edgellm_replay CONFIG_DIR TRACE_DIR\n");
        return 2;
    }
    load_profiles(argv[1]);
    static const char *const files[] = {"synth-default.h5", "synth-small.h5"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", argv[2], files[f]);
        trc_trace *t = NULL;
        trc_err e;
        CHECK(trc_load(path, &t, &e) == TRC_OK);
        if (!t) continue;
        test_variants(t);
        if (f == 0) test_provisional_and_hooks(t);
        trc_free(t);
    }
    return check_done("replay/edgellm");
}
