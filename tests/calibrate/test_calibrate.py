#!/usr/bin/python3
"""flashspec calibrate end to end: fits of known values, leave-one-out,
determinism, and every bad input (tests/calibrate/data/).

    test_calibrate.py CASE

The specs (data/):
  device.lua    a phone with known npu_gflops = 700, verify_setup_us = 200000,
                launch_us = 600 (Flash-AR on two targets, EAGLE-2 trees of 16 and
                32 nodes, Chain-SD k = 8 on a small synthetic trace); --arg
                mode=truth prints the rows those values give, mode=fit fits them,
                mode=check prints the rows of fs.device(PROFILE) without overrides.
  accept.lua    a workload with known acceptance 0.55 (two synthetic traces of
                different seeds, Chain-SD k = 4 and 8): tokens_per_s and
                mean_accepted; --arg rep=R draws the truth from other seeds,
                --arg boot=N bootstraps the fit (bootstrap_coverage).
  bad-spec.lua  a small valid spec (launch_us from Flash-AR) and, with --arg
                bad=WHAT, one mistake in it.
  ref-*.csv     fixed references for the bad-input cases (ref-device.csv: the
                truth of device.lua, rounded).

Every reference a fit recovers from is made at test time by a truth run, with
+/-0.5% deterministic noise, so the test follows the shipped profiles.

Every failing case checks: the documented exit code, exactly one line on stderr
starting with "flashspec: " that names the file (and the line where there is
one), and nothing in -o DIR (absent or empty).  Runs without -q, so progress or
"wrote" lines would count as extra lines.

Environment: FLASHSPEC_BIN (the binary), FLASHSPEC_HOME (the project root).
"""
from __future__ import annotations

import csv
import io
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.path.abspath(os.environ.get("FLASHSPEC_HOME", os.getcwd()))
DATA = os.path.join(HOME, "tests", "calibrate", "data")
DEVICE = os.path.join(DATA, "device.lua")
ACCEPT = os.path.join(DATA, "accept.lua")
BADSPEC = os.path.join(DATA, "bad-spec.lua")
REF_DEVICE = os.path.join(DATA, "ref-device.csv")
REF_FLASH = os.path.join(DATA, "ref-flash.csv")
REF_TWO = os.path.join(DATA, "ref-two.csv")

DEVICE_TRUTH = {"launch_us": 600.0, "npu_gflops": 700.0, "verify_setup_us": 200000.0}
ACCEPT_TRUTH = {"a": 0.55}
PROFILE = "cal-device-fit"


class Fail(Exception):
    pass


def expect(cond, what: str) -> None:
    if not cond:
        raise Fail(what)


_SCRATCH = tempfile.TemporaryDirectory()


