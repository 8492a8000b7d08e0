/*
 * sim_out_write.c -- CSV formatting, the HDF5 writer and the atomic two-file
 * commit of a results table.
 *
 * Commit protocol (sim_out_write):
 *   1. mkdir -p DIR;
 *   2. write DIR/.results.csv.fstmp-* and DIR/.results.h5.fstmp-* (sim_tmp.h;
 *      mkstemp, so concurrent writers never share a temporary), fsync each;
 *   3. rename the HDF5 file, then the CSV, over their final names; fsync DIR.
 * A failure in 1-2 removes the temporaries and touches no results file.  A
 * failure in 3 also removes whichever new results file was already renamed, so
 * a reader never sees a new results.h5 next to a missing or stale results.csv.
 * Because rename(2) is atomic, a crash leaves either the old file or the new
 * one under each name, never a partial file; stray temporaries can only
 * survive a crash, and the next run into DIR removes them (sim_tmp_clean).  Files are created with mode 0644.
 *
 * Determinism: the CSV bytes depend only on the table (C-locale number
 * formatting is enforced for the decimal point).  The HDF5 file stores no
 * object timestamps (H5Pset_obj_track_times off for the group and datasets),
 * so writing the same table twice gives byte-identical files.
 *
 * HDF5's automatic error printing is switched off: failures surface as one
 * line in err and SIM_CANTCREATE.
 */
#include "sim/out/sim_out.h"
#include "sim/out/sim_strbuf.h"
#include "sim/out/sim_tmp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

static void set_err(char *err, size_t errlen, const char *what, const char *path, const char *cause)
{
    if (err && errlen) snprintf(err, errlen, "%s '%s': %s", what, path, cause);
}

/* ---- CSV ---- */

static void csv_string(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void sim_out_real(char *out, size_t n, double x, int min_digits)
{
    if (min_digits <= 0 && fabs(x) >= 1 && fabs(x) < 1e16)
        min_digits = (int)floor(log10(fabs(x))) + 1; /* every whole digit */
    for (int p = min_digits < 1 ? 1 : min_digits; p <= 17; p++) {
        snprintf(out, n, "%.*g", p, x);
        if (strtod(out, NULL) == x) return;
    }
}

static void csv_double(FILE *f, double v, int exact)
{
    if (isnan(v)) {
        fputs("nan", f);
        return;
    }
    if (isinf(v)) {
        fputs(v > 0 ? "inf" : "-inf", f);
        return;
    }
    char buf[64];
    if (exact) /* an exact column: the fewest digits that read back as v */
        sim_out_fmt_exact(buf, sizeof buf, v);
    else
        snprintf(buf, sizeof buf, "%.10g", v);
    /* a non-C LC_NUMERIC would print a comma as the decimal point */
    for (char *p = buf; *p; p++)
        if (*p == ',') *p = '.';
    fputs(buf, f);
    /* "0" -> "0.0": a double column reads back as floating point */
    if (!strpbrk(buf, ".e")) fputs(".0", f);
}

int sim_out_csv_format(const sim_out_table *t, char **out, size_t *len)
{
    if (!t || !out || !len) return SIM_INTERNAL_ARG;
    *out = NULL;
    *len = 0;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return SIM_NOMEM;
    int32_t nc = sim_out_ncols(t);
    int64_t nr = sim_out_nrows(t);
    for (int32_t c = 0; c < nc; c++) {
        if (c) fputc(',', f);
        csv_string(f, sim_out_col_name(t, c));
    }
    fputc('\n', f);
    for (int64_t r = 0; r < nr; r++) {
        for (int32_t c = 0; c < nc; c++) {
            if (c) fputc(',', f);
            const void *d = sim_out_col_data(t, c);
            switch (sim_out_col_type(t, c)) {
            case SIM_OUT_INT64:
                fprintf(f, "%" PRId64, ((const int64_t *)d)[r]);
                break;
            case SIM_OUT_DOUBLE:
                csv_double(f, ((const double *)d)[r], sim_out_col_exact(t, c));
                break;
            case SIM_OUT_STRING:
                csv_string(f, ((const char *const *)d)[r]);
                break;
            }
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        return SIM_NOMEM;
    }
    *out = buf;
    *len = n;
    return SIM_OK;
}

/* ---- HDF5 ---- */

static void h5_close_all(hid_t *ids, int n)
{
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0) continue;
        switch (H5Iget_type(ids[i])) {
        case H5I_FILE:
            H5Fclose(ids[i]);
            break;
        case H5I_GROUP:
            H5Gclose(ids[i]);
            break;
        case H5I_DATATYPE:
            H5Tclose(ids[i]);
            break;
        case H5I_DATASPACE:
            H5Sclose(ids[i]);
            break;
        case H5I_DATASET:
            H5Dclose(ids[i]);
            break;
        case H5I_ATTR:
            H5Aclose(ids[i]);
            break;
        case H5I_GENPROP_LST:
            H5Pclose(ids[i]);
            break;
        default:
            break;
        }
        ids[i] = H5I_INVALID_HID;
    }
}

