/*
 * cfg_impl.h -- internals shared by profile.c (files and chains), parts_meta.c
 * (the provenance tables a file carries, read from Lua) and parts.c (the
 * composition of a device from parts; plain C).  Not installed.
 */
#ifndef SIM_CFG_IMPL_H
#define SIM_CFG_IMPL_H

#include "sim/config/parts.h"

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#define CFG_KEYS_CAP SIM_VARIANT_KEYS_CAP
/* Longest `base` value accepted before sim_profile_path judges it. */
#define BASE_NAME_CAP 256

enum { CFG_SPEED_NPU, CFG_SPEED_CPU, CFG_SPEEDS };
enum { CFG_FIT_SOC, CFG_FIT_FLASH, CFG_FIT_DRAM, CFG_FIT_KINDS }; /* fitted_on = { ... } */

/* A runtime part's rule for carrying a fit to another soc (parts.h). */
typedef struct cfg_xfer {
    signed char op;      /* 0: none; 1: multiply by the speed; -1: divide */
    signed char unit;    /* CFG_SPEED_NPU or CFG_SPEED_CPU */
    unsigned char carry; /* 1: the value is carried; the rule bounds its range */
} cfg_xfer;

/* What one file says beside its keys. */
typedef struct cfg_meta {
    int32_t part_kind; /* -1: a device profile; else SIM_PART_* */
    /* device profiles: the parts they name (part_line 0: not named here) */
    int32_t has_parts;
    char parts[SIM_PART_KINDS][SIM_PART_NAME_CAP];
    int32_t part_line[SIM_PART_KINDS];
    /* every file, per key row */
    char cite[CFG_KEYS_CAP][SIM_CITE_CAP];
    unsigned char cited[CFG_KEYS_CAP]; /* a `cite` or `fit` entry */
    unsigned char fit[CFG_KEYS_CAP];
    /* parts */
    unsigned char has_range[CFG_KEYS_CAP];
    double lo[CFG_KEYS_CAP], hi[CFG_KEYS_CAP];
    cfg_xfer xfer[CFG_KEYS_CAP];
    char speed_over[SIM_PART_NAME_CAP];
    double speed[CFG_SPEEDS];
    unsigned char speed_set[CFG_SPEEDS], speed_has_range[CFG_SPEEDS];
    double speed_lo[CFG_SPEEDS], speed_hi[CFG_SPEEDS];
    char speed_cite[CFG_SPEEDS][SIM_CITE_CAP];
    char fitted_on[CFG_FIT_KINDS][SIM_PART_NAME_CAP];
} cfg_meta;

/* One file to run and validate (profile.c). */
typedef struct job {
    const char *path;
    const char *kind; /* "devices"/"models": `base` is read; NULL: it is an unknown key */
    const eng_param_desc *keys;
    void *out;              /* the file's values (a zeroed scratch struct) */
    unsigned char *present; /* one flag per key row: the file set it (all 1 for a root) */
    unsigned char *set;     /* NULL, or one flag per key row: the table holds the key */
    size_t nkeys;
    const char *what;
    sim_device_variants *vars; /* devices: out, the file's `variants` (NULL: unknown key) */
    cfg_meta *meta;            /* NULL, or out: the file's provenance tables */
    int overlay;               /* 1: validate as an overlay even without `base` */
    int has_vars;              /* out: the file sets `variants` */
    int has_base;              /* out: the file sets `base` */
    char base[BASE_NAME_CAP];  /* out: its value */
    int base_line;             /* out: the line of `base =` */
} job;

/* profile.c: runs one file in its own sandboxed state (errors as profile.h). */
int cfg_load_file(job *j, char *err, size_t errlen);
/* profile.c: bytes of the field a key row describes. */
size_t cfg_field_size(const eng_param_desc *d);
/* profile.c: copies into out every field src sets (present) that no nearer
 * layer has (taken), and marks it taken. */
void cfg_merge_under(const eng_param_desc *keys, void *out, const void *src,
                     const unsigned char *present, unsigned char *taken);
/* profile.c: a valid profile or part name ([A-Za-z0-9._+-], no leading '.', no ".."). */
int cfg_name_ok(const char *name);

/* parts_meta.c: reads and removes the provenance tables of the table at t
 * (`parts`, `cite`, `fit`; for parts `ranges` and the soc / runtime fields);
 * raises a Lua error naming the file and line. */
void cfg_read_meta(lua_State *L, int t, job *j);
/* parts_meta.c: after the keys are validated (j->present): kinds, citations,
 * ranges and rules agree with the keys the file sets; raises likewise. */
void cfg_check_meta(lua_State *L, job *j);

/* parts.c: the citation of key in a device file's text: its trailing comment,
 * else the comment above it in the same paragraph ("" none). */
void cfg_comment_cite(const char *text, int line, char *out, size_t n);
/* parts.c: 1 for a rate (higher is faster), -1 for a cost (lower is faster),
 * 0 for a key that cannot hold a range. */
int cfg_key_direction(const eng_param_desc *d);

/* One part as the composition sees it. */
typedef struct cfg_part {
    int used;            /* 0: the device names no part of this kind */
    const char *path;    /* its file */
    const char *name;    /* its name */
    sim_device vals;     /* the values of the keys it sets */
    unsigned char set[CFG_KEYS_CAP];
    const cfg_meta *meta;
    const sim_device_variants *vars; /* runtime parts: their variants (NULL: none) */
} cfg_part;

/* parts.c: loads one part file of kind into p (values, set flags), meta and,
 * for a runtime part, vars (p->vars NULL when it declares none). */
int cfg_part_load(const char *path, int kind, cfg_part *p, cfg_meta *meta,
                  sim_device_variants *vars, char *err, size_t errlen);

/* parts.c: completes dev from the parts under the keys the profile's files
 * set (taken), then defaults; applies the runtime's transfer rules, the
 * bounds and the ranges; fills vars (the runtime's variants unless the files
 * declared some: have_vars) and adds the range variants; records sources in
 * src (may be NULL).  where/line name the file for errors.  Returns a
 * SIM_PROFILE_* status with a one-line message. */
int cfg_compose_device(sim_device *dev, unsigned char *taken, const cfg_part parts[SIM_PART_KINDS],
                       sim_device_variants *vars, int have_vars, sim_profile_sources *src,
                       const char *where, int line, char *err, size_t errlen);

#endif
