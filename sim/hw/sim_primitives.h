/*
 * sim_primitives.h -- closed-form latency of the phone's primitive operations
 * (functions sim_cost_*: the cost of one flash read, NPU pass or CPU pass).
 *
 * Pure functions of (device, work); the DES (sim_hw.c) only sequences them.
 * All results are milliseconds, all sizes bytes, all work FLOPs.
 *
 * Flash read of B bytes (one FIFO channel, requests of R = request_kb KiB, Q
 * requests kept in flight by the runtime):
 *     t = ( B / read_gbps + ceil(B / R) * request_latency_us / Q ) / eff
 *   Q = 1 is a synchronous reader that pays every request's latency in full;
 *   with Q requests queued (UFS command queueing) the latency of one request
 *   overlaps the transfers of the others.
 *
 * NPU graph execution over r rows (static shapes S = npu_shapes, ascending):
 *   rows are padded to the smallest shape >= r; above the largest shape Smax the
 *   work runs as ceil(r / Smax) executions of Smax rows.  Each execution pays
 *     launch_us + sync_us + max( W / npu_gbps , p * F / npu_gflops )
 *   (a roofline: reading the operation's weights and KV, W bytes, once per
 *   execution, against the padded rows p times F FLOPs per row), all / eff.
 *   Padded rows cost compute like real ones: the graph cannot skip them.
 *
 * CPU operation over r rows (no padding, no launch):
 *     t = max( W / cpu_gbps , r * F / cpu_gflops ) / eff
 *
 * Unit conventions: x_gbps * 1e6 = bytes per ms; x_gflops * 1e6 = FLOPs per ms.
 */
#ifndef SIM_PRIMITIVES_H
#define SIM_PRIMITIVES_H

#include "sim_device.h"

/* Rows per execution after padding; *execs (may be NULL) gets the execution
 * count.  rows <= 0 gives 0 and *execs = 0. */
int32_t sim_cost_npu_pad(const sim_device *d, int32_t rows, int32_t *execs);

double sim_cost_flash_q_ms(const sim_device *d, double bytes, double eff, int32_t queue_depth);
double sim_cost_npu_ms(const sim_device *d, int32_t rows, double bytes, double flops_per_row,
                       double eff);
/* sim_cost_npu_ms once the rows are padded: p rows per execution, execs
 * executions (sim_cost_npu_pad's result for the rows). */
double sim_cost_npu_exec_ms(const sim_device *d, int32_t p, int32_t execs, double bytes,
                            double flops_per_row, double eff);
double sim_cost_cpu_ms(const sim_device *d, int32_t rows, double bytes, double flops_per_row,
                       double eff);

#endif
