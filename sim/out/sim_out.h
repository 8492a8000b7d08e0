/*
 * sim_out.h -- typed, column-ordered results table and its atomic writers.
 *
 * A results table is what one `flashspec run`/`sweep` produces: one row per sweep
 * point, columns declared once (name + type) in the order they will appear in
 * every output, plus file-level string attributes for provenance (flashspec
 * version, script hash, trace checksum, seed, ...).
 *
 * Lifecycle: sim_out_create -> sim_out_add_column* -> (sim_out_append_row ->
 * sim_out_set_*)* -> sim_out_write -> sim_out_destroy.  Columns can be added
 * only while the table has no rows, so every row has every column.  A fresh row
 * holds "" in string cells, 0 in int64 cells and NaN in double cells.
 * sim_out_set_double keeps 10 significant digits (the CSV's precision), so the
 * CSV and the HDF5 file hold the same number in every double cell; a column
 * marked with sim_out_set_exact keeps every bit, and its CSV cells carry the
 * fewest digits (up to 17) that read back as the same double.
 *
 * Ownership: the table owns copies of every name, string cell and attribute;
 * callers' strings are borrowed only for the duration of the call.  Pointers
 * returned by the getters stay valid until the table is modified or destroyed.
 *
 * Outputs (sim_out_write): DIR/results.csv and DIR/results.h5, both or neither.
 *   CSV: header row of column names, then one line per row, "\n" line ends;
 *        fields quoted per RFC 4180 when they hold a comma, quote, CR or LF
 *        (quotes doubled); int64 as decimal integers; doubles as "%.10g" in the
 *        C locale with ".0" appended where that prints no decimal point or
 *        exponent (so a reader infers a double column as floating point even
 *        when every value is whole), NaN as `nan`, infinities as `inf`/`-inf`.
 *   HDF5: group /results holding one 1-D dataset per column (H5T_STD_I64LE,
 *        H5T_IEEE_F64LE or variable-length UTF-8 strings), created in column
 *        order; the group attribute `columns` (1-D variable-length UTF-8
 *        strings) records that order.  Each table attribute becomes a scalar
 *        variable-length UTF-8 string attribute of the root group.  No
 *        timestamps are stored, so equal tables give byte-identical files.
 * Not thread-safe: one table per thread; sim_out_write calls the HDF5 library,
 * which must not be entered concurrently unless it was built thread-safe.
 */
#ifndef SIM_OUT_H
#define SIM_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim_status.h"

typedef enum sim_out_type {
    SIM_OUT_STRING = 0,
    SIM_OUT_INT64 = 1,
    SIM_OUT_DOUBLE = 2
} sim_out_type;

typedef struct sim_out_table sim_out_table; /* opaque */

/* New empty table, or NULL when out of memory.  Free with sim_out_destroy. */
sim_out_table *sim_out_create(void);
void sim_out_destroy(sim_out_table *t); /* NULL-safe */

/* Declares the next column.  name: non-empty, unique in the table, no '/' and
 * not "." (it becomes an HDF5 dataset name).  Only while
 * the table has no rows.  Returns SIM_OK and stores the column index in *col
 * (when col is not NULL), or SIM_INTERNAL_ARG / SIM_NOMEM, leaving *col alone. */
int sim_out_add_column(sim_out_table *t, const char *name, sim_out_type type, int32_t *col);

/* Marks double column col as exact (see above).  Only while the table has no
 * rows.  Returns SIM_OK or SIM_INTERNAL_ARG. */
int sim_out_set_exact(sim_out_table *t, int32_t col);
int sim_out_col_exact(const sim_out_table *t, int32_t col); /* 1 when marked */

/* Sets (or replaces) file attribute key = value; order of first setting is kept.
 * Returns SIM_OK, SIM_INTERNAL_ARG or SIM_NOMEM. */
int sim_out_set_attr(sim_out_table *t, const char *key, const char *value);

/* Appends a row of default cells.  Returns SIM_OK and stores its index in *row
 * (when row is not NULL), or SIM_INTERNAL_ARG / SIM_NOMEM, leaving *row alone. */
