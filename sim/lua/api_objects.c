/*
 * api_objects.c -- the objects a script composes points from: device and model
 * profiles (flashspec.device/model, optionally with a table of key overrides
 * validated like profile keys), traces (flashspec.trace, loaded once per
 * path and shared; flashspec.trace.synth).  Policies are in api_policy.c.
 * See api_impl.h.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "api_impl.h"
#include "sim/out/sim_out.h"
#include "sim/out/sim_strbuf.h"

#include <ctype.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eng_param.h"
#include "sim/lua/api.h"
#include "sim/config/home.h"
#include "sim/config/lparams.h"
#include "sim/out/runrec.h"
#include "sim/config/profile.h"
#include "sim/config/sim_paths.h"
#include "sim/config/sim_profile_cache.h"

/* --------------------------------------------------------------- profiles */

/* 1 when a profile argument names a file ("my/phone.lua"), not a profile. */
static int profile_is_file(const char *name)
{
    size_t len = strlen(name);
    return strchr(name, '/') != NULL || (len > 4 && strcmp(name + len - 4, ".lua") == 0);
}

/* Resolves flashspec.device/model's argument to its profile path: a name
 * along the profile search path (profile.h), or a file path (beside the
 * script, else in the project).  Raises on an invalid name or a missing
 * file.  kind: "devices" or "models"; what: "device" or "model". */
static const char *profile_arg(lua_State *L, const char *kind, const char *what, char *path,
                               size_t n)
{
    const char *name = luaL_checkstring(L, 1);
    if (profile_is_file(name)) {
        /* a file beside the script or in the project, never elsewhere:
         * profiles of one's own go in a FLASHSPEC_CONFIG_PATH directory */
        if (name[0] == '/' || !strcmp(name, "..") || !strncmp(name, "../", 3) ||
            strstr(name, "/../") || (strlen(name) >= 3 && !strcmp(name + strlen(name) - 3, "/..")))
            fs_raise(L, SIM_CONFIG, 1,
                     "%s profile file '%s': a profile file is a path inside the script's "
                     "directory or the project, without '..' and not absolute (profiles kept "
                     "elsewhere go in a directory of FLASHSPEC_CONFIG_PATH, loaded by name)",
                     what, name);
        char tried[2 * PATH_MAX + 32] = "";
        fs_api *a = fs_api_get(L);
        if (sim_run_find_file(a, name, path, n, tried, sizeof tried) != 0) {
            char odd[PATH_MAX];
            if (sim_run_find_any(a, name, odd, sizeof odd) == 0)
                fs_raise(L, SIM_MISSING, 1, "%s profile file '%s' is not a regular file (%s)",
                         what, name, odd);
            fs_raise(L, SIM_MISSING, 1, "%s profile file '%s' not found%s", what, name, tried);
        }
        return name;
    }
    if (sim_profile_path(kind, name, path, n) != 0)
        fs_raise(L, SIM_CONFIG, 1, "invalid %s profile name '%s'", what, name);
    struct stat st;
    if (stat(path, &st) != 0) /* gone since the run read it (or a rerun's record) */
        sim_profile_cache_named(&fs_api_get(L)->profiles, kind, name, path, n);
    return name;
}

/* Turns a failed profile load into the script error; returns on success.  A
 * profile that is not there is an unknown name; a missing base (the profile
 * is there) keeps the loader's message and exit 66. */
static void profile_check(lua_State *L, int rc, const char *what, const char *name,
                          const char *path, const char *err)
{
    struct stat st;
    if (rc == SIM_MISSING && stat(path, &st) != 0) {
        const char *kind = strcmp(what, "device") == 0 ? "devices" : "models";
        char hint[1024], where[2048] = "";
        sim_profile_suggest(kind, name, hint, sizeof hint);
        char(*dirs)[SIM_PROFILE_DIR_CAP] = malloc(SIM_PROFILE_MAX_DIRS * sizeof *dirs);
        int nd = dirs ? sim_profile_dirs(dirs, SIM_PROFILE_MAX_DIRS) : 0;
        if (nd > 1) { /* a search path: name every directory looked in */
            size_t at = (size_t)snprintf(where, sizeof where, "no %s/%s.lua in ", kind, name);
            for (int i = 0; i < nd && at < sizeof where; i++)
                at +=
                    (size_t)snprintf(where + at, sizeof where - at, "%s%s", i ? ", " : "", dirs[i]);
        } else {
            snprintf(where, sizeof where, "no %s", path);
        }
        free(dirs);
        fs_raise(L, SIM_CONFIG, 1, "unknown %s '%s'%s (%s)", what, name, hint, where);
    }
    if (rc != SIM_OK) fs_raise(L, rc, 0, "%s", err);
}