/* Scalar variable-length string attribute on obj. */
static int h5_str_attr(hid_t obj, const char *key, hid_t strtype, const char *value)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    if (sp < 0) return -1;
    hid_t a = H5Acreate2(obj, key, strtype, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, strtype, &value);
    if (a >= 0 && H5Aclose(a) < 0) rc = -1;
    H5Sclose(sp);
    return rc < 0 ? -1 : 0;
}

/* Writes the whole table to a new HDF5 file at path.  Returns 0 or -1. */
static int h5_write(const sim_out_table *t, const char *path)
{
    enum { FILE_, GCPL, DCPL, STR, GROUP, SPACE, DSET, NIDS };
    hid_t id[NIDS];
    for (int i = 0; i < NIDS; i++)
        id[i] = H5I_INVALID_HID;
    int32_t nc = sim_out_ncols(t);
    hsize_t nr = (hsize_t)sim_out_nrows(t);
    const char **names = NULL;

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if ((id[FILE_] = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0) goto err;
    if ((id[GCPL] = H5Pcreate(H5P_GROUP_CREATE)) < 0) goto err;
    if (H5Pset_obj_track_times(id[GCPL], 0) < 0) goto err;
    if ((id[DCPL] = H5Pcreate(H5P_DATASET_CREATE)) < 0) goto err;
    if (H5Pset_obj_track_times(id[DCPL], 0) < 0) goto err;
    if ((id[STR] = H5Tcopy(H5T_C_S1)) < 0) goto err;
    if (H5Tset_size(id[STR], H5T_VARIABLE) < 0) goto err;
    if (H5Tset_cset(id[STR], H5T_CSET_UTF8) < 0) goto err;
    id[GROUP] = H5Gcreate2(id[FILE_], "results", H5P_DEFAULT, id[GCPL], H5P_DEFAULT);
    if (id[GROUP] < 0) goto err;

    for (int32_t c = 0; c < nc; c++) {
        hid_t ftype = id[STR], mtype = id[STR];
        if (sim_out_col_type(t, c) == SIM_OUT_INT64) {
            ftype = H5T_STD_I64LE;
            mtype = H5T_NATIVE_INT64;
        } else if (sim_out_col_type(t, c) == SIM_OUT_DOUBLE) {
            ftype = H5T_IEEE_F64LE;
            mtype = H5T_NATIVE_DOUBLE;
        }
        if ((id[SPACE] = H5Screate_simple(1, &nr, NULL)) < 0) goto err;
        id[DSET] = H5Dcreate2(id[GROUP], sim_out_col_name(t, c), ftype, id[SPACE], H5P_DEFAULT,
                              id[DCPL], H5P_DEFAULT);
        if (id[DSET] < 0) goto err;
        if (nr > 0 &&
            H5Dwrite(id[DSET], mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, sim_out_col_data(t, c)) < 0)
            goto err;
        h5_close_all(&id[SPACE], 2);
    }

    /* column order, as an attribute of /results */
    names = malloc(((size_t)nc + 1) * sizeof *names);
    if (!names) goto err;
    for (int32_t c = 0; c < nc; c++)
        names[c] = sim_out_col_name(t, c);
    hsize_t ncols = (hsize_t)nc;
    if ((id[SPACE] = H5Screate_simple(1, &ncols, NULL)) < 0) goto err;
    {
        hid_t a = H5Acreate2(id[GROUP], "columns", id[STR], id[SPACE], H5P_DEFAULT, H5P_DEFAULT);
        if (a < 0) goto err;
        herr_t rc = nc > 0 ? H5Awrite(a, id[STR], names) : 0;
        if (H5Aclose(a) < 0 || rc < 0) goto err;
    }
    free(names);
    names = NULL;

    for (int32_t i = 0; i < sim_out_nattrs(t); i++)
        if (h5_str_attr(id[FILE_], sim_out_attr_key(t, i), id[STR], sim_out_attr_value(t, i)) < 0)
            goto err;

    h5_close_all(&id[GCPL], NIDS - 1);
    herr_t rc = H5Fclose(id[FILE_]);
    id[FILE_] = H5I_INVALID_HID;
    return rc < 0 ? -1 : 0;
err:
    free(names);
    h5_close_all(&id[GCPL], NIDS - 1);
    h5_close_all(id, 1);
    return -1;
}

/* ---- files ---- */

/* mkdir -p.  Returns 0, or -1 with errno set. */
static int mkdir_p(const char *dir)
{
    size_t n = strlen(dir);
    char *p = malloc(n + 1);
    if (!p) return -1;
    memcpy(p, dir, n + 1);
    int rc = 0;
    for (size_t i = 1; i <= n && rc == 0; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        if (p[i - 1] == '/') continue;
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) != 0) {
            struct stat st;
            if (errno != EEXIST) {
                rc = -1;
            } else if (stat(p, &st) != 0) {
                rc = -1;
            } else if (!S_ISDIR(st.st_mode)) {
                errno = ENOTDIR;
                rc = -1;
            }
        }
        p[i] = saved;
    }
    int e = errno;
    free(p);
    errno = e;
    return rc;
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *s = malloc(a + b + 2);
    if (!s) return NULL;
    memcpy(s, dir, a);
    s[a] = '/';
    memcpy(s + a + 1, name, b + 1);
    return s;
}

