#!/usr/bin/python3
"""Benchmark: where a replay cycle's instructions go, per policy (meson
benchmark; it reports, it asserts nothing about speed).

For every policy of bench/policies (same trace, same settings: trees of up
to 64 rows, tests/bench/scripts/policy_rate.lua), on the OnePlus 12 profile
with its two standing variants (the model band, "band") and on a profile
deriving it with no variants (one phone model a point, "one"):

  rate      cycles per second of the replay's own wall time, one thread, natively
            (median of REPEAT runs of at least MIN_S seconds);
  instr     instructions per cycle, counted by callgrind over the cycles only
            (collection on inside sim_replay_run, off inside
            trc_prompt_acquire, so reading and checking the trace is left out;
            the first two seeds of each policy, so the counts repeat exactly),
            split by where the code lives:
              policy   engine/ (the policy's hooks, the tree, acceptance): the
                       code a phone runtime would run itself;
              oracle   the replay's oracle (sim/replay/rp_oracle.c) and the
                       recorded trees it reads (traces/);
              draws    GSL's random number generators (candidates the trace
                       did not record, acceptance draws);
              pricing  the phone model (sim/hw/): each cycle's draft calls and
                       verification priced on every phone model of the point;
              replay   the rest of the replay loop (sim/replay/, sim/);
              libc     glibc and libm: memcpy, memset, and the exp and log
                       that policies call (Lever's reach, EdgeLLM's confidence);
  ns/instr  what one counted instruction costs natively (1e9 / (rate * instr)),
  budget    the instructions a cycle could take at that cost and still reach
            the issue's aim (1M cycles/s for chain, 250k for the tree
            policies), for comparison with the policy column alone.

The budget (a regression check): every policy's instructions per cycle,
band and one, are held to tests/bench/cycle_costs_budget.txt (lines
`POLICY MODELS INSTRUCTIONS REASON...`, the reason a sentence saying why the
number is what it is).  A count more than BUDGET_SLACK (5%) above its budget
fails the benchmark (exit 1, one line per count over); a count more than 5%
below is reported so the budget can be lowered.  A policy measured without a
budget line fails too.  The counts are callgrind's, so they repeat exactly on
one build, but they belong to the compiler and glibc that made them: another
toolchain may need its own numbers (BENCH_CYCLE_COSTS_BUDGET=FILE reads
another budget).  BENCH_CYCLE_COSTS_WRITE=FILE writes the measured counts in
the budget's format (reason "measured"), to be copied over the lines that
changed with a reason of their own; docs/performance.md says how.

valgrind (callgrind) and callgrind_annotate must be on PATH; without them the
benchmark says so, reports the native rates only and exits 77 (skipped: no
budget checked).  About 4 minutes on a quiet 2-core machine.
BENCH_CYCLE_COSTS_POLICIES=chain,eagle2 limits the policies (and the check
to them).
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench_policies import POLICIES, policy_trace, run  # the same trace, policies, runs

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
AIM = {"chain": 1e6, "flash_ar": None}  # others: 250k (tree policies)
REPEAT = 3
MIN_S = 0.25
CG_MIN_S = 0  # under callgrind: the first two seeds only, so the counts repeat exactly
COMPONENTS = ["policy", "oracle", "draws", "pricing", "replay", "libc"]
WARMUP_CYCLES = 16  # policy_rate.lua's first point: Flash-AR, 4 tokens on each of 4 prompts
BUDGET = os.environ.get("BENCH_CYCLE_COSTS_BUDGET",
                        os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "cycle_costs_budget.txt"))
BUDGET_SLACK = 0.05  # a count more than 5% over its budget fails
MODELS = ("band", "one")


def component(path, obj):
    """The component of a function, from its source file and object."""
    if "/engine/" in path:
        return "policy"
    if "libgsl" in obj or "/gsl/" in path:
        return "draws"
    if "rp_oracle" in path or "/traces/" in path:
        return "oracle"
    if "/sim/hw/" in path:
        return "pricing"
    if "libc.so" in obj or "libm.so" in obj or "ld-linux" in obj or path.startswith("./"):
        return "libc"  # glibc's own sources are named "./..."
    return "replay"


def one_run(tmp, tag, trace, policy, device, min_s, wrap=()):
    """(cycles, replay wall seconds) of policy's bench/policies run."""
    out = run(BIN, tmp, tag, trace, policy, device, min_s, wrap)
    if policy not in out:
        sys.exit(f"bench: no rate line for {policy}")
    return out[policy][:2]


