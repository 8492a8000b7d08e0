/*
 * sim_fit_rows.c -- the result rows as reference rows (sim_fit_rows.h).
 */
#include "sim/fit/sim_fit_rows.h"

#include <string.h>

_Static_assert((int)FS_REF_COL_NONE == (int)FS_COL_NONE &&
                   (int)FS_REF_COL_NUMBER == (int)FS_COL_NUMBER &&
                   (int)FS_REF_COL_TEXT == (int)FS_COL_TEXT,
               "refcsv.h's column kinds are rows.h's");

static int result_kind(const char *name)
{
    /* a reference's `tree_nodes` is its own derived key (the size of a fixed
     * tree: refcsv.h), never the results' column of that name (which also
     * holds the caps of policies that size their trees per cycle) */
    if (!strcmp(name, "tree_nodes")) return FS_COL_NONE;
    return fs_row_column_kind(name);
}

static int result_get(const void *ctx, const void *row, const char *name, double *num, char *text,
                      size_t n)
{
    return fs_row_get(ctx, row, name, num, text, n);
}

fs_ref_cols fs_ref_result_cols(const fs_rows_meta *m)
{
    return (fs_ref_cols){.kind = result_kind, .get = result_get, .ctx = m};
}
