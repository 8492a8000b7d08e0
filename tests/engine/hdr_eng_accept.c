/* hdr_eng_accept.c -- proves eng_accept.h compiles on its own: it is the only include. */
#include "eng_accept.h"

int hdr_eng_accept(void);

int hdr_eng_accept(void)
{
    eng_outcome o = {0, 0, ENG_NO_TOKEN, 0};
    return o.bonus == ENG_NO_TOKEN ? 0 : 1;
}
