/*
 * replay.c -- the replay loop (see replay.h).
 *
 * Memory: everything a point needs (tree arena, oracle maps, per-node target
 * tokens, emit buffers) is allocated once in replay_open and reused by every cycle;
 * the cycle loop itself allocates nothing.
 *
 * Beside the loop: the oracles (rp_oracle.c), a calibrating policy's offline
 * profile (rp_profile.c), the standing variants priced alongside
 * (rp_variants.c) and the bootstrap interval (rp_interval.c).
 */
#include "replay.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rp_interval.h"
#include "rp_oracle.h"
#include "rp_profile.h"
#include "rp_variants.h"

#define RP_TREE_CAP 1024 /* largest tree a policy may build, root included */
#define RP_MAX_VARIANTS 64 /* standing variants a point may list */

static int fail(char *err, size_t n, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return code;
}

/* A prompt of a trace read prompt by prompt that cannot be read: damaged data
 * fail this point only; out of memory is not the file's fault. */
static int prompt_status(int trc_code)
{
    return trc_code == TRC_E_NOMEM ? SIM_NOMEM : SIM_DATA;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct run_state {
    eng_tree tree;
    void *tree_mem;
    eng_token *g;
    eng_token *g_full; /* [RP_TREE_CAP] target tokens of the unpruned tree */
    eng_cand *tcand; /* [RP_TREE_CAP * k] target top-k per node (lossy rules) */
    int32_t *tn;     /* [RP_TREE_CAP] */
    uint8_t *keep;
    uint8_t *keep_all; /* [RP_TREE_CAP] verified nodes (provisional ones excluded) */
    uint8_t *mark;     /* [RP_TREE_CAP] scratch */
    int32_t *path;
    eng_token *emit;
    sim_draft_call *calls;
    double *call_ms;
} run_state;

static void run_state_free(run_state *s)
{
    free(s->tree_mem);
    free(s->g);
    free(s->g_full);
    free(s->tcand);
    free(s->tn);
    free(s->keep);
    free(s->keep_all);
    free(s->mark);
    free(s->path);
    free(s->emit);
    free(s->calls);
    free(s->call_ms);
}

static int run_state_init(run_state *s, int32_t k)
{
    memset(s, 0, sizeof *s);
    size_t bytes = eng_tree_bytes(RP_TREE_CAP, RP_TREE_CAP * k);
    s->tree_mem = malloc(bytes);
    s->g = malloc(sizeof(eng_token) * RP_TREE_CAP);
    s->g_full = malloc(sizeof(eng_token) * RP_TREE_CAP);
    s->tcand = malloc(sizeof(eng_cand) * RP_TREE_CAP * (size_t)k);
    s->tn = malloc(sizeof(int32_t) * RP_TREE_CAP);
    s->keep = malloc(RP_TREE_CAP);
    s->keep_all = malloc(RP_TREE_CAP);
    s->mark = malloc(RP_TREE_CAP);
    s->path = malloc(sizeof(int32_t) * RP_TREE_CAP);
    s->emit = malloc(sizeof(eng_token) * 2 * (RP_TREE_CAP + 1));
    s->calls = malloc(sizeof(sim_draft_call) * (2 * RP_TREE_CAP + 8));
    s->call_ms = malloc(sizeof(double) * (RP_TREE_CAP + 8));
    if (!s->tree_mem || !s->g || !s->g_full || !s->tcand || !s->tn || !s->keep || !s->keep_all ||
        !s->mark || !s->path || !s->emit || !s->calls || !s->call_ms)
        return -1;
    return eng_tree_init(&s->tree, s->tree_mem, bytes, RP_TREE_CAP, RP_TREE_CAP * k);
}

static double rng_uniform(void *ctx)
{
    return gsl_rng_uniform(ctx);
}

/* Waste of one cycle (sim_point_stats): verification time beyond what the
 * accepted path alone would have cost on the same phone. */
static double cycle_waste(sim_hw *hw, const sim_verify_shape *vs, const sim_cycle_time *ct,
                          int32_t accepted)
{
    int32_t useful = accepted + 1;
    if (useful >= vs->rows && vs->leaves <= 1) return 0.0;
    sim_verify_shape u = *vs;
    u.rows = useful < vs->rows ? useful : vs->rows;
    u.leaves = 1;
    u.exit_layer = -1;
    u.rows_after_exit = u.rows;
    if (u.proj_rows > u.rows) u.proj_rows = u.rows;
    /* priced alone: the clock does not move */
    const sim_cycle_req q = {.verify = &u, .price = 1, .walls_only = 1};
    sim_cycle_time t;
    if (sim_hw_cycle(hw, &q, &t) != SIM_OK) return 0.0;
    double w = ct->verify_ms - t.verify_ms;
    return w > 0 ? w : 0.0;
}

/* Provisional draft tokens the next cycle can reuse: the nodes made by the
 * calls that ran (call i appends node first + i) below the child of the
 * stopping node that holds the bonus token (that child is the bonus itself). */
static int32_t provisional_kept(const eng_tree *t, int32_t first, int32_t done,
                                const eng_outcome *oc, uint8_t *mark)
{
    int32_t end = first + done < t->n_nodes ? first + done : t->n_nodes, kept = 0;
    if (oc->bonus == ENG_NO_TOKEN || done < 1) return 0;
    for (int32_t v = first; v < end; v++) {
        int32_t par = t->nodes[v].parent;
        mark[v] = (par == oc->last_node && t->nodes[v].tok == oc->bonus) ||
                  (par >= first && mark[par]);
        kept += mark[v] && par >= first;
    }
    return kept;
}

/* A policy that explains its failures (eng_policy_i.error, e.g. a Lua
 * policy's error in a hook): 1 with err = "MESSAGE (prompt P, position N)". */
static int policy_error(const eng_policy *pol, char *err, size_t errlen, int32_t prompt,
                        int32_t pos)
{
    const char *m = eng_policy_error(pol);
    if (!m) return 0;
    fail(err, errlen, SIM_CONFIG, "%s (prompt %d, position %d)", m, prompt, pos);
    return 1;
}

/* A policy's verification plan against the tree it verifies (any policy, C,
 * plug-in or Lua): the rows through the layers cover every verified node and
 * stay within what a verification can hold (the tree, or the largest compiled
 * graph when that is larger; on a runtime that verifies on the CPU, every
 * node's path from the root batched); rows past the exit layer cover the kept nodes and
 * no more than the rows; the leaves are between 1 and the rows; the
 * exit layer lies inside the target.  0, or -1 with err (naming the field). */
static int check_plan(const eng_tree *t, const uint8_t *keep, const eng_verify_plan *pl,
                      const sim_point *pt, char *err, size_t errlen, int32_t prompt, int32_t pos)
{
    int32_t kept = keep ? 1 : t->n_nodes; /* the root always */
    for (int32_t v = 1; keep && v < t->n_nodes; v++) kept += keep[v] != 0;
    int32_t most = t->n_nodes, layers = pt->target->layers;
    const sim_device *d = pt->device;
    if (d->verify_unit == SIM_VERIFY_CPU && pl->rows > most) {
        /* no compiled graph (sim_hw.h "Two runtimes"): a batch as large as
         * every node's path from the root, the most any plan repeats
         * (summed only for a plan larger than the tree) */
        int32_t paths = 0;
        for (int32_t v = 0; v < t->n_nodes; v++)
            paths += t->nodes[v].depth + 1;
        if (paths > most) most = paths;
    } else if (d->verify_unit != SIM_VERIFY_CPU && d->n_npu_shapes > 0 &&
               d->npu_shapes[d->n_npu_shapes - 1] > most) {
        most = d->npu_shapes[d->n_npu_shapes - 1];
    }
    const char *why = NULL;
    char buf[160];
    if (pl->exit_layer < -1 || pl->exit_layer >= layers) {
        snprintf(buf, sizeof buf, "exit_layer = %d is not -1 (none) or a layer in [0, %d)",
                 (int)pl->exit_layer, (int)layers);
        why = buf;
    } else if (pl->rows < kept || pl->rows > most) {
        snprintf(buf, sizeof buf, "rows = %d is outside [%d, %d] (the %d verified nodes; the "
                 "tree or the largest compiled graph)", (int)pl->rows, (int)kept, (int)most,
                 (int)kept);
        why = buf;
    } else if (pl->exit_layer < 0 && pl->rows_after_exit != pl->rows) {
        snprintf(buf, sizeof buf, "rows_after_exit = %d differs from rows = %d with no exit "
                 "layer", (int)pl->rows_after_exit, (int)pl->rows);
        why = buf;
    } else if (pl->exit_layer >= 0 && (pl->rows_after_exit < kept || pl->rows_after_exit > pl->rows)) {
        snprintf(buf, sizeof buf, "rows_after_exit = %d is outside [%d, %d] (the kept nodes, "
                 "rows)", (int)pl->rows_after_exit, (int)kept, (int)pl->rows);
        why = buf;
    } else if (pl->leaves < 1 || pl->leaves > pl->rows) {
        snprintf(buf, sizeof buf, "leaves = %d is outside [1, %d] (the rows)", (int)pl->leaves,
                 (int)pl->rows);
        why = buf;
    } else if (pl->proj < ENG_PROJ_EAGER_NPU || pl->proj > ENG_PROJ_ONDEMAND_NPU ||
               pl->overlap_gate < 0 || pl->overlap_gate > 1) {
        snprintf(buf, sizeof buf, "proj = %d / overlap_gate = %d is not a mode", (int)pl->proj,
                 (int)pl->overlap_gate);
        why = buf;
    }
    if (!why) return 0;
    fail(err, errlen, SIM_CONFIG, "policy %s: plan: %s (prompt %d, position %d)",
         pt->policy->name, why, prompt, pos);
    return -1;
}

/* ------------------------------------------------------------ one point */

/* One point's replay: what its phases share.  replay_open sets it up,
 * replay_prompt runs a prompt's cycles (replay_cycle each), replay_finish
 * turns the running totals into means, replay_close frees it. */
typedef struct replay {
    const sim_point *pt;
    sim_point_stats *out;
    char *err;
    size_t errlen;
    int32_t n_prompts, runtime, max_ctx, prov_cap;
    double dram_fixed, kv_per_tok; /* DRAM in use at a context length */
    sim_hw *hw;
    eng_policy pol;
    gsl_rng *rng, *acc_rng;
    rp_synth_stats stats;
    rp_oracle orc;
    int oracle_ok;
    run_state s;
    int64_t *p_tok; /* [n_prompts] tokens and virtual ms per prompt (bootstrap) */
    double *p_ms;
    int interval;    /* the bootstrap interval is wanted (not for a variant, nor with
                        sim_point.no_interval) */
    rp_variant *var; /* [n_var] standing variants priced alongside (rp_variant) */
    int32_t n_var;
} replay;

/* A failed hook: the policy's own explanation when it gives one (exit 78),
 * else fmt as an internal error. */
static int hook_failed(replay *r, int32_t tp, int32_t pos, const char *fmt, ...)
{
    if (policy_error(&r->pol, r->err, r->errlen, tp, pos)) return SIM_CONFIG;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
    return SIM_INTERNAL;
}

/* The point's own keys: prompt range, runtime and acceptance rule.  Sets
 * n_prompts and runtime; returns SIM_OK or E_CONFIG with err. */
static int check_point(replay *r)
{
    const sim_point *pt = r->pt;
    const trc_meta *meta = trc_get_meta(pt->trace);
    if (pt->max_new_tokens < 1)
        return fail(r->err, r->errlen, SIM_CONFIG, "max_new_tokens must be >= 1");
    if (pt->prompt_offset < 0 || pt->prompt_offset >= meta->n_prompts)
        return fail(r->err, r->errlen, SIM_CONFIG,
                    "prompt_offset = %d is out of range [0, %d] for this trace", pt->prompt_offset,
                    meta->n_prompts - 1);
    int32_t avail = meta->n_prompts - pt->prompt_offset;
    if (pt->prompts < 0 || pt->prompts > avail)
        return fail(r->err, r->errlen, SIM_CONFIG,
                    "prompts = %d is out of range [0, %d] for this trace%s", pt->prompts, avail,
                    pt->prompt_offset ? " from prompt_offset" : "");
    r->n_prompts = pt->prompts ? pt->prompts : avail;
    if (pt->runtime < SIM_POINT_RUNTIME_AUTO || pt->runtime > SIM_POINT_RUNTIME_SPEC)
        return fail(r->err, r->errlen, SIM_CONFIG, "unknown runtime %d", pt->runtime);
    /* one runtime per phone, the same for every policy (replay.h "Runtimes") */
    r->runtime = pt->runtime == SIM_POINT_RUNTIME_SPEC ? SIM_RUNTIME_SPEC : SIM_RUNTIME_BASELINE;
    if (pt->accept < SIM_ACCEPT_GREEDY || pt->accept > SIM_ACCEPT_SAMPLING)
        return fail(r->err, r->errlen, SIM_CONFIG, "unknown acceptance rule %d",
                    pt->accept);
    if (pt->accept == SIM_ACCEPT_TOP_P && !(pt->top_p > 0.0 && pt->top_p <= 1.0))
        return fail(r->err, r->errlen, SIM_CONFIG, "top_p = %g is out of range (0, 1]",
                    pt->top_p);
    if (pt->accept == SIM_ACCEPT_SAMPLING && !(pt->temperature > 0.0))
        return fail(r->err, r->errlen, SIM_CONFIG, "temperature = %g must be > 0",
                    pt->temperature);
    return SIM_OK;
}

/* The longest context the point can reach, for the KV-cache accounting. */
static int32_t max_context(const sim_point *pt, int32_t n_prompts)
{
    int32_t max_ctx = 0;
    for (int32_t p = 0; p < n_prompts; p++) {
        const int32_t *prompt, *ref;
        int32_t pl, gen = rp_prompt_gen(pt->trace, pt->prompt_offset + p, pt->max_new_tokens,
                                        &prompt, &pl, &ref);
        if (pl + gen + RP_TREE_CAP > max_ctx) max_ctx = pl + gen + RP_TREE_CAP;
    }
    return max_ctx;
}

/* Everything the cycles need: the phone model, buffers, the policy, the two
 * random streams, the trace's synthesis statistics, the oracle and the
 * policy's calibration.  Returns SIM_OK or an error with err;
 * replay_close frees what was set up either way. */
static int replay_open(replay *r)
{
    const sim_point *pt = r->pt;
    int rc = check_point(r);
    if (rc != SIM_OK) return rc;
    r->max_ctx = max_context(pt, r->n_prompts);
    char hw_err[256] = "";
    int hrc = sim_hw_create(pt->device, pt->target, pt->policy->needs_draft ? pt->draft : NULL,
                            pt->dram_fraction, r->max_ctx, &r->hw, hw_err, sizeof hw_err);
    if (hrc == SIM_CONFIG_NOFIT) return fail(r->err, r->errlen, SIM_CONFIG_NOFIT, "%s", hw_err);
    if (hrc != SIM_OK) return fail(r->err, r->errlen, SIM_CONFIG, "%s", hw_err);
    r->p_tok = calloc((size_t)r->n_prompts + 1, sizeof(int64_t));
    r->p_ms = calloc((size_t)r->n_prompts + 1, sizeof(double));
    if (run_state_init(&r->s, trc_get_meta(pt->trace)->k) != 0 || !r->p_tok || !r->p_ms)
        return fail(r->err, r->errlen, SIM_INTERNAL,
                    "out of memory for the replay buffers");
    if (pt->policy->create(pt->policy_params, &r->pol) != ENG_OK)
        return fail(r->err, r->errlen, SIM_INTERNAL, "policy %s could not be created",
                    pt->policy->name);
    gsl_set_error_handler_off();
    r->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r->rng) return fail(r->err, r->errlen, SIM_INTERNAL, "out of memory for the RNG");
    gsl_rng_set(r->rng, (unsigned long)pt->seed);
    /* acceptance draws get their own stream: the synthesis of unrecorded nodes
     * stays the same whatever the rule */
    r->acc_rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r->acc_rng)
        return fail(r->err, r->errlen, SIM_INTERNAL, "out of memory for the RNG");
    gsl_rng_set(r->acc_rng, (unsigned long)(pt->seed ^ 0x9e3779b97f4a7c15ULL));
    /* the trace keeps its statistics (computed once, or read from its index) */
    if (rp_synth_fit(pt->trace, &r->stats) != 0)
        return fail(r->err, r->errlen, SIM_INTERNAL,
                    "out of memory for the trace statistics");
    if (rp_oracle_init(&r->orc, pt->trace, &r->stats, r->rng, RP_TREE_CAP) != 0)
        return fail(r->err, r->errlen, SIM_INTERNAL, "out of memory for the oracle");
    r->orc.synth_drawn = pt->synth_drawn != 0;
    r->oracle_ok = 1;
    if (eng_policy_calibrates(&r->pol) &&
        rp_profile_calibrate(pt, r->hw, &r->stats, &r->pol, r->n_prompts, r->runtime))
        return hook_failed(r, pt->prompt_offset, 0, "policy %s could not be calibrated",
                           pt->policy->name);
    sim_hw_memory mem;
    sim_hw_get_memory(r->hw, &mem);
    r->out->dram_bytes = mem.total_bytes;
    r->out->resident_layers = mem.resident_layers;
    /* the KV caches are accounted at max_ctx */
    double kv_all = mem.bytes[SIM_MEM_KV_TARGET] + mem.bytes[SIM_MEM_KV_DRAFT];
    r->dram_fixed = mem.total_bytes - kv_all;
    r->kv_per_tok = kv_all / (double)r->max_ctx;
    r->prov_cap = sim_hw_overlap_cap(r->hw);
    r->n_var = rp_variants_open(r->var, r->n_var, pt, &r->pol, r->max_ctx);
    return SIM_OK;
}

