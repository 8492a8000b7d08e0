/*
 * sim_sweep_store.c -- point ids, replay seeds and per-point result records
 * (format and guarantees in sim_sweep_store.h).
 *
 * Workload: one put per finished point (a few hundred bytes, from worker
 * threads) and one get per point when a sweep starts; a sweep has 1 to ~1e6
 * points, so one file per point in one directory is adequate and makes the
 * store trivially safe for concurrent writers (threads or MPI ranks sharing a
 * file system).
 *
 * Faults: a store directory removed while a sweep runs is created again by
 * the next put (the records written before are gone, the ones after are
 * kept); any other failed put is reported to the caller, which warns and
 * goes on -- the results are still in memory, only resuming them is lost.
 */
#define _GNU_SOURCE
#include "sim_sweep_store.h"
#include "sim/out/sim_tmp.h"
#include <elf.h>
#include <link.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#define REC_MAGIC "FSPOINT2"
#define REC_VERSION_CAP SIM_SWEEP_BUILD_KEY_CAP

typedef struct rec_header {
    char magic[8];
    uint32_t stats_size;
    uint32_t zero;
    uint64_t id_hi, id_lo;
    uint64_t trace_checksum;
    char version[REC_VERSION_CAP];
} rec_header;

#define REC_SIZE (sizeof(rec_header) + sizeof(sim_point_stats) + sizeof(uint64_t))

/* ---------------------------------------------------------------- store */

int sim_sweep_store_open(const char *dir, char *err, size_t errlen)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s", dir);
    if (n <= 0 || (size_t)n >= sizeof path) {
        snprintf(err, errlen, "%s: path too long", dir);
        return -1;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    struct stat st;
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, W_OK) != 0) {
        snprintf(err, errlen, "cannot create %s: not a writable directory", path);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------- build key */

typedef struct build_walk {
    sim_id_hasher h;
    int found;
} build_walk;

/* Feeds the NT_GNU_BUILD_ID note of one loaded object, if it has one. */
static int feed_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    build_walk *w = data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    /* the executable (empty name, first) and the project's own libraries */
    if (name[0] && strncmp(base, "libflashspec", 12) != 0) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        size_t left = ph->p_memsz;
        while (left >= sizeof(ElfW(Nhdr))) {
            ElfW(Nhdr) nh;
            memcpy(&nh, p, sizeof nh);
            size_t namesz = (nh.n_namesz + 3u) & ~(size_t)3, descsz = (nh.n_descsz + 3u) & ~(size_t)3;
            size_t need = sizeof nh + namesz + descsz;
            if (need > left) break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp(p + sizeof nh, "GNU", 4) == 0) {
                char hex[2 * 64 + 1];
                size_t nd = nh.n_descsz < 64 ? nh.n_descsz : 64;
                for (size_t k = 0; k < nd; k++)
                    snprintf(hex + 2 * k, 3, "%02x", p[sizeof nh + namesz + k]);
                hex[2 * nd] = 0;
                sim_id_hasher_str(&w->h, base[0] ? base : "exe", hex);
                w->found++;
            }
            p += need;
            left -= need;
        }
    }
    return 0;
}

/* Without build-id notes: the executable's bytes (at most 1 GiB). */
static int feed_exe_bytes(sim_id_hasher *h)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    if (fd < 0) return -1;
    unsigned char buf[65536];
    char hex[17];
    uint64_t sum = SIM_ID_FNV_OFFSET, total = 0;
    ssize_t r;
    while (total < (1ull << 30) && ((r = read(fd, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR)))
        if (r > 0) {
            sum = sim_id_fnv(sum, buf, (size_t)r);
            total += (uint64_t)r;
        }
    close(fd);
    snprintf(hex, sizeof hex, "%016" PRIx64, sum);
    sim_id_hasher_str(h, "exe-bytes", hex);
    return total > 0 ? 0 : -1;
}

int sim_sweep_build_key(const char *version, char out[SIM_SWEEP_BUILD_KEY_CAP])
{
    build_walk w = {.found = 0};
    sim_id_hasher_init(&w.h);
    dl_iterate_phdr(feed_build_id, &w);
    if (!w.found && feed_exe_bytes(&w.h) != 0) {
        snprintf(out, SIM_SWEEP_BUILD_KEY_CAP, "%.20s+unknown", version);
        return -1;
    }
    char hex[33];
    sim_id_hex(sim_id_hasher_final(&w.h), hex);
    snprintf(out, SIM_SWEEP_BUILD_KEY_CAP, "%.20s+%s", version, hex);
    return 0;
}

