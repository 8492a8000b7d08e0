/*
 * sim_model.h -- a transformer (target or draft) as the hardware model sees it.
 *
 * Architecture fields come straight from a public model config; byte counts are
 * derived here, never written in a profile:
 *   params per decoder layer = q (a*h x H*d) + k, v (a*h x G*d each) + o (H*d x h)
 *                              + 3 FFN matrices (h x f each)
 *     with h = hidden, H = heads, G = kv_heads, d = head_dim, f = ffn and
 *     a = attn_in_mult (1; 2 for an EAGLE-3 layer, whose q/k/v read the token
 *     embedding concatenated with the fused feature).  Norms and biases are
 *     below 0.01% and ignored.
 *   fusion params  = fusion_in*h x h (EAGLE-3 fuses 3 target feature layers)
 *   LM head params = vocab x h.  With tied embeddings the input embedding is the
 *     same matrix.  An untied input embedding is only ever read one row per token
 *     (h * weight_bits/8, a few KB), so it stays in flash and costs nothing here.
 *   bytes = params * weight_bits / 8 (Q4_0: 4.5 bits, 18 bytes per 32 weights)
 *   KV bytes per token = 2 (K and V) * layers * G * d * kv_bits / 8
 *
 * Residual factors (flash_efficiency, npu_efficiency, cpu_efficiency) divide the
 * structural time of this model's work on that unit: 1 = the device-level model
 * predicts it exactly; a profile derives them from measurements and says how.
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include "sim_device.h"

typedef enum sim_model_kind {
    SIM_MODEL_DECODER = 0, /* ordinary decoder-only LM */
    SIM_MODEL_EAGLE3 = 1   /* EAGLE-3 draft head: fusion + decoder layer(s) + own LM head */
} sim_model_kind;

typedef struct sim_model {
    char name[SIM_NAME_CAP];
    int32_t kind;            /* sim_model_kind */
    int32_t layers;          /* decoder layers, [1, 1024] */
    int32_t hidden;          /* h */
    int32_t heads;           /* H, query heads */
    int32_t kv_heads;        /* G, <= heads */
    int32_t head_dim;        /* d */
    int32_t ffn;             /* f, FFN intermediate size */
    int32_t vocab;           /* LM-head rows */
    int32_t tied_embeddings; /* bool */
    double weight_bits;      /* bits per weight incl. scales, [1, 32] */
    double kv_bits;          /* bits per KV element, [1, 32] */
    int32_t attn_in_mult;    /* a, [1, 4] */
    int32_t fusion_in;       /* feature layers fused, 0 = none, [0, 8] */
    double flash_efficiency; /* residual on flash reads, (0, 4] */
    double npu_efficiency;   /* residual on NPU work, (0, 4] */
    double cpu_efficiency;   /* residual on CPU work, (0, 4] */
} sim_model;

/* NULL-terminated key table (static). */
const eng_param_desc *sim_model_keys(void);

/* Semantic checks (kv_heads divides heads, EAGLE-3 has fusion_in > 0, ...).
 * Returns 0, or -1 with a one-line message in err. */
int sim_model_check(const sim_model *m, char *err, size_t errlen);

double sim_model_layer_params(const sim_model *m);
double sim_model_layer_bytes(const sim_model *m);
double sim_model_head_bytes(const sim_model *m);
double sim_model_fusion_bytes(const sim_model *m);
/* All weights a DRAM-resident copy holds: layers + fusion + LM head. */
double sim_model_weight_bytes(const sim_model *m);
/* KV bytes of one token in one layer, and in all layers. */
double sim_model_kv_layer_bytes(const sim_model *m);
double sim_model_kv_token_bytes(const sim_model *m);

#endif
