/*
 * trc_h5chunk.c -- trci_read_chunks: reads a whole shuffle+deflate dataset by
 * fetching its compressed chunks (H5Dread_chunk) and inflating them on
 * several threads straight into the destination array.
 *
 * Why: a trace is hundreds of MB and H5Dread decodes it on one thread, then
 * copies every chunk out of the chunk cache; inflate is about half of the
 * load time (tests/bench/bench_trace_load).  Reading the stored chunks is
 * cheap (one pread each); inflating and unshuffling them is independent per
 * chunk, so it spreads over the cores, and each chunk is unshuffled directly
 * into its rows of the destination (no cache, no second copy).  HDF5 itself is
 * only called from the calling thread (the serial library is not
 * thread-safe); workers touch nothing but zlib and memory.
 *
 * Pipeline: the workers start before the calling thread fetches the chunks
 * and inflate each chunk as soon as it has been fetched (a counter of fetched
 * chunks under a mutex, a condition variable to wait on), so fetching -- the
 * serial part -- overlaps inflating; once every chunk is fetched the calling
 * thread inflates too.  A fetch failure stops the workers like a bad chunk.
 *
 * Applies only when the result must equal H5Dread's bit for bit and the
 * damage checks stay as strong: the dataset is chunked along its first
 * dimension only (whole rows per chunk, as trc_h5write.c writes), its filter
 * pipeline is exactly shuffle+deflate or deflate, its stored type equals the
 * memory type (so no conversion), every chunk is present and stored with all
 * filters applied.  Otherwise it returns TRCI_CHUNK_FALLBACK and the caller
 * uses H5Dread.  Damage: zlib verifies each chunk's adler32, and a chunk that
 * does not inflate to exactly its chunk size is an error, as is a chunk index
 * that claims more compressed bytes than the file holds.
 */
#include "trc_impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_THREADS 16

typedef struct zjob {
    const unsigned char *src; /* compressed chunk */
    size_t src_n;
    unsigned char *dst; /* its rows in the destination */
    size_t dst_n;       /* bytes of the chunk inside the dataset */
} zjob;

typedef struct zpool {
    zjob *jobs;
    size_t n;
    size_t raw_n; /* bytes of a full chunk */
    size_t elem;  /* element width; shuffle undone when > 1 */
    int shuffle;
    atomic_size_t next;
    atomic_int bad;
    /* jobs [0, fetched) hold their compressed bytes; fetched only grows, and
     * reaches n (also on failure) before the calling thread joins the pool */
    pthread_mutex_t lock;
    pthread_cond_t more;
    size_t fetched;
} zpool;

/* Waits until job i is fetched; 0 when it may be inflated. */
static int wait_fetched(zpool *p, size_t i)
{
    pthread_mutex_lock(&p->lock);
    while (p->fetched <= i)
        pthread_cond_wait(&p->more, &p->lock);
    pthread_mutex_unlock(&p->lock);
    return atomic_load(&p->bad) ? -1 : 0;
}

static void set_fetched(zpool *p, size_t n)
{
    pthread_mutex_lock(&p->lock);
    p->fetched = n;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
}

static int inflate_to(const unsigned char *src, size_t src_n, unsigned char *out, size_t n)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit(&zs) != Z_OK) return -1;
    int rc = Z_OK;
    size_t in_left = src_n, out_left = n;
    zs.next_in = (unsigned char *)(uintptr_t)src;
    zs.next_out = out;
    /* zlib counts in uInt: feed chunks of at most 1 GiB */
    while (rc == Z_OK) {
        if (zs.avail_in == 0 && in_left) {
            zs.avail_in = (uInt)(in_left < (1u << 30) ? in_left : (1u << 30));
            in_left -= zs.avail_in;
        }
        if (zs.avail_out == 0 && out_left) {
            zs.avail_out = (uInt)(out_left < (1u << 30) ? out_left : (1u << 30));
            out_left -= zs.avail_out;
        }
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0) break;   /* input ran out */
        if (rc == Z_BUF_ERROR && zs.avail_out == 0 && out_left == 0) break; /* output full */
    }
    int ok = rc == Z_STREAM_END && zs.total_out == n;
    inflateEnd(&zs);
    return ok ? 0 : -1;
}

