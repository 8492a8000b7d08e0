/*
 * trc_synth.c -- the synthetic trace generator (trc_synth): writes the schema-v1
 * content from a small parametric model of a draft/target pair, through the
 * builder, so a synthetic trace passes exactly the validation a recorded one does.
 *
 * The model (traces/README.md, "Synthetic generator", is the reference text):
 *   - prompt and reference tokens are uniform in [0, vocab);
 *   - every node u at depth d has a "next token" g(u), the target's greedy token:
 *     on the reference path g(u) is the next reference token; elsewhere it is drawn
 *     from the same per-depth acceptance model, so off-path subtrees look alike;
 *   - the draft's top-1 equals g(u) with probability a_d = accept[min(d, n-1)];
 *     otherwise g(u) sits at rank 2..K with probability (c_d - a_d)/(1 - a_d),
 *     c_d = max(coverage, a_d), or with coverage_share s >= 0 c_d = a_d + s (1 - a_d)
 *     (K = 1: c_d = a_d), the rank drawn in proportion to
 *     the candidates' draft probabilities; otherwise g(u) is outside the top-K;
 *   - draft top-1 probability q1 ~ Beta(a*kappa, (1-a)*kappa), kappa = 4, a clamped
 *     to [0.001, 0.999]; with probability `calibration` it is instead drawn from
 *     the posterior Beta(alpha+1, beta) if the top-1 is right, Beta(alpha, beta+1)
 *     if wrong, which gives P(top-1 right | q1) = calibration*q1 +
 *     (1 - calibration)*a_d and leaves the marginal of q1 unchanged;
 *   - lower draft probabilities by capped stick-breaking of the remaining mass:
 *     q_{j+1} = min(q_j, rest_j * w_j), w_j ~ Beta(1, 2);
 *   - the target's top-K: g(u) first with probability ~ Beta(4, 1.5), then the
 *     draft's other candidates in draft order, each kept with probability 1/2,
 *     then fresh tokens; probabilities by the same stick-breaking;
 *   - exit scores: logits 2*N(0,1) per candidate; when g(u) is among the
 *     candidates, the predictor at exit layer l ranks it first with probability
 *     acc(l) = 1/K + (predictor_accuracy - 1/K) * l / l_deepest (otherwise another
 *     candidate, uniformly, is first) -- the top score is swapped into place;
 *   - each tree: the reference path to depth min(D, L - pos) first, then nodes
 *     added best-first by joint draft probability (a heap over (node, candidate)
 *     pairs, ties broken by insertion order) up to M nodes and depth D.  The
 *     joint probability of a reference child outside the top-K is taken as half
 *     the K-th candidate's (not recorded; it only orders the expansion).
 * Determinism: one gsl_rng_mt19937 seeded from p->seed (folded to 32 bits:
 * low ^ high) and a fixed draw order; same params -> same checksum.  With
 * node_streams, every node's draws (gen_node) come instead from a taus2 stream
 * seeded by splitmix64 of (seed, prompt, position, node index); prompts,
 * references and roots still come from the main stream.  The reference path
 * holds nodes 0..D of every tree, so whether the draft's top-1 is right at
 * depth d is u_d < a_d with u_d fixed by the seed alone: raising accept only
 * turns wrong into right where it crosses u_d, and a chain's acceptance grows
 * monotonically with it (the single stream re-draws everything after the
 * first changed decision).  With a draw memo (trc_synth_memo_run,
 * trc_synth_memo.c) a node's costly runs of draws -- the draft's top-1 Beta,
 * its stick-breaking weights, the tokens and the target's probabilities, the
 * exit logits --
 * are taken from the memo where it recorded them from the same stream state:
 * the same numbers, so the same trace.  GSL's aborting error handler is
 * switched off process-wide on entry.
 *
 * The parameters' defaults and checks are in trc_synth_params.c; node streams
 * on several threads (threads > 1) in trc_synth_par.c, which shares the
 * generator's state with this file through trc_gen.h.
 */
