/*
 * calibrate_spec.c -- the spec table of flashspec.calibrate read and checked
 * into a cal (calibrate_impl.h), before anything runs: the options
 * against the driver's option table (sim_fit_cal_option_keys; lparams.h:
 * type and range, one line naming the key's line, the nearest key suggested
 * for an unknown one), the name (a file name that
 * overwrites neither the run's results nor an earlier calibration's
 * outputs), the profile (its base must load now), the parameters, the points
 * function, the reference CSV (refcsv.h) and the held-out sources.
 *
 * Errors raise at once, one line naming the spec's line: exit 78 for the
 * spec itself; for the reference, 66 when it does not exist and refcsv.h's
 * codes when it does not read (calibrate.c, "Errors").
 */
#include <lauxlib.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "sim/config/home.h"
#include "sim/config/profile.h"
#include "sim/lua/calibrate_impl.h"
#include "sim/config/lparams.h"
#include "sim/out/sim_out.h"

#define WHAT "flashspec.calibrate"


/* The keys checked here rather than against the option table. */
static const char *const cal_object_keys[] = {"reference", "params",  "points",
                                              "profile",   "holdout", NULL};

/* Closest calibrate key to k, or NULL (as the run keys: lparams.h). */
static const char *nearest_key(const char *k)
{
    const char *best = eng_params_nearest(sim_fit_cal_option_keys(), k);
    int32_t best_d = best ? eng_params_distance(k, best) : INT32_MAX;
    int32_t limit = (int32_t)strlen(k) / 2 < 2 ? 2 : (int32_t)strlen(k) / 2;
    for (int i = 0; cal_object_keys[i]; i++) {
        int32_t d = eng_params_distance(k, cal_object_keys[i]);
        if (d <= limit && d < best_d) {
            best = cal_object_keys[i];
            best_d = d;
        }
    }
    return best;
}

static int is_object_key(const char *k)
{
    for (int i = 0; cal_object_keys[i]; i++)
        if (!strcmp(k, cal_object_keys[i])) return 1;
    return 0;
}

/* Unknown keys, then the options (sim_fit_cal_option_keys; lparams.h). */
static void check_options(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            fs_raise(c->L, SIM_CONFIG, 0, "%s:%d: %s: keys must be names", c->fc.chunk, c->fc.line,
                     WHAT);
        const char *k = lua_tostring(L, -1);
        if (is_object_key(k) || eng_params_find(sim_fit_cal_option_keys(), k)) continue;
        const char *near = nearest_key(k);
        int kl = slp_key_line(c->fc.chunk, c->fc.line, k);
        if (near)
            fs_raise(c->L, SIM_CONFIG, 0, "%s:%d: unknown key '%s' in %s (did you mean '%s'?)",
                     c->fc.chunk, kl, k, WHAT, near);
        fs_raise(c->L, SIM_CONFIG, 0, "%s:%d: unknown key '%s' in %s", c->fc.chunk, kl, k, WHAT);
    }
    slp_check_fields(L, idx, sim_fit_cal_option_keys(), &c->fc.o, WHAT, c->fc.chunk, c->fc.line);
    if (c->fc.o.bootstrap > 0 && c->fc.o.bootstrap < SIM_FIT_BOOT_MIN)
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: %s: key 'bootstrap' = %d is below the %d replicates a 95%% "
                 "interval needs (with fewer, one replicate alone on a side of the estimate "
                 "puts the estimate outside it); use 0 (none) or at least %d",
                 c->fc.chunk, slp_key_line(c->fc.chunk, c->fc.line, "bootstrap"), WHAT,
                 (int)c->fc.o.bootstrap, SIM_FIT_BOOT_MIN, SIM_FIT_BOOT_MIN);
    if (c->fc.o.bootstrap_seed != floor(c->fc.o.bootstrap_seed))
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: %s: key 'bootstrap_seed' must be an integer (got %.14g)", c->fc.chunk,
                 slp_key_line(c->fc.chunk, c->fc.line, "bootstrap_seed"), WHAT,
                 c->fc.o.bootstrap_seed);
}

