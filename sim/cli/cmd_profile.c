/*
 * cmd_profile.c -- `flashspec profile DEVICE MODEL [--draft MODEL]
 * [--dram-fraction X] [--ctx N]`.
 *
 * Loads the profiles exactly as a script would (same resolution, sandbox and
 * validation), builds the phone model and prints what it derives: the DRAM
 * plan by category, the per-layer flash read and NPU times for a range of row
 * counts (static-shape padding shows as steps), the LM head on NPU and CPU, the
 * draft step costs, and one autoregressive token split into compute and I/O -- the
 * numbers Lever Table 1 reports.  Every figure comes from sim_hw's own cost
 * functions; nothing is recomputed here.
 */
#include "cmd_profile.h"
#include "cmd_explain.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/hw/sim_hw.h"
#include "sim/config/profile.h"
#include "sim/sim_status.h"

static const char usage[] =
    "usage: flashspec profile DEVICE MODEL [--draft MODEL] [--dram-fraction X] [--ctx N]\n"
    "\n"
    "Prints the costs the phone model derives for MODEL on DEVICE (profile names\n"
    "under configs/devices and configs/models): DRAM plan, per-layer flash and NPU\n"
    "times by rows, LM head, draft steps, and one autoregressive token.\n"
    "\n"
    "  --draft MODEL        also price a draft model's steps and DRAM\n"
    "  --dram-fraction X    share of target layers pinned in DRAM (default 0)\n"
    "  --ctx N              context length in tokens (default 256)\n"
    "  -h, --help           this help\n";

static int load(const char *kind, const char *name, void *out)
{
    char path[4096], err[1024];
    if (sim_profile_path(kind, name, path, sizeof path) != SIM_OK) {
        fprintf(stderr, "flashspec: invalid %s profile name '%s'\n", kind, name);
        return SIM_CONFIG_NAME;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        char hint[1024];
        sim_profile_suggest(kind, name, hint, sizeof hint);
        fprintf(stderr, "flashspec: unknown %s '%s'%s (no %s)\n",
                strcmp(kind, "devices") == 0 ? "device" : "model", name, hint, path);
        return SIM_MISSING;
    }
    int rc = strcmp(kind, "devices") == 0 ? sim_profile_load_device(path, out, err, sizeof err)
                                          : sim_profile_load_model(path, out, err, sizeof err);
    if (rc != SIM_OK) {
        fprintf(stderr, "flashspec: %s\n", err);
        return rc;
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
    /* the runtime that verifies on the CPU runs the layers and the eager head there */
    int cpu = sim_hw_device(hw)->verify_unit == SIM_VERIFY_CPU;
    printf("  %-6s %10s %10s %10s\n", "rows", cpu ? "cpu layer" : "npu layer",
           cpu ? "cpu head" : "npu head", cpu ? "head gemvs" : "cpu head");
    static const int32_t rows[] = {1, 2, 4, 8, 9, 16, 17, 32, 33, 64};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        printf("  %-6d %10.3f %10.3f %10.3f\n", rows[i], sim_hw_layer_npu_ms(hw, rows[i], ctx),
               sim_hw_head_npu_ms(hw, rows[i]), sim_hw_head_cpu_ms(hw, rows[i]));
    if (!m.head_resident) printf("  head read      %.3f\n", sim_hw_head_read_ms(hw));
    if (sim_hw_draft(hw)) {
        printf("\ndraft step (ms)  %-6s %10s %10s\n", "rows", "cpu", cpu ? "npu->cpu" : "npu");
        static const int32_t drows[] = {1, 4, 8, 16};
        for (size_t i = 0; i < sizeof drows / sizeof drows[0]; i++)
            printf("                 %-6d %10.3f %10.3f\n", drows[i],
                   sim_hw_draft_ms(hw, ENG_UNIT_CPU, drows[i], ctx),
                   sim_hw_draft_ms(hw, ENG_UNIT_NPU, drows[i], ctx));
    }
    double part[SIM_HW_SETUP_PARTS];
    double setup = sim_hw_tree_setup_ms(hw, part);
    printf("\ntree set-up      %.1f ms = constant %.1f + streamed GB %.1f + resident GB %.1f + "
           "streamed layers %.1f + tree graphs %.1f (%s)\n",
           setup, part[0], part[1], part[2], part[3], part[4],
           sim_hw_device(hw)->verify_setup_one_row ? "a one-row tree pays it too"
                                                   : "trees of 2+ rows");
    /* a Flash-AR token is a plain decode step: no tree set-up */
    sim_verify_shape v = {.rows = 1,
                          .leaves = 1,
                          .ctx_len = ctx,
                          .exit_layer = -1,
                          .rows_after_exit = 1,
                          .proj = ENG_PROJ_EAGER_NPU,
                          .proj_rows = 1,
                          .decode = 1};
    const sim_cycle_req q = {.verify = &v, .price = 1};
    sim_cycle_time t;
    if (sim_hw_cycle(hw, &q, &t) == SIM_OK)
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
                return SIM_USAGE;
            }
            break;
        case 'c':
            if (parse_num(optarg, 0, 1 << 24, &ctx) != 0) {
                fprintf(stderr, "flashspec: profile: --ctx must be a token count (got '%s')\n",
                        optarg);
                return SIM_USAGE;
            }
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fprintf(stderr, "flashspec: profile: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return SIM_USAGE;
        }
    }
    if (optind != argc - 2) {
        fprintf(stderr, "flashspec: profile needs DEVICE and MODEL (see --help)\n");
        return SIM_USAGE;
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
    if (rc != SIM_OK) {
        fprintf(stderr, "flashspec: %s\n", err);
        return rc;
    }
    printf("device %s, target %s%s%s, dram_fraction %.2f, context %d tokens\n\n", dev.name,
           tgt.name, draft_name ? ", draft " : "", draft_name ? drf.name : "", frac, (int)ctx);
    print_costs(hw, (int32_t)ctx);
    sim_hw_destroy(hw);
    return 0;
}

