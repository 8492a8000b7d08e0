/*
 * eng_param.c -- defaults, lookup and "did you mean" for eng_param_desc tables.
 * Tables are tiny (tens of rows), so linear scans are the right structure.
 */
#include "eng_param.h"

#include <math.h>
#include <string.h>

void eng_params_defaults(const eng_param_desc *table, void *params)
{
    for (const eng_param_desc *d = table; d->name; d++) {
        char *field = (char *)params + d->offset;
        double def = isnan(d->def) ? 0.0 : d->def;
        switch (d->type) {
        case ENG_PARAM_INT:
        case ENG_PARAM_BOOL:
        case ENG_PARAM_ENUM: {
            int32_t v = (int32_t)def;
            memcpy(field, &v, sizeof v);
            break;
        }
        case ENG_PARAM_DOUBLE:
            memcpy(field, &def, sizeof def);
            break;
        case ENG_PARAM_STRING:
            memset(field, 0, (size_t)d->cap);
            if (d->def_str) {
                size_t n = strlen(d->def_str);
                if (n >= (size_t)d->cap) n = (size_t)d->cap - 1;
                memcpy(field, d->def_str, n);
            }
            break;
        case ENG_PARAM_DOUBLE_LIST:
        case ENG_PARAM_INT_LIST: {
            int32_t n = d->def_count < d->cap ? d->def_count : d->cap;
            for (int32_t i = 0; i < n; i++) {
                if (d->type == ENG_PARAM_DOUBLE_LIST) {
                    memcpy(field + (size_t)i * sizeof(double), &d->def_list[i], sizeof(double));
                } else {
                    int32_t v = (int32_t)d->def_list[i];
                    memcpy(field + (size_t)i * sizeof(int32_t), &v, sizeof v);
                }
            }
            memcpy((char *)params + d->count_offset, &n, sizeof n);
            break;
        }
        }
    }
}

/* 1 when x lies in d's range (NaN does not). */
static int in_range(const eng_param_desc *d, double x)
{
    return x >= d->min && x <= d->max;
}

/* 1 when the value of row d in params lies in its range. */
static int value_ok(const eng_param_desc *d, const char *params)
{
    const char *f = params + d->offset;
    int32_t i = 0, n = 0;
    double x = 0.0;
    switch (d->type) {
    case ENG_PARAM_INT:
        memcpy(&i, f, sizeof i);
        return in_range(d, i);
    case ENG_PARAM_BOOL:
        memcpy(&i, f, sizeof i);
        return i == 0 || i == 1;
    case ENG_PARAM_ENUM:
        memcpy(&i, f, sizeof i);
        while (d->choices && d->choices[n])
            n++;
        return in_range(d, i) && i >= 0 && i < n;
    case ENG_PARAM_DOUBLE:
        memcpy(&x, f, sizeof x);
        return in_range(d, x);
    case ENG_PARAM_STRING:
        return d->cap > 0 && memchr(f, 0, (size_t)d->cap) != NULL;
    case ENG_PARAM_DOUBLE_LIST:
    case ENG_PARAM_INT_LIST:
        memcpy(&n, params + d->count_offset, sizeof n);
        if (n < 0 || n > d->cap) return 0;
        for (int32_t k = 0; k < n; k++) {
            if (d->type == ENG_PARAM_INT_LIST) {
                memcpy(&i, f + (size_t)k * sizeof i, sizeof i);
                x = i;
            } else {
                memcpy(&x, f + (size_t)k * sizeof x, sizeof x);
            }
            if (!in_range(d, x)) return 0;
        }
        return 1;
    }
    return 0;
}

int32_t eng_params_check(const eng_param_desc *table, const void *params)
{
    if (!table || !params) return 1;
    for (int32_t r = 0; table[r].name; r++)
        if (!value_ok(&table[r], params)) return r + 1;
    return 0;
}

const eng_param_desc *eng_params_find(const eng_param_desc *table, const char *name)
{
    for (const eng_param_desc *d = table; d->name; d++)
        if (strcmp(d->name, name) == 0) return d;
    return NULL;
}

int32_t eng_params_distance(const char *a, const char *b)
{
    /* Levenshtein over at most 63 characters per side; two rolling rows. */
    int32_t la = (int32_t)strlen(a), lb = (int32_t)strlen(b);
    if (la > 63) la = 63;
    if (lb > 63) lb = 63;
    int32_t prev[64], cur[64];
    for (int32_t j = 0; j <= lb; j++) prev[j] = j;
    for (int32_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (int32_t j = 1; j <= lb; j++) {
            int32_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int32_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            int32_t m = sub < del ? sub : del;
            cur[j] = m < ins ? m : ins;
        }
        memcpy(prev, cur, sizeof(int32_t) * (size_t)(lb + 1));
    }
    return prev[lb];
}

const char *eng_params_nearest(const eng_param_desc *table, const char *name)
{
    const char *best = NULL;
    int32_t best_d = 0, limit = (int32_t)strlen(name) / 2;
    if (limit < 2) limit = 2;
    for (const eng_param_desc *d = table; d->name; d++) {
        int32_t dist = eng_params_distance(name, d->name);
        /* a key that starts with what was typed is a good guess too */
        if (strncmp(d->name, name, strlen(name)) == 0 && strlen(name) >= 3) dist = 1;
        if (dist <= limit && (!best || dist < best_d)) {
            best = d->name;
            best_d = dist;
        }
    }
    return best;
}

int eng_param_required(const eng_param_desc *d)
{
    switch (d->type) {
    case ENG_PARAM_STRING:
        return d->def_str == NULL;
    case ENG_PARAM_DOUBLE_LIST:
    case ENG_PARAM_INT_LIST:
        return d->def_list == NULL && d->def_count == 0 && isnan(d->def);
    default:
        return isnan(d->def);
    }
}
