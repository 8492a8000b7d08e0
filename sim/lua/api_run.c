/*
 * api_run.c -- running a script: its limits and sandbox, the output paths
 * checked before anything runs, the script itself, and its results (rows,
 * files, timeline) written only when it succeeds (see api.h).
 */
#include "api.h"
#include "api_impl.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/eng_policy.h"
#include "sim/out/sim_rerun_read.h"
#include "sim/config/sandbox.h"
#include "sim/lua/sweep_exec.h"
#include "sim/out/sim_out.h"
#include "sim/out/sim_rerun.h"
#include "sim/out/sim_timeline.h"
#include "sim/sweep/sim_sweep.h"
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
    fs_api a; /* the run's state (sim/sweep/sim_run.h) */
    fs_lua_limits lim;
    fs_mem_pool pool;
    lua_State *L;
} script_run;



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
    r->a.src = sim_out_script_read(o->script, &r->a.len, err, errlen);
    if (o->out_dir && a->ex.rank == 0 && r->a.src) a->rec = fs_runrec_new();
    r->L = r->a.src && (a->rec || !o->out_dir || a->ex.rank != 0)
               ? fs_sandbox_new(o->unsafe ? FS_SANDBOX_UNSAFE : FS_SANDBOX_SCRIPT, lim)
               : NULL;
    if (!r->L) {
        if (r->a.src) snprintf(err, errlen, "cannot create a Lua state");
        return r->a.src ? SIM_INTERNAL : SIM_MISSING;
    }
    sim_out_script_hash(r->a.src, r->a.len, a->meta.script_hash, sizeof a->meta.script_hash);
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


/* Phase 6: the Lua state, then everything the run holds and its output
 * directory's lock (sim_run_free). */
static void run_free(script_run *r, const fs_script_opts *o, int code)
{
    if (r->L) lua_close(r->L);
    sim_run_free(&r->a, o, code);
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
    r->a.lock.fd = -1;
    int code = sim_run_check(&r->a, o, t, err, errlen);
    if (code != SIM_OK) { /* nothing locked, nothing made: only the timeline to free */
        sim_timeline_destroy(r->a.ex.tl);
        free(r);
        return code;
    }
    /* the script's calibration profiles (NULL when out of memory: each point
     * then prices its own, the same numbers) */
    r->a.ex.profile_cache = sim_profile_cache_create();
    code = sim_run_lock(&r->a, o, err, errlen);
    if (code == SIM_OK) code = run_open(r, o, err, errlen);
    if (code == SIM_OK && o->rerun_record) /* run.json's profiles for today's files */
        code = sim_rerun_prefill(&r->a.profiles, o->rerun_record, r->a.quiet, err, errlen);
    if (code == SIM_OK) {
        sim_sweep_signals_install();
        sim_sweep_deadline_set(o->max_seconds);
        lua_pushcfunction(r->L, msgh);
        int rc = load_script(r->L, o->script, r->a.src, r->a.len);
        if (rc == LUA_OK) rc = lua_pcall(r->L, 0, 0, -2);
        code = rc != LUA_OK || sim_sweep_interrupted() ? run_stopped(r, o, rc, err, errlen)
                                                       : sim_run_write(&r->a, o, t, err, errlen);
        sim_sweep_deadline_clear();
        sim_sweep_signals_restore();
    }
    run_free(r, o, code);
    free(r);
    return code;
}