static void replay_close(replay *r)
{
    rp_variants_close(r->var, r->n_var);
    free(r->p_tok);
    free(r->p_ms);
    if (r->oracle_ok) rp_oracle_free(&r->orc);
    gsl_rng_free(r->rng);
    gsl_rng_free(r->acc_rng);
    eng_policy_destroy(&r->pol);
    run_state_free(&r->s);
    sim_hw_destroy(r->hw);
}

/* Where a cycle stands: the prompt and position, and what each phase hands
 * the next. */
typedef struct cycle {
    int32_t p, tp, plen, pos, gen;
    const int32_t *ref;
    uint8_t *keep;      /* NULL: every node verified */
    uint8_t *keep_full; /* the unpruned tree's (provisional nodes excluded) */
    int pruned;
    eng_verify_plan plan;
    int32_t n_verified, n_build, n_prov, emitted, acc_full;
    eng_outcome oc;
    sim_verify_shape vs;
    sim_cycle_time ct;
} cycle;

/* Phase 1: the policy's tree, its pruning and verification plan (checked),
 * and its provisional drafting. */
static int cycle_draft(replay *r, cycle *c)
{
    run_state *s = &r->s;
    eng_build_limits lim = {RP_TREE_CAP, RP_TREE_CAP - 1, c->gen - c->pos};
    int brc = eng_policy_build(&r->pol, &s->tree, &r->orc.draft, &lim);
    if (brc != ENG_OK)
        return hook_failed(r, c->tp, c->pos,
                           "policy %s failed to build a tree (code %d) at prompt %d position %d",
                           r->pol.i->name, brc, c->tp, c->pos);
    if (eng_policy_prune(&r->pol, &s->tree, &r->orc.target, s->keep, &c->keep) != ENG_OK)
        return hook_failed(r, c->tp, c->pos, "policy %s failed to prune", r->pol.i->name);
    c->pruned = c->keep != NULL;
    eng_policy_plan(&r->pol, &s->tree, c->keep, &c->plan);
    if (policy_error(&r->pol, r->err, r->errlen, c->tp, c->pos)) /* plan or an earlier reset */
        return SIM_CONFIG;
    if (check_plan(&s->tree, c->keep, &c->plan, r->pt, r->err, r->errlen, c->tp, c->pos) != 0)
        return SIM_CONFIG;
    /* provisional drafting: nodes it appends are not verified now */
    c->n_verified = s->tree.n_nodes;
    c->n_build = r->orc.n_calls;
    c->n_prov = 0;
    c->keep_full = NULL;
    if (r->prov_cap <= 0) return SIM_OK;
    int64_t room = (int64_t)c->n_verified + r->prov_cap;
    eng_build_limits plim = {room < RP_TREE_CAP ? (int32_t)room : RP_TREE_CAP, RP_TREE_CAP - 1,
                             c->gen - c->pos};
    if (eng_policy_provisional(&r->pol, &s->tree, &r->orc.draft, &plim) != ENG_OK)
        return hook_failed(r, c->tp, c->pos,
                           "policy %s failed to draft provisionally at prompt %d position %d",
                           r->pol.i->name, c->tp, c->pos);
    c->n_prov = r->orc.n_calls - c->n_build;
    int32_t nv = c->n_verified, extra = s->tree.n_nodes - nv;
    if (extra > 0) {
        memset(s->keep_all, 1, (size_t)nv);
        memset(s->keep_all + nv, 0, (size_t)extra);
        if (!c->keep) {
            memset(s->keep, 1, (size_t)nv);
            c->keep = s->keep;
        }
        memset(s->keep + nv, 0, (size_t)extra);
        c->keep_full = s->keep_all;
    }
    return SIM_OK;
}

