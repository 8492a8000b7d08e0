#!/usr/bin/env python3
"""Derives the per-target workload presets from the Qwen3-8B fit.

usage: scripts/transfer_acceptance.py [-h] [--explain] [--sources FILE] [--presets FILE]

Prints one `gen` / `gen_target` / `gen_pair` line per derived preset, in the form
scripts/make_workloads.sh holds them; with --explain, the arithmetic behind each
line as Markdown tables (traces/data/WORKLOADS.md, "Other targets and HumanEval").
--sources reads the published acceptance lengths from FILE instead of
traces/data/acceptance-sources.csv; --presets reads the fitted Qwen3-8B presets
(the `gen code|math|dialogue strong` lines) from FILE instead of
scripts/make_workloads.sh.

Exit status: 0 done; 64 usage (the message and the usage line); 65 bad data (a
value, row or line that cannot be used, a duplicate row, a missing row or preset,
an acceptance the presets' form cannot reach), one line naming the file and line;
66 an input file missing or unreadable; 73 the output cannot be written; 70
internal error.  Nothing is printed on stdout unless all of it is.

No acceptance is published for the phone (Q4_0 models, Lever's runtime), so the
Qwen3-8B presets are fitted to Lever's Table 5: p_d = min(0.99, a r^(d-1)), a
depth-1 rate a per workload, one decay r per draft (configs/calibration/
oneplus12.lua).  Other targets and HumanEval are transferred through that fit:

  1. Accepted draft tokens per cycle: a top-1 chain of eight accepts
     A8(p) = sum_{j=1..8} prod_{d<=j} p_d; a published acceptance length tau
     counts the bonus token too, so its accepted draft tokens are tau - 1.
  2. Ratio: rho = (tau_T - 1) / (tau_Qwen3-8B - 1) on the benchmark matching the
     workload (MBPP -> HumanEval, the sources' code benchmark; GSM8K; MT-Bench),
     both at T = 0 with tree drafting, from one source where one holds both; the
     derived preset accepts rho x A8 of the Qwen3-8B preset.
  3. The depth profile: a new target brings a new draft, and the fit gives each
     draft its own decay, each workload its own depth-1 rate; so the derived
     preset keeps the workload's depth-1 rate a and solves the decay r' in
     [0.3, 1.2] (the calibration's bounds).  Where no r' in that range reaches
     the wanted length, r' stays at the bound and a moves (within 0.01..0.99).
     HumanEval on Qwen3-8B is a new workload of the same draft: it keeps the
     draft's decay r and solves a (AngelSlim's HumanEval figure over its GSM8K
     and MT-Bench figures, applied to the math and dialogue presets; the
     geometric mean of the two lengths).
  4. The bracket: a ratio that crosses sources gets a low and a high preset.
     The low end is the target's chain measurement over Qwen3-8B's tree
     measurement at the chain's temperature (a chain over a tree understates the
     ratio); the high end mirrors it about the central ratio in log
     (rho_hi = rho^2 / rho_lo).  They print as workloads W-lo and W-hi.
  5. Coverage follows the presets' rule: a' + 0.6 (1 - a').
Every root is found by bisection (each accepted length is monotone in a and in r).

EdgeLLM's model pairs (13B targets, the 7B model of their family as the draft;
`gen_pair` lines) come from the pair's own public per-token acceptance alpha by
the same steps: A8 = sum_{j=1..8} alpha^j (draft tokens only), the draft's decay 1
(a rate constant over depth) with the depth-1 rate solved, and translation, which
has no figure, bracketed around its nearest family: the family's own rate (high)
and that times one source's ratio of accepted draft tokens (low).

The sources file has the columns source, target, benchmark, value, temperature,
drafting, note, draft, quantity; quantity says what value measures: tau (an
acceptance length, bonus token included), alpha (a per-token acceptance rate,
the target's tokens fed back) or speedup (over autoregressive decoding).  A
file in the first format (source, target, benchmark, tau, temperature,
drafting, note) is still read: every row an acceptance length, its draft
named by its source.
"""
from __future__ import annotations

import argparse
import csv
import io
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

HOME = Path(__file__).resolve().parent.parent
SOURCES = HOME / "traces" / "data" / "acceptance-sources.csv"
PRESETS = HOME / "scripts" / "make_workloads.sh"
PROG = "transfer_acceptance"

