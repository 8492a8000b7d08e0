/*
 * eng_accept.c -- greedy (lossless) acceptance.
 *
 * The walk starts at the root (always verified, whatever keep[0] says) and moves
 * to the child whose token equals the target's g(u), among the children that
 * survived pruning (keep == NULL or keep[c] != 0).  Children are scanned in
 * insertion order; a well-formed tree has distinct sibling tokens, and if it does
 * not, the first matching sibling wins (deterministic).
 *
 * Cap: the caller can take at most cap tokens (cap >= 1), so the walk stops after
 * cap - 1 accepted draft tokens, which always leaves room for the bonus token.
 * Emitted = accepted drafts + g(last_node) when the target produced it.  Every
 * emitted token is therefore the target's own greedy token at that position.
 *
 * Cost: O(accepted * K) -- each step scans one node's children.
 *
 * The lossy rules (top-p, sampling; contracts in eng_accept.h) walk the same
 * way but decide each step from the target's truncated top-k distribution; the
 * RNG is the caller's (a uniform-draw callback), so the engine stays free of
 * any RNG library and a seeded caller gets reproducible walks.  Per step they
 * cost O(children * k) and use fixed-size stack arrays (ENG_ACCEPT_MAX_K).
 */
#include "eng_accept.h"

#include <math.h>

eng_outcome eng_accept_greedy(const eng_tree *t, const eng_token *g, const uint8_t *keep,
                              int32_t *path, eng_token *emit, int32_t cap)
{
    eng_outcome o = {0, 0, ENG_NO_TOKEN, 0};
    if (!t || !g || !emit || cap < 1 || t->n_nodes < 1) return o;
    int32_t u = 0;
    while (o.accepted < cap - 1) {
        eng_token gu = g[u];
        if (gu == ENG_NO_TOKEN) break;
        int32_t next = ENG_NO_NODE;
        for (int32_t c = t->nodes[u].first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling) {
            if (t->nodes[c].tok == gu && (!keep || keep[c])) {
                next = c;
                break;
            }
        }
        if (next == ENG_NO_NODE) break;
        if (path) path[o.accepted] = next;
        emit[o.accepted++] = gu;
        u = next;
    }
    o.last_node = u;
    o.bonus = g[u];
    o.emitted = o.accepted;
    if (o.bonus != ENG_NO_TOKEN) emit[o.emitted++] = o.bonus;
    return o;
}

/* ---- lossy rules ---- */

static int child_kept(const uint8_t *keep, int32_t c)
{
    return !keep || keep[c];
}

eng_outcome eng_accept_top_p(const eng_tree *t, const eng_cand *tcand, const int32_t *tn,
                             int32_t k, const uint8_t *keep, double top_p, int32_t *path,
                             eng_token *emit, int32_t cap)
{
    eng_outcome o = {0, 0, ENG_NO_TOKEN, 0};
    if (!t || !tcand || !tn || !emit || cap < 1 || k < 1 || t->n_nodes < 1) return o;
    int32_t u = 0;
    while (o.accepted < cap - 1 && tn[u] > 0) {
        const eng_cand *d = tcand + (size_t)u * (size_t)k;
        int32_t n = tn[u] < k ? tn[u] : k;
        /* the set: walk the entries by decreasing probability until the mass
         * reaches top_p; entries are sorted, but ties and order are not trusted:
         * an entry is inside when fewer-or-equal mass lies strictly above it */
        int32_t best = ENG_NO_NODE;
        double best_p = -1.0;
        for (int32_t c = t->nodes[u].first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling) {
            if (!child_kept(keep, c)) continue;
            double px = -1.0;
            for (int32_t j = 0; j < n; j++)
                if (d[j].tok == t->nodes[c].tok) px = exp((double)d[j].logp);
            if (px < 0) continue;
            double above = 0.0; /* mass of entries ranked before x */
            for (int32_t j = 0; j < n; j++) {
                double pj = exp((double)d[j].logp);
                if (pj > px || (pj == px && d[j].tok < t->nodes[c].tok)) above += pj;
            }
            if (above >= top_p - 1e-6) continue; /* the prefix before x holds top_p */
            if (px > best_p) {
                best_p = px;
                best = c;
            }
        }
        if (best == ENG_NO_NODE) break;
        if (path) path[o.accepted] = best;
        emit[o.accepted++] = t->nodes[best].tok;
        u = best;
    }
    o.last_node = u;
    if (tn[u] > 0) {
        const eng_cand *d = tcand + (size_t)u * (size_t)k;
        int32_t n = tn[u] < k ? tn[u] : k, top = 0;
        for (int32_t j = 1; j < n; j++)
            if (d[j].logp > d[top].logp) top = j;
        o.bonus = d[top].tok;
    }
    o.emitted = o.accepted;
    if (o.bonus != ENG_NO_TOKEN) emit[o.emitted++] = o.bonus;
    return o;
}

