/*
 * cmd_policy.c -- `flashspec policies [NAME] [--markdown]` (also `policy`).
 *
 * Without NAME: one line per registered policy (name, whether it drafts, its
 * one-line description).  With NAME: the policy's parameters as the Lua
 * constructor flashspec.policy.NAME{...} takes them -- key, default, accepted
 * values and meaning -- straight from the engine's eng_param_desc table, so
 * the listing cannot drift from what a script is checked against.
 * --markdown prints the same as a markdown table (the tables of
 * docs/policies.md are this output; a test keeps them equal).
 */
#include "cmd_policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eng_param.h"
#include "eng_policy.h"
#include "sim/lua/api.h"
#include "sim/lpolicy/lp_host.h"
#include "sim/out/rows.h"
#include "sim/cli/plugin.h"
#include "sim/sim_status.h"

static const char usage[] =
    "usage: flashspec policies [NAME | FILE.lua] [--plugin FILE.so ...] [--markdown]\n"
    "\n"
    "Lists the policies of this build (and of the plug-ins given), or the\n"
    "parameters of policy NAME as flashspec.policy.NAME{...} accepts them: key,\n"
    "default, accepted values and meaning; FILE.lua describes a Lua policy.\n"
    "\n"
    "  --plugin FILE.so  also a native policy plug-in (repeatable)\n"
    "  --markdown    print a markdown table\n"
    "  -h, --help    this help\n";

static void fmt_num(char *buf, size_t n, double v, int integer)
{
    if (isinf(v)) snprintf(buf, n, "%sinf", v < 0 ? "-" : "");
    else if (integer) snprintf(buf, n, "%.0f", v);
    else snprintf(buf, n, "%g", v);
}

/* The default as a script would write it. */
static void fmt_default(const eng_param_desc *d, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    switch (d->type) {
    case ENG_PARAM_INT:
    case ENG_PARAM_DOUBLE:
        if (isnan(d->def)) snprintf(buf, n, "(required)");
        else fmt_num(buf, n, d->def, d->type == ENG_PARAM_INT);
        break;
    case ENG_PARAM_BOOL:
        snprintf(buf, n, "%s", d->def != 0 ? "true" : "false");
        break;
    case ENG_PARAM_ENUM:
        snprintf(buf, n, "%s", d->choices[(int)d->def]);
        break;
    case ENG_PARAM_STRING:
        snprintf(buf, n, "%s", d->def_str ? d->def_str : "(required)");
        break;
    case ENG_PARAM_DOUBLE_LIST:
    case ENG_PARAM_INT_LIST:
        /* a Lua list, as a script writes it */
        at = (size_t)snprintf(buf, n, "{");
        for (int32_t k = 0; k < d->def_count && at + 1 < n; k++) {
            char v[32];
            fmt_num(v, sizeof v, d->def_list[k], d->type == ENG_PARAM_INT_LIST);
            at += (size_t)snprintf(buf + at, n - at, "%s%s", k ? ", " : "", v);
        }
        if (at + 1 < n) snprintf(buf + at, n - at, "}");
        break;
    }
}

/* What values the key accepts. */
static void fmt_range(const eng_param_desc *d, char *buf, size_t n)
{
    char lo[32], hi[32];
    int integer = d->type == ENG_PARAM_INT || d->type == ENG_PARAM_INT_LIST;
    fmt_num(lo, sizeof lo, d->min, integer);
    fmt_num(hi, sizeof hi, d->max, integer);
    size_t at = 0;
    switch (d->type) {
    case ENG_PARAM_INT:
        snprintf(buf, n, "integer %s..%s", lo, hi);
        break;
    case ENG_PARAM_DOUBLE:
        snprintf(buf, n, "number %s..%s", lo, hi);
        break;
    case ENG_PARAM_BOOL:
        snprintf(buf, n, "true, false");
        break;
    case ENG_PARAM_ENUM:
        buf[0] = '\0';
        for (int k = 0; d->choices[k] && at + 1 < n; k++)
            at += (size_t)snprintf(buf + at, n - at, "%s%s", k ? ", " : "", d->choices[k]);
        break;
    case ENG_PARAM_STRING:
        snprintf(buf, n, "text, under %d bytes", (int)d->cap);
        break;
    case ENG_PARAM_DOUBLE_LIST:
    case ENG_PARAM_INT_LIST:
        snprintf(buf, n, "list of 1..%d %s in %s..%s", (int)d->cap,
                 integer ? "integers" : "numbers", lo, hi);
        break;
    }
}

