/* hdr_eng_param.c -- proves eng_param.h compiles on its own: it is the only include. */
#include "eng_param.h"

int hdr_eng_param(void);

int hdr_eng_param(void)
{
    eng_param_desc d = {.name = NULL};
    return d.name == NULL ? 0 : 1;
}
