/*
 * sim_profile_cache.c -- the profile files a script run has read.  See
 * sim_profile_cache.h.
 */
#include "sim/config/sim_profile_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_status.h"

void sim_profile_cache_free(sim_profile_cache *c)
{
    for (int32_t i = 0; i < c->n; i++)
        free(c->e[i]);
    free(c->e);
    *c = (sim_profile_cache){0};
}

void sim_profile_cache_named(const sim_profile_cache *c, const char *kind, const char *name,
                             char *path, size_t n)
{
    char tail[SIM_PROFILE_NAME_CAP + 32];
    int tl = snprintf(tail, sizeof tail, "/%s/%s.lua", kind, name);
    for (int32_t i = 0; tl > 0 && (size_t)tl < sizeof tail && i < c->n; i++) {
        const char *p = c->e[i]->path;
        size_t pl = strlen(p);
        if (c->e[i]->device == !strcmp(kind, "devices") && pl >= (size_t)tl &&
            !strcmp(p + pl - (size_t)tl, tail)) {
            snprintf(path, n, "%s", p);
            return;
        }
    }
}

const sim_profile_entry *sim_profile_cache_find(const sim_profile_cache *c, const char *path,
                                                int device)
{
    for (int32_t i = 0; i < c->n; i++)
        if (c->e[i]->device == device && strcmp(c->e[i]->path, path) == 0) return c->e[i];
    return NULL;
}

int sim_profile_cache_keep(sim_profile_cache *c, const char *path, int device,
                           const sim_device *dev, const sim_device_variants *vars,
                           const sim_model *model)
{
    if (c->n == SIM_PROFILE_CACHE_MAX) return -1;
    if (c->n == c->cap) {
        int32_t cap = c->cap ? 2 * c->cap : 8;
        sim_profile_entry **n = realloc(c->e, sizeof *n * (size_t)cap);
        if (!n) return -1;
        c->e = n;
        c->cap = cap;
    }
    sim_profile_entry *e = calloc(1, sizeof *e);
    if (!e) return -1;
    snprintf(e->path, sizeof e->path, "%s", path);
    e->device = device;
    if (dev) e->dev = *dev;
    if (vars) e->vars = *vars;
    if (model) e->model = *model;
    c->e[c->n++] = e;
    return 0;
}

int sim_profile_cache_device(sim_profile_cache *c, const char *path, sim_device *dev,
                             sim_device_variants *vars, char *err, size_t errlen)
{
    const sim_profile_entry *e = sim_profile_cache_find(c, path, 1);
    if (e) {
        *dev = e->dev;
        *vars = e->vars;
        return SIM_OK;
    }
    int rc = sim_profile_load_device_variants(path, dev, vars, err, errlen);
    if (rc == SIM_OK) sim_profile_cache_keep(c, path, 1, dev, vars, NULL);
    return rc;
}

int sim_profile_cache_model(sim_profile_cache *c, const char *path, sim_model *model, char *err,
                            size_t errlen)
{
    const sim_profile_entry *e = sim_profile_cache_find(c, path, 0);
    if (e) {
        *model = e->model;
        return SIM_OK;
    }
    int rc = sim_profile_load_model(path, model, err, errlen);
    if (rc == SIM_OK) sim_profile_cache_keep(c, path, 0, NULL, NULL, model);
    return rc;
}
