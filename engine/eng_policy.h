/*
 * eng_policy.h -- the speculative-decoding policy plug-in interface.
 *
 * A policy decides, once per cycle, which token tree to draft (build), optionally
 * which of its nodes to verify past an exit layer (prune) and where the output
 * projection runs (plan), and learns from what happened (observe).  It never sees
 * a clock: latencies reach it only as measured numbers in eng_feedback, exactly as
 * on a phone.  A policy is one file engine/pol_NAME.c: a params struct (public
 * ones live below), its eng_param_desc table, a create function, an
 * eng_policy_i and its registry row `const eng_policy_desc eng_policy_NAME`;
 * registering it is one line ENG_POLICY(NAME) in engine/policies.def, which
 * also adds the file to the build.
 *
 * Hooks (modelled on llama.cpp's llama_sampler_i):
 *   name     required  stable identifier, also the Lua constructor name
 *   reset    optional  a new prompt starts (per-prompt state)
 *   build    required  draft the tree from the root already in t
 *   prune    optional  keep mask for verification rows (default: keep all)
 *   plan     optional  verification plan (default: all kept rows, eager NPU head)
 *   observe  optional  feedback after the cycle
 *   destroy  optional  free self (created by the descriptor's create)
 *   calibrate optional an offline cost/acceptance profile (eng_cost_profile),
 *                      given once before the first cycle by the runtime (the
 *                      replay measures it from the trace and the phone model)
 *   provisional optional drafting while the target verifies (EdgeLLM)
 *   error    optional  one line on why the last hook failed
 *
 * One cycle.  A runtime calls the hooks in this order (sim/replay does,
 * and examples/engine/driver.c is a minimal runtime that does):
 *   create                      once per policy instance (the descriptor's)
 *   calibrate                   once, before the first cycle, if present
 *   reset                       at the start of every prompt, if present
 *   per cycle:
 *     eng_tree_reset(t, last emitted token)
 *     build(t, draft, lim)      the tree; the draft oracle runs inside
 *     prune(t, target, keep)    if present: keep[] starts all 1; the target
 *                               oracle's exit scores are available here
 *     plan(t, keep, plan)       if present, else eng_plan_default
 *     provisional(t, draft, lim) if present: nodes appended now are not
 *                               verified this cycle
 *     (the target verifies the kept rows; acceptance walks the tree)
 *     observe(fb)               if present: outcome and measured latencies
 *   destroy                     once, at the end
 * A hook that returns an error ends the generation; `error`, when present,
 * says why.
 */
#ifndef ENG_POLICY_H
#define ENG_POLICY_H

#include "eng_oracle.h"
#include "eng_accept.h"
#include "eng_param.h"
#include "eng_costmodel.h"
#include "eng_prune.h"

/* Where the target's output projection (LM head) runs. Enum only grows. */
typedef enum eng_proj_mode {
    ENG_PROJ_EAGER_NPU = 0,     /* all verified rows, inside the NPU graph */
    ENG_PROJ_ONDEMAND_CPU = 1,  /* accepted path + 1 rows, on the CPU */
    ENG_PROJ_ONDEMAND_NPU = 2   /* accepted path + 1 rows, one NPU call each */
} eng_proj_mode;

typedef struct eng_build_limits {
    int32_t max_nodes;  /* tree capacity including the root */
    int32_t max_depth;  /* deepest node the caller can serve */
    int32_t remaining;  /* tokens still to generate (>= 1) */
} eng_build_limits;

typedef struct eng_verify_plan {
    int32_t rows;            /* rows through the transformer layers (root included) */
    int32_t leaves;          /* leaves of the verified tree (temporary sequences) */
    int32_t exit_layer;      /* layer after which only kept rows continue, -1 none */
    int32_t rows_after_exit; /* rows past exit_layer (== rows when no pruning) */
    eng_proj_mode proj;
    int32_t overlap_gate;    /* provisional drafting may run only while the target
                                is not computing (EdgeLLM's pipeline rule), 0 = any time */
} eng_verify_plan;

