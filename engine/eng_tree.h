/*
 * eng_tree.h -- the token tree a speculative cycle drafts and verifies.
 *
 * Node 0 is the root: the last committed token, already known to the target's
 * caller but not yet run through it.  Every other node is a draft token; nodes are
 * appended, so parent(v) < v always holds and ids are stable for the whole cycle.
 * Each node may carry the draft's top-K candidate set C_u (tokens sorted by
 * decreasing draft log-probability), stored in one candidate arena.
 *
 * Memory: the tree lives in caller-provided memory sized once by eng_tree_bytes();
 * nothing is allocated afterwards (a phone runtime sizes it at start-up).
 * Operations are O(1) except leaf counting, O(n).
 */
#ifndef ENG_TREE_H
#define ENG_TREE_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t eng_token;
#define ENG_NO_TOKEN ((eng_token)-1)
#define ENG_NO_NODE ((int32_t)-1)

/* Status codes shared by the whole engine. */
enum {
    ENG_OK = 0,
    ENG_E_FULL = -1,   /* tree or arena capacity reached */
    ENG_E_ARG = -2,    /* invalid argument (a bug in the caller) */
    ENG_E_ORACLE = -3, /* an oracle reported failure; see the oracle owner */
    ENG_E_NOMEM = -4
};

typedef struct eng_cand {
    eng_token tok;
    float logp; /* natural log-probability */
} eng_cand;

typedef struct eng_node {
    int32_t parent;       /* ENG_NO_NODE for the root */
    int32_t first_child;  /* ENG_NO_NODE if none; children in insertion order */
    int32_t last_child;
    int32_t next_sibling; /* ENG_NO_NODE at the end */
    eng_token tok;
    int32_t depth;        /* root 0 */
    float logq;           /* draft log q(tok | parent), 0 for the root */
    float cum_logq;       /* sum of logq from the root */
    int32_t cand_off;     /* first candidate in the arena, ENG_NO_NODE if not expanded */
    int32_t cand_n;       /* number of candidates (<= K) */
    uint32_t user;        /* free for the tree's owner (oracles map nodes with it) */
} eng_node;

typedef struct eng_tree {
    eng_node *nodes;
    int32_t n_nodes, cap_nodes; /* n_nodes >= 1 after reset */
    eng_cand *cands;
    int32_t n_cands, cap_cands;
} eng_tree;

/* Bytes of memory eng_tree_init needs for the given capacities. */
size_t eng_tree_bytes(int32_t cap_nodes, int32_t cap_cands);

/* Lays the tree out in mem (borrowed, at least eng_tree_bytes, aligned to 8).
 * The tree starts as a lone root holding ENG_NO_TOKEN.
 * Returns ENG_OK or ENG_E_ARG. */
int eng_tree_init(eng_tree *t, void *mem, size_t bytes, int32_t cap_nodes, int32_t cap_cands);

/* Empties the tree and makes a root holding root_tok. */
void eng_tree_reset(eng_tree *t, eng_token root_tok);

/* The four calls below run for every node or candidate set a cycle makes,
 * so they are inline definitions (C11 6.7.4: a caller may inline them, and
 * eng_tree.c holds the one external definition a plug-in links against). */

/* Appends a child of parent with draft log-prob logq; returns its id, or
 * ENG_E_FULL when the node capacity is reached (ENG_E_ARG for a parent that is
 * not a node of t).  depth and cum_logq are derived from the parent. */
inline int32_t eng_tree_add(eng_tree *t, int32_t parent, eng_token tok, float logq)
{
    if (parent < 0 || parent >= t->n_nodes) return ENG_E_ARG;
    if (t->n_nodes >= t->cap_nodes) return ENG_E_FULL;
    int32_t id = t->n_nodes++;
    eng_node *p = &t->nodes[parent];
    t->nodes[id] = (eng_node){.parent = parent,
                              .first_child = ENG_NO_NODE,
                              .last_child = ENG_NO_NODE,
                              .next_sibling = ENG_NO_NODE,
                              .tok = tok,
                              .depth = p->depth + 1,
                              .logq = logq,
                              .cum_logq = p->cum_logq + logq,
                              .cand_off = ENG_NO_NODE,
                              .cand_n = 0,
                              .user = 0};
    if (p->last_child == ENG_NO_NODE)
        p->first_child = id;
    else
        t->nodes[p->last_child].next_sibling = id;
    p->last_child = id;
    return id;
}

/* Reserves n candidate slots for node id (its candidate set C_u) and returns
 * them for the oracle to fill, or NULL when the arena is full.  n >= 1 (else
 * NULL); slots come zeroed.  Calling it again for the same node replaces the
 * node's set (the old slots stay used until the next reset). */
eng_cand *eng_tree_cands_alloc(eng_tree *t, int32_t id, int32_t n);

/* As eng_tree_cands_alloc, but the slots are not zeroed: they hold whatever
 * the arena held.  For an oracle that writes all n slots before anything
 * reads them (the replay's, which fills every candidate of every set). */
inline eng_cand *eng_tree_cands_reserve(eng_tree *t, int32_t id, int32_t n)
{
    if (id < 0 || id >= t->n_nodes || n < 1) return NULL;
    if (n > t->cap_cands - t->n_cands) return NULL;
    eng_node *u = &t->nodes[id];
    u->cand_off = t->n_cands;
    u->cand_n = n;
    t->n_cands += n;
    return &t->cands[u->cand_off];
}

/* Candidate set of node id (NULL and *n = 0 if not expanded). */
inline const eng_cand *eng_tree_cands(const eng_tree *t, int32_t id, int32_t *n)
{
    if (id < 0 || id >= t->n_nodes || t->nodes[id].cand_off == ENG_NO_NODE) {
        *n = 0;
        return NULL;
    }
    *n = t->nodes[id].cand_n;
    return &t->cands[t->nodes[id].cand_off];
}

/* Child of id holding tok, or ENG_NO_NODE. O(children). */
inline int32_t eng_tree_child(const eng_tree *t, int32_t id, eng_token tok)
{
    if (id < 0 || id >= t->n_nodes) return ENG_NO_NODE;
    for (int32_t c = t->nodes[id].first_child; c != ENG_NO_NODE; c = t->nodes[c].next_sibling)
        if (t->nodes[c].tok == tok) return c;
    return ENG_NO_NODE;
}

/* Nodes sent to verification besides the root (n(T)) and leaves (l(T)); a
 * root-only tree has 0 nodes and 1 leaf (itself). */
static inline int32_t eng_tree_size(const eng_tree *t)
{
    return t->n_nodes - 1;
}
int32_t eng_tree_leaves(const eng_tree *t);

/* Keeps the root and every node v with keep[v] != 0 whose parent is kept too
 * (a node under a dropped node is dropped), in place and in id order, so
 * parent < child still holds; sibling order, tokens, log-probs and candidate
 * sets are preserved (the candidate arena is not compacted).  map (n_nodes
 * entries, caller-provided scratch, old numbering) receives each node's new id
 * or ENG_NO_NODE.  Returns the new node count (keep or map NULL: unchanged).
 * O(n).  Policies that draft more nodes than they verify (beam or pool
 * drafting) use it to leave only the verified tree. */
int32_t eng_tree_compact(eng_tree *t, const uint8_t *keep, int32_t *map);
int32_t eng_tree_depth(const eng_tree *t); /* deepest node's depth, O(n) */

#endif
