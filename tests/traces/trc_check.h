/*
 * trc_check.h -- assertion helpers of the traces tests.
 *
 * CHECK records a failure with its location and keeps going, so one run reports
 * every broken expectation; check_done() turns the count into the exit status
 * (and fails a test that checked nothing).  CHECK_ERR asserts a status code and
 * that the one-line message names what it must (file, dataset, key).
 */
#ifndef TRC_TEST_CHECK_H
#define TRC_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

/* code == want, message is one line and contains each of the given strings. */
#define CHECK_ERR(err, want, s1, s2)                                                               \
    check_err_at(__FILE__, __LINE__, (err).code, (err).msg, (want), (s1), (s2))

static inline void check_err_at(const char *file, int line, int code, const char *msg, int want,
                                const char *s1, const char *s2)
{
    check_count++;
    if (code != want || strchr(msg, '\n') || (s1 && !strstr(msg, s1)) || (s2 && !strstr(msg, s2))) {
        check_failures++;
        fprintf(stderr,
                "%s:%d: CHECK_ERR failed: code %d (want %d), msg \"%s\" (want \"%s\", "
                "\"%s\")\n",
                file, line, code, want, msg, s1 ? s1 : "", s2 ? s2 : "");
    }
}

/* snprintf that refuses to truncate (test paths must fit). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void
fmt(char *buf, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "test path too long: %s\n", buf);
        exit(2);
    }
}

#endif