/* Phase 2: the target verifies; the acceptance rule walks the tree; under
 * greedy acceptance every emitted token is the reference's, also with the
 * tree verified unpruned (pruning may only shorten). */
static int cycle_accept(replay *r, cycle *c)
{
    const sim_point *pt = r->pt;
    run_state *s = &r->s;
    rp_oracle *orc = &r->orc;
    orc->target.verify(orc->target.ctx, &s->tree, c->keep, s->g);
    if (pt->accept == SIM_ACCEPT_GREEDY) {
        c->oc = eng_accept_greedy(&s->tree, s->g, c->keep, s->path, s->emit, RP_TREE_CAP + 1);
    } else {
        orc->target.dists(orc->target.ctx, &s->tree, c->keep, s->tcand, s->tn);
        c->oc = pt->accept == SIM_ACCEPT_TOP_P
                    ? eng_accept_top_p(&s->tree, s->tcand, s->tn, orc->target.k, c->keep, pt->top_p,
                                       s->path, s->emit, RP_TREE_CAP + 1)
                    : eng_accept_sampling(&s->tree, s->tcand, s->tn, orc->target.k, c->keep,
                                          pt->temperature, rng_uniform, r->acc_rng, s->path,
                                          s->emit, RP_TREE_CAP + 1);
    }
    const char *name = r->pol.i->name;
    if (c->oc.emitted < 1)
        return fail(r->err, r->errlen, SIM_MISMATCH,
                    "policy %s emitted no token at prompt %d position %d", name, c->tp, c->pos);
    c->emitted = c->oc.emitted < c->gen - c->pos ? c->oc.emitted : c->gen - c->pos;
    for (int32_t j = 0; j < c->emitted && pt->accept != SIM_ACCEPT_GREEDY; j++)
        r->out->mismatched += s->emit[j] != c->ref[c->pos + j];
    for (int32_t j = 0; j < c->emitted && pt->accept == SIM_ACCEPT_GREEDY; j++)
        if (s->emit[j] != c->ref[c->pos + j])
            return fail(r->err, r->errlen, SIM_MISMATCH,
                        "policy %s emitted token %d at prompt %d position %d where the "
                        "reference has %d",
                        name, s->emit[j], c->tp, c->pos + j, c->ref[c->pos + j]);
    c->acc_full = c->oc.accepted;
    if (!c->pruned || pt->accept != SIM_ACCEPT_GREEDY) return SIM_OK;
    orc->target.verify(orc->target.ctx, &s->tree, c->keep_full, s->g_full);
    eng_token *emit_full = s->emit + RP_TREE_CAP + 1;
    eng_outcome of =
        eng_accept_greedy(&s->tree, s->g_full, c->keep_full, s->path, emit_full, RP_TREE_CAP + 1);
    c->acc_full = of.accepted;
    for (int32_t j = 0; j < c->oc.emitted; j++)
        if (j >= of.emitted || emit_full[j] != s->emit[j])
            return fail(r->err, r->errlen, SIM_MISMATCH,
                        "policy %s: pruning changed emitted token %d at prompt %d position %d",
                        name, j, c->tp, c->pos);
    return SIM_OK;
}

