/*
 * api_names.c -- one name, one thing, in the result rows.
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
#include "api_impl.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/config/lparams.h"
#include "sim/sweep/sim_sweep_store.h"

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

void fs_api_free_names(fs_api *a)
{
    if (!a->names) return;
    free(a->names->c);
    free(a->names);
    a->names = NULL;
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

/* Claims name for the thing id (of kind); raises when another thing holds it. */
static void claim(lua_State *L, fs_api *a, char kind, const char *name, sim_id id,
                  const char *chunk, int line)
{
    struct fs_names *t = a->names;
    for (int32_t i = 0; i < t->n; i++) {
        fs_name_claim *c = &t->c[i];
        if (c->kind != kind || strcasecmp(c->name, name) != 0) continue;
        if (c->id.hi == id.hi && c->id.lo == id.lo) return;
        fs_raise(L, SIM_CONFIG, 0,
                 "%s:%d: two different %s are called '%s'%s%s (the other first used at %s): "
                 "their result rows would read alike; %s",
                 chunk, line, kind_word(kind), name, strcmp(c->name, name) ? " / " : "",
                 strcmp(c->name, name) ? c->name : "", c->where, kind_hint(kind));
    }
    if (t->n == t->cap) {
        int32_t cap = t->cap ? 2 * t->cap : 16;
        fs_name_claim *g = realloc(t->c, sizeof *g * (size_t)cap);
        if (!g) fs_raise(L, SIM_NOMEM, 0, "out of memory");
        t->c = g;
        t->cap = cap;
    }
    fs_name_claim *c = &t->c[t->n++];
    c->kind = kind;
    snprintf(c->name, sizeof c->name, "%s", name);
    c->id = id;
    snprintf(c->where, sizeof c->where, "%s:%d", chunk, line);
}

/* What a policy's name stands for: its code (see the file comment). */
static sim_id policy_code(const ud_policy *pol)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    const eng_param_desc *sh = eng_params_find(pol->desc->params, "source_hash");
    if (sh && sh->type == ENG_PARAM_STRING) {
        const char *v = (const char *)pol->params + sh->offset;
        char code[128];
        snprintf(code, sizeof code, "%.*s", (int)strnlen(v, (size_t)sh->cap), v);
        sim_id_hasher_str(&h, "policy.source", code);
    } else {
        char ptr[32];
        snprintf(ptr, sizeof ptr, "%p", (const void *)pol->desc);
        sim_id_hasher_str(&h, "policy.desc", ptr);
    }
    return sim_id_hasher_final(&h);
}

static sim_id device_code(const ud_device *dev)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_params(&h, "device", sim_device_keys(), &dev->dev);
    for (int32_t i = 0; i < dev->n_variants; i++) {
        sim_id_hasher_str(&h, "device.variant", dev->variant_names[i]);
        sim_id_hasher_params(&h, "device.variant", sim_device_keys(), &dev->variants[i]);
    }
    return sim_id_hasher_final(&h);
}

static sim_id model_code(const ud_model *m)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_params(&h, "model", sim_model_keys(), &m->model);
    return sim_id_hasher_final(&h);
}

void fs_api_claim_names(lua_State *L, fs_api *a, const ud_policy *pol, const ud_device *dev,
                        const ud_model *tgt, const ud_model *drf, const char *chunk, int line)
{
    if (!a->names && !(a->names = calloc(1, sizeof *a->names)))
        fs_raise(L, SIM_NOMEM, 0, "out of memory");
    claim(L, a, 'p', pol->desc->name, policy_code(pol), chunk, line);
    claim(L, a, 'd', dev->name, device_code(dev), chunk, line);
    claim(L, a, 'm', tgt->name, model_code(tgt), chunk, line);
    if (drf) claim(L, a, 'm', drf->name, model_code(drf), chunk, line);
}

const char *fs_policy_name_taken(const fs_api *a, const char *name)
{
    int32_t n = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&n);
    for (int32_t i = 0; i < n; i++)
        if (strcasecmp(reg[i]->name, name) == 0) return reg[i]->name;
    if (strcasecmp(name, "lua") == 0) return "lua";
    for (int i = 0; i < a->n_plugins; i++)
        if (strcasecmp(a->plugins[i].desc->name, name) == 0) return a->plugins[i].desc->name;
    return NULL;
}