#include "trc_gen.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KAPPA 4.0      /* concentration of the draft top-1 Beta */
#define STICK_BETA 2.0 /* w ~ Beta(1, STICK_BETA) */
#define TGT_TOP1_A 4.0 /* target top-1 probability ~ Beta(A, B) */
#define TGT_TOP1_B 1.5
#define SCORE_SIGMA 2.0  /* exit-score logit scale */
#define PROB_FLOOR 1e-30 /* keeps log-probs finite */

/* -------------------------------------------------------------- generator */

static int heap_less(const frontier *a, const frontier *b) /* a ranks below b */
{
    return a->joint < b->joint || (a->joint == b->joint && a->seq > b->seq);
}

static void heap_push(gen *g, double joint, int32_t node, int32_t cand)
{
    int i = g->hn++;
    frontier f = {joint, g->seq++, node, cand};
    while (i > 0 && heap_less(&g->heap[(i - 1) / 2], &f)) {
        g->heap[i] = g->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    g->heap[i] = f;
}

static frontier heap_pop(gen *g)
{
    frontier top = g->heap[0], last = g->heap[--g->hn];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= g->hn) break;
        if (c + 1 < g->hn && heap_less(&g->heap[c], &g->heap[c + 1])) c++;
        if (!heap_less(&last, &g->heap[c])) break;
        g->heap[i] = g->heap[c];
        i = c;
    }
    if (g->hn > 0) g->heap[i] = last;
    return top;
}

static int contains(const int32_t *v, int n, int32_t x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x) return 1;
    return 0;
}

/* A uniform token absent from v[0..n) and different from avoid (-1: none). */
static int32_t fresh_token(gen *g, const int32_t *v, int n, int32_t avoid)
{
    for (;;) {
        int32_t x = (int32_t)gsl_rng_uniform_int(g->rng, (unsigned long)g->p->vocab);
        if (x != avoid && !contains(v, n, x)) return x;
    }
}

/* Segment seg of the node's memo record (see gen.memo): 1 when it holds the
 * draws from the stream's present state (and key) -- val filled, the stream
 * moved past them --; else 0, the state saved to in for memo_put. */
static int memo_get(gen *g, int seg, const double *key, void *val, unsigned char *in)
{
    if (!g->rec) return 0;
    void *st = gsl_rng_state(g->rng);
    if (trci_memo_get(g->memo, g->rec, seg, st, key, val)) {
        g->hits++;
        return 1;
    }
    g->misses++;
    memcpy(in, st, gsl_rng_size(g->rng));
    return 0;
}

static void memo_put(gen *g, int seg, const unsigned char *in, const double *key, const void *val)
{
    if (g->rec) trci_memo_put(g->memo, g->rec, seg, in, gsl_rng_state(g->rng), key, val);
}

/* Beta(a, b), through the memo's top-1 segment (keyed by the shapes). */
static double draft_top1(gen *g, double a, double b)
{
    unsigned char in[TRCI_MEMO_STATE_MAX];
    double key[2] = {a, b}, x;
    if (memo_get(g, TRCI_SEG_TOP1, key, &x, in)) return x;
    x = gsl_ran_beta(g->rng, a, b);
    memo_put(g, TRCI_SEG_TOP1, in, key, &x);
    return x;
}

/* The K - 1 stick-breaking weights w ~ Beta(1, STICK_BETA) of stick_break. */
static void stick_draws(gen *g, double *w)
{
    for (int j = 1; j < g->K; j++)
        w[j - 1] = gsl_ran_beta(g->rng, 1.0, STICK_BETA);
}

/* Sorted probabilities q[0..K) with q[0] = top1 and sum <= 1 from the weights
 * w[0..K-1); log-probs to lp. */
