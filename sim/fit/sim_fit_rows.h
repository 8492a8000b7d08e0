/*
 * sim_fit_rows.h -- the simulator's result rows as the drivers of sim/fit
 * read them (sim_fit_cal.h, sim_fit_tune.h): a point the binding ran, and the
 * result columns as the columns a reference CSV (refcsv.h) is matched
 * against.  No Lua.
 */
#ifndef SIM_FIT_ROWS_H
#define SIM_FIT_ROWS_H

#include "sim/fit/refcsv.h"
#include "sim/out/rows.h"

/* One point as the binding ran it, borrowed from the binding (for how long:
 * the callback that hands it over says). */
typedef struct sim_fit_point {
    const fs_row *row; /* its parameters and statistics; NULL: not run */
    int code;          /* 0, or the SIM_* status it failed with */
    const char *err;   /* its one-line error when code != 0 */
} sim_fit_point;

/* The result rows (fs_row, rows.h) of a run with meta m, as reference rows:
 * every result column but tree_nodes, which a reference derives itself
 * (refcsv.h).  m is borrowed for as long as the columns are used. */
fs_ref_cols fs_ref_result_cols(const fs_rows_meta *m);

#endif
