/*
 * api_run.c -- running a script: its limits and sandbox, the output paths
 * checked before anything runs, the script itself, and its results (rows,
 * files, timeline) written only when it succeeds (see api.h).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "api.h"
#include "api_impl.h"

#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/eng_policy.h"
#include "sim/hw/sim_hw.h"
#include "sim/config/lparams.h"
#include "sim/lua/api_lpolicy.h"
#include "sim/config/home.h"
#include "sim/config/profile.h"
#include "sim/out/rows.h"
#include "sim/out/sim_rerun_read.h"
#include "sim/out/runrec.h"
#include "sim/config/sandbox.h"
#include "sim/lua/sweep_exec.h"
#include "sim/out/sim_out.h"
#include "sim/out/sim_timeline.h"
#include "sim/out/sim_lock.h"
#include "sim/out/sim_outdir.h"
#include "sim/out/sim_rerun.h"
#include "sim/replay/replay.h"
#include "sim/sweep/sim_sweep.h"
#include "sim/sweep/sim_sweep_mpi.h"
#include "traces/trc.h"

/* Safety limits of sandboxed experiment scripts: far above any real experiment
 * (a sweep spends its time in C, not in the Lua VM; 1e9 VM instructions are
 * seconds of pure Lua), low enough to stop runaway code.  --unsafe lifts the
 * instruction limit; --max-instructions and --max-memory-mb (fs_script_opts)
 * replace either, with or without --unsafe. */
#define FS_SCRIPT_MEM_LIMIT ((size_t)4 << 30)
#define FS_SCRIPT_STEP_LIMIT 1000000000LL

/* Loads the script's bytes as luaL_loadfile would load its file: a UTF-8
 * byte-order mark and a first line starting with '#' (#!...) are skipped,
 * line numbers kept. */
static int load_script(lua_State *L, const char *path, const char *src, size_t len)
{
    if (len >= 3 && !memcmp(src, "\xEF\xBB\xBF", 3)) src += 3, len -= 3;
    if (len > 0 && src[0] == '#') {
        const char *nl = memchr(src, '\n', len);
        len = nl ? len - (size_t)(nl - src) : 0;
        src = nl ? nl : src;
    }
    char name[PATH_MAX + 2];
    snprintf(name, sizeof name, "@%s", path);
    return luaL_loadbufferx(L, src, len, name, "t");
}

static int print_nothing(lua_State *L)
{
    (void)L;
    return 0;
}

static int msgh(lua_State *L)
{
    /* keep error objects; make everything else a one-line string */
    if (luaL_testudata(L, 1, MT_ERROR) || (lua_istable(L, 1) && lua_getmetatable(L, 1))) {
        lua_settop(L, 1);
        return 1;
    }
    /* where the error was raised: the innermost Lua function with a line */
    char where[256] = "";
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(where, sizeof where, "%s:%d: ", ar.short_src, ar.currentline);
            break;
        }
    }
    const char *m = lua_tostring(L, 1);
    if (!m) {
        lua_pushfstring(L, "%serror raised with a %s value, not a message", where,
                        luaL_typename(L, 1));
        return 1;
    }
    /* a message without a position ("C stack overflow" raised inside a
     * library call) gets the script's */
    const char *colon = strchr(m, ':');
    int placed = colon && colon != m && colon[1] >= '0' && colon[1] <= '9';
    /* the same position repeated by every level of a wrapped error
     * (coroutine.wrap adds its caller's each time): once is enough */
    if (placed) {
        const char *sp = strstr(m, ": ");
        size_t plen = sp ? (size_t)(sp - m) + 2 : 0;
        while (plen && strncmp(m, m + plen, plen) == 0) m += plen;
    }
    lua_pushfstring(L, "%s%s", placed ? "" : where, m);
    return 1;
}

int fs_script_run(const fs_script_opts *o, char *err, size_t errlen)
{
    return fs_script_run_timeline(o, NULL, err, errlen);
}

/* A script run: its state, what its phases set up and the last frees. */
typedef struct script_run {
    fs_api a;
    fs_lua_limits lim;
    fs_mem_pool pool;
    sim_out_lockh lock; /* DIR's (lock.fd -1: none) */
    int made_dir;
    char *src; /* the script, read once: hashed, run and recorded */
    size_t len;
    lua_State *L;
} script_run;

