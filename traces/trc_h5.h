/*
 * trc_h5.h -- private to the HDF5 reader: what trc_h5read.c (files, header,
 * datasets, loading) shares with trc_h5index.c (the optional /index and
 * opening prompt by prompt).  Nothing else includes it.
 */
#ifndef TRC_H5_H
#define TRC_H5_H

#include "trc_impl.h"

#include <hdf5.h>

/* One file being read: errors go to err, labelled with path. */
typedef struct rd {
    hid_t f;
    const char *path;
    trc_err *err;
    const unsigned char *img; /* trc_load_image: the caller's image, else NULL */
    size_t img_n;
    uint64_t file_bytes; /* size of the file or image */
    int heap_checked;    /* global heaps verified (check_global_heaps) */
} rd;

/* A dataset of the schema: its path, the in-memory type it is read as and
 * its rank. */
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

extern const dspec trci_h5_specs[D_COUNT];

/* trc_h5read.c */
/* 1 when group and dataset name both exist as hard links, 0 when either is
 * missing, -1 (error set) for a link of another kind. */
int trci_h5_link_exists(rd *r, const char *name);
/* Opens dataset s and checks its type and rank; dims receives its shape.
 * -1 with the error set on failure. */
hid_t trci_h5_open_ds(rd *r, const dspec *s, hsize_t dims[3]);
int trci_h5_shape_err(rd *r, const dspec *s, const hsize_t *dims, const hsize_t *want,
                      const char *why);
/* 2 when every element of d has storage in the file, 1 when some has, 0 when
 * none has (or it cannot be told). */
int trci_h5_written_status(hid_t d, int rank, const hsize_t *dims);
/* Opens every dataset of the schema into ds[] and checks types, shapes and
 * storage; sets the counts in m. */
int trci_h5_open_body(rd *r, trc_meta *m, hid_t *ds, hsize_t dims[][3]);
/* Reads dataset i (open as d, shape dims) whole into buf. */
int trci_h5_read_whole(rd *r, int i, hid_t d, const hsize_t *dims, void *buf);

/* trc_h5index.c */
/* 1 when the file has an index, 0 when not, -1 (error set) for a link of
 * another kind. */
int trci_h5_index_present(rd *r);
/* A trace read whole and the file's index (if any) must say the same. */
int trci_h5_verify_index(rd *r, trc_trace *t);
/* trc_open/trc_check of the file r (header read into m): the resident part
 * now, prompts later.  indexed: the file has an index; check: make the index
 * again from the data and compare.  Returns TRCI_OPEN_WHOLE, with nothing
 * kept, when the file has no index and fits in cap (the caller reads it
 * whole).  On failure after the trace took the file, r->f is -1. */
#define TRCI_OPEN_WHOLE (-1)
int trci_h5_open_lazy(rd *r, trc_meta *m, size_t cap, int indexed, int check, trc_trace **out);

#endif
