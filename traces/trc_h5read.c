/*
 * trc_h5read.c -- trc_load: reads an HDF5 file of schema v1 into the compact
 * in-memory form and validates it (trci_validate, the same routine the builder
 * uses).
 *
 * Workload: a trace is loaded once per process and may be hundreds of MB, so
 * every dataset is read whole straight into its final array (no per-tree
 * reads): chunked shuffle+deflate datasets -- every large one we write -- by
 * trci_read_chunks (trc_h5chunk.c: compressed chunks inflated on several
 * threads), anything else by one H5Dread; validation is one linear pass.
 *
 * trc_load_image reads the same format from a memory buffer (HDF5's core
 * driver over a copy of the image); apart from file access it is the same
 * path, which is what the fuzz target (tests/fuzz/trace) exercises.
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
 *
 * Untrusted files: a trace comes from another lab, so it must not make the
 * reader touch anything but itself.  Only a regular file is opened (opened
 * non-blocking first, so a FIFO cannot hang the check); every link the reader
 * follows must be a hard link (no external or soft links); every dataset must
 * store its bytes in the file (no external raw-data files, no virtual
 * datasets); HDF5 filter plugins are never loaded.  Each refusal is one line
 * and TRC_E_SCHEMA / TRC_E_FORMAT (exit 65).
 */
#include "trc_h5.h"

#include <hdf5.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --------------------------------------------------------- global heaps */

/* Variable-length strings live in global heap collections, which HDF5 1.10
 * parses without bounds checks: an object size that overruns its collection
 * makes H5Aread copy gigabytes (a crash; tests/fuzz/trace/regressions).
 * Before the first variable-length read we therefore walk every collection
 * in the file as HDF5's parser (H5HGcache.c) does and refuse the file when an
 * object would leave its collection or an entry has no size (the walk could
 * not advance).  A collection is recognised by its signature, version 1
 * and zero reserved bytes (8 fixed bytes); bytes past the end of the file read
 * as zeros, as HDF5's drivers return them.  Our own writer never stores
 * variable-length strings, so this runs only for files written by others
 * (h5py's default strings). */

static uint64_t le_get(const unsigned char *b, size_t n, size_t at, size_t width)
{
    uint64_t v = 0;
    for (size_t i = width; i-- > 0;)
        v = (v << 8) | (at + i < n ? b[at + i] : 0);
    return v;
}

/* 0 when the collection at b[o] walks cleanly; -1 otherwise. */
static int heap_walk(const unsigned char *b, size_t n, size_t o, size_t lsize)
{
    uint64_t size = le_get(b, n, o + 8, lsize);
    size_t hdr = 8 + lsize, objhdr = 8 + lsize;
    if (size < hdr || size > (uint64_t)SIZE_MAX - o) return -1;
    uint64_t end = o + size, p = o + hdr;
    while (p < end) {
        if (p + objhdr > end) return 0; /* tail too small for a header: free space */
        uint64_t idx = le_get(b, n, (size_t)p, 2);
        uint64_t osize = le_get(b, n, (size_t)p + 8, lsize);
        uint64_t need;
        if (idx > 0) {
            if (osize > end) return -1;
            need = objhdr + ((osize + 7) & ~(uint64_t)7);
        } else {
            need = osize;
        }
        if (need == 0 || need > end - p) return -1;
        p += need;
    }
    return 0;
}

static int heaps_ok(const unsigned char *b, size_t n, size_t lsize, size_t *bad_at)
{
    static const unsigned char sig[8] = {'G', 'C', 'O', 'L', 1, 0, 0, 0};
    for (size_t o = 0; o + sizeof sig <= n; o++) {
        const unsigned char *hit = memchr(b + o, 'G', n - o);
        if (!hit) break;
        o = (size_t)(hit - b);
        if (o + sizeof sig <= n && memcmp(hit, sig, sizeof sig) == 0 &&
            heap_walk(b, n, o, lsize) != 0) {
            *bad_at = o;
            return 0;
        }
    }
    return 1;
}

