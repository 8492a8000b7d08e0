/*
 * profile.c -- sandboxed loading of device/model profiles (contract in
 * profile.h).
 *
 * Each file owns a fresh FS_SANDBOX_PROFILE state (sandbox.h) capped at
 * PROFILE_MEM_CAP bytes and PROFILE_STEPS_CAP instructions.  Everything that
 * can raise a Lua error runs inside one lua_pcall of run_profile(), a
 * lua_CFunction, so no longjmp ever leaves the Lua-managed frames; the state
 * is closed on every path.
 *
 * Inheritance (`base = "NAME"`): the files of a chain are read one at a time,
 * from the derived file towards the root, each in its own state that is
 * closed before the next opens (never two states at once).  Each file's keys
 * are validated into a zeroed scratch struct (an overlay: only the keys it
 * sets; the root: the full check with defaults and required keys) and then
 * copied into out for the keys no nearer file has set ("taken"), so the
 * nearest file wins.  Cycles are found by file identity (device, inode), and
 * base names resolve only through sim_profile_path.
 */
#include "profile.h"
#include "cfg_impl.h"
#include "home.h"

#include "sim/config/lparams.h"
#include "sim/config/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROFILE_MEM_CAP ((size_t)64 << 20)
#define PROFILE_STEPS_CAP 50000000LL
#define PROFILE_SECONDS_CAP 10.0 /* wall clock: a profile is data, read in well under 1 s */

/* Lua names a file chunk by its path shortened to LUA_IDSIZE ("...tail").
 * Rewrites such a "...tail:LINE: msg" into "path:LINE: msg" in out. */
static void full_path_prefix(const char *path, const char *msg, char *out, size_t n)
{
    size_t plen = strlen(path);
    if (strncmp(msg, path, plen) != 0 && strncmp(msg, "...", 3) == 0) {
        const char *colon = strchr(msg + 3, ':');
        while (colon && !(colon[1] >= '0' && colon[1] <= '9'))
            colon = strchr(colon + 1, ':');
        size_t tail = colon ? (size_t)(colon - (msg + 3)) : 0;
        if (colon && tail <= plen && strncmp(path + plen - tail, msg + 3, tail) == 0) {
            snprintf(out, n, "%s%s", path, colon);
            return;
        }
    }
    snprintf(out, n, "%s", msg);
}

/* The error message of a failed chunk as one line "PATH:LINE: ...": Lua's
 * shortened chunk name is expanded, a message without a position (error(x, 0),
 * errors raised from C) gets "PATH:1: ", and line breaks the profile put into
 * its own message become spaces. */
static void one_line_message(const char *path, const char *msg, char *out, size_t n)
{
    char tmp[1024];
    full_path_prefix(path, msg, tmp, sizeof tmp);
    size_t plen = strlen(path);
    if (strncmp(tmp, path, plen) == 0 && tmp[plen] == ':')
        snprintf(out, n, "%s", tmp);
    else
        snprintf(out, n, "%s:1: %s", path, tmp);
    for (char *c = out; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

/* Longest resolved path of a base profile. */
#define BASE_PATH_CAP 4096

static int variant_name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= SIM_VARIANT_NAME_CAP || strlen(s) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return 0;
    }
    return 1;
}

static int cmp_variant(const void *a, const void *b)
{
    return strcmp(((const sim_device_variant *)a)->name, ((const sim_device_variant *)b)->name);
}

/* The file's `variants` table (profile.h "Standing variants") into j->vars;
 * removed from the table so that the key validation does not see it. */