DEPTH = 8
CAP = 0.99                      # no rate above (configs/calibration/oneplus12.lua)
DECAY_MIN, DECAY_MAX = 0.3, 1.2  # the calibration's bounds of a decay
RATE_MIN, RATE_MAX = 0.01, 0.99  # the calibration's bounds of a depth-1 rate
COVERAGE_SHARE = 0.6
FORM_TOL = 2e-5                 # a preset's rates against a r^(d-1) (6 digits each)
BASE = "qwen3-8b"

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
FITTED = ("code", "math", "dialogue")
HUMANEVAL_8B_SEED = 1401
# HumanEval on Qwen3-8B: AngelSlim's HumanEval figure over these, applied to these presets
HUMANEVAL_ANCHORS = {"math": "GSM8K", "dialogue": "MT-Bench"}


class Bad(Exception):
    """Bad input: message (naming the file and place) and exit status."""

    def __init__(self, msg: str, code: int = 65):
        super().__init__(msg)
        self.code = code


# --- the presets' form ----------------------------------------------------------------

def rates(a: float, r: float) -> list[float]:
    """p_d = min(0.99, a r^(d-1)), d = 1..8 (the calibration's `workload`)."""
    out, x = [], a
    for _ in range(DEPTH):
        x = min(CAP, x)
        out.append(x)
        x *= r
    return out


def accepted(p: list[float]) -> float:
    """A8: draft tokens a top-1 chain of eight accepts per cycle (tau8 - 1)."""
    e, q = 0.0, 1.0
    for x in p[:DEPTH]:
        q *= x
        e += q
    return e


def bisect(f, lo: float, hi: float) -> float:
    """The root of f, nondecreasing on [lo, hi] with f(lo) <= 0 <= f(hi)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return 0.5 * (lo + hi)


@dataclass
class Solved:
    a: float
    r: float
    moved: str  # "r", "a", "r then a", "a then r"

    @property
    def p(self) -> list[float]:
        # the presets carry 6 digits, as the fitted ones
        return [round(x, 6) for x in rates(self.a, self.r)]


def solve_decay(a: float, want: float) -> Solved:
    """A new draft: keep the depth-1 rate a, solve the decay r' for A8 = want;
    at a bound of r', move a."""
    g = lambda r: accepted(rates(a, r)) - want  # noqa: E731
    if g(DECAY_MIN) <= 0 <= g(DECAY_MAX):
        return Solved(a, bisect(g, DECAY_MIN, DECAY_MAX), "r")
    r = DECAY_MIN if g(DECAY_MIN) > 0 else DECAY_MAX
    h = lambda x: accepted(rates(x, r)) - want  # noqa: E731
    if not h(RATE_MIN) <= 0 <= h(RATE_MAX):
        raise Bad(f"wants {want:.4f} accepted draft tokens a cycle, out of the presets' "
                  f"reach (depth-1 rate {RATE_MIN}..{RATE_MAX}, decay {DECAY_MIN}..{DECAY_MAX})")
    return Solved(bisect(h, RATE_MIN, RATE_MAX), r, "r then a")


def solve_rate(r: float, want: float) -> Solved:
    """A new workload of the same draft: keep the decay r, solve the depth-1 rate;
    at a bound of the rate, move r."""
    g = lambda a: accepted(rates(a, r)) - want  # noqa: E731
    if g(RATE_MIN) <= 0 <= g(RATE_MAX):
        return Solved(bisect(g, RATE_MIN, RATE_MAX), r, "a")
    a = RATE_MIN if g(RATE_MIN) > 0 else RATE_MAX
    h = lambda x: accepted(rates(a, x)) - want  # noqa: E731
    if not h(DECAY_MIN) <= 0 <= h(DECAY_MAX):
        raise Bad(f"wants {want:.4f} accepted draft tokens a cycle, out of the presets' "
                  f"reach (depth-1 rate {RATE_MIN}..{RATE_MAX}, decay {DECAY_MIN}..{DECAY_MAX})")
    return Solved(a, bisect(h, DECAY_MIN, DECAY_MAX), "a then r")


