/* hdr_eng_costmodel.c -- proves eng_costmodel.h compiles on its own: it is the only include. */
#include "eng_costmodel.h"

int hdr_eng_costmodel(void);

int hdr_eng_costmodel(void)
{
    static eng_costmodel cm;
    eng_costmodel_init(&cm, NULL);
    return eng_costmodel_verify(&cm, 2, 1) == 2.0 * cm.p.prior_verify_ms_per_row ? 0 : 1;
}