static void read_variants(lua_State *L, int t, job *j)
{
    lua_getfield(L, t, "variants");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    int line = slp_key_line(j->path, 1, "variants");
    if (!lua_istable(L, -1)) {
        lua_pushfstring(L,
                        "%s:%d: %s: key 'variants' must be a table of name = { key = value, "
                        "... } (got %s)",
                        j->path, line, j->what, luaL_typename(L, -1));
        lua_error(L);
    }
    int vt = lua_gettop(L);
    sim_device_variants *vs = j->vars;
    memset(vs, 0, sizeof *vs);
    j->has_vars = 1;
    lua_pushnil(L);
    while (lua_next(L, vt)) {
        size_t n = 0;
        const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &n) : NULL;
        if (!name || !variant_name_ok(name, n)) {
            lua_pushfstring(L,
                            "%s:%d: %s: each variant needs a name of letters, digits and _ "
                            "(at most %d bytes)",
                            j->path, line, j->what, SIM_VARIANT_NAME_CAP - 1);
            lua_error(L);
        }
        if (vs->n == SIM_PROFILE_MAX_VARIANTS) {
            lua_pushfstring(L, "%s:%d: %s: at most %d variants", j->path, line, j->what,
                            SIM_PROFILE_MAX_VARIANTS);
            lua_error(L);
        }
        if (!lua_istable(L, -1)) {
            lua_pushfstring(L, "%s:%d: %s: variant '%s' must be a table of keys (got %s)", j->path,
                            slp_key_line(j->path, line, name), j->what, name, luaL_typename(L, -1));
            lua_error(L);
        }
        lua_getfield(L, -1, "name");
        int named = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (named) {
            lua_pushfstring(L, "%s:%d: %s: variant '%s' cannot set 'name'", j->path,
                            slp_key_line(j->path, line, name), j->what, name);
            lua_error(L);
        }
        sim_device_variant *v = &vs->v[vs->n++];
        memcpy(v->name, name, n + 1);
        char what[96];
        snprintf(what, sizeof what, "%s variant '%s'", j->what, name);
        slp_apply_table_text(L, lua_gettop(L), j->keys, &v->delta, v->set, what, j->path,
                             slp_key_line(j->path, line, name), NULL);
        lua_pop(L, 1);
    }
    qsort(vs->v, (size_t)vs->n, sizeof vs->v[0], cmp_variant);
    lua_pop(L, 1);
    lua_pushliteral(L, "variants");
    lua_pushnil(L);
    lua_rawset(L, t);
}

/* lua_CFunction run under lua_pcall: [1] = job, [2] = the loaded chunk. */
static int run_profile(lua_State *L)
{
    job *j = lua_touserdata(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 0, 1);
    if (!lua_istable(L, -1)) {
        lua_pushfstring(L, "%s:1: %s must return a table (got %s)", j->path, j->what,
                        luaL_typename(L, -1));
        return lua_error(L);
    }
    int t = lua_gettop(L);
    if (j->kind) {
        lua_getfield(L, t, "base");
        if (!lua_isnil(L, -1)) {
            j->base_line = slp_key_line(j->path, 1, "base");
            if (lua_type(L, -1) != LUA_TSTRING) {
                lua_pushfstring(L, "%s:%d: %s: key 'base' must be a string (got %s)", j->path,
                                j->base_line, j->what, luaL_typename(L, -1));
                return lua_error(L);
            }
            size_t n;
            const char *s = lua_tolstring(L, -1, &n);
            if (n >= sizeof j->base || strlen(s) != n) {
                lua_pushfstring(L,
                                "%s:%d: %s: key 'base' must be a profile name of at most %d bytes",
                                j->path, j->base_line, j->what, (int)sizeof j->base - 1);
                return lua_error(L);
            }
            memcpy(j->base, s, n + 1);
            j->has_base = 1;
            lua_pushliteral(L, "base");
            lua_pushnil(L);
            lua_rawset(L, t); /* not one of the keys: keep it out of the validation */
        }
        lua_pop(L, 1);
    }
    if (j->meta) cfg_read_meta(L, t, j);
    if (j->vars) read_variants(L, t, j);
    for (size_t i = 0; j->set && i < j->nkeys; i++) { /* what the table itself holds */
        lua_getfield(L, t, j->keys[i].name);
        j->set[i] = !lua_isnil(L, -1);
        lua_pop(L, 1);
    }
    if (j->has_base || j->overlay || (j->meta && j->meta->has_parts)) {
        slp_apply_table_text(L, t, j->keys, j->out, j->present, j->what, j->path, 1, NULL);
    } else {
        slp_check_table(L, t, j->keys, j->out, j->what, j->path, 1);
        memset(j->present, 1, j->nkeys);
    }
    if (j->meta) cfg_check_meta(L, j);
    return 0;
}

static void base_name(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t len = strlen(b);
    if (len > 4 && strcmp(b + len - 4, ".lua") == 0) len -= 4;
    if (len >= n) len = n - 1;
    memcpy(out, b, len);
    out[len] = '\0';
}

