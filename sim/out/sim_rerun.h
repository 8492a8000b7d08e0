/*
 * sim_rerun.h -- a run's script as its results directory records it, and
 * what `flashspec rerun DIR` compares, in plain C (the reading of run.json
 * itself is sim_rerun_read.h):
 *   - the script's bytes, read once: what is hashed (the script_hash column
 *     and run.json), run and copied into DIR/script.lua;
 *   - where the recorded script was, so that its relative paths resolve as
 *     they did;
 *   - where today's file of a recorded profile is, and its values against
 *     the recorded ones, key by key;
 *   - two results files byte for byte (a rerun's against the original's).
 */
#ifndef SIM_OUT_RERUN_H
#define SIM_OUT_RERUN_H

#include <stddef.h>

#include "engine/eng_param.h"

/* Scripts longer than this are refused (sim_out_script_read). */
#define SIM_OUT_SCRIPT_MAX_BYTES ((size_t)16 << 20)

/* The bytes of the script at path, NUL-terminated (malloc'd: the caller
 * frees them; *len their count), or NULL with one line in err: the file
 * cannot be opened or read, is larger than 16 MiB, or memory ran out. */
char *sim_out_script_read(const char *path, size_t *len, char *err, size_t errlen);

/* The script's hash as run.json and the script_hash column give it: a
 * 64-bit FNV-1a-style hash of b[0..len) (offset basis 1469598103934665603,
 * the FNV prime) in 16 lowercase hex digits, into out[0..n). */
void sim_out_script_hash(const char *b, size_t len, char *out, size_t n);

/* The directory a rerun of DIR runs the recorded script from: the directory
 * of the path run.json gave (given: absolute, or relative to home, the
 * project; "." when home is NULL) when it still exists, else dir itself
 * (where script.lua is); into out[0..n). */
void sim_out_rerun_script_dir(const char *dir, const char *given, const char *home, char *out,
                              size_t n);

/* Today's path of a profile file run.json records as rel (absolute, or
 * relative to home, the project), resolved (realpath) when it exists, into
 * out[0..n); "" when it does not fit (there is no file of today to compare
 * with). */
void sim_out_rerun_profile_path(const char *rel, const char *home, char *out, size_t n);

/* How many keys of the table hold other values in today's params than in
 * the recorded ones (rec); when some do, msg[0..n) names them -- "KEY V today,
 * W in run.json", "; " between them, the first six with their values, then
 * "; N more" -- each value as a profile writes it (a real in the fewest
 * digits that read back as it, a string quoted, a list in braces "{1,2}").
 * Returns 0 (msg untouched) when every key agrees. */
int sim_out_param_diff(const eng_param_desc *keys, const void *today, const void *rec, char *msg,
                       size_t n);

/* Whether two files hold the same bytes: 1 same, 0 different, -1 one cannot
 * be opened.  line (may be NULL) gets the first line that differs, 1-based
 * (when one file is the other's beginning: the line the shorter one ends
 * on), 0 unless different. */
int sim_out_same_file(const char *a, const char *b, long *line);

#endif