def run(*args: str, env: dict | None = None, timeout: int = 120):
    # a `run` without -o would write results/NAME under the project, which the
    # tests running beside this one share (one writer per directory): its own
    if args and args[0] == "run" and "-o" not in args:
        args = (*args, "-o", tempfile.mkdtemp(dir=_SCRATCH.name))
    try:
        return subprocess.run([BIN, *args], cwd=HOME, capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise Fail(f"flashspec {' '.join(args)}: hung (no exit within {timeout} s)")


def line_of(path: str, marker: str) -> int:
    """1-based line of the first line of path holding marker."""
    with open(path) as f:
        for i, l in enumerate(f, 1):
            if marker in l:
                return i
    raise Fail(f"{path} has no {marker!r}")


# ------------------------------------------------------------- references

def truth_rows(spec: str) -> list[dict]:
    p = run("run", spec, "-q", "--arg", "mode=truth")
    expect(p.returncode == 0, f"truth run of {spec}: exit {p.returncode}: {p.stderr.strip()}")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    expect(rows and all(float(r["value"]) > 0 for r in rows), f"truth rows: {p.stdout!r}")
    return rows


def write_ref(rows: list[dict], path: str, noise: float = 0.005, seed: int = 20240601) -> None:
    """rows as a reference CSV, each value times 1 + U(-noise, noise) (seeded)."""
    rng = random.Random(seed)
    with open(path, "w", newline="") as f:
        f.write("# made by tests/calibrate/test_calibrate.py from a truth run\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            r = dict(r)
            r["value"] = repr(float(r["value"]) * (1.0 + rng.uniform(-noise, noise)))
            w.writerow(r)


def fit(spec: str, out: str, ref: str, *args: str, jobs: str = "2", quiet: bool = True,
        env: dict | None = None):
    q = ["-q"] if quiet else []
    return run("calibrate", spec, "-j", jobs, *q, "-o", out, "--arg", "mode=fit",
               "--arg", f"ref={ref}", *args, env=env)


def fitted(stdout: str) -> dict[str, tuple[float, float]]:
    return {m.group(1): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^param (\w+) (\S+) (\S+)$", stdout, re.M)}


def rms_of(stdout: str) -> tuple[float, float]:
    m = re.search(r"^rms (\S+) loo_rms (\S+)", stdout, re.M)
    expect(m, f"no rms line in {stdout!r}")
    return float(m.group(1)), float(m.group(2))


def residual_rows(out: str, name: str) -> list[dict]:
    with open(os.path.join(out, name + ".csv"), newline="") as f:
        return list(csv.DictReader(f))


def check_recovery(got: dict, truth: dict, rel: float = 0.02) -> None:
    expect(set(got) == set(truth), f"fitted {sorted(got)}, wanted {sorted(truth)}")
    for k, want in truth.items():
        x, se = got[k]
        tol = max(3 * se, rel * abs(want)) if math.isfinite(se) else rel * abs(want)
        print(f"  {k} = {x:.7g} +/- {se:.3g} (truth {want:g}, tolerance {tol:.3g})")
        expect(math.isfinite(x) and abs(x - want) <= tol,
               f"{k}: fitted {x} +/- {se}, truth {want}")
        expect(math.isfinite(se) and se >= 0, f"{k}: standard error {se}")


def check_residual_csv(out: str, name: str, ref_rows: list[dict], loo: str) -> list[dict]:
    rows = residual_rows(out, name)
    expect(len(rows) == len(ref_rows), f"{name}.csv: {len(rows)} rows, reference has "
           f"{len(ref_rows)}")
    for r, ref in zip(rows, ref_rows):
        meas, pred, err = float(r["measured"]), float(r["predicted"]), float(r["error"])
        expect(r["metric"] == ref["metric"], f"{name}.csv: metric {r['metric']} vs {ref}")
        # full precision (%.17g): the reference's value read back exactly
        expect(meas == float(ref["value"]),
               f"{name}.csv: measured {r['measured']} vs reference {ref['value']}")
        expect(math.isfinite(pred) and pred > 0, f"{name}.csv: predicted {pred}")
        expect(abs(err - (pred - meas) / meas) <= 1e-9, f"{name}.csv: error {err} is not "
               f"(predicted - measured) / measured")
        expect(int(r["points"]) >= 1, f"{name}.csv: row matched {r['points']} points")
        le = float(r["loo_error"])
        expect(math.isfinite(le) if loo != "none" else math.isnan(le),
               f"{name}.csv: loo_error {r['loo_error']} with loo = {loo}")
    return rows


# ------------------------------------------------------------- recovery

def case_progress_tty() -> None:
    """On a terminal (no -q) a fit shows one progress line, rewritten after
    every evaluation (count and RMS) and cleared at the end; not in a pipe."""
    import pty
    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "ref.csv")
        write_ref(truth_rows(ACCEPT), ref)
        master, slave = pty.openpty()
        p = subprocess.Popen([BIN, "calibrate", ACCEPT, "-j", "1", "-o", os.path.join(tmp, "o"),
                              "--arg", "mode=fit", "--arg", f"ref={ref}"], cwd=HOME,
                             stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        p.wait(timeout=120)
        os.close(master)
        text = seen.decode(errors="replace")
        expect(p.returncode == 0, f"exit {p.returncode}: {text[-500:]}")
        expect(re.search(r"\rflashspec: calibrate accept: evaluation \d+, RMS [0-9.]+%", text)
               and re.search(r"\r {60,}\rflashspec: wrote", text),
               f"no progress line on a terminal, or not cleared: {text[-300:]!r}")
        p = fit(ACCEPT, os.path.join(tmp, "o2"), ref, quiet=False)
        expect(p.returncode == 0 and "evaluation" not in p.stderr,
               f"progress in a pipe: {p.stderr!r}")
    print("progress_tty: ok")


def case_interrupt() -> None:
    """SIGTERM during a fit: exit 130, one line that says the calibration is
    not kept and starts over (a calibration saves no points, so no resume is
    promised), and nothing written."""
    import signal
    import time
    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "ref.csv")
        write_ref(truth_rows(ACCEPT), ref)
        out = os.path.join(tmp, "o")
        p = subprocess.Popen([BIN, "calibrate", ACCEPT, "-j", "1", "-q", "-o", out, "--arg",
                              "mode=fit", "--arg", f"ref={ref}", "--arg", "boot=40"], cwd=HOME,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.4)
        expect(p.poll() is None, f"the fit ended before the signal: {p.returncode}")
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        lines = [l for l in err.splitlines() if l.strip()]
        expect(p.returncode == 130, f"exit {p.returncode}: {err!r}")
        expect("interrupted during flashspec.calibrate: a fit is not saved as it goes, so "
               "nothing is kept; running the command again starts it over" in lines[-1] and
               "resume" not in lines[-1], f"last line {lines[-1]!r}")
        expect(not os.path.exists(out), f"{out} written")
    print("interrupt: ok")


def case_loo_far() -> None:
    """A leave-one-out error far beyond the in-sample RMS (over 3x it and over
    10%) is said once on stderr, marked (far) in the report and loo_far in the
    rows; a clean fit says nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        truth = truth_rows(DEVICE)
        clean = os.path.join(tmp, "clean.csv")
        write_ref(truth, clean)
        p = fit(DEVICE, os.path.join(tmp, "o1"), clean, "--arg", "loo=exact")
        expect(p.returncode == 0 and "leave-one-out error" not in p.stderr,
               f"clean fit: {p.returncode} {p.stderr!r}")
        bad = [dict(r) for r in truth]
        bad[3]["value"] = repr(float(bad[3]["value"]) * 1.5)
        skewed = os.path.join(tmp, "skewed.csv")
        write_ref(bad, skewed)
        out = os.path.join(tmp, "o2")
        p = fit(DEVICE, out, skewed, "--arg", "loo=exact")
        warn = [l for l in p.stderr.splitlines() if "leave-one-out error" in l]
        expect(p.returncode == 0 and len(warn) == 1 and
               re.search(r"warning: .*device\.lua:\d+: calibration device: \d+ leave-one-out "
                         r"errors? beyond \d+% \(3x the in-sample RMS", warn[0]),
               f"skewed fit: {p.returncode} {p.stderr!r}")
        md = open(os.path.join(out, "device.md")).read()
        expect("(far)" in md and "the fit leans on that row" in md, md[-800:])
    print("loo_far: ok")


def case_se_scales() -> None:
    """The standard errors measure the noise: the same noise pattern at 10x the
    size gives ~10x the standard error of every parameter (a fit whose
    residual-variance scale were dropped or doubled would not), and at 0.5%
    noise each is small beside its value (the truth is identifiable here)."""
    with tempfile.TemporaryDirectory() as tmp:
        truth = truth_rows(DEVICE)
        se = {}
        for noise in (0.005, 0.05):
            ref = os.path.join(tmp, f"ref{noise}.csv")
            write_ref(truth, ref, noise=noise, seed=5)
            p = fit(DEVICE, os.path.join(tmp, f"out{noise}"), ref, "--arg", "s_gflops=600",
                    "--arg", "s_setup=2e5", "--arg", "s_launch=600")
            expect(p.returncode == 0, f"noise {noise}: exit {p.returncode}: {p.stderr.strip()}")
            se[noise] = fitted(p.stdout)
        for k in DEVICE_TRUTH:
            (x1, s1), (x2, s2) = se[0.005][k], se[0.05][k]
            ratio = s2 / s1
            print(f"  {k}: SE {s1:.4g} at 0.5% noise, {s2:.4g} at 5%: ratio {ratio:.2f}")
            expect(7 <= ratio <= 14, f"{k}: 10x the noise gave {ratio:.2f}x the SE")
            expect(s1 < 0.02 * abs(x1), f"{k}: SE {s1} at 0.5% noise is not small beside {x1}")
    print("se_scales: ok")


def case_recover_device() -> None:
    """Phone parameters from noisy measurements, from two starts; the derived
    profile is written and loads in place of the shipped one."""
    with tempfile.TemporaryDirectory() as tmp:
        truth = truth_rows(DEVICE)
        ref = os.path.join(tmp, "ref.csv")
        write_ref(truth, ref)
        ref_rows = list(csv.DictReader(l for l in open(ref) if not l.startswith("#")))
        for i, (g, s, l) in enumerate([("300", "50000", "200"), ("2500", "1e6", "3000")]):
            out = os.path.join(tmp, f"out{i}")
            p = fit(DEVICE, out, ref, "--arg", f"s_gflops={g}", "--arg", f"s_setup={s}",
                    "--arg", f"s_launch={l}", "--arg", f"profile={PROFILE}")
            expect(p.returncode == 0, f"fit from {g}/{s}/{l}: exit {p.returncode}: "
                   f"{p.stderr.strip()}")
            print(f"start npu_gflops={g} verify_setup_us={s} launch_us={l}:")
            check_recovery(fitted(p.stdout), DEVICE_TRUTH)
            rms, loo_rms = rms_of(p.stdout)
            print(f"  rms {rms:.4%}, leave-one-out {loo_rms:.4%}")
            expect(rms < 0.01, f"RMS {rms} with 0.5% noise")
            expect(sorted(os.listdir(out)) == sorted(["device.md", "device.csv",
                                                      PROFILE + ".lua"]),
                   f"outputs {sorted(os.listdir(out))}")
            check_residual_csv(out, "device", ref_rows, "approx")
            md = open(os.path.join(out, "device.md")).read()
            for needle in ("# Calibration `device`", "## Parameters", "## Residuals",
                           "standard error", "leave-one-out (approx)", "AIC", "BIC",
                           "`npu_gflops`", "`verify_setup_us`", "`launch_us`",
                           "`verify_ms-flash_ms`"):
                expect(needle in md, f"device.md lacks {needle!r}")
            prof = open(os.path.join(out, PROFILE + ".lua")).read()
            expect('base = "oneplus12"' in prof, f"profile lacks the base: {prof}")
            expect(f'name = "{PROFILE}"' in prof, f"profile lacks its name: {prof}")
            keys = dict(re.findall(r"^\s*(\w+) = ([-+.\deE]+),", prof, re.M))
            expect(set(keys) == set(DEVICE_TRUTH), f"profile keys {sorted(keys)}: {prof}")
            for k, v in keys.items():
                expect(abs(float(v) - DEVICE_TRUTH[k]) <= 0.02 * DEVICE_TRUTH[k],
                       f"profile {k} = {v}")
        # the last fit's profile loads by name from a configuration directory
        cfg = os.path.join(tmp, "configs")
        shutil.copytree(os.path.join(HOME, "configs"), cfg)
        shutil.copy(os.path.join(out, PROFILE + ".lua"), os.path.join(cfg, "devices"))
        env = dict(os.environ, FLASHSPEC_CONFIG_DIR=cfg)
        p = run("run", DEVICE, "-q", "--arg", "mode=check", "--arg", f"profile={PROFILE}",
                env=env)
        expect(p.returncode == 0, f"fs.device('{PROFILE}') does not load: {p.stderr.strip()}")
        got = list(csv.DictReader(io.StringIO(p.stdout)))
        expect(len(got) == len(truth), f"check run printed {p.stdout!r}")
        for g, t in zip(got, truth):
            expect(g["device"] == PROFILE, f"device column {g['device']}, wanted {PROFILE}")
            expect(g["metric"] == t["metric"] and g["target"] == t["target"], f"{g} vs {t}")
            x, want = float(g["value"]), float(t["value"])
            print(f"  {PROFILE}: {t['target']} {t['policy']} {t['metric']} = {x:.6g} "
                  f"(truth {want:.6g})")
            expect(abs(x - want) <= 0.02 * want, f"{t['metric']} of {t['policy']} on the "
                   f"fitted profile: {x}, truth {want}")
        # the fitted keys are the calibration's layer over the base: fits, with their text
        p = run("profiles", "--explain", PROFILE, env=env)
        for k in DEVICE_TRUTH:
            m = re.search(rf"^{k}\s+\S+\s+(\w+)\s+\S+\s+(\S+)\s+(.*)$", p.stdout, re.M)
            expect(p.returncode == 0 and m and m.group(1) == "fit" and PROFILE in m.group(2)
                   and "flashspec calibrate" in m.group(3), f"--explain {PROFILE}: {k}: {p.stdout}")
        # without the file the name is unknown: the profile came from the copy
        p = run("run", DEVICE, "-q", "--arg", "mode=check", "--arg", f"profile={PROFILE}")
        expect(p.returncode != 0 and f"unknown device '{PROFILE}'" in p.stderr,
               f"{PROFILE} loads without the written file: exit {p.returncode} {p.stderr!r}")
    print("recover_device: ok")


def case_recover_accept() -> None:
    """A synthetic workload's acceptance from Chain-SD throughput and mean
    accepted tokens on two traces of different seeds, from two starts."""
    with tempfile.TemporaryDirectory() as tmp:
        truth = truth_rows(ACCEPT)
        expect(len({r["trace"] for r in truth}) == 2, f"traces {truth}")
        ref = os.path.join(tmp, "ref.csv")
        write_ref(truth, ref, seed=7)
        ref_rows = list(csv.DictReader(l for l in open(ref) if not l.startswith("#")))
        for i, a in enumerate(("0.2", "0.85")):
            out = os.path.join(tmp, f"out{i}")
            p = fit(ACCEPT, out, ref, "--arg", f"s_a={a}")
            expect(p.returncode == 0, f"fit from a = {a}: exit {p.returncode}: "
                   f"{p.stderr.strip()}")
            print(f"start a = {a}:")
            check_recovery(fitted(p.stdout), ACCEPT_TRUTH)
            rms, _ = rms_of(p.stdout)
            print(f"  rms {rms:.4%}")
            expect(rms < 0.02, f"RMS {rms} with 0.5% noise")
            # no profile asked for: the report and the residuals only
            expect(sorted(os.listdir(out)) == ["accept.csv", "accept.md"],
                   f"outputs {sorted(os.listdir(out))}")
            rows = check_residual_csv(out, "accept", ref_rows, "approx")
            expect({r["trace"] for r in rows} == {"acc11", "acc12"} and
                   {r["policy_params"] for r in rows} == {"k=4,unit=cpu", "k=8,unit=cpu"},
                   f"key cells of accept.csv: {rows}")
    print("recover_accept: ok")


def case_memo_exact() -> None:
    """One acceptance per trace: a difference step moves one trace's points, so
    the fit reuses the other trace's results by point id (points_reused > 0,
    fewer replays than evaluations x points), and that reuse is exact -- every
    prediction of fit.rows equals a fresh fs.sweep of the fitted values, at -j 1
    and -j 2 alike."""
    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "ref.csv")
        write_ref(truth_rows(ACCEPT), ref, seed=11)
        outs = []
        for jobs in ("1", "2"):
            p = fit(ACCEPT, os.path.join(tmp, "out" + jobs), ref, "--arg", "two=1", jobs=jobs)
            expect(p.returncode == 0, f"-j {jobs}: exit {p.returncode}: {p.stderr.strip()}")
            check_recovery(fitted(p.stdout), {"a11": 0.55, "a12": 0.55})
            m = re.search(r"^points run (\d+) reused (\d+) evaluations (\d+)$", p.stdout, re.M)
            expect(m, f"no points line in {p.stdout!r}")
            ran, reused, evals = (int(x) for x in m.groups())
            print(f"  -j {jobs}: {ran} replayed, {reused} reused over {evals} evaluations "
                  f"of 4 points")
            expect(reused > 0 and ran + reused == 4 * evals and ran < 4 * evals,
                   f"run {ran}, reused {reused}, evaluations {evals}")
            expect(re.search(r"^exact 8 of 8$", p.stdout, re.M),
                   f"predictions differ from a fresh sweep: {p.stdout!r}")
            outs.append(p.stdout)
        expect(outs[0] == outs[1], "-j 1 and -j 2 differ")
    print("memo_exact: ok")


def case_synth_in_points() -> None:
    """Named synthetic traces that points asks for are generated together after
    it returns: a trace used inside points (an fs.run there) is generated then,
    and the fit is the same bit for bit; a trace whose parameters are wrong is
    the synth call's own error (its line, exit 78), at -j 1 and -j 2."""
    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "ref.csv")
        write_ref(truth_rows(ACCEPT), ref, seed=11)
        fits = {}
        for peek in ("0", "1"):
            p = fit(ACCEPT, os.path.join(tmp, "out" + peek), ref, "--arg", "two=1",
                    "--arg", f"peek={peek}")
            expect(p.returncode == 0, f"peek={peek}: exit {p.returncode}: {p.stderr.strip()}")
            fits[peek] = [l for l in p.stdout.splitlines()
                          if l.startswith(("param ", "rms ", "points ", "exact "))]
        expect(fits["0"] == fits["1"] and len(fits["0"]) == 5,
               f"a trace used inside points changed the fit: {fits}")
        line = line_of(ACCEPT, "-- BADSYNTH")
        for jobs in ("1", "2"):
            out = os.path.join(tmp, "bad" + jobs)
            p = fit(ACCEPT, out, ref, "--arg", "badsynth=1", jobs=jobs)
            expect_error(p, 78, out, re.escape(f"{ACCEPT}:{line}:"), "max_nodes")
    print("synth_in_points: ok")