/* Runs one file in its own sandboxed state and validates what it returns
 * into j->out (j->has_base, j->base, j->base_line tell whether it derives). */
int cfg_load_file(job *j, char *err, size_t errlen)
{
    const char *path = j->path;
    /* non-blocking, regular files only: a FIFO must not hang the load */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open %s: %s", path, j->what, strerror(errno));
        return SIM_MISSING;
    }
    struct stat fst;
    int regular = fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode);
    close(fd);
    if (!regular) {
        snprintf(err, errlen, "%s: cannot open %s: not a regular file", path, j->what);
        return SIM_MISSING;
    }

    fs_lua_limits lim = {.mem_limit_bytes = PROFILE_MEM_CAP,
                         .step_limit = PROFILE_STEPS_CAP,
                         .max_seconds = PROFILE_SECONDS_CAP};
    lua_State *L = fs_sandbox_new(FS_SANDBOX_PROFILE, &lim);
    if (!L) {
        snprintf(err, errlen, "%s: out of memory", path);
        return SIM_NOMEM;
    }
    int rc = SIM_OK;
    lua_pushcfunction(L, run_profile);
    lua_pushlightuserdata(L, j);
    int st = luaL_loadfilex(L, path, "t");
    if (st == LUA_OK) st = lua_pcall(L, 2, 0, 0);
    if (st != LUA_OK) {
        const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (st == LUA_ERRMEM)
            snprintf(err, errlen, "%s:1: %s exceeds the memory limit", path, j->what);
        else if (msg)
            one_line_message(path, msg, err, errlen);
        else
            snprintf(err, errlen, "%s:1: %s raised a non-string error", path, j->what);
        rc = SIM_CONFIG;
    }
    lua_close(L);
    return rc;
}

/* Bytes of the field a key row describes (lists: the element array). */
size_t cfg_field_size(const eng_param_desc *d)
{
    switch (d->type) {
    case ENG_PARAM_DOUBLE:
        return sizeof(double);
    case ENG_PARAM_STRING:
        return (size_t)d->cap;
    case ENG_PARAM_DOUBLE_LIST:
        return (size_t)d->cap * sizeof(double);
    case ENG_PARAM_INT_LIST:
        return (size_t)d->cap * sizeof(int32_t);
    default:
        return sizeof(int32_t);
    }
}

/* Bytes from the start of the struct to the end of its last described field. */
static size_t params_extent(const eng_param_desc *keys)
{
    size_t end = 1;
    for (const eng_param_desc *d = keys; d->name; d++) {
        if (d->offset + cfg_field_size(d) > end) end = d->offset + cfg_field_size(d);
        int list = d->type == ENG_PARAM_DOUBLE_LIST || d->type == ENG_PARAM_INT_LIST;
        if (list && d->count_offset + sizeof(int32_t) > end)
            end = d->count_offset + sizeof(int32_t);
    }
    return end;
}

/* Copies into out every field src sets that no nearer file has (taken). */
void cfg_merge_under(const eng_param_desc *keys, void *out, const void *src,
                        const unsigned char *present, unsigned char *taken)
{
    for (size_t i = 0; keys[i].name; i++) {
        const eng_param_desc *d = &keys[i];
        if (!present[i] || taken[i]) continue;
        memcpy((char *)out + d->offset, (const char *)src + d->offset, cfg_field_size(d));
        if (d->type == ENG_PARAM_DOUBLE_LIST || d->type == ENG_PARAM_INT_LIST)
            memcpy((char *)out + d->count_offset, (const char *)src + d->count_offset,
                   sizeof(int32_t));
        taken[i] = 1;
    }
}

/* One file of a chain: where it is and which file it is. */
typedef struct level {
    const char *path;
    char buf[BASE_PATH_CAP]; /* path of a base profile */
    int has_id;
    dev_t dev;
    ino_t ino;
} level;

static void level_identify(level *lv)
{
    struct stat st;
    lv->has_id = stat(lv->path, &st) == 0;
    if (lv->has_id) {
        lv->dev = st.st_dev;
        lv->ino = st.st_ino;
    }
}

/* "a -> b -> ... -> next" for the files levels[0..n) and the base name next. */
static void chain_text(const level *levels, int n, const char *next, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        char name[128];
        base_name(levels[i].path, name, sizeof name);
        used += (size_t)snprintf(out + used, len - used, "%s -> ", name);
    }
    if (used < len) snprintf(out + used, len - used, "%s", next);
}