def form_of(p: list[float]) -> tuple[float, float]:
    """(a, r) of a preset in the form: a = p_1, r = p_2 / p_1."""
    return p[0], p[1] / p[0]


# --- inputs ---------------------------------------------------------------------------

def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise Bad(f"{path}: no such file", 66)
    except IsADirectoryError:
        raise Bad(f"{path}: is a directory", 66)
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}", 66)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise Bad(f"{path}:{line}: not UTF-8 text")


def number(path: Path, line: int, what: str, text: str) -> float:
    try:
        x = float(text)
    except (TypeError, ValueError):
        raise Bad(f"{path}:{line}: {what} {text!r} is not a number")
    if not math.isfinite(x):
        raise Bad(f"{path}:{line}: {what} {text!r} is not a finite number")
    return x


PRESET_LINE = re.compile(r"^gen +(code|math|dialogue) +strong +(\S+)")


def fitted_8b(path: Path) -> dict[str, list[float]]:
    """The fitted Qwen3-8B strong presets (`gen W strong ACCEPT ...` lines)."""
    out: dict[str, list[float]] = {}
    where: dict[str, int] = {}
    for no, line in enumerate(read_text(path).split("\n"), 1):
        m = PRESET_LINE.match(line)
        if not m:
            continue
        w = m.group(1)
        if w in out:
            raise Bad(f"{path}:{no}: a second `gen {w} strong` line (the first: line "
                      f"{where[w]})")
        fields = m.group(2).split(",")
        if len(fields) != DEPTH:
            raise Bad(f"{path}:{no}: the {w} strong preset has {len(fields)} depths, "
                      f"expected {DEPTH}")
        p = [number(path, no, f"depth-{d} rate", x) for d, x in enumerate(fields, 1)]
        for d, x in enumerate(p, 1):
            if not 0 < x <= CAP:
                raise Bad(f"{path}:{no}: the {w} strong preset's depth-{d} rate {x:g} is "
                          f"outside (0, {CAP}]")
        a, r = form_of(p)
        if not DECAY_MIN <= r <= DECAY_MAX:
            raise Bad(f"{path}:{no}: the {w} strong preset's decay {r:.6f} is outside "
                      f"{DECAY_MIN}..{DECAY_MAX}")
        worst = max(abs(x - y) for x, y in zip(p, rates(a, r)))
        if worst > FORM_TOL:
            raise Bad(f"{path}:{no}: the {w} strong preset is not of the form "
                      f"min({CAP}, a r^(d-1)) (off by {worst:.2g})")
        out[w], where[w] = p, no
    for w in FITTED:
        if w not in out:
            raise Bad(f"{path}: no `gen {w} strong` line (the fitted Qwen3-8B preset)")
    return out


@dataclass(frozen=True)
class Row:
    source: str
    tau: float      # the figure, whatever its quantity (the name kept from tau-only files)
    line: int
    draft: str = ""

    @property
    def value(self) -> float:
        return self.tau


REQUIRED = ("source", "target", "benchmark", "value", "temperature", "drafting", "draft",
            "quantity")
# what a row's value measures: tau an acceptance length (accepted draft tokens per
# verification plus the bonus token), alpha a per-token acceptance rate (the share of
# the target's tokens the draft predicts, the target's tokens fed back), speedup a
# wall-clock speedup over autoregressive decoding
QUANTITIES = ("tau", "alpha", "speedup")


def drafting_kind(path: Path, line: int, text: str) -> str:
    t = text.lower()
    if re.search(r"\btree\b", t):
        return "tree"
    if re.search(r"\bchain\b", t):
        return "chain"
    raise Bad(f"{path}:{line}: drafting {text!r} names neither a tree nor a chain")


