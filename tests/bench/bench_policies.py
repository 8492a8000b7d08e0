#!/usr/bin/python3
"""Benchmark: replay rate of every policy with trees of up to 64 rows (meson
benchmark; it reports, it asserts nothing about speed).

tests/bench/scripts/policy_rate.lua runs one policy on one thread over a
synthetic trace recorded with 65-node trees (made once per benchmark with
`flashspec trace synth`), seed after seed until its points took MIN_S
seconds of replay.  Every round runs every policy, each in its own process;
with FLASHSPEC_BIN_BASE set to another build, that build runs the same
policy right before or after (the order alternates from round to round), so
drift and noise fall on both alike.  Reported per policy: cycles per second
of the replay's own wall time (median, min, max over REPEAT rounds) and the
rows it actually verified per cycle (mean and largest), so a tree-size label
never overstates the work; against a base build the speed-up as the ratio of
medians, with the min and max of the per-round ratios.

The phone is the OnePlus 12 profile, whose two standing variants (the model
band) every point also pays for.  BENCH_POLICIES_DEVICE=NAME_OR_FILE times
this build on another device profile (e.g. one deriving oneplus12 with
`variants = {}`: one phone model a point); BENCH_POLICIES_DEVICE_BASE does the
same for the base build (default: the same as this build's), so a build from
before the model band can be compared with one phone model on both sides.
"""
import os
import statistics
import subprocess
import sys
import tempfile

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
BASE = os.environ.get("FLASHSPEC_BIN_BASE")
DEVICE = os.environ.get("BENCH_POLICIES_DEVICE", "")
DEVICE_BASE = os.environ.get("BENCH_POLICIES_DEVICE_BASE", DEVICE)
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "policy_rate.lua")
REPEAT = 5
MIN_S = 0.25
POLICIES = ["flash_ar", "chain", "specinfer", "sequoia", "eagle2", "opt_tree", "edgellm", "lyanna",
            "lever"]


def run(binary, tmp, tag, trace, policy, device, min_s=MIN_S, wrap=()):
    """One policy_rate.lua run (under the command wrap, e.g. valgrind): per
    policy name, (cycles, replay wall seconds, mean rows, largest rows)."""
    dev = ["--arg", f"device={device}"] if device else []
    p = subprocess.run([*wrap, binary, "run", "-q", "-j", "1", SCRIPT, "--no-resume", "-o",
                        os.path.join(tmp, tag), "--arg", f"trace={trace}", "--arg",
                        f"only={policy}", "--arg", f"min_s={min_s}", *dev], cwd=HOME,
                       capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        sys.exit(f"bench: flashspec failed ({p.returncode}): {p.stderr}")
    out = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 6 and f[0] == "rate":
            out[f[1]] = (int(f[2]), float(f[3]), float(f[4]), int(f[5]))
    return out


def policy_trace(binary, home, path):
    """Writes the benchmark's trace to path: 4 prompts of 1,000 reference tokens,
    recorded trees of 65 nodes (bench/cycle_costs replays the same)."""
    p = subprocess.run([binary, "trace", "synth", "-o", path, "--prompts", "4", "--output-len",
                        "1000", "--seed", "3", "--nodes", "65", "--depth", "10"], cwd=home,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"bench: trace synth failed ({p.returncode}): {p.stderr}")


def main():
    rates, base, rows = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "policies.h5")
        policy_trace(BIN, HOME, trace)
        for i in range(REPEAT):
            for pol in POLICIES:
                order = [(BIN, "n"), (BASE, "b")] if i % 2 == 0 else [(BASE, "b"), (BIN, "n")]
                for binary, tag in order:
                    if not binary:
                        continue
                    device = DEVICE if tag == "n" else DEVICE_BASE
                    for name, (cyc, wall, rmean, rmax) in run(binary, tmp, f"{tag}{i}{pol}",
                                                              trace, pol, device).items():
                        rate = cyc / wall
                        (rates if tag == "n" else base).setdefault(name, []).append(rate)
                        if tag == "n":
                            rows[name] = (rmean, rmax)
    print(f"Replay rate per policy, one thread, {REPEAT} rounds of at least {MIN_S} s each "
          f"(cycles/s of sim_wall_s; device {DEVICE or 'oneplus12'}"
          + (f", base build's {DEVICE_BASE or 'oneplus12'}" if BASE else "") + "):")
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
