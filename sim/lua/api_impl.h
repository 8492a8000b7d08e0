/*
 * api_impl.h -- what the parts of the script surface share (internal to
 * sim/lua): the per-run context, the userdata types behind profiles, traces and
 * policies, error raising, and the Lua constructors registered by api.c.
 *
 * api.c owns the run (context, points, run/sweep, the script itself);
 * api_objects.c builds the objects a script composes points from.
 */
#ifndef FS_LUA_API_IMPL_H
#define FS_LUA_API_IMPL_H

#include <lua.h>
#include <limits.h>
#include <stddef.h>

#include "engine/eng_policy.h"
#include "sim/hw/sim_hw.h"
#include "sim/config/profile.h"
#include "sim/lua/api.h"
#include "sim/out/rows.h"
#include "sim/out/sim_outdir.h"
#include "sim/replay/sim_trace_cache.h"
#include "sim/config/sandbox.h"
#include "sim/config/sim_profile_cache.h"
#include "sim/lua/sweep_exec.h"
#include "sim/sweep/sim_run.h"
#include "traces/trc.h"

#define MT_ERROR "flashspec.error"
#define MT_DEVICE "flashspec.device"
#define MT_MODEL "flashspec.model"
#define MT_TRACE "flashspec.trace"
#define MT_POLICY "flashspec.policy"
#define API_KEY "flashspec.api"

/* A trace a script run holds (sim/replay/sim_trace_cache.h). */
typedef sim_trace_entry fs_trace_entry;

/* The run's state (sim/sweep/sim_run.h): what it holds, the memory it
 * charges, what it said and writes; the binding adds the raising. */
typedef sim_run fs_api;

/* Counts `bytes` more that the run is about to hold for the script
 * (sim_run_try_hold); raises (exit 78, "CHUNK:LINE: WHAT: ...") when that
 * and the Lua heap would pass the memory limit (--max-memory-mb).
 * sim_run_release gives bytes back. */
void fs_api_charge(lua_State *L, fs_api *a, size_t bytes, const char *chunk, int line,
                   const char *what);

/* sim_run_synth_defer and sim_run_synth_resolve (sim/sweep/sim_run.h),
 * raising where they fail: out of memory, or the first recorded trace that
 * failed (the generator's error, or the memory limit's line). */
void fs_api_synth_defer(lua_State *L, fs_api *a, fs_trace_entry *e, const trc_synth_params *p,
                        size_t most, const char *chunk, int line);
void fs_api_synth_resolve(lua_State *L, fs_api *a);

/* The label of a policy's params (sim_out_params_label, sim/out/rows.h),
 * raising (78, the caller's line) when it does not fit in n bytes. */
void fs_policy_label(lua_State *L, const eng_policy_desc *desc, const void *params, char *out,
                     size_t n);




typedef struct ud_device {
    sim_device dev;
    char name[64];
    /* standing variants (profile.h): the device with each variant's keys */
    int32_t n_variants;
    sim_device variants[SIM_PROFILE_MAX_VARIANTS];
    char variant_names[SIM_PROFILE_MAX_VARIANTS][SIM_VARIANT_NAME_CAP];
} ud_device;

typedef struct ud_model {
    sim_model model;
    char name[64];
} ud_model;

/* The most traces an acceptance bracket holds (tr:bracket). */
#define FS_TRACE_BRACKET_MAX 8

typedef struct ud_trace {
    const fs_trace_entry *entry; /* borrowed from fs_api */
    /* the acceptance bracket (tr:bracket; n_bracket 0 = none): the traces the
     * point is also replayed on for the model band, and their trc_trace
     * handles as the last staged point got them (sim_point.trace_variants
     * borrows this array while the point table keeps the userdata alive) */
    int32_t n_bracket;
    const fs_trace_entry *bracket[FS_TRACE_BRACKET_MAX];
    const trc_trace *bracket_traces[FS_TRACE_BRACKET_MAX];
} ud_trace;

typedef struct ud_policy {
    const eng_policy_desc *desc;
    char label[FS_LABEL_CAP]; /* "k=8,unit=cpu" (sim_out_params_label) */
    int32_t cap_set; /* the script set its tree-size cap (tree_nodes or the policy's own key) */
    _Alignas(max_align_t) unsigned char params[];
} ud_policy;

/* One name, one thing (sim_run_claim_names, sim/sweep/sim_run.h): claims the
 * names a recorded row of these objects carries -- policy, device, target,
 * draft (NULL: none) -- raising (78, at chunk:line) when another thing
 * already holds one of them. */
void fs_api_claim_names(lua_State *L, fs_api *a, const ud_policy *pol, const ud_device *dev,
                        const ud_model *tgt, const ud_model *drf, const char *chunk, int line);