static int rec_path(char *out, size_t n, const char *dir, sim_id id)
{
    char hex[33];
    sim_id_hex(id, hex);
    int k = snprintf(out, n, "%s/%s.pt", dir, hex);
    return k > 0 && (size_t)k < n ? 0 : -1;
}

int sim_sweep_store_get(const char *dir, sim_id id, uint64_t trace_checksum,
                        const char *version, sim_point_stats *st)
{
    char path[4096];
    if (rec_path(path, sizeof path, dir, id) != 0) return 0;
    /* non-blocking, regular files only: a FIFO planted as a record must not
     * hang the resume */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return 0;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return 0;
    }
    unsigned char buf[REC_SIZE + 1];
    size_t got = 0;
    while (got < sizeof buf) {
        ssize_t r = read(fd, buf + got, sizeof buf - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != REC_SIZE) return 0; /* torn, truncated or foreign */
    rec_header hd;
    memcpy(&hd, buf, sizeof hd);
    uint64_t check;
    memcpy(&check, buf + REC_SIZE - sizeof check, sizeof check);
    char ver[REC_VERSION_CAP] = {0};
    if (version) snprintf(ver, sizeof ver, "%s", version);
    if (memcmp(hd.magic, REC_MAGIC, sizeof hd.magic) != 0 ||
        hd.stats_size != (uint32_t)sizeof(sim_point_stats) || hd.zero != 0 ||
        hd.id_hi != id.hi || hd.id_lo != id.lo || hd.trace_checksum != trace_checksum ||
        (version && memcmp(hd.version, ver, sizeof ver) != 0) ||
        sim_id_fnv(SIM_ID_FNV_OFFSET, buf, REC_SIZE - sizeof check) != check)
        return 0;
    memcpy(st, buf + sizeof hd, sizeof *st);
    return 1;
}

static int write_all(int fd, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int sim_sweep_store_put(const char *dir, sim_id id, uint64_t trace_checksum,
                        const char *version, const sim_point_stats *st, char *err,
                        size_t errlen)
{
    static atomic_uint_fast64_t serial; /* unique temporary names across threads */
    char path[4096], tmp[4200];
    if (rec_path(path, sizeof path, dir, id) != 0) {
        snprintf(err, errlen, "%s: path too long", dir);
        return -1;
    }
    char hex[33];
    sim_id_hex(id, hex);
    char serial_s[24];
    snprintf(serial_s, sizeof serial_s, "%" PRIuFAST64,
             (uint_fast64_t)atomic_fetch_add(&serial, 1));
    if (sim_tmp_name(tmp, sizeof tmp, dir, hex, serial_s) != 0) {
        snprintf(err, errlen, "%s: path too long", dir);
        return -1;
    }
    unsigned char buf[REC_SIZE];
    memset(buf, 0, sizeof buf);
    rec_header hd;
    memset(&hd, 0, sizeof hd);
    memcpy(hd.magic, REC_MAGIC, sizeof hd.magic);
    hd.stats_size = (uint32_t)sizeof(sim_point_stats);
    hd.id_hi = id.hi;
    hd.id_lo = id.lo;
    hd.trace_checksum = trace_checksum;
    snprintf(hd.version, sizeof hd.version, "%s", version);
    memcpy(buf, &hd, sizeof hd);
    memcpy(buf + sizeof hd, st, sizeof *st);
    uint64_t check = sim_id_fnv(SIM_ID_FNV_OFFSET, buf, REC_SIZE - sizeof check);
    memcpy(buf + REC_SIZE - sizeof check, &check, sizeof check);

    /* the directory may vanish at any moment (removed by hand mid-sweep): a
     * step failing with ENOENT recreates it and writes the record again */
    for (int attempt = 0;; attempt++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 && errno == ENOENT && attempt < 3 &&
            sim_sweep_store_open(dir, err, errlen) == 0)
            continue;
        if (fd < 0) {
            snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
            return -1;
        }
        int bad = write_all(fd, buf, sizeof buf);
        int e = errno;
        if (close(fd) != 0 && !bad) {
            bad = 1;
            e = errno;
        }
        if (!bad && rename(tmp, path) != 0) {
            bad = 1;
            e = errno;
        }
        if (!bad) break;
        unlink(tmp);
        if (e == ENOENT && attempt < 3 && sim_sweep_store_open(dir, err, errlen) == 0) continue;
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
        return -1;
    }
    return 0;
}