static void stick_break(int K, double top1, const double *w, double *q, float *lp)
{
    q[0] = top1 < PROB_FLOOR ? PROB_FLOOR : top1 > 1.0 ? 1.0 : top1;
    double rest = 1.0 - q[0];
    for (int j = 1; j < K; j++) {
        double v = rest * w[j - 1];
        if (v > q[j - 1]) v = q[j - 1];
        if (v < PROB_FLOOR) v = PROB_FLOOR;
        q[j] = v;
        rest = rest > v ? rest - v : 0.0;
    }
    for (int j = 0; j < K; j++)
        lp[j] = (float)log(q[j]);
    for (int j = 1; j < K; j++) /* float rounding must not unsort */
        if (lp[j] > lp[j - 1]) lp[j] = lp[j - 1];
}

/* The draft's probabilities q and log-probs lp below top1 (memo: the weights). */
static void draft_probs(gen *g, double top1, double *q, float *lp)
{
    unsigned char in[TRCI_MEMO_STATE_MAX];
    double w[TRC_MAX_K];
    if (!memo_get(g, TRCI_SEG_DRAFT, NULL, w, in)) {
        stick_draws(g, w);
        memo_put(g, TRCI_SEG_DRAFT, in, NULL, w);
    }
    stick_break(g->K, top1, w, q, lp);
}

/* The draft's tokens dt (g(u) = next at rank `rank` when both are known),
 * the target's top-K tt (g(u) first) and its log-probs lp: its top-1 ~
 * Beta(A, B), the rest stick-broken.  A pure function of the stream's state,
 * rank and next (memo: all three, keyed by rank and next). */
static void node_tokens(gen *g, int rank, int32_t next, int32_t *dt, int32_t *tt, float *lp)
{
    unsigned char in[TRCI_MEMO_STATE_MAX], val[3 * 4 * TRC_MAX_K];
    const int K = g->K;
    const size_t row = sizeof(int32_t) * (size_t)K;
    double key[2] = {rank, next};
    if (memo_get(g, TRCI_SEG_TOKENS, key, val, in)) {
        memcpy(dt, val, row), memcpy(tt, val + row, row), memcpy(lp, val + 2 * row, row);
        return;
    }
    for (int j = 0; j < K; j++)
        dt[j] = -1;
    if (next >= 0 && rank >= 0) dt[rank] = next;
    for (int j = 0; j < K; j++)
        if (dt[j] < 0) dt[j] = fresh_token(g, dt, K, next);
    int32_t gu = next >= 0 ? next : rank >= 0 ? dt[rank] : fresh_token(g, dt, K, -1);
    int n = 0;
    tt[n++] = gu;
    for (int j = 0; j < K && n < K; j++)
        if (dt[j] != gu && gsl_rng_uniform(g->rng) < 0.5) tt[n++] = dt[j];
    while (n < K) {
        tt[n] = fresh_token(g, tt, n, -1);
        n++;
    }
    double q[TRC_MAX_K], w[TRC_MAX_K];
    double top1 = gsl_ran_beta(g->rng, TGT_TOP1_A, TGT_TOP1_B);
    stick_draws(g, w);
    stick_break(K, top1, w, q, lp);
    memcpy(val, dt, row), memcpy(val + row, tt, row), memcpy(val + 2 * row, lp, row);
    memo_put(g, TRCI_SEG_TOKENS, in, key, val);
}

/* Exit layer e's logits s[0..K) before the swap (memo: all K). */
static void exit_logits(gen *g, int e, float *s)
{
    unsigned char in[TRCI_MEMO_STATE_MAX];
    if (memo_get(g, TRCI_SEG_EXIT + e, NULL, s, in)) return;
    for (int j = 0; j < g->K; j++)
        s[j] = (float)(SCORE_SIGMA * gsl_ran_gaussian_ziggurat(g->rng, 1.0));
    memo_put(g, TRCI_SEG_EXIT + e, in, NULL, s);
}

