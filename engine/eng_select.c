/*
 * eng_select.c -- partial selection (eng_select.h): quickselect with a
 * median-of-three pivot down to the k-th position, then a sort of the k
 * elements before it.
 */
#include "eng_select.h"

#include <stdlib.h>
#include <string.h>

static void swap(unsigned char *a, unsigned char *b, size_t size)
{
    unsigned char tmp[ENG_SELECT_MAX_SIZE];
    if (a == b) return;
    memcpy(tmp, a, size);
    memcpy(a, b, size);
    memcpy(b, tmp, size);
}

void eng_select_sorted(void *base, size_t n, size_t size, size_t k,
                       int (*cmp)(const void *, const void *))
{
    unsigned char *b = base;
    if (!base || size == 0 || size > ENG_SELECT_MAX_SIZE || k == 0 || n == 0) return;
    if (k >= n) {
        qsort(base, n, size, cmp);
        return;
    }
    /* invariant: the k smallest lie in [lo, hi) or before lo */
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2, last = hi - 1;
        /* median of three to position last, then Lomuto partition */
        if (cmp(b + mid * size, b + lo * size) < 0) swap(b + mid * size, b + lo * size, size);
        if (cmp(b + last * size, b + lo * size) < 0) swap(b + last * size, b + lo * size, size);
        if (cmp(b + mid * size, b + last * size) < 0) swap(b + mid * size, b + last * size, size);
        size_t store = lo;
        for (size_t i = lo; i < last; i++)
            if (cmp(b + i * size, b + last * size) < 0) swap(b + i * size, b + store++ * size, size);
        swap(b + store * size, b + last * size, size);
        /* b[store] is in its sorted place */
        if (store == k || store + 1 == k) break;
        if (store > k)
            hi = store;
        else
            lo = store + 1;
    }
    qsort(base, k, size, cmp);
}
