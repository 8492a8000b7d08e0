/*
 * plugin.h -- native policy plug-ins (`--plugin FILE.so`): a shared object
 * exporting one eng_policy_desc and the ABI number it was built for
 * (engine/eng_policy.h, "Native plug-ins").  Loaded by the command line
 * only -- a script cannot load code -- before the script runs; its policy is
 * then flashspec.policy.NAME like a built-in one (the loaded plug-ins reach
 * the script API as fs_plugin records, sim/lua/api.h).
 */
#ifndef FS_CLI_PLUGIN_H
#define FS_CLI_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/eng_policy.h"
#include "sim/lua/api.h" /* fs_plugin: what the script API is handed */

/* Loads path as plug-in number n_loaded (loaded[0..n_loaded) are the earlier
 * ones, for name clashes).  Returns SIM_OK, or a status (sim_status.h) with
 * one line in err: SIM_MISSING for a missing file, SIM_NOMEM, SIM_CONFIG for
 * anything else (not loadable, missing symbol, other ABI, malformed
 * descriptor, a name already taken).  The object stays
 * loaded for the life of the process. */
int fs_plugin_load(const char *path, fs_plugin *out, const fs_plugin *loaded, int n_loaded,
                   char *err, size_t errlen);

/* The descriptor check fs_plugin_load makes: 0 when d is one the runtime can
 * use (a name that is an identifier, a create function, a terminated table of
 * at most 256 rows, every row's field, count, capacity, range, default and
 * choices inside the params struct and consistent, distinct identifier
 * names); otherwise 1 with what it needs in why. */
int fs_plugin_check_desc(const eng_policy_desc *d, char *why, size_t len);

/* The descriptor sym (a plug-in's ENG_PLUGIN_DESC_SYMBOL) of ABI abi as this
 * runtime's layout: sym itself for ENG_POLICY_ABI; for an older ABI down to
 * ENG_POLICY_ABI_MIN, a copy (allocated: the caller frees it, fs_plugin_load
 * when it refuses the plug-in, else it lives as long as the plug-in) of the fields that
 * ABI had, the later ones zero (no tree size stated, observes_outcome 0).
 * NULL for another ABI, a NULL sym, or no memory. */
const eng_policy_desc *fs_plugin_adopt(int32_t abi, const void *sym);

#endif
