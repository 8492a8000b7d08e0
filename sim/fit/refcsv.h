/*
 * refcsv.h -- reference measurements: the CSV that analysis/fidelity.py and
 * flashspec.calibrate read, matched against result rows.
 *
 * The rows matched are the caller's: fs_ref_cols names their columns (the
 * kind of each, the value of one in a row), so the reader knows no result
 * type (sim_fit_rows.h gives the simulator's result rows).
 *
 * Format (analysis/README.md "Reference CSV"): lines starting with '#' and
 * blank lines are ignored (line numbers stay true); the first other line is the
 * header.  Columns `metric`, `value` and `source` are required, `note` is
 * optional; every other column is a key naming a result column or the
 * derived `tree_nodes` (nodes of the verified tree, root included, for the
 * policies that fix it: flash_ar 1, chain k + 1, eagle2 total_tokens + 1,
 * specinfer 1 + w1 + w1 w2 + ...).  An empty key cell matches anything.
 * `metric` is an arithmetic expression over numeric result columns and numbers
 * with + - * / and parentheses ("npu_ms+cpu_ms", "verify_ms-flash_ms",
 * "waste_ms/(verify_ms-flash_ms)").  `value` is a positive finite number.
 * Fields may be double-quoted ("" inside quotes is a quote).
 *
 * Untrusted input: the file must be a regular file of at most
 * FS_REF_MAX_BYTES; at most FS_REF_MAX_ROWS rows and FS_REF_MAX_COLS columns;
 * every error is one line "PATH:LINE: ..." and status SIM_DATA (exit 65),
 * SIM_MISSING (66) or SIM_NOMEM (70).
 */
#ifndef FS_FIT_REFCSV_H
#define FS_FIT_REFCSV_H

#include <stddef.h>
#include <stdint.h>
#include "sim/sim_status.h"

#define FS_REF_MAX_BYTES (8 << 20)
#define FS_REF_MAX_ROWS 10000
#define FS_REF_MAX_COLS 32
#define FS_REF_MAX_OPS 64 /* tokens of one metric expression */

/* Column kinds (equal to FS_COL_* of sim/out/rows.h, as sim_fit_rows.c checks). */
enum { FS_REF_COL_NONE = 0, FS_REF_COL_NUMBER = 1, FS_REF_COL_TEXT = 2 };

/* The result rows a reference is read for and matched against.  The derived
 * key tree_nodes reads the text columns policy and policy_params. */
typedef struct fs_ref_cols {
    /* The kind of the result column called name (FS_REF_COL_NONE: none). */
    int (*kind)(const char *name);
    /* The value of column name in row: a number into *num or text into
     * text[0..n) (text may be NULL); returns its kind. */
    int (*get)(const void *ctx, const void *row, const char *name, double *num, char *text,
               size_t n);
    const void *ctx; /* passed to get */
} fs_ref_cols;

/* One step of a metric in reverse Polish notation. */
typedef struct fs_ref_op {
    char kind;    /* 'n' number, 'c' column, or one of + - * / */
    double num;   /* 'n' */
    char col[48]; /* 'c' */
} fs_ref_op;

typedef struct fs_ref_row {
    int32_t line;                /* 1-based line in the file */
    char *keys[FS_REF_MAX_COLS]; /* key cells, "" = any (owned) */
    char metric[128];            /* as written */
    fs_ref_op ops[FS_REF_MAX_OPS];
    int32_t n_ops;
    double value; /* measured */
    char source[128], note[128];
} fs_ref_row;

typedef struct fs_ref {
    char path[4096];
    int32_t n_keys;
    char key_names[FS_REF_MAX_COLS][48];
    fs_ref_row *rows;
    int32_t n_rows;
} fs_ref;

/* Loads and validates path into *out (free with fs_ref_free), its key and
 * metric columns against cols->kind.  Returns SIM_OK or an error status
 * with one line in err. */
int fs_ref_load(const char *path, const fs_ref_cols *cols, fs_ref *out, char *err, size_t errlen);
void fs_ref_free(fs_ref *r); /* NULL-safe; leaves *r empty */

/* 1 when result row r matches reference row k (every non-empty key equal). */
int fs_ref_match(const fs_ref *ref, int32_t k, const fs_ref_cols *cols, const void *r);

/* The metric of reference row k evaluated on result row r: 0 and *out, or -1
 * (division by zero, non-finite result). */
int fs_ref_eval(const fs_ref *ref, int32_t k, const fs_ref_cols *cols, const void *r, double *out);

/* Nodes of the verified tree, root included, that registered policy
 * `policy` with the parameter label `params` ("k=8,unit=cpu") fixes, by the
 * tree size its descriptor states (eng_tree_knob, fixed); NAN when it does
 * not (no tree size, or a cap). */
double fs_ref_tree_nodes(const char *policy, const char *params);

#endif
