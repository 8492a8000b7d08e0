/*
 * sim_strbuf.c -- the growing text buffer and exact reals (sim_strbuf.h).
 */
#include "sim/out/sim_strbuf.h"
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
    sim_out_real(out, n, x, 6);
}
