#!/usr/bin/python3
"""Benchmark: how long calibration takes (meson benchmark, not a test; it
asserts nothing about speed).

Times, on -j 2 (the wall clock of the whole process):
  shipped   `flashspec calibrate configs/calibration/oneplus12.lua` as the
            profile's test runs it (leave-one-out by leverage), REPEAT times;
  loo       the same with exact leave-one-out (one refit per reference row),
            BENCH_CALIBRATE_LOO_REPEAT times (default 1);
  models    with BENCH_CALIBRATE_MODELS=1, scripts/calibration_models.sh (the
            16-model comparison), once per build; with BENCH_CALIBRATE_MODELS=20
            the same with four more models of configs/calibration/README.md
            (smallest shape 4 and 16, a per-leaf cost beside the set-up, the
            coverage share): a 20-model comparison.  The base build's
            comparison runs one model at a time at -j 2 (CALIBRATION_MODELS_JOBS=1,
            as the script did before it fitted models side by side), this
            build's with the script's default (one model per CPU).
With FLASHSPEC_BIN_BASE (another build's binary) every run alternates between
the two builds (base, this, base, this, ...), so machine noise hits both alike,
the ratio base / this of the medians is printed, and each pair of runs is
compared: the same standard output and the same files written (a faster build
must fit the same values).  Prints median [min, max] seconds and the
evaluations of the shipped fit, and beside the wall clock the CPU seconds
(user + system) each run's process took: the same work costs the same CPU on
an idle machine, so CPU seconds that differ widely between runs of the same
build say the machine was shared (its other load slows each instruction), and
the runs with the least CPU show what the build does on an idle machine.
"""
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
BASE = os.environ.get("FLASHSPEC_BIN_BASE", "")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
REPEAT = int(os.environ.get("BENCH_CALIBRATE_REPEAT", "3"))
LOO_REPEAT = int(os.environ.get("BENCH_CALIBRATE_LOO_REPEAT", "1"))
MODELS = os.environ.get("BENCH_CALIBRATE_MODELS", "")
SPEC = "configs/calibration/oneplus12.lua"
# the four more models of a 20-model comparison (configs/calibration/README.md)
MORE_MODELS = [
    "the same, smallest multi-row shape 4|min_rows=4",
    "the same, smallest multi-row shape 16|min_rows=16",
    "min1, set-up and a per-leaf cost|min_rows=1 overhead=both",
    "min1, the top-K recovers 60% of the misses|min_rows=1 coverage=share",
]


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, env=None):
    """(wall seconds, CPU seconds of the process and its children), stdout."""
    t0, c0 = time.monotonic(), cpu_children()
    p = subprocess.run(cmd, cwd=HOME, capture_output=True, text=True, timeout=3600, env=env)
    dt, cpu = time.monotonic() - t0, cpu_children() - c0
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-2000:]}")
    return (dt, cpu), p.stdout


def files_of(d):
    """Every file under d (relative path -> bytes)."""
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            path = os.path.join(root, n)
            with open(path, "rb") as f:
                out[os.path.relpath(path, d)] = f.read()
    return out


def calibrate(binary, tmp, tag, *args):
    out = os.path.join(tmp, tag)
    dt, stdout = timed([binary, "calibrate", SPEC, "-j", "2", "-q", "-o", out, *args])
    return dt, stdout, files_of(out)


def models(binary, tmp, tag):
    out = os.path.join(tmp, tag)
    env = dict(os.environ, FLASHSPEC_BIN=binary)
    if tag.startswith("base"):
        env["CALIBRATION_MODELS_JOBS"] = "1"
    extra = MORE_MODELS if MODELS == "20" else []
    dt, stdout = timed(["scripts/calibration_models.sh", out, *extra], env=env)
    # the reports, not the per-model logs (they name their directory)
    return dt, stdout, {k: v for k, v in files_of(out).items() if not k.endswith(".txt")}


def summary(name, runs):
    """runs: (wall, cpu) pairs."""
    xs, cs = [w for w, _ in runs], [c for _, c in runs]
    least = min(runs, key=lambda r: r[1])
    return (f"  {name:<8} median {statistics.median(xs):7.2f} s  "
            f"[{min(xs):.2f}, {max(xs):.2f}] over {len(xs)}; CPU median "
            f"{statistics.median(cs):.2f} s [{min(cs):.2f}, {max(cs):.2f}], the run with the "
            f"least CPU {least[0]:.2f} s")


def main():
    builds = [("base", BASE), ("this", BIN)] if BASE else [("this", BIN)]
    times = {b: {"shipped": [], "loo": [], "models": []} for b, _ in builds}
    differ = []
    first_line = {}

    def pair(kind, i, run):
        outs = {}
        for b, binary in builds:
            dt, stdout, files = run(binary, b)
            times[b][kind].append(dt)
            outs[b] = (stdout, files)
            if kind == "shipped":
                first_line[b] = stdout.splitlines()[0]
        if BASE and outs["base"] != outs["this"]:
            differ.append(f"{kind} run {i + 1}")

    with tempfile.TemporaryDirectory() as tmp:
        for i in range(REPEAT):
            pair("shipped", i, lambda binary, b, i=i: calibrate(binary, tmp, f"{b}{i}", "--arg",
                                                                "loo=approx"))
        for i in range(LOO_REPEAT):
            pair("loo", i, lambda binary, b, i=i: calibrate(binary, tmp, f"{b}-loo{i}", "--arg",
                                                            "loo=exact"))
        if MODELS in ("1", "20"):
            pair("models", 0, lambda binary, b: models(binary, tmp, f"{b}-models"))
    print(f"flashspec calibrate {SPEC}, -j 2, wall seconds (and CPU seconds):")
    for b, _ in builds:
        print(f" {b}: {first_line[b]}")
        for k in ("shipped", "loo", "models"):
            if times[b][k]:
                label = k if k != "models" else f"models ({'20' if MODELS == '20' else '16'})"
                print(summary(label, times[b][k]))
    if BASE:
        for k in ("shipped", "loo", "models"):
            if times["this"][k]:
                r = (statistics.median(w for w, _ in times["base"][k]) /
                     statistics.median(w for w, _ in times["this"][k]))
                print(f"  {k}: base / this = {r:.2f}x")
        print("  outputs: " + ("identical in every pair of runs" if not differ else
                               "DIFFER in " + ", ".join(differ)))
    m = re.search(r"(\d+) evaluations", first_line["this"])
    if m:
        print(f"  this build: {m.group(1)} evaluations in the shipped fit")


if __name__ == "__main__":
    main()
