#!/usr/bin/python3
"""Trains the tiny real draft/target pair that flashspec's real traces come from.

    /usr/bin/python3 scripts/train_tiny_pair.py [--out traces/models] [--seed 1]

Everything comes from files any Debian 12 machine has, plus a generator:

* code  -- the Python standard library's own top-level modules (``*.py`` in
           the running interpreter's stdlib directory, /usr/lib/python3.11);
* prose -- Perl's bundled POD documentation (/usr/share/perl/5.*/**.pod) with
           markup stripped, then the licence texts in /usr/share/common-licenses;
* math  -- arithmetic word problems with worked answers, generated here from a
           seeded random.Random.

One tokenizer (byte-level BPE, 512 tokens, tokenizer.py) is learned on a mix of
the three; both models use it.  Target: TinyGPT with 4 layers, width 64, 4
heads, 128 positions (~0.24 M parameters).  Draft: 1 layer, width 32, 2 heads
(~0.03 M parameters).  Both are trained with next-token cross-entropy on
random 128-token windows drawn equally from the three domains (AdamW, linear
warm-up then cosine decay), then rounded to float16 (the saved weights are the
model).  Finally an early-exit predictor is trained for target layers 2 and 3
with the Lever loss (predictor.py) on the frozen rounded target, with the
draft's top-8 as candidate sets.

Held-out material (every 10th code file, every 10th prose paragraph, and
problems from a separate generator seed) gives validation losses and the
prompt files ``prompts-{code,prose,math}.jsonl`` (8 prompts each, at most 48
tokens, stored as token ids and text).

Outputs in --out: tokenizer.json, target.pt, draft.pt, predictor.pt and the
three prompt files.  Deterministic: fixed seeds, torch deterministic
algorithms, a fixed thread count (--threads, 2).  On two shared CPU cores with
Debian's reference BLAS the default schedule took 443 s (7.4 minutes) on an
idle machine; several times that when the cores are busy with other work.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import random
import re
import sys
import sysconfig
import time
from typing import Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from traces.recorder import setup_torch  # noqa: E402
from traces.recorder.adapter import tinygpt_adapter  # noqa: E402
from traces.recorder.model import GPTConfig, TinyGPT  # noqa: E402
from traces.recorder.predictor import candidate_agreement, train_predictor  # noqa: E402
from traces.recorder.tokenizer import BPETokenizer  # noqa: E402

DOMAINS = ("code", "prose", "math")
SEQ = 128
PROMPT_TOKENS = 48
N_PROMPTS = 8
TRAIN_CHARS = 450_000  # per domain


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ------------------------------------------------------------------ corpora
def code_corpus() -> Tuple[str, List[str]]:
    """(training text, held-out file texts) from the stdlib's top-level modules."""
    files = sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py")))
    if len(files) < 20:
        sys.exit("train_tiny_pair: Python standard library sources not found")
    train, held = [], []
    size = 0
    for i, f in enumerate(files):
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if i % 10 == 0:
            held.append(text)
        elif size < TRAIN_CHARS:
            train.append(text)
            size += len(text)
    return "\n".join(train)[:TRAIN_CHARS], held


POD_CODE = re.compile(r"[A-Z]<+\s*([^<>]*?)\s*>+")


def pod_paragraphs(text: str) -> List[str]:
    """Prose paragraphs of a POD document: commands and verbatim blocks dropped."""
    out = []
    for para in re.split(r"\n\s*\n", text):
        if not para.strip() or para.startswith(("=", " ", "\t")):
            continue
        prev = None
        while prev != para:
            prev, para = para, POD_CODE.sub(r"\1", para)
        para = " ".join(para.split())
        if len(para) > 40:
            out.append(para)
    return out


def prose_corpus() -> Tuple[str, List[str]]:
    paras: List[str] = []
    for f in sorted(glob.glob("/usr/share/perl/5.*/**/*.pod", recursive=True)):
        with open(f, encoding="utf-8", errors="replace") as fh:
            paras.extend(pod_paragraphs(fh.read()))
    for f in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(f):
            with open(f, encoding="utf-8", errors="replace") as fh:
                paras.extend(" ".join(p.split()) for p in re.split(r"\n\s*\n", fh.read())
                             if len(p.strip()) > 40)
    if len(paras) < 100:
        sys.exit("train_tiny_pair: no prose found (perl-modules or common-licenses)")
    held = [p for i, p in enumerate(paras) if i % 10 == 0]
    train = "\n\n".join(p for i, p in enumerate(paras) if i % 10 != 0)
    return train[:TRAIN_CHARS], held


NAMES = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lena",
         "Milo", "Nia", "Omar", "Pia", "Raj", "Sara", "Tom", "Uma"]
ITEMS = ["apples", "books", "coins", "pens", "stamps", "cards", "marbles", "shells", "eggs",
         "cookies", "stickers", "bottles"]


