/*
 * eng_policy.h -- the speculative-decoding policy plug-in interface.
 *
 * A policy decides, once per cycle, which token tree to draft (build), optionally
 * which of its nodes to verify past an exit layer (prune) and where the output
 * projection runs (plan), and learns from what happened (observe).  It never sees
 * a clock: latencies reach it only as measured numbers in eng_feedback, exactly as
 * on a phone.  A policy is one file engine/pol_NAME.c: a params struct, its
 * eng_param_desc table, a create function, an eng_policy_i and its registry row
 * `const eng_policy_desc eng_policy_NAME`; registering it is one line
 * ENG_POLICY(NAME) in engine/policies.def, which also adds the file to the
 * build.  A policy whose params struct or helpers other code needs publishes
 * them in its own header, engine/pol_NAME.h (optional): this header is the
 * interface alone.
 *
 * Hooks (eng_policy_i below, modelled on llama.cpp's llama_sampler_i): each is
 * marked required or optional, and an optional one's default is what the
 * runtime does when the hook is NULL.  A runtime calls them through the
 * eng_policy_* wrappers at the end of this header, which apply those defaults
 * in one place.
 *
 * One cycle.  A runtime calls the hooks in this order (sim/replay does,
 * and examples/engine/driver.c is a minimal runtime that does):
 *   create                           once per policy instance (the descriptor's)
 *   eng_policy_calibrate(prof)       once, before the first cycle
 *   eng_policy_reset                 at the start of every prompt
 *   per cycle:
 *     eng_tree_reset(t, last emitted token)
 *     eng_policy_build(t, draft, lim)       the tree; the draft oracle runs inside
 *     eng_policy_prune(t, target, keep, &mask)
 *                                           keep[] starts all 1; the target
 *                                           oracle's exit scores are available
 *                                           here; mask = keep, or NULL (all)
 *     eng_policy_plan(t, mask, plan)
 *     eng_policy_provisional(t, draft, lim) nodes appended now are not verified
 *                                           this cycle
 *     (the target verifies the kept rows; acceptance walks the tree)
 *     eng_policy_observe(fb)                outcome and measured latencies
 *   eng_policy_destroy               once, at the end
 * A hook that returns an error ends the generation; eng_policy_error says why.
 */
#ifndef ENG_POLICY_H
#define ENG_POLICY_H

#include "eng_oracle.h"
#include "eng_accept.h"
#include "eng_param.h"

/* Where the target's output projection (LM head) runs. Enum only grows. */
typedef enum eng_proj_mode {
    ENG_PROJ_EAGER_NPU = 0,    /* all verified rows, inside the NPU graph */
    ENG_PROJ_ONDEMAND_CPU = 1, /* accepted path + 1 rows, on the CPU */
    ENG_PROJ_ONDEMAND_NPU = 2  /* accepted path + 1 rows, one NPU call each */
} eng_proj_mode;

typedef struct eng_build_limits {
    int32_t max_nodes; /* tree capacity including the root */
    int32_t max_depth; /* deepest node the caller can serve */
    int32_t remaining; /* tokens still to generate (>= 1) */
} eng_build_limits;

/* Every tree policy caps its tree at lim->max_nodes (and ENG_POL_MAX_NODES),
 * lim->max_depth and lim->remaining - 1 levels.  Level-wise policies draft one
 * level of the tree as one batched oracle call (rows = nodes expanded). */
#define ENG_POL_MAX_NODES 1024 /* scratch size of a policy: largest tree it drafts */
#define ENG_POL_MAX_LIST 16    /* longest list parameter of a built-in policy */

typedef struct eng_verify_plan {
    int32_t rows;            /* rows through the transformer layers (root included) */
    int32_t leaves;          /* leaves of the verified tree (temporary sequences) */
    int32_t exit_layer;      /* layer after which only kept rows continue, -1 none */
    int32_t rows_after_exit; /* rows past exit_layer (== rows when no pruning) */
    eng_proj_mode proj;
    /* provisional drafting may run only while the target is not computing
     * (EdgeLLM's pipeline rule), 0 = any time */
    int32_t overlap_gate;
} eng_verify_plan;