/* Fills node i's draft and target top-K and exit scores.  next = g(u) when known
 * (reference path), else -1 (drawn).  Returns the rank of g(u) among the draft
 * candidates, or -1 when it is outside the top-K. */
static int gen_node(gen *g, int32_t i, int32_t d, int32_t next)
{
    const trc_synth_params *p = g->p;
    int K = g->K;
    double a = p->accept[d < p->n_accept ? d : p->n_accept - 1];
    double cov = K <= 1                    ? a
                 : p->coverage_share >= 0.0 ? a + p->coverage_share * (1.0 - a)
                 : p->coverage > a          ? p->coverage
                                            : a;
    double u = gsl_rng_uniform(g->rng);
    int rank = u < a ? 0 : u < cov ? 1 : -1; /* 1 = somewhere in 2..K, resolved below */

    double ac = a < 0.001 ? 0.001 : a > 0.999 ? 0.999 : a;
    double al = ac * KAPPA, be = (1.0 - ac) * KAPPA, top1;
    if (gsl_rng_uniform(g->rng) < p->calibration)
        top1 = rank == 0 ? draft_top1(g, al + 1.0, be) : draft_top1(g, al, be + 1.0);
    else
        top1 = draft_top1(g, al, be);
    double *q = g->q + (size_t)i * K;
    float *dlp = g->dlp + (size_t)i * K;
    draft_probs(g, top1, q, dlp);
    if (rank == 1) {
        double tot = 0.0;
        for (int j = 1; j < K; j++)
            tot += q[j];
        double x = gsl_rng_uniform(g->rng) * tot;
        rank = K - 1;
        for (int j = 1; j < K; j++) {
            x -= q[j];
            if (x < 0.0) {
                rank = j;
                break;
            }
        }
    }

    node_tokens(g, rank, next, g->dtok + (size_t)i * K, g->ttok + (size_t)i * K,
                g->tlp + (size_t)i * K);

    /* exit scores */
    for (int e = 0; e < g->E; e++) {
        float *s = g->exit + ((size_t)i * g->E + (size_t)e) * K;
        int best = 0;
        exit_logits(g, e, s);
        for (int j = 1; j < K; j++)
            if (s[j] > s[best]) best = j;
        if (rank >= 0) {
            int win = rank;
            if (K > 1 && gsl_rng_uniform(g->rng) >= g->exit_acc[e]) {
                win = (int)gsl_rng_uniform_int(g->rng, (unsigned long)(K - 1));
                if (win >= rank) win++;
            }
            float tmp = s[win];
            s[win] = s[best];
            s[best] = tmp;
        }
    }
    return rank;
}

static int32_t add_node(gen *g, int32_t n, int32_t parent, int32_t token, double joint)
{
    g->parent[n] = parent;
    g->token[n] = token;
    g->depth[n] = parent < 0 ? 0 : g->depth[parent] + 1;
    g->joint[n] = joint;
    return n;
}

