/*
 * sim_lock.h -- one writer per output directory.
 *
 * A run that writes DIR (results, resume records, calibration outputs) holds
 * an advisory lock on DIR itself (flock(2) on the directory, exclusive, not
 * blocking) from before its first point until it exits.  A second run asking
 * for the same DIR while the first holds it fails at once with one line --
 * it neither waits nor writes -- so results.csv and results.h5 always come
 * from one run.  The lock needs no file inside DIR and goes with the process
 * (a killed run leaves none behind).  Advisory: programs that do not ask for
 * it (a shell's cp) are not stopped.
 */
#ifndef SIM_OUT_LOCK_H
#define SIM_OUT_LOCK_H

#include <stddef.h>

/* Creates dir when absent (mkdir -p; *created = 1 when dir itself was made,
 * so a run that ends writing nothing can remove it again) and locks it.
 * Returns the lock's descriptor (>= 0, close it or exit to release), or -1
 * with err: another process holds the lock ("another flashspec run is
 * writing it"), or the system's reason the directory cannot be made or
 * opened. */
int sim_out_lock(const char *dir, int *created, char *err, size_t errlen);

#endif