def case_interval_metric() -> None:
    """A fit's evaluations skip the bootstrap interval over the prompts unless
    a reference row reads it: fitted to tokens_per_s_lo and to an expression of
    tokens_per_s_hi, each prediction lies strictly below (above) the point
    estimate of a fresh fs.sweep -- an interval, not the estimate itself."""
    with tempfile.TemporaryDirectory() as tmp:
        rows = [r for r in truth_rows(ACCEPT) if r["metric"] == "tokens_per_s"]
        for i, r in enumerate(rows):
            r["metric"] = "tokens_per_s_lo" if i % 2 else "0.5*tokens_per_s_hi+1"
            if i % 2 == 0:
                r["value"] = repr(0.5 * float(r["value"]) + 1)
        ref = os.path.join(tmp, "ref.csv")
        write_ref(rows, ref, seed=5)
        p = fit(ACCEPT, os.path.join(tmp, "out"), ref, "--arg", "two=1")
        expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr.strip()}")
        got = re.findall(r"^row (\S+) (\S+) tokens_per_s (\S+)$", p.stdout, re.M)
        expect(len(got) == 4, f"rows {got}")
        for metric, pred, tps in got:
            pred, tps = float(pred), float(tps)
            if metric == "tokens_per_s_lo":
                expect(pred < tps, f"{metric} {pred} is not below tokens_per_s {tps}")
            else:
                expect(pred > 0.5 * tps + 1, f"{metric} {pred} is not above {0.5 * tps + 1}")
    print("interval_metric: ok")


