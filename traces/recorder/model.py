"""TinyGPT: a small GPT-style causal LM in plain torch with a tree-mask forward.

Pre-norm transformer: learned token and position embeddings, ``n_layer``
blocks of (LayerNorm -> multi-head self-attention -> residual, LayerNorm ->
GELU MLP of width 4*d -> residual), a final LayerNorm and an LM head tied to
the token embedding.

The forward follows the calling convention of common PyTorch causal LMs, so the
recorder drives it exactly as it would drive a user's model (adapter.py):

    out = model(input_ids,                  # LongTensor [B, n]
                attention_mask=mask,        # BoolTensor [B, 1, n, n], True = may attend
                position_ids=pos,           # LongTensor [B, n]
                output_hidden_states=True)
    out.logits          # [B, n, V]
    out.hidden_states   # tuple of n_layer + 1 tensors [B, n, d]: the embeddings,
                        # then the residual stream after each block (before the
                        # final norm)

Without a mask the model is causal; without position ids positions are 0..n-1.
A tree of draft tokens appended to a prefix is verified in one call by giving
each tree token the position ``prefix_len - 1 + depth`` and letting it attend
to the prefix and its own ancestors.

Checkpoints (``save``/``load``) are one torch file holding the config and the
weights (stored as float16 to keep the files small; the rounded weights *are*
the model: training finishes by rounding them).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import NamedTuple, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    vocab: int = 512
    d_model: int = 128
    n_layer: int = 4
    n_head: int = 4
    max_pos: int = 128
    name: str = "tinygpt"


class LMOutput(NamedTuple):
    logits: torch.Tensor
    hidden_states: Optional[Tuple[torch.Tensor, ...]]


class Block(nn.Module):
    def __init__(self, c: GPTConfig) -> None:
        super().__init__()
        self.n_head = c.n_head
        self.ln1 = nn.LayerNorm(c.d_model)
        self.qkv = nn.Linear(c.d_model, 3 * c.d_model)
        self.proj = nn.Linear(c.d_model, c.d_model)
        self.ln2 = nn.LayerNorm(c.d_model)
        self.fc = nn.Linear(c.d_model, 4 * c.d_model)
        self.out = nn.Linear(4 * c.d_model, c.d_model)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        B, n, d = x.shape
        h = self.n_head
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(B, n, h, d // h).transpose(1, 2)
        k = k.view(B, n, h, d // h).transpose(1, 2)
        v = v.view(B, n, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h)) + bias
        y = torch.softmax(att, dim=-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(B, n, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self, c: GPTConfig) -> None:
        super().__init__()
        self.config = c
        self.tok_emb = nn.Embedding(c.vocab, c.d_model)
        self.pos_emb = nn.Embedding(c.max_pos, c.d_model)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layer))
        self.ln_f = nn.LayerNorm(c.d_model)
        self.apply(_init)

    # the adapter's logit-lens hooks
    def final_norm(self, h: torch.Tensor) -> torch.Tensor:
        return self.ln_f(h)

    def lm_head(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.tok_emb.weight.t()

    def forward(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None,
                position_ids: Optional[torch.Tensor] = None,
                output_hidden_states: bool = False) -> LMOutput:
        B, n = input_ids.shape
        dev = input_ids.device
        if position_ids is None:
            position_ids = torch.arange(n, device=dev).unsqueeze(0).expand(B, n)
        if attention_mask is None:
            attention_mask = torch.ones(n, n, dtype=torch.bool, device=dev).tril().view(1, 1, n, n)
        x = self.tok_emb(input_ids) + self.pos_emb(position_ids)
        bias = torch.zeros(attention_mask.shape, dtype=x.dtype, device=dev)
        bias = bias.masked_fill(~attention_mask.bool(), float("-inf"))
        hs = [x] if output_hidden_states else None
        for blk in self.blocks:
            x = blk(x, bias)
            if hs is not None:
                hs.append(x)
        logits = self.lm_head(self.ln_f(x))
        return LMOutput(logits, tuple(hs) if hs is not None else None)

    def n_params(self) -> int:
        return sum(p.numel() for n_, p in self.named_parameters())

    # ------------------------------------------------------------ files
    def save(self, path: str) -> None:
        state = {k: v.detach().to(torch.float16).cpu() for k, v in self.state_dict().items()}
        torch.save({"format": "flashspec-tinygpt", "config": asdict(self.config), "state": state},
                   path)

    @classmethod
    def load(cls, path: str) -> "TinyGPT":
        blob = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(blob, dict) or blob.get("format") != "flashspec-tinygpt":
            raise ValueError("not a TinyGPT checkpoint")
        m = cls(GPTConfig(**blob["config"]))
        m.load_state_dict({k: v.to(torch.float32) for k, v in blob["state"].items()})
        m.eval()
        return m

    def round_weights(self) -> None:
        """Rounds every weight to float16 precision (what ``save`` stores)."""
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(p.to(torch.float16).to(p.dtype))


def _init(m: nn.Module) -> None:
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, std=0.02)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Embedding):
        nn.init.normal_(m.weight, std=0.02)
