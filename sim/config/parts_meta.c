/*
 * parts_meta.c -- the provenance tables of a profile or part file (parts.h):
 * `parts` (device profiles), `cite` and `fit` (every device file and part),
 * `ranges` and the soc / runtime fields (parts).  Read from the file's Lua
 * table inside its protected call (profile.c run_profile) and removed from
 * it before the keys are validated; every problem is a Lua error
 * "PATH:LINE: WHAT: ..." that profile.c turns into exit 78.
 */
#include "cfg_impl.h"

#include "sim/config/lparams.h"

#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const speed_names[CFG_SPEEDS] = {"npu_speed", "cpu_speed"};
static const char *const fit_kinds[CFG_FIT_KINDS] = {"soc", "flash", "dram"};

/* Raises "PATH:LINE: WHAT: message". */
static void meta_error(lua_State *L, const job *j, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lua_pushfstring(L, "%s:%d: %s: %s", j->path, line, j->what, msg);
    lua_error(L);
}

static int speed_find(const char *name)
{
    for (int s = 0; s < CFG_SPEEDS; s++)
        if (!strcmp(name, speed_names[s])) return s;
    return -1;
}

/* Pushes t[field] and returns its line (0 and nothing pushed when nil). */
static int open_field(lua_State *L, int t, const job *j, const char *field)
{
    lua_getfield(L, t, field);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return slp_key_line(j->path, 1, field);
}

static void close_field(lua_State *L, int t, const char *field)
{
    lua_pop(L, 1);
    lua_pushstring(L, field);
    lua_pushnil(L);
    lua_rawset(L, t);
}

static void need_table(lua_State *L, const job *j, int line, const char *field, const char *form)
{
    if (!lua_istable(L, -1))
        meta_error(L, j, line, "key '%s' must be a table of %s (got %s)", field, form,
              luaL_typename(L, -1));
}

/* The string key at -2 of a lua_next walk over field, or a raise. */
static const char *entry_key(lua_State *L, const job *j, int line, const char *field)
{
    if (lua_type(L, -2) != LUA_TSTRING)
        meta_error(L, j, line, "%s: keys must be names (found a %s key)", field,
              luaL_typename(L, -2));
    return lua_tostring(L, -2);
}

/* The value at -1 as a name of at most cap - 1 bytes. */
static const char *entry_name(lua_State *L, const job *j, int line, const char *where,
                              size_t cap)
{
    size_t n = 0;
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
    if (!s || n >= cap || strlen(s) != n || !cfg_name_ok(s))
        meta_error(L, j, line, "%s must be a part name (letters, digits and . _ + -; at most %d bytes)",
              where, (int)cap - 1);
    return s;
}

/* parts = { soc = "NAME", ... } (device profiles). */
static void read_parts(lua_State *L, int t, job *j)
{
    int line = open_field(L, t, j, "parts");
    if (!line) return;
    need_table(L, j, line, "parts", "kind = \"NAME\" (kinds soc, flash, dram, runtime)");
    j->meta->has_parts = 1;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        const char *k = entry_key(L, j, line, "parts");
        int at = slp_key_line(j->path, line, k), kind = sim_part_kind_find(k);
        if (kind < 0) {
            const char *near = NULL;
            int32_t best = 3;
            for (int i = 0; i < SIM_PART_KINDS; i++) {
                int32_t d = eng_params_distance(k, sim_part_kind_name(i));
                if (d < best) best = d, near = sim_part_kind_name(i);
            }
            if (near) meta_error(L, j, at, "unknown part kind '%s' in parts (did you mean '%s'?)", k, near);
            meta_error(L, j, at, "unknown part kind '%s' in parts (kinds: soc, flash, dram, runtime)", k);
        }
        char where[64];
        snprintf(where, sizeof where, "parts.%s", k);
        const char *name = entry_name(L, j, at, where, SIM_PART_NAME_CAP);
        snprintf(j->meta->parts[kind], SIM_PART_NAME_CAP, "%s", name);
        j->meta->part_line[kind] = at;
        lua_pop(L, 1);
    }
    close_field(L, t, "parts");
}

/* The key row (or, in a soc part's cite or ranges, a speed: *speed >= 0) an
 * entry names; raises for an unknown key with the nearest valid one. */