# ------------------------------------------------------------- bootstrap

def case_bootstrap_coverage() -> None:
    """Over repeated noisy recoveries of the acceptance, the parametric
    bootstrap's 95% interval holds the truth about 95% of the time.

    Each recovery measures the truth on traces drawn from other seeds than the
    fit's (the phone's prompts are not the spec's), adds +/-0.5% noise, and fits
    with a bootstrap of B replicates.  With R recoveries at a true coverage of
    95%, fewer than 16 of 20 covering has probability 0.26% (binomial; 16 or
    fewer, 1.6%): the false-alarm rate of this check.  The delta-method
    interval (value +/- 1.96 SE) is counted beside it: on this plateau-shaped
    response it is far too narrow, which is why the bootstrap exists."""
    R, B = 20, 20
    cover_boot = cover_delta = 0
    widths = []
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for r in range(1, R + 1):
            p = run("run", ACCEPT, "-q", "--arg", "mode=truth", "--arg", "prompts=4",
                    "--arg", f"rep={r}")
            expect(p.returncode == 0, f"truth rep {r}: exit {p.returncode}: {p.stderr.strip()}")
            ref = os.path.join(tmp, f"ref{r}.csv")
            write_ref(list(csv.DictReader(io.StringIO(p.stdout))), ref, seed=r)
            procs.append((r, subprocess.Popen(
                [BIN, "calibrate", ACCEPT, "-j", "1", "-q", "-o", os.path.join(tmp, f"o{r}"),
                 "--arg", "mode=fit", "--arg", f"ref={ref}", "--arg", "prompts=4",
                 "--arg", f"boot={B}", "--arg", "loo=none"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HOME)))
            # two fits at a time
            while sum(1 for _, q in procs if q.poll() is None) >= 2:
                procs[[q.poll() for _, q in procs].index(None)][1].wait()
        truth = ACCEPT_TRUTH["a"]
        for r, q in procs:
            out, err = q.communicate(timeout=300)
            expect(q.returncode == 0, f"fit {r}: exit {q.returncode}: {err.strip()}")
            x, se = fitted(out)["a"]
            m = re.search(r"^interval a (\S+) (\S+) (\S+)$", out, re.M)
            expect(m, f"fit {r}: no interval line in {out!r}")
            lo, hi, sb = (float(v) for v in m.groups())
            expect(math.isfinite(lo) and lo < hi and sb > 0,
                   f"fit {r}: interval [{lo}, {hi}] (SE {sb}) around {x}")
            cover_boot += lo <= truth <= hi
            cover_delta += abs(x - truth) <= 1.96 * se
            widths.append(hi - lo)
            print(f"  rep {r:2d}: a = {x:.4f}, delta +/-{1.96 * se:.4f}, bootstrap "
                  f"[{lo:.4f}, {hi:.4f}]")
    mean_w = sum(widths) / len(widths)
    print(f"coverage of 0.55: bootstrap {cover_boot}/{R}, delta method {cover_delta}/{R}; "
          f"mean bootstrap interval width {mean_w:.4f}")
    expect(cover_boot >= 16, f"bootstrap intervals held the truth in {cover_boot} of {R}")
    # not vacuous: the intervals are a small part of the bounds (0.05, 0.95)
    expect(mean_w < 0.15, f"mean interval width {mean_w}")
    expect(cover_delta < cover_boot, "the delta method covered as often as the bootstrap")
    print("bootstrap_coverage: ok")


def case_bootstrap_options() -> None:
    """bootstrap = N is deterministic (same seed, same interval, at any -j),
    its interval and spread are the replicates' quantiles and standard
    deviation, and a bad count -- below the documented minimum of 20
    included -- is one line, exit 78.  On the Flash-AR spec (two points an
    evaluation): the bootstrap's arithmetic, not the workload's."""
    with tempfile.TemporaryDirectory() as tmp:
        outs = []
        for j in ("1", "2"):
            p = run("calibrate", BADSPEC, "-q", "-j", j, "-o", os.path.join(tmp, "o" + j),
                    "--arg", f"ref={REF_FLASH}", "--arg", "bad=none", "--arg", "boot=20")
            expect(p.returncode == 0, f"-j {j}: exit {p.returncode}: {p.stderr.strip()}")
            outs.append(p.stdout)
        expect(outs[0] == outs[1], f"bootstrap differs across -j: {outs}")
        # the interval itself: the 2.5% and 97.5% quantiles (linear between
        # order statistics) and the standard deviation of the replicates
        m = re.search(r"^interval launch_us (\S+) (\S+) (\S+)$", outs[0], re.M)
        vals = sorted(float(v) for v in re.search(r"^boot launch_us (.*)$", outs[0], re.M)
                      .group(1).split())
        # the converged replicates (a refit may fail; an interval needs 10)
        expect(10 <= len(vals) <= 20, f"replicates: {vals}")

        def quantile(xs, f):
            h = (len(xs) - 1) * f
            i = int(math.floor(h))
            return xs[i] + (h - i) * (xs[min(i + 1, len(xs) - 1)] - xs[i])
        mean = sum(vals) / len(vals)
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))
        lo, hi, sb = (float(x) for x in m.groups())
        for name, got, want in (("ci_lo", lo, quantile(vals, 0.025)),
                                ("ci_hi", hi, quantile(vals, 0.975)), ("se_boot", sb, sd)):
            expect(abs(got - want) <= 1e-12 * max(1.0, abs(want)),
                   f"{name} = {got!r}, the replicates give {want!r}")
        expect(lo < hi and sb > 0, f"interval [{lo}, {hi}], se_boot {sb}")
        md = open(os.path.join(tmp, "o1", "bad.md")).read()
        expect("Parametric bootstrap: 20 replicates" in md and "95% interval (bootstrap)" in md,
               f"report: {md[:600]}")
        p = run("calibrate", BADSPEC, "-q", "-o", os.path.join(tmp, "o3"),
                "--arg", f"ref={REF_FLASH}", "--arg", "bad=none")
        expect(re.search(r"^interval launch_us nan nan nan$", p.stdout, re.M | re.I),
               f"no bootstrap: the interval is NaN: {p.stdout}")
        bad = os.path.join(tmp, "bad.lua")
        # the options are checked as the run keys are (lparams.h): the key's line
        for val, needle in (("-1", "key 'bootstrap' = -1 is out of range [0, 10000]"),
                            ("2.5", "key 'bootstrap' must be an integer (got 2.5)"),
                            ("20000", "key 'bootstrap' = 20000 is out of range"),
                            ("2", "key 'bootstrap' = 2 is below the 20 replicates a 95% "
                                  "interval needs"),
                            ("19", "use 0 (none) or at least 20")):
            with open(bad, "w") as f:
                f.write(open(ACCEPT).read().replace('bootstrap = tonumber(A.boot or "0"),',
                                                    f"bootstrap = {val},"))
            p = run("calibrate", bad, "-o", os.path.join(tmp, "nope"),
                    "--arg", "mode=fit", "--arg", f"ref={REF_TWO}")
            expect(p.returncode == 78, f"bootstrap = {val}: exit {p.returncode}")
            lines = p.stderr.strip().splitlines()
            expect(len(lines) == 1 and needle in lines[0] and "bad.lua" in lines[0],
                   f"bootstrap = {val}: {p.stderr!r}")
            expect(not os.path.exists(os.path.join(tmp, "nope")) or
                   not os.listdir(os.path.join(tmp, "nope")), "bad bootstrap wrote files")
    print("bootstrap_options: ok")


