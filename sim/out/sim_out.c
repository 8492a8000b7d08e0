/*
 * sim_out.c -- the in-memory results table.
 *
 * Storage is column-major: each column owns one growable array of cells
 * (int64_t, double or char *), so the HDF5 writer hands a column to H5Dwrite
 * without copying.  All columns share one row capacity, grown by doubling, so
 * appending a row is amortised O(columns).  Attributes are a small array of
 * owned key/value pairs kept in first-set order (tens of entries: linear scans).
 *
 * Invariants: every column has nrows valid cells; every string cell is a
 * non-NULL owned copy (a fresh row holds an owned ""); names are unique,
 * non-empty, free of '/' and not "." (they are HDF5 link names); columns are added only while nrows
 * == 0.
 */
#include "sim/out/sim_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct res_col {
    char *name;
    sim_out_type type;
    int exact;   /* double column kept at full precision (sim_out_set_exact) */
    void *cells; /* int64_t[cap], double[cap] or char *[cap] */
} res_col;

typedef struct res_attr {
    char *key, *value;
} res_attr;

struct sim_out_table {
    res_col *cols;
    int32_t ncols, cap_cols;
    int64_t nrows, cap_rows;
    res_attr *attrs;
    int32_t nattrs, cap_attrs;
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static size_t cell_size(sim_out_type type)
{
    switch (type) {
    case SIM_OUT_INT64:
        return sizeof(int64_t);
    case SIM_OUT_DOUBLE:
        return sizeof(double);
    case SIM_OUT_STRING:
        break;
    }
    return sizeof(char *);
}

sim_out_table *sim_out_create(void)
{
    return calloc(1, sizeof(sim_out_table));
}

void sim_out_destroy(sim_out_table *t)
{
    if (!t) return;
    for (int32_t c = 0; c < t->ncols; c++) {
        if (t->cols[c].type == SIM_OUT_STRING) {
            char **s = t->cols[c].cells;
            for (int64_t r = 0; r < t->nrows; r++)
                free(s[r]);
        }
        free(t->cols[c].cells);
        free(t->cols[c].name);
    }
    free(t->cols);
    for (int32_t i = 0; i < t->nattrs; i++) {
        free(t->attrs[i].key);
        free(t->attrs[i].value);
    }
    free(t->attrs);
    free(t);
}

int32_t sim_out_find_column(const sim_out_table *t, const char *name)
{
    if (!t || !name) return -1;
    for (int32_t c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c].name, name) == 0) return c;
    return -1;
}

int sim_out_add_column(sim_out_table *t, const char *name, sim_out_type type, int32_t *col)
{
    if (!t || !name || !name[0] || t->nrows > 0) return SIM_INTERNAL_ARG;
    /* names become HDF5 link names: no '/', and "." names the group itself */
    if (strchr(name, '/') || strcmp(name, ".") == 0) return SIM_INTERNAL_ARG;
    if (type != SIM_OUT_STRING && type != SIM_OUT_INT64 && type != SIM_OUT_DOUBLE)
        return SIM_INTERNAL_ARG;
    if (sim_out_find_column(t, name) >= 0) return SIM_INTERNAL_ARG;
    if (t->ncols == t->cap_cols) {
        int32_t cap = t->cap_cols ? 2 * t->cap_cols : 16;
        res_col *cols = realloc(t->cols, (size_t)cap * sizeof *cols);
        if (!cols) return SIM_NOMEM;
        t->cols = cols;
        t->cap_cols = cap;
    }
    res_col *c = &t->cols[t->ncols];
    c->name = dup_str(name);
    if (!c->name) return SIM_NOMEM;
    c->type = type;
    c->exact = 0;
    c->cells = NULL;
    if (t->cap_rows > 0) {
        c->cells = malloc((size_t)t->cap_rows * cell_size(type));
        if (!c->cells) {
            free(c->name);
            return SIM_NOMEM;
        }
    }
    if (col) *col = t->ncols;
    t->ncols++;
    return SIM_OK;
}

int sim_out_set_attr(sim_out_table *t, const char *key, const char *value)
{
    if (!t || !key || !key[0] || !value) return SIM_INTERNAL_ARG;
    char *v = dup_str(value);
    if (!v) return SIM_NOMEM;
    for (int32_t i = 0; i < t->nattrs; i++) {
        if (strcmp(t->attrs[i].key, key) == 0) {
            free(t->attrs[i].value);
            t->attrs[i].value = v;
            return SIM_OK;
        }
    }
    if (t->nattrs == t->cap_attrs) {
        int32_t cap = t->cap_attrs ? 2 * t->cap_attrs : 8;
        res_attr *a = realloc(t->attrs, (size_t)cap * sizeof *a);
        if (!a) goto err;
        t->attrs = a;
        t->cap_attrs = cap;
    }
    char *k = dup_str(key);
    if (!k) goto err;
    t->attrs[t->nattrs].key = k;
    t->attrs[t->nattrs].value = v;
    t->nattrs++;
    return SIM_OK;
err:
    free(v);
    return SIM_NOMEM;
}

/* Grows every column to cap rows; on failure the columns that did grow keep
 * their larger buffers (harmless) and cap_rows is unchanged. */
