#!/usr/bin/python3
"""Benchmark of the Lever replay rate per core (meson benchmark, not a test).

Lever with 64-node trees (the default n_max) on a synthetic trace recorded with
64-node trees (scripts/lever_rate.lua): speculative cycles/s and tokens/s on one
thread, from the replay's own wall time (sim_wall_s, which includes per-point
set-up such as calibration), median [min, max] of REPEAT runs of the script
because the machine is shared.  Two rows: the full Lever (gain-cost drafting, hybrid
schedule, full pruning) and Lever without pruning.  The design target is
>= 100k speculative cycles/s per core for the full Lever.
"""
import os
import statistics
import subprocess
import sys
import tempfile

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "lever_rate.lua")
REPEAT = 5


def main():
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(REPEAT):
            p = subprocess.run([BIN, "run", "-q", SCRIPT, "-o", os.path.join(tmp, f"r{i}")],
                               capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                sys.exit(f"bench: flashspec failed ({p.returncode}): {p.stderr}")
            for line in p.stdout.splitlines():
                f = line.split()
                if len(f) == 7 and f[0] == "replay":
                    cycles, tokens, wall = int(f[2]), int(f[3]), float(f[4])
                    runs.setdefault(f[1], []).append((cycles / wall, tokens / wall, float(f[5]),
                                                      int(f[6])))
    if not runs:
        sys.exit("bench: no replay lines in the script's output")
    print(f"Lever replay rate, a 64-node cap (n_max = 64), one thread (median [min, max] of\n"
          f"{REPEAT} runs; steady state, the per-trace statistics fit excluded; lever-cold: one\n"
          "point with it); Lever sizes its own trees, so the rows it actually verified are shown:")
    for name, r in runs.items():
        c = [x[0] for x in r]
        t = [x[1] for x in r]
        print(f"  {name:<10} {statistics.median(c):10.0f} [{min(c):.0f}, {max(c):.0f}] cycles/s  "
              f"{statistics.median(t):10.0f} tokens/s  {r[0][2]:5.1f} rows/cycle "
              f"(max {r[0][3]})")

if __name__ == "__main__":
    main()
