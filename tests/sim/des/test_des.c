/*
 * test_des.c -- clock monotonicity, run/run_until/stop, FIFO resource queueing,
 * busy-time and idle-time sums, request/release.
 */
#include "sim/des/sim_des.h"

#include <stdio.h>
#include <stdlib.h>

#include "../../check.h"

typedef struct log_t {
    int64_t t[256];
    int64_t arg[256];
    int n;
    int64_t last_now;
} log_t;

static void record(void *ctx, sim_des *des, const sim_event *ev)
{
    log_t *lg = ctx;
    CHECK(sim_des_now(des) == ev->t_ns);
    CHECK(sim_des_now(des) >= lg->last_now); /* the clock never goes back */
    lg->last_now = sim_des_now(des);
    lg->t[lg->n] = ev->t_ns;
    lg->arg[lg->n] = ev->arg;
    lg->n++;
}

static void test_order_and_clock(void)
{
    sim_des *des = sim_des_create(1);
    log_t lg = {0};
    CHECK(des && sim_des_now(des) == 0);
    CHECK(sim_des_schedule(des, 30, 0, record, &lg, NULL, 4) == SIM_OK);
    CHECK(sim_des_schedule(des, 10, 1, record, &lg, NULL, 2) == SIM_OK);
    CHECK(sim_des_schedule(des, 10, 0, record, &lg, NULL, 0) == SIM_OK);
    CHECK(sim_des_schedule(des, 10, 0, record, &lg, NULL, 1) == SIM_OK);
    CHECK(sim_des_schedule_at(des, 20, 5, record, &lg, NULL, 3) == SIM_OK);
    CHECK(sim_des_schedule(des, -1, 0, record, &lg, NULL, 9) == SIM_INTERNAL_DES_PAST);
    CHECK(sim_des_pending(des) == 5);
    CHECK(sim_des_run(des) == 5);
    CHECK(lg.n == 5);
    for (int i = 0; i < 5; i++)
        CHECK(lg.arg[i] == i);
    CHECK(sim_des_now(des) == 30);
    CHECK(sim_des_schedule_at(des, 29, 0, record, &lg, NULL, 9) == SIM_INTERNAL_DES_PAST);
    CHECK(sim_des_fired(des) == 5);
    sim_des_destroy(des);
    sim_des_destroy(NULL);
}

static void test_run_until_and_stop(void)
{
    sim_des *des = sim_des_create(0);
    log_t lg = {0};
    for (int i = 1; i <= 5; i++)
        CHECK(sim_des_schedule(des, 100 * i, 0, record, &lg, NULL, i) == SIM_OK);
    CHECK(sim_des_run_until(des, 250) == 2);
    CHECK(sim_des_now(des) == 250);
    CHECK(sim_des_run_until(des, 300) == 1); /* inclusive bound */
    CHECK(sim_des_now(des) == 300);
    CHECK(sim_des_run_until(des, 100) == 0 && sim_des_now(des) == 300);
    CHECK(sim_des_run(des) == 2 && lg.n == 5 && sim_des_now(des) == 500);
    sim_des_destroy(des);
}

static void stopper(void *ctx, sim_des *des, const sim_event *ev)
{
    record(ctx, des, ev);
    if (ev->arg == 2) sim_des_stop(des);
}

static void test_stop(void)
{
    sim_des *des = sim_des_create(0);
    log_t lg = {0};
    for (int i = 1; i <= 4; i++)
        CHECK(sim_des_schedule(des, i, 0, stopper, &lg, NULL, i) == 0);
    CHECK(sim_des_run(des) == 2);
    CHECK(sim_des_pending(des) == 2);
    CHECK(sim_des_run(des) == 2 && lg.n == 4);
    sim_des_destroy(des);
}

