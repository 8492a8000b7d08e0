/*
 * parts.h -- a phone made of parts, and where every device value came from.
 *
 * Parts.  configs/parts/<kind>/<name>.lua holds the cited public figures of
 * one part of a phone, for four kinds, applied in this fixed order:
 *
 *   soc      CPU and NPU rates, per-graph costs, power states, thermal
 *   flash    the storage's sequential read, request latency, power
 *   dram     the memory's peak bandwidth and access energy
 *   runtime  the inference runtime's mechanisms (loader ring, queue depth,
 *            compiled shapes, set-up) and the costs fitted on a phone
 *
 * A part file returns a table of device keys (sim_device_keys) that belong to
 * its kind (sim_part_key_allowed; another kind's key is exit 78) and, beside
 * them, machine-readable provenance:
 *
 *   cite   = { key = "source of the figure", ... }  -- every key it sets
 *   fit    = { key = "the fit and its data", ... }  -- keys that are fits
 *   ranges = { key = { lo, hi }, ... }              -- where a figure is missing
 *
 * Every key a part sets needs a `cite` or a `fit` entry.  `ranges` holds rates
 * (keys ending _gbps, _gflops) and costs (_us, _us_per_gb) only.  A range for a
 * key the part sets bounds the part's own value (it applies when that value is
 * the device's); a range for a key the part does not set says the part has no
 * figure and bounds the value another part supplies (the runtime's carried
 * fit), except a fit made on this very part.  The device's value must lie in
 * every range that applies to it (exit 78 otherwise).
 *
 * A soc part may state how much faster it is than another soc part:
 *   speed_over = "sd8gen3", npu_speed = 1.45, cpu_speed = 1.45
 * (cited, with ranges = { npu_speed = { lo, hi }, ... }); a runtime part says
 * which phone its fits were made on and how they carry to another soc:
 *   fitted_on = { soc = "sd8gen3", flash = "ufs4.0", dram = "lpddr5x-9600" },
 *   transfer  = { npu_gflops = "npu", verify_graph_us = "/cpu", launch_us = "~/cpu" }
 * "npu"/"cpu" multiply a fit by the soc's speed, "/npu"/"/cpu" divide it, and a
 * leading "~" carries the fit unchanged with the rule bounding its range; on
 * another soc the fit is scaled by the central speed and its range spans the
 * speed's range.  A runtime part may declare the standing variants of its
 * fits (profile.h); they are scaled the same way.  The NPU's and CPU's read
 * rates from parts never exceed the memory's peak from parts (bounded).
 *
 * A device profile names its parts:
 *   return { parts = { soc = "sd8gen3", flash = "ufs4.0", dram = "lpddr5x-9600",
 *                      runtime = "lever-qnn" }, dram_budget_gb = 6, ... }
 * Resolution: the parts in the order above, then the files of the `base` chain
 * from the root down, then the named file's own keys; a calibration is one more
 * file on top (`base` = the phone).  Each kind comes from the nearest file of
 * the chain that names it, so a derived file may swap one part.  Keys no layer
 * sets take their defaults; a required key nobody sets is exit 78.  An unknown
 * part name is exit 66 naming the file, the line and the nearest name.
 * Device files may carry `cite` and `fit` tables too; without a `cite` entry
 * the citation of a device file's key is its comment (the trailing `--`
 * comment, else the comment above it in the same paragraph).
 *
 * Where a part states ranges that apply, the device gets two more standing
 * variants, "parts_slow" (rates at the low end, costs at the high end) and
 * "parts_fast" (the opposite), so the ranges reach the model band.
 */
#ifndef SIM_PARTS_H
#define SIM_PARTS_H

#include "sim/config/profile.h"

#include <stddef.h>
#include <stdint.h>

enum { SIM_PART_SOC, SIM_PART_FLASH, SIM_PART_DRAM, SIM_PART_RUNTIME, SIM_PART_KINDS };
#define SIM_PART_NAME_CAP 48
#define SIM_CITE_CAP 640
#define SIM_SRC_FILE_CAP 512

/* "soc", "flash", "dram", "runtime" (NULL for another index). */
const char *sim_part_kind_name(int kind);
/* The kind called name, or -1. */
int sim_part_kind_find(const char *name);
/* 1 when device key `key` belongs to parts of `kind`. */
int sim_part_key_allowed(int kind, const char *key);
/* The kinds key belongs to, as "soc, runtime" ("" for none). */
void sim_part_key_kinds(const char *key, char *out, size_t n);

/* Where a resolved value came from. */
enum {
    SIM_SRC_DEFAULT,  /* the key's built-in default */
    SIM_SRC_PART,     /* a part's cited figure */
    SIM_SRC_FIT,      /* a fit (a part's or a file's `fit` entry) */
    SIM_SRC_BASE,     /* a file the named profile derives from (`base`) */
    SIM_SRC_OVERRIDE, /* the named profile file itself */
};
const char *sim_src_kind_name(int kind); /* "default", "part", "fit", "base", "override" */

typedef struct sim_key_source {
    int32_t kind;                /* SIM_SRC_* */
    int32_t layer;               /* fits: the layer that set it, SIM_SRC_PART/BASE/OVERRIDE */
    char file[SIM_SRC_FILE_CAP]; /* the file that set it ("" for a default) */
    int32_t line;                /* its line there (0: unknown) */
    char part[SIM_PART_NAME_CAP + 16]; /* "soc/sd8gen3" for a part, else "" */
    char cite[SIM_CITE_CAP];     /* its citation or fit text ("" none) */
    char note[256];              /* what the composition did to it (scaled, bounded) */
    int32_t has_range;           /* 1: lo < hi below apply to the value */
    double lo, hi;
} sim_key_source;

typedef struct sim_profile_sources {
    int32_t n_keys;                                   /* rows of the key table */
    char parts[SIM_PART_KINDS][SIM_PART_NAME_CAP];    /* the parts used ("" none) */
    char part_files[SIM_PART_KINDS][SIM_SRC_FILE_CAP];
    sim_key_source key[SIM_VARIANT_KEYS_CAP];         /* one per key row */
    char variants_from[SIM_SRC_FILE_CAP]; /* the file whose variants the device has */
} sim_profile_sources;

/* sim_profile_load_device_variants with provenance: src (not NULL) gets the
 * source of every key row of sim_device_keys(). */
int sim_profile_explain_device(const char *path, sim_device *out, sim_device_variants *vars,
                               sim_profile_sources *src, char *err, size_t errlen);
/* The same for a model profile (sources: files of the chain and defaults). */
int sim_profile_explain_model(const char *path, sim_model *out, sim_profile_sources *src,
                              char *err, size_t errlen);

/* Loads and checks one part file of kind (keys, citations, ranges, rules)
 * into vals (only the keys it sets are written; set gets one flag per key
 * row) and src (its citations; may be NULL).  Errors as profile.h. */
int sim_part_load(const char *path, int kind, sim_device *vals, unsigned char *set,
                  sim_profile_sources *src, char *err, size_t errlen);

#endif
