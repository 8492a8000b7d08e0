/*
 * trc_lazy.c -- traces opened prompt by prompt (trc_open): the prompt cache,
 * trc_prompt_acquire/release and the per-prompt reads.
 *
 * A lazily opened trace holds its resident part (header, offsets, prompt and
 * reference tokens, the index) and an open HDF5 file.  Prompt p's node rows
 * [node_off[ref_off[p]], node_off[ref_off[p + 1]]) of every node dataset are
 * read into a block of their own -- by trci_read_rows (the chunks holding the
 * rows fetched raw, inflated on the calling thread) or, for layouts it does
 * not read, one HDF5 hyperslab read -- validated with the rules
 * trc_load applies (trci_validate_prompt, same messages) and compared with the
 * prompt's hash from the index; then the block serves trc_tree_get until it
 * is dropped.
 *
 * Cache.  Blocks are kept while the bytes held stay within the capacity;
 * making room drops the least recently acquired blocks nobody holds.  Blocks
 * in use are never dropped, so the cache may exceed its capacity by the
 * prompts in use (one per worker).  The room a block needs is known from the
 * offsets before it is read, so the cache makes room first and the process
 * never holds more than capacity + the blocks in use.
 *
 * Threads.  One mutex guards the block states; the read itself runs outside
 * it (HDF5, built thread-safe, serialises its own calls; the inflating runs
 * outside HDF5, so workers reading different prompts overlap), and a thread that
 * wants a block another thread is reading waits on a condition variable.
 * trc_tree_get reads an acquired block without the lock: while it is held
 * nothing writes its window.
 *
 * Failures.  A prompt that cannot be read, fails validation or does not match
 * its hash is marked failed with its message; every acquisition of it returns
 * that error, other prompts carry on.
 */
#include "trc_impl.h"

#include <stdlib.h>
#include <string.h>

enum { LZ_ABSENT, LZ_LOADING, LZ_READY, LZ_FAILED };

#define LZ_NDS TRCI_DS_COUNT /* /nodes/parent ... /nodes/exit_score, in table order */

typedef struct lz_block {
    trci_nodes w; /* LZ_READY */
    void *mem;    /* the block's one allocation */
    size_t bytes;
    int32_t pins;
    int32_t state;
    uint64_t stamp; /* last acquisition, for least-recently-used */
    int fail_code;  /* LZ_FAILED */
    char *fail_msg;
} lz_block;

struct trci_lazy {
    char *path;
    hid_t f;
    hid_t ds[LZ_NDS];
    uint64_t *hash; /* [P] from the index */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int sync_ok;
    lz_block *blk; /* [P] */
    uint64_t clock;
    trc_cache_info info;
    int indexing;        /* trci_lazy_index: hashes are being made, not checked */
    uint64_t file_bytes; /* bounds the compressed bytes of a chunk */
};

static const char *const ds_name[LZ_NDS] = {
    "/nodes/parent",     "/nodes/token",      "/nodes/depth",       "/nodes/draft_tok",
    "/nodes/draft_logp", "/nodes/target_tok", "/nodes/target_logp", "/nodes/exit_score"};

/* Bytes of a block of n rows (and its allocation's alignment slack). */
static size_t block_bytes(const trc_meta *m, int64_t n)
{
    return trci_node_bytes(m, n) + 64;
}

static int64_t prompt_rows(const trc_trace *t, int32_t p, int64_t *row0)
{
    *row0 = t->node_off[t->ref_off[p]];
    return t->node_off[t->ref_off[p + 1]] - *row0;
}

static void lazy_destroy(struct trci_lazy *z, int32_t P)
{
    for (int i = 0; i < LZ_NDS; i++)
        if (z->ds[i] >= 0) H5Dclose(z->ds[i]);
    if (z->f >= 0) H5Fclose(z->f);
    if (z->blk)
        for (int32_t p = 0; p < P; p++) {
            free(z->blk[p].mem);
            free(z->blk[p].fail_msg);
        }
    if (z->sync_ok) {
        pthread_mutex_destroy(&z->mu);
        pthread_cond_destroy(&z->cv);
    }
    free(z->blk);
    free(z->hash);
    free(z->path);
    free(z);
}

void trci_lazy_free(trc_trace *t)
{
    if (!t->lazy) return;
    lazy_destroy(t->lazy, t->meta.n_prompts);
    t->lazy = NULL;
}