/* What a runtime measured for one cycle, handed to observe(). */
typedef struct eng_feedback {
    const eng_tree *tree;
    const eng_token *g;  /* per-node target tokens as verified */
    const uint8_t *keep; /* NULL = all verified */
    eng_outcome outcome;
    eng_verify_plan plan;
    double draft_ms;       /* measured drafting latency of the cycle */
    double verify_ms;      /* measured verification latency */
    int32_t draft_calls;   /* oracle expand calls made */
    const double *call_ms; /* latency of each draft call, in call order
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
    const double *verify_ms; /* latency of verifying an m-row tree (root included) */
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

/* The hooks of a policy; self is the instance its create made.  Hooks that
 * return int return ENG_OK or a negative ENG_E_* code. */
typedef struct eng_policy_i {
    /* required: stable identifier, also the Lua constructor name */
    const char *name;
    /* optional: default nothing.  A new prompt starts (per-prompt state). */
    void (*reset)(void *self);
    /* required: draft the tree from the root already in t, within lim. */
    int (*build)(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim);
    /* optional: default every node is verified (no keep mask).  Clears keep[u]
     * (t->n_nodes entries, all 1 on entry) for the nodes whose rows stop at the
     * exit layer. */
    int (*prune)(void *self, const eng_tree *t, eng_target_oracle *target, uint8_t *keep);
    /* optional: default eng_plan_default (all kept rows, eager NPU head).
     * The verification plan of t under keep (NULL = all nodes). */
    void (*plan)(void *self, const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan);
    /* optional: default nothing.  Feedback after the cycle. */
    void (*observe)(void *self, const eng_feedback *fb);
    /* optional: default nothing to free.  Frees self (made by the descriptor's
     * create). */
    void (*destroy)(void *self);
    /* optional: default nothing to calibrate (ENG_OK, the profile unread).  An
     * offline cost/acceptance profile, given once before the first cycle by the
     * runtime (the replay measures it from the trace and the phone model). */
    int (*calibrate)(void *self, const eng_cost_profile *prof);
    /* optional: default no provisional drafting (ENG_OK, t unchanged).
     * Drafting that overlaps the verification of t (EdgeLLM's provisional
     * generation), called after plan and before the target runs.  Nodes it
     * appends to t are not verified in this cycle; each of its draft calls
     * appends at most one node, in call order (so the runtime can void the
     * nodes of calls it could not run).  lim->max_nodes caps the tree
     * including them (the runtime's memory upper bound). */
    int (*provisional)(void *self, eng_tree *t, eng_draft_oracle *draft,
                       const eng_build_limits *lim);
    /* optional: default NULL (no explanation).  One line describing why the
     * last hook failed (or why plan, observe or reset, which return nothing,
     * went wrong), NULL if nothing did; read by the runtime after the cycle's
     * hooks. */
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
#define ENG_POLICY_ABI 2
/* The oldest ABI a runtime still loads: an ABI 1 descriptor is this one's up
 * to needs_draft (the fields after it were added by ABI 2); a runtime reads
 * those fields of it as zero (no tree size stated, not outcome-only). */
#define ENG_POLICY_ABI_MIN 1
#define ENG_PLUGIN_ABI_SYMBOL "flashspec_policy_abi"
#define ENG_PLUGIN_DESC_SYMBOL "flashspec_policy"
#define ENG_PLUGIN_DECLARE(...)                                                                    \
    const int32_t flashspec_policy_abi = ENG_POLICY_ABI;                                           \
    const eng_policy_desc flashspec_policy = __VA_ARGS__

/* How a policy's tree size (nodes of one verified tree, root included) follows
 * from its parameters: what a runtime's generic `tree_nodes` knob sets and
 * what its results report.  Enum only grows; 0 says nothing. */
typedef enum eng_tree_rule {
    ENG_TREE_UNSTATED = 0,  /* the descriptor states no tree size (a plug-in's zeroed
                               fields, an ABI 1 plug-in) */
    ENG_TREE_ONE_ROW = 1,   /* no tree: one row verified per cycle, nodes = 1 */
    ENG_TREE_PLUS_ROOT = 2, /* nodes = param + 1 (the parameter counts drafted
                               tokens, the root is added) */
    ENG_TREE_EQUAL = 3,     /* nodes = param (root included) */
    ENG_TREE_WIDTHS = 4     /* param is an integer list of level widths:
                               nodes = 1 + w1 + w1 w2 + ... + w1 ... wn */
} eng_tree_rule;

/* The tree-size parameter of a descriptor.  param names an ENG_PARAM_INT
 * row (an ENG_PARAM_INT_LIST row for ENG_TREE_WIDTHS) of its table.  When
 * unless_off names an ENG_PARAM_BOOL row, a params struct in which that flag
 * is 0 is sized by off_param instead (EdgeLLM: max_tokens caps the tree
 * with its fallback on, budget without). */
typedef struct eng_tree_knob {
    int32_t rule;  /* eng_tree_rule */
    int32_t fixed; /* 1: every tree has this size (while the draft supplies
                      tokens); 0: a cap on a tree the policy sizes per cycle */
    const char *param;
    const char *unless_off; /* NULL: param always */
    const char *off_param;
} eng_tree_knob;

/* One registry row per policy. */
typedef struct eng_policy_desc {
    const char *name;
    const char *doc;              /* one line */
    size_t params_size;           /* bytes of the params struct */
    const eng_param_desc *params; /* NULL-terminated table */
    /* Creates a policy from validated params (borrowed: copied into the
     * policy); out->self is owned by the policy and released by
     * eng_policy_destroy.  Returns ENG_OK, ENG_E_NOMEM, or ENG_E_ARG for NULL
     * arguments or params outside the table's ranges. */
    int (*create)(const void *params, eng_policy *out);
    int32_t needs_draft; /* 1 when the policy calls the draft oracle */
    /* --- ABI 2 --- */
    /* 1 when the observe hook reads what the verification accepted (the
     * outcome, the tree, the target's tokens), never what it cost (draft_ms,
     * verify_ms, call_ms, provisional_done): with no calibrate or provisional
     * hook either, such a policy drafts the same trees on any phone, so a
     * runtime may walk a point once and price the walk on several phones.
     * 0 (the default) is always safe. */
    int32_t observes_outcome;
    eng_tree_knob tree; /* {0}: no tree size stated */
} eng_policy_desc;

/* Registered policies (engine/policies.def), in registration order (never
 * reordered): an array of *count descriptors. */
const eng_policy_desc *const *eng_policy_registry(int32_t *count);
const eng_policy_desc *eng_policy_lookup(const char *name);
/* d->observes_outcome (see eng_policy_desc): 1 when d states that its
 * observe hook reads only what the verification accepted; 0 for NULL. */
int eng_policy_observes_outcome(const eng_policy_desc *d);

/* Nodes of one verified tree, root included, added to a tree-size
 * parameter's value under rule (ENG_TREE_PLUS_ROOT 1, ENG_TREE_EQUAL 0);
 * -1 for a rule without a scalar parameter. */
int32_t eng_tree_rule_offset(int32_t rule);
/* The parameter (a row of d->params) that sizes d's trees for params, whose
 * bool flag unless_off is read there; NULL for params == NULL with such a
 * flag.  NULL when d states no tree-size parameter (unstated, one row, or a
 * name its table lacks or of the wrong type). */
const eng_param_desc *eng_tree_param(const eng_policy_desc *d, const void *params);
/* The same with the flag given (flag_on: 1 or 0) rather than read. */
const eng_param_desc *eng_tree_param_flag(const eng_policy_desc *d, int flag_on);
/* Nodes of a tree sized by value(s) v[0..n) of d's tree parameter under
 * d->tree.rule: 1 for ENG_TREE_ONE_ROW; NAN when unstated, n < 1, or (widths)
 * a width below 1. */
double eng_tree_nodes_of(const eng_policy_desc *d, const double *v, int32_t n);
/* Nodes of the trees d drafts with params (its tree parameter read there):
 * NAN when d states none. */
double eng_tree_nodes(const eng_policy_desc *d, const void *params);

/* Default plan for a (possibly pruned) tree: rows = kept nodes + root, eager head. */
void eng_plan_default(const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan);

/* ---- calling the hooks ----
 * p is a created policy (p->i set).  Each wrapper calls the hook, or does
 * what the hook's comment in eng_policy_i gives as its default when it is
 * NULL.  Static inline: a runtime pays one test of the hook pointer. */

/* destroy, then p = {NULL, NULL}.  NULL-safe. */
void eng_policy_destroy(eng_policy *p);

/* 1 when the policy takes a cost profile (it has calibrate): a runtime for
 * which measuring the profile is costly may skip it when this is 0. */
static inline int eng_policy_calibrates(const eng_policy *p)
{
    return p->i->calibrate != NULL;
}

/* calibrate; ENG_OK without a hook. */
static inline int eng_policy_calibrate(const eng_policy *p, const eng_cost_profile *prof)
{
    return p->i->calibrate ? p->i->calibrate(p->self, prof) : ENG_OK;
}

/* reset; nothing without a hook. */
static inline void eng_policy_reset(const eng_policy *p)
{
    if (p->i->reset) p->i->reset(p->self);
}

/* build; ENG_E_ARG for a policy without one (a broken descriptor). */
static inline int eng_policy_build(const eng_policy *p, eng_tree *t, eng_draft_oracle *draft,
                                   const eng_build_limits *lim)
{
    return p->i->build ? p->i->build(p->self, t, draft, lim) : ENG_E_ARG;
}

/* prune over keep (t->n_nodes bytes of the caller's), which it first sets to
 * all 1.  *mask is the verification mask to hand on (to plan, the target
 * oracle, acceptance and observe): keep, or NULL -- every node verified --
 * when the policy has no prune hook (keep then untouched).  Returns the hook's
 * code (*mask is keep even on an error), ENG_OK without a hook. */
static inline int eng_policy_prune(const eng_policy *p, const eng_tree *t,
                                   eng_target_oracle *target, uint8_t *keep, uint8_t **mask)
{
    *mask = NULL;
    if (!p->i->prune) return ENG_OK;
    for (int32_t u = 0; u < t->n_nodes; u++)
        keep[u] = 1;
    *mask = keep;
    return p->i->prune(p->self, t, target, keep);
}

/* plan; eng_plan_default without a hook. */
static inline void eng_policy_plan(const eng_policy *p, const eng_tree *t, const uint8_t *keep,
                                   eng_verify_plan *plan)
{
    if (p->i->plan)
        p->i->plan(p->self, t, keep, plan);
    else
        eng_plan_default(t, keep, plan);
}

/* provisional; ENG_OK with t unchanged (no drafting) without a hook. */
static inline int eng_policy_provisional(const eng_policy *p, eng_tree *t, eng_draft_oracle *draft,
                                         const eng_build_limits *lim)
{
    return p->i->provisional ? p->i->provisional(p->self, t, draft, lim) : ENG_OK;
}

/* observe; nothing without a hook. */
static inline void eng_policy_observe(const eng_policy *p, const eng_feedback *fb)
{
    if (p->i->observe) p->i->observe(p->self, fb);
}

/* error: why the last hook failed, NULL if nothing did or without a hook. */
static inline const char *eng_policy_error(const eng_policy *p)
{
    return p->i->error ? p->i->error(p->self) : NULL;
}

#endif
