#!/usr/bin/python3
"""Benchmark of the Flash-AR replay rate per core (meson benchmark, not a test).

Flash-AR is the baseline every policy is compared with and the cheapest
replay, so its rate bounds how fast a sweep can go.  Prints tokens/s of one
point on one thread (the replay's own wall time, sim_wall_s), and of a sweep
of 16 points on -j 1 and on -j <CPUs> (the sweep executor's wall time, from its
summary line), divided by the threads used: the per-core rate and how well it
holds up when every core works.  The -j 1 and -j <CPUs> runs alternate
REPEAT times (interleaved, so machine noise falls on both alike): rates are
medians with min and max, and the per-core ratio is the median of the
per-round ratios.
"""
import os
import re
import subprocess
import sys
import tempfile

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "flash_ar_rate.lua")


def run(jobs, out):
    p = subprocess.run([BIN, "sweep", "-j", str(jobs), SCRIPT, "-o", out],
                       capture_output=True, text=True, timeout=600)
    m = re.search(r"sweep of 16 points: 16 computed, 0 resumed, 0 failed in ([0-9.]+) s", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"bench: flashspec failed ({p.returncode}): {p.stderr}")
    single = sweep = None
    for line in p.stdout.splitlines():
        f = line.split()
        if f[0] == "single":
            single = (int(f[1]), float(f[2]))
        elif f[0] == "sweep":
            sweep = (int(f[1]), int(f[2]))
    if not single or not sweep:
        sys.exit(f"bench: unexpected output: {p.stdout!r}")
    return single, sweep, float(m.group(1))


REPEAT = 5


def main():
    import statistics
    cpus = os.cpu_count() or 1
    jobs_list = sorted({1, cpus})
    single, per_core = [], {j: [] for j in jobs_list}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(REPEAT):
            for jobs in jobs_list:
                (tok, wall1), (pts, swept), wall = run(jobs, os.path.join(tmp, f"j{jobs}-{i}"))
                if jobs == 1:
                    single.append(tok / wall1)
                per_core[jobs].append(swept / wall / jobs)
    med = statistics.median
    print(f"Flash-AR replay rate ({cpus} CPUs, {REPEAT} interleaved rounds; median [min, max]):")
    print(f"  one point, one thread  {med(single):12.0f} tokens/s  [{min(single):.0f}, "
          f"{max(single):.0f}]")
    for jobs in jobs_list:
        r = per_core[jobs]
        print(f"  sweep -j {jobs:<3}           {med(r):12.0f} tokens/s per core  "
              f"[{min(r):.0f}, {max(r):.0f}]")
    if cpus > 1:
        ratios = [a / b for a, b in zip(per_core[cpus], per_core[1])]
        print(f"  per-core rate at -j {cpus} / -j 1: {med(ratios):.2f}x [{min(ratios):.2f}, "
              f"{max(ratios):.2f}]")


if __name__ == "__main__":
    main()
