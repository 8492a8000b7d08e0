/*
 * driver.c -- the smallest runtime around libflashspec-engine: one policy
 * from the engine's registry drafts a tree each cycle from a toy draft
 * model, a toy target verifies it, greedy acceptance keeps the matching
 * prefix, and the policy hears how the cycle went.  The hooks are called in
 * the order a real runtime calls them (engine/eng_policy.h, "One cycle").
 *
 * The toy models: the target's next token after t is (7 t + 3) mod 1000;
 * the draft proposes that token first with probability 0.8 (a fixed
 * pseudo-random stream decides), else a wrong one, and as its second and
 * third candidates two other tokens.  No clock, no files: a phone runtime
 * would put its NPU/CPU calls and measured latencies where the toys are.
 *
 *   cc driver.c $(pkg-config --cflags --libs flashspec-engine) -o driver
 *   ./driver [POLICY [CYCLES]]        (default: chain, 8 cycles)
 */
#include <eng_policy.h> /* pkg-config --cflags adds its folder */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define K 3         /* candidates per expanded node */
#define CAP 256     /* tree capacity, root included */

static eng_token target_next(eng_token t)
{
    return (eng_token)((7 * (int64_t)t + 3) % 1000);
}

typedef struct toy {
    uint64_t rng;
    int32_t calls;
} toy;

static double uniform(toy *m)
{
    m->rng = m->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(m->rng >> 11) / 9007199254740992.0;
}

/* draft oracle: candidate sets for the nodes ids[0..count) */
static int toy_expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    toy *m = ctx;
    (void)unit;
    m->calls++;
    for (int32_t i = 0; i < count; i++) {
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], K);
        if (!c) return ENG_E_FULL;
        eng_token right = target_next(t->nodes[ids[i]].tok);
        int hit = uniform(m) < 0.8;
        c[0].tok = hit ? right : (right + 1) % 1000;
        c[0].logp = -0.22f;
        c[1].tok = hit ? (right + 2) % 1000 : right;
        c[1].logp = -1.9f;
        c[2].tok = (right + 3) % 1000;
        c[2].logp = -2.6f;
    }
    return ENG_OK;
}

/* target oracle: the target's token after every kept node */
static int toy_verify(void *ctx, const eng_tree *t, const uint8_t *keep, eng_token *g)
{
    (void)ctx;
    for (int32_t u = 0; u < t->n_nodes; u++)
        g[u] = !keep || keep[u] ? target_next(t->nodes[u].tok) : ENG_NO_TOKEN;
    return ENG_OK;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "chain";
    int cycles = argc > 2 ? atoi(argv[2]) : 8;
    const eng_policy_desc *desc = eng_policy_lookup(name);
    if (!desc) {
        fprintf(stderr, "driver: no policy '%s' in libflashspec-engine\n", name);
        return 2;
    }
    void *params = calloc(1, desc->params_size ? desc->params_size : 1);
    eng_policy pol = {0};
    if (!params) return 1;
    eng_params_defaults(desc->params, params); /* the policy's documented defaults */
    if (desc->create(params, &pol) != ENG_OK) {
        fprintf(stderr, "driver: %s could not be created\n", name);
        return 1;
    }
    size_t bytes = eng_tree_bytes(CAP, CAP * K);
    void *mem = aligned_alloc(8, (bytes + 7) / 8 * 8);
    eng_tree tree;
    if (!mem || eng_tree_init(&tree, mem, bytes, CAP, CAP * K) != ENG_OK) return 1;
    toy model = {.rng = 42, .calls = 0};
    eng_draft_oracle draft = {.expand = toy_expand, .ctx = &model, .k = K};
    eng_target_oracle target = {.verify = toy_verify, .ctx = NULL, .k = 0};
    eng_token g[CAP], emit[CAP];
    uint8_t keep[CAP];
    eng_token last = 1;
    int total = 0;
    /* the eng_policy_* wrappers apply each optional hook's default */
    eng_policy_reset(&pol); /* a new prompt */
    for (int c = 0; c < cycles; c++) {
        eng_tree_reset(&tree, last);
        model.calls = 0;
        eng_build_limits lim = {CAP, 32, 1000};
        if (eng_policy_build(&pol, &tree, &draft, &lim) != ENG_OK) return 1;
        uint8_t *kp; /* keep, or NULL when the policy verifies every node */
        if (eng_policy_prune(&pol, &tree, &target, keep, &kp) != ENG_OK) return 1;
        eng_verify_plan plan;
        eng_policy_plan(&pol, &tree, kp, &plan);
        toy_verify(NULL, &tree, kp, g);
        eng_outcome oc = eng_accept_greedy(&tree, g, kp, NULL, emit, CAP);
        eng_feedback fb = {.tree = &tree,
                           .g = g,
                           .keep = kp,
                           .outcome = oc,
                           .plan = plan,
                           .draft_ms = 1.0 * model.calls,
                           .verify_ms = 20.0,
                           .draft_calls = model.calls};
        eng_policy_observe(&pol, &fb);
        printf("cycle %d: drafted %d nodes in %d draft calls, verified %d rows, accepted %d, "
               "emitted %d:", c + 1, tree.n_nodes - 1, model.calls, plan.rows, oc.accepted,
               oc.emitted);
        for (int32_t i = 0; i < oc.emitted; i++) printf(" %d", emit[i]);
        printf("\n");
        total += oc.emitted;
        last = emit[oc.emitted - 1];
    }
    printf("%s: %d tokens in %d cycles\n", desc->name, total, cycles);
    eng_policy_destroy(&pol);
    free(mem);
    free(params);
    return 0;
}