/* Checks flashspec.device/model's optional second argument (the stack holds
 * exactly two arguments): returns 1 for an override table, 0 for nil; raises
 * (exit 78) for anything else and for a table that sets `base`. */
static int override_arg(lua_State *L, const char *fn)
{
    if (lua_isnil(L, 2)) return 0;
    if (!lua_istable(L, 2))
        fs_raise(L, SIM_CONFIG, 1,
                 "%s: the second argument must be a table of overrides (got %s)", fn,
                 luaL_typename(L, 2));
    lua_getfield(L, 2, "base");
    int has_base = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has_base) {
        char chunk[PATH_MAX];
        int line;
        fs_caller_src(L, chunk, sizeof chunk, &line);
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: %s: key 'base' is not allowed in overrides (the first argument names "
                 "the profile they apply to)",
                 chunk, slp_key_line(chunk, line, "base"), fn);
    }
    return 1;
}


typedef struct override_job {
    const eng_param_desc *keys;
    void *params;
    unsigned char *present;
    const char *what, *chunk;
    int line;
} override_job;

/* lua_CFunction under lua_pcall: [1] = override_job, [2] = the override table. */
static int override_run(lua_State *L)
{
    override_job *j = lua_touserdata(L, 1);
    slp_apply_table_text(L, 2, j->keys, j->params, j->present, j->what, j->chunk, j->line, NULL);
    return 0;
}

/* Applies the override table (argument 2) over params, a profile loaded as
 * `name` whose key table is keys; fn is "flashspec.device" or
 * "flashspec.model".  Writes the object's name into the profile's `name`
 * field (SIM_NAME_CAP bytes): the table's non-empty `name`, else
 * "name[key=value,...]" over the keys set, in key-table order (numbers in the
 * fewest digits that read back exactly, lists joined by '/').  Raises (exit
 * 78) on an invalid override, or when that name does not fit. */
static void apply_overrides(lua_State *L, const char *fn, const eng_param_desc *keys, void *params,
                            const char *name)
{
    size_t nkeys = 0;
    while (keys[nkeys].name)
        nkeys++;
    unsigned char *present = lua_newuserdatauv(L, nkeys + 1, 0); /* freed by the GC */
    memset(present, 0, nkeys + 1);
    char chunk[PATH_MAX], what[64];
    int line;
    fs_caller_src(L, chunk, sizeof chunk, &line);
    snprintf(what, sizeof what, "%s overrides", fn);
    override_job j = {keys, params, present, what, chunk, line};
    lua_pushcfunction(L, override_run);
    lua_pushlightuserdata(L, &j);
    lua_pushvalue(L, 2);
    int st = lua_pcall(L, 2, 0, 0);
    if (st != LUA_OK) {
        if (st == LUA_ERRMEM || lua_type(L, -1) != LUA_TSTRING) lua_error(L);
        fs_raise(L, SIM_CONFIG, 0, "%s", lua_tostring(L, -1));
    }
    const eng_param_desc *nk = eng_params_find(keys, "name");
    char *field = (char *)params + nk->offset;
    if (present[nk - keys] && field[0]) {
        lua_pop(L, 1);
        return;
    }
    char label[1024];
    size_t used = (size_t)snprintf(label, sizeof label, "%s", name);
    int n_set = 0;
    for (size_t i = 0; i < nkeys && used < sizeof label; i++) {
        if (!present[i] || &keys[i] == nk) continue;
        char v[512];
        sim_out_param_value(&keys[i], params, 1, '/', v, sizeof v);
        used += (size_t)snprintf(label + used, sizeof label - used, "%s%s=%s", n_set ? "," : "[",
                                 keys[i].name, v);
        n_set++;
    }
    if (n_set && used < sizeof label)
        used += (size_t)snprintf(label + used, sizeof label - used, "]");
    if (used >= (size_t)nk->cap)
        fs_raise(L, SIM_CONFIG, 1,
                 "%s: the name '%.*s%s' of '%s' with these overrides is longer than %d bytes; "
                 "give the overrides a shorter 'name'",
                 fn, 64, label, used > 64 ? "..." : "", name, (int)nk->cap - 1);
    memcpy(field, label, used + 1);
    lua_pop(L, 1);
}

