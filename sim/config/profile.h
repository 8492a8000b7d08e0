/*
 * profile.h -- load device and model profiles (configs/<kind>/<name>.lua).
 *
 * A profile is a Lua file that returns one table of parameters:
 *     return { read_gbps = 5.0, -- source ... }
 * It runs in a fresh, sandboxed Lua state: only the base functions that cannot
 * reach the outside (no dofile, loadfile, load, require, collectgarbage, print)
 * plus the string (without string.dump), table, math and utf8 libraries; no io,
 * os, debug or package.  The file is loaded in text mode only (no bytecode),
 * with a memory cap and an instruction budget, so a hostile or runaway profile
 * fails cleanly.  The returned table is validated by lparams against
 * sim_device_keys()/sim_model_keys() and then by sim_device_check /
 * sim_model_check.  An empty `name` is replaced by the file's base name.
 *
 * Inheritance: a profile may set `base = "NAME"`, another profile of the same
 * kind resolved along the search path by sim_profile_find (nothing but
 * <dir>/<kind>/NAME.lua of a search-path directory is ever read; a base that
 * names a file of the chain itself -- a user profile shadowing the shipped one
 * it derives from -- resolves further along the path).  The base's keys are
 * validated as a profile of its own (required keys included unless it derives
 * in turn; at most SIM_PROFILE_MAX_BASES bases in a chain, no cycles, by file
 * identity), then every other key of the derived file is validated
 * against the same key table -- no key is required there -- and applied over
 * it; the semantic check runs once, on the merged result.  The name is the
 * derived file's own `name`, else its file's base name (never the base's).
 * Every file of a chain runs in its own fresh sandboxed state with the limits
 * above, one state at a time.  Files are read from the derived file towards
 * the root, and the first error met is reported: an error inside a base
 * names that base file and its line.
 *
 * Parts: a device profile may name the parts it is made of, `parts = { soc =
 * "NAME", flash = ..., dram = ..., runtime = ... }`, files under
 * <dir>/parts/<kind>/ along the search path; they give the keys no file of
 * the chain sets, and may add standing variants (parts.h has the contract,
 * and sim_profile_explain_device where every value came from).  The kinds
 * "parts/soc", "parts/flash", "parts/dram" and "parts/runtime" are accepted
 * by sim_profile_find, sim_profile_names and sim_profile_suggest.
 *
 * Errors: a status code plus a one-line message in err, never a Lua error:
 *   SIM_MISSING  file cannot be opened ("PATH: cannot open ..."), or
 *                          its base does not exist ("PATH:LINE: ... base
 *                          profile 'NAME' not found (no BASEPATH)", LINE that
 *                          of `base =`), or a part it names does not exist
 *                          ("PATH:LINE: ... unknown soc part 'NAME' (did you
 *                          mean ...?)") -> exit 66 (EX_NOINPUT)
 *   SIM_CONFIG   syntax error, runtime error, not a table, unknown
 *                          key, wrong type, out of range, inconsistent values,
 *                          an invalid base name, a cycle of bases, a chain
 *                          deeper than SIM_PROFILE_MAX_BASES
 *                          ("PATH:LINE: ...") -> exit 78 (EX_CONFIG)
 *   SIM_CONFIG_NAME     sim_profile_path: bad kind or name -> exit 78
 *   SIM_NOMEM    out of memory -> exit 70
 */
#ifndef SIM_PROFILE_H
#define SIM_PROFILE_H

#include "engine/eng_param.h"
#include "sim/hw/sim_device.h"
#include "sim/hw/sim_model.h"
#include "sim/sim_status.h"

#include <stddef.h>

/* Most bases one profile may have above it (a -> b -> ... : 8 links). */
#define SIM_PROFILE_MAX_BASES 8

int sim_profile_load_device(const char *path, sim_device *out, char *err, size_t errlen);

/* Standing variants.  A device profile may declare the explanations the data
 * leave standing beside it, each a set of keys changed from the profile:
 *     variants = { min1 = { verify_min_rows = 1, npu_gflops = 600 }, ... }
 * at most SIM_PROFILE_MAX_VARIANTS, each named by letters, digits and _ (at
 * most SIM_VARIANT_NAME_CAP - 1 bytes), each key validated against the device
 * key table (not `name`).  The nearest file of a chain that declares
 * `variants` gives them all (an empty table declares none); a variant applies
 * over the device as finally resolved -- derived keys and a script's
 * overrides included -- so it stays "this device with these keys changed".
 * Variants come sorted by name. */