/* After file `depth` of the chain (j) named a base: resolves it into
 * levels[depth + 1] or reports why not. */
static int resolve_base(const job *j, level *levels, int depth, char *err, size_t errlen)
{
    char chain[384];
    if (depth >= SIM_PROFILE_MAX_BASES) {
        chain_text(levels, depth + 1, j->base, chain, sizeof chain);
        snprintf(err, errlen, "%s:%d: %s: base chain deeper than %d profiles (%s)", j->path,
                 j->base_line, j->what, SIM_PROFILE_MAX_BASES, chain);
        return SIM_CONFIG;
    }
    level *nx = &levels[depth + 1];
    nx->path = nx->buf;
    /* along the search path; a base that is a file of the chain already (a
     * user profile that shadows a shipped one of the same name and derives
     * from it) is looked for further along */
    int at = sim_profile_find(j->kind, j->base, 0, nx->buf, sizeof nx->buf);
    for (int again = 1; at >= 0 && again;) {
        level_identify(nx);
        again = 0;
        for (int i = 0; i <= depth && !again; i++)
            again = levels[i].has_id && nx->has_id && levels[i].dev == nx->dev &&
                    levels[i].ino == nx->ino;
        if (again) {
            char later[BASE_PATH_CAP];
            int next = sim_profile_find(j->kind, j->base, at + 1, later, sizeof later);
            if (next < 0) break; /* nothing further: the cycle is reported below */
            snprintf(nx->buf, sizeof nx->buf, "%s", later);
            at = next;
        }
    }
    if (at == -2) {
        snprintf(err, errlen,
                 "%s:%d: %s: invalid base profile name '%s' (letters, digits and . _ + -; no "
                 "'/' or '..')",
                 j->path, j->base_line, j->what, j->base);
        return SIM_CONFIG;
    }
    level_identify(nx);
    if (!nx->has_id) {
        snprintf(err, errlen, "%s:%d: %s: base profile '%s' not found (no %s)", j->path,
                 j->base_line, j->what, j->base, nx->path);
        return SIM_MISSING;
    }
    for (int i = 0; i <= depth; i++) {
        if (levels[i].has_id && levels[i].dev == nx->dev && levels[i].ino == nx->ino) {
            chain_text(levels, depth + 1, j->base, chain, sizeof chain);
            snprintf(err, errlen, "%s:%d: %s: base '%s' makes a cycle (%s)", j->path, j->base_line,
                     j->what, j->base, chain);
            return SIM_CONFIG;
        }
    }
    return SIM_OK;
}

/* Reads a whole file (at most 16 MiB) into a malloc'd NUL-terminated buffer
 * (NULL when it cannot be read). */
