/*
 * sim_strbuf.c -- the growing text buffer and exact reals (sim_strbuf.h).
 */
#include "sim/out/sim_strbuf.h"

#include "engine/eng_param.h"
#include "sim/out/sim_out.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sim_strbuf_printf(sim_strbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    if (!b->p) { /* never hand vsnprintf a null base */
        b->p = malloc(1 << 16);
        if (!b->p) {
            b->oom = 1;
            return;
        }
        b->cap = 1 << 16;
        b->n = 0;
    }
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)k + 1;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

void sim_strbuf_json(sim_strbuf *b, const char *s, size_t len)
{
    sim_strbuf_printf(b, "\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            sim_strbuf_printf(b, "\\%c", c);
        else if (c < 0x20)
            sim_strbuf_printf(b, "\\u%04x", c);
        else
            sim_strbuf_printf(b, "%c", c);
    }
    sim_strbuf_printf(b, "\"");
}

void sim_out_fmt_exact(char *out, size_t n, double x)
{
    sim_out_real(out, n, x, SIM_OUT_EXACT_DIGITS);
}

/* Element i of a list row, or the scalar (i 0), as text into e. */
static void param_scalar(const eng_param_desc *d, const char *f, int32_t i, int min_digits,
                         char *e, size_t n)
{
    int32_t x;
    double y;
    switch (d->type) {
    case ENG_PARAM_DOUBLE:
    case ENG_PARAM_DOUBLE_LIST:
        memcpy(&y, f + (size_t)i * sizeof y, sizeof y);
        sim_out_real(e, n, y, min_digits);
        return;
    case ENG_PARAM_BOOL:
        memcpy(&x, f, sizeof x);
        snprintf(e, n, "%s", x ? "true" : "false");
        return;
    case ENG_PARAM_ENUM:
        memcpy(&x, f, sizeof x);
        for (int32_t k = 0; x >= 0 && d->choices && d->choices[k]; k++)
            if (k == x) {
                snprintf(e, n, "%s", d->choices[k]);
                return;
            }
        break;
    default:
        memcpy(&x, f + (size_t)i * sizeof x, sizeof x);
        break;
    }
    snprintf(e, n, "%d", (int)x);
}

int sim_out_param_value(const eng_param_desc *d, const void *params, int min_digits, char sep,
                        char *out, size_t n)
{
    const char *f = (const char *)params + d->offset;
    if (n == 0) return -1;
    out[0] = 0;
    if (d->type == ENG_PARAM_STRING) {
        int len = (int)strnlen(f, d->cap > 0 ? (size_t)d->cap : 0);
        return (size_t)snprintf(out, n, "%.*s", len, f) < n ? 0 : -1;
    }
    int list = d->type == ENG_PARAM_INT_LIST || d->type == ENG_PARAM_DOUBLE_LIST;
    int32_t cnt = 1;
    if (list) memcpy(&cnt, (const char *)params + d->count_offset, sizeof cnt);
    if (list && cnt > d->cap) cnt = d->cap; /* never read past the list's storage */
    size_t at = 0;
    for (int32_t i = 0; i < cnt; i++) {
        char e[40];
        param_scalar(d, f, i, min_digits, e, sizeof e);
        int k = i ? snprintf(out + at, n - at, "%c%s", sep, e) : snprintf(out, n, "%s", e);
        if (k < 0 || at + (size_t)k >= n) return -1;
        at += (size_t)k;
    }
    return 0;
}