def math_problem(r: random.Random) -> str:
    """One word problem with a worked answer."""
    n1, n2 = r.sample(NAMES, 2)
    it = r.choice(ITEMS)
    kind = r.randrange(5)
    if kind == 0:
        a, b = r.randint(2, 60), r.randint(2, 40)
        q = f"{n1} has {a} {it}. {n1} buys {b} more {it}. How many {it} does {n1} have now?"
        w, ans = f"{a} + {b} = {a + b}.", a + b
    elif kind == 1:
        a = r.randint(10, 90)
        b = r.randint(1, a - 1)
        q = f"{n1} had {a} {it} and gave {b} of them to {n2}. How many {it} does {n1} have left?"
        w, ans = f"{a} - {b} = {a - b}.", a - b
    elif kind == 2:
        a, b = r.randint(2, 12), r.randint(2, 12)
        q = f"A box holds {a} {it}. How many {it} are in {b} boxes?"
        w, ans = f"{a} * {b} = {a * b}.", a * b
    elif kind == 3:
        b, c = r.randint(2, 9), r.randint(2, 12)
        a = b * c
        q = f"{n1} shares {a} {it} equally among {b} friends. How many {it} does each friend get?"
        w, ans = f"{a} / {b} = {c}.", c
    else:
        a, b, c = r.randint(2, 12), r.randint(2, 9), r.randint(1, 30)
        q = (f"{n1} collects {a} {it} every day for {b} days and then finds {c} more. "
             f"How many {it} does {n1} have in total?")
        w, ans = f"{a} * {b} = {a * b}. {a * b} + {c} = {a * b + c}.", a * b + c
    return f"Question: {q}\nAnswer: {w} The answer is {ans}.\n\n"


def math_corpus(seed: int) -> Tuple[str, List[str]]:
    r = random.Random(seed)
    text, n = [], 0
    while n < TRAIN_CHARS:
        p = math_problem(r)
        text.append(p)
        n += len(p)
    held_r = random.Random(seed + 7919)
    return "".join(text)[:TRAIN_CHARS], [math_problem(held_r) for _ in range(200)]


# ------------------------------------------------------------------ prompts
def make_prompts(domain: str, held: List[str], tok: BPETokenizer) -> List[Dict]:
    """N_PROMPTS prompts of at most PROMPT_TOKENS tokens from held-out text."""
    out: List[Dict] = []
    if domain == "code":
        for text in held:
            m = re.search(r"^def [a-z_]+\(", text, re.M)
            if m:
                ids = tok.encode(text[m.start():])[:40]
                out.append({"tokens": ids})
            if len(out) == N_PROMPTS:
                break
    elif domain == "prose":
        for para in held:
            letters = sum(c.isalpha() or c == " " for c in para)
            if len(para) > 400 and para[0].isupper() and letters > 0.9 * len(para):
                out.append({"tokens": tok.encode(para)[:32]})
            if len(out) == N_PROMPTS:
                break
    else:
        for prob in held:
            q = prob[:prob.index("Answer:") + len("Answer:")]
            ids = tok.encode(q)
            if len(ids) <= PROMPT_TOKENS:
                out.append({"tokens": ids})
            if len(out) == N_PROMPTS:
                break
    for o in out:
        o["text"] = tok.decode(o["tokens"])
    if len(out) < N_PROMPTS:
        sys.exit(f"train_tiny_pair: only {len(out)} {domain} prompts found")
    return out


# ------------------------------------------------------------------ training
def batches(streams: List[torch.Tensor], batch: int, g: torch.Generator):
    """Endless random SEQ+1 windows, domains in turn within each batch."""
    while True:
        rows = []
        for i in range(batch):
            s = streams[i % len(streams)]
            j = int(torch.randint(0, len(s) - SEQ - 1, (1,), generator=g))
            rows.append(s[j:j + SEQ + 1])
        yield torch.stack(rows)