/* The `tree_nodes` row of a policy whose descriptor states a tree-size
 * parameter (api_policy.c maps the key to it): its default, accepted values
 * and meaning, in nodes of one verified tree, root included.  Returns 0 for
 * other policies. */
static int tree_nodes_row(const eng_policy_desc *p, char *def, size_t dn, char *range,
                          size_t rn, char *doc, size_t docn)
{
    const eng_param_desc *d = eng_tree_param_flag(p, 1);
    if (!d || eng_params_find(p->params, "tree_nodes")) return 0;
    const char *param = d->name;
    int minus = eng_tree_rule_offset(p->tree.rule);
    const eng_param_desc *off = p->tree.unless_off ? eng_tree_param_flag(p, 0) : NULL;
    char alt[128] = "";
    if (off && off != d)
        snprintf(alt, sizeof alt, " (`%s` with %s = false)", off->name, p->tree.unless_off);
    if (d->type == ENG_PARAM_INT_LIST) { /* widths: the nodes of the default shape */
        double nodes = 1, level = 1;
        for (int32_t k = 0; k < d->def_count; k++)
            nodes += (level *= d->def_list[k]);
        snprintf(def, dn, "%.0f", nodes);
        snprintf(range, rn, "integer 2..");
        snprintf(doc, docn,
                 "nodes of one verified tree, root included: cuts `%s` to its deepest prefix "
                 "whose tree fits (a list: one point each)",
                 param);
        return 1;
    }
    snprintf(def, dn, "%.0f", d->def + minus);
    snprintf(range, rn, "integer %.0f..%.0f", d->min + minus, d->max + minus);
    snprintf(doc, docn,
             "nodes of one verified tree, root included: sets `%s` = tree_nodes - %d%s (a list: "
             "one point each); the results' `tree_nodes` column",
             param, minus, alt);
    return 1;
}

static int print_policy(const eng_policy_desc *p, int markdown)
{
    char def[512], range[512], tdef[64], trange[64], tdoc[256];
    int tree = tree_nodes_row(p, tdef, sizeof tdef, trange, sizeof trange, tdoc, sizeof tdoc);
    int wk = 10, wd = 7, wr = 6; /* column widths of the plain listing */
    for (const eng_param_desc *d = p->params; d && d->name; d++) {
        fmt_default(d, def, sizeof def);
        fmt_range(d, range, sizeof range);
        int a = (int)strlen(d->name), b = (int)strlen(def), c = (int)strlen(range);
        wk = a > wk ? a : wk;
        wd = b > wd ? b : wd;
        wr = c > wr ? c : wr;
    }
    if (markdown) {
        printf("| key | default | values | meaning |\n|---|---|---|---|\n");
        if (!p->params || !p->params[0].name) printf("| — | — | — | no parameters |\n");
    } else {
        printf("%s: %s\n", p->name, p->doc ? p->doc : "");
        if (!p->params || !p->params[0].name) printf("  (no parameters)\n");
        else printf("  %-*s  %-*s  %-*s  %s\n", wk, "key", wd, "default", wr, "values", "meaning");
    }
    if (tree) {
        wd = (int)strlen(tdef) > wd ? (int)strlen(tdef) : wd;
        wr = (int)strlen(trange) > wr ? (int)strlen(trange) : wr;
    }
    for (const eng_param_desc *d = p->params; d && d->name; d++) {
        fmt_default(d, def, sizeof def);
        fmt_range(d, range, sizeof range);
        if (markdown)
            printf("| `%s` | `%s` | %s | %s |\n", d->name, def, range, d->doc ? d->doc : "");
        else
            printf("  %-*s  %-*s  %-*s  %s\n", wk, d->name, wd, def, wr, range, d->doc ? d->doc : "");
    }
    if (tree && markdown)
        printf("| `tree_nodes` | `%s` | %s | %s |\n", tdef, trange, tdoc);
    else if (tree)
        printf("  %-*s  %-*s  %-*s  %s\n", wk, "tree_nodes", wd, tdef, wr, trange, tdoc);
    return 0;
}