# --------------------------------------------------------- leave-one-out

def loo_fit(tmp: str, loo: str):
    truth = truth_rows(DEVICE)
    ref = os.path.join(tmp, "ref.csv")
    write_ref(truth, ref)
    ref_rows = list(csv.DictReader(l for l in open(ref) if not l.startswith("#")))
    out = os.path.join(tmp, "out")
    p = fit(DEVICE, out, ref, "--arg", f"loo={loo}")
    expect(p.returncode == 0, f"loo = {loo}: exit {p.returncode}: {p.stderr.strip()}")
    rows = check_residual_csv(out, "device", ref_rows, loo)
    md = open(os.path.join(out, "device.md")).read()
    expect(f"leave-one-out ({loo})" in md, f"device.md does not say leave-one-out ({loo})")
    return p, rows


def case_loo_exact() -> None:
    """Every row refitted without it: a finite leave-one-out error, and leaving a
    row out does not fit it better (most rows; on average)."""
    with tempfile.TemporaryDirectory() as tmp:
        p, rows = loo_fit(tmp, "exact")
        pairs = [(abs(float(r["error"])), abs(float(r["loo_error"]))) for r in rows]
        for e, l in pairs:
            print(f"  |error| {e:.3e}  |loo_error| {l:.3e}")
        worse = sum(l >= e - 1e-6 for e, l in pairs)
        expect(worse >= math.ceil(0.75 * len(pairs)),
               f"only {worse} of {len(pairs)} rows fit worse when left out: {pairs}")
        expect(sum(l for _, l in pairs) >= sum(e for e, _ in pairs) - 1e-9,
               f"leaving rows out fits them better on average: {pairs}")
        rms, loo_rms = rms_of(p.stdout)
        expect(math.isfinite(loo_rms) and loo_rms >= rms - 1e-9,
               f"loo_rms {loo_rms} < rms {rms}")
        # a row's exact leave-one-out error is its own refit, not the residual
        expect(any(abs(float(r["loo_error"]) - float(r["error"])) > 1e-6 for r in rows),
               "leave-one-out errors equal the residuals")
    print("loo_exact: ok")


def case_loo_approx() -> None:
    """PRESS residuals e / (1 - h): finite, never smaller than the residual."""
    with tempfile.TemporaryDirectory() as tmp:
        p, rows = loo_fit(tmp, "approx")
        for r in rows:
            e, l = float(r["error"]), float(r["loo_error"])
            expect(abs(l) >= abs(e) - 1e-12 and (e == 0 or l * e > 0),
                   f"PRESS residual {l} for residual {e}")
        _, loo_rms = rms_of(p.stdout)
        expect(math.isfinite(loo_rms), f"loo_rms {loo_rms}")
    print("loo_approx: ok")


def case_loo_none() -> None:
    """loo = "none": no leave-one-out errors (NaN), the fit as usual."""
    with tempfile.TemporaryDirectory() as tmp:
        p, rows = loo_fit(tmp, "none")
        check_recovery(fitted(p.stdout), DEVICE_TRUTH)
    print("loo_none: ok")


def case_holdout() -> None:
    """holdout = SOURCE: the rows of that source are predicted, not fitted
    (leave-one-table-out).  The chain's two rows held out: the device values
    are still recovered from the other six, n counts the fitted rows only, the
    held-out rows are predicted to within the noise and marked in the report;
    a source no row has is one line, exit 78, nothing written."""
    with tempfile.TemporaryDirectory() as tmp:
        rows = truth_rows(DEVICE)
        for r in rows:
            if r["policy"] == "chain":
                r["source"] = "chain table"
        ref = os.path.join(tmp, "ref.csv")
        write_ref(rows, ref)
        out = os.path.join(tmp, "out")
        p = fit(DEVICE, out, ref, "--arg", "holdout=chain table", "--arg", "loo=exact")
        expect(p.returncode == 0, f"holdout: exit {p.returncode}: {p.stderr.strip()}")
        check_recovery(fitted(p.stdout), DEVICE_TRUTH)
        m = re.search(r"^rms \S+ loo_rms \S+ n (\d+) p (\d+)$", p.stdout, re.M)
        expect(m and int(m.group(1)) == len(rows) - 2, f"n counts the fitted rows: {p.stdout!r}")
        h = re.search(r"^holdout (\d+) (\S+)$", p.stdout, re.M)
        expect(h and int(h.group(1)) == 2, f"two rows held out: {p.stdout!r}")
        expect(0.0 <= float(h.group(2)) < 0.02, f"held-out rows predicted: {h.group(2)}")
        md = open(os.path.join(out, "device.md")).read()
        expect(md.count("| held out |") == 2 and "Held out (predicted, not fitted): 2 rows" in md,
               "the report marks the held-out rows")
        res = residual_rows(out, "device")
        held = [r for r in res if r["source"] == "chain table"]
        expect(len(held) == 2 and all(r["loo_error"] == "nan" for r in held),
               f"held-out rows have no leave-one-out error: {held}")
        out2 = os.path.join(tmp, "out2")
        q = fit(DEVICE, out2, ref, "--arg", "holdout=no such table", quiet=False)
        expect(q.returncode == 78 and "holdout 'no such table' matches no reference row's source"
               in q.stderr and q.stderr.count("\n") == 1, f"bad holdout: {q.returncode} {q.stderr!r}")
        expect(not os.path.exists(out2) or not os.listdir(out2), "nothing written")
    print("holdout: ok")