/* Phase 1: the run's settings and every check that needs no lock -- the
 * output paths writable, the script a readable file, the timeline made.
 * SIM_OK, or the exit code with err. */
static int run_check(script_run *r, const fs_script_opts *o, const fs_timeline_opts *t, char *err,
                     size_t errlen)
{
    fs_api *a = &r->a;
    a->ex.rank = sim_mpi_rank();
    a->quiet = o->quiet || a->ex.rank != 0; /* under MPI only rank 0 talks */
    a->ex.quiet = a->quiet;
    a->ex.workers = o->jobs > 0 ? o->jobs : 1;
    a->ex.resume = o->no_resume ? 0 : o->resume_any_build ? SIM_SWEEP_RESUME_ANY_BUILD : 1;
    sim_sweep_build_key(FS_VERSION, a->ex.build_key);
    if (o->out_dir && (size_t)snprintf(a->ex.store_dir, sizeof a->ex.store_dir, "%s/points",
                                       o->out_dir) >= sizeof a->ex.store_dir) {
        snprintf(err, errlen, "%s: output path too long", o->out_dir);
        return SIM_CANTCREATE;
    }
    /* every output path is checked before the script runs a single point */
    if (o->out_dir && sim_out_dir_check(o->out_dir, err, errlen) != SIM_OK) return SIM_CANTCREATE;
    if (t && sim_out_path_check(t->path, err, errlen) != SIM_OK) return SIM_CANTCREATE;
    struct stat st;
    if (stat(o->script, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open script: %s", o->script, strerror(errno));
        return SIM_MISSING;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: cannot open script: %s", o->script,
                 S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        return SIM_MISSING;
    }
    char real[PATH_MAX];
    if (!realpath(o->script, real)) snprintf(real, sizeof real, "%s", o->script);
    snprintf(a->script_dir, sizeof a->script_dir, "%s", real);
    char *slash = strrchr(a->script_dir, '/');
    if (slash) *slash = 0;
    if (o->script_dir) snprintf(a->script_dir, sizeof a->script_dir, "%s", o->script_dir);
    if (!t) return SIM_OK;
    if (sim_out_path_creatable(t->path, err, errlen) != SIM_OK) return SIM_CANTCREATE;
    a->ex.tl = sim_timeline_create(0);
    if (!a->ex.tl) {
        snprintf(err, errlen, "out of memory for the timeline");
        return SIM_INTERNAL;
    }
    a->ex.tl_point = t->point;
    a->ex.tl_prompt = t->prompt;
    return SIM_OK;
}

/* Phase 2: one writer per output directory (sim/out/sim_outdir.h), the lock
 * held until the run ends; only then are another run's temporaries ours to
 * clean.  SIM_OK, or SIM_CANTCREATE with err. */
static int run_lock(script_run *r, const fs_script_opts *o, char *err, size_t errlen)
{
    fs_api *a = &r->a;
    if (!o->out_dir || a->ex.rank != 0) return SIM_OK;
    int rc = sim_out_dir_lock(&r->lock, o->out_dir, a->ex.store_dir, a->quiet, &r->made_dir, err,
                              errlen);
    if (rc == SIM_OK) a->ex.lock = &r->lock; /* every record written asks that it still holds DIR */
    return rc;
}

/* Phase 3: the limits, the script read once and its sandboxed Lua state
 * with the flashspec table.  SIM_OK, or the exit code with err. */
static int run_open(script_run *r, const fs_script_opts *o, char *err, size_t errlen)
{
    fs_api *a = &r->a;
    fs_lua_limits *lim = &r->lim;
    *lim = (fs_lua_limits){.mem_limit_bytes = FS_SCRIPT_MEM_LIMIT,
                           .step_limit = o->unsafe ? 0 : FS_SCRIPT_STEP_LIMIT};
    if (o->max_instructions > 0) lim->step_limit = o->max_instructions;
    if (o->max_memory_mb > 0) lim->mem_limit_bytes = (size_t)o->max_memory_mb << 20;
    /* one budget for the run: the script's heap, what it holds (traces, rows)
     * and every point's policy state on every worker */
    r->pool = (fs_mem_pool){.limit = lim->mem_limit_bytes};
    lim->pool = &r->pool;
    lim->stop = sim_sweep_interrupted; /* SIGINT/SIGTERM/time limit stop Lua code too */
    lim->in_library = sim_sweep_library_call;
    a->lim = lim;
    a->plugins = o->plugins;
    a->trace_cache_bytes = (size_t)(o->trace_cache_mb > 0 ? o->trace_cache_mb : FS_TRACE_CACHE_MB)
                           << 20;
    a->n_plugins = o->n_plugins;
    a->verify_trace = o->verify_trace;
    a->strict = o->strict;
    r->src = sim_out_script_read(o->script, &r->len, err, errlen);
    if (o->out_dir && a->ex.rank == 0 && r->src) a->rec = fs_runrec_new();
    r->L = r->src && (a->rec || !o->out_dir || a->ex.rank != 0)
               ? fs_sandbox_new(o->unsafe ? FS_SANDBOX_UNSAFE : FS_SANDBOX_SCRIPT, lim)
               : NULL;
    if (!r->L) {
        if (r->src) snprintf(err, errlen, "cannot create a Lua state");
        return r->src ? SIM_INTERNAL : SIM_MISSING;
    }
    sim_out_script_hash(r->src, r->len, a->meta.script_hash, sizeof a->meta.script_hash);
    fs_api_open(r->L, a, o);
    if (a->ex.rank != 0) { /* every rank runs the script; only rank 0 prints */
        lua_pushcfunction(r->L, print_nothing);
        lua_setglobal(r->L, "print");
    }
    return SIM_OK;
}

/* The status and one line of the script's error (rc, its value on top of
 * L's stack): a flashspec error's own status, else by the kind of failure; the
 * run's memory cap named when it refused the memory. */
static int script_error(script_run *r, const fs_script_opts *o, int rc, char *err, size_t errlen)
{
    lua_State *L = r->L;
    int code;
    if (lua_istable(L, -1)) {
        const char *m;
        code = fs_error_status(L, -1, SIM_CONFIG, &m);
        snprintf(err, errlen, "%s", m ? m : "error");
    } else {
        const char *m = lua_tostring(L, -1);
        snprintf(err, errlen, "%s", m ? m : "error");
        code = rc == LUA_ERRFILE  ? SIM_MISSING
               : rc == LUA_ERRMEM ? SIM_NOMEM
                                  : SIM_CONFIG;
        if (rc == LUA_ERRMEM && r->lim.mem_refused) { /* the cap, not the host */
            snprintf(err, errlen,
                     "%s: script exceeds the run's memory limit of %zu MiB (Lua heap, policy "
                     "states, traces, result rows; see --max-memory-mb)",
                     o->script, r->lim.mem_limit_bytes >> 20);
            code = SIM_CONFIG;
        }
    }
    /* one line: cut any traceback or embedded newline */
    char *nl = strchr(err, '\n');
    if (nl) *nl = 0;
    return code;
}

/* Phase 4, when the script stopped: the exit code and one line for the time
 * limit, an interrupt (nothing partial is written either way:
 * sim_sweep_exec_stopped) or the script's error (rc, its value on top of the
 * stack). */
static int run_stopped(script_run *r, const fs_script_opts *o, int rc, char *err, size_t errlen)
{
    int sig = sim_sweep_interrupted();
    if (!sig) return script_error(r, o, rc, err, errlen);
    return sim_sweep_exec_stopped(&r->a.ex, sig, o->script, o->max_seconds, r->a.calibrating, err,
                                  errlen);
}

/* Phase 5, when the script succeeded: the timeline, the run record and the
 * results, the script's files, then a failed point's code.  SIM_OK, or
 * the exit code with err. */
static int run_write(script_run *r, const fs_script_opts *o, const fs_timeline_opts *t, char *err,
                     size_t errlen)
{
    fs_api *a = &r->a;
    int code = t ? sim_sweep_exec_timeline_write(&a->ex, t->path, a->quiet, err, errlen) : SIM_OK;
    if (code == SIM_OK && o->out_dir && a->ex.rank == 0) {
        fs_runrec_plugin plugins[FS_MAX_PLUGINS];
        int np = a->n_plugins < FS_MAX_PLUGINS ? a->n_plugins : FS_MAX_PLUGINS;
        for (int i = 0; i < np; i++)
            plugins[i] = (fs_runrec_plugin){a->plugins[i].desc, a->plugins[i].path,
                                            a->plugins[i].sha256};
        sim_out_results w = {
            .dir = o->out_dir, .lock = &r->lock, .meta = &a->meta,
            .rows = a->rows, .n_rows = a->n_rows, .rec = a->rec,
            .run = {.version = FS_VERSION, .plugins = plugins, .n_plugins = np,
                    .build_key = a->ex.build_key, .argv = o->argv, .argc = o->argc,
                    .script_path = o->script, .script_hash = a->meta.script_hash,
                    .args = o->args, .n_args = o->n_args, .script_bytes = r->src,
                    .script_len = r->len},
            .traces = &a->traces, .profiles = &a->profiles, .home = fs_home_dir(),
            .files = a->outputs, .n_files = a->n_outputs,
            .computed = a->ex.computed, .resumed = a->ex.resumed, .quiet = a->quiet};
        code = sim_out_results_write(&w, err, errlen);
    }
    if (code == SIM_OK && a->ex.point_code) {
        code = a->ex.point_code;
        snprintf(err, errlen, "%lld point%s failed (errors above); %s %d good point%s",
                 (long long)a->ex.failed, a->ex.failed == 1 ? "" : "s",
                 o->out_dir ? "the results hold the" : "the script ran its", a->n_rows,
                 a->n_rows == 1 ? "" : "s");
    }
    return code;
}

/* Phase 6: everything the run holds, and its output directory's lock; a
 * directory this run made and left empty (it failed) goes again. */
static void run_free(script_run *r, const fs_script_opts *o, int code)
{
    fs_api *a = &r->a;
    if (r->L) lua_close(r->L);
    a->synth_memo_on = 1;
    sim_run_synth_memos(a, 0); /* a fit the script's error cut short */
    sim_run_synth_free_pending(a);
    sim_trace_cache_free(&a->traces);
    free(a->rows);
    for (int32_t i = 0; i < a->n_outputs; i++)
        free(a->outputs[i].data);
    free(a->outputs);
    free(a->warned);
    fs_api_free_names(a);
    sim_profile_cache_free(&a->profiles);
    fs_runrec_free(a->rec);
    free(r->src);
    sim_timeline_destroy(a->ex.tl);
    sim_profile_cache_destroy(a->ex.profile_cache);
    sim_out_dir_release(&r->lock, o->out_dir, r->made_dir, code != SIM_OK, r->a.quiet);
}

int fs_script_run_timeline(const fs_script_opts *o, const fs_timeline_opts *t, char *err,
                           size_t errlen)
{
    if (t && !t->path) t = NULL;
    if (t && (t->point < 0 || t->prompt < 0)) {
        snprintf(err, errlen, "--timeline-point and --timeline-prompt must be >= 0");
        return SIM_USAGE;
    }
    script_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return SIM_INTERNAL;
    }
    r->lock.fd = -1;
    int code = run_check(r, o, t, err, errlen);
    if (code != SIM_OK) { /* nothing locked, nothing made: only the timeline to free */
        sim_timeline_destroy(r->a.ex.tl);
        free(r);
        return code;
    }
    /* the script's calibration profiles (NULL when out of memory: each point
     * then prices its own, the same numbers) */
    r->a.ex.profile_cache = sim_profile_cache_create();
    code = run_lock(r, o, err, errlen);
    if (code == SIM_OK) code = run_open(r, o, err, errlen);
    if (code == SIM_OK && o->rerun_record) /* run.json's profiles for today's files */
        code = sim_rerun_prefill(&r->a.profiles, o->rerun_record, r->a.quiet, err, errlen);
    if (code == SIM_OK) {
        sim_sweep_signals_install();
        sim_sweep_deadline_set(o->max_seconds);
        lua_pushcfunction(r->L, msgh);
        int rc = load_script(r->L, o->script, r->src, r->len);
        if (rc == LUA_OK) rc = lua_pcall(r->L, 0, 0, -2);
        code = rc != LUA_OK || sim_sweep_interrupted() ? run_stopped(r, o, rc, err, errlen)
                                                       : run_write(r, o, t, err, errlen);
        sim_sweep_deadline_clear();
        sim_sweep_signals_restore();
    }
    run_free(r, o, code);
    free(r);
    return code;
}
