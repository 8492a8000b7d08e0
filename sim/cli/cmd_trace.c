/*
 * cmd_trace.c -- `flashspec trace info|check|stats|synth|index`.
 *
 * Thin front end over traces/trc.h: every check lives in the library (trc_load
 * validates fully, trc_synth range-checks its parameters), so this file only
 * parses arguments (getopt_long, strict number parsing), brings the library's
 * codes into the status space (sim_status.h) and prints.  Output goes to
 * stdout; every error is one line on stderr starting "flashspec: ".  synth writes through trc_save, which is
 * atomic, so a failed run leaves no file behind.  No process state survives a
 * call (getopt is re-initialised each time), so tests may call it repeatedly.
 */
#include "sim/cli/cmd_trace.h"

#include "sim/sim_status.h"
#include "traces/trc.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_top[] =
    "usage: flashspec trace COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  info FILE     header, counts, sizes, checksum and acceptance summary\n"
    "  check FILE    full validation; exit 0 when the trace is valid\n"
    "  stats FILE    per-depth acceptance and predictor accuracy table (TSV)\n"
    "  index FILE    add the index that lets a large trace open prompt by prompt\n"
    "  synth -o FILE [options]   generate a synthetic trace\n"
    "\n"
    "`flashspec trace COMMAND --help` describes each command.\n"
    "exit codes: 0 ok, 64 usage, 65 bad trace data, 66 missing input,\n"
    "            70 internal error, 73 cannot create output\n";

static const char usage_index[] =
    "usage: flashspec trace index FILE\n"
    "Checks FILE completely, prompt by prompt, and adds to it the index\n"
    "(traces/README.md, \"Index\") that flashspec writes into every trace it\n"
    "saves: with it, a run opens the trace without reading its trees and reads\n"
    "each prompt when a point needs it.  For files written by other tools (the\n"
    "Python recorder); a file that has an index is only checked.  The index is\n"
    "written into a copy beside FILE, the copy is checked completely and renamed\n"
    "over FILE last: a failure leaves FILE as it was.  Prints \"FILE: index\n"
    "added\" or \"FILE: has an index (checked)\"; exit 65 on bad data (nothing\n"
    "written), 66 missing, 73 when the copy cannot be written (full disk, a\n"
    "file-size limit; FILE unchanged).\n";

static const char usage_info[] =
    "usage: flashspec trace info FILE\n"
    "Prints the trace header (models, vocab, K, D, M, layers), counts, file and\n"
    "memory sizes, the content checksum, the mean tree size and the acceptance of\n"
    "the draft along the reference path by depth.\n";

static const char usage_check[] =
    "usage: flashspec trace check FILE\n"
    "Validates FILE completely (schema v1, traces/README.md), its index\n"
    "included (recomputed from the data and compared).  Prints\n"
    "\"FILE: ok (P prompts, T trees, N nodes, checksum 0x...)\" and exits 0, or\n"
    "prints the first problem on stderr and exits 65 (bad data) or 66 (missing).\n"
    "A trace that needs more than 1 GiB in memory is checked prompt by prompt.\n";

static const char usage_stats[] =
    "usage: flashspec trace stats FILE\n"
    "Prints tab-separated tables, separated by blank lines:\n"
    "  1. per depth, on the reference path: positions reaching it, draft top-1\n"
    "     acceptance (plain and conditional on the prefix), top-K coverage, and\n"
    "     the recorded nodes at that depth (all of the trees);\n"
    "  2. per exit layer: nodes whose target token is a draft candidate, how often\n"
    "     the predictor scores it highest, and how often the draft ranks it first;\n"
    "  3. draft calibration over every node: by draft top-1 probability bin, the\n"
    "     mean probability and how often the draft's top-1 is the target's token;\n"
    "  4. candidate coverage over every node: the draft rank of the target's token\n"
    "     (1..K, or absent);\n"
    "  5. summary: counts, mean tree size, full trees, reference-path and off-path\n"
    "     nodes, coverage, calibration error, mean accepted lengths.\n";

