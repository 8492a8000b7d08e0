/*
 * cmd_columns.h -- `flashspec columns [--markdown]`: the result columns of
 * results.csv / results.h5 in file order, each with its kind and meaning,
 * read from the column table the writers use (sim/out/rows.c).
 */
#ifndef FS_CMD_COLUMNS_H
#define FS_CMD_COLUMNS_H

/* argv[0] is "columns".  Returns a status (sim/sim_status.h), which main
 * maps to the exit code. */
int cli_columns_main(int argc, char **argv);

#endif