/* FIFO: three jobs submitted at t=0 on one resource run back to back in order */
static void test_fifo_use(void)
{
    sim_des *des = sim_des_create(0);
    sim_res *r = sim_des_add_resource(des, "npu");
    sim_res *f = sim_des_add_resource(des, "flash");
    log_t lg = {0};
    CHECK(r && f);
    CHECK(sim_res_use(des, r, 10, record, &lg, NULL, 0) == SIM_OK);
    CHECK(sim_res_use(des, r, 5, record, &lg, NULL, 1) == SIM_OK);
    CHECK(sim_res_use(des, r, 7, record, &lg, NULL, 2) == SIM_OK);
    CHECK(sim_res_use(des, r, -1, record, &lg, NULL, 3) == SIM_INTERNAL_DES_PAST);
    CHECK(sim_res_busy(r) && sim_res_queue_len(r) == 2 && sim_res_waited(r) == 2);
    CHECK(sim_res_use(des, f, 4, NULL, NULL, NULL, 0) == SIM_OK);
    sim_des_run(des);
    CHECK(lg.n == 3);
    CHECK(lg.arg[0] == 0 && lg.t[0] == 10);
    CHECK(lg.arg[1] == 1 && lg.t[1] == 15);
    CHECK(lg.arg[2] == 2 && lg.t[2] == 22);
    CHECK(sim_res_busy_ns(r) == 22 && sim_res_served(r) == 3);
    CHECK(sim_res_wait_ns(r) == 10 + 15);
    CHECK(sim_res_busy_ns(f) == 4 && sim_res_served(f) == 1);
    CHECK(!sim_res_busy(r) && sim_res_queue_len(r) == 0);
    CHECK(sim_des_idle_ns(des) == 0);
    /* a gap of 8 ns with nothing busy counts as idle */
    CHECK(sim_res_use(des, f, 0, NULL, NULL, NULL, 0) == SIM_OK);
    sim_des_run(des);
    CHECK(sim_des_run_until(des, 30) == 0);
    CHECK(sim_des_idle_ns(des) == 8);
    CHECK(sim_res_use(des, r, 3, NULL, NULL, NULL, 0) == SIM_OK);
    sim_des_run(des);
    CHECK(sim_des_now(des) == 33 && sim_des_idle_ns(des) == 8 && sim_res_busy_ns(r) == 25);
    CHECK(sim_res_release(des, r) == SIM_INTERNAL_DES_STATE);
    CHECK(sim_res_name(f)[0] == 'f');
    sim_des_destroy(des);
}

/* request/release: the holder decides how long; the next grant waits */
typedef struct holder {
    sim_res *r;
    int64_t hold_ns;
    int64_t granted_at[4];
    int n;
} holder;

static void release_cb(void *ctx, sim_des *des, const sim_event *ev)
{
    (void)ev;
    holder *h = ctx;
    CHECK(sim_res_release(des, h->r) == SIM_OK);
}

static void granted(void *ctx, sim_des *des, const sim_event *ev)
{
    holder *h = ctx;
    h->granted_at[h->n++] = ev->t_ns;
    CHECK(sim_des_schedule(des, h->hold_ns * (ev->arg + 1), 0, release_cb, h, NULL, 0) == 0);
}

static void test_request_release(void)
{
    sim_des *des = sim_des_create(0);
    holder h = {sim_des_add_resource(des, "cpu"), 10, {0}, 0};
    for (int i = 0; i < 3; i++)
        CHECK(sim_res_request(des, h.r, granted, &h, NULL, i) == 0);
    sim_des_run(des);
    CHECK(h.n == 3);
    CHECK(h.granted_at[0] == 0 && h.granted_at[1] == 10 && h.granted_at[2] == 30);
    CHECK(sim_des_now(des) == 60 && sim_res_busy_ns(h.r) == 60 && sim_res_served(h.r) == 3);
    sim_des_destroy(des);
}

/* many queued requests force the waiting line to grow; sums stay exact */
static void test_line_growth(void)
{
    sim_des *des = sim_des_create(0);
    sim_res *r = sim_des_add_resource(des, "x");
    log_t lg = {0};
    int64_t sum = 0;
    for (int i = 0; i < 200; i++) {
        CHECK(sim_res_use(des, r, i + 1, record, &lg, NULL, i) == SIM_OK);
        sum += i + 1;
    }
    sim_des_run(des);
    CHECK(lg.n == 200);
    for (int i = 0; i < 200; i++)
        CHECK(lg.arg[i] == i);
    CHECK(sim_res_busy_ns(r) == sum && sim_des_now(des) == sum);
    for (int i = 0; i < SIM_DES_MAX_RESOURCES - 1; i++)
        CHECK(sim_des_add_resource(des, "y"));
    CHECK(sim_des_add_resource(des, "z") == NULL);
    sim_des_destroy(des);
}

int main(void)
{
    test_order_and_clock();
    test_run_until_and_stop();
    test_stop();
    test_fifo_use();
    test_request_release();
    test_line_growth();
    printf("des: ok\n");
    return check_done("des/des");
}