/* Phase 3: the cycle priced on the phone model (build calls, then the
 * provisional ones), then told to the policy. */
static int cycle_price(replay *r, cycle *c)
{
    run_state *s = &r->s;
    for (int32_t i = 0; i < r->orc.n_calls; i++) {
        s->calls[i].unit = r->orc.calls[i].unit;
        s->calls[i].rows = r->orc.calls[i].rows;
        s->calls[i].ctx_len = r->orc.calls[i].ctx_len;
        s->calls[i].part = r->orc.calls[i].part;
    }
    const eng_verify_plan *pl = &c->plan;
    c->vs = (sim_verify_shape){
        .rows = pl->rows,
        .leaves = pl->leaves,
        .ctx_len = c->plen + c->pos,
        .exit_layer = pl->exit_layer,
        .rows_after_exit = pl->rows_after_exit,
        .proj = pl->proj,
        .proj_rows = c->oc.accepted + 1 < pl->rows ? c->oc.accepted + 1 : pl->rows,
        .runtime = r->runtime,
        /* nothing drafted and the root alone: a plain decode step */
        .decode = c->n_build == 0 && c->n_prov == 0 && pl->rows == 1,
    };
    const sim_cycle_req req = {.calls = s->calls,
                               .n_calls = c->n_build,
                               .verify = &c->vs,
                               .overlap = {s->calls + c->n_build, c->n_prov, pl->overlap_gate},
                               .call_ms = s->call_ms};
    if (sim_hw_cycle(r->hw, &req, &c->ct) != SIM_OK)
        return fail(r->err, r->errlen, SIM_INTERNAL,
                    "policy %s produced a cycle the phone model rejects (%d draft calls, %d "
                    "rows, %d leaves) at prompt %d position %d",
                    r->pol.i->name, r->orc.n_calls, pl->rows, pl->leaves, c->tp, c->pos);
    rp_variants_price(r->var, r->n_var, &req, c->plan.rows, c->n_verified);
    eng_feedback fb = {
        .tree = &s->tree,
        .g = s->g,
        .keep = c->keep,
        .outcome = c->oc,
        .plan = c->plan,
        .draft_ms = c->ct.draft_ms,
        .verify_ms = c->ct.verify_ms,
        .draft_calls = c->n_build,
        .call_ms = s->call_ms,
        .verified_nodes = c->n_verified,
        .provisional_calls = c->n_prov,
        .provisional_done = c->ct.overlap_calls,
    };
    eng_policy_observe(&r->pol, &fb);
    if (policy_error(&r->pol, r->err, r->errlen, c->tp, c->pos)) return SIM_CONFIG;
    return SIM_OK;
}