/* An output file of this calibration, `file` (NAME.md, NAME.csv or
 * PROFILE.lua, from the spec key `key`): not a name the run writes into its
 * output directory itself (results.*, run.json, script.lua, points/, ...:
 * sim_out_name_reserved), not an output an earlier calibration of this run
 * queued -- either compared without regard to case, as a case-insensitive
 * file system compares them. */
static void check_output_name(cal *c, const char *key, const char *file)
{
    const char *stem = sim_out_name_reserved(file);
    if (stem)
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: %s would write %s, which the run's output "
                 "directory reserves for %s; choose another name",
                 c->fc.chunk, c->fc.line, key, file,
                 !strcmp(stem, "results")  ? "its results (results.csv, results.h5)"
                 : !strcmp(stem, "run")    ? "its run record (run.json)"
                 : !strcmp(stem, "script") ? "the script as run (script.lua)"
                 : !strcmp(stem, "points") ? "its resume records (points/)"
                                           : "the analysis tools' reports");
    for (int32_t i = 0; i < c->a->n_outputs; i++)
        if (strcasecmp(c->a->outputs[i].name, file) == 0)
            fs_raise(c->L, SIM_CONFIG, 0,
                     "%s:%d: flashspec.calibrate: %s: %s is already written by an earlier "
                     "calibration of this run (it would be overwritten); give each "
                     "calibration and each derived profile its own name",
                     c->fc.chunk, c->fc.line, key, c->a->outputs[i].name);
}

/* name: a file name whose outputs (NAME.md, NAME.csv) clobber nothing. */
static void check_name(cal *c)
{
    const char *s = c->fc.o.name;
    int ok = *s != 0;
    for (const char *q = s; ok && *q; q++)
        ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
             strchr("._-", *q);
    if (!ok || *s == '.')
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: name must be a file name "
                 "of letters, digits and . _ - (not starting with .)",
                 c->fc.chunk, c->fc.line);
    char file[SIM_FIT_NAME_CAP + 8];
    snprintf(file, sizeof file, "%s.md", s);
    check_output_name(c, "name", file);
    snprintf(file, sizeof file, "%s.csv", s);
    check_output_name(c, "name", file);
}

/* The base of the derived profile must exist and load now. */
static void check_profile_base(cal *c, const char *b)
{
    sim_device dev;
    char path[PATH_MAX], err[512];
    sim_profile_path("devices", b, path, sizeof path);
    int prc = sim_profile_load_device(path, &dev, err, sizeof err);
    if (prc == SIM_OK) return;
    struct stat st;
    char hint[1024] = "";
    if (stat(path, &st) != 0) {
        sim_profile_suggest("devices", b, hint, sizeof hint);
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: profile.base: unknown "
                 "device '%s'%s (no %s)",
                 c->fc.chunk, c->fc.line, b, hint, path);
    }
    fs_raise(c->L, SIM_CONFIG, 0,
             "%s:%d: flashspec.calibrate: profile.base '%s' does "
             "not load: %s",
             c->fc.chunk, c->fc.line, b, err);
}

/* profile = { base = NAME, name = NAME } (optional). */
static void read_profile(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "profile");
    if (!lua_isnil(L, -1)) {
        if (!lua_istable(L, -1))
            fs_raise(c->L, SIM_CONFIG, 0,
                     "%s:%d: flashspec.calibrate: profile must be { base = "
                     "NAME, name = NAME }",
                     c->fc.chunk, c->fc.line);
        lua_getfield(L, -1, "base");
        lua_getfield(L, -2, "name");
        const char *b = lua_tostring(L, -2), *n = lua_tostring(L, -1);
        char path[PATH_MAX];
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING ||
            strlen(b) >= sizeof c->fc.prof_base || strlen(n) >= sizeof c->fc.prof_name ||
            sim_profile_path("devices", b, path, sizeof path) != 0 ||
            sim_profile_path("devices", n, path, sizeof path) != 0)
            fs_raise(c->L, SIM_CONFIG, 0,
                     "%s:%d: flashspec.calibrate: profile must be { base = "
                     "NAME, name = NAME } with device profile names",
                     c->fc.chunk, c->fc.line);
        check_profile_base(c, b);
        char file[sizeof c->fc.prof_name + 8];
        snprintf(file, sizeof file, "%s.lua", n);
        check_output_name(c, "profile", file);
        snprintf(c->fc.prof_base, sizeof c->fc.prof_base, "%s", b);
        snprintf(c->fc.prof_name, sizeof c->fc.prof_name, "%s", n);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
}

