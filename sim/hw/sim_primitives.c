/*
 * sim_primitives.c -- the formulas of sim_primitives.h.  No state, no allocation; called a
 * few times per simulated cycle, so they stay branch-light.
 */
#include "sim_primitives.h"

#include <math.h>

int32_t sim_cost_npu_pad(const sim_device *d, int32_t rows, int32_t *execs)
{
    if (rows <= 0) {
        if (execs) *execs = 0;
        return 0;
    }
    int32_t smax = d->npu_shapes[d->n_npu_shapes - 1];
    if (rows > smax) {
        if (execs) *execs = (rows + smax - 1) / smax;
        return smax;
    }
    if (execs) *execs = 1;
    for (int32_t i = 0; i < d->n_npu_shapes; i++)
        if (d->npu_shapes[i] >= rows) return d->npu_shapes[i];
    return smax;
}

double sim_cost_flash_q_ms(const sim_device *d, double bytes, double eff, int32_t queue_depth)
{
    if (bytes <= 0) return 0.0;
    double req_bytes = d->request_kb * 1024.0;
    double requests = ceil(bytes / req_bytes);
    double q = queue_depth > 1 ? (double)queue_depth : 1.0;
    return (bytes / (d->read_gbps * 1e6) + requests * d->request_latency_us * 1e-3 / q) / eff;
}

double sim_cost_npu_ms(const sim_device *d, int32_t rows, double bytes, double flops_per_row,
                       double eff)
{
    int32_t execs;
    int32_t p = sim_cost_npu_pad(d, rows, &execs);
    return sim_cost_npu_exec_ms(d, p, execs, bytes, flops_per_row, eff);
}

double sim_cost_npu_exec_ms(const sim_device *d, int32_t p, int32_t execs, double bytes,
                            double flops_per_row, double eff)
{
    if (execs == 0) return 0.0;
    double mem = bytes / (d->npu_gbps * 1e6);
    double comp = (double)p * flops_per_row / (d->npu_gflops * 1e6);
    double one = (d->launch_us + d->sync_us) * 1e-3 + (mem > comp ? mem : comp);
    return execs * one / eff;
}

double sim_cost_cpu_ms(const sim_device *d, int32_t rows, double bytes, double flops_per_row,
                       double eff)
{
    if (rows <= 0) return 0.0;
    double mem = bytes / (d->cpu_gbps * 1e6);
    double comp = (double)rows * flops_per_row / (d->cpu_gflops * 1e6);
    return (mem > comp ? mem : comp) / eff;
}