/* Undoes HDF5's shuffle filter: byte b of element e is at src[b * count + e];
 * writes the first keep elements.  Element-major loops for the common widths,
 * which compilers vectorise. */
static void unshuffle(unsigned char *restrict dst, const unsigned char *restrict src, size_t count,
                      size_t keep, size_t elem)
{
    if (elem == 4) {
        const unsigned char *s0 = src, *s1 = src + count, *s2 = src + 2 * count,
                            *s3 = src + 3 * count;
        for (size_t e = 0; e < keep; e++) {
            dst[4 * e] = s0[e];
            dst[4 * e + 1] = s1[e];
            dst[4 * e + 2] = s2[e];
            dst[4 * e + 3] = s3[e];
        }
        return;
    }
    for (size_t b = 0; b < elem; b++) {
        const unsigned char *s = src + b * count;
        unsigned char *d = dst + b;
        for (size_t e = 0; e < keep; e++)
            d[e * elem] = s[e];
    }
}

static void *zworker(void *arg)
{
    zpool *p = arg;
    unsigned char *tmp = p->shuffle ? malloc(p->raw_n) : NULL;
    unsigned char *whole = NULL; /* a last, partial chunk without shuffle */
    if (p->shuffle && !tmp) {
        atomic_store(&p->bad, 1);
        return NULL;
    }
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n || atomic_load(&p->bad) || wait_fetched(p, i) != 0) break;
        const zjob *j = &p->jobs[i];
        unsigned char *out = tmp;
        if (!p->shuffle) {
            if (j->dst_n == p->raw_n) {
                out = j->dst;
            } else {
                if (!whole && !(whole = malloc(p->raw_n))) {
                    atomic_store(&p->bad, 1);
                    break;
                }
                out = whole;
            }
        }
        if (inflate_to(j->src, j->src_n, out, p->raw_n) != 0) {
            atomic_store(&p->bad, 1);
            break;
        }
        if (p->shuffle) {
            unshuffle(j->dst, tmp, p->raw_n / p->elem, j->dst_n / p->elem, p->elem);
        } else if (out != j->dst) {
            memcpy(j->dst, out, j->dst_n);
        }
    }
    free(tmp);
    free(whole);
    return NULL;
}

static int threads_for(size_t jobs)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = cpus > 0 ? (size_t)cpus : 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    if (n > jobs) n = jobs;
    return (int)(n ? n : 1);
}

/* Starts up to threads_for(n) - 1 workers (the caller joins later in
 * finish_pool); returns how many started into *started. */
static void start_pool(zpool *p, pthread_t *th, int *started)
{
    int nt = threads_for(p->n);
    *started = 0;
    for (int i = 1; i < nt; i++) {
        if (pthread_create(&th[*started], NULL, zworker, p) != 0) break;
        (*started)++;
    }
}

/* Marks every job fetched (after a failure: bad is set first), inflates on
 * the calling thread too and waits for the workers. */
static int finish_pool(zpool *p, pthread_t *th, int started, int fetch_failed)
{
    if (fetch_failed) atomic_store(&p->bad, 1);
    set_fetched(p, p->n);
    if (!fetch_failed) zworker(p);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return atomic_load(&p->bad) ? -1 : 0;
}

/* Whether this file reads dataset d itself (see the file comment): chunked
 * along its first dimension only, shuffle+deflate or deflate, stored type
 * equal to mem_type.  Fills *shuffle, *chunk_rows and *row (bytes per row). */
