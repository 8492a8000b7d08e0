/*
 * api.c -- the `flashspec` script surface (see api.h and docs/experiments.md).
 *
 * Design: one fs_api context per script run (api_impl.h), stored as a light
 * userdata in the Lua registry (no globals).  Profiles, traces and policies are
 * full userdata with metatables, built in api_objects.c; this file owns the
 * points, flashspec.run/sweep and the `flashspec` table; api_run.c runs the
 * script and writes its results.
 * Errors raised towards the script are error objects {code, msg} (metatable
 * "flashspec.error", tostring = msg) so that the exit code survives the unwind;
 * any other Lua error is a configuration error (78).  A script catching errors
 * with pcall sees the same objects.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "api.h"
#include "api_impl.h"
#include "sim/config/sandbox.h"

#include <ctype.h>
#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/eng_policy.h"
#include "sim/hw/sim_hw.h"
#include "sim/config/lparams.h"
#include "sim/lua/api_lpolicy.h"
#include "sim/config/profile.h"
#include "sim/lua/lrows.h"
#include "sim/out/runrec.h"
#include "sim/config/sandbox.h"
#include "sim/lua/sweep_exec.h"
#include "sim/out/sim_out.h"
#include "sim/out/sim_strbuf.h"
#include "sim/out/sim_timeline.h"
#include "sim/out/sim_tmp.h"
#include "sim/replay/replay.h"
#include "sim/sweep/sim_sweep.h"
#include "sim/sweep/sim_point_id.h"
#include "sim/sweep/sim_sweep_mpi.h"
#include "traces/trc.h"


/* ------------------------------------------------------------------ errors */

fs_api *fs_api_get(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, API_KEY);
    fs_api *a = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return a;
}

void fs_caller_src(lua_State *L, char *chunk, size_t n, int *line)
{
    lua_Debug ar;
    chunk[0] = 0;
    *line = 1;
    /* the nearest Lua function up the stack (skipping pcall and friends) */
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || strcmp(ar.what, "C") == 0) continue;
        snprintf(chunk, n, "%s", ar.source[0] == '@' ? ar.source + 1 : ar.short_src);
        *line = ar.currentline > 0 ? ar.currentline : 1;
        return;
    }
}

/* The one raise helper: raises a flashspec error object (metatable
 * flashspec.error) {status = the SIM_* status, code = its exit code, which
 * scripts that catch it read, msg}; where = prefix msg with the calling
 * script's chunk:line. */
int fs_raise(lua_State *L, int status, int where, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char chunk[PATH_MAX] = "";
    int line = 0;
    if (where) fs_caller_src(L, chunk, sizeof chunk, &line);
    lua_newtable(L);
    lua_pushinteger(L, status);
    lua_setfield(L, -2, "status");
    lua_pushinteger(L, sim_status_exit(status));
    lua_setfield(L, -2, "code");
    char full[1024];
    size_t n = 0;
    if (chunk[0]) n = (size_t)snprintf(full, sizeof full, "%s:%d: ", chunk, line);
    if (n < sizeof full) snprintf(full + n, sizeof full - n, "%s", msg);
    lua_pushstring(L, full);
    lua_setfield(L, -2, "msg");
    luaL_setmetatable(L, MT_ERROR);
    return lua_error(L);
}

int fs_error_status(lua_State *L, int idx, int dflt, const char **msg)
{
    idx = lua_absindex(L, idx);
    *msg = NULL;
    if (!lua_istable(L, idx)) {
        *msg = lua_tostring(L, idx);
        return dflt;
    }
    int status = dflt;
    if (lua_getmetatable(L, idx)) {
        luaL_getmetatable(L, MT_ERROR);
        if (lua_rawequal(L, -1, -2)) {
            lua_getfield(L, idx, "status");
            lua_Integer st = lua_tointeger(L, -1);
            if (st > 0 && st <= INT32_MAX) status = (int)st;
            lua_pop(L, 1);
        }
        lua_pop(L, 2);
    }
    lua_getfield(L, idx, "msg");
    *msg = lua_tostring(L, -1); /* the table stays referenced at idx */
    lua_pop(L, 1);
    return status;
}

static int error_tostring(lua_State *L)
{
    lua_getfield(L, 1, "msg");
    return 1;
}

/* ----------------------------------------------------------------- points */


/* The name of choice i of the enum point key k (sim/sweep/sim_point_id.h). */
static const char *choice(const eng_param_desc *keys, const char *k, int32_t i)
{
    return eng_params_find(keys, k)->choices[i];
}

/* Object-valued keys of fs.run / fs.sweep, in canonical (sweep) order. */
static const char *const object_keys[] = {"device", "target", "draft", "trace", "policy", NULL};
/* The other keys that are not point keys: `tags`, a map of names to strings,
 * numbers or booleans copied into the point's tag_<name> result columns (not
 * part of the point's identity), and `record`, whether the call's rows go to
 * the results files (call_record). */