def counted(tmp, tag, trace, policy, device):
    """Instructions per component over the cycles, and the cycles counted."""
    out = os.path.join(tmp, f"cg.{tag}")
    cycles, _ = one_run(tmp, tag, trace, policy, device, CG_MIN_S,
                       ("valgrind", "--tool=callgrind", "--toggle-collect=sim_replay_run",
                        "--toggle-collect=trc_prompt_acquire", f"--callgrind-out-file={out}"))
    ann = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", out],
                         capture_output=True, text=True, timeout=600)
    if ann.returncode != 0:
        sys.exit(f"bench: callgrind_annotate failed: {ann.stderr}")
    tot = dict.fromkeys(COMPONENTS, 0)
    pat = re.compile(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*?):(\S+)(?: \[(.*)\])?$")
    for line in ann.stdout.splitlines():
        m = pat.match(line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        tot[component(m.group(2), m.group(4) or "")] += int(m.group(1).replace(",", ""))
    return tot, cycles + WARMUP_CYCLES


def read_budget(path, policies=None):
    """{(policy, models): instructions per cycle} from a budget file: one line
    `POLICY MODELS INSTRUCTIONS REASON...`, '#' comments and blank lines
    skipped.  A bad line exits with status 2, naming the file and line."""
    policies = POLICIES if policies is None else policies
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        sys.exit(f"bench: budget {path}: {e.strerror}")
    for no, line in enumerate(lines, 1):
        f = line.split(None, 3)
        if not f or f[0].startswith("#"):
            continue
        where = f"bench: budget {path}:{no}"
        if len(f) < 4:
            print(f"{where}: want POLICY MODELS INSTRUCTIONS REASON", file=sys.stderr)
            sys.exit(2)
        pol, models, instr = f[0], f[1], f[2]
        if pol not in policies:
            print(f"{where}: no policy {pol!r}", file=sys.stderr)
            sys.exit(2)
        if models not in MODELS:
            print(f"{where}: models {models!r} is neither band nor one", file=sys.stderr)
            sys.exit(2)
        try:
            n = int(instr)
        except ValueError:
            n = 0
        if n <= 0:
            print(f"{where}: instructions {instr!r} is not a positive integer", file=sys.stderr)
            sys.exit(2)
        if (pol, models) in out:
            print(f"{where}: a second line for {pol} {models}", file=sys.stderr)
            sys.exit(2)
        out[(pol, models)] = n
    return out


def check_budget(measured, budget, slack=BUDGET_SLACK):
    """(failures, notes): one line per count more than slack above its budget
    or without one (failures), and per count more than slack below (notes)."""
    fails, notes = [], []
    for key, instr in measured.items():
        pol, models = key
        if key not in budget:
            fails.append(f"{pol} {models}: {instr:.0f} instructions a cycle and no budget line")
            continue
        b = budget[key]
        ratio = instr / b
        if ratio > 1 + slack:
            fails.append(f"{pol} {models}: {instr:.0f} instructions a cycle, "
                         f"{(ratio - 1) * 100:.1f}% over its budget of {b}")
        elif ratio < 1 - slack:
            notes.append(f"{pol} {models}: {instr:.0f} instructions a cycle, "
                         f"{(1 - ratio) * 100:.1f}% under its budget of {b}: lower the budget")
    return fails, notes


def main():
    only = os.environ.get("BENCH_CYCLE_COSTS_POLICIES")
    policies = [p for p in POLICIES if not only or p in only.split(",")]
    have_cg = shutil.which("valgrind") and shutil.which("callgrind_annotate")
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "policies.h5")
        policy_trace(BIN, HOME, trace)
        # one phone model a point: a profile deriving oneplus12 without
        # variants, loaded by name from a FLASHSPEC_CONFIG_PATH directory
        # (a profile file outside the project is refused)
        os.makedirs(os.path.join(tmp, "devices"))
        with open(os.path.join(tmp, "devices", "oneplus12-one.lua"), "w") as f:
            f.write('return { base = "oneplus12", name = "oneplus12-one", variants = {} }\n')
        path = os.environ.get("FLASHSPEC_CONFIG_PATH")
        os.environ["FLASHSPEC_CONFIG_PATH"] = tmp + (":" + path if path else "")
        devices = [("band", ""), ("one", "oneplus12-one")]
        if not have_cg:
            print("bench: valgrind / callgrind_annotate not found: native rates only")
        print("Instructions per replay cycle by component (callgrind), one thread, trees of up "
              "to 64 rows; rate: native cycles/s (median of 3)")
        head = (f"  {'policy':<10} {'models':<6} {'rate':>9} {'instr':>8}  "
                + " ".join(f"{c:>8}" for c in COMPONENTS) + f"  {'ns/instr':>8} {'budget':>8}")
        print(head)
        measured = {}
        for pol in policies:
            for dname, dev in devices:
                rates = []
                for i in range(REPEAT):
                    c, w = one_run(tmp, f"n{dname}{pol}{i}", trace, pol, dev, MIN_S)
                    rates.append(c / w)
                rate = statistics.median(rates)
                if not have_cg:
                    print(f"  {pol:<10} {dname:<6} {rate:9.0f}")
                    continue
                tot, cycles = counted(tmp, f"{dname}{pol}", trace, pol, dev)
                per = {k: v / cycles for k, v in tot.items()}
                instr = sum(per.values())
                measured[(pol, dname)] = instr
                ns = 1e9 / (rate * instr)
                aim = AIM.get(pol, 2.5e5)
                budget = f"{1e9 / aim / ns:8.0f}" if aim else f"{'-':>8}"
                print(f"  {pol:<10} {dname:<6} {rate:9.0f} {instr:8.0f}  "
                      + " ".join(f"{per[k]:8.0f}" for k in COMPONENTS) + f"  {ns:8.3f} {budget}",
                      flush=True)

    if not have_cg:
        print("bench: no counts, so no budget checked")
        return 77
    return report_budget(measured)


def report_budget(measured):
    """Writes the counts where BENCH_CYCLE_COSTS_WRITE says, checks them
    against the budget; the exit status (1: a count over its budget)."""
    write = os.environ.get("BENCH_CYCLE_COSTS_WRITE")
    if write:
        with open(write, "w", encoding="utf-8") as f:
            for (pol, models), instr in measured.items():
                f.write(f"{pol:<10} {models:<4} {round(instr):>7}  measured\n")
        print(f"bench: counts written to {write}")
    fails, notes = check_budget(measured, read_budget(BUDGET))
    for n in notes:
        print(f"bench: {n}")
    for n in fails:
        print(f"bench: OVER BUDGET: {n}")
    print(f"bench: {len(measured)} counts against {BUDGET} (slack {BUDGET_SLACK:.0%}): "
          + (f"{len(fails)} over" if fails else "all within"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
