/*
 * sim_des.h -- discrete-event core: virtual clock, event queue, FIFO resources.
 *
 * One sim_des handle owns everything a simulation needs (no globals): the
 * virtual clock, the event queue, the sequence counter and up to
 * SIM_DES_MAX_RESOURCES resources.  It knows nothing about LLMs.
 *
 * Clock: int64_t nanoseconds.  Integer time makes ordering exact and runs
 * bit-reproducible (no rounding drift from summing doubles); 2^63 ns is ~292
 * years of virtual time.  The clock only moves forward: it jumps to the time of
 * each event as the event fires; scheduling into the past is refused.
 *
 * Order: events fire in (t_ns, prio, seq) order, seq being assigned from a
 * per-handle counter at scheduling time, so ties at equal time and priority
 * fire in scheduling order (FIFO) and every run is deterministic.
 *
 * Resources (sim_res): a server with one slot and a FIFO waiting line.
 *   - sim_res_use(): hold the resource for a known duration.  When it is free
 *     the service starts now, else the request waits in line.  When the service
 *     ends the resource is released first (the next in line starts at the same
 *     instant) and then the done handler runs.  One event per service.
 *   - sim_res_request()/sim_res_release(): hold for an unknown duration.  The
 *     grant handler runs as an event at the grant time (now, when free); the
 *     holder calls sim_res_release() when done.
 *   Accounting per resource: busy time (sum of service intervals), services
 *   completed, requests that had to wait and their total waiting time.  The
 *   handle also accounts the time during which no resource at all was busy.
 *
 * Memory: the queue grows on demand (or is bounded, see sim_des_create); each
 * resource's waiting line is a ring buffer that doubles when full.  After the
 * high-water mark nothing allocates.  Handlers may schedule events and use
 * resources re-entrantly; they must not destroy the handle.
 */
#ifndef SIM_DES_H
#define SIM_DES_H

#include "sim_evq.h"

#include <stddef.h>
#include <stdint.h>

#define SIM_DES_MAX_RESOURCES 16

typedef struct sim_res sim_res;

/* Creates a handle whose queue starts with event_cap slots (0 = default) and
 * grows.  Returns NULL when out of memory.  Free with sim_des_destroy. */
sim_des *sim_des_create(size_t event_cap);

/* Frees the handle and its resources.  NULL-safe. */
void sim_des_destroy(sim_des *des);

/* Current virtual time, ns. */
int64_t sim_des_now(const sim_des *des);

/* Schedules fn(ctx, des, ev) at now + delay_ns (delay_ns >= 0).  ctx and
 * payload are borrowed.  Returns SIM_OK, SIM_INTERNAL_DES_PAST (negative delay)
 * or SIM_NOMEM. */
int sim_des_schedule(sim_des *des, int64_t delay_ns, int32_t prio, sim_event_fn fn, void *ctx,
                     void *payload, int64_t arg);

/* Same at an absolute time t_ns >= now (else SIM_INTERNAL_DES_PAST). */
int sim_des_schedule_at(sim_des *des, int64_t t_ns, int32_t prio, sim_event_fn fn, void *ctx,
                        void *payload, int64_t arg);

/* Fires events until the queue is empty or sim_des_stop() is called.  Returns
 * the number of events fired by this call. */
int64_t sim_des_run(sim_des *des);

/* Fires every event with t_ns <= t_end_ns (unless stopped), then advances the
 * clock to t_end_ns if it is behind.  Returns the number of events fired.
 * t_end_ns < now fires nothing and leaves the clock alone. */
int64_t sim_des_run_until(sim_des *des, int64_t t_end_ns);

/* Makes the running sim_des_run/run_until return after the current handler.
 * The flag clears when the next run starts. */
void sim_des_stop(sim_des *des);

/* Events queued but not yet fired. */
size_t sim_des_pending(const sim_des *des);

/* Events fired since creation. */
uint64_t sim_des_fired(const sim_des *des);

/* Total time up to now during which no resource of this handle was busy. */
int64_t sim_des_idle_ns(const sim_des *des);

/* ---- resources ---- */

/* Adds a resource named name (copied, truncated to 31 characters).  The pointer
 * stays valid until sim_des_destroy.  NULL when SIM_DES_MAX_RESOURCES exist or
 * out of memory. */
sim_res *sim_des_add_resource(sim_des *des, const char *name);

/* Holds r for duration_ns (>= 0), FIFO after earlier requests; done(ctx, des,
 * ev) fires when the service ends, with ev->payload/arg as given and ev->t_ns =
 * the end time.  done may be NULL.  Returns SIM_OK, SIM_INTERNAL_DES_PAST
 * (negative duration) or SIM_NOMEM. */
int sim_res_use(sim_des *des, sim_res *r, int64_t duration_ns, sim_event_fn done, void *ctx,
                void *payload, int64_t arg);

/* Requests r; granted(ctx, des, ev) fires at the grant time (FIFO).  The holder
 * must later call sim_res_release.  Returns SIM_OK or SIM_NOMEM. */
int sim_res_request(sim_des *des, sim_res *r, sim_event_fn granted, void *ctx, void *payload,
                    int64_t arg);

/* Ends the current holder's service now and starts the next in line.
 * SIM_INTERNAL_DES_STATE when r is idle.  Do not call for a sim_res_use() service
 * (it releases itself). */
int sim_res_release(sim_des *des, sim_res *r);

const char *sim_res_name(const sim_res *r);
int sim_res_busy(const sim_res *r);         /* 1 while held */
size_t sim_res_queue_len(const sim_res *r); /* requests waiting */
int64_t sim_res_busy_ns(const sim_res *r);  /* busy time up to now, incl. current */
uint64_t sim_res_served(const sim_res *r);  /* services completed */
uint64_t sim_res_waited(const sim_res *r);  /* requests that had to queue */
int64_t sim_res_wait_ns(const sim_res *r);  /* total queueing delay of started ones */

#endif