static const char *const call_keys[] = {"tags", "record", NULL};

static int is_object_key(const char *k)
{
    for (int i = 0; call_keys[i]; i++)
        if (strcmp(call_keys[i], k) == 0) return 1;
    for (int i = 0; object_keys[i]; i++)
        if (strcmp(object_keys[i], k) == 0) return 1;
    return 0;
}

/* Closest valid key of fs.run/fs.sweep (object or numeric), or NULL. */
static const char *nearest_point_key(const char *k)
{
    const char *best = eng_params_nearest(sim_point_keys(), k);
    int32_t best_d = best ? eng_params_distance(k, best) : INT32_MAX;
    const char *ext = eng_params_nearest(sim_point_keys_ext(), k);
    if (ext && eng_params_distance(k, ext) < best_d) {
        best = ext;
        best_d = eng_params_distance(k, ext);
    }
    int32_t limit = (int32_t)strlen(k) / 2 < 2 ? 2 : (int32_t)strlen(k) / 2;
    const char *const *lists[2] = {object_keys, call_keys};
    for (int l = 0; l < 2; l++)
        for (int i = 0; lists[l][i]; i++) {
            int32_t d = eng_params_distance(k, lists[l][i]);
            if (d <= limit && d < best_d) {
                best = lists[l][i];
                best_d = d;
            }
        }
    return best;
}

static void check_known_keys(lua_State *L, int idx, const char *what, const char *chunk,
                             int line)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            lua_pop(L, 1);
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: keys must be names", chunk, line, what);
        }
        const char *k = lua_tostring(L, -1);
        if (!is_object_key(k) && !eng_params_find(sim_point_keys(), k) &&
            !eng_params_find(sim_point_keys_ext(), k)) {
            const char *near = nearest_point_key(k);
            int kl = slp_key_line(chunk, line, k);
            if (near)
                fs_raise(L, SIM_CONFIG, 0, "%s:%d: unknown key '%s' in %s (did you mean '%s'?)",
                      chunk, kl, k, what, near);
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: unknown key '%s' in %s", chunk, kl, k, what);
        }
    }
}

/* Fetches object key `key` of the table at idx, checking its type. */
static void *get_object(lua_State *L, int idx, const char *key, const char *mt, int required,
                        const char *what, const char *chunk, int line)
{
    lua_getfield(L, idx, key);
    void *u = luaL_testudata(L, -1, mt);
    int nil = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (u) return u;
    if (nil && !required) return NULL;
    int kl = nil ? line : slp_key_line(chunk, line, key);
    if (nil) fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: missing key '%s'", chunk, kl, what, key);
    fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: key '%s' must be a %s (from flashspec.%s)", chunk, kl,
          what, key, mt + strlen("flashspec."), mt + strlen("flashspec."));
    return NULL;
}



void fs_api_charge(lua_State *L, fs_api *a, size_t bytes, const char *chunk, int line,
                   const char *what)
{
    const fs_lua_limits *lim = a->lim;
    size_t used = sim_run_mem_in_use(a);
    if (sim_run_try_hold(a, bytes) != 0)
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: %s: needs %.1f MiB more, and with the %.1f MiB the run already holds "
                 "(Lua heap, policy states, traces, result rows) that passes its memory limit "
                 "of %zu MiB (see --max-memory-mb)",
                 chunk, line, what, (double)bytes / 1048576.0, (double)used / 1048576.0,
                 lim ? lim->mem_limit_bytes >> 20 : 0);
}



void fs_api_claim_names(lua_State *L, fs_api *a, const ud_policy *pol, const ud_device *dev,
                        const ud_model *tgt, const ud_model *drf, const char *chunk, int line)
{
    sim_run_named w = {.policy = pol->desc, .policy_params = pol->params,
                       .device_name = dev->name, .device = &dev->dev,
                       .n_variants = dev->n_variants, .variants = dev->variants,
                       .variant_names = dev->variant_names, .target_name = tgt->name,
                       .target = &tgt->model, .draft_name = drf ? drf->name : NULL,
                       .draft = drf ? &drf->model : NULL};
    char err[1024];
    int rc = sim_run_claim_names(a, &w, chunk, line, err, sizeof err);
    if (rc != SIM_OK) fs_raise(L, rc, 0, "%s", err);
}

