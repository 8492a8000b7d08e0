/*
 * rp_profile.c -- the offline profile a policy with a calibrate hook receives
 * before its first cycle (replay.h "Calibration", sim/replay/README.md
 * "Calibration profile"): the positional acceptance of the trace, latency
 * tables priced on the point's phone model at its mean context length, and
 * the trace's exit layers mapped onto the simulated target.
 *
 * The measured part of the offline profile (verification and draft
 * latencies by shape) depends only on the phone model built for the point
 * -- what sim_hw_create was given: device, target, draft, DRAM fraction, KV
 * context (sim_hw_inputs) -- and on the mean context and the runtime it is
 * priced at; every point of a sweep over one phone and trace asks for the
 * same tables.  A sim_profile_cache, owned by whoever replays the points
 * (the script run), keeps them for the last PROF_CACHE_SIZE keys: a hit
 * copies the very numbers a miss computes, so results are the same bytes
 * with a cache or without, at any worker count.  The key is the phone
 * model's inputs whole, so nothing that changes a price can be left out of
 * it.
 *
 * A cache may be shared by every thread that replays points: its mutex
 * guards it, and an entry is copied in and out whole, never lent.
 */
#include "rp_profile.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PROF_CACHE_SIZE 32
#define PROFILE_BYTES                                                                              \
    (sizeof(double) *                                                                              \
     (3 * (size_t)RP_PROFILE_ROWS + (size_t)RP_PROFILE_NL_ROWS * (size_t)RP_PROFILE_NL_LEAVES))

typedef struct prof_key {
    sim_hw_inputs hw;     /* the phone model the tables are priced on */
    int32_t ctx, runtime; /* what they are priced at */
} prof_key;

typedef struct prof_entry {
    prof_key key;
    double *buf; /* PROFILE_BYTES; NULL = empty slot */
} prof_entry;

struct sim_profile_cache {
    pthread_mutex_t mu;
    prof_entry e[PROF_CACHE_SIZE];
    int next; /* the slot the next entry replaces */
};

