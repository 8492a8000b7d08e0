/*
 * refcsv.c -- reading and matching reference measurements (see refcsv.h).
 *
 * The file is read whole (bounded), split into records by a small RFC 4180
 * reader (quotes, "" escapes, CR LF), and every cell is validated before
 * anything is returned: an unknown key column or metric column, a malformed
 * number or a row of the wrong width fails the whole load with its line.
 * Metrics are compiled once into reverse Polish notation by a recursive-descent
 * parser (expr = term {(+|-) term}; term = factor {(*|/) factor};
 * factor = number | column | ( expr ) | - factor).
 */
#include "sim/fit/refcsv.h"

#include "engine/eng_policy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t n, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return code;
}

/* ------------------------------------------------------------ file reading */

/* Reads a regular file of at most FS_REF_MAX_BYTES (O_NONBLOCK: a FIFO never
 * blocks the open).  Returns a NUL-terminated buffer or NULL with err set. */
static char *slurp(const char *path, int *code, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *code = SIM_MISSING;
        fail(err, errlen, 0, "%s: cannot open reference file: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *code = SIM_DATA;
        fail(err, errlen, 0, "%s: reference file is not a regular file", path);
        return NULL;
    }
    if (st.st_size > FS_REF_MAX_BYTES) {
        close(fd);
        *code = SIM_DATA;
        fail(err, errlen, 0, "%s: reference file larger than %d bytes", path, FS_REF_MAX_BYTES);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        *code = SIM_NOMEM;
        fail(err, errlen, 0, "%s: out of memory", path);
        return NULL;
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    if (strlen(buf) != got) {
        free(buf);
        *code = SIM_DATA;
        fail(err, errlen, 0, "%s: reference file holds NUL bytes (not a CSV file)", path);
        return NULL;
    }
    return buf;
}

/* Splits the record starting at *p into cells (in place; quotes removed).
 * Advances *p past the record and *line past its lines.  Returns the cell
 * count, or -1 for an unterminated quote or too many cells. */
static int split_record(char **p, int32_t *line, char **cells, int cap)
{
    char *s = *p, *w = s;
    int n = 0;
    cells[n++] = w;
    for (;;) {
        if (*s == '"') {
            s++;
            for (;;) {
                if (!*s) return -1;
                if (*s == '"' && s[1] == '"') {
                    *w++ = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    if (*s == '\n') (*line)++;
                    *w++ = *s++;
                }
            }
            continue;
        }
        if (*s == ',') {
            *w++ = 0;
            s++;
            if (n == cap) return -1;
            cells[n++] = w;
            continue;
        }
        if (!*s || *s == '\n' || (*s == '\r' && s[1] == '\n')) {
            char *end = s;
            if (*s == '\r') s++;
            if (*s == '\n') {
                s++;
                (*line)++;
            }
            *w = 0;
            (void)end;
            *p = s;
            return n;
        }
        *w++ = *s++;
    }
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* ------------------------------------------------------------- metrics */

typedef struct parser {
    const fs_ref_cols *cols;
    const char *s;
    fs_ref_op *ops;
    int32_t n;
    const char *bad; /* first problem, static text */
    char col[48];    /* offending column */
} parser;

static void emit(parser *p, fs_ref_op op)
{
    if (p->n >= FS_REF_MAX_OPS) {
        if (!p->bad) p->bad = "expression too long";
        return;
    }
    p->ops[p->n++] = op;
}

static void skip(parser *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static void expr(parser *p, int depth);

static void factor(parser *p, int depth)
{
    skip(p);
    if (depth > 16) {
        if (!p->bad) p->bad = "expression nested too deeply";
        return;
    }
    if (*p->s == '(') {
        p->s++;
        expr(p, depth + 1);
        skip(p);
        if (*p->s != ')') {
            if (!p->bad) p->bad = "missing ')'";
            return;
        }
        p->s++;
        return;
    }
    if (*p->s == '-') { /* unary minus: 0 - factor */
        p->s++;
        emit(p, (fs_ref_op){.kind = 'n', .num = 0.0});
        factor(p, depth + 1);
        emit(p, (fs_ref_op){.kind = '-'});
        return;
    }
    if (isdigit((unsigned char)*p->s) || *p->s == '.') {
        char *end;
        double x = strtod(p->s, &end);
        if (end == p->s || !isfinite(x)) {
            if (!p->bad) p->bad = "bad number";
            return;
        }
        p->s = end;
        emit(p, (fs_ref_op){.kind = 'n', .num = x});
        return;
    }
    if (isalpha((unsigned char)*p->s) || *p->s == '_') {
        fs_ref_op op = {.kind = 'c'};
        size_t k = 0;
        while (isalnum((unsigned char)*p->s) || *p->s == '_') {
            if (k + 1 < sizeof op.col) op.col[k++] = *p->s;
            p->s++;
        }
        op.col[k] = 0;
        if (p->cols->kind(op.col) != FS_REF_COL_NUMBER) {
            if (!p->bad) {
                p->bad = "unknown";
                snprintf(p->col, sizeof p->col, "%s", op.col);
            }
            return;
        }
        emit(p, op);
        return;
    }
    if (!p->bad) p->bad = *p->s ? "unexpected character" : "unexpected end";
}

static void term(parser *p, int depth)
{
    factor(p, depth);
    for (;;) {
        skip(p);
        char c = *p->s;
        if (c != '*' && c != '/') return;
        p->s++;
        factor(p, depth);
        emit(p, (fs_ref_op){.kind = c});
    }
}

static void expr(parser *p, int depth)
{
    term(p, depth);
    for (;;) {
        skip(p);
        char c = *p->s;
        if (c != '+' && c != '-') return;
        p->s++;
        term(p, depth);
        emit(p, (fs_ref_op){.kind = c});
    }
}

/* ------------------------------------------------------------- loading */

void fs_ref_free(fs_ref *r)
{
    if (!r) return;
    for (int32_t i = 0; i < r->n_rows; i++)
        for (int32_t k = 0; k < r->n_keys; k++)
            free(r->rows[i].keys[k]);
    free(r->rows);
    memset(r, 0, sizeof *r);
}

static int known_key(const fs_ref_cols *cols, const char *k)
{
    return strcmp(k, "tree_nodes") == 0 || cols->kind(k) != FS_REF_COL_NONE;
}

/* A load in progress: the file's columns, as its header names them. */
typedef struct loader {
    const char *path;
    const fs_ref_cols *cols;
    fs_ref *out;
    char *err;
    size_t errlen;
    int header, ncol, c_metric, c_value, c_source, c_note;
    int key_col[FS_REF_MAX_COLS];
    int32_t cap; /* rows allocated */
} loader;

/* One header column h (cell i): a known column or a key. */
static int header_column(loader *ld, char *h, int i, int32_t at)
{
    fs_ref *out = ld->out;
    if (!strcmp(h, "metric"))
        ld->c_metric = i;
    else if (!strcmp(h, "value"))
        ld->c_value = i;
    else if (!strcmp(h, "source"))
        ld->c_source = i;
    else if (!strcmp(h, "note"))
        ld->c_note = i;
    else {
        if (!known_key(ld->cols, h))
            return fail(ld->err, ld->errlen, SIM_DATA,
                        "%s:%d: unknown key column '%s' (not a result column; "
                        "derived: tree_nodes)",
                        ld->path, at, h);
        if (strlen(h) >= sizeof out->key_names[0])
            return fail(ld->err, ld->errlen, SIM_DATA, "%s:%d: column name too long", ld->path,
                        at);
        ld->key_col[out->n_keys] = i;
        snprintf(out->key_names[out->n_keys++], sizeof out->key_names[0], "%s", h);
    }
    return SIM_OK;
}

/* The header: n cells on line at. */
static int read_header(loader *ld, char **cells, int n, int32_t at)
{
    ld->header = 1;
    ld->ncol = n;
    for (int i = 0; i < n; i++) {
        char *h = trim(cells[i]);
        for (int j = 0; j < i; j++)
            if (strcmp(trim(cells[j]), h) == 0)
                return fail(ld->err, ld->errlen, SIM_DATA, "%s:%d: duplicate column '%s'",
                            ld->path, at, h);
        int code = header_column(ld, h, i, at);
        if (code != SIM_OK) return code;
    }
    const char *miss = ld->c_metric < 0   ? "metric"
                       : ld->c_value < 0  ? "value"
                       : ld->c_source < 0 ? "source"
                                          : NULL;
    if (miss)
        return fail(ld->err, ld->errlen, SIM_DATA, "%s:%d: missing column '%s'", ld->path, at,
                    miss);
    if (!ld->out->n_keys)
        return fail(ld->err, ld->errlen, SIM_DATA,
                    "%s:%d: no key column (e.g. target, policy, dram_fraction)", ld->path, at);
    return SIM_OK;
}

/* A new row for line at (zeroed, counted: fs_ref_free frees its keys). */
static int new_row(loader *ld, int32_t at, fs_ref_row **row)
{
    fs_ref *out = ld->out;
    if (out->n_rows == FS_REF_MAX_ROWS)
        return fail(ld->err, ld->errlen, SIM_DATA, "%s:%d: more than %d reference rows",
                    ld->path, at, FS_REF_MAX_ROWS);
    if (out->n_rows == ld->cap) {
        int32_t nc = ld->cap ? 2 * ld->cap : 32;
        fs_ref_row *nr = realloc(out->rows, sizeof *nr * (size_t)nc);
        if (!nr) return fail(ld->err, ld->errlen, SIM_NOMEM, "%s: out of memory", ld->path);
        out->rows = nr;
        ld->cap = nc;
    }
    fs_ref_row *r = *row = &out->rows[out->n_rows];
    memset(r, 0, sizeof *r);
    r->line = at;
    out->n_rows++;
    return SIM_OK;
}

/* The key cells of row r; a numeric key must hold a number (or nothing). */
static int row_keys(loader *ld, fs_ref_row *r, char **cells, int32_t at)
{
    const fs_ref *out = ld->out;
    for (int32_t k = 0; k < out->n_keys; k++) {
        char *v = trim(cells[ld->key_col[k]]);
        int kind = strcmp(out->key_names[k], "tree_nodes") == 0 ? FS_REF_COL_NUMBER
                                                                : ld->cols->kind(out->key_names[k]);
        if (*v && kind == FS_REF_COL_NUMBER) {
            char *end;
            double x = strtod(v, &end);
            if (*end || !isfinite(x))
                return fail(ld->err, ld->errlen, SIM_DATA,
                            "%s:%d: key '%s': '%s' is not a number", ld->path, at,
                            out->key_names[k], v);
        }
        r->keys[k] = strdup(v);
        if (!r->keys[k])
            return fail(ld->err, ld->errlen, SIM_NOMEM, "%s: out of memory", ld->path);
    }
    return SIM_OK;
}

/* The metric cell m of row r, compiled. */
static int row_metric(loader *ld, fs_ref_row *r, char *m, int32_t at)
{
    snprintf(r->metric, sizeof r->metric, "%s", m);
    parser ps = {.cols = ld->cols, .s = m, .ops = r->ops};
    expr(&ps, 0);
    skip(&ps);
    if (!ps.bad && *ps.s) ps.bad = "unexpected character";
    if (ps.bad) {
        if (!strcmp(ps.bad, "unknown"))
            return fail(ld->err, ld->errlen, SIM_DATA,
                        "%s:%d: unknown metric '%s' (no numeric result column '%s')", ld->path, at,
                        m, ps.col);
        return fail(ld->err, ld->errlen, SIM_DATA, "%s:%d: metric '%s': %s", ld->path, at, m,
                    ps.bad);
    }
    r->n_ops = ps.n;
    return SIM_OK;
}

/* The value cell v of row r: a positive finite number. */
static int row_value(loader *ld, fs_ref_row *r, char *v, int32_t at)
{
    char *end;
    r->value = strtod(v, &end);
    if (!*v || *end || !isfinite(r->value) || !(r->value > 0))
        return fail(ld->err, ld->errlen, SIM_DATA,
                    "%s:%d: value must be a positive number, got '%s'", ld->path, at, v);
    /* relative residuals divide by it: a subnormal value overflows them */
    if (r->value < 1e-300 || r->value > 1e300)
        return fail(ld->err, ld->errlen, SIM_DATA,
                    "%s:%d: value '%s' is outside [1e-300, 1e300] (residuals are relative "
                    "to it)",
                    ld->path, at, v);
    return SIM_OK;
}

/* A data row: n cells on line at. */
static int read_row(loader *ld, char **cells, int n, int32_t at)
{
    if (n != ld->ncol)
        return fail(ld->err, ld->errlen, SIM_DATA, "%s:%d: %d fields, the header has %d",
                    ld->path, at, n, ld->ncol);
    fs_ref_row *r = NULL;
    int code = new_row(ld, at, &r);
    if (code == SIM_OK) code = row_keys(ld, r, cells, at);
    if (code == SIM_OK) code = row_metric(ld, r, trim(cells[ld->c_metric]), at);
    if (code == SIM_OK) code = row_value(ld, r, trim(cells[ld->c_value]), at);
    if (code != SIM_OK) return code;
    char *src = trim(cells[ld->c_source]);
    if (!*src) return fail(ld->err, ld->errlen, SIM_DATA, "%s:%d: empty source", ld->path, at);
    snprintf(r->source, sizeof r->source, "%s", src);
    if (ld->c_note >= 0) snprintf(r->note, sizeof r->note, "%s", trim(cells[ld->c_note]));
    return SIM_OK;
}

/* The records from p on: comments skipped, the header, then the rows. */
static int read_records(loader *ld, char *p)
{
    char *cells[FS_REF_MAX_COLS + 1];
    int32_t line = 1;
    while (*p) {
        int32_t at = line;
        /* a comment line is skipped before it is split: a quote in it opens nothing */
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '#') {
            char *nl = strchr(q, '\n');
            p = nl ? nl + 1 : (char *)q + strlen(q);
            line++;
            continue;
        }
        int n = split_record(&p, &line, cells, FS_REF_MAX_COLS);
        if (n < 0)
            return fail(ld->err, ld->errlen, SIM_DATA,
                        "%s:%d: unterminated quote or more than %d fields", ld->path, at,
                        FS_REF_MAX_COLS);
        char *first = trim(cells[0]);
        if ((n == 1 && !*first) || first[0] == '#') continue;
        int code = ld->header ? read_row(ld, cells, n, at) : read_header(ld, cells, n, at);
        if (code != SIM_OK) return code;
    }
    if (!ld->header)
        return fail(ld->err, ld->errlen, SIM_DATA, "%s:1: empty file (no header row)",
                    ld->path);
    if (!ld->out->n_rows)
        return fail(ld->err, ld->errlen, SIM_DATA, "%s: no reference rows", ld->path);
    return SIM_OK;
}

int fs_ref_load(const char *path, const fs_ref_cols *cols, fs_ref *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    int code = SIM_OK;
    char *buf = slurp(path, &code, err, errlen);
    if (!buf) return code;
    char *p = buf;
    /* a UTF-8 byte-order mark (spreadsheets write one) is not part of the
     * first column's name */
    if ((unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
        p += 3;
    /* line ends: LF or CR LF; a file of CR-only line ends (classic Mac) is
     * one long line, named as such rather than as a quoting error */
    if (strchr(p, '\r') && !strchr(p, '\n')) {
        code = fail(err, errlen, SIM_DATA,
                    "%s:1: lines end with CR alone (classic Mac line ends); convert them to LF "
                    "or CR LF",
                    path);
    } else {
        loader ld = {.path = path,
                     .cols = cols,
                     .out = out,
                     .err = err,
                     .errlen = errlen,
                     .c_metric = -1,
                     .c_value = -1,
                     .c_source = -1,
                     .c_note = -1};
        code = read_records(&ld, p);
    }
    free(buf);
    if (code != SIM_OK) fs_ref_free(out);
    return code;
}

/* ------------------------------------------------------------ matching */

/* Value of key `name=` in a label "a=1,b=x"; NULL when absent. */
static const char *label_value(const char *label, const char *name, char *out, size_t n)
{
    size_t len = strlen(name);
    const char *s = label;
    while (*s) {
        if (!strncmp(s, name, len) && s[len] == '=') {
            const char *v = s + len + 1, *e = strchr(v, ',');
            size_t vl = e ? (size_t)(e - v) : strlen(v);
            snprintf(out, n, "%.*s", (int)vl, v);
            return out;
        }
        const char *c = strchr(s, ',');
        if (!c) break;
        s = c + 1;
    }
    return NULL;
}

double fs_ref_tree_nodes(const char *policy, const char *params)
{
    const eng_policy_desc *d = eng_policy_lookup(policy);
    if (!d) return NAN;
    if (d->tree.rule == ENG_TREE_ONE_ROW) return 1.0;
    if (!d->tree.fixed) return NAN; /* a cap: the trees' size varies */
    char v[128];
    int on = 1;
    if (d->tree.unless_off && label_value(params, d->tree.unless_off, v, sizeof v))
        on = strcmp(v, "false") != 0;
    const eng_param_desc *p = eng_tree_param_flag(d, on);
    if (!p || !label_value(params, p->name, v, sizeof v)) return NAN;
    /* one value, or a list of them '/'-separated */
    double w[sizeof v];
    int32_t n = 0;
    for (char *s = v; n < (int32_t)(sizeof w / sizeof w[0]);) {
        w[n++] = strtod(s, &s);
        if (*s != '/' || p->type != ENG_PARAM_INT_LIST) break;
        s++;
    }
    return eng_tree_nodes_of(d, w, n);
}

/* The derived key tree_nodes of result row r. */
static double tree_nodes_of(const fs_ref_cols *cols, const void *r)
{
    char policy[512] = "", params[1024] = ""; /* a label: FS_LABEL_CAP (sim/out/rows.h) */
    cols->get(cols->ctx, r, "policy", NULL, policy, sizeof policy);
    cols->get(cols->ctx, r, "policy_params", NULL, params, sizeof params);
    return fs_ref_tree_nodes(policy, params);
}

int fs_ref_match(const fs_ref *ref, int32_t k, const fs_ref_cols *cols, const void *r)
{
    const fs_ref_row *rr = &ref->rows[k];
    for (int32_t i = 0; i < ref->n_keys; i++) {
        const char *want = rr->keys[i];
        if (!*want) continue;
        const char *name = ref->key_names[i];
        double x = NAN;
        char text[1024]; /* the longest text column: policy_params */
        int kind;
        if (!strcmp(name, "tree_nodes")) {
            x = tree_nodes_of(cols, r);
            kind = FS_REF_COL_NUMBER;
        } else {
            kind = cols->get(cols->ctx, r, name, &x, text, sizeof text);
        }
        if (kind == FS_REF_COL_TEXT) {
            if (strcmp(text, want) != 0) return 0;
        } else {
            double w = strtod(want, NULL);
            if (!(fabs(x - w) <= 1e-9 * (fabs(w) > 1.0 ? fabs(w) : 1.0))) return 0;
        }
    }
    return 1;
}

int fs_ref_eval(const fs_ref *ref, int32_t k, const fs_ref_cols *cols, const void *r, double *out)
{
    const fs_ref_row *rr = &ref->rows[k];
    double st[FS_REF_MAX_OPS];
    int32_t sp = 0;
    for (int32_t i = 0; i < rr->n_ops; i++) {
        const fs_ref_op *op = &rr->ops[i];
        if (op->kind == 'n') {
            st[sp++] = op->num;
        } else if (op->kind == 'c') {
            double x = NAN;
            cols->get(cols->ctx, r, op->col, &x, NULL, 0);
            st[sp++] = x;
        } else {
            if (sp < 2) return -1;
            double b = st[--sp], a = st[--sp];
            st[sp++] = op->kind == '+'   ? a + b
                       : op->kind == '-' ? a - b
                       : op->kind == '*' ? a * b
                                         : a / b;
        }
    }
    if (sp != 1 || !isfinite(st[0])) return -1;
    *out = st[0];
    return 0;
}
