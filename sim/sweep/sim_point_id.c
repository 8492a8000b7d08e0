/*
 * sim_point_id.c -- the identity of a script's point.  See sim_point_id.h.
 */
#include "sim/sweep/sim_point_id.h"

#include <string.h>

sim_id sim_point_ident_hash(const sim_point_ident *x, sim_id *seed_id)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_str(&h, "policy", x->policy->name);
    sim_id_hasher_params(&h, "policy", x->policy->params, x->policy_params);
    /* a plug-in's code is not in the build key: its file's digest is here */
    for (int32_t i = 0; i < x->n_plugin_digests; i++)
        sim_id_hasher_str(&h, "policy.plugin", x->plugin_digests[i]);
    sim_id_hasher_str(&h, "device", x->device);
    sim_id_hasher_params(&h, "device", sim_device_keys(), x->dev);
    sim_id_hasher_str(&h, "target", x->target);
    sim_id_hasher_params(&h, "target", sim_model_keys(), x->tgt);
    sim_id_hasher_str(&h, "draft", x->draft);
    if (x->drf && strcmp(x->draft, "none") != 0)
        sim_id_hasher_params(&h, "draft", sim_model_keys(), x->drf);
    sim_id_hasher_u64(&h, "trace_checksum", x->trace_checksum);
    sim_id_hasher_params(&h, "point", x->point_keys, x->point_values);
    if (x->prompt_offset)
        sim_id_hasher_u64(&h, "point.prompt_offset", (uint64_t)x->prompt_offset);
    *seed_id = sim_id_hasher_final(&h);
    /* the standing variants price the point's own cycles (the model band):
     * they name the result, never its draws */
    for (int32_t i = 0; i < x->n_variants; i++) {
        sim_id_hasher_str(&h, "device.variant", x->variant_names[i]);
        sim_id_hasher_params(&h, "device.variant", sim_device_keys(), &x->variants[i]);
    }
    /* so does the trace's acceptance bracket */
    for (int32_t i = 0; i < x->n_bracket; i++)
        sim_id_hasher_u64(&h, "trace.bracket", x->bracket_checksums[i]);
    if (x->synth_tokens) sim_id_hasher_u64(&h, "point.synth_tokens", (uint64_t)x->synth_tokens);
    return sim_id_hasher_final(&h);
}

/* ------------------------------------------------------- the point keys */


static const char *const accept_choices[] = {"greedy", "top_p", "sampling", NULL};
static const char *const runtime_choices[] = {"auto", "baseline", "speculative", NULL};

#define PO(f) offsetof(sim_point_opts, f)
static const eng_param_desc point_keys[] = {
    {"dram_fraction", ENG_PARAM_DOUBLE, PO(dram_fraction), 0, 1, 0, NULL, 0, 0, NULL, NULL, 0,
     "share of target layers pinned in DRAM, the first ones (0 = fully flash-backed)"},
    {"max_new_tokens", ENG_PARAM_INT, PO(max_new_tokens), 1, 1 << 20, 128, NULL, 0, 0, NULL, NULL,
     0, "tokens generated per prompt (capped by the trace's reference length)"},
    {"seed", ENG_PARAM_INT, PO(seed), 0, INT32_MAX, 1, NULL, 0, 0, NULL, NULL, 0,
     "seed for synthesising unrecorded draft nodes"},
    {"prompts", ENG_PARAM_INT, PO(prompts), 0, 1 << 24, 0, NULL, 0, 0, NULL, NULL, 0,
     "prompts replayed from the trace (0 = all)"},
    {"accept", ENG_PARAM_ENUM, PO(accept), 0, 2, 0, accept_choices, 0, 0, NULL, NULL, 0,
     "acceptance rule: greedy (exact), top_p or sampling (lossy)"},
    {"top_p", ENG_PARAM_DOUBLE, PO(top_p), 1e-6, 1, 0.9, NULL, 0, 0, NULL, NULL, 0,
     "accept = top_p: target probability mass a draft token must lie in"},
    {"temperature", ENG_PARAM_DOUBLE, PO(temperature), 0.01, 100, 1.0, NULL, 0, 0, NULL, NULL, 0,
     "accept = sampling: temperature of target and draft distributions"},
    {"runtime", ENG_PARAM_ENUM, PO(runtime), 0, 2, 0, runtime_choices, 0, 0, NULL, NULL, 0,
     "phone runtime verifying: auto and baseline (every policy on the phone's one runtime), "
     "speculative (every policy on the profile's spec_* alternative, a what-if)"},
    {NULL, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
#undef PO



static const char *const synth_choices[] = {"offset", "drawn", NULL};

#define PX(f) offsetof(sim_point_ext, f)
static const eng_param_desc point_keys_ext[] = {
    {"prompt_offset", ENG_PARAM_INT, PX(prompt_offset), 0, 1 << 24, 0, NULL, 0, 0, NULL, NULL, 0,
     "first trace prompt replayed (0-based): prompts prompt_offset .. prompt_offset + prompts - 1"},
    {"synth_tokens", ENG_PARAM_ENUM, PX(synth_tokens), 0, 1, 0, synth_choices, 0, 0, NULL, NULL, 0,
     "token ids of candidate sets the trace did not record: offset (one uniform draw a set, then a "
     "fixed stride) or drawn (a draw per id); the same distribution of every result"},
    {NULL, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
#undef PX

const eng_param_desc *sim_point_keys(void)
{
    return point_keys;
}

const eng_param_desc *sim_point_keys_ext(void)
{
    return point_keys_ext;
}