void fs_check_model_pair(lua_State *L, fs_api *a, const trc_trace *t, const char *trace_name,
                         const ud_model *tgt, const ud_model *drf, const char *what,
                         const char *chunk, int line)
{
    char err[1536];
    if (sim_run_check_model_pair(a, t, trace_name, tgt->name, &tgt->model, drf ? drf->name : NULL,
                                 drf ? &drf->model : NULL, what, chunk, line, err,
                                 sizeof err) != SIM_OK)
        fs_raise(L, SIM_CONFIG, 0, "%s", err);
}

int fs_l_device(lua_State *L)
{
    char path[PATH_MAX], err[512];
    const char *name = profile_arg(L, "devices", "device", path, sizeof path);
    lua_settop(L, 2);
    int over = override_arg(L, "flashspec.device");
    ud_device *u = lua_newuserdatauv(L, sizeof *u, 0);
    memset(u, 0, sizeof *u);
    sim_device_variants *vars = lua_newuserdatauv(L, sizeof *vars, 0); /* freed by the GC */
    fs_api *a = fs_api_get(L);
    int rc = sim_profile_cache_device(&a->profiles, path, &u->dev, vars, err, sizeof err);
    profile_check(L, rc, "device", name, path, err);
    if (over) { /* argument 2; the stack above it is kept */
        apply_overrides(L, "flashspec.device", sim_device_keys(), &u->dev, name);
        if (sim_device_check(&u->dev, err, sizeof err))
            fs_raise(L, SIM_CONFIG, 1, "flashspec.device overrides: %s", err);
    }
    snprintf(u->name, sizeof u->name, "%s", over || profile_is_file(name) ? u->dev.name : name);
    /* each variant over the device as resolved, overrides included */
    for (int32_t i = 0; i < vars->n; i++) {
        sim_device *d = &u->variants[i];
        *d = u->dev;
        sim_device_variant_apply(&vars->v[i], d);
        snprintf(u->variant_names[i], sizeof u->variant_names[i], "%s", vars->v[i].name);
        char vname[sizeof d->name]; /* composed apart: d and u->dev are parts of one object */
        snprintf(vname, sizeof vname, "%.23s~%.23s", u->dev.name, vars->v[i].name);
        memcpy(d->name, vname, sizeof d->name);
        if (sim_device_check(d, err, sizeof err))
            fs_raise(L, SIM_CONFIG, 1, "flashspec.device: variant '%s' of %s: %s",
                     vars->v[i].name, u->name, err);
    }
    u->n_variants = vars->n;
    lua_pop(L, 1); /* vars: the device is on top again */
    luaL_setmetatable(L, MT_DEVICE);
    return 1;
}

int fs_l_model(lua_State *L)
{
    char path[PATH_MAX], err[512];
    const char *name = profile_arg(L, "models", "model", path, sizeof path);
    lua_settop(L, 2);
    int over = override_arg(L, "flashspec.model");
    ud_model *u = lua_newuserdatauv(L, sizeof *u, 0);
    memset(u, 0, sizeof *u);
    int rc = sim_profile_cache_model(&fs_api_get(L)->profiles, path, &u->model, err, sizeof err);
    profile_check(L, rc, "model", name, path, err);
    if (over) {
        apply_overrides(L, "flashspec.model", sim_model_keys(), &u->model, name);
        if (sim_model_check(&u->model, err, sizeof err))
            fs_raise(L, SIM_CONFIG, 1, "flashspec.model overrides: %s", err);
    }
    snprintf(u->name, sizeof u->name, "%s", over || profile_is_file(name) ? u->model.name : name);
    luaL_setmetatable(L, MT_MODEL);
    return 1;
}

