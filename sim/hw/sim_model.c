/*
 * sim_model.c -- key table, checks and derived sizes of sim_model (formulas in
 * sim_model.h).  Everything is computed in double: the largest counts (~1e10
 * bytes) are exact in a double's 53-bit mantissa.
 */
#include "sim_model.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

static const char *const kinds[] = {"decoder", "eagle3", NULL};

#define INT(key, field, lo, hi, def, doc)                                                          \
    {                                                                                              \
        key, ENG_PARAM_INT, offsetof(sim_model, field), lo, hi, def, NULL, 0, 0, NULL, NULL, 0,    \
            doc                                                                                    \
    }
#define DBL(key, field, lo, hi, def, doc)                                                          \
    {                                                                                              \
        key, ENG_PARAM_DOUBLE, offsetof(sim_model, field), lo, hi, def, NULL, 0, 0, NULL, NULL, 0, \
            doc                                                                                    \
    }

static const eng_param_desc keys[] = {
    {"name", ENG_PARAM_STRING, offsetof(sim_model, name), 0, 0, 0, NULL, SIM_NAME_CAP, 0, "", NULL,
     0, "profile name (informational)"},
    {"kind", ENG_PARAM_ENUM, offsetof(sim_model, kind), 0, 1, 0, kinds, 0, 0, NULL, NULL, 0,
     "decoder or eagle3"},
    INT("layers", layers, 1, 1024, NAN, "decoder layers"),
    INT("hidden", hidden, 1, 65536, NAN, "hidden size"),
    INT("heads", heads, 1, 1024, NAN, "query heads"),
    INT("kv_heads", kv_heads, 1, 1024, NAN, "key/value heads"),
    INT("head_dim", head_dim, 1, 4096, NAN, "head dimension"),
    INT("ffn", ffn, 1, 1048576, NAN, "FFN intermediate size"),
    INT("vocab", vocab, 1, 4194304, NAN, "LM-head rows (vocabulary)"),
    {"tied_embeddings", ENG_PARAM_BOOL, offsetof(sim_model, tied_embeddings), 0, 1, 0, NULL, 0, 0,
     NULL, NULL, 0, "input embedding shares the LM-head matrix"},
    DBL("weight_bits", weight_bits, 1, 32, NAN, "bits per weight including scales"),
    DBL("kv_bits", kv_bits, 1, 32, 16, "bits per KV-cache element"),
    INT("attn_in_mult", attn_in_mult, 1, 4, 1, "q/k/v input width in hidden sizes"),
    INT("fusion_in", fusion_in, 0, 8, 0, "feature layers fused (EAGLE-3: 3)"),
    DBL("flash_efficiency", flash_efficiency, 1e-3, 4, 1, "residual factor on flash reads"),
    DBL("npu_efficiency", npu_efficiency, 1e-3, 4, 1, "residual factor on NPU work"),
    DBL("cpu_efficiency", cpu_efficiency, 1e-3, 4, 1, "residual factor on CPU work"),
    {NULL, ENG_PARAM_INT, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};

const eng_param_desc *sim_model_keys(void)
{
    return keys;
}

int sim_model_check(const sim_model *m, char *err, size_t errlen)
{
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0) {
        snprintf(err, errlen, "model '%s': kv_heads (%d) must divide heads (%d)", m->name,
                 (int)m->kv_heads, (int)m->heads);
        return -1;
    }
    if (m->kind == SIM_MODEL_EAGLE3 && m->fusion_in < 1) {
        snprintf(err, errlen, "model '%s': an eagle3 draft needs fusion_in >= 1", m->name);
        return -1;
    }
    if (m->kind == SIM_MODEL_DECODER && (m->fusion_in != 0 || m->attn_in_mult != 1)) {
        snprintf(err, errlen, "model '%s': a decoder has fusion_in = 0 and attn_in_mult = 1",
                 m->name);
        return -1;
    }
    if (m->kind != SIM_MODEL_DECODER && m->kind != SIM_MODEL_EAGLE3) {
        snprintf(err, errlen, "model '%s': unknown kind %d", m->name, (int)m->kind);
        return -1;
    }
    return 0;
}

double sim_model_layer_params(const sim_model *m)
{
    double h = m->hidden, a = m->attn_in_mult, qd = (double)m->heads * m->head_dim,
           kvd = (double)m->kv_heads * m->head_dim;
    return a * h * qd + 2.0 * a * h * kvd + qd * h + 3.0 * h * m->ffn;
}

static double bytes_of(const sim_model *m, double params)
{
    return params * m->weight_bits / 8.0;
}

double sim_model_layer_bytes(const sim_model *m)
{
    return bytes_of(m, sim_model_layer_params(m));
}

double sim_model_head_bytes(const sim_model *m)
{
    return bytes_of(m, (double)m->vocab * m->hidden);
}

double sim_model_fusion_bytes(const sim_model *m)
{
    return bytes_of(m, (double)m->fusion_in * m->hidden * m->hidden);
}

double sim_model_weight_bytes(const sim_model *m)
{
    return m->layers * sim_model_layer_bytes(m) + sim_model_fusion_bytes(m) +
           sim_model_head_bytes(m);
}

double sim_model_kv_layer_bytes(const sim_model *m)
{
    return 2.0 * m->kv_heads * m->head_dim * m->kv_bits / 8.0;
}

double sim_model_kv_token_bytes(const sim_model *m)
{
    return m->layers * sim_model_kv_layer_bytes(m);
}
