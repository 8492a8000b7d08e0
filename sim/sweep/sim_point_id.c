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