static const char usage_synth[] =
    "usage: flashspec trace synth -o FILE [options]\n"
    "Generates a synthetic trace (model: traces/README.md) and writes it atomically.\n"
    "  -o, --output FILE            output path (required)\n"
    "      --prompts N              prompts (4)\n"
    "      --prompt-len N           tokens per prompt (64)\n"
    "      --output-len N           reference tokens per prompt (128)\n"
    "      --vocab N                vocabulary size (151936)\n"
    "      --k N                    candidates per node (8)\n"
    "      --depth N                max tree depth D (8); alias --max-depth\n"
    "      --nodes N                max nodes per tree M (32); alias --max-nodes\n"
    "      --target-layers N        target model layers (36)\n"
    "      --exit-layers L1,L2,...  early-exit layers, ascending (18); \"\" for none\n"
    "      --accept A1,A2,...       per-depth acceptance, last repeats\n"
    "                               (0.8,0.75,0.7,0.66,0.62,0.58,0.55,0.52)\n"
    "      --calibration X          draft confidence calibration in [0,1] (0.7)\n"
    "      --coverage X             P(reference token in draft top-K) (0.92)\n"
    "      --coverage-share S       instead: at every depth the top-K holds the\n"
    "                               token with P = a_d + S (1 - a_d)\n"
    "      --predictor-accuracy X   early-exit predictor top-1 accuracy (0.85)\n"
    "      --seed N                 RNG seed (1)\n"
    "      --node-streams           every node draws from its own random stream, so\n"
    "                               a small change of --accept moves only the\n"
    "                               decisions it crosses (what calibration fits use)\n"
    "      --target NAME            target model name (synthetic-target)\n"
    "      --draft NAME             draft model name (synthetic-draft)\n"
    "      --by-prompt              write prompt by prompt, holding about one prompt\n"
    "                               in memory (traces larger than memory): the same\n"
    "                               trace and checksum, not the same file bytes; the\n"
    "                               generator runs twice and the file is read back\n"
    "                               for its index\n";

static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("flashspec: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

/* Reports an unknown option or a missing argument as getopt left it. */
static int bad_option(const char *cmd, char **argv, int c)
{
    const char *arg = argv[optind - 1];
    if (c == ':') return fail(SIM_USAGE, "trace %s: option %s needs an argument", cmd, arg);
    if (optopt && optopt != '?' && arg && strncmp(arg, "--", 2) != 0)
        return fail(SIM_USAGE, "trace %s: unknown option -%c (see --help)", cmd, optopt);
    return fail(SIM_USAGE, "trace %s: unknown option %s (see --help)", cmd, arg ? arg : "?");
}

/* ---------------------------------------------------------- info / check */

/* Parses `CMD [--help] FILE`; returns -1 after --help, else a status (SIM_OK). */
static int parse_file_cmd(int argc, char **argv, const char *usage, const char **file)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    *file = NULL; /* set on every path: -O3 cannot see that bad_option never returns 0 */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return -1;
        }
        return bad_option(argv[0], argv, c);
    }
    if (optind != argc - 1)
        return fail(SIM_USAGE, "trace %s: expected exactly one FILE (see --help)", argv[0]);
    *file = argv[optind];
    return SIM_OK;
}

/* info and stats read a trace prompt by prompt (trc_open, each prompt
 * validated as it is read, once: the cache only decides that a file without
 * an index up to INFO_CACHE_BYTES is loaded whole); check validates
 * everything (trc_check) in about CHECK_MEM_BYTES. */
#define INFO_CACHE_BYTES ((size_t)256 << 20)
#define CHECK_MEM_BYTES ((size_t)1 << 30)

static int load_or_fail(const char *file, trc_trace **t)
{
    trc_err err;
    int rc = trc_open(file, INFO_CACHE_BYTES, t, &err);
    if (rc) return fail(sim_status_from_trc(rc), "%s", err.msg);
    return SIM_OK;
}

enum { CAL_BINS = 10 }; /* draft-confidence bins of width 0.1 */