/* One policy by name (built in or a loaded plug-in): its parameters, or a
 * "no such policy" line with the nearest name. */
static int show_one(const char *name, int markdown, const fs_plugin *plugins, int n_plugins)
{
    int32_t count = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&count);
    const eng_policy_desc *p = eng_policy_lookup(name);
    for (int i = 0; i < n_plugins && !p; i++)
        if (!strcmp(plugins[i].desc->name, name)) p = plugins[i].desc;
    if (p) return print_policy(p, markdown);
    const char *best = NULL;
    int32_t bd = 0;
    for (int32_t i = 0; i < count; i++) {
        int32_t d = eng_params_distance(name, reg[i]->name);
        if (!best || d < bd) best = reg[i]->name, bd = d;
    }
    int32_t near = (int32_t)strlen(name) / 2 > 2 ? (int32_t)strlen(name) / 2 : 2;
    if (best && bd <= near)
        fprintf(stderr, "flashspec: policies: no policy '%s' in this build (did you mean '%s'?)\n",
                name, best);
    else
        fprintf(stderr,
                "flashspec: policies: no policy '%s' in this build (flashspec policies lists "
                "them)\n",
                name);
    return SIM_USAGE;
}

/* Every policy: the built-in ones, then the loaded plug-ins. */
static int list_all(int markdown, const fs_plugin *plugins, int n_plugins)
{
    int32_t count = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&count);
    if (markdown) printf("| policy | drafts | description |\n|---|---|---|\n");
    for (int32_t i = 0; i < count; i++) {
        if (markdown)
            printf("| `%s` | %s | %s |\n", reg[i]->name, reg[i]->needs_draft ? "yes" : "no",
                   reg[i]->doc ? reg[i]->doc : "");
        else
            printf("%-16s %-6s %s\n", reg[i]->name, reg[i]->needs_draft ? "drafts" : "-",
                   reg[i]->doc ? reg[i]->doc : "");
    }
    for (int i = 0; i < n_plugins; i++) {
        const eng_policy_desc *d = plugins[i].desc;
        if (markdown)
            printf("| `%s` | %s | %s (plug-in %s) |\n", d->name, d->needs_draft ? "yes" : "no",
                   d->doc ? d->doc : "", plugins[i].path);
        else
            printf("%-16s %-6s %s (plug-in %s)\n", d->name, d->needs_draft ? "drafts" : "-",
                   d->doc ? d->doc : "", plugins[i].path);
    }
    return 0;
}

int cli_policy_main(int argc, char **argv)
{
    const char *name = NULL;
    int markdown = 0;
    static fs_plugin plugins[FS_MAX_PLUGINS];
    int n_plugins = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--markdown")) {
            markdown = 1;
        } else if (!strcmp(argv[i], "--plugin") || !strncmp(argv[i], "--plugin=", 9)) {
            const char *path = argv[i][8] == '=' ? argv[i] + 9 : i + 1 < argc ? argv[++i] : NULL;
            if (!path || n_plugins == FS_MAX_PLUGINS) {
                fprintf(stderr, "flashspec: policies: --plugin needs a FILE.so (at most %d)\n",
                        FS_MAX_PLUGINS);
                return SIM_USAGE;
            }
            char perr[1024];
            int prc = fs_plugin_load(path, &plugins[n_plugins], plugins, n_plugins, perr,
                                     sizeof perr);
            if (prc) {
                fprintf(stderr, "flashspec: %s\n", perr);
                return prc;
            }
            n_plugins++;
        } else if (argv[i][0] == '-' || name) {
            fprintf(stderr, "flashspec: policies: unexpected argument '%s' (see flashspec policies "
                            "--help)\n", argv[i]);
            return SIM_USAGE;
        } else {
            name = argv[i];
        }
    }
    size_t nl = name ? strlen(name) : 0;
    if (name && nl > 4 && strcmp(name + nl - 4, ".lua") == 0) {
        char err[1024];
        if (lp_describe(name, markdown, err, sizeof err) != 0) {
            fprintf(stderr, "flashspec: policies: %s\n", err);
            return SIM_CONFIG;
        }
        return 0;
    }
    if (name) return show_one(name, markdown, plugins, n_plugins);
    return list_all(markdown, plugins, n_plugins);
}
