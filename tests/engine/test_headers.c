/*
 * test_headers.c -- runs the per-header translation units hdr_eng_*.c, each of
 * which includes exactly one public engine header and nothing else.  Building
 * this test is the proof that every header is self-contained; running it checks
 * that the types and functions they use behave as declared.
 */
#include <stdio.h>

int hdr_eng_param(void);
int hdr_eng_tree(void);
int hdr_eng_oracle(void);
int hdr_eng_accept(void);
int hdr_eng_policy(void);
int hdr_eng_costmodel(void);
int hdr_eng_prune(void);
int hdr_eng_select(void);

int main(void)
{
    int fails =
        hdr_eng_param() + hdr_eng_tree() + hdr_eng_oracle() + hdr_eng_accept() + hdr_eng_policy() +
                hdr_eng_costmodel() + hdr_eng_prune() + hdr_eng_select();
    fprintf(stderr, "test_headers: 8 headers, %d failed\n", fails);
    return fails != 0;
}