static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 14, n = 0;
    char *buf = malloc(cap);
    for (size_t got = 1; buf && got;) {
        if (n + 1 >= cap) {
            char *nb = cap < ((size_t)16 << 20) ? realloc(buf, cap * 2) : NULL;
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
        got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

/* A chain of files being loaded (load_chain). */
typedef struct chain {
    const char *path, *kind, *what;
    const eng_param_desc *keys;
    void *out;
    sim_device_variants *vars; /* devices: the variants (a scratch when not asked for) */
    sim_profile_sources *src;  /* NULL: no provenance */
    size_t nkeys, extent;
    void *scratch;
    unsigned char *present, *set, *taken;
    level *levels;
    sim_device_variants *file_vars;
    int vars_taken;
    cfg_meta *meta; /* device chains: each file's provenance tables */
    /* the parts the chain names, each from the nearest file naming its kind */
    char parts[SIM_PART_KINDS][SIM_PART_NAME_CAP];
    int part_depth[SIM_PART_KINDS], part_line[SIM_PART_KINDS];
    int parts_seen, parts_depth, parts_line;
    int top_base_line; /* the line of `base =` in the file loaded (0: none) */
} chain;

/* The sources of the keys file `depth` gives (before they are merged). */
static void file_sources(chain *c, int depth, const char *path)
{
    if (!c->src) return;
    char *text = read_all(path);
    for (size_t i = 0; i < c->nkeys; i++) {
        if (!c->present[i] || c->taken[i]) continue;
        sim_key_source *s = &c->src->key[i];
        memset(s, 0, sizeof *s);
        if (!c->set[i]) continue; /* a root's default */
        s->layer = depth == 0 ? SIM_SRC_OVERRIDE : SIM_SRC_BASE;
        s->kind = c->meta && c->meta->fit[i] ? SIM_SRC_FIT : s->layer;
        snprintf(s->file, sizeof s->file, "%s", path);
        s->line = slp_key_line_text(text, c->keys[i].name, 1);
        if (c->meta && c->meta->cited[i])
            snprintf(s->cite, sizeof s->cite, "%s", c->meta->cite[i]);
        else
            cfg_comment_cite(text, s->line, s->cite, sizeof s->cite);
    }
    free(text);
}

/* Loads file `depth` of the chain and merges it under the nearer ones. */
static int chain_file(chain *c, int depth, job *j, char *err, size_t errlen)
{
    *j = (job){.path = c->levels[depth].path,
               .kind = c->kind,
               .keys = c->keys,
               .out = c->scratch,
               .present = c->present,
               .set = c->set,
               .nkeys = c->nkeys,
               .what = c->what,
               .vars = c->file_vars,
               .meta = c->meta,
               .overlay = c->parts_seen};
    memset(c->scratch, 0, c->extent);
    if (c->meta) {
        memset(c->meta, 0, sizeof *c->meta);
        c->meta->part_kind = -1;
    }
    int rc = cfg_load_file(j, err, errlen);
    if (rc != SIM_OK) return rc;
    if (j->has_vars && !c->vars_taken) { /* the nearest file's variants */
        *c->vars = *c->file_vars;
        c->vars_taken = 1;
        if (c->src) snprintf(c->src->variants_from, sizeof c->src->variants_from, "%s", j->path);
    }
    for (int k = 0; c->meta && k < SIM_PART_KINDS; k++)
        if (c->meta->part_line[k] && !c->parts[k][0]) {
            snprintf(c->parts[k], sizeof c->parts[k], "%s", c->meta->parts[k]);
            c->part_depth[k] = depth;
            c->part_line[k] = c->meta->part_line[k];
        }
    if (c->meta && c->meta->has_parts && !c->parts_seen) {
        c->parts_seen = 1;
        c->parts_depth = depth;
        c->parts_line = slp_key_line(j->path, 1, "parts");
    }
    if (depth == 0 && j->has_base) c->top_base_line = j->base_line;
    file_sources(c, depth, j->path);
    cfg_merge_under(c->keys, c->out, c->scratch, c->present, c->taken);
    return SIM_OK;
}

static int part_kind_dir(const char *kind)
{
    return kind && !strncmp(kind, "parts/", 6) && sim_part_kind_find(kind + 6) >= 0;
}

/* Finds part k of the chain along the search path into path, or says why not. */
static int find_part(const chain *c, int k, char *path, size_t n, char *err, size_t errlen)
{
    char dir[32];
    snprintf(dir, sizeof dir, "parts/%s", sim_part_kind_name(k));
    if (sim_profile_find(dir, c->parts[k], 0, path, n) >= 0) return SIM_OK;
    char hint[1024];
    sim_profile_suggest(dir, c->parts[k], hint, sizeof hint);
    snprintf(err, errlen, "%s:%d: %s: unknown %s part '%s'%s (no %s)",
             c->levels[c->part_depth[k]].path, c->part_line[k], c->what, sim_part_kind_name(k),
             c->parts[k], hint, path);
    return SIM_MISSING;
}

/* The parts the chain names, loaded and composed under its files.  What the
 * composition finds wrong is reported against the file loaded: at its
 * `parts` line, else at its `base` line (the chain names them further on). */
static int chain_parts(chain *c, char *err, size_t errlen)
{
    cfg_part *parts = calloc(SIM_PART_KINDS, sizeof *parts);
    cfg_meta *metas = malloc(SIM_PART_KINDS * sizeof *metas);
    sim_device_variants *rv = malloc(sizeof *rv);
    char(*paths)[BASE_PATH_CAP] = malloc(SIM_PART_KINDS * sizeof *paths);
    int rc = SIM_OK;
    if (!parts || !metas || !rv || !paths) {
        snprintf(err, errlen, "%s: out of memory", c->path);
        rc = SIM_NOMEM;
    }
    for (int k = 0; rc == SIM_OK && k < SIM_PART_KINDS; k++) {
        if (!c->parts[k][0]) continue;
        rc = find_part(c, k, paths[k], sizeof paths[k], err, errlen);
        if (rc == SIM_OK)
            rc = cfg_part_load(paths[k], k, &parts[k], &metas[k],
                               k == SIM_PART_RUNTIME ? rv : NULL, err, errlen);
        parts[k].used = 1;
        parts[k].name = c->parts[k];
    }
    if (rc == SIM_OK)
        rc = cfg_compose_device(c->out, c->taken, parts, c->vars, c->vars_taken, c->src,
                                c->path, c->parts_depth ? c->top_base_line : c->parts_line,
                                err, errlen);
    free(parts);
    free(metas);
    free(rv);
    free(paths);
    return rc;
}

static int chain_alloc(chain *c, char *err, size_t errlen)
{
    while (c->keys[c->nkeys].name)
        c->nkeys++;
    c->extent = params_extent(c->keys);
    int device = c->kind && !strcmp(c->kind, "devices") && c->keys == sim_device_keys();
    c->scratch = malloc(c->extent);
    c->present = malloc(c->nkeys + 1);
    c->set = malloc(c->nkeys + 1);
    c->taken = calloc(c->nkeys + 1, 1);
    c->levels = malloc(sizeof *c->levels * (SIM_PROFILE_MAX_BASES + 1));
    c->meta = device ? malloc(sizeof *c->meta) : NULL;
    if (device && !c->vars) c->vars = malloc(sizeof *c->vars);
    if (c->vars) c->file_vars = malloc(sizeof *c->file_vars);
    if (c->src) {
        memset(c->src, 0, sizeof *c->src);
        c->src->n_keys = (int32_t)c->nkeys;
    }
    if (!c->scratch || !c->present || !c->set || !c->taken || !c->levels ||
        (device && !c->meta) || (c->vars && !c->file_vars) || c->nkeys > CFG_KEYS_CAP) {
        snprintf(err, errlen, "%s: out of memory", c->path);
        return SIM_NOMEM;
    }
    if (c->vars) c->vars->n = 0;
    return SIM_OK;
}

/* The whole chain from path to its root, merged into out (see the top). */
static int load_chain(const char *path, const char *kind, const eng_param_desc *keys, void *out,
                      sim_device_variants *vars, sim_profile_sources *src, const char *what,
                      char *err, size_t errlen)
{
    chain *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "%s: out of memory", path);
        return SIM_NOMEM;
    }
    *c = (chain){.path = path, .kind = kind, .what = what, .keys = keys, .out = out,
                 .vars = vars, .src = src};
    int rc = chain_alloc(c, err, errlen);
    const eng_param_desc *name_key = eng_params_find(keys, "name");
    int top_sets_name = 1;
    for (int depth = 0; rc == SIM_OK; depth++) {
        if (depth == 0) {
            c->levels[0].path = path;
            level_identify(&c->levels[0]);
        }
        job j;
        rc = chain_file(c, depth, &j, err, errlen);
        if (rc != SIM_OK) break;
        if (depth == 0 && name_key) top_sets_name = c->present[name_key - keys];
        if (!j.has_base) break;
        rc = resolve_base(&j, c->levels, depth, err, errlen);
    }
    if (rc == SIM_OK && c->parts_seen) rc = chain_parts(c, err, errlen);
    /* the name is the derived file's own, never inherited */
    if (rc == SIM_OK && name_key && name_key->type == ENG_PARAM_STRING && !top_sets_name)
        memset((char *)out + name_key->offset, 0, (size_t)name_key->cap);
    free(c->scratch);
    free(c->present);
    free(c->set);
    free(c->taken);
    free(c->levels);
    free(c->meta);
    if (c->vars != vars) free(c->vars);
    free(c->file_vars);
    free(c);
    return rc;
}