/* softmax(logp / temp) of n entries into p; returns 0 when n == 0 */
static int32_t softmax_t(const eng_cand *c, int32_t n, double temp, eng_token *tok, double *p)
{
    if (n > ENG_ACCEPT_MAX_K) n = ENG_ACCEPT_MAX_K;
    double mx = -INFINITY, z = 0.0;
    for (int32_t j = 0; j < n; j++)
        if ((double)c[j].logp / temp > mx) mx = (double)c[j].logp / temp;
    for (int32_t j = 0; j < n; j++) {
        tok[j] = c[j].tok;
        p[j] = exp((double)c[j].logp / temp - mx);
        z += p[j];
    }
    for (int32_t j = 0; j < n; j++)
        p[j] = z > 0 ? p[j] / z : 0.0;
    return n;
}

static double mass_of(const eng_token *tok, const double *p, int32_t n, eng_token x)
{
    for (int32_t j = 0; j < n; j++)
        if (tok[j] == x) return p[j];
    return 0.0;
}

static void normalise(double *p, int32_t n)
{
    double z = 0.0;
    for (int32_t j = 0; j < n; j++)
        z += p[j];
    for (int32_t j = 0; j < n && z > 0; j++)
        p[j] /= z;
}

eng_outcome eng_accept_sampling(const eng_tree *t, const eng_cand *tcand, const int32_t *tn,
                                int32_t k, const uint8_t *keep, double temp,
                                eng_uniform_fn uniform, void *uctx, int32_t *path,
                                eng_token *emit, int32_t cap)
{
    eng_outcome o = {0, 0, ENG_NO_TOKEN, 0};
    if (!t || !tcand || !tn || !emit || !uniform || cap < 1 || k < 1 || !(temp > 0) ||
        t->n_nodes < 1)
        return o;
    eng_token ptok[ENG_ACCEPT_MAX_K], qtok[ENG_ACCEPT_MAX_K];
    double p[ENG_ACCEPT_MAX_K], q[ENG_ACCEPT_MAX_K], r[ENG_ACCEPT_MAX_K];
    int32_t u = 0, np = 0;
    for (;;) {
        if (tn[u] <= 0) {
            np = 0;
            break;
        }
        np = softmax_t(tcand + (size_t)u * (size_t)k, tn[u] < k ? tn[u] : k, temp, ptok, p);
        int32_t cn = 0;
        const eng_cand *dc = eng_tree_cands(t, u, &cn);
        int32_t nq = dc ? softmax_t(dc, cn, temp, qtok, q) : 0;
        if (o.accepted >= cap - 1) break;
        int32_t next = ENG_NO_NODE;
        for (int32_t c = t->nodes[u].first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling) {
            if (!child_kept(keep, c)) continue;
            eng_token x = t->nodes[c].tok;
            double px = mass_of(ptok, p, np, x), qx = mass_of(qtok, q, nq, x);
            double a = qx > 0 ? px / qx : (px > 0 ? 1.0 : 0.0);
            if (uniform(uctx) < a) {
                next = c;
                break;
            }
            /* residual: P <- norm(max(0, P - Q)); keep P when nothing is left */
            double z = 0.0;
            for (int32_t j = 0; j < np; j++) {
                double d = p[j] - mass_of(qtok, q, nq, ptok[j]);
                r[j] = d > 0 ? d : 0.0;
                z += r[j];
            }
            if (z > 0)
                for (int32_t j = 0; j < np; j++)
                    p[j] = r[j] / z;
            for (int32_t j = 0; j < nq; j++)
                if (qtok[j] == x) q[j] = 0.0;
            normalise(q, nq);
        }
        if (next == ENG_NO_NODE) break;
        if (path) path[o.accepted] = next;
        emit[o.accepted++] = t->nodes[next].tok;
        u = next;
    }
    o.last_node = u;
    if (np > 0) {
        double x = uniform(uctx), cum = 0.0;
        o.bonus = ptok[np - 1];
        for (int32_t j = 0; j < np; j++) {
            cum += p[j];
            if (x < cum) {
                o.bonus = ptok[j];
                break;
            }
        }
    }
    o.emitted = o.accepted;
    if (o.bonus != ENG_NO_TOKEN) emit[o.emitted++] = o.bonus;
    return o;
}
