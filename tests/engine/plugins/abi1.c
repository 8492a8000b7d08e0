/* abi1.c -- the example plug-in (examples/plugin/confidence_chain.c) exported
 * as a plug-in built for policy ABI 1 was: the descriptor's layout of that
 * ABI, which ends at needs_draft (no observes_outcome, no tree size).  A
 * runtime of a later ABI still loads it and reads the missing fields as
 * zero. */
#include <eng_policy.h>

typedef struct abi1_desc {
    const char *name;
    const char *doc;
    size_t params_size;
    const eng_param_desc *params;
    int (*create)(const void *params, eng_policy *out);
    int32_t needs_draft;
} abi1_desc;

#undef ENG_PLUGIN_DECLARE
#define ENG_PLUGIN_DECLARE(...)                                                                    \
    const int32_t flashspec_policy_abi = 1;                                                        \
    const abi1_desc flashspec_policy = __VA_ARGS__

#include "confidence_chain.c"