int sim_profile_load_kind(const char *path, const char *kind, const eng_param_desc *keys, void *out,
                          const char *what, char *err, size_t errlen)
{
    if (kind && strcmp(kind, "devices") != 0 && strcmp(kind, "models") != 0) {
        snprintf(err, errlen, "%s: unknown profile kind '%s'", path, kind);
        return SIM_CONFIG_NAME;
    }
    return load_chain(path, kind, keys, out, NULL, NULL, what, err, errlen);
}

int sim_profile_load(const char *path, const eng_param_desc *keys, void *out, const char *what,
                     char *err, size_t errlen)
{
    return load_chain(path, NULL, keys, out, NULL, NULL, what, err, errlen);
}

int sim_profile_explain_device(const char *path, sim_device *out, sim_device_variants *vars,
                               sim_profile_sources *src, char *err, size_t errlen)
{
    int rc = load_chain(path, "devices", sim_device_keys(), out, vars, src, "device profile", err,
                        errlen);
    if (rc != SIM_OK) return rc;
    if (!out->name[0]) base_name(path, out->name, sizeof out->name);
    char msg[512];
    if (sim_device_check(out, msg, sizeof msg)) {
        snprintf(err, errlen, "%s:1: %s", path, msg);
        return SIM_CONFIG;
    }
    for (int32_t i = 0; vars && i < vars->n; i++) { /* each variant must make a valid device */
        sim_device d = *out;
        sim_device_variant_apply(&vars->v[i], &d);
        if (sim_device_check(&d, msg, sizeof msg)) {
            snprintf(err, errlen, "%s:%d: variant '%s': %s", path,
                     slp_key_line(path, 1, vars->v[i].name), vars->v[i].name, msg);
            return SIM_CONFIG;
        }
    }
    return SIM_OK;
}

