/*
 * rows.c -- column table and results files (see rows.h).
 */
#include "sim/out/rows.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/out/sim_out.h"
#include "sim/out/sim_strbuf.h"
#include "sim/sim_status.h"

/* ---------------------------------------------------------------- columns */

typedef enum col_type { COL_STR, COL_I32, COL_I64, COL_U64, COL_REAL, COL_HEX, COL_VERSION,
                        COL_SCRIPT, COL_HIST, COL_TREE } col_type;

typedef struct col_desc {
    const char *name;
    col_type type;
    size_t offset;   /* into fs_row */
    const char *doc; /* one line: what the column holds (flashspec columns) */
} col_desc;

#define R(f) offsetof(fs_row, f)
/* The stable result columns (users' scripts depend on these names). */
static const col_desc columns[] = {
    {"policy", COL_STR, R(policy), "policy name"},
    {"policy_params", COL_STR, R(policy_params),
     "the policy's full parameter set, `name=value` pairs in declared order (`none` for a policy "
     "without parameters); a real value in the fewest digits that read back as it "
     "exactly (`theta=0.1`, a tuned `theta=0.090373524058708`); also one `param_<name>` column "
     "each (end of table)"},
    {"device", COL_STR, R(device), "device profile name"},
    {"target", COL_STR, R(target), "target model profile name"},
    {"draft", COL_STR, R(draft),
     "draft model profile name (`none` for a policy that drafts nothing)"},
    {"trace", COL_STR, R(trace), "trace name"},
    {"dram_fraction", COL_REAL, R(dram_fraction),
     "share of the target's layers pinned in DRAM, the first ones (point key)"},
    {"max_new_tokens", COL_I32, R(max_new_tokens), "new tokens per prompt asked for (point key)"},
    {"prompts", COL_I32, R(st.prompts), "prompts replayed"},
    {"tokens", COL_I64, R(st.tokens), "tokens emitted over all prompts"},
    {"tokens_per_s", COL_REAL, R(st.tokens_per_s),
     "decode throughput, tokens per second of virtual time (prefill excluded)"},
    {"ms_per_token", COL_REAL, R(st.ms_per_token), "virtual decode time per emitted token, ms"},
    {"cycles", COL_I64, R(st.cycles), "target invocations (verifications)"},
    {"tokens_per_cycle", COL_REAL, R(st.tokens_per_cycle),
     "accepted draft tokens + the bonus token, per cycle"},
    {"mean_accepted", COL_REAL, R(st.mean_accepted), "accepted draft tokens per cycle"},
    {"cycle_ms", COL_REAL, R(st.cycle_ms), "mean wall time per cycle, ms"},
    {"draft_ms", COL_REAL, R(st.draft_ms), "mean wall time of drafting per cycle, ms"},
    {"flash_ms", COL_REAL, R(st.flash_ms), "mean busy time of the flash channel per cycle, ms"},
    {"npu_ms", COL_REAL, R(st.npu_ms), "mean busy time of the NPU per cycle, ms"},
    {"cpu_ms", COL_REAL, R(st.cpu_ms), "mean busy time of the CPU per cycle, ms"},
    {"kv_ms", COL_REAL, R(st.kv_ms),
     "mean time of KV-cache and sequence management per cycle (the fixed verification set-up), ms"},
    {"idle_ms", COL_REAL, R(st.idle_ms), "mean time per cycle no compute unit was busy, ms"},
    {"verify_ms", COL_REAL, R(st.verify_ms), "mean wall time of verification per cycle, ms"},
    {"verify_rows", COL_REAL, R(st.rows_per_cycle),
     "mean rows through the target's layers per cycle"},
    {"dram_bytes", COL_I64, R(st.dram_bytes), "DRAM the point occupies, bytes"},
    {"resident_layers", COL_I32, R(st.resident_layers), "target layers pinned in DRAM"},
    {"coverage", COL_REAL, R(st.coverage),
     "share of draft expansions served from recorded trace data (1 when nothing was expanded)"},
    {"seed", COL_U64, R(seed), "seed of the synthesised draft nodes (point key)"},
    {"version", COL_VERSION, 0, "flashspec version that produced the row"},
    {"script_hash", COL_SCRIPT, 0, "hash of the script's bytes"},
    {"trace_checksum", COL_HEX, R(trace_checksum),
     "the trace's checksum (for a trace read prompt by prompt, its index's)"},
    {"waste_ms", COL_REAL, R(st.waste_ms),
     "verification time per cycle spent on rows that were not accepted: the verification time "
     "minus what the same phone takes to verify only the root and the accepted path, ms"},
    {"waste_frac", COL_REAL, R(st.waste_frac), "`waste_ms` as a share of all verification time"},
    {"token_mismatch", COL_REAL, R(st.token_mismatch),
     "share of emitted tokens that differ from the trace's reference (0 under greedy)"},
    {"accept", COL_STR, R(accept), "acceptance rule: `greedy`, `top_p` or `sampling` (point key)"},
    {"top_p", COL_REAL, R(top_p), "probability mass of `accept = top_p` (point key)"},
    {"temperature", COL_REAL, R(temperature), "temperature of `accept = sampling` (point key)"},
    {"runtime", COL_STR, R(runtime),
     "the phone runtime key: `auto`, `baseline` or `speculative` (point key)"},
    {"rows_kept", COL_REAL, R(st.rows_kept),
     "rows continuing past the early-exit layer over rows through the target's layers (1 without "
     "pruning)"},
    {"retention", COL_REAL, R(st.retention),
     "accepted draft tokens over those of the same trees verified unpruned (greedy; 1 without "
     "pruning)"},
    {"proj_ms", COL_REAL, R(st.proj_ms),
     "mean compute time of the output projection (LM head) per cycle, by its placement, ms"},
    {"joules_per_token", COL_REAL, R(st.joules_per_token),
     "decode energy per emitted token, J: base power over the wall time, each resource's active "
     "power over its busy time and idle power over the rest, plus DRAM energy per GB moved; 0 when "
     "the device profile sets no power states"},
    {"avg_power_w", COL_REAL, R(st.avg_power_w), "decode energy over virtual decode time, W"},
    {"throttled_cycles", COL_I64, R(st.throttled_cycles),
     "cycles whose NPU/CPU work ran thermally throttled (0 unless the device profile sets `thermal "
     "= true`)"},
    {"tokens_per_s_lo", COL_REAL, R(st.tokens_per_s_lo),
     "lower end of the 95% confidence interval of `tokens_per_s` over prompts: percentile "
     "bootstrap, 1000 resamples of the prompts (sum of tokens over sum of time), GSL's mt19937 "
     "seeded from the point; equal to `tokens_per_s` for a single prompt"},
    {"tokens_per_s_hi", COL_REAL, R(st.tokens_per_s_hi), "upper end of that interval"},
    {"provisional_calls", COL_I64, R(st.provisional_calls),
     "draft calls run while the target verified (a policy's provisional drafting)"},
    {"provisional_kept", COL_I64, R(st.provisional_kept),
     "provisional draft tokens consistent with the verified output, reused by the next cycle"},
    {"resampled_expansions", COL_I64, R(st.resampled_expansions),
     "candidate sets re-sampled from earlier draft hidden states (a policy's re-sampling)"},
    {"penalised_expansions", COL_I64, R(st.penalised_expansions),
     "re-sampled candidate sets the replay's quality penalty degraded"},
    {"accepted_hist", COL_HIST, R(st.accepted_hist),
     "cycles by accepted draft tokens, `c0;c1;...` (bin k: cycles that accepted k tokens; the last "
     "of 33 bins: 32 or more; trailing empty bins left out, at least two kept)"},
    {"verify_rows_max", COL_I64, R(st.verify_rows_max),
     "the most rows one verification sent through the target's layers (root included): a tree-size "
     "cap above it never bound"},
    {"effective_new_tokens", COL_REAL, R(st.effective_new_tokens),
     "new tokens generated per prompt (mean): `max_new_tokens`, unless a prompt's reference is "
     "shorter"},
    {"prompt_offset", COL_I32, R(prompt_offset),
     "the first trace prompt replayed, 0-based (point key)"},
    {"tune_evals", COL_I64, R(tune_evals),
     "rows of `flashspec.tune`: evaluations its search made (0 in other rows)"},
    {"tune_train", COL_REAL, R(tune_train),
     "rows of `flashspec.tune`: the objective on the tuning prompts (`nan` in other rows)"},
    {"tokens_per_s_model_lo", COL_REAL, R(st.tokens_per_s_model_lo),
     "model uncertainty: the least `tokens_per_s` of the point replayed on its device profile and "
     "on each of the profile's standing variants (explanations the calibration data cannot tell "
     "apart), on its trace and on each end of the trace's acceptance bracket (`tr:bracket`: what "
     "an acceptance transfer cannot decide), every device on every trace; `nan` when the point "
     "has neither"},
    {"tokens_per_s_model_hi", COL_REAL, R(st.tokens_per_s_model_hi),
     "the most `tokens_per_s` over the same replays; `nan` when the point has neither standing "
     "variants nor a bracket"},
    {"synth_tokens", COL_STR, R(synth_tokens),
     "token ids of candidate sets the trace did not record: `offset` or `drawn` (point key)"},
    {"tree_nodes", COL_TREE, 0,
     "the tree size the point was run with, in nodes of one verified tree, root included (what "
     "the `tree_nodes` key sets): the fixed tree, or the cap on it, that the policy's tree-size "
     "parameter sets (`flashspec policy NAME` names the parameter and how it counts in its "
     "`tree_nodes` row); 1 for a policy that verifies one row per cycle; a Lua policy's or "
     "plug-in's own `tree_nodes` parameter; `nan` otherwise"},
    {"tune_objective", COL_STR, R(tune_objective),
     "rows of `flashspec.tune`: the result column its search maximised (`none` in other rows)"},
};
#undef R
#define N_COLUMNS ((int)(sizeof columns / sizeof columns[0]))