# ----------------------------------------------------------- determinism

def case_determinism_jobs() -> None:
    """-j 1, -j 2 and -j 2 again write byte-identical outputs and stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "ref.csv")
        write_ref(truth_rows(DEVICE), ref)
        results = []
        for i, j in enumerate(("1", "2", "2")):
            out = os.path.join(tmp, f"out{i}")
            p = fit(DEVICE, out, ref, "--arg", "loo=exact", jobs=j)
            expect(p.returncode == 0, f"-j {j}: exit {p.returncode}: {p.stderr.strip()}")
            files = {f: open(os.path.join(out, f), "rb").read() for f in sorted(os.listdir(out))}
            expect(sorted(files) == sorted(["device.md", "device.csv", PROFILE + ".lua"]),
                   f"outputs {sorted(files)}")
            results.append((j, p.stdout, files))
        j0, out0, files0 = results[0]
        for j, stdout, files in results[1:]:
            expect(stdout == out0, f"stdout differs between -j {j0} and -j {j}")
            for f, data in files.items():
                if data != files0[f]:
                    a, b = files0[f].decode().splitlines(), data.decode().splitlines()
                    diff = [f"-{x}\n+{y}" for x, y in zip(a, b) if x != y]
                    raise Fail(f"{f} differs between -j {j0} and -j {j}: {diff[:3]}")
    print("determinism_jobs: ok")


# ------------------------------------------------------------ bad inputs

def expect_error(p, code: int, out: str, *needles: str) -> None:
    """The documented exit code, one line "flashspec: ..." with every needle
    (regular expressions), and nothing written to out."""
    lines = p.stderr.splitlines()
    expect(p.returncode == code and len(lines) == 1 and p.stderr.endswith("\n"),
           f"want exit {code} and one line; got exit {p.returncode}: {p.stderr!r}")
    expect(lines[0].startswith("flashspec: "), f"no 'flashspec: ' prefix: {lines[0]!r}")
    for n in needles:
        expect(re.search(n, lines[0]), f"{lines[0]!r} lacks {n!r}")
    left = sorted(os.listdir(out)) if os.path.isdir(out) else []
    expect(not left and (not os.path.exists(out) or os.path.isdir(out)),
           f"wrote {left} on failure")
    print(f"  exit {code}: {lines[0]}")


def edited(tmp: str, name: str, line: int, col: int | None, value: str,
           src: str = REF_DEVICE) -> str:
    """A copy of src with cell col of line (1-based) set to value (col None:
    the whole line)."""
    lines = open(src).read().split("\n")
    if col is None:
        lines[line - 1] = value
    else:
        cells = lines[line - 1].split(",")
        cells[col] = value
        lines[line - 1] = ",".join(cells)
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def bad_ref_case(edits: list[tuple[str, int, int | None, str, int, list[str]]],
                 spec: str = DEVICE, src: str = REF_DEVICE) -> None:
    """Each edit of the reference: (what, line, col, new cell, exit code, needles);
    the message names the file and the line."""
    with tempfile.TemporaryDirectory() as tmp:
        for i, (what, line, col, value, code, needles) in enumerate(edits):
            ref = edited(tmp, f"ref{i}.csv", line, col, value, src)
            out = os.path.join(tmp, f"out{i}")
            print(f"{what}:")
            p = run("calibrate", spec, "-j", "2", "-o", out, "--arg", "mode=fit",
                    "--arg", f"ref={ref}")
            expect_error(p, code, out, re.escape(f"{ref}:{line}:"), *needles)


def case_bad_metric() -> None:
    bad_ref_case([
        ("unknown column in a metric", 10, 4, "verify_ms-flsh_ms", 65,
         [r"unknown metric 'verify_ms-flsh_ms'", "flsh_ms"]),
        ("a text column as a metric", 7, 4, "policy", 65, [r"unknown metric 'policy'"]),
        ("a malformed metric", 9, 4, "(npu_ms+cpu_ms", 65, [r"missing '\)'"]),
        ("an empty metric", 6, 4, "", 65, ["metric"]),
    ])
    print("bad_metric: ok")


def case_bad_key_column() -> None:
    bad_ref_case([
        ("unknown key column", 5, 1, "polcy", 65, [r"unknown key column 'polcy'"]),
        ("numeric key that is no number", 8, 2, "one", 65, [r"key 'tree_nodes': 'one' is "
                                                             "not a number"]),
    ])
    print("bad_key_column: ok")


def case_bad_nomatch() -> None:
    bad_ref_case([
        ("no chain of 17 nodes", 12, 2, "17", 65, ["no point matches", "tree_nodes=17"]),
        ("no such target", 6, 0, "llama3.1-8b-q4_0", 65, ["no point matches",
                                                           "target=llama3.1-8b-q4_0"]),
    ])
    print("bad_nomatch: ok")


def case_bad_value() -> None:
    bad_ref_case([(f"value {v!r}", 8, 5, v, 65, ["value must be a positive number"])
                  for v in ("-1052.3", "0", "-0", "nan", "inf", "", "1052.3ms", "1e999")] +
                 [("value 1e-320 (subnormal)", 8, 5, "1e-320", 65,
                   [r"value '1e-320' is outside \[1e-300, 1e300\]"])])
    print("bad_value: ok")


def case_bad_ref_format() -> None:
    """Malformed CSV: each one line with the file and line, exit 65."""
    wide = ",".join(["target", "policy", "policy_params", "device", "draft", "trace",
                     "dram_fraction", "max_new_tokens", "prompts", "tokens", "tokens_per_s",
                     "ms_per_token", "cycles", "tokens_per_cycle", "mean_accepted", "cycle_ms",
                     "draft_ms", "flash_ms", "npu_ms", "cpu_ms", "kv_ms", "idle_ms",
                     "verify_ms", "verify_rows", "dram_bytes", "resident_layers", "coverage",
                     "seed", "waste_ms", "waste_frac", "token_mismatch", "top_p",
                     "temperature"])  # 33 key columns: one more field than allowed
    bad_ref_case([
        ("33 columns", 5, None, wide, 65, ["more than 32 fields"]),
        ("unterminated quote", 9, 5, '"98.8905', 65, ["unterminated quote"]),
        ("a row of the wrong width", 11, 6, "truth,extra", 65, ["8 fields, the header has 7"]),
        ("a duplicate column", 5, 3, "target", 65, ["duplicate column 'target'"]),
        ("no source column", 5, 6, "note", 65, ["missing column 'source'"]),
        ("an empty source", 7, 6, "", 65, ["empty source"]),
    ])
    with tempfile.TemporaryDirectory() as tmp:
        for what, data, needle in [
                ("only comments", "# nothing\n\n# here\n", r":1: empty file"),
                ("a header only", open(REF_DEVICE).read().split("\n")[4] + "\n",
                 "no reference rows"),
                ("NUL bytes", "target,metric,value,source\0\n", "NUL bytes"),
                ("CR-only line ends", open(REF_DEVICE).read().replace("\n", "\r"),
                 r":1: lines end with CR alone")]:
            ref = os.path.join(tmp, "r.csv")
            with open(ref, "w") as f:
                f.write(data)
            out = os.path.join(tmp, "out")
            print(f"{what}:")
            p = fit(DEVICE, out, ref, quiet=False)
            expect_error(p, 65, out, re.escape(ref), needle)
        # a UTF-8 byte-order mark (as spreadsheets save) is read past, not taken
        # into the first column's name
        ref = os.path.join(tmp, "bom.csv")
        with open(ref, "w", encoding="utf-8-sig") as f:
            f.write(open(REF_DEVICE).read())
        p = fit(DEVICE, os.path.join(tmp, "bom-out"), ref)
        expect(p.returncode == 0, f"a reference with a BOM: exit {p.returncode}: {p.stderr}")
    print("bad_ref_format: ok")


def spec_case(bad: str, ref: str, code: int, marker: str, *needles: str,
              extra: tuple = ()) -> subprocess.CompletedProcess:
    """bad-spec.lua with --arg bad=BAD: the message names the spec and the line
    holding marker."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        p = run("calibrate", BADSPEC, "-j", "2", "-o", out, "--arg", f"ref={ref}",
                "--arg", f"bad={bad}", *extra)
        line = line_of(BADSPEC, marker)
        expect_error(p, code, out, re.escape(f"{BADSPEC}:{line}:"), *needles)
        return p


