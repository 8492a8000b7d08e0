/*
 * runrec.c -- the record of what produced a results directory (runrec.h).
 */
#include "sim/out/runrec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/out/rows.h"
#include "sim/out/sim_strbuf.h"
#include "sim/sim_id.h"

typedef struct dev_ent {
    sim_id key;
    sim_device dev;
    char name[64];
    int32_t n_var;
    sim_device vars[SIM_PROFILE_MAX_VARIANTS];
    char var_names[SIM_PROFILE_MAX_VARIANTS][SIM_VARIANT_NAME_CAP];
} dev_ent;

typedef struct model_ent {
    sim_id key;
    sim_model m;
    char name[64];
} model_ent;

typedef struct pol_ent {
    sim_id key;
    const eng_policy_desc *desc;
    unsigned char *params;
} pol_ent;

typedef struct row_ent {
    int32_t dev, tgt, drf, pol; /* drf -1: none */
} row_ent;

struct fs_runrec {
    dev_ent **devs;
    model_ent **models;
    pol_ent **pols;
    row_ent *rows;
    int32_t n_devs, n_models, n_pols, n_rows;
    int32_t cap_devs, cap_models, cap_pols, cap_rows;
};

fs_runrec *fs_runrec_new(void)
{
    return calloc(1, sizeof(fs_runrec));
}

void fs_runrec_free(fs_runrec *r)
{
    if (!r) return;
    for (int32_t i = 0; i < r->n_devs; i++)
        free(r->devs[i]);
    for (int32_t i = 0; i < r->n_models; i++)
        free(r->models[i]);
    for (int32_t i = 0; i < r->n_pols; i++) {
        free(r->pols[i]->params);
        free(r->pols[i]);
    }
    free(r->devs);
    free(r->models);
    free(r->pols);
    free(r->rows);
    free(r);
}

/* Grows *v (of elements of size sz) to hold one more; 0, or -1. */
static int grow(void **v, int32_t *cap, int32_t n, size_t sz)
{
    if (n < *cap) return 0;
    int32_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, sz * (size_t)c);
    if (!p) return -1;
    *v = p;
    *cap = c;
    return 0;
}

static int same(sim_id a, sim_id b)
{
    return a.hi == b.hi && a.lo == b.lo;
}

static int32_t find_device(fs_runrec *r, const fs_runrec_point *p)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_str(&h, "name", p->device_name);
    sim_id_hasher_params(&h, "device", sim_device_keys(), p->device);
    for (int32_t i = 0; i < p->n_variants; i++) {
        sim_id_hasher_str(&h, "variant", p->variant_names[i]);
        sim_id_hasher_params(&h, "variant", sim_device_keys(), &p->variants[i]);
    }
    sim_id k = sim_id_hasher_final(&h);
    for (int32_t i = 0; i < r->n_devs; i++)
        if (same(r->devs[i]->key, k)) return i;
    if (grow((void **)&r->devs, &r->cap_devs, r->n_devs, sizeof *r->devs)) return -1;
    dev_ent *e = calloc(1, sizeof *e);
    if (!e) return -1;
    e->key = k;
    e->dev = *p->device;
    snprintf(e->name, sizeof e->name, "%s", p->device_name);
    e->n_var = p->n_variants > SIM_PROFILE_MAX_VARIANTS ? SIM_PROFILE_MAX_VARIANTS : p->n_variants;
    for (int32_t i = 0; i < e->n_var; i++) {
        e->vars[i] = p->variants[i];
        snprintf(e->var_names[i], sizeof e->var_names[i], "%s", p->variant_names[i]);
    }
    r->devs[r->n_devs] = e;
    return r->n_devs++;
}

static int32_t find_model(fs_runrec *r, const sim_model *m, const char *name)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_str(&h, "name", name);
    sim_id_hasher_params(&h, "model", sim_model_keys(), m);
    sim_id k = sim_id_hasher_final(&h);
    for (int32_t i = 0; i < r->n_models; i++)
        if (same(r->models[i]->key, k)) return i;
    if (grow((void **)&r->models, &r->cap_models, r->n_models, sizeof *r->models)) return -1;
    model_ent *e = calloc(1, sizeof *e);
    if (!e) return -1;
    e->key = k;
    e->m = *m;
    snprintf(e->name, sizeof e->name, "%s", name);
    r->models[r->n_models] = e;
    return r->n_models++;
}