int fs_name_tostring(lua_State *L)
{
    /* every profile userdata starts with its params and carries name after */
    if (luaL_testudata(L, 1, MT_DEVICE))
        lua_pushfstring(L, "device(%s)", ((ud_device *)lua_touserdata(L, 1))->name);
    else if (luaL_testudata(L, 1, MT_MODEL))
        lua_pushfstring(L, "model(%s)", ((ud_model *)lua_touserdata(L, 1))->name);
    else if (luaL_testudata(L, 1, MT_TRACE))
        lua_pushfstring(L, "trace(%s)", ((ud_trace *)lua_touserdata(L, 1))->entry->name);
    else {
        ud_policy *p = luaL_checkudata(L, 1, MT_POLICY);
        lua_pushfstring(L, "policy(%s%s%s)", p->desc->name, p->label[0] ? ":" : "", p->label);
    }
    return 1;
}

/* dev:variant(NAME): the standing variant NAME of a device as a device of its
 * own (named DEVICE~NAME, without variants); an unknown name is exit 78
 * listing the device's variants. */
static int l_device_variant(lua_State *L)
{
    ud_device *u = luaL_checkudata(L, 1, MT_DEVICE);
    const char *want = luaL_checkstring(L, 2);
    for (int32_t i = 0; i < u->n_variants; i++) {
        if (strcmp(u->variant_names[i], want) != 0) continue;
        ud_device *v = lua_newuserdatauv(L, sizeof *v, 0);
        memset(v, 0, sizeof *v);
        v->dev = u->variants[i];
        snprintf(v->name, sizeof v->name, "%s", v->dev.name);
        luaL_setmetatable(L, MT_DEVICE);
        return 1;
    }
    char all[256] = "";
    size_t at = 0;
    for (int32_t i = 0; i < u->n_variants && at < sizeof all; i++)
        at += (size_t)snprintf(all + at, sizeof all - at, "%s%s", i ? ", " : "",
                               u->variant_names[i]);
    return fs_raise(L, SIM_CONFIG, 1, "device %s has no variant '%s' (%s%s)", u->name, want,
                    u->n_variants ? "its variants: " : "it has none", all);
}

static int l_trace_bracket(lua_State *L);

