/*
 * fuzz_trace.c -- fuzz target: any bytes as an HDF5 trace file image.
 *
 * The input goes through trc_load_image, i.e. the whole reader of
 * traces/trc_h5read.c (HDF5 open, header and dataset checks, reads) and the
 * one validation routine (trci_validate).  Contract under test: every input
 * ends in TRC_OK or one of the documented status codes with a one-line,
 * non-empty message naming the image -- never a crash, a leak, a hang or
 * output.  A loaded trace is also walked tree by tree, so an accepted trace
 * whose accessors would read out of bounds shows up under ASan.
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
#include "traces/trc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
        require(rc >= TRC_E_MISSING && rc <= TRC_E_NOMEM);
        require(strncmp(err.msg, "fuzz.h5", 7) == 0);
        require(strchr(err.msg, '\n') == NULL);
        return 0;
    }
    require(t != NULL);
    const trc_meta *m = trc_get_meta(t);
    uint64_t sum = trc_checksum(t);
    for (int32_t p = 0; p < m->n_prompts; p++) {
        const int32_t *ref;
        int32_t len = trc_ref(t, p, &ref);
        for (int32_t pos = 0; pos < len; pos++) {
            trc_tree tr;
            require(trc_tree_get(t, p, pos, &tr) == TRC_OK);
            for (int32_t i = 0; i < tr.n; i++)
                sum += (uint64_t)tr.token[i] + (uint64_t)tr.tgt_tok[(size_t)i * (size_t)tr.k];
            require(tr.n >= 1 && tr.parent[0] == -1);
        }
    }
    trc_free(t);
    sink = sum; /* keeps the walk from being optimised away */
    return 0;
}