def train_lm(model: TinyGPT, streams: List[torch.Tensor], steps: int, batch: int, lr: float,
             seed: int, what: str) -> None:
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=0.01)
    warm = max(1, steps // 12)
    it = batches(streams, batch, g)
    model.train()
    t0 = time.time()
    for step in range(steps):
        scale = (step + 1) / warm if step < warm else \
            0.1 + 0.45 * (1 + math.cos(math.pi * (step - warm) / max(1, steps - warm)))
        for pg in opt.param_groups:
            pg["lr"] = lr * scale
        x = next(it)
        logits = model(x[:, :-1]).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            log(f"{what}: step {step}/{steps} loss {loss.item():.3f} "
                f"({time.time() - t0:.0f} s)")
    model.eval()
    model.round_weights()


@torch.no_grad()
def eval_loss(model: TinyGPT, stream: torch.Tensor, n: int = 8) -> float:
    total = 0.0
    for i in range(n):
        j = (len(stream) - SEQ - 1) * i // n
        x = stream[j:j + SEQ + 1].unsqueeze(0)
        logits = model(x[:, :-1]).logits
        total += F.cross_entropy(logits[0], x[0, 1:]).item()
    return total / n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "traces", "models"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--target-steps", type=int, default=840)
    ap.add_argument("--draft-steps", type=int, default=600)
    ap.add_argument("--predictor-steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=9, help="windows per step (a multiple of 3)")
    args = ap.parse_args()
    setup_torch(args.threads)
    os.makedirs(args.out, exist_ok=True)
    t_start = time.time()

    corpora = {"code": code_corpus(), "prose": prose_corpus(), "math": math_corpus(args.seed)}
    for d in DOMAINS:
        log(f"{d}: {len(corpora[d][0])} training characters, {len(corpora[d][1])} held-out pieces")
    tok = BPETokenizer.train([corpora[d][0][:150_000] for d in DOMAINS], 512,
                             name="flashspec-bpe512")
    tok.save(os.path.join(args.out, "tokenizer.json"))
    streams = [torch.tensor(tok.encode(corpora[d][0]), dtype=torch.long) for d in DOMAINS]
    held = {d: torch.tensor(tok.encode("\n\n".join(corpora[d][1])[:60_000]), dtype=torch.long)
            for d in DOMAINS}
    log("tokenizer: 512 tokens; training tokens " +
        ", ".join(f"{d} {len(s)}" for d, s in zip(DOMAINS, streams)))
    for d in DOMAINS:
        with open(os.path.join(args.out, f"prompts-{d}.jsonl"), "w", encoding="utf-8") as f:
            for p in make_prompts(d, corpora[d][1], tok):
                f.write(json.dumps(p, ensure_ascii=False) + "\n")

    torch.manual_seed(args.seed)
    target = TinyGPT(GPTConfig(vocab=512, d_model=64, n_layer=4, n_head=4, max_pos=SEQ,
                               name="flashspec-tiny-target-4l"))
    torch.manual_seed(args.seed + 1)
    draft = TinyGPT(GPTConfig(vocab=512, d_model=32, n_layer=1, n_head=2, max_pos=SEQ,
                              name="flashspec-tiny-draft-1l"))
    log(f"target {target.n_params()} parameters, draft {draft.n_params()} parameters")
    t0 = time.time()
    train_lm(target, streams, args.target_steps, args.batch, 3e-3, args.seed + 10, "target")
    t_target = time.time() - t0
    t0 = time.time()
    train_lm(draft, streams, args.draft_steps, args.batch, 6e-3, args.seed + 20, "draft")
    t_draft = time.time() - t0
    target.save(os.path.join(args.out, "target.pt"))
    draft.save(os.path.join(args.out, "draft.pt"))
    for d in DOMAINS:
        log(f"held-out loss {d}: target {eval_loss(target, held[d]):.3f}, "
            f"draft {eval_loss(draft, held[d]):.3f} nats/token")

    t0 = time.time()
    ta, da = tinygpt_adapter(target, torch.float32), tinygpt_adapter(draft, torch.float32)
    g = torch.Generator().manual_seed(args.seed + 30)
    seqs = []
    for i in range(48):
        s = streams[i % 3]
        j = int(torch.randint(0, len(s) - SEQ, (1,), generator=g))
        seqs.append(s[j:j + SEQ].tolist())
    pred = train_predictor(ta, da, seqs, [2, 3], target.tok_emb.weight, k=8,
                           steps=args.predictor_steps, seed=args.seed, log=log)
    pred.save(os.path.join(args.out, "predictor.pt"))
    t_pred = time.time() - t0
    # candidate-set agreement on held-out windows: trained predictor vs logit lens
    from traces.recorder.adapter import causal_mask
    for layer in (2, 3):
        acc_p = acc_l = 0.0
        for d in DOMAINS:
            x = held[d][:SEQ]
            n = len(x)
            zf, hs = ta.run(x, causal_mask(n), torch.arange(n), hidden=True)
            zd, _ = da.run(x, causal_mask(n), torch.arange(n))
            cand = torch.topk(zd, 8, dim=-1).indices
            acc_p += candidate_agreement(pred, ta, layer, hs[layer], zf, cand) / 3
            acc_l += candidate_agreement(None, ta, layer, hs[layer], zf, cand) / 3
        log(f"exit layer {layer}: best-candidate agreement with the final layer: predictor "
            f"{acc_p:.3f}, logit lens {acc_l:.3f} (held-out)")
    log(f"training time: target {t_target:.0f} s, draft {t_draft:.0f} s, predictor "
        f"{t_pred:.0f} s, total {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