static int rows_layout(hid_t d, hid_t mem_type, int rank, const hsize_t *dims, int *shuffle,
                       uint64_t *chunk_rows, uint64_t *row)
{
    int ok = 0;
    hid_t dcpl = H5Dget_create_plist(d), fty = H5Dget_type(d);
    if (dcpl < 0 || fty < 0 || H5Pget_layout(dcpl) != H5D_CHUNKED || H5Tequal(fty, mem_type) <= 0)
        goto done;
    int nf = H5Pget_nfilters(dcpl);
    unsigned flags;
    size_t nel = 0;
    if (nf == 2) {
        if (H5Pget_filter2(dcpl, 0, &flags, &nel, NULL, 0, NULL, NULL) != H5Z_FILTER_SHUFFLE)
            goto done;
        nel = 0;
        if (H5Pget_filter2(dcpl, 1, &flags, &nel, NULL, 0, NULL, NULL) != H5Z_FILTER_DEFLATE)
            goto done;
        *shuffle = 1;
    } else if (nf == 1) {
        if (H5Pget_filter2(dcpl, 0, &flags, &nel, NULL, 0, NULL, NULL) != H5Z_FILTER_DEFLATE)
            goto done;
        *shuffle = 0;
    } else {
        goto done;
    }
    hsize_t chunk[3];
    if (rank < 1 || rank > 3 || H5Pget_chunk(dcpl, rank, chunk) != rank || chunk[0] == 0) goto done;
    uint64_t r = H5Tget_size(mem_type);
    for (int i = 1; i < rank; i++) {
        if (chunk[i] != dims[i]) goto done;
        r *= dims[i];
    }
    if (r == 0 || chunk[0] > UINT64_MAX / r || chunk[0] * r > ((uint64_t)1 << 31)) goto done;
    *chunk_rows = chunk[0];
    *row = r;
    ok = 1;
done:
    if (fty >= 0) H5Tclose(fty);
    if (dcpl >= 0) H5Pclose(dcpl);
    return ok;
}

int trci_read_chunks(hid_t d, hid_t mem_type, int rank, const hsize_t *dims, void *buf,
                     uint64_t file_bytes)
{
    int rc = TRCI_CHUNK_FALLBACK, shuffle;
    unsigned char *packed = NULL;
    zjob *jobs = NULL;
    uint64_t crows, row;
    if (!rows_layout(d, mem_type, rank, dims, &shuffle, &crows, &row) || dims[0] == 0)
        return TRCI_CHUNK_FALLBACK;
    hsize_t chunk[1] = {crows};
    size_t elem = H5Tget_size(mem_type);
    uint64_t raw_n = chunk[0] * row;
    uint64_t n = (dims[0] + chunk[0] - 1) / chunk[0];
    if (raw_n > ((uint64_t)1 << 31) || n > ((uint64_t)1 << 24)) goto done;
    jobs = calloc((size_t)n, sizeof *jobs);
    if (!jobs) goto done;

    /* sizes first, so one buffer holds every compressed chunk */
    uint64_t total = 0;
    for (uint64_t k = 0; k < n; k++) {
        hsize_t off[3] = {k * chunk[0], 0, 0}, bytes = 0;
        if (H5Dget_chunk_storage_size(d, off, &bytes) < 0 || bytes == 0) goto done;
        if (bytes > file_bytes || total > file_bytes - bytes) {
            rc = -1; /* the chunk index claims more than the file holds */
            goto done;
        }
        jobs[k].src_n = (size_t)bytes;
        total += bytes;
    }
    packed = malloc(total ? (size_t)total : 1);
    if (!packed) goto done;
    zpool p = {.jobs = jobs,
               .n = (size_t)n,
               .raw_n = (size_t)raw_n,
               .elem = elem,
               .shuffle = shuffle && elem > 1};
    atomic_init(&p.next, 0);
    atomic_init(&p.bad, 0);
    if (pthread_mutex_init(&p.lock, NULL) != 0) goto done;
    if (pthread_cond_init(&p.more, NULL) != 0) {
        pthread_mutex_destroy(&p.lock);
        goto done;
    }
    pthread_t th[MAX_THREADS];
    int started = 0;
    start_pool(&p, th, &started);
    size_t at = 0;
    int fetch_rc = 0; /* 0, -1 (damaged) or TRCI_CHUNK_FALLBACK */
    /* a worker's bad chunk ends the fetching early (finish_pool reports it) */
    for (uint64_t k = 0; k < n && !fetch_rc && !atomic_load(&p.bad); k++) {
        hsize_t off[3] = {k * chunk[0], 0, 0};
        uint32_t mask = 0;
        if (H5Dread_chunk(d, H5P_DEFAULT, off, &mask, packed + at) < 0) {
            fetch_rc = -1;
        } else if (mask != 0) {
            fetch_rc = TRCI_CHUNK_FALLBACK; /* a filter was skipped for this chunk */
        } else {
            uint64_t rows = dims[0] - k * chunk[0];
            if (rows > chunk[0]) rows = chunk[0];
            jobs[k].src = packed + at;
            jobs[k].dst = (unsigned char *)buf + k * raw_n;
            jobs[k].dst_n = (size_t)(rows * row);
            at += jobs[k].src_n;
            if (started) set_fetched(&p, (size_t)k + 1);
        }
    }
    rc = finish_pool(&p, th, started, fetch_rc != 0);
    if (fetch_rc) rc = fetch_rc;
    pthread_cond_destroy(&p.more);
    pthread_mutex_destroy(&p.lock);
done:
    free(packed);
    free(jobs);
    return rc;
}