int sim_out_append_row(sim_out_table *t, int64_t *row);

/* Cell setters.  SIM_INTERNAL_ARG when row/col is out of range or the column has
 * another type.  The string is copied (NULL stores ""). */
int sim_out_set_string(sim_out_table *t, int64_t row, int32_t col, const char *v);
int sim_out_set_int64(sim_out_table *t, int64_t row, int32_t col, int64_t v);
int sim_out_set_double(sim_out_table *t, int64_t row, int32_t col, double v);

/* ---- read access (used by the writers and the Lua layer) ---- */
int32_t sim_out_ncols(const sim_out_table *t);
int64_t sim_out_nrows(const sim_out_table *t);
int32_t sim_out_find_column(const sim_out_table *t, const char *name); /* -1 if none */
const char *sim_out_col_name(const sim_out_table *t, int32_t col);     /* NULL if bad col */
sim_out_type sim_out_col_type(const sim_out_table *t, int32_t col);
/* Contiguous cells of column col, nrows entries: const int64_t *, const double *
 * or const char *const * by type; NULL for a bad col or an empty table. */
const void *sim_out_col_data(const sim_out_table *t, int32_t col);
int32_t sim_out_nattrs(const sim_out_table *t);
const char *sim_out_attr_key(const sim_out_table *t, int32_t i);       /* NULL if bad i */
const char *sim_out_attr_value(const sim_out_table *t, int32_t i);     /* NULL if bad i */
const char *sim_out_get_attr(const sim_out_table *t, const char *key); /* NULL if unset */

/* File names sim_out_write produces inside DIR. */
#define SIM_OUT_CSV_NAME "results.csv"
#define SIM_OUT_H5_NAME "results.h5"

/* Writes DIR/results.csv and DIR/results.h5 atomically: creates DIR (and its
 * parents) if needed, writes both to temporary files in DIR, fsyncs them, renames
 * them into place and fsyncs DIR.  Existing results files are replaced.  On
 * failure no temporary file remains, neither new results file is left in place,
 * err (errlen bytes, may be NULL) receives one line naming the path and the
 * cause, and the result is SIM_CANTCREATE (or SIM_INTERNAL_ARG / SIM_NOMEM). */
int sim_out_write(const sim_out_table *t, const char *dir, char *err, size_t errlen);

/* Writes data[0..len) to DIR/name atomically (DIR created if needed; a
 * temporary in DIR renamed over the name; mode 0644).  On failure no temporary
 * remains and err gets one line.  Returns SIM_OK, SIM_CANTCREATE,
 * SIM_INTERNAL_ARG (name empty or holding '/') or SIM_NOMEM. */
int sim_out_write_file(const char *dir, const char *name, const void *data, size_t len,
                       char *err, size_t errlen);

/* Whether a file a script asks for (a calibration's NAME.md, a derived
 * profile's NAME.lua) may go into an output directory beside what the run
 * writes there itself: NULL when it may, else the reserved stem it would
 * clobber -- results, run, script, points, report or fidelity, before the
 * first '.', compared without regard to case (on a case-insensitive file
 * system Script.lua is script.lua) -- or "." for a name starting with '.'
 * (the run's temporaries). */
const char *sim_out_name_reserved(const char *name);

/* x in the fewest significant digits, at least min_digits (1..17), that read
 * back as the same double ("%.*g", C locale's strtod); every writer of a
 * number that must read back exactly uses it.  min_digits 6 keeps the whole
 * digits of numbers below 1e6 ("5000", where 1 digit gives "5e+03"); 0
 * keeps every whole digit of a number from 1 to 1e16 and is otherwise 1. */
void sim_out_real(char *out, size_t n, double x, int min_digits);

/* Formats the CSV text of t into a malloc'ed NUL-terminated buffer (*out, owned
 * by the caller; *len excludes the NUL).  Same bytes as results.csv. */
int sim_out_csv_format(const sim_out_table *t, char **out, size_t *len);

#endif