/* The run's context (stored in the Lua registry under API_KEY). */
fs_api *fs_api_get(lua_State *L);

/* The one raise helper (never returns): an error object {status, code = its
 * exit code, which scripts that catch it read, msg}; where != 0 prefixes msg
 * with the calling script's "FILE:LINE: ". */
int fs_raise(lua_State *L, int status, int where, const char *fmt, ...);

/* The SIM_* status and the message of the error value at idx: a flashspec
 * error object's own status, else dflt; *msg the object's message or the
 * value's text (NULL when it has none), valid while the value stays on the
 * stack. */
int fs_error_status(lua_State *L, int idx, int dflt, const char **msg);


/* The trace of a trace userdata; raises (exit 78) when it was released. */
const trc_trace *fs_trace_get(lua_State *L, const ud_trace *u, const char *chunk, int line);

/* FILE and LINE of the nearest Lua function up the stack (chunk "" if none). */
void fs_caller_src(lua_State *L, char *chunk, size_t n, int *line);

/* Expands the sweep table at idx (as flashspec.sweep takes it), stages and
 * runs its points.  record: as flashspec.sweep (result rows, resume store,
 * progress, failed-point lines); 0: none of these (flashspec.calibrate's
 * evaluations) -- failed points only carry their code and message.  Pushes
 * the expanded point tables and the staged array (keep both on the stack while
 * the rows are read); returns the staged array, *n its length. */
sim_sweep_staged *fs_api_sweep(lua_State *L, int idx, const char *chunk, int line, int record,
                               int64_t *n);

/* The first half of fs_api_sweep: expands the sweep table at idx and stages
 * its points (raising for an invalid one), pushing the same two values; no
 * point runs. */
sim_sweep_staged *fs_api_stage(lua_State *L, int idx, const char *chunk, int line, int record,
                               int64_t *n);

/* The second half of fs_api_sweep without records (an evaluation of
 * flashspec.calibrate), for m evaluations at once (a Jacobian's columns):
 * sim_sweep_evals_lookup and sim_sweep_exec_evals (sim/sweep/sim_sweep_exec.h),
 * raising their error.  A failed point keeps its code and message, as
 * fs_api_sweep's. */
void fs_api_run_evals(lua_State *L, sim_sweep_eval *ev, int32_t m, sim_sweep_memo *memo,
                      const char *chunk, int line);

/* Pushes the array of point tables the sweep table at idx expands to
 * (flashspec.sweep's expansion and key checks), without running them. */
void fs_api_expand(lua_State *L, int idx, const char *chunk, int line);

/* Commits the run points of sp[0..n) to the script's results (in order;
 * not with record 0: the script's `record = false`) and pushes the array
 * flashspec.sweep returns: one row table per point, a failure table for a
 * failed one. */
void fs_api_push_rows(lua_State *L, sim_sweep_staged *sp, int64_t n, int record);

/* Pushes a policy object of desc with the given (validated) params. */
void fs_policy_push(lua_State *L, const eng_policy_desc *desc, const void *params);

/* t[k] = v for the table on top of the stack. */
static inline void fs_set_num(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

static inline void fs_set_int(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

/* Builds the `flashspec` table of a script run in L (api.c). */
void fs_api_open(lua_State *L, fs_api *a, const struct fs_script_opts *o);

/* flashspec.tune (tune.c). */
int fs_l_tune(lua_State *L);


/* flashspec.calibrate{...} (calibrate.c). */
int fs_l_calibrate(lua_State *L);

/* Constructors and metamethods (lua_CFunctions), registered by api.c. */
int fs_l_device(lua_State *L);       /* flashspec.device(name [, overrides]) */
int fs_l_model(lua_State *L);        /* flashspec.model(name [, overrides]) */
int fs_l_trace(lua_State *L);        /* flashspec.trace(path), via __call */
int fs_l_trace_synth(lua_State *L);  /* flashspec.trace.synth{...} */
int fs_l_policy_make(lua_State *L);  /* flashspec.policy.<name>{...}; upvalue 1 = desc */
int fs_name_tostring(lua_State *L);  /* __tostring of every object */
int fs_name_index(lua_State *L);     /* __index: .name of every object */

/* A point's target (and draft, NULL when its policy drafts none) against the
 * pair trace t was recorded with: swapped roles, or a recorded name that is a
 * profile whose architecture (layers, hidden size, vocabulary) differs from
 * the point's model, is one warning line per trace and pair -- an error
 * (exit 78) under --strict.  Traces recorded with models flashspec has no
 * profile for (synthetic, tiny stand-ins) are not compared by name. */
void fs_check_model_pair(lua_State *L, fs_api *a, const trc_trace *t, const char *trace_name,
                         const ud_model *tgt, const ud_model *drf, const char *what,
                         const char *chunk, int line);

#endif
