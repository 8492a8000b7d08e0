/*
 * rows.h -- result rows of experiment points and their stable columns.
 *
 * One table of column descriptors drives both views of a row: the Lua table a
 * script gets back from flashspec.run/sweep (sim/lua/lrows.c, through
 * fs_row_cell) and the results.csv/results.h5 files, so the two always carry
 * the same fields under the same names.  No Lua here.  Column names
 * are a user-facing contract: extend, never rename.
 *
 * Beside the fixed columns, each policy parameter of the rows' labels gets a
 * param_<name> column and each tag a tag_<name> column, in order of first
 * appearance: exact doubles (NaN where absent) where every value is a number,
 * else text ("" where absent), so a column's type does not depend on the other
 * rows of the run.
 *
 * The results files hold only deterministic values (same inputs and seed give
 * identical bytes); the host time a point took (sim_wall_s) is returned to Lua
 * and printed, but kept out of the files for that reason.
 */
#ifndef FS_OUT_ROWS_H
#define FS_OUT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/replay/replay.h"

/* Bytes of a policy_params label, its NUL included: the longest label a
 * policy's parameters make is refused rather than cut (sim_out_params_label),
 * so the rows of two parameter sets never read alike. */
#define FS_LABEL_CAP 1024

/* The label of a policy's params ("k=8,unit=cpu"; the policy_params column):
 * every row of table read from params, "name=value" joined by ',', each value
 * whole (a list's every element joined by '/', a real in the fewest digits
 * that read back as it: sim_out_fmt_exact), into out.  0, or -1 when it needs
 * more than n bytes (out then holds a cut label that must not be used). */
int sim_out_params_label(const eng_param_desc *table, const void *params, char *out, size_t n);

typedef struct fs_row {
    char policy[64], policy_params[FS_LABEL_CAP], device[64], target[64], draft[64], trace[128];
    /* the point's tags ("name=value" lines, names sorted; the tag_<name> columns) */
    char tags[256];
    double dram_fraction;
    int32_t max_new_tokens, prompts;
    uint64_t seed, trace_checksum;
    sim_point_stats st;
    char accept[16], runtime[16]; /* point keys, as written in the script */
    char synth_tokens[8];
    double top_p, temperature;
    int32_t prompt_offset; /* point key */
    int64_t tune_evals;    /* flashspec.tune: evaluations its search made (0 otherwise) */
    double tune_train;     /* flashspec.tune: objective on the tuning prompts (NaN otherwise) */
    char tune_objective[64]; /* flashspec.tune: the column it maximised ("" otherwise) */
} fs_row;

/* Values shared by every row of one script run. */
typedef struct fs_rows_meta {
    char script_hash[20];
} fs_rows_meta;

/* The number of fixed columns. */
int fs_row_columns(void);

/* Cell kinds of fs_row_cell. */
enum { FS_CELL_TEXT = 1, FS_CELL_INTEGER = 2, FS_CELL_NUMBER = 3 };

/* Bytes a cell's text may need in buf (the accepted_hist column's). */
#define FS_ROW_CELL_CAP (RP_HIST_BINS * 21 + 1)

/* Value of the c-th fixed column of r (in file order), as the results files
 * write it: text into *s (which may point into buf[0..n) or into r), a whole
 * number into *integer, or a real into *num.  Returns its FS_CELL_* kind, or
 * 0 for c out of range. */
int fs_row_cell(const fs_rows_meta *m, const fs_row *r, int c, const char **s, int64_t *integer,
                double *num, char *buf, size_t n);

/* The kind of a param_/tag_ value: 2 a whole number that fits int64 (into *i
 * and *d), 1 another finite number (into *d), 0 text. */
int fs_row_value_kind(const char *v, int64_t *i, double *d);

/* The i-th fixed column, in file order: its name, kind ("text", "integer" or
 * "number") and one-line meaning.  Returns 0 past the last. */
int fs_row_column_info(int i, const char **name, const char **kind, const char **doc);

/* Column kinds for fs_row_column_kind / fs_row_get. */
enum { FS_COL_NONE = 0, FS_COL_NUMBER = 1, FS_COL_TEXT = 2 };

/* Kind of the result column called name (FS_COL_NONE: no such column). */
int fs_row_column_kind(const char *name);

/* Value of column name of r: a number into *num or text into text[0..n) (as
 * the results files write it).  Returns its kind, FS_COL_NONE when unknown. */
int fs_row_get(const fs_rows_meta *m, const fs_row *r, const char *name, double *num, char *text,
               size_t n);

/* Calls fn for each "name=value" of a policy_params label or tags text, in
 * order: a quoted Lua string is unquoted, a braced table kept whole.  Names
 * that are not identifiers ([A-Za-z_][A-Za-z0-9_]*) are skipped (they cannot
 * name a column).  Stops early when fn returns nonzero. */
void fs_row_each_pair(const char *text, int tags,
                      int (*fn)(void *ctx, const char *name, const char *value), void *ctx);

/* Writes rows to DIR/results.{csv,h5} atomically.  Returns SIM_OK, or a status
 * (sim_status.h: SIM_NOMEM, SIM_CANTCREATE) with one line in err. */
int fs_rows_write(const fs_rows_meta *m, const fs_row *rows, int32_t n, const char *dir,
                  char *err, size_t errlen);

#endif