static int grow_rows(sim_out_table *t, int64_t cap)
{
    for (int32_t c = 0; c < t->ncols; c++) {
        void *cells = realloc(t->cols[c].cells, (size_t)cap * cell_size(t->cols[c].type));
        if (!cells) return SIM_NOMEM;
        t->cols[c].cells = cells;
    }
    t->cap_rows = cap;
    return SIM_OK;
}

int sim_out_append_row(sim_out_table *t, int64_t *row)
{
    if (!t) return SIM_INTERNAL_ARG;
    if (t->nrows == t->cap_rows && grow_rows(t, t->cap_rows ? 2 * t->cap_rows : 16) != SIM_OK)
        return SIM_NOMEM;
    int64_t r = t->nrows;
    int32_t c;
    for (c = 0; c < t->ncols; c++) {
        res_col *col = &t->cols[c];
        if (col->type == SIM_OUT_INT64) {
            ((int64_t *)col->cells)[r] = 0;
        } else if (col->type == SIM_OUT_DOUBLE) {
            ((double *)col->cells)[r] = NAN;
        } else {
            char *s = dup_str("");
            if (!s) goto err;
            ((char **)col->cells)[r] = s;
        }
    }
    t->nrows++;
    if (row) *row = r;
    return SIM_OK;
err:
    while (c-- > 0)
        if (t->cols[c].type == SIM_OUT_STRING) free(((char **)t->cols[c].cells)[r]);
    return SIM_NOMEM;
}

static res_col *cell_col(sim_out_table *t, int64_t row, int32_t col, sim_out_type type)
{
    if (!t || row < 0 || row >= t->nrows || col < 0 || col >= t->ncols) return NULL;
    return t->cols[col].type == type ? &t->cols[col] : NULL;
}

int sim_out_set_string(sim_out_table *t, int64_t row, int32_t col, const char *v)
{
    res_col *c = cell_col(t, row, col, SIM_OUT_STRING);
    if (!c) return SIM_INTERNAL_ARG;
    char *s = dup_str(v ? v : "");
    if (!s) return SIM_NOMEM;
    char **cells = c->cells;
    free(cells[row]);
    cells[row] = s;
    return SIM_OK;
}

int sim_out_set_int64(sim_out_table *t, int64_t row, int32_t col, int64_t v)
{
    res_col *c = cell_col(t, row, col, SIM_OUT_INT64);
    if (!c) return SIM_INTERNAL_ARG;
    ((int64_t *)c->cells)[row] = v;
    return SIM_OK;
}

int sim_out_set_double(sim_out_table *t, int64_t row, int32_t col, double v)
{
    res_col *c = cell_col(t, row, col, SIM_OUT_DOUBLE);
    if (!c) return SIM_INTERNAL_ARG;
    if (isfinite(v) && !c->exact) {
        /* the CSV's precision, so both files hold the same number */
        char buf[64];
        snprintf(buf, sizeof buf, "%.10g", v);
        v = strtod(buf, NULL);
    }
    ((double *)c->cells)[row] = v;
    return SIM_OK;
}

int sim_out_set_exact(sim_out_table *t, int32_t col)
{
    if (!t || col < 0 || col >= t->ncols || t->cols[col].type != SIM_OUT_DOUBLE || t->nrows > 0)
        return SIM_INTERNAL_ARG;
    t->cols[col].exact = 1;
    return SIM_OK;
}

int sim_out_col_exact(const sim_out_table *t, int32_t col)
{
    return t && col >= 0 && col < t->ncols && t->cols[col].exact;
}

int32_t sim_out_ncols(const sim_out_table *t)
{
    return t ? t->ncols : 0;
}

int64_t sim_out_nrows(const sim_out_table *t)
{
    return t ? t->nrows : 0;
}

const char *sim_out_col_name(const sim_out_table *t, int32_t col)
{
    return t && col >= 0 && col < t->ncols ? t->cols[col].name : NULL;
}

sim_out_type sim_out_col_type(const sim_out_table *t, int32_t col)
{
    return t && col >= 0 && col < t->ncols ? t->cols[col].type : SIM_OUT_STRING;
}

const void *sim_out_col_data(const sim_out_table *t, int32_t col)
{
    if (!t || col < 0 || col >= t->ncols || t->nrows == 0) return NULL;
    return t->cols[col].cells;
}

int32_t sim_out_nattrs(const sim_out_table *t)
{
    return t ? t->nattrs : 0;
}

const char *sim_out_attr_key(const sim_out_table *t, int32_t i)
{
    return t && i >= 0 && i < t->nattrs ? t->attrs[i].key : NULL;
}

const char *sim_out_attr_value(const sim_out_table *t, int32_t i)
{
    return t && i >= 0 && i < t->nattrs ? t->attrs[i].value : NULL;
}

const char *sim_out_get_attr(const sim_out_table *t, const char *key)
{
    if (!t || !key) return NULL;
    for (int32_t i = 0; i < t->nattrs; i++)
        if (strcmp(t->attrs[i].key, key) == 0) return t->attrs[i].value;
    return NULL;
}
