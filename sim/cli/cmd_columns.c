/*
 * cmd_columns.c -- `flashspec columns` (see cmd_columns.h).
 */
#include "cmd_columns.h"

#include <stdio.h>
#include <string.h>

#include "sim/out/rows.h"
#include "sim/sim_status.h"

static const char usage[] =
    "usage: flashspec columns [--markdown]\n"
    "\n"
    "Lists the columns of results.csv and results.h5 in file order: name, kind\n"
    "(text, integer or number) and meaning.  After the fixed columns come one\n"
    "param_<name> column per policy parameter and one tag_<name> column per point\n"
    "tag that the run's rows hold.\n"
    "\n"
    "  --markdown     print a Markdown table\n"
    "  -h, --help     this help\n";

/* The columns a run adds after the fixed ones. */
static const char *const dynamic[][3] = {
    {"param_<name>", "number or text",
     "one per policy parameter of the run's rows, in order of first appearance: the value "
     "`policy_params` gives it (exact digits; `nan` or empty where the row's policy has no such "
     "parameter); a column is numbers when every value is one, else text"},
    {"tag_<name>", "number or text",
     "one per tag of the points' `tags` maps, in order of first appearance (empty or `nan` "
     "where a point has no such tag)"},
};

int cli_columns_main(int argc, char **argv)
{
    int markdown = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(argv[i], "--markdown") != 0) {
            fprintf(stderr,
                    "flashspec: columns: unexpected argument '%s' (see flashspec columns "
                    "--help)\n",
                    argv[i]);
            return SIM_USAGE;
        }
        markdown = 1;
    }
    const char *name, *kind, *doc;
    int width = 0;
    for (int i = 0; fs_row_column_info(i, &name, &kind, &doc); i++)
        if ((int)strlen(name) > width) width = (int)strlen(name);
    if (markdown) puts("| column | kind | meaning |\n|---|---|---|");
    for (int i = 0; fs_row_column_info(i, &name, &kind, &doc); i++) {
        if (markdown)
            printf("| `%s` | %s | %s |\n", name, kind, doc);
        else
            printf("%-*s  %-7s  %s\n", width, name, kind, doc);
    }
    for (size_t i = 0; i < sizeof dynamic / sizeof dynamic[0]; i++) {
        if (markdown)
            printf("| `%s` | %s | %s |\n", dynamic[i][0], dynamic[i][1], dynamic[i][2]);
        else
            printf("%-*s  %-7s  %s\n", width, dynamic[i][0], "", dynamic[i][2]);
    }
    return 0;
}
