/* hdr_sim_sweep_mpi.c -- sim/sweep/sim_sweep_mpi.h compiles on its own (included first). */
#include "sim/sweep/sim_sweep_mpi.h"

int hdr_sim_sweep_mpi_ok(void);
int hdr_sim_sweep_mpi_ok(void) { return 1; }
