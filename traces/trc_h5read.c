/*
 * trc_h5read.c -- trc_load: reads an HDF5 file of schema v1 into the compact
 * in-memory form and validates it (trci_validate, the same routine the builder
 * uses).
 *
 * Workload: a trace is loaded once per process and may be hundreds of MB, so
 * every dataset is read whole, in one H5Dread, straight into its final array
 * (no per-tree reads, no intermediate copies); validation is one linear pass.
 *
 * Robustness contract: any input -- absent, unreadable, not HDF5, truncated,
 * corrupt, wrong schema, bad values -- ends in a status code and ONE line
 * "FILE: /dataset-or-@attribute: problem", never a crash and never output on
 * stdout/stderr.  HDF5's automatic error-stack printing is switched off for the
 * duration of the call (and the previous handler restored), and HDF5's exit hook
 * is declined (H5dont_atexit, see trc_load) because a corrupt file can leave HDF5
 * unable to shut down quietly.  Files we write have checksummed metadata
 * (trc_h5write.c), so corruption surfaces as HDF5 errors rather than as parser
 * crashes inside HDF5.  Types are checked before reading: a dataset must have
 * the documented type class and a width that converts losslessly to the
 * in-memory type (narrower integers are accepted, wider ones rejected; any float
 * width is accepted and converted to float32, with overflow caught as a
 * non-finite value by validation).
 */
#include "trc_impl.h"

#include <hdf5.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct rd {
    hid_t f;
    const char *path;
    trc_err *err;
} rd;

/* ------------------------------------------------------------ attributes */

static hid_t open_attr(rd *r, const char *name, H5T_class_t want, hsize_t *count)
{
    htri_t ex = H5Aexists(r->f, name);
    if (ex < 0) {
        trci_err(r->err, TRC_E_FORMAT, "%s: @%s: cannot read attribute (corrupt file)", r->path,
                 name);
        return -1;
    }
    if (ex == 0) {
        trci_err(r->err, TRC_E_SCHEMA, "%s: @%s: missing attribute", r->path, name);
        return -1;
    }
    hid_t a = H5Aopen(r->f, name, H5P_DEFAULT);
    if (a < 0) {
        trci_err(r->err, TRC_E_FORMAT, "%s: @%s: cannot open attribute (corrupt file)", r->path,
                 name);
        return -1;
    }
    hid_t ty = H5Aget_type(a), sp = H5Aget_space(a);
    H5T_class_t cls = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
    H5S_class_t scls = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (ty >= 0) H5Tclose(ty);
    if (sp >= 0) H5Sclose(sp);
    if (cls != want) {
        trci_err(r->err, TRC_E_SCHEMA, "%s: @%s: wrong type class, expected %s", r->path, name,
                 want == H5T_STRING ? "a string" : "an integer");
        H5Aclose(a);
        return -1;
    }
    if (scls == H5S_NULL) n = 0;
    if (n < 0 || rank > 1 || (!count && n != 1)) {
        trci_err(r->err, TRC_E_SCHEMA, "%s: @%s: expected a %s, found %lld values", r->path, name,
                 count ? "1-D array" : "single value", (long long)n);
        H5Aclose(a);
        return -1;
    }
    if (count) *count = (hsize_t)n;
    return a;
}

static int read_attr_int(rd *r, const char *name, int32_t *out)
{
    hid_t a = open_attr(r, name, H5T_INTEGER, NULL);
    if (a < 0) return r->err->code;
    long long v = 0;
    herr_t st = H5Aread(a, H5T_NATIVE_LLONG, &v);
    H5Aclose(a);
    if (st < 0)
        return trci_err(r->err, TRC_E_FORMAT, "%s: @%s: cannot read value (corrupt file)", r->path,
                        name);
    if (v < INT32_MIN || v > INT32_MAX)
        return trci_err(r->err, TRC_E_DATA, "%s: @%s: value %lld does not fit in int32", r->path,
                        name, v);
    *out = (int32_t)v;
    return TRC_OK;
}

