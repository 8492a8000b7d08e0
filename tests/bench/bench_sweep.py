#!/usr/bin/python3
"""Benchmarks of sweep execution (meson benchmark, not a test).

Prints: sweep throughput in points/s at -j 1, at -j 2 and with 2 MPI ranks
(-j 1 each; when flashspec was built with MPI and mpirun exists), both as
measured by the sweep itself (executor wall time) and end to end (process
start to exit, including the synthetic trace generation); the -j 2 / -j 1 and
MPI / -j 1 ratios; and the replay rate (speculative cycles/s and tokens/s on
one core) of Flash-AR and Chain-SD (k = 8).  Every run writes into a fresh
directory, so nothing is resumed.

The configurations run interleaved (-j 1, -j 2, MPI, -j 1, -j 2, MPI, ...)
REPEAT times, so machine noise falls on all of them alike; each rate is the
median of its runs with the min and max beside it, and each ratio the median
of the per-round ratios with their min and max.  The replay rate is the median
[min, max] of REPEAT runs as well.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
MPI = os.environ.get("FLASHSPEC_MPI", "0") == "1"
MPIRUN = os.environ.get("FLASHSPEC_MPIRUN", "mpirun")
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
REPEAT = 5


def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr}")
    return p, wall


def sweep_once(prefix, args, tmp, tag):
    """(points, sweep-only points/s, end-to-end points/s) of one run."""
    out = os.path.join(tmp, tag)
    p, wall = timed([*prefix, BIN, "sweep", *args, os.path.join(HERE, "throughput.lua"),
                     "-o", out])
    m = re.search(r"sweep of (\d+) points: (\d+) computed, \d+ resumed, \d+ failed in "
                  r"([0-9.]+) s", p.stderr)
    if not m or m.group(1) != m.group(2):
        sys.exit(f"bench: unexpected sweep summary: {p.stderr}")
    n, s = int(m.group(1)), float(m.group(3))
    return n, n / s, n / wall


def spread(v):
    return f"{statistics.median(v):9.1f} [{min(v):.1f}, {max(v):.1f}]"


def main():
    configs = [("-j 1", [], ["-j", "1"]), ("-j 2", [], ["-j", "2"])]
    if MPI:
        mpi = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", "2", "--mca", "btl",
               "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]
        configs.append(("mpirun -n 2, -j 1", mpi, ["-j", "1"]))
    with tempfile.TemporaryDirectory() as tmp:
        runs = {name: [] for name, _, _ in configs}
        for i in range(REPEAT):
            for name, prefix, args in configs:
                runs[name].append(sweep_once(prefix, args, tmp, f"{len(runs[name])}-{i}-"
                                             + name.replace(" ", "_").replace(",", "")))
        n = runs["-j 1"][0][0]
        print(f"sweep throughput ({n} points, {REPEAT} interleaved rounds, {os.cpu_count()} "
              "CPUs; median [min, max]):")
        for name, r in runs.items():
            print(f"  {name:<20} {spread([x[1] for x in r])} points/s (sweep)  "
                  f"{spread([x[2] for x in r])} points/s (end to end)")
        for name in list(runs)[1:]:
            rs = [a[1] / b[1] for a, b in zip(runs[name], runs["-j 1"])]
            re_ = [a[2] / b[2] for a, b in zip(runs[name], runs["-j 1"])]
            print(f"  ratio {name} / -j 1:  {statistics.median(rs):.2f}x [{min(rs):.2f}, "
                  f"{max(rs):.2f}] (sweep)  {statistics.median(re_):.2f}x [{min(re_):.2f}, "
                  f"{max(re_):.2f}] (end to end)")
        if not MPI:
            print("  (MPI: not built or mpirun not found; skipped)")

        rates = {}
        for i in range(REPEAT):
            p, _ = timed([BIN, "run", "-q", os.path.join(HERE, "replay_rate.lua"), "-o",
                          os.path.join(tmp, f"replay{i}")])
            for line in p.stdout.splitlines():
                f = line.split()
                if len(f) == 5 and f[0] == "replay":
                    cycles, tokens, wall = int(f[2]), int(f[3]), float(f[4])
                    rates.setdefault(f[1], []).append((cycles / wall, tokens / wall))
        print(f"replay rate (one core, {REPEAT} runs; median [min, max]):")
        for name, r in rates.items():
            c = [x[0] for x in r]
            t = [x[1] for x in r]
            print(f"  {name:<9} {statistics.median(c):10.0f} [{min(c):.0f}, {max(c):.0f}] cycles/s  "
                  f"{statistics.median(t):10.0f} [{min(t):.0f}, {max(t):.0f}] tokens/s")

if __name__ == "__main__":
    main()
