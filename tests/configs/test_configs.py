#!/usr/bin/env python3
"""Checks of the shipped profiles (configs/) and the bundled workload traces.

usage: test_configs.py CASE   (environment: FLASHSPEC_BIN, FLASHSPEC_HOME)

Cases:
  device_profiles   every device profile loads (`flashspec profile`) with every
                    target; the Snapdragon 8 Elite profiles' derived costs are
                    sane and ordered (UFS 3.1 reads slower than UFS 4.1, so its
                    Flash-AR token is slower; same SoC, same compute).
  citation_lint     every line of a profile under configs/{devices,models,policies}
                    that holds a number carries a citation comment: a trailing
                    `--` comment, or a comment above it in the same paragraph
                    (no blank line between).  Also checks that the lint flags an
                    uncited line.
  workloads_regen   scripts/make_workloads.sh regenerates the 37
                    traces/data/workload-*.h5 byte for byte (SHA-256).
  workloads_check   each workload passes `flashspec trace check` and stays small.
  workloads_stats   `flashspec trace stats`: the expected accepted length of an
                    8-token chain is ordered code, math > dialogue for each draft
                    and strong > weak for each task, and the top-1 acceptance by
                    depth matches the preset's knob.
  workloads_transfer
                    scripts/transfer_acceptance.py derives the 13 HumanEval and
                    other-target lines, the 8 Llama-3.1-8B bracket lines and the
                    10 lines of EdgeLLM's pairs make_workloads.sh holds; each
                    accepts its source's ratio of accepted draft tokens (tau - 1)
                    times the Qwen3-8B preset's, keeps the presets' form a r^(d-1)
                    (the workload's depth-1 rate kept, or the draft's decay for
                    HumanEval on Qwen3-8B), and each bracket orders lo < central
                    < hi; a pair's preset is its public per-token rate, constant
                    over depth, translation's ends the nearest family's rate and
                    that times the one-source ratio.
  workloads_pairs   each preset of EdgeLLM's pairs (traces/data/
                    workload-*-weak-{llama2-13b-chat,vicuna-13b}.h5): its recorded
                    depth-1 acceptance (`flashspec trace stats`) lies within the
                    sampling noise (4 binomial standard errors over its depth-1
                    positions) of the rate its derivation gives.
  transfer_rule     unit checks of the transfer rule (the form, the root finder
                    at its bounds, the fall-backs, like-for-like ratios, the
                    bracket) on the script's functions and on altered inputs.
  transfer_inputs   a hostile-input corpus (altered copies of the sources CSV and
                    of make_workloads.sh through --sources / --presets, bad
                    arguments, an unwritable output): each ends in one line
                    naming the file and line, with its exit status (64, 65, 66,
                    73), no traceback and no output.
  parts_explain     `flashspec profiles --explain` on every shipped device: one
                    line per device key, each from a part, a fit, a base or the
                    file itself (a default only for a key whose default is
                    neutral), each with its file and a citation; the 8 Elite's
                    ranges; `flashspec profiles parts` lists every part file;
                    bad input (an unknown name, a missing argument, a broken
                    part) is one line with its exit code.
  edge_phones       EdgeLLM's smartphone setting: the Xiaomi 10 / 11 profiles and
                    the Vicuna / LLaMA-2-Chat Q4_0 models load together; the
                    verification is all CPU time; the bytes streamed follow the
                    architecture; the I/O is page faults of 128 KiB, four in
                    flight; compute is ordered 8 Gen 1 < 888 < 865 at equal I/O;
                    a whole 13B target does not fit the 6.0 GB budget; a bad
                    verify_unit, or one in a part of another kind, is one line
                    with exit 78.
  calibration_reproduces
                    `flashspec calibrate configs/calibration/oneplus12.lua` fits
                    the values the shipped OnePlus 12 profile and the workload
                    presets hold (each within 1% and within its standard error),
                    writes its report and the derived profile, and that profile
                    loads.
Exit 0 on success, 1 with a message on failure.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = Path(os.environ.get("FLASHSPEC_HOME", ".")).resolve()

TASKS = ("code", "math", "dialogue")
DRAFTS = ("strong", "weak")
OTHER_TARGETS = ("llama3.1-8b", "qwen3-4b", "qwen3-14b")
# the targets whose ratio to Qwen3-8B crosses sources: a low and a high preset each
BRACKETED = ("llama3.1-8b",)
ENDS = ("lo", "hi")
# EdgeLLM's pairs: 13B target -> its family's 7B draft (the weak class); workloads
PAIR_TARGETS = {"llama2-13b-chat": "llama2-7b-chat", "vicuna-13b": "vicuna-7b"}
PAIR_TASKS = ("cnndm", "squad", "truthfulqa", "translation-lo", "translation-hi")


# The presets and their per-depth --accept knobs, read from scripts/make_workloads.sh:
# (task, draft, target) -> knobs, target None for Qwen3-8B (fitted to Lever Table 5,
# and its HumanEval preset; the other targets transferred; WORKLOADS.md).
def _knobs() -> dict[tuple[str, str, str | None], list[float]]:
    text = (HOME / "scripts" / "make_workloads.sh").read_text()
    out: dict[tuple[str, str, str | None], list[float]] = {
        (m.group(1), m.group(2), None): [float(x) for x in m.group(3).split(",")]
        for m in re.finditer(r"^gen (\w+) +(\w+) +([0-9.,]+) ", text, re.M)}
    for m in re.finditer(r"^gen_target ([\w.-]+) \d+ \d+ \d+ ([\w-]+) ([0-9.,]+) ", text, re.M):
        out[(m.group(2), "strong", m.group(1))] = [float(x) for x in m.group(3).split(",")]
    for m in re.finditer(r"^gen_pair ([\w.-]+) [\w.-]+ \d+ \d+ \d+ ([\w-]+) ([0-9.,]+) ", text,
                         re.M):
        out[(m.group(2), "weak", m.group(1))] = [float(x) for x in m.group(3).split(",")]
    return out


ACCEPT = _knobs()
TARGETS = ("qwen3-8b-q4_0", "llama3.1-8b-q4_0", "qwen3-4b-q4_0", "qwen3-14b-q4_0")
MAX_BYTES = 1_600_000


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(*args: str) -> str:
    p = subprocess.run([BIN, *args], cwd=HOME, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


# --- device profiles ---------------------------------------------------------

FLASH_AR = re.compile(r"flash-ar token\s+([\d.]+) ms = compute ([\d.]+) ms .*\+ I/O ([\d.]+) ms")
LAYER_READ = re.compile(r"^\s*flash read\s+([\d.]+)\s*$", re.M)


def profile(device: str, target: str) -> dict[str, float]:
    out = run("profile", device, target)
    m = FLASH_AR.search(out)
    r = LAYER_READ.search(out)
    if not m or not r:
        fail(f"profile {device} {target}: unexpected output:\n{out}")
    return {"total": float(m.group(1)), "compute": float(m.group(2)), "io": float(m.group(3)),
            "layer_read": float(r.group(1))}


def case_device_profiles() -> None:
    devices = sorted(p.stem for p in (HOME / "configs/devices").glob("*.lua"))
    for need in ("oneplus12", "sd8elite_ufs31", "sd8elite_ufs41"):
        if need not in devices:
            fail(f"configs/devices/{need}.lua missing")
    cost = {(d, t): profile(d, t) for d in devices for t in TARGETS}
    for t in TARGETS:
        op, u31, u41 = (cost[(d, t)] for d in ("oneplus12", "sd8elite_ufs31", "sd8elite_ufs41"))
        print(f"{t:18s} Flash-AR ms/token: oneplus12 {op['total']:.1f}, "
              f"sd8elite_ufs31 {u31['total']:.1f}, sd8elite_ufs41 {u41['total']:.1f}")
        for name, c in (("sd8elite_ufs31", u31), ("sd8elite_ufs41", u41)):
            # sane: positive, I/O-dominated at 0% DRAM, total = compute + I/O
            if not (0 < c["compute"] < c["io"]):
                fail(f"{name} {t}: compute {c['compute']} / I/O {c['io']} not sane")
            if abs(c["total"] - c["compute"] - c["io"]) > 0.2:
                fail(f"{name} {t}: total != compute + I/O")
        # UFS 3.1 reads slower than UFS 4.1: per layer and per token
        if not u31["layer_read"] > u41["layer_read"]:
            fail(f"{t}: UFS 3.1 layer read {u31['layer_read']} not slower than UFS 4.1 "
                 f"{u41['layer_read']}")
        if not u31["total"] > u41["total"]:
            fail(f"{t}: Flash-AR on UFS 3.1 ({u31['total']}) not slower than UFS 4.1 "
                 f"({u41['total']})")
        # the I/O ratio follows the sequential-read ratings 4.3 / 2.1, less the
        # per-request command latency both pay at one request in flight: at
        # most the ratings' ratio, within 5% of it
        ratio = u31["io"] / u41["io"]
        if not (ratio <= 4.3 / 2.1 and ratio / (4.3 / 2.1) > 0.95):
            fail(f"{t}: I/O ratio UFS 3.1 / 4.1 = {ratio:.3f}, ratings give {4.3 / 2.1:.3f}")
        # same SoC: same compute; faster DRAM than the 8 Gen 3: compute no slower
        if abs(u31["compute"] - u41["compute"]) > 1e-6:
            fail(f"{t}: the two 8 Elite profiles differ in compute")
        if not u41["compute"] <= op["compute"]:
            fail(f"{t}: 8 Elite compute {u41['compute']} slower than 8 Gen 3 {op['compute']}")
        # UFS 4.1 (4.3 GB/s) vs UFS 4.0 (4.2 GB/s): within a few percent of the OnePlus 12
        if not 0.9 * op["total"] < u41["total"] < op["total"]:
            fail(f"{t}: sd8elite_ufs41 {u41['total']} not just below oneplus12 {op['total']}")
    print("device_profiles: ok")


# --- EdgeLLM's phones and models (llama.cpp on the CPU, the target mapped) ----

EDGE_MODELS = {  # name: (layers, hidden, ffn, heads), LLaMA-2 shapes (Vicuna v1.5 shares them)
    "vicuna-7b-q4_0": (32, 4096, 11008, 32), "llama2-7b-chat-q4_0": (32, 4096, 11008, 32),
    "vicuna-13b-q4_0": (40, 5120, 13824, 40), "llama2-13b-chat-q4_0": (40, 5120, 13824, 40)}
EDGE_PHONES = ("xiaomi10", "xiaomi11", "xiaomi11_sd8gen1")
COMPUTE = re.compile(r"compute ([\d.]+) ms \(npu ([\d.]+), cpu ([\d.]+)\)")


def case_edge_phones() -> None:
    for m in EDGE_MODELS:
        if not (HOME / "configs/models" / f"{m}.lua").exists():
            fail(f"configs/models/{m}.lua missing")
    for d in EDGE_PHONES:
        if not (HOME / "configs/devices" / f"{d}.lua").exists():
            fail(f"configs/devices/{d}.lua missing")
    cost = {}
    for d in EDGE_PHONES:
        for m, (L, h, f, H) in EDGE_MODELS.items():
            out = run("profile", d, m)
            c = COMPUTE.search(out)
            fl = re.search(r"flash per verify ([\d.]+) GB", out)
            if not c or not fl or "cpu layer" not in out:
                fail(f"profile {d} {m}: unexpected output:\n{out}")
            # the whole verification on the CPU: no NPU time at all
            if float(c.group(2)) != 0.0 or abs(float(c.group(3)) - float(c.group(1))) > 1e-6:
                fail(f"{d} {m}: compute {c.groups()} is not all CPU")
            # Q4_0 (4.5 bits a weight) of L layers of 4h^2 + 3hf and an untied
            # 32000-row head, all streamed at 0% DRAM
            want = (L * (4 * h * h + 3 * h * f) + 32000 * h) * 4.5 / 8 / 1e9
            if abs(float(fl.group(1)) - want) > 0.0006:
                fail(f"{d} {m}: streams {fl.group(1)} GB, the architecture gives {want:.3f}")
            cost[(d, m)] = profile(d, m)
            cost[(d, m)]["out"] = out
        # the 13B costs more than the 7B of the same family, in I/O and compute
        for a, b in (("vicuna-7b-q4_0", "vicuna-13b-q4_0"),
                     ("llama2-7b-chat-q4_0", "llama2-13b-chat-q4_0")):
            if not (cost[(d, a)]["io"] < cost[(d, b)]["io"] and
                    cost[(d, a)]["compute"] < cost[(d, b)]["compute"]):
                fail(f"{d}: {a} not cheaper than {b}")
    for m in EDGE_MODELS:
        x10, x11, g1 = (cost[(d, m)] for d in EDGE_PHONES)
        # page faults of 128 KiB, four in flight, 8 us each, at UFS 3.0 / 3.1's 2.1 GB/s
        nbytes = float(re.search(r"flash per verify ([\d.]+) GB", x10["out"]).group(1)) * 1e9
        L, h = EDGE_MODELS[m][0], EDGE_MODELS[m][1]
        lb = (4 * h * h + 3 * h * EDGE_MODELS[m][2]) * 4.5 / 8
        reqs = L * math.ceil(lb / 131072) + math.ceil(32000 * h * 4.5 / 8 / 131072)
        io = nbytes / 2.1e6 + reqs * 0.008 / 4
        for name, c in (("xiaomi10", x10), ("xiaomi11", x11)):
            if abs(c["io"] - io) > 0.5:
                fail(f"{name} {m}: I/O {c['io']} ms, faults of 128 KiB give {io:.1f}")
            if abs(c["total"] - c["compute"] - c["io"]) > 0.2:
                fail(f"{name} {m}: total != compute + I/O")
        # same flash ratings, faster cores: the Mi 11 computes faster, the
        # table's 8 Gen 1 faster still; the I/O is the same
        if not (g1["compute"] < x11["compute"] < x10["compute"]):
            fail(f"{m}: compute not ordered 8 Gen 1 < 888 < 865: "
                 f"{g1['compute']}, {x11['compute']}, {x10['compute']}")
        if abs(x10["io"] - x11["io"]) > 1e-6 or abs(x11["io"] - g1["io"]) > 1e-6:
            fail(f"{m}: the I/O differs between phones with the same flash rating")
        print(f"{m:22s} Flash-AR ms/token: xiaomi10 {x10['total']:.1f}, xiaomi11 "
              f"{x11['total']:.1f}, xiaomi11_sd8gen1 {g1['total']:.1f}")
    # the budget: EdgeLLM's 6.0 GB; a 13B target does not fit whole, the 7B draft does
    e = explain("xiaomi10")
    if e["dram_budget_gb"][0] != "6" or e["verify_unit"][0] != "cpu" or \
            "llamacpp-cpu" not in e["verify_unit"][3]:
        fail(f"xiaomi10: budget {e['dram_budget_gb']}, verify_unit {e['verify_unit']}")
    if explain("xiaomi11_sd8gen1")["cpu_gflops"][3].find("sd8gen1") < 0:
        fail("xiaomi11_sd8gen1 does not take its CPU from the 8 Gen 1 part")
    p = subprocess.run([BIN, "profile", "xiaomi10", "vicuna-13b-q4_0", "--dram-fraction", "1"], cwd=HOME,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 78 or "does not fit" not in p.stderr or p.stderr.count("\n") != 1:
        fail(f"a whole 13B target fits the Xiaomi 10's budget: {p.returncode} {p.stderr!r}")
    # bad input: one line, its exit code
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "devices").mkdir()
        (Path(tmp) / "devices" / "bad.lua").write_text(
            'return {\n  base = "xiaomi10",\n  verify_unit = "gpu",\n}\n')
        env = dict(os.environ, FLASHSPEC_CONFIG_PATH=tmp)
        bad_run(["profiles", "--explain", "bad"], 78, "bad.lua:3:",
                "key 'verify_unit' must be one of 'npu', 'cpu'", env=env)
        cfg = Path(tmp) / "configs"
        subprocess.run(["cp", "-r", str(HOME / "configs"), str(cfg)], check=True)
        soc = cfg / "parts" / "soc" / "sd865.lua"
        soc.write_text(soc.read_text().replace("  cpu_gbps = 22.1,", '  cpu_gbps = 22.1,\n  verify_unit = "cpu",'))
        bad_run(["profiles", "--explain", "xiaomi10"], 78, "sd865.lua:",
                "key 'verify_unit' is not a soc key (it belongs to runtime parts)",
                env=dict(os.environ, FLASHSPEC_CONFIG_DIR=str(cfg)))
    print("edge_phones: ok")


# --- citation lint -------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.])(0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')


def split_comment(line: str) -> tuple[str, str]:
    """(code, comment) of one Lua line; strings are blanked in the code part."""
    code = STRING.sub('""', line)
    i = code.find("--")
    if i < 0:
        return code, ""
    return code[:i], code[i:]


def uncited_lines(path: Path) -> list[int]:
    """1-based numbers of lines holding a number without a citation comment."""
    bad = []
    cited_paragraph = False  # a comment seen since the last blank line
    in_block = False
    for no, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if in_block:
            cited_paragraph = True
            if "]]" in line:
                in_block = False
            continue
        if not line:
            cited_paragraph = False
            continue
        if line.startswith("--[[") or line.startswith("--[=["):
            in_block = "]]" not in line[4:]
            cited_paragraph = True
            continue
        code, comment = split_comment(line)
        if not code.strip():  # a comment line
            cited_paragraph = True
            continue
        if NUMBER.search(code) and not comment and not cited_paragraph:
            bad.append(no)
    return bad


def case_citation_lint() -> None:
    files = []
    for sub in ("devices", "models", "policies"):
        files += sorted((HOME / "configs" / sub).glob("*.lua"))
    if not files:
        fail("no profiles found under configs/")
    problems = []
    for f in files:
        for no in uncited_lines(f):
            problems.append(f"{f.relative_to(HOME)}:{no}: number without a citation comment: "
                            f"{f.read_text().splitlines()[no - 1].strip()}")
    # the lint itself: a bare number after a blank line is flagged, a cited one is not
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.lua"
        probe.write_text('-- cited\nreturn {\n  a = 1,\n\n  b = 2,\n  c = 3, -- cited\n'
                         '  d = "x-2", -- number in a string only\n  e = "q4_0",\n}\n')
        if uncited_lines(probe) != [5]:
            fail(f"lint self-test: expected [5], got {uncited_lines(probe)}")
    if problems:
        fail("\n".join(problems))
    print(f"citation_lint: ok ({len(files)} profiles)")


# --- workloads -------------------------------------------------------------------

def workload(task: str, draft: str, target: str | None = None) -> Path:
    suffix = f"-{target}" if target else ""
    return HOME / "traces" / "data" / f"workload-{task}-{draft}{suffix}.h5"


def presets() -> list[tuple[str, str, str | None]]:
    """Every preset make_workloads.sh writes: 6 fitted, HumanEval, 12 transferred,
    8 bracket ends (task W-lo / W-hi), 10 of EdgeLLM's pairs."""
    want = [(t, d, None) for t in TASKS for d in DRAFTS] + [("humaneval", "strong", None)]
    want += [(t, "strong", g) for g in OTHER_TARGETS for t in TASKS + ("humaneval",)]
    want += [(f"{t}-{e}", "strong", g) for g in BRACKETED for t in TASKS + ("humaneval",)
             for e in ENDS]
    want += [(t, "weak", g) for g in PAIR_TARGETS for t in PAIR_TASKS]
    return want


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def case_workloads_regen() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(["sh", str(HOME / "scripts" / "make_workloads.sh"), BIN, tmp],
                           cwd=HOME, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail(f"make_workloads.sh: exit {p.returncode}: {p.stderr.strip()}")
        made = sorted(x.name for x in Path(tmp).iterdir())
        want = sorted(workload(*k).name for k in presets())
        if made != want:
            fail(f"make_workloads.sh wrote {made}, expected {want}")
        for name in want:
            a, b = sha256(Path(tmp) / name), sha256(HOME / "traces" / "data" / name)
            if a != b:
                fail(f"traces/data/{name}: bundled sha256 {b[:16]}… != regenerated {a[:16]}…")
    print(f"workloads_regen: ok ({len(want)} files byte-identical)")


def case_workloads_check() -> None:
    for k in presets():
        f = workload(*k)
        if not f.is_file():
            fail(f"{f} missing")
        out = run("trace", "check", str(f))
        if ": ok (" not in out:
            fail(f"trace check {f.name}: {out.strip()}")
        if f.stat().st_size > MAX_BYTES:
            fail(f"{f.name}: {f.stat().st_size} B > {MAX_BYTES} B")
        # a transferred preset names its own target and draft
        target = k[2] or "qwen3-8b"
        info = run("trace", "info", str(f))
        if k[1] == "strong" and (f"{target}-q4_0" not in info
                                 or f"{target}-eagle3-q4_0" not in info):
            fail(f"{f.name}: does not name {target}-q4_0 and its EAGLE-3 draft: {info[:200]}")
        if k[2] in PAIR_TARGETS and not re.search(
                rf"^target\s+{re.escape(k[2])}-q4_0 \(40 layers\)$.*^draft\s+"
                rf"{re.escape(PAIR_TARGETS[k[2]])}-q4_0$.*vocab 32000", info, re.M | re.S):
            fail(f"{f.name}: does not name {k[2]}-q4_0 (40 layers, vocabulary 32000) and "
                 f"{PAIR_TARGETS[k[2]]}-q4_0: {info[:300]}")
    print(f"workloads_check: ok ({len(presets())} files)")


def top1_by_depth(f: Path) -> list[float]:
    out = run("trace", "stats", str(f))
    lines = out.splitlines()
    if not lines or lines[0].split("\t")[:3] != ["depth", "positions", "top1"]:
        fail(f"trace stats {f.name}: unexpected header {lines[:1]}")
    acc = []
    for line in lines[1:]:
        if not line.strip():
            break
        acc.append(float(line.split("\t")[2]))
    return acc


def chain_accepted(v: list[float]) -> float:
    """Expected accepted length of an 8-token top-1 chain (what Chain-SD sees)."""
    e, p = 0.0, 1.0
    for x in v[:8]:
        p *= x
        e += p
    return e


def case_workloads_stats() -> None:
    acc = {k: top1_by_depth(workload(*k)) for k in presets()}
    depths = {len(v) for v in acc.values()}
    if depths != {8}:
        fail(f"expected 8 depths in every workload, got {depths}")
    if set(ACCEPT) != set(acc):
        fail(f"make_workloads.sh knobs {sorted(ACCEPT, key=str)} do not cover "
             f"{sorted(acc, key=str)}")
    for k, v in sorted(acc.items(), key=str):
        knob = ACCEPT[k] + [ACCEPT[k][-1]] * (8 - len(ACCEPT[k]))
        name = workload(*k).stem
        print(f"{name:36s} top-1 by depth " + " ".join(f"{x:.3f}" for x in v)
              + "  knob " + " ".join(f"{x:.3f}" for x in knob))
        for i, (x, want) in enumerate(zip(v, knob)):
            if abs(x - want) > 0.04:
                fail(f"{name} depth {i + 1}: acceptance {x:.3f} far from knob {want:.3f}")
    # the fitted acceptance orders the workloads: dialogue lowest for each draft,
    # and the strong draft above the weak one on every task
    mean = {k: chain_accepted(v) for k, v in acc.items()}
    for d in DRAFTS:
        for t in ("code", "math"):
            if not mean[(t, d, None)] > mean[("dialogue", d, None)]:
                fail(f"{d} draft: {t} {mean[(t, d, None)]:.3f} not above dialogue "
                     f"{mean[('dialogue', d, None)]:.3f}")
    for t in TASKS:
        if not mean[(t, "strong", None)] > mean[(t, "weak", None)]:
            fail(f"{t}: strong {mean[(t, 'strong', None)]:.3f} not above weak "
                 f"{mean[(t, 'weak', None)]:.3f}")
    # the transferred presets keep the sources' order against Qwen3-8B on every
    # task: Llama-3.1-8B's draft above, Qwen3-4B's and Qwen3-14B's below
    for t in TASKS + ("humaneval",):
        q8 = mean[(t, "strong", None)]
        for g, above in (("llama3.1-8b", True), ("qwen3-4b", False), ("qwen3-14b", False)):
            if (mean[(t, "strong", g)] > q8) != above:
                fail(f"{t}: {g} {mean[(t, 'strong', g)]:.3f} vs qwen3-8b {q8:.3f}: the "
                     f"transfer reversed the source's order")
        # the bracket's traces keep their order: lo < central < hi
        for g in BRACKETED:
            lo, c, hi = (mean[(f"{t}{e}", "strong", g)] for e in ("-lo", "", "-hi"))
            if not lo < c < hi:
                fail(f"{t}-{g}: chain accepted lo {lo:.3f}, central {c:.3f}, hi {hi:.3f} "
                     f"out of order")
    # EdgeLLM's pairs keep their source's order: CNN/DailyMail and SQuAD above
    # TruthfulQA, translation's low end below its high end and below every measured
    # family; the 7B draft far above the 0.6B one of Qwen3-8B on every workload
    for g in PAIR_TARGETS:
        m = {t: mean[(t, "weak", g)] for t in PAIR_TASKS}
        if not (m["cnndm"] > m["truthfulqa"] and m["squad"] > m["truthfulqa"]
                and m["translation-lo"] < m["translation-hi"]
                and m["translation-lo"] < min(m["cnndm"], m["squad"], m["truthfulqa"])):
            fail(f"{g}: chain accepted {m} out of the sources' order")
        if not min(m.values()) > 2 * max(mean[(t, "weak", None)] for t in TASKS):
            fail(f"{g}: the 7B draft accepts {min(m.values()):.3f}, not far above the 0.6B "
                 f"draft of Qwen3-8B")
    print("workloads_stats: ok")


SCRIPT = HOME / "scripts" / "transfer_acceptance.py"
BENCH = {"code": "HumanEval", "math": "GSM8K", "dialogue": "MT-Bench", "humaneval": "HumanEval"}


def transfer(*args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(["/usr/bin/python3", str(SCRIPT), *args], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=60)


def source_taus(quantity: str = "tau") -> dict[tuple[str, str, str, str], float]:
    """(target, benchmark, temperature, drafting) -> value of the rows of one quantity
    (tau, alpha, speedup), read here on its own."""
    import csv
    with open(HOME / "traces" / "data" / "acceptance-sources.csv", newline="") as f:
        return {(r["target"], r["benchmark"], r["temperature"], r["drafting"]): float(r["value"])
                for r in csv.DictReader(f) if r["quantity"] == quantity}


def check_form(name: str, p: list[float]) -> tuple[float, float]:
    """p_d = min(0.99, a r^(d-1)) to the 6 digits the presets carry: (a, r)."""
    a, r = p[0], p[1] / p[0]
    x = a
    for d, got in enumerate(p, 1):
        x = min(0.99, x)
        if abs(got - x) > 2e-5:
            fail(f"{name}: depth {d} rate {got} is not a r^(d-1) = {x:.6f} (a {a}, r {r:.6f})")
        x *= r
    return a, r


def case_workloads_transfer() -> None:
    """scripts/transfer_acceptance.py derives exactly the lines make_workloads.sh
    holds; each derived preset accepts its source's ratio of accepted draft tokens
    times the Qwen3-8B preset's (to the 6 digits the presets carry), in the
    presets' form, keeping the workload's depth-1 rate (other targets) or the
    draft's decay (HumanEval on Qwen3-8B); each bracket is ordered and symmetric."""
    p = transfer()
    if p.returncode != 0:
        fail(f"transfer_acceptance.py: exit {p.returncode}: {p.stderr.strip()}")
    lines = p.stdout.splitlines()
    text = (HOME / "scripts" / "make_workloads.sh").read_text().splitlines()
    held = [x for x in text if x.startswith("gen_target ") or x.startswith("gen humaneval ")
            or x.startswith("gen_pair ")]
    if len(lines) != 31 or sorted(lines) != sorted(held):
        fail(f"make_workloads.sh does not hold exactly the derived lines ({len(lines)} "
             f"derived, {len(held)} held; missing {[x for x in lines if x not in text][:2]})")
    tau = source_taus()
    tree0 = lambda g, b: tau[(g, b, "0", "EAGLE-3 tree")] - 1  # noqa: E731
    base = {t: ACCEPT[(t, "strong", None)] for t in TASKS + ("humaneval",)}
    # HumanEval on Qwen3-8B: the geometric mean of AngelSlim's HumanEval over GSM8K on
    # the math preset and over MT-Bench on the dialogue preset; the code preset's decay
    want = math.sqrt(chain_accepted(base["math"]) * tree0("qwen3-8b", "HumanEval")
                     / tree0("qwen3-8b", "GSM8K") * chain_accepted(base["dialogue"])
                     * tree0("qwen3-8b", "HumanEval") / tree0("qwen3-8b", "MT-Bench"))
    got = chain_accepted(base["humaneval"])
    if abs(got - want) > 1e-4 * want:
        fail(f"humaneval-strong: accepts {got:.5f}, the sources give {want:.5f}")
    _, r_he = check_form("humaneval-strong", base["humaneval"])
    _, r_code = check_form("code-strong", base["code"])
    if abs(r_he - r_code) > 1e-4:
        fail(f"humaneval-strong: decay {r_he:.6f}, not the draft's {r_code:.6f}")
    for t in TASKS + ("humaneval",):
        b = BENCH[t]
        for g in OTHER_TARGETS:
            rho = tree0(g, b) / tree0("qwen3-8b", b)
            ends = {"": rho}
            if g in BRACKETED:
                lo = ((tau[(g, b, "1", "EAGLE-3 chain of 7")] - 1)
                      / (tau[("qwen3-8b", b, "1", "EAGLE-3 tree")] - 1))
                ends.update({"-lo": lo, "-hi": rho * rho / lo})
            acc = {}
            for e, x in ends.items():
                name = f"{t}{e}-strong-{g}"
                p = ACCEPT[(t + e, "strong", g)]
                acc[e] = chain_accepted(p)
                want = chain_accepted(base[t]) * x
                if abs(acc[e] - want) > 1e-4 * want:
                    fail(f"{name}: accepts {acc[e]:.5f}, the ratio {x:.4f} gives {want:.5f}")
                a, r = check_form(name, p)
                # the workload's depth-1 rate kept; moved only with the decay at a bound
                if abs(a - base[t][0]) > 1e-6 and not (abs(r - 0.3) < 1e-4
                                                       or abs(r - 1.2) < 1e-4):
                    fail(f"{name}: depth-1 rate {a} moved from {base[t][0]} with the decay "
                         f"{r:.4f} inside 0.3..1.2")
                if abs(a - base[t][0]) <= 1e-6 and not 0.3 - 1e-4 <= r <= 1.2 + 1e-4:
                    fail(f"{name}: decay {r:.4f} outside 0.3..1.2")
            if g in BRACKETED and not acc["-lo"] < acc[""] < acc["-hi"]:
                fail(f"{t}-{g}: bracket lo {acc['-lo']:.4f} central {acc['']:.4f} "
                     f"hi {acc['-hi']:.4f} out of order")
    check_pairs_derivation()
    print("workloads_transfer: ok (13 derived presets, 8 bracket ends, 10 presets of "
          "EdgeLLM's pairs)")


def pair_rates() -> dict[str, float]:
    """EdgeLLM's pairs: workload -> the per-token rate (alpha) its derivation gives,
    computed here from the sources on their own: the public figure of the
    LLaMA-2-Chat pair (both pairs), translation's high end the TruthfulQA rate, its
    low end the rate r whose chain of eight accepts rho times TruthfulQA's, rho
    Spec-Bench's SpS translation over QA in accepted draft tokens (each length the
    overall one scaled by its speedup over the overall speedup)."""
    alpha = source_taus("alpha")
    speed = source_taus("speedup")
    tau = source_taus("tau")
    fig = {w: alpha[("llama2-13b-chat", b, "0", "teacher-forced chain")]
           for w, b in (("cnndm", "CNN/DailyMail"), ("squad", "SQuAD"),
                        ("truthfulqa", "TruthfulQA"))}
    sb = lambda b: speed[("vicuna-13b", b, "0", "SpS chain")]  # noqa: E731
    t_all = tau[("vicuna-13b", "Overall", "0", "SpS chain")]
    tr, qa = (t_all * sb(b) / sb("Overall") for b in ("Translation", "Question Answering"))
    rho = (tr - 1) / (qa - 1)
    want = rho * sum(fig["truthfulqa"] ** j for j in range(1, 9))
    lo, hi = 0.01, 0.99
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(mid ** j for j in range(1, 9)) < want else (lo, mid)
    return dict(fig, **{"translation-hi": fig["truthfulqa"], "translation-lo": (lo + hi) / 2})


def check_pairs_derivation() -> None:
    rates = pair_rates()
    # the figures the derivation must carry (a wrong row or a wrong rule moves them)
    if abs(rates["translation-lo"] - 0.763346) > 1e-6:
        fail(f"translation-lo: the sources give {rates['translation-lo']:.6f}, not 0.763346")
    for g in PAIR_TARGETS:
        for t in PAIR_TASKS:
            name = f"{t}-weak-{g}"
            p = ACCEPT[(t, "weak", g)]
            a, r = check_form(name, p)
            if abs(r - 1.0) > 1e-9:
                fail(f"{name}: decay {r:.6f}, not the constant per-token rate's 1")
            if abs(a - rates[t]) > 5e-7:
                fail(f"{name}: depth-1 rate {a}, the sources give {rates[t]:.6f}")


NOISE_SE = 4.0  # standard errors a recorded rate may lie from its knob


def within_noise(x: float, p: float, n: int) -> bool:
    """x, the share of n independent draws that hit, is within NOISE_SE binomial
    standard errors of the probability p (plus the 6 digits trace stats prints)."""
    return abs(x - p) <= NOISE_SE * math.sqrt(p * (1 - p) / n) + 5e-7


def depth1(f: Path) -> tuple[int, float]:
    """(positions, top-1 acceptance) at depth 1 (`flashspec trace stats`)."""
    lines = run("trace", "stats", str(f)).splitlines()
    if len(lines) < 2 or lines[0].split("\t")[:3] != ["depth", "positions", "top1"] \
            or lines[1].split("\t")[0] != "1":
        fail(f"trace stats {f.name}: unexpected output {lines[:2]}")
    row = lines[1].split("\t")
    return int(row[1]), float(row[2])


def case_workloads_pairs() -> None:
    """Each preset of EdgeLLM's pairs records, at depth 1, the rate its derivation
    gives (the script's and this file's own arithmetic from the sources), within the
    synthetic trace's sampling noise."""
    # the bound itself, at its edges: 4 standard errors pass, a hair more fails
    se = math.sqrt(0.9 * 0.1 / 2048)
    for x, ok in ((0.9, True), (0.9 + 4 * se, True), (0.9 - 4 * se, True),
                  (0.9 + 4 * se + 1e-6, False), (0.9 - 4 * se - 1e-6, False)):
        if within_noise(x, 0.9, 2048) != ok:
            fail(f"within_noise({x}, 0.9, 2048) is not {ok}")
    m = _module()
    derived = {(d.workload, d.target): d for d in m.derive_pairs()}
    rates = pair_rates()
    if set(derived) != {(t, g) for g in PAIR_TARGETS for t in PAIR_TASKS}:
        fail(f"derive_pairs() gives {sorted(derived)}")
    for (t, g), d in sorted(derived.items()):
        a = d.p[0]
        if abs(a - rates[t]) > 5e-7 or abs(ACCEPT[(t, "weak", g)][0] - a) > 5e-7:
            fail(f"{t}-weak-{g}: derived depth-1 rate {a}, the sources {rates[t]:.6f}, "
                 f"make_workloads.sh {ACCEPT[(t, 'weak', g)][0]}")
        n, x = depth1(workload(t, "weak", g))
        print(f"{t}-weak-{g:16s} depth 1: {x:.4f} over {n} positions, derived {a:.4f} "
              f"(+/- {NOISE_SE * math.sqrt(a * (1 - a) / n):.4f})")
        if n < 2000 or not within_noise(x, a, n):
            fail(f"{t}-weak-{g}: recorded depth-1 acceptance {x} over {n} positions is "
                 f"outside the sampling noise of its derived {a}")
    print(f"workloads_pairs: ok ({len(derived)} presets)")


def _module():
    """scripts/transfer_acceptance.py as a module (its functions, its real code)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("transfer_acceptance", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _expect(cond: bool, what: str) -> None:
    if not cond:
        fail(what)


def case_transfer_rule() -> None:
    m = _module()
    near = lambda x, y, tol=1e-9: abs(x - y) <= tol  # noqa: E731
    # the form: a r^(d-1), capped at 0.99 from the first depth that reaches it
    _expect(m.rates(0.5, 0.5) == [0.5 * 0.5 ** k for k in range(8)], "rates(0.5, 0.5)")
    _expect(m.rates(0.9, 1.2)[:3] == [0.9, 0.99, 0.99], f"cap: {m.rates(0.9, 1.2)[:3]}")
    # accepted draft tokens of a chain of eight (tau - 1): sum of the prefix products
    _expect(near(m.accepted([0.5] * 8), 1 - 0.5 ** 8), "accepted of a flat 0.5 chain")
    _expect(near(m.accepted([1.0, 1.0, 0.0] + [0.9] * 5), 2.0), "accepted stops at a 0")
    # keep a, solve r: the depth-1 rate stays, every depth falls by one r
    s = m.solve_decay(0.9, 2.0)
    _expect(s.moved == "r" and s.a == 0.9 and 0.3 < s.r < 1.2, f"solve_decay: {s}")
    _expect(near(m.accepted(m.rates(s.a, s.r)), 2.0, 1e-10), "solve_decay misses 2.0")
    # the bounds of r are reached exactly, not passed (ties at each end)
    for r in (0.3, 1.2):
        s = m.solve_decay(0.8, m.accepted(m.rates(0.8, r)))
        _expect(s.moved == "r" and near(s.r, r, 1e-9) and s.a == 0.8, f"r bound {r}: {s}")
    # below r = 0.3's length: r stays at 0.3 and a falls; above r = 1.2's: a rises
    lo = m.accepted(m.rates(0.8, 0.3))
    s = m.solve_decay(0.8, lo * 0.9)
    _expect(s.moved == "r then a" and s.r == 0.3 and s.a < 0.8, f"fall-back down: {s}")
    _expect(near(m.accepted(m.rates(s.a, s.r)), lo * 0.9, 1e-10), "fall-back down misses")
    hi = m.accepted(m.rates(0.5, 1.2))
    s = m.solve_decay(0.5, hi + 0.5)
    _expect(s.moved == "r then a" and s.r == 1.2 and s.a > 0.5, f"fall-back up: {s}")
    # keep r, solve a (a new workload of the same draft)
    s = m.solve_rate(0.452, 1.2)
    _expect(s.moved == "a" and s.r == 0.452, f"solve_rate: {s}")
    _expect(near(m.accepted(m.rates(s.a, s.r)), 1.2, 1e-10), "solve_rate misses 1.2")
    # out of reach either way: one line, bad data
    for f, x, want in ((m.solve_decay, 0.5, 7.9), (m.solve_decay, 0.5, 1e-4),
                       (m.solve_rate, 0.452, 7.9)):
        try:
            f(x, want)
            fail(f"{f.__name__}({x}, {want}) accepted an unreachable length")
        except m.Bad as e:
            _expect(e.code == 65 and "out of the presets' reach" in str(e), str(e))
    # the profile of the shipped derivation: p2/p1 etc. as documented
    rows = {(d.target, d.workload): d for d in m.derive()}
    base = m.fitted_8b(m.PRESETS)
    for (t, w), d in rows.items():
        p = d.p
        # one decay: every depth is the form's a r^(d-1) to the 6 digits written
        form = m.rates(d.solved.a, d.solved.r)
        _expect(max(abs(x - y) for x, y in zip(p, form)) <= 5e-7,
                f"{t} {w}: {p} is not a r^(d-1) = {form}")
        check_form(f"{t} {w}", p)
        if t == "qwen3-8b":
            _expect(near(p[1] / p[0], base["code"][1] / base["code"][0], 1e-5),
                    f"qwen3-8b humaneval: decay {p[1] / p[0]} is not the draft's")
        elif d.solved.moved == "r":
            src = base.get(w.split("-")[0], rows[("qwen3-8b", "humaneval")].p)
            _expect(p[0] == src[0], f"{t} {w}: depth-1 rate {p[0]} is not {src[0]}")
    # like-for-like arithmetic: the bonus token out of both sides
    with tempfile.TemporaryDirectory() as tmp:
        csvp = Path(tmp) / "s.csv"
        rows_csv = ["source,target,benchmark,value,temperature,drafting,note,draft,quantity"]
        for g, taus in (("qwen3-4b", (2.0, 3.0, 2.5)), ("qwen3-8b", (3.0, 4.0, 3.5)),
                        ("qwen3-14b", (3.0, 4.0, 3.5))):
            for b, x in zip(("MT-Bench", "HumanEval", "GSM8K"), taus):
                rows_csv.append(f"S,{g},{b},{x},0,EAGLE-3 tree,,d,tau")
        for b, x, y in (("MT-Bench", 5.0, 2.5), ("HumanEval", 6.0, 3.0), ("GSM8K", 5.5, 3.0)):
            rows_csv.append(f"P,llama3.1-8b,{b},{x},0,EAGLE-3 tree,,d,tau")
            rows_csv.append(f"C,llama3.1-8b,{b},{y},1,EAGLE-3 chain of 7,,d,tau")
            rows_csv.append(f"S,qwen3-8b,{b},{x - 2.0},1,EAGLE-3 tree,,d,tau")
        csvp.write_text("\n".join(rows_csv) + "\n")
        got = {(d.target, d.workload): d for d in m.derive(csvp, m.PRESETS)}
        # Qwen3-4B code: (3 - 1) / (4 - 1), not 3 / 4; same source: no bracket
        _expect(near(got[("qwen3-4b", "code")].ratio, 2 / 3), "qwen3-4b ratio not (3-1)/(4-1)")
        _expect(("qwen3-4b", "code-lo") not in got, "a same-source ratio got a bracket")
        # Llama-3.1-8B MT-Bench: central (5-1)/(3-1) = 2; lo (2.5-1)/(3-1) = 0.75 (T = 1);
        # hi 2^2/0.75; GSM8K: lo (3-1)/(3.5-1) = 0.8
        c = got[("llama3.1-8b", "dialogue")].ratio
        lo = got[("llama3.1-8b", "dialogue-lo")].ratio
        hi = got[("llama3.1-8b", "dialogue-hi")].ratio
        _expect(near(c, 2.0) and near(lo, 0.75) and near(hi, 4.0 / 0.75),
                f"llama dialogue bracket {lo} {c} {hi}")
        _expect(near(got[("llama3.1-8b", "math-lo")].ratio, 0.8), "llama math lo")
        for w in ("code", "math", "dialogue", "humaneval"):
            a8 = [m.accepted(got[("llama3.1-8b", w + e)].p) for e in ("-lo", "", "-hi")]
            _expect(a8[0] < a8[1] < a8[2], f"llama {w}: bracket out of order {a8}")
        # a chain measurement above the central ratio: the ends are sorted, lo <= hi
        csvp.write_text("\n".join(x.replace("C,llama3.1-8b,MT-Bench,2.5,", "C,llama3.1-8b,"
                                            "MT-Bench,5.6,") for x in rows_csv) + "\n")
        got = {(d.target, d.workload): d for d in m.derive(csvp, m.PRESETS)}
        lo, c, hi = (got[("llama3.1-8b", "dialogue" + e)].ratio for e in ("-lo", "", "-hi"))
        _expect(lo < c < hi and near(lo * hi, c * c), f"sorted ends {lo} {c} {hi}")
        # a refitted Qwen3-8B preset (another depth-1 rate and decay) carries through
        pre = Path(tmp) / "make.sh"
        text = m.PRESETS.read_text()
        old = next(x for x in text.splitlines() if x.startswith("gen code     strong"))
        new_p = ",".join(f"{x:.6f}" for x in m.rates(0.9, 0.5))
        pre.write_text(text.replace(old, f"gen code strong {new_p} 0.96 1102 x"))
        got = {(d.target, d.workload): d for d in m.derive(m.SOURCES, pre)}
        d = got[("qwen3-14b", "code")]
        _expect(d.p[0] == 0.9, f"refit: qwen3-14b code depth-1 rate {d.p[0]}")
        _expect(near(m.accepted(d.p), m.accepted(m.rates(0.9, 0.5)) * d.ratio, 1e-5),
                "refit: qwen3-14b code does not follow the new preset")
        # EdgeLLM's pairs: a per-token rate is its own depth-1 rate, constant over depth
        # (A8 = sum alpha^j, no bonus token); translation's ends: the TruthfulQA rate and
        # the rate accepting rho times its draft tokens, rho = (2.5 - 1) / (3 - 1) = 0.75
        # from speedups 1.25 and 1.5 over 1.0 at an overall length of 2.0
        _expect(near(m.alpha_accepted(0.5), 0.99609375, 1e-12), "alpha_accepted(0.5)")
        pair_csv = [rows_csv[0]] + [
            f"E,llama2-13b-chat,{b},{x},0,teacher-forced chain,,llama2-7b-chat,alpha"
            for b, x in (("CNN/DailyMail", 0.5), ("SQuAD", 0.6), ("TruthfulQA", 0.4))] + [
            f"B,vicuna-13b,{b},{x},0,SpS chain,,vicuna-68m,{q}"
            for b, x, q in (("Translation", 1.25, "speedup"),
                            ("Question Answering", 1.5, "speedup"),
                            ("Overall", 1.0, "speedup"), ("Overall", 2.0, "tau"))]
        csvp.write_text("\n".join(pair_csv) + "\n")
        got = {(d.target, d.workload): d for d in m.derive_pairs(csvp)}
        _expect(len(got) == 10, f"derive_pairs gives {sorted(got)}")
        for g in ("llama2-13b-chat", "vicuna-13b"):
            for w, x in (("cnndm", 0.5), ("squad", 0.6), ("truthfulqa", 0.4),
                         ("translation-hi", 0.4)):
                d = got[(g, w)]
                _expect(d.p == [x] * 8 and d.solved.r == 1.0 and near(d.ratio, 1.0),
                        f"{g} {w}: {d.p}, decay {d.solved.r}, ratio {d.ratio}")
            d = got[(g, "translation-lo")]
            _expect(near(d.ratio, 0.75) and d.solved.r == 1.0 and len(set(d.p)) == 1
                    and near(m.accepted(d.p), 0.75 * m.alpha_accepted(0.4), 1e-5),
                    f"{g} translation-lo: ratio {d.ratio}, {d.p}")
            _expect(got[(g, "translation-lo")].seed == got[(g, "translation-hi")].seed,
                    f"{g}: translation's ends do not share their seed")
        # the bracket's rows from two sources: refused
        bad = [x.replace("B,vicuna-13b,Question", "X,vicuna-13b,Question") for x in pair_csv]
        csvp.write_text("\n".join(bad) + "\n")
        try:
            m.derive_pairs(csvp)
            fail("derive_pairs took the translation bracket from two sources")
        except m.Bad as e:
            _expect(e.code == 65 and ":6: the translation bracket's rows must come from one "
                    "source" in str(e), str(e))
    print("transfer_rule: ok")


def case_transfer_inputs() -> None:
    csv_text = (HOME / "traces" / "data" / "acceptance-sources.csv").read_text()
    sh_text = (HOME / "scripts" / "make_workloads.sh").read_text()
    csv_lines = csv_text.splitlines()
    line_of = lambda text, start: next(i for i, x in enumerate(text.splitlines(), 1)  # noqa
                                       if x.startswith(start))
    q8_he = line_of(csv_text, "AngelSlim README,qwen3-8b,HumanEval,3.85")
    q8_gsm = line_of(csv_text, "AngelSlim README,qwen3-8b,GSM8K,3.90")
    nb_he = line_of(csv_text, "Nebius model card,llama3.1-8b,HumanEval")
    ll_he = line_of(csv_text, "EAGLE-3 paper,llama3.1-8b,HumanEval")
    # EdgeLLM's pairs: the per-token rates and the translation bracket's rows
    e_sq = line_of(csv_text, "EdgeLLM Table I,llama2-13b-chat,SQuAD,0.899,")
    e_tq = line_of(csv_text, "EdgeLLM Table I,llama2-13b-chat,TruthfulQA,0.871,")
    sb_tr = line_of(csv_text, "Spec-Bench leaderboard,vicuna-13b,Translation,1.13,")
    sb_qa = line_of(csv_text, "Spec-Bench leaderboard,vicuna-13b,Question Answering,1.39,")
    code = line_of(sh_text, "gen code     strong")
    code_line = sh_text.splitlines()[code - 1]

    def sub_csv(line: int, old: str, new: str) -> str:
        lines = list(csv_lines)
        if old not in lines[line - 1]:
            fail(f"corpus: {old!r} not on line {line} of the sources")
        lines[line - 1] = lines[line - 1].replace(old, new, 1)
        return "\n".join(lines) + "\n"

    def drop_csv(line: int) -> str:
        return "\n".join(x for i, x in enumerate(csv_lines, 1) if i != line) + "\n"

    def sub_sh(old: str, new: str) -> str:
        if old not in sh_text:
            fail(f"corpus: {old!r} not in make_workloads.sh")
        return sh_text.replace(old, new, 1)

    acc = code_line.split()[3]
    # the first format of the sources (no value, draft, quantity: every row a tau)
    import csv as _csv
    legacy_rows = [r for r in _csv.DictReader(io.StringIO(csv_text))
                   if r["quantity"] == "tau"]
    lbuf = io.StringIO()
    lw = _csv.writer(lbuf, lineterminator="\n")
    lw.writerow(["source", "target", "benchmark", "tau", "temperature", "drafting", "note"])
    for r in legacy_rows:
        lw.writerow([r["source"], r["target"], r["benchmark"], r["value"], r["temperature"],
                     r["drafting"], r["note"]])
    legacy = lbuf.getvalue()
    l_he = line_of(legacy, "AngelSlim README,qwen3-8b,HumanEval,3.85")
    # (name, sources text or bytes or None, presets text or None, extra args, exit, message)
    cases = [
        # a file of the first format is read (its rows reach the checks), and
        # lacks only the rows of the other quantities
        ("first format", legacy, None, [], 65,
         ": no row for vicuna-13b Translation at temperature 0 with chain drafting, "
         "quantity speedup"),
        ("first format, text tau", legacy.replace(",3.85,", ",three,", 1), None, [], 65,
         f":{l_he}: tau 'three' is not a number"),
        ("text tau", sub_csv(q8_he, ",3.85,", ",three,"), None, [], 65,
         f":{q8_he}: tau 'three' is not a number"),
        ("empty tau", sub_csv(q8_he, ",3.85,", ",,"), None, [], 65,
         f":{q8_he}: tau '' is not a number"),
        ("nan tau", sub_csv(q8_he, ",3.85,", ",nan,"), None, [], 65,
         f":{q8_he}: tau 'nan' is not a finite number"),
        ("tau 1", sub_csv(q8_he, ",3.85,", ",1,"), None, [], 65,
         f":{q8_he}: tau 1 is not above 1"),
        ("tau 0", sub_csv(q8_he, ",3.85,", ",0,"), None, [], 65,
         f":{q8_he}: tau 0 is not above 1"),
        ("text temperature", sub_csv(q8_he, ",3.85,0,", ",3.85,hot,"), None, [], 65,
         f":{q8_he}: temperature 'hot' is not a number"),
        ("negative temperature", sub_csv(q8_he, ",3.85,0,", ",3.85,-1,"), None, [], 65,
         f":{q8_he}: temperature -1 is negative"),
        ("drafting", sub_csv(q8_he, "EAGLE-3 tree", "EAGLE-3"), None, [], 65,
         f":{q8_he}: drafting 'EAGLE-3' names neither a tree nor a chain"),
        ("missing row", drop_csv(q8_gsm), None, [], 65,
         ": no row for qwen3-8b GSM8K at temperature 0 with tree drafting"),
        ("missing bracket row", drop_csv(nb_he), None, [], 65,
         ": llama3.1-8b HumanEval: the ratio crosses sources"),
        ("duplicate row", csv_text + csv_lines[q8_he - 1] + "\n", None, [], 65,
         f":{len(csv_lines) + 1}: duplicate of line {q8_he} (qwen3-8b, HumanEval, T = 0, "
         f"tree drafting)"),
        ("duplicate, other tau", csv_text + csv_lines[q8_he - 1].replace(",3.85,", ",3.95,")
         + "\n", None, [], 65, f": duplicate of line {q8_he}"),
        ("mixed HumanEval sources", sub_csv(q8_gsm, "AngelSlim README,", "Other,"), None, [],
         65, f":{q8_gsm}: qwen3-8b GSM8K is from Other"),
        ("no value column", csv_text.replace(",value,", ",tau,", 1), None, [], 65,
         ":1: no column 'value'"),
        ("empty file", "", None, [], 65, ": empty (expected a header"),
        ("short row", csv_text + "S,qwen3-8b,GSM8K\n", None, [], 65,
         f":{len(csv_lines) + 1}: 9 fields expected"),
        ("long row", csv_text + "S,qwen3-8b,GSM8K,3,0,EAGLE-3 tree,n,d,tau,extra\n", None, [],
         65,
         f":{len(csv_lines) + 1}: 9 fields expected"),
        ("bad quoting", csv_text + 'S,qwen3-8b,GSM8K,3,0,EAGLE-3 tree,"open\n', None, [], 65,
         "acceptance-sources.csv:"),
        ("NUL byte", csv_text + "S,qwen3-8b,Alpaca,3\x00,0,EAGLE-3 tree,,d,tau\n", None, [], 65,
         "acceptance-sources.csv:"),
        ("not UTF-8", csv_text.encode() + b"S,q\xff,GSM8K,3,0,EAGLE-3 tree,\n", None, [], 65,
         f":{len(csv_lines) + 1}: not UTF-8 text"),
        ("out of reach", sub_csv(ll_he, ",6.74,", ",60,"), None, [], 65,
         f"acceptance-sources.csv:{ll_he}: llama3.1-8b code: wants \u2026 accepted draft "
         f"tokens a cycle, out of the presets' reach"),
        # rows of other quantities (EdgeLLM's pairs)
        ("unknown quantity", sub_csv(e_tq, ",alpha", ",beta"), None, [], 65,
         f":{e_tq}: quantity 'beta' is none of tau, alpha, speedup"),
        ("empty quantity", sub_csv(e_tq, ",alpha", ","), None, [], 65,
         f":{e_tq}: quantity '' is none of tau, alpha, speedup"),
        ("alpha 1", sub_csv(e_tq, ",0.871,", ",1,"), None, [], 65,
         f":{e_tq}: alpha 1 is not in (0, 1)"),
        ("alpha 0", sub_csv(e_tq, ",0.871,", ",0,"), None, [], 65,
         f":{e_tq}: alpha 0 is not in (0, 1)"),
        ("text alpha", sub_csv(e_tq, ",0.871,", ",high,"), None, [], 65,
         f":{e_tq}: alpha 'high' is not a number"),
        ("alpha out of reach", sub_csv(e_tq, ",0.871,", ",0.995,"), None, [], 65,
         f"acceptance-sources.csv:{e_tq}: llama2-13b-chat truthfulqa: wants \u2026 accepted "
         f"draft tokens a cycle, out of the presets' reach"),
        ("speedup 0", sub_csv(sb_tr, ",1.13,", ",0,"), None, [], 65,
         f":{sb_tr}: speedup 0 is not above 0"),
        ("empty draft", sub_csv(e_tq, ",llama2-7b-chat,", ",,"), None, [], 65,
         f":{e_tq}: empty draft"),
        ("missing alpha row", drop_csv(e_sq), None, [], 65,
         ": no alpha row for llama2-13b-chat SQuAD at temperature 0 with chain drafting"),
        ("missing bracket row", drop_csv(sb_tr), None, [], 65,
         ": no row for vicuna-13b Translation at temperature 0 with chain drafting, "
         "quantity speedup"),
        ("bracket across sources", sub_csv(sb_qa, "Spec-Bench leaderboard,", "Other,"), None,
         [], 65, f":{sb_qa}: the translation bracket's rows must come from one source"),
        ("bracket across drafts", sub_csv(sb_qa, ",vicuna-68m,", ",vicuna-160m,"), None,
         [], 65, f":{sb_qa}: the translation bracket's rows must come from one source"),
        ("duplicate alpha row", csv_text + csv_lines[e_sq - 1] + "\n", None, [], 65,
         f":{len(csv_lines) + 1}: duplicate of line {e_sq} (llama2-13b-chat, SQuAD, T = 0, "
         f"chain drafting, alpha)"),
        ("sources missing", None, None, ["--sources", "/nonexistent/s.csv"], 66,
         "/nonexistent/s.csv: no such file"),
        ("sources a directory", None, None, ["--sources", "/"], 66, "/: is a directory"),
        # the fitted presets (make_workloads.sh)
        ("p = 1", None, sub_sh(acc, "1.000000" + acc[8:]), [], 65,
         f":{code}: the code strong preset's depth-1 rate 1 is outside (0, 0.99]"),
        ("p = 0", None, sub_sh(acc, acc[:-8] + "0.000000"), [], 65,
         f":{code}: the code strong preset's depth-8 rate 0 is outside (0, 0.99]"),
        ("2-depth preset", None, sub_sh(acc, ",".join(acc.split(",")[:2])), [], 65,
         f":{code}: the code strong preset has 2 depths, expected 8"),
        ("text rate", None, sub_sh(acc, acc[:-1] + "x"), [], 65,
         f":{code}: depth-8 rate '{acc.split(',')[-1][:-1]}x' is not a number"),
        ("not the form", None, sub_sh(acc, ",".join(
            f"{float(x) + 0.01:.6f}" if i == 4 else x for i, x in enumerate(acc.split(",")))),
         [], 65,
         f":{code}: the code strong preset is not of the form"),
        ("decay out of bounds", None,
         sub_sh(acc, ",".join(f"{0.9 * 0.2 ** k:.6f}" for k in range(8))), [], 65,
         f":{code}: the code strong preset's decay 0.200000 is outside 0.3..1.2"),
        ("missing preset", None, "\n".join(x for x in sh_text.splitlines()
                                           if not x.startswith("gen math     strong")), [], 65,
         ": no `gen math strong` line"),
        ("duplicate preset", None, sh_text + code_line + "\n", [], 65,
         f":{len(sh_text.splitlines()) + 1}: a second `gen code strong` line (the first: "
         f"line {code})"),
        ("presets missing", None, None, ["--presets", "/nonexistent/make.sh"], 66,
         "/nonexistent/make.sh: no such file"),
        # arguments
        ("unknown argument", None, None, ["--bogus"], 64, "unrecognized arguments: --bogus"),
        ("--sources without FILE", None, None, ["--sources"], 64,
         "argument --sources: expected one argument"),
        ("abbreviated option", None, None, ["--sour", "x"], 64, "unrecognized arguments"),
    ]
    # every case runs the script's main() in this process (fast); these also run as
    # a process of their own: the exit status and stderr the shell sees
    whole = {"text tau", "duplicate row", "2-depth preset", "sources missing",
             "unknown argument"}
    m = _module()
    with tempfile.TemporaryDirectory() as tmp:
        for name, src, pre, extra, code_want, msg in cases:
            args = list(extra)
            if src is not None:
                f = Path(tmp) / "acceptance-sources.csv"
                (f.write_bytes if isinstance(src, bytes) else f.write_text)(src)
                args += ["--sources", str(f)]
            if pre is not None:
                f = Path(tmp) / "make_workloads.sh"
                f.write_text(pre)
                args += ["--presets", str(f)]
            runs = []
            out, errs = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errs):
                rc = m.main(args)
            runs.append((rc, out.getvalue(), errs.getvalue().strip()))
            if name in whole:
                p = transfer(*args)
                runs.append((p.returncode, p.stdout, p.stderr.strip()))
            for rc, out_s, err in runs:
                # "\u2026" in a message stands for a number that moves with the
                # fitted presets: every other part must appear, in order
                parts = msg.split("\u2026")
                found = re.search(".*?".join(re.escape(x) for x in parts), err) is not None
                if rc != code_want or not found or "Traceback" in err \
                        or len(err.splitlines()) != (2 if code_want == 64 else 1) or out_s:
                    fail(f"{name}: exit {rc} (want {code_want}), stderr {err!r} "
                         f"(want one line with {msg!r}), stdout {out_s[:60]!r}")
            if code_want == 65 and (src is not None or pre is not None) \
                    and str(Path(tmp)) not in runs[0][2]:
                fail(f"{name}: the message does not name the file: {err!r}")
        # unaltered copies give the shipped lines; an unwritable output is refused
        (Path(tmp) / "s.csv").write_text(csv_text)
        (Path(tmp) / "m.sh").write_text(sh_text)
        a, b = transfer(), transfer("--sources", str(Path(tmp) / "s.csv"),
                                    "--presets", str(Path(tmp) / "m.sh"))
        if a.returncode or b.returncode or a.stdout != b.stdout or not a.stdout:
            fail("--sources / --presets with copies of the shipped files change the output")
        with open("/dev/full", "w") as full:
            p = transfer(stdout=full)
        if p.returncode != 73 or "cannot write the output" not in p.stderr \
                or "Traceback" in p.stderr:
            fail(f"output to /dev/full: exit {p.returncode}, {p.stderr.strip()!r}")
    print(f"transfer_inputs: ok ({len(cases) + 2} cases)")


def explained_number(text: str, key: str) -> float:
    m = re.search(r"^" + re.escape(key) + r"\s+([-0-9.e+]+)\s", text, re.M)
    if not m:
        fail(f"no '{key}' line in `flashspec profiles --explain`")
    return float(m.group(1))


def case_calibration_reproduces() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cal"
        p = subprocess.run([BIN, "calibrate", "configs/calibration/oneplus12.lua", "-j", "2",
                            "-q", "-o", str(out), "--arg", "loo=approx"],
                           cwd=HOME, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            fail(f"calibrate: exit {p.returncode}: {p.stderr.strip()}")
        fitted: dict[str, tuple[float, float]] = {}
        for line in p.stdout.splitlines():
            m = re.match(r"^\s+([a-z_]+)\s+([-0-9.e+]+) \+/- ([-0-9.e+na]+)$", line)
            if m:
                fitted[m.group(1)] = (float(m.group(2)), float(m.group(3)))
        for f in ("oneplus12-b-setup.md", "oneplus12-b-setup.csv", "oneplus12-fit.lua"):
            if not (out / f).is_file():
                fail(f"calibrate wrote no {f}")
        # the shipped values as the profile resolves them (from its runtime part)
        shipped_dev = run("profiles", "--explain", "oneplus12")
        want = {k: explained_number(shipped_dev, k) for k in ("npu_gflops", "verify_graph_us")}
        # presets: depth-1 acceptance a per workload, decay r per draft (a r^(d-1))
        for (t, d, target), acc in ACCEPT.items():
            if target or t not in TASKS:
                continue  # derived from the fit, not fitted (workloads_transfer)
            want[f"accept_{t}_{d}"] = acc[0]
            want[f"decay_{d}"] = acc[1] / acc[0]
        if len(want) != 10 or set(want) != set(fitted):
            fail(f"fitted {sorted(fitted)} != shipped {sorted(want)}")
        for k, v in want.items():
            x, se = fitted[k]
            print(f"{k:24s} fitted {x:12.6g} +/- {se:.3g}   shipped {v:12.6g}")
            if abs(x - v) > 0.01 * abs(v) or abs(x - v) > se:
                fail(f"{k}: fitted {x} +/- {se} does not reproduce the shipped {v}")
        # the derived profile loads on top of the shipped one
        cfg = Path(tmp) / "configs"
        subprocess.run(["cp", "-r", str(HOME / "configs"), str(cfg)], check=True)
        (cfg / "devices" / "oneplus12-fit.lua").write_text((out / "oneplus12-fit.lua").read_text())
        env = dict(os.environ, FLASHSPEC_CONFIG_DIR=str(cfg))
        q = subprocess.run([BIN, "profile", "oneplus12-fit", "qwen3-8b-q4_0"], env=env,
                           capture_output=True, text=True, timeout=60)
        if q.returncode != 0 or "flash-ar token   1050.0 ms" not in q.stdout:
            fail(f"the fitted profile does not load or changes Flash-AR: {q.stderr.strip()}")
    print("calibration_reproduces: ok")


# --- parts and provenance -------------------------------------------------------

EXPLAIN_ROW = re.compile(r"^(\w+)\s+(\S+)\s+(default|part|fit|base|override)\s+(\S+)\s+(\S+)\s+(.*)$")
NEUTRAL_DEFAULTS = {"thermal"}  # off: the one key a device may leave to its default


def explain(name: str, env: dict | None = None) -> dict[str, tuple[str, ...]]:
    p = subprocess.run([BIN, "profiles", "--explain", name], cwd=HOME, capture_output=True,
                       text=True, timeout=60, env=env)
    if p.returncode != 0:
        fail(f"profiles --explain {name}: exit {p.returncode}: {p.stderr.strip()}")
    rows = {}
    for line in p.stdout.splitlines():
        m = EXPLAIN_ROW.match(line)
        if m and m.group(1) != "key":
            rows[m.group(1)] = m.groups()[1:]
    return rows


def bad_run(args: list[str], code: int, *needles: str, env: dict | None = None) -> None:
    p = subprocess.run([BIN, *args], cwd=HOME, capture_output=True, text=True, timeout=60, env=env)
    if p.returncode != code or p.stderr.count("\n") != 1 or \
            not all(n in p.stderr for n in needles):
        fail(f"{' '.join(args)}: exit {p.returncode} (want {code}), {p.stderr!r}, want {needles}")


def case_parts_explain() -> None:
    keys = None
    for dev in sorted(p.stem for p in (HOME / "configs" / "devices").glob("*.lua")):
        rows = explain(dev)
        keys = keys or set(rows)
        if set(rows) != keys or len(keys) < 40:
            fail(f"{dev}: --explain lists {len(rows)} keys")
        for k, (value, src, rng, where, cite) in rows.items():
            if src == "default" and k not in NEUTRAL_DEFAULTS:
                fail(f"{dev}: {k} = {value} comes from its default")
            if src != "default" and (where == "-" or cite in ("", "-")):
                fail(f"{dev}: {k} ({src}) names no file or citation: {where} {cite!r}")
            if src in ("part", "fit") and "configs/parts/" not in where and \
                    "configs/devices/" not in where:
                fail(f"{dev}: {k} from {where}")
        print(f"{dev}: {len(rows)} keys, "
              f"{sum(r[1] in ('part', 'fit') for r in rows.values())} from parts, "
              f"ranges on {sorted(k for k, r in rows.items() if r[2] != '-')}")
    one = explain("oneplus12")
    # its ranges: only the mechanisms no measurement sizes (the runtime's priors)
    if sorted(k for k, r in one.items() if r[2] != "-") != ["npu_call_us"] or \
            one["npu_call_us"][2] != "0..5000" or one["npu_gflops"][1] != "fit":
        fail("the OnePlus 12 states a range beyond npu_call_us 0..5000, or its NPU rate is not "
             "the runtime's fit")
    for dev in ("oneplus12", "sd8elite_ufs31"):
        out = subprocess.run([BIN, "profiles", "--explain", dev], cwd=HOME, capture_output=True,
                             text=True).stdout
        var = out[out.index("\nvariants"):] if "\nvariants" in out else ""
        if re.search(r"=[-0-9.]+e[+-]", var):
            fail(f"{dev}: a variant's value in exponent form: {var!r}")
        if dev == "oneplus12" and not re.search(r"^  parts_slow +npu_call_us=5000$", var, re.M):
            fail(f"oneplus12: parts_slow charges 5 ms a stand-alone NPU call: {var!r}")
    e31 = explain("sd8elite_ufs31")
    for k in ("npu_gflops", "verify_graph_us", "launch_us", "cpu_gbps", "request_latency_us"):
        if e31[k][2] == "-":
            fail(f"sd8elite_ufs31: {k} has no range")
    if "soc/sd8gen3" in " ".join(r[3] for r in e31.values()):
        fail("sd8elite_ufs31 takes a value from the 8 Gen 3's part")
    p = subprocess.run([BIN, "profiles", "parts"], cwd=HOME, capture_output=True, text=True)
    want = sorted(f"{q.parent.name}/{q.stem}" for q in (HOME / "configs" / "parts").glob("*/*.lua"))
    got = sorted(re.findall(r"^(\w+/[\w.+-]+) ", p.stdout, re.M))
    if p.returncode != 0 or got != want:
        fail(f"profiles parts: exit {p.returncode}, {got} != {want}")
    md = subprocess.run([BIN, "profiles", "--explain", "sd8elite_ufs41", "--markdown"], cwd=HOME,
                        capture_output=True, text=True).stdout
    if "| `read_gbps` | 4.3 | part | - | configs/parts/flash/ufs4.1.lua:" not in md:
        fail("--markdown explain row of read_gbps")
    # bad input: one line, its exit code
    bad_run(["profiles", "--explain", "oneplus13"], 66, "no device or model profile 'oneplus13'",
            "did you mean 'oneplus12'")
    bad_run(["profiles", "--explain"], 64, "'--explain'")
    bad_run(["profiles", "parts", "--explain", "oneplus12"], 64, "no --explain with 'parts'")
    bad_run(["profiles", "models", "--explain", "oneplus12"], 66, "no model profile 'oneplus12'")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "configs"
        subprocess.run(["cp", "-r", str(HOME / "configs"), str(cfg)], check=True)
        env = dict(os.environ, FLASHSPEC_CONFIG_DIR=str(cfg))
        part = cfg / "parts" / "flash" / "ufs4.1.lua"
        part.write_text(part.read_text().replace("read_gbps = 4.3,", "read_gbps = 4.3,\n  dram_gbps = 9,"))
        bad_run(["profiles", "--explain", "sd8elite_ufs41"], 78, "ufs4.1.lua:5:",
                "key 'dram_gbps' is not a flash key (it belongs to dram parts)", env=env)
        p = subprocess.run([BIN, "profiles", "parts"], capture_output=True, text=True, env=env)
        if p.returncode != 78 or "flash/ufs4.1" not in p.stdout or "does not load" not in p.stdout:
            fail(f"profiles parts with a broken part: {p.returncode} {p.stdout!r}")
        dev = cfg / "devices" / "sd8elite_ufs31.lua"
        dev.write_text(dev.read_text().replace('flash = "ufs3.1"', 'flash = "ufs31"'))
        bad_run(["profile", "sd8elite_ufs31", "qwen3-8b-q4_0"], 66, "sd8elite_ufs31.lua:21:",
                "unknown flash part 'ufs31'", "did you mean 'ufs3.1'", env=env)
    print("parts_explain: ok")


CASES = {
    "device_profiles": case_device_profiles,
    "citation_lint": case_citation_lint,
    "workloads_regen": case_workloads_regen,
    "workloads_check": case_workloads_check,
    "workloads_stats": case_workloads_stats,
    "workloads_transfer": case_workloads_transfer,
    "workloads_pairs": case_workloads_pairs,
    "transfer_rule": case_transfer_rule,
    "transfer_inputs": case_transfer_inputs,
    "calibration_reproduces": case_calibration_reproduces,
    "parts_explain": case_parts_explain,
    "edge_phones": case_edge_phones,
}


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: {sys.argv[0]} {{{'|'.join(CASES)}}}")
        sys.exit(2)
    CASES[sys.argv[1]]()


if __name__ == "__main__":
    main()