static int entry_row(lua_State *L, const job *j, int line, const char *field, const char *k,
                     int speeds, int *speed)
{
    *speed = -1;
    const eng_param_desc *d = eng_params_find(j->keys, k);
    if (d) return (int)(d - j->keys);
    if (speeds && (*speed = speed_find(k)) >= 0) return -1;
    int at = slp_key_line(j->path, line, k);
    const char *near = eng_params_nearest(j->keys, k);
    if (near) meta_error(L, j, at, "unknown key '%s' in %s (did you mean '%s'?)", k, field, near);
    meta_error(L, j, at, "unknown key '%s' in %s", k, field);
    return -1;
}

/* cite = { key = "text" } or fit = { key = "text" }. */
static void read_texts(lua_State *L, int t, job *j, const char *field, int fit)
{
    int line = open_field(L, t, j, field);
    if (!line) return;
    need_table(L, j, line, field, "key = \"text\"");
    cfg_meta *m = j->meta;
    int soc = m->part_kind == SIM_PART_SOC;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        const char *k = entry_key(L, j, line, field);
        int speed, row = entry_row(L, j, line, field, k, soc && !fit, &speed);
        int at = slp_key_line(j->path, line, k);
        size_t n = 0;
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
        if (!s || n == 0 || n >= SIM_CITE_CAP || strlen(s) != n)
            meta_error(L, j, at, "%s.%s must be a non-empty string of at most %d bytes", field, k,
                  SIM_CITE_CAP - 1);
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                meta_error(L, j, at, "%s.%s holds a control character", field, k);
        if (row < 0) {
            memcpy(m->speed_cite[speed], s, n + 1);
        } else {
            if (fit && m->cited[row])
                meta_error(L, j, at, "both cite.%s and fit.%s: a fit's text is its citation", k, k);
            memcpy(m->cite[row], s, n + 1);
            m->cited[row] = 1;
            m->fit[row] = (unsigned char)fit;
        }
        lua_pop(L, 1);
    }
    close_field(L, t, field);
}

/* One { lo, hi } pair at -1. */
static void range_pair(lua_State *L, const job *j, int at, const char *k, double *lo, double *hi)
{
    int ok = lua_istable(L, -1) && lua_rawlen(L, -1) == 2;
    for (int i = 1; ok && i <= 2; i++) {
        lua_rawgeti(L, -1, i);
        ok = lua_type(L, -1) == LUA_TNUMBER;
        *(i == 1 ? lo : hi) = ok ? lua_tonumber(L, -1) : 0;
        lua_pop(L, 1);
    }
    if (!ok || !isfinite(*lo) || !isfinite(*hi) || *lo > *hi)
        meta_error(L, j, at, "ranges.%s must be { lo, hi } with lo <= hi", k);
}

/* ranges = { key = { lo, hi } } (parts). */
static void read_ranges(lua_State *L, int t, job *j)
{
    int line = open_field(L, t, j, "ranges");
    if (!line) return;
    need_table(L, j, line, "ranges", "key = { lo, hi }");
    cfg_meta *m = j->meta;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        const char *k = entry_key(L, j, line, "ranges");
        int speed, row = entry_row(L, j, line, "ranges", k, m->part_kind == SIM_PART_SOC, &speed);
        int at = slp_key_line(j->path, line, k);
        double lo, hi;
        range_pair(L, j, at, k, &lo, &hi);
        if (row < 0) {
            if (!(lo > 0)) meta_error(L, j, at, "ranges.%s must be positive", k);
            m->speed_has_range[speed] = 1;
            m->speed_lo[speed] = lo;
            m->speed_hi[speed] = hi;
        } else {
            const eng_param_desc *d = &j->keys[row];
            if (!cfg_key_direction(d))
                meta_error(L, j, at,
                      "ranges.%s: only rates (_gbps, _gflops) and costs (_us, _us_per_gb) take "
                      "a range",
                      k);
            if (lo < d->min || hi > d->max)
                meta_error(L, j, at, "ranges.%s = { %g, %g } leaves the key's range [%g, %g]", k, lo,
                      hi, d->min, d->max);
            m->has_range[row] = 1;
            m->lo[row] = lo;
            m->hi[row] = hi;
        }
        lua_pop(L, 1);
    }
    close_field(L, t, "ranges");
}

