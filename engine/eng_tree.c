/*
 * eng_tree.c -- the token tree in caller memory.
 *
 * Layout: [eng_node x cap_nodes][eng_cand x cap_cands] in one caller block, so a
 * runtime sizes the tree once (eng_tree_bytes) and every cycle reuses it with
 * eng_tree_reset.  Both element types hold only 4-byte fields, so the candidate
 * arena that follows the node array is always suitably aligned.
 *
 * Invariants (hold after every public call):
 *   1 <= n_nodes <= cap_nodes, 0 <= n_cands <= cap_cands;
 *   parent(v) < v for v >= 1, node 0 is the root (parent ENG_NO_NODE, depth 0);
 *   children of a node form a singly linked list in insertion order
 *   (first_child .. last_child through next_sibling);
 *   cand_off == ENG_NO_NODE, or [cand_off, cand_off + cand_n) lies in the arena.
 *
 * Workload: a cycle appends tens to a few hundred nodes; lookups walk one
 * node's children (<= K), so no hashing is needed.  Leaf counting and depth are
 * O(n) scans, done once per cycle.
 */
#include "eng_tree.h"

#include <string.h>

size_t eng_tree_bytes(int32_t cap_nodes, int32_t cap_cands)
{
    if (cap_nodes < 1 || cap_cands < 0) return 0;
    return (size_t)cap_nodes * sizeof(eng_node) + (size_t)cap_cands * sizeof(eng_cand);
}

int eng_tree_init(eng_tree *t, void *mem, size_t bytes, int32_t cap_nodes, int32_t cap_cands)
{
    if (!t || !mem || cap_nodes < 1 || cap_cands < 0) return ENG_E_ARG;
    if ((uintptr_t)mem % 8 != 0) return ENG_E_ARG;
    if (bytes < eng_tree_bytes(cap_nodes, cap_cands)) return ENG_E_ARG;
    t->nodes = (eng_node *)mem;
    t->cap_nodes = cap_nodes;
    t->cands =
        cap_cands > 0 ? (eng_cand *)((char *)mem + (size_t)cap_nodes * sizeof(eng_node)) : NULL;
    t->cap_cands = cap_cands;
    eng_tree_reset(t, ENG_NO_TOKEN);
    return ENG_OK;
}

static void node_init(eng_node *n, int32_t parent, eng_token tok, int32_t depth, float logq,
                      float cum_logq)
{
    n->parent = parent;
    n->first_child = ENG_NO_NODE;
    n->last_child = ENG_NO_NODE;
    n->next_sibling = ENG_NO_NODE;
    n->tok = tok;
    n->depth = depth;
    n->logq = logq;
    n->cum_logq = cum_logq;
    n->cand_off = ENG_NO_NODE;
    n->cand_n = 0;
    n->user = 0;
}

void eng_tree_reset(eng_tree *t, eng_token root_tok)
{
    node_init(&t->nodes[0], ENG_NO_NODE, root_tok, 0, 0.0f, 0.0f);
    t->n_nodes = 1;
    t->n_cands = 0;
}

/* The external definitions of the calls eng_tree.h defines inline. */
extern inline int32_t eng_tree_add(eng_tree *t, int32_t parent, eng_token tok, float logq);
extern inline eng_cand *eng_tree_cands_reserve(eng_tree *t, int32_t id, int32_t n);
extern inline const eng_cand *eng_tree_cands(const eng_tree *t, int32_t id, int32_t *n);
extern inline int32_t eng_tree_child(const eng_tree *t, int32_t id, eng_token tok);

eng_cand *eng_tree_cands_alloc(eng_tree *t, int32_t id, int32_t n)
{
    eng_cand *c = eng_tree_cands_reserve(t, id, n);
    if (c) memset(c, 0, (size_t)n * sizeof *c);
    return c;
}

int32_t eng_tree_leaves(const eng_tree *t)
{
    int32_t leaves = 0;
    for (int32_t v = 0; v < t->n_nodes; v++)
        leaves += t->nodes[v].first_child == ENG_NO_NODE;
    return leaves;
}

int32_t eng_tree_depth(const eng_tree *t)
{
    int32_t d = 0;
    for (int32_t v = 1; v < t->n_nodes; v++)
        if (t->nodes[v].depth > d) d = t->nodes[v].depth;
    return d;
}

int32_t eng_tree_compact(eng_tree *t, const uint8_t *keep, int32_t *map)
{
    if (!keep || !map) return t->n_nodes;
    /* map[v] is written before slot v can be overwritten: a node moves to
     * w <= v, and parents precede children, so map[parent] is always final */
    int32_t n = t->n_nodes, w = 1;
    map[0] = 0;
    t->nodes[0].first_child = t->nodes[0].last_child = ENG_NO_NODE;
    for (int32_t v = 1; v < n; v++) {
        eng_node x = t->nodes[v];
        int32_t np = (x.parent >= 0 && x.parent < v) ? map[x.parent] : ENG_NO_NODE;
        if (!keep[v] || np == ENG_NO_NODE) {
            map[v] = ENG_NO_NODE;
            continue;
        }
        int32_t id = w++;
        map[v] = id;
        x.parent = np;
        x.first_child = x.last_child = x.next_sibling = ENG_NO_NODE;
        t->nodes[id] = x;
        eng_node *p = &t->nodes[np];
        if (p->last_child == ENG_NO_NODE)
            p->first_child = id;
        else
            t->nodes[p->last_child].next_sibling = id;
        p->last_child = id;
    }
    t->n_nodes = w;
    return w;
}
