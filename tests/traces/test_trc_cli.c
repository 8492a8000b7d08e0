/*
 * test_trc_cli.c -- `flashspec trace` through cli_trace_main: exit codes
 * (sysexits), one-line "flashspec: " errors on stderr, outputs of check/info/
 * stats, synth parameters reaching the generator (also written prompt by
 * prompt, --by-prompt), and no output file left by a failing synth.  stdout and stderr are captured
 * by redirecting the descriptors.
 *
 * usage: test_trc_cli DATA_DIR BAD_DIR SCRATCH_DIR
 */
#include "sim/cli/cmd_trace.h"
#include "sim/sim_status.h"
#include "trc.h"

#include "trc_check.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[1024];
static char out_buf[65536], err_buf[65536];

static void slurp_fd(int fd, char *buf, size_t cap)
{
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, cap - 1);
    buf[n > 0 ? n : 0] = '\0';
}

/* Runs `trace ARGS...` (NULL-terminated), capturing stdout and stderr. */
static int run(const char *first, ...)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)"trace";
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;

    char po[1100], pe[1100];
    fmt(po, sizeof po, "%s/stdout", scratch);
    fmt(pe, sizeof pe, "%s/stderr", scratch);
    int fo = open(po, O_RDWR | O_CREAT | O_TRUNC, 0644);
    int fe = open(pe, O_RDWR | O_CREAT | O_TRUNC, 0644);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = sim_status_exit(cli_trace_main(argc, argv));
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    slurp_fd(fo, out_buf, sizeof out_buf);
    slurp_fd(fe, err_buf, sizeof err_buf);
    close(fo);
    close(fe);
    unlink(po);
    unlink(pe);
    return rc;
}

/* stderr holds exactly one line "flashspec: ...", containing s when given. */
static int one_error_line(const char *s)
{
    size_t n = strlen(err_buf);
    return strncmp(err_buf, "flashspec: ", 11) == 0 && n > 0 && err_buf[n - 1] == '\n' &&
           strchr(err_buf, '\n') == err_buf + n - 1 && (!s || strstr(err_buf, s));
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void test_help_and_usage(void)
{
    const char *cmds[] = {"info", "check", "stats", "synth"};
    CHECK_EQ_INT(run("--help", NULL), 0);
    CHECK(strstr(out_buf, "usage: flashspec trace") != NULL);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(run(cmds[i], "--help", NULL), 0);
        CHECK(strstr(out_buf, "usage: flashspec trace ") != NULL);
        CHECK(strstr(out_buf, cmds[i]) != NULL);
        CHECK_EQ_INT(err_buf[0], '\0');
    }
    CHECK(run("synth", "-h", NULL) == 0 && strstr(out_buf, "--predictor-accuracy"));

    CHECK_EQ_INT(run(NULL), 64);
    CHECK(one_error_line("missing command"));
    CHECK_EQ_INT(run("frobnicate", NULL), 64);
    CHECK(one_error_line("unknown command \"frobnicate\""));
    CHECK_EQ_INT(run("check", NULL), 64);
    CHECK(one_error_line("exactly one FILE"));
    CHECK_EQ_INT(run("check", "a.h5", "b.h5", NULL), 64);
    CHECK(one_error_line("exactly one FILE"));
    CHECK_EQ_INT(run("info", "--bogus", "a.h5", NULL), 64);
    CHECK(one_error_line("unknown option --bogus"));
    CHECK_EQ_INT(run("synth", "-o", NULL), 64);
    CHECK(one_error_line("needs an argument"));
    CHECK_EQ_INT(run("synth", "-q", NULL), 64);
    CHECK(one_error_line("unknown option -q"));
}

