/*
 * parts.c -- the part kinds, the loading of one part file, and the
 * composition of a device from its parts (contract in parts.h).
 *
 * The composition is plain C over values already validated: the keys the
 * profile's own files set stay (taken); the parts fill the rest, the runtime
 * first and the soc last (a later kind of the fixed order wins); defaults
 * fill what no layer sets.  Then, in order: the runtime's fits are carried to
 * another soc by their transfer rules; the ranges that apply are gathered (the
 * value must lie in each); the NPU and CPU read rates of parts, and their
 * ranges, are bounded by the memory's peak; the variants are completed.  Each step records
 * what it did in the key's source when sources are asked for.
 */
#include "cfg_impl.h"

#include "sim/config/lparams.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[SIM_PART_KINDS] = {"soc", "flash", "dram", "runtime"};

static const char *const soc_keys[] = {
    "npu_gbps",     "npu_gflops",   "launch_us",  "sync_us",          "cpu_gbps",
    "cpu_gflops",   "base_w",       "cpu_active_w", "cpu_idle_w",     "npu_active_w",
    "npu_idle_w",   "thermal_onset_s", "thermal_throttle", NULL};
static const char *const flash_keys[] = {"read_gbps", "request_latency_us", "flash_active_w",
                                         "flash_idle_w", NULL};
static const char *const dram_keys[] = {"dram_gbps", "dram_j_per_gb", NULL};
static const char *const runtime_keys[] = {
    "request_kb", "request_latency_us", "prefetch_layers", "queue_depth", "stream_bits",
    "npu_gflops", "launch_us", "sync_us", "npu_shapes", "verify_min_rows", "verify_setup_us",
    "npu_call_us",
    "kv_seq_us", "spec_prefetch_layers", "spec_queue_depth", "kv_shared", "contention_compute",
    "contention_load", "mem_upper_bound", "verify_setup_one_row",
    "verify_setup_streamed_us_per_gb", "verify_setup_resident_us_per_gb", "verify_setup_layer_us",
    "verify_overlap", "pin_head", "read_during_draft", "head_resident", "verify_graph_us",
    "verify_row_us", "verify_kv_snapshot", "verify_unit", NULL};
static const char *const *const kind_keys[SIM_PART_KINDS] = {soc_keys, flash_keys, dram_keys,
                                                             runtime_keys};

const char *sim_part_kind_name(int kind)
{
    return kind >= 0 && kind < SIM_PART_KINDS ? kind_names[kind] : NULL;
}

int sim_part_kind_find(const char *name)
{
    for (int k = 0; k < SIM_PART_KINDS; k++)
        if (name && !strcmp(name, kind_names[k])) return k;
    return -1;
}

int sim_part_key_allowed(int kind, const char *key)
{
    if (kind < 0 || kind >= SIM_PART_KINDS || !key) return 0;
    for (const char *const *k = kind_keys[kind]; *k; k++)
        if (!strcmp(*k, key)) return 1;
    return 0;
}

void sim_part_key_kinds(const char *key, char *out, size_t n)
{
    size_t at = 0;
    if (n) out[0] = 0;
    for (int k = 0; k < SIM_PART_KINDS && at < n; k++)
        if (sim_part_key_allowed(k, key))
            at += (size_t)snprintf(out + at, n - at, "%sit belongs to %s parts", at ? ", " : "",
                                   kind_names[k]);
}

static const char *const src_names[] = {"default", "part", "fit", "base", "override"};

