/*
 * sim_rerun_read.c -- `flashspec rerun DIR` (sim_rerun_read.h): run.json read
 * back, its profiles put in place of today's files, today's files compared
 * with them (the comparison itself, key by key: sim_rerun.h).
 *
 * The JSON reader builds Lua values in a private Lua state (luaL_newstate: no
 * script ever runs there) under lua_pcall, so that a memory failure or a
 * malformed file unwinds to one error line and nothing leaks.  Profile values
 * go through the same key tables and checks (lparams, sim_device_check,
 * sim_model_check) as a profile file's: a hand-edited run.json cannot hand the
 * simulator a value a profile could not.
 */
#include "sim/out/sim_rerun_read.h"

#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/config/home.h"
#include "sim/config/profile.h"
#include "sim/config/lparams.h"
#include "sim/config/sim_profile_cache.h"
#include "sim/sim_status.h"
#include "sim/out/sim_rerun.h"

#define RECORD_MAX_BYTES ((size_t)256 << 20) /* run.json of a very large sweep */
#define JSON_MAX_DEPTH 64

/* ---------------------------------------------------------------- JSON */

typedef struct jsrc {
    const char *s;
    size_t n, i;
} jsrc;

static void skip_ws(jsrc *j)
{
    while (j->i < j->n && strchr(" \t\r\n", j->s[j->i]) && j->s[j->i])
        j->i++;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F'   ? c - 'A' + 10
                                                                 : -1;
}

/* Four hex digits at j->i (after "\u"); -1 when they are not. */
static long hex4(jsrc *j)
{
    if (j->n - j->i < 4) return -1;
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval((unsigned char)j->s[j->i + (size_t)k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    j->i += 4;
    return v;
}

/* Appends code point cp as UTF-8. */
static void add_utf8(luaL_Buffer *b, long cp)
{
    char u[4];
    int n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    luaL_addlstring(b, u, (size_t)n);
}

/* The escape after a backslash (j->i at the character after it). */
static void dec_escape(lua_State *L, jsrc *j, luaL_Buffer *b)
{
    char c = j->s[j->i++];
    const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
    const char *at = strchr(from, c);
    if (at && c) {
        luaL_addchar(b, to[at - from]);
        return;
    }
    if (c != 'u') luaL_error(L, "byte %d: bad escape '\\%c'", (int)j->i, c);
    long cp = hex4(j);
    if (cp < 0) luaL_error(L, "byte %d: bad \\u escape", (int)j->i);
    if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
        long lo = j->i + 1 < j->n && j->s[j->i] == '\\' && j->s[j->i + 1] == 'u'
                      ? (j->i += 2, hex4(j))
                      : -1;
        if (lo < 0xDC00 || lo > 0xDFFF) luaL_error(L, "byte %d: lone surrogate", (int)j->i);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp < 0xE000) {
        luaL_error(L, "byte %d: lone surrogate", (int)j->i);
    }
    add_utf8(b, cp);
}

/* A string (j->i at its opening quote), pushed. */
static void dec_string(lua_State *L, jsrc *j)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    j->i++;
    for (;;) {
        if (j->i >= j->n) luaL_error(L, "byte %d: unterminated string", (int)j->i);
        unsigned char c = (unsigned char)j->s[j->i++];
        if (c == '"') break;
        if (c < 0x20) luaL_error(L, "byte %d: control character in a string", (int)j->i);
        if (c == '\\') {
            if (j->i >= j->n) luaL_error(L, "byte %d: unterminated string", (int)j->i);
            dec_escape(L, j, &b);
        } else {
            luaL_addchar(&b, (char)c);
        }
    }
    luaL_pushresult(&b);
}