static int read_attr_str(rd *r, const char *name, char *dst, size_t cap)
{
    hid_t a = open_attr(r, name, H5T_STRING, NULL);
    if (a < 0) return r->err->code;
    hid_t fty = H5Aget_type(a);
    hid_t mty = fty >= 0 ? H5Tget_native_type(fty, H5T_DIR_ASCEND) : -1;
    int rc = TRC_OK;
    size_t len = 0;
    if (mty < 0) {
        rc = trci_err(r->err, TRC_E_FORMAT, "%s: @%s: unreadable string type", r->path, name);
    } else if (H5Tis_variable_str(mty) > 0) {
        char *s = NULL;
        if (H5Aread(a, mty, &s) < 0) {
            rc = trci_err(r->err, TRC_E_FORMAT, "%s: @%s: cannot read string (corrupt file)",
                          r->path, name);
        } else {
            len = s ? strlen(s) : 0;
            if (len < cap) trci_strcpy(dst, cap, s ? s : "");
            if (s) H5free_memory(s);
        }
    } else {
        size_t sz = H5Tget_size(mty);
        char *buf = sz ? calloc(1, sz + 1) : NULL;
        if (!buf) {
            rc = trci_err(r->err, TRC_E_SCHEMA, "%s: @%s: empty string type", r->path, name);
        } else if (H5Aread(a, mty, buf) < 0) {
            rc = trci_err(r->err, TRC_E_FORMAT, "%s: @%s: cannot read string (corrupt file)",
                          r->path, name);
        } else {
            len = strlen(buf);
            if (len < cap) trci_strcpy(dst, cap, buf);
        }
        free(buf);
    }
    if (!rc && len >= cap)
        rc = trci_err(r->err, TRC_E_SCHEMA, "%s: @%s: string of %zu bytes, at most %zu allowed",
                      r->path, name, len, cap - 1);
    if (mty >= 0) H5Tclose(mty);
    if (fty >= 0) H5Tclose(fty);
    H5Aclose(a);
    return rc;
}

static int read_header(rd *r, trc_meta *m)
{
    char fmt[64];
    int rc = read_attr_str(r, "format", fmt, sizeof fmt);
    if (rc == TRC_E_SCHEMA && strstr(r->err->msg, "missing"))
        return trci_err(r->err, TRC_E_SCHEMA, "%s: @format: missing (not a flashspec trace)",
                        r->path);
    if (rc) return rc;
    if (strcmp(fmt, TRC_FORMAT) != 0) {
        for (char *c = fmt; *c; c++) /* whatever the file holds, print it safely */
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) *c = '?';
        return trci_err(r->err, TRC_E_SCHEMA, "%s: @format: \"%s\", expected \"%s\"", r->path, fmt,
                        TRC_FORMAT);
    }
    if ((rc = read_attr_int(r, "version", &m->version))) return rc;
    if (m->version != TRC_VERSION)
        return trci_err(r->err, TRC_E_SCHEMA,
                        "%s: @version: schema version %d, this reader supports version %d", r->path,
                        m->version, TRC_VERSION);
    if ((rc = read_attr_int(r, "vocab", &m->vocab)) || (rc = read_attr_int(r, "k", &m->k)) ||
        (rc = read_attr_int(r, "max_depth", &m->max_depth)) ||
        (rc = read_attr_int(r, "max_nodes", &m->max_nodes)) ||
        (rc = read_attr_int(r, "target_layers", &m->target_layers)) ||
        (rc = read_attr_str(r, "target", m->target, sizeof m->target)) ||
        (rc = read_attr_str(r, "draft", m->draft, sizeof m->draft)) ||
        (rc = read_attr_str(r, "tokenizer", m->tokenizer, sizeof m->tokenizer)) ||
        (rc = read_attr_str(r, "source", m->source, sizeof m->source)))
        return rc;
    hsize_t ne = 0;
    hid_t a = open_attr(r, "exit_layers", H5T_INTEGER, &ne);
    if (a < 0) return r->err->code;
    if (ne > TRC_MAX_EXIT) {
        H5Aclose(a);
        return trci_err(r->err, TRC_E_DATA, "%s: @exit_layers: %llu layers, at most %d allowed",
                        r->path, (unsigned long long)ne, TRC_MAX_EXIT);
    }
    long long v[TRC_MAX_EXIT];
    herr_t st = ne ? H5Aread(a, H5T_NATIVE_LLONG, v) : 0;
    H5Aclose(a);
    if (st < 0)
        return trci_err(r->err, TRC_E_FORMAT, "%s: @exit_layers: cannot read (corrupt file)",
                        r->path);
    m->n_exit = (int32_t)ne;
    for (hsize_t e = 0; e < ne; e++) {
        if (v[e] < INT32_MIN || v[e] > INT32_MAX)
            return trci_err(r->err, TRC_E_DATA, "%s: @exit_layers: value %lld out of range",
                            r->path, v[e]);
        m->exit_layers[e] = (int32_t)v[e];
    }
    return TRC_OK;
}

