#!/usr/bin/python3
"""Benchmark: a policy written in Lua against the same policy in C (meson
benchmark, not a test; it asserts nothing about speed).

Chain-SD with k = 8 (the built-in `chain`) and its Lua port
(examples/policies/chain.lua), each replaying the six bundled workload traces
on one thread.  The two run interleaved (C, Lua, C, Lua, ...) REPEAT times so
that machine noise hits both alike; the rate is cycles per second of the
replay's own wall time (sim_wall_s, per-point set-up included: the Lua
policy loads its file once per point).  Prints each rate's median, min and
max and the C/Lua ratio of the medians (the aim: within 5x).
"""
import os
import statistics
import subprocess
import sys
import tempfile

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
REPEAT = 7

SCRIPT = """local fs = flashspec
local traces = {}
for _, w in ipairs { "code-strong", "code-weak", "math-strong", "math-weak",
                     "dialogue-strong", "dialogue-weak" } do
  traces[#traces + 1] = fs.trace("traces/data/workload-" .. w .. ".h5")
end
local pol = fs.args.which == "lua" and fs.policy.lua("examples/policies/chain.lua", { k = 8 })
            or fs.policy.chain { k = 8 }
local rows = fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = traces, max_new_tokens = 128,
  dram_fraction = { 0, 0.25, 0.5 }, seed = { 1, 2, 3 }, policy = pol }
local cycles, wall = 0, 0
for _, r in ipairs(rows) do cycles = cycles + r.cycles wall = wall + r.sim_wall_s end
print("rate", cycles, wall)
"""


def main():
    rates = {"c": [], "lua": []}
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "chain_rate.lua")
        open(script, "w").write(SCRIPT)
        for i in range(REPEAT):
            for which in ("c", "lua"):
                p = subprocess.run([BIN, "run", "-q", "-j", "1", script, "--arg",
                                    f"which={which}", "--no-resume", "-o",
                                    os.path.join(tmp, f"{which}{i}")],
                                   cwd=HOME, capture_output=True, text=True, timeout=600)
                if p.returncode != 0:
                    sys.exit(f"bench: flashspec failed ({p.returncode}): {p.stderr}")
                f = [l.split() for l in p.stdout.splitlines() if l.split()[:1] == ["rate"]][0]
                rates[which].append(int(f[1]) / float(f[2]))
    print(f"Chain-SD k=8 replay rate, one thread, {REPEAT} interleaved runs of 54 points:")
    for which, name in (("c", "C chain"), ("lua", "Lua chain")):
        r = rates[which]
        print(f"  {name:<10} median {statistics.median(r):10.0f} cycles/s  "
              f"(min {min(r):.0f}, max {max(r):.0f})")
    ratios = [c / l for c, l in zip(rates["c"], rates["lua"])]
    print(f"  C / Lua    median {statistics.median(ratios):.2f}x  (min {min(ratios):.2f}x, "
          f"max {max(ratios):.2f}x; aim <= 5x)")


if __name__ == "__main__":
    main()
