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

#include "engine/eng_policy.h"
#include "sim/lua/api.h" /* fs_plugin: what the script API is handed */

/* Loads path as plug-in number n_loaded (loaded[0..n_loaded) are the earlier
 * ones, for name clashes).  Returns 0, or an exit code (66 missing file, 78
 * anything else: not loadable, missing symbol, other ABI, malformed
 * descriptor, a name already taken) with one line in err.  The object stays
 * loaded for the life of the process. */
int fs_plugin_load(const char *path, fs_plugin *out, const fs_plugin *loaded, int n_loaded,
                   char *err, size_t errlen);

/* The descriptor check fs_plugin_load makes: 0 when d is one the runtime can
 * use (a name that is an identifier, a create function, a terminated table of
 * at most 256 rows, every row's field, count, capacity, range, default and
 * choices inside the params struct and consistent, distinct identifier
 * names); otherwise 1 with what it needs in why. */
int fs_plugin_check_desc(const eng_policy_desc *d, char *why, size_t len);

#endif
