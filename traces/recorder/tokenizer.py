"""A small deterministic byte-level BPE tokenizer.

Token ids 0..255 are the raw bytes; ids 256.. are merges, learned in order.
Text is first split into chunks (a run of letters/underscores with at most one
leading space, a single digit with at most one leading space, a run of other
symbols with at most one leading space, or a run of whitespace); merges never
cross a chunk boundary.  Digits stay single so that arithmetic remains learnable
by a tiny model.

Training counts adjacent pairs over the distinct chunks weighted by frequency
and repeatedly merges the most frequent pair; ties go to the smaller pair (by
ids), so the same corpus always gives the same merges.  Pair counts are updated
incrementally (only chunks containing the merged pair are revisited), which
keeps training a few hundred merges on a few MB of text to seconds.

The tokenizer is saved as JSON: {"name": ..., "merges": [[a, b], ...]}.
Decoding is lossless for any text (invalid UTF-8 from a partial sequence is
replaced when turned back into str).
"""
from __future__ import annotations

import collections
import json
import re
from typing import Dict, Iterable, List, Tuple

CHUNK_RE = re.compile(r" ?[A-Za-z_]+| ?[0-9]| ?[^\sA-Za-z0-9_]+|\s+")

Pair = Tuple[int, int]


def chunks(text: str) -> List[bytes]:
    """Splits text into the chunks merges stay within (covers every character)."""
    return [m.group(0).encode("utf-8") for m in CHUNK_RE.finditer(text)]


class BPETokenizer:
    """Byte-level BPE: ``vocab_size = 256 + len(merges)``."""

    def __init__(self, merges: List[Pair], name: str = "bpe") -> None:
        self.name = name
        self.merges = [tuple(m) for m in merges]
        self.rank: Dict[Pair, int] = {tuple(m): i for i, m in enumerate(self.merges)}
        self.pieces: List[bytes] = [bytes([i]) for i in range(256)]
        for a, b in self.merges:
            self.pieces.append(self.pieces[a] + self.pieces[b])
        self._cache: Dict[bytes, List[int]] = {}

    @property
    def vocab_size(self) -> int:
        return 256 + len(self.merges)

    # ------------------------------------------------------------ training
    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, name: str = "bpe") -> "BPETokenizer":
        """Learns ``vocab_size - 256`` merges from texts (deterministic)."""
        freq: Dict[bytes, int] = collections.Counter()
        for t in texts:
            freq.update(chunks(t))
        words = [list(w) for w in sorted(freq)]
        counts = [freq[bytes(w)] for w in words]
        pairs: Dict[Pair, int] = collections.Counter()
        where: Dict[Pair, set] = collections.defaultdict(set)
        for i, w in enumerate(words):
            for p in zip(w, w[1:]):
                pairs[p] += counts[i]
                where[p].add(i)
        merges: List[Pair] = []
        next_id = 256
        while next_id < vocab_size and pairs:
            best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
            if best[1] < 2:
                break
            pair = best[0]
            merges.append(pair)
            for i in sorted(where.pop(pair, ())):
                w, c = words[i], counts[i]
                for p in zip(w, w[1:]):
                    pairs[p] -= c
                    if pairs[p] <= 0:
                        del pairs[p]
                words[i] = w = _merge(w, pair, next_id)
                for p in zip(w, w[1:]):
                    pairs[p] += c
                    where[p].add(i)
            pairs.pop(pair, None)
            next_id += 1
        return cls(merges, name)

    # ------------------------------------------------------------ use
    def encode(self, text: str) -> List[int]:
        out: List[int] = []
        for c in chunks(text):
            ids = self._cache.get(c)
            if ids is None:
                ids = self._encode_chunk(c)
                if len(self._cache) < 200000:
                    self._cache[c] = ids
            out.extend(ids)
        return out

    def _encode_chunk(self, c: bytes) -> List[int]:
        w = list(c)
        while len(w) > 1:
            best = min(zip(w, w[1:]), key=lambda p: self.rank.get(p, 1 << 30))
            r = self.rank.get(best)
            if r is None:
                break
            w = _merge(w, best, 256 + r)
        return w

    def decode(self, ids: Iterable[int]) -> str:
        return b"".join(self.pieces[i] for i in ids).decode("utf-8", errors="replace")

    # ------------------------------------------------------------ files
    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"name": self.name, "merges": [list(m) for m in self.merges]}, f,
                      separators=(",", ":"))
            f.write("\n")

    @classmethod
    def load(cls, path: str) -> "BPETokenizer":
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        merges = d["merges"]
        for i, m in enumerate(merges):
            if (len(m) != 2 or not all(isinstance(x, int) and 0 <= x < 256 + i for x in m)):
                raise ValueError(f"merge {i} is not a pair of earlier token ids")
        return cls([tuple(m) for m in merges], d.get("name", "bpe"))


def _merge(w: List[int], pair: Pair, new: int) -> List[int]:
    out: List[int] = []
    i, n = 0, len(w)
    while i < n:
        if i + 1 < n and w[i] == pair[0] and w[i + 1] == pair[1]:
            out.append(new)
            i += 2
        else:
            out.append(w[i])
            i += 1
    return out