typedef struct tree_find {
    const char *want;
    const char *flag;  /* the tree size's unless_off flag, NULL none */
    const char *value; /* into buf */
    char buf[1024]; /* a value of a label (labels are at most 1023 bytes) */
    int flag_off;
} tree_find;

static int tree_find_pair(void *ctx, const char *name, const char *value)
{
    tree_find *f = ctx;
    if (f->flag && !strcmp(name, f->flag) && !strcmp(value, "false")) f->flag_off = 1;
    if (!strcmp(name, f->want) && !f->value) {
        snprintf(f->buf, sizeof f->buf, "%s", value);
        f->value = f->buf;
    }
    return 0;
}

/* The value of parameter `want` in a policy_params label (NULL: absent);
 * f->flag_off tells whether bool parameter flag (NULL: none) is false. */
static const char *label_value(const char *label, const char *want, const char *flag,
                               tree_find *f)
{
    memset(f, 0, sizeof *f);
    f->want = want;
    f->flag = flag;
    fs_row_each_pair(label, 0, tree_find_pair, f);
    return f->value;
}

/* The tree_nodes column: nodes of one verified tree, root included, as the
 * `tree_nodes` key sets them (the tree size the policy's descriptor states,
 * eng_tree_knob), read back from the row's label so that a tuned row
 * reports its chosen knobs. */
