/*
 * cmd_explain.c -- `flashspec profiles --explain NAME` (where every resolved
 * value of a profile came from: part and citation, fit, base, override or
 * default; sim/config/parts.h) and `flashspec profiles parts` (the part files
 * along the search path, each loaded and checked).
 */
#include "cmd_explain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/out/sim_out.h"
#include "sim/out/sim_strbuf.h"
#include "sim/config/home.h"
#include "sim/config/parts.h"
#include "sim/sim_status.h"

/* path shown relative to the project home when it lies under it */
static const char *shown(const char *path)
{
    const char *home = fs_home_dir();
    size_t n = home ? strlen(home) : 0;
    if (n && !strncmp(path, home, n) && path[n] == '/') return path + n + 1;
    return path;
}

/* The value of key row d in params, as a profile would write it: a real in
 * the fewest digits that read back as it, a whole number below 1e16 with all
 * its digits (5000, not "5e+03"); a list's elements joined by ','; an empty
 * string "". */
static void value_text(const eng_param_desc *d, const void *params, char *out, size_t n)
{
    const char *f = (const char *)params + d->offset;
    if (d->type == ENG_PARAM_STRING && !f[0])
        snprintf(out, n, "\"\"");
    else
        sim_out_param_value(d, params, 0, ',', out, n);
}

static void range_text(const sim_key_source *s, char *out, size_t n)
{
    if (s->has_range)
        snprintf(out, n, "%g..%g", s->lo, s->hi);
    else
        snprintf(out, n, "-");
}

/* One line (or Markdown row) per key row. */
static void explain_keys(const eng_param_desc *keys, const void *vals,
                         const sim_profile_sources *src, int md)
{
    if (md)
        printf("| key | value | source | range | file | citation |\n|---|---|---|---|---|---|\n");
    else
        printf("%-32s %-14s %-8s %-16s %-44s %s\n", "key", "value", "source", "range", "file",
               "citation");
    for (int32_t i = 0; keys[i].name && i < src->n_keys; i++) {
        const sim_key_source *s = &src->key[i];
        char val[1024], rng[64], file[SIM_SRC_FILE_CAP + 16], cite[SIM_CITE_CAP + 300];
        value_text(&keys[i], vals, val, sizeof val);
        range_text(s, rng, sizeof rng);
        if (s->file[0])
            snprintf(file, sizeof file, "%s:%d", shown(s->file), (int)s->line);
        else
            snprintf(file, sizeof file, "-");
        snprintf(cite, sizeof cite, "%s%s%s%s", s->cite[0] ? s->cite : "-",
                 s->note[0] ? " [" : "", s->note, s->note[0] ? "]" : "");
        if (md)
            printf("| `%s` | %s | %s | %s | %s | %s |\n", keys[i].name, val,
                   sim_src_kind_name(s->kind), rng, file, cite);
        else
            printf("%-32s %-14s %-8s %-16s %-44s %s\n", keys[i].name, val,
                   sim_src_kind_name(s->kind), rng, file, cite);
    }
}

static void explain_variants(const sim_device_variants *vars, const sim_profile_sources *src)
{
    if (vars->n == 0) return;
    const eng_param_desc *keys = sim_device_keys();
    printf("\nvariants (every point is also replayed on each; tokens_per_s_model_lo / _hi span "
           "them)%s%s%s:\n",
           src->variants_from[0] ? ", declared in " : "",
           src->variants_from[0] ? shown(src->variants_from) : "",
           src->variants_from[0] ? " or made from the parts' ranges" : "");
    for (int32_t v = 0; v < vars->n; v++) {
        printf("  %-12s", vars->v[v].name);
        for (int32_t i = 0; keys[i].name; i++) {
            if (!vars->v[v].set[i]) continue;
            char val[1024];
            value_text(&keys[i], &vars->v[v].delta, val, sizeof val);
            printf(" %s=%s", keys[i].name, val);
        }
        printf("\n");
    }
}

/* Path of profile `name` of kind, or an exit code with the message printed. */
static int find_profile(const char *kind, const char *name, char *path, size_t n)
{
    if (sim_profile_path(kind, name, path, n) != SIM_OK) {
        fprintf(stderr, "flashspec: profiles: invalid profile name '%s'\n", name);
        return SIM_CONFIG_NAME;
    }
    struct stat st;
    return stat(path, &st) == 0 ? 0 : -1;
}

static int explain_device(const char *path, int md)
{
    sim_device *dev = malloc(sizeof *dev);
    sim_device_variants *vars = malloc(sizeof *vars);
    sim_profile_sources *src = malloc(sizeof *src);
    char err[1024];
    int rc = SIM_NOMEM;
    if (dev && vars && src) rc = sim_profile_explain_device(path, dev, vars, src, err, sizeof err);
    else snprintf(err, sizeof err, "out of memory");
    if (rc == SIM_OK) {
        printf("device %s: %s\n", dev->name, shown(path));
        int any = 0;
        for (int k = 0; k < SIM_PART_KINDS; k++) {
            if (!src->parts[k][0]) continue;
            printf("%s%s %s (%s)", any++ ? ", " : "parts: ", sim_part_kind_name(k), src->parts[k],
                   shown(src->part_files[k]));
        }
        printf("%s\n", any ? "\n" : "");
        explain_keys(sim_device_keys(), dev, src, md);
        explain_variants(vars, src);
    } else {
        fprintf(stderr, "flashspec: %s\n", err);
    }
    free(dev);
    free(vars);
    free(src);
    return rc;
}