/* Phase 4: the cycle into the running totals (and the timeline). */
static void cycle_record(replay *r, const cycle *c, int traced)
{
    const sim_point *pt = r->pt;
    sim_point_stats *out = r->out;
    const sim_cycle_time *ct = &c->ct;
    const eng_verify_plan *pl = &c->plan;
    if (c->n_prov > 0) {
        out->provisional_calls += ct->overlap_calls;
        if (c->emitted == c->oc.emitted)
            out->provisional_kept +=
                provisional_kept(&r->s.tree, c->n_verified, ct->overlap_calls, &c->oc, r->s.mark);
    }
    int32_t acc = c->oc.accepted < c->emitted ? c->oc.accepted : c->emitted;
    if (traced && pt->cycle_fn) {
        sim_cycle_info ci = {
            .prompt = c->p,
            .pos = c->pos,
            .ctx_len = c->plen + c->pos,
            .emitted = c->emitted,
            .accepted = acc,
            .rows = pl->rows,
            .leaves = pl->leaves,
            .draft_calls = c->n_build,
            .provisional_calls = c->n_prov,
            .provisional_done = ct->overlap_calls,
            .dram_used_bytes =
                r->dram_fixed + r->kv_per_tok * (double)(c->plen + c->pos + pl->rows),
            .ct = ct,
        };
        pt->cycle_fn(pt->trace_ctx, &ci);
    }
    r->p_tok[c->p] += c->emitted;
    r->p_ms[c->p] += ct->cycle_ms;
    out->cycles++;
    out->tokens += c->emitted;
    out->accepted += acc;
    out->accepted_hist[acc < RP_HIST_BINS - 1 ? acc : RP_HIST_BINS - 1]++;
    out->proposed += c->n_verified - 1;
    out->verify_rows += pl->rows;
    if (pl->rows > out->verify_rows_max) out->verify_rows_max = pl->rows;
    out->rows_after_exit += pl->exit_layer >= 0 ? pl->rows_after_exit : pl->rows;
    out->accepted_unpruned += c->acc_full;
    out->proj_ms += sim_hw_proj_ms(r->hw, &c->vs);
    out->total_ms += ct->cycle_ms;
    out->draft_ms += ct->draft_ms;
    out->verify_ms += ct->verify_ms;
    out->waste_ms += cycle_waste(r->hw, &c->vs, ct, c->oc.accepted);
    out->flash_ms += ct->flash_ms;
    out->npu_ms += ct->npu_ms;
    out->cpu_ms += ct->cpu_ms;
    out->kv_ms += ct->kv_ms;
    out->idle_ms += ct->idle_ms;
    out->energy_mj += ct->energy_mj;
    out->throttled_cycles += ct->throttled;
}

