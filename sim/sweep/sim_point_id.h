/*
 * sim_point_id.h -- the identity of a script's point (the point id of the
 * resume store, sim_sweep_store.h, and the seed id its replay seed derives
 * from, sim_id_seed): a hash of the validated values the point is made of,
 * never of how a script spelled them.
 */
#ifndef FS_SWEEP_SIM_POINT_ID_H
#define FS_SWEEP_SIM_POINT_ID_H

#include <stdint.h>

#include "eng_param.h"
#include "eng_policy.h"
#include "sim/hw/sim_device.h"
#include "sim/hw/sim_model.h"
#include "sim/sim_id.h"

/* The options of a point: the keys of flashspec.run / flashspec.sweep beside
 * its objects, checked against sim_point_keys() (their ranges, defaults and
 * docs); every one enters the point id. */
typedef struct sim_point_opts {
    double dram_fraction;
    int32_t max_new_tokens, seed, prompts;
    int32_t accept; /* sim_accept_rule */
    double top_p, temperature;
    int32_t runtime; /* sim_point_runtime */
} sim_point_opts;
const eng_param_desc *sim_point_keys(void);

/* Point keys that enter the point id only when they differ from their
 * default, so that adding one leaves every earlier point's id -- and so its
 * replay seed and resume record -- as it was. */
typedef struct sim_point_ext {
    int32_t prompt_offset;
    int32_t synth_tokens; /* 0 offset, 1 drawn (sim_point.synth_drawn) */
} sim_point_ext;
const eng_param_desc *sim_point_keys_ext(void);

/* What a point's identity is made of (all borrowed). */
typedef struct sim_point_ident {
    const eng_policy_desc *policy; /* its name and key table */
    const void *policy_params;     /* the validated values of policy->params */
    const char *const *plugin_digests; /* a plug-in policy's file digests (its code) */
    int32_t n_plugin_digests;
    const char *device; /* the profiles by name and by every value */
    const sim_device *dev;
    const char *target;
    const sim_model *tgt;
    const char *draft;   /* "none" without one (drf is then not hashed) */
    const sim_model *drf; /* NULL: none */
    uint64_t trace_checksum;
    const eng_param_desc *point_keys; /* the point's own keys and their values */
    const void *point_values;
    int32_t prompt_offset; /* 0: not hashed */
    /* the device's standing variants and the trace's acceptance bracket:
     * they name the result, never its draws */
    int32_t n_variants;
    const char *const *variant_names;
    const sim_device *variants;
    int32_t n_bracket;
    const uint64_t *bracket_checksums;
    int32_t synth_tokens; /* 0: not hashed; else in the id, not in the seed id */
} sim_point_ident;

/* The point's id: policy (name, values, plug-in digests), profiles (name and
 * values; the draft's values only when it is not "none"), trace checksum,
 * point keys, prompt offset, then the variants (name and values), the
 * bracket's checksums and synth_tokens.  *seed_id (not NULL) is the same hash
 * as it stands before the variants: what the point draws from. */
sim_id sim_point_ident_hash(const sim_point_ident *x, sim_id *seed_id);

#endif
