/*
 * sim_sweep_mpi.c -- MPI wrappers for distributed sweeps (see sim_sweep_mpi.h).
 *
 * Compiled with FS_HAVE_MPI=1 when Meson found an MPI implementation
 * (OpenMPI is the tested one).  Records travel as one contiguous MPI datatype
 * of rec_size bytes, so counts stay record counts (not bytes) and sweeps of
 * millions of points do not overflow MPI's int counts.  Ranks are assumed to
 * share one binary and one architecture (byte images of C structs travel).
 */
#include "sim_sweep_mpi.h"

#include <stdlib.h>
#include <string.h>

#if FS_HAVE_MPI
#include <mpi.h>

static int mpi_live(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    if (!init) return 0;
    MPI_Finalized(&fin);
    return !fin;
}

int sim_mpi_available(void) { return 1; }

/* Started by a launcher?  mpirun/mpiexec (OpenMPI, PMIx, PMI) or a Slurm step
 * of more than one task. */
static int launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE", NULL};
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i])) return 1;
    const char *nt = getenv("SLURM_NTASKS");
    return nt && atoi(nt) > 1 && getenv("SLURM_STEP_ID") != NULL;
}

int sim_mpi_init(int *argc, char ***argv)
{
    if (mpi_live()) return 1;
    if (!launched()) return 0;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 0;
    return 1;
}

void sim_mpi_finalize(void)
{
    if (mpi_live()) MPI_Finalize();
}

int sim_mpi_rank(void)
{
    int r = 0;
    if (mpi_live()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int sim_mpi_size(void)
{
    int s = 1;
    if (mpi_live()) MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

int sim_mpi_local_size(void)
{
    if (!mpi_live()) return 1;
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    return n > 0 ? n : 1;
}

int sim_mpi_bcast(void *buf, size_t n)
{
    if (sim_mpi_size() == 1) return 0;
    unsigned char *p = buf;
    while (n > 0) { /* int counts: send in slices of at most 1 GiB */
        int c = n > (1u << 30) ? (1 << 30) : (int)n;
        if (MPI_Bcast(p, c, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
        p += c;
        n -= (size_t)c;
    }
    return 0;
}

int sim_mpi_max_int(int v)
{
    if (sim_mpi_size() == 1) return v;
    int out = v;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

int sim_mpi_allgather(const void *send, int64_t mine, size_t rec_size, void *recv,
                      int64_t recv_cap, int64_t *total)
{
    int size = sim_mpi_size();
    if (size == 1) {
        if (mine > recv_cap) return -1;
        if (mine > 0) memcpy(recv, send, (size_t)mine * rec_size);
        *total = mine;
        return 0;
    }
    if (mine > INT32_MAX || rec_size > INT32_MAX) return -1;
    int *counts = calloc((size_t)size, sizeof *counts);
    int *displs = calloc((size_t)size, sizeof *displs);
    int rc = -1;
    MPI_Datatype rec;
    if (!counts || !displs) goto out;
    int m = (int)mine;
    if (MPI_Allgather(&m, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS)
        goto out;
    int64_t sum = 0;
    for (int r = 0; r < size; r++) {
        if (sum > INT32_MAX) goto out;
        displs[r] = (int)sum;
        sum += counts[r];
    }
    if (sum > recv_cap || sum > INT32_MAX) goto out;
    if (MPI_Type_contiguous((int)rec_size, MPI_BYTE, &rec) != MPI_SUCCESS) goto out;
    MPI_Type_commit(&rec);
    if (MPI_Allgatherv(send, m, rec, recv, counts, displs, rec, MPI_COMM_WORLD) == MPI_SUCCESS) {
        *total = sum;
        rc = 0;
    }
    MPI_Type_free(&rec);
out:
    free(counts);
    free(displs);
    return rc;
}

#else /* a world of one rank */

int sim_mpi_available(void) { return 0; }

int sim_mpi_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

void sim_mpi_finalize(void) {}
int sim_mpi_rank(void) { return 0; }
int sim_mpi_size(void) { return 1; }
int sim_mpi_local_size(void) { return 1; }

int sim_mpi_bcast(void *buf, size_t n)
{
    (void)buf;
    (void)n;
    return 0;
}

int sim_mpi_max_int(int v) { return v; }

int sim_mpi_allgather(const void *send, int64_t mine, size_t rec_size, void *recv,
                      int64_t recv_cap, int64_t *total)
{
    if (mine > recv_cap) return -1;
    if (mine > 0) memcpy(recv, send, (size_t)mine * rec_size);
    *total = mine;
    return 0;
}

#endif
