/*
 * sim_tmp.h -- names of the temporary files flashspec writes before renaming
 * them into place, and the removal of those a killed process left behind.
 *
 * Every temporary is named ".NAME.fstmp-PID-HOST-SUFFIX" in the directory of
 * its final file: PID the writer's process id, HOST 8 hex digits of a hash of
 * its host name, SUFFIX unique per writer (mkstemp's six characters, or a
 * serial number).  A temporary is stale -- safe to remove -- when its writer
 * ran on this host and is no longer alive, or when it is older than
 * SIM_TMP_STALE_S whoever wrote it (a writer on another node of a shared file
 * system that crashed).  A live writer's temporaries are never touched.
 */
#ifndef SIM_TMP_H
#define SIM_TMP_H

#include <stddef.h>

#define SIM_TMP_MARK ".fstmp-"
#define SIM_TMP_STALE_S (24 * 3600)

/* Writes "DIR/.NAME.fstmp-PID-HOST-" followed by suffix into out (dir may be
 * "" for the current directory).  Returns 0, or -1 if it does not fit. */
int sim_tmp_name(char *out, size_t n, const char *dir, const char *name, const char *suffix);

/* Removes the stale temporaries directly inside dir (not below it); entries
 * that are not regular files are left alone.  Returns how many were removed
 * (0 when dir cannot be read). */
int sim_tmp_clean(const char *dir);

#endif
