/*
 * sim_sweep.c -- the sweep executor (contract in sim_sweep.h).
 *
 * Workload: from one point (fs.run) to ~1e6 points of 1 ms to minutes each.
 * Scheduling is a shared atomic counter over this rank's share (dynamic, so
 * uneven points balance); nothing else is shared between workers but the
 * read-only inputs, each job's own output slot and one mutex-protected
 * completion count that wakes the driver.  Determinism does not depend on the
 * schedule: a job's outcome is a pure function of its inputs, and outcomes are
 * placed by job index.
 *
 * Invariants:
 *   - a job's state is written once, by the one thread (or rank) that ran it;
 *   - a record is persisted before the job counts as done, so a killed process
 *     loses at most the jobs in flight;
 *   - every rank makes the same sequence of collective calls, whatever
 *     happened locally (signals, store errors): local conditions are first
 *     agreed on with a reduction.
 *
 * Signals: the handler state (first signal seen, quiet flag, saved actions) is
 * process-wide by necessity; it is the only mutable static state here.
 */
#define _DEFAULT_SOURCE /* SA_RESETHAND on older glibc headers */
#include "sim_sweep.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "sim/out/sim_lock.h"
#include "sim/sweep/sim_sweep_mpi.h"

/* ------------------------------------------------------------- signals */

static volatile sig_atomic_t g_signal;
static volatile sig_atomic_t g_signal_quiet;
static volatile sig_atomic_t g_watchdog; /* armed by the first SIGTERM */
static atomic_int g_in_library; /* threads inside a library call no hook can stop */
static struct sigaction g_old_int, g_old_term, g_old_alrm_install;
static int g_installed;
static volatile sig_atomic_t g_alarm; /* the time limit's timer is armed */

/* Seconds the run may take to stop after the time limit before it is ended
 * outright (Lua code stuck inside one long library call never reaches the
 * hook that would stop it). */
#define DEADLINE_GRACE_S 10
/* Microseconds the run may take to stop after SIGTERM before it is ended
 * outright: one SIGTERM ends any run within a second. */
#define TERM_GRACE_US 500000

static void say(const char *msg, size_t len)
{
    ssize_t w = write(STDERR_FILENO, msg, len);
    (void)w;
}

#define SAY(lit) say(lit, sizeof lit - 1)

/* SIGTERM's watchdog (the same ITIMER_REAL as the time limit, which no
 * longer matters once the run is being ended): setitimer is what alarm()
 * itself calls, safe in a handler. */
static void arm_watchdog(void)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = TERM_GRACE_US;
    setitimer(ITIMER_REAL, &it, NULL);
    g_watchdog = 1;
}

/* A SIGALRM flashspec did not arm (no time limit set, no SIGTERM watchdog)
 * is the host process's own timer -- libFuzzer's unit timeout, say: it goes
 * to the handler the host had installed, never ends the run. */
static void pass_on_alarm(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *o = &g_old_alrm_install;
    if (o->sa_flags & SA_SIGINFO) {
        if (o->sa_sigaction) o->sa_sigaction(sig, si, uc);
    } else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
    }
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    if (sig == SIGALRM && !g_alarm && !g_watchdog) {
        pass_on_alarm(sig, si, uc);
        return;
    }
    if (atomic_load(&g_in_library) > 0) {
        if (sig == SIGINT || sig == SIGTERM) {
            SAY("\nflashspec: interrupted inside a long library call (a string, utf8 or table "
                "function), which cannot stop on its own; ended (points already saved are "
                "kept)\n");
            _exit(130);
        }
        if (sig == SIGALRM && g_signal == 0) {
            SAY("flashspec: time limit (--max-seconds) reached inside a long library call (a "
                "string, utf8 or table function), which cannot stop on its own; ended\n");
            _exit(78);
        }
    }
    if (sig == SIGALRM && g_watchdog) {
        if (!g_signal_quiet) /* rank 0 speaks for all under MPI */
            SAY("\nflashspec: still running 0.5 s after SIGTERM; ended at once (points "
                "already saved are kept)\n");
        _exit(130);
    }
    if (sig == SIGALRM && g_signal == SIGALRM) {
        SAY("flashspec: still running 10 s after the time limit (--max-seconds); ended\n");
        _exit(78);
    }
    if (sig == SIGALRM && g_signal == 0) alarm(DEADLINE_GRACE_S);
    if (sig == SIGTERM && !g_watchdog) arm_watchdog();
    if (g_signal == 0) {
        g_signal = sig;
        if (!g_signal_quiet && sig != SIGALRM) /* the time limit: the final line says it */
            SAY("\nflashspec: interrupted; finishing the points in flight (interrupt again to "
                "abandon them)\n");
    }
}