/* A number, pushed: an integer when it has no fraction or exponent and fits. */
static void dec_number(lua_State *L, jsrc *j)
{
    size_t k = j->i;
    if (k < j->n && j->s[k] == '-') k++;
    if (k >= j->n || !(j->s[k] >= '0' && j->s[k] <= '9'))
        luaL_error(L, "byte %d: unexpected character", (int)j->i + 1);
    int integral = 1;
    while (k < j->n && strchr("0123456789+-.eE", j->s[k]) && j->s[k]) {
        if (strchr(".eE", j->s[k])) integral = 0;
        k++;
    }
    char num[64];
    if (k - j->i >= sizeof num) luaL_error(L, "byte %d: number too long", (int)j->i + 1);
    memcpy(num, j->s + j->i, k - j->i);
    num[k - j->i] = 0;
    char *end;
    errno = 0;
    if (integral) {
        long long v = strtoll(num, &end, 10);
        if (!*end && errno == 0) {
            lua_pushinteger(L, (lua_Integer)v);
            j->i = k;
            return;
        }
    }
    double x = strtod(num, &end);
    if (*end) luaL_error(L, "byte %d: bad number '%s'", (int)j->i + 1, num);
    lua_pushnumber(L, x);
    j->i = k;
}

static void dec_value(lua_State *L, jsrc *j, int depth);

/* An array or object (j->i at '[' or '{'), pushed as a table; null members
 * and elements are left out (nil). */
static void dec_container(lua_State *L, jsrc *j, int depth)
{
    int obj = j->s[j->i] == '{';
    char close = obj ? '}' : ']';
    if (depth > JSON_MAX_DEPTH) luaL_error(L, "byte %d: nested too deeply", (int)j->i + 1);
    luaL_checkstack(L, 4, "run.json");
    j->i++;
    lua_newtable(L);
    skip_ws(j);
    if (j->i < j->n && j->s[j->i] == close) {
        j->i++;
        return;
    }
    for (lua_Integer n = 1;; n++) {
        skip_ws(j);
        if (obj) {
            if (j->i >= j->n || j->s[j->i] != '"')
                luaL_error(L, "byte %d: a member name expected", (int)j->i + 1);
            dec_string(L, j);
            skip_ws(j);
            if (j->i >= j->n || j->s[j->i] != ':')
                luaL_error(L, "byte %d: ':' expected", (int)j->i + 1);
            j->i++;
        }
        dec_value(L, j, depth + 1);
        if (obj)
            lua_rawset(L, -3);
        else
            lua_rawseti(L, -2, n);
        skip_ws(j);
        if (j->i < j->n && j->s[j->i] == ',') {
            j->i++;
            continue;
        }
        if (j->i < j->n && j->s[j->i] == close) {
            j->i++;
            return;
        }
        luaL_error(L, "byte %d: ',' or '%c' expected", (int)j->i + 1, close);
    }
}

static void dec_value(lua_State *L, jsrc *j, int depth)
{
    skip_ws(j);
    if (j->i >= j->n) luaL_error(L, "byte %d: unexpected end", (int)j->i + 1);
    char c = j->s[j->i];
    if (c == '{' || c == '[') {
        dec_container(L, j, depth);
    } else if (c == '"') {
        dec_string(L, j);
    } else if (j->n - j->i >= 4 && !strncmp(j->s + j->i, "true", 4)) {
        lua_pushboolean(L, 1), j->i += 4;
    } else if (j->n - j->i >= 5 && !strncmp(j->s + j->i, "false", 5)) {
        lua_pushboolean(L, 0), j->i += 5;
    } else if (j->n - j->i >= 4 && !strncmp(j->s + j->i, "null", 4)) {
        lua_pushnil(L), j->i += 4;
    } else {
        dec_number(L, j);
    }
}

/* lua_CFunction: [1] = jsrc (light userdata); leaves the value. */
static int l_decode(lua_State *L)
{
    jsrc *j = lua_touserdata(L, 1);
    dec_value(L, j, 0);
    skip_ws(j);
    if (j->i != j->n) luaL_error(L, "byte %d: text after the value", (int)j->i + 1);
    return 1;
}

/* The JSON file at path as a Lua table in a new private state (its index
 * 1), or NULL with *code and one line in err. */
