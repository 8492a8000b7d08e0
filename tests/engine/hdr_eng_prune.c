/* hdr_eng_prune.c -- proves eng_prune.h compiles on its own: it is the only include. */
#include "eng_prune.h"

int hdr_eng_prune(void);

int hdr_eng_prune(void)
{
    eng_prune_params p;
    eng_prune_default_params(&p);
    return p.mode == ENG_PRUNE_FULL && p.d0 == 1 && p.m0 == 2 ? 0 : 1;
}
