/*
 * cmd_profile.h -- `flashspec profile DEVICE MODEL`: the costs the phone model
 * derives from a device and a model profile, for checking a calibration.
 */
#ifndef FS_CMD_PROFILE_H
#define FS_CMD_PROFILE_H

/* argv[0] is "profile".  Returns a status (sim/sim_status.h), which main
 * maps to the exit code. */
int cli_profile_main(int argc, char **argv);

/* argv[0] is "profiles": every device and model profile with its key figures.
 * Returns a status, as cli_profile_main. */
int cli_profiles_main(int argc, char **argv);

#endif