static void test_check_info_stats(const char *data, const char *bad)
{
    char small[1100];
    fmt(small, sizeof small, "%s/synth-small.h5", data);
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_load(small, &t, &err), TRC_OK);
    if (!t) return;
    const trc_meta *m = trc_get_meta(t);
    char want[1400];
    fmt(want, sizeof want, "%s: ok (%d prompts, %lld trees, %lld nodes, checksum 0x%016llx)\n",
        small, m->n_prompts, (long long)m->n_trees, (long long)m->n_nodes,
        (unsigned long long)trc_checksum(t));
    CHECK_EQ_INT(run("check", small, NULL), 0);
    CHECK(strcmp(out_buf, want) == 0);
    CHECK_EQ_INT(err_buf[0], '\0');

    char sum[32];
    fmt(sum, sizeof sum, "0x%016llx", (unsigned long long)trc_checksum(t));
    CHECK_EQ_INT(run("info", small, NULL), 0);
    CHECK(strstr(out_buf, sum) != NULL);
    CHECK(strstr(out_buf, "mean tree size 12.00") != NULL);
    CHECK(strstr(out_buf, "synthetic-target") != NULL);
    CHECK(strstr(out_buf, "exit layers     12,24") != NULL);
    CHECK(strstr(out_buf, "predictor       layer 24") != NULL);
    CHECK_EQ_INT(run("stats", small, NULL), 0);
    CHECK(strncmp(out_buf, "depth\tpositions\t", 16) == 0);
    CHECK(strstr(out_buf, "\n4\t58\t") != NULL); /* depth 4 reached by 32 - 3 positions x 2 */
    trc_free(t);

    static const struct {
        const char *file;
        int code;
    } cases[] = {
        {"truncated.h5", 65},     {"not_hdf5.h5", 65},        {"empty.h5", 65},
        {"wrong_version.h5", 65}, {"nan_logp.h5", 65},        {"token_ge_vocab.h5", 65},
        {"bad_offsets.h5", 65},   {"missing_dataset.h5", 65}, {"wrong_shape.h5", 65},
        {"wrong_type.h5", 65},    {"broken_ref_path.h5", 65}, {"no_such_file.h5", 66},
    };
    const char *cmds[] = {"check", "info", "stats"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int c = 0; c < 3; c++) {
            char path[1100];
            fmt(path, sizeof path, "%s/%s", bad, cases[i].file);
            CHECK_EQ_INT(run(cmds[c], path, NULL), cases[i].code);
            CHECK(one_error_line(path));
            CHECK_EQ_INT(out_buf[0], '\0');
        }
}

