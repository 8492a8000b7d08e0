#!/usr/bin/env python3
"""Derives the per-target workload presets from the Qwen3-8B fit.

usage: scripts/transfer_acceptance.py [--explain]

Prints one `gen` line per derived preset, in the form scripts/make_workloads.sh
holds them; with --explain, the arithmetic behind each line as a Markdown table
(traces/data/WORKLOADS.md, "Other targets and HumanEval").

No acceptance is published for the phone (Q4_0 models, Lever's runtime), so the
Qwen3-8B presets are fitted to Lever's Table 5.  Other targets are transferred
through that fit: what moves is the acceptance length tau that public reports
give for each target's EAGLE-3 draft, taken as a ratio to Qwen3-8B's figure from
the same source (traces/data/acceptance-sources.csv), so that what the fit learnt
about the phone (quantisation, thinking-mode prose, the runtime) carries over.

The arithmetic, per (target T, workload w):
  1. tau8(p) = 1 + sum_{j=1..8} prod_{d<=j} p_d: the tokens a top-1 chain of eight
     yields per cycle when depth d's draft token is right with probability p_d
     (given its parent was).
  2. The target's phone tau is tau8(p of Qwen3-8B, w) x tau_src(T, b) / tau_src(Qwen3-8B, b),
     b the benchmark of w (MBPP -> HumanEval, the source's code benchmark;
     GSM8K; MT-Bench).  The Llama-3.1-8B ratio crosses sources (the EAGLE-3 paper
     over AngelSlim's Qwen3-8B row; no one source reports both).
  3. HumanEval for Qwen3-8B (not in Table 5): the AngelSlim HumanEval row over its
     GSM8K and MT-Bench rows, each applied to the fitted math and dialogue presets;
     the geometric mean of the two, moved from the code (MBPP) preset.
  4. The per-depth rates that give that tau: the source preset's rates with one
     common shift delta of their log-odds, logit p'_d = logit p_d + delta (solved
     with scipy's Brent root finder).  One number per benchmark cannot say which
     depths change, so the shift moves every depth's odds by the same factor.
  5. Coverage follows the presets' rule: a' + 0.6 (1 - a'), a' the new depth-1 rate.
"""
from __future__ import annotations

import csv
import math
import re
import sys
from pathlib import Path

from scipy.optimize import brentq

HOME = Path(__file__).resolve().parent.parent
DEPTH = 8
COVERAGE_SHARE = 0.6

# Target shape per target profile (configs/models/*.lua: layers, vocabulary; the
# early-exit predictor at the middle layer, as the Qwen3-8B presets).
TARGETS = {
    "llama3.1-8b": {"layers": 32, "exit": 16, "vocab": 128256, "seed": 3000},
    "qwen3-4b": {"layers": 36, "exit": 18, "vocab": 151936, "seed": 4000},
    "qwen3-14b": {"layers": 40, "exit": 20, "vocab": 151936, "seed": 5000},
}
# workload -> (source benchmark, seed offset); HumanEval is the fourth workload
WORKLOADS = {"code": ("HumanEval", 102), "math": ("GSM8K", 201),
             "dialogue": ("MT-Bench", 301), "humaneval": ("HumanEval", 401)}
HUMANEVAL_8B_SEED = 1401


def tau8(p: list[float]) -> float:
    e, q = 1.0, 1.0
    for x in p[:DEPTH]:
        q *= x
        e += q
    return e


def shift(p: list[float], delta: float) -> list[float]:
    return [1.0 / (1.0 + math.exp(-(math.log(x / (1.0 - x)) + delta))) for x in p]


def solve(p: list[float], want: float) -> tuple[list[float], float]:
    if not 1.0 < want < 1.0 + DEPTH:
        raise SystemExit(f"transfer_acceptance: tau {want:.4f} outside (1, {1 + DEPTH})")
    delta = brentq(lambda d: tau8(shift(p, d)) - want, -30.0, 30.0, xtol=1e-12)
    # the presets carry 6 digits, as the fitted ones
    return [round(x, 6) for x in shift(p, delta)], delta


def fitted_8b() -> dict[str, list[float]]:
    text = (HOME / "scripts" / "make_workloads.sh").read_text()
    out = {m.group(1): [float(x) for x in m.group(2).split(",")]
           for m in re.finditer(r"^gen (code|math|dialogue) +strong +([0-9.,]+) ", text, re.M)}
    if len(out) != 3:
        raise SystemExit("transfer_acceptance: the fitted Qwen3-8B strong presets are not "
                         "in scripts/make_workloads.sh")
    return out


def sources() -> dict[tuple[str, str], float]:
    with open(HOME / "traces" / "data" / "acceptance-sources.csv", newline="") as f:
        return {(r["target"], r["benchmark"]): float(r["tau"]) for r in csv.DictReader(f)}


def derive() -> list[dict]:
    base, src = fitted_8b(), sources()
    rows = []
    # HumanEval on Qwen3-8B: from the math and dialogue fits, moved from the code preset
    anchors = {"math": "GSM8K", "dialogue": "MT-Bench"}
    logs = [math.log(tau8(base[w]) * src[("qwen3-8b", "HumanEval")] / src[("qwen3-8b", b)])
            for w, b in anchors.items()]
    want = math.exp(sum(logs) / len(logs))
    p, delta = solve(base["code"], want)
    base_all = dict(base, humaneval=p)
    rows.append({"target": "qwen3-8b", "workload": "humaneval", "from": "code",
                 "ratio": want / tau8(base["code"]), "tau": want, "delta": delta, "p": p,
                 "seed": HUMANEVAL_8B_SEED})
    for t, shape in TARGETS.items():
        for w, (bench, off) in WORKLOADS.items():
            ratio = src[(t, bench)] / src[("qwen3-8b", bench)]
            want = tau8(base_all[w]) * ratio
            p, delta = solve(base_all[w], want)
            rows.append({"target": t, "workload": w, "from": w, "ratio": ratio, "tau": want,
                         "delta": delta, "p": p, "seed": shape["seed"] + off})
    return rows


def gen_line(r: dict) -> str:
    cov = round(r["p"][0] + COVERAGE_SHARE * (1.0 - r["p"][0]), 6)
    acc = ",".join(f"{x:.6f}" for x in r["p"])
    if r["target"] == "qwen3-8b":
        return f"gen {r['workload']} strong {acc} {cov:.6f} {r['seed']} qwen3-8b-eagle3-q4_0"
    s = TARGETS[r["target"]]
    return (f"gen_target {r['target']} {s['layers']} {s['exit']} {s['vocab']} {r['workload']} "
            f"{acc} {cov:.6f} {r['seed']}")


def main() -> None:
    rows = derive()
    if sys.argv[1:] == ["--explain"]:
        print("| target | workload | from the Qwen3-8B preset | tau ratio | phone tau (8-chain) "
              "| log-odds shift | depth 1..3 |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['target']} | {r['workload']} | {r['from']} | {r['ratio']:.3f} | "
                  f"{r['tau']:.3f} | {r['delta']:+.3f} | "
                  + " ".join(f"{x:.3f}" for x in r["p"][:3]) + " |")
    elif sys.argv[1:]:
        raise SystemExit(__doc__.split("\n\n")[1])
    else:
        for r in rows:
            print(gen_line(r))


if __name__ == "__main__":
    main()
