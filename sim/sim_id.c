/*
 * sim_id.c -- point identities and replay seeds (see sim_id.h).
 */
#include "sim/sim_id.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define FNV_PRIME 1099511628211ull
#define LANE_B_OFFSET 0x6a09e667f3bcc909ull /* any constant != SIM_ID_FNV_OFFSET */
#define SEED_SALT 0x5eed5eed5eed5eedull

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t sim_id_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* ------------------------------------------------------------------ ids */

void sim_id_hasher_init(sim_id_hasher *h)
{
    h->a = SIM_ID_FNV_OFFSET;
    h->b = LANE_B_OFFSET;
}

static void feed(sim_id_hasher *h, const char *s)
{
    size_t n = strlen(s);
    h->a = sim_id_fnv(h->a, s, n);
    h->b = sim_id_fnv(h->b, s, n);
}

void sim_id_hasher_str(sim_id_hasher *h, const char *key, const char *value)
{
    feed(h, key);
    feed(h, "=");
    feed(h, value ? value : "");
    feed(h, "\n");
}

void sim_id_hasher_u64(sim_id_hasher *h, const char *key, uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    sim_id_hasher_str(h, key, b);
}

/* A number equal to its row's (finite) default. */
static int at_default(const eng_param_desc *d, const char *f)
{
    int is_int = d->type == ENG_PARAM_INT || d->type == ENG_PARAM_BOOL || d->type == ENG_PARAM_ENUM;
    if (!isfinite(d->def) || (!is_int && d->type != ENG_PARAM_DOUBLE)) return 0;
    int32_t i = 0;
    double x = 0.0;
    if (is_int)
        memcpy(&i, f, sizeof i), x = i;
    else
        memcpy(&x, f, sizeof x);
    return x == d->def && signbit(x) == signbit(d->def);
}

void sim_id_hasher_params(sim_id_hasher *h, const char *prefix,
                             const eng_param_desc *table, const void *params)
{
    for (const eng_param_desc *d = table; d && d->name; d++) {
        const char *f = (const char *)params + d->offset;
        if (at_default(d, f)) continue;
        feed(h, prefix);
        feed(h, ".");
        feed(h, d->name);
        feed(h, "=");
        char v[64];
        switch (d->type) {
        case ENG_PARAM_INT:
        case ENG_PARAM_BOOL:
        case ENG_PARAM_ENUM: {
            int32_t x;
            memcpy(&x, f, sizeof x);
            snprintf(v, sizeof v, "%" PRId32, x);
            feed(h, v);
            break;
        }
        case ENG_PARAM_DOUBLE: {
            double x;
            memcpy(&x, f, sizeof x);
            snprintf(v, sizeof v, "%a", x);
            feed(h, v);
            break;
        }
        case ENG_PARAM_STRING: {
            /* bounded by the buffer even if a caller forgot the NUL */
            size_t n = strnlen(f, d->cap > 0 ? (size_t)d->cap : 0);
            h->a = sim_id_fnv(h->a, f, n);
            h->b = sim_id_fnv(h->b, f, n);
            break;
        }
        case ENG_PARAM_DOUBLE_LIST:
        case ENG_PARAM_INT_LIST: {
            int32_t cnt;
            memcpy(&cnt, (const char *)params + d->count_offset, sizeof cnt);
            if (cnt < 0) cnt = 0;
            if (cnt > d->cap) cnt = d->cap;
            for (int32_t i = 0; i < cnt; i++) {
                if (d->type == ENG_PARAM_INT_LIST) {
                    int32_t x;
                    memcpy(&x, f + (size_t)i * sizeof x, sizeof x);
                    snprintf(v, sizeof v, "%s%" PRId32, i ? "/" : "", x);
                } else {
                    double x;
                    memcpy(&x, f + (size_t)i * sizeof x, sizeof x);
                    snprintf(v, sizeof v, "%s%a", i ? "/" : "", x);
                }
                feed(h, v);
            }
            break;
        }
        }
        feed(h, "\n");
    }
}

sim_id sim_id_hasher_final(const sim_id_hasher *h)
{
    return (sim_id){.hi = splitmix64(h->a), .lo = splitmix64(h->b ^ 0x1d)};
}

void sim_id_hex(sim_id id, char out[33])
{
    snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, id.hi, id.lo);
}

int sim_id_equal(sim_id a, sim_id b)
{
    return a.hi == b.hi && a.lo == b.lo;
}

uint64_t sim_id_seed(sim_id id)
{
    return splitmix64(id.hi ^ id.lo ^ SEED_SALT);
}