static double row_tree_nodes(const fs_row *r)
{
    const eng_policy_desc *d = eng_policy_lookup(r->policy);
    if (d && d->tree.rule == ENG_TREE_ONE_ROW) return 1.0;
    tree_find f;
    const eng_param_desc *p = NULL;
    if (d) {
        label_value(r->policy_params, "", d->tree.unless_off, &f);
        p = eng_tree_param_flag(d, !f.flag_off);
    }
    if (!p) { /* a policy with its own tree_nodes parameter */
        const char *v = label_value(r->policy_params, "tree_nodes", NULL, &f);
        char *end;
        double x = v ? strtod(v, &end) : NAN;
        return v && !*end && isfinite(x) ? x : NAN;
    }
    const char *v = label_value(r->policy_params, p->name, NULL, &f);
    if (!v) return NAN;
    /* one integer, or a list of them '/'-separated */
    double w[ENG_POL_MAX_LIST];
    int32_t n = 0;
    for (const char *q = v;;) {
        char *end;
        long x = strtol(q, &end, 10);
        if (end == q || n == ENG_POL_MAX_LIST) return NAN;
        w[n++] = (double)x;
        if (*end != '/') {
            if (*end) return NAN;
            break;
        }
        if (p->type != ENG_PARAM_INT_LIST) return NAN;
        q = end + 1;
    }
    return eng_tree_nodes_of(d, w, n);
}