static fs_row *row_new(lua_State *L, fs_api *a)
{
    if (a->n_rows == a->cap_rows) {
        int32_t cap = a->cap_rows ? 2 * a->cap_rows : 16;
        char chunk[PATH_MAX];
        int line;
        fs_caller_src(L, chunk, sizeof chunk, &line);
        fs_api_charge(L, a, sizeof(fs_row) * (size_t)(cap - a->cap_rows), chunk, line,
                      "result rows");
        fs_row *n = realloc(a->rows, sizeof *n * (size_t)cap);
        if (!n) fs_raise(L, SIM_NOMEM, 0, "out of memory");
        a->rows = n;
        a->cap_rows = cap;
    }
    fs_row *r = &a->rows[a->n_rows];
    memset(r, 0, sizeof *r);
    return r;
}

/* ------------------------------------------------------------ run & sweep */

static int tag_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The point's `tags` map (at idx.tags) as "name=value" lines, names sorted
 * (a Lua table's order is not stable), into out[0..n).  Raises on a tag that
 * is not a name mapped to a string, number or boolean. */
static void point_tags(lua_State *L, int idx, const char *what, const char *chunk, int line,
                       char *out, size_t n)
{
    out[0] = 0;
    lua_getfield(L, idx, "tags");
    int t = lua_gettop(L);
    if (lua_isnil(L, t)) {
        lua_pop(L, 1);
        return;
    }
    int kl = slp_key_line(chunk, line, "tags");
    if (lua_type(L, t) != LUA_TTABLE || lua_getmetatable(L, t))
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: %s: key 'tags' must be a table of names to strings, numbers or "
                 "booleans (tags = { arm = \"A\" })",
                 chunk, kl, what);
    const char *names[64];
    int nn = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        size_t len = 0;
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        int ok = k && len >= 1 && len <= 48 && (isalpha((unsigned char)k[0]) || k[0] == '_');
        for (size_t i = 1; ok && i < len; i++)
            ok = isalnum((unsigned char)k[i]) || k[i] == '_';
        if (!ok)
            fs_raise(L, SIM_CONFIG, 0,
                     "%s:%d: %s: tags: every key must be a name of 1 to 48 letters, digits or "
                     "'_' (it becomes the column tag_<name>)",
                     chunk, kl, what);
        if (nn == 64)
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: tags: more than 64 tags", chunk, kl, what);
        names[nn++] = k; /* anchored by the table */
    }
    qsort(names, (size_t)nn, sizeof names[0], tag_cmp);
    size_t used = 0;
    for (int i = 0; i < nn; i++) {
        lua_getfield(L, t, names[i]);
        char v[128];
        int ty = lua_type(L, -1);
        if (ty == LUA_TBOOLEAN) {
            snprintf(v, sizeof v, "%s", lua_toboolean(L, -1) ? "true" : "false");
        } else if (ty == LUA_TNUMBER && lua_isinteger(L, -1)) {
            snprintf(v, sizeof v, "%lld", (long long)lua_tointeger(L, -1));
        } else if (ty == LUA_TNUMBER) {
            double x = lua_tonumber(L, -1);
            if (!isfinite(x))
                fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: tags: '%s' is not a finite number",
                         chunk, kl, what, names[i]);
            sim_out_fmt_exact(v, sizeof v, x);
        } else if (ty == LUA_TSTRING) {
            size_t len;
            const char *sv = lua_tolstring(L, -1, &len);
            int ok = len < sizeof v;
            for (size_t j = 0; ok && j < len; j++)
                ok = (unsigned char)sv[j] >= 0x20 && sv[j] != 0x7f;
            if (!ok)
                fs_raise(L, SIM_CONFIG, 0,
                         "%s:%d: %s: tags: '%s' must be at most %zu bytes without control "
                         "characters",
                         chunk, kl, what, names[i], sizeof v - 1);
            snprintf(v, sizeof v, "%s", sv);
        } else {
            fs_raise(L, SIM_CONFIG, 0,
                     "%s:%d: %s: tags: '%s' must be a string, number or boolean (got %s)", chunk,
                     kl, what, names[i], luaL_typename(L, -1));
        }
        lua_pop(L, 1);
        int wrote = snprintf(out + used, n - used, "%s%s=%s", i ? "\n" : "", names[i], v);
        if (wrote < 0 || (size_t)wrote >= n - used)
            fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: tags: more than %zu bytes in all", chunk, kl,
                     what, n - 1);
        used += (size_t)wrote;
    }
    lua_pop(L, 1);
}

static sim_id point_identity(const ud_policy *pol, const ud_device *dev, const ud_model *tgt,
                             const ud_model *drf, const fs_row *r, const sim_point_opts *po,
                             const sim_point_ext *px, const fs_api *a, const sim_point *pt,
                             sim_id *seed_id);


/* Validates the point described by the table at idx and fills the next result
 * row (parameters), *pt (what the replay needs; it borrows from the Lua
 * userdata, which the caller keeps alive), the point's stable *id and the
 * *seed_id its replay seed derives from.  Raises on invalid input. */