static lua_State *read_record(const char *path, int *code, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, f ? "not a regular file"
                                                              : strerror(errno));
        if (f) fclose(f);
        *code = SIM_MISSING;
        return NULL;
    }
    size_t cap = (size_t)st.st_size;
    char *text = cap <= RECORD_MAX_BYTES ? malloc(cap + 1) : NULL;
    size_t got = text ? fread(text, 1, cap, f) : 0;
    fclose(f);
    lua_State *J = text && got == cap ? luaL_newstate() : NULL;
    if (!J) {
        snprintf(err, errlen, "%s: cannot read (%s)", path,
                 !text && cap > RECORD_MAX_BYTES ? "larger than 256 MiB" : "out of memory");
        free(text);
        *code = !text && cap > RECORD_MAX_BYTES ? SIM_DATA : SIM_INTERNAL;
        return NULL;
    }
    jsrc js = {text, cap, 0};
    skip_ws(&js);
    int object = js.i < cap && text[js.i] == '{'; /* an array is a table too */
    js.i = 0;
    lua_pushcfunction(J, l_decode);
    lua_pushlightuserdata(J, &js);
    int rc = lua_pcall(J, 1, 1, 0);
    free(text);
    if (rc != LUA_OK || !object) {
        snprintf(err, errlen, "%s: not a run record: %s", path,
                 rc == LUA_OK ? "not a JSON object" : lua_tostring(J, -1));
        lua_close(J);
        *code = rc == LUA_ERRMEM ? SIM_INTERNAL : SIM_DATA;
        return NULL;
    }
    return J;
}

/* ---------------------------------------------------------------- plan */

/* The command line's options a rerun keeps (run.json "command"). */
static void plan_command(lua_State *J, sim_rerun_plan *p)
{
    lua_getfield(J, 1, "command");
    lua_Integer n = lua_istable(J, -1) ? (lua_Integer)lua_rawlen(J, -1) : 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(J, -1, i);
        const char *w = lua_tostring(J, -1);
        lua_rawgeti(J, -2, i + 1);
        const char *v = lua_tostring(J, -1);
        if (w && i == 2) snprintf(p->verb, sizeof p->verb, "%s", w);
        if (w && !strcmp(w, "--unsafe")) p->unsafe = 1;
        if (w && !strcmp(w, "--strict")) p->strict = 1;
        if (w && v && !strcmp(w, "--max-instructions")) p->max_instructions = atoll(v);
        if (w && v && !strcmp(w, "--max-memory-mb")) p->max_memory_mb = atoll(v);
        if (w && v && !strcmp(w, "--trace-cache-mb")) p->trace_cache_mb = atoll(v);
        if (w && v && !strcmp(w, "--max-seconds")) p->max_seconds = atof(v);
        lua_pop(J, 2);
    }
    lua_pop(J, 1);
}

int sim_rerun_plan_read(const char *dir, sim_rerun_plan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    snprintf(p->verb, sizeof p->verb, "sweep");
    snprintf(p->record, sizeof p->record, "%s/run.json", dir);
    snprintf(p->script, sizeof p->script, "%s/script.lua", dir);
    struct stat st;
    if (stat(p->script, &st) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s (a rerun needs the script a run recorded)",
                 p->script, strerror(errno));
        return SIM_MISSING;
    }
    int code;
    lua_State *J = read_record(p->record, &code, err, errlen);
    if (!J) return code;
    lua_getfield(J, 1, "script");
    if (!lua_istable(J, -1)) {
        snprintf(err, errlen, "%s: not a run record: no \"script\" member", p->record);
        lua_close(J);
        return SIM_DATA;
    }
    lua_getfield(J, -1, "path");
    sim_out_rerun_script_dir(dir, lua_tostring(J, -1), fs_home_dir(), p->script_dir,
                             sizeof p->script_dir);
    lua_pop(J, 1);
    lua_getfield(J, -1, "args");
    if (lua_istable(J, -1)) {
        lua_pushnil(J);
        while (lua_next(J, -2) && p->n_args < SIM_RERUN_MAX_ARGS) {
            if (lua_type(J, -2) == LUA_TSTRING && lua_type(J, -1) == LUA_TSTRING) {
                snprintf(p->args_buf[p->n_args], sizeof p->args_buf[0], "%s=%s",
                         lua_tostring(J, -2), lua_tostring(J, -1));
                p->args[p->n_args] = p->args_buf[p->n_args];
                p->n_args++;
            }
            lua_pop(J, 1);
        }
    }
    lua_pop(J, 2);
    plan_command(J, p);
    lua_close(J);
    return SIM_OK;
}

/* ------------------------------------------------------------- profiles */

