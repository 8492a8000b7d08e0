/* hdr_sim_run.c -- sim/sweep/sim_run.h compiles on its own (included first). */
#include "sim/sweep/sim_run.h"

int hdr_sim_run_ok(void);
int hdr_sim_run_ok(void) { return 1; }
