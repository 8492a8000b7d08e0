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
  workloads_regen   scripts/make_workloads.sh regenerates the 19
                    traces/data/workload-*.h5 byte for byte (SHA-256).
  workloads_check   each workload passes `flashspec trace check` and stays small.
  workloads_stats   `flashspec trace stats`: the expected accepted length of an
                    8-token chain is ordered code, math > dialogue for each draft
                    and strong > weak for each task, and the top-1 acceptance by
                    depth matches the preset's knob.
  workloads_transfer
                    scripts/transfer_acceptance.py derives the 13 HumanEval and
                    other-target lines make_workloads.sh holds, and each keeps its
                    source's acceptance-length ratio to Qwen3-8B.
  calibration_reproduces
                    `flashspec calibrate configs/calibration/oneplus12.lua` fits
                    the values the shipped OnePlus 12 profile and the workload
                    presets hold (each within 1% and within its standard error),
                    writes its report and the derived profile, and that profile
                    loads.
Exit 0 on success, 1 with a message on failure.
"""
from __future__ import annotations

import hashlib
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


# The presets and their per-depth --accept knobs, read from scripts/make_workloads.sh:
# (task, draft, target) -> knobs, target None for Qwen3-8B (fitted to Lever Table 5,
# and its HumanEval preset; the other targets transferred; WORKLOADS.md).
def _knobs() -> dict[tuple[str, str, str | None], list[float]]:
    text = (HOME / "scripts" / "make_workloads.sh").read_text()
    out: dict[tuple[str, str, str | None], list[float]] = {
        (m.group(1), m.group(2), None): [float(x) for x in m.group(3).split(",")]
        for m in re.finditer(r"^gen (\w+) +(\w+) +([0-9.,]+) ", text, re.M)}
    for m in re.finditer(r"^gen_target ([\w.-]+) \d+ \d+ \d+ (\w+) ([0-9.,]+) ", text, re.M):
        out[(m.group(2), "strong", m.group(1))] = [float(x) for x in m.group(3).split(",")]
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
    """Every preset make_workloads.sh writes: 6 fitted, HumanEval, 12 transferred."""
    want = [(t, d, None) for t in TASKS for d in DRAFTS] + [("humaneval", "strong", None)]
    want += [(t, "strong", g) for g in OTHER_TARGETS for t in TASKS + ("humaneval",)]
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
    print("workloads_stats: ok")


def case_workloads_transfer() -> None:
    """scripts/transfer_acceptance.py derives exactly the lines make_workloads.sh
    holds, and each derived preset's 8-chain acceptance length is its source's
    ratio times the Qwen3-8B preset's (to the 6 digits the presets carry)."""
    p = subprocess.run(["/usr/bin/python3", str(HOME / "scripts" / "transfer_acceptance.py")],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        fail(f"transfer_acceptance.py: exit {p.returncode}: {p.stderr.strip()}")
    lines = p.stdout.splitlines()
    text = (HOME / "scripts" / "make_workloads.sh").read_text().splitlines()
    missing = [x for x in lines if x not in text]
    if len(lines) != 13 or missing:
        fail(f"make_workloads.sh does not hold the derived lines ({len(lines)} derived; "
             f"missing {missing[:2]})")
    import csv
    with open(HOME / "traces" / "data" / "acceptance-sources.csv", newline="") as f:
        src = {(r["target"], r["benchmark"]): float(r["tau"]) for r in csv.DictReader(f)}
    bench = {"code": "HumanEval", "math": "GSM8K", "dialogue": "MT-Bench",
             "humaneval": "HumanEval"}
    for t in TASKS + ("humaneval",):
        base = 1 + chain_accepted(ACCEPT[(t, "strong", None)])
        for g in OTHER_TARGETS:
            got = 1 + chain_accepted(ACCEPT[(t, "strong", g)])
            want = base * src[(g, bench[t])] / src[("qwen3-8b", bench[t])]
            if abs(got - want) > 1e-4 * want:
                fail(f"{t}-{g}: tau {got:.5f}, the source ratio gives {want:.5f}")
    print("workloads_transfer: ok (13 derived presets)")


def lua_number(text: str, key: str) -> float:
    m = re.search(r"^\s*" + re.escape(key) + r"\s*=\s*([-0-9.e+]+)", text, re.M)
    if not m:
        fail(f"no '{key} = NUMBER' line")
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
        shipped_dev = (HOME / "configs" / "devices" / "oneplus12.lua").read_text()
        want = {k: lua_number(shipped_dev, k) for k in ("npu_gflops", "verify_graph_us")}
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


CASES = {
    "device_profiles": case_device_profiles,
    "citation_lint": case_citation_lint,
    "workloads_regen": case_workloads_regen,
    "workloads_check": case_workloads_check,
    "workloads_stats": case_workloads_stats,
    "workloads_transfer": case_workloads_transfer,
    "calibration_reproduces": case_calibration_reproduces,
}


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: {sys.argv[0]} {{{'|'.join(CASES)}}}")
        sys.exit(2)
    CASES[sys.argv[1]]()


if __name__ == "__main__":
    main()
