/*
 * synth_fixture.h -- a synthetic trace for the replay's tests: trc_synth
 * with the test's parameters, or the test ends (exit 1) with the
 * generator's message; and an oracle over a trace with a tree to draft in.
 */
#ifndef TESTS_SIM_REPLAY_SYNTH_FIXTURE_H
#define TESTS_SIM_REPLAY_SYNTH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "sim/replay/rp_oracle.h"
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

/* The replay's oracles over trace tr (its synthesis fitted, an MT19937
 * stream seeded with seed) and a tree of cap nodes with mult * cap candidate
 * sets of the trace's K.  The fixture must not move once open (the oracle's
 * function tables point into it). */
typedef struct oracle_fixture {
    rp_synth_stats st;
    gsl_rng *rng;
    rp_oracle o;
    void *mem;
    eng_tree tree;
} oracle_fixture;

static inline void oracle_fixture_open(oracle_fixture *f, const trc_trace *tr, unsigned long seed,
                                       int32_t cap, int32_t mult)
{
    rp_synth_fit(tr, &f->st);
    f->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!f->rng || rp_oracle_init(&f->o, tr, &f->st, f->rng, cap) != 0) {
        fprintf(stderr, "oracle set-up failed\n");
        exit(1);
    }
    gsl_rng_set(f->rng, seed);
    int32_t slots = cap * mult * f->o.k;
    size_t bytes = eng_tree_bytes(cap, slots);
    f->mem = malloc(bytes);
    if (!f->mem || eng_tree_init(&f->tree, f->mem, bytes, cap, slots) != ENG_OK) {
        fprintf(stderr, "tree set-up failed\n");
        exit(1);
    }
}

static inline void oracle_fixture_close(oracle_fixture *f)
{
    free(f->mem);
    rp_oracle_free(&f->o);
    gsl_rng_free(f->rng);
}

#endif