static double num_field(cal *c, int idx, int i, const char *pname)
{
    lua_rawgeti(c->L, idx, i);
    if (!lua_isnumber(c->L, -1))
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: params.%s must be { start, lo, "
                 "hi } (numbers)",
                 c->fc.chunk, c->fc.line, pname);
    double x = lua_tonumber(c->L, -1);
    lua_pop(c->L, 1);
    return x;
}

/* One entry name = { start, lo, hi } of params, its value on top of the stack. */
static void read_param(cal *c, const char *name)
{
    lua_State *L = c->L;
    if (c->fc.f.np == SIM_FIT_MAX_PARAMS)
        fs_raise(c->L, SIM_CONFIG, 0, "%s:%d: flashspec.calibrate: more than %d params",
                 c->fc.chunk, c->fc.line, SIM_FIT_MAX_PARAMS);
    if (strlen(name) >= SIM_FIT_NAME_CAP || !*name)
        fs_raise(c->L, SIM_CONFIG, 0, "%s:%d: flashspec.calibrate: bad parameter name '%s'",
                 c->fc.chunk, c->fc.line, name);
    if (!lua_istable(L, -1) || slp_list_len(L, -1, WHAT, name, c->fc.chunk, c->fc.line) != 3)
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: params.%s must be { start, "
                 "lo, hi }",
                 c->fc.chunk, c->fc.line, name);
    sim_fit_param *p = &c->fc.f.par[c->fc.f.np++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    int v = lua_gettop(L);
    p->start = num_field(c, v, 1, name);
    p->lo = num_field(c, v, 2, name);
    p->hi = num_field(c, v, 3, name);
    switch (sim_fit_param_check(p->start, p->lo, p->hi)) {
    case SIM_FIT_PARAM_BOUNDS:
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: params.%s: bounds [%g, %g] "
                 "must be finite with lo < hi",
                 c->fc.chunk, c->fc.line, name, p->lo, p->hi);
        break;
    case SIM_FIT_PARAM_START:
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: params.%s: start %g violates "
                 "its bounds (it must lie strictly inside (%g, %g))",
                 c->fc.chunk, c->fc.line, name, p->start, p->lo, p->hi);
        break;
    case SIM_FIT_PARAM_EDGE:
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: params.%s: start %g is too "
                 "close to a bound of (%g, %g) for the fit to move it; widen the bounds",
                 c->fc.chunk, c->fc.line, name, p->start, p->lo, p->hi);
        break;
    }
}

static int device_double_key(const char *name)
{
    for (const eng_param_desc *d = sim_device_keys(); d->name; d++)
        if (!strcmp(d->name, name)) return d->type == ENG_PARAM_DOUBLE;
    return 0;
}

/* params = { name = { start, lo, hi }, ... }, in the order of their names. */
static void read_params(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "params");
    int t = lua_gettop(L);
    if (!lua_istable(L, t))
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: 'params' must be a table of "
                 "name = { start, lo, hi }",
                 c->fc.chunk, c->fc.line);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            fs_raise(c->L, SIM_CONFIG, 0, "%s:%d: flashspec.calibrate: params keys must be names",
                     c->fc.chunk, c->fc.line);
        read_param(c, lua_tostring(L, -2));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (!c->fc.f.np)
        fs_raise(c->L, SIM_CONFIG, 0, "%s:%d: flashspec.calibrate: 'params' is empty", c->fc.chunk,
                 c->fc.line);
    sim_fit_sort_params(c->fc.f.par, c->fc.f.np); /* deterministic order */
    for (int32_t i = 0; i < c->fc.f.np; i++)
        c->fc.device_key[i] = (uint8_t)device_double_key(c->fc.f.par[i].name);
}

/* points: the function p [, rep] -> sweep table, kept in the registry. */
static void read_points(cal *c, int idx)
{
    lua_getfield(c->L, idx, "points");
    if (!lua_isfunction(c->L, -1))
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: 'points' must be a function "
                 "p -> sweep table",
                 c->fc.chunk, c->fc.line);
    c->fn_ref = luaL_ref(c->L, LUA_REGISTRYINDEX);
}