static int explain_model(const char *path, int md)
{
    sim_model *m = malloc(sizeof *m);
    sim_profile_sources *src = malloc(sizeof *src);
    char err[1024];
    int rc = SIM_NOMEM;
    if (m && src) rc = sim_profile_explain_model(path, m, src, err, sizeof err);
    else snprintf(err, sizeof err, "out of memory");
    if (rc == SIM_OK) {
        printf("model %s: %s\n\n", m->name, shown(path));
        explain_keys(sim_model_keys(), m, src, md);
    } else {
        fprintf(stderr, "flashspec: %s\n", err);
    }
    free(m);
    free(src);
    return rc;
}

int cli_profiles_explain(const char *kind, const char *name, int md)
{
    char path[4096];
    int dev = !kind || !strcmp(kind, "devices"), mod = !kind || !strcmp(kind, "models");
    int rc = dev ? find_profile("devices", name, path, sizeof path) : -1;
    if (rc > 0) return rc;
    if (rc == 0) return explain_device(path, md);
    rc = mod ? find_profile("models", name, path, sizeof path) : -1;
    if (rc > 0) return rc;
    if (rc == 0) return explain_model(path, md);
    char hint[1024];
    sim_profile_suggest(dev ? "devices" : "models", name, hint, sizeof hint);
    fprintf(stderr, "flashspec: profiles: no %s profile '%s'%s\n",
            dev && mod ? "device or model" : dev ? "device" : "model", name, hint);
    return SIM_MISSING;
}

/* One part file: its keys, fits and ranges in one row. */
static int list_part(int kind, const char *name, int md)
{
    char dir[32], path[4096], err[1024], part[96];
    snprintf(dir, sizeof dir, "parts/%s", sim_part_kind_name(kind));
    snprintf(part, sizeof part, "%s/%s", sim_part_kind_name(kind), name);
    sim_profile_find(dir, name, 0, path, sizeof path);
    sim_device vals;
    unsigned char set[SIM_VARIANT_KEYS_CAP];
    sim_profile_sources *src = malloc(sizeof *src);
    int rc = src ? sim_part_load(path, kind, &vals, set, src, err, sizeof err) : SIM_NOMEM;
    if (!src) snprintf(err, sizeof err, "out of memory");
    if (rc != SIM_OK) {
        fprintf(stderr, "flashspec: %s\n", err);
        printf(md ? "| %s | (does not load) | | |\n" : "%-24s (does not load)\n", part);
        free(src);
        return 1;
    }
    const eng_param_desc *keys = sim_device_keys();
    char ks[2048] = "", rs[1024] = "";
    size_t a = 0, b = 0;
    for (int32_t i = 0; keys[i].name; i++) {
        if (set[i] && a < sizeof ks)
            a += (size_t)snprintf(ks + a, sizeof ks - a, "%s%s%s", a ? " " : "", keys[i].name,
                                  src->key[i].kind == SIM_SRC_FIT ? "(fit)" : "");
        if (src->key[i].has_range && b < sizeof rs)
            b += (size_t)snprintf(rs + b, sizeof rs - b, "%s%s=%g..%g", b ? " " : "", keys[i].name,
                                  src->key[i].lo, src->key[i].hi);
    }
    if (md)
        printf("| %s | %s | %s | %s |\n", part, ks, rs[0] ? rs : "-", shown(path));
    else
        printf("%-24s %s\n%-24s ranges: %s\n%-24s %s\n", part, ks, "", rs[0] ? rs : "-", "",
               shown(path));
    free(src);
    return 0;
}

int cli_profiles_parts(int md)
{
    char(*names)[SIM_PROFILE_NAME_CAP] = malloc(SIM_PROFILE_LIST_MAX * sizeof *names);
    if (!names) {
        fprintf(stderr, "flashspec: out of memory\n");
        return SIM_NOMEM;
    }
    int bad = 0, any = 0;
    if (md) printf("Parts:\n\n| part | keys | ranges | file |\n|---|---|---|---|\n");
    for (int k = 0; k < SIM_PART_KINDS; k++) {
        char dir[32];
        snprintf(dir, sizeof dir, "parts/%s", sim_part_kind_name(k));
        int n = sim_profile_names(dir, names, SIM_PROFILE_LIST_MAX);
        for (int i = 0; i < n; i++, any++)
            bad |= list_part(k, names[i], md);
    }
    free(names);
    if (!any) {
        fprintf(stderr, "flashspec: profiles: no part files along the profile search path\n");
        return SIM_MISSING;
    }
    return bad ? SIM_CONFIG : SIM_OK;
}