def sources(path: Path) -> dict[tuple, Row]:
    """(target, benchmark, temperature, tree|chain) -> row for the acceptance lengths
    (quantity tau), (target, benchmark, temperature, tree|chain, quantity) for the
    others; one row per key."""
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""), strict=True)
    try:
        header = reader.fieldnames
        if not header:
            raise Bad(f"{path}: empty (expected a header: {','.join(REQUIRED)},...)")
        # the first format (source,target,benchmark,tau,temperature,drafting,note):
        # every row an acceptance length, its draft unnamed
        legacy = "tau" in header and "value" not in header and "quantity" not in header
        for col in REQUIRED:
            if legacy and col in ("value", "quantity", "draft"):
                continue
            if col not in header:
                raise Bad(f"{path}:1: no column {col!r}")
        if len(set(header)) != len(header):
            raise Bad(f"{path}:1: a column named twice")
        out: dict[tuple, Row] = {}
        for rec in reader:
            no = reader.line_num
            if None in rec or any(rec.get(c) is None for c in header):
                raise Bad(f"{path}:{no}: {len(header)} fields expected")
            if legacy:
                rec = dict(rec, value=rec["tau"], quantity="tau", draft=rec["source"])
            for col in ("source", "target", "benchmark", "draft"):
                if not rec[col].strip():
                    raise Bad(f"{path}:{no}: empty {col}")
            q = rec["quantity"].strip()
            if q not in QUANTITIES:
                raise Bad(f"{path}:{no}: quantity {q!r} is none of {', '.join(QUANTITIES)}")
            x = number(path, no, q, rec["value"])
            if q == "tau" and not x > 1:
                raise Bad(f"{path}:{no}: tau {x:g} is not above 1 (an acceptance length "
                          f"counts the bonus token)")
            if q == "alpha" and not 0 < x < 1:
                raise Bad(f"{path}:{no}: alpha {x:g} is not in (0, 1) (a per-token "
                          f"acceptance rate)")
            if q == "speedup" and not x > 0:
                raise Bad(f"{path}:{no}: speedup {x:g} is not above 0")
            temp = number(path, no, "temperature", rec["temperature"])
            if temp < 0:
                raise Bad(f"{path}:{no}: temperature {temp:g} is negative")
            key = (rec["target"].strip(), rec["benchmark"].strip(), temp,
                   drafting_kind(path, no, rec["drafting"]))
            if q != "tau":
                key += (q,)
            if key in out:
                what = "" if q == "tau" else f", {q}"
                raise Bad(f"{path}:{no}: duplicate of line {out[key].line} ({key[0]}, "
                          f"{key[1]}, T = {key[2]:g}, {key[3]} drafting{what})")
            out[key] = Row(rec["source"].strip(), x, no, rec["draft"].strip())
    except csv.Error as e:
        raise Bad(f"{path}:{reader.line_num}: {e}")
    return out


# --- the ratios -----------------------------------------------------------------------

@dataclass
class Ratio:
    central: float
    cross: bool          # numerator and denominator from different sources
    line: int            # the target's row (central)
    lo: float | None = None
    hi: float | None = None
    lo_line: int = 0     # the target's chain row (the bracket)
    how: str = ""


def row(src: dict, path: Path, target: str, bench: str, temp: float, kind: str) -> Row:
    r = src.get((target, bench, temp, kind))
    if r is None:
        raise Bad(f"{path}: no row for {target} {bench} at temperature {temp:g} with "
                  f"{kind} drafting")
    return r


def ratio(src: dict, path: Path, target: str, bench: str) -> Ratio:
    num = row(src, path, target, bench, 0.0, "tree")
    den = row(src, path, BASE, bench, 0.0, "tree")
    rho = (num.tau - 1) / (den.tau - 1)
    if num.source == den.source:
        return Ratio(rho, False, num.line, how=f"{num.source}")
    # crossing sources: bracket with the target's chain measurement over Qwen3-8B's
    # tree measurement at the same temperature (lines of the file)
    chains = sorted((k[2], v) for k, v in src.items()
                    if len(k) == 4 and k[0] == target and k[1] == bench and k[3] == "chain")
    for temp, c in chains:
        d = src.get((BASE, bench, temp, "tree"))
        if d is not None:
            m = (c.tau - 1) / (d.tau - 1)
            lo, hi = sorted((m, rho * rho / m))
            return Ratio(rho, True, num.line, lo, hi, c.line,
                         f"{num.source} over {den.source}; bracket: {c.source} (chain) "
                         f"over {d.source} (tree) at T = {temp:g}")
    raise Bad(f"{path}: {target} {bench}: the ratio crosses sources ({num.source} over "
              f"{den.source}) and no {target} chain row with a {BASE} tree row at its "
              f"temperature bounds it")


