/* hdr_eng_policy.c -- proves eng_policy.h compiles on its own: it is the only include. */
#include "eng_policy.h"

int hdr_eng_policy(void);

int hdr_eng_policy(void)
{
    int32_t n = 0;
    return eng_policy_registry(&n) != NULL && n > 0 ? 0 : 1;
}