def case_control() -> None:
    """The spec the bad cases break, unbroken: it fits and writes its files."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        p = run("calibrate", BADSPEC, "-j", "2", "-o", out, "--arg", f"ref={REF_FLASH}",
                "--arg", "bad=none")
        expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr.strip()}")
        expect(sorted(os.listdir(out)) == ["bad.csv", "bad.md", "cal-bad-fit.lua"],
               f"outputs {sorted(os.listdir(out))}")
        # without -q: one "wrote" line per file
        expect(len(p.stderr.splitlines()) == 3 and all(l.startswith("flashspec: wrote ")
                                                       for l in p.stderr.splitlines()),
               f"stderr {p.stderr!r}")
        x = float(re.search(r"^param launch_us (\S+)", p.stdout, re.M).group(1))
        expect(abs(x - 600) <= 0.05 * 600, f"launch_us {x}")
    print("control: ok")


def case_bad_start() -> None:
    spec_case("bounds", REF_FLASH, 78, "CALIBRATE", "params.launch_us: start 20000 violates "
              "its bounds")
    spec_case("edge", REF_FLASH, 78, "CALIBRATE", "params.launch_us: start 1.0001 is too "
              "close to a bound")
    print("bad_start: ok")


def case_bad_lohi() -> None:
    spec_case("lohi", REF_FLASH, 78, "CALIBRATE", r"params.launch_us: bounds .* lo < hi")
    print("bad_lohi: ok")


def case_no_convergence() -> None:
    """max_iter = 1 on a problem that needs more: 65 and nothing written."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        p = run("calibrate", DEVICE, "-j", "2", "-o", out, "--arg", "mode=fit",
                "--arg", f"ref={REF_DEVICE}", "--arg", "max_iter=1", "--arg", "s_gflops=4000",
                "--arg", "s_setup=2e6", "--arg", "s_launch=5000")
        line = line_of(DEVICE, "fs.calibrate {")
        expect_error(p, 65, out, re.escape(f"{DEVICE}:{line}:"),
                     "did not converge in 1 iterations", "nothing written")
        expect(p.stdout == "", f"the script went on: {p.stdout!r}")
        # the same problem with the default max_iter converges
        p = run("calibrate", DEVICE, "-j", "2", "-q", "-o", out, "--arg", "mode=fit",
                "--arg", f"ref={REF_DEVICE}", "--arg", "s_gflops=4000", "--arg", "s_setup=2e6",
                "--arg", "s_launch=5000")
        expect(p.returncode == 0, f"default max_iter: exit {p.returncode}: {p.stderr.strip()}")
    print("no_convergence: ok")


def case_missing_ref() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        missing = os.path.join(tmp, "none.csv")
        p = fit(BADSPEC, out, missing, quiet=False)
        expect_error(p, 66, out, re.escape(f"{BADSPEC}:{line_of(BADSPEC, 'CALIBRATE')}:"),
                     re.escape(f"reference '{missing}' not found"))
        # relative to the spec's folder, then the project: neither has it
        p = fit(BADSPEC, out, "no-such-ref.csv", quiet=False)
        expect_error(p, 66, out, "reference 'no-such-ref.csv' not found", "looked in")
    print("missing_ref: ok")


def case_ref_directory() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        d = os.path.join(tmp, "refdir.csv")
        os.mkdir(d)
        p = fit(BADSPEC, out, d, quiet=False)
        expect_error(p, 65, out, re.escape(d), "not a regular file")
        # relative: a folder beside the spec, a folder of the project
        p = fit(BADSPEC, out, "../data", quiet=False)
        expect_error(p, 65, out, re.escape(os.path.join(DATA, "../data")),
                     "not a regular file")
        p = fit(BADSPEC, out, "configs", quiet=False)
        expect_error(p, 65, out, re.escape(os.path.join(HOME, "configs")),
                     "not a regular file")
    print("ref_directory: ok")


def case_ref_fifo() -> None:
    """A FIFO with no writer: the open must not block (timeout 30 s)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        fifo = os.path.join(tmp, "fifo.csv")
        os.mkfifo(fifo)
        try:
            p = subprocess.run([BIN, "calibrate", BADSPEC, "-o", out, "--arg", f"ref={fifo}"],
                               cwd=HOME, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise Fail("a FIFO as the reference hangs")
        expect_error(p, 65, out, re.escape(fifo), "not a regular file")
    print("ref_fifo: ok")


def case_bad_spec_key() -> None:
    spec_case("key", REF_FLASH, 78, "CALIBRATE", "unknown key 'max_iters'",
              r"did you mean 'max_iter'\?")
    print("bad_spec_key: ok")


def case_points_not_function() -> None:
    spec_case("nofn", REF_FLASH, 78, "CALIBRATE", "'points' must be a function")
    print("points_not_function: ok")


def case_too_many_params() -> None:
    spec_case("many", REF_TWO, 78, "CALIBRATE", "3 parameters but only 2 reference rows")
    print("too_many_params: ok")


def case_points_raise() -> None:
    """A Lua error inside points: the script's own file:line, exit 78."""
    spec_case("raise", REF_FLASH, 78, "-- RAISE", "points failed on purpose")
    print("points_raise: ok")


