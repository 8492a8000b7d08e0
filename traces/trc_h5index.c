/*
 * trc_h5index.c -- the optional /index of a trace file (traces/README.md,
 * "Index"): reading and checking it, comparing it with the data, and opening
 * a file prompt by prompt (trc_open, trc_check), which the index makes
 * possible without reading the nodes.
 */
#include "trc_h5.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- index */

/* The optional /index group (traces/README.md, "Index"): what trc_save knows
 * once it has the whole trace, so that a reader can open it without reading
 * its nodes. */
enum { X_HASH, X_SUM, X_COUNTS, X_LOGP, X_COUNT };
static const dspec xspecs[X_COUNT] = {
    {"/index/prompt_hash", H5T_INTEGER, 8, 0, 1, "uint64"},
    {"/index/checksum", H5T_INTEGER, 8, 0, 1, "uint64"},
    {"/index/counts", H5T_INTEGER, 8, 1, 1, "int64"},
    {"/index/logp_sum", H5T_FLOAT, 8, 1, 2, "float64"},
};
#define X_FIXED 5 /* accept_n, deep_n, deep_top1, deep_in, off_path_nodes */

typedef struct xindex {
    uint64_t *hash; /* [P], malloc'ed */
    uint64_t checksum;
    trc_stats stats;
} xindex;

/* 1 when the file has an index, 0 when not, -1 (error set) when its link is
 * not a plain one. */
int trci_h5_index_present(rd *r)
{
    return trci_h5_link_exists(r, xspecs[X_HASH].name);
}

static int index_err(rd *r, const char *ds, const char *what)
{
    return trci_err(r->err, TRC_E_DATA, "%s: %s: %s (the index does not fit the trace)", r->path,
                    ds, what);
}

/* Plausibility of the statistics: counts that fit the trace and one another,
 * finite sums no larger than their counts allow. */
static int check_index_stats(rd *r, const trc_trace *t, const trc_stats *st)
{
    const trc_meta *m = &t->meta;
    const char *c = xspecs[X_COUNTS].name, *l = xspecs[X_LOGP].name;
    if (st->accept_n < 0 || st->accept_n > m->n_nodes)
        return index_err(r, c, "accept_n out of range");
    if (st->deep_n < 0 || st->deep_n > m->n_trees || st->deep_in < 0 || st->deep_in > st->deep_n ||
        st->deep_top1 < 0 || st->deep_top1 > st->deep_in)
        return index_err(r, c, "deep counts out of range");
    int64_t sum = 0;
    for (int j = 0; j < m->k; j++) {
        if (st->accept_pos[j] < 0 || st->accept_pos[j] > st->accept_n - sum)
            return index_err(r, c, "accept_pos out of range");
        sum += st->accept_pos[j];
    }
    if (st->off_path_nodes < 0 || st->off_path_nodes > m->n_nodes)
        return index_err(r, c, "off_path_nodes out of range");
    sum = 0;
    for (int d = 0; d < st->depths; d++) {
        if (st->depth_nodes[d] < 0 || st->depth_nodes[d] > st->off_path_nodes - sum)
            return index_err(r, c, "depth_nodes out of range");
        sum += st->depth_nodes[d];
    }
    if (sum != st->off_path_nodes) return index_err(r, c, "depth_nodes do not add up");
    for (int d = -1; d < st->depths; d++) {
        const double *row = d < 0 ? st->logp_sum : st->logp_sum_depth[d];
        int64_t n = d < 0 ? st->off_path_nodes : st->depth_nodes[d];
        for (int j = 0; j < m->k; j++)
            if (!isfinite(row[j]) || row[j] > (double)TRCI_LOGP_EPS * (double)n ||
                (n == 0 && row[j] != 0.0))
                return index_err(r, l, "a sum out of range");
    }
    return TRC_OK;
}

