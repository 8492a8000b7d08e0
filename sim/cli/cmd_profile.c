/*
 * cmd_profile.c -- `flashspec profile DEVICE MODEL [--draft MODEL]
 * [--dram-fraction X] [--ctx N]`.
 *
 * Loads the profiles exactly as a script would (same resolution, sandbox and
 * validation), builds the phone model and prints what it derives: the DRAM
 * plan by category, the per-layer flash read and NPU times for a range of row
 * counts (static-shape padding shows as steps), the LM head on NPU and CPU, the
 * draft step costs, and one Flash-AR token split into compute and I/O -- the
 * numbers Lever Table 1 reports.  Every figure comes from sim_hw's own cost
 * functions; nothing is recomputed here.
 */
#include "cmd_profile.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/hw/sim_hw.h"
#include "sim/lua/profile.h"

static const char usage[] =
    "usage: flashspec profile DEVICE MODEL [--draft MODEL] [--dram-fraction X] [--ctx N]\n"
    "\n"
    "Prints the costs the phone model derives for MODEL on DEVICE (profile names\n"
    "under configs/devices and configs/models): DRAM plan, per-layer flash and NPU\n"
    "times by rows, LM head, draft steps, and one Flash-AR token.\n"
    "\n"
    "  --draft MODEL        also price a draft model's steps and DRAM\n"
    "  --dram-fraction X    share of target layers pinned in DRAM (default 0)\n"
    "  --ctx N              context length in tokens (default 256)\n"
    "  -h, --help           this help\n";

static int load(const char *kind, const char *name, void *out)
{
    char path[4096], err[1024];
    if (sim_profile_path(kind, name, path, sizeof path) != SIM_PROFILE_OK) {
        fprintf(stderr, "flashspec: invalid %s profile name '%s'\n", kind, name);
        return 78;
    }
    int rc = strcmp(kind, "devices") == 0 ? sim_profile_load_device(path, out, err, sizeof err)
                                          : sim_profile_load_model(path, out, err, sizeof err);
    if (rc != SIM_PROFILE_OK) {
        fprintf(stderr, "flashspec: %s\n", err);
        return sim_profile_exit_code(rc);
    }
    return 0;
}

static int parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

static void print_costs(sim_hw *hw, int32_t ctx)
{
    sim_hw_memory m;
    sim_hw_get_memory(hw, &m);
    printf("dram plan        %.3f GB of %.3f GB budget\n", m.total_bytes / 1e9,
           m.budget_bytes / 1e9);
    for (int c = 0; c < SIM_MEM_NCAT; c++)
        printf("  %-14s %.3f GB\n", sim_mem_cat_name((sim_mem_cat)c), m.bytes[c] / 1e9);
    printf("layers           %d (%d pinned, %d streamed; LM head %s)\n", m.layers,
           m.resident_layers, m.streamed_layers, m.head_resident ? "in DRAM" : "streamed");
    printf("flash per verify %.3f GB\n", m.streamed_bytes / 1e9);
    printf("\nper target layer (ms)\n");
    printf("  flash read     %.3f\n", sim_hw_layer_read_ms(hw));
    printf("  %-6s %10s %10s %10s\n", "rows", "npu layer", "npu head", "cpu head");
    static const int32_t rows[] = {1, 2, 4, 8, 9, 16, 17, 32, 33, 64};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        printf("  %-6d %10.3f %10.3f %10.3f\n", rows[i], sim_hw_layer_npu_ms(hw, rows[i], ctx),
               sim_hw_head_npu_ms(hw, rows[i]), sim_hw_head_cpu_ms(hw, rows[i]));
    if (!m.head_resident) printf("  head read      %.3f\n", sim_hw_head_read_ms(hw));
    if (sim_hw_draft(hw)) {
        printf("\ndraft step (ms)  %-6s %10s %10s\n", "rows", "cpu", "npu");
        static const int32_t drows[] = {1, 4, 8, 16};
        for (size_t i = 0; i < sizeof drows / sizeof drows[0]; i++)
            printf("                 %-6d %10.3f %10.3f\n", drows[i],
                   sim_hw_draft_ms(hw, ENG_UNIT_CPU, drows[i], ctx),
                   sim_hw_draft_ms(hw, ENG_UNIT_NPU, drows[i], ctx));
    }
    sim_verify_shape v = {.rows = 1, .leaves = 1, .ctx_len = ctx, .exit_layer = -1,
                          .rows_after_exit = 1, .proj = ENG_PROJ_EAGER_NPU, .proj_rows = 1};
    sim_cycle_time t;
    if (sim_hw_estimate(hw, NULL, 0, &v, &t, NULL) == SIM_HW_OK)
        printf("\nflash-ar token   %.1f ms = compute %.1f ms (npu %.1f, cpu %.1f) + I/O %.1f ms"
               " - overlap %.1f ms\n",
               t.cycle_ms, t.npu_ms + t.cpu_ms, t.npu_ms, t.cpu_ms, t.flash_ms, t.overlap_ms);
}

int cli_profile_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"draft", required_argument, NULL, 'd'},
        {"dram-fraction", required_argument, NULL, 'f'},
        {"ctx", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *draft_name = NULL;
    double frac = 0.0, ctx = 256;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            draft_name = optarg;
            break;
        case 'f':
            if (parse_num(optarg, 0.0, 1.0, &frac) != 0) {
                fprintf(stderr, "flashspec: profile: --dram-fraction must be in [0, 1] (got '%s')\n",
                        optarg);
                return 64;
            }
            break;
        case 'c':
            if (parse_num(optarg, 0, 1 << 24, &ctx) != 0) {
                fprintf(stderr, "flashspec: profile: --ctx must be a token count (got '%s')\n",
                        optarg);
                return 64;
            }
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fprintf(stderr, "flashspec: profile: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return 64;
        }
    }
    if (optind != argc - 2) {
        fprintf(stderr, "flashspec: profile needs DEVICE and MODEL (see --help)\n");
        return 64;
    }
    sim_device dev;
    sim_model tgt, drf;
    int rc = load("devices", argv[optind], &dev);
    if (!rc) rc = load("models", argv[optind + 1], &tgt);
    if (!rc && draft_name) rc = load("models", draft_name, &drf);
    if (rc) return rc;
    sim_hw *hw = NULL;
    char err[512];
    rc = sim_hw_create(&dev, &tgt, draft_name ? &drf : NULL, frac, (int32_t)ctx + 512, &hw, err,
                       sizeof err);
    if (rc != SIM_HW_OK) {
        fprintf(stderr, "flashspec: %s\n", err);
        return rc == SIM_HW_E_NOMEM ? 70 : 78;
    }
    printf("device %s, target %s%s%s, dram_fraction %.2f, context %d tokens\n\n", dev.name,
           tgt.name, draft_name ? ", draft " : "", draft_name ? drf.name : "", frac, (int)ctx);
    print_costs(hw, (int32_t)ctx);
    sim_hw_destroy(hw);
    return 0;
}
