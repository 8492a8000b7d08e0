/*
 * test_outdir.c -- a script run's output directory in plain C
 * (sim/out/sim_outdir.h): DIR accepted when it, or its nearest existing
 * ancestor, is a writable directory, and refused with its line and hint
 * (a file on the way, an empty name, a path too long); an output file's path
 * refused when a directory or a FIFO is there, and when its directory is
 * missing; DIR locked (made when absent) with a dead writer's temporaries
 * removed and a live one's kept; the record written (script.lua byte for
 * byte, run.json) or refused without memory, dropped only while DIR is still
 * the locked one; DIR removed at the end only when the run made it, failed
 * and left it empty.
 */
#include "sim/out/sim_outdir.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../check.h"
#include "sim/out/sim_tmp.h"
#include "sim/sim_status.h"

static char tmp[64];

static void path_of(char *out, size_t n, const char *rel)
{
    snprintf(out, n, "%s/%s", tmp, rel);
}

static void touch(const char *rel)
{
    char p[512];
    path_of(p, sizeof p, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
}

static int exists(const char *rel)
{
    char p[512];
    struct stat st;
    path_of(p, sizeof p, rel);
    return stat(p, &st) == 0;
}

static void test_dir_check(void)
{
    char d[512], err[2048] = "", want[2048];
    CHECK_EQ_INT(sim_out_dir_check(tmp, err, sizeof err), SIM_OK);
    path_of(d, sizeof d, "new/deeper//");
    CHECK_EQ_INT(sim_out_dir_check(d, err, sizeof err), SIM_OK); /* made later */
    touch("file");
    path_of(d, sizeof d, "file");
    CHECK_EQ_INT(sim_out_dir_check(d, err, sizeof err), SIM_CANTCREATE);
    snprintf(want, sizeof want, "cannot write output '%s': Not a directory ('%s' is a file, not "
                                "a directory; choose another directory with -o DIR)", d, d);
    CHECK(strcmp(err, want) == 0);
    char below[600];
    snprintf(below, sizeof below, "%s/sub/dir", d); /* the file is on the way */
    CHECK_EQ_INT(sim_out_dir_check(below, err, sizeof err), SIM_CANTCREATE);
    snprintf(want, sizeof want, "cannot write output '%s': Not a directory ('%s' is a file, not "
                                "a directory; choose another directory with -o DIR)", below, d);
    CHECK(strcmp(err, want) == 0);
    CHECK_EQ_INT(sim_out_dir_check("", err, sizeof err), SIM_CANTCREATE);
    CHECK(strcmp(err, "cannot write output '': empty directory name (choose another directory "
                      "with -o DIR)") == 0);
    char *longp = malloc(5000);
    CHECK(longp != NULL);
    if (!longp) return;
    memset(longp, 'a', 4999);
    longp[4999] = 0;
    char big[8192];
    CHECK_EQ_INT(sim_out_dir_check(longp, big, sizeof big), SIM_CANTCREATE);
    CHECK(strstr(big, ": File name too long (a shorter path; choose another directory with -o "
                      "DIR)") != NULL);
    free(longp);
}

static void test_path_checks(void)
{
    char p[512], err[1024] = "", want[1024];
    path_of(p, sizeof p, "tl.json");
    CHECK_EQ_INT(sim_out_path_check(p, err, sizeof err), SIM_OK); /* absent */
    CHECK_EQ_INT(sim_out_path_creatable(p, err, sizeof err), SIM_OK);
    touch("tl.json");
    CHECK_EQ_INT(sim_out_path_check(p, err, sizeof err), SIM_OK); /* a file: replaced */
    CHECK_EQ_INT(sim_out_path_check(tmp, err, sizeof err), SIM_CANTCREATE);
    snprintf(want, sizeof want, "cannot write output '%s': Is a directory", tmp);
    CHECK(strcmp(err, want) == 0);
    path_of(p, sizeof p, "fifo");
    CHECK(mkfifo(p, 0600) == 0);
    CHECK_EQ_INT(sim_out_path_check(p, err, sizeof err), SIM_CANTCREATE);
    snprintf(want, sizeof want, "cannot write output '%s': not a regular file", p);
    CHECK(strcmp(err, want) == 0);
    path_of(p, sizeof p, "nodir/tl.json");
    CHECK_EQ_INT(sim_out_path_creatable(p, err, sizeof err), SIM_CANTCREATE);
    snprintf(want, sizeof want, "cannot write output '%s': No such file or directory", p);
    CHECK(strcmp(err, want) == 0);
    path_of(p, sizeof p, "file/tl.json");
    CHECK_EQ_INT(sim_out_path_creatable(p, err, sizeof err), SIM_CANTCREATE);
    snprintf(want, sizeof want, "cannot write output '%s': Not a directory", p);
    CHECK(strcmp(err, want) == 0);
    CHECK_EQ_INT(sim_out_path_creatable("tl.json", err, sizeof err), SIM_OK); /* here */
}

/* A temporary of name in dir as a writer of process pid would leave it
 * (its path into p[0..n)). */
static void temporary_of(const char *dir, const char *name, pid_t pid, char *p, size_t n)
{
    char t[1024], mine[32], theirs[32];
    CHECK(sim_tmp_name(t, sizeof t, dir, name, "abc123") == 0);
    snprintf(mine, sizeof mine, "-%ld-", (long)getpid());
    snprintf(theirs, sizeof theirs, "-%ld-", (long)pid);
    char *at = strstr(t, mine);
    CHECK(at != NULL);
    if (!at) return;
    snprintf(p, n, "%.*s%s%s", (int)(at - t), t, theirs, at + strlen(mine));
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
}

static pid_t dead_pid(void)
{
    pid_t c = fork();
    if (c == 0) _exit(0);
    waitpid(c, NULL, 0);
    return c;
}

static void test_lock_and_record(void)
{
    char d[512], store[600], err[1024] = "";
    path_of(d, sizeof d, "out");
    snprintf(store, sizeof store, "%s/points", d);
    CHECK(mkdir(d, 0755) == 0 && mkdir(store, 0755) == 0);
    pid_t gone = dead_pid();
    char t1[1100], t2[1100], t3[1100];
    temporary_of(d, "results.csv", gone, t1, sizeof t1);
    temporary_of(store, "p1", gone, t2, sizeof t2);
    temporary_of(d, "results.h5", getpid(), t3, sizeof t3); /* a live writer's */
    sim_out_lockh lock = {.fd = -1};
    int made = -1;
    CHECK_EQ_INT(sim_out_dir_lock(&lock, d, store, 1, &made, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(made, 0);
    struct stat st;
    CHECK(stat(t1, &st) != 0 && stat(t2, &st) != 0); /* the dead writer's went */
    CHECK(stat(t3, &st) == 0);                       /* the live one's stays */
    CHECK_EQ_INT(sim_out_dir_held(&lock, err, sizeof err), SIM_OK);
    /* the record: script.lua byte for byte, run.json */
    fs_runrec *rec = fs_runrec_new();
    CHECK(rec != NULL);
    fs_runrec_run run = {.version = "9.9", .build_key = "k", .script_path = "s.lua",
                         .script_hash = "h", .script_bytes = "x = 1\n\0y", .script_len = 8};
    CHECK_EQ_INT(sim_out_record_write(d, rec, &run, NULL, 0, err, sizeof err), SIM_OK);
    CHECK(exists("out/run.json") && exists("out/script.lua"));
    char p[600], b[16];
    snprintf(p, sizeof p, "%s/script.lua", d);
    FILE *f = fopen(p, "rb");
    size_t got = f ? fread(b, 1, sizeof b, f) : 0;
    if (f) fclose(f);
    CHECK(got == 8 && memcmp(b, "x = 1\n\0y", 8) == 0);
    CHECK_EQ_INT(sim_out_record_write(d, NULL, &run, NULL, 0, err, sizeof err), SIM_INTERNAL);
    char want[700];
    snprintf(want, sizeof want, "out of memory for %s/run.json", d);
    CHECK(strcmp(err, want) == 0);
    /* dropped only while DIR is still the locked one */
    sim_out_lockh none = {.fd = -1};
    sim_out_record_drop(&none, d);
    CHECK(exists("out/run.json") && exists("out/script.lua"));
    sim_out_record_drop(&lock, d);
    CHECK(!exists("out/run.json") && !exists("out/script.lua"));
    fs_runrec_free(rec);
    /* not made by this run: stays, failed or not */
    sim_out_dir_release(&lock, d, 0, 1, 1);
    CHECK(exists("out"));
}

/* DIR made by the run: removed when the run failed and left it empty, kept
 * when it succeeded or wrote something. */
static void test_release(void)
{
    char d[512], err[1024] = "";
    for (int k = 0; k < 3; k++) {
        path_of(d, sizeof d, "made");
        sim_out_lockh lock = {.fd = -1};
        int made = 0;
        CHECK_EQ_INT(sim_out_dir_lock(&lock, d, "", 1, &made, err, sizeof err), SIM_OK);
        CHECK_EQ_INT(made, 1);
        if (k == 2) touch("made/results.csv");
        sim_out_dir_release(&lock, d, made, k != 1, 1);
        CHECK_EQ_INT(exists("made"), k != 0);
        CHECK_EQ_INT(lock.fd, -1);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf %s", d);
        CHECK(system(cmd) == 0);
    }
    sim_out_lockh none = {.fd = -1};
    sim_out_dir_release(&none, NULL, 0, 1, 0); /* nothing taken */
}

/* sim_out_results_write: with rows, the record and the results, then the
 * files, each named on no line (quiet); without rows, the files alone;
 * results that cannot be written take the record with them; a record that
 * cannot be made writes nothing. */
static void test_results_write(void)
{
    char d[512], err[1024] = "";
    path_of(d, sizeof d, "res");
    CHECK(mkdir(d, 0755) == 0);
    sim_out_lockh lock = {.fd = -1};
    int made = -1;
    CHECK_EQ_INT(sim_out_dir_lock(&lock, d, "", 1, &made, err, sizeof err), SIM_OK);
    fs_runrec *rec = fs_runrec_new();
    fs_rows_meta meta = {"0123456789abcdef"};
    fs_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.policy, sizeof row.policy, "p");
    snprintf(row.trace, sizeof row.trace, "t");
    sim_trace_cache traces = {0};
    sim_profile_cache profiles = {0};
    sim_out_file files[1] = {{.name = "report.md", .data = "# r\n", .len = 4}};
    sim_out_results w = {.dir = d, .lock = &lock, .meta = &meta, .rows = &row, .n_rows = 0,
                         .rec = rec,
                         .run = {.version = "9.9", .build_key = "k", .script_path = "s.lua",
                                 .script_hash = "h", .script_bytes = "x = 1\n", .script_len = 6},
                         .traces = &traces, .profiles = &profiles, .home = NULL,
                         .files = files, .n_files = 1, .quiet = 1};
    /* no rows: the files alone */
    CHECK_EQ_INT(sim_out_results_write(&w, err, sizeof err), SIM_OK);
    CHECK(exists("res/report.md") && !exists("res/run.json") && !exists("res/results.csv"));
    /* rows: record, results, files */
    w.n_rows = 1;
    CHECK_EQ_INT(sim_out_results_write(&w, err, sizeof err), SIM_OK);
    CHECK(exists("res/run.json") && exists("res/script.lua") && exists("res/results.csv") &&
          exists("res/results.h5"));
    /* no record to be made: nothing more is written */
    char p[700];
    snprintf(p, sizeof p, "%s/run.json", d);
    CHECK(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/report.md", d);
    CHECK(unlink(p) == 0);
    w.rec = NULL;
    CHECK_EQ_INT(sim_out_results_write(&w, err, sizeof err), SIM_INTERNAL);
    CHECK(!exists("res/run.json") && !exists("res/report.md"));
    w.rec = rec;
    /* results that cannot be written: the record goes with them */
    snprintf(p, sizeof p, "%s/results.csv", d);
    CHECK(unlink(p) == 0 && mkdir(p, 0755) == 0);
    CHECK(sim_out_results_write(&w, err, sizeof err) != SIM_OK);
    CHECK(!exists("res/run.json") && !exists("res/script.lua") && !exists("res/report.md"));
    CHECK(rmdir(p) == 0);
    fs_runrec_free(rec);
    sim_out_dir_release(&lock, d, 0, 1, 1);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/fs_out_dir_XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_dir_check();
    test_path_checks();
    test_lock_and_record();
    test_release();
    test_results_write();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
    return check_done("out/outdir");
}
