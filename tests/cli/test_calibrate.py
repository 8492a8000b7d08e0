#!/usr/bin/python3
"""flashspec calibrate end to end (tests/cli/calibrate/spec.lua).

    test_calibrate.py CASE

Cases:
  recover      measurements made by the simulator with known values (a phone's
               npu_gflops and verify_setup_us, a workload's acceptance), with 0.5%
               Gaussian noise, are fitted back from two different starts: the
               device values within 3 standard errors, the acceptance within 3
               standard errors or 0.01 (a small trace's acceptance is only
               resolved to the plateaus of its discrete draws); the report, the
               residual CSV and the derived profile are written, and the profile
               loads on top of the shipped one.
  loo          loo = "exact" refits without each row: every row gets a finite
               leave-one-out error, on average no smaller than its residual.
  determinism  -j 1 and -j 2 write byte-identical reports.
  bad          each bad input is one line on stderr, the documented exit code and
               no output directory: an unknown metric, an unknown key column, a
               row no point matches, a value that is not positive, a start outside
               its bounds, bounds with lo >= hi, a fit that does not converge, a
               missing reference, a directory or a FIFO as the reference, an
               unknown spec key (with the nearest one), points that is not a
               function, more parameters than rows, a points function that raises.

Environment: FLASHSPEC_BIN (the binary), FLASHSPEC_HOME (the project root).
"""
from __future__ import annotations

import csv
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
SPEC = os.path.join(HOME, "tests", "cli", "calibrate", "spec.lua")
TRUTH = {"npu_gflops": 700.0, "verify_setup_us": 200000.0, "a": 0.55}


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(*args: str, timeout: int = 300, env: dict | None = None):
    return subprocess.run([BIN, *args], cwd=HOME, capture_output=True, text=True,
                          timeout=timeout, env=env)


def reference(tmp: str, noise: float = 0.005) -> str:
    """The measurements the known values give, with seeded Gaussian noise."""
    p = run("run", SPEC, "-q", "--arg", "mode=truth")
    if p.returncode != 0:
        fail(f"truth run: {p.stderr.strip()}")
    rows = list(csv.reader(p.stdout.splitlines()))
    rng = random.Random(7)
    for r in rows[1:]:
        r[5] = repr(float(r[5]) * (1.0 + rng.gauss(0.0, noise)))
    path = os.path.join(tmp, "ref.csv")
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return path


def fit(out: str, ref: str, *args: str, jobs: str = "2"):
    return run("calibrate", SPEC, "-j", jobs, "-q", "-o", out, "--arg", "mode=fit", "--arg",
               f"ref={ref}", *args)