static fs_row *build_point(lua_State *L, int idx, const char *what, const char *chunk, int line,
                           sim_point *pt, sim_id *id, sim_id *seed_id)
{
    fs_api *a = fs_api_get(L);
    check_known_keys(L, idx, what, chunk, line);
    ud_device *dev = get_object(L, idx, "device", MT_DEVICE, 1, what, chunk, line);
    ud_model *tgt = get_object(L, idx, "target", MT_MODEL, 1, what, chunk, line);
    ud_model *drf = get_object(L, idx, "draft", MT_MODEL, 0, what, chunk, line);
    ud_trace *tr = get_object(L, idx, "trace", MT_TRACE, 1, what, chunk, line);
    ud_policy *pol = get_object(L, idx, "policy", MT_POLICY, 1, what, chunk, line);
    if (pol->desc->needs_draft && !drf)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: policy %s needs a draft model (key 'draft')",
              chunk, line, what, pol->desc->name);

    sim_point_opts po;
    slp_check_fields(L, idx, sim_point_keys(), &po, what, chunk, line);
    sim_point_ext px;
    slp_check_fields(L, idx, sim_point_keys_ext(), &px, what, chunk, line);
    const trc_trace *tt = fs_trace_get(L, tr, chunk, line);
    sim_run_warn_short_trace(a, tt, tr->entry->name, po.max_new_tokens, chunk, line);

    fs_check_model_pair(L, a, tt, tr->entry->name, tgt, pol->desc->needs_draft ? drf : NULL, what,
                        chunk, line);
    char tags[sizeof((fs_row *)0)->tags];
    point_tags(L, idx, what, chunk, line, tags, sizeof tags);
    fs_row *r = row_new(L, a);
    snprintf(r->tags, sizeof r->tags, "%s", tags);
    snprintf(r->policy, sizeof r->policy, "%s", pol->desc->name);
    snprintf(r->policy_params, sizeof r->policy_params, "%s", pol->label);
    snprintf(r->device, sizeof r->device, "%s", dev->name);
    snprintf(r->target, sizeof r->target, "%s", tgt->name);
    snprintf(r->draft, sizeof r->draft, "%s",
             pol->desc->needs_draft && drf ? drf->name : "none");
    snprintf(r->trace, sizeof r->trace, "%s", tr->entry->name);
    r->dram_fraction = po.dram_fraction;
    r->max_new_tokens = po.max_new_tokens;
    r->prompts = po.prompts;
    r->prompt_offset = px.prompt_offset;
    r->tune_train = NAN; /* set by flashspec.tune on its rows */
    r->seed = (uint64_t)po.seed;
    const trc_trace *trace = fs_trace_get(L, tr, chunk, line);
    r->trace_checksum = trc_checksum(trace);
    if (!a->no_variants) /* a recorded row: its names must each name one thing */
        fs_api_claim_names(L, a, pol, dev, tgt, pol->desc->needs_draft ? drf : NULL, chunk,
                           line);

    int32_t n_variants = a->no_variants ? 0 : dev->n_variants;
    int32_t n_bracket = a->no_variants ? 0 : tr->n_bracket;
    for (int32_t i = 0; i < n_bracket; i++) {
        ud_trace end = {.entry = tr->bracket[i]};
        tr->bracket_traces[i] = fs_trace_get(L, &end, chunk, line);
    }
    *pt = (sim_point){
        .device = &dev->dev,
        .target = &tgt->model,
        .draft = drf ? &drf->model : NULL,
        .trace = trace,
        .policy = pol->desc,
        .policy_params = pol->params,
        .dram_fraction = po.dram_fraction,
        .max_new_tokens = po.max_new_tokens,
        .prompts = po.prompts,
        .prompt_offset = px.prompt_offset,
        .seed = (uint64_t)po.seed,
        .accept = po.accept,
        .top_p = po.top_p,
        .temperature = po.temperature,
        .runtime = po.runtime,
        .synth_drawn = px.synth_tokens,
        .variants = n_variants ? dev->variants : NULL,
        .n_variants = n_variants,
        .trace_variants = n_bracket ? tr->bracket_traces : NULL,
        .n_trace_variants = n_bracket,
    };
    snprintf(r->accept, sizeof r->accept, "%s", choice(sim_point_keys(), "accept", po.accept));
    r->top_p = po.top_p;
    r->temperature = po.temperature;
    snprintf(r->runtime, sizeof r->runtime, "%s", choice(sim_point_keys(), "runtime", po.runtime));
    snprintf(r->synth_tokens, sizeof r->synth_tokens, "%s", choice(sim_point_keys_ext(), "synth_tokens", px.synth_tokens));
    *id = point_identity(pol, dev, tgt, drf, r, &po, &px, a, pt, seed_id);
    return r;
}

