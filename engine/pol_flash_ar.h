/*
 * pol_flash_ar.h -- Flash-AR (pol_flash_ar.c): no drafting; each cycle
 * verifies the root alone (one token).
 */
#ifndef POL_FLASH_AR_H
#define POL_FLASH_AR_H

#include "eng_policy.h"

typedef struct eng_flash_ar_params {
    int32_t unused_; /* no parameters */
} eng_flash_ar_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_flash_ar_param_table[];
int eng_flash_ar_create(const void *params, eng_policy *out);

#endif
