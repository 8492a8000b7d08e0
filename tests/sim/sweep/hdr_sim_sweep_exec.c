/* hdr_sim_sweep_exec.c -- sim/sweep/sim_sweep_exec.h compiles on its own (included first). */
#include "sim/sweep/sim_sweep_exec.h"

int hdr_sim_sweep_exec_ok(void);
int hdr_sim_sweep_exec_ok(void) { return 1; }