/* The point's id (sim_sweep_store.h, sim_point_ident_hash): policy,
 * profiles (by name and by every value), trace checksum and every key of
 * sim_point_keys(), hashed from the validated values, so a key added to sim_point_keys()
 * enters the id by itself.  *seed_id is the same hash less synth_tokens: the
 * replay seed derives from it, so both constructions of synthesised ids
 * replay the same random stream. */
static sim_id point_identity(const ud_policy *pol, const ud_device *dev, const ud_model *tgt,
                             const ud_model *drf, const fs_row *r, const sim_point_opts *po,
                             const sim_point_ext *px, const fs_api *a, const sim_point *pt,
                             sim_id *seed_id)
{
    const char *digests[FS_MAX_PLUGINS];
    int32_t nd = 0;
    for (int i = 0; i < a->n_plugins && nd < FS_MAX_PLUGINS; i++)
        if (a->plugins[i].desc == pol->desc) digests[nd++] = a->plugins[i].digest;
    const char *vnames[SIM_PROFILE_MAX_VARIANTS];
    int32_t nv = a->no_variants ? 0 : dev->n_variants;
    for (int32_t i = 0; i < nv; i++)
        vnames[i] = dev->variant_names[i];
    uint64_t bracket[FS_TRACE_BRACKET_MAX];
    for (int32_t i = 0; i < pt->n_trace_variants; i++)
        bracket[i] = trc_checksum(pt->trace_variants[i]);
    sim_point_ident x = {
        .policy = pol->desc, .policy_params = pol->params,
        .plugin_digests = digests, .n_plugin_digests = nd,
        .device = dev->name, .dev = &dev->dev, .target = tgt->name, .tgt = &tgt->model,
        .draft = r->draft, .drf = drf ? &drf->model : NULL,
        .trace_checksum = r->trace_checksum,
        .point_keys = sim_point_keys(), .point_values = po, .prompt_offset = px->prompt_offset,
        .n_variants = nv, .variant_names = vnames, .variants = dev->variants,
        .n_bracket = pt->n_trace_variants, .bracket_checksums = bracket,
        .synth_tokens = px->synth_tokens,
    };
    return sim_point_ident_hash(&x, seed_id);
}

/* Validates the point table at idx into *s (raises on invalid input). */
static void stage_point(lua_State *L, int idx, const char *what, const char *chunk, int line,
                        sim_sweep_staged *s)
{
    memset(s, 0, sizeof *s);
    sim_id seed_id;
    fs_row *r = build_point(L, idx, what, chunk, line, &s->pt, &s->id, &seed_id);
    s->row = *r; /* the slot stays uncommitted until the point has run */
    s->pt.seed = sim_id_seed(seed_id);
}

/* `record` of the call's table at idx (fs.run, fs.sweep): whether its rows
 * go to the results files and the run record (true, the default) or only to
 * the script (false); a `record` of one entry of `points` that differs from
 * the call's is refused (it applies to the whole call). */
static int call_record(lua_State *L, int idx, const char *what, const char *chunk, int line)
{
    int t = lua_getfield(L, idx, "record");
    int record = t == LUA_TNIL || lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
        fs_raise(L, SIM_CONFIG, 0, "%s:%d: %s: key 'record' must be a boolean (got %s)", chunk,
                 slp_key_line(chunk, line, "record"), what, lua_typename(L, t));
    return record;
}

/* The entries of the `points` list of the sweep table at idx carry no
 * `record` of their own: it applies to the whole call. */
static void check_entries_record(lua_State *L, int idx, const char *chunk, int line)
{
    if (lua_getfield(L, idx, "points") == LUA_TTABLE) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            int is_table = lua_rawgeti(L, -1, i) == LUA_TTABLE;
            int has = is_table && lua_getfield(L, -1, "record") != LUA_TNIL;
            lua_pop(L, is_table ? 2 : 1);
            if (has)
                fs_raise(L, SIM_CONFIG, 0,
                         "%s:%d: flashspec.sweep: points[%lld]: key 'record' applies to the "
                         "whole call: set it beside 'points', not in one entry",
                         chunk, slp_key_line(chunk, line, "record"), (long long)i);
        }
    }
    lua_pop(L, 1);
}

/* Commits a run point's row to the script's results and run record. */
static void commit_point(lua_State *L, fs_api *a, const sim_sweep_staged *s)
{
    fs_row *r = row_new(L, a);
    *r = s->row;
    if (a->rec) { /* every profile userdata starts with its values (api_impl.h) */
        const ud_device *dev = (const ud_device *)s->pt.device;
        const ud_model *tgt = (const ud_model *)s->pt.target;
        const ud_model *drf = strcmp(r->draft, "none") ? (const ud_model *)s->pt.draft : NULL;
        fs_runrec_point rp = {.device = &dev->dev,
                              .variants = s->pt.variants,
                              .variant_names = dev->variant_names,
                              .n_variants = s->pt.variants ? s->pt.n_variants : 0,
                              .device_name = r->device,
                              .target = &tgt->model,
                              .draft = drf ? &drf->model : NULL,
                              .target_name = r->target,
                              .draft_name = r->draft,
                              .policy = s->pt.policy,
                              .policy_params = s->pt.policy_params};
        if (fs_runrec_add(a->rec, &rp) != 0) fs_raise(L, SIM_NOMEM, 0, "out of memory");
    }
    a->n_rows++;
}