typedef struct ref_stats {
    int64_t pos_at[TRC_MAX_DEPTH + 1];   /* positions whose reference path reaches depth d */
    int64_t top1[TRC_MAX_DEPTH + 1];     /* draft top-1 == reference token at depth d */
    int64_t prefix[TRC_MAX_DEPTH + 1];   /* positions with depths 1..d-1 all top-1 right */
    int64_t top1_pre[TRC_MAX_DEPTH + 1]; /* ... and depth d right too */
    int64_t in_topk[TRC_MAX_DEPTH + 1];  /* reference token within the draft top-K */
    double chain_len, topk_len;          /* sums of accepted lengths */
    int64_t positions;
    int64_t pred_n[TRC_MAX_EXIT], pred_hit[TRC_MAX_EXIT];
    int64_t pred_draft_hit; /* same nodes: the draft's own top-1 is g(u) (predictor baseline) */
    /* every recorded node u (the root included): */
    int64_t nodes_at[TRC_MAX_DEPTH + 1]; /* recorded nodes at depth d */
    int64_t ref_nodes;                   /* nodes on the reference path, roots excluded */
    int64_t full_trees;                  /* trees with max_nodes nodes */
    int64_t rank_n[TRC_MAX_K + 1];       /* g(u) at draft rank j (0-based), [K] = absent */
    int64_t cal_n[CAL_BINS];             /* nodes by draft top-1 probability bin */
    int64_t cal_hit[CAL_BINS];           /* ... whose draft top-1 is g(u) */
    double cal_conf[CAL_BINS];           /* ... sum of draft top-1 probabilities */
} ref_stats;

static int rank_of(const int32_t *v, int k, int32_t x)
{
    for (int j = 0; j < k; j++)
        if (v[j] == x) return j;
    return -1;
}

static int measure(const trc_trace *t, ref_stats *s, trc_err *err)
{
    const trc_meta *m = trc_get_meta(t);
    memset(s, 0, sizeof *s);
    for (int32_t p = 0; p < m->n_prompts; p++) {
        const int32_t *ref;
        int32_t L = trc_ref(t, p, &ref);
        int rc = trc_prompt_acquire(t, p, err);
        if (rc) return rc;
        for (int32_t pos = 0; pos < L; pos++) {
            trc_tree tr;
            trc_tree_get(t, p, pos, &tr);
            int K = tr.k;
            int32_t u = 0, dref = L - pos < m->max_depth ? L - pos : m->max_depth;
            int chain = 1, topk = 1;
            s->positions++;
            for (int32_t d = 1; d <= dref; d++) {
                int32_t want = ref[pos + d - 1];
                int r = rank_of(tr.draft_tok + (size_t)u * K, K, want);
                s->pos_at[d]++;
                s->top1[d] += r == 0;
                s->in_topk[d] += r >= 0;
                if (chain) {
                    s->prefix[d]++;
                    s->top1_pre[d] += r == 0;
                }
                chain = chain && r == 0;
                topk = topk && r >= 0;
                s->chain_len += chain;
                s->topk_len += topk;
                u = trc_tree_child(&tr, u, want);
            }
            s->ref_nodes += dref;
            s->full_trees += tr.n == m->max_nodes;
            for (int32_t i = 0; i < tr.n; i++) {
                int r = rank_of(tr.draft_tok + (size_t)i * K, K, tr.tgt_tok[(size_t)i * K]);
                double q1 = exp((double)tr.draft_logp[(size_t)i * K]);
                int bin = (int)(q1 * CAL_BINS);
                bin = bin < 0 ? 0 : bin >= CAL_BINS ? CAL_BINS - 1 : bin;
                s->nodes_at[tr.depth[i]]++;
                s->rank_n[r < 0 ? K : r]++;
                s->cal_n[bin]++;
                s->cal_hit[bin] += r == 0;
                s->cal_conf[bin] += q1;
                if (r < 0) continue;
                s->pred_draft_hit += r == 0;
                for (int e = 0; e < tr.n_exit; e++) {
                    const float *sc = tr.exit_score + ((size_t)i * tr.n_exit + (size_t)e) * K;
                    int best = 0;
                    for (int j = 1; j < K; j++)
                        if (sc[j] > sc[best]) best = j;
                    s->pred_n[e]++;
                    s->pred_hit[e] += best == r;
                }
            }
        }
        trc_prompt_release(t, p);
    }
    return TRC_OK;
}

