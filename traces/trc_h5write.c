/*
 * trc_h5write.c -- trc_save: writes a validated trace as an HDF5 file of schema
 * v1 (traces/README.md).
 *
 * Atomicity: the file is written to a temporary name in the same directory
 * ("PATH.tmpPID-N", created with O_EXCL so concurrent writers never share it),
 * flushed, fsync'ed and renamed over PATH.  Any failure removes the temporary and
 * leaves PATH untouched (absent if it was absent).
 *
 * Reproducibility: object timestamps are disabled and the layout depends only on
 * the content, so the same trace always produces the same bytes.
 *
 * Integrity: the file format is pinned to HDF5 1.10's (libver bounds V110), whose
 * superblock, object headers and chunk indexes carry checksums, so a damaged
 * metadata block is reported by HDF5 as an error instead of being parsed; raw
 * chunks are protected by deflate's own checksum.
 *
 * Layout choices: datasets of 4 KiB or more are chunked along their first
 * dimension (about 1 MiB per chunk) with shuffle + deflate level 4; smaller or
 * empty ones are contiguous.  Strings are scalar fixed-length NUL-terminated
 * attributes: variable-length strings would live in the global heap, whose
 * corruption HDF5 1.10 does not survive when reading (h5py returns them as bytes).  HDF5's
 * automatic error printing is switched off for the duration of the call and restored afterwards.
 */
#include "trc_impl.h"

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_BYTES (1u << 20)
#define CHUNK_MIN_BYTES 4096
#define DEFLATE_LEVEL 4
#define CHUNK_MIN_ROWS 1024 /* fewest rows per chunk of a per-node dataset */

static int write_attr_int(hid_t loc, const char *name, int32_t v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, H5T_NATIVE_INT32, &v) >= 0;
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
    return ok ? 0 : -1;
}

static int write_attr_ints(hid_t loc, const char *name, const int32_t *v, int n)
{
    hsize_t dim = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && (n == 0 || H5Awrite(a, H5T_NATIVE_INT32, v) >= 0);
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
    return ok ? 0 : -1;
}

static int write_attr_str(hid_t loc, const char *name, const char *s)
{
    /* fixed length, stored inside the attribute message: no global heap */
    hid_t ty = H5Tcopy(H5T_C_S1);
    int ok = ty >= 0 && H5Tset_size(ty, strlen(s) + 1) >= 0 &&
             H5Tset_strpad(ty, H5T_STR_NULLTERM) >= 0 && H5Tset_cset(ty, H5T_CSET_UTF8) >= 0;
    hid_t sp = ok ? H5Screate(H5S_SCALAR) : -1;
    hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT);
    ok = a >= 0 && H5Awrite(a, ty, s) >= 0;
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
    if (ty >= 0) H5Tclose(ty);
    return ok ? 0 : -1;
}

/* rows_hint > 0: rows per chunk for per-node datasets (one prompt's worth,
 * capped at CHUNK_BYTES). */
static hid_t create_ds(hid_t file, const char *path, hid_t ftype, hid_t mtype, int rank,
                       const hsize_t *dims, hsize_t rows_hint, hid_t dapl)
{
    size_t esz = H5Tget_size(mtype);
    hsize_t count = 1, row = esz;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    for (int i = 1; i < rank; i++)
        row *= dims[i];
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int ok = sp >= 0 && dcpl >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0;
    if (ok && count * esz >= CHUNK_MIN_BYTES) {
        hsize_t chunk[3];
        for (int i = 0; i < rank; i++)
            chunk[i] = dims[i];
        hsize_t rows = CHUNK_BYTES / row;
        if (rows_hint > 0 && rows_hint < rows) rows = rows_hint;
        chunk[0] = rows < 1 ? 1 : rows < dims[0] ? rows : dims[0];
        ok = H5Pset_chunk(dcpl, rank, chunk) >= 0 && H5Pset_shuffle(dcpl) >= 0 &&
             H5Pset_deflate(dcpl, DEFLATE_LEVEL) >= 0;
    }
    hid_t ds = ok ? H5Dcreate2(file, path, ftype, sp, H5P_DEFAULT, dcpl, dapl) : -1;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (sp >= 0) H5Sclose(sp);
    return ds;
}

