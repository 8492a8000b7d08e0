/* hdr_eng_select.c -- proves eng_select.h compiles on its own: it is the only include. */
#include "eng_select.h"

int hdr_eng_select(void);

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int hdr_eng_select(void)
{
    int v[5] = {4, 1, 3, 0, 2};
    eng_select_sorted(v, 5, sizeof v[0], 2, cmp_int);
    return v[0] == 0 && v[1] == 1 ? 0 : 1;
}