int fs_name_index(lua_State *L)
{
    const char *k = luaL_checkstring(L, 2);
    if (luaL_testudata(L, 1, MT_DEVICE) && strcmp(k, "variants") == 0) {
        const ud_device *u = lua_touserdata(L, 1);
        lua_createtable(L, u->n_variants, 0);
        for (int32_t i = 0; i < u->n_variants; i++) {
            lua_pushstring(L, u->variant_names[i]);
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    }
    if (luaL_testudata(L, 1, MT_DEVICE) && strcmp(k, "variant") == 0) {
        lua_pushcfunction(L, l_device_variant);
        return 1;
    }
    if (luaL_testudata(L, 1, MT_TRACE) && strcmp(k, "bracket") == 0) {
        lua_pushcfunction(L, l_trace_bracket);
        return 1;
    }
    if (luaL_testudata(L, 1, MT_TRACE) && strcmp(k, "brackets") == 0) {
        const ud_trace *u = lua_touserdata(L, 1);
        lua_createtable(L, u->n_bracket, 0);
        for (int32_t i = 0; i < u->n_bracket; i++) {
            lua_pushstring(L, u->bracket[i]->name);
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    }
    if (strcmp(k, "name") != 0) {
        lua_pushnil(L);
        return 1;
    }
    if (luaL_testudata(L, 1, MT_DEVICE))
        lua_pushstring(L, ((ud_device *)lua_touserdata(L, 1))->name);
    else if (luaL_testudata(L, 1, MT_MODEL))
        lua_pushstring(L, ((ud_model *)lua_touserdata(L, 1))->name);
    else if (luaL_testudata(L, 1, MT_TRACE))
        lua_pushstring(L, ((ud_trace *)lua_touserdata(L, 1))->entry->name);
    else
        lua_pushstring(L, ((ud_policy *)luaL_checkudata(L, 1, MT_POLICY))->desc->name);
    return 1;
}

/* ----------------------------------------------------------------- traces */


void fs_api_synth_defer(lua_State *L, fs_api *a, fs_trace_entry *e, const trc_synth_params *p,
                        size_t most, const char *chunk, int line)
{
    if (sim_run_synth_defer(a, e, p, most, chunk, line) != 0)
        fs_raise(L, SIM_NOMEM, 0, "out of memory");
}

void fs_api_synth_resolve(lua_State *L, fs_api *a)
{
    sim_run_synth_failure f;
    if (sim_run_synth_resolve(a, &f) == 0) return;
    if (f.status != SIM_OK && !f.chunk[0]) fs_raise(L, f.status, 0, "%s", f.msg);
    if (f.status != SIM_OK) fs_raise(L, f.status, 0, "%s:%d: %s", f.chunk, f.line, f.msg);
    fs_api_charge(L, a, f.need, f.chunk, f.line, "flashspec.trace.synth"); /* refused: raises */
    sim_run_release(a, f.need); /* memory came free meanwhile: the trace is gone all the same */
}

const trc_trace *fs_trace_get(lua_State *L, const ud_trace *u, const char *chunk, int line)
{
    if (u->entry->pending) fs_api_synth_resolve(L, fs_api_get(L)); /* generated together */
    if (!u->entry->trace)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: trace '%s' was made inside a flashspec.calibrate evaluation and is "
                 "gone; make traces for later use outside the points function",
                 chunk, line, u->entry->name);
    return u->entry->trace;
}

static fs_trace_entry *trace_add(lua_State *L, fs_api *a, const char *key, const char *name,
                                 trc_trace *t)
{
    fs_trace_entry *e = sim_trace_cache_add(&a->traces, key, name, t, a->generation);
    if (!e) {
        trc_free(t);
        fs_raise(L, SIM_NOMEM, 0, "out of memory");
    }
    return e;
}

/* Charges a trace's memory to the script (fs_api_charge); on a refusal the
 * trace is freed before the error unwinds. */
static void check_held(lua_State *L, fs_api *a, trc_trace *t, const char *what)
{
    char chunk[PATH_MAX];
    int line;
    fs_caller_src(L, chunk, sizeof chunk, &line);
    size_t need = trc_bytes(t);
    const fs_lua_limits *lim = a->lim;
    if (lim && lim->mem_limit_bytes &&
        (need > lim->mem_limit_bytes ||
         sim_run_mem_in_use(a) > lim->mem_limit_bytes - need))
        trc_free(t);
    fs_api_charge(L, a, need, chunk, line, what);
}

static void push_trace(lua_State *L, const fs_trace_entry *e)
{
    ud_trace *u = lua_newuserdatauv(L, sizeof *u, 0);
    memset(u, 0, sizeof *u);
    u->entry = e;
    luaL_setmetatable(L, MT_TRACE);
}

/* tr:bracket(T1, ...): the trace with an acceptance bracket, the traces T1
 * ... (1 to FS_TRACE_BRACKET_MAX, each without a bracket of its own) that
 * the point is also replayed on for the model band (replay.h,
 * sim_point.trace_variants); tr itself is unchanged. */
static int l_trace_bracket(lua_State *L)
{
    const ud_trace *u = luaL_checkudata(L, 1, MT_TRACE);
    int n = lua_gettop(L) - 1;
    if (n < 1 || n > FS_TRACE_BRACKET_MAX)
        return fs_raise(L, SIM_CONFIG, 1, "trace %s: bracket takes 1 to %d traces (got %d)",
                        u->entry->name, FS_TRACE_BRACKET_MAX, n);
    ud_trace *b = lua_newuserdatauv(L, sizeof *b, 0);
    memset(b, 0, sizeof *b);
    b->entry = u->entry;
    for (int i = 0; i < n; i++) {
        const ud_trace *t = luaL_testudata(L, i + 2, MT_TRACE);
        if (!t)
            return fs_raise(L, SIM_CONFIG, 1, "trace %s: bracket: argument %d is not a trace "
                            "(got %s)", u->entry->name, i + 1, luaL_typename(L, i + 2));
        if (t->n_bracket)
            return fs_raise(L, SIM_CONFIG, 1, "trace %s: bracket: trace %s has a bracket of "
                            "its own", u->entry->name, t->entry->name);
        b->bracket[b->n_bracket++] = t->entry;
    }
    luaL_setmetatable(L, MT_TRACE);
    return 1;
}



int fs_l_trace(lua_State *L)
{
    /* called as flashspec.trace(path): the table is argument 1 via __call */
    const char *path = luaL_checkstring(L, 2);
    fs_api *a = fs_api_get(L);
    char cand[PATH_MAX] = "", tried[2 * PATH_MAX + 16] = "";
    if (sim_run_find_file(a, path, cand, sizeof cand, tried, sizeof tried) != 0) {
        struct stat st;
        /* present but not a regular file (FIFO, device, directory): the
         * reader refuses it in its own words, without opening it blocking */
        if (path[0] == '/' && stat(path, &st) == 0)
            snprintf(cand, sizeof cand, "%s", path);
        else {
            char hint[320];
            sim_paths_nearest(a->script_dir, fs_home_dir(), path, ".h5", hint, sizeof hint);
            return fs_raise(L, SIM_MISSING, 1, "trace '%s' not found%s%s", path, tried, hint);
        }
    }
    char real[PATH_MAX];
    if (!realpath(cand, real)) snprintf(real, sizeof real, "%s", cand);
    fs_trace_entry *e = sim_trace_cache_find(&a->traces, real);
    if (e) e->used_at = a->generation;
    if (!e) {
        trc_trace *t = NULL;
        trc_err terr;
        int rc = trc_open(real, a->trace_cache_bytes, &t, &terr);
        if (rc != TRC_OK) {
            return fs_raise(L, sim_status_from_trc(rc), 0, "%s", terr.msg);
        }
        if (a->verify_trace) { /* every prompt, and the index against the data */
            trc_trace *c = NULL;
            rc = trc_check(real, a->trace_cache_bytes, &c, &terr);
            trc_free(c);
            if (rc != TRC_OK) {
                trc_free(t);
                return fs_raise(L, sim_status_from_trc(rc), 0,
                                "%s (--verify-trace)", terr.msg);
            }
        }
        check_held(L, a, t,
                   trc_is_lazy(t) ? "flashspec.trace (read prompt by prompt, with its prompt "
                                    "cache of --trace-cache-mb)"
                                  : "flashspec.trace");
        const char *base = strrchr(real, '/');
        base = base ? base + 1 : real;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(strlen(base) > 3 && !strcmp(base + strlen(base) - 3, ".h5") ? strlen(base) - 3 : strlen(base)), base);
        e = trace_add(L, a, real, name, t);
        snprintf(e->given, sizeof e->given, "%s", path);
    }
    push_trace(L, e);
    return 1;
}

