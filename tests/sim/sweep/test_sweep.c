/*
 * test_sweep.c -- the sweep executor and its resume store in C: id stability
 * and sensitivity, seed derivation, record round trip and every rejection
 * (other id, other trace, other version, torn, corrupted), and the executor
 * against a naive sequential loop for several worker counts, with resume,
 * failed points and a store that cannot be created.
 */
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"
#include "engine/pol_chain.h"
#include "sim/config/profile.h"
#include "sim/sweep/sim_sweep.h"
#include "sim/sweep/sim_sweep_mpi.h"
#include "../profiles_fixture.h"

static sim_id id_of(const char *policy, double dram, uint64_t seed)
{
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_str(&h, "policy", policy);
    sim_id_hasher_params(&h, "device", sim_device_keys(), &dev);
    char b[64];
    snprintf(b, sizeof b, "%a", dram);
    sim_id_hasher_str(&h, "dram_fraction", b);
    sim_id_hasher_u64(&h, "seed", seed);
    return sim_id_hasher_final(&h);
}

static void test_ids(void)
{
    sim_id a = id_of("chain", 0.5, 1), b = id_of("chain", 0.5, 1);
    CHECK(sim_id_equal(a, b));
    CHECK(!sim_id_equal(a, id_of("chain", 0.5, 2)));
    CHECK(!sim_id_equal(a, id_of("flash_ar", 0.5, 1)));
    /* exact values: a difference far below %g's precision still counts */
    CHECK(!sim_id_equal(a, id_of("chain", 0.5 + 1e-15, 1)));
    CHECK(sim_id_seed(a) == sim_id_seed(b));
    CHECK(sim_id_seed(a) != sim_id_seed(id_of("chain", 0.5, 2)));
    char hex[33];
    sim_id_hex(a, hex);
    CHECK_EQ_INT(strlen(hex), 32);
    /* a profile value enters the id */
    sim_device saved = dev;
    dev.read_gbps *= 1.01;
    CHECK(!sim_id_equal(a, id_of("chain", 0.5, 1)));
    dev = saved;
    CHECK(sim_id_equal(a, id_of("chain", 0.5, 1)));
}

static void test_store(const char *dir)
{
    char err[512];
    CHECK(sim_sweep_store_open(dir, err, sizeof err) == 0);
    sim_id id = id_of("chain", 0.25, 3), other = id_of("chain", 0.25, 4);
    sim_point_stats st, back;
    memset(&st, 0, sizeof st);
    st.tokens = 1234;
    st.tokens_per_s = 3.0 / 7.0;
    st.sim_wall_s = 0.5;
    CHECK(sim_sweep_store_get(dir, id, 42, "1.0", &back) == 0); /* nothing yet */
    CHECK(sim_sweep_store_put(dir, id, 42, "1.0", &st, err, sizeof err) == 0);
    memset(&back, 0, sizeof back);
    CHECK(sim_sweep_store_get(dir, id, 42, "1.0", &back) == 1);
    CHECK(memcmp(&st, &back, sizeof st) == 0);
    CHECK(sim_sweep_store_get(dir, id, 43, "1.0", &back) == 0); /* other trace */
    CHECK(sim_sweep_store_get(dir, id, 42, "1.1", &back) == 0); /* other version */
    CHECK(sim_sweep_store_get(dir, id, 42, NULL, &back) == 1);  /* any version */
    CHECK(sim_sweep_store_get(dir, id, 43, NULL, &back) == 0);  /* but this trace */
    CHECK(sim_sweep_store_get(dir, other, 42, "1.0", &back) == 0);
    /* the build key names the version and a 128-bit build hash */
    char key[SIM_SWEEP_BUILD_KEY_CAP], key2[SIM_SWEEP_BUILD_KEY_CAP];
    CHECK(sim_sweep_build_key("9.9", key) == 0);
    CHECK(strncmp(key, "9.9+", 4) == 0 && strlen(key) == 4 + 32);
    CHECK(sim_sweep_build_key("9.9", key2) == 0 && strcmp(key, key2) == 0);
    /* a FIFO planted as another point's record is passed over, not waited on */
    {
        char fifo[1100], h[33];
        sim_id_hex(other, h);
        snprintf(fifo, sizeof fifo, "%s/%s.pt", dir, h);
        CHECK(mkfifo(fifo, 0600) == 0);
        CHECK(sim_sweep_store_get(dir, other, 42, "1.0", &back) == 0);
        CHECK(unlink(fifo) == 0);
    }
    /* a record copied under another id's name is refused */
    char a[1024], b[1100], hex[33];
    sim_id_hex(id, hex);
    snprintf(a, sizeof a, "%s/%s.pt", dir, hex);
    sim_id_hex(other, hex);
    snprintf(b, sizeof b, "%s/%s.pt", dir, hex);
    char cmd[2300];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", a, b);
    CHECK(system(cmd) == 0);
    CHECK(sim_sweep_store_get(dir, other, 42, "1.0", &back) == 0);
    /* ids differing in a single bit of either half, in every byte: the record
     * of id, copied under each such id's name, is refused (the whole id is
     * compared, not a part of it) */
    for (int half = 0; half < 2; half++)
        for (int bit = 0; bit < 64; bit += 7) {
            sim_id near = id;
            if (half)
                near.hi ^= 1ull << bit;
            else
                near.lo ^= 1ull << bit;
            char c[1100], hn[33], cpy[2300];
            sim_id_hex(near, hn);
            snprintf(c, sizeof c, "%s/%s.pt", dir, hn);
            snprintf(cpy, sizeof cpy, "cp '%s' '%s'", a, c);
            CHECK(system(cpy) == 0);
            CHECK(sim_sweep_store_get(dir, near, 42, "1.0", &back) == 0);
            CHECK(unlink(c) == 0);
        }
    /* a flipped byte fails the check; a torn record is refused */
    int fd = open(a, O_RDWR);
    CHECK(fd >= 0);
    unsigned char byte;
    CHECK(pread(fd, &byte, 1, 70) == 1);
    byte ^= 1;
    CHECK(pwrite(fd, &byte, 1, 70) == 1);
    CHECK(sim_sweep_store_get(dir, id, 42, "1.0", &back) == 0);
    byte ^= 1;
    CHECK(pwrite(fd, &byte, 1, 70) == 1);
    CHECK(sim_sweep_store_get(dir, id, 42, "1.0", &back) == 1);
    CHECK(ftruncate(fd, 40) == 0);
    close(fd);
    CHECK(sim_sweep_store_get(dir, id, 42, "1.0", &back) == 0);
    /* a store under a regular file cannot be created */
    snprintf(b, sizeof b, "%s/sub", a);
    CHECK(sim_sweep_store_open(b, err, sizeof err) != 0);
    CHECK(strstr(err, "cannot create") != NULL);
}

