/*
 * fuzz_replay.c -- main() for a fuzz target outside libFuzzer: feeds every
 * file named on the command line (directories: every regular file in them,
 * sorted by name) to LLVMFuzzerTestOneInput once, as libFuzzer would, and
 * prints how many inputs ran.  A target signals failure by aborting, so
 * exit 0 means every input passed.  Used by the tests that replay
 * tests/fuzz/<target>/{corpus,regressions} in every build (gcc included).
 * An input that runs longer than FUZZ_REPLAY_MAX_S seconds (default 60, the
 * environment variable of that name to change it) fails the run as
 * libFuzzer's -timeout would: the targets' limits hold inside library calls
 * too, so none of their inputs may take long.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "fuzz_replay: out of memory reading %s\n", path);
        return -1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    LLVMFuzzerTestOneInput(buf, n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(buf);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    const char *env = getenv("FUZZ_REPLAY_MAX_S");
    double most = env && atof(env) > 0 ? atof(env) : 60.0;
    if (secs > most) {
        fprintf(stderr, "fuzz_replay: %s ran %.1f s, more than %.0f s (a limit escaped)\n", path,
                secs, most);
        return -1;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, long *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn) break;
            names = nn;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path) != 0) rc = -1;
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    long count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz_replay: %s: no such file or directory\n", argv[i]);
            rc = 1;
            continue;
        }
        int bad;
        if (S_ISDIR(st.st_mode)) {
            bad = run_dir(argv[i], &count);
        } else {
            bad = run_file(argv[i]);
            count++;
        }
        if (bad) rc = 1;
    }
    if (count == 0) {
        fprintf(stderr, "fuzz_replay: no inputs\n");
        rc = 1;
    }
    printf("%ld inputs replayed\n", count);
    return rc;
}
