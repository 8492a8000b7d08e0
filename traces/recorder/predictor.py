"""Early-exit predictor: a linear map from a target layer's hidden state to
vocabulary logits, trained on a frozen target with the Lever loss.

Scores (Lever §4.3, Eq. 7; docs/policies.md "`lever`"): for node ``u`` and
candidate token ``x``, ``s(u, x) = W_x . h_u + b_x`` with ``h_u`` the residual
stream after exit layer ``l_e`` (``hs[l_e]`` in the adapter's protocol) and
``W`` of shape ``[V, h]``.  One map per exit layer.

Training loss per position ``u`` (the target frozen, only ``W, b`` learn):

    L = L_KD + lambda * L_cand
    L_KD   = tau_d^2 * KL( softmax(z_final / tau_d) || softmax(z_exit / tau_d) )
    L_cand = KL( renorm_C(softmax(z_final)) || renorm_C(softmax(z_exit)) )

with ``z_final`` the target's final logits, ``z_exit = W h_u + b`` and
``renorm_C`` the distribution restricted to the draft's top-K candidate set
``C_u`` at that position and renormalised (equivalently a softmax over the
logits of ``C_u``).  Defaults: ``tau_d = 2``, ``lambda = 1``.  ``W`` starts
from the target's LM head (tied embedding for TinyGPT) so training begins
near the unnormalised logit lens.

Training data: every position of the given token sequences; hidden states and
final logits come from one causal target pass per sequence, the candidate sets
from one causal draft pass.  Minibatches are drawn with a seeded generator.

Without a predictor the recorder scores candidates with the logit lens
(``adapter.lens``: final norm and LM head applied to ``h_u``).

Files: one torch file ``{"format": "flashspec-exit-predictor", "exit_layers":
[...], "W": [E, V, h] float16, "b": [E, V] float16, "target": name}``.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import torch
import torch.nn.functional as F


class ExitPredictor:
    """Linear early-exit heads, one per exit layer."""

    def __init__(self, exit_layers: Sequence[int], W: torch.Tensor, b: torch.Tensor,
                 target: str = "") -> None:
        if W.dim() != 3 or b.shape != W.shape[:2] or W.shape[0] != len(exit_layers):
            raise ValueError("predictor weights have inconsistent shapes")
        self.exit_layers = [int(x) for x in exit_layers]
        self.W = W
        self.b = b
        self.target = target

    @property
    def vocab(self) -> int:
        return int(self.W.shape[1])

    @property
    def hidden(self) -> int:
        return int(self.W.shape[2])

    def scores(self, layer: int, h: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
        """Scores ``[n, K]`` of candidates ``cand [n, K]`` from hidden states ``h [n, hidden]``."""
        e = self.exit_layers.index(layer)
        W = self.W[e].to(h.dtype)
        b = self.b[e].to(h.dtype)
        return torch.einsum("nh,nkh->nk", h, W[cand]) + b[cand]

    def save(self, path: str) -> None:
        torch.save({"format": "flashspec-exit-predictor", "exit_layers": self.exit_layers,
                    "W": self.W.to(torch.float16), "b": self.b.to(torch.float16),
                    "target": self.target}, path)

    @classmethod
    def load(cls, path: str) -> "ExitPredictor":
        blob = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(blob, dict) or blob.get("format") != "flashspec-exit-predictor":
            raise ValueError("not an exit-predictor file")
        return cls(blob["exit_layers"], blob["W"].to(torch.float32), blob["b"].to(torch.float32),
                   blob.get("target", ""))


def lever_loss(z_exit: torch.Tensor, z_final: torch.Tensor, cand: torch.Tensor,
               tau_d: float = 2.0, lam: float = 1.0) -> torch.Tensor:
    """Mean Lever loss over rows: full-vocabulary KD plus candidate-set distillation.

    ``z_exit``, ``z_final``: ``[n, V]`` logits; ``cand``: ``[n, K]`` token ids.
    """
    log_pf = F.log_softmax(z_final / tau_d, dim=-1)
    log_pe = F.log_softmax(z_exit / tau_d, dim=-1)
    kd = (log_pf.exp() * (log_pf - log_pe)).sum(-1).mean() * tau_d * tau_d
    cf = F.log_softmax(z_final.gather(1, cand), dim=-1)
    ce = F.log_softmax(z_exit.gather(1, cand), dim=-1)
    lc = (cf.exp() * (cf - ce)).sum(-1).mean()
    return kd + lam * lc


def train_predictor(target, draft, sequences: List[List[int]], exit_layers: Sequence[int],
                    head_weight: torch.Tensor, k: int = 8, steps: int = 300, batch: int = 512,
                    lr: float = 3e-3, tau_d: float = 2.0, lam: float = 1.0, seed: int = 0,
                    log=None) -> ExitPredictor:
    """Trains one linear head per exit layer on a frozen target (adapter protocol).

    ``head_weight [V, h]`` initialises ``W``; ``sequences`` are token lists no
    longer than both models' ``max_positions``.  Deterministic for a given seed.
    """
    hs_all: List[List[torch.Tensor]] = [[] for _ in exit_layers]
    zf_all, cand_all = [], []
    from .adapter import causal_mask

    for seq in sequences:
        n = len(seq)
        ids = torch.tensor(seq, dtype=torch.long)
        mask, pos = causal_mask(n), torch.arange(n)
        zf, hs = target.run(ids, mask, pos, hidden=True)
        zd, _ = draft.run(ids, mask, pos, hidden=False)
        for i, l in enumerate(exit_layers):
            hs_all[i].append(hs[l].float())
        zf_all.append(zf.float())
        cand_all.append(torch.topk(zd.float(), k, dim=-1).indices)
    zf = torch.cat(zf_all)
    cand = torch.cat(cand_all)
    n = zf.shape[0]
    Ws, bs = [], []
    for i, l in enumerate(exit_layers):
        h = torch.cat(hs_all[i])
        W = head_weight.detach().float().clone().requires_grad_(True)
        b = torch.zeros(W.shape[0], requires_grad=True)
        opt = torch.optim.Adam([W, b], lr=lr)
        g = torch.Generator().manual_seed(seed * 1000 + l)
        for step in range(steps):
            idx = torch.randint(0, n, (min(batch, n),), generator=g)
            loss = lever_loss(h[idx] @ W.t() + b, zf[idx], cand[idx], tau_d, lam)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if log and (step % 100 == 0 or step == steps - 1):
                log(f"predictor layer {l}: step {step} loss {loss.item():.4f}")
        Ws.append(W.detach())
        bs.append(b.detach())
    return ExitPredictor(exit_layers, torch.stack(Ws), torch.stack(bs), target.name)


def candidate_agreement(pred: Optional[ExitPredictor], target, layer: int, h: torch.Tensor,
                        z_final: torch.Tensor, cand: torch.Tensor) -> float:
    """Fraction of rows whose best-scored candidate is the target's best candidate."""
    s = pred.scores(layer, h, cand) if pred is not None else target.lens(h).gather(1, cand)
    best_t = z_final.gather(1, cand).argmax(-1)
    return float((s.argmax(-1) == best_t).double().mean())