/* A run point's row pushed to the script; with record, first committed to
 * the script's results and run record. */
static void push_point(lua_State *L, fs_api *a, const sim_sweep_staged *s, int record)
{
    if (record) commit_point(L, a, s);
    fs_row_push(L, &a->meta, &s->row);
    char hex[33];
    sim_id_hex(s->id, hex);
    lua_pushstring(L, hex);
    lua_setfield(L, -2, "point_id");
}

static void warn_unbound_caps(fs_api *a, const sim_sweep_staged *sp, int64_t n, const char *chunk,
                              int line);

/* Runs the point described by the table at idx and pushes its result row. */
static int run_point(lua_State *L, int idx, const char *what, const char *chunk, int line)
{
    fs_api *a = fs_api_get(L);
    int record = call_record(L, idx, what, chunk, line);
    sim_sweep_staged *s = lua_newuserdatauv(L, sizeof *s, 0);
    a->no_variants = 0;
    stage_point(L, idx, what, chunk, line, s);
    fs_exec_run(L, &a->ex, s, 1, 1, chunk, line);
    if (s->code) return fs_raise(L, s->code, 0, "%s", s->err);
    warn_unbound_caps(a, s, 1, chunk, line);
    if (!a->quiet && a->ex.rank == 0)
        fprintf(stderr,
                "flashspec: %s %s dram=%.2f: %.3f tokens/s (%.2f s simulated in %.3f s%s)\n",
                s->row.policy, s->row.target, s->row.dram_fraction, s->row.st.tokens_per_s,
                s->row.st.total_ms / 1000.0, s->row.st.sim_wall_s,
                s->state == SIM_SWEEP_RESUMED ? ", resumed" : "");
    push_point(L, a, s, record);
    return 1;
}


/* Whether the script set the tree-size cap of staged point s's policy. */
static int cap_set(const sim_sweep_staged *s)
{
    const ud_policy *u =
        (const ud_policy *)((const char *)s->pt.policy_params - offsetof(ud_policy, params));
    return u->cap_set;
}

/* Points whose tree-size cap the script set (tree_nodes or the policy's own
 * key) and that never bound it: the policy sized its trees below the cap.
 * One warning line per script; a policy left at its default cap sizes its
 * trees by its own rule, which is no news. */
static void warn_unbound_caps(fs_api *a, const sim_sweep_staged *sp, int64_t n, const char *chunk,
                              int line)
{
    int64_t ran, first;
    int64_t count = sim_sweep_unbound_caps(sp, n, cap_set, &ran, &first);
    if (!count || a->ex.rank != 0 || !sim_run_warn_once(a, 0x7472656563617073ull)) return;
    const sim_sweep_staged *f = &sp[first];
    fprintf(stderr,
            "flashspec: warning: %s:%d: in %lld of %lld point%s the tree-size cap the script "
            "set never bound (e.g. %s: tree_nodes %.0f, at most %lld verified); the policy "
            "sized its trees below it (result column verify_rows_max; said once per script)\n",
            chunk, line, (long long)count, (long long)ran, ran == 1 ? "" : "s", f->row.policy,
            sim_sweep_tree_cap(f->pt.policy, f->pt.policy_params),
            (long long)f->row.st.verify_rows_max);
}


static int l_run(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    char chunk[PATH_MAX];
    int line;
    fs_caller_src(L, chunk, sizeof chunk, &line);
    return run_point(L, 1, "flashspec.run", chunk, line);
}

