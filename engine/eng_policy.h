/*
 * eng_policy.h -- the speculative-decoding policy plug-in interface.
 *
 * A policy decides, once per cycle, which token tree to draft (build), optionally
 * which of its nodes to verify past an exit layer (prune) and where the output
 * projection runs (plan), and learns from what happened (observe).  It never sees
 * a clock: latencies reach it only as measured numbers in eng_feedback, exactly as
 * on a phone.  A policy is one file: a params struct, its eng_param_desc table, a
 * create function and an eng_policy_i; registration is one line in eng_policy.c.
 *
 * Hooks (modelled on llama.cpp's llama_sampler_i):
 *   name     required  stable identifier, also the Lua constructor name
 *   reset    optional  a new prompt starts (per-prompt state)
 *   build    required  draft the tree from the root already in t
 *   prune    optional  keep mask for verification rows (default: keep all)
 *   plan     optional  verification plan (default: all kept rows, eager NPU head)
 *   observe  optional  feedback after the cycle
 *   destroy  optional  free self (created by the descriptor's create)
 */
#ifndef ENG_POLICY_H
#define ENG_POLICY_H

#include "eng_oracle.h"
#include "eng_accept.h"
#include "eng_param.h"

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
} eng_feedback;

typedef struct eng_policy_i {
    const char *name;
    void (*reset)(void *self);
    int (*build)(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim);
    int (*prune)(void *self, const eng_tree *t, eng_target_oracle *target, uint8_t *keep);
    void (*plan)(void *self, const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan);
    void (*observe)(void *self, const eng_feedback *fb);
    void (*destroy)(void *self);
} eng_policy_i;

typedef struct eng_policy {
    const eng_policy_i *i;
    void *self; /* owned; freed by i->destroy */
} eng_policy;

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

/* Registered policies, in registration order (never reordered). */
const eng_policy_desc *eng_policy_registry(int32_t *count);
const eng_policy_desc *eng_policy_lookup(const char *name);

/* Default plan for a (possibly pruned) tree: rows = kept nodes + root, eager head. */
void eng_plan_default(const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan);

void eng_policy_destroy(eng_policy *p); /* NULL-safe */

/* ---- policies of this issue (one file each) ---- */

/* Flash-AR: no drafting; each cycle verifies the root alone (one token). */
typedef struct eng_flash_ar_params {
    int32_t unused_; /* no parameters */
} eng_flash_ar_params;

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

#endif