int trci_lazy_attach(trc_trace *t, const char *path, hid_t f, const hid_t *ds, uint64_t *hash,
                     size_t cap, uint64_t file_bytes, trc_err *err)
{
    struct trci_lazy *z = calloc(1, sizeof *z);
    size_t n = strlen(path);
    char *pcopy = malloc(n + 1);
    lz_block *blk = calloc((size_t)t->meta.n_prompts, sizeof *blk);
    if (!z || !pcopy || !blk) {
        free(z);
        free(pcopy);
        free(blk);
        return trci_err(err, TRC_E_NOMEM, "%s: out of memory for the prompt cache", path);
    }
    memcpy(pcopy, path, n + 1);
    z->path = pcopy;
    z->f = f;
    for (int i = 0; i < LZ_NDS; i++)
        z->ds[i] = ds[i];
    z->hash = hash;
    z->blk = blk;
    z->info.capacity = cap;
    z->file_bytes = file_bytes;
    int mu_ok = pthread_mutex_init(&z->mu, NULL) == 0;
    if (!mu_ok || pthread_cond_init(&z->cv, NULL) != 0) {
        if (mu_ok) pthread_mutex_destroy(&z->mu);
        /* the caller still owns f, ds and hash */
        z->f = -1;
        for (int i = 0; i < LZ_NDS; i++)
            z->ds[i] = -1;
        z->hash = NULL;
        lazy_destroy(z, t->meta.n_prompts);
        return trci_err(err, TRC_E_NOMEM, "%s: cannot set up the prompt cache", path);
    }
    z->sync_ok = 1;
    t->lazy = z;
    return TRC_OK;
}

/* The in-memory type of node dataset i (HDF5's native type ids are set at
 * run time, so no static table). */
static hid_t mem_type(int i)
{
    switch (i) {
    case TRCI_DS_DEPTH:
        return H5T_NATIVE_UINT8;
    case TRCI_DS_DRAFT_LOGP:
    case TRCI_DS_TGT_LOGP:
    case TRCI_DS_EXIT:
        return H5T_NATIVE_FLOAT;
    default:
        return H5T_NATIVE_INT32;
    }
}

/* Reads rows [row0, row0 + n) of node dataset i into buf; 0 or -1. */
static int read_rows(const trc_trace *t, int i, int64_t row0, int64_t n, void *buf)
{
    static const int rank[LZ_NDS] = {1, 1, 1, 2, 2, 2, 2, 3};
    const trc_meta *m = &t->meta;
    hsize_t start[3] = {(hsize_t)row0, 0, 0}, count[3] = {(hsize_t)n, 1, 1};
    if (rank[i] == 2) count[1] = (hsize_t)m->k;
    if (rank[i] == 3) {
        count[1] = (hsize_t)m->n_exit;
        count[2] = (hsize_t)m->k;
    }
    hid_t d = t->lazy->ds[i];
    hsize_t dims[3] = {(hsize_t)m->n_nodes, count[1], count[2]};
    int fast = trci_read_rows(d, mem_type(i), rank[i], dims, (uint64_t)row0, (uint64_t)n, buf,
                              t->lazy->file_bytes);
    if (fast != TRCI_CHUNK_FALLBACK) return fast;
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(rank[i], count, NULL);
    int ok = fs >= 0 && ms >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dread(d, mem_type(i), ms, fs, H5P_DEFAULT, buf) >= 0;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return ok ? 0 : -1;
}

/* Reads rows [row0, row0 + n) of every node dataset into a fresh block. */
static int read_block(const trc_trace *t, int32_t p, int64_t row0, int64_t n, lz_block *b,
                      trc_err *err)
{
    struct trci_lazy *z = t->lazy;
    const trc_meta *m = &t->meta;
    size_t N = (size_t)n, K = (size_t)m->k, E = (size_t)m->n_exit, nk = N * K;
    size_t sizes[LZ_NDS + 2] = {N * 4,  N * 4,  N,          nk * 4, nk * 4,
                                nk * 4, nk * 4, nk * E * 4, N * 4,  N * 4};
    size_t off[LZ_NDS + 2], total = 0;
    for (int i = 0; i < LZ_NDS + 2; i++) {
        off[i] = total;
        total += (sizes[i] + 15) & ~(size_t)15;
    }
    char *mem = malloc(total ? total : 1);
    if (!mem)
        return trci_err(err, TRC_E_NOMEM, "%s: out of memory for prompt %d (%lld nodes)", z->path,
                        p, (long long)n);
    void *buf[LZ_NDS];
    for (int i = 0; i < LZ_NDS; i++)
        buf[i] = mem + off[i];
    H5E_auto2_t old_fn;
    void *old_data;
    H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data); /* per thread */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int rc = TRC_OK;
    for (int i = 0; i < LZ_NDS && !rc; i++) {
        if (n == 0 || sizes[i] == 0) continue;
        if (read_rows(t, i, row0, n, buf[i]) != 0)
            rc = trci_err(err, TRC_E_FORMAT,
                          "%s: %s: cannot read the rows of prompt %d (corrupt or truncated file)",
                          z->path, ds_name[i], p);
    }
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    if (rc) {
        free(mem);
        return rc;
    }
    trci_nodes w = {.base = row0,
                    .n = n,
                    .parent = buf[0],
                    .token = buf[1],
                    .depth = buf[2],
                    .draft_tok = buf[3],
                    .draft_logp = buf[4],
                    .tgt_tok = buf[5],
                    .tgt_logp = buf[6],
                    .exit_score = E ? buf[7] : NULL,
                    .first_child = (int32_t *)(void *)(mem + off[LZ_NDS]),
                    .next_sibling = (int32_t *)(void *)(mem + off[LZ_NDS + 1])};
    rc = trci_validate_prompt(t, &w, p, z->path, err);
    if (!rc && z->indexing)
        z->hash[p] = trci_prompt_hash(t, &w, p);
    else if (!rc && trci_prompt_hash(t, &w, p) != z->hash[p])
        rc = trci_err(err, TRC_E_DATA,
                      "%s: /index/prompt_hash: prompt %d: its data does not match the hash "
                      "recorded when the trace was written (corrupt file)",
                      z->path, p);
    if (rc) {
        free(mem);
        return rc;
    }
    b->w = w;
    b->mem = mem;
    return TRC_OK;
}