/* Reads and checks the index of the trace t (resident part read). */
static int read_index(rd *r, const trc_trace *t, xindex *x)
{
    const trc_meta *m = &t->meta;
    memset(x, 0, sizeof *x);
    trci_stats_begin(t, &x->stats);
    int nd = x->stats.depths;
    hsize_t want[X_COUNT][2] = {{(hsize_t)m->n_prompts, 0},
                                {1, 0},
                                {(hsize_t)(X_FIXED + m->k + nd), 0},
                                {(hsize_t)(1 + nd), (hsize_t)m->k}};
    const hid_t mt[X_COUNT] = {H5T_NATIVE_UINT64, H5T_NATIVE_UINT64, H5T_NATIVE_INT64,
                               H5T_NATIVE_DOUBLE};
    int64_t counts[X_FIXED + TRC_MAX_K + TRC_MAX_DEPTH];
    double logp[(1 + TRC_MAX_DEPTH) * TRC_MAX_K];
    x->hash = malloc(sizeof *x->hash * (size_t)m->n_prompts);
    if (!x->hash) return trci_err(r->err, TRC_E_NOMEM, "%s: out of memory for the index", r->path);
    void *buf[X_COUNT] = {x->hash, &x->checksum, counts, logp};
    int rc = TRC_OK;
    for (int i = 0; i < X_COUNT && !rc; i++) {
        hsize_t dims[3] = {0, 0, 0};
        hid_t d = trci_h5_open_ds(r, &xspecs[i], dims);
        if (d < 0) {
            rc = r->err->code;
            break;
        }
        hid_t ty = H5Dget_type(d);
        size_t width = ty >= 0 ? H5Tget_size(ty) : 0;
        if (ty >= 0) H5Tclose(ty);
        for (int j = 0; j < xspecs[i].rank && !rc; j++)
            if (dims[j] != want[i][j])
                rc = trci_h5_shape_err(r, &xspecs[i], dims, want[i], "see the schema");
        if (!rc && width != 8)
            rc = trci_err(r->err, TRC_E_SCHEMA, "%s: %s: stored with %zu bytes, expected 8",
                          r->path, xspecs[i].name, width);
        if (!rc && trci_h5_written_status(d, xspecs[i].rank, dims) < 2)
            rc = trci_err(r->err, TRC_E_FORMAT, "%s: %s: not (fully) written", r->path,
                          xspecs[i].name);
        if (!rc && H5Dread(d, mt[i], H5S_ALL, H5S_ALL, H5P_DEFAULT, buf[i]) < 0)
            rc = trci_err(r->err, TRC_E_FORMAT, "%s: %s: cannot read data (corrupt file)", r->path,
                          xspecs[i].name);
        H5Dclose(d);
    }
    if (!rc) {
        trc_stats *st = &x->stats;
        st->accept_n = counts[0];
        st->deep_n = counts[1];
        st->deep_top1 = counts[2];
        st->deep_in = counts[3];
        st->off_path_nodes = counts[4];
        for (int j = 0; j < m->k; j++) {
            st->accept_pos[j] = counts[X_FIXED + j];
            st->logp_sum[j] = logp[j];
        }
        for (int d = 0; d < nd; d++) {
            st->depth_nodes[d] = counts[X_FIXED + m->k + d];
            for (int j = 0; j < m->k; j++)
                st->logp_sum_depth[d][j] = logp[(size_t)(1 + d) * (size_t)m->k + (size_t)j];
        }
        rc = check_index_stats(r, t, st);
    }
    if (rc) {
        free(x->hash);
        x->hash = NULL;
    }
    return rc;
}

/* The stored index x against the one made from the data: the first prompt
 * whose hash differs, else the checksum, else the statistics. */
static int compare_index(rd *r, const xindex *x, const uint64_t *hash, uint64_t checksum,
                         const trc_stats *st, int32_t P)
{
    for (int32_t p = 0; p < P; p++)
        if (hash[p] != x->hash[p])
            return trci_err(r->err, TRC_E_DATA,
                            "%s: %s: prompt %d: differs from the hash of the prompt's data (the "
                            "file changed after it was written)",
                            r->path, xspecs[X_HASH].name, p);
    if (checksum != x->checksum)
        return trci_err(r->err, TRC_E_DATA,
                        "%s: %s: differs from the checksum of the data (the file changed after "
                        "it was written)",
                        r->path, xspecs[X_SUM].name);
    if (!st || memcmp(st, &x->stats, sizeof *st) != 0)
        return trci_err(r->err, TRC_E_DATA,
                        "%s: %s: the statistics differ from those of the data (the file changed "
                        "after it was written)",
                        r->path, xspecs[X_COUNTS].name);
    return TRC_OK;
}

