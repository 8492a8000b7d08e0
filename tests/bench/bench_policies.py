#!/usr/bin/python3
"""Benchmark: replay rate of every policy with trees of up to 64 rows (meson
benchmark; it reports, it asserts nothing about speed).

tests/bench/scripts/policy_rate.lua runs each policy on one thread over a
synthetic trace recorded with 65-node trees.  The script runs REPEAT times;
within a round every policy runs, so machine noise spreads over all of them
alike.  Reported per policy: cycles per second of the replay's own wall time
(median, min, max over the rounds) and the rows it actually verified per
cycle (mean and largest), so a tree-size label never overstates the work.
With FLASHSPEC_BIN_BASE set to another build, each round also runs that
binary (interleaved: new, base, new, base, ...) and the speed-up per policy
is reported as a ratio of medians with its min and max.
"""
import os
import statistics
import subprocess
import sys
import tempfile

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
BASE = os.environ.get("FLASHSPEC_BIN_BASE")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "policy_rate.lua")
REPEAT = 5


def run(binary, tmp, tag):
    p = subprocess.run([binary, "run", "-q", "-j", "1", SCRIPT, "--no-resume", "-o",
                        os.path.join(tmp, tag)], cwd=HOME, capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        sys.exit(f"bench: flashspec failed ({p.returncode}): {p.stderr}")
    out = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 6 and f[0] == "rate":
            out[f[1]] = (int(f[2]) / float(f[3]), float(f[4]), int(f[5]))
    return out


def main():
    rates, base, rows = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(REPEAT):
            for name, (rate, rmean, rmax) in run(BIN, tmp, f"n{i}").items():
                rates.setdefault(name, []).append(rate)
                rows[name] = (rmean, rmax)
            if BASE:
                for name, (rate, _, _) in run(BASE, tmp, f"b{i}").items():
                    base.setdefault(name, []).append(rate)
    print(f"Replay rate per policy, one thread, {REPEAT} rounds (cycles/s of sim_wall_s):")
    print(f"  {'policy':<10} {'median':>10} {'min':>10} {'max':>10}  {'rows/cycle':>10} "
          f"{'rows max':>8}" + ("  speed-up vs base (median [min, max])" if BASE else ""))
    for name, r in rates.items():
        line = (f"  {name:<10} {statistics.median(r):10.0f} {min(r):10.0f} {max(r):10.0f}  "
                f"{rows[name][0]:10.2f} {rows[name][1]:8d}")
        if BASE and name in base:
            ratios = [a / b for a, b in zip(r, base[name])]
            line += (f"  {statistics.median(r) / statistics.median(base[name]):5.2f}x "
                     f"[{min(ratios):.2f}, {max(ratios):.2f}]")
        print(line)


if __name__ == "__main__":
    main()