static double ratio(int64_t a, int64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

/* Expected calibration error of the draft's top-1 probability as a predictor of
 * "the draft's top-1 is the target's token": sum over bins of
 * |mean confidence - accuracy| weighted by the bin's share of nodes. */
static double calibration_error(const ref_stats *s, int64_t nodes)
{
    double ece = 0.0;
    for (int b = 0; b < CAL_BINS; b++)
        if (s->cal_n[b])
            ece += (double)s->cal_n[b] / (double)nodes *
                   fabs(s->cal_conf[b] / (double)s->cal_n[b] - ratio(s->cal_hit[b], s->cal_n[b]));
    return ece;
}

static int cmd_info(int argc, char **argv)
{
    const char *file;
    int rc = parse_file_cmd(argc, argv, usage_info, &file);
    if (rc) return rc < 0 ? SIM_OK : rc;
    trc_trace *t;
    if ((rc = load_or_fail(file, &t))) return rc;
    const trc_meta *m = trc_get_meta(t);
    struct stat st;
    long long fsize = stat(file, &st) == 0 ? (long long)st.st_size : -1;
    int64_t ptok = 0;
    for (int32_t p = 0; p < m->n_prompts; p++)
        ptok += trc_prompt(t, p, NULL);
    char exits[128] = "none";
    for (int e = 0, w = 0; e < m->n_exit; e++)
        w += snprintf(exits + w, sizeof exits - (size_t)w, "%s%d", e ? "," : "", m->exit_layers[e]);
    ref_stats s;
    trc_err err;
    if ((rc = measure(t, &s, &err))) {
        trc_free(t);
        return fail(sim_status_from_trc(rc), "%s", err.msg);
    }

    printf("file            %s\n", file);
    printf("format          %s v%d\n", TRC_FORMAT, m->version);
    printf("target          %s (%d layers)\n", m->target, m->target_layers);
    printf("draft           %s\n", m->draft);
    printf("tokenizer       %s (vocab %d)\n", m->tokenizer, m->vocab);
    printf("source          %s\n", m->source);
    printf("tree limits     K %d, max_depth %d, max_nodes %d\n", m->k, m->max_depth, m->max_nodes);
    printf("exit layers     %s\n", exits);
    printf("prompts         %d (%lld prompt tokens)\n", m->n_prompts, (long long)ptok);
    printf("trees           %lld (= reference tokens)\n", (long long)m->n_trees);
    printf("nodes           %lld (mean tree size %.2f)\n", (long long)m->n_nodes,
           (double)m->n_nodes / (double)m->n_trees);
    printf("file size       %lld bytes\n", fsize);
    printf("memory          %zu bytes\n", trc_bytes(t));
    printf("checksum        0x%016llx\n", (unsigned long long)trc_checksum(t));
    printf("reference path  depth  positions  top1    top1|prefix  in-top-K\n");
    for (int d = 1; d <= m->max_depth; d++)
        printf("                %5d  %9lld  %.4f  %.4f       %.4f\n", d, (long long)s.pos_at[d],
               ratio(s.top1[d], s.pos_at[d]), ratio(s.top1_pre[d], s.prefix[d]),
               ratio(s.in_topk[d], s.pos_at[d]));
    printf("accepted/cycle  %.3f (chain of draft top-1), %.3f (any of top-K per level),\n"
           "                plus the bonus token in both cases\n",
           s.chain_len / (double)s.positions, s.topk_len / (double)s.positions);
    for (int e = 0; e < m->n_exit; e++)
        printf("predictor       layer %d: top-1 accuracy %.4f over %lld nodes\n", m->exit_layers[e],
               ratio(s.pred_hit[e], s.pred_n[e]), (long long)s.pred_n[e]);
    printf("recorded nodes  %lld on reference paths, %lld off them, %lld roots; "
           "%.1f%% of trees full\n",
           (long long)s.ref_nodes, (long long)(m->n_nodes - m->n_trees - s.ref_nodes),
           (long long)m->n_trees, 100.0 * ratio(s.full_trees, m->n_trees));
    printf("all nodes       target token in draft top-K %.4f, draft top-1 right %.4f,\n"
           "                draft calibration error %.4f\n",
           1.0 - ratio(s.rank_n[m->k], m->n_nodes), ratio(s.rank_n[0], m->n_nodes),
           calibration_error(&s, m->n_nodes));
    trc_free(t);
    return SIM_OK;
}

static int cmd_stats(int argc, char **argv)
{
    const char *file;
    int rc = parse_file_cmd(argc, argv, usage_stats, &file);
    if (rc) return rc < 0 ? SIM_OK : rc;
    trc_trace *t;
    if ((rc = load_or_fail(file, &t))) return rc;
    const trc_meta *m = trc_get_meta(t);
    ref_stats s;
    trc_err err;
    if ((rc = measure(t, &s, &err))) {
        trc_free(t);
        return fail(sim_status_from_trc(rc), "%s", err.msg);
    }
    printf("depth\tpositions\ttop1\ttop1_given_prefix\tin_top_k\trecorded_nodes\n");
    for (int d = 1; d <= m->max_depth; d++)
        printf("%d\t%lld\t%.6f\t%.6f\t%.6f\t%lld\n", d, (long long)s.pos_at[d],
               ratio(s.top1[d], s.pos_at[d]), ratio(s.top1_pre[d], s.prefix[d]),
               ratio(s.in_topk[d], s.pos_at[d]), (long long)s.nodes_at[d]);
    printf("\nexit_layer\tnodes\tpredictor_top1\tdraft_top1\n");
    for (int e = 0; e < m->n_exit; e++)
        printf("%d\t%lld\t%.6f\t%.6f\n", m->exit_layers[e], (long long)s.pred_n[e],
               ratio(s.pred_hit[e], s.pred_n[e]), ratio(s.pred_draft_hit, s.pred_n[e]));
    printf("\nconfidence_lo\tconfidence_hi\tnodes\tmean_confidence\ttop1_correct\n");
    for (int b = 0; b < CAL_BINS; b++)
        printf("%.1f\t%.1f\t%lld\t%.6f\t%.6f\n", (double)b / CAL_BINS, (double)(b + 1) / CAL_BINS,
               (long long)s.cal_n[b], s.cal_n[b] ? s.cal_conf[b] / (double)s.cal_n[b] : 0.0,
               ratio(s.cal_hit[b], s.cal_n[b]));
    printf("\ndraft_rank\tnodes\tfraction\n");
    for (int j = 0; j <= m->k; j++) {
        if (j < m->k)
            printf("%d", j + 1);
        else
            printf("absent");
        printf("\t%lld\t%.6f\n", (long long)s.rank_n[j], ratio(s.rank_n[j], m->n_nodes));
    }
    printf("\nsummary\tvalue\n");
    printf("prompts\t%d\n", m->n_prompts);
    printf("trees\t%lld\n", (long long)m->n_trees);
    printf("nodes\t%lld\n", (long long)m->n_nodes);
    printf("mean_tree_size\t%.6f\n", ratio(m->n_nodes, m->n_trees));
    printf("full_trees\t%.6f\n", ratio(s.full_trees, m->n_trees));
    printf("reference_path_nodes\t%lld\n", (long long)s.ref_nodes);
    printf("off_path_nodes\t%lld\n", (long long)(m->n_nodes - m->n_trees - s.ref_nodes));
    printf("coverage_all_nodes\t%.6f\n", 1.0 - ratio(s.rank_n[m->k], m->n_nodes));
    printf("draft_top1_all_nodes\t%.6f\n", ratio(s.rank_n[0], m->n_nodes));
    printf("calibration_error\t%.6f\n", calibration_error(&s, m->n_nodes));
    printf("accepted_chain\t%.6f\n", s.chain_len / (double)s.positions);
    printf("accepted_top_k\t%.6f\n", s.topk_len / (double)s.positions);
    trc_free(t);
    return SIM_OK;
}

static int cmd_index(int argc, char **argv)
{
    const char *file;
    int rc = parse_file_cmd(argc, argv, usage_index, &file);
    if (rc) return rc < 0 ? SIM_OK : rc;
    trc_err err;
    int added = 0;
    if ((rc = trc_add_index(file, &added, &err))) return fail(sim_status_from_trc(rc), "%s", err.msg);
    printf("%s: %s\n", file, added ? "index added" : "has an index (checked)");
    return SIM_OK;
}

static int cmd_check(int argc, char **argv)
{
    const char *file;
    int rc = parse_file_cmd(argc, argv, usage_check, &file);
    if (rc) return rc < 0 ? SIM_OK : rc;
    trc_trace *t;
    trc_err err;
    /* a trace larger than CHECK_MEM_BYTES is checked prompt by prompt */
    if ((rc = trc_check(file, CHECK_MEM_BYTES, &t, &err)))
        return fail(sim_status_from_trc(rc), "%s", err.msg);
    const trc_meta *m = trc_get_meta(t);
    printf("%s: ok (%d prompts, %lld trees, %lld nodes, checksum 0x%016llx)\n", file, m->n_prompts,
           (long long)m->n_trees, (long long)m->n_nodes, (unsigned long long)trc_checksum(t));
    trc_free(t);
    return SIM_OK;
}

/* ----------------------------------------------------------------- synth */

static int parse_int(const char *flag, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return fail(SIM_USAGE,
                    "trace synth: %s expects an integer in [%lld, %lld] (got \"%s\")", flag, lo, hi,
                    s);
    *out = v;
    return SIM_OK;
}

static int parse_real(const char *flag, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return fail(SIM_USAGE, "trace synth: %s expects a number (got \"%s\")", flag, s);
    *out = v;
    return SIM_OK;
}

/* Comma-separated list into ints (is_int) or doubles; cap entries at most. */
static int parse_list(const char *flag, const char *s, int is_int, int cap, int32_t *iv, double *dv,
                      int32_t *n)
{
    *n = 0;
    if (!*s) return SIM_OK;
    char buf[64];
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (*n == cap)
            return fail(SIM_USAGE, "trace synth: %s takes at most %d values", flag, cap);
        if (len == 0 || len >= sizeof buf)
            return fail(SIM_USAGE, "trace synth: %s: bad list \"%s\"", flag, s);
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (is_int) {
            long long v = 0;
            if (parse_int(flag, buf, INT32_MIN, INT32_MAX, &v)) return SIM_USAGE;
            iv[*n] = (int32_t)v;
        } else if (parse_real(flag, buf, &dv[*n])) {
            return SIM_USAGE;
        }
        (*n)++;
        if (!comma) return SIM_OK;
        p = comma + 1;
    }
}