static int write_ds_rows(hid_t file, const char *path, hid_t ftype, hid_t mtype, int rank,
                         const hsize_t *dims, const void *buf, hsize_t rows_hint)
{
    hsize_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    hid_t ds = create_ds(file, path, ftype, mtype, rank, dims, rows_hint, H5P_DEFAULT);
    int ok =
        ds >= 0 && (count == 0 || H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    if (ds >= 0) H5Dclose(ds);
    return ok ? 0 : -1;
}

static int write_ds(hid_t file, const char *path, hid_t ftype, hid_t mtype, int rank,
                    const hsize_t *dims, const void *buf)
{
    return write_ds_rows(file, path, ftype, mtype, rank, dims, buf, 0);
}

static int write_group(hid_t file, const char *name)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    int ok = gcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0;
    hid_t g = ok ? H5Gcreate2(file, name, H5P_DEFAULT, gcpl, H5P_DEFAULT) : -1;
    ok = g >= 0;
    if (g >= 0) H5Gclose(g);
    if (gcpl >= 0) H5Pclose(gcpl);
    return ok ? 0 : -1;
}

/* The index (traces/README.md, "Index") into group grp of f: the checksum,
 * every prompt's hash and the statistics, so that a reader can open the trace
 * without its nodes. */
static int write_index_data(hid_t f, const char *grp, const trc_meta *m, const uint64_t *hash,
                            uint64_t checksum, const trc_stats *st)
{
    int nd = st->depths, K = m->k;
    size_t nc = 5 + (size_t)K + (size_t)nd;
    int64_t *counts = malloc(sizeof *counts * nc);
    double *logp = malloc(sizeof *logp * (size_t)(1 + nd) * (size_t)K);
    int rc = !counts || !logp || write_group(f, grp);
    if (!rc) {
        counts[0] = st->accept_n;
        counts[1] = st->deep_n;
        counts[2] = st->deep_top1;
        counts[3] = st->deep_in;
        counts[4] = st->off_path_nodes;
        for (int j = 0; j < K; j++) {
            counts[5 + j] = st->accept_pos[j];
            logp[j] = st->logp_sum[j];
        }
        for (int d = 0; d < nd; d++) {
            counts[5 + K + d] = st->depth_nodes[d];
            for (int j = 0; j < K; j++)
                logp[(size_t)(1 + d) * (size_t)K + (size_t)j] = st->logp_sum_depth[d][j];
        }
        hsize_t P = (hsize_t)m->n_prompts, one = 1, C = (hsize_t)nc;
        hsize_t L2[2] = {(hsize_t)(1 + nd), (hsize_t)K};
        char path[4][64];
        snprintf(path[0], sizeof path[0], "/%s/prompt_hash", grp);
        snprintf(path[1], sizeof path[1], "/%s/checksum", grp);
        snprintf(path[2], sizeof path[2], "/%s/counts", grp);
        snprintf(path[3], sizeof path[3], "/%s/logp_sum", grp);
        rc |= write_ds(f, path[0], H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &P, hash);
        rc |= write_ds(f, path[1], H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &one, &checksum);
        rc |= write_ds(f, path[2], H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &C, counts);
        rc |= write_ds(f, path[3], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, L2, logp);
    }
    free(counts);
    free(logp);
    return rc ? -1 : 0;
}

/* The index of a trace held whole. */
static int write_index(hid_t f, const trc_trace *t)
{
    const trc_meta *m = &t->meta;
    const trc_stats *st = trc_get_stats(t);
    uint64_t *hash = malloc(sizeof *hash * (size_t)m->n_prompts);
    int rc = !st || !hash;
    for (int32_t p = 0; !rc && p < m->n_prompts; p++) {
        trci_nodes w;
        trci_nodes_prompt(t, p, &w);
        hash[p] = trci_prompt_hash(t, &w, p);
    }
    if (!rc) rc = write_index_data(f, "index", m, hash, t->checksum, st);
    free(hash);
    return rc ? -1 : 0;
}