/* -------------------------------------------------------------- datasets */

typedef struct dspec {
    const char *name;
    H5T_class_t cls;
    size_t size;   /* in-memory width, bytes */
    int is_signed; /* in-memory signedness (integers) */
    int rank;
    const char *type_name;
} dspec;

enum {
    D_POFF,
    D_PTOK,
    D_ROFF,
    D_RTOK,
    D_NOFF,
    D_PAR,
    D_TOK,
    D_DEP,
    D_DTOK,
    D_DLP,
    D_TTOK,
    D_TLP,
    D_EXIT,
    D_COUNT
};

static const dspec specs[D_COUNT] = {
    {"/prompts/offset", H5T_INTEGER, 8, 1, 1, "int64"},
    {"/prompts/tokens", H5T_INTEGER, 4, 1, 1, "int32"},
    {"/reference/offset", H5T_INTEGER, 8, 1, 1, "int64"},
    {"/reference/tokens", H5T_INTEGER, 4, 1, 1, "int32"},
    {"/trees/node_offset", H5T_INTEGER, 8, 1, 1, "int64"},
    {"/nodes/parent", H5T_INTEGER, 4, 1, 1, "int32"},
    {"/nodes/token", H5T_INTEGER, 4, 1, 1, "int32"},
    {"/nodes/depth", H5T_INTEGER, 1, 0, 1, "uint8"},
    {"/nodes/draft_tok", H5T_INTEGER, 4, 1, 2, "int32"},
    {"/nodes/draft_logp", H5T_FLOAT, 4, 1, 2, "float32"},
    {"/nodes/target_tok", H5T_INTEGER, 4, 1, 2, "int32"},
    {"/nodes/target_logp", H5T_FLOAT, 4, 1, 2, "float32"},
    {"/nodes/exit_score", H5T_FLOAT, 4, 1, 3, "float32"},
};

static int link_exists(hid_t f, const char *name)
{
    char grp[64];
    const char *slash = strchr(name + 1, '/');
    size_t n = (size_t)(slash - name);
    memcpy(grp, name, n);
    grp[n] = '\0';
    return H5Lexists(f, grp, H5P_DEFAULT) > 0 && H5Lexists(f, name, H5P_DEFAULT) > 0;
}

/* Opens dataset s and checks type and rank; dims receives its shape. */
static hid_t open_ds(rd *r, const dspec *s, hsize_t dims[3])
{
    if (!link_exists(r->f, s->name)) {
        trci_err(r->err, TRC_E_SCHEMA, "%s: %s: missing dataset", r->path, s->name);
        return -1;
    }
    hid_t d = H5Oopen(r->f, s->name, H5P_DEFAULT);
    if (d < 0) {
        trci_err(r->err, TRC_E_FORMAT, "%s: %s: cannot open (corrupt file)", r->path, s->name);
        return -1;
    }
    if (H5Iget_type(d) != H5I_DATASET) {
        H5Oclose(d);
        trci_err(r->err, TRC_E_SCHEMA, "%s: %s: not a dataset", r->path, s->name);
        return -1;
    }
    hid_t ty = H5Dget_type(d), sp = H5Dget_space(d);
    H5T_class_t cls = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
    size_t size = ty >= 0 ? H5Tget_size(ty) : 0;
    H5T_sign_t sg = cls == H5T_INTEGER ? H5Tget_sign(ty) : H5T_SGN_ERROR;
    int rank = sp >= 0 && H5Sget_simple_extent_type(sp) == H5S_SIMPLE
                   ? H5Sget_simple_extent_ndims(sp)
                   : -1;
    if (rank == s->rank) H5Sget_simple_extent_dims(sp, dims, NULL);
    if (ty >= 0) H5Tclose(ty);
    if (sp >= 0) H5Sclose(sp);
    int type_ok;
    if (s->cls == H5T_FLOAT) {
        type_ok = cls == H5T_FLOAT;
    } else {
        type_ok = cls == H5T_INTEGER &&
                  ((sg == H5T_SGN_2 && s->is_signed && size <= s->size) ||
                   (sg == H5T_SGN_NONE && (s->is_signed ? size < s->size : size <= s->size)));
    }
    if (!type_ok) {
        H5Dclose(d);
        trci_err(r->err, TRC_E_SCHEMA, "%s: %s: stored type is %s%zu-byte %s, expected %s", r->path,
                 s->name, cls == H5T_INTEGER ? (sg == H5T_SGN_NONE ? "unsigned " : "signed ") : "",
                 size,
                 cls == H5T_INTEGER  ? "integer"
                 : cls == H5T_FLOAT  ? "float"
                 : cls == H5T_STRING ? "string"
                                     : "non-numeric",
                 s->type_name);
        return -1;
    }
    if (rank != s->rank) {
        H5Dclose(d);
        trci_err(r->err, TRC_E_SCHEMA, "%s: %s: rank %d, expected %d", r->path, s->name, rank,
                 s->rank);
        return -1;
    }
    return d;
}

