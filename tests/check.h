/*
 * check.h -- assertion helpers shared by every C test.
 *
 * CHECK records a failure with its location and keeps going, so one run reports
 * every broken expectation; check_done() turns the count into the exit status.
 * Each test file includes this once (the counter is per executable).
 */
#ifndef FS_TEST_CHECK_H
#define FS_TEST_CHECK_H

#include <stdio.h>

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

#define CHECK_NEAR(a, b, tol)                                                            \
    do {                                                                                 \
        double check_a_ = (double)(a), check_b_ = (double)(b);                           \
        check_count++;                                                                   \
        if (!(check_a_ - check_b_ <= (tol) && check_b_ - check_a_ <= (tol))) {           \
            check_failures++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s ~ %s (%g vs %g, tol %g)\n", __FILE__, \
                    __LINE__, #a, #b, check_a_, check_b_, (double)(tol));                \
        }                                                                                \
    } while (0)

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
