/*
 * cmd_trace.h -- `flashspec trace`: info, check, stats and synth over schema-v1
 * trace files (traces/trc.h).  Exit codes follow <sysexits.h>: 0 ok, 64 usage,
 * 65 bad trace data, 66 missing input, 70 internal error, 73 cannot create
 * output.  Errors are one line on stderr prefixed "flashspec: ".
 */
#ifndef CMD_TRACE_H
#define CMD_TRACE_H

/* argv[0] is "trace", argv[1] the subcommand.  Returns a status
 * (sim/sim_status.h), which main maps to the exit code.
 * Output goes to stdout, errors to stderr; no partial output file on failure. */
int cli_trace_main(int argc, char **argv);

#endif
