"""The model protocol the recorder drives, and its adapter for causal LMs.

The recorder needs four things from a model, and nothing else:

* ``name`` (str, < 64 bytes), ``vocab`` (int) and ``n_layers`` (int);
* ``max_positions`` (int or None): the longest sequence it may be given;
* ``run(ids, mask, pos, hidden)``: one forward pass over a single sequence of
  ``n`` tokens, where ``ids`` is a LongTensor ``[n]``, ``mask`` a BoolTensor
  ``[n, n]`` (``mask[i, j]`` true when token ``i`` may attend to token ``j``),
  ``pos`` a LongTensor ``[n]`` of position ids.  Returns ``(logits, hs)``:
  ``logits`` float ``[n, vocab]`` and, when ``hidden`` is true, ``hs`` a sequence
  of ``n_layers + 1`` tensors ``[n, h]`` (``hs[0]`` the embeddings, ``hs[l]`` the
  residual stream after ``l`` layers), else None;
* ``lens(h)``: the logit lens, final norm then LM head applied to hidden
  states ``[..., h]``, returning logits ``[..., vocab]`` (the early-exit scores
  used when no trained predictor is given).

A tree of tokens after a prefix is one call: the prefix with a causal mask,
then each tree token at position ``(last prefix position) + depth``, attending
to the whole prefix, its ancestors and itself.

``CausalLMAdapter`` implements the protocol for any ``torch.nn.Module`` with
the calling convention of common PyTorch causal LMs::

    out = module(input_ids[1, n], attention_mask=M, position_ids=pos[1, n],
                 output_hidden_states=True)
    out.logits[0]            # [n, vocab]
    out.hidden_states        # n_layers + 1 tensors [1, n, h]

where ``M`` is either the boolean 4-D mask ``[1, 1, n, n]`` (``mask_style =
"bool"``, as TinyGPT and recent libraries accept) or its additive float form
(``"additive"``: 0 where allowed, the dtype's most negative value elsewhere).
Tuples ``(logits, hidden_states)`` are accepted as well as objects with those
attributes.  The logit lens needs ``norm`` and ``head`` callables (for
TinyGPT its ``final_norm`` and ``lm_head`` methods; for a Llama-style module,
``module.model.norm`` and ``module.lm_head``).

To plug in a pair of your own models, write a module with a function
``load_pair(target_path, draft_path) -> (target, draft, tokenizer)`` returning
two objects of this protocol (usually ``CausalLMAdapter``s) and a tokenizer
with ``encode(str) -> list[int]``, ``decode(list[int]) -> str`` and ``name``,
and pass ``--loader MODULE:FUNCTION`` to the recorder.

Numerics: the adapter runs the model in ``dtype`` (float64 by default), so the
greedy reference decoded with a causal mask and the tree pass agree on every
argmax (the trace format requires the target's top-1 on the reference path to
be the reference token).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple

import torch


class CausalLMAdapter:
    """Adapts a causal-LM ``torch.nn.Module`` to the recorder's protocol."""

    def __init__(self, module: torch.nn.Module, name: str, n_layers: int, vocab: int,
                 norm: Callable[[torch.Tensor], torch.Tensor],
                 head: Callable[[torch.Tensor], torch.Tensor],
                 max_positions: Optional[int] = None, mask_style: str = "bool",
                 dtype: torch.dtype = torch.float64) -> None:
        if mask_style not in ("bool", "additive"):
            raise ValueError(f"mask_style must be 'bool' or 'additive' (got {mask_style!r})")
        self.module = module.to(dtype).eval()
        self.name = name
        self.n_layers = n_layers
        self.vocab = vocab
        self.max_positions = max_positions
        self.mask_style = mask_style
        self.dtype = dtype
        self._norm = norm
        self._head = head

    @torch.no_grad()
    def run(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor,
            hidden: bool = False) -> Tuple[torch.Tensor, Optional[Sequence[torch.Tensor]]]:
        n = ids.shape[0]
        m = mask.view(1, 1, n, n)
        if self.mask_style == "additive":
            neg = torch.finfo(self.dtype).min
            m = torch.zeros(1, 1, n, n, dtype=self.dtype).masked_fill(~m, neg)
        out = self.module(ids.view(1, n), attention_mask=m, position_ids=pos.view(1, n),
                          output_hidden_states=hidden)
        if isinstance(out, tuple):
            logits, hs = out[0], (out[1] if len(out) > 1 else None)
        else:
            logits, hs = out.logits, getattr(out, "hidden_states", None)
        if hidden:
            if hs is None or len(hs) != self.n_layers + 1:
                raise RuntimeError(f"{self.name}: expected {self.n_layers + 1} hidden states")
            hs = [h[0] for h in hs]
        return logits[0], (hs if hidden else None)

    @torch.no_grad()
    def lens(self, h: torch.Tensor) -> torch.Tensor:
        return self._head(self._norm(h.to(self.dtype)))


def tinygpt_adapter(model, dtype: torch.dtype = torch.float64) -> CausalLMAdapter:
    """The adapter for a ``model.TinyGPT``."""
    c = model.config
    return CausalLMAdapter(model, c.name, c.n_layer, c.vocab, model.final_norm, model.lm_head,
                           max_positions=c.max_pos, mask_style="bool", dtype=dtype)


def causal_mask(n: int) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool).tril()


def tree_inputs(prefix: Sequence[int], tokens: Sequence[int], parents: Sequence[int],
                depths: Sequence[int]) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Inputs of one pass over ``prefix`` followed by tree nodes 1..n-1.

    Node 0 of the tree is the last prefix token (row ``C-1``); node ``i > 0`` is
    row ``C - 1 + i``, at position ``C - 1 + depths[i]``, attending to the prefix
    and to its ancestors.  Parents come before children.
    """
    C = len(prefix)
    n = len(tokens)
    rows = C + n - 1
    ids = torch.tensor(list(prefix) + list(tokens[1:]), dtype=torch.long)
    pos = torch.empty(rows, dtype=torch.long)
    pos[:C] = torch.arange(C)
    mask = torch.zeros(rows, rows, dtype=torch.bool)
    mask[:C, :C] = causal_mask(C)
    for i in range(1, n):
        r = C - 1 + i
        pos[r] = C - 1 + depths[i]
        mask[r, :C] = True
        pr = C - 1 + parents[i]
        if parents[i] > 0:
            mask[r] = mask[r] | mask[pr]
        mask[r, r] = True
    return ids, mask, pos