enum {
    O_PROMPTS = 256,
    O_PROMPT_LEN,
    O_OUTPUT_LEN,
    O_VOCAB,
    O_K,
    O_DEPTH,
    O_NODES,
    O_TARGET_LAYERS,
    O_EXIT_LAYERS,
    O_ACCEPT,
    O_CALIBRATION,
    O_COVERAGE,
    O_PREDICTOR,
    O_SEED,
    O_TARGET,
    O_DRAFT,
    O_NODE_STREAMS,
    O_COVERAGE_SHARE,
    O_BY_PROMPT
};

static const struct option synth_opts[] = {
    {"help", no_argument, NULL, 'h'},
    {"output", required_argument, NULL, 'o'},
    {"prompts", required_argument, NULL, O_PROMPTS},
    {"prompt-len", required_argument, NULL, O_PROMPT_LEN},
    {"output-len", required_argument, NULL, O_OUTPUT_LEN},
    {"vocab", required_argument, NULL, O_VOCAB},
    {"k", required_argument, NULL, O_K},
    {"depth", required_argument, NULL, O_DEPTH},
    {"max-depth", required_argument, NULL, O_DEPTH},
    {"nodes", required_argument, NULL, O_NODES},
    {"max-nodes", required_argument, NULL, O_NODES},
    {"target-layers", required_argument, NULL, O_TARGET_LAYERS},
    {"exit-layers", required_argument, NULL, O_EXIT_LAYERS},
    {"accept", required_argument, NULL, O_ACCEPT},
    {"calibration", required_argument, NULL, O_CALIBRATION},
    {"coverage", required_argument, NULL, O_COVERAGE},
    {"predictor-accuracy", required_argument, NULL, O_PREDICTOR},
    {"seed", required_argument, NULL, O_SEED},
    {"target", required_argument, NULL, O_TARGET},
    {"draft", required_argument, NULL, O_DRAFT},
    {"node-streams", no_argument, NULL, O_NODE_STREAMS},
    {"coverage-share", required_argument, NULL, O_COVERAGE_SHARE},
    {"by-prompt", no_argument, NULL, O_BY_PROMPT},
    {NULL, 0, NULL, 0}};

