/*
 * trc_tool.c -- a stand-alone `flashspec trace` for regenerating the bundled
 * traces and test corpora before (or without) the full flashspec program:
 * `trc_tool trace synth -o FILE ...` runs exactly the code of
 * `flashspec trace synth -o FILE ...` (sim/cli/cmd_trace.c), so
 * traces/data/make.sh accepts either binary.
 */
#include "sim/cli/cmd_trace.h"
#include "sim/sim_status.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "trace") != 0) {
        fputs("flashspec: trc_tool only provides the `trace` command\n", stderr);
        return 64;
    }
    return sim_status_exit(cli_trace_main(argc - 1, argv + 1));
}
