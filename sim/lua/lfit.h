/*
 * lfit.h -- the binding's side of sim/fit: Lua run from sim/fit's callbacks
 * (the drivers of flashspec.calibrate and flashspec.tune, sim_fit_cal.h and
 * sim_fit_tune.h) under a pcall guard.
 *
 * The guard.  sim/fit (and GSL below it) calls back into the binding -- the
 * model of flashspec.calibrate, the objective of flashspec.tune -- and a Lua
 * error must never unwind through those C frames.  fs_guard_call runs a
 * lua_CFunction under lua_pcall; on an error it keeps the error object and
 * returns SIM_INTERNAL, which the callback returns to sim/fit as its code
 * (sim/fit stops and hands the code back).  Once sim/fit has returned,
 * fs_guard_rethrow raises the kept error -- the same object, so the script
 * sees the error the evaluation raised.  After a failure, fs_guard_call
 * fails again at once without running anything.
 *
 * What a callback hands back.  The points a callback ran live in Lua values
 * that its pcall would leave to the collector; fs_guard_keep anchors them
 * until the next fs_guard_call (or fs_guard_free), so the driver reads them
 * after the callback returned.
 */
#ifndef FS_LUA_LFIT_H
#define FS_LUA_LFIT_H

#include <lua.h>

#include "sim/sim_status.h"

typedef struct fs_guard {
    lua_State *L;
    int err_ref;  /* registry reference of the kept error, or LUA_NOREF */
    int keep_ref; /* registry reference of the values kept (fs_guard_keep), or LUA_NOREF */
} fs_guard;

void fs_guard_init(fs_guard *g, lua_State *L);

/* Calls fn under lua_pcall with its arguments: ud (a light userdata) and, when
 * arg_idx is not 0, a copy of the value at that stack index (so fn reaches it
 * as index 2).  Returns SIM_OK, or SIM_INTERNAL with the error kept.  The
 * values the previous call kept are let go first. */
int fs_guard_call(fs_guard *g, lua_CFunction fn, void *ud, int arg_idx);

/* Raises the kept error, if there is one (returns otherwise). */
void fs_guard_rethrow(fs_guard *g);

/* From fn, run by fs_guard_call: keeps the values at stack indices
 * [from, top] alive until the next fs_guard_call or fs_guard_free. */
void fs_guard_keep(fs_guard *g, int from);

/* Drops a kept error and kept values (its owner's __gc); twice is harmless. */
void fs_guard_free(fs_guard *g);

#endif