/* Value of column c of row r as text (for strings) or number. */
static void col_value(const fs_rows_meta *a, const fs_row *r, int c, const char **s, double *num,
                      int64_t *integer, char *buf, size_t n)
{
    const char *f = (const char *)r + columns[c].offset;
    *s = NULL;
    switch (columns[c].type) {
    case COL_STR:
        /* a policy without parameters, a row not tuned, says so (an empty
         * field reads as missing) */
        *s = *f || (strcmp(columns[c].name, "policy_params") &&
                    strcmp(columns[c].name, "tune_objective"))
                 ? f
                 : "none";
        break;
    case COL_I32: {
        int32_t x;
        memcpy(&x, f, sizeof x);
        *integer = x;
        break;
    }
    case COL_I64:
        memcpy(integer, f, sizeof *integer);
        break;
    case COL_U64: {
        uint64_t x;
        memcpy(&x, f, sizeof x);
        *integer = (int64_t)x;
        break;
    }
    case COL_REAL:
        memcpy(num, f, sizeof *num);
        break;
    case COL_HEX: {
        uint64_t x;
        memcpy(&x, f, sizeof x);
        snprintf(buf, n, "%016llx", (unsigned long long)x);
        *s = buf;
        break;
    }
    case COL_VERSION:
        *s = FS_VERSION;
        break;
    case COL_SCRIPT:
        *s = a->script_hash;
        break;
    case COL_TREE:
        *num = row_tree_nodes(r);
        break;
    case COL_HIST: { /* "c0;c1;...", trailing empty bins trimmed, at least two
                        (a single count would read back as a number) */
        int64_t h[RP_HIST_BINS];
        memcpy(h, f, sizeof h);
        int last = RP_HIST_BINS - 1;
        while (last > 1 && h[last] == 0) last--;
        size_t at = 0;
        buf[0] = '\0';
        for (int k = 0; k <= last && at < n; k++)
            at += (size_t)snprintf(buf + at, n - at, "%s%lld", k ? ";" : "", (long long)h[k]);
        *s = buf;
        break;
    }
    }
}

static int col_is_int(int c)
{
    col_type t = columns[c].type;
    return t == COL_I32 || t == COL_I64 || t == COL_U64;
}

static int col_is_str(int c)
{
    col_type t = columns[c].type;
    return t == COL_STR || t == COL_HEX || t == COL_VERSION || t == COL_SCRIPT || t == COL_HIST;
}

/* ------------------------------------------------ param_ and tag_ columns */

static int is_ident(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return 0;
    return 1;
}