static int check_global_heaps(rd *r)
{
    if (r->heap_checked) return TRC_OK;
    size_t lsize = 8;
    hid_t fcpl = H5Fget_create_plist(r->f);
    if (fcpl >= 0) {
        size_t asize = 8;
        if (H5Pget_sizes(fcpl, &asize, &lsize) < 0) lsize = 8;
        H5Pclose(fcpl);
    }
    if (lsize < 2 || lsize > 8) lsize = 8;
    const unsigned char *b = r->img;
    size_t n = r->img_n;
    void *map = NULL;
    if (!b) {
        int fd = open(r->path, O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            if (fd >= 0) close(fd);
            return trci_err(r->err, TRC_E_FORMAT, "%s: cannot read the file again", r->path);
        }
        n = (size_t)st.st_size;
        map = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
        close(fd);
        if (n && map == MAP_FAILED)
            return trci_err(r->err, TRC_E_FORMAT, "%s: cannot map the file: %s", r->path,
                            strerror(errno));
        b = map;
    }
    size_t bad_at = 0;
    int ok = heaps_ok(b, n, lsize, &bad_at);
    if (map) munmap(map, n);
    if (!ok)
        return trci_err(r->err, TRC_E_FORMAT,
                        "%s: global heap at byte %zu: object overruns its collection "
                        "(corrupt file)",
                        r->path, bad_at);
    r->heap_checked = 1;
    return TRC_OK;
}

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

static int write_full(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The isolated read's child gets this long (a real attribute takes
 * milliseconds; a damaged heap can send HDF5 into an endless loop). */
#define VLEN_READ_TIMEOUT_MS 5000

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* n bytes from fd before the monotonic clock reaches deadline (ms); -1 on
 * end of file, error or timeout. */
