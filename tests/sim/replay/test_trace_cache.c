/*
 * test_trace_cache.c -- the traces a script run holds (sim/replay/
 * sim_trace_cache.h): an added entry's fields; find by key, only while the
 * entry holds a trace or a pending one; release by generation (strictly
 * before it, from an index on), with the bytes freed and the entries kept;
 * a released entry is not found again; free empties the cache.
 */
#include "sim/replay/sim_trace_cache.h"

#include <string.h>

#include "../../check.h"
#include "synth_fixture.h"

static trc_trace *small_trace(uint64_t seed)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 2;
    p.prompt_len = 2;
    p.output_len = 8;
    p.max_nodes = 9;
    p.seed = seed;
    return synth_or_exit(&p);
}

int main(void)
{
    sim_trace_cache c = {0};
    trc_trace *t[3] = {small_trace(1), small_trace(2), small_trace(3)};
    size_t b[3] = {trc_bytes(t[0]), trc_bytes(t[1]), trc_bytes(t[2])};
    CHECK(sim_trace_cache_find(&c, "a") == NULL);
    sim_trace_entry *e0 = sim_trace_cache_add(&c, "/x/a.h5", "a", t[0], 1);
    CHECK(e0 && !strcmp(e0->key, "/x/a.h5") && !strcmp(e0->name, "a") && e0->trace == t[0] &&
          e0->used_at == 1 && e0->pending == NULL && e0->given[0] == 0 && e0->is_synth == 0);
    sim_trace_entry *e1 = sim_trace_cache_add(&c, "synth:1", "s1", t[1], 2);
    sim_trace_entry *e2 = sim_trace_cache_add(&c, "synth:2", "s2", t[2], 3);
    int dummy;
    sim_trace_entry *e3 = sim_trace_cache_add(&c, "synth:3", "s3", NULL, 3);
    CHECK_EQ_INT(c.n, 4);
    /* found by key; an entry without trace or pending one is not */
    CHECK(sim_trace_cache_find(&c, "/x/a.h5") == e0);
    CHECK(sim_trace_cache_find(&c, "synth:2") == e2);
    CHECK(sim_trace_cache_find(&c, "synth:3") == NULL);
    e3->pending = &dummy;
    CHECK(sim_trace_cache_find(&c, "synth:3") == e3);
    e3->pending = NULL;
    CHECK(sim_trace_cache_find(&c, "/x/a") == NULL);
    /* release: before generation 3, from entry 1 on -- only e1 */
    CHECK(sim_trace_cache_release(&c, 1, 3) == b[1]);
    CHECK(e1->trace == NULL && e0->trace == t[0] && e2->trace == t[2]);
    CHECK(sim_trace_cache_find(&c, "synth:1") == NULL);
    CHECK(sim_trace_cache_release(&c, 1, 3) == 0); /* already released */
    /* a negative from is 0; generation 3 itself is kept */
    CHECK(sim_trace_cache_release(&c, -1, 3) == b[0]);
    CHECK(e0->trace == NULL && e2->trace == t[2]);
    CHECK_EQ_INT(c.n, 4); /* the entries stay */
    CHECK(!strcmp(e1->name, "s1"));
    CHECK(sim_trace_cache_release(&c, 0, 4) == b[2]);
    /* a key again after its release: a new entry */
    sim_trace_entry *e4 = sim_trace_cache_add(&c, "synth:1", "s1", small_trace(2), 5);
    CHECK(sim_trace_cache_find(&c, "synth:1") == e4);
    for (int i = 0; i < 8; i++) /* growing past the first capacity */
        CHECK(sim_trace_cache_add(&c, "more", "m", NULL, 6) != NULL);
    CHECK_EQ_INT(c.n, 13);
    CHECK(sim_trace_cache_find(&c, "synth:1") == e4);
    /* two at once: the bytes of both */
    trc_trace *t5 = small_trace(5);
    size_t b45 = trc_bytes(e4->trace) + trc_bytes(t5);
    CHECK(sim_trace_cache_add(&c, "synth:5", "s5", t5, 5) != NULL);
    CHECK(sim_trace_cache_release(&c, 0, 6) == b45);
    CHECK(e4->trace == NULL);
    CHECK(sim_trace_cache_add(&c, "synth:6", "s6", small_trace(6), 6) != NULL);
    sim_trace_cache_free(&c); /* with a trace still held */
    CHECK(c.n == 0 && c.cap == 0 && c.e == NULL);
    return check_done("test_trace_cache");
}
