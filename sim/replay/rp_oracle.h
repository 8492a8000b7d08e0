/*
 * rp_oracle.h -- draft and target oracles served from a recorded trace.
 *
 * One rp_oracle serves one speculative cycle at a time: rp_oracle_begin() points
 * it at the recorded tree of (prompt, position); the engine then builds its own
 * tree and the oracle maps every engine node onto the recorded tree lazily (nodes
 * are append-only and parent < child, so a single forward sweep suffices).
 *
 *  - A node whose path was recorded is served from the trace (draft top-K,
 *    target top-1, exit scores).
 *  - A node the trace did not record is *synthesised* (method documented in
 *    sim/replay/README.md): its K candidates get the mean log-prob profile per
 *    rank fitted on the recorded off-path nodes *of the same depth* (the
 *    deepest fitted depth beyond the recorded ones; the pooled profile where a
 *    depth has no off-path node), and distinct token ids: a uniform start and
 *    a fixed stride, one draw a set (re-sampled sets draw every id).  If the node
 *    lies on the reference path (only possible deeper than the recorded depth
 *    D), the reference token is placed at rank 1 with the acceptance rate
 *    measured at the deepest recorded depth, else at a lower rank with the
 *    measured in-set rate, else left out.  Synthesised nodes are never
 *    acceptable off the reference path, so greedy replay stays exact whatever
 *    is synthesised.  Every expansion is counted as recorded or synthesised
 *    (the `coverage` result).
 *  - Exit scores of an unrecorded node: its (synthesised) draft log-probs, i.e.
 *    the predictor ranks its candidates as the draft does; NaN for a node
 *    without candidates.
 *  - Target distributions (dists hook, for the lossy acceptance rules): the
 *    recorded target top-K of a recorded node; the reference token with
 *    probability 1 for an unrecorded reference-path node (only its greedy token
 *    is known); unknown for an unrecorded off-path node.
 *  - The target's greedy token of a reference-path node is the next reference
 *    token (known for any depth); of a recorded off-path node the recorded target
 *    top-1; of a synthesised off-path node unknown (ENG_NO_TOKEN), which the
 *    greedy walk can never need.
 *
 * Every expand call is logged (unit, rows) so that the replay loop can price it on
 * the phone model.  Randomness comes from a GSL RNG seeded per point.
 *
 * Optional draft hooks (Lyanna):
 *  - expand_body: as expand (candidate sets filled at once), logged as a
 *    body-only call (part 1: no draft LM head);
 *  - project: logged as a head-only call (part 2) of `rows` rows; expands
 *    nothing;
 *  - resample: candidate sets served exactly as expand serves them (recorded
 *    tree of the current position, or synthesised), no call logged; with
 *    probability `penalty` per node (one draw from the RNG, none when penalty
 *    is 0) the ranking is degraded: the draft's rank-1 token moves to the last
 *    rank (sim/replay/README.md "Re-sampling").
 */
#ifndef RP_ORACLE_H
#define RP_ORACLE_H

#include <gsl/gsl_rng.h>

#include "engine/eng_oracle.h"
#include "rp_draw.h"
#include "traces/trc.h"

/* Trace prompt tp as a point replays it: its prompt (*prompt, *plen tokens),
 * its reference (*ref), and the tokens it generates (returned): its
 * reference's length, at most max_new. */
static inline int32_t rp_prompt_gen(const trc_trace *t, int32_t tp, int32_t max_new,
                                    const int32_t **prompt, int32_t *plen, const int32_t **ref)
{
    *plen = trc_prompt(t, tp, prompt);
    int32_t L = trc_ref(t, tp, ref);
    return L < max_new ? L : max_new;
}

/* Statistics fitted once per trace for synthesising unrecorded nodes. */
typedef struct rp_synth_stats {
    int32_t k;
    double mean_logp[TRC_MAX_K]; /* per rank, over recorded off-path nodes */
    /* per depth of the expanded node (0 = root) and rank; depth_nodes[d] = 0:
     * no off-path node at that depth (the pooled profile stands in) */
    double mean_logp_depth[TRC_MAX_DEPTH][TRC_MAX_K];
    int64_t depth_nodes[TRC_MAX_DEPTH];
    int32_t fitted_depths;       /* deepest depth with data + 1 */
    /* positional acceptance: accept_pos[j] = P(the reference token is the
     * draft's rank-(j+1) candidate) over expanded reference-path nodes */
    double accept_pos[TRC_MAX_K];
    int64_t accept_n;            /* reference-path nodes it was measured on */
    double deep_top1;            /* P(ref token is draft top-1) at the deepest recorded depth */
    double deep_inset;           /* P(ref token within top-K) there */
    int64_t off_path_nodes;      /* nodes the profile was fitted on */
} rp_synth_stats;

