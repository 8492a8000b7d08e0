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
 *
 * The lock is on the directory the path named when it was taken, and it
 * holds for the path only while the path still names that directory: after
 * `rm -rf DIR` (or a rename) under a running writer, a second run makes a new
 * DIR and locks it.  So the lock is taken on the path -- the directory is
 * checked, after flock, to be the one at the path still, else taken again --
 * and every writer asks, before each write into DIR, that DIR still be the
 * locked directory (sim_out_lock_keep: the same device and inode).  When it
 * is not, the run takes the lock on the path again if it can -- DIR made
 * anew, no other run holding it and no other run's results in it -- and
 * else writes nothing more there, and says so: the second run owns DIR.
 */
#ifndef SIM_OUT_LOCK_H
#define SIM_OUT_LOCK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Creates dir when absent (mkdir -p; *created = 1 when dir itself was made,
 * so a run that ends writing nothing can remove it again) and locks it.
 * Returns the lock's descriptor (>= 0, close it or exit to release), or -1
 * with err: another process holds the lock ("another flashspec run is
 * writing it"), or the system's reason the directory cannot be made or
 * opened. */
int sim_out_lock(const char *dir, int *created, char *err, size_t errlen);

/* 0 when dir still names the directory the lock fd (from sim_out_lock) is
 * on; else -1 with err ("cannot write output 'DIR': the directory this run
 * locked was removed or replaced while it ran ..."). */
int sim_out_lock_held(int fd, const char *dir, char *err, size_t errlen);

/* A held lock, shared by the threads that write into its directory. */
typedef struct sim_out_lockh {
    const char *dir;    /* borrowed */
    int fd;             /* the lock (sim_out_lock); -1: none held */
    int32_t relocked;   /* times the path was locked again (its directory replaced) */
    pthread_mutex_t mu; /* fd and relocked, between threads */
} sim_out_lockh;

/* Takes the lock on dir into h (sim_out_lock; h->dir borrows dir).  0, or
 * -1 with err.  sim_out_lock_release: the lock and the mutex (NULL-safe,
 * harmless on a handle never taken). */
int sim_out_lock_take(sim_out_lockh *h, const char *dir, int *created, char *err, size_t errlen);
void sim_out_lock_release(sim_out_lockh *h);

/* Before every write into h->dir (any thread): 0 when h->dir is the locked
 * directory, or was replaced and could be locked again (made anew when
 * absent; never when another run holds it or has written results.csv,
 * results.h5 or run.json into it); else -1 with err naming why -- nothing is
 * to be written there. */
int sim_out_lock_keep(sim_out_lockh *h, char *err, size_t errlen);

#endif