def params(stdout: str) -> dict[str, tuple[float, float]]:
    return {m.group(1): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^param (\w+) (\S+) (\S+)$", stdout, re.M)}


def case_recover() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ref = reference(tmp)
        for i, (g, s, a) in enumerate([("400", "50000", "0.35"), ("1500", "800000", "0.8")]):
            out = os.path.join(tmp, f"out{i}")
            p = fit(out, ref, "--arg", f"s_gflops={g}", "--arg", f"s_setup={s}",
                    "--arg", f"s_a={a}")
            if p.returncode != 0:
                fail(f"fit from {g}/{s}/{a}: exit {p.returncode}: {p.stderr.strip()}")
            got = params(p.stdout)
            if set(got) != set(TRUTH):
                fail(f"fitted {sorted(got)}")
            for k, want in TRUTH.items():
                x, se = got[k]
                tol = 3 * se if k != "a" else max(3 * se, 0.01)
                print(f"start {g}/{s}/{a}: {k} = {x:.6g} +/- {se:.3g} (truth {want})")
                if not (math.isfinite(se) and se > 0 and abs(x - want) <= tol):
                    fail(f"{k}: fitted {x} +/- {se}, truth {want}")
            for f in ("small.md", "small.csv", "small-fit.lua"):
                if not os.path.isfile(os.path.join(out, f)):
                    fail(f"no {f} written")
        md = open(os.path.join(out, "small.md")).read()
        for needle in ("## Parameters", "## Residuals", "standard error", "leave-one-out",
                       "AIC", "BIC", "`npu_gflops`"):
            if needle not in md:
                fail(f"report lacks {needle!r}")
        prof = open(os.path.join(out, "small-fit.lua")).read()
        if 'base = "oneplus12"' not in prof or "npu_gflops = " not in prof or \
                "verify_setup_us = " not in prof or re.search(r"^\s*a = ", prof, re.M):
            fail(f"derived profile: {prof}")
        # the derived profile loads on top of the shipped one, with the fitted values
        cfg = os.path.join(tmp, "configs")
        shutil.copytree(os.path.join(HOME, "configs"), cfg)
        shutil.copy(os.path.join(out, "small-fit.lua"), os.path.join(cfg, "devices"))
        env = dict(os.environ, FLASHSPEC_CONFIG_DIR=cfg)
        q = run("profile", "small-fit", "qwen3-8b-q4_0", env=env)
        if q.returncode != 0 or "flash-ar token   1050.0 ms" not in q.stdout:
            fail(f"derived profile does not load: {q.stderr.strip()}")
    print("recover: ok")


def case_loo() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ref = reference(tmp)
        out = os.path.join(tmp, "out")
        p = fit(out, ref, "--arg", "loo=exact")
        if p.returncode != 0:
            fail(f"exact loo: {p.stderr.strip()}")
        with open(os.path.join(out, "small.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        errs = [(abs(float(r["error"])), abs(float(r["loo_error"]))) for r in rows]
        if len(errs) != 9 or not all(math.isfinite(l) for _, l in errs):
            fail(f"leave-one-out errors: {errs}")
        if sum(l for _, l in errs) < sum(e for e, _ in errs) - 1e-9:
            fail(f"leaving rows out fits them better on average: {errs}")
        if "leave-one-out (exact)" not in open(os.path.join(out, "small.md")).read():
            fail("the report does not say which leave-one-out")
    print("loo: ok")


def case_determinism() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ref = reference(tmp)
        outs = []
        for j in ("1", "2"):
            out = os.path.join(tmp, f"j{j}")
            p = fit(out, ref, jobs=j)
            if p.returncode != 0:
                fail(f"-j {j}: {p.stderr.strip()}")
            outs.append(out)
        for f in ("small.md", "small.csv", "small-fit.lua"):
            a, b = (open(os.path.join(o, f), "rb").read() for o in outs)
            if a != b:
                fail(f"{f} differs between -j 1 and -j 2")
    print("determinism: ok")


def case_bad() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        good = reference(tmp)
        lines = open(good).read().splitlines()

        def variant(name: str, edit) -> str:
            p = os.path.join(tmp, name)
            with open(p, "w") as f:
                f.write("\n".join(edit(list(lines))) + "\n")
            return p

        def row(i: int, col: int, value: str):
            def edit(ls):
                cells = ls[i].split(",")
                cells[col] = value
                ls[i] = ",".join(cells)
                return ls
            return edit

        fifo = os.path.join(tmp, "fifo.csv")
        os.mkfifo(fifo)
        cases = [
            ("unknown metric", variant("m.csv", row(2, 4, "no_such_ms")), [], 65,
             "unknown metric"),
            ("unknown key column", variant("k.csv", row(0, 1, "polcy")), [], 65,
             "unknown key column 'polcy'"),
            ("row matching no point", variant("n.csv", row(2, 0, "llama3.1-8b-q4_0")), [], 65,
             "no point matches"),
            ("value not positive", variant("v.csv", row(2, 5, "-1")), [], 65, "positive"),
            ("start outside bounds", good, ["--arg", "bad=bounds"], 78, "violates its bounds"),
            ("lo >= hi", good, ["--arg", "bad=lohi"], 78, "lo < hi"),
            ("no convergence", good, ["--arg", "max_iter=1", "--arg", "s_gflops=4000",
                                      "--arg", "s_setup=2e6", "--arg", "s_a=0.95"], 65,
             "did not converge"),
            ("missing reference", os.path.join(tmp, "none.csv"), [], 66, "not found"),
            ("reference is a directory", tmp, [], 65, "not a regular file"),
            ("reference is a FIFO", fifo, [], 65, "not a regular file"),
            ("unknown spec key", good, ["--arg", "bad=key"], 78, "did you mean 'reference'"),
            ("points not a function", good, ["--arg", "bad=nofn"], 78, "must be a function"),
            ("more params than rows", good, ["--arg", "bad=many"], 78, "reference rows"),
            ("points raises", good, ["--arg", "bad=raise"], 78, "spec.lua:"),
        ]
        for what, ref, extra, code, needle in cases:
            out = os.path.join(tmp, "out-" + re.sub(r"\W", "_", what))
            try:
                p = fit(out, ref, *extra)
            except subprocess.TimeoutExpired:
                fail(f"{what}: hung")
            err = p.stderr.strip().splitlines()
            if p.returncode != code or len(err) != 1 or not err[0].startswith("flashspec: ") \
                    or needle not in err[0]:
                fail(f"{what}: want exit {code} and one line with {needle!r}; got "
                     f"{p.returncode}: {p.stderr.strip()}")
            if os.path.exists(out) and os.listdir(out):
                fail(f"{what}: wrote {os.listdir(out)}")
            print(f"bad input, {what}: exit {code}: {err[0]}")
    print("bad: ok")


CASES = {"recover": case_recover, "loo": case_loo, "determinism": case_determinism,
         "bad": case_bad}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: {sys.argv[0]} {{{'|'.join(CASES)}}}")
        sys.exit(2)
    CASES[sys.argv[1]]()
