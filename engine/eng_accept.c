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
 */
#include "eng_accept.h"

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
