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

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(cond)) {                                                                             \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                            \
        check_count++;                                                                             \
        if (check_a_ != check_b_) {                                                                \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__,  \
                    #a, #b, check_a_, check_b_);                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double check_a_ = (double)(a), check_b_ = (double)(b);                                     \
        check_count++;                                                                             \
        if (!(check_a_ - check_b_ <= (tol) && check_b_ - check_a_ <= (tol))) {                     \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s ~ %s (%g vs %g, tol %g)\n", __FILE__,         \
                    __LINE__, #a, #b, check_a_, check_b_, (double)(tol));                          \
        }                                                                                          \
    } while (0)

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

static int check_done(const char *name)
{
    if (check_count == 0) {
        fprintf(stderr, "%s: no checks ran\n", name);
        return 1;
    }
    fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