static void push_children(gen *g, int32_t u, int32_t skip_token)
{
    if (g->depth[u] >= g->D) return;
    for (int j = 0; j < g->K; j++) {
        int32_t tok = g->dtok[(size_t)u * g->K + j];
        if (tok != skip_token) heap_push(g, g->joint[u] * g->q[(size_t)u * g->K + j], u, j);
    }
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* gen_node on the node's own stream when node_streams is set. */
static int gen_node_at(gen *g, int64_t pos, int32_t i, int32_t d, int32_t next)
{
    if (!g->p->node_streams) return gen_node(g, i, d, next);
    uint64_t h = splitmix64(g->p->seed);
    h = splitmix64(h ^ (uint64_t)g->prompt);
    h = splitmix64(h ^ (uint64_t)pos);
    h = splitmix64(h ^ (uint64_t)i);
    gsl_rng_set(g->node_rng, (unsigned long)((h ^ (h >> 32)) & 0xffffffffu));
    g->rng = g->node_rng;
    g->rec = g->memo ? trci_memo_node(g->memo, g->prompt, pos, i) : NULL;
    int rank = gen_node(g, i, d, next);
    g->rec = NULL;
    g->rng = g->main_rng;
    return rank;
}

/* Builds the tree at position pos of a prompt whose reference is ref[0..L). */
int32_t trci_gen_tree(gen *g, const int32_t *ref, int64_t L, int64_t pos, int32_t root_tok)
{
    int K = g->K;
    int32_t dref = (int32_t)(L - pos < g->D ? L - pos : g->D), n = 0;
    add_node(g, n++, -1, root_tok, 1.0);
    for (int32_t d = 0; d <= dref; d++) {
        int32_t next = pos + d < L ? ref[pos + d] : -1;
        int rank = gen_node_at(g, pos, d, d, next);
        if (d == dref) break;
        double qr = rank >= 0 ? g->q[(size_t)d * K + rank] : 0.5 * g->q[(size_t)d * K + K - 1];
        add_node(g, n++, d, ref[pos + d], g->joint[d] * qr);
    }
    g->hn = 0;
    g->seq = 0;
    for (int32_t d = 0; d <= dref; d++)
        push_children(g, d, d < dref ? ref[pos + d] : -1);
    while (n < g->M && g->hn > 0) {
        frontier f = heap_pop(g);
        int32_t tok = g->dtok[(size_t)f.node * K + f.cand];
        int32_t v = add_node(g, n++, f.node, tok, f.joint);
        gen_node_at(g, pos, v, g->depth[v], -1);
        push_children(g, v, -1);
    }
    return n;
}

/* The whole trace into out, prompt after prompt, on one thread (on several
 * with node streams and threads > 1: trc_synth_par.c). */
void trci_gen_prompt(gen *g, int32_t *prompt, int32_t *ref, int32_t *root)
{
    const trc_synth_params *p = g->p;
    for (int32_t i = 0; i < p->prompt_len; i++)
        prompt[i] = (int32_t)gsl_rng_uniform_int(g->rng, (unsigned long)p->vocab);
    for (int32_t i = 0; i < p->output_len; i++)
        ref[i] = (int32_t)gsl_rng_uniform_int(g->rng, (unsigned long)p->vocab);
    *root = p->prompt_len ? prompt[p->prompt_len - 1]
                          : (int32_t)gsl_rng_uniform_int(g->rng, (unsigned long)p->vocab);
}

static int run(gen *g, const sink *out)
{
    const trc_synth_params *p = g->p;
    if (p->node_streams && p->threads > 1 && (int64_t)p->prompts * p->output_len > 1)
        return trci_synth_run_parallel(g, out);
    size_t plen = (size_t)p->prompt_len, L = (size_t)p->output_len;
    int32_t *prompt = malloc((plen ? plen : 1) * sizeof *prompt);
    int32_t *ref = malloc(L * sizeof *ref);
    int rc = prompt && ref ? TRC_OK : TRC_E_NOMEM;
    for (int32_t pi = 0; pi < p->prompts && !rc; pi++) {
        int32_t root0;
        g->prompt = pi;
        trci_gen_prompt(g, prompt, ref, &root0);
        rc = out->prompt(out->ctx, prompt, p->prompt_len, ref, p->output_len);
        for (int64_t pos = 0; pos < (int64_t)L && !rc; pos++) {
            int32_t root = pos > 0 ? ref[pos - 1] : root0;
            int32_t n = trci_gen_tree(g, ref, (int64_t)L, pos, root);
            rc = out->tree(out->ctx, g, n);
        }
    }
    free(prompt);
    free(ref);
    return rc;
}

/* The header of the trace p describes (no counts). */
static void synth_meta(const trc_synth_params *p, trc_meta *m)
{
    memset(m, 0, sizeof *m);
    m->version = TRC_VERSION;
    m->vocab = p->vocab;
    m->k = p->k;
    m->max_depth = p->max_depth;
    m->max_nodes = p->max_nodes;
    m->n_exit = p->n_exit;
    memcpy(m->exit_layers, p->exit_layers, sizeof m->exit_layers);
    m->target_layers = p->target_layers;
    trci_strcpy(m->target, sizeof m->target, p->target);
    trci_strcpy(m->draft, sizeof m->draft, p->draft);
    trci_strcpy(m->tokenizer, sizeof m->tokenizer, "synthetic");
    int w =
        snprintf(m->source, sizeof m->source,
                 "flashspec trc_synth: seed=%llu calibration=%g coverage=%g "
                 "predictor_accuracy=%g accept=",
                 (unsigned long long)p->seed, p->calibration, p->coverage, p->predictor_accuracy);
    for (int d = 0; d < p->n_accept && w > 0 && (size_t)w < sizeof m->source; d++)
        w += snprintf(m->source + w, sizeof m->source - (size_t)w, "%s%g", d ? "," : "",
                      p->accept[d]);
    if (p->coverage_share >= 0.0 && w > 0 && (size_t)w < sizeof m->source)
        w += snprintf(m->source + w, sizeof m->source - (size_t)w, " coverage_share=%g",
                      p->coverage_share);
    if (p->node_streams && w > 0 && (size_t)w < sizeof m->source)
        snprintf(m->source + w, sizeof m->source - (size_t)w, " streams=node");
}

void trci_gen_free(gen *g)
{
    gsl_rng_free(g->main_rng);
    gsl_rng_free(g->node_rng);
    free(g->parent);
    free(g->token);
    free(g->depth);
    free(g->dtok);
    free(g->ttok);
    free(g->dlp);
    free(g->tlp);
    free(g->exit);
    free(g->q);
    free(g->joint);
    free(g->heap);
    memset(g, 0, sizeof *g);
}

/* The generator at its start (seeded); TRC_E_NOMEM when memory runs out. */
int trci_gen_init(gen *g, const trc_synth_params *p)
{
    memset(g, 0, sizeof *g);
    g->p = p;
    g->K = p->k;
    g->D = p->max_depth;
    g->M = p->max_nodes;
    g->E = p->n_exit;
    for (int e = 0; e < g->E; e++) {
        double chance = 1.0 / g->K;
        g->exit_acc[e] = chance + (p->predictor_accuracy - chance) * p->exit_layers[e] /
                                      p->exit_layers[g->E - 1];
    }
    size_t M = (size_t)g->M, MK = M * (size_t)g->K;
    g->rng = g->main_rng = gsl_rng_alloc(gsl_rng_mt19937);
    g->node_rng = p->node_streams ? gsl_rng_alloc(gsl_rng_taus2) : NULL;
    g->parent = malloc(M * sizeof(int32_t));
    g->token = malloc(M * sizeof(int32_t));
    g->depth = malloc(M * sizeof(int32_t));
    g->dtok = malloc(MK * sizeof(int32_t));
    g->ttok = malloc(MK * sizeof(int32_t));
    g->dlp = malloc(MK * sizeof(float));
    g->tlp = malloc(MK * sizeof(float));
    g->exit = g->E ? malloc(MK * (size_t)g->E * sizeof(float)) : NULL;
    g->q = malloc(MK * sizeof(double));
    g->joint = malloc(M * sizeof(double));
    g->heap = malloc((MK + (size_t)g->K) * sizeof(frontier));
    if (!g->rng || (p->node_streams && !g->node_rng) || !g->parent || !g->token || !g->depth ||
        !g->dtok || !g->ttok || !g->dlp || !g->tlp || (g->E && !g->exit) || !g->q || !g->joint ||
        !g->heap) {
        trci_gen_free(g);
        return TRC_E_NOMEM;
    }
    gsl_rng_set(g->rng, (unsigned long)((p->seed ^ (p->seed >> 32)) & 0xffffffffULL));
    return TRC_OK;
}

static int builder_prompt(void *ctx, const int32_t *prompt, int32_t plen, const int32_t *ref,
                          int32_t len)
{
    return trc_builder_add_prompt(ctx, prompt, plen, ref, len);
}

static int builder_tree(void *ctx, const gen *g, int32_t n)
{
    return trc_builder_add_tree(ctx, n, g->parent, g->token, g->dtok, g->dlp, g->ttok, g->tlp,
                                g->exit);
}

static int gen_error(trc_err *err, int rc)
{
    return trci_err(err, rc, "synth: %s",
                    rc == TRC_E_NOMEM ? "out of memory" : "generator produced bad input");
}

int trc_synth(const trc_synth_params *p, trc_trace **out, trc_err *err)
{
    return trc_synth_memo_run(p, NULL, out, err);
}

int trc_synth_memo_run(const trc_synth_params *p, trc_synth_memo *memo, trc_trace **out,
                       trc_err *err)
{
    *out = NULL;
    gsl_set_error_handler_off();
    int rc = trc_synth_check(p, err);
    if (rc) return rc;
    trc_meta m;
    synth_meta(p, &m);
    gen g;
    trc_builder *b = trc_builder_new(&m);
    if (!b || trci_gen_init(&g, p) != TRC_OK) {
        trc_builder_free(b);
        return trci_err(err, TRC_E_NOMEM, "synth: out of memory");
    }
    if (memo && trci_memo_acquire(memo, p)) g.memo = memo;
    int64_t trees = (int64_t)p->prompts * p->output_len;
    /* room for every tree full: filling it moves nothing (best effort) */
    (void)trci_builder_reserve(b, (int64_t)p->prompts * p->prompt_len, trees, trees * p->max_nodes);
    sink to_builder = {builder_prompt, builder_tree, b};
    rc = run(&g, &to_builder);
    if (g.memo) trci_memo_release(g.memo, g.hits, g.misses);
    if (rc) {
        trc_builder_free(b);
        rc = gen_error(err, rc);
    } else {
        rc = trc_builder_finish(b, "synth", out, err);
    }
    trci_gen_free(&g);
    return rc;
}

/* ---------------------------------------------------------- to a file */

/* Pass 1: the sizes -- prompt and reference tokens, nodes per tree. */
typedef struct sizes {
    int32_t *prompt_tok, *ref_tok;
    int64_t *tree_nodes; /* [prompts * output_len] */
    int64_t n_prompts, n_trees, n_nodes;
} sizes;

static int sizes_prompt(void *ctx, const int32_t *prompt, int32_t plen, const int32_t *ref,
                        int32_t len)
{
    sizes *z = ctx;
    memcpy(z->prompt_tok + z->n_prompts * plen, prompt, sizeof *prompt * (size_t)plen);
    memcpy(z->ref_tok + z->n_prompts * len, ref, sizeof *ref * (size_t)len);
    z->n_prompts++;
    return TRC_OK;
}

static int sizes_tree(void *ctx, const gen *g, int32_t n)
{
    (void)g;
    sizes *z = ctx;
    z->tree_nodes[z->n_trees++] = n;
    z->n_nodes += n;
    return TRC_OK;
}

/* Pass 2: each prompt built and checked on its own, its rows appended. */
typedef struct rows_out {
    const trc_meta *meta;
    trci_stream *stream;
    trc_builder *b; /* the prompt being built, NULL before the first */
    trc_err *err;
    int failed; /* err says why */
} rows_out;

static int rows_flush(rows_out *o)
{
    if (!o->b) return TRC_OK;
    trc_trace *part = NULL;
    int rc = trc_builder_finish(o->b, "synth", &part, o->err);
    o->b = NULL;
    if (!rc) rc = trci_stream_rows(o->stream, part, o->err);
    trc_free(part);
    if (rc) o->failed = 1;
    return rc;
}

static int rows_prompt(void *ctx, const int32_t *prompt, int32_t plen, const int32_t *ref,
                       int32_t len)
{
    rows_out *o = ctx;
    int rc = rows_flush(o);
    if (rc) return rc;
    o->b = trc_builder_new(o->meta);
    if (!o->b) return TRC_E_NOMEM;
    return trc_builder_add_prompt(o->b, prompt, plen, ref, len);
}

static int rows_tree(void *ctx, const gen *g, int32_t n)
{
    rows_out *o = ctx;
    return builder_tree(o->b, g, n);
}

int trc_synth_save(const trc_synth_params *p, const char *path, trc_meta *meta_out,
                   uint64_t *checksum_out, trc_err *err)
{
    gsl_set_error_handler_off();
    int rc = trc_synth_check(p, err);
    if (rc) return rc;
    trc_meta m;
    synth_meta(p, &m);
    int64_t P = p->prompts, plen = p->prompt_len, L = p->output_len;
    sizes z = {0};
    z.prompt_tok = malloc(sizeof(int32_t) * (size_t)(P * plen > 0 ? P * plen : 1));
    z.ref_tok = malloc(sizeof(int32_t) * (size_t)(P * L));
    z.tree_nodes = malloc(sizeof(int64_t) * (size_t)(P * L));
    gen g;
    rc = z.prompt_tok && z.ref_tok && z.tree_nodes ? trci_gen_init(&g, p) : TRC_E_NOMEM;
    if (!rc) {
        sink count = {sizes_prompt, sizes_tree, &z};
        rc = run(&g, &count);
        trci_gen_free(&g);
    }
    trc_trace *res = NULL;
    if (!rc) {
        m.n_prompts = (int32_t)P;
        m.n_trees = z.n_trees;
        m.n_nodes = z.n_nodes;
        res = trci_trace_alloc_resident(&m, P * plen);
        if (!res) rc = TRC_E_NOMEM;
    }
    if (!rc) {
        for (int64_t i = 0; i <= P; i++) {
            res->prompt_off[i] = i * plen;
            res->ref_off[i] = i * L;
        }
        memcpy(res->prompt_tok, z.prompt_tok, sizeof(int32_t) * (size_t)(P * plen));
        memcpy(res->ref_tok, z.ref_tok, sizeof(int32_t) * (size_t)(P * L));
        res->node_off[0] = 0;
        for (int64_t t = 0; t < z.n_trees; t++)
            res->node_off[t + 1] = res->node_off[t] + z.tree_nodes[t];
    }
    free(z.prompt_tok);
    free(z.ref_tok);
    free(z.tree_nodes);
    if (rc) {
        trc_free(res);
        return gen_error(err, rc);
    }
    trci_stream *st = NULL;
    rc = trci_stream_open(path, res, &st, err);
    trc_free(res);
    if (rc) return rc;
    rows_out o = {.meta = &m, .stream = st, .err = err};
    rc = trci_gen_init(&g, p);
    if (!rc) {
        sink rows = {rows_prompt, rows_tree, &o};
        rc = run(&g, &rows);
        if (!rc) rc = rows_flush(&o);
        trci_gen_free(&g);
    }
    trc_builder_free(o.b);
    if (rc) {
        trci_stream_finish(st, 0, NULL);
        return o.failed ? rc : gen_error(err, rc);
    }
    rc = trci_stream_finish(st, 1, err);
    if (rc) return rc;
    /* what the file now holds, from its header and index */
    trc_trace *t = NULL;
    rc = trc_open(path, 0, &t, err);
    if (!rc) {
        if (meta_out) *meta_out = *trc_get_meta(t);
        if (checksum_out) *checksum_out = trc_checksum(t);
    }
    trc_free(t);
    return rc;
}
