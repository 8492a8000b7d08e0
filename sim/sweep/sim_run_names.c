/*
 * sim_run_names.c -- one name, one thing, in the result rows (sim_run.h).
 *
 * A row names its policy, device, target, draft and trace; a reader (the
 * analysis tools, a table in a paper) tells points apart by those names and
 * the policy's parameters.  Two different things under one name -- a device
 * loaded from a modified copy of a profile that kept its `name`, overrides
 * given `name = "oneplus12"`, two Lua policy files whose hooks share a name --
 * would give rows that read alike and mean different things.  So every name a recorded row
 * carries is claimed for what it names, and a second, different thing under
 * that name -- compared without regard to case, since "Flash_AR" beside
 * "flash_ar" reads as the same policy -- is refused (exit 78) where it is
 * first used, naming where the first one was.
 *
 * What counts as the same thing: a device or model by every value (a device
 * with its standing variants), a policy by its code -- the descriptor of a
 * built-in or plug-in policy, the file digest (its `source_hash` parameter)
 * of a Lua policy, whose parameters are the label's business, not the
 * name's.  Evaluations (calibrate, tune) record no rows and claim nothing.
 * Traces are not claimed: a named synthetic trace is drawn again under its
 * name by design (a calibration's bootstrap replicates), and every row
 * carries its trace's checksum beside the name.
 *
 * Cost: a linear scan of the claims per staged point and object; a script
 * names a few dozen things.
 */
#include "sim/sweep/sim_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/sim_id.h"
#include "sim/sim_status.h"

typedef struct fs_name_claim {
    char kind; /* 'p' policy, 'd' device, 'm' model (target or draft) */
    char name[128];
    sim_id id;   /* what it names */
    char where[160];   /* CHUNK:LINE of its first use */
} fs_name_claim;

struct fs_names {
    fs_name_claim *c;
    int32_t n, cap;
};

void sim_run_free_names(sim_run *r)
{
    if (!r->names) return;
    free(r->names->c);
    free(r->names);
    r->names = NULL;
}

static const char *kind_word(char kind)
{
    return kind == 'p' ? "policies" : kind == 'd' ? "devices" : "models";
}

static const char *kind_hint(char kind)
{
    switch (kind) {
    case 'p':
        return "give one Lua policy another `name` in its hooks table (or rename its file)";
    case 'd':
        return "give one device another name (its profile's `name`, or `name = ...` among "
               "its overrides)";
    default:
        return "give one model another name (its profile's `name`, or `name = ...` among its "
               "overrides)";
    }
}

/* Claims name for the thing id (of kind): SIM_OK, or SIM_CONFIG (another
 * thing holds it) or SIM_NOMEM with one line in err. */
static int claim(sim_run *r, char kind, const char *name, sim_id id, const char *chunk, int line,
                 char *err, size_t errlen)
{
    struct fs_names *t = r->names;
    for (int32_t i = 0; i < t->n; i++) {
        fs_name_claim *c = &t->c[i];
        if (c->kind != kind || strcasecmp(c->name, name) != 0) continue;
        if (c->id.hi == id.hi && c->id.lo == id.lo) return SIM_OK;
        snprintf(err, errlen,
                 "%s:%d: two different %s are called '%s'%s%s (the other first used at %s): "
                 "their result rows would read alike; %s",
                 chunk, line, kind_word(kind), name, strcmp(c->name, name) ? " / " : "",
                 strcmp(c->name, name) ? c->name : "", c->where, kind_hint(kind));
        return SIM_CONFIG;
    }
    if (t->n == t->cap) {
        int32_t cap = t->cap ? 2 * t->cap : 16;
        fs_name_claim *g = realloc(t->c, sizeof *g * (size_t)cap);
        if (!g) return snprintf(err, errlen, "out of memory"), SIM_NOMEM;
        t->c = g;
        t->cap = cap;
    }
    fs_name_claim *c = &t->c[t->n++];
    c->kind = kind;
    snprintf(c->name, sizeof c->name, "%s", name);
    c->id = id;
    snprintf(c->where, sizeof c->where, "%s:%d", chunk, line);
    return SIM_OK;
}

/* What a policy's name stands for: its code (see the file comment). */
static sim_id policy_code(const sim_run_named *w)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    const eng_param_desc *sh = eng_params_find(w->policy->params, "source_hash");
    if (sh && sh->type == ENG_PARAM_STRING) {
        const char *v = (const char *)w->policy_params + sh->offset;
        char code[128];
        snprintf(code, sizeof code, "%.*s", (int)strnlen(v, (size_t)sh->cap), v);
        sim_id_hasher_str(&h, "policy.source", code);
    } else {
        char ptr[32];
        snprintf(ptr, sizeof ptr, "%p", (const void *)w->policy);
        sim_id_hasher_str(&h, "policy.desc", ptr);
    }
    return sim_id_hasher_final(&h);
}

static sim_id device_code(const sim_run_named *w)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_params(&h, "device", sim_device_keys(), w->device);
    for (int32_t i = 0; i < w->n_variants; i++) {
        sim_id_hasher_str(&h, "device.variant", w->variant_names[i]);
        sim_id_hasher_params(&h, "device.variant", sim_device_keys(), &w->variants[i]);
    }
    return sim_id_hasher_final(&h);
}

static sim_id model_code(const sim_model *m)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_params(&h, "model", sim_model_keys(), m);
    return sim_id_hasher_final(&h);
}

int sim_run_claim_names(sim_run *r, const sim_run_named *w, const char *chunk, int line,
                        char *err, size_t errlen)
{
    if (!r->names && !(r->names = calloc(1, sizeof *r->names)))
        return snprintf(err, errlen, "out of memory"), SIM_NOMEM;
    int rc = claim(r, 'p', w->policy->name, policy_code(w), chunk, line, err, errlen);
    if (rc == SIM_OK)
        rc = claim(r, 'd', w->device_name, device_code(w), chunk, line, err, errlen);
    if (rc == SIM_OK)
        rc = claim(r, 'm', w->target_name, model_code(w->target), chunk, line, err, errlen);
    if (rc == SIM_OK && w->draft)
        rc = claim(r, 'm', w->draft_name, model_code(w->draft), chunk, line, err, errlen);
    return rc;
}

const char *sim_run_policy_name_taken(const sim_run *r, const char *name)
{
    int32_t n = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&n);
    for (int32_t i = 0; i < n; i++)
        if (strcasecmp(reg[i]->name, name) == 0) return reg[i]->name;
    if (strcasecmp(name, "lua") == 0) return "lua";
    for (int i = 0; i < r->n_plugins; i++)
        if (strcasecmp(r->plugins[i].desc->name, name) == 0) return r->plugins[i].desc->name;
    return NULL;
}