# --- the derivation -------------------------------------------------------------------

@dataclass
class Derived:
    target: str
    workload: str        # code, ..., or code-lo / code-hi
    source: str          # the Qwen3-8B preset it moves
    ratio: float
    want: float          # accepted draft tokens per cycle
    solved: Solved
    seed: int
    how: str = ""

    @property
    def p(self) -> list[float]:
        return self.solved.p


def derive(sources_path: Path = SOURCES, presets_path: Path = PRESETS) -> list[Derived]:
    base = fitted_8b(presets_path)
    src = sources(sources_path)
    out: list[Derived] = []

    def at(line: int, what: str, f, *args):
        try:
            return f(*args)
        except Bad as e:
            raise Bad(f"{sources_path}:{line}: {what}: {e}") from None

    # HumanEval on Qwen3-8B: from the math and dialogue fits, a new workload of the
    # draft the code preset's decay belongs to
    he = row(src, sources_path, BASE, "HumanEval", 0.0, "tree")
    logs = []
    for w, b in HUMANEVAL_ANCHORS.items():
        other = row(src, sources_path, BASE, b, 0.0, "tree")
        if other.source != he.source:
            raise Bad(f"{sources_path}:{other.line}: {BASE} {b} is from {other.source}, "
                      f"its HumanEval row (line {he.line}) from {he.source}")
        logs.append(math.log(accepted(base[w]) * (he.tau - 1) / (other.tau - 1)))
    want = math.exp(sum(logs) / len(logs))
    s = at(he.line, "qwen3-8b humaneval", solve_rate, form_of(base["code"])[1], want)
    out.append(Derived(BASE, "humaneval", "code", want / accepted(base["code"]), want, s,
                       HUMANEVAL_8B_SEED, he.source))
    base_all = dict(base, humaneval=s.p)

    brackets: list[Derived] = []
    for t, shape in TARGETS.items():
        for w, (bench, off) in WORKLOADS.items():
            rho = ratio(src, sources_path, t, bench)
            a = form_of(base_all[w])[0]
            seed = shape["seed"] + off
            want = accepted(base_all[w]) * rho.central
            out.append(Derived(t, w, w, rho.central, want,
                               at(rho.line, f"{t} {w}", solve_decay, a, want), seed,
                               rho.how))
            if rho.cross:
                for end, x in (("lo", rho.lo), ("hi", rho.hi)):
                    line = rho.lo_line if end == "lo" else rho.line
                    want = accepted(base_all[w]) * x
                    brackets.append(Derived(t, f"{w}-{end}", w, x, want,
                                            at(line, f"{t} {w}-{end}", solve_decay, a,
                                               want),
                                            seed, rho.how))
    return out + brackets


# --- EdgeLLM's model pairs: 7B drafts of the 13B target's family ---------------------

# A 7B model of the target's own family is a separate draft (the `weak` class, as
# Qwen3-0.6B for Qwen3-8B) but far closer to its target.  No phone preset of such a
# pair was fitted, so these presets come from the pair's public per-token acceptance
# (alpha) by the same steps: accepted draft tokens of a top-1 chain of eight as the
# like-for-like quantity (A8 = sum_{j=1..8} alpha^j: an alpha counts draft tokens
# only, as tau - 1 does), one decay per draft with the depth-1 rate solved for each
# workload (`solve_rate`), coverage by the presets' rule.  The draft's decay is 1: a
# constant per-token rate, the geometric profile alpha^d, what a per-token rate
# measured with the target's tokens fed back means for a draft that decodes from the
# committed target prefix at every depth (no public per-depth figure of a 7B -> 13B
# pair was found; WORKLOADS.md).
PAIR_DECAY = 1.0
# target -> its draft, shape (configs/models/*.lua: layers, vocabulary; early exit at
# the middle layer), the pair whose public figures it takes, seed base
PAIRS = {
    "llama2-13b-chat": {"draft": "llama2-7b-chat", "layers": 40, "exit": 20,
                        "vocab": 32000, "figures": "llama2-13b-chat", "seed": 6000},
    # no public acceptance figure of Vicuna-7B against Vicuna-13B: the nearest public
    # pair's (same sizes, same architecture, both LLaMA fine-tunes)
    "vicuna-13b": {"draft": "vicuna-7b", "layers": 40, "exit": 20, "vocab": 32000,
                   "figures": "llama2-13b-chat", "seed": 7000},
}
# workload -> (the benchmark of the pair's figure, seed offset)
PAIR_WORKLOADS = {"cnndm": ("CNN/DailyMail", 101), "squad": ("SQuAD", 201),
                  "truthfulqa": ("TruthfulQA", 301)}