/* The int32 field of p that option c sets, or NULL. */
static int32_t *synth_int_field(trc_synth_params *p, int c)
{
    switch (c) {
    case O_PROMPTS:
        return &p->prompts;
    case O_PROMPT_LEN:
        return &p->prompt_len;
    case O_OUTPUT_LEN:
        return &p->output_len;
    case O_VOCAB:
        return &p->vocab;
    case O_K:
        return &p->k;
    case O_DEPTH:
        return &p->max_depth;
    case O_NODES:
        return &p->max_nodes;
    case O_TARGET_LAYERS:
        return &p->target_layers;
    default:
        return NULL;
    }
}

/* One option of `trace synth` (flag: its long name, for messages).  Returns
 * -1 to go on or a status (SIM_OK after --help). */
static int synth_opt(trc_synth_params *p, int c, const char *flag, const char *arg,
                     const char **out, int *by_prompt, char **argv)
{
    long long v = 0;
    int32_t *field = synth_int_field(p, c);
    if (field) {
        int rc = parse_int(flag, arg, INT32_MIN, INT32_MAX, &v);
        *field = (int32_t)v;
        return rc ? rc : -1;
    }
    int rc = SIM_OK;
    switch (c) {
    case 'h':
        fputs(usage_synth, stdout);
        return SIM_OK;
    case 'o':
        *out = arg;
        break;
    case O_SEED:
        rc = parse_int(flag, arg, 0, INT64_MAX, &v);
        p->seed = (uint64_t)v;
        break;
    case O_EXIT_LAYERS:
        rc = parse_list(flag, arg, 1, TRC_MAX_EXIT, p->exit_layers, NULL, &p->n_exit);
        break;
    case O_ACCEPT:
        rc = parse_list(flag, arg, 0, TRC_MAX_DEPTH, NULL, p->accept, &p->n_accept);
        break;
    case O_CALIBRATION:
        rc = parse_real(flag, arg, &p->calibration);
        break;
    case O_COVERAGE:
        rc = parse_real(flag, arg, &p->coverage);
        break;
    case O_PREDICTOR:
        rc = parse_real(flag, arg, &p->predictor_accuracy);
        break;
    case O_COVERAGE_SHARE:
        rc = parse_real(flag, arg, &p->coverage_share);
        break;
    case O_NODE_STREAMS:
        p->node_streams = 1;
        break;
    case O_BY_PROMPT:
        *by_prompt = 1;
        break;
    case O_TARGET:
    case O_DRAFT:
        if (strlen(arg) >= TRC_NAME_CAP)
            return fail(SIM_USAGE, "trace synth: %s must be shorter than %d bytes", flag,
                        TRC_NAME_CAP);
        snprintf(c == O_TARGET ? p->target : p->draft, TRC_NAME_CAP, "%s", arg);
        break;
    default:
        return bad_option("synth", argv, c);
    }
    return rc ? rc : -1;
}