/* The reference file the spec names (arg): its path into rpath, or a raised
 * error when it does not exist. */
static void find_reference(cal *c, const char *arg, char *rpath, size_t n)
{
    char tried[2 * PATH_MAX + 16];
    if (!sim_run_find_file(c->a, arg, rpath, n, tried, sizeof tried)) return;
    /* something that exists but is no regular file (a directory, a FIFO) is
     * bad data, for fs_ref_load to name; only a missing file is exit 66 */
    struct stat st;
    /* the places sim_run_find_file looked: the spec's folder, the project */
    const char *roots[2] = {c->a->script_dir, fs_home_dir()};
    int found = 0;
    for (int i = 0; i < (arg[0] == '/' ? 1 : 2) && !found; i++) {
        int w = arg[0] == '/' ? snprintf(rpath, n, "%s", arg)
                              : snprintf(rpath, n, "%s/%s", roots[i], arg);
        found = w > 0 && (size_t)w < n && stat(rpath, &st) == 0;
    }
    if (!found)
        fs_raise(c->L, SIM_MISSING, 0, "%s:%d: flashspec.calibrate: reference '%s' not found%s",
                 c->fc.chunk, c->fc.line, arg, tried);
}

/* reference = PATH: the reference CSV, read and checked (refcsv.h). */
static void read_reference(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "reference");
    if (lua_type(L, -1) != LUA_TSTRING)
        fs_raise(c->L, SIM_CONFIG, 0,
                 "%s:%d: flashspec.calibrate: 'reference' must be the path of "
                 "a reference CSV",
                 c->fc.chunk, c->fc.line);
    char rpath[PATH_MAX], err[2 * PATH_MAX + 64];
    snprintf(c->fc.ref_arg, sizeof c->fc.ref_arg, "%s", lua_tostring(L, -1));
    find_reference(c, lua_tostring(L, -1), rpath, sizeof rpath);
    lua_pop(L, 1);
    c->fc.cols = fs_ref_result_cols(&c->a->meta);
    int rc = fs_ref_load(rpath, &c->fc.cols, &c->fc.ref, err, sizeof err);
    if (rc != SIM_OK) fs_raise(c->L, rc, 0, "%s", err);
}

/* holdout = SOURCE: the reference rows of that source held out; a name
 * that matches no row raises. */
static void mark_source(cal *c, const char *src)
{
    int rc = sim_fit_cal_hold(&c->fc, src);
    if (rc != SIM_OK) fs_raise(c->L, rc, 0, "%s", c->fc.err);
}

void fs_cal_read_holdout(cal *c, int idx)
{
    lua_State *L = c->L;
    lua_getfield(L, idx, "holdout");
    int t = lua_gettop(L);
    if (!lua_isnil(L, t)) {
        int ok = lua_type(L, t) == LUA_TSTRING || (lua_istable(L, t) && lua_rawlen(L, t) >= 1);
        if (!ok)
            fs_raise(c->L, SIM_CONFIG, 0,
                     "%s:%d: flashspec.calibrate: holdout must be a source "
                     "name or a list of them",
                     c->fc.chunk, c->fc.line);
        if (lua_type(L, t) == LUA_TSTRING) {
            mark_source(c, lua_tostring(L, t));
        } else {
            lua_Integer nn = slp_list_len(L, t, WHAT, "holdout", c->fc.chunk, c->fc.line);
            for (lua_Integer i = 1; i <= nn; i++) {
                if (lua_rawgeti(L, t, i) != LUA_TSTRING)
                    fs_raise(c->L, SIM_CONFIG, 0,
                             "%s:%d: flashspec.calibrate: holdout must be a "
                             "source name or a list of them",
                             c->fc.chunk, c->fc.line);
                mark_source(c, lua_tostring(L, -1));
                lua_pop(L, 1);
            }
        }
    }
    lua_pop(L, 1);
}

/* Everything the spec table at idx says, checked; the reference loaded. */
void fs_cal_read_spec(cal *c, int idx)
{
    check_options(c, idx);
    check_name(c);
    read_profile(c, idx);
    read_params(c, idx);
    read_points(c, idx);
    read_reference(c, idx);
}
