/*
 * eng_costmodel.c -- online draft and verification latency estimators (see
 * eng_costmodel.h for the estimation rules and their costs).
 *
 * Invariants: a value is meaningful only where its seen bit is set; the seen
 * counters equal the number of set bits, so "the table is empty" is O(1).
 */
#include "eng_costmodel.h"

#include <math.h>
#include <string.h>

#define VI(r, l) ((size_t)((r)-1) * ENG_CM_MAX_LEAVES + (size_t)((l)-1))

void eng_costmodel_default_params(eng_costmodel_params *p)
{
    p->ema = 0.2;
    p->penalty = 0.10;
    p->prior_verify_ms_per_row = 1.0;
    p->prior_draft_ms = 1.0;
}

void eng_costmodel_init(eng_costmodel *cm, const eng_costmodel_params *p)
{
    memset(cm, 0, sizeof *cm);
    if (p)
        cm->p = *p;
    else
        eng_costmodel_default_params(&cm->p);
}

static int ok_ms(double ms)
{
    return isfinite(ms) && ms >= 0.0;
}

void eng_costmodel_seed_verify(eng_costmodel *cm, int32_t rows, int32_t leaves, double ms)
{
    if (rows < 1 || rows > ENG_CM_MAX_ROWS || leaves < 1 || leaves > ENG_CM_MAX_LEAVES ||
        !ok_ms(ms))
        return;
    size_t i = VI(rows, leaves);
    cm->n_verify_seen += !cm->verify_seen[i];
    cm->verify_seen[i] = 1;
    cm->verify_ms[i] = ms;
}

void eng_costmodel_seed_cpu(eng_costmodel *cm, double node_ms)
{
    if (!ok_ms(node_ms)) return;
    cm->cpu_node_ms = node_ms;
    cm->cpu_seen = 1;
}

void eng_costmodel_seed_npu(eng_costmodel *cm, int32_t batch, double call_ms)
{
    if (batch < 1 || batch > ENG_CM_MAX_BATCH || !ok_ms(call_ms)) return;
    cm->n_batch_seen += !cm->npu_seen[batch - 1];
    cm->npu_seen[batch - 1] = 1;
    cm->npu_ms[batch - 1] = call_ms;
}

static double ema(const eng_costmodel *cm, double v, double ms)
{
    return (1.0 - cm->p.ema) * v + cm->p.ema * ms;
}

void eng_costmodel_observe_verify(eng_costmodel *cm, int32_t rows, int32_t leaves, double ms)
{
    if (rows < 1 || rows > ENG_CM_MAX_ROWS || leaves < 1 || leaves > ENG_CM_MAX_LEAVES ||
        !ok_ms(ms))
        return;
    size_t i = VI(rows, leaves);
    if (cm->verify_seen[i])
        cm->verify_ms[i] = ema(cm, cm->verify_ms[i], ms);
    else
        eng_costmodel_seed_verify(cm, rows, leaves, ms);
}

void eng_costmodel_observe_draft(eng_costmodel *cm, int32_t npu, int32_t rows, double call_ms)
{
    if (rows < 1 || !ok_ms(call_ms)) return;
    if (!npu) {
        double node = call_ms / rows;
        if (cm->cpu_seen)
            cm->cpu_node_ms = ema(cm, cm->cpu_node_ms, node);
        else
            eng_costmodel_seed_cpu(cm, node);
        return;
    }
    if (rows > ENG_CM_MAX_BATCH) return;
    if (cm->npu_seen[rows - 1])
        cm->npu_ms[rows - 1] = ema(cm, cm->npu_ms[rows - 1], call_ms);
    else
        eng_costmodel_seed_npu(cm, rows, call_ms);
}

/* Line estimate at position x of a line of n entries (value at i: v[i * stride],
 * seen at s[i * stride], positions 1-based): interpolation between the nearest
 * seen neighbours, else the nearer one.  Returns -1 when the line is empty. */
static double line_est(const double *v, const uint8_t *s, size_t stride, int32_t n, int32_t x)
{
    int32_t lo = 0, hi = 0;
    for (int32_t i = x - 1; i >= 1 && !lo; i--)
        if (s[(size_t)(i - 1) * stride]) lo = i;
    for (int32_t i = x + 1; i <= n && !hi; i++)
        if (s[(size_t)(i - 1) * stride]) hi = i;
    if (!lo && !hi) return -1.0;
    if (!hi) return v[(size_t)(lo - 1) * stride];
    if (!lo) return v[(size_t)(hi - 1) * stride];
    double a = v[(size_t)(lo - 1) * stride], b = v[(size_t)(hi - 1) * stride];
    return a + (b - a) * (double)(x - lo) / (double)(hi - lo);
}

static double verify_in_table(const eng_costmodel *cm, int32_t r, int32_t l)
{
    size_t i = VI(r, l);
    if (cm->verify_seen[i]) return cm->verify_ms[i];
    if (cm->n_verify_seen == 0) return cm->p.prior_verify_ms_per_row * r;
    /* rows line (same leaves) and leaves line (same rows) */
    double a = line_est(&cm->verify_ms[VI(1, l)], &cm->verify_seen[VI(1, l)], ENG_CM_MAX_LEAVES,
                        ENG_CM_MAX_ROWS, r);
    double b =
        line_est(&cm->verify_ms[VI(r, 1)], &cm->verify_seen[VI(r, 1)], 1, ENG_CM_MAX_LEAVES, l);
    double e = a > b ? a : b;
    if (e < 0.0) {
        int32_t best_d = INT32_MAX;
        for (int32_t rr = 1; rr <= ENG_CM_MAX_ROWS; rr++) {
            for (int32_t ll = 1; ll <= ENG_CM_MAX_LEAVES; ll++) {
                size_t j = VI(rr, ll);
                if (!cm->verify_seen[j]) continue;
                int32_t d = (rr > r ? rr - r : r - rr) + (ll > l ? ll - l : l - ll);
                if (d < best_d || (d == best_d && cm->verify_ms[j] > e)) {
                    best_d = d;
                    e = cm->verify_ms[j];
                }
            }
        }
    }
    return e * (1.0 + cm->p.penalty);
}

double eng_costmodel_verify(const eng_costmodel *cm, int32_t rows, int32_t leaves)
{
    if (rows < 1) rows = 1;
    if (leaves < 1) leaves = 1;
    if (leaves > ENG_CM_MAX_LEAVES) leaves = ENG_CM_MAX_LEAVES;
    if (rows <= ENG_CM_MAX_ROWS) return verify_in_table(cm, rows, leaves);
    return verify_in_table(cm, ENG_CM_MAX_ROWS, leaves) * rows / ENG_CM_MAX_ROWS;
}

double eng_costmodel_cpu_node(const eng_costmodel *cm)
{
    return cm->cpu_seen ? cm->cpu_node_ms : cm->p.prior_draft_ms;
}

double eng_costmodel_npu_call(const eng_costmodel *cm, int32_t batch)
{
    if (batch < 1) batch = 1;
    if (batch > ENG_CM_MAX_BATCH)
        return eng_costmodel_npu_call(cm, ENG_CM_MAX_BATCH) * batch / ENG_CM_MAX_BATCH;
    if (cm->npu_seen[batch - 1]) return cm->npu_ms[batch - 1];
    if (cm->n_batch_seen == 0) return cm->p.prior_draft_ms;
    return line_est(cm->npu_ms, cm->npu_seen, 1, ENG_CM_MAX_BATCH, batch) * (1.0 + cm->p.penalty);
}
