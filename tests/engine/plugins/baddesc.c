/* baddesc.c -- a plug-in whose parameter table is wrong in one way, chosen by
 * -DCASE=N at build time (tests/engine/test_installed.py): each must be refused
 * at load with one line and exit 78, before any row is written. */
#include <eng_policy.h>
#include <math.h>

typedef struct bp {
    int32_t k;
    int32_t n;
    double xs[2];
    char s[8];
} bp;

static int create(const void *params, eng_policy *out)
{
    (void)params;
    (void)out;
    return ENG_E_ARG;
}

static const char *const units[] = {"cpu", "npu", NULL};
static const char *const broken_units[] = {"cpu", "npu\nfake line", NULL};
static const double two[] = {1.0, 2.0};

#define ROW(...) {.name = "k", .type = ENG_PARAM_INT, .offset = offsetof(bp, k), .min = 1, \
                  .max = 64, .def = 8, __VA_ARGS__}
static const eng_param_desc rows[] = {
#if CASE == 1 /* an int field past the struct's end */
    ROW(.offset = sizeof(bp) - 2),
#elif CASE == 2 /* a string of capacity 0 */
    {.name = "s", .type = ENG_PARAM_STRING, .offset = offsetof(bp, s), .cap = 0},
#elif CASE == 3 /* a string whose capacity runs past the end */
    {.name = "s", .type = ENG_PARAM_STRING, .offset = offsetof(bp, s), .cap = 64},
#elif CASE == 4 /* a list whose capacity runs past the end */
    {.name = "xs", .type = ENG_PARAM_DOUBLE_LIST, .offset = offsetof(bp, xs), .cap = 100,
     .count_offset = offsetof(bp, n), .min = 0, .max = 9},
#elif CASE == 5 /* a list whose count lies outside the struct */
    {.name = "xs", .type = ENG_PARAM_DOUBLE_LIST, .offset = offsetof(bp, xs), .cap = 2,
     .count_offset = 4096, .min = 0, .max = 9, .def_list = two, .def_count = 2},
#elif CASE == 6 /* an enum default outside its choices */
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = offsetof(bp, k), .min = 0, .max = 1,
     .def = 5, .choices = units},
#elif CASE == 7 /* min > max */
    ROW(.min = 64, .max = 1),
#elif CASE == 8 /* a default outside the range */
    ROW(.def = 100),
#elif CASE == 9 /* the same name twice */
    ROW(), ROW(.offset = offsetof(bp, n)),
#elif CASE == 10 /* an empty name */
    ROW(.name = ""),
#elif CASE == 11 /* a name that is not an identifier */
    ROW(.name = "k-max"),
#elif CASE == 12 /* an int default beyond int32_t, inside a range as wide (fuzz find) */
    ROW(.min = 0, .max = 1e30, .def = 1e20),
#elif CASE == 13 /* an int default that is not whole */
    ROW(.def = 2.5),
#elif CASE == 14 /* a list count sharing bytes with another field (fuzz find: the default          \
                    of k then overstated the list, read past its storage) */
    {.name = "xs",
     .type = ENG_PARAM_DOUBLE_LIST,
     .offset = offsetof(bp, xs),
     .cap = 2,
     .count_offset = offsetof(bp, k),
     .min = 0,
     .max = 9,
     .def = NAN,
     .def_list = two,
     .def_count = 2},
    ROW(),
#elif CASE == 15 /* an enum choice with a newline (it would split labels and listings) */
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = offsetof(bp, k), .min = 0, .max = 1,
     .def = 0, .choices = broken_units},
#elif CASE == 16 /* a string default with an escape sequence for the terminal */
    {.name = "s", .type = ENG_PARAM_STRING, .offset = offsetof(bp, s), .cap = 8,
     .def_str = "\033]0;x\007"},
#endif
    {.name = NULL}};

ENG_PLUGIN_DECLARE({.name = "bad_desc", .params = rows, .params_size = sizeof(bp),
                    .create = create});