void fs_row_each_pair(const char *text, int tags,
                      int (*fn)(void *ctx, const char *name, const char *value), void *ctx)
{
    const char *s = text;
    char name[64], value[FS_LABEL_CAP];
    while (*s) {
        const char *nm = s, *eq = s;
        while (*eq && *eq != '=' && *eq != (tags ? '\n' : ','))
            eq++;
        if (*eq != '=') { /* a part without a value */
            s = *eq ? eq + 1 : eq;
            continue;
        }
        size_t nl = (size_t)(eq - nm), vl = 0;
        const char *v = eq + 1;
        if (tags) {
            while (v[vl] && v[vl] != '\n')
                vl++;
            if (vl < sizeof value) memcpy(value, v, vl);
            s = v[vl] ? v + vl + 1 : v + vl;
        } else if (*v == '"') { /* a Lua string literal (a Lua policy's label) */
            const char *p = v + 1;
            while (*p && *p != '"') {
                if (*p == '\\' && p[1]) p++;
                if (vl + 1 < sizeof value) value[vl++] = *p;
                p++;
            }
            s = *p ? p + 1 : p;
            if (*s == ',') s++;
        } else { /* to the next comma outside braces */
            int depth = 0;
            while (v[vl] && (depth > 0 || v[vl] != ',')) {
                depth += v[vl] == '{' ? 1 : v[vl] == '}' ? -1 : 0;
                vl++;
            }
            if (vl < sizeof value) memcpy(value, v, vl);
            s = v[vl] ? v + vl + 1 : v + vl;
        }
        if (vl >= sizeof value) vl = sizeof value - 1;
        value[vl] = 0;
        if (nl >= sizeof name || !is_ident(nm, nl)) continue;
        memcpy(name, nm, nl);
        name[nl] = 0;
        if (fn(ctx, name, value)) return;
    }
}

int fs_row_value_kind(const char *v, int64_t *i, double *d)
{
    if (!*v || isspace((unsigned char)*v)) return 0;
    char *end;
    errno = 0;
    long long ll = strtoll(v, &end, 10);
    if (!*end && errno == 0) {
        *i = ll;
        *d = (double)ll;
        return 2;
    }
    double x = strtod(v, &end);
    if (*end || !isfinite(x)) return 0;
    *d = x;
    return 1;
}

typedef struct dyn_col {
    char name[72]; /* "param_<name>" or "tag_<name>" */
    int numbers;   /* every value is a number */
    int32_t col;   /* its column in the table */
} dyn_col;

typedef struct dyn_cols {
    dyn_col *c;
    int32_t n, cap;
    int oom;
    const char *prefix;
} dyn_cols;

static dyn_col *dyn_find(dyn_cols *dc, const char *prefix, const char *name)
{
    char full[72];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    for (int32_t i = 0; i < dc->n; i++)
        if (!strcmp(dc->c[i].name, full)) return &dc->c[i];
    return NULL;
}

static int dyn_collect(void *ctx, const char *name, const char *value)
{
    dyn_cols *dc = ctx;
    dyn_col *c = dyn_find(dc, dc->prefix, name);
    if (!c) {
        if (dc->n == dc->cap) {
            int32_t cap = dc->cap ? 2 * dc->cap : 16;
            dyn_col *n = realloc(dc->c, sizeof *n * (size_t)cap);
            if (!n) {
                dc->oom = 1;
                return 1;
            }
            dc->c = n;
            dc->cap = cap;
        }
        c = &dc->c[dc->n++];
        snprintf(c->name, sizeof c->name, "%s%s", dc->prefix, name);
        c->numbers = 1;
    }
    int64_t i;
    double d;
    int k = fs_row_value_kind(value, &i, &d);
    c->numbers &= k > 0;
    return 0;
}

typedef struct dyn_set {
    dyn_cols *dc;
    sim_out_table *t;
    int64_t row;
    int rc;
} dyn_set;

