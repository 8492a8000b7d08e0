/*
 * eng_accept.h -- acceptance rules.
 *
 * Greedy (lossless): walk from the root; at node u the target emits g(u); if a
 * child c of u has tok(c) == g(u) (and survived pruning) the walk moves to c,
 * otherwise the cycle ends.  The cycle emits the accepted draft tokens followed
 * by one bonus token g(u) at the last accepted node.  The emitted text therefore
 * equals the target's own greedy output exactly.
 */
#ifndef ENG_ACCEPT_H
#define ENG_ACCEPT_H

#include "eng_tree.h"

typedef struct eng_outcome {
    int32_t accepted;  /* accepted draft tokens (excludes the bonus) */
    int32_t last_node; /* node where the walk stopped */
    eng_token bonus;   /* g(last_node); ENG_NO_TOKEN if the target gave none */
    int32_t emitted;   /* tokens written to emit: accepted + (bonus known) */
} eng_outcome;

/* Greedy acceptance.  g: per-node target tokens (ENG_NO_TOKEN = unknown);
 * keep: NULL or per-node mask of verified nodes.  path (optional, cap entries)
 * receives accepted node ids in order; emit (cap entries, cap >= 1) receives the
 * emitted tokens.  Never emits more than cap tokens: the walk stops after cap - 1
 * accepted drafts, so the bonus always fits.  The root is verified whatever
 * keep[0] says; cap < 1 or NULL t/g/emit yields an empty outcome. */
eng_outcome eng_accept_greedy(const eng_tree *t, const eng_token *g, const uint8_t *keep,
                              int32_t *path, eng_token *emit, int32_t cap);

/* ---- lossy rules ----
 *
 * Both read the target's top-k distribution at each node (tcand[u * k + j],
 * j < tn[u], log-probs, as eng_target_oracle.dists writes it; tn[u] = 0 means
 * unknown: the walk stops there and, having no target token, emits no bonus).
 * The distribution is truncated to the k recorded tokens: mass outside them is
 * unknown and treated as absent.  path, emit, cap, keep: as for greedy. */

/* Top-p (loose) acceptance: at node u the target's top-p set is the smallest
 * prefix of its top-k (by decreasing probability exp(logp), not renormalised)
 * whose mass reaches top_p, or all k tokens when they do not.  The walk moves
 * to the kept child whose token is in that set with the highest target
 * probability (so the greedy child wins when present: top-p accepts at least
 * what greedy accepts).  Bonus: g(u) = the target's top-1 at the last node.
 * top_p in (0, 1]. */
eng_outcome eng_accept_top_p(const eng_tree *t, const eng_cand *tcand, const int32_t *tn,
                             int32_t k, const uint8_t *keep, double top_p, int32_t *path,
                             eng_token *emit, int32_t cap);

/* Uniform draws in [0, 1) come from the caller (no RNG in the engine). */
typedef double (*eng_uniform_fn)(void *ctx);

/* Multi-step speculative sampling (SpecInfer) at temperature temp > 0.  At node
 * u, P = softmax(logp / temp) over the target's top-k and Q = softmax(logq /
 * temp) over u's draft candidate set C_u.  The kept children are tried in
 * insertion (draft-rank) order: child x is accepted with probability
 * min(1, P(x) / Q(x)) (one uniform draw); on rejection P <- norm(max(0, P - Q))
 * (P unchanged if that is all zero) and x is removed from Q (Q renormalised).
 * On acceptance the walk moves to x; when no child is accepted, or u is a leaf,
 * the bonus token is sampled from the current P (one draw).  A node without
 * candidates has Q = 0: its children are accepted with probability 1 when
 * P(x) > 0.  At most ENG_ACCEPT_MAX_K target or draft entries per node are
 * used. */
#define ENG_ACCEPT_MAX_K 64
eng_outcome eng_accept_sampling(const eng_tree *t, const eng_cand *tcand, const int32_t *tn,
                                int32_t k, const uint8_t *keep, double temp,
                                eng_uniform_fn uniform, void *uctx, int32_t *path,
                                eng_token *emit, int32_t cap);

#endif