/* What a runtime measured for one cycle, handed to observe(). */
typedef struct eng_feedback {
    const eng_tree *tree;
    const eng_token *g;        /* per-node target tokens as verified */
    const uint8_t *keep;       /* NULL = all verified */
    eng_outcome outcome;
    eng_verify_plan plan;
    double draft_ms;           /* measured drafting latency of the cycle */
    double verify_ms;          /* measured verification latency */
    int32_t draft_calls;       /* oracle expand calls made */
    const double *call_ms;     /* latency of each draft call, in call order
                                  (draft_calls entries), NULL when not measured */
    /* provisional drafting (the provisional hook): nodes of tree below
     * verified_nodes were verified (all of them when 0); provisional_calls
     * draft calls were made by the hook and the first provisional_done of them
     * ran before the verification finished (the others were never run: their
     * nodes are void) */
    int32_t verified_nodes;
    int32_t provisional_calls, provisional_done;
} eng_feedback;

/* What a runtime knows offline about its draft/target pair and hardware,
 * handed to calibrate() once.  All arrays borrowed for the call only (copy what
 * you keep).  Index i of accept_pos is draft rank i + 1; of verify_ms and the
 * draft arrays, i + 1 rows. */
typedef struct eng_cost_profile {
    const double *accept_pos; /* p[k]: probability that the draft's rank-k candidate
                                 is the target's token (positional acceptance) */
    int32_t n_pos;
    const double *verify_ms;  /* latency of verifying an m-row tree (root included) */
    int32_t n_verify;
    const double *draft_cpu_ms; /* one draft call over w rows on the CPU */
    const double *draft_npu_ms; /* ... on the NPU */
    int32_t n_draft;
    /* verification latency by shape: verify_nl_ms[(r - 1) * n_nl_leaves + (l - 1)]
     * for r rows (root included) and l leaves; NAN where not measured */
    const double *verify_nl_ms;
    int32_t n_nl_rows, n_nl_leaves;
    /* early-exit predictor layers of the target, one per recorded exit index:
     * the 0-based layer after which the predictor reads the hidden state (a
     * value for eng_verify_plan.exit_layer) */
    const int32_t *exit_layers;
    int32_t n_exit;
} eng_cost_profile;

typedef struct eng_policy_i {
    const char *name;
    void (*reset)(void *self);
    int (*build)(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim);
    int (*prune)(void *self, const eng_tree *t, eng_target_oracle *target, uint8_t *keep);
    void (*plan)(void *self, const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan);
    void (*observe)(void *self, const eng_feedback *fb);
    void (*destroy)(void *self);
    int (*calibrate)(void *self, const eng_cost_profile *prof); /* returns ENG_OK */
    /* optional: drafting that overlaps the verification of t (EdgeLLM's
     * provisional generation), called after plan and before the target runs.
     * Nodes it appends to t are not verified in this cycle; each of its draft
     * calls appends at most one node, in call order (so the runtime can void
     * the nodes of calls it could not run).  lim->max_nodes caps the tree
     * including them (the runtime's memory upper bound).  Returns ENG_OK. */
    int (*provisional)(void *self, eng_tree *t, eng_draft_oracle *draft,
                       const eng_build_limits *lim);
    /* optional: one line describing why the last hook failed (or why plan,
     * observe or reset, which return nothing, went wrong), NULL if nothing
     * did; read by the runtime after the cycle's hooks */
    const char *(*error)(void *self);
} eng_policy_i;

typedef struct eng_policy {
    const eng_policy_i *i;
    void *self; /* owned; freed by i->destroy */
} eng_policy;

/* Native plug-ins.  A shared object is a policy plug-in when it exports
 *   const int32_t flashspec_policy_abi = ENG_POLICY_ABI;
 *   const eng_policy_desc flashspec_policy = { "name", ... };
 * (ENG_PLUGIN_DECLARE below writes both).  A runtime loads it only when the
 * ABI numbers are equal: the number changes whenever eng_policy_i,
 * eng_policy_desc, eng_tree, the oracles or the feedback structs change
 * layout or meaning. */
#define ENG_POLICY_ABI 1
#define ENG_PLUGIN_ABI_SYMBOL "flashspec_policy_abi"
#define ENG_PLUGIN_DESC_SYMBOL "flashspec_policy"
#define ENG_PLUGIN_DECLARE(...)                                                                    \
    const int32_t flashspec_policy_abi = ENG_POLICY_ABI;                                          \
    const eng_policy_desc flashspec_policy = __VA_ARGS__

