/*
 * fuzz_trace.c -- fuzz target: any bytes as an HDF5 trace file image.
 *
 * The input goes through trc_load_image, i.e. the whole reader of
 * traces/trc_h5read.c (HDF5 open, header and dataset checks, reads) and the
 * one validation routine (trci_validate).  Contract under test: every input
 * ends in TRC_OK or one of the documented status codes with a one-line,
 * non-empty message naming the image -- never a crash, a leak, a hang or
 * output.  A loaded trace is also walked tree by tree, so an accepted trace
 * whose accessors would read out of bounds shows up under ASan.  The same
 * bytes, as a file (an in-memory one, memfd), also go through trc_open with a
 * small prompt cache -- the index, the resident part, every prompt read and
 * validated on its own -- and trc_check prompt by prompt: each prompt
 * acquired either serves its trees or fails with one line naming the file.
 *
 * Scope: inputs whose HDF5 superblock is version 0 or 1 are skipped.  Their
 * object headers carry no checksums, and HDF5 1.10 itself has memory errors
 * parsing some damaged ones (a use-after-free in H5O__msg_iterate_real was
 * found here) that no check of ours can prevent; traces/README.md states the
 * guarantee for checksummed files only.  Files in the 1.10 format, with or
 * without variable-length strings, are fuzzed in full.
 *
 * Built two ways (tests/fuzz/meson.build): linked with libFuzzer
 * (-fsanitize=fuzzer) by scripts/fuzz, and linked with fuzz_replay.c into a
 * plain test that replays the committed corpus and regression inputs.
 */
#define _GNU_SOURCE /* memfd_create */
#include "traces/trc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void require(int cond)
{
    if (!cond) abort();
}

/* The superblock version after the first HDF5 signature (offset 0, 512, 1024,
 * ...), or -1 when there is none. */
static int superblock_version(const uint8_t *b, size_t n)
{
    static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (size_t off = 0; off + sizeof sig < n; off = off ? off * 2 : 512)
        if (memcmp(b + off, sig, sizeof sig) == 0) return b[off + sizeof sig];
    return -1;
}

static uint64_t walk_prompt(const trc_trace *t, int32_t p)
{
    uint64_t sum = 0;
    const int32_t *ref;
    int32_t len = trc_ref(t, p, &ref);
    for (int32_t pos = 0; pos < len; pos++) {
        trc_tree tr;
        require(trc_tree_get(t, p, pos, &tr) == TRC_OK);
        for (int32_t i = 0; i < tr.n; i++)
            sum += (uint64_t)tr.token[i] + (uint64_t)tr.tgt_tok[(size_t)i * (size_t)tr.k];
        require(tr.n >= 1 && tr.parent[0] == -1);
    }
    return sum;
}

static void require_error(int rc, const trc_err *err, const char *name)
{
    require(rc == err->code);
    require(rc >= TRC_E_MISSING && rc <= TRC_E_NOMEM);
    require(strncmp(err->msg, name, strlen(name)) == 0);
    require(strchr(err->msg, '\n') == NULL);
}

/* The input as a file, opened prompt by prompt and checked that way. */
static uint64_t lazy_paths(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
    if (fd < 0) return 0;
    uint64_t sum = 0;
    size_t at = 0;
    while (at < size) {
        ssize_t w = write(fd, data + at, size - at);
        if (w <= 0) break;
        at += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    trc_trace *t = NULL;
    trc_err err;
    int rc = at == size ? trc_open(path, 4096, &t, &err) : TRC_E_MISSING;
    if (at == size && rc != TRC_OK) require_error(rc, &err, path);
    if (rc == TRC_OK) {
        const trc_meta *m = trc_get_meta(t);
        for (int32_t p = 0; p < m->n_prompts; p++) {
            int a = trc_prompt_acquire(t, p, &err);
            if (a != TRC_OK) {
                require_error(a, &err, path);
                continue;
            }
            sum += walk_prompt(t, p);
            trc_prompt_release(t, p);
        }
        trc_free(t);
        t = NULL;
        rc = trc_check(path, 0, &t, &err);
        if (rc != TRC_OK) require_error(rc, &err, path);
        trc_free(t);
    }
    close(fd);
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sb = superblock_version(data, size);
    if (sb == 0 || sb == 1) return 0;
    trc_trace *t = NULL;
    trc_err err;
    int rc = trc_load_image(data, size, "fuzz.h5", &t, &err);
    require(rc == err.code);
    if (rc != TRC_OK) {
        require(t == NULL);
        require_error(rc, &err, "fuzz.h5");
        sink = lazy_paths(data, size);
        return 0;
    }
    require(t != NULL);
    const trc_meta *m = trc_get_meta(t);
    uint64_t sum = trc_checksum(t);
    for (int32_t p = 0; p < m->n_prompts; p++)
        sum += walk_prompt(t, p);
    trc_free(t);
    sum += lazy_paths(data, size);
    sink = sum; /* keeps the walk from being optimised away */
    return 0;
}