sim_sweep_staged *fs_api_stage(lua_State *L, int idx, const char *chunk, int line, int record,
                               int64_t *n)
{
    fs_api *a = fs_api_get(L);
    idx = lua_absindex(L, idx);
    /* canonical key order; the last varies fastest */
    const char *keys[64];
    int nk = 0;
    for (int i = 0; object_keys[i]; i++) keys[nk++] = object_keys[i];
    for (const eng_param_desc *d = sim_point_keys(); d->name && nk < 64; d++) keys[nk++] = d->name;
    for (const eng_param_desc *d = sim_point_keys_ext(); d->name && nk < 64; d++) keys[nk++] = d->name;
    keys[nk++] = "tags";
    fs_sweep_expand(L, idx, keys, nk, check_known_keys, chunk, line);
    /* an evaluation (calibrate, tune) reads its metrics only: the devices'
     * standing variants are not replayed */
    a->no_variants = !record;
    sim_sweep_staged *sp = fs_sweep_stage_all(L, lua_gettop(L), stage_point, chunk, line, n);
    /* the whole point list is valid before any point runs: one mistake, one
     * line (the first invalid point's message and how many share it) */
    int64_t bad = 0, same = 0, first = -1;
    for (int64_t i = 0; i < *n; i++) {
        if (!sp[i].code) continue;
        bad++;
        if (first < 0) first = i;
        same += strcmp(sp[i].err, sp[first].err) == 0;
    }
    if (bad) {
        char more[96] = "";
        if (bad == 1 && *n > 1)
            snprintf(more, sizeof more, " (point %lld of %lld)", (long long)first + 1,
                     (long long)*n);
        else if (bad > 1 && same == bad)
            snprintf(more, sizeof more, " (%lld of %lld points)", (long long)bad, (long long)*n);
        else if (bad > 1)
            snprintf(more, sizeof more, " (point %lld of %lld; %lld points invalid)",
                     (long long)first + 1, (long long)*n, (long long)bad);
        fs_raise(L, sp[first].code, 0, "%s%s; no point ran", sp[first].err, more);
    }
    return sp;
}

sim_sweep_staged *fs_api_sweep(lua_State *L, int idx, const char *chunk, int line, int record,
                               int64_t *n)
{
    fs_api *a = fs_api_get(L);
    sim_sweep_staged *sp = fs_api_stage(L, idx, chunk, line, record, n);
    if (record) {
        fs_exec_run(L, &a->ex, sp, *n, 0, chunk, line);
        warn_unbound_caps(a, sp, *n, chunk, line);
    } else {
        sim_sweep_eval ev = {.sp = sp, .n = *n, .now = 0};
        fs_api_run_evals(L, &ev, 1, NULL, chunk, line);
    }
    return sp;
}

void fs_api_run_evals(lua_State *L, sim_sweep_eval *ev, int32_t m, sim_sweep_memo *memo,
                      const char *chunk, int line)
{
    fs_api *a = fs_api_get(L);
    if (sim_sweep_evals_lookup(ev, m, memo) != SIM_OK)
        fs_raise(L, SIM_NOMEM, 0, "out of memory");
    /* the points that run: a userdata, counted against the script's memory */
    size_t cnt = (size_t)sim_sweep_evals_total(ev, m);
    cnt = cnt ? cnt : 1;
    sim_sweep_staged *run = lua_newuserdatauv(L, sizeof *run * cnt + sizeof(int64_t) * cnt, 0);
    int64_t *where = (int64_t *)(void *)(run + cnt);
    char err[1024]; /* fs_raise's message holds as much */
    int rc = sim_sweep_exec_evals(&a->ex, ev, m, memo, run, where, chunk, line, err, sizeof err);
    if (rc != SIM_OK) fs_raise(L, rc, 0, "%s", err);
    lua_pop(L, 1); /* run[] */
}

void fs_api_expand(lua_State *L, int idx, const char *chunk, int line)
{
    const char *keys[64];
    int nk = 0;
    for (int i = 0; object_keys[i]; i++) keys[nk++] = object_keys[i];
    for (const eng_param_desc *d = sim_point_keys(); d->name && nk < 64; d++) keys[nk++] = d->name;
    for (const eng_param_desc *d = sim_point_keys_ext(); d->name && nk < 64; d++) keys[nk++] = d->name;
    keys[nk++] = "tags";
    fs_sweep_expand(L, lua_absindex(L, idx), keys, nk, check_known_keys, chunk, line);
}

