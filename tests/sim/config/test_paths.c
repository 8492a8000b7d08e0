/*
 * test_paths.c -- the search for the files a script names (sim/config/
 * sim_paths.h): an absolute path as is, the script's directory before the
 * project's, a directory is not a file (but is found by find_any), the
 * "looked in" text, a name too long for out, and the nearest name's
 * edit-distance limit, extension and tie.  Works in a fresh temporary
 * directory.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include "sim/config/sim_paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"

static char root[512], sdir[PATH_MAX], pdir[PATH_MAX];

static void touch(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
}

static void sub(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    CHECK(mkdir(p, 0700) == 0);
}

static void test_find_file(void)
{
    char out[PATH_MAX], want[2 * PATH_MAX + 32], tried[2 * PATH_MAX + 32];
    touch(sdir, "both.h5");
    touch(pdir, "both.h5");
    touch(pdir, "proj.h5");
    sub(sdir, "dir.h5");
    sub(pdir, "data");
    touch(pdir, "data/in.h5");
    /* the script's directory before the project's */
    CHECK_EQ_INT(sim_paths_find_file(sdir, pdir, "both.h5", out, sizeof out, tried, sizeof tried), 0);
    snprintf(want, sizeof want, "%s/both.h5", sdir);
    CHECK(strcmp(out, want) == 0);
    snprintf(want, sizeof want, " (looked in %s and %s)", sdir, pdir);
    CHECK(strcmp(tried, want) == 0);
    /* the project when the script's directory has none */
    CHECK_EQ_INT(sim_paths_find_file(sdir, pdir, "proj.h5", out, sizeof out, NULL, 0), 0);
    snprintf(want, sizeof want, "%s/proj.h5", pdir);
    CHECK(strcmp(out, want) == 0);
    CHECK_EQ_INT(sim_paths_find_file(sdir, pdir, "data/in.h5", out, sizeof out, NULL, 0), 0);
    /* a directory is not a file: not found, though find_any finds it */
    CHECK_EQ_INT(sim_paths_find_file(sdir, pdir, "dir.h5", out, sizeof out, NULL, 0), -1);
    CHECK(out[0] == 0);
    CHECK_EQ_INT(sim_paths_find_any(sdir, pdir, "dir.h5", out, sizeof out), 0);
    snprintf(want, sizeof want, "%s/dir.h5", sdir);
    CHECK(strcmp(out, want) == 0);
    CHECK_EQ_INT(sim_paths_find_any(sdir, pdir, "proj.h5", out, sizeof out), 0);
    snprintf(want, sizeof want, "%s/proj.h5", pdir);
    CHECK(strcmp(out, want) == 0);
    CHECK_EQ_INT(sim_paths_find_any(sdir, pdir, "none.h5", out, sizeof out), -1);
    CHECK(out[0] == 0);
    CHECK_EQ_INT(sim_paths_find_file(sdir, pdir, "none.h5", out, sizeof out, tried, sizeof tried),
                 -1);
    /* an absolute path as is, never under either directory; no "looked in" */
    snprintf(want, sizeof want, "%s/proj.h5", pdir);
    CHECK_EQ_INT(sim_paths_find_file(sdir, "/nonexistent", want, out, sizeof out, tried,
                                     sizeof tried), 0);
    CHECK(strcmp(out, want) == 0);
    CHECK(tried[0] == 0);
    snprintf(want, sizeof want, "%s/dir.h5", sdir);
    CHECK_EQ_INT(sim_paths_find_file(pdir, pdir, want, out, sizeof out, NULL, 0), -1);
    /* a candidate that does not fit in out is not taken */
    size_t fit = strlen(sdir) + strlen("/both.h5") + 1;
    CHECK_EQ_INT(sim_paths_find_file(sdir, sdir, "both.h5", out, fit, NULL, 0), 0);
    CHECK_EQ_INT(sim_paths_find_file(sdir, sdir, "both.h5", out, fit - 1, NULL, 0), -1);
    CHECK_EQ_INT(sim_paths_is_file(want), 0);
    snprintf(want, sizeof want, "%s/both.h5", sdir);
    CHECK_EQ_INT(sim_paths_is_file(want), 1);
}

static void test_nearest(void)
{
    char out[512];
    sub(sdir, "near");
    sub(pdir, "near");
    touch(sdir, "near/abcdefghijkl.h5");
    touch(sdir, "near/abcdefghijkl.csv"); /* another extension: never offered */
    sim_paths_nearest(sdir, pdir, "near/abcdefghijkl.csv", ".h5", out, sizeof out);
    CHECK(strcmp(out, " (did you mean 'near/abcdefghijkl.h5'?)") == 0);
    /* the missing name's own length sets the limit: 15 characters, 5 edits */
    sim_paths_nearest(sdir, pdir, "near/a1234fghijkl.h5", ".h5", out, sizeof out); /* 4 */
    CHECK(strcmp(out, " (did you mean 'near/abcdefghijkl.h5'?)") == 0);
    sim_paths_nearest(sdir, pdir, "near/a12345ghijkl.h5", ".h5", out, sizeof out); /* 5 */
    CHECK(strcmp(out, " (did you mean 'near/abcdefghijkl.h5'?)") == 0);
    sim_paths_nearest(sdir, pdir, "near/0123456hijkl.h5", ".h5", out, sizeof out); /* 7 */
    CHECK(strcmp(out, "") == 0);
    sim_paths_nearest(sdir, pdir, "near/012345ghijkl.h5", ".h5", out, sizeof out); /* 6 */
    CHECK(strcmp(out, "") == 0);
    /* a short name: the limit is 3 edits */
    touch(pdir, "near/wxyz.h5");
    sim_paths_nearest(sdir, pdir, "near/w.h5", ".h5", out, sizeof out);
    CHECK(strcmp(out, " (did you mean 'near/wxyz.h5'?)") == 0);
    sim_paths_nearest(sdir, pdir, "near/q.h5", ".h5", out, sizeof out);
    CHECK(strcmp(out, "") == 0);
    /* a tie: the script directory's name, found first, wins */
    touch(sdir, "near/tie_a.h5");
    touch(pdir, "near/tie_b.h5");
    sim_paths_nearest(sdir, pdir, "near/tie_c.h5", ".h5", out, sizeof out);
    CHECK(strcmp(out, " (did you mean 'near/tie_a.h5'?)") == 0);
    sim_paths_nearest(pdir, sdir, "near/tie_c.h5", ".h5", out, sizeof out);
    CHECK(strcmp(out, " (did you mean 'near/tie_b.h5'?)") == 0);
    /* no directory part, and an absolute path (no hint) */
    touch(sdir, "top.h5");
    sim_paths_nearest(sdir, pdir, "tap.h5", ".h5", out, sizeof out);
    CHECK(strcmp(out, " (did you mean 'top.h5'?)") == 0);
    sim_paths_nearest(sdir, pdir, "/tap.h5", ".h5", out, sizeof out);
    CHECK(strcmp(out, "") == 0);
}

int main(void)
{
    snprintf(root, sizeof root, "%s/fs_paths_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(sdir, sizeof sdir, "%s/script", root);
    snprintf(pdir, sizeof pdir, "%s/project", root);
    CHECK(mkdir(sdir, 0700) == 0);
    CHECK(mkdir(pdir, 0700) == 0);
    test_find_file();
    test_nearest();
    char cmd[sizeof root + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return check_done("test_paths");
}