# Translation has no public figure for either pair: a bracket around its nearest
# family, open-domain QA (TruthfulQA, no context passage, like Spec-Bench's Natural
# Questions).  High end: the nearest family's own rate (ratio 1).  Low end: one
# source's ratio of accepted draft tokens, translation over QA, for a separate small
# draft of a 13B target (Spec-Bench's SpS row; below).
TRANSLATION = ("translation", "TruthfulQA", 401)
# Spec-Bench's leaderboard gives SpS's speedup per subtask and its accepted length
# over all subtasks only: at one cost per decoding step across subtasks (the same
# draft, draft length and target), a subtask's acceptance length is the overall one
# scaled by its speedup over the overall speedup.
BRACKET_SRC = {"target": "vicuna-13b", "num": "Translation", "den": "Question Answering",
               "all": "Overall", "kind": "chain"}


def alpha_accepted(alpha: float) -> float:
    """A8 of a constant per-token rate: sum_{j=1..8} alpha^j (not capped: a rate above
    the presets' cap is out of their reach, not lowered to it)."""
    return sum(alpha ** j for j in range(1, DEPTH + 1))


def translation_ratio(src: dict, path: Path) -> tuple[float, int, str]:
    """(rho, line, how): Spec-Bench's translation over QA, in accepted draft tokens."""
    b = BRACKET_SRC
    got = {}
    for name, bench, q in (("num", b["num"], "speedup"), ("den", b["den"], "speedup"),
                           ("all", b["all"], "speedup"), ("tau", b["all"], "tau")):
        key = (b["target"], bench, 0.0, b["kind"]) + (() if q == "tau" else (q,))
        r = src.get(key)
        if r is None:
            raise Bad(f"{path}: no row for {b['target']} {bench} at temperature 0 with "
                      f"{b['kind']} drafting, quantity {q}")
        got[name] = r
    first = got["num"]
    for r in got.values():
        if r.source != first.source or r.draft != first.draft:
            raise Bad(f"{path}:{r.line}: the translation bracket's rows must come from one "
                      f"source and one draft ({first.source}, {first.draft}; line "
                      f"{first.line})")
    tau = {k: got["tau"].value * got[k].value / got["all"].value for k in ("num", "den")}
    for k in ("num", "den"):
        if not tau[k] > 1:
            raise Bad(f"{path}:{got[k].line}: {b['target']} {got[k].line}: the scaled "
                      f"acceptance length {tau[k]:.4f} is not above 1")
    rho = (tau["num"] - 1) / (tau["den"] - 1)
    return rho, first.line, f"{first.source} ({first.draft}), scaled by speedup"


def derive_pairs(sources_path: Path = SOURCES) -> list[Derived]:
    """The presets of EdgeLLM's pairs: per target, one per workload with a public
    figure, and translation's low and high end."""
    src = sources(sources_path)
    out: list[Derived] = []

    def alpha_row(fig: str, bench: str) -> Row:
        r = src.get((fig, bench, 0.0, "chain", "alpha"))
        if r is None:
            raise Bad(f"{sources_path}: no alpha row for {fig} {bench} at temperature 0 "
                      f"with chain drafting")
        return r

    def solved(line: int, what: str, want: float) -> Solved:
        try:
            return solve_rate(PAIR_DECAY, want)
        except Bad as e:
            raise Bad(f"{sources_path}:{line}: {what}: {e}") from None

    rho_lo, lo_line, lo_how = translation_ratio(src, sources_path)
    for t, pr in PAIRS.items():
        for w, (bench, off) in PAIR_WORKLOADS.items():
            r = alpha_row(pr["figures"], bench)
            want = alpha_accepted(r.value)
            out.append(Derived(t, w, f"{bench} alpha {r.value:g}", 1.0, want,
                               solved(r.line, f"{t} {w}", want), pr["seed"] + off,
                               r.source))
        name, near, off = TRANSLATION
        r = alpha_row(pr["figures"], near)
        for end, rho, line in (("lo", rho_lo, lo_line), ("hi", 1.0, r.line)):
            want = alpha_accepted(r.value) * rho
            out.append(Derived(t, f"{name}-{end}", f"{near} alpha {r.value:g}", rho, want,
                               solved(line, f"{t} {name}-{end}", want), pr["seed"] + off,
                               lo_how if end == "lo" else r.source))
    return out