/* Drops unheld ready blocks, least recently used first, until need more
 * bytes fit (or nothing more can go).  Under the lock. */
static void make_room(struct trci_lazy *z, int32_t P, size_t need)
{
    while (z->info.bytes + need > z->info.capacity) {
        int32_t victim = -1;
        for (int32_t q = 0; q < P; q++) {
            const lz_block *b = &z->blk[q];
            if (b->state == LZ_READY && b->pins == 0 &&
                (victim < 0 || b->stamp < z->blk[victim].stamp))
                victim = q;
        }
        if (victim < 0) return;
        lz_block *b = &z->blk[victim];
        free(b->mem);
        b->mem = NULL;
        memset(&b->w, 0, sizeof b->w);
        z->info.bytes -= b->bytes;
        b->bytes = 0;
        b->state = LZ_ABSENT;
        z->info.evictions++;
    }
}

int trc_prompt_acquire(const trc_trace *t, int32_t p, trc_err *err)
{
    trc_err scratch;
    if (!err) err = &scratch;
    if (!t || p < 0 || p >= t->meta.n_prompts)
        return trci_err(err, TRC_E_ARG, "prompt %d out of range", p);
    struct trci_lazy *z = t->lazy;
    if (!z) return TRC_OK;
    lz_block *b = &z->blk[p];
    pthread_mutex_lock(&z->mu);
    while (b->state == LZ_LOADING)
        pthread_cond_wait(&z->cv, &z->mu);
    if (b->state == LZ_READY) {
        b->pins++;
        b->stamp = ++z->clock;
        z->info.hits++;
        pthread_mutex_unlock(&z->mu);
        return TRC_OK;
    }
    if (b->state == LZ_FAILED) {
        int code = b->fail_code;
        trci_strcpy(err->msg, sizeof err->msg, b->fail_msg ? b->fail_msg : "");
        err->code = code;
        pthread_mutex_unlock(&z->mu);
        return code;
    }
    int64_t row0, n = prompt_rows(t, p, &row0);
    size_t need = block_bytes(&t->meta, n);
    make_room(z, t->meta.n_prompts, need);
    b->state = LZ_LOADING;
    z->info.bytes += need; /* reserved while reading */
    if (z->info.bytes > z->info.peak_bytes) z->info.peak_bytes = z->info.bytes;
    pthread_mutex_unlock(&z->mu);

    lz_block got = {0};
    int rc = read_block(t, p, row0, n, &got, err);

    pthread_mutex_lock(&z->mu);
    z->info.loads++;
    if (rc) {
        z->info.bytes -= need;
        z->info.failed++;
        b->state = LZ_FAILED;
        b->fail_code = rc;
        size_t len = strlen(err->msg);
        b->fail_msg = malloc(len + 1);
        if (b->fail_msg) memcpy(b->fail_msg, err->msg, len + 1);
        if (rc == TRC_E_NOMEM) { /* not the file's fault: may work later */
            free(b->fail_msg);
            b->fail_msg = NULL;
            b->state = LZ_ABSENT;
            z->info.failed--;
        }
    } else {
        b->w = got.w;
        b->mem = got.mem;
        b->bytes = need;
        b->pins = 1;
        b->stamp = ++z->clock;
        b->state = LZ_READY;
    }
    pthread_cond_broadcast(&z->cv);
    pthread_mutex_unlock(&z->mu);
    return rc;
}

