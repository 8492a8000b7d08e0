/*
 * cmd_policy.h -- `flashspec policies [NAME] [--markdown]`: the policies the
 * build registers and each one's parameters (key, type, default, range,
 * meaning), read from the engine's own parameter tables.
 */
#ifndef FS_CMD_POLICY_H
#define FS_CMD_POLICY_H

/* argv[0] is "policies" (or "policy").  Returns a status (sim/sim_status.h),
 * which main maps to the exit code. */
int cli_policy_main(int argc, char **argv);

#endif