static hid_t mem_type(const dspec *s)
{
    if (s->cls == H5T_FLOAT) return H5T_NATIVE_FLOAT;
    if (s->size == 8) return H5T_NATIVE_INT64;
    if (s->size == 4) return H5T_NATIVE_INT32;
    return H5T_NATIVE_UINT8;
}

static int shape_err(rd *r, const dspec *s, const hsize_t *dims, const hsize_t *want,
                     const char *why)
{
    char got[96], exp[96];
    int a = 0, b = 0;
    for (int i = 0; i < s->rank; i++) {
        a += snprintf(got + a, sizeof got - (size_t)a, "%s%llu", i ? ", " : "",
                      (unsigned long long)dims[i]);
        b += snprintf(exp + b, sizeof exp - (size_t)b, "%s%llu", i ? ", " : "",
                      (unsigned long long)want[i]);
    }
    return trci_err(r->err, TRC_E_SCHEMA, "%s: %s: shape [%s], expected [%s] (%s)", r->path,
                    s->name, got, exp, why);
}

static int read_body(rd *r, trc_meta *m, trc_trace **out)
{
    hid_t ds[D_COUNT];
    hsize_t dims[D_COUNT][3];
    int rc = TRC_OK, i;
    for (i = 0; i < D_COUNT; i++)
        ds[i] = -1;
    for (i = 0; i < D_COUNT && !rc; i++) {
        ds[i] = open_ds(r, &specs[i], dims[i]);
        if (ds[i] < 0) rc = r->err->code;
    }
    if (rc) goto done;

    /* shapes: every count follows from one dataset and must agree with the others */
    hsize_t P1 = dims[D_POFF][0], T = dims[D_RTOK][0], N = dims[D_PAR][0];
    hsize_t K = (hsize_t)(m->k > 0 ? m->k : 0), E = (hsize_t)m->n_exit;
    struct {
        int id;
        hsize_t want[3];
        const char *why;
    } shapes[] = {
        {D_ROFF, {P1, 0, 0}, "1 + prompts, as /prompts/offset"},
        {D_NOFF, {T + 1, 0, 0}, "1 + reference tokens: one tree per token"},
        {D_TOK, {N, 0, 0}, "nodes, as /nodes/parent"},
        {D_DEP, {N, 0, 0}, "nodes, as /nodes/parent"},
        {D_DTOK, {N, K, 0}, "nodes x @k"},
        {D_DLP, {N, K, 0}, "nodes x @k"},
        {D_TTOK, {N, K, 0}, "nodes x @k"},
        {D_TLP, {N, K, 0}, "nodes x @k"},
        {D_EXIT, {N, E, K}, "nodes x exit layers x @k"},
    };
    if (P1 < 2) {
        rc = trci_err(r->err, TRC_E_SCHEMA, "%s: /prompts/offset: %llu entries, need >= 2", r->path,
                      (unsigned long long)P1);
        goto done;
    }
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int id = shapes[s].id;
        for (int j = 0; j < specs[id].rank; j++)
            if (dims[id][j] != shapes[s].want[j]) {
                rc = shape_err(r, &specs[id], dims[id], shapes[s].want, shapes[s].why);
                goto done;
            }
    }
    if (P1 - 1 > INT32_MAX || N > (hsize_t)INT64_MAX / 64 || T > (hsize_t)INT64_MAX / 64 ||
        dims[D_PTOK][0] > (hsize_t)INT64_MAX / 64) {
        rc =
            trci_err(r->err, TRC_E_SCHEMA, "%s: /prompts/offset: dataset sizes too large", r->path);
        goto done;
    }
    m->n_prompts = (int32_t)(P1 - 1);
    m->n_trees = (int64_t)T;
    m->n_nodes = (int64_t)N;
    if (m->k < 1 || m->k > TRC_MAX_K) { /* needed to size the arrays */
        rc = trci_err(r->err, TRC_E_DATA, "%s: @k: must be in [1, %d] (got %d)", r->path, TRC_MAX_K,
                      m->k);
        goto done;
    }
    trc_trace *t = trci_trace_alloc(m, (int64_t)dims[D_PTOK][0]);
    if (!t) {
        rc = trci_err(r->err, TRC_E_NOMEM, "%s: out of memory for %llu nodes", r->path,
                      (unsigned long long)N);
        goto done;
    }
    void *bufs[D_COUNT] = {t->prompt_off, t->prompt_tok, t->ref_off,   t->ref_tok,   t->node_off,
                           t->parent,     t->token,      t->depth,     t->draft_tok, t->draft_logp,
                           t->tgt_tok,    t->tgt_logp,   t->exit_score};
    for (i = 0; i < D_COUNT && !rc; i++) {
        hsize_t count = 1;
        for (int j = 0; j < specs[i].rank; j++)
            count *= dims[i][j];
        if (count &&
            H5Dread(ds[i], mem_type(&specs[i]), H5S_ALL, H5S_ALL, H5P_DEFAULT, bufs[i]) < 0)
            rc = trci_err(r->err, TRC_E_FORMAT,
                          "%s: %s: cannot read data (corrupt or truncated file)", r->path,
                          specs[i].name);
    }
    if (rc)
        trc_free(t);
    else
        *out = t;