typedef struct apply_job {
    const eng_param_desc *keys;
    void *params;
    unsigned char *present;
    const char *what, *record;
} apply_job;

/* lua_CFunction under lua_pcall: [1] = apply_job, [2] = the values table. */
static int l_apply(lua_State *J)
{
    apply_job *job = lua_touserdata(J, 1);
    slp_apply_table_text(J, 2, job->keys, job->params, job->present, job->what, job->record, 0,
                         NULL);
    return 0;
}

/* The values table on top of J applied over params (keys); present marks the
 * rows given (may be NULL).  0, or -1 with err. */
static int apply_values(lua_State *J, const eng_param_desc *keys, void *params,
                        unsigned char *present, const char *what, const char *record, char *err,
                        size_t errlen)
{
    size_t nk = 0;
    while (keys[nk].name)
        nk++;
    unsigned char scratch[SIM_VARIANT_KEYS_CAP + 1];
    unsigned char *pr = present ? present : scratch;
    memset(pr, 0, nk < sizeof scratch ? nk : sizeof scratch);
    apply_job job = {keys, params, pr, what, record};
    lua_pushcfunction(J, l_apply);
    lua_pushlightuserdata(J, &job);
    lua_pushvalue(J, -3);
    if (lua_pcall(J, 2, 0, 0) != LUA_OK) {
        snprintf(err, errlen, "%s: %s: %s", record, what,
                 lua_type(J, -1) == LUA_TSTRING ? lua_tostring(J, -1) : "out of memory");
        lua_pop(J, 1);
        return -1;
    }
    return 0;
}

/* One warning line naming the keys in which today's file differs from the
 * recorded values (sim/out/sim_rerun.h). */
static void warn_diff(const char *shown, const eng_param_desc *keys, const void *today,
                      const void *rec)
{
    char msg[1536];
    if (!sim_out_param_diff(keys, today, rec, msg, sizeof msg)) return;
    fprintf(stderr, "flashspec: warning: rerun: %s differs from what run.json recorded: %s (the "
                    "rerun uses run.json's values)\n",
            shown, msg);
}

/* One recorded profile as built, and today's file for the comparison. */
typedef struct rec_profile {
    int device;
    char rel[PATH_MAX], path[PATH_MAX]; /* as recorded; resolved */
    sim_device dev, today_dev;
    sim_device_variants vars, today_vars;
    sim_model model, today_model;
} rec_profile;

/* The recorded values (and a device's variants) of the profile on top of J
 * into p.  0, or an exit code with err. */
static int build_profile(lua_State *J, rec_profile *p, const char *record, char *err,
                         size_t errlen)
{
    const eng_param_desc *keys = p->device ? sim_device_keys() : sim_model_keys();
    lua_getfield(J, -1, "values");
    if (!lua_istable(J, -1)) {
        snprintf(err, errlen, "%s: the profile %s has no \"values\"", record, p->rel);
        return SIM_DATA;
    }
    unsigned char given[SIM_VARIANT_KEYS_CAP + 1];
    if (apply_values(J, keys, p->device ? (void *)&p->dev : (void *)&p->model, given,
                     p->device ? "device profile" : "model profile", record, err, errlen))
        return SIM_DATA;
    lua_pop(J, 1);
    /* run.json records every key: one missing is a damaged record, not a
     * default (a profile file must give its required keys too) */
    for (const eng_param_desc *d = keys; d->name; d++) {
        if (!given[d - keys]) {
            snprintf(err, errlen, "%s: the recorded profile %s lacks '%s'", record, p->rel,
                     d->name);
            return SIM_DATA;
        }
    }
    if (!p->device) return SIM_OK;
    lua_getfield(J, -1, "variants");
    lua_Integer nv = lua_istable(J, -1) ? (lua_Integer)lua_rawlen(J, -1) : 0;
    for (lua_Integer v = 1; v <= nv && p->vars.n < SIM_PROFILE_MAX_VARIANTS; v++) {
        sim_device_variant *sv = &p->vars.v[p->vars.n++];
        lua_rawgeti(J, -1, v);
        lua_getfield(J, -1, "name");
        snprintf(sv->name, sizeof sv->name, "%s", lua_tostring(J, -1) ? lua_tostring(J, -1) : "");
        lua_getfield(J, -2, "values");
        if (!lua_istable(J, -1) ||
            apply_values(J, keys, &sv->delta, sv->set, "device variant", record, err, errlen)) {
            if (!err[0]) snprintf(err, errlen, "%s: a variant without \"values\"", record);
            return SIM_DATA;
        }
        lua_pop(J, 3);
    }
    lua_pop(J, 1);
    return SIM_OK;
}