/* One registry row per policy. */
typedef struct eng_policy_desc {
    const char *name;
    const char *doc;                 /* one line */
    size_t params_size;              /* bytes of the params struct */
    const eng_param_desc *params;    /* NULL-terminated table */
    /* Creates a policy from validated params (borrowed).  Returns ENG_OK. */
    int (*create)(const void *params, eng_policy *out);
    int32_t needs_draft;             /* 1 when the policy calls the draft oracle */
} eng_policy_desc;

/* Registered policies (engine/policies.def), in registration order (never
 * reordered): an array of *count descriptors. */
const eng_policy_desc *const *eng_policy_registry(int32_t *count);
const eng_policy_desc *eng_policy_lookup(const char *name);

/* Default plan for a (possibly pruned) tree: rows = kept nodes + root, eager head. */
void eng_plan_default(const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan);

void eng_policy_destroy(eng_policy *p); /* NULL-safe */

/* ---- policies of this issue (one file each) ---- */

/* Flash-AR: no drafting; each cycle verifies the root alone (one token). */
typedef struct eng_flash_ar_params {
    int32_t unused_; /* no parameters */
} eng_flash_ar_params;

/* Drafts a chain of the draft's top-1 tokens from the root, one expand call per
 * token on unit: min(k, remaining - 1, max_depth, max_nodes - 1) tokens (the
 * bonus token keeps the cycle within remaining).  Stops early when the draft
 * returns no candidate.  Shared by chain and adaptive_chain. */
int eng_chain_draft(eng_tree *t, eng_draft_oracle *draft, int32_t k, eng_unit unit,
                    const eng_build_limits *lim);

/* Chain-SD: k times the draft's top-1 token, verified in one pass. */
typedef struct eng_chain_params {
    int32_t k;         /* chain length, default 8 (Lever's baseline) */
    eng_unit unit;     /* draft unit, default CPU */
} eng_chain_params;

/* Parameter tables (NULL-terminated) and constructors of the policies above.
 * create: params borrowed (copied into the policy); out->self owned by the
 * policy, released by eng_policy_destroy.  Returns ENG_OK, ENG_E_NOMEM, or
 * ENG_E_ARG for NULL arguments or params outside the table's ranges. */
extern const eng_param_desc eng_flash_ar_param_table[];
int eng_flash_ar_create(const void *params, eng_policy *out);
extern const eng_param_desc eng_chain_param_table[];
int eng_chain_create(const void *params, eng_policy *out);

/* ---- tree drafting policies (one file each, rules in ALGORITHMS.md) ----
 * Every tree policy caps its tree at lim->max_nodes (and ENG_POL_MAX_NODES),
 * lim->max_depth and lim->remaining - 1 levels.  Level-wise policies draft one
 * level of the tree as one batched oracle call (rows = nodes expanded). */
#define ENG_POL_MAX_NODES 1024 /* scratch size of a policy: largest tree it drafts */
#define ENG_POL_MAX_LIST 16

/* Adaptive-k chain: chain of k draft top-1 tokens, k steered by a window of
 * per-cycle acceptance rates; optional fallback to autoregressive decoding. */
typedef struct eng_adaptive_chain_params {
    int32_t window;          /* W, default 32 */
    int32_t k_start;         /* default 4 */
    int32_t k_min, k_max;    /* default 2, 8 */
    double raise_above;      /* k + 1 when the window mean exceeds it, default 0.80 */
    double lower_below;      /* k - 1 when the window mean is below it, default 0.50 */
    int32_t fallback;        /* bool, default 0 */
    double fallback_below;   /* autoregressive when the mean is below it, default 0.40 */
    int32_t probe_period;    /* while autoregressive, draft one chain every N cycles, default 16 */
    eng_unit unit;           /* default CPU */
} eng_adaptive_chain_params;

/* SpecInfer static tree: every node at depth d - 1 gets its top widths[d-1] children. */
typedef struct eng_specinfer_params {
    int32_t widths[ENG_POL_MAX_LIST];
    int32_t n_widths; /* default {1,1,3,1,1,1,1,1} */
    eng_unit unit;    /* default NPU */
} eng_specinfer_params;

