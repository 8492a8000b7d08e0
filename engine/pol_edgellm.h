/*
 * pol_edgellm.h -- EdgeLLM (pol_edgellm.c; EdgeLLM §III, the rules as run in
 * docs/policies.md "`edgellm`"):
 * confidence-paced branches, adaptive fallback, provisional drafting.
 */
#ifndef POL_EDGELLM_H
#define POL_EDGELLM_H

#include "eng_policy.h"

/* How the drafted branches are verified. Enum only grows. */
typedef enum eng_edgellm_verify {
    ENG_EDGELLM_BRANCHES = 0, /* batched multi-branch: one sequence per branch */
    ENG_EDGELLM_TREE = 1      /* tree attention: one row per node (what-if) */
} eng_edgellm_verify;

#define ENG_EDGELLM_MAX_BRANCHES 64

typedef struct eng_edgellm_params {
    int32_t navigation;   /* bool: confidence-paced branches with forking (else one branch) */
    int32_t fallback;     /* bool: verify when tree confidence < alpha (else at `budget` tokens) */
    int32_t provisional;  /* bool: draft the most confident branch during verification */
    int32_t budget;       /* draft tokens per tree without fallback; the pacer's initial M */
    int32_t max_tokens;   /* safety cap on draft tokens per tree with fallback */
    int32_t max_branches; /* branches and fork candidates kept */
    double alpha0;        /* initial fallback threshold */
    double alpha_decay;   /* alpha multiplier after a fully correct branch */
    int32_t prov_max;     /* provisional tokens per verification at most */
    int32_t gate;         /* bool: provisional drafting only while the target loads */
    int32_t verify;       /* eng_edgellm_verify */
    eng_unit unit;        /* draft unit */
} eng_edgellm_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
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

#endif