void fs_api_push_rows(lua_State *L, sim_sweep_staged *sp, int64_t n, int record)
{
    fs_api *a = fs_api_get(L);
    lua_createtable(L, (int)(n < 1 << 20 ? n : 1 << 20), 0);
    for (int64_t i = 0; i < n; i++) {
        if (sp[i].code == 0)
            push_point(L, a, &sp[i], record);
        else
            fs_sweep_push_failed(L, &sp[i], i);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* Expands (sweep_exec.c), stages every point (a point that fails validation
 * keeps its error), runs them all at once, returns one table per point. */
static int l_sweep(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    char chunk[PATH_MAX];
    int line;
    fs_caller_src(L, chunk, sizeof chunk, &line);
    int record = call_record(L, 1, "flashspec.sweep", chunk, line);
    check_entries_record(L, 1, chunk, line);
    int64_t n;
    sim_sweep_staged *sp = fs_api_sweep(L, 1, chunk, line, 1, &n);
    fs_api_push_rows(L, sp, n, record);
    return 1;
}

/* ------------------------------------------------------------------ setup */

static void new_meta(lua_State *L, const char *name, int with_index)
{
    luaL_newmetatable(L, name);
    lua_pushcfunction(L, fs_name_tostring);
    lua_setfield(L, -2, "__tostring");
    if (with_index) {
        lua_pushcfunction(L, fs_name_index);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
}

/* flashspec.policy.NAME for a NAME the build does not register: one line with
 * the nearest names, instead of "attempt to call a nil value" later (a script
 * that probes for a policy uses rawget(flashspec.policy, NAME)). */
static int policy_index(lua_State *L)
{
    const char *k = lua_tostring(L, 2);
    if (!k || lua_type(L, 2) != LUA_TSTRING) return fs_raise(L, SIM_CONFIG, 1,
                                                             "flashspec.policy: key is not a name");
    int32_t n;
    const eng_policy_desc *const *reg = eng_policy_registry(&n);
    const char *best = NULL;
    int32_t bd = 0;
    char all[512] = "";
    size_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t d = eng_params_distance(k, reg[i]->name);
        if (!best || d < bd) best = reg[i]->name, bd = d;
        if (at < sizeof all)
            at += (size_t)snprintf(all + at, sizeof all - at, "%s%s", i ? ", " : "", reg[i]->name);
    }
    int32_t near = (int32_t)strlen(k) / 2 > 2 ? (int32_t)strlen(k) / 2 : 2;
    if (best && bd <= near)
        return fs_raise(L, SIM_CONFIG, 1, "unknown policy '%s' (did you mean '%s'?)", k, best);
    return fs_raise(L, SIM_CONFIG, 1, "unknown policy '%s' (policies: %s)", k, all);
}

/* table[name] = f as a flashspec API call (fs_sandbox_api_call): the table
 * on top of the stack. */
static void api_fn(lua_State *L, lua_CFunction f, const char *name)
{
    lua_pushcfunction(L, f);
    lua_pushcclosure(L, fs_sandbox_api_call, 1);
    lua_setfield(L, -2, name);
}

void fs_api_open(lua_State *L, fs_api *a, const fs_script_opts *o)
{
    lua_pushlightuserdata(L, a);
    lua_setfield(L, LUA_REGISTRYINDEX, API_KEY);
    luaL_newmetatable(L, MT_ERROR);
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    new_meta(L, MT_DEVICE, 1);
    new_meta(L, MT_MODEL, 1);
    new_meta(L, MT_TRACE, 1);
    new_meta(L, MT_POLICY, 1);

    lua_newtable(L); /* flashspec */
    lua_pushcfunction(L, fs_l_device);
    lua_setfield(L, -2, "device");
    lua_pushcfunction(L, fs_l_model);
    lua_setfield(L, -2, "model");
    api_fn(L, l_run, "run");
    api_fn(L, l_sweep, "sweep");
    api_fn(L, fs_l_calibrate, "calibrate");
    api_fn(L, fs_l_tune, "tune");
    lua_pushstring(L, FS_VERSION);
    lua_setfield(L, -2, "version");
    /* flashspec.trace: callable table with .synth */
    lua_newtable(L);
    api_fn(L, fs_l_trace_synth, "synth");
    lua_newtable(L);
    api_fn(L, fs_l_trace, "__call");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "trace");
    /* flashspec.policy.<name> from the engine registry */
    lua_newtable(L);
    int32_t n;
    const eng_policy_desc *const *reg = eng_policy_registry(&n);
    for (int32_t i = 0; i < n; i++) {
        lua_pushlightuserdata(L, (void *)reg[i]);
        lua_pushcclosure(L, fs_l_policy_make, 1);
        lua_setfield(L, -2, reg[i]->name);
    }
    lua_pushcfunction(L, fs_l_policy_lua);
    lua_setfield(L, -2, "lua");
    for (int i = 0; i < o->n_plugins; i++) { /* --plugin: names checked unique */
        lua_pushlightuserdata(L, (void *)o->plugins[i].desc);
        lua_pushcclosure(L, fs_l_policy_make, 1);
        lua_setfield(L, -2, o->plugins[i].desc->name);
    }
    lua_newtable(L);
    lua_pushcfunction(L, policy_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "policy");
    /* flashspec.args: the --arg key=value pairs, values as strings */
    lua_newtable(L);
    for (int i = 0; i < o->n_args; i++) {
        const char *eq = strchr(o->args[i], '=');
        if (!eq || eq == o->args[i]) continue; /* the CLI refuses these */
        lua_pushlstring(L, o->args[i], (size_t)(eq - o->args[i]));
        lua_pushstring(L, eq + 1);
        lua_settable(L, -3);
    }
    lua_setfield(L, -2, "args");
    lua_setglobal(L, "flashspec");
}
