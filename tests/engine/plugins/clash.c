/* clash.c -- a plug-in whose policy name is a built-in one's. */
#include <eng_policy.h>

static int create(const void *params, eng_policy *out)
{
    (void)params;
    (void)out;
    return ENG_E_ARG;
}

static const eng_param_desc none[] = {{.name = NULL}};
ENG_PLUGIN_DECLARE({.name = PLUGIN_NAME, .params = none, .create = create});