/* "DIR/.NAME.fstmp-PID-HOST-XXXXXX" (sim_tmp.h), malloc'ed; NULL when out
 * of memory. */
static char *temp_template(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 64;
    char *s = malloc(n);
    if (s && sim_tmp_name(s, n, dir, name, "XXXXXX") != 0) {
        free(s);
        s = NULL;
    }
    return s;
}

/* Creates a unique temporary from template tmpl (modified in place) with mode
 * 0644.  Returns the fd or -1 with errno set. */
static int make_temp(char *tmpl)
{
    int fd = mkstemp(tmpl);
    if (fd < 0) return -1;
    if (fchmod(fd, 0644) != 0) {
        int e = errno;
        close(fd);
        unlink(tmpl);
        errno = e;
        return -1;
    }
    return fd;
}

static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static int fsync_path(const char *path, int flags)
{
    int fd = open(path, flags);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* The file names of one write: temporaries beside the final names. */
typedef struct out_paths {
    char *tmp_csv, *tmp_h5, *fin_csv, *fin_h5;
    int have_csv, have_h5; /* a temporary exists (removed on failure) */
} out_paths;

/* Writes csv[0..len) to the CSV temporary, synced.  Returns 0 or -1 (err set). */
static int write_csv_temp(out_paths *op, const char *csv, size_t len, char *err, size_t errlen)
{
    int fd = make_temp(op->tmp_csv);
    if (fd < 0) {
        set_err(err, errlen, "cannot create output", op->fin_csv, strerror(errno));
        return -1;
    }
    op->have_csv = 1;
    if (write_all(fd, csv, len) != 0 || fsync(fd) != 0) {
        set_err(err, errlen, "cannot write output", op->fin_csv, strerror(errno));
        close(fd);
        return -1;
    }
    if (close(fd) != 0) {
        set_err(err, errlen, "cannot write output", op->fin_csv, strerror(errno));
        return -1;
    }
    return 0;
}

/* The HDF5 temporary: mkstemp reserves the name, HDF5 truncates and fills
 * it; synced.  Returns 0 or -1 (err set). */
static int write_h5_temp(out_paths *op, const sim_out_table *t, char *err, size_t errlen)
{
    int fd = make_temp(op->tmp_h5);
    if (fd < 0) {
        set_err(err, errlen, "cannot create output", op->fin_h5, strerror(errno));
        return -1;
    }
    op->have_h5 = 1;
    close(fd);
    errno = 0;
    if (h5_write(t, op->tmp_h5) != 0) {
        set_err(err, errlen, "cannot write output", op->fin_h5,
                errno ? strerror(errno) : "HDF5 library error");
        return -1;
    }
    if (fsync_path(op->tmp_h5, O_RDONLY) != 0) {
        set_err(err, errlen, "cannot write output", op->fin_h5, strerror(errno));
        return -1;
    }
    return 0;
}

/* Renames both temporaries over the final names (the HDF5 file first) and
 * syncs the directory; on a failure after the first rename the final files
 * are removed again: both or neither.  Returns 0 or -1 (err set). */
static int commit_both(out_paths *op, const char *dir, char *err, size_t errlen)
{
    if (rename(op->tmp_h5, op->fin_h5) != 0) {
        set_err(err, errlen, "cannot create output", op->fin_h5, strerror(errno));
        return -1;
    }
    op->have_h5 = 0;
    if (rename(op->tmp_csv, op->fin_csv) != 0) {
        set_err(err, errlen, "cannot create output", op->fin_csv, strerror(errno));
        unlink(op->fin_h5);
        return -1;
    }
    op->have_csv = 0;
    /* some file systems cannot fsync a directory (EINVAL): the renames stand */
    if (fsync_path(dir, O_RDONLY | O_DIRECTORY) != 0 && errno != EINVAL) {
        set_err(err, errlen, "cannot create output", dir, strerror(errno));
        unlink(op->fin_h5);
        unlink(op->fin_csv);
        return -1;
    }
    return 0;
}

int sim_out_write(const sim_out_table *t, const char *dir, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!t || !dir || !dir[0]) {
        set_err(err, errlen, "cannot write results to", dir ? dir : "(null)", "no directory");
        return SIM_INTERNAL_ARG;
    }
    int rc = SIM_NOMEM;
    char *csv = NULL;
    size_t csv_len = 0;
    out_paths op = {temp_template(dir, SIM_OUT_CSV_NAME),
                    temp_template(dir, SIM_OUT_H5_NAME),
                    join(dir, SIM_OUT_CSV_NAME),
                    join(dir, SIM_OUT_H5_NAME),
                    0,
                    0};
    if (!op.tmp_csv || !op.tmp_h5 || !op.fin_csv || !op.fin_h5) {
        set_err(err, errlen, "cannot write results to", dir, strerror(ENOMEM));
    } else if (sim_out_csv_format(t, &csv, &csv_len) != SIM_OK) {
        set_err(err, errlen, "cannot format", op.fin_csv, strerror(ENOMEM));
    } else {
        rc = SIM_CANTCREATE;
        if (mkdir_p(dir) != 0)
            set_err(err, errlen, "cannot create output directory", dir, strerror(errno));
        else if (write_csv_temp(&op, csv, csv_len, err, errlen) == 0 &&
                 write_h5_temp(&op, t, err, errlen) == 0 && commit_both(&op, dir, err, errlen) == 0)
            rc = SIM_OK;
    }
    if (op.have_csv) unlink(op.tmp_csv);
    if (op.have_h5) unlink(op.tmp_h5);
    free(csv);
    free(op.tmp_csv);
    free(op.tmp_h5);
    free(op.fin_csv);
    free(op.fin_h5);
    return rc;
}