/* The output is checked before a trace that may take minutes is generated:
 * its directory must exist and be writable, and FILE must not be a
 * directory.  Returns -1 or a status. */
static int synth_output_ok(const char *out)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    struct stat st;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return fail(SIM_CANTCREATE, "%s: cannot create output: %s", out, strerror(EISDIR));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0)
        return fail(SIM_CANTCREATE, "%s: cannot create output: %s", out,
                    stat(dir, &st) != 0    ? strerror(errno)
                    : !S_ISDIR(st.st_mode) ? strerror(ENOTDIR)
                                           : strerror(EACCES));
    return -1;
}

/* Generates the trace of p into out (prompt by prompt with by_prompt). */
static int synth_write(const trc_synth_params *p, const char *out, int by_prompt)
{
    trc_err err;
    if (by_prompt) {
        trc_meta m;
        uint64_t sum = 0;
        int rc = trc_synth_save(p, out, &m, &sum, &err);
        if (rc) return fail(sim_status_from_trc(rc), "%s", err.msg);
        printf("%s: wrote %d prompts, %lld trees, %lld nodes, checksum 0x%016llx\n", out,
               m.n_prompts, (long long)m.n_trees, (long long)m.n_nodes, (unsigned long long)sum);
        return SIM_OK;
    }
    trc_trace *t;
    int rc = trc_synth(p, &t, &err);
    if (rc) return fail(sim_status_from_trc(rc), "%s", err.msg);
    rc = trc_save(t, out, &err);
    if (rc) {
        trc_free(t);
        return fail(sim_status_from_trc(rc), "%s", err.msg);
    }
    const trc_meta *m = trc_get_meta(t);
    printf("%s: wrote %d prompts, %lld trees, %lld nodes, checksum 0x%016llx\n", out, m->n_prompts,
           (long long)m->n_trees, (long long)m->n_nodes, (unsigned long long)trc_checksum(t));
    trc_free(t);
    return SIM_OK;
}

