/* hdr_sim_sweep_store.c -- sim/sweep/sim_sweep_store.h compiles on its own (included first). */
#include "sim/sweep/sim_sweep_store.h"

int hdr_sim_sweep_store_ok(void);
int hdr_sim_sweep_store_ok(void) { return 1; }