/* Today's file of p, loaded and compared: one warning line (unless quiet). */
static void compare_today(rec_profile *p, int quiet)
{
    char cerr[512] = "";
    int rc = p->device ? sim_profile_load_device_variants(p->path, &p->today_dev, &p->today_vars,
                                                          cerr, sizeof cerr)
                       : sim_profile_load_model(p->path, &p->today_model, cerr, sizeof cerr);
    if (quiet) return;
    if (rc != SIM_OK)
        fprintf(stderr,
                "flashspec: warning: rerun: %s no longer loads (%s); the rerun uses "
                "run.json's values\n",
                p->rel, cerr);
    else if (p->device)
        warn_diff(p->rel, sim_device_keys(), &p->today_dev, &p->dev);
    else
        warn_diff(p->rel, sim_model_keys(), &p->today_model, &p->model);
}

/* The profile on top of J built, checked, compared with today's file and
 * kept in a's cache under its path.  0, or an exit code with err. */
static int prefill_one(lua_State *J, sim_profile_cache *cache, const char *record, int quiet,
                       rec_profile *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    lua_getfield(J, -1, "kind");
    p->device = lua_tostring(J, -1) && !strcmp(lua_tostring(J, -1), "device");
    lua_getfield(J, -2, "path");
    const char *rel = lua_tostring(J, -1);
    if (!rel) {
        snprintf(err, errlen, "%s: a profile without a \"path\"", record);
        return SIM_DATA;
    }
    snprintf(p->rel, sizeof p->rel, "%s", rel);
    lua_pop(J, 2);
    sim_out_rerun_profile_path(p->rel, fs_home_dir(), p->path, sizeof p->path);
    int code = build_profile(J, p, record, err, errlen);
    if (code != SIM_OK) return code;
    char cerr[512] = "";
    if (p->device ? sim_device_check(&p->dev, cerr, sizeof cerr)
                  : sim_model_check(&p->model, cerr, sizeof cerr)) {
        snprintf(err, errlen, "%s: the recorded profile %s: %s", record, p->rel, cerr);
        return SIM_DATA;
    }
    compare_today(p, quiet);
    if (sim_profile_cache_keep(cache, p->path, p->device, p->device ? &p->dev : NULL,
                               p->device ? &p->vars : NULL, p->device ? NULL : &p->model)) {
        snprintf(err, errlen, "%s: too many profiles to rerun (or out of memory)", record);
        return SIM_INTERNAL;
    }
    return SIM_OK;
}

int sim_rerun_prefill(sim_profile_cache *cache, const char *record, int quiet, char *err, size_t errlen)
{
    int code;
    lua_State *J = read_record(record, &code, err, errlen);
    if (!J) return code;
    lua_getfield(J, 1, "profiles");
    if (!lua_istable(J, -1)) {
        snprintf(err, errlen, "%s: no \"profiles\" member (recorded by an older flashspec: "
                              "run the script itself)", record);
        lua_close(J);
        return SIM_DATA;
    }
    lua_Integer n = (lua_Integer)lua_rawlen(J, -1);
    rec_profile *p = malloc(sizeof *p);
    code = p ? SIM_OK : SIM_INTERNAL;
    err[0] = 0;
    if (!p) snprintf(err, errlen, "out of memory");
    for (lua_Integer i = 1; i <= n && code == SIM_OK; i++) {
        lua_rawgeti(J, -1, i);
        code = lua_istable(J, -1) ? prefill_one(J, cache, record, quiet, p, err, errlen)
                                  : SIM_DATA;
        if (code == SIM_DATA && !err[0])
            snprintf(err, errlen, "%s: profile %lld is not an object", record, (long long)i);
        lua_settop(J, 2);
    }
    free(p);
    lua_close(J);
    return code;
}
