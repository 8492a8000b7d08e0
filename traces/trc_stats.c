/*
 * trc_stats.c -- trc_get_stats: statistics of the recorded trees relative to
 * the reference path (traces/README.md, "Statistics").
 *
 * They are sums, accumulated prompt by prompt, tree by tree and node by node
 * in trace order, so a trace held whole, a trace read prompt by prompt and the
 * writer of the index all arrive at the same bits.  A trace held whole
 * computes them once, on first use, under its memo lock; a lazily opened trace
 * takes them from its index (trc_lazy.c).
 */
#include "trc_impl.h"

#include <string.h>

void trci_stats_begin(const trc_trace *t, trc_stats *st)
{
    memset(st, 0, sizeof *st);
    st->k = t->meta.k;
    st->depths = t->meta.max_depth + 1 < TRC_MAX_DEPTH ? t->meta.max_depth + 1 : TRC_MAX_DEPTH;
}

/* Child of node u (rows of one tree from row 0 = tree root) carrying token. */
static int32_t child(const int32_t *fc, const int32_t *ns, const int32_t *tok, int32_t u,
                     int32_t token)
{
    for (int32_t v = fc[u]; v >= 0; v = ns[v])
        if (tok[v] == token) return v;
    return -1;
}

void trci_stats_add(const trc_trace *t, const trci_nodes *w, int32_t p, trc_stats *st)
{
    const trc_meta *m = &t->meta;
    const int32_t K = m->k;
    const int32_t *ref = t->ref_tok + t->ref_off[p];
    int32_t L = (int32_t)(t->ref_off[p + 1] - t->ref_off[p]);
    int32_t deep_parent_depth = m->max_depth - 1; /* parents at this depth propose depth D */
    for (int32_t pos = 0; pos < L; pos++) {
        int64_t tr = t->ref_off[p] + pos, bl = t->node_off[tr] - w->base;
        int32_t n = (int32_t)(t->node_off[tr + 1] - t->node_off[tr]);
        const int32_t *fc = w->first_child + bl, *ns = w->next_sibling + bl, *tok = w->token + bl;
        const uint8_t *depth = w->depth + bl;
        const int32_t *dtok = w->draft_tok + bl * K;
        const float *dlp = w->draft_logp + bl * K;
        /* the recorded reference path */
        int32_t path[TRC_MAX_DEPTH + 1];
        int32_t node = 0, d = 0;
        path[0] = 0;
        while (d < m->max_depth && pos + d < L) {
            int32_t c = child(fc, ns, tok, node, ref[pos + d]);
            if (c < 0) break;
            path[++d] = c;
            node = c;
        }
        int32_t onpath_max = d;
        /* positional acceptance: the parent path[q] proposes ref[pos + q] */
        for (int32_t q = 0; q < d || (q == d && q < m->max_depth && pos + q < L); q++) {
            int32_t u = path[q];
            int32_t want = ref[pos + q];
            st->accept_n++;
            for (int32_t j = 0; j < K; j++)
                if (dtok[(size_t)u * K + j] == want) {
                    st->accept_pos[j]++;
                    break;
                }
        }
        /* the deepest proposing depth */
        if (onpath_max >= deep_parent_depth && deep_parent_depth >= 0 &&
            pos + deep_parent_depth < L) {
            int32_t u = path[deep_parent_depth];
            int32_t want = ref[pos + deep_parent_depth];
            st->deep_n++;
            for (int32_t j = 0; j < K; j++)
                if (dtok[(size_t)u * K + j] == want) {
                    st->deep_in++;
                    if (j == 0) st->deep_top1++;
                    break;
                }
        }
        /* draft log-probs of the off-path nodes; the path's rows ascend
         * (parent < child), so one cursor skips them */
        int32_t qp = 0;
        for (int32_t i = 0; i < n; i++) {
            if (qp <= onpath_max && path[qp] == i) {
                qp++;
                continue;
            }
            int32_t dep = depth[i] < TRC_MAX_DEPTH ? depth[i] : TRC_MAX_DEPTH - 1;
            double *by_depth = st->logp_sum_depth[dep];
            const float *lp = dlp + (size_t)i * K;
            for (int32_t j = 0; j < K; j++) {
                st->logp_sum[j] += lp[j];
                by_depth[j] += lp[j];
            }
            st->depth_nodes[dep]++;
            st->off_path_nodes++;
        }
    }
}

const trc_stats *trc_get_stats(const trc_trace *ct)
{
    trc_trace *t = (trc_trace *)(uintptr_t)ct; /* the statistics are derived data */
    if (!t->memo_ok) return NULL;
    pthread_mutex_lock(&t->memo_lock);
    if (!t->stats_ok && !t->lazy) {
        trci_nodes w;
        trci_nodes_all(t, &w);
        trci_stats_begin(t, &t->stats);
        for (int32_t p = 0; p < t->meta.n_prompts; p++)
            trci_stats_add(t, &w, p, &t->stats);
        t->stats_ok = 1;
    }
    const trc_stats *st = t->stats_ok ? &t->stats : NULL;
    pthread_mutex_unlock(&t->memo_lock);
    return st;
}