static int read_full(int fd, void *p, size_t n, int64_t deadline)
{
    char *b = p;
    while (n > 0) {
        int64_t left = deadline - now_ms();
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (left <= 0) return -1;
        int pr = poll(&pf, 1, left > INT32_MAX ? INT32_MAX : (int)left);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) return -1;
        ssize_t r = read(fd, b, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

/* A variable-length string lives in a global heap, and HDF5 1.10 trusts the
 * heap index a file gives it: an index past the collection's object table
 * makes H5Aread copy from a garbage size (check_global_heaps cannot see
 * indices, only collections).  The read therefore runs in a child process:
 * whatever the file does to it, the parent gets the string through a pipe or
 * learns that the read failed -- or, when the child has not answered within
 * VLEN_READ_TIMEOUT_MS (HDF5 looping on a damaged heap), kills it.  Only files
 * written by others take this path (our writer stores fixed-length strings).
 * 0 and dst / *len, or -1. */
static int read_vlen_isolated(hid_t a, hid_t mty, char *dst, size_t cap, size_t *len)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) { /* the child: read, report, leave without clean-up */
        close(fds[0]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDERR_FILENO); /* a crash here is not news */
        char *s = NULL;
        uint64_t n = UINT64_MAX;
        if (H5Aread(a, mty, &s) >= 0) n = s ? strlen(s) : 0;
        int bad = write_full(fds[1], &n, sizeof n) != 0;
        if (!bad && n != UINT64_MAX && n < cap) bad = write_full(fds[1], s ? s : "", n) != 0;
        _exit(bad ? 1 : 0);
    }
    close(fds[1]);
    int64_t deadline = now_ms() + VLEN_READ_TIMEOUT_MS;
    uint64_t n = UINT64_MAX;
    int rc = read_full(fds[0], &n, sizeof n, deadline) == 0 && n != UINT64_MAX ? 0 : -1;
    if (!rc && n < cap) {
        rc = read_full(fds[0], dst, (size_t)n, deadline);
        dst[rc ? 0 : n] = 0;
    }
    close(fds[0]);
    if (rc) kill(pid, SIGKILL); /* no answer in time, or a partial one: done with it */
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) rc = -1;
    if (!rc) *len = (size_t)n; /* >= cap: the caller reports the length */
    return rc;
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
        if ((rc = check_global_heaps(r))) {
            /* the file cannot be read safely; rc and the message are set */
        } else if (read_vlen_isolated(a, mty, dst, cap, &len) != 0) {
            rc = trci_err(r->err, TRC_E_FORMAT, "%s: @%s: cannot read string (corrupt file)",
                          r->path, name);
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

const dspec trci_h5_specs[D_COUNT] = {
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

/* A link the reader may follow: a hard link inside this file.  Soft, external
 * and user-defined links are refused before anything traverses them, so a
 * trace can never make the reader open another file. */
static int hard_link(rd *r, const char *name)
{
    H5L_info_t li;
    if (H5Lget_info(r->f, name, &li, H5P_DEFAULT) < 0)
        return trci_err(r->err, TRC_E_FORMAT, "%s: %s: cannot read the link (corrupt file)",
                        r->path, name);
    if (li.type != H5L_TYPE_HARD)
        return trci_err(r->err, TRC_E_SCHEMA,
                        "%s: %s: is a%s link; a trace must hold its data itself",
                        r->path, name,
                        li.type == H5L_TYPE_EXTERNAL ? "n external (other-file)"
                        : li.type == H5L_TYPE_SOFT   ? " soft"
                                                     : " user-defined");
    return TRC_OK;
}

/* 1 when group and dataset both exist as hard links, 0 when either is missing,
 * -1 (error set) for a link of another kind.  The group's link is inspected
 * before the dataset's path is resolved through it. */
int trci_h5_link_exists(rd *r, const char *name)
{
    char grp[64];
    const char *slash = strchr(name + 1, '/');
    size_t n = (size_t)(slash - name);
    memcpy(grp, name, n);
    grp[n] = '\0';
    if (H5Lexists(r->f, grp, H5P_DEFAULT) <= 0) return 0;
    if (hard_link(r, grp)) return -1;
    if (H5Lexists(r->f, name, H5P_DEFAULT) <= 0) return 0;
    return hard_link(r, name) ? -1 : 1;
}

/* Storage the reader may read: the dataset's own bytes in this file.  External
 * raw-data files and virtual datasets (which map other files) are refused
 * before any data is read. */
static int own_storage(rd *r, const dspec *s, hid_t d)
{
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0)
        return trci_err(r->err, TRC_E_FORMAT, "%s: %s: cannot read its layout (corrupt file)",
                        r->path, s->name);
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int ext = H5Pget_external_count(dcpl);
    H5Pclose(dcpl);
    if (lay == H5D_VIRTUAL)
        return trci_err(r->err, TRC_E_SCHEMA,
                        "%s: %s: is a virtual dataset (data in other files); a trace must hold "
                        "its data itself", r->path, s->name);
    if (ext != 0)
        return trci_err(r->err, TRC_E_SCHEMA,
                        "%s: %s: stores its data in external files; a trace must hold its data "
                        "itself", r->path, s->name);
    if (lay != H5D_CONTIGUOUS && lay != H5D_CHUNKED && lay != H5D_COMPACT)
        return trci_err(r->err, TRC_E_FORMAT, "%s: %s: unknown storage layout (corrupt file)",
                        r->path, s->name);
    return TRC_OK;
}

/* Opens dataset s and checks type and rank; dims receives its shape. */
hid_t trci_h5_open_ds(rd *r, const dspec *s, hsize_t dims[3])
{
    int there = trci_h5_link_exists(r, s->name);
    if (there < 0) return -1;
    if (!there) {
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
    if (own_storage(r, s, d)) {
        H5Dclose(d);
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

int trci_h5_shape_err(rd *r, const dspec *s, const hsize_t *dims, const hsize_t *want,
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

/* Deflate never compresses by more than about 1032:1, so a dataset that
 * declares more than STORAGE_RATIO times the bytes it stores (plus a chunk's
 * worth of slack) is missing chunks -- HDF5 would silently read them as fill
 * values -- or lies about its shape; and no dataset stores more than the file
 * holds.  Checked before anything is allocated, so a damaged shape can neither
 * exhaust memory nor be filled with zeros. */
#define STORAGE_RATIO 2048
#define STORAGE_SLACK ((uint64_t)1 << 20)

/* 2 when every element of dataset d has storage in the file, 1 when only
 * some has (chunks missing), 0 when none has (or it cannot be told).  For a
 * chunked dataset the chunks are counted: HDF5's own allocation status
 * compares compressed bytes with the full size and so calls every
 * compressed dataset partly allocated. */
int trci_h5_written_status(hid_t d, int rank, const hsize_t *dims)
{
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0) return 0;
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int st = 0;
    if (lay == H5D_CHUNKED) {
        hsize_t chunk[3] = {1, 1, 1}, want = 1, have = 0;
        if (H5Pget_chunk(dcpl, 3, chunk) == rank) {
            for (int j = 0; j < rank; j++)
                want *= chunk[j] ? (dims[j] + chunk[j] - 1) / chunk[j] : 0;
            hid_t sp = H5Dget_space(d);
            if (sp >= 0 && H5Dget_num_chunks(d, sp, &have) >= 0)
                st = have >= want ? 2 : have > 0 ? 1 : 0;
            if (sp >= 0) H5Sclose(sp);
        }
    } else {
        H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
        if (H5Dget_space_status(d, &status) >= 0)
            st = status == H5D_SPACE_STATUS_ALLOCATED        ? 2
                 : status == H5D_SPACE_STATUS_PART_ALLOCATED ? 1
                                                             : 0;
    }
    H5Pclose(dcpl);
    return st;
}

static int check_storage(rd *r, const hid_t *ds, hsize_t dims[][3])
{
    uint64_t all_declared = 0, all_stored = 0;
    for (int i = 0; i < D_COUNT; i++) {
        hid_t ty = H5Dget_type(ds[i]);
        uint64_t width = ty >= 0 ? (uint64_t)H5Tget_size(ty) : 0;
        if (ty >= 0) H5Tclose(ty);
        uint64_t declared = width; /* saturating product: shapes are not checked yet */
        for (int j = 0; j < trci_h5_specs[i].rank; j++)
            declared = dims[i][j] && declared > UINT64_MAX / dims[i][j] ? UINT64_MAX
                                                                        : declared * dims[i][j];
        /* every byte must have been written: a dataset never (or partly)
         * written would be read as its fill value, silently */
        int written =
            declared == 0 ? 2 : trci_h5_written_status(ds[i], trci_h5_specs[i].rank, dims[i]);
        if (written < 2)
            return trci_err(r->err, TRC_E_FORMAT,
                            "%s: %s: %s; every value of a trace must be stored (a reader would "
                            "see fill values)",
                            r->path, trci_h5_specs[i].name,
                            written == 1 ? "only partly written" : "never written");
        uint64_t stored = (uint64_t)H5Dget_storage_size(ds[i]);
        if (stored > r->file_bytes)
            return trci_err(r->err, TRC_E_FORMAT,
                            "%s: %s: claims %llu stored bytes, the file has %llu (corrupt file)",
                            r->path, trci_h5_specs[i].name, (unsigned long long)stored,
                            (unsigned long long)r->file_bytes);
        if (declared / STORAGE_RATIO > stored + STORAGE_SLACK)
            return trci_err(r->err, TRC_E_FORMAT,
                            "%s: %s: shape needs %llu bytes but only %llu are stored (corrupt "
                            "or truncated file)",
                            r->path, trci_h5_specs[i].name, (unsigned long long)declared,
                            (unsigned long long)stored);
        all_declared = all_declared > UINT64_MAX - declared ? UINT64_MAX : all_declared + declared;
        all_stored += stored;
    }
    /* the same bound over the whole file: one slack in all, not one per
     * dataset, so many datasets each just under it cannot add up */
    if (all_declared / STORAGE_RATIO > all_stored + STORAGE_SLACK)
        return trci_err(r->err, TRC_E_FORMAT,
                        "%s: its shapes need %llu bytes but only %llu are stored (corrupt or "
                        "truncated file)",
                        r->path, (unsigned long long)all_declared,
                        (unsigned long long)all_stored);
    return TRC_OK;
}

/* Opens every dataset of the schema into ds[] (-1 where not opened) and
 * checks types, shapes and storage; sets the counts in m. */
int trci_h5_open_body(rd *r, trc_meta *m, hid_t *ds, hsize_t dims[][3])
{
    int rc = TRC_OK, i;
    for (i = 0; i < D_COUNT; i++)
        ds[i] = -1;
    for (i = 0; i < D_COUNT && !rc; i++) {
        ds[i] = trci_h5_open_ds(r, &trci_h5_specs[i], dims[i]);
        if (ds[i] < 0) rc = r->err->code;
    }
    if (rc) return rc;

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
    if (P1 < 2)
        return trci_err(r->err, TRC_E_SCHEMA, "%s: /prompts/offset: %llu entries, need >= 2",
                        r->path, (unsigned long long)P1);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int id = shapes[s].id;
        for (int j = 0; j < trci_h5_specs[id].rank; j++)
            if (dims[id][j] != shapes[s].want[j])
                return trci_h5_shape_err(r, &trci_h5_specs[id], dims[id], shapes[s].want,
                                         shapes[s].why);
    }
    if (P1 - 1 > INT32_MAX || N > (hsize_t)INT64_MAX / 64 || T > (hsize_t)INT64_MAX / 64 ||
        dims[D_PTOK][0] > (hsize_t)INT64_MAX / 64)
        return trci_err(r->err, TRC_E_SCHEMA, "%s: /prompts/offset: dataset sizes too large",
                        r->path);
    m->n_prompts = (int32_t)(P1 - 1);
    m->n_trees = (int64_t)T;
    m->n_nodes = (int64_t)N;
    if (m->k < 1 || m->k > TRC_MAX_K) /* needed to size the arrays */
        return trci_err(r->err, TRC_E_DATA, "%s: @k: must be in [1, %d] (got %d)", r->path,
                        TRC_MAX_K, m->k);
    return check_storage(r, ds, dims);
}

/* Reads dataset i (open as d, shape dims) whole into buf. */
int trci_h5_read_whole(rd *r, int i, hid_t d, const hsize_t *dims, void *buf)
{
    hsize_t count = 1;
    for (int j = 0; j < trci_h5_specs[i].rank; j++)
        count *= dims[j];
    int fast = count ? trci_read_chunks(d, mem_type(&trci_h5_specs[i]), trci_h5_specs[i].rank, dims,
                                        buf, r->file_bytes)
                     : 0;
    if (fast == TRCI_CHUNK_FALLBACK)
        fast = H5Dread(d, mem_type(&trci_h5_specs[i]), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1
                                                                                               : 0;
    if (fast != 0)
        return trci_err(r->err, TRC_E_FORMAT,
                        "%s: %s: cannot read data (corrupt or truncated file)", r->path,
                        trci_h5_specs[i].name);
    return TRC_OK;
}

static int read_body(rd *r, trc_meta *m, trc_trace **out)
{
    hid_t ds[D_COUNT];
    hsize_t dims[D_COUNT][3];
    int rc = trci_h5_open_body(r, m, ds, dims), i;
    if (rc) goto done;
    trc_trace *t = trci_trace_alloc(m, (int64_t)dims[D_PTOK][0]);
    if (!t) {
        rc = trci_err(r->err, TRC_E_NOMEM, "%s: out of memory for %llu nodes", r->path,
                      (unsigned long long)m->n_nodes);
        goto done;
    }
    void *bufs[D_COUNT] = {t->prompt_off, t->prompt_tok, t->ref_off,   t->ref_tok,   t->node_off,
                           t->parent,     t->token,      t->depth,     t->draft_tok, t->draft_logp,
                           t->tgt_tok,    t->tgt_logp,   t->exit_score};
    for (i = 0; i < D_COUNT && !rc; i++)
        rc = trci_h5_read_whole(r, i, ds[i], dims[i], bufs[i]);
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

/* The three ways to read a file: LOAD_WHOLE (trc_load), LOAD_OPEN (trc_open:
 * prompt by prompt when indexed or larger than cap) and LOAD_CHECK
 * (trc_check). */
enum { LOAD_WHOLE, LOAD_OPEN, LOAD_CHECK };

/* Reads and validates the open file f; name labels errors.  lazy != 0: a
 * file with an index is opened prompt by prompt with a cache of cap bytes
 * (and keeps f); otherwise the file is read whole and f closed. */
static int load_open(hid_t f, const char *path, const void *img, size_t img_n, uint64_t file_bytes,
                     int lazy, size_t cap, trc_trace **out, trc_err *err)
{
    rd r = {f, path, err, img, img_n, file_bytes, 0};
    trc_meta m;
    memset(&m, 0, sizeof m);
    trc_trace *t = NULL;
    int rc = read_header(&r, &m);
    if (!rc && lazy) {
        int there = trci_h5_index_present(&r);
        if (there < 0) rc = err->code;
        if (there >= 0) {
            rc = trci_h5_open_lazy(&r, &m, cap, there, lazy == LOAD_CHECK, out);
            if (rc != TRCI_OPEN_WHOLE) {
                if (rc && r.f >= 0) H5Fclose(f);
                return rc;
            }
            rc = TRC_OK;
        }
    }
    if (!rc) rc = read_body(&r, &m, &t);
    if (!rc) rc = trci_validate(t, path, err);
    if (!rc) rc = trci_h5_verify_index(&r, t);
    H5Fclose(f);
    if (rc) {
        trc_free(t);
        return rc;
    }
    *out = t;
    return TRC_OK;
}

/* A file access list that closes every object with the file.  core != 0 adds
 * the in-memory driver (no backing store) for trc_load_image. */
static hid_t make_fapl(int core)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return -1;
    if (H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
        (core && H5Pset_fapl_core(fapl, 1 << 20, 0) < 0)) {
        H5Pclose(fapl);
        return -1;
    }
    return fapl;
}

static int load(const char *path, int lazy, size_t cap, trc_trace **out, trc_err *err)
{
    /* O_NONBLOCK: a FIFO or device must not block the open; only a regular
     * file is read */
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return trci_err(err, TRC_E_MISSING, "%s: cannot open: %s", path, strerror(errno));
    int st_rc = fstat(fd, &st);
    close(fd);
    if (st_rc != 0)
        return trci_err(err, TRC_E_MISSING, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return trci_err(err, TRC_E_MISSING, "%s: cannot open: is a directory", path);
    if (!S_ISREG(st.st_mode))
        return trci_err(err, TRC_E_FORMAT, "%s: not a regular file", path);
    if (H5Fis_hdf5(path) <= 0) return trci_err(err, TRC_E_FORMAT, "%s: not an HDF5 file", path);
    hid_t fapl = make_fapl(0);
    if (fapl < 0) return trci_err(err, TRC_E_NOMEM, "%s: cannot set up HDF5", path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (f < 0)
        return trci_err(err, TRC_E_FORMAT, "%s: cannot open as HDF5 (truncated or corrupt file)",
                        path);
    return load_open(f, path, NULL, 0, (uint64_t)st.st_size, lazy, cap, out, err);
}

/* HDF5 looks for its signature at offset 0, 512, 1024, 2048, ... */
static int has_signature(const unsigned char *b, size_t n)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (size_t off = 0; off + sizeof sig <= n; off = off ? off * 2 : 512)
        if (memcmp(b + off, sig, sizeof sig) == 0) return 1;
    return 0;
}

static int load_image(const void *buf, size_t n, const char *name, trc_trace **out, trc_err *err)
{
    if (!buf || n == 0 || !has_signature(buf, n))
        return trci_err(err, TRC_E_FORMAT, "%s: not an HDF5 file", name);
    hid_t fapl = make_fapl(1);
    /* HDF5 copies the image (the default callbacks), so buf stays the caller's */
    if (fapl < 0 || H5Pset_file_image(fapl, (void *)(uintptr_t)buf, n) < 0) {
        if (fapl >= 0) H5Pclose(fapl);
        return trci_err(err, TRC_E_NOMEM, "%s: cannot set up HDF5", name);
    }
    /* The core driver refuses an image whose name exists as a file, so HDF5
     * gets a name no file can have (nothing lies below /dev/null); messages
     * use the caller's. */
    hid_t f = H5Fopen("/dev/null/flashspec-trace-image", H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (f < 0)
        return trci_err(err, TRC_E_FORMAT, "%s: cannot open as HDF5 (truncated or corrupt file)",
                        name);
    return load_open(f, name, buf, n, n, LOAD_WHOLE, 0, out, err);
}

/* Switches HDF5's error printing off (see the file comment); the caller
 * restores *fn, *data. */
static void quiet_begin(H5E_auto2_t *fn, void **data)
{
    /* Before anything else touches HDF5: after a corrupt file, HDF5 1.10 may
     * fail to shut down cleanly at exit and print "infinite loop closing
     * library"; without the exit hook it never tries (a no-op when another module
     * initialised HDF5 first).  All our files are closed explicitly. */
    H5dont_atexit();
    H5Eget_auto2(H5E_DEFAULT, fn, data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* A dataset naming an unknown filter would make HDF5 search its plugin
     * directories and load a shared object: the reader needs only the
     * built-in deflate and shuffle filters, so plugin loading stays off. */
    H5PLset_loading_state(0);
}

static void reset(trc_trace **out, trc_err **err, trc_err *scratch)
{
    if (!*err) *err = scratch;
    (*err)->code = TRC_OK;
    (*err)->msg[0] = '\0';
    *out = NULL;
}

static int load_quietly(const char *path, int mode, size_t cap, trc_trace **out, trc_err *err)
{
    trc_err scratch;
    reset(out, &err, &scratch);
    if (!path) return trci_err(err, TRC_E_ARG, "(null): no path");
    H5E_auto2_t old_fn;
    void *old_data;
    quiet_begin(&old_fn, &old_data);
    int rc = load(path, mode, cap, out, err);
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    return rc;
}

int trc_load(const char *path, trc_trace **out, trc_err *err)
{
    return load_quietly(path, LOAD_WHOLE, 0, out, err);
}

int trc_check(const char *path, size_t mem_bytes, trc_trace **out, trc_err *err)
{
    return load_quietly(path, LOAD_CHECK, mem_bytes, out, err);
}

int trc_open(const char *path, size_t cache_bytes, trc_trace **out, trc_err *err)
{
    return load_quietly(path, LOAD_OPEN, cache_bytes, out, err);
}

int trc_load_image(const void *buf, size_t n, const char *name, trc_trace **out, trc_err *err)
{
    trc_err scratch;
    reset(out, &err, &scratch);
    if (!name) name = "(image)";
    H5E_auto2_t old_fn;
    void *old_data;
    quiet_begin(&old_fn, &old_data);
    int rc = load_image(buf, n, name, out, err);
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    return rc;
}
