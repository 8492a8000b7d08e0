#!/usr/bin/python3
"""Benchmark against a peer: a straightforward Python replay (Debian's numpy
and h5py) of Flash-AR and Chain-SD (k = 8) over the bundled workload traces,
next to flashspec's replay of the same points (meson benchmark; it checks
agreement, and reports speed without asserting it).

The peer reads the trace with h5py and walks it the way the replay's rules
define a cycle: Flash-AR emits one token per cycle; Chain-SD drafts the
draft's top-1 token k times (never more than the tokens still to generate
allow), the target accepts the longest prefix that matches its own choices
(the reference tokens, recorded in every tree), and the cycle emits the
accepted tokens plus one.  It computes cycles and tokens only -- no phone
model -- so its figures must equal flashspec's `cycles` and `tokens` point
for point; the benchmark exits non-zero when they do not.

Reported: the replay loop's time per point in both, medians over REPEAT
interleaved rounds, and their ratio.  The two loops do not do the same work:
flashspec's (sim_wall_s) builds the phone model for the point and prices
every cycle on it -- flash reads, NPU and CPU work, overlap -- while the
peer only counts, the trace already in memory.  The ratio is therefore the
cost of flashspec's timing model per cycle over a bare Python walk of the
trace, not a like-for-like speed-up.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
TRACES = ["workload-code-strong", "workload-math-weak", "workload-dialogue-strong"]
MAX_NEW = 128
K = 8
REPEAT = 3


class Trace:
    def __init__(self, path):
        with h5py.File(path, "r") as f:
            self.ref_off = f["reference/offset"][()]
            self.ref = f["reference/tokens"][()]
            self.node_off = f["trees/node_offset"][()]
            self.parent = f["nodes/parent"][()]
            self.token = f["nodes/token"][()]
            self.draft_top = f["nodes/draft_tok"][:, 0].copy()

    def child(self, b, e, u, tok):
        """Local id of the child of local node u with token tok in tree rows [b, e)."""
        for i in range(u + 1, e - b):
            if self.parent[b + i] == u and self.token[b + i] == tok:
                return i
        return -1


def replay(tr, policy):
    cycles = tokens = 0
    for p in range(len(tr.ref_off) - 1):
        r0 = int(tr.ref_off[p])
        gen = min(int(tr.ref_off[p + 1]) - r0, MAX_NEW)
        pos = 0
        while pos < gen:
            if policy == "flash_ar":
                emitted = 1
            else:
                t = r0 + pos
                b, e = int(tr.node_off[t]), int(tr.node_off[t + 1])
                n = min(K, gen - pos - 1)
                acc, u = 0, 0
                while acc < n:
                    want = tr.ref[r0 + pos + acc]
                    if tr.draft_top[b + u] != want:
                        break
                    acc += 1
                    u = tr.child(b, e, u, want)
                    if u < 0:
                        sys.exit("bench: the reference path leaves the recorded tree")
                emitted = acc + 1
            pos += emitted
            tokens += emitted
            cycles += 1
    return cycles, tokens


SCRIPT = """local fs = flashspec
local traces = {}
for _, n in ipairs { %s } do traces[#traces + 1] = fs.trace("traces/data/" .. n .. ".h5") end
local rows = fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = traces, max_new_tokens = %d,
  policy = { fs.policy.flash_ar {}, fs.policy.chain { k = %d } } }
for _, r in ipairs(rows) do print("row", r.trace, r.policy, r.cycles, r.tokens, r.sim_wall_s) end
""" % (", ".join(f'"{t}"' for t in TRACES), MAX_NEW, K)


def main():
    traces = {t: Trace(os.path.join(HOME, "traces", "data", t + ".h5")) for t in TRACES}
    c_wall, py_wall = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "peer.lua")
        open(script, "w").write(SCRIPT)
        for i in range(REPEAT):
            p = subprocess.run([BIN, "run", "-q", "-j", "1", "--no-resume", script, "-o",
                                os.path.join(tmp, f"r{i}")], cwd=HOME, capture_output=True,
                               text=True, timeout=600)
            if p.returncode != 0:
                sys.exit(f"bench: flashspec failed ({p.returncode}): {p.stderr}")
            for line in p.stdout.splitlines():
                f = line.split()
                if f[:1] != ["row"]:
                    continue
                key = (f[1], f[2])
                c_wall.setdefault(key, []).append(float(f[5]))
                t0 = time.perf_counter()
                cycles, tokens = replay(traces[f[1]], f[2])
                py_wall.setdefault(key, []).append(time.perf_counter() - t0)
                if (cycles, tokens) != (int(f[3]), int(f[4])):
                    sys.exit(f"bench: {key}: the peer counts {cycles} cycles / {tokens} tokens, "
                             f"flashspec {f[3]} / {f[4]}")
    print(f"Peer replay (Python, numpy + h5py) against flashspec, {REPEAT} interleaved rounds;")
    print("cycles and tokens agree on every point.  Time per point, median (flashspec:")
    print("replay with the phone model; peer: counting only):")
    ratios = {"flash_ar": [], "chain": []}
    for key in c_wall:
        c, py = statistics.median(c_wall[key]), statistics.median(py_wall[key])
        ratios[key[1]].append(py / c)
        print(f"  {key[0]:<26} {key[1]:<9} flashspec {c * 1e3:8.2f} ms   peer {py * 1e3:8.2f} ms"
              f"   peer / flashspec {py / c:6.2f}")
    for pol, r in ratios.items():
        print(f"  {pol}: peer / flashspec time {statistics.median(r):.2f} (median over traces; "
              f"min {min(r):.2f}, max {max(r):.2f})")


if __name__ == "__main__":
    main()