static int cmd_synth(int argc, char **argv)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    const char *out = NULL;
    int by_prompt = 0;
    optind = 0;
    opterr = 0;
    int c, idx = -1;
    while ((c = getopt_long(argc, argv, ":ho:", synth_opts, &idx)) != -1) {
        char flag[32];
        snprintf(flag, sizeof flag, "--%s", idx >= 0 ? synth_opts[idx].name : "output");
        idx = -1;
        int rc = synth_opt(&p, c, flag, optarg, &out, &by_prompt, argv);
        if (rc >= 0) return rc;
    }
    if (optind != argc)
        return fail(SIM_USAGE, "trace synth: unexpected argument \"%s\" (see --help)",
                    argv[optind]);
    if (!out) return fail(SIM_USAGE, "trace synth: -o FILE is required (see --help)");
    if (p.n_accept == 0)
        return fail(SIM_USAGE, "trace synth: --accept needs at least one value");
    int rc = synth_output_ok(out);
    if (rc >= 0) return rc;
    trc_err err; /* the generator's parameters come from the command line */
    if (trc_synth_check(&p, &err) != TRC_OK) return fail(SIM_USAGE, "%s", err.msg);
    return synth_write(&p, out, by_prompt);
}

int cli_trace_main(int argc, char **argv)
{
    if (argc < 2)
        return fail(SIM_USAGE,
                    "trace: missing command (info, check, stats, synth, index; see --help)");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage_top, stdout);
        return SIM_OK;
    }
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "check")) return cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "stats")) return cmd_stats(argc - 1, argv + 1);
    if (!strcmp(cmd, "synth")) return cmd_synth(argc - 1, argv + 1);
    if (!strcmp(cmd, "index")) return cmd_index(argc - 1, argv + 1);
    return fail(SIM_USAGE, "trace: unknown command \"%s\" (info, check, stats, synth, index)",
                cmd);
}
