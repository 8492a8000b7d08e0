/*
 * test_headers.c -- runs the per-header translation units hdr_eng_*.c, each of
 * which includes exactly one public engine header and nothing else, and the
 * ones generated for the policies' own headers (hdr_pol.c.in, listed in the
 * generated hdr_pol_list.h).  Building this test is the proof that every
 * header is self-contained; running it checks that the types and functions
 * they use behave as declared.
 */
#include <stdio.h>

#include "hdr_pol_list.h"

int hdr_eng_param(void);
int hdr_eng_tree(void);
int hdr_eng_oracle(void);
int hdr_eng_accept(void);
int hdr_eng_policy(void);
int hdr_eng_costmodel(void);
int hdr_eng_prune(void);
int hdr_eng_select(void);
HDR_POL_DECLS

int main(void)
{
    int fails = hdr_eng_param() + hdr_eng_tree() + hdr_eng_oracle() + hdr_eng_accept() +
                hdr_eng_policy() + hdr_eng_costmodel() + hdr_eng_prune() + hdr_eng_select() +
                HDR_POL_CALLS;
    fprintf(stderr, "test_headers: %d headers, %d failed\n", 8 + HDR_POL_COUNT, fails);
    return fails != 0;
}