void trc_prompt_release(const trc_trace *t, int32_t p)
{
    if (!t || !t->lazy || p < 0 || p >= t->meta.n_prompts) return;
    struct trci_lazy *z = t->lazy;
    pthread_mutex_lock(&z->mu);
    lz_block *b = &z->blk[p];
    if (b->state == LZ_READY && b->pins > 0) b->pins--;
    /* over capacity (blocks were held while others loaded): shrink now */
    if (z->info.bytes > z->info.capacity) make_room(z, t->meta.n_prompts, 0);
    pthread_mutex_unlock(&z->mu);
}

int trc_is_lazy(const trc_trace *t)
{
    return t && t->lazy != NULL;
}

void trc_cache_get(const trc_trace *t, trc_cache_info *out)
{
    memset(out, 0, sizeof *out);
    if (!t || !t->lazy) return;
    pthread_mutex_lock(&t->lazy->mu);
    *out = t->lazy->info;
    pthread_mutex_unlock(&t->lazy->mu);
}

const trci_nodes *trci_lazy_window(const trc_trace *t, int32_t p)
{
    const lz_block *b = &t->lazy->blk[p];
    return b->mem ? &b->w : NULL;
}

const uint64_t *trci_lazy_hashes(const trc_trace *t)
{
    return t->lazy->hash;
}

uint64_t trc_prompt_hash(const trc_trace *t, int32_t p)
{
    if (!t || !t->lazy || p < 0 || p >= t->meta.n_prompts) return 0;
    return t->lazy->hash[p];
}

size_t trci_lazy_bytes(const trc_trace *t)
{
    const trc_meta *m = &t->meta;
    size_t all = block_bytes(m, m->n_nodes), cap = t->lazy->info.capacity;
    return (cap < all ? cap : all) + (size_t)m->n_prompts * (sizeof(lz_block) + 8);
}

/* The checksum of the whole file, reading its node datasets in slabs of
 * about LZ_SLAB_BYTES. */
#define LZ_SLAB_BYTES ((size_t)8 << 20)

static int slab_checksum(trc_trace *t, trc_err *err)
{
    struct trci_lazy *z = t->lazy;
    const trc_meta *m = &t->meta;
    int64_t per[LZ_NDS] = {1, 1, 1, m->k, m->k, m->k, m->k, (int64_t)m->k * m->n_exit};
    size_t row_max = (size_t)per[7] > (size_t)m->k ? (size_t)per[7] * 4 : (size_t)m->k * 4;
    int64_t rows = (int64_t)(LZ_SLAB_BYTES / row_max);
    if (rows < 1) rows = 1;
    void *buf = malloc((size_t)rows * row_max);
    if (!buf) return trci_err(err, TRC_E_NOMEM, "%s: out of memory for the checksum", z->path);
    trci_hasher h;
    trci_hash_resident(t, &h);
    int rc = TRC_OK;
    for (int i = 0; i < LZ_NDS && !rc; i++) {
        if (per[i] == 0) continue;
        for (int64_t r0 = 0; r0 < m->n_nodes && !rc; r0 += rows) {
            int64_t n = m->n_nodes - r0 < rows ? m->n_nodes - r0 : rows;
            if (read_rows(t, i, r0, n, buf) != 0)
                rc = trci_err(err, TRC_E_FORMAT,
                              "%s: %s: cannot read rows %lld..%lld (corrupt or truncated file)",
                              z->path, ds_name[i], (long long)r0, (long long)(r0 + n - 1));
            else
                trci_hash_rows(&h, i, buf, n * per[i]);
        }
    }
    free(buf);
    if (!rc) t->checksum = trci_hash_finish(&h);
    return rc;
}

int trci_lazy_index(trc_trace *t, trc_err *err)
{
    struct trci_lazy *z = t->lazy;
    trc_stats *st = malloc(sizeof *st);
    if (!st) return trci_err(err, TRC_E_NOMEM, "%s: out of memory", z->path);
    trci_stats_begin(t, st);
    z->indexing = 1;
    int rc = TRC_OK;
    for (int32_t p = 0; p < t->meta.n_prompts && !rc; p++) {
        rc = trc_prompt_acquire(t, p, err);
        if (rc) break;
        trci_stats_add(t, trci_lazy_window(t, p), p, st);
        trc_prompt_release(t, p);
    }
    z->indexing = 0;
    if (!rc) {
        H5E_auto2_t old_fn;
        void *old_data;
        H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        rc = slab_checksum(t, err);
        H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    }
    if (!rc) {
        t->stats = *st;
        t->stats_ok = 1;
    }
    free(st);
    return rc;
}