/* The file, in HDF5 1.10's format, without clock. */
static hid_t create_file(const char *tmp)
{
    /* no clock in the file (root group included); format of HDF5 1.10, whose
     * superblock, object headers and chunk indexes carry checksums */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t f = -1;
    if (fcpl >= 0 && fapl >= 0 && H5Pset_obj_track_times(fcpl, 0) >= 0 &&
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110) >= 0)
        f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl);
    if (fcpl >= 0) H5Pclose(fcpl);
    if (fapl >= 0) H5Pclose(fapl);
    return f;
}

/* The header attributes, the groups and the datasets that are not per node. */
static int write_resident(hid_t f, const trc_trace *t, const char **what)
{
    const trc_meta *m = &t->meta;
    int rc = 0;
    *what = "cannot write the header attributes";
    rc |= write_attr_str(f, "format", TRC_FORMAT);
    rc |= write_attr_int(f, "version", TRC_VERSION);
    rc |= write_attr_int(f, "vocab", m->vocab);
    rc |= write_attr_int(f, "k", m->k);
    rc |= write_attr_int(f, "max_depth", m->max_depth);
    rc |= write_attr_int(f, "max_nodes", m->max_nodes);
    rc |= write_attr_ints(f, "exit_layers", m->exit_layers, m->n_exit);
    rc |= write_attr_int(f, "target_layers", m->target_layers);
    rc |= write_attr_str(f, "target", m->target);
    rc |= write_attr_str(f, "draft", m->draft);
    rc |= write_attr_str(f, "tokenizer", m->tokenizer);
    rc |= write_attr_str(f, "source", m->source);
    if (rc) return -1;
    *what = "cannot write the datasets";
    rc |= write_group(f, "prompts") | write_group(f, "reference") | write_group(f, "trees") |
          write_group(f, "nodes");
    hsize_t P1 = (hsize_t)m->n_prompts + 1, T = (hsize_t)m->n_trees, T1 = T + 1;
    hsize_t PT = (hsize_t)t->n_prompt_tok;
    rc |= write_ds(f, "/prompts/offset", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &P1, t->prompt_off);
    rc |= write_ds(f, "/prompts/tokens", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &PT, t->prompt_tok);
    rc |= write_ds(f, "/reference/offset", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &P1, t->ref_off);
    rc |= write_ds(f, "/reference/tokens", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &T, t->ref_tok);
    rc |= write_ds(f, "/trees/node_offset", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &T1, t->node_off);
    return rc ? -1 : 0;
}

/* The per-node datasets, in file order: path, file and memory types, rank
 * (1: one value a node, 2: K, 3: E x K). */
enum { N_NODE_DS = 8 };
static const struct node_ds {
    const char *path;
    int rank;
} node_ds[N_NODE_DS] = {{"/nodes/parent", 1},      {"/nodes/token", 1},
                        {"/nodes/depth", 1},       {"/nodes/draft_tok", 2},
                        {"/nodes/draft_logp", 2},  {"/nodes/target_tok", 2},
                        {"/nodes/target_logp", 2}, {"/nodes/exit_score", 3}};

static void node_ds_types(int i, hid_t *ftype, hid_t *mtype)
{
    switch (i) {
    case 2:
        *ftype = H5T_STD_U8LE, *mtype = H5T_NATIVE_UINT8;
        break;
    case 4:
    case 6:
    case 7:
        *ftype = H5T_IEEE_F32LE, *mtype = H5T_NATIVE_FLOAT;
        break;
    default:
        *ftype = H5T_STD_I32LE, *mtype = H5T_NATIVE_INT32;
        break;
    }
}

/* Dataset i's rows in t. */
static const void *node_rows(const trc_trace *t, int i)
{
    const void *rows[N_NODE_DS] = {t->parent,     t->token,   t->depth,    t->draft_tok,
                                   t->draft_logp, t->tgt_tok, t->tgt_logp, t->exit_score};
    return rows[i];
}

/* Dataset i's dims for n rows. */
static void node_dims(const trc_meta *m, int i, hsize_t n, hsize_t *dims)
{
    dims[0] = n;
    dims[1] = node_ds[i].rank == 3 ? (hsize_t)m->n_exit : (hsize_t)m->k;
    dims[2] = (hsize_t)m->k;
}