sim_profile_cache *sim_profile_cache_create(void)
{
    sim_profile_cache *c = calloc(1, sizeof *c);
    if (c && pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

void sim_profile_cache_destroy(sim_profile_cache *c)
{
    if (!c) return;
    for (int i = 0; i < PROF_CACHE_SIZE; i++)
        free(c->e[i].buf);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void make_prof_key(prof_key *k, const sim_hw *hw, int32_t ctx, int32_t runtime)
{
    memset(k, 0, sizeof *k); /* padding included: keys compare as bytes */
    sim_hw_get_inputs(hw, &k->hw);
    k->ctx = ctx;
    k->runtime = runtime;
}

static int prof_cache_get(sim_profile_cache *c, const prof_key *k, double *out)
{
    int hit = 0;
    if (!c) return 0;
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < PROF_CACHE_SIZE && !hit; i++)
        if (c->e[i].buf && memcmp(&c->e[i].key, k, sizeof *k) == 0) {
            memcpy(out, c->e[i].buf, PROFILE_BYTES);
            hit = 1;
        }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

static void prof_cache_put(sim_profile_cache *c, const prof_key *k, const double *buf)
{
    if (!c) return;
    double *copy = malloc(PROFILE_BYTES);
    if (!copy) return; /* not kept: the next point measures again */
    memcpy(copy, buf, PROFILE_BYTES);
    pthread_mutex_lock(&c->mu);
    prof_entry *e = &c->e[c->next];
    c->next = (c->next + 1) % PROF_CACHE_SIZE;
    free(e->buf);
    e->key = *k;
    e->buf = copy;
    pthread_mutex_unlock(&c->mu);
}

/* The point's mean context length over its n_prompts prompts: the prompt
 * and half the tokens generated, rounded. */
static int32_t mean_context(const sim_point *pt, int32_t n_prompts)
{
    double ctx_sum = 0.0;
    for (int32_t p = 0; p < n_prompts; p++) {
        const int32_t *prompt, *ref;
        int32_t pl, gen = rp_prompt_gen(pt->trace, pt->prompt_offset + p, pt->max_new_tokens,
                                        &prompt, &pl, &ref);
        ctx_sum += pl + gen / 2.0;
    }
    return n_prompts ? (int32_t)(ctx_sum / n_prompts + 0.5) : 0;
}

/* The exit layers of the trace mapped onto the simulated target
 * (proportionally when the layer counts differ): into exits, the 0-based
 * layer the predictor follows; returns how many. */
static int32_t map_exits(const sim_point *pt, sim_hw *hw, int32_t *exits)
{
    const trc_meta *meta = trc_get_meta(pt->trace);
    int32_t L = sim_hw_target(hw)->layers;
    int32_t n_exit = meta->n_exit < TRC_MAX_EXIT ? meta->n_exit : TRC_MAX_EXIT;
    for (int32_t i = 0; i < n_exit; i++) {
        int32_t le = meta->target_layers == L || meta->target_layers < 1
                         ? meta->exit_layers[i]
                         : (int32_t)((double)meta->exit_layers[i] * L / meta->target_layers + 0.5);
        exits[i] = le - 1 > L - 2 ? L - 2 : le - 1;
        if (exits[i] < 0) exits[i] = 0;
    }
    return n_exit;
}

/* The verification of *v priced alone (the clock does not move). */
static int verify_ms(sim_hw *hw, const sim_verify_shape *v, double *ms)
{
    const sim_cycle_req q = {.verify = v, .price = 1, .walls_only = 1};
    sim_cycle_time t;
    int rc = sim_hw_cycle(hw, &q, &t);
    if (rc == SIM_OK) *ms = t.verify_ms;
    return rc;
}

/* The latency tables of the profile into buf (PROFILE_BYTES: verification
 * by rows, draft calls on the CPU and on the NPU by rows, verification by
 * rows x leaves), priced on hw, whose inputs are k->hw, at what else the key
 * holds and nothing more: whatever a table comes to depend on has to enter
 * the key first.  0, or -1 when the phone model refuses a shape. */
static int price_tables(sim_hw *hw, const prof_key *k, double *buf)
{
    const int32_t n = RP_PROFILE_ROWS, nr = RP_PROFILE_NL_ROWS, nl = RP_PROFILE_NL_LEAVES;
    double *ver = buf, *dc = buf + n, *dn = buf + 2 * n, *vnl = buf + 3 * n;
    /* verification by (rows, leaves): on-demand CPU projection of one row, so
     * the table holds the shape-dependent part (the projection of the visited
     * path does not depend on the shape) */
    for (int32_t r = 1; r <= nr; r++) {
        for (int32_t l = 1; l <= nl; l++) {
            double *at = &vnl[(size_t)(r - 1) * (size_t)nl + (size_t)(l - 1)];
            *at = NAN;
            if (l > r) continue;
            sim_verify_shape v = {.rows = r,
                                  .leaves = l,
                                  .ctx_len = k->ctx,
                                  .exit_layer = -1,
                                  .rows_after_exit = r,
                                  .proj = ENG_PROJ_ONDEMAND_CPU,
                                  .proj_rows = 1,
                                  .runtime = k->runtime};
            if (verify_ms(hw, &v, at) != SIM_OK) return -1;
        }
    }
    for (int32_t m = 1; m <= n; m++) {
        sim_verify_shape v = {.rows = m,
                              .leaves = m > 1 ? (m + 1) / 2 : 1,
                              .ctx_len = k->ctx,
                              .exit_layer = -1,
                              .rows_after_exit = m,
                              .proj = ENG_PROJ_EAGER_NPU,
                              .proj_rows = 1,
                              .runtime = k->runtime};
        if (verify_ms(hw, &v, &ver[m - 1]) != SIM_OK) return -1;
        dc[m - 1] = sim_hw_draft_ms(hw, ENG_UNIT_CPU, m, k->ctx);
        dn[m - 1] = sim_hw_draft_ms(hw, ENG_UNIT_NPU, m, k->ctx);
    }
    return 0;
}

/* The offline profile of eng_cost_profile (replay.h "Calibration"). */
int rp_profile_calibrate(const sim_point *pt, sim_hw *hw, const rp_synth_stats *st, eng_policy *pol,
                         int32_t n_prompts, int32_t runtime)
{
    const int32_t n = RP_PROFILE_ROWS, nr = RP_PROFILE_NL_ROWS, nl = RP_PROFILE_NL_LEAVES;
    double *buf = malloc(PROFILE_BYTES);
    if (!buf) return -1;
    prof_key key;
    make_prof_key(&key, hw, mean_context(pt, n_prompts), runtime);
    if (!prof_cache_get(pt->profile_cache, &key, buf)) {
        if (price_tables(hw, &key, buf) != 0) {
            free(buf);
            return -1;
        }
        prof_cache_put(pt->profile_cache, &key, buf);
    }
    int32_t exits[TRC_MAX_EXIT], n_exit = map_exits(pt, hw, exits);
    eng_cost_profile prof = {.accept_pos = st->accept_pos,
                             .n_pos = st->k,
                             .verify_ms = buf,
                             .n_verify = n,
                             .draft_cpu_ms = buf + n,
                             .draft_npu_ms = buf + 2 * n,
                             .n_draft = n,
                             .verify_nl_ms = buf + 3 * n,
                             .n_nl_rows = nr,
                             .n_nl_leaves = nl,
                             .exit_layers = exits,
                             .n_exit = n_exit};
    int rc = eng_policy_calibrate(pol, &prof);
    free(buf);
    return rc == ENG_OK ? 0 : -1;
}
