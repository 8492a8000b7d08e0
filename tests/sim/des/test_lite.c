/*
 * test_lite.c -- sim_lite against sim_des: random scripts of services on
 * three resources, whose handlers start more services as they fire, with
 * durations of 0..3 ns so that ties in time are the rule.  Both must fire the
 * same events in the same order at the same times and account the same busy,
 * idle and event totals; plus the refusals (negative duration, no such
 * resource, full line) and the stop flag.
 */
#include "sim/des/sim_des.h"
#include "sim/des/sim_lite.h"

#include <stdio.h>
#include <string.h>

#include "../../check.h"

enum { MAXLOG = 512 };

typedef struct script {
    uint64_t rng;
    int budget, outstanding, next_arg;
    sim_des *des;
    sim_res *res[3];
    sim_lite *lite;
    int n;
    int64_t t[MAXLOG], arg[MAXLOG];
    int stop_at, stop; /* the event count at which a handler raises stop */
} script;

static uint64_t rnd(script *s)
{
    s->rng = s->rng * 6364136223846793005ull + 1442695040888963407ull;
    return s->rng >> 33;
}

static void on_done(void *ctx, sim_des *des, const sim_event *ev);

static void issue(script *s)
{
    int r = (int)(rnd(s) % 3);
    int64_t dur = (int64_t)(rnd(s) % 4);
    int64_t arg = s->next_arg++;
    s->outstanding++;
    s->budget--;
    int rc = s->lite ? sim_lite_use(s->lite, r, dur, on_done, s, arg)
                     : sim_res_use(s->des, s->res[r], dur, on_done, s, NULL, arg);
    CHECK(rc == SIM_OK);
}

static void on_done(void *ctx, sim_des *des, const sim_event *ev)
{
    script *s = ctx;
    int64_t now = s->lite ? sim_lite_now(s->lite) : sim_des_now(des);
    CHECK(now == ev->t_ns);
    CHECK(s->lite ? des == NULL : des == s->des);
    if (s->n < MAXLOG) {
        s->t[s->n] = now;
        s->arg[s->n] = ev->arg;
        s->n++;
    }
    s->outstanding--;
    int k = (int)(rnd(s) % 3);
    for (int i = 0; i < k && s->budget > 0 && s->outstanding < 12; i++)
        issue(s);
    if (s->n == s->stop_at) {
        s->stop = 1;
        if (!s->lite) sim_des_stop(s->des);
    }
}

/* Runs the script with seed on one engine; returns its totals in tot[6]:
 * busy per resource, idle, fired, final time. */
static void play(script *s, uint64_t seed, int lite, int stop_at, int64_t tot[6])
{
    memset(s, 0, sizeof *s);
    s->rng = seed;
    s->budget = 40 + (int)(seed % 60);
    s->stop_at = stop_at;
    sim_lite l;
    if (lite) {
        sim_lite_init(&l, 100);
        s->lite = &l;
    } else {
        s->des = sim_des_create(0);
        CHECK(s->des != NULL);
        if (!s->des) return;
        sim_des_run_until(s->des, 100); /* both start at t = 100 */
        for (int r = 0; r < 3; r++)
            s->res[r] = sim_des_add_resource(s->des, "r");
    }
    int64_t idle0 = lite ? 0 : sim_des_idle_ns(s->des);
    int first = 1 + (int)(rnd(s) % 5);
    for (int i = 0; i < first; i++)
        issue(s);
    if (lite)
        sim_lite_run(&l, &s->stop);
    else
        sim_des_run(s->des);
    for (int r = 0; r < 3; r++)
        tot[r] = lite ? sim_lite_busy_ns(&l, r) : sim_res_busy_ns(s->res[r]);
    tot[3] = lite ? sim_lite_idle_ns(&l) : sim_des_idle_ns(s->des) - idle0;
    tot[4] = lite ? (int64_t)sim_lite_fired(&l) : (int64_t)sim_des_fired(s->des);
    tot[5] = lite ? sim_lite_now(&l) : sim_des_now(s->des);
    if (!lite) sim_des_destroy(s->des);
}

static void test_same_runs(void)
{
    static script a, b;
    int ties = 0;
    for (uint64_t seed = 1; seed <= 2000; seed++) {
        int stop_at = seed % 7 == 0 ? 5 + (int)(seed % 20) : -1; /* some runs stopped early */
        int64_t ta[6], tb[6];
        play(&a, seed, 0, stop_at, ta);
        play(&b, seed, 1, stop_at, tb);
        CHECK_EQ_INT(a.n, b.n);
        int same = a.n == b.n;
        for (int i = 0; same && i < a.n; i++)
            same = a.t[i] == b.t[i] && a.arg[i] == b.arg[i];
        CHECK(same);
        for (int j = 0; j < 6; j++)
            CHECK(ta[j] == tb[j]);
        for (int i = 1; i < a.n; i++)
            ties += a.t[i] == a.t[i - 1];
    }
    CHECK(ties > 10000); /* the order of simultaneous events was exercised */
}

static void test_refusals(void)
{
    sim_lite l;
    sim_lite_init(&l, 0);
    CHECK(sim_lite_use(&l, 3, 1, NULL, NULL, 0) == SIM_INTERNAL_DES_LIMIT);
    CHECK(sim_lite_use(&l, -1, 1, NULL, NULL, 0) == SIM_INTERNAL_DES_LIMIT);
    CHECK(sim_lite_use(&l, 0, -1, NULL, NULL, 0) == SIM_INTERNAL_DES_PAST);
    CHECK(sim_lite_use(&l, 0, 5, NULL, NULL, 0) == SIM_OK); /* in service */
    for (int i = 0; i < SIM_LITE_LINE; i++)
        CHECK(sim_lite_use(&l, 0, 1, NULL, NULL, i) == SIM_OK);
    CHECK(sim_lite_use(&l, 0, 1, NULL, NULL, 99) == SIM_INTERNAL_DES_FULL);
    CHECK(sim_lite_busy_ns(&l, 0) == 0 && sim_lite_idle_ns(&l) == 0);
    CHECK(sim_lite_run(&l, NULL) == SIM_LITE_LINE + 1);
    CHECK(sim_lite_now(&l) == 5 + SIM_LITE_LINE && sim_lite_busy_ns(&l, 0) == 5 + SIM_LITE_LINE);
    CHECK(sim_lite_busy_ns(&l, 1) == 0 && sim_lite_busy_ns(&l, 7) == 0);
}

int main(void)
{
    test_same_runs();
    test_refusals();
    printf("lite: ok\n");
    return check_done("des/lite");
}
