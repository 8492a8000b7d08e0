/*
 * test_trc_header.c -- traces/trc.h compiles on its own (it is included first,
 * with nothing before it) and its constants keep their documented values.
 */
#include "trc.h"

#include "trc_check.h"

int main(void)
{
    trc_err err = {TRC_OK, ""};
    trc_synth_params p;
    trc_synth_default_params(&p);
    CHECK(strcmp(TRC_FORMAT, "flashspec-trace") == 0);
    CHECK_EQ_INT(TRC_VERSION, 1);
    CHECK_EQ_INT(TRC_E_MISSING, 1);
    CHECK_EQ_INT(TRC_E_NOMEM, 7);
    CHECK_EQ_INT(err.code, TRC_OK);
    CHECK_EQ_INT(p.k, 8);
    CHECK(sizeof(trc_tree) > 0 && TRC_MAX_K >= p.k && TRC_MAX_DEPTH >= p.max_depth);
    return check_done("test_trc_header");
}
