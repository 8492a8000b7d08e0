/*
 * runrec.h -- what produced a results directory (DIR/run.json and
 * DIR/script.lua, written beside results.{csv,h5}).
 *
 * run.json holds the version and build key, the command line, the script's
 * file, hash and --arg values, and for every result row (in results.csv
 * order) the fully resolved configuration it ran: the policy with every
 * parameter, the device with every value and its standing variants, the
 * target and draft models, the trace's name and checksum and the point keys
 * -- profiles' inheritance and the script's overrides applied, so a profile
 * edited later cannot change what the results say they came from.  Native
 * plug-ins (--plugin) are listed with their path and SHA-256, and a policy
 * a plug-in gives names them: a rebuilt plug-in changes its record.  Devices,
 * models and policies are listed once each (deduplicated by value) and rows
 * refer to them by index.  "traces" names every trace the rows ran on with
 * its file (relative to the project when inside it, else as the script gave
 * it) or, for flashspec.trace.synth, every generator setting.  "profiles"
 * holds every profile file the script loaded, as the file gave it (before the
 * script's overrides): what `flashspec rerun` loads in its place.  script.lua
 * is the script's bytes as the run read and ran them.
 */
#ifndef FS_OUT_RUNREC_H
#define FS_OUT_RUNREC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/eng_policy.h"
#include "sim/hw/sim_device.h"
#include "sim/hw/sim_model.h"
#include "sim/config/profile.h"
#include "sim/config/sim_profile_cache.h"
#include "sim/replay/sim_trace_cache.h"
#include "traces/trc.h"

typedef struct fs_runrec fs_runrec;

/* The configuration of one committed row. */
typedef struct fs_runrec_point {
    const sim_device *device;   /* a ud_device's (its variants beside it) */
    const sim_device *variants; /* [n_variants] */
    const char (*variant_names)[SIM_VARIANT_NAME_CAP];
    int32_t n_variants;
    const char *device_name;
    const sim_model *target, *draft; /* draft NULL: none */
    const char *target_name, *draft_name;
    const eng_policy_desc *policy;
    const void *policy_params;
} fs_runrec_point;

fs_runrec *fs_runrec_new(void);
void fs_runrec_free(fs_runrec *r); /* NULL-safe */

/* Records row number row's configuration (rows are added in order).  0, or
 * -1 out of memory. */
int fs_runrec_add(fs_runrec *r, const fs_runrec_point *p);

/* A native plug-in the run loaded (strings borrowed). */
typedef struct fs_runrec_plugin {
    const eng_policy_desc *desc; /* the policy it gives */
    const char *path, *sha256;   /* its resolved path; SHA-256 of its bytes, hex */
} fs_runrec_plugin;
/* A trace the rows ran on, for the "traces" member: its name (the rows'
 * `trace`), and its file (path relative to the project when it lies inside
 * it, else as the script gave it) or the synthetic generator's settings. */
typedef struct fs_runrec_trace {
    const char *name;
    const char *path;                 /* NULL for a synthetic trace */
    const char *given;                /* the path as the script wrote it */
    const trc_synth_params *synth;    /* NULL for a file */
} fs_runrec_trace;

/* The traces of cache c that rows[0..n_rows) ran on (a row's `trace` is
 * the entry's name), in the cache's order, at most cap, into out: a file's
 * path relative to home (the project; NULL: none) when it lies inside it
 * (paths[i] holds it), else as the script gave it; a synthetic trace's
 * generator settings.  Returns how many. */
struct fs_row;
int32_t fs_runrec_list_traces(const sim_trace_cache *c, const struct fs_row *rows,
                              int32_t n_rows, const char *home, fs_runrec_trace *out,
                              char (*paths)[PATH_MAX], int32_t cap);

/* A profile file the script loaded by name, for the "profiles" member (what
 * `flashspec rerun` loads instead of today's file): its kind, its path
 * (relative to the project when inside it), its values as the file resolved
 * them (inheritance applied, before the script's overrides) and, for a
 * device, its standing variants (the keys each sets). */
typedef struct fs_runrec_profile {
    int device; /* 1: dev and vars; 0: model */
    const char *path;
    const sim_device *dev;
    const sim_device_variants *vars;
    const sim_model *model;
} fs_runrec_profile;

/* The profiles of cache c, in the order kept, at most cap, into out, each
 * borrowing the cache's values: paths[i] gets the file's path relative to
 * home (the project; NULL: none) when it lies inside it, else the path as
 * kept.  Returns how many. */
int32_t fs_runrec_list_profiles(const sim_profile_cache *c, const char *home,
                                fs_runrec_profile *out, char (*paths)[PATH_MAX], int32_t cap);

/* What the run was: strings borrowed until fs_runrec_write. */
typedef struct fs_runrec_run {
    const char *version, *build_key;
    const char *const *argv; /* the command line, argc words (may be NULL) */
    int argc;
    const char *script_path, *script_hash;
    const char *const *args; /* "KEY=VALUE" */
    int n_args;
    const char *script_bytes; /* the script as run (may be NULL) */
    size_t script_len;
    const fs_runrec_plugin *plugins; /* [n_plugins] */
    int n_plugins;
    const fs_runrec_trace *traces; /* [n_traces] */
    int32_t n_traces;
    const fs_runrec_profile *profiles; /* [n_profiles] */
    int32_t n_profiles;
} fs_runrec_run;

/* Formats run.json for the rows recorded (rows: their trace names, checksums
 * and point keys).  *out is malloc'd (the caller frees it).  0, or -1 out of
 * memory. */
struct fs_row;
int fs_runrec_json(const fs_runrec *r, const fs_runrec_run *run, const struct fs_row *rows,
                   int32_t n_rows, char **out, size_t *len);

#endif
