/*
 * trc_synth_params.c -- the synthetic generator's parameters (trc.h,
 * trc_synth_params): their defaults (trc_synth_default_params) and the check
 * of a parameter set on its own (trc_synth_check), which trc_synth and
 * trc_synth_save run before they draw anything.
 *
 * The checks go key by key in a fixed order and stop at the first violation:
 * one line "synth: KEY must be ... (got X)", status TRC_E_ARG.  Besides each
 * key's range, the sizes together are bounded: at most MAX_TREES trees
 * (prompts * output_len), and at most MAX_NODES_TOTAL nodes were every tree
 * full (prompts * output_len * max_nodes).
 */
#include "trc_impl.h"

#include <string.h>

#define MAX_TREES 100000000LL
#define MAX_NODES_TOTAL 2147483647LL

void trc_synth_default_params(trc_synth_params *p)
{
    static const double accept[] = {0.80, 0.75, 0.70, 0.66, 0.62, 0.58, 0.55, 0.52};
    memset(p, 0, sizeof *p);
    p->seed = 1;
    p->prompts = 4;
    p->prompt_len = 64;
    p->output_len = 128;
    p->vocab = 151936;
    p->k = 8;
    p->max_depth = 8;
    p->max_nodes = 32;
    p->target_layers = 36;
    p->n_exit = 1;
    p->exit_layers[0] = 18;
    p->n_accept = (int32_t)(sizeof accept / sizeof accept[0]);
    memcpy(p->accept, accept, sizeof accept);
    p->calibration = 0.7;
    p->coverage = 0.92;
    p->coverage_share = -1.0;
    p->predictor_accuracy = 0.85;
    trci_strcpy(p->target, sizeof p->target, "synthetic-target");
    trci_strcpy(p->draft, sizeof p->draft, "synthetic-draft");
}

/* ------------------------------------------------------- parameter checks */

static int bad_int(trc_err *err, const char *key, long long lo, long long hi, long long got)
{
    return trci_err(err, TRC_E_ARG, "synth: %s must be in [%lld, %lld] (got %lld)", key, lo, hi,
                    got);
}

static int bad_unit(trc_err *err, const char *key, double got)
{
    return trci_err(err, TRC_E_ARG, "synth: %s must be in [0,1] (got %g)", key, got);
}

static int check_params(const trc_synth_params *p, trc_err *err)
{
    if (p->prompts < 1 || p->prompts > 1000000)
        return bad_int(err, "prompts", 1, 1000000, p->prompts);
    if (p->prompt_len < 0 || p->prompt_len > 1000000)
        return bad_int(err, "prompt_len", 0, 1000000, p->prompt_len);
    if (p->output_len < 1 || p->output_len > 1000000)
        return bad_int(err, "output_len", 1, 1000000, p->output_len);
    if (p->k < 1 || p->k > TRC_MAX_K) return bad_int(err, "k", 1, TRC_MAX_K, p->k);
    if (p->vocab <= p->k) return bad_int(err, "vocab", (long long)p->k + 1, INT32_MAX, p->vocab);
    if (p->max_depth < 1 || p->max_depth > TRC_MAX_DEPTH)
        return bad_int(err, "max_depth", 1, TRC_MAX_DEPTH, p->max_depth);
    if (p->max_nodes < p->max_depth + 1 || p->max_nodes > 65536)
        return bad_int(err, "max_nodes", (long long)p->max_depth + 1, 65536, p->max_nodes);
    long long trees = (long long)p->prompts * p->output_len;
    if (trees > MAX_TREES)
        return trci_err(err, TRC_E_ARG, "synth: prompts * output_len must be <= %lld (got %lld)",
                        MAX_TREES, trees);
    if (trees * p->max_nodes > MAX_NODES_TOTAL)
        return trci_err(err, TRC_E_ARG,
                        "synth: prompts * output_len * max_nodes must be <= %lld (got %lld)",
                        MAX_NODES_TOTAL, trees * p->max_nodes);
    if (p->target_layers < 2 || p->target_layers > 100000)
        return bad_int(err, "target_layers", 2, 100000, p->target_layers);
    if (p->n_exit < 0 || p->n_exit > TRC_MAX_EXIT)
        return trci_err(err, TRC_E_ARG, "synth: exit_layers must hold at most %d layers (got %d)",
                        TRC_MAX_EXIT, p->n_exit);
    for (int e = 0; e < p->n_exit; e++) {
        if (p->exit_layers[e] < 1 || p->exit_layers[e] >= p->target_layers)
            return trci_err(err, TRC_E_ARG,
                            "synth: exit_layers values must be in [1, target_layers) = [1, %d) "
                            "(got %d)",
                            p->target_layers, p->exit_layers[e]);
        if (e > 0 && p->exit_layers[e] <= p->exit_layers[e - 1])
            return trci_err(err, TRC_E_ARG,
                            "synth: exit_layers must be strictly ascending (got %d after %d)",
                            p->exit_layers[e], p->exit_layers[e - 1]);
    }
    if (p->n_accept < 1 || p->n_accept > TRC_MAX_DEPTH)
        return trci_err(err, TRC_E_ARG, "synth: accept must hold 1 to %d values (got %d)",
                        TRC_MAX_DEPTH, p->n_accept);
    for (int d = 0; d < p->n_accept; d++)
        if (!(p->accept[d] >= 0.0 && p->accept[d] <= 1.0))
            return trci_err(err, TRC_E_ARG,
                            "synth: accept values must be in [0,1] (got %g at depth %d)",
                            p->accept[d], d + 1);
    if (!(p->calibration >= 0.0 && p->calibration <= 1.0))
        return bad_unit(err, "calibration", p->calibration);
    if (!(p->coverage >= 0.0 && p->coverage <= 1.0)) return bad_unit(err, "coverage", p->coverage);
    if (p->coverage_share != -1.0 && !(p->coverage_share >= 0.0 && p->coverage_share <= 1.0))
        return trci_err(err, TRC_E_ARG,
                        "synth: coverage_share must be in [0,1], or -1 for off (got %g)",
                        p->coverage_share);
    if (!(p->predictor_accuracy >= 0.0 && p->predictor_accuracy <= 1.0))
        return bad_unit(err, "predictor_accuracy", p->predictor_accuracy);
    if (!memchr(p->target, '\0', sizeof p->target))
        return trci_err(err, TRC_E_ARG, "synth: target must be shorter than %d bytes",
                        TRC_NAME_CAP);
    if (!memchr(p->draft, '\0', sizeof p->draft))
        return trci_err(err, TRC_E_ARG, "synth: draft must be shorter than %d bytes", TRC_NAME_CAP);
    return TRC_OK;
}

int trc_synth_check(const trc_synth_params *p, trc_err *err)
{
    return check_params(p, err);
}