int sim_out_write_file(const char *dir, const char *name, const void *data, size_t len,
                       char *err, size_t errlen)
{
    char *fin = NULL, *tmp = NULL;
    if (!dir || !name || !*name || strchr(name, '/') || (!data && len)) {
        if (err && errlen) snprintf(err, errlen, "bad output file name");
        return SIM_INTERNAL_ARG;
    }
    if (mkdir_p(dir) != 0) {
        if (err && errlen)
            snprintf(err, errlen, "cannot write output '%s': %s", dir, strerror(errno));
        return SIM_CANTCREATE;
    }
    fin = join(dir, name);
    tmp = temp_template(dir, name);
    if (!fin || !tmp) {
        free(fin);
        free(tmp);
        if (err && errlen) snprintf(err, errlen, "out of memory");
        return SIM_NOMEM;
    }
    int fd = make_temp(tmp);
    int e = fd < 0 ? errno : 0;
    const char *p = data;
    size_t left = len;
    while (!e && left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            e = w < 0 ? errno : EIO;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fd >= 0 && !e && fsync(fd) != 0 && errno != EINVAL) e = errno;
    if (fd >= 0 && close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmp, fin) != 0) e = errno;
    if (e) {
        if (fd >= 0) unlink(tmp);
        if (err && errlen) snprintf(err, errlen, "cannot write output '%s': %s", fin, strerror(e));
    }
    free(fin);
    free(tmp);
    return e ? SIM_CANTCREATE : SIM_OK;
}

/* The stems of what a run writes into its output directory itself: the
 * results, the run record (run.json, script.lua), the resume store
 * (points/) and the directories the analysis tools write beside them
 * (report/, fidelity/). */
static const char *const reserved_stems[] = {"results", "run",    "script",   "points",
                                             "report",  "fidelity", NULL};

const char *sim_out_name_reserved(const char *name)
{
    if (!name || !*name || name[0] == '.') return "."; /* temporaries, hidden files */
    size_t stem = strcspn(name, ".");
    for (int i = 0; reserved_stems[i]; i++)
        if (strlen(reserved_stems[i]) == stem && strncasecmp(name, reserved_stems[i], stem) == 0)
            return reserved_stems[i];
    return NULL;
}
