/*
 * cmd_explain.h -- `flashspec profiles --explain NAME` and `flashspec
 * profiles parts` (cmd_explain.c).
 */
#ifndef FS_CMD_EXPLAIN_H
#define FS_CMD_EXPLAIN_H

/* Every resolved value of profile NAME with its source; kind "devices",
 * "models" or NULL (a device, else a model).  Returns a status (sim/sim_status.h). */
int cli_profiles_explain(const char *kind, const char *name, int md);

/* The part files along the search path, each loaded and checked. */
int cli_profiles_parts(int md);

#endif