int sim_profile_load_device_variants(const char *path, sim_device *out, sim_device_variants *vars,
                                     char *err, size_t errlen)
{
    sim_device_variants *none = vars ? NULL : malloc(sizeof *none);
    if (!vars && !none) {
        snprintf(err, errlen, "%s: out of memory", path);
        return SIM_NOMEM;
    }
    int rc = sim_profile_explain_device(path, out, vars ? vars : none, NULL, err, errlen);
    free(none);
    return rc;
}

int sim_profile_load_device(const char *path, sim_device *out, char *err, size_t errlen)
{
    return sim_profile_load_device_variants(path, out, NULL, err, errlen);
}

void sim_device_variant_apply(const sim_device_variant *v, sim_device *dev)
{
    const eng_param_desc *keys = sim_device_keys();
    unsigned char taken[SIM_VARIANT_KEYS_CAP] = {0};
    cfg_merge_under(keys, dev, &v->delta, v->set, taken);
}

int sim_profile_explain_model(const char *path, sim_model *out, sim_profile_sources *src,
                              char *err, size_t errlen)
{
    int rc =
        load_chain(path, "models", sim_model_keys(), out, NULL, src, "model profile", err, errlen);
    if (rc != SIM_OK) return rc;
    if (!out->name[0]) base_name(path, out->name, sizeof out->name);
    char msg[512];
    if (sim_model_check(out, msg, sizeof msg)) {
        snprintf(err, errlen, "%s:1: %s", path, msg);
        return SIM_CONFIG;
    }
    return SIM_OK;
}

int sim_profile_load_model(const char *path, sim_model *out, char *err, size_t errlen)
{
    return sim_profile_explain_model(path, out, NULL, err, errlen);
}

int cfg_name_ok(const char *name)
{
    if (!name || !name[0] || name[0] == '.' || strstr(name, "..")) return 0;
    for (const char *p = name; *p; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == '-' || ch == '+';
        if (!ok) return 0; /* rejects '/', '\\', spaces, control characters */
    }
    return 1;
}

/* "devices", "models" or "parts/KIND". */
static int kind_ok(const char *kind)
{
    return kind && (!strcmp(kind, "devices") || !strcmp(kind, "models") || part_kind_dir(kind));
}

int sim_profile_dirs(char (*dirs)[SIM_PROFILE_DIR_CAP], int cap)
{
    int n = 0;
    const char *e = getenv("FLASHSPEC_CONFIG_PATH");
    for (const char *p = e ? e : ""; *p && n < cap - 1;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0 && len < SIM_PROFILE_DIR_CAP) {
            memcpy(dirs[n], p, len);
            dirs[n++][len] = 0;
        }
        p += len + (end != NULL);
    }
    if (n < cap) snprintf(dirs[n++], SIM_PROFILE_DIR_CAP, "%s", fs_config_dir());
    return n;
}