static int32_t find_policy(fs_runrec *r, const eng_policy_desc *d, const void *params)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_str(&h, "name", d->name);
    sim_id_hasher_params(&h, "policy", d->params, params);
    sim_id k = sim_id_hasher_final(&h);
    for (int32_t i = 0; i < r->n_pols; i++)
        if (r->pols[i]->desc == d && same(r->pols[i]->key, k)) return i;
    if (grow((void **)&r->pols, &r->cap_pols, r->n_pols, sizeof *r->pols)) return -1;
    pol_ent *e = calloc(1, sizeof *e);
    unsigned char *copy = malloc(d->params_size ? d->params_size : 1);
    if (!e || !copy) {
        free(e);
        free(copy);
        return -1;
    }
    memcpy(copy, params, d->params_size);
    e->key = k;
    e->desc = d;
    e->params = copy;
    r->pols[r->n_pols] = e;
    return r->n_pols++;
}

int fs_runrec_add(fs_runrec *r, const fs_runrec_point *p)
{
    if (grow((void **)&r->rows, &r->cap_rows, r->n_rows, sizeof *r->rows)) return -1;
    row_ent e = {find_device(r, p), find_model(r, p->target, p->target_name),
                 p->draft ? find_model(r, p->draft, p->draft_name) : -1,
                 find_policy(r, p->policy, p->policy_params)};
    if (e.dev < 0 || e.tgt < 0 || (p->draft && e.drf < 0) || e.pol < 0) return -1;
    r->rows[r->n_rows++] = e;
    return 0;
}

/* ------------------------------------------------------------ JSON */

typedef sim_strbuf jbuf;
#define jput sim_strbuf_printf
#define jstr sim_strbuf_json

static void jcstr(jbuf *b, const char *s)
{
    jstr(b, s ? s : "", s ? strlen(s) : 0);
}

static void jnum(jbuf *b, double x)
{
    if (isfinite(x))
        jput(b, "%.17g", x);
    else
        jput(b, "null");
}

/* The values of a struct described by table, as a JSON object: every row,
 * or (set non-NULL) the rows whose set[] is nonzero. */
static void jparams_set(jbuf *b, const eng_param_desc *table, const void *params,
                        const unsigned char *set)
{
    jput(b, "{");
    int first = 1;
    for (const eng_param_desc *d = table; d && d->name; d++) {
        if (set && !set[d - table]) continue;
        const char *f = (const char *)params + d->offset;
        jput(b, "%s", first ? "" : ", ");
        first = 0;
        jcstr(b, d->name);
        jput(b, ": ");
        switch (d->type) {
        case ENG_PARAM_INT: {
            int32_t x;
            memcpy(&x, f, sizeof x);
            jput(b, "%d", (int)x);
            break;
        }
        case ENG_PARAM_BOOL: {
            int32_t x;
            memcpy(&x, f, sizeof x);
            jput(b, "%s", x ? "true" : "false");
            break;
        }
        case ENG_PARAM_ENUM: {
            int32_t x;
            memcpy(&x, f, sizeof x);
            int nc = 0;
            while (d->choices && d->choices[nc])
                nc++;
            if (x >= 0 && x < nc)
                jcstr(b, d->choices[x]);
            else
                jput(b, "%d", (int)x);
            break;
        }
        case ENG_PARAM_DOUBLE: {
            double x;
            memcpy(&x, f, sizeof x);
            jnum(b, x);
            break;
        }
        case ENG_PARAM_STRING:
            jstr(b, f, strnlen(f, d->cap > 0 ? (size_t)d->cap : 0));
            break;
        case ENG_PARAM_DOUBLE_LIST:
        case ENG_PARAM_INT_LIST: {
            int32_t cnt;
            memcpy(&cnt, (const char *)params + d->count_offset, sizeof cnt);
            if (cnt > d->cap) cnt = d->cap;
            jput(b, "[");
            for (int32_t i = 0; i < cnt; i++) {
                if (d->type == ENG_PARAM_INT_LIST) {
                    int32_t x;
                    memcpy(&x, f + (size_t)i * sizeof x, sizeof x);
                    jput(b, "%s%d", i ? ", " : "", (int)x);
                } else {
                    double x;
                    memcpy(&x, f + (size_t)i * sizeof x, sizeof x);
                    jput(b, "%s", i ? ", " : "");
                    jnum(b, x);
                }
            }
            jput(b, "]");
            break;
        }
        }
    }
    jput(b, "}");
}