def gen_line(d: Derived) -> str:
    a = d.p[0]
    cov = round(a + COVERAGE_SHARE * (1.0 - a), 6)
    acc = ",".join(f"{x:.6f}" for x in d.p)
    if d.target == BASE:
        return f"gen {d.workload} strong {acc} {cov:.6f} {d.seed} {BASE}-eagle3-q4_0"
    if d.target in PAIRS:
        s = PAIRS[d.target]
        return (f"gen_pair {d.target} {s['draft']} {s['layers']} {s['exit']} {s['vocab']} "
                f"{d.workload} {acc} {cov:.6f} {d.seed}")
    s = TARGETS[d.target]
    return (f"gen_target {d.target} {s['layers']} {s['exit']} {s['vocab']} {d.workload} "
            f"{acc} {cov:.6f} {d.seed}")


def explain(rows: list[Derived]) -> str:
    out = ["| target | workload | from the Qwen3-8B preset | ratio of accepted draft "
           "tokens | phone tau (8-chain) | depth-1 rate a | decay r | moved | depth 1..3 |",
           "|---|---|---|---|---|---|---|---|---|"]
    for d in rows:
        p = d.p
        out.append(f"| {d.target} | {d.workload} | {d.source} | {d.ratio:.3f} | "
                   f"{1 + accepted(p):.3f} | {d.solved.a:.3f} | {d.solved.r:.3f} | "
                   f"{d.solved.moved} | " + " ".join(f"{x:.3f}" for x in p[:3]) + " |")
    return "\n".join(out) + "\n"


def explain_pairs(rows: list[Derived]) -> str:
    out = ["| target | draft | workload | from | ratio of accepted draft tokens | "
           "phone tau (8-chain) | depth-1 rate a | decay r | source |",
           "|---|---|---|---|---|---|---|---|---|"]
    for d in rows:
        out.append(f"| {d.target} | {PAIRS[d.target]['draft']} | {d.workload} | {d.source} | "
                   f"{d.ratio:.3f} | {1 + accepted(d.p):.3f} | {d.solved.a:.3f} | "
                   f"{d.solved.r:.3f} | {d.how} |")
    return "\n".join(out) + "\n"


class ArgParser(argparse.ArgumentParser):
    """argparse, with a usage error as exit status 64 (its own exits with 2)."""

    def error(self, message: str):
        raise Bad(f"{message}\n{' '.join(self.format_usage().split())}", 64)


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = ArgParser(prog="scripts/transfer_acceptance.py", allow_abbrev=False,
                   description="Derives the per-target workload presets from the Qwen3-8B "
                               "fit (traces/data/WORKLOADS.md).")
    ap.add_argument("--explain", action="store_true",
                    help="print the arithmetic as Markdown tables instead of the lines")
    ap.add_argument("--sources", type=Path, default=SOURCES, metavar="FILE",
                    help="published acceptance lengths (default "
                         "traces/data/acceptance-sources.csv)")
    ap.add_argument("--presets", type=Path, default=PRESETS, metavar="FILE",
                    help="the fitted Qwen3-8B presets, `gen W strong` lines (default "
                         "scripts/make_workloads.sh)")
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    try:
        args = parse_args(argv)
        rows = derive(args.sources, args.presets)
        pairs = derive_pairs(args.sources)
        text = (explain(rows) + "\n" + explain_pairs(pairs) if args.explain
                else "".join(gen_line(d) + "\n" for d in rows + pairs))
    except Bad as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return e.code
    except Exception as e:  # noqa: BLE001 -- one line, never a traceback
        print(f"{PROG}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 70
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        print(f"{PROG}: cannot write the output: {e.strerror or e}", file=sys.stderr)
        return 73
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