def case_fails_after_fit() -> None:
    """The fit succeeds, the script then fails: nothing is written."""
    p = spec_case("after", REF_FLASH, 78, "-- AFTER", "failed after a good fit")
    expect(p.stdout.startswith("param launch_us "), f"the fit did not run: {p.stdout!r}")
    print("fails_after_fit: ok")


def case_output_names() -> None:
    """A calibration's outputs never overwrite the run's own or each other:
    name = "results" (its CSV would be results.csv), profile.name = "script"
    (the derived profile would be the run's script.lua), a name that differs
    from a reserved one only in case, a second calibration of the same name or
    of the same profile.name, and a profile.base that does not exist (the
    derived profile would not load) are one line, exit 78, nothing written."""
    spec_case("results", REF_FLASH, 78, "CALIBRATE", "name would write results.md, which the "
              "run's output directory reserves for its results")
    spec_case("script", REF_FLASH, 78, "CALIBRATE", "profile would write script.lua", "reserves "
              "for the script as run")
    spec_case("casefold", REF_FLASH, 78, "CALIBRATE", "name would write Results.v2.md",
              "reserves for its results")
    spec_case("twice", REF_FLASH, 78, "-- TWICE", "name: bad.md is already written by an "
              "earlier calibration")
    spec_case("profdup", REF_FLASH, 78, "-- PROFDUP", "profile: cal-bad-fit.lua is already "
              "written by an earlier calibration")
    spec_case("nobase", REF_FLASH, 78, "CALIBRATE", "profile.base: unknown device 'oneplus21'",
              "did you mean 'oneplus12'")
    print("output_names: ok")


def case_at_bound() -> None:
    """A truth outside the bounds: the fit ends at a bound, and says so -- a
    warning on stderr naming the parameter and the bound, at_bound = "hi" /
    "lo" in the result, no standard error (NaN, not 0), a one-sided interval,
    and the report's row and note; bootstrap refits that fail are a warning
    on stderr too, not only a line in the report.  Exit 0: the outputs are
    written, flagged."""
    with tempfile.TemporaryDirectory() as tmp:
        for bad, side, word in (("boundhi", "hi", "upper"), ("boundlo", "lo", "lower")):
            out = os.path.join(tmp, bad)
            p = run("calibrate", BADSPEC, "-q", "-o", out, "--arg", f"ref={REF_FLASH}",
                    "--arg", f"bad={bad}")
            expect(p.returncode == 0, f"{bad}: exit {p.returncode}: {p.stderr.strip()}")
            warns = [l for l in p.stderr.splitlines() if l.startswith("flashspec: warning: ")]
            expect(any(f"launch_us = {400 if side == 'hi' else 1000} is at its {word} bound"
                       in l and "one-sided" in l for l in warns), f"{bad}: {p.stderr!r}")
            m = re.search(r"^param launch_us (\S+) (\S+)$", p.stdout, re.M)
            b = re.search(r"^bound launch_us (\S+) (\S+) (\S+)$", p.stdout, re.M)
            expect(m and b, f"{bad}: {p.stdout!r}")
            expect(m.group(2) in ("nan", "-nan"), f"{bad}: se {m.group(2)} (the delta method "
                   "at a bound means nothing)")
            expect(b.group(1) == side, f"{bad}: at_bound {b.group(1)}")
            md = open(os.path.join(out, "bad.md")).read()
            expect(f"(at its {word} bound)" in md and "**At a bound**" in md, f"{bad}: {md}")
            prof = open(os.path.join(out, "cal-bad-fit.lua")).read()
            expect(f"AT ITS {word.upper()} BOUND" in prof, f"{bad}: {prof}")
            if bad == "boundhi":
                # refits from a point the logistic map flattens: they fail, and
                # stderr says so (fewer than 20 converged: no interval)
                expect(any("bootstrap refits" in l and "no bootstrap interval" in l
                           for l in warns), f"{bad}: {warns}")
                expect("**No bootstrap interval**" in md, f"{bad}: {md}")
        # inside the bounds: no warning, a finite standard error
        p = run("calibrate", BADSPEC, "-q", "-o", os.path.join(tmp, "none"),
                "--arg", f"ref={REF_FLASH}", "--arg", "bad=none")
        expect(p.returncode == 0 and "warning" not in p.stderr, f"control: {p.stderr!r}")
        m = re.search(r"^bound launch_us (\S+) ", p.stdout, re.M)
        expect(m and m.group(1) == "false", f"control: {p.stdout!r}")
    print("at_bound: ok")


def case_output_not_dir() -> None:
    """-o naming a file: 73 before anything runs."""
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "file")
        open(f, "w").close()
        p = run("calibrate", BADSPEC, "-o", f, "--arg", f"ref={REF_FLASH}")
        lines = p.stderr.splitlines()
        expect(p.returncode == 73 and len(lines) == 1 and lines[0].startswith("flashspec: ")
               and f in lines[0], f"exit {p.returncode}: {p.stderr!r}")
        expect(p.stdout == "" and os.path.getsize(f) == 0, f"ran anyway: {p.stdout!r}")
        print(f"  exit 73: {lines[0]}")
    print("output_not_dir: ok")


def case_ref_comments() -> None:
    """'#' lines are comments even with a quote or a comma in them; quoted
    fields hold commas, "" and CR LF line ends; line numbers stay true."""
    with tempfile.TemporaryDirectory() as tmp:
        lines = open(REF_FLASH).read().splitlines()
        body = ['# a 6.8" screen, "quoted, but unbalanced', lines[1],
                "  # an indented comment with a lone \" quote", lines[2], "", lines[3],
                '# another " quote', lines[4],
                # a quoted source with a comma, a quote and a CR LF
                lines[5].replace(",truth", ',"truth, ""Table 1"""')]
        ref = os.path.join(tmp, "ref.csv")
        with open(ref, "w", newline="") as f:
            f.write("\r\n".join(body) + "\r\n")
        out = os.path.join(tmp, "out")
        p = run("calibrate", BADSPEC, "-q", "-o", out, "--arg", f"ref={ref}",
                "--arg", "bad=none")
        expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr.strip()}")
        rows = residual_rows(out, "bad")
        expect(len(rows) == 4, f"{len(rows)} rows read, wanted 4: {rows}")
        expect(rows[-1]["source"] == 'truth, "Table 1"', f"source {rows[-1]['source']!r}")
        # a bad value on the last line: the line number counts the comments
        with open(ref, "a") as f:
            f.write("qwen3-8b-q4_0,flash_ar,1,oneplus12,ms_per_token,-1,x\n")
        p = run("calibrate", BADSPEC, "-o", os.path.join(tmp, "out2"), "--arg", f"ref={ref}",
                "--arg", "bad=none")
        expect_error(p, 65, os.path.join(tmp, "out2"), re.escape(f"{ref}:10:"), "positive")
    print("ref_comments: ok")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: {sys.argv[0]} {{{'|'.join(CASES)}}}")
        sys.exit(2)
    try:
        CASES[sys.argv[1]]()
    except Fail as e:
        print(f"FAIL: {e}")
        sys.exit(1)
