"""The recording loop: one schema-v1 trace from a draft/target pair.

Per prompt (token ids, at least one):

1. **Reference.** The target's greedy continuation of ``L`` tokens, one causal
   pass per token (ties go to the smaller token id).
2. **Draft tree per position.** With ``ref[0:pos]`` committed, node 0 is the
   last committed token.  The reference path is added first, down to depth
   ``min(D, L - pos)``; then, best-first by joint draft probability (product of
   the draft's probabilities along the path), the best (node, candidate) pair
   from a heap of every added node's top-K draft candidates, ties broken by
   insertion order, until ``M`` nodes; nodes at depth ``D`` are not expanded and
   no node gets two children with the same token.  Every node's draft
   distribution comes from a causal draft pass over prefix + path, which is
   what a tree-mask draft pass computes for that node.
3. **Target pass per position.** One tree-attention pass of the target over
   the prefix and all tree nodes (adapter.tree_inputs) gives every node's
   target top-K and, at each exit layer, the hidden states from which the
   early-exit predictor (or the logit lens) scores the node's K draft
   candidates.

Top-K lists are sorted by decreasing log-probability, ties by token id.  The
target's top-1 along the reference path must equal the next reference token; a
disagreement (only possible with a near-exact tie between two logits, or a
model whose tree-mask pass differs from its causal pass) is reported as an
internal error naming the prompt and position, instead of writing a trace the
validator would refuse.
"""
from __future__ import annotations

import heapq
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from . import EX_SOFTWARE, EX_USAGE, RecorderError
from .adapter import causal_mask, tree_inputs

LOGP_FLOOR = -1e30  # finite stand-in for a probability that underflowed to 0


@dataclass
class RecordParams:
    output_len: int = 64
    k: int = 8
    max_depth: int = 8
    max_nodes: int = 32
    exit_layers: List[int] = field(default_factory=list)


def topk_sorted(logp: torch.Tensor, k: int) -> Tuple[np.ndarray, np.ndarray]:
    """Top-k of a 1-D log-prob vector, by decreasing value then increasing id."""
    kth = torch.topk(logp, k).values[-1]
    ids = torch.nonzero(logp >= kth).flatten().numpy()
    vals = logp.numpy()[ids]
    order = np.lexsort((ids, -vals))[:k]
    return ids[order].astype(np.int32), vals[order]


def greedy_reference(target, prompt: Sequence[int], n: int) -> List[int]:
    """The target's greedy continuation of ``n`` tokens (causal passes)."""
    seq = list(prompt)
    out: List[int] = []
    for _ in range(n):
        m = len(seq)
        logits, _ = target.run(torch.tensor(seq), causal_mask(m), torch.arange(m))
        row = logits[-1]
        best = int(torch.nonzero(row == row.max()).flatten()[0])
        out.append(best)
        seq.append(best)
    return out


class _Tree:
    """A draft tree under construction (tree-local arrays, parents first)."""

    def __init__(self) -> None:
        self.tokens: List[int] = []
        self.parents: List[int] = []
        self.depths: List[int] = []
        self.logjoint: List[float] = []
        self.dtok: List[np.ndarray] = []
        self.dlogp: List[np.ndarray] = []
        self.children: List[Dict[int, int]] = []
        self.full: List[torch.Tensor] = []

    def path(self, i: int) -> List[int]:
        out = []
        while i > 0:
            out.append(self.tokens[i])
            i = self.parents[i]
        return out[::-1]


def build_tree(draft, prefix: List[int], ref_rest: List[int], p: RecordParams) -> _Tree:
    """Best-first draft tree at one position (see the module comment)."""
    t = _Tree()
    K, D, M = p.k, p.max_depth, p.max_nodes

    def add(tok: int, parent: int, logjoint: float) -> int:
        i = len(t.tokens)
        t.tokens.append(tok)
        t.parents.append(parent)
        t.depths.append(t.depths[parent] + 1 if parent >= 0 else 0)
        t.logjoint.append(logjoint)
        t.children.append({})
        if parent >= 0:
            t.children[parent][tok] = i
        seq = prefix + t.path(i)
        m = len(seq)
        logits, _ = draft.run(torch.tensor(seq), causal_mask(m), torch.arange(m))
        lp = torch.log_softmax(logits[-1].double(), dim=-1)
        ids, vals = topk_sorted(lp, K)
        t.dtok.append(ids)
        t.dlogp.append(vals)
        t.full.append(lp)
        return i

    add(prefix[-1], -1, 0.0)
    u = 0
    for d in range(min(D, len(ref_rest))):
        tok = ref_rest[d]
        u = add(tok, u, t.logjoint[u] + float(t.full[u][tok]))
    heap: List[Tuple[float, int, int, int]] = []
    seq = 0

    def push(i: int) -> None:
        nonlocal seq
        if t.depths[i] >= D:
            return
        for tok, lp in zip(t.dtok[i], t.dlogp[i]):
            if int(tok) not in t.children[i]:
                heapq.heappush(heap, (-(t.logjoint[i] + float(lp)), seq, i, int(tok)))
                seq += 1

    for i in range(len(t.tokens)):
        push(i)
    while len(t.tokens) < M and heap:
        neg, _, parent, tok = heapq.heappop(heap)
        if tok in t.children[parent]:
            continue
        push(add(tok, parent, -neg))
    for i in range(len(t.full)):
        t.full[i] = None  # drop the full distributions early
    return t