/* Derives the synthesis statistics from the trace's statistics
 * (trc_get_stats).  0, or -1 when they cannot be had (out of memory). */
int rp_synth_fit(const trc_trace *t, rp_synth_stats *st);

/* Slots of the set of tokens drawn for one synthesised candidate set (at
 * most TRC_MAX_K + 1 tokens: a quarter full at most). */
#define RP_SYN_SLOTS 256

typedef struct rp_call {
    eng_unit unit;
    int32_t rows;
    int32_t ctx_len;
    int32_t part; /* sim_draft_part: 0 full forward, 1 body (no LM head), 2 LM head only */
} rp_call;

typedef struct rp_oracle {
    const trc_trace *trace; /* borrowed */
    const rp_synth_stats *stats; /* borrowed */
    gsl_rng *rng;           /* borrowed */
    int32_t k, n_exit, vocab;
    uint32_t stride; /* of synthesised token ids, coprime to vocab */
    uint32_t stride_at[TRC_MAX_K]; /* j * stride mod vocab, for j < k */
    rp_uniform_int vocab_draw;     /* gsl_rng_uniform_int(rng, vocab), its scale kept */
    /* synthesised candidates' log-probs by depth (prof_rows rows; deeper
     * nodes take the last) */
    float prof[TRC_MAX_DEPTH][TRC_MAX_K];
    int32_t prof_rows;
    /* 1: every synthesised token its own draw, as re-sampled sets have them
     * (the reference the one-draw construction is tested against); 0 after
     * init */
    int32_t synth_drawn;
    /* current cycle */
    trc_tree tree;
    const int32_t *ref;
    int32_t ref_len, pos, prompt_len;
    int32_t mapped;   /* engine nodes [0, mapped) are mapped */
    int32_t cap;      /* capacity of the per-node arrays */
    int32_t *tnode;   /* [cap] recorded node index or -1 */
    uint8_t *on_ref;  /* [cap] node lies on the reference path */
    int32_t *m_parent; /* [cap] parent and token each node was mapped with */
    eng_token *m_tok;
    int32_t *slot;    /* [cap] scratch of a renumbering: the slot a node's mapping came from */
    int32_t tagged;   /* every mapped node's tag (eng_node.user) names its own slot */
    rp_call *calls;   /* [cap_calls] draft calls of the cycle */
    int32_t n_calls, cap_calls;
    /* the tokens a synthesised candidate set holds so far (and the one it must
     * avoid): open addressing, a slot in use when its stamp is the set's */
    struct rp_syn_slot {
        eng_token tok;
        uint32_t stamp;
    } syn[RP_SYN_SLOTS];
    uint32_t syn_stamp;
    /* totals over the oracle's life */
    int64_t expansions, recorded_expansions;
    /* candidate sets served by resample (also counted in expansions and, when
     * recorded, recorded_expansions) and those whose ranking the penalty
     * degraded */
    int64_t resampled_expansions, penalised_expansions;
    eng_draft_oracle draft;
    eng_target_oracle target;
} rp_oracle;

/* cap: the largest tree (nodes incl. root) the engine will build.  The oracle
 * must not move after init (its function tables point at it).  Returns 0 or
 * -1 on allocation failure.  rng and stats are borrowed. */
int rp_oracle_init(rp_oracle *o, const trc_trace *t, const rp_synth_stats *st, gsl_rng *rng,
                   int32_t cap);
void rp_oracle_free(rp_oracle *o);

/* Starts a cycle at (p, pos): t must already be reset to the root token. */
void rp_oracle_begin(rp_oracle *o, int32_t p, int32_t pos);

/* Maps nodes added since the last call (exposed for tests). */
void rp_oracle_map(rp_oracle *o, const eng_tree *t);

#endif
