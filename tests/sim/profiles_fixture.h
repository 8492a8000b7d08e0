/*
 * profiles_fixture.h -- the phone and models most replay tests run on: the
 * OnePlus 12 profile, Qwen3-8B (Q4_0) and its EAGLE-3 draft, read from the
 * configs directory given on the test's command line.  A profile that does
 * not load ends the test (exit 1) with the loader's message.
 */
#ifndef TESTS_SIM_PROFILES_FIXTURE_H
#define TESTS_SIM_PROFILES_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "sim/config/profile.h"

static sim_device dev;
static sim_model tgt, drf;

static void load_profiles(const char *configs)
{
    static const char *const files[] = {"devices/oneplus12.lua", "models/qwen3-8b-q4_0.lua",
                                        "models/qwen3-8b-eagle3-q4_0.lua"};
    for (int i = 0; i < 3; i++) {
        char path[1024], err[512] = "";
        snprintf(path, sizeof path, "%s/%s", configs, files[i]);
        int rc = i == 0 ? sim_profile_load_device(path, &dev, err, sizeof err)
                        : sim_profile_load_model(path, i == 1 ? &tgt : &drf, err, sizeof err);
        if (rc != SIM_OK) {
            fprintf(stderr, "%s: %s\n", path, err);
            exit(1);
        }
    }
}

#endif