/* Prompt p of the point (the trace's prompt offset + p), cycle by cycle
 * until its new tokens are generated. */
static int replay_prompt(replay *r, int32_t p)
{
    const sim_point *pt = r->pt;
    cycle c = {.p = p, .tp = pt->prompt_offset + p};
    const int32_t *prompt;
    c.gen = rp_prompt_gen(pt->trace, c.tp, pt->max_new_tokens, &prompt, &c.plen, &c.ref);
    /* a trace opened prompt by prompt reads (and validates) the prompt now;
     * damaged data fails this point only */
    trc_err terr;
    if (trc_prompt_acquire(pt->trace, c.tp, &terr) != TRC_OK)
        return fail(r->err, r->errlen, prompt_status(terr.code), "%s", terr.msg);
    eng_policy_reset(&r->pol);
    sim_hw_generation_start(r->hw);
    rp_variants_start(r->var, r->n_var);
    int traced = p == pt->trace_prompt && (pt->span_fn || pt->cycle_fn);
    if (traced && pt->span_fn) sim_hw_set_span_fn(r->hw, pt->span_fn, pt->trace_ctx);
    int rc = SIM_OK;
    for (c.pos = 0; c.pos < c.gen && rc == SIM_OK; c.pos += c.emitted) {
        eng_token root = c.pos > 0 ? c.ref[c.pos - 1] : (c.plen > 0 ? prompt[c.plen - 1] : 0);
        eng_tree_reset(&r->s.tree, root);
        rp_oracle_begin(&r->orc, c.tp, c.pos);
        rc = cycle_draft(r, &c);
        if (rc == SIM_OK) rc = cycle_accept(r, &c);
        if (rc == SIM_OK) rc = cycle_price(r, &c);
        if (rc == SIM_OK) cycle_record(r, &c, traced);
    }
    /* also after a failed cycle: the prompt is handed back */
    if (traced && pt->span_fn) sim_hw_set_span_fn(r->hw, NULL, NULL);
    trc_prompt_release(pt->trace, c.tp);
    r->out->prompts++;
    return rc;
}