/* ------------------------------------------------------------- profiles */

static const char usage_list[] =
    "usage: flashspec profiles [devices|models|parts] [--markdown]\n"
    "       flashspec profiles [devices|models] --explain NAME [--markdown]\n"
    "\n"
    "Lists the device and model profiles along the profile search path (the\n"
    "directories of $FLASHSPEC_CONFIG_PATH, ':'-separated, first; then the shipped\n"
    "configs/, or $FLASHSPEC_CONFIG_DIR) with their key figures, each loaded and\n"
    "validated as a script would load it; a name found twice is the first one.\n"
    "A profile that does not load is listed with its error, and the exit code is\n"
    "then 78.  'parts' lists the part files (parts/soc, parts/flash, parts/dram,\n"
    "parts/runtime) with the keys each sets, its fits and its ranges.\n"
    "\n"
    "  --explain NAME  every resolved value of profile NAME (a device, else a\n"
    "                  model), one line each: key, value, source (part, fit, base,\n"
    "                  override or default), the range the parts state, the file\n"
    "                  and line that set it, and its citation; then the device's\n"
    "                  standing variants.  Unknown NAME: exit 66\n"
    "  --markdown      print Markdown tables\n"
    "  -h, --help      this help\n";

static void row_out(int md, const char *const *cells, const int *width, int n)
{
    for (int i = 0; i < n; i++) {
        if (md)
            printf("| %s ", cells[i]);
        else
            printf(i ? "  %*s" : "%-*s", width[i], cells[i]);
    }
    printf(md ? "|\n" : "\n");
}

static void rule_out(int md, const int *width, int n)
{
    if (!md) return;
    for (int i = 0; i < n; i++)
        printf("|%s", i ? "---:" : "---");
    printf("|\n");
    (void)width;
}