/* node datasets chunked by prompt: a quarter of a prompt's rows per chunk
 * (on average), so reading a prompt inflates little beyond it */
static hsize_t node_chunk_rows(const trc_meta *m)
{
    hsize_t N = (hsize_t)m->n_nodes;
    hsize_t rows = (N + 4 * (hsize_t)m->n_prompts - 1) / (4 * (hsize_t)m->n_prompts);
    return rows < CHUNK_MIN_ROWS ? CHUNK_MIN_ROWS : rows;
}

/* Everything but the atomic rename.  Returns 0 or -1 with *what naming the step. */
static int write_all(const trc_trace *t, const char *tmp, const char **what)
{
    const trc_meta *m = &t->meta;
    hid_t f = create_file(tmp);
    if (f < 0) {
        *what = "cannot create the HDF5 file";
        return -1;
    }
    int rc = write_resident(f, t, what);
    for (int i = 0; i < N_NODE_DS && !rc; i++) {
        hid_t ftype, mtype;
        hsize_t dims[3];
        node_ds_types(i, &ftype, &mtype);
        node_dims(m, i, (hsize_t)m->n_nodes, dims);
        rc |= write_ds_rows(f, node_ds[i].path, ftype, mtype, node_ds[i].rank, dims,
                            node_rows(t, i), node_chunk_rows(m));
    }
    if (!rc) {
        *what = "cannot write the index";
        rc |= write_index(f, t);
    }
    if (!rc) *what = "cannot flush the HDF5 file";
    if (H5Fclose(f) < 0) rc = -1;
    return rc ? -1 : 0;
}

static int index_in_place(const char *path, trc_err *err);

/* A fresh temporary name beside path, created empty (O_EXCL, so concurrent
 * writers never share it): *tmp (the caller frees it), or an error. */
