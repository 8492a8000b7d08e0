/*
 * eng_select.h -- the k smallest elements of an array, in order, without
 * sorting the rest.
 *
 * Tree policies rank a pool of candidates by a total order and keep the
 * best few; sorting the whole pool every cycle cost more than the rest of
 * their work.  Pure C11, no allocation, no I/O.
 */
#ifndef ENG_SELECT_H
#define ENG_SELECT_H

#include <stddef.h>

/* Reorders base[0..n) (elements of size bytes, at most ENG_SELECT_MAX_SIZE)
 * so that base[0..k) holds the k smallest elements by cmp in ascending
 * order; the order of base[k..n) is unspecified.  k >= n sorts everything.
 * With a strict total order (cmp returns 0 only for an element and itself)
 * the result equals the first k elements of a full sort, whatever the input
 * order.  Expected O(n + k log k). */
#define ENG_SELECT_MAX_SIZE 128
void eng_select_sorted(void *base, size_t n, size_t size, size_t k,
                       int (*cmp)(const void *, const void *));

#endif
