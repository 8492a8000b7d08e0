/* hdr_eng_oracle.c -- proves eng_oracle.h compiles on its own: it is the only include. */
#include "eng_oracle.h"

int hdr_eng_oracle(void);

int hdr_eng_oracle(void)
{
    eng_draft_oracle d = {0};
    eng_target_oracle t = {0};
    return d.expand == NULL && t.verify == NULL && ENG_UNIT_NPU == 1 ? 0 : 1;
}