static int make_tmp(const char *path, char **tmp, trc_err *err)
{
    size_t n = strlen(path);
    char *t = malloc(n + 48);
    if (!t) return trci_err(err, TRC_E_NOMEM, "%s: out of memory", path);
    int fd = -1;
    for (int i = 0; i < 100 && fd < 0; i++) {
        snprintf(t, n + 48, "%s.tmp%ld-%d", path, (long)getpid(), i);
        fd = open(t, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int e = errno;
        free(t);
        return trci_err(err, TRC_E_WRITE, "%s: cannot create output: %s", path, strerror(e));
    }
    close(fd);
    *tmp = t;
    return TRC_OK;
}

/* A failed write: the system's reason when it is one worth naming. */
static int write_error(trc_err *err, const char *path, const char *what, int e)
{
    if (e == EFBIG || e == ENOSPC || e == EDQUOT || e == EIO)
        return trci_err(err, TRC_E_WRITE, "%s: %s: %s", path, what, strerror(e));
    return trci_err(err, TRC_E_WRITE, "%s: %s", path, what);
}

/* Syncs the finished temporary and renames it over path; removes it on
 * failure.  Frees tmp. */
static int publish(char *tmp, const char *path, trc_err *err)
{
    int fd = open(tmp, O_RDONLY), rc = TRC_OK;
    if (fd < 0 || fsync(fd) != 0) {
        int e = errno;
        rc = trci_err(err, TRC_E_WRITE, "%s: cannot sync output: %s", path, strerror(e));
    }
    if (fd >= 0) close(fd);
    if (!rc && rename(tmp, path) != 0) {
        int e = errno;
        rc = trci_err(err, TRC_E_WRITE, "%s: cannot create output: %s", path, strerror(e));
    }
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

/* HDF5's automatic error printing off for the duration of a call (errors
 * become one line of ours); H5dont_atexit as in trc_load, a no-op once HDF5
 * is initialised. */
typedef struct quiet {
    H5E_auto2_t fn;
    void *data;
} quiet;

static quiet quiet_on(void)
{
    quiet q;
    H5dont_atexit();
    H5Eget_auto2(H5E_DEFAULT, &q.fn, &q.data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return q;
}

static void quiet_off(quiet q)
{
    H5Eset_auto2(H5E_DEFAULT, q.fn, q.data);
}

int trc_save(const trc_trace *t, const char *path, trc_err *err)
{
    if (t->lazy)
        return trci_err(err, TRC_E_ARG,
                        "%s: a trace opened prompt by prompt cannot be saved; load it whole", path);
    char *tmp = NULL;
    int rc = make_tmp(path, &tmp, err);
    if (rc) return rc;

    quiet q = quiet_on();
    const char *what = "";
    errno = 0;
    rc = write_all(t, tmp, &what);
    int e = errno; /* the system's reason, when HDF5's write(2) failed */
    quiet_off(q);
    if (rc) {
        unlink(tmp);
        free(tmp);
        return write_error(err, path, what, e);
    }
    return publish(tmp, path, err);
}

/* ------------------------------------------------------------ by prompt */

struct trci_stream {
    char *path, *tmp;
    hid_t f;
    hid_t ds[N_NODE_DS];
    trc_meta meta;
    int64_t rows; /* node rows written so far */
};

static void stream_free(trci_stream *s, int remove)
{
    quiet q = quiet_on(); /* closing flushes: a failing write says nothing here */
    for (int i = 0; i < N_NODE_DS; i++)
        if (s->ds[i] >= 0) H5Dclose(s->ds[i]);
    if (s->f >= 0) H5Fclose(s->f);
    quiet_off(q);
    if (remove && s->tmp) unlink(s->tmp);
    free(s->tmp);
    free(s->path);
    free(s);
}

int trci_stream_open(const char *path, const trc_trace *resident, trci_stream **out, trc_err *err)
{
    *out = NULL;
    trci_stream *s = calloc(1, sizeof *s);
    size_t n = strlen(path);
    if (!s || !(s->path = malloc(n + 1))) {
        free(s);
        return trci_err(err, TRC_E_NOMEM, "%s: out of memory", path);
    }
    memcpy(s->path, path, n + 1);
    s->f = -1;
    for (int i = 0; i < N_NODE_DS; i++)
        s->ds[i] = -1;
    s->meta = resident->meta;
    int rc = make_tmp(path, &s->tmp, err);
    if (rc) {
        stream_free(s, 0);
        return rc;
    }
    quiet q = quiet_on();
    const char *what = "cannot create the HDF5 file";
    errno = 0;
    s->f = create_file(s->tmp);
    int bad = s->f < 0 || write_resident(s->f, resident, &what) != 0;
    /* room for a few chunks per dataset (a chunk is at most CHUNK_BYTES), so
     * the one a prompt leaves half written waits in memory for the next
     * prompt instead of being compressed, written and read back */
    hid_t dapl = bad ? -1 : H5Pcreate(H5P_DATASET_ACCESS);
    bad = bad || dapl < 0 || H5Pset_chunk_cache(dapl, 521, 4 * CHUNK_BYTES, 1.0) < 0;
    for (int i = 0; i < N_NODE_DS && !bad; i++) {
        hid_t ftype, mtype;
        hsize_t dims[3];
        node_ds_types(i, &ftype, &mtype);
        node_dims(&s->meta, i, (hsize_t)s->meta.n_nodes, dims);
        s->ds[i] = create_ds(s->f, node_ds[i].path, ftype, mtype, node_ds[i].rank, dims,
                             node_chunk_rows(&s->meta), dapl);
        bad = s->ds[i] < 0;
    }
    if (dapl >= 0) H5Pclose(dapl);
    int e = errno;
    quiet_off(q);
    if (bad) {
        rc = write_error(err, path, what, e);
        stream_free(s, 1);
        return rc;
    }
    *out = s;
    return TRC_OK;
}

int trci_stream_rows(trci_stream *s, const trc_trace *part, trc_err *err)
{
    int64_t n = part->meta.n_nodes;
    if (n < 0 || s->rows + n > s->meta.n_nodes || part->meta.k != s->meta.k ||
        part->meta.n_exit != s->meta.n_exit)
        return trci_err(err, TRC_E_ARG, "%s: rows past the size the file was made for", s->path);
    if (n == 0) return TRC_OK;
    quiet q = quiet_on();
    errno = 0;
    int bad = 0;
    for (int i = 0; i < N_NODE_DS && !bad; i++) {
        hid_t ftype, mtype;
        hsize_t dims[3], start[3] = {(hsize_t)s->rows, 0, 0};
        node_ds_types(i, &ftype, &mtype);
        node_dims(&s->meta, i, (hsize_t)n, dims);
        if (node_ds[i].rank == 3 && s->meta.n_exit == 0) continue; /* no values */
        hid_t fs = H5Dget_space(s->ds[i]);
        hid_t ms = H5Screate_simple(node_ds[i].rank, dims, NULL);
        bad = fs < 0 || ms < 0 ||
              H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, dims, NULL) < 0 ||
              H5Dwrite(s->ds[i], mtype, ms, fs, H5P_DEFAULT, node_rows(part, i)) < 0;
        if (ms >= 0) H5Sclose(ms);
        if (fs >= 0) H5Sclose(fs);
    }
    int e = errno;
    quiet_off(q);
    if (bad) return write_error(err, s->path, "cannot write the datasets", e);
    s->rows += n;
    return TRC_OK;
}

int trci_stream_finish(trci_stream *s, int ok, trc_err *err)
{
    if (!ok) {
        stream_free(s, 1);
        return TRC_OK;
    }
    if (s->rows != s->meta.n_nodes) {
        int rc = trci_err(err, TRC_E_ARG, "%s: %lld node rows written of %lld", s->path,
                          (long long)s->rows, (long long)s->meta.n_nodes);
        stream_free(s, 1);
        return rc;
    }
    quiet q = quiet_on();
    errno = 0;
    int bad = 0;
    for (int i = 0; i < N_NODE_DS; i++) {
        if (s->ds[i] >= 0 && H5Dclose(s->ds[i]) < 0) bad = 1;
        s->ds[i] = -1;
    }
    if (H5Fclose(s->f) < 0) bad = 1;
    s->f = -1;
    int e = errno;
    quiet_off(q);
    if (bad) {
        int rc = write_error(err, s->path, "cannot flush the HDF5 file", e);
        stream_free(s, 1);
        return rc;
    }
    /* the index, from the file as any reader sees it: every prompt read back
     * and checked, the checksum and statistics computed as trc_check does */
    H5E_auto2_t old_fn;
    void *old_data;
    H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int rc = index_in_place(s->tmp, err);
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    if (rc) {
        stream_free(s, 1);
        return rc;
    }
    char *tmp = s->tmp;
    s->tmp = NULL;
    rc = publish(tmp, s->path, err);
    stream_free(s, 0);
    return rc;
}

/* ------------------------------------------------------------ add index */

/* What an index holds, from a complete check of the file at path; *had: the
 * file already has an index (trc_check found it matching the data). */
typedef struct index_facts {
    trc_meta meta;
    trc_stats st;
    uint64_t *hash; /* [meta.n_prompts] */
    uint64_t checksum;
} index_facts;

static int index_gather(const char *path, index_facts *x, int *had, trc_err *err)
{
    memset(x, 0, sizeof *x);
    *had = 0;
    /* read and check everything, prompt by prompt (nothing fits in 0
     * bytes); a file with an index has it compared with the data */
    trc_trace *t = NULL;
    int rc = trc_check(path, 0, &t, err);
    if (rc) return rc;
    if (!trc_is_lazy(t)) {
        trc_free(t);
        return trci_err(err, TRC_E_ARG, "%s: an empty trace needs no index", path);
    }
    x->meta = *trc_get_meta(t);
    x->hash = malloc(sizeof *x->hash * (size_t)x->meta.n_prompts);
    x->checksum = trc_checksum(t);
    const trc_stats *ts = trc_get_stats(t);
    if (!x->hash || !ts) {
        rc = trci_err(err, TRC_E_NOMEM, "%s: out of memory for the index", path);
    } else {
        x->st = *ts;
        memcpy(x->hash, trci_lazy_hashes(t), sizeof *x->hash * (size_t)x->meta.n_prompts);
    }
    trc_free(t);
    if (rc) {
        free(x->hash);
        x->hash = NULL;
        return rc;
    }
    hid_t probe = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    *had = probe >= 0 && H5Lexists(probe, "index", H5P_DEFAULT) > 0;
    if (probe >= 0) H5Fclose(probe);
    return TRC_OK;
}

/* Writes the index x into the file at io (name: the file errors speak of). */
static int index_write(const char *io, const char *name, const index_facts *x, trc_err *err)
{
    hid_t f = H5Fopen(io, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return trci_err(err, TRC_E_WRITE, "%s: cannot open for writing", name);
    /* written under another name and renamed last, so a failure leaves no
     * /index a reader would take for a whole one */
    if (H5Lexists(f, "index-partial", H5P_DEFAULT) > 0) H5Ldelete(f, "index-partial", H5P_DEFAULT);
    int bad = write_index_data(f, "index-partial", &x->meta, x->hash, x->checksum, &x->st) != 0 ||
              H5Lmove(f, "index-partial", f, "index", H5P_DEFAULT, H5P_DEFAULT) < 0;
    if (bad) H5Ldelete(f, "index-partial", H5P_DEFAULT);
    int e = errno;
    if (H5Fclose(f) < 0) bad = 1;
    if (!bad) e = 0;
    return bad ? write_error(err, name, "cannot write the index", e ? e : errno) : TRC_OK;
}

/* Copies the bytes of src to the existing file dst with src's permissions. */
static int copy_file(const char *src, const char *dst, trc_err *err)
{
    int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = TRC_OK;
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0) {
        rc = trci_err(err, TRC_E_MISSING, "%s: cannot read: %s", src, strerror(errno));
    } else if ((out = open(dst, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0 ||
               fchmod(out, st.st_mode & 07777) != 0) {
        rc = write_error(err, src, "cannot copy it to add the index", errno);
    }
    static const size_t cap = (size_t)1 << 20;
    char *buf = rc ? NULL : malloc(cap);
    if (!rc && !buf) rc = trci_err(err, TRC_E_NOMEM, "%s: out of memory", src);
    while (!rc) {
        ssize_t n = read(in, buf, cap);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) rc = trci_err(err, TRC_E_MISSING, "%s: cannot read: %s", src, strerror(errno));
        if (n <= 0) break;
        for (ssize_t at = 0; at < n && !rc;) {
            ssize_t w = write(out, buf + at, (size_t)(n - at));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) rc = write_error(err, src, "cannot copy it to add the index", errno);
            else at += w;
        }
    }
    free(buf);
    if (out >= 0 && close(out) != 0 && !rc)
        rc = write_error(err, src, "cannot copy it to add the index", errno);
    if (in >= 0) close(in);
    return rc;
}

/* The stream's own temporary: checked and indexed in place (it is not
 * published until this succeeds). */
static int index_in_place(const char *path, trc_err *err)
{
    index_facts x;
    int had;
    int rc = index_gather(path, &x, &had, err);
    if (!rc && !had) rc = index_write(path, path, &x, err);
    free(x.hash);
    return rc;
}

int trc_add_index(const char *path, int *added, trc_err *err)
{
    trc_err scratch;
    if (!err) err = &scratch;
    if (added) *added = 0;
    if (!path) return trci_err(err, TRC_E_ARG, "(null): no path");
    H5E_auto2_t old_fn;
    void *old_data;
    H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    index_facts x;
    int had;
    int rc = index_gather(path, &x, &had, err);
    /* a file that had an index (trc_check found it right) stays untouched;
     * otherwise the index goes into a copy, the copy is checked completely
     * (the index against the data) and renamed over the file: a failure at
     * any step leaves the file as it was */
    char *tmp = NULL;
    if (!rc && !had) rc = make_tmp(path, &tmp, err);
    if (!rc && !had) rc = copy_file(path, tmp, err);
    if (!rc && !had) rc = index_write(tmp, path, &x, err);
    if (!rc && !had) {
        trc_trace *t = NULL;
        trc_err cerr;
        if (trc_check(tmp, 0, &t, &cerr) != TRC_OK)
            rc = trci_err(err, TRC_E_WRITE, "%s: the indexed copy does not check (%s); the file "
                          "is unchanged", path, cerr.msg);
        trc_free(t);
    }
    if (!rc && !had) {
        rc = publish(tmp, path, err);
        tmp = NULL;
        if (!rc && added) *added = 1;
    }
    if (tmp) {
        unlink(tmp);
        free(tmp);
    }
    free(x.hash);
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    return rc;
}