#define NJOBS 12

static void make_jobs(sim_sweep_job *jobs, const trc_trace *t, eng_chain_params *cp)
{
    const eng_policy_desc *d = eng_policy_lookup("chain");
    eng_params_defaults(d->params, cp);
    cp->k = 6;
    memset(jobs, 0, sizeof *jobs * NJOBS);
    for (int i = 0; i < NJOBS; i++) {
        double dram = (i % 6) / 5.0;
        jobs[i].id = id_of("chain", dram, (uint64_t)(i / 6));
        jobs[i].trace_checksum = trc_checksum(t);
        jobs[i].pt = (sim_point){.device = &dev, .target = &tgt, .draft = &drf, .trace = t,
                                 .policy = d, .policy_params = cp, .dram_fraction = dram,
                                 .max_new_tokens = 40, .prompts = 0,
                                 .seed = sim_id_seed(jobs[i].id)};
    }
}

/* Deterministic fields only (sim_wall_s is host time). */
static int same_stats(sim_point_stats a, sim_point_stats b)
{
    a.sim_wall_s = b.sim_wall_s = 0;
    return memcmp(&a, &b, sizeof a) == 0;
}

static void test_executor(const char *dir)
{
    trc_synth_params sp;
    trc_synth_default_params(&sp);
    sp.prompts = 2;
    sp.output_len = 40;
    sp.coverage = 0.5;
    trc_trace *t = NULL;
    trc_err e;
    CHECK(trc_synth(&sp, &t, &e) == TRC_OK);
    if (!t) return;
    eng_chain_params cp;
    static sim_sweep_job ref[NJOBS], jobs[NJOBS];
    make_jobs(ref, t, &cp);
    char err[512];
    for (int i = 0; i < NJOBS; i++) /* the naive reference: one by one */
        CHECK(sim_replay_run(&ref[i].pt, &ref[i].st, err, sizeof err) == SIM_OK);

    for (int32_t w = 1; w <= 5; w += 2) {
        make_jobs(jobs, t, &cp);
        sim_sweep_params p;
        sim_sweep_default_params(&p);
        p.workers = w;
        p.version = "test";
        sim_sweep_summary sum;
        CHECK(sim_sweep_run(&p, jobs, NJOBS, &sum, err, sizeof err) == SIM_OK);
        CHECK_EQ_INT(sum.computed, NJOBS);
        CHECK_EQ_INT(sum.resumed + sum.failed + sum.pending, 0);
        for (int i = 0; i < NJOBS; i++) {
            CHECK_EQ_INT(jobs[i].state, SIM_SWEEP_COMPUTED);
            CHECK(same_stats(jobs[i].st, ref[i].st));
        }
    }

    /* with a store: first run computes and saves, the second resumes all */
    char store[1024];
    snprintf(store, sizeof store, "%s/points", dir);
    sim_sweep_params p;
    sim_sweep_default_params(&p);
    p.workers = 3;
    p.store_dir = store;
    p.version = "test";
    sim_sweep_summary sum;
    make_jobs(jobs, t, &cp);
    CHECK(sim_sweep_run(&p, jobs, NJOBS, &sum, err, sizeof err) == SIM_OK);
    CHECK_EQ_INT(sum.computed, NJOBS);
    make_jobs(jobs, t, &cp);
    CHECK(sim_sweep_run(&p, jobs, NJOBS, &sum, err, sizeof err) == SIM_OK);
    CHECK_EQ_INT(sum.computed, 0);
    CHECK_EQ_INT(sum.resumed, NJOBS);
    for (int i = 0; i < NJOBS; i++) {
        CHECK_EQ_INT(jobs[i].state, SIM_SWEEP_RESUMED);
        CHECK(same_stats(jobs[i].st, ref[i].st));
    }
    /* resume off recomputes; another version's records are not reused */
    p.resume = 0;
    make_jobs(jobs, t, &cp);
    CHECK(sim_sweep_run(&p, jobs, NJOBS, &sum, err, sizeof err) == SIM_OK);
    CHECK_EQ_INT(sum.computed, NJOBS);
    p.resume = 1;
    p.version = "test2";
    make_jobs(jobs, t, &cp);
    CHECK(sim_sweep_run(&p, jobs, NJOBS, &sum, err, sizeof err) == SIM_OK);
    CHECK_EQ_INT(sum.computed, NJOBS);

    /* a failing point is reported in its slot; the others still run */
    make_jobs(jobs, t, &cp);
    jobs[4].pt.max_new_tokens = 0; /* outside the replay's contract */
    jobs[4].pt.draft = NULL;       /* chain without a draft model */
    p.store_dir = NULL;
    CHECK(sim_sweep_run(&p, jobs, NJOBS, &sum, err, sizeof err) == SIM_OK);
    CHECK_EQ_INT(sum.failed, 1);
    CHECK_EQ_INT(sum.computed, NJOBS - 1);
    CHECK_EQ_INT(jobs[4].state, SIM_SWEEP_FAILED);
    CHECK(jobs[4].replay_rc != SIM_OK && jobs[4].err[0] != 0);
    CHECK(same_stats(jobs[5].st, ref[5].st));

    /* an uncreatable store stops the sweep before any point runs */
    char blocker[1024];
    snprintf(blocker, sizeof blocker, "%s/file", dir);
    FILE *f = fopen(blocker, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    snprintf(store, sizeof store, "%s/file/points", dir);
    p.store_dir = store;
    make_jobs(jobs, t, &cp);
    CHECK(sim_sweep_run(&p, jobs, NJOBS, &sum, err, sizeof err) == SIM_CANTCREATE);
    CHECK(strstr(err, "file") != NULL);
    trc_free(t);
}

int hdr_sim_sweep_ok(void);
int hdr_sim_sweep_store_ok(void);
int hdr_sim_sweep_mpi_ok(void);

static volatile sig_atomic_t host_alarms;
static void host_on_alarm(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    host_alarms += si != NULL ? 1 : 100; /* the siginfo is passed on too */
}

/* A SIGALRM flashspec did not arm belongs to the host (libFuzzer's unit
 * timeout, say): even inside a long library call it reaches the host's
 * handler and neither ends nor interrupts the run; the time limit's own
 * alarm is flashspec's. */
static void test_host_alarm(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = host_on_alarm;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, &old) == 0);
    host_alarms = 0;
    sim_sweep_signals_install();
    sim_sweep_library_call(1);
    raise(SIGALRM); /* the process would end here (exit 78) were it flashspec's */
    sim_sweep_library_call(0);
    CHECK(host_alarms == 1 && sim_sweep_interrupted() == 0);
    raise(SIGALRM);
    CHECK(host_alarms == 2 && sim_sweep_interrupted() == 0);
    /* with a time limit armed the alarm is the limit's: the run is interrupted */
    sim_sweep_deadline_set(3600);
    raise(SIGALRM);
    CHECK(host_alarms == 2 && sim_sweep_interrupted() == SIGALRM);
    alarm(0); /* the grace timer the limit armed */
    sim_sweep_deadline_clear();
    sim_sweep_signals_restore();
    struct sigaction now;
    CHECK(sigaction(SIGALRM, &old, &now) == 0);
    CHECK((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == host_on_alarm); /* given back */
}

int main(int argc, char **argv)
{
    /* each public header of sim/sweep compiled alone (hdr_*.c) */
    CHECK(hdr_sim_sweep_ok() && hdr_sim_sweep_store_ok() && hdr_sim_sweep_mpi_ok());
    CHECK(sim_mpi_size() >= 1 && sim_mpi_rank() == 0); /* not under a launcher */
    if (argc != 2) {
        fprintf(stderr, "usage: test_sweep CONFIG_DIR\n");
        return 2;
    }
    load_profiles(argv[1]);
    char dir[] = "/tmp/fs-test-sweep-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    test_ids();
    test_store(dir);
    test_executor(dir);
    test_host_alarm();
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_done("sweep/executor");
}
