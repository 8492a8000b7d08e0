/*
 * calibrate_impl.h -- what the two files of flashspec.calibrate share
 * (internal to sim/lua): calibrate.c runs the calibration (evaluations of the
 * points function, the fit, the result table and the outputs);
 * calibrate_spec.c reads and checks the spec table into a cal.  The contract
 * of flashspec.calibrate itself is the header comment of calibrate.c.
 */
#ifndef FS_LUA_CALIBRATE_IMPL_H
#define FS_LUA_CALIBRATE_IMPL_H

#include <limits.h>
#include <lua.h>
#include <stdint.h>

#include "sim/fit/refcsv.h"
#include "sim/fit/sim_fit.h"
#include "sim/hw/sim_device.h"
#include "sim/lua/api_impl.h"
#include "sim/lua/lfit.h"
#include "sim/lua/sweep_exec.h"

#define CAL_NAME_CAP SIM_FIT_NAME_CAP

/* The options checked against cal_keys. */
typedef struct cal_opts {
    char name[CAL_NAME_CAP];
    int32_t loo; /* index into fs_cal_loo_choices */
    int32_t max_iter, starts, bootstrap;
    double fd_step, bootstrap_seed;
} cal_opts;

/* The values of the option loo (NULL-terminated) and sim/fit's kinds, in the
 * same order: cal_opts.loo indexes both (calibrate_spec.c). */
extern const char *const fs_cal_loo_choices[];
extern const sim_fit_loo_kind fs_cal_loo_kinds[];

/* One call of flashspec.calibrate: a userdata owned by the Lua stack (its
 * __gc in calibrate.c frees what it holds). */
typedef struct cal {
    lua_State *L;
    fs_api *a;
    char chunk[PATH_MAX];
    int line;
    fs_guard guard; /* evaluations run Lua under it (lfit.h) */
    int fn_ref;     /* registry reference of the points function */
    cal_opts o;
    char prof_base[SIM_NAME_CAP], prof_name[SIM_NAME_CAP]; /* "" = no profile */
    fs_ref ref;
    char ref_arg[256]; /* the reference as the spec names it (for the outputs) */
    sim_fit f;         /* the fit (sim/fit): parameters, rows, results */
    uint8_t device_key[SIM_FIT_MAX_PARAMS]; /* 1: a numeric key of sim_device (profiled) */
    int32_t n_hold;
    int32_t *matches;  /* [n_rows] points matched in the last evaluation */
    int32_t traces0;   /* traces made before the fit: never released */
    sim_sweep_memo memo;      /* points already run, by id: a difference step replays only
                          the points its parameter moves (sweep_exec.h) */
    int tty;           /* progress lines: stderr is a terminal, no -q */
    /* the ETA of the progress line: when and at which evaluation the current
     * phase (the fit, the bootstrap) began, and the replicate it is at */
    double phase_s;
    int64_t phase_eval;
    int32_t phase_rep;
    int memos_on;      /* 1 while the fit holds the run's draw memos on */
    int need_interval; /* a reference row reads tokens_per_s_lo/hi: points bootstrap them */
} cal;

/* calibrate.c: raises the error of exit code `code` with the printf-formatted
 * message, clearing the progress line first; never returns. */
int fs_cal_raise(cal *c, int code, const char *fmt, ...);

/* calibrate_spec.c: everything the spec table at idx says but holdout,
 * checked into c -- the options, the profile, the parameters (sorted by
 * name), the points function (a registry reference) -- and the reference
 * loaded.  Raises on the first problem (calibrate.c's "Errors"). */
void fs_cal_read_spec(cal *c, int idx);
/* holdout = SOURCE or { SOURCE, ... } of the spec table at idx: marks the
 * reference rows of those sources in c->f.hold (after sim_fit_init) and counts
 * them in c->n_hold; raises when a name matches no row. */
void fs_cal_read_holdout(cal *c, int idx);

#endif
