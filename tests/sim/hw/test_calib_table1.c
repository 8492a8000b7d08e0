/*
 * test_calib_table1.c -- the shipped profiles reproduce Lever Table 1.
 *
 * For each of the four targets: load configs/devices/oneplus12.lua and
 * configs/models/<target>-q4_0.lua through sim_profile_load_*, build the phone
 * model at 0% DRAM without a draft, run one Flash-AR cycle (one row, one leaf,
 * eager NPU head, context 256 tokens) and compare compute (NPU + CPU busy),
 * I/O (flash busy) and total (cycle wall time) with Table 1: each within 5%.
 * Also prints the structural prediction (residual factors forced to 1), which
 * is what the profiles' derivation comments quote.
 *
 * argv[1]: the configs directory.
 */
#include "sim/hw/sim_hw.h"
#include "sim/config/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../check.h"

typedef struct row {
    const char *profile;
    double compute_ms, io_ms, total_ms; /* Lever Table 1 (§3) */
} row;

static const row table1[] = {
    {"llama3.1-8b-q4_0", 93.2, 990.6, 1083.8},
    {"qwen3-4b-q4_0", 131.5, 474.4, 605.9},
    {"qwen3-8b-q4_0", 96.6, 953.4, 1050.0},
    {"qwen3-14b-q4_0", 141.2, 1967.1, 2108.3},
};

enum { CALIB_CTX = 256, CALIB_MAX_CTX = 4096 };

static sim_cycle_time flash_ar(const sim_device *dev, const sim_model *m)
{
    char err[512];
    sim_hw *hw = NULL;
    int rc = sim_hw_create(dev, m, NULL, 0.0, CALIB_MAX_CTX, &hw, err, sizeof err);
    if (rc != SIM_OK) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK);
    sim_verify_shape v = {.rows = 1,
                          .leaves = 1,
                          .ctx_len = CALIB_CTX,
                          .exit_layer = -1,
                          .rows_after_exit = 1,
                          .proj = ENG_PROJ_EAGER_NPU,
                          .proj_rows = 1,
                          .decode = 1}; /* a Flash-AR token: a plain decode step */
    const sim_cycle_req q = {.verify = &v};
    sim_cycle_time t;
    CHECK(sim_hw_cycle(hw, &q, &t) == SIM_OK);
    sim_hw_destroy(hw);
    return t;
}

static double rel(double sim, double pub)
{
    return (sim - pub) / pub;
}

int main(int argc, char **argv)
{
    CHECK(argc > 1);
    char path[1024], err[1024];
    sim_device dev;
    snprintf(path, sizeof path, "%s/devices/oneplus12.lua", argv[1]);
    int rc = sim_profile_load_device(path, &dev, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK(rc == SIM_OK);
    CHECK(dev.prefetch_layers == 0);

    printf("Lever Table 1, Flash-AR on %s, 0%% DRAM, ms (sim / published / error)\n", dev.name);
    printf("%-18s %26s %26s %26s | structural compute, I/O\n", "model", "compute", "I/O", "total");
    int bad = 0;
    for (size_t i = 0; i < sizeof table1 / sizeof table1[0]; i++) {
        const row *r = &table1[i];
        sim_model m;
        snprintf(path, sizeof path, "%s/models/%s.lua", argv[1], r->profile);
        rc = sim_profile_load_model(path, &m, err, sizeof err);
        if (rc) fprintf(stderr, "%s\n", err);
        CHECK(rc == SIM_OK);
        sim_cycle_time t = flash_ar(&dev, &m);
        double compute = t.npu_ms + t.cpu_ms, io = t.flash_ms, total = t.cycle_ms;
        /* serial streaming: the wall time is exactly compute + I/O, nothing idle */
        CHECK(fabs(total - (compute + io)) < 1e-6);
        CHECK(t.idle_ms == 0.0 && t.overlap_ms == 0.0 && t.kv_ms == 0.0);
        sim_model s = m;
        s.flash_efficiency = s.npu_efficiency = s.cpu_efficiency = 1.0;
        sim_cycle_time st = flash_ar(&dev, &s);
        double ec = rel(compute, r->compute_ms), ei = rel(io, r->io_ms),
               et = rel(total, r->total_ms);
        printf("%-18s %8.1f / %7.1f / %+5.2f%% %8.1f / %7.1f / %+5.2f%% %8.1f / %7.1f / %+5.2f%% "
               "| %.2f, %.2f\n",
               r->profile, compute, r->compute_ms, 100 * ec, io, r->io_ms, 100 * ei, total,
               r->total_ms, 100 * et, st.npu_ms + st.cpu_ms, st.flash_ms);
        if (fabs(ec) > 0.05 || fabs(ei) > 0.05 || fabs(et) > 0.05) bad++;
    }
    CHECK(bad == 0);
    printf("calib_table1: ok (all within 5%%)\n");
    return check_done("hw/calib_table1");
}
