/*
 * sim_profile_cache.h -- the profile files a script run has read, kept by
 * path: each file is read once per run, so that a script asking for the same
 * device or model again and again (flashspec.calibrate's evaluations) does
 * not re-run its chain, and an edit of the file while the script runs is not
 * seen halfway through: the whole run uses the values read first.  A rerun
 * puts run.json's recorded values in it before the script runs, under
 * today's path of each file.
 */
#ifndef FS_CONFIG_SIM_PROFILE_CACHE_H
#define FS_CONFIG_SIM_PROFILE_CACHE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/config/profile.h"

/* The most profiles a cache keeps. */
#define SIM_PROFILE_CACHE_MAX 256

typedef struct sim_profile_entry {
    char path[PATH_MAX];
    int device; /* 1: dev and vars, 0: model */
    sim_device dev;
    sim_device_variants vars;
    sim_model model;
} sim_profile_entry;

typedef struct sim_profile_cache {
    sim_profile_entry **e;
    int32_t n, cap;
} sim_profile_cache; /* {0}: empty */

/* The entry of the device (device 1) or model (0) profile read from path, or
 * NULL. */
const sim_profile_entry *sim_profile_cache_find(const sim_profile_cache *c, const char *path,
                                                int device);

/* Keeps a copy of a profile read from path: dev and vars for a device (NULL:
 * zeros), model for a model.  0, or -1 (not kept) when the cache holds
 * SIM_PROFILE_CACHE_MAX profiles already or memory runs out. */
int sim_profile_cache_keep(sim_profile_cache *c, const char *path, int device,
                           const sim_device *dev, const sim_device_variants *vars,
                           const sim_model *model);

/* The path of a kept profile of kind ("devices" or "models") called name --
 * one whose path ends in /<kind>/<name>.lua, the first kept -- into path;
 * path unchanged when there is none. */
void sim_profile_cache_named(const sim_profile_cache *c, const char *kind, const char *name,
                             char *path, size_t n);

/* The device profile at path (sim_profile_load_device_variants), from the
 * cache when it holds it, else read and kept: SIM_OK, or the loader's
 * status with its message in err. */
int sim_profile_cache_device(sim_profile_cache *c, const char *path, sim_device *dev,
                             sim_device_variants *vars, char *err, size_t errlen);
/* Likewise for a model profile (sim_profile_load_model). */
int sim_profile_cache_model(sim_profile_cache *c, const char *path, sim_model *model, char *err,
                            size_t errlen);

/* Frees every entry; the cache is empty. */
void sim_profile_cache_free(sim_profile_cache *c);

#endif