const char *sim_src_kind_name(int kind)
{
    return kind >= 0 && kind <= SIM_SRC_OVERRIDE ? src_names[kind] : "?";
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

int cfg_key_direction(const eng_param_desc *d)
{
    if (d->type != ENG_PARAM_DOUBLE) return 0;
    if (ends_with(d->name, "_gbps") || ends_with(d->name, "_gflops")) return 1;
    if (ends_with(d->name, "_us") || ends_with(d->name, "_us_per_gb")) return -1;
    return 0;
}

/* ---- citations from comments ---- */

/* The comment part of one line ("" none): after the first "--" outside a string. */
static const char *line_comment(const char *s, size_t n, size_t *len)
{
    char q = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (q) {
            if (s[i] == '\\') i++;
            else if (s[i] == q) q = 0;
        } else if (s[i] == '"' || s[i] == '\'') {
            q = s[i];
        } else if (s[i] == '-' && s[i + 1] == '-') {
            const char *c = s + i + 2;
            size_t m = n - i - 2;
            while (m && (*c == '-' || *c == ' ' || *c == '\t')) c++, m--;
            while (m && (c[m - 1] == ' ' || c[m - 1] == '\t' || c[m - 1] == '-' ||
                         c[m - 1] == '\r'))
                m--;
            *len = m;
            return c;
        }
    }
    *len = 0;
    return NULL;
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

static int is_comment_line(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t')) s++, n--;
    return n >= 2 && s[0] == '-' && s[1] == '-';
}

/* Appends text (len bytes) to out as words, truncating with "..." at n. */
static void append_words(char *out, size_t n, size_t *at, const char *text, size_t len)
{
    if (!len || *at + 4 >= n) return;
    if (*at) out[(*at)++] = ' ';
    size_t room = n - 1 - *at;
    if (len > room) {
        len = room > 3 ? room - 3 : 0;
        while (len && ((unsigned char)text[len] & 0xC0) == 0x80) len--; /* whole UTF-8 */
        memcpy(out + *at, text, len);
        memcpy(out + *at + len, "...", 3);
        *at += len + 3;
    } else {
        memcpy(out + *at, text, len);
        *at += len;
    }
    out[*at] = 0;
}

void cfg_comment_cite(const char *text, int line, char *out, size_t n)
{
    if (!n) return;
    out[0] = 0;
    if (!text || line < 1) return;
    /* the start of every line up to `line` */
    const char **starts = malloc(sizeof *starts * (size_t)(line + 1));
    if (!starts) return;
    int got = 0;
    for (const char *s = text; got < line && s; got++) {
        starts[got] = s;
        s = strchr(s, '\n');
        if (s) s++;
    }
    size_t at = 0, clen;
    if (got == line) {
        const char *s = starts[line - 1], *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        const char *c = line_comment(s, len, &clen);
        if (c && clen) {
            append_words(out, n, &at, c, clen);
        } else { /* up the paragraph to the nearest comment block, then its lines in order */
            int i = line - 2, last = -1, first = -1;
            for (; i >= 0; i--) {
                const char *p = starts[i], *q = strchr(p, '\n');
                size_t m = q ? (size_t)(q - p) : strlen(p);
                if (is_blank(p, m)) break;
                if (is_comment_line(p, m)) {
                    if (last < 0) last = i;
                    first = i;
                } else if (last >= 0) {
                    break;
                }
            }
            for (int k = first; k >= 0 && k <= last; k++) {
                const char *p = starts[k], *q = strchr(p, '\n');
                c = line_comment(p, q ? (size_t)(q - p) : strlen(p), &clen);
                if (c) append_words(out, n, &at, c, clen);
            }
        }
    }
    free(starts);
}

/* ---- one part file ---- */

int cfg_part_load(const char *path, int kind, cfg_part *p, cfg_meta *meta,
                  sim_device_variants *vars, char *err, size_t errlen)
{
    const eng_param_desc *keys = sim_device_keys();
    size_t nkeys = 0;
    while (keys[nkeys].name)
        nkeys++;
    char what[SIM_PART_NAME_CAP + 16];
    snprintf(what, sizeof what, "%s part", kind_names[kind]);
    memset(meta, 0, sizeof *meta);
    meta->part_kind = kind;
    memset(&p->vals, 0, sizeof p->vals);
    job j = {.path = path,
             .keys = keys,
             .out = &p->vals,
             .present = p->set,
             .nkeys = nkeys,
             .what = what,
             .vars = kind == SIM_PART_RUNTIME ? vars : NULL,
             .meta = meta,
             .overlay = 1};
    if (vars) vars->n = 0;
    int rc = cfg_load_file(&j, err, errlen);
    p->meta = meta;
    p->vars = j.has_vars ? vars : NULL;
    p->path = path;
    return rc;
}

int sim_part_load(const char *path, int kind, sim_device *vals, unsigned char *set,
                  sim_profile_sources *src, char *err, size_t errlen)
{
    if (kind < 0 || kind >= SIM_PART_KINDS) {
        snprintf(err, errlen, "%s: unknown part kind", path);
        return SIM_CONFIG_NAME;
    }
    cfg_part *p = calloc(1, sizeof *p);
    cfg_meta *m = malloc(sizeof *m);
    sim_device_variants *v = malloc(sizeof *v);
    int rc = SIM_NOMEM;
    if (p && m && v) rc = cfg_part_load(path, kind, p, m, v, err, errlen);
    else snprintf(err, errlen, "%s: out of memory", path);
    if (rc == SIM_OK) {
        *vals = p->vals;
        memcpy(set, p->set, CFG_KEYS_CAP);
        if (src) {
            memset(src, 0, sizeof *src);
            const eng_param_desc *keys = sim_device_keys();
            for (int32_t i = 0; keys[i].name; i++, src->n_keys++) {
                sim_key_source *s = &src->key[i];
                s->kind = m->fit[i] ? SIM_SRC_FIT : SIM_SRC_PART;
                s->layer = SIM_SRC_PART;
                snprintf(s->cite, sizeof s->cite, "%s", m->cite[i]);
                s->has_range = m->has_range[i] && m->lo[i] < m->hi[i];
                s->lo = m->lo[i];
                s->hi = m->hi[i];
            }
        }
    }
    free(p);
    free(m);
    free(v);
    return rc;
}

/* ---- composition ---- */

#define ORIGIN_NONE (-3)
#define ORIGIN_DEFAULT (-2)
#define ORIGIN_FILE (-1)

typedef struct compose {
    sim_device *dev;
    unsigned char *taken;
    const cfg_part *parts;
    sim_profile_sources *src;
    const eng_param_desc *keys;
    size_t nkeys;
    int moved; /* the runtime's fits were made on another soc than this one */
    signed char origin[CFG_KEYS_CAP];
    unsigned char has_range[CFG_KEYS_CAP];
    double lo[CFG_KEYS_CAP], hi[CFG_KEYS_CAP];
    const char *where;
    int line;
    char *err;
    size_t errlen;
} compose;

static double get_d(const void *p, const eng_param_desc *d)
{
    double v;
    memcpy(&v, (const char *)p + d->offset, sizeof v);
    return v;
}

static void put_d(void *p, const eng_param_desc *d, double v)
{
    memcpy((char *)p + d->offset, &v, sizeof v);
}

static void add_note(compose *c, size_t i, const char *text)
{
    if (!c->src) return;
    char *n = c->src->key[i].note;
    size_t at = strlen(n);
    snprintf(n + at, sizeof c->src->key[i].note - at, "%s%s", at ? "; " : "", text);
}

static void add_range(compose *c, size_t i, double lo, double hi)
{
    if (c->has_range[i]) {
        lo = fmin(lo, c->lo[i]);
        hi = fmax(hi, c->hi[i]);
    }
    c->has_range[i] = 1;
    c->lo[i] = lo;
    c->hi[i] = hi;
}

static void source_part(compose *c, size_t i, int k)
{
    if (!c->src) return;
    const cfg_part *p = &c->parts[k];
    sim_key_source *s = &c->src->key[i];
    memset(s, 0, sizeof *s);
    s->kind = p->meta->fit[i] ? SIM_SRC_FIT : SIM_SRC_PART;
    s->layer = SIM_SRC_PART;
    snprintf(s->file, sizeof s->file, "%s", p->path);
    s->line = slp_key_line(p->path, 1, c->keys[i].name);
    snprintf(s->part, sizeof s->part, "%s/%s", kind_names[k], p->name);
    snprintf(s->cite, sizeof s->cite, "%s", p->meta->cite[i]);
}

/* The parts under the files' keys: the runtime first, the soc last. */
static void take_parts(compose *c)
{
    for (int k = SIM_PART_KINDS - 1; k >= 0; k--) {
        const cfg_part *p = &c->parts[k];
        if (!p->used) continue;
        for (size_t i = 0; i < c->nkeys; i++) {
            if (!p->set[i] || c->taken[i]) continue;
            c->origin[i] = (signed char)k;
            source_part(c, i, k);
        }
        cfg_merge_under(c->keys, c->dev, &p->vals, p->set, c->taken);
    }
}

static double apply_op(double v, const cfg_xfer *x, double s)
{
    return x->op > 0 ? v * s : v / s;
}

static const char *const unit_names[CFG_SPEEDS] = {"npu_speed", "cpu_speed"};

/* The soc's speed for a rule of the runtime (0 and a message when it states none). */
static int rule_speed(compose *c, const cfg_xfer *x, double s[3])
{
    const cfg_part *rt = &c->parts[SIM_PART_RUNTIME], *soc = &c->parts[SIM_PART_SOC];
    const cfg_meta *m = soc->meta;
    const char *on = rt->meta->fitted_on[CFG_FIT_SOC];
    if (strcmp(m->speed_over, on) != 0 || !m->speed_set[x->unit]) {
        snprintf(c->err, c->errlen,
                 "%s:%d: device profile: runtime part '%s' was fitted on soc '%s', and soc part "
                 "'%s' states no %s over it (speed_over = \"%s\", %s = ...)",
                 c->where, c->line, rt->name, on, soc->name, unit_names[x->unit], on,
                 unit_names[x->unit]);
        return 0;
    }
    s[0] = m->speed[x->unit];
    s[1] = m->speed_has_range[x->unit] ? m->speed_lo[x->unit] : s[0];
    s[2] = m->speed_has_range[x->unit] ? m->speed_hi[x->unit] : s[0];
    return 1;
}

/* The runtime's fits carried to another soc (parts.h "transfer"). */
static int transfer(compose *c)
{
    const cfg_part *rt = &c->parts[SIM_PART_RUNTIME];
    if (!c->moved) return SIM_OK;
    for (size_t i = 0; i < c->nkeys; i++) {
        const cfg_xfer *x = &rt->meta->xfer[i];
        if (c->origin[i] != SIM_PART_RUNTIME || !x->op) continue;
        double s[3];
        if (!rule_speed(c, x, s)) return SIM_CONFIG;
        const eng_param_desc *d = &c->keys[i];
        double v = get_d(c->dev, d), a = apply_op(v, x, s[1]), b = apply_op(v, x, s[2]);
        double lo = fmin(a, b), hi = fmax(a, b);
        if (x->carry) {
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        } else {
            put_d(c->dev, d, apply_op(v, x, s[0]));
        }
        add_range(c, i, lo, hi);
        char note[200];
        const char *soc = c->parts[SIM_PART_SOC].name, *on = rt->meta->fitted_on[CFG_FIT_SOC];
        if (x->carry)
            snprintf(note, sizeof note, "carried from %s; range %s %s %g..%g (soc/%s)", on,
                     x->op > 0 ? "x" : "/", unit_names[x->unit], s[1], s[2], soc);
        else
            snprintf(note, sizeof note, "fit on %s %s %s %g (soc/%s; range %g..%g)", on,
                     x->op > 0 ? "x" : "/", unit_names[x->unit], s[0], soc, s[1], s[2]);
        add_note(c, i, note);
    }
    return SIM_OK;
}

/* A unit's read rate from parts is bounded by the memory's peak from parts. */
static void bound(compose *c, const char *key)
{
    const eng_param_desc *d = eng_params_find(c->keys, key);
    const eng_param_desc *m = eng_params_find(c->keys, "dram_gbps");
    size_t i = (size_t)(d - c->keys), j = (size_t)(m - c->keys);
    if (c->origin[i] < 0 || c->origin[j] < 0) return;
    double v = get_d(c->dev, d), peak = get_d(c->dev, m);
    if (c->has_range[i]) {
        c->lo[i] = fmin(c->lo[i], peak);
        c->hi[i] = fmin(c->hi[i], peak);
    }
    if (v <= peak) return;
    put_d(c->dev, d, peak);
    char note[160];
    snprintf(note, sizeof note, "bounded by dram_gbps %g (dram/%s; the part gives %g)", peak,
             c->parts[SIM_PART_DRAM].name, v);
    add_note(c, i, note);
}

/* Defaults for the keys no layer sets; a required one is an error. */
static int fill_defaults(compose *c)
{
    for (size_t i = 0; i < c->nkeys; i++) {
        if (c->taken[i] || !eng_param_required(&c->keys[i])) continue;
        snprintf(c->err, c->errlen,
                 "%s:%d: device profile: missing required key '%s' (no part gives it)", c->where,
                 c->line, c->keys[i].name);
        return SIM_CONFIG;
    }
    sim_device def;
    unsigned char all[CFG_KEYS_CAP];
    memset(all, 1, sizeof all);
    eng_params_defaults(c->keys, &def);
    for (size_t i = 0; i < c->nkeys; i++) {
        if (c->taken[i]) continue;
        c->origin[i] = ORIGIN_DEFAULT;
        if (c->src) memset(&c->src->key[i], 0, sizeof c->src->key[i]);
    }
    cfg_merge_under(c->keys, c->dev, &def, all, c->taken);
    return SIM_OK;
}

/* Does part k's range of key i bound the device's value (parts.h)? */
static int range_applies(const compose *c, size_t i, int k)
{
    const cfg_part *p = &c->parts[k], *rt = &c->parts[SIM_PART_RUNTIME];
    if (p->set[i]) return c->origin[i] == k;
    if (c->origin[i] == SIM_PART_RUNTIME && rt->meta->fit[i] && k < CFG_FIT_KINDS)
        return strcmp(rt->meta->fitted_on[k], p->name) != 0;
    return 1;
}

static int gather_ranges(compose *c)
{
    for (size_t i = 0; i < c->nkeys; i++) {
        if (c->origin[i] < 0) continue;
        for (int k = 0; k < SIM_PART_KINDS; k++) {
            const cfg_part *p = &c->parts[k];
            if (!p->used || !p->meta->has_range[i] || !range_applies(c, i, k)) continue;
            double v = get_d(c->dev, &c->keys[i]), lo = p->meta->lo[i], hi = p->meta->hi[i];
            if (v < lo - 1e-9 * fabs(lo) || v > hi + 1e-9 * fabs(hi)) {
                int at = slp_key_line(p->path, slp_key_line(p->path, 1, "ranges"),
                                      c->keys[i].name);
                snprintf(c->err, c->errlen,
                         "%s:%d: %s part: ranges.%s = { %g, %g } does not hold the value %g "
                         "that %s/%s gives device profile %s",
                         p->path, at, kind_names[k], c->keys[i].name, lo, hi, v,
                         kind_names[c->origin[i]], c->parts[c->origin[i]].name, c->where);
                return SIM_CONFIG;
            }
            add_range(c, i, lo, hi);
            char note[96];
            snprintf(note, sizeof note, "range %g..%g from %s/%s", lo, hi, kind_names[k], p->name);
            add_note(c, i, note);
        }
    }
    return SIM_OK;
}

static int cmp_variant_name(const void *a, const void *b)
{
    return strcmp(((const sim_device_variant *)a)->name, ((const sim_device_variant *)b)->name);
}

/* The runtime part's variants, their fits carried as the device's are. */
static int runtime_variants(compose *c, sim_device_variants *vars)
{
    const cfg_part *rt = &c->parts[SIM_PART_RUNTIME];
    vars->n = 0;
    if (!rt->used || !rt->vars) return SIM_OK;
    *vars = *rt->vars;
    if (c->src) snprintf(c->src->variants_from, sizeof c->src->variants_from, "%s", rt->path);
    for (int32_t v = 0; c->moved && v < vars->n; v++) {
        for (size_t i = 0; i < c->nkeys; i++) {
            const cfg_xfer *x = &rt->meta->xfer[i];
            if (!vars->v[v].set[i] || !x->op || x->carry) continue;
            double s[3];
            if (!rule_speed(c, x, s)) return SIM_CONFIG;
            const eng_param_desc *d = &c->keys[i];
            put_d(&vars->v[v].delta, d, apply_op(get_d(&vars->v[v].delta, d), x, s[0]));
        }
    }
    return SIM_OK;
}

/* "parts_slow" and "parts_fast": every ranged key at its slow / fast end. */
static int range_variants(compose *c, sim_device_variants *vars)
{
    static const char *const names[2] = {"parts_slow", "parts_fast"};
    int any = 0;
    for (size_t i = 0; i < c->nkeys; i++)
        any |= c->has_range[i] && c->lo[i] < c->hi[i];
    if (!any) return SIM_OK;
    for (int32_t v = 0; v < vars->n; v++)
        for (int e = 0; e < 2; e++)
            if (!strcmp(vars->v[v].name, names[e])) {
                snprintf(c->err, c->errlen,
                         "%s:%d: device profile: variant '%s' is the name of the parts' range "
                         "variant",
                         c->where, c->line, names[e]);
                return SIM_CONFIG;
            }
    if (vars->n + 2 > SIM_PROFILE_MAX_VARIANTS) {
        snprintf(c->err, c->errlen,
                 "%s:%d: device profile: %d variants and the parts' two range variants exceed "
                 "%d",
                 c->where, c->line, (int)vars->n, SIM_PROFILE_MAX_VARIANTS);
        return SIM_CONFIG;
    }
    for (int e = 0; e < 2; e++) {
        sim_device_variant *v = &vars->v[vars->n];
        memset(v, 0, sizeof *v);
        snprintf(v->name, sizeof v->name, "%s", names[e]);
        int moves = 0; /* an end that is the device itself is not a variant */
        for (size_t i = 0; i < c->nkeys; i++) {
            if (!c->has_range[i] || !(c->lo[i] < c->hi[i])) continue;
            int dir = cfg_key_direction(&c->keys[i]), high = (dir > 0) == (e == 1);
            double end = high ? c->hi[i] : c->lo[i];
            put_d(&v->delta, &c->keys[i], end);
            v->set[i] = 1;
            moves |= end != get_d(c->dev, &c->keys[i]);
        }
        if (moves) vars->n++;
    }
    qsort(vars->v, (size_t)vars->n, sizeof vars->v[0], cmp_variant_name);
    return SIM_OK;
}

int cfg_compose_device(sim_device *dev, unsigned char *taken, const cfg_part parts[SIM_PART_KINDS],
                       sim_device_variants *vars, int have_vars, sim_profile_sources *src,
                       const char *where, int line, char *err, size_t errlen)
{
    compose *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "%s: out of memory", where);
        return SIM_NOMEM;
    }
    *c = (compose){.dev = dev, .taken = taken, .parts = parts, .src = src,
                   .keys = sim_device_keys(), .where = where, .line = line, .err = err,
                   .errlen = errlen};
    while (c->keys[c->nkeys].name)
        c->nkeys++;
    for (size_t i = 0; i < c->nkeys; i++)
        c->origin[i] = taken[i] ? ORIGIN_FILE : ORIGIN_NONE;
    const cfg_part *rt = &parts[SIM_PART_RUNTIME], *soc = &parts[SIM_PART_SOC];
    c->moved = rt->used && soc->used && rt->meta->fitted_on[CFG_FIT_SOC][0] &&
               strcmp(rt->meta->fitted_on[CFG_FIT_SOC], soc->name) != 0;
    if (src)
        for (int k = 0; k < SIM_PART_KINDS; k++)
            if (parts[k].used) {
                snprintf(src->parts[k], sizeof src->parts[k], "%s", parts[k].name);
                snprintf(src->part_files[k], sizeof src->part_files[k], "%s", parts[k].path);
            }
    take_parts(c);
    int rc = transfer(c);
    if (rc == SIM_OK) rc = fill_defaults(c);
    if (rc == SIM_OK) rc = gather_ranges(c);
    if (rc == SIM_OK) { /* after the ranges: a bound moves a range with its value */
        bound(c, "npu_gbps");
        bound(c, "cpu_gbps");
    }
    if (rc == SIM_OK && !have_vars) rc = runtime_variants(c, vars);
    /* an explicit variants = {} replays no variant at all, the ranges' included */
    if (rc == SIM_OK && !(have_vars && vars->n == 0)) rc = range_variants(c, vars);
    for (size_t i = 0; src && rc == SIM_OK && i < c->nkeys; i++) {
        src->key[i].has_range = c->has_range[i] && c->lo[i] < c->hi[i];
        src->key[i].lo = c->lo[i];
        src->key[i].hi = c->hi[i];
    }
    free(c);
    return rc;
}