static int regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Anything at path: a FIFO or a directory where a profile should be is
 * found, and the loader says it is not a regular file. */
static int present(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int sim_profile_find(const char *kind, const char *name, int from, char *out, size_t n)
{
    if (n) out[0] = '\0';
    if (!kind_ok(kind)) return -2;
    if (!cfg_name_ok(name)) return -2;
    char(*dirs)[SIM_PROFILE_DIR_CAP] = malloc(SIM_PROFILE_MAX_DIRS * sizeof *dirs);
    if (!dirs) return -2;
    int nd = sim_profile_dirs(dirs, SIM_PROFILE_MAX_DIRS), found = -1;
    for (int i = from < 0 ? 0 : from; i < nd && found < 0; i++) {
        int len = snprintf(out, n, "%s/%s/%s.lua", dirs[i], kind, name);
        if (len < 0 || (size_t)len >= n) continue;
        if (present(out)) found = i;
    }
    if (found < 0) { /* where the shipped profile would be: the message names it */
        int len = snprintf(out, n, "%s/%s/%s.lua", dirs[nd - 1], kind, name);
        if (len < 0 || (size_t)len >= n) {
            if (n) out[0] = '\0';
            found = -2;
        }
    }
    free(dirs);
    return found;
}

int sim_profile_path(const char *kind, const char *name, char *out, size_t n)
{
    return sim_profile_find(kind, name, 0, out, n) == -2 ? SIM_CONFIG_NAME : SIM_OK;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int sim_profile_names(const char *kind, char (*names)[SIM_PROFILE_NAME_CAP], int cap)
{
    if (!kind_ok(kind)) return -1;
    char(*dirs)[SIM_PROFILE_DIR_CAP] = malloc(SIM_PROFILE_MAX_DIRS * sizeof *dirs);
    if (!dirs) return -1;
    int nd = sim_profile_dirs(dirs, SIM_PROFILE_MAX_DIRS), n = 0, readable = 0;
    for (int di = 0; di < nd; di++) {
        char path[SIM_PROFILE_DIR_CAP + 16];
        if (snprintf(path, sizeof path, "%s/%s", dirs[di], kind) >= (int)sizeof path) continue;
        DIR *d = opendir(path);
        if (!d) continue;
        readable++;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n < cap) {
            size_t len = strlen(e->d_name);
            if (len <= 4 || len - 4 >= SIM_PROFILE_NAME_CAP || strcmp(e->d_name + len - 4, ".lua"))
                continue;
            char name[SIM_PROFILE_NAME_CAP], full[SIM_PROFILE_DIR_CAP + 96];
            memcpy(name, e->d_name, len - 4);
            name[len - 4] = 0;
            int dup = 0;
            for (int i = 0; i < n && !dup; i++)
                dup = strcmp(names[i], name) == 0;
            if (dup || !cfg_name_ok(name) ||
                snprintf(full, sizeof full, "%s/%s", path, e->d_name) >= (int)sizeof full ||
                !regular_file(full))
                continue;
            memcpy(names[n++], name, len - 3);
        }
        closedir(d);
    }
    free(dirs);
    if (!readable) return -1;
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    return n;
}

void sim_profile_suggest(const char *kind, const char *name, char *out, size_t n)
{
    char(*list)[SIM_PROFILE_NAME_CAP] = malloc(SIM_PROFILE_LIST_MAX * sizeof *list);
    if (n) out[0] = 0;
    if (!list) return;
    int k = sim_profile_names(kind, list, SIM_PROFILE_LIST_MAX);
    const char *best = NULL;
    int32_t bd = 0;
    for (int i = 0; i < k; i++) {
        int32_t d = eng_params_distance(name, list[i]);
        if (!best || d < bd) best = list[i], bd = d;
    }
    int32_t near = (int32_t)strlen(name) / 2 > 2 ? (int32_t)strlen(name) / 2 : 2;
    if (best && bd <= near) {
        snprintf(out, n, " (did you mean '%s'?)", best);
    } else if (k > 0) {
        size_t at = (size_t)snprintf(out, n, " (%s: ", kind);
        for (int i = 0; i < k && at < n; i++)
            at += (size_t)snprintf(out + at, n - at, "%s%s", i ? ", " : "", list[i]);
        if (at < n) snprintf(out + at, n - at, ")");
    }
    free(list);
}