static int list_kind(const char *kind, int md)
{
    char (*names)[SIM_PROFILE_NAME_CAP] = malloc(SIM_PROFILE_LIST_MAX * sizeof *names);
    if (!names) {
        fprintf(stderr, "flashspec: out of memory\n");
        return SIM_NOMEM;
    }
    int n = sim_profile_names(kind, names, SIM_PROFILE_LIST_MAX);
    if (n < 0) {
        char path[4096];
        sim_profile_path(kind, "x", path, sizeof path);
        char *slash = strrchr(path, '/');
        if (slash) *slash = 0;
        fprintf(stderr, "flashspec: cannot list %s: cannot read %s\n", kind, path);
        free(names);
        return SIM_MISSING;
    }
    int dev = strcmp(kind, "devices") == 0, bad = 0;
    static const char *const dh[] = {"device",      "DRAM GB",      "flash GB/s", "NPU GFLOP/s",
                                     "NPU GB/s",    "CPU GFLOP/s",  "NPU shapes"};
    static const char *const mh[] = {"model",   "kind",    "layers", "hidden",
                                     "vocab", "bits/w", "weights GB"};
    static const int dw[] = {16, 8, 10, 11, 8, 11, 10}, mw[] = {24, 7, 6, 6, 6, 6, 10};
    const char *const *head = dev ? dh : mh;
    const int *w = dev ? dw : mw;
    if (md) printf("%s:\n\n", dev ? "Devices" : "Models");
    row_out(md, head, w, 7);
    rule_out(md, w, 7);
    for (int i = 0; i < n; i++) {
        char path[4096], err[1024], c[7][64];
        const char *cells[7];
        for (int j = 0; j < 7; j++) {
            c[j][0] = 0;
            cells[j] = c[j];
        }
        snprintf(c[0], sizeof c[0], "%s", names[i]);
        sim_profile_path(kind, names[i], path, sizeof path);
        int rc;
        if (dev) {
            sim_device d;
            rc = sim_profile_load_device(path, &d, err, sizeof err);
            if (rc == SIM_OK) {
                snprintf(c[1], 64, "%.2f", d.dram_budget_gb);
                snprintf(c[2], 64, "%.2f", d.read_gbps);
                snprintf(c[3], 64, "%.0f", d.npu_gflops);
                snprintf(c[4], 64, "%.1f", d.npu_gbps);
                snprintf(c[5], 64, "%.0f", d.cpu_gflops);
                size_t at = 0;
                for (int k = 0; k < d.n_npu_shapes && at < 64; k++)
                    at += (size_t)snprintf(c[6] + at, 64 - at, "%s%d", k ? "," : "",
                                           d.npu_shapes[k]);
            }
        } else {
            sim_model m;
            rc = sim_profile_load_model(path, &m, err, sizeof err);
            if (rc == SIM_OK) {
                snprintf(c[1], 64, "%s", m.kind == SIM_MODEL_EAGLE3 ? "eagle3" : "decoder");
                snprintf(c[2], 64, "%d", m.layers);
                snprintf(c[3], 64, "%d", m.hidden);
                snprintf(c[4], 64, "%d", m.vocab);
                snprintf(c[5], 64, "%.2f", m.weight_bits);
                snprintf(c[6], 64, "%.3f", sim_model_weight_bytes(&m) / 1e9);
            }
        }
        if (rc != SIM_OK) {
            fprintf(stderr, "flashspec: %s\n", err);
            snprintf(c[1], 64, "(does not load)");
            bad = 1;
        }
        row_out(md, cells, w, 7);
    }
    if (md) printf("\n");
    free(names);
    return bad ? SIM_CONFIG : SIM_OK;
}

int cli_profiles_main(int argc, char **argv)
{
    int md = 0, want_dev = 1, want_mod = 1, parts = 0;
    const char *explain = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_list, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--markdown")) {
            md = 1;
        } else if (!strcmp(argv[i], "--explain") && i + 1 < argc) {
            explain = argv[++i];
        } else if (!strcmp(argv[i], "devices")) {
            want_mod = 0;
        } else if (!strcmp(argv[i], "models")) {
            want_dev = 0;
        } else if (!strcmp(argv[i], "parts")) {
            parts = 1;
        } else {
            fprintf(stderr, "flashspec: profiles: unknown or incomplete argument '%s' (see --help)\n",
                    argv[i]);
            return SIM_USAGE;
        }
    }
    if ((!want_dev && !want_mod) || (parts && (!want_dev || !want_mod || explain))) {
        fprintf(stderr, "flashspec: profiles: give one of 'devices', 'models' or 'parts'%s\n",
                parts ? " (and no --explain with 'parts')" : "");
        return SIM_USAGE;
    }
    if (explain)
        return cli_profiles_explain(want_mod ? want_dev ? NULL : "models" : "devices", explain, md);
    if (parts) return cli_profiles_parts(md);
    int rc = 0;
    if (want_dev) rc = list_kind("devices", md);
    if (want_dev && want_mod && !md) printf("\n");
    if (want_mod) {
        int r2 = list_kind("models", md);
        if (!rc || (r2 && sim_status_primary(r2) != SIM_CONFIG)) rc = r2;
    }
    return rc;
}