/* speed_over = "SOC", npu_speed = X, cpu_speed = Y (soc parts). */
static void read_speeds(lua_State *L, int t, job *j)
{
    cfg_meta *m = j->meta;
    int line = open_field(L, t, j, "speed_over");
    if (line) {
        const char *s = entry_name(L, j, line, "speed_over", SIM_PART_NAME_CAP);
        snprintf(m->speed_over, sizeof m->speed_over, "%s", s);
        close_field(L, t, "speed_over");
    }
    for (int s = 0; s < CFG_SPEEDS; s++) {
        line = open_field(L, t, j, speed_names[s]);
        if (!line) continue;
        double v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : NAN;
        if (!(v > 0 && v <= 100))
            meta_error(L, j, line, "%s must be a number in (0, 100]", speed_names[s]);
        m->speed[s] = v;
        m->speed_set[s] = 1;
        close_field(L, t, speed_names[s]);
    }
}

/* fitted_on = { soc = ..., flash = ..., dram = ... } (runtime parts). */
static void read_fitted_on(lua_State *L, int t, job *j)
{
    int line = open_field(L, t, j, "fitted_on");
    if (!line) return;
    need_table(L, j, line, "fitted_on", "kind = \"NAME\" (soc, flash, dram)");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        const char *k = entry_key(L, j, line, "fitted_on");
        int kind = -1;
        for (int i = 0; i < CFG_FIT_KINDS; i++)
            if (!strcmp(k, fit_kinds[i])) kind = i;
        if (kind < 0) meta_error(L, j, line, "fitted_on: unknown kind '%s' (soc, flash, dram)", k);
        char where[64];
        snprintf(where, sizeof where, "fitted_on.%s", k);
        const char *s = entry_name(L, j, line, where, SIM_PART_NAME_CAP);
        snprintf(j->meta->fitted_on[kind], SIM_PART_NAME_CAP, "%s", s);
        lua_pop(L, 1);
    }
    close_field(L, t, "fitted_on");
}

/* transfer = { key = "npu" | "/npu" | "cpu" | "/cpu", "~" in front: carried }. */
static void read_transfer(lua_State *L, int t, job *j)
{
    int line = open_field(L, t, j, "transfer");
    if (!line) return;
    need_table(L, j, line, "transfer", "key = \"npu\" | \"/cpu\" | \"~/cpu\" ...");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        const char *k = entry_key(L, j, line, "transfer");
        int speed, row = entry_row(L, j, line, "transfer", k, 0, &speed);
        int at = slp_key_line(j->path, line, k);
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        cfg_xfer x = {0, 0, 0};
        if (*s == '~') x.carry = 1, s++;
        x.op = 1;
        if (*s == '/') x.op = -1, s++;
        if (!strcmp(s, "npu"))
            x.unit = CFG_SPEED_NPU;
        else if (!strcmp(s, "cpu"))
            x.unit = CFG_SPEED_CPU;
        else
            meta_error(L, j, at, "transfer.%s must be \"npu\", \"/npu\", \"cpu\" or \"/cpu\", with an "
                  "optional leading \"~\"", k);
        j->meta->xfer[row] = x;
        lua_pop(L, 1);
    }
    close_field(L, t, "transfer");
}

void cfg_read_meta(lua_State *L, int t, job *j)
{
    cfg_meta *m = j->meta;
    if (m->part_kind < 0) read_parts(L, t, j);
    read_texts(L, t, j, "cite", 0);
    read_texts(L, t, j, "fit", 1);
    if (m->part_kind < 0) return;
    read_ranges(L, t, j);
    if (m->part_kind == SIM_PART_SOC) read_speeds(L, t, j);
    if (m->part_kind == SIM_PART_RUNTIME) {
        read_fitted_on(L, t, j);
        read_transfer(L, t, j);
    }
}

/* ---- after validation ---- */

static int field_line(const job *j, const char *field, const char *key)
{
    return slp_key_line(j->path, slp_key_line(j->path, 1, field), key);
}