def record(target, draft, prompts: List[List[int]], p: RecordParams, predictor=None,
           progress: Optional[Callable[[str], None]] = None) -> Tuple[Dict, Dict[str, np.ndarray]]:
    """Records every prompt; returns (header attributes without strings, datasets)."""
    if target.vocab != draft.vocab:
        raise RecorderError(EX_USAGE, f"target vocabulary ({target.vocab}) and draft "
                                      f"vocabulary ({draft.vocab}) differ")
    V, K, D = target.vocab, p.k, p.max_depth
    E = len(p.exit_layers)
    ref_all: List[int] = []
    ref_off = [0]
    node_off = [0]
    cols: Dict[str, List] = {k: [] for k in ("parent", "token", "depth", "dtok", "dlogp",
                                              "ttok", "tlogp", "exit")}
    total = sum(1 for _ in prompts) * p.output_len
    done = 0
    for pi, prompt in enumerate(prompts):
        ref = greedy_reference(target, prompt, p.output_len)
        for pos in range(p.output_len):
            prefix = list(prompt) + ref[:pos]
            t = build_tree(draft, prefix, ref[pos:], p)
            n = len(t.tokens)
            ids, mask, posn = tree_inputs(prefix, t.tokens, t.parents, t.depths)
            logits, hs = target.run(ids, mask, posn, hidden=E > 0)
            C = len(prefix)
            rows = torch.arange(C - 1, C - 1 + n)
            tlp = torch.log_softmax(logits[rows].double(), dim=-1)
            ttok = np.empty((n, K), np.int32)
            tlogp = np.empty((n, K), np.float64)
            for i in range(n):
                ttok[i], tlogp[i] = topk_sorted(tlp[i], K)
            u = 0
            for d in range(min(D, p.output_len - pos)):
                want = ref[pos + d]
                if ttok[u, 0] != want:
                    raise RecorderError(EX_SOFTWARE, (
                        f"prompt {pi}, position {pos}, depth {d}: the tree pass's top-1 "
                        f"{int(ttok[u, 0])} differs from the greedy reference {want} "
                        f"(log-probs {tlogp[u, 0]:.9g} vs {float(tlp[u, want]):.9g}); the "
                        "model's tree-mask pass must match its causal pass"))
                u = t.children[u][want]
            dtok = np.stack(t.dtok)
            ex = np.zeros((n, E, K), np.float64)
            cand = torch.from_numpy(dtok.astype(np.int64))
            for e, layer in enumerate(p.exit_layers):
                h = hs[layer][rows]
                if predictor is not None:
                    s = predictor.scores(layer, h.double(), cand)
                else:
                    s = target.lens(h).double().gather(1, cand)
                ex[:, e, :] = s.numpy()
            cols["parent"].append(np.asarray(t.parents, np.int32))
            cols["token"].append(np.asarray(t.tokens, np.int32))
            cols["depth"].append(np.asarray(t.depths, np.uint8))
            cols["dtok"].append(dtok)
            cols["dlogp"].append(np.stack(t.dlogp))
            cols["ttok"].append(ttok)
            cols["tlogp"].append(tlogp)
            cols["exit"].append(ex)
            node_off.append(node_off[-1] + n)
            done += 1
            if progress and (done % 64 == 0 or done == total):
                progress(f"{done}/{total} trees")
        ref_all.extend(ref)
        ref_off.append(len(ref_all))

    def logp32(chunks: List[np.ndarray]) -> np.ndarray:
        a = np.concatenate(chunks)
        a = np.where(np.isfinite(a), a, LOGP_FLOOR)
        return np.minimum(np.maximum(a, LOGP_FLOOR), 0.0).astype(np.float32)

    pt = [t for pr in prompts for t in pr]
    data = {
        "prompts/offset": np.cumsum([0] + [len(pr) for pr in prompts]).astype(np.int64),
        "prompts/tokens": np.asarray(pt, np.int32),
        "reference/offset": np.asarray(ref_off, np.int64),
        "reference/tokens": np.asarray(ref_all, np.int32),
        "trees/node_offset": np.asarray(node_off, np.int64),
        "nodes/parent": np.concatenate(cols["parent"]),
        "nodes/token": np.concatenate(cols["token"]),
        "nodes/depth": np.concatenate(cols["depth"]),
        "nodes/draft_tok": np.concatenate(cols["dtok"]),
        "nodes/draft_logp": logp32(cols["dlogp"]),
        "nodes/target_tok": np.concatenate(cols["ttok"]),
        "nodes/target_logp": logp32(cols["tlogp"]),
        "nodes/exit_score": np.clip(np.concatenate(cols["exit"]), -1e30, 1e30).astype(np.float32),
    }
    attrs = {"version": 1, "vocab": V, "k": K, "max_depth": D, "max_nodes": p.max_nodes,
             "exit_layers": list(p.exit_layers), "target_layers": target.n_layers}
    return attrs, data


def log_stderr(msg: str) -> None:
    if sys.stderr.isatty():
        print(f"recorder: {msg}", file=sys.stderr)
