/*
 * synth_fixture.h -- a synthetic trace for the replay's tests: trc_synth
 * with the test's parameters, or the test ends (exit 1) with the
 * generator's message.
 */
#ifndef TESTS_SIM_REPLAY_SYNTH_FIXTURE_H
#define TESTS_SIM_REPLAY_SYNTH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "traces/trc.h"

static inline trc_trace *synth_or_exit(const trc_synth_params *p)
{
    trc_trace *t = NULL;
    trc_err err;
    if (trc_synth(p, &t, &err) != TRC_OK) {
        fprintf(stderr, "synth failed: %s\n", err.msg);
        exit(1);
    }
    return t;
}

#endif
