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
#include "sim/lua/refcsv.h"

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
        *code = FS_REF_E_MISSING;
        fail(err, errlen, 0, "%s: cannot open reference file: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *code = FS_REF_E_DATA;
        fail(err, errlen, 0, "%s: reference file is not a regular file", path);
        return NULL;
    }
    if (st.st_size > FS_REF_MAX_BYTES) {
        close(fd);
        *code = FS_REF_E_DATA;
        fail(err, errlen, 0, "%s: reference file larger than %d bytes", path, FS_REF_MAX_BYTES);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        *code = FS_REF_E_NOMEM;
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
        *code = FS_REF_E_DATA;
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
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

/* ------------------------------------------------------------- metrics */

typedef struct parser {
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
    while (isspace((unsigned char)*p->s)) p->s++;
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
        if (fs_row_column_kind(op.col) != FS_COL_NUMBER) {
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
        for (int32_t k = 0; k < r->n_keys; k++) free(r->rows[i].keys[k]);
    free(r->rows);
    memset(r, 0, sizeof *r);
}

static int known_key(const char *k)
{
    return strcmp(k, "tree_nodes") == 0 || fs_row_column_kind(k) != FS_COL_NONE;
}

int fs_ref_load(const char *path, fs_ref *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    int code = FS_REF_OK;
    char *buf = slurp(path, &code, err, errlen);
    if (!buf) return code;
    char *p = buf, *cells[FS_REF_MAX_COLS + 1];
    int32_t line = 1;
    /* a UTF-8 byte-order mark (spreadsheets write one) is not part of the
     * first column's name */
    if ((unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
        p += 3;
    /* line ends: LF or CR LF; a file of CR-only line ends (classic Mac) is
     * one long line, named as such rather than as a quoting error */
    if (strchr(p, '\r') && !strchr(p, '\n')) {
        code = fail(err, errlen, FS_REF_E_DATA,
                    "%s:1: lines end with CR alone (classic Mac line ends); convert them to LF "
                    "or CR LF",
                    path);
        goto bad;
    }
    int header = 0, ncol = 0, c_metric = -1, c_value = -1, c_source = -1, c_note = -1;
    int key_col[FS_REF_MAX_COLS];
    int32_t cap = 0;
    while (*p) {
        int32_t at = line;
        /* a comment line is skipped before it is split: a quote in it opens nothing */
        const char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        if (*q == '#') {
            char *nl = strchr(q, '\n');
            p = nl ? nl + 1 : (char *)q + strlen(q);
            line++;
            continue;
        }
        int n = split_record(&p, &line, cells, FS_REF_MAX_COLS);
        if (n < 0) {
            code = fail(err, errlen, FS_REF_E_DATA,
                        "%s:%d: unterminated quote or more than %d fields", path, at,
                        FS_REF_MAX_COLS);
            goto bad;
        }
        char *first = trim(cells[0]);
        if ((n == 1 && !*first) || first[0] == '#') continue;
        if (!header) {
            header = 1;
            ncol = n;
            for (int i = 0; i < n; i++) {
                char *h = trim(cells[i]);
                for (int j = 0; j < i; j++) {
                    if (strcmp(trim(cells[j]), h) == 0) {
                        code = fail(err, errlen, FS_REF_E_DATA, "%s:%d: duplicate column '%s'",
                                    path, at, h);
                        goto bad;
                    }
                }
                if (!strcmp(h, "metric")) c_metric = i;
                else if (!strcmp(h, "value")) c_value = i;
                else if (!strcmp(h, "source")) c_source = i;
                else if (!strcmp(h, "note")) c_note = i;
                else {
                    if (!known_key(h)) {
                        code = fail(err, errlen, FS_REF_E_DATA,
                                    "%s:%d: unknown key column '%s' (not a result column; "
                                    "derived: tree_nodes)",
                                    path, at, h);
                        goto bad;
                    }
                    if (strlen(h) >= sizeof out->key_names[0]) {
                        code = fail(err, errlen, FS_REF_E_DATA, "%s:%d: column name too long",
                                    path, at);
                        goto bad;
                    }
                    key_col[out->n_keys] = i;
                    snprintf(out->key_names[out->n_keys++], sizeof out->key_names[0], "%s", h);
                }
            }
            const char *miss = c_metric < 0 ? "metric" : c_value < 0 ? "value"
                               : c_source < 0 ? "source" : NULL;
            if (miss) {
                code = fail(err, errlen, FS_REF_E_DATA, "%s:%d: missing column '%s'", path, at,
                            miss);
                goto bad;
            }
            if (!out->n_keys) {
                code = fail(err, errlen, FS_REF_E_DATA,
                            "%s:%d: no key column (e.g. target, policy, dram_fraction)", path,
                            at);
                goto bad;
            }
            continue;
        }
        if (n != ncol) {
            code = fail(err, errlen, FS_REF_E_DATA, "%s:%d: %d fields, the header has %d", path,
                        at, n, ncol);
            goto bad;
        }
        if (out->n_rows == FS_REF_MAX_ROWS) {
            code = fail(err, errlen, FS_REF_E_DATA, "%s:%d: more than %d reference rows", path,
                        at, FS_REF_MAX_ROWS);
            goto bad;
        }
        if (out->n_rows == cap) {
            int32_t nc = cap ? 2 * cap : 32;
            fs_ref_row *nr = realloc(out->rows, sizeof *nr * (size_t)nc);
            if (!nr) {
                code = fail(err, errlen, FS_REF_E_NOMEM, "%s: out of memory", path);
                goto bad;
            }
            out->rows = nr;
            cap = nc;
        }
        fs_ref_row *r = &out->rows[out->n_rows];
        memset(r, 0, sizeof *r);
        r->line = at;
        out->n_rows++;
        for (int32_t k = 0; k < out->n_keys; k++) {
            char *v = trim(cells[key_col[k]]);
            int kind = strcmp(out->key_names[k], "tree_nodes") == 0
                           ? FS_COL_NUMBER
                           : fs_row_column_kind(out->key_names[k]);
            if (*v && kind == FS_COL_NUMBER) {
                char *end;
                double x = strtod(v, &end);
                if (*end || !isfinite(x)) {
                    code = fail(err, errlen, FS_REF_E_DATA, "%s:%d: key '%s': '%s' is not a number",
                                path, at, out->key_names[k], v);
                    goto bad;
                }
            }
            r->keys[k] = strdup(v);
            if (!r->keys[k]) {
                code = fail(err, errlen, FS_REF_E_NOMEM, "%s: out of memory", path);
                goto bad;
            }
        }
        char *m = trim(cells[c_metric]);
        snprintf(r->metric, sizeof r->metric, "%s", m);
        parser ps = {.s = m, .ops = r->ops};
        expr(&ps, 0);
        skip(&ps);
        if (!ps.bad && *ps.s) ps.bad = "unexpected character";
        if (ps.bad) {
            if (!strcmp(ps.bad, "unknown"))
                code = fail(err, errlen, FS_REF_E_DATA,
                            "%s:%d: unknown metric '%s' (no numeric result column '%s')", path,
                            at, m, ps.col);
            else
                code = fail(err, errlen, FS_REF_E_DATA, "%s:%d: metric '%s': %s", path, at, m,
                            ps.bad);
            goto bad;
        }
        r->n_ops = ps.n;
        char *v = trim(cells[c_value]), *end;
        r->value = strtod(v, &end);
        if (!*v || *end || !isfinite(r->value) || !(r->value > 0)) {
            code = fail(err, errlen, FS_REF_E_DATA,
                        "%s:%d: value must be a positive number, got '%s'", path, at, v);
            goto bad;
        }
        /* relative residuals divide by it: a subnormal value overflows them */
        if (r->value < 1e-300 || r->value > 1e300) {
            code = fail(err, errlen, FS_REF_E_DATA,
                        "%s:%d: value '%s' is outside [1e-300, 1e300] (residuals are relative "
                        "to it)",
                        path, at, v);
            goto bad;
        }
        char *src = trim(cells[c_source]);
        if (!*src) {
            code = fail(err, errlen, FS_REF_E_DATA, "%s:%d: empty source", path, at);
            goto bad;
        }
        snprintf(r->source, sizeof r->source, "%s", src);
        if (c_note >= 0) snprintf(r->note, sizeof r->note, "%s", trim(cells[c_note]));
    }
    if (!header) {
        code = fail(err, errlen, FS_REF_E_DATA, "%s:1: empty file (no header row)", path);
        goto bad;
    }
    if (!out->n_rows) {
        code = fail(err, errlen, FS_REF_E_DATA, "%s: no reference rows", path);
        goto bad;
    }
    free(buf);
    return FS_REF_OK;
bad:
    free(buf);
    fs_ref_free(out);
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
    char v[128];
    if (!strcmp(policy, "flash_ar")) return 1.0;
    if (!strcmp(policy, "chain") && label_value(params, "k", v, sizeof v)) return atof(v) + 1.0;
    if (!strcmp(policy, "eagle2") && label_value(params, "total_tokens", v, sizeof v))
        return atof(v) + 1.0;
    if (!strcmp(policy, "specinfer") && label_value(params, "widths", v, sizeof v)) {
        double nodes = 1.0, level = 1.0;
        for (char *s = v; *s;) {
            level *= strtod(s, &s);
            nodes += level;
            if (*s == '/') s++;
            else break;
        }
        return nodes;
    }
    return NAN;
}

int fs_ref_match(const fs_ref *ref, int32_t k, const fs_rows_meta *m, const fs_row *r)
{
    const fs_ref_row *rr = &ref->rows[k];
    for (int32_t i = 0; i < ref->n_keys; i++) {
        const char *want = rr->keys[i];
        if (!*want) continue;
        const char *name = ref->key_names[i];
        double x = NAN;
        char text[512];
        int kind;
        if (!strcmp(name, "tree_nodes")) {
            x = fs_ref_tree_nodes(r->policy, r->policy_params);
            kind = FS_COL_NUMBER;
        } else {
            kind = fs_row_get(m, r, name, &x, text, sizeof text);
        }
        if (kind == FS_COL_TEXT) {
            if (strcmp(text, want) != 0) return 0;
        } else {
            double w = strtod(want, NULL);
            if (!(fabs(x - w) <= 1e-9 * (fabs(w) > 1.0 ? fabs(w) : 1.0))) return 0;
        }
    }
    return 1;
}

int fs_ref_eval(const fs_ref *ref, int32_t k, const fs_rows_meta *m, const fs_row *r, double *out)
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
            fs_row_get(m, r, op->col, &x, NULL, 0);
            st[sp++] = x;
        } else {
            if (sp < 2) return -1;
            double b = st[--sp], a = st[--sp];
            st[sp++] = op->kind == '+' ? a + b : op->kind == '-' ? a - b
                       : op->kind == '*' ? a * b : a / b;
        }
    }
    if (sp != 1 || !isfinite(st[0])) return -1;
    *out = st[0];
    return 0;
}