static struct sigaction g_old_alrm;

void sim_sweep_deadline_set(double seconds)
{
    if (seconds <= 0) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_RESTART; /* interrupted reads and writes carry on */
    sigaction(SIGALRM, &sa, &g_old_alrm);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0) it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
    g_alarm = 1;
}

void sim_sweep_deadline_clear(void)
{
    if (!g_alarm) return;
    g_alarm = 0;
    if (g_watchdog) return; /* the timer is SIGTERM's now */
    struct itimerval it;
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
    sigaction(SIGALRM, &g_old_alrm, NULL);
}

void sim_sweep_signals_install(void)
{
    if (g_installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND; /* the second signal has its default effect */
    g_signal = 0;
    g_watchdog = 0;
    g_signal_quiet = sim_mpi_rank() != 0;
    sigaction(SIGINT, &sa, &g_old_int);
    sigaction(SIGTERM, &sa, &g_old_term);
    sa.sa_flags = SA_SIGINFO | SA_RESTART; /* SIGTERM's watchdog */
    sigaction(SIGALRM, &sa, &g_old_alrm_install);
    g_installed = 1;
}

void sim_sweep_signals_restore(void)
{
    if (!g_installed) return;
    sigaction(SIGINT, &g_old_int, NULL);
    sigaction(SIGTERM, &g_old_term, NULL);
    /* after SIGTERM the watchdog keeps running: what is left (freeing the
     * run's memory) is ended too, should it take longer */
    if (!g_watchdog) sigaction(SIGALRM, &g_old_alrm_install, NULL);
    g_installed = 0;
}

int sim_sweep_interrupted(void) { return (int)g_signal; }

void sim_sweep_library_call(int on) { atomic_fetch_add(&g_in_library, on ? 1 : -1); }

/* -------------------------------------------------------------- params */

void sim_sweep_default_params(sim_sweep_params *p)
{
    *p = (sim_sweep_params){.workers = 1, .store_dir = NULL, .resume = 1, .progress = 0,
                            .what = "sweep", .version = "", .lock = NULL};
}

int32_t sim_sweep_default_workers(void)
{
    const char *s = getenv("SLURM_CPUS_PER_TASK");
    if (s && atoi(s) > 0) return (int32_t)atoi(s);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    long w = cpus / sim_mpi_local_size();
    return (int32_t)(w < 1 ? 1 : w > 1024 ? 1024 : w);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------ progress */

typedef struct progress {
    int on, tty, rank, size;
    const char *what;
    double t0, last;
    int64_t total;     /* jobs this rank shows (its share + what it resumed) */
    int64_t base;      /* resumed ones, done from the start */
    int last_decile;
    int line_open;     /* a \r line is on the terminal */
} progress;

static void progress_text(const progress *g, int64_t done, double now, char *b, size_t n)
{
    double el = now - g->t0;
    double rate = el > 0 ? (double)(done - g->base) / el : 0;
    int64_t left = g->total - done;
    char eta[32] = "?";
    if (rate > 0) {
        double s = (double)left / rate;
        if (s < 100)
            snprintf(eta, sizeof eta, "%.0f s", s);
        else if (s < 6000)
            snprintf(eta, sizeof eta, "%.0f min", s / 60);
        else
            snprintf(eta, sizeof eta, "%.1f h", s / 3600);
    }
    char who[48] = "";
    if (g->size > 1) snprintf(who, sizeof who, " (rank 0 of %d)", g->size);
    snprintf(b, n, "flashspec: %s%s %lld/%lld points (%.0f%%), %.1f points/s, ETA %s", g->what,
             who, (long long)done, (long long)g->total,
             g->total ? 100.0 * (double)done / (double)g->total : 100.0, rate, eta);
}

static void progress_tick(progress *g, int64_t done, int final)
{
    if (!g->on) return;
    double t = now_s();
    char line[256];
    if (g->tty) {
        /* straight to the descriptor: the command line tool escapes control
         * characters on stderr, and this line's erase sequence is ours */
        fflush(stderr);
        if (final) {
            if (g->line_open) dprintf(STDERR_FILENO, "\r\033[K");
            g->line_open = 0;
        } else if (t - g->last >= 0.2) {
            progress_text(g, done, t, line, sizeof line);
            dprintf(STDERR_FILENO, "\r\033[K%s", line);
            g->line_open = 1;
            g->last = t;
        }
        return;
    }
    if (final) return;
    int dec = g->total ? (int)(10 * done / g->total) : 10;
    if (t - g->last >= 10.0 || (dec > g->last_decile && t - g->t0 >= 2.0)) {
        progress_text(g, done, t, line, sizeof line);
        fprintf(stderr, "%s\n", line);
        g->last = t;
        g->last_decile = dec;
    }
}

/* ---------------------------------------------------------------- pool */

typedef struct pool {
    sim_sweep_job *jobs;
    const int64_t *mine; /* indices into jobs of this rank's unfinished share */
    int64_t n_mine;
    const sim_sweep_params *p;
    atomic_int_fast64_t next;
    atomic_int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t done;        /* under mu */
    int32_t running;     /* under mu */
    int32_t store_failures;
    char store_err[SIM_SWEEP_ERR_CAP];
} pool;

static void *worker(void *arg)
{
    pool *pl = arg;
    for (;;) {
        if (atomic_load(&pl->stop)) break;
        int64_t k = (int64_t)atomic_fetch_add(&pl->next, 1);
        if (k >= pl->n_mine) break;
        sim_sweep_job *j = &pl->jobs[pl->mine[k]];
        int rc = sim_replay_run(&j->pt, &j->st, j->err, sizeof j->err);
        char serr[SIM_SWEEP_ERR_CAP] = "";
        int sfail = 0;
        if (rc == SIM_OK) {
            j->err[0] = 0;
            if (pl->p->store_dir)
                sfail = sim_out_lock_keep(pl->p->lock, serr, sizeof serr) != 0 ||
                        sim_sweep_store_put(pl->p->store_dir, j->id, j->trace_checksum,
                                            pl->p->version, &j->st, serr, sizeof serr) != 0;
            j->state = SIM_SWEEP_COMPUTED;
        } else {
            j->replay_rc = rc;
            j->state = SIM_SWEEP_FAILED;
        }
        pthread_mutex_lock(&pl->mu);
        if (sfail && pl->store_failures++ == 0)
            snprintf(pl->store_err, sizeof pl->store_err, "%s", serr);
        pl->done++;
        pthread_cond_signal(&pl->cv);
        pthread_mutex_unlock(&pl->mu);
    }
    pthread_mutex_lock(&pl->mu);
    pl->running--;
    pthread_cond_signal(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

/* Runs this rank's share; returns 0 or -1 when no thread could be started. */
static int run_share(pool *pl, int32_t workers, progress *g)
{
    if (pl->n_mine == 0) return 0;
    int32_t nt = workers < 1 ? 1 : workers;
    if (nt > pl->n_mine) nt = (int32_t)pl->n_mine;
    pthread_t *th = calloc((size_t)nt, sizeof *th);
    if (!th) return -1;
    /* signals go to the driver thread, which polls the flag */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int32_t started = 0;
    for (; started < nt; started++) {
        pthread_mutex_lock(&pl->mu);
        pl->running++;
        pthread_mutex_unlock(&pl->mu);
        if (pthread_create(&th[started], NULL, worker, pl) != 0) {
            pthread_mutex_lock(&pl->mu);
            pl->running--;
            pthread_mutex_unlock(&pl->mu);
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started == 0) {
        free(th);
        return -1;
    }
    pthread_mutex_lock(&pl->mu);
    while (pl->running > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&pl->cv, &pl->mu, &ts);
        int64_t done = pl->done;
        pthread_mutex_unlock(&pl->mu);
        if (sim_sweep_interrupted()) atomic_store(&pl->stop, 1);
        progress_tick(g, g->base + done, 0);
        pthread_mutex_lock(&pl->mu);
    }
    pthread_mutex_unlock(&pl->mu);
    for (int32_t i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
    return 0;
}

/* ------------------------------------------------------------- gather */

typedef struct wire {
    int64_t index;
    int32_t state, replay_rc;
    sim_point_stats st;
    char err[SIM_SWEEP_ERR_CAP];
} wire;

/* Every rank sends the jobs it owns and is done with; all receive all. */
static int gather(sim_sweep_job *jobs, int64_t n, const unsigned char *owner, int rank)
{
    int64_t mine = 0;
    for (int64_t i = 0; i < n; i++)
        if (owner[i] == 1 && jobs[i].state != SIM_SWEEP_PENDING) mine++;
    (void)rank;
    wire *send = calloc((size_t)(mine ? mine : 1), sizeof *send);
    wire *recv = calloc((size_t)(n ? n : 1), sizeof *recv);
    int rc = -1;
    if (!send || !recv) goto out;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (owner[i] != 1 || jobs[i].state == SIM_SWEEP_PENDING) continue;
        send[k].index = i;
        send[k].state = jobs[i].state;
        send[k].replay_rc = jobs[i].replay_rc;
        send[k].st = jobs[i].st;
        memcpy(send[k].err, jobs[i].err, sizeof send[k].err);
        k++;
    }
    int64_t total = 0;
    if (sim_mpi_allgather(send, mine, sizeof(wire), recv, n, &total) != 0) goto out;
    for (int64_t r = 0; r < total; r++) {
        wire *w = &recv[r];
        if (w->index < 0 || w->index >= n) goto out;
        sim_sweep_job *j = &jobs[w->index];
        j->state = w->state;
        j->replay_rc = w->replay_rc;
        j->st = w->st;
        memcpy(j->err, w->err, sizeof j->err);
        j->err[sizeof j->err - 1] = 0;
    }
    rc = 0;
out:
    free(send);
    free(recv);
    return rc;
}

/* ----------------------------------------------------------------- run */

/* FNV-1a over the point count and every point's id and trace checksum, in
 * order: equal on every rank exactly when the ranks expanded the same list. */
static uint64_t list_digest(const sim_sweep_job *jobs, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    const uint64_t prime = 0x100000001b3ULL;
    uint64_t words[3] = {(uint64_t)n, 0, 0};
    for (int64_t i = -1; i < n; i++) {
        int nw = 1;
        if (i >= 0) {
            words[0] = jobs[i].id.hi;
            words[1] = jobs[i].id.lo;
            words[2] = jobs[i].trace_checksum;
            nw = 3;
        }
        for (int w = 0; w < nw; w++)
            for (int b = 0; b < 8; b++) {
                h ^= (words[w] >> (8 * b)) & 0xff;
                h *= prime;
            }
    }
    return h;
}

/* Collective: every rank learns rank 0's point count and list digest and
 * compares it with its own (a fixed-size broadcast, whatever the lists).
 * Returns 1 when any rank disagrees; such a rank names itself on stderr. */
static int lists_disagree(const sim_sweep_job *jobs, int64_t n, int rank, char *err,
                          size_t errlen)
{
    uint64_t mine[2] = {(uint64_t)n, list_digest(jobs, n)}, root[2] = {mine[0], mine[1]};
    if (sim_mpi_bcast(root, sizeof root) != 0) return 1;
    int differ = root[0] != mine[0] || root[1] != mine[1];
    if (differ && rank != 0)
        fprintf(stderr, "flashspec: MPI rank %d expanded %lld point%s, rank 0 %lld%s; no point "
                        "ran\n",
                rank, (long long)n, n == 1 ? "" : "s", (long long)root[0],
                root[0] == mine[0] ? " with other parameters" : "");
    if (!sim_mpi_max_int(differ)) return 0;
    snprintf(err, errlen, "the MPI ranks expanded different point lists (rank 0: %lld point%s); "
                          "a script must build the same points in every process (math.random "
                          "starts from the same seed unless the script reseeds it); no point ran",
             (long long)root[0], root[0] == 1 ? "" : "s");
    return 1;
}

/* Before anything runs: every job pending, and what the ranks must agree on
 * before any other collective -- the same point list, a usable resume store,
 * no signal yet.  SIM_OK, or the error with err (sum filled). */
static int sweep_begin(const sim_sweep_params *p, sim_sweep_job *jobs, int64_t n,
                       sim_sweep_summary *sum, double t0, char *err, size_t errlen)
{
    int rank = sim_mpi_rank(), size = sim_mpi_size();
    for (int64_t i = 0; i < n; i++) {
        jobs[i].state = SIM_SWEEP_PENDING;
        jobs[i].replay_rc = SIM_OK;
        jobs[i].err[0] = 0;
    }
    if (size > 1 && lists_disagree(jobs, n, rank, err, errlen)) {
        sum->pending = n;
        return SIM_CONFIG_RANKS;
    }
    char serr[SIM_SWEEP_ERR_CAP] = "";
    int store_bad = p->store_dir && n > 0 &&
                    sim_sweep_store_open(p->store_dir, serr, sizeof serr) != 0;
    if (sim_mpi_max_int(store_bad)) {
        snprintf(err, errlen, "%s", store_bad ? serr : "cannot create the resume store (on "
                                                       "another MPI rank)");
        return SIM_CANTCREATE;
    }
    int sig = sim_mpi_max_int(sim_sweep_interrupted());
    if (sig) {
        sum->pending = n;
        sum->signal = sig;
        sum->wall_s = now_s() - t0;
        snprintf(err, errlen, "interrupted");
        return SIM_INTERRUPTED;
    }
    return SIM_OK;
}

/* Step 1, rank 0: the jobs the resume store holds (flag[i] = 1).  A record
 * is trusted only once the prompts it covers have been read and found to be
 * the data its key names (a trace read prompt by prompt: its checksum is the
 * index's; sim_point_verify_content); a point whose data fails is not
 * resumed, and fails with that error when it runs. */
static void sweep_resume(const sim_sweep_params *p, sim_sweep_job *jobs, int64_t n,
                         unsigned char *flag)
{
    for (int64_t i = 0; i < n; i++) {
        char verr[SIM_SWEEP_ERR_CAP];
        if (sim_sweep_store_get(p->store_dir, jobs[i].id, jobs[i].trace_checksum,
                                p->resume == SIM_SWEEP_RESUME_ANY_BUILD ? NULL : p->version,
                                &jobs[i].st) &&
            sim_point_verify_content(&jobs[i].pt, verr, sizeof verr) == SIM_OK) {
            jobs[i].state = SIM_SWEEP_RESUMED;
            flag[i] = 1;
        }
    }
}

/* Step 3: this rank's share mine[0..n_mine) on its workers, with progress;
 * 0, or -1 when the workers could not run. */
static int sweep_compute(const sim_sweep_params *p, sim_sweep_job *jobs, int64_t n,
                         const int64_t *mine, int64_t n_mine, int64_t resumed, double t0,
                         sim_sweep_summary *sum)
{
    int rank = sim_mpi_rank(), size = sim_mpi_size();
    progress g = {.on = p->progress && rank == 0 && n > 1, .tty = isatty(STDERR_FILENO),
                  .rank = rank, .size = size, .what = p->what ? p->what : "sweep",
                  .t0 = t0, .last = t0, .total = n_mine + (rank == 0 ? resumed : 0),
                  .base = rank == 0 ? resumed : 0};
    g.last_decile = g.total ? (int)(10 * g.base / g.total) : 10;
    pool pl = {.jobs = jobs, .mine = mine, .n_mine = n_mine, .p = p};
    atomic_init(&pl.next, 0);
    atomic_init(&pl.stop, 0);
    pthread_mutex_init(&pl.mu, NULL);
    pthread_cond_init(&pl.cv, NULL);
    int bad = run_share(&pl, p->workers, &g) != 0;
    progress_tick(&g, g.base + pl.done, 1);
    pthread_cond_destroy(&pl.cv);
    pthread_mutex_destroy(&pl.mu);
    sum->store_failures = pl.store_failures;
    /* a warning, not progress: printed under -q too (the results are still
     * written, but those points would be recomputed by a resumed run) */
    if (pl.store_failures && rank == 0)
        fprintf(stderr, "flashspec: warning: %d finished point%s could not be saved for "
                        "resuming: %s\n",
                pl.store_failures, pl.store_failures == 1 ? "" : "s", pl.store_err);
    return bad ? -1 : 0;
}

/* Step 5: the outcomes counted; interrupted when a signal left points
 * pending. */
static int sweep_finish(const sim_sweep_job *jobs, int64_t n, int sig, double t0,
                        sim_sweep_summary *sum, char *err, size_t errlen)
{
    for (int64_t i = 0; i < n; i++) {
        switch (jobs[i].state) {
        case SIM_SWEEP_COMPUTED: sum->computed++; break;
        case SIM_SWEEP_RESUMED: sum->resumed++; break;
        case SIM_SWEEP_FAILED: sum->failed++; break;
        default: sum->pending++; break;
        }
    }
    sum->signal = sig;
    sum->wall_s = now_s() - t0;
    if (sig && sum->pending > 0) {
        snprintf(err, errlen, "interrupted");
        return SIM_INTERRUPTED;
    }
    return SIM_OK;
}

int sim_sweep_run(const sim_sweep_params *p, sim_sweep_job *jobs, int64_t n, sim_sweep_summary *sum,
                  char *err, size_t errlen)
{
    double t0 = now_s();
    memset(sum, 0, sizeof *sum);
    int rank = sim_mpi_rank(), size = sim_mpi_size();
    int rc = sweep_begin(p, jobs, n, sum, t0, err, errlen);
    if (rc != SIM_OK) return rc;

    /* 1. resume (rank 0 reads, everybody learns) */
    unsigned char *flag = calloc((size_t)(n ? n : 1), 1);  /* 1 = resumed */
    unsigned char *owner = calloc((size_t)(n ? n : 1), 1); /* 1 = this rank reports it */
    int64_t *mine = calloc((size_t)(n ? n : 1), sizeof *mine);
    if (!flag || !owner || !mine) {
        free(flag);
        free(owner);
        free(mine);
        snprintf(err, errlen, "out of memory for %lld sweep points", (long long)n);
        return SIM_NOMEM;
    }
    if (rank == 0 && p->store_dir && p->resume) sweep_resume(p, jobs, n, flag);
    int bad = sim_mpi_bcast(flag, (size_t)n) != 0;

    /* 2. deal: the k-th unfinished job goes to rank k mod size */
    int64_t n_mine = 0, k = 0, resumed = 0;
    for (int64_t i = 0; i < n; i++) {
        if (flag[i]) {
            resumed++;
            owner[i] = rank == 0;
            continue;
        }
        if (k++ % size == rank) {
            mine[n_mine++] = i;
            owner[i] = 1;
        }
    }

    /* 3. compute this rank's share */
    if (!bad && sweep_compute(p, jobs, n, mine, n_mine, resumed, t0, sum) != 0) bad = 1;

    /* 4. agree on signals and failures, then everybody gets every outcome */
    int sig = sim_mpi_max_int(sim_sweep_interrupted());
    bad = sim_mpi_max_int(bad);
    if (!bad && size > 1 && gather(jobs, n, owner, rank) != 0) bad = 1;
    free(flag);
    free(owner);
    free(mine);
    if (bad) {
        snprintf(err, errlen,
                 "cannot run the sweep: out of memory, no threads or an MPI "
                 "failure");
        return SIM_NOMEM;
    }
    return sweep_finish(jobs, n, sig, t0, sum, err, errlen);
}