/* Synthetic-trace keys as the Lua surface names them. */
typedef struct synth_lua {
    int32_t prompts, prompt_len, output_len, vocab, k, depth, nodes, target_layers, seed;
    int32_t n_exit, exit_layers[TRC_MAX_EXIT];
    int32_t n_accept;
    double accept[TRC_MAX_DEPTH];
    double calibration, coverage, predictor_accuracy;
    char target[TRC_NAME_CAP], draft[TRC_NAME_CAP];
    char name[100];
    int32_t node_streams;
    double coverage_share;
} synth_lua;

static const double def_exit[] = {18};
static const double def_accept[] = {0.80, 0.75, 0.70, 0.66, 0.62, 0.58, 0.55, 0.52};

#define SL(f) offsetof(synth_lua, f)
static const eng_param_desc synth_keys[] = {
    {"prompts", ENG_PARAM_INT, SL(prompts), 1, 100000, 4, NULL, 0, 0, NULL, NULL, 0,
     "number of prompts"},
    {"prompt_len", ENG_PARAM_INT, SL(prompt_len), 0, 1 << 20, 64, NULL, 0, 0, NULL, NULL, 0,
     "prompt tokens per prompt"},
    {"output_len", ENG_PARAM_INT, SL(output_len), 1, 1 << 20, 128, NULL, 0, 0, NULL, NULL, 0,
     "reference tokens per prompt"},
    {"vocab", ENG_PARAM_INT, SL(vocab), 16, 1 << 24, 151936, NULL, 0, 0, NULL, NULL, 0,
     "vocabulary size"},
    {"k", ENG_PARAM_INT, SL(k), 1, TRC_MAX_K, 8, NULL, 0, 0, NULL, NULL, 0,
     "candidates per node (K)"},
    {"depth", ENG_PARAM_INT, SL(depth), 1, TRC_MAX_DEPTH, 8, NULL, 0, 0, NULL, NULL, 0,
     "recorded tree depth (D)"},
    {"nodes", ENG_PARAM_INT, SL(nodes), 1, 4096, 32, NULL, 0, 0, NULL, NULL, 0,
     "recorded nodes per tree including the root (M)"},
    {"target_layers", ENG_PARAM_INT, SL(target_layers), 2, 1024, 36, NULL, 0, 0, NULL, NULL, 0,
     "target layer count"},
    {"exit_layers", ENG_PARAM_INT_LIST, SL(exit_layers), 1, 1023, NAN, NULL, TRC_MAX_EXIT,
     SL(n_exit), NULL, def_exit, 1, "early-exit layers recorded"},
    {"accept", ENG_PARAM_DOUBLE_LIST, SL(accept), 0, 1, NAN, NULL, TRC_MAX_DEPTH, SL(n_accept),
     NULL, def_accept, 8, "per-depth conditional acceptance of the draft's top-1"},
    {"calibration", ENG_PARAM_DOUBLE, SL(calibration), 0, 1, 0.7, NULL, 0, 0, NULL, NULL, 0,
     "how well draft confidence predicts correctness"},
    {"coverage", ENG_PARAM_DOUBLE, SL(coverage), 0, 1, 0.92, NULL, 0, 0, NULL, NULL, 0,
     "P(reference token within the draft's top-K)"},
    {"predictor_accuracy", ENG_PARAM_DOUBLE, SL(predictor_accuracy), 0, 1, 0.85, NULL, 0, 0,
     NULL, NULL, 0, "P(exit predictor ranks the target token first)"},
    {"seed", ENG_PARAM_INT, SL(seed), 0, INT32_MAX, 1, NULL, 0, 0, NULL, NULL, 0,
     "generator seed"},
    {"target", ENG_PARAM_STRING, SL(target), 0, 0, NAN, NULL, TRC_NAME_CAP, 0, "synthetic-target",
     NULL, 0, "target model name recorded in the trace"},
    {"draft", ENG_PARAM_STRING, SL(draft), 0, 0, NAN, NULL, TRC_NAME_CAP, 0, "synthetic-draft",
     NULL, 0, "draft model name recorded in the trace"},
    {"name", ENG_PARAM_STRING, SL(name), 0, 0, NAN, NULL, 100, 0, "", NULL, 0,
     "what results call the trace (default synth-<checksum>); [A-Za-z0-9._+-]"},
    {"node_streams", ENG_PARAM_BOOL, SL(node_streams), 0, 1, 0, NULL, 0, 0, NULL, NULL, 0,
     "every node draws from its own random stream (smooth in accept, for fitting)"},
    {"coverage_share", ENG_PARAM_DOUBLE, SL(coverage_share), -1, 1, -1, NULL, 0, 0, NULL, NULL,
     0, "instead of coverage: top-K holds the token with P = a_d + share (1 - a_d); -1 = off"},
    {NULL, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
#undef SL

/* The generator's parameters from the validated script keys. */
static void synth_params(const synth_lua *s, int workers, trc_synth_params *p)
{
    trc_synth_default_params(p);
    p->seed = (uint64_t)s->seed;
    p->prompts = s->prompts;
    p->prompt_len = s->prompt_len;
    p->output_len = s->output_len;
    p->vocab = s->vocab;
    p->k = s->k;
    p->max_depth = s->depth;
    p->max_nodes = s->nodes;
    p->target_layers = s->target_layers;
    p->n_exit = s->n_exit;
    memcpy(p->exit_layers, s->exit_layers, sizeof p->exit_layers);
    p->n_accept = s->n_accept;
    memcpy(p->accept, s->accept, sizeof p->accept);
    p->calibration = s->calibration;
    p->coverage = s->coverage;
    p->predictor_accuracy = s->predictor_accuracy;
    p->node_streams = s->node_streams;
    p->threads = workers; /* the trace does not depend on it */
    p->coverage_share = s->coverage_share;
    snprintf(p->target, sizeof p->target, "%s", s->target);
    snprintf(p->draft, sizeof p->draft, "%s", s->draft);
}

/* The most a trace of s can take (every tree full). */
static double synth_most(const synth_lua *s)
{
    double P = s->prompts, T = P * s->output_len, N = T * s->nodes, NK = N * s->k;
    return 2 * (P + 1) * 8 + P * s->prompt_len * 4.0 + T * 12 + 8 + N * 17 + NK * 16 +
           NK * s->n_exit * 4;
}

/* Before generating: the most the trace can take against what is left of the
 * script's memory limit; raises when it cannot fit. */
static void synth_fits(lua_State *L, fs_api *a, const synth_lua *s, const char *chunk, int line)
{
    double most = synth_most(s);
    const fs_lua_limits *lim = a->lim;
    if (lim && lim->mem_limit_bytes &&
        most > (double)lim->mem_limit_bytes - (double)(sim_run_mem_in_use(a)))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.trace.synth: a trace of %d prompts x %d tokens x %d nodes may "
                 "need %.1f MiB, more than the %.1f MiB left of the script's memory limit of %zu "
                 "MiB (see --max-memory-mb)",
                 chunk, line, s->prompts, s->output_len, s->nodes, most / 1048576.0,
                 (double)lim->mem_limit_bytes / 1048576.0 -
                     (double)(sim_run_mem_in_use(a)) / 1048576.0,
                 lim->mem_limit_bytes >> 20);
}

int fs_l_trace_synth(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    char chunk[PATH_MAX];
    int line;
    fs_caller_src(L, chunk, sizeof chunk, &line);
    synth_lua s;
    memset(&s, 0, sizeof s); /* the bytes of s key the cache below */
    slp_check_table(L, 1, synth_keys, &s, "flashspec.trace.synth", chunk, line);
    for (const char *c = s.name; *c; c++)
        if (!(isalnum((unsigned char)*c) || strchr("._+-", *c)))
            return fs_raise(L, SIM_CONFIG, 0,
                            "%s:%d: flashspec.trace.synth: name '%s' may hold only letters, "
                            "digits and . _ + -",
                            chunk, line, s.name);
    /* the same knobs give the same trace: look it up before generating it
     * (flashspec.calibrate asks for the same traces evaluation after evaluation) */
    fs_api *a = fs_api_get(L);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof s; i++) {
        h ^= ((const unsigned char *)&s)[i];
        h *= 1099511628211ull;
    }
    char key[160];
    snprintf(key, sizeof key, "synth:%016llx:%s", (unsigned long long)h, s.name);
    fs_trace_entry *e = sim_trace_cache_find(&a->traces, key);
    if (e) {
        e->used_at = a->generation;
        push_trace(L, e);
        return 1;
    }
    trc_synth_params p;
    synth_params(&s, a->ex.workers, &p);
    trc_trace *t = NULL;
    trc_err terr;
    double most = synth_most(&s);
    if (s.name[0] && most < 0x1p60 && sim_run_synth_can_defer(a, (size_t)most)) {
        /* an evaluation of flashspec.calibrate: generated with the others */
        if (trc_synth_check(&p, &terr) != TRC_OK)
            return fs_raise(L, sim_status_from_trc(terr.code), 1, "%s", terr.msg);
        e = trace_add(L, a, key, s.name, NULL);
        e->is_synth = 1;
        e->synth = p;
        fs_api_synth_defer(L, a, e, &p, (size_t)most, chunk, line);
        push_trace(L, e);
        return 1;
    }
    fs_api_synth_resolve(L, a); /* those recorded first: the memory limit sees them */
    synth_fits(L, a, &s, chunk, line);
    int rc = trc_synth_memo_run(&p, sim_run_synth_memo_for(a, &p), &t, &terr);
    if (rc != TRC_OK)
        return fs_raise(L, sim_status_from_trc(rc), 1, "%s", terr.msg);
    check_held(L, a, t, "flashspec.trace.synth");
    char name[128];
    if (s.name[0])
        snprintf(name, sizeof name, "%s", s.name);
    else
        snprintf(name, sizeof name, "synth-%08llx",
                 (unsigned long long)(trc_checksum(t) & 0xffffffffu));
    e = trace_add(L, a, key, name, t);
    e->is_synth = 1;
    e->synth = p;
    push_trace(L, e);
    return 1;
}