static void jparams(jbuf *b, const eng_param_desc *table, const void *params)
{
    jparams_set(b, table, params, NULL);
}

/* The record's "flashspec", "command" and "script" members. */
static void json_run(jbuf *b, const fs_runrec_run *run)
{
    jput(b, "{\n  \"flashspec\": {\"version\": ");
    jcstr(b, run->version);
    jput(b, ", \"build_key\": ");
    jcstr(b, run->build_key);
    jput(b, "},\n  \"command\": [");
    for (int i = 0; i < run->argc; i++) {
        jput(b, "%s", i ? ", " : "");
        jcstr(b, run->argv[i]);
    }
    jput(b, "],\n  \"script\": {\"path\": ");
    jcstr(b, run->script_path);
    jput(b, ", \"hash\": ");
    jcstr(b, run->script_hash);
    jput(b, ", \"copy\": %s, \"args\": {", run->script_bytes ? "\"script.lua\"" : "null");
    for (int i = 0; i < run->n_args; i++) {
        const char *eq = strchr(run->args[i], '=');
        if (!eq) continue;
        jput(b, "%s", i ? ", " : "");
        jstr(b, run->args[i], (size_t)(eq - run->args[i]));
        jput(b, ": ");
        jcstr(b, eq + 1);
    }
    jput(b, "}},");
}

/* The "plugins" member: each loaded plug-in's policy, path and SHA-256. */
static void json_plugins(jbuf *b, const fs_runrec_run *run)
{
    jput(b, "\n  \"plugins\": [");
    for (int i = 0; i < run->n_plugins; i++) {
        jput(b, "%s\n    {\"policy\": ", i ? "," : "");
        jcstr(b, run->plugins[i].desc->name);
        jput(b, ", \"path\": ");
        jcstr(b, run->plugins[i].path);
        jput(b, ", \"sha256\": ");
        jcstr(b, run->plugins[i].sha256);
        jput(b, "}");
    }
    jput(b, "%s],", run->n_plugins ? "\n  " : "");
}

/* The plug-in that gives policy d, or NULL. */
static const fs_runrec_plugin *plugin_of(const fs_runrec_run *run, const eng_policy_desc *d)
{
    for (int i = 0; i < run->n_plugins; i++)
        if (run->plugins[i].desc == d) return &run->plugins[i];
    return NULL;
}

/* The "devices" (with their variants), "models" and "policies" members. */
static void json_objects(jbuf *b, const fs_runrec *r, const fs_runrec_run *run)
{
    jput(b, "\n  \"devices\": [");
    for (int32_t i = 0; i < r->n_devs; i++) {
        const dev_ent *e = r->devs[i];
        jput(b, "%s\n    {\"name\": ", i ? "," : "");
        jcstr(b, e->name);
        jput(b, ", \"values\": ");
        jparams(b, sim_device_keys(), &e->dev);
        jput(b, ", \"variants\": [");
        for (int32_t v = 0; v < e->n_var; v++) {
            jput(b, "%s{\"name\": ", v ? ", " : "");
            jcstr(b, e->var_names[v]);
            jput(b, ", \"values\": ");
            jparams(b, sim_device_keys(), &e->vars[v]);
            jput(b, "}");
        }
        jput(b, "]}");
    }
    jput(b, "\n  ],\n  \"models\": [");
    for (int32_t i = 0; i < r->n_models; i++) {
        jput(b, "%s\n    {\"name\": ", i ? "," : "");
        jcstr(b, r->models[i]->name);
        jput(b, ", \"values\": ");
        jparams(b, sim_model_keys(), &r->models[i]->m);
        jput(b, "}");
    }
    jput(b, "\n  ],\n  \"policies\": [");
    for (int32_t i = 0; i < r->n_pols; i++) {
        jput(b, "%s\n    {\"name\": ", i ? "," : "");
        jcstr(b, r->pols[i]->desc->name);
        jput(b, ", \"params\": ");
        jparams(b, r->pols[i]->desc->params, r->pols[i]->params);
        const fs_runrec_plugin *pl = plugin_of(run, r->pols[i]->desc);
        if (pl) {
            jput(b, ", \"plugin\": {\"path\": ");
            jcstr(b, pl->path);
            jput(b, ", \"sha256\": ");
            jcstr(b, pl->sha256);
            jput(b, "}");
        }
        jput(b, "}");
    }
    jput(b, "\n  ],");
}