#define SIM_PROFILE_MAX_VARIANTS 8
#define SIM_VARIANT_NAME_CAP 24
#define SIM_VARIANT_KEYS_CAP 128 /* >= the device key rows (tests/sim/lua checks it) */
typedef struct sim_device_variant {
    char name[SIM_VARIANT_NAME_CAP];
    sim_device delta;                        /* the values of the keys it sets */
    unsigned char set[SIM_VARIANT_KEYS_CAP]; /* 1 per device key row it sets */
} sim_device_variant;
typedef struct sim_device_variants {
    int32_t n;
    sim_device_variant v[SIM_PROFILE_MAX_VARIANTS];
} sim_device_variants;

/* sim_profile_load_device plus the chain's variants (vars->n = 0: none). */
int sim_profile_load_device_variants(const char *path, sim_device *out, sim_device_variants *vars,
                                     char *err, size_t errlen);

/* dev with the variant's keys applied (dev is a resolved device). */
void sim_device_variant_apply(const sim_device_variant *v, sim_device *dev);
int sim_profile_load_model(const char *path, sim_model *out, char *err, size_t errlen);

/* Generic form: validate the profile at path against keys into out (a struct
 * of the matching type); what names it in messages ("device profile").  No
 * semantic check beyond the key table, and no inheritance: `base` is an
 * unknown key here. */
int sim_profile_load(const char *path, const eng_param_desc *keys, void *out, const char *what,
                     char *err, size_t errlen);

/* Same with inheritance: a `base` resolves as a profile of kind ("devices" or
 * "models"; NULL: as sim_profile_load).  A string key `name` is never
 * inherited (left empty when the derived file sets none); filling an empty
 * name and the semantic check are the caller's, as sim_profile_load_device /
 * _model do.  Another kind: SIM_CONFIG_NAME. */
int sim_profile_load_kind(const char *path, const char *kind, const eng_param_desc *keys, void *out,
                          const char *what, char *err, size_t errlen);

#define SIM_PROFILE_DIR_CAP 1024 /* longest profile directory + 1 */
#define SIM_PROFILE_MAX_DIRS 16

/* The profile search path: each non-empty entry of $FLASHSPEC_CONFIG_PATH
 * (':'-separated, the user's directories, searched first), then the shipped
 * configs directory (home.h: $FLASHSPEC_CONFIG_DIR, else <home>/configs),
 * last.  Each directory holds devices/ and models/.  Returns how many (>= 1). */
int sim_profile_dirs(char (*dirs)[SIM_PROFILE_DIR_CAP], int cap);

/* Resolves a profile name: the first <dir>/<kind>/<name>.lua along the search
 * path that exists (a FIFO or a directory there is found, and loading it
 * says it is not a regular file), from directory index `from` on; returns that
 * index, or -1 when none is (out then names where the shipped one would be),
 * or -2 for a bad kind or name (out too small included).  kind is "devices" or
 * "models"; name is non-empty, made of [A-Za-z0-9._+-], does not start with
 * '.', and contains neither '/' nor "..". */
int sim_profile_find(const char *kind, const char *name, int from, char *out, size_t n);

/* sim_profile_find from the first directory: SIM_OK (found or not) or
 * SIM_CONFIG_NAME. */
int sim_profile_path(const char *kind, const char *name, char *out, size_t n);

#define SIM_PROFILE_NAME_CAP 64 /* longest listed name + 1 */
#define SIM_PROFILE_LIST_MAX 1024

/* The profile names of kind ("devices" or "models") along the search path:
 * valid names of regular files NAME.lua, each once, sorted, at most cap.
 * Returns how many, or -1 when no directory of the path can be read. */
int sim_profile_names(const char *kind, char (*names)[SIM_PROFILE_NAME_CAP], int cap);

/* For an unknown profile name: " (did you mean 'NEAREST'?)" when one name is
 * close, else " (KIND: a, b, c)" listing them, else "" (nothing to list). */
void sim_profile_suggest(const char *kind, const char *name, char *out, size_t n);

#endif