static int dyn_set_cell(void *ctx, const char *name, const char *value)
{
    dyn_set *ds = ctx;
    dyn_col *c = dyn_find(ds->dc, ds->dc->prefix, name);
    if (!c) return 0;
    int64_t i = 0;
    double d = NAN;
    fs_row_value_kind(value, &i, &d);
    int rc = sim_out_col_type(ds->t, c->col) == SIM_OUT_DOUBLE
                 ? sim_out_set_double(ds->t, ds->row, c->col, d)
                 : sim_out_set_string(ds->t, ds->row, c->col, value);
    if (rc != SIM_OK) ds->rc = rc;
    return rc != SIM_OK;
}

/* Declares the param_ and tag_ columns of rows[0..n) in t (after the fixed
 * ones).  Returns SIM_OK or SIM_NOMEM. */
static int dyn_declare(sim_out_table *t, dyn_cols *dc, const fs_row *rows, int32_t n, int tags)
{
    dc->prefix = tags ? "tag_" : "param_";
    for (int32_t ri = 0; ri < n && !dc->oom; ri++)
        fs_row_each_pair(tags ? rows[ri].tags : rows[ri].policy_params, tags, dyn_collect, dc);
    if (dc->oom) return SIM_NOMEM;
    for (int32_t i = 0; i < dc->n; i++) {
        dyn_col *c = &dc->c[i];
        /* one type whatever the other rows hold: numbers are doubles */
        sim_out_type ty = c->numbers ? SIM_OUT_DOUBLE : SIM_OUT_STRING;
        if (sim_out_add_column(t, c->name, ty, &c->col) != SIM_OK) return SIM_NOMEM;
        if (ty == SIM_OUT_DOUBLE && sim_out_set_exact(t, c->col) != SIM_OK) return SIM_NOMEM;
    }
    return 0;
}

static int dyn_fill(sim_out_table *t, dyn_cols *dc, const fs_row *r, int64_t row, int tags)
{
    dyn_set ds = {dc, t, row, SIM_OK};
    dc->prefix = tags ? "tag_" : "param_";
    fs_row_each_pair(tags ? r->tags : r->policy_params, tags, dyn_set_cell, &ds);
    return ds.rc == SIM_OK ? SIM_OK : SIM_NOMEM;
}

int fs_rows_write(const fs_rows_meta *m, const fs_row *rows, int32_t n, const char *dir,
                  char *err, size_t errlen)
{
    sim_out_table *t = sim_out_create();
    int rc = t ? SIM_OK : SIM_NOMEM;
    for (int c = 0; c < N_COLUMNS && rc == 0; c++) {
        sim_out_type ty = col_is_str(c) ? SIM_OUT_STRING : col_is_int(c) ? SIM_OUT_INT64
                                                                         : SIM_OUT_DOUBLE;
        int32_t col = -1;
        if (sim_out_add_column(t, columns[c].name, ty, &col) != SIM_OK || col != c) rc = SIM_NOMEM;
    }
    dyn_cols params = {0}, tags = {0};
    if (rc == 0) rc = dyn_declare(t, &params, rows, n, 0);
    if (rc == 0) rc = dyn_declare(t, &tags, rows, n, 1);
    for (int32_t ri = 0; ri < n && rc == 0; ri++) {
        int64_t row = -1;
        if (sim_out_append_row(t, &row) != SIM_OK) {
            rc = SIM_NOMEM;
            break;
        }
        for (int c = 0; c < N_COLUMNS && rc == 0; c++) {
            const char *s;
            double d = 0;
            int64_t i = 0;
            char buf[FS_ROW_CELL_CAP];
            col_value(m, &rows[ri], c, &s, &d, &i, buf, sizeof buf);
            int src = col_is_str(c)   ? sim_out_set_string(t, row, c, s)
                      : col_is_int(c) ? sim_out_set_int64(t, row, c, i)
                                      : sim_out_set_double(t, row, c, d);
            if (src != SIM_OK) rc = SIM_NOMEM;
        }
        if (rc == 0) rc = dyn_fill(t, &params, &rows[ri], row, 0);
        if (rc == 0) rc = dyn_fill(t, &tags, &rows[ri], row, 1);
    }
    free(params.c);
    free(tags.c);
    if (rc == 0 && (sim_out_set_attr(t, "flashspec_version", FS_VERSION) != SIM_OK ||
                    sim_out_set_attr(t, "script_hash", m->script_hash) != SIM_OK))
        rc = SIM_NOMEM;
    if (rc != SIM_OK)
        snprintf(err, errlen, "out of memory for the results table");
    else
        rc = sim_out_write(t, dir, err, errlen);
    sim_out_destroy(t);
    return rc;
}

