#!/usr/bin/python3
"""Benchmark: how long calibration takes (meson benchmark, not a test; it
asserts nothing about speed).

Times, on -j 2 (the wall clock of the whole process):
  shipped   `flashspec calibrate configs/calibration/oneplus12.lua` as the
            profile's test runs it (leave-one-out by leverage), REPEAT times;
  loo       the same with exact leave-one-out (one refit per reference row),
            once per build;
  models    with BENCH_CALIBRATE_MODELS=1, scripts/calibration_models.sh (the
            16-model comparison), once per build.
With FLASHSPEC_BIN_BASE (another build's binary) every run alternates between
the two builds (base, this, base, this, ...), so machine noise hits both alike,
and the ratio base / this of the medians is printed.  Prints median [min, max]
seconds and the evaluations, replays and reused points of the shipped fit.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
BASE = os.environ.get("FLASHSPEC_BIN_BASE", "")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
REPEAT = int(os.environ.get("BENCH_CALIBRATE_REPEAT", "3"))
SPEC = "configs/calibration/oneplus12.lua"


def timed(cmd, env=None):
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=HOME, capture_output=True, text=True, timeout=3600, env=env)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-2000:]}")
    return dt, p.stdout


def calibrate(binary, tmp, tag, *args):
    return timed([binary, "calibrate", SPEC, "-j", "2", "-q", "-o", os.path.join(tmp, tag),
                  *args])


def summary(name, xs):
    return (f"  {name:<8} median {statistics.median(xs):7.2f} s  "
            f"[{min(xs):.2f}, {max(xs):.2f}] over {len(xs)}")


def main():
    builds = [("base", BASE), ("this", BIN)] if BASE else [("this", BIN)]
    times = {b: {"shipped": [], "loo": [], "models": []} for b, _ in builds}
    first_line = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(REPEAT):
            for b, binary in builds:
                dt, out = calibrate(binary, tmp, f"{b}{i}", "--arg", "loo=approx")
                times[b]["shipped"].append(dt)
                first_line[b] = out.splitlines()[0]
        for b, binary in builds:
            dt, _ = calibrate(binary, tmp, f"{b}-loo", "--arg", "loo=exact")
            times[b]["loo"].append(dt)
        if os.environ.get("BENCH_CALIBRATE_MODELS") == "1":
            for b, binary in builds:
                env = dict(os.environ, FLASHSPEC_BIN=binary)
                dt, _ = timed(["scripts/calibration_models.sh", os.path.join(tmp, f"{b}-models")],
                              env=env)
                times[b]["models"].append(dt)
    print(f"flashspec calibrate {SPEC}, -j 2, wall seconds:")
    for b, _ in builds:
        print(f" {b}: {first_line[b]}")
        for k in ("shipped", "loo", "models"):
            if times[b][k]:
                print(summary(k, times[b][k]))
    if BASE:
        for k in ("shipped", "loo", "models"):
            if times["this"][k]:
                r = statistics.median(times["base"][k]) / statistics.median(times["this"][k])
                print(f"  {k}: base / this = {r:.2f}x")
    m = re.search(r"(\d+) evaluations", first_line["this"])
    if m:
        print(f"  this build: {m.group(1)} evaluations in the shipped fit")


if __name__ == "__main__":
    main()