/* EAGLE-2 dynamic tree. */
typedef struct eng_eagle2_params {
    int32_t top_k;        /* default 10 */
    int32_t depth;        /* draft steps after the root's, default 6 */
    int32_t total_tokens; /* nodes verified (root excluded), default 60 */
    eng_unit unit;        /* default NPU */
} eng_eagle2_params;

/* OPT-Tree: beam drafting with the expected-acceptance stopping rule. */
typedef struct eng_opt_tree_params {
    int32_t nodes;     /* n, default 60 */
    double delta;      /* δ, default 0.5 */
    int32_t max_depth; /* default 10 */
    eng_unit unit;     /* default NPU */
} eng_opt_tree_params;

/* Sequoia: static tree from a DP over the positional acceptance vector and the
 * verification latency per tree size (through calibrate). */
typedef struct eng_sequoia_params {
    int32_t max_nodes; /* largest tree considered, root included, default 64 */
    int32_t max_depth; /* deepest level considered, default 8 */
    double prior[ENG_POL_MAX_LIST]; /* p[k] used until calibrate() provides one */
    int32_t n_prior;
    eng_unit unit; /* default NPU */
} eng_sequoia_params;

extern const eng_param_desc eng_adaptive_chain_param_table[];
int eng_adaptive_chain_create(const void *params, eng_policy *out);
extern const eng_param_desc eng_specinfer_param_table[];
int eng_specinfer_create(const void *params, eng_policy *out);
extern const eng_param_desc eng_eagle2_param_table[];
int eng_eagle2_create(const void *params, eng_policy *out);
extern const eng_param_desc eng_opt_tree_param_table[];
int eng_opt_tree_create(const void *params, eng_policy *out);
extern const eng_param_desc eng_sequoia_param_table[];
int eng_sequoia_create(const void *params, eng_policy *out);

/* Introspection for tests and tools.  adaptive_chain: the k of the next cycle
 * and whether it runs autoregressively.  sequoia: the chosen tree size (rows,
 * root included) and depth (levels below the root). */
int32_t eng_adaptive_chain_k(const eng_policy *p, int32_t *autoregressive);
int32_t eng_sequoia_shape(const eng_policy *p, int32_t *depth);
/* Sequoia's DP alone: best expected tokens per cycle (accepted + bonus) of a tree
 * of m nodes (root included) and at most l levels (root = level 1) under the
 * positional acceptance vector p[0..n_p).  scratch: eng_sequoia_dp_bytes(m, l,
 * n_p) bytes.  For tests (differential against exhaustive search) and tools. */
size_t eng_sequoia_dp_bytes(int32_t m, int32_t l, int32_t n_p);
double eng_sequoia_dp(const double *p, int32_t n_p, int32_t m, int32_t l, void *scratch);

/* ---- Lever (pol_lever.c, eng_costmodel.h, eng_prune.h) ---- */

/* Tree construction of Lever; the others reuse the named policy's build
 * (ablation of the construction alone). Enum only grows. */
typedef enum eng_lever_drafting {
    ENG_LEVER_GAIN_COST = 0,
    ENG_LEVER_SPECINFER = 1,
    ENG_LEVER_OPT_TREE = 2,
    ENG_LEVER_EAGLE2 = 3,
    ENG_LEVER_SEQUOIA = 4
} eng_lever_drafting;

/* Where gain-cost drafting expands nodes. */
typedef enum eng_lever_schedule {
    ENG_LEVER_HYBRID = 0, /* single-node CPU calls; NPU batches once b_min nodes are ready */
    ENG_LEVER_CPU = 1,    /* every expansion one CPU call */
    ENG_LEVER_NPU = 2     /* every expansion one single-node NPU call */
} eng_lever_schedule;

/* Projection placement; maps onto eng_proj_mode. */
typedef enum eng_lever_projection {
    ENG_LEVER_PROJ_CPU_ON_DEMAND = 0, /* ENG_PROJ_ONDEMAND_CPU */
    ENG_LEVER_PROJ_NPU_EAGER = 1,     /* ENG_PROJ_EAGER_NPU */
    ENG_LEVER_PROJ_NPU_ON_DEMAND = 2  /* ENG_PROJ_ONDEMAND_NPU */
} eng_lever_projection;