/* ------------------------------------------------------- lookup by name */

int fs_row_columns(void)
{
    return N_COLUMNS;
}

int fs_row_cell(const fs_rows_meta *m, const fs_row *r, int c, const char **s, int64_t *integer,
                double *num, char *buf, size_t n)
{
    if (c < 0 || c >= N_COLUMNS) return 0;
    *integer = 0;
    *num = 0;
    col_value(m, r, c, s, num, integer, buf, n);
    return col_is_str(c) ? FS_CELL_TEXT : col_is_int(c) ? FS_CELL_INTEGER : FS_CELL_NUMBER;
}

int fs_row_column_info(int i, const char **name, const char **kind, const char **doc)
{
    if (i < 0 || i >= N_COLUMNS) return 0;
    *name = columns[i].name;
    *kind = col_is_str(i) ? "text" : col_is_int(i) ? "integer" : "number";
    *doc = columns[i].doc;
    return 1;
}

int fs_row_column_kind(const char *name)
{
    for (int c = 0; c < N_COLUMNS; c++) {
        if (strcmp(columns[c].name, name) != 0) continue;
        switch (columns[c].type) {
        case COL_I32:
        case COL_I64:
        case COL_U64:
        case COL_REAL:
        case COL_TREE:
            return FS_COL_NUMBER;
        default:
            return FS_COL_TEXT;
        }
    }
    return FS_COL_NONE;
}

int fs_row_get(const fs_rows_meta *m, const fs_row *r, const char *name, double *num, char *text,
               size_t n)
{
    for (int c = 0; c < N_COLUMNS; c++) {
        if (strcmp(columns[c].name, name) != 0) continue;
        const char *s;
        double x = 0.0;
        int64_t i = 0;
        char buf[FS_LABEL_CAP];
        col_value(m, r, c, &s, &x, &i, buf, sizeof buf);
        if (s) {
            if (text && n) snprintf(text, n, "%s", s);
            return FS_COL_TEXT;
        }
        if (num) *num = col_is_int(c) ? (double)i : x;
        return FS_COL_NUMBER;
    }
    return FS_COL_NONE;
}

/* ------------------------------------------------------------- labels */

/* Appends to out[0..n) at *at what fmt makes; 0, or -1 when it does not fit
 * (out then holds what did, *at is past the end). */
static int label_put(char *out, size_t n, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = *at < n ? vsnprintf(out + *at, n - *at, fmt, ap) : 0;
    va_end(ap);
    if (k < 0 || *at >= n || (size_t)k >= n - *at) {
        *at = n;
        return -1;
    }
    *at += (size_t)k;
    return 0;
}

int sim_out_params_label(const eng_param_desc *d, const void *params, char *out, size_t n)
{
    size_t at = 0;
    out[0] = 0;
    for (int first = 1; d && d->name; d++, first = 0) {
        if (label_put(out, n, &at, "%s%s=", first ? "" : ",", d->name) != 0 ||
            sim_out_param_value(d, params, SIM_OUT_EXACT_DIGITS, '/', out + at, n - at) != 0)
            return -1;
        at += strlen(out + at);
    }
    return 0;
}
