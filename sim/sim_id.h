/*
 * sim_id.h -- point identities and replay seeds.
 *
 * Point id.  A point is identified by a 128-bit hash of its canonical
 * description: a sequence of "key=value\n" lines fed in a fixed order by the
 * caller (sim/sweep/sim_point_id.c: policy name and every policy parameter,
 * device and models by name *and* every profile value, the trace checksum,
 * then every point key of fs.run/fs.sweep in the key table's order).  Values are canonical and exact:
 * integers in decimal, doubles as C99 hex floats ("%a": no rounding), strings
 * verbatim, lists element by element.  Because the caller walks the
 * eng_param_desc tables, a key added to a table enters the id with no change
 * here.  The hash is two independent 64-bit FNV-1a lanes, each finished with
 * the splitmix64 mixer; the id prints as 32 hex digits.
 *
 * Replay seed.  sim_id_seed(id) = splitmix64(id.hi ^ id.lo ^ salt): a point's
 * random stream depends on what the point is (the user's `seed` key included,
 * since it is part of the id), never on which worker or rank ran it.
 */
#ifndef SIM_ID_H
#define SIM_ID_H

#include <stddef.h>
#include <stdint.h>

#include "engine/eng_param.h"

typedef struct sim_id {
    uint64_t hi, lo;
} sim_id;

/* Streaming builder of an id (no allocation; plain value). */
typedef struct sim_id_hasher {
    uint64_t a, b;
} sim_id_hasher;

void sim_id_hasher_init(sim_id_hasher *h);
/* Feeds "key=value\n". */
void sim_id_hasher_str(sim_id_hasher *h, const char *key, const char *value);
void sim_id_hasher_u64(sim_id_hasher *h, const char *key, uint64_t v);
/* Feeds "prefix.name=value\n" for every row of a NULL-terminated table, values
 * read from params (borrowed) exactly as described above -- except a number
 * (int, bool, enum, double) equal to its row's default, which is left out: a
 * key added to a table with a default that keeps the old behaviour leaves
 * every existing point's id, and so its seeds, unchanged. */
void sim_id_hasher_params(sim_id_hasher *h, const char *prefix,
                             const eng_param_desc *table, const void *params);
sim_id sim_id_hasher_final(const sim_id_hasher *h);

/* 32 lower-case hex digits + NUL. */
void sim_id_hex(sim_id id, char out[33]);
int sim_id_equal(sim_id a, sim_id b);

/* The replay seed of a point. */
uint64_t sim_id_seed(sim_id id);

/* FNV-1a 64 of n bytes continued from h (start with SIM_ID_FNV_OFFSET): one
 * lane of an id, and the check sum of a resume record. */
#define SIM_ID_FNV_OFFSET 1469598103934665603ull
uint64_t sim_id_fnv(uint64_t h, const void *p, size_t n);

#endif