/* A trace held whole and its index must say the same. */
int trci_h5_verify_index(rd *r, trc_trace *t)
{
    int there = trci_h5_index_present(r);
    if (there <= 0) return there < 0 ? r->err->code : TRC_OK;
    xindex x;
    int rc = read_index(r, t, &x);
    if (rc) return rc;
    const trc_meta *m = &t->meta;
    uint64_t *hash = malloc(sizeof *hash * (size_t)m->n_prompts);
    if (!hash) {
        free(x.hash);
        return trci_err(r->err, TRC_E_NOMEM, "%s: out of memory for the index", r->path);
    }
    for (int32_t p = 0; p < m->n_prompts; p++) {
        trci_nodes w;
        trci_nodes_prompt(t, p, &w);
        hash[p] = trci_prompt_hash(t, &w, p);
    }
    rc = compare_index(r, &x, hash, t->checksum, trc_get_stats(t), m->n_prompts);
    free(hash);
    free(x.hash);
    return rc;
}

/* trc_open: the resident part now, nodes later.  indexed = 0: the file has
 * no index; when it fits in cap it is left to load whole (TRCI_OPEN_WHOLE), else
 * it is read once prompt by prompt to make the index (trci_lazy_index). */
int trci_h5_open_lazy(rd *r, trc_meta *m, size_t cap, int indexed, int check, trc_trace **out)
{
    hid_t ds[D_COUNT];
    hsize_t dims[D_COUNT][3];
    trc_trace *t = NULL;
    int rc = trci_h5_open_body(r, m, ds, dims);
    if (!rc && (!indexed || check)) {
        if (trci_node_bytes(m, (int64_t)dims[D_PAR][0]) <= cap) rc = TRCI_OPEN_WHOLE;
    }
    if (!rc && !(t = trci_trace_alloc_resident(m, (int64_t)dims[D_PTOK][0])))
        rc = trci_err(r->err, TRC_E_NOMEM, "%s: out of memory for %d prompts", r->path,
                      m->n_prompts);
    if (!rc) {
        void *bufs[D_PAR] = {t->prompt_off, t->prompt_tok, t->ref_off, t->ref_tok, t->node_off};
        for (int i = 0; i < D_PAR && !rc; i++)
            rc = trci_h5_read_whole(r, i, ds[i], dims[i], bufs[i]);
    }
    if (!rc) rc = trci_validate_resident(t, r->path, r->err);
    xindex x = {0};
    if (!rc && indexed) rc = read_index(r, t, &x);
    /* check: the index is made again from the data and compared */
    int make = !indexed || check;
    uint64_t *hash = x.hash;
    if (!rc && make && !(hash = calloc((size_t)m->n_prompts, sizeof *hash)))
        rc = trci_err(r->err, TRC_E_NOMEM, "%s: out of memory for the index", r->path);
    if (!rc) {
        t->checksum = x.checksum;
        t->stats = x.stats;
        t->stats_ok = !make;
        /* checking reads each prompt once: nothing worth keeping */
        rc = trci_lazy_attach(t, r->path, r->f, ds + D_PAR, hash, check ? 0 : cap, r->file_bytes,
                              r->err);
        if (rc && hash != x.hash) free(hash);
        if (!rc && hash == x.hash) x.hash = NULL; /* t owns it */
    }
    int attached = !rc;
    for (int i = 0; i < D_COUNT; i++)
        if (ds[i] >= 0 && (!attached || i < D_PAR)) H5Dclose(ds[i]);
    if (!rc && make) rc = trci_lazy_index(t, r->err);
    if (!rc && indexed && check) {
        const uint64_t *made = trci_lazy_hashes(t);
        rc = compare_index(r, &x, made, t->checksum, &t->stats, m->n_prompts);
    }
    free(x.hash);
    if (rc) {
        if (attached) r->f = -1; /* closed with t */
        trc_free(t);
        return rc;
    }
    *out = t;
    return TRC_OK;
}