/* Row i + 1 of the "rows" member: what it ran (indices into the objects) and
 * its point keys. */
static void json_row(jbuf *b, int32_t i, const row_ent *e, const fs_row *w)
{
    jput(b,
         "%s\n    {\"row\": %d, \"policy\": %d, \"device\": %d, \"target\": %d, "
         "\"draft\": ",
         i ? "," : "", (int)i + 1, (int)e->pol, (int)e->dev, (int)e->tgt);
    if (e->drf >= 0)
        jput(b, "%d", (int)e->drf);
    else
        jput(b, "null");
    jput(b, ", \"trace\": ");
    jcstr(b, w->trace);
    jput(b, ", \"trace_checksum\": \"0x%016llx\", \"dram_fraction\": ",
         (unsigned long long)w->trace_checksum);
    jnum(b, w->dram_fraction);
    jput(b,
         ", \"max_new_tokens\": %d, \"prompts\": %d, \"prompt_offset\": %d, "
         "\"seed\": %llu, \"accept\": ",
         (int)w->max_new_tokens, (int)w->prompts, (int)w->prompt_offset,
         (unsigned long long)w->seed);
    jcstr(b, w->accept);
    jput(b, ", \"top_p\": ");
    jnum(b, w->top_p);
    jput(b, ", \"temperature\": ");
    jnum(b, w->temperature);
    jput(b, ", \"runtime\": ");
    jcstr(b, w->runtime);
    jput(b, "}");
}

/* The "traces" member: each trace's file, or its generator settings. */
static void json_traces(jbuf *b, const fs_runrec_run *run)
{
    jput(b, "\n  \"traces\": [");
    for (int32_t i = 0; i < run->n_traces; i++) {
        const fs_runrec_trace *t = &run->traces[i];
        jput(b, "%s\n    {\"name\": ", i ? "," : "");
        jcstr(b, t->name);
        if (!t->synth) {
            jput(b, ", \"path\": ");
            jcstr(b, t->path);
            jput(b, ", \"given\": ");
            jcstr(b, t->given);
            jput(b, "}");
            continue;
        }
        const trc_synth_params *p = t->synth;
        jput(b,
             ", \"synth\": {\"seed\": %llu, \"prompts\": %d, \"prompt_len\": %d, "
             "\"output_len\": %d, \"vocab\": %d, \"k\": %d, \"depth\": %d, \"nodes\": %d, "
             "\"target_layers\": %d, \"exit_layers\": [",
             (unsigned long long)p->seed, (int)p->prompts, (int)p->prompt_len,
             (int)p->output_len, (int)p->vocab, (int)p->k, (int)p->max_depth,
             (int)p->max_nodes, (int)p->target_layers);
        for (int32_t k = 0; k < p->n_exit && k < TRC_MAX_EXIT; k++)
            jput(b, "%s%d", k ? ", " : "", (int)p->exit_layers[k]);
        jput(b, "], \"accept\": [");
        for (int32_t k = 0; k < p->n_accept && k < TRC_MAX_DEPTH; k++) {
            jput(b, "%s", k ? ", " : "");
            jnum(b, p->accept[k]);
        }
        jput(b, "], \"calibration\": ");
        jnum(b, p->calibration);
        jput(b, ", \"coverage\": ");
        jnum(b, p->coverage);
        jput(b, ", \"predictor_accuracy\": ");
        jnum(b, p->predictor_accuracy);
        jput(b, ", \"coverage_share\": ");
        jnum(b, p->coverage_share);
        jput(b, ", \"node_streams\": %d, \"target\": ", (int)p->node_streams);
        jcstr(b, p->target);
        jput(b, ", \"draft\": ");
        jcstr(b, p->draft);
        jput(b, "}}");
    }
    jput(b, "\n  ],");
}

