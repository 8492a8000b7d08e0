/*
 * eng_param.h -- self-describing parameter structs.
 *
 * Every configurable struct in flashspec (policy parameters here in the engine,
 * device and model profiles in sim/hw) publishes a table of eng_param_desc rows:
 * the key as a user writes it (units in the name: read_gbps, launch_us), its type,
 * where it lives in the struct, its inclusive range and its default.  The Lua
 * layer validates user tables generically against these tables (unknown keys,
 * types, ranges), so adding a parameter is one struct field plus one row.
 *
 * Invariants: a table is terminated by a row whose name is NULL; names are unique
 * within a table; def lies in [min, max] unless it is NAN (= required key).
 * This header is pure C11: no I/O, no allocation.
 */
#ifndef ENG_PARAM_H
#define ENG_PARAM_H

#include <stddef.h>
#include <stdint.h>

typedef enum eng_param_type {
    ENG_PARAM_INT = 0,     /* int32_t */
    ENG_PARAM_DOUBLE,      /* double */
    ENG_PARAM_BOOL,        /* int32_t, 0 or 1 */
    ENG_PARAM_ENUM,        /* int32_t index into choices[] */
    ENG_PARAM_STRING,      /* char[cap], NUL-terminated */
    ENG_PARAM_DOUBLE_LIST, /* double[cap] + int32_t count at count_offset */
    ENG_PARAM_INT_LIST     /* int32_t[cap] + int32_t count at count_offset */
} eng_param_type;

typedef struct eng_param_desc {
    const char *name;           /* key, NULL ends the table */
    eng_param_type type;
    size_t offset;              /* offsetof(struct, field) */
    double min, max;            /* inclusive; for lists: range of each element */
    double def;                 /* NAN = required; lists and strings: see def_list/def_str */
    const char *const *choices; /* ENUM: NULL-terminated names */
    int32_t cap;                /* STRING: buffer bytes; lists: max elements */
    size_t count_offset;        /* lists: offsetof the int32_t element count */
    const char *def_str;        /* STRING default (NULL = required) */
    const double *def_list;     /* list default values (def_count of them) */
    int32_t def_count;
    const char *doc;            /* one line, shown by --help and in errors */
} eng_param_desc;

/* Writes every default into params (required keys are zeroed).  Borrowed table. */
void eng_params_defaults(const eng_param_desc *table, void *params);

/* 0 when every value of params lies in its row's range: an INT, BOOL or
 * ENUM in [min, max] (an ENUM also below its choice count, a BOOL 0 or 1), a
 * DOUBLE in [min, max] (NaN is not), a STRING ended inside its cap, a list's
 * count in [0, cap] and each element in [min, max]; else 1 + the index of the
 * first row that is not.  What a policy's create checks first, so that the
 * table states each range once (cross-parameter rules stay with create). */
int32_t eng_params_check(const eng_param_desc *table, const void *params);

/* 1 when row d has no default, so a value must be given: a STRING without
 * def_str, a list without def_list, def_count or def, anything else whose
 * def is NaN. */
int eng_param_required(const eng_param_desc *d);

/* Row for name, or NULL. */
const eng_param_desc *eng_params_find(const eng_param_desc *table, const char *name);

/* Closest key to name by edit distance (for "did you mean"), or NULL if nothing is
 * within distance max(2, strlen(name)/2). */
const char *eng_params_nearest(const eng_param_desc *table, const char *name);

/* Edit distance between two short strings (used by eng_params_nearest). */
int32_t eng_params_distance(const char *a, const char *b);

#endif