#define ENG_LEVER_MAX_NODES 256 /* largest gain-cost tree, root included */

typedef struct eng_lever_params {
    int32_t drafting;       /* eng_lever_drafting, default gain_cost */
    int32_t pruning;        /* eng_prune_mode, default full */
    int32_t draft_schedule; /* eng_lever_schedule, default hybrid */
    int32_t projection;     /* eng_lever_projection, default cpu_on_demand */
    int32_t n_max;          /* safety cap on draft nodes (root excluded), default 64 */
    int32_t d_max;          /* safety cap on depth, default 10 */
    double eta;             /* EMA rate of the reliability factor beta, default 0.1 */
    double beta_init;       /* beta before any feedback, default 1 */
    int32_t b_min, b_max;   /* hybrid NPU batch: at least / at most, default 4 / 16 */
    double tau, theta;      /* pruning temperature and threshold, default 1 / 0.1 */
    int32_t d0, m0;         /* near-root coverage, default 1 / 2 */
    int32_t n_min, l_min;   /* rejection of over-aggressive pruning, default 4 / 2 */
    int32_t exit_index;     /* recorded exit layer used by the predictor, default 0 */
    double cost_ema;        /* moving-average rate of the latency estimators, default 0.2 */
    double unseen_penalty;  /* unseen-shape penalty of the verification profile, default 0.1 */
} eng_lever_params;

extern const eng_param_desc eng_lever_param_table[];
int eng_lever_create(const void *params, eng_policy *out);

/* Marginal latency of inserting a node into a tree of `rows` verification rows
 * (root included) and `leaves` leaves (Eq. 5's Delta C): verify(rows + 1,
 * leaves') - verify(rows, leaves) with leaves' = leaves when the new node's
 * parent is a leaf and leaves + 1 otherwise, plus child_draft_ms (the draft
 * cost of expanding the node, 0 when it will not be expanded).  Clamped to at
 * least ENG_LEVER_MIN_DELTA_MS; verify() is eng_costmodel_verify of cm. */
#define ENG_LEVER_MIN_DELTA_MS 1e-3
double eng_lever_delta_cost(const eng_costmodel *cm, int32_t rows, int32_t leaves,
                            int32_t parent_is_leaf, double child_draft_ms);
/* Eq. 6: 1 when a node of reach probability `reach` and marginal cost `delta_ms`
 * must not be inserted into a tree of gain g and cost c_ms (reach / delta <=
 * g / c). */
int32_t eng_lever_stop(double reach, double delta_ms, double g, double c_ms);

/* Introspection: current reliability factor beta, exit layer in use (-1 when
 * pruning is off or the runtime named none) and the latency estimators
 * (borrowed). */
double eng_lever_beta(const eng_policy *p);
int32_t eng_lever_exit_layer(const eng_policy *p);
const eng_costmodel *eng_lever_costmodel(const eng_policy *p);

/* ---- EdgeLLM (pol_edgellm.c, rules in ALGORITHMS.md) ---- */

/* How the drafted branches are verified. Enum only grows. */
typedef enum eng_edgellm_verify {
    ENG_EDGELLM_BRANCHES = 0, /* batched multi-branch: one sequence per branch */
    ENG_EDGELLM_TREE = 1      /* tree attention: one row per node (what-if) */
} eng_edgellm_verify;

#define ENG_EDGELLM_MAX_BRANCHES 64

typedef struct eng_edgellm_params {
    int32_t navigation;    /* bool: confidence-paced branches with forking (else one branch) */
    int32_t fallback;      /* bool: verify when tree confidence < alpha (else at `budget` tokens) */
    int32_t provisional;   /* bool: draft the most confident branch during verification */
    int32_t budget;        /* draft tokens per tree without fallback; the pacer's initial M */
    int32_t max_tokens;    /* safety cap on draft tokens per tree with fallback */
    int32_t max_branches;  /* branches and fork candidates kept */
    double alpha0;         /* initial fallback threshold */
    double alpha_decay;    /* alpha multiplier after a fully correct branch */
    int32_t prov_max;      /* provisional tokens per verification at most */
    int32_t gate;          /* bool: provisional drafting only while the target loads */
    int32_t verify;        /* eng_edgellm_verify */
    eng_unit unit;         /* draft unit */
} eng_edgellm_params;

