/*
 * sim_sweep_mpi.h -- the few MPI operations a distributed sweep needs.
 *
 * Design: every rank runs the same deterministic script, so every rank expands
 * the same point list; MPI only carries (a) which points are already finished
 * (a broadcast from rank 0) and (b) the finished points' results (an
 * all-gather, so every rank gets the complete rows back) plus (c) one flag
 * reduction (was any rank interrupted).  All calls are made by the driver
 * thread only (MPI_THREAD_FUNNELED); worker threads never touch MPI.
 *
 * When flashspec is built without MPI (Meson option `mpi`, FS_HAVE_MPI unset),
 * or the process was not started by an MPI launcher, the same functions behave
 * as a world of one rank: rank 0 of 1, broadcasts and reductions are no-ops and
 * the all-gather is a copy.  Callers never need to know which case they are in.
 *
 * MPI state is process-wide by nature; this module keeps none of its own beyond
 * what MPI_Initialized/MPI_Finalized report.
 */
#ifndef SIM_SWEEP_MPI_H
#define SIM_SWEEP_MPI_H

#include <stddef.h>
#include <stdint.h>

/* 1 when this build can use MPI. */
int sim_mpi_available(void);

/* Initialises MPI when the process was started by an MPI launcher (mpirun,
 * mpiexec or srun: detected from their environment variables) and MPI is
 * available; otherwise does nothing.  Returns 1 when MPI is now initialised. */
int sim_mpi_init(int *argc, char ***argv);

/* Finalises MPI if this process initialised it.  Safe to call in any case. */
void sim_mpi_finalize(void);

int sim_mpi_rank(void); /* 0 when MPI is not in use */
int sim_mpi_size(void); /* 1 when MPI is not in use */

/* Ranks sharing this node (for the default worker count); 1 without MPI. */
int sim_mpi_local_size(void);

/* Broadcasts n bytes of buf from rank 0.  Returns 0 or -1. */
int sim_mpi_bcast(void *buf, size_t n);

/* Maximum of v over all ranks. */
int sim_mpi_max_int(int v);

/* All-gather of fixed-size records: rank r contributes `mine` records of
 * rec_size bytes from send; on return recv (room for the sum over all ranks)
 * holds every rank's records, rank 0's first.  *total receives that sum.
 * Returns 0, or -1 (allocation or MPI failure). */
int sim_mpi_allgather(const void *send, int64_t mine, size_t rec_size, void *recv,
                      int64_t recv_cap, int64_t *total);

#endif