int trci_read_rows(hid_t d, hid_t mem_type, int rank, const hsize_t *dims, uint64_t row0,
                   uint64_t n, void *buf, uint64_t file_bytes)
{
    int shuffle;
    uint64_t crows, row;
    if (n == 0) return 0;
    if (row0 > dims[0] || n > dims[0] - row0 ||
        !rows_layout(d, mem_type, rank, dims, &shuffle, &crows, &row))
        return TRCI_CHUNK_FALLBACK;
    size_t elem = H5Tget_size(mem_type), raw_n = (size_t)(crows * row);
    shuffle = shuffle && elem > 1;
    unsigned char *raw = malloc(raw_n), *plain = shuffle ? malloc(raw_n) : NULL;
    unsigned char *packed = NULL;
    size_t packed_cap = 0;
    int rc = raw && (!shuffle || plain) ? 0 : TRCI_CHUNK_FALLBACK;
    for (uint64_t k = row0 / crows; !rc && k * crows < row0 + n; k++) {
        hsize_t off[3] = {k * crows, 0, 0}, bytes = 0;
        uint32_t mask = 0;
        if (H5Dget_chunk_storage_size(d, off, &bytes) < 0 || bytes == 0 || bytes > file_bytes) {
            rc = -1;
            break;
        }
        if (bytes > packed_cap) {
            unsigned char *q = realloc(packed, (size_t)bytes);
            if (!q) {
                rc = TRCI_CHUNK_FALLBACK;
                break;
            }
            packed = q;
            packed_cap = (size_t)bytes;
        }
        if (H5Dread_chunk(d, H5P_DEFAULT, off, &mask, packed) < 0) {
            rc = -1;
            break;
        }
        if (mask != 0) { /* a filter was skipped for this chunk */
            rc = TRCI_CHUNK_FALLBACK;
            break;
        }
        /* HDF5 is not entered below: other threads fetch meanwhile */
        uint64_t have = dims[0] - k * crows < crows ? dims[0] - k * crows : crows;
        if (inflate_to(packed, (size_t)bytes, raw, raw_n) != 0) {
            rc = -1;
            break;
        }
        const unsigned char *rows = raw;
        if (shuffle) {
            unshuffle(plain, raw, raw_n / elem, (size_t)(have * row) / elem, elem);
            rows = plain;
        }
        uint64_t a = k * crows > row0 ? k * crows : row0; /* first row wanted here */
        uint64_t b = k * crows + have < row0 + n ? k * crows + have : row0 + n; /* end */
        memcpy((unsigned char *)buf + (a - row0) * row, rows + (a - k * crows) * row,
               (size_t)((b - a) * row));
    }
    free(packed);
    free(raw);
    free(plain);
    return rc;
}
