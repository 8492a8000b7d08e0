/*
 * pol_adaptive_chain.c -- adaptive-k chain speculative decoding: the window,
 * thresholds and k range of K. Wiewiór, "Speculative Decoding for On-Device
 * LLMs on Android" (MVP Factory blog), the fallback below 40% acceptance of
 * Omar's post on mobile draft-verify pipelines
 * (omr.it.com/blog/parallel-decoding-mobile-llms-speculative-execution);
 * docs/policies.md "`adaptive_chain`".
 *
 * build drafts a chain of k draft top-1 tokens exactly like Chain-SD (one
 * single-node oracle call per token on the configured unit, the last tip not
 * expanded, n = min(k, remaining - 1, max_depth, max_nodes - 1)).
 *
 * observe steers k from a ring of the last `window` per-cycle acceptance rates
 * a = accepted / proposed (cycles that proposed nothing add no rate):
 *     mean > raise_above  ->  k = min(k + 1, k_max)
 *     mean < lower_below  ->  k = max(k - 1, k_min)
 * evaluated after every rate, over the rates the ring holds so far (fewer than
 * `window` at the start of a prompt).  Optional fallback (choice, documented
 * parameter): with fallback = 1, a mean below fallback_below switches to plain
 * autoregressive cycles (no drafting); every probe_period-th cycle in that mode
 * drafts one probe chain of the current k, whose rate enters the window, and the
 * policy leaves the mode as soon as the mean is back at or above fallback_below.
 *
 * State is per prompt: reset restores k_start, empties the ring and leaves the
 * fallback mode (each prompt adapts from scratch, so points do not depend on
 * prompt order).  Memory: one malloc in create (params + ring), nothing after.
 */
#include "pol_adaptive_chain.h"
#include "pol_chain.h"

#include <stddef.h>
#include <stdlib.h>

#define AC_MAX_WINDOW 1024

static const char *const unit_choices[] = {"cpu", "npu", NULL};

#define P(f) offsetof(eng_adaptive_chain_params, f)
const eng_param_desc eng_adaptive_chain_param_table[] = {
    {.name = "window", .type = ENG_PARAM_INT, .offset = P(window), .min = 1, .max = AC_MAX_WINDOW,
     .def = 32, .doc = "per-cycle acceptance rates averaged (W)"},
    {.name = "k_start", .type = ENG_PARAM_INT, .offset = P(k_start), .min = 1, .max = 64, .def = 4,
     .doc = "chain length at the start of each prompt"},
    {.name = "k_min", .type = ENG_PARAM_INT, .offset = P(k_min), .min = 1, .max = 64, .def = 2,
     .doc = "shortest chain"},
    {.name = "k_max", .type = ENG_PARAM_INT, .offset = P(k_max), .min = 1, .max = 64, .def = 8,
     .doc = "longest chain"},
    {.name = "raise_above", .type = ENG_PARAM_DOUBLE, .offset = P(raise_above), .min = 0, .max = 1,
     .def = 0.80, .doc = "k grows by one when the window's mean rate exceeds this"},
    {.name = "lower_below", .type = ENG_PARAM_DOUBLE, .offset = P(lower_below), .min = 0, .max = 1,
     .def = 0.50, .doc = "k shrinks by one when the window's mean rate is below this"},
    {.name = "fallback", .type = ENG_PARAM_BOOL, .offset = P(fallback), .min = 0, .max = 1,
     .def = 0, .doc = "fall back to autoregressive decoding when acceptance collapses"},
    {.name = "fallback_below", .type = ENG_PARAM_DOUBLE, .offset = P(fallback_below), .min = 0,
     .max = 1, .def = 0.40, .doc = "window mean rate below which the fallback engages"},
    {.name = "probe_period", .type = ENG_PARAM_INT, .offset = P(probe_period), .min = 1,
     .max = 4096, .def = 16, .doc = "in fallback, one probe chain every this many cycles"},
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = P(unit), .min = 0, .max = 1, .def = 0,
     .choices = unit_choices, .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};
#undef P

typedef struct ac_state {
    eng_adaptive_chain_params p;
    int32_t k;
    int32_t ar;          /* 1: autoregressive fallback mode */
    int32_t since_probe; /* cycles since the last probe in fallback mode */
    int32_t n, head;     /* rates held and next slot */
    double sum;
    double ring[AC_MAX_WINDOW];
} ac_state;

static void ac_reset(void *self)
{
    ac_state *s = self;
    s->k = s->p.k_start;
    if (s->k < s->p.k_min) s->k = s->p.k_min;
    if (s->k > s->p.k_max) s->k = s->p.k_max;
    s->ar = 0;
    s->since_probe = 0;
    s->n = s->head = 0;
    s->sum = 0.0;
}

static int ac_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    ac_state *s = self;
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    if (s->ar && s->since_probe + 1 < s->p.probe_period) return ENG_OK; /* no draft */
    return eng_chain_draft(t, draft, s->k, s->p.unit, lim);
}

static void ac_observe(void *self, const eng_feedback *fb)
{
    ac_state *s = self;
    int32_t proposed = fb && fb->tree ? eng_tree_size(fb->tree) : 0;
    if (proposed <= 0) {
        if (s->ar) s->since_probe++;
        return;
    }
    if (s->ar) s->since_probe = 0;
    double a = (double)fb->outcome.accepted / (double)proposed;
    if (a > 1.0) a = 1.0;
    if (s->n == s->p.window) s->sum -= s->ring[s->head];
    else s->n++;
    s->ring[s->head] = a;
    s->sum += a;
    s->head = (s->head + 1) % s->p.window;
    double mean = s->sum / (double)s->n;
    if (mean > s->p.raise_above && s->k < s->p.k_max) s->k++;
    else if (mean < s->p.lower_below && s->k > s->p.k_min) s->k--;
    if (s->p.fallback) {
        if (!s->ar && mean < s->p.fallback_below) {
            s->ar = 1;
            s->since_probe = 0;
        } else if (s->ar && mean >= s->p.fallback_below) {
            s->ar = 0;
        }
    }
}

static void ac_destroy(void *self)
{
    free(self);
}

static const eng_policy_i ac_i = {
    .name = "adaptive_chain",
    .reset = ac_reset,
    .build = ac_build,
    .observe = ac_observe,
    .destroy = ac_destroy,
};

int eng_adaptive_chain_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_adaptive_chain_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_adaptive_chain_param_table, params)) return ENG_E_ARG;
    /* across parameters: the shortest chain is not longer than the longest */
    if (in->k_min > in->k_max) return ENG_E_ARG;
    ac_state *s = malloc(sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    ac_reset(s);
    out->i = &ac_i;
    out->self = s;
    return ENG_OK;
}

int32_t eng_adaptive_chain_k(const eng_policy *p, int32_t *autoregressive)
{
    if (!p || p->i != &ac_i) return -1;
    const ac_state *s = p->self;
    if (autoregressive) *autoregressive = s->ar;
    return s->k;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_adaptive_chain = {
    .name = "adaptive_chain",
    .doc = "adaptive-k chain: k steered by a window of acceptance rates",
    .params_size = sizeof(eng_adaptive_chain_params),
    .params = eng_adaptive_chain_param_table,
    .create = eng_adaptive_chain_create,
    .needs_draft = 1,
    .observes_outcome = 1,
    .tree = {.rule = ENG_TREE_PLUS_ROOT, .fixed = 0, .param = "k_max"},
};