/* The running totals as the result's means and rates and the bootstrap
 * interval over prompts (ok: every prompt ran), and the oracle's expansion
 * counts. */
static void replay_finish(replay *r, int ok)
{
    sim_point_stats *out = r->out;
    if (ok && out->cycles > 0) {
        double c = (double)out->cycles;
        out->waste_frac = out->verify_ms > 0 ? out->waste_ms / out->verify_ms : 0.0;
        out->waste_ms /= c;
        out->token_mismatch = out->tokens ? (double)out->mismatched / (double)out->tokens : 0.0;
        out->tokens_per_s = rp_tokens_per_s((double)out->tokens, out->total_ms);
        out->ms_per_token = out->tokens ? out->total_ms / (double)out->tokens : 0;
        out->tokens_per_cycle = (double)out->tokens / c;
        out->effective_new_tokens = out->prompts ? (double)out->tokens / out->prompts : 0.0;
        out->mean_accepted = (double)out->accepted / c;
        out->rows_per_cycle = (double)out->verify_rows / c;
        out->rows_kept = out->verify_rows ? (double)out->rows_after_exit / (double)out->verify_rows
                                          : 1.0;
        out->retention = out->accepted_unpruned > 0
                             ? (double)out->accepted / (double)out->accepted_unpruned
                             : 1.0;
        out->proj_ms /= c;
        out->joules_per_token = out->tokens ? out->energy_mj * 1e-3 / (double)out->tokens : 0.0;
        out->avg_power_w = out->total_ms > 0 ? out->energy_mj / out->total_ms : 0.0;
        out->cycle_ms = out->total_ms / c;
        out->draft_ms /= c;
        out->verify_ms /= c;
        out->flash_ms /= c;
        out->npu_ms /= c;
        out->cpu_ms /= c;
        out->kv_ms /= c;
        out->idle_ms /= c;
        out->tokens_per_s_lo = out->tokens_per_s_hi = out->tokens_per_s;
        if (r->interval)
            rp_bootstrap_ci(r->p_tok, r->p_ms, out->prompts, r->pt->seed, &out->tokens_per_s_lo,
                            &out->tokens_per_s_hi);
    }
    const rp_oracle *orc = &r->orc;
    out->expansions = orc->expansions;
    out->recorded_expansions = orc->recorded_expansions;
    out->resampled_expansions = orc->resampled_expansions;
    out->penalised_expansions = orc->penalised_expansions;
    out->coverage =
        orc->expansions ? (double)orc->recorded_expansions / (double)orc->expansions : 1.0;
}

/* One replay of pt: with its bootstrap interval when interval is set, and
 * with the n_var variants in var priced alongside when the policy allows
 * (rp_variant; var[i].priced says which were). */
static int replay_one(const sim_point *pt, sim_point_stats *out, char *err, size_t errlen,
                      int interval, rp_variant *var, int32_t n_var)
{
    double t_start = wall_s();
    memset(out, 0, sizeof *out);
    replay r = {.pt = pt,
                .out = out,
                .err = err,
                .errlen = errlen,
                .interval = interval && !pt->no_interval,
                .var = var,
                .n_var = n_var};
    int rc = replay_open(&r);
    if (rc == SIM_OK) {
        for (int32_t p = 0; p < r.n_prompts && rc == SIM_OK; p++)
            rc = replay_prompt(&r, p);
        replay_finish(&r, rc == SIM_OK);
    }
    replay_close(&r);
    out->sim_wall_s = wall_s() - t_start;
    return rc;
}

/* The prompts [first, first + n) the point replays (as replay_one): 0, or -1
 * when its range does not fit the trace (the replay reports that). */
static int point_prompts(const sim_point *pt, int32_t *first, int32_t *n)
{
    int32_t P = trc_get_meta(pt->trace)->n_prompts, avail = P - pt->prompt_offset;
    if (pt->prompt_offset < 0 || avail < 1 || pt->prompts < 0 || pt->prompts > avail) return -1;
    *first = pt->prompt_offset;
    *n = pt->prompts ? pt->prompts : avail;
    return 0;
}