static void test_synth(void)
{
    char out[1100], gone[1200];
    fmt(out, sizeof out, "%s/cli.h5", scratch);
    CHECK_EQ_INT(run("synth", "-o", out, "--prompts", "2", "--prompt-len", "3", "--output-len",
                     "20", "--vocab", "5000", "--k", "5", "--depth", "5", "--nodes", "10",
                     "--target-layers", "28", "--exit-layers", "7,14,21", "--accept", "0.9,0.5",
                     "--calibration", "0.2", "--coverage", "0.95", "--predictor-accuracy", "0.6",
                     "--seed", "99", "--target", "tgt-x", "--draft", "drf-y", NULL),
                 0);
    CHECK_EQ_INT(err_buf[0], '\0');
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 2;
    p.prompt_len = 3;
    p.output_len = 20;
    p.vocab = 5000;
    p.k = 5;
    p.max_depth = 5;
    p.max_nodes = 10;
    p.target_layers = 28;
    p.n_exit = 3;
    p.exit_layers[0] = 7;
    p.exit_layers[1] = 14;
    p.exit_layers[2] = 21;
    p.n_accept = 2;
    p.accept[0] = 0.9;
    p.accept[1] = 0.5;
    p.calibration = 0.2;
    p.coverage = 0.95;
    p.predictor_accuracy = 0.6;
    p.seed = 99;
    strcpy(p.target, "tgt-x");
    strcpy(p.draft, "drf-y");
    trc_trace *a = NULL, *b = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_synth(&p, &a, &err), TRC_OK);
    CHECK_EQ_INT(trc_load(out, &b, &err), TRC_OK);
    if (a && b) {
        CHECK(trc_checksum(a) == trc_checksum(b));
        char sum[32];
        fmt(sum, sizeof sum, "0x%016llx", (unsigned long long)trc_checksum(a));
        CHECK(strstr(out_buf, sum) != NULL);
        CHECK(strcmp(trc_get_meta(b)->draft, "drf-y") == 0);
    }
    /* --by-prompt: the same line (counts, checksum), the same trace */
    char line[512];
    fmt(line, sizeof line, "%s", out_buf);
    CHECK_EQ_INT(run("synth", "-o", out, "--prompts", "2", "--prompt-len", "3", "--output-len",
                     "20", "--vocab", "5000", "--k", "5", "--depth", "5", "--nodes", "10",
                     "--target-layers", "28", "--exit-layers", "7,14,21", "--accept", "0.9,0.5",
                     "--calibration", "0.2", "--coverage", "0.95", "--predictor-accuracy", "0.6",
                     "--seed", "99", "--target", "tgt-x", "--draft", "drf-y", "--by-prompt", NULL),
                 0);
    CHECK_EQ_INT(err_buf[0], '\0');
    CHECK(strcmp(out_buf, line) == 0);
    trc_free(b);
    b = NULL;
    CHECK_EQ_INT(trc_load(out, &b, &err), TRC_OK);
    if (a && b) CHECK(trc_checksum(a) == trc_checksum(b));
    trc_free(a);
    trc_free(b);
    /* aliases and an empty exit-layer list */
    CHECK_EQ_INT(run("synth", "-o", out, "--max-depth", "3", "--max-nodes", "6", "--prompts", "1",
                     "--output-len", "4", "--exit-layers", "", NULL),
                 0);
    CHECK_EQ_INT(trc_load(out, &b, &err), TRC_OK);
    if (b) {
        CHECK_EQ_INT(trc_get_meta(b)->max_depth, 3);
        CHECK_EQ_INT(trc_get_meta(b)->n_exit, 0);
    }
    trc_free(b);
    unlink(out);

    /* failures: usage (64) and cannot create (73), never a file */
    fmt(gone, sizeof gone, "%s/never.h5", scratch);
    struct {
        const char *flag, *value, *msg;
        int code;
    } bad[] = {
        {"--coverage", "1.5", "synth: coverage must be in [0,1] (got 1.5)", 64},
        {"--prompts", "0", "synth: prompts", 64},
        {"--prompts", "12x", "--prompts expects an integer", 64},
        {"--prompts", "99999999999", "--prompts expects an integer", 64},
        {"--calibration", "abc", "--calibration expects a number", 64},
        {"--calibration", "nan", "--calibration expects a number", 64},
        {"--accept", "0.5,,0.4", "--accept: bad list", 64},
        {"--accept", "", "--accept needs at least one value", 64},
        {"--exit-layers", "1,2,3,4,5,6,7,8,9", "at most 8 values", 64},
        {"--exit-layers", "20,10", "synth: exit_layers", 64},
        {"--depth", "99", "synth: max_depth", 64},
        {"--seed", "-1", "--seed expects", 64},
        {"--target", "a-very-long-model-name-that-exceeds-sixty-four-bytes-by-quite-a-lot",
         "--target must be shorter", 64},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(run("synth", "-o", gone, bad[i].flag, bad[i].value, NULL), bad[i].code);
        CHECK(one_error_line(bad[i].msg));
        CHECK(!exists(gone));
    }
    CHECK_EQ_INT(run("synth", "--prompts", "2", NULL), 64);
    CHECK(one_error_line("-o FILE is required"));
    CHECK_EQ_INT(run("synth", "-o", gone, "extra", NULL), 64);
    CHECK(one_error_line("unexpected argument \"extra\""));
    CHECK(!exists(gone));

    char nodir[1200];
    fmt(nodir, sizeof nodir, "%s/missing-dir/x.h5", scratch);
    CHECK_EQ_INT(run("synth", "-o", nodir, "--prompts", "1", "--output-len", "4", NULL), 73);
    CHECK(one_error_line("cannot create output"));
    CHECK(!exists(nodir));
    CHECK_EQ_INT(
        run("synth", "-o", nodir, "--prompts", "1", "--output-len", "4", "--by-prompt", NULL), 73);
    CHECK(one_error_line("cannot create output"));
    CHECK(!exists(nodir));
    /* the output is checked before generating: a trace of a million prompts
     * into a missing directory fails at once (it would take hours and more
     * memory than the machine has) */
    CHECK_EQ_INT(run("synth", "-o", nodir, "--prompts", "1000000", "--output-len", "4096", NULL),
                 73);
    CHECK(one_error_line("cannot create output"));
    CHECK_EQ_INT(run("synth", "-o", scratch, "--prompts", "1000000", NULL), 73);
    CHECK(one_error_line("Is a directory"));
    CHECK_EQ_INT(run("synth", "-o", gone, "--by-prompt", "--prompts", "0", NULL), 64);
    CHECK(one_error_line("synth: prompts"));
    CHECK(!exists(gone));
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s DATA_DIR BAD_DIR SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    fmt(scratch, sizeof scratch, "%s/trc_cli_%ld", argv[3], (long)getpid());
    if (mkdir(scratch, 0755) != 0) {
        perror(scratch);
        return 2;
    }
    test_help_and_usage();
    test_check_info_stats(argv[1], argv[2]);
    test_synth();
    CHECK(rmdir(scratch) == 0);
    return check_done("test_trc_cli");
}