/* A part's key row i: its kind, citation, range and rule. */
static void check_part_key(lua_State *L, job *j, size_t i)
{
    const cfg_meta *m = j->meta;
    const char *k = j->keys[i].name, *kind = sim_part_kind_name(m->part_kind);
    char kinds[64];
    sim_part_key_kinds(k, kinds, sizeof kinds);
    if ((j->present[i] || m->has_range[i]) && !sim_part_key_allowed(m->part_kind, k))
        meta_error(L, j, j->present[i] ? slp_key_line(j->path, 1, k) : field_line(j, "ranges", k),
              "key '%s' is not a %s key (%s)", k, kind,
              kinds[0] ? kinds : "it is a device profile's own key");
    if (j->present[i] && !m->cited[i])
        meta_error(L, j, slp_key_line(j->path, 1, k),
              "key '%s' has no citation (give cite.%s, or fit.%s for a fit)", k, k, k);
    if (m->has_range[i] && j->present[i] && m->fit[i])
        meta_error(L, j, field_line(j, "ranges", k),
              "ranges.%s: '%s' is a fit of this part, exact where it was made", k, k);
    if (m->has_range[i] && !j->present[i] && !m->cited[i])
        meta_error(L, j, field_line(j, "ranges", k), "ranges.%s needs cite.%s (where it comes from)",
              k, k);
    if (m->has_range[i] && j->present[i]) {
        double v;
        memcpy(&v, (const char *)j->out + j->keys[i].offset, sizeof v);
        if (v < m->lo[i] || v > m->hi[i])
            meta_error(L, j, field_line(j, "ranges", k), "ranges.%s = { %g, %g } does not hold its "
                  "value %g", k, m->lo[i], m->hi[i], v);
    }
    if (m->xfer[i].op && (!j->present[i] || j->keys[i].type != ENG_PARAM_DOUBLE))
        meta_error(L, j, field_line(j, "transfer", k),
                   "transfer.%s: '%s' is not a number this part sets", k, k);
}

static void check_speeds(lua_State *L, job *j)
{
    const cfg_meta *m = j->meta;
    int any = 0;
    for (int s = 0; s < CFG_SPEEDS; s++) {
        const char *n = speed_names[s];
        if (m->speed_has_range[s] && !m->speed_set[s])
            meta_error(L, j, field_line(j, "ranges", n), "ranges.%s needs %s", n, n);
        if (!m->speed_set[s]) continue;
        any = 1;
        int line = slp_key_line(j->path, 1, n);
        if (!m->speed_cite[s][0]) meta_error(L, j, line, "%s has no citation (give cite.%s)", n, n);
        if (!m->speed_over[0]) meta_error(L, j, line, "%s needs speed_over = \"SOC\"", n);
        if (m->speed_has_range[s] && (m->speed[s] < m->speed_lo[s] || m->speed[s] > m->speed_hi[s]))
            meta_error(L, j, field_line(j, "ranges", n), "ranges.%s does not hold %s = %g", n, n,
                  m->speed[s]);
    }
    if (m->speed_over[0] && !any)
        meta_error(L, j, slp_key_line(j->path, 1, "speed_over"),
              "speed_over needs npu_speed or cpu_speed");
    for (int s = 0; s < CFG_SPEEDS; s++)
        if (m->speed_cite[s][0] && !m->speed_set[s])
            meta_error(L, j, field_line(j, "cite", speed_names[s]), "cite.%s names a key the file "
                  "does not set", speed_names[s]);
}

/* A runtime part's variants set runtime keys only. */
static void check_part_variants(lua_State *L, job *j)
{
    if (!j->has_vars) return;
    for (int32_t v = 0; v < j->vars->n; v++)
        for (size_t i = 0; i < j->nkeys; i++)
            if (j->vars->v[v].set[i] && !sim_part_key_allowed(SIM_PART_RUNTIME, j->keys[i].name))
                meta_error(L, j, slp_key_line(j->path, 1, "variants"),
                      "variant '%s': key '%s' is not a runtime key", j->vars->v[v].name,
                      j->keys[i].name);
}

void cfg_check_meta(lua_State *L, job *j)
{
    const cfg_meta *m = j->meta;
    int part = m->part_kind >= 0;
    for (size_t i = 0; i < j->nkeys; i++) {
        if (part) check_part_key(L, j, i);
        if (m->cited[i] && !j->present[i] && !(part && m->has_range[i]))
            meta_error(L, j, field_line(j, m->fit[i] ? "fit" : "cite", j->keys[i].name),
                  "%s.%s names a key the file does not set", m->fit[i] ? "fit" : "cite",
                  j->keys[i].name);
    }
    if (!part) return;
    if (m->part_kind == SIM_PART_SOC) check_speeds(L, j);
    if (m->part_kind == SIM_PART_RUNTIME) {
        check_part_variants(L, j);
        int any_rule = 0;
        for (size_t i = 0; i < j->nkeys; i++)
            any_rule |= m->xfer[i].op != 0;
        if (any_rule && !m->fitted_on[CFG_FIT_SOC][0])
            meta_error(L, j, slp_key_line(j->path, 1, "transfer"),
                  "transfer needs fitted_on = { soc = \"SOC\", ... }");
    }
}