/* The "profiles" member: each profile file as it resolved (flashspec rerun). */
static void json_profiles(jbuf *b, const fs_runrec_run *run)
{
    jput(b, "\n  \"profiles\": [");
    for (int32_t i = 0; i < run->n_profiles; i++) {
        const fs_runrec_profile *p = &run->profiles[i];
        jput(b, "%s\n    {\"kind\": \"%s\", \"path\": ", i ? "," : "",
             p->device ? "device" : "model");
        jcstr(b, p->path);
        jput(b, ", \"values\": ");
        if (p->device)
            jparams(b, sim_device_keys(), p->dev);
        else
            jparams(b, sim_model_keys(), p->model);
        if (p->device) {
            jput(b, ", \"variants\": [");
            for (int32_t v = 0; p->vars && v < p->vars->n; v++) {
                jput(b, "%s{\"name\": ", v ? ", " : "");
                jcstr(b, p->vars->v[v].name);
                jput(b, ", \"values\": ");
                jparams_set(b, sim_device_keys(), &p->vars->v[v].delta, p->vars->v[v].set);
                jput(b, "}");
            }
            jput(b, "]");
        }
        jput(b, "}");
    }
    jput(b, "\n  ],");
}

int fs_runrec_json(const fs_runrec *r, const fs_runrec_run *run, const fs_row *rows, int32_t n_rows,
                   char **out, size_t *len)
{
    jbuf b = {0};
    json_run(&b, run);
    json_plugins(&b, run);
    json_objects(&b, r, run);
    json_traces(&b, run);
    json_profiles(&b, run);
    jput(&b, "\n  \"rows\": [");
    for (int32_t i = 0; i < n_rows && i < r->n_rows; i++)
        json_row(&b, i, &r->rows[i], &rows[i]);
    jput(&b, "\n  ]\n}\n");
    if (b.oom) {
        free(b.p);
        return -1;
    }
    *out = b.p;
    *len = b.n;
    return 0;
}

int32_t fs_runrec_list_traces(const sim_trace_cache *c, const fs_row *rows, int32_t n_rows,
                              const char *home, fs_runrec_trace *out, char (*paths)[PATH_MAX],
                              int32_t cap)
{
    size_t hl = home ? strlen(home) : 0;
    int32_t n = 0;
    for (int32_t i = 0; i < c->n && n < cap; i++) {
        const sim_trace_entry *e = c->e[i];
        int used = 0;
        for (int32_t r = 0; r < n_rows && !used; r++)
            used = !strcmp(rows[r].trace, e->name);
        if (!used) continue;
        out[n] = (fs_runrec_trace){.name = e->name, .given = e->given,
                                   .synth = e->is_synth ? &e->synth : NULL};
        if (!e->is_synth) {
            int inside = hl && !strncmp(e->key, home, hl) && e->key[hl] == '/';
            snprintf(paths[n], PATH_MAX, "%s", inside ? e->key + hl + 1 : e->given);
            out[n].path = paths[n];
        }
        n++;
    }
    return n;
}

int32_t fs_runrec_list_profiles(const sim_profile_cache *c, const char *home,
                                fs_runrec_profile *out, char (*paths)[PATH_MAX], int32_t cap)
{
    size_t hl = home ? strlen(home) : 0;
    int32_t n = 0;
    for (int32_t i = 0; i < c->n && n < cap; i++) {
        const sim_profile_entry *e = c->e[i];
        int inside = hl && !strncmp(e->path, home, hl) && e->path[hl] == '/';
        snprintf(paths[n], PATH_MAX, "%s", inside ? e->path + hl + 1 : e->path);
        out[n] = (fs_runrec_profile){.device = e->device, .path = paths[n],
                                     .dev = e->device ? &e->dev : NULL,
                                     .vars = e->device ? &e->vars : NULL,
                                     .model = e->device ? NULL : &e->model};
        n++;
    }
    return n;
}