extern const eng_param_desc eng_edgellm_param_table[];
int eng_edgellm_create(const void *params, eng_policy *out);

/* Introspection for tests and tools: current threshold alpha, the pacer's M,
 * and the draft tokens carried into the next tree by provisional drafting. */
double eng_edgellm_alpha(const eng_policy *p);
double eng_edgellm_pace_m(const eng_policy *p);
int32_t eng_edgellm_carried(const eng_policy *p);

/* Eq. 3 alone: the next alpha after a verification whose best-matching branch
 * had n_correct of n_all draft tokens accepted. */
double eng_edgellm_alpha_update(double alpha, double decay, int32_t n_correct, int32_t n_all);

/* The pacer alone (Eq. 1-2): among n branches of cumulative confidence conf[i]
 * and own length len[i], the index of the largest deficit m * conf[i] / sum(conf)
 * - len[i] (the lowest index on ties); -1 when n < 1. */
int32_t eng_edgellm_pace(const double *conf, const int32_t *len, int32_t n, double m);

/* ---- Lyanna (pol_lyanna.c) ---- */

/* Lyanna: token-info sampling tree over a hidden-state draft (Algorithm 1),
 * pruned to a verification budget; re-sampling after a rejection from the
 * hidden states already computed (Algorithm 2), verified fused into the next
 * cycle or on its own; one-pass draft LM head.  Rules and modelling in
 * pol_lyanna.c's header comment. */
typedef struct eng_lyanna_params {
    int32_t n;                /* N: draft steps (hidden states) per cycle, default 7 */
    int32_t k;                /* branch number: children per frontier node and frontier
                                 width, default 2 */
    int32_t b;                /* B: verification budget, draft nodes kept (root excluded)
                                 per tree, default 16 */
    int32_t r;                /* re-sample only when more than r draft steps remain, default 1 */
    int32_t resampling;       /* bool, default 1 */
    int32_t fusion;           /* bool: re-sampled subtree verified inside the next cycle's
                                 tree (1) or in a verification of its own (0), default 1 */
    int32_t one_pass_head;    /* bool: N body-only forwards + one LM-head pass, default 1 */
    double resample_penalty;  /* [0, 1]: replay-only quality loss of re-sampled candidate
                                 sets (eng_draft_oracle.resample), default 0.2 */
    eng_unit unit;            /* draft unit, default NPU */
} eng_lyanna_params;

extern const eng_param_desc eng_lyanna_param_table[];
int eng_lyanna_create(const void *params, eng_policy *out);

/* What the last build did (kind) and what observe decided (pending). Enum only
 * grows. */
typedef enum eng_lyanna_kind {
    ENG_LYANNA_DRAFT = 0,     /* a token-info tree from N draft steps */
    ENG_LYANNA_FUSED = 1,     /* the same, merged with the re-sampled subtree */
    ENG_LYANNA_RESAMPLED = 2  /* the re-sampled subtree alone: no draft forward */
} eng_lyanna_kind;

typedef struct eng_lyanna_cycle {
    int32_t kind;           /* eng_lyanna_kind of the last build */
    int32_t steps;          /* draft steps run (forwards over the hidden-state chain) */
    int32_t draft_nodes;    /* token-info tree after budget pruning (root excluded) */
    int32_t resample_steps; /* depth of the re-sampled subtree, 0 = none */
    int32_t resample_nodes; /* re-sampled subtree after pruning (root excluded), shared
                               nodes included */
    int32_t extra_rows;     /* nodes the re-sampled subtree added to the tree */
    int32_t pending;        /* steps of the subtree owed to the next build (after
                               observe), 0 = none */
} eng_lyanna_cycle;

/* Introspection for tests and tools: the last cycle of a lyanna policy.
 * Returns ENG_OK, or ENG_E_ARG when p is not a lyanna policy. */
int eng_lyanna_last(const eng_policy *p, eng_lyanna_cycle *out);

#endif
