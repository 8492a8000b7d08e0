/*
 * sim_strbuf.h -- a growing text buffer for the writers that format whole
 * files in memory before writing them atomically (the timeline's and the
 * run record's JSON), and reals written so that they read back exactly.
 */
#ifndef SIM_OUT_STRBUF_H
#define SIM_OUT_STRBUF_H

#include <stddef.h>

typedef struct sim_strbuf {
    char *p; /* NUL-terminated text (NULL until the first append) */
    size_t n, cap;
    int oom; /* an append ran out of memory: p is incomplete */
} sim_strbuf;

/* Appends printf-formatted text (nothing once oom is set). */
void sim_strbuf_printf(sim_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends s[0..len) as a JSON string literal: quoted, '"' and '\' escaped,
 * control characters below 0x20 as \u00XX. */
void sim_strbuf_json(sim_strbuf *b, const char *s, size_t len);

/* The least significant digits of an exact real (sim_out_fmt_exact, result
 * labels): 6 keeps the whole digits of numbers below 1e6. */
#define SIM_OUT_EXACT_DIGITS 6

/* x in the fewest significant digits (6 to 17) that read back as x: 0.1
 * stays "0.1", a tuned 0.090373524058708 is not cut to 0.0903735. */
void sim_out_fmt_exact(char *out, size_t n, double x);

/* The value of row d of a parameter struct as text, whole: an integer in
 * decimal, a boolean true or false, an enum its choice, a real through
 * sim_out_real with min_digits, a string as it is, a list its elements
 * (at most d->cap of them) joined by sep.  Every writer of a parameter's
 * value -- result labels, object names, what a rerun found changed -- goes
 * through it.  0, or -1 when it needs more than n bytes (out then holds a
 * cut text that must not be used). */
struct eng_param_desc;
int sim_out_param_value(const struct eng_param_desc *d, const void *params, int min_digits,
                        char sep, char *out, size_t n);

#endif
