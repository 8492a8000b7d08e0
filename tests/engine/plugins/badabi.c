/* badabi.c -- a plug-in built for another policy ABI number. */
#include <eng_policy.h>

static int create(const void *params, eng_policy *out)
{
    (void)params;
    (void)out;
    return ENG_E_ARG;
}

static const eng_param_desc none[] = {{.name = NULL}};
const int32_t flashspec_policy_abi = ENG_POLICY_ABI + 998;
const eng_policy_desc flashspec_policy = {.name = "future_policy", .params = none,
                                          .create = create};
