/*
 * trc_synth_many.c -- several synthetic traces generated at once
 * (trc_synth_many, trc.h): a pool of threads takes the traces one at a time,
 * in order; with fewer traces than workers, each trace's own synthesis gets
 * the workers left over (node-stream traces, trc_synth_par.c).  Each trace is
 * the one trc_synth_memo_run gives alone: the thread counts change nothing.
 */
#include "trc.h"

#include <pthread.h>
#include <stdatomic.h>

#define MANY_THREADS_MAX 64

typedef struct many_pool {
    trc_synth_job *const *q;
    int32_t n;
    atomic_int next;
} many_pool;

static void *many_worker(void *arg)
{
    many_pool *pool = arg;
    for (int i = atomic_fetch_add(&pool->next, 1); i < pool->n;
         i = atomic_fetch_add(&pool->next, 1)) {
        trc_synth_job *q = pool->q[i];
        q->rc = trc_synth_memo_run(&q->p, q->memo, &q->t, &q->err);
        /* its statistics, which every replay on it fits its synthesis on,
         * here beside the others rather than under the trace's lock later */
        if (q->rc == TRC_OK) (void)trc_get_stats(q->t);
    }
    return NULL;
}

void trc_synth_many(trc_synth_job *const *jobs, int32_t n, int32_t workers)
{
    if (n <= 0) return;
    int32_t w = workers > 0 ? workers : 1;
    int32_t each = n >= w ? 1 : w / n, nt = n < w ? n : w;
    for (int32_t i = 0; i < n; i++)
        jobs[i]->p.threads = each; /* the trace does not depend on it */
    many_pool pool = {.q = jobs, .n = n};
    atomic_init(&pool.next, 0);
    pthread_t th[MANY_THREADS_MAX];
    int32_t started = 0;
    for (; started < nt - 1 && started < MANY_THREADS_MAX; started++)
        if (pthread_create(&th[started], NULL, many_worker, &pool) != 0) break;
    many_worker(&pool);
    for (int32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}
