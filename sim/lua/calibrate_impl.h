/*
 * calibrate_impl.h -- what the two files of flashspec.calibrate share
 * (internal to sim/lua): calibrate.c is the binding of the calibration's
 * driver (sim/fit/sim_fit_cal.h) -- its model callback runs the points
 * function, the results become the Lua table, the files the run's outputs;
 * calibrate_spec.c reads and checks the spec table into the driver's
 * inputs.  The contract of flashspec.calibrate itself is the header comment
 * of calibrate.c.
 */
#ifndef FS_LUA_CALIBRATE_IMPL_H
#define FS_LUA_CALIBRATE_IMPL_H

#include <lua.h>
#include <stdint.h>

#include "sim/fit/sim_fit_cal.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/lfit.h"
#include "sim/lua/sweep_exec.h"

/* One call of flashspec.calibrate: a userdata owned by the Lua stack (its
 * __gc in calibrate.c frees what it holds). */
typedef struct cal {
    lua_State *L;
    fs_api *a;
    fs_guard guard;  /* evaluations run Lua under it (lfit.h) */
    int fn_ref;      /* registry reference of the points function */
    int32_t traces0; /* traces made before the fit: never released */
    sim_sweep_memo memo;    /* points already run, by id: a difference step replays only
                        the points its parameter moves (sweep_exec.h) */
    int memos_on;    /* 1 while the fit holds the run's draw memos on */
    sim_fit_cal fc;  /* the driver: the spec's values, the reference, the fit */
} cal;

/* calibrate_spec.c: everything the spec table at idx says but holdout,
 * checked into c -- the options, the profile, the parameters (sorted by
 * name), the points function (a registry reference) -- and the reference
 * loaded.  Raises on the first problem (calibrate.c's "Errors"). */
void fs_cal_read_spec(cal *c, int idx);
/* holdout = SOURCE or { SOURCE, ... } of the spec table at idx: holds out the
 * reference rows of those sources (sim_fit_cal_hold, after sim_fit_cal_init);
 * raises when a name matches no row. */
void fs_cal_read_holdout(cal *c, int idx);

#endif