done:
    for (i = 0; i < D_COUNT; i++)
        if (ds[i] >= 0) H5Dclose(ds[i]);
    return rc;
}

/* ------------------------------------------------------------------ load */

static int load(const char *path, trc_trace **out, trc_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return trci_err(err, TRC_E_MISSING, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return trci_err(err, TRC_E_MISSING, "%s: cannot open: is a directory", path);
    FILE *fp = fopen(path, "rb");
    if (!fp) return trci_err(err, TRC_E_MISSING, "%s: cannot open: %s", path, strerror(errno));
    fclose(fp);
    if (H5Fis_hdf5(path) <= 0) return trci_err(err, TRC_E_FORMAT, "%s: not an HDF5 file", path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        if (fapl >= 0) H5Pclose(fapl);
        return trci_err(err, TRC_E_NOMEM, "%s: cannot set up HDF5", path);
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (f < 0)
        return trci_err(err, TRC_E_FORMAT, "%s: cannot open as HDF5 (truncated or corrupt file)",
                        path);
    rd r = {f, path, err};
    trc_meta m;
    memset(&m, 0, sizeof m);
    trc_trace *t = NULL;
    int rc = read_header(&r, &m);
    if (!rc) rc = read_body(&r, &m, &t);
    H5Fclose(f);
    if (rc) return rc;
    rc = trci_validate(t, path, err);
    if (rc) {
        trc_free(t);
        return rc;
    }
    *out = t;
    return TRC_OK;
}

int trc_load(const char *path, trc_trace **out, trc_err *err)
{
    trc_err scratch;
    if (!err) err = &scratch;
    err->code = TRC_OK;
    err->msg[0] = '\0';
    *out = NULL;
    if (!path) return trci_err(err, TRC_E_ARG, "(null): no path");
    /* Before anything else touches HDF5: after a corrupt file, HDF5 1.10 may
     * fail to shut down cleanly at exit and print "infinite loop closing
     * library"; without the exit hook it never tries (a no-op when another module
     * initialised HDF5 first).  All our files are closed explicitly. */
    H5dont_atexit();
    H5E_auto2_t old_fn;
    void *old_data;
    H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int rc = load(path, out, err);
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    return rc;
}
