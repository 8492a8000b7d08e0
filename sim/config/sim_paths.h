/*
 * sim_paths.h -- where a script's files are found: a path a script names is
 * looked for beside the script, then in the project (the data directory,
 * home.h); an absolute path stands for itself.  The directories come from the
 * caller, so that these functions read no global state.
 */
#ifndef FS_CONFIG_SIM_PATHS_H
#define FS_CONFIG_SIM_PATHS_H

#include <stddef.h>

/* 1 when p names a regular file (not a directory, FIFO or device). */
int sim_paths_is_file(const char *p);

/* The file `path` names into out (n bytes): itself when absolute, else
 * script_dir/path when that is a regular file, else project_dir/path.
 * Returns 0 when out names a regular file, -1 otherwise (out "" when no
 * candidate fits in n).  tried (tn bytes, may be NULL) gets
 * " (looked in SCRIPT_DIR and PROJECT_DIR)" for a relative path, "" for an
 * absolute one. */
int sim_paths_find_file(const char *script_dir, const char *project_dir, const char *path,
                        char *out, size_t n, char *tried, size_t tn);

/* Like sim_paths_find_file for a relative path, but for anything there (a
 * directory, a FIFO): the first of script_dir/path and project_dir/path that
 * exists into out; 0, or -1 with out "" when neither does. */
int sim_paths_find_any(const char *script_dir, const char *project_dir, const char *path,
                       char *out, size_t n);

/* The file nearest to a missing relative `path` by edit distance of the file
 * name, among the files ending in ext (".h5") in path's directory as seen from
 * script_dir and then project_dir: " (did you mean 'DIR/NAME'?)" in path's own
 * spelling of the directory, or "" when path is absolute or nothing is near.
 * Near: a distance of at most max(3, strlen(name) / 3); of names at the same
 * distance, the first found (script_dir's before project_dir's). */
void sim_paths_nearest(const char *script_dir, const char *project_dir, const char *path,
                       const char *ext, char *out, size_t n);

#endif
