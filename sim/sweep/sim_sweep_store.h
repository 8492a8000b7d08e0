/*
 * sim_sweep_store.h -- the resume store.
 *
 * Points are identified and seeded by sim/sim_id.h.
 *
 * Store.  One small binary record per finished point, DIR/<id>.pt, written to
 * a temporary name in DIR and renamed into place (atomic on POSIX file
 * systems), so a reader sees a whole record or none.  Record layout (host byte
 * order; ranks and resumes are expected on the same architecture):
 *
 *   "FSPOINT2"            8 bytes magic and format version
 *   uint32 stats_size     sizeof(sim_point_stats) of the writer
 *   uint32 zero
 *   uint64 id.hi, id.lo   the point id (must equal the file name's)
 *   uint64 trace_checksum the trace the point replayed
 *   char version[64]      build key of the flashspec that computed it
 *                         (sim_sweep_build_key), NUL-padded
 *   stats_size bytes      the sim_point_stats image
 *   uint64 check          FNV-1a 64 of every preceding byte
 *
 * A record is used only when all of these match the point being resumed; a
 * torn, foreign, stale (other version or trace) or corrupted record is ignored
 * and the point recomputed (and the record replaced).  The build key names the
 * binary, not only the release: a rebuild with any change to the code that
 * computes results gives new keys, so its points are recomputed.  Records are not
 * fsync'ed: they survive a killed process (SIGKILL), not necessarily a power
 * loss, in which case a damaged record fails its check and is recomputed.
 * Thread-safe: concurrent puts of different ids, or of the same id with equal
 * content, are fine (each writer has its own temporary file).
 */
#ifndef SIM_SWEEP_STORE_H
#define SIM_SWEEP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/eng_param.h"
#include "sim/replay/replay.h"
#include "sim/sim_id.h"

/* Creates dir (and parents).  Returns 0, or -1 with one line in err. */
int sim_sweep_store_open(const char *dir, char *err, size_t errlen);

/* The key records are stored under: "VERSION+HEX", HEX the 32-digit hash of
 * the GNU build ids of the running executable and of every loaded object
 * named libflashspec* (the code that computes results, however it is
 * linked); without build-id notes, the hash of the executable's bytes.  At
 * most SIM_SWEEP_BUILD_KEY_CAP - 1 characters.  Returns 0, or -1 when no
 * identity could be read (out then holds "VERSION+unknown", which no record
 * of another run can match by accident only if every build lacks one). */
#define SIM_SWEEP_BUILD_KEY_CAP 64
int sim_sweep_build_key(const char *version, char out[SIM_SWEEP_BUILD_KEY_CAP]);

/* Reads the record of id.  Returns 1 and fills *st when a valid record for this
 * id, trace checksum and version exists (version NULL: any version, as long
 * as the record format is this one); 0 otherwise. */
int sim_sweep_store_get(const char *dir, sim_id id, uint64_t trace_checksum,
                        const char *version, sim_point_stats *st);

/* Writes the record of id atomically; recreates dir (and parents) when it has
 * been removed.  Returns 0, or -1 with one line in err. */
int sim_sweep_store_put(const char *dir, sim_id id, uint64_t trace_checksum,
                        const char *version, const sim_point_stats *st, char *err,
                        size_t errlen);

#endif