/* h folded with x (splitmix64 finaliser; order-sensitive). */
static uint64_t fold(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

uint64_t sim_point_content_key(const sim_point *pt)
{
    uint64_t h = trc_checksum(pt->trace);
    /* the bracket's traces change the band: they join the key (none: as before) */
    for (int32_t k = 0; k < pt->n_trace_variants && pt->trace_variants; k++)
        h = fold(h, trc_checksum(pt->trace_variants[k]));
    int32_t first, n;
    if (!trc_is_lazy(pt->trace) || point_prompts(pt, &first, &n) != 0) return h;
    for (int32_t p = first; p < first + n; p++)
        h = fold(h, trc_prompt_hash(pt->trace, p));
    return h;
}

int sim_point_verify_content(const sim_point *pt, char *err, size_t errlen)
{
    int32_t first, n;
    if (!trc_is_lazy(pt->trace) || point_prompts(pt, &first, &n) != 0) return SIM_OK;
    for (int32_t p = first; p < first + n; p++) {
        trc_err terr;
        if (trc_prompt_acquire(pt->trace, p, &terr) != TRC_OK)
            return fail(err, errlen, prompt_status(terr.code), "%s", terr.msg);
        trc_prompt_release(pt->trace, p);
    }
    return SIM_OK;
}

/* lo/hi widened by the device variants of a replay of pt (out, with the
 * variants in var priced alongside where the policy allowed): a priced
 * variant gives its tokens_per_s from its decode time; any other is replayed
 * in full, without the bootstrap interval nobody reads.  *wall gains the
 * full replays' host time. */
static int device_band(const sim_point *pt, const sim_point_stats *out, const rp_variant *var,
                       sim_point_stats *vs, double *lo, double *hi, double *wall, char *err,
                       size_t errlen)
{
    for (int32_t i = 0; i < pt->n_variants; i++) {
        double tps;
        if (var[i].priced) {
            tps = rp_variant_tokens_per_s(out, var[i].total_ms);
        } else {
            sim_point v = *pt;
            v.device = &pt->variants[i];
            v.variants = NULL;
            v.n_variants = 0;
            v.span_fn = NULL;
            v.cycle_fn = NULL;
            int rc = replay_one(&v, vs, err, errlen, 0, NULL, 0);
            if (rc != SIM_OK) return rc;
            tps = vs->tokens_per_s;
            *wall += vs->sim_wall_s;
        }
        if (tps < *lo) *lo = tps;
        if (tps > *hi) *hi = tps;
    }
    return SIM_OK;
}

/* lo/hi widened by the point on each end of its trace's acceptance bracket,
 * with the device's variants on each; an end replays the point's own
 * prompts. */
static int trace_band(const sim_point *pt, rp_variant *var, int32_t n_var, sim_point_stats *tv,
                      sim_point_stats *vs, double *lo, double *hi, double *wall, char *err,
                      size_t errlen)
{
    int32_t first, n;
    if (point_prompts(pt, &first, &n) != 0) return SIM_OK; /* the point's replay said so */
    for (int32_t k = 0; k < pt->n_trace_variants; k++) {
        sim_point v = *pt;
        v.trace = pt->trace_variants[k];
        v.prompts = n; /* the point's prompts, not all of the end's */
        int32_t f2, n2;
        if (point_prompts(&v, &f2, &n2) != 0)
            return fail(err, errlen, SIM_CONFIG,
                        "acceptance bracket: trace %d of %d holds %d prompts; the point replays "
                        "prompts %d to %d",
                        k + 1, pt->n_trace_variants, trc_get_meta(v.trace)->n_prompts, first + 1,
                        first + n);
        v.trace_variants = NULL;
        v.n_trace_variants = 0;
        v.span_fn = NULL;
        v.cycle_fn = NULL;
        memset(var, 0, sizeof *var * (size_t)(n_var > 0 ? n_var : 0));
        int rc = replay_one(&v, tv, err, errlen, 0, var, n_var);
        if (rc != SIM_OK) return rc;
        *wall += tv->sim_wall_s;
        if (tv->tokens_per_s < *lo) *lo = tv->tokens_per_s;
        if (tv->tokens_per_s > *hi) *hi = tv->tokens_per_s;
        rc = device_band(&v, tv, var, vs, lo, hi, wall, err, errlen);
        if (rc != SIM_OK) return rc;
    }
    return SIM_OK;
}

/* The point, then the same point on each standing variant of its device and
 * on each end of its trace's acceptance bracket (replay.h): these change no
 * number of the point's own row but the model band and the host time. */
int sim_replay_run(const sim_point *pt, sim_point_stats *out, char *err, size_t errlen)
{
    rp_variant var[RP_MAX_VARIANTS];
    int32_t n_var = pt->variants && pt->n_variants > 0 && pt->n_variants <= RP_MAX_VARIANTS
                        ? pt->n_variants
                        : 0;
    memset(var, 0, sizeof var);
    int rc = replay_one(pt, out, err, errlen, 1, var, n_var);
    out->tokens_per_s_model_lo = out->tokens_per_s_model_hi = NAN;
    if (rc != SIM_OK || (pt->n_variants <= 0 && pt->n_trace_variants <= 0)) return rc;
    if (pt->n_variants > 0 && (!pt->variants || pt->n_variants > RP_MAX_VARIANTS))
        return fail(err, errlen, SIM_CONFIG, "bad list of device variants");
    if (pt->n_trace_variants > 0 &&
        (!pt->trace_variants || pt->n_trace_variants > RP_MAX_VARIANTS))
        return fail(err, errlen, SIM_CONFIG, "bad list of trace variants");
    sim_point_stats *vs = malloc(2 * sizeof *vs);
    if (!vs) return fail(err, errlen, SIM_NOMEM, "out of memory");
    double lo = out->tokens_per_s, hi = lo, wall = out->sim_wall_s;
    rc = device_band(pt, out, var, vs, &lo, &hi, &wall, err, errlen);
    if (rc == SIM_OK && pt->n_trace_variants > 0)
        rc = trace_band(pt, var, n_var, vs + 1, vs, &lo, &hi, &wall, err, errlen);
    free(vs);
    if (rc != SIM_OK) return rc;
    out->tokens_per_s_model_lo = lo;
    out->tokens_per_s_model_hi = hi;
    out->sim_wall_s = wall;
    return SIM_OK;
}
