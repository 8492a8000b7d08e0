/*
 * test_evq.c -- event order (time, priority, sequence) and a differential test
 * of the binary heap against a naive sorted list on random schedules.
 */
#include "sim/des/sim_evq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"

static void nop(void *ctx, sim_des *des, const sim_event *ev)
{
    (void)ctx, (void)des, (void)ev;
}

static sim_event mk(int64_t t, int32_t prio, uint64_t seq)
{
    sim_event e = {.t_ns = t, .prio = prio, .seq = seq, .fn = nop, .arg = (int64_t)seq};
    return e;
}

static void test_ties(void)
{
    sim_evq q;
    CHECK(sim_evq_init(&q, NULL, 2) == SIM_OK);
    /* pushed out of order; expected pop order by (t, prio, seq) */
    CHECK(sim_evq_push(&q, &(sim_event){.t_ns = 5, .prio = 1, .seq = 0, .fn = nop, .arg = 3}) == 0);
    CHECK(sim_evq_push(&q, &(sim_event){.t_ns = 5, .prio = 0, .seq = 1, .fn = nop, .arg = 1}) == 0);
    CHECK(sim_evq_push(&q, &(sim_event){.t_ns = 5, .prio = 0, .seq = 2, .fn = nop, .arg = 2}) == 0);
    CHECK(sim_evq_push(&q, &(sim_event){.t_ns = 1, .prio = 9, .seq = 3, .fn = nop, .arg = 0}) == 0);
    CHECK(sim_evq_push(&q, &(sim_event){.t_ns = 7, .prio = -4, .seq = 4, .fn = nop, .arg = 4}) ==
          0);
    CHECK(sim_evq_size(&q) == 5);
    CHECK(sim_evq_peek(&q)->arg == 0);
    for (int64_t want = 0; want < 5; want++) {
        sim_event e;
        CHECK(sim_evq_pop(&q, &e) == SIM_OK);
        CHECK(e.arg == want);
    }
    sim_event e;
    CHECK(sim_evq_pop(&q, &e) == SIM_INTERNAL_DES_EMPTY);
    CHECK(sim_evq_peek(&q) == NULL);
    sim_evq_free(&q);
    sim_evq_free(NULL);
}

static void test_fixed_arena(void)
{
    sim_event arena[3];
    sim_evq q;
    CHECK(sim_evq_init(&q, arena, 3) == SIM_OK);
    for (int i = 0; i < 3; i++) {
        sim_event e = mk(10 - i, 0, (uint64_t)i);
        CHECK(sim_evq_push(&q, &e) == SIM_OK);
    }
    sim_event e = mk(0, 0, 9);
    CHECK(sim_evq_push(&q, &e) == SIM_INTERNAL_DES_FULL);
    CHECK(sim_evq_pop(&q, &e) == SIM_OK && e.t_ns == 8);
    sim_evq_clear(&q);
    CHECK(sim_evq_size(&q) == 0);
    sim_evq_free(&q); /* borrowed arena: nothing freed */
}

/* naive reference: an array kept sorted by insertion, popped from the front */
typedef struct naive {
    sim_event *v;
    size_t n;
} naive;

static void naive_push(naive *nv, const sim_event *e)
{
    size_t i = nv->n;
    while (i > 0 && sim_event_before(e, &nv->v[i - 1])) i--;
    memmove(&nv->v[i + 1], &nv->v[i], (nv->n - i) * sizeof *nv->v);
    nv->v[i] = *e;
    nv->n++;
}

static int naive_pop(naive *nv, sim_event *out)
{
    if (nv->n == 0) return 0;
    *out = nv->v[0];
    memmove(&nv->v[0], &nv->v[1], (nv->n - 1) * sizeof *nv->v);
    nv->n--;
    return 1;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_differential(void)
{
    enum { N = 20000 };
    sim_evq q;
    CHECK(sim_evq_init(&q, NULL, 0) == SIM_OK);
    naive nv = {malloc(N * sizeof(sim_event)), 0};
    CHECK(nv.v != NULL);
    uint64_t s = 0x9e3779b97f4a7c15ull, seq = 0;
    size_t pops = 0;
    int64_t last_t = -1;
    /* mixed pushes and pops; few distinct times and priorities force many ties */
    for (int step = 0; step < 3 * N; step++) {
        uint64_t r = rng_next(&s);
        if ((r % 3 != 0 || nv.n == 0) && seq < N) {
            int64_t t = last_t < 0 ? 0 : last_t;
            sim_event e = mk(t + (int64_t)(r >> 8) % 16, (int32_t)((r >> 20) % 3) - 1, seq++);
            CHECK(sim_evq_push(&q, &e) == SIM_OK);
            naive_push(&nv, &e);
        } else if (nv.n > 0) {
            sim_event a, b;
            CHECK(sim_evq_pop(&q, &a) == SIM_OK);
            CHECK(naive_pop(&nv, &b));
            CHECK(a.t_ns == b.t_ns && a.prio == b.prio && a.seq == b.seq && a.arg == b.arg);
            CHECK(a.t_ns >= last_t); /* pushes never go before the last pop: monotone */
            last_t = a.t_ns;
            pops++;
        }
        CHECK(sim_evq_size(&q) == nv.n);
    }
    sim_event a, b;
    while (naive_pop(&nv, &b)) {
        CHECK(sim_evq_pop(&q, &a) == SIM_OK);
        CHECK(a.seq == b.seq);
        pops++;
    }
    CHECK(pops == N);
    CHECK(sim_evq_size(&q) == 0);
    free(nv.v);
    sim_evq_free(&q);
}

int main(void)
{
    test_ties();
    test_fixed_arena();
    test_differential();
    printf("evq: ok\n");
    return check_done("des/evq");
}
