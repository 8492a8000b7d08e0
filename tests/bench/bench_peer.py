#!/usr/bin/python3
"""Benchmark against a peer: a straightforward Python replay (Debian's numpy
and h5py) of Flash-AR and Chain-SD (k = 8) over the bundled workload traces,
phone model included, next to flashspec's replay of the same points (meson
benchmark; it checks agreement, and reports speed without asserting it).

The peer does the same work as flashspec's replay loop, written the plain
way: it reads the trace with h5py and the phone and model profiles from
configs/ (their `key = value` lines), then walks every prompt cycle by cycle.
  - Flash-AR emits one token per cycle; Chain-SD drafts the draft's top-1
    token n = min(k, tokens left - 1) times, one draft call per token; the
    target accepts the longest prefix that matches the reference tokens (its
    own choices, recorded in every tree); the cycle emits the accepted tokens
    plus one.
  - Every cycle is priced on the phone model: each draft call on the CPU
    (weights plus KV over its context from DRAM, or its FLOPs), then the
    verification of the chain's rows: the temporary-sequence set-up on the
    CPU, the target's layers streamed from flash one request queue at a time
    and run on the NPU in padded graphs, and the LM head -- the recurrence
    sim/hw/sim_hw.h describes (read of op i issued when the compute of op
    i - 1 - prefetch ends, FIFO reads, serial compute), on an integer
    nanosecond clock rounded the same way.
  - Like flashspec it ends each point with the 95% bootstrap interval of the
    tokens per second over prompts: 1,000 resamples drawn with GSL's
    MT19937 seeded as flashspec seeds it (the point's replay seed from its
    point_id; numpy's MT19937 in the state gsl_rng_set leaves, and
    gsl_rng_uniform_int's rejection rule), and GSL's quantile rule.
Its cycles, tokens, milliseconds per token and interval must equal
flashspec's point for point (the floating-point values exactly: the same
operations in the same order); the benchmark exits non-zero when they do not.

Reported: the replay loop's time per point in both -- flashspec's sim_wall_s
(set-up of the phone model and policy included) after a first pass that
reads the traces into memory, and the peer's replay with the trace already
in Python lists -- medians over REPEAT interleaved rounds, and the ratio
peer / flashspec.  The profiles are read before the timing in both.
"""
import math
import os
import re
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
DEVICE, TARGET, DRAFT = "oneplus12", "qwen3-8b-q4_0", "qwen3-8b-eagle3-q4_0"
MAX_NEW = 128
K = 8
REPEAT = 5
BOOTSTRAP = 1000

LINE = re.compile(r"^\s*([a-z_0-9]+)\s*=\s*([^,]+|\{[^}]*\})\s*,?\s*(--.*)?$")


def profile(kind, name):
    """The `key = value` lines of configs/<kind>/<name>.lua as a dict."""
    keys = {}
    with open(os.path.join(HOME, "configs", kind, name + ".lua")) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            v = m.group(2).strip()
            if v.startswith("{"):
                keys[m.group(1)] = [float(x) for x in v.strip("{} ").split(",") if x.strip()]
            elif v in ("true", "false"):
                keys[m.group(1)] = 1.0 if v == "true" else 0.0
            elif v.startswith('"'):
                keys[m.group(1)] = v.strip('"')
            else:
                keys[m.group(1)] = float(v)
    return keys


def llround(x):
    """C's llround for x >= 0: halves away from zero."""
    r = math.floor(x)
    return int(r) + (1 if x - r >= 0.5 else 0)


class Phone:
    """The phone model's costs for one device, target and draft (0% DRAM)."""

    def __init__(self, dev, tgt, dft):
        self.d = dev
        self.t, self.e = tgt, dft
        if dev.get("thermal", 0):
            sys.exit("peer: the device enables thermal throttling; not modelled")
        self.L = int(tgt["layers"])
        self.layer_bytes = self.bytes_of(tgt, self.layer_params(tgt))
        self.head_bytes = self.bytes_of(tgt, tgt["vocab"] * tgt["hidden"])
        self.head_resident = tgt["tied_embeddings"] != 0
        self.kv_layer_bytes = 2.0 * tgt["kv_heads"] * tgt["head_dim"] * tgt["kv_bits"] / 8.0
        self.layer_flops = 2.0 * self.layer_params(tgt)
        self.head_flops = 2.0 * tgt["vocab"] * tgt["hidden"]
        self.attn_flops = 4.0 * tgt["heads"] * tgt["head_dim"]
        q = int(dev["queue_depth"])
        self.layer_read_ns = llround(self.flash_ms(self.layer_bytes, q) * 1e6)
        self.head_read_ns = llround(self.flash_ms(self.head_bytes, q) * 1e6)
        e = dft
        d_layer = e["layers"] * self.layer_params(e)
        self.d_bytes = (e["layers"] * self.bytes_of(e, self.layer_params(e))
                        + self.bytes_of(e, e["fusion_in"] * e["hidden"] * e["hidden"])
                        + self.bytes_of(e, e["vocab"] * e["hidden"]))
        self.d_flops = 2.0 * (d_layer + e["fusion_in"] * e["hidden"] * e["hidden"]
                              + e["vocab"] * e["hidden"])
        self.d_kv_bytes = e["layers"] * (2.0 * e["kv_heads"] * e["head_dim"] * e["kv_bits"] / 8.0)
        self.d_attn = 4.0 * e["layers"] * e["heads"] * e["head_dim"]

    @staticmethod
    def bytes_of(m, params):
        return params * m["weight_bits"] / 8.0

    @staticmethod
    def layer_params(m):
        h, a = m["hidden"], m.get("attn_in_mult", 1.0)
        qd, kvd = m["heads"] * m["head_dim"], m["kv_heads"] * m["head_dim"]
        return a * h * qd + 2.0 * a * h * kvd + qd * h + 3.0 * h * m["ffn"]

    def flash_ms(self, nbytes, queue):
        d = self.d
        requests = math.ceil(nbytes / (d["request_kb"] * 1024.0))
        return (nbytes / (d["read_gbps"] * 1e6)
                + requests * d["request_latency_us"] * 1e-3 / max(queue, 1)) / self.t[
                    "flash_efficiency"]

    def pad(self, rows):
        shapes = self.d["npu_shapes"]
        smax = int(shapes[-1])
        if rows > smax:
            return smax, (rows + smax - 1) // smax
        for s in shapes:
            if s >= rows:
                return int(s), 1
        return smax, 1

    def npu_ms(self, rows, nbytes, flops, eff):
        d = self.d
        p, execs = self.pad(rows)
        mem = nbytes / (d["npu_gbps"] * 1e6)
        comp = p * flops / (d["npu_gflops"] * 1e6)
        return execs * ((d["launch_us"] + d["sync_us"]) * 1e-3 + max(mem, comp)) / eff

    def graph_rows(self, rows):
        vmin = int(self.d["verify_min_rows"])
        return vmin if 2 <= rows < vmin else rows

    def draft_call_ns(self, ctx):
        """One draft forward of one row on the CPU over ctx tokens."""
        d, e = self.d, self.e
        nbytes = self.d_bytes + ctx * self.d_kv_bytes
        flops = self.d_flops + self.d_attn * (ctx + 1)
        ms = max(nbytes / (d["cpu_gbps"] * 1e6), flops / (d["cpu_gflops"] * 1e6)) / e[
            "cpu_efficiency"]
        return llround(ms * 1e6)

    def verify_ns(self, rows, ctx):
        """The verification of a chain of `rows` rows (root included)."""
        g = self.graph_rows(rows)
        p, execs = self.pad(g)
        layer = llround(self.npu_ms(g, self.layer_bytes + ctx * self.kv_layer_bytes,
                                    self.layer_flops + self.attn_flops * (ctx + p * execs),
                                    self.t["npu_efficiency"]) * 1e6)
        head = llround(self.npu_ms(g, self.head_bytes, self.head_flops,
                                   self.t["npu_efficiency"]) * 1e6)
        kv = llround((self.d["verify_setup_us"] * 1e-3 if rows >= 2 else 0.0) * 1e6)
        prefetch = int(self.d["prefetch_layers"])
        end = []
        flash_free = prev = 0
        for i in range(self.L + 1):
            is_head = i == self.L
            issue = 0 if i <= prefetch else end[i - 1 - prefetch]
            ready = issue
            if not (is_head and self.head_resident):
                flash_free = max(flash_free, issue) + (self.head_read_ns if is_head
                                                       else self.layer_read_ns)
                ready = flash_free
            start = max(ready, prev, kv)
            prev = start + (head if is_head else layer)
            end.append(prev)
        return prev


class Trace:
    def __init__(self, path):
        with h5py.File(path, "r") as f:
            self.prompt_off = f["prompts/offset"][()].tolist()
            self.ref_off = f["reference/offset"][()].tolist()
            self.ref = f["reference/tokens"][()].tolist()
            self.node_off = f["trees/node_offset"][()].tolist()
            self.parent = f["nodes/parent"][()].tolist()
            self.token = f["nodes/token"][()].tolist()
            self.draft_top = f["nodes/draft_tok"][:, 0].tolist()

    def child(self, b, e, u, tok):
        """Local id of the child of local node u with token tok in tree rows [b, e)."""
        for i in range(u + 1, e - b):
            if self.parent[b + i] == u and self.token[b + i] == tok:
                return i
        return -1


def replay(tr, policy, phone):
    """Cycles, tokens, milliseconds in all, and tokens and milliseconds per
    prompt, of one point."""
    cycles = tokens = 0
    total_ms = 0.0
    p_tok, p_ms = [], []
    for p in range(len(tr.ref_off) - 1):
        p_tok.append(0)
        p_ms.append(0.0)
        plen = tr.prompt_off[p + 1] - tr.prompt_off[p]
        r0 = tr.ref_off[p]
        gen = min(tr.ref_off[p + 1] - r0, MAX_NEW)
        pos = 0
        while pos < gen:
            draft_ns = 0
            if policy == "flash_ar":
                emitted = 1
                rows = 1
            else:
                t = r0 + pos
                b, e = tr.node_off[t], tr.node_off[t + 1]
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
                for depth in range(max(n, 0)):  # one call per drafted token
                    draft_ns += phone.draft_call_ns(plen + pos + depth + 1)
                emitted = acc + 1
                rows = max(n, 0) + 1
            cycle_ms = (draft_ns + phone.verify_ns(rows, plen + pos)) * 1e-6
            total_ms += cycle_ms
            p_tok[-1] += emitted
            p_ms[-1] += cycle_ms
            pos += emitted
            tokens += emitted
            cycles += 1
    return cycles, tokens, total_ms, p_tok, p_ms


def replay_seed(point_id):
    """The seed a point's replay draws from: splitmix64 of the two halves of
    its id and a salt (sim/sweep/sim_sweep_store.h, "Replay seed")."""
    m = 0xFFFFFFFFFFFFFFFF
    x = (int(point_id[:16], 16) ^ int(point_id[16:], 16) ^ 0x5EED5EED5EED5EED)
    x = (x + 0x9E3779B97F4A7C15) & m
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m
    return x ^ (x >> 31)


def gsl_mt19937(seed):
    """numpy's MT19937 in the state gsl_rng_set(gsl_rng_mt19937, seed) leaves."""
    s = seed if seed != 0 else 4357
    key = [s & 0xFFFFFFFF]
    for i in range(1, 624):
        key.append((1812433253 * (key[-1] ^ (key[-1] >> 30)) + i) & 0xFFFFFFFF)
    bg = np.random.MT19937()
    bg.state = {"bit_generator": "MT19937",
                "state": {"key": np.array(key, dtype=np.uint32), "pos": 624}}
    return bg


def quantile_sorted(x, f):
    """gsl_stats_quantile_from_sorted_data."""
    index = f * (len(x) - 1)
    lhs = int(index)
    delta = index - lhs
    if lhs == len(x) - 1:
        return x[lhs]
    return (1 - delta) * x[lhs] + delta * x[lhs + 1]


def bootstrap(p_tok, p_ms, seed, point):
    """The 95% percentile-bootstrap interval of sum(tokens) / sum(s) over
    prompts, as flashspec draws it; (point, point) below two prompts."""
    n = len(p_tok)
    if n < 2:
        return point, point
    raw = gsl_mt19937((seed ^ 0xB0075A3B1E5) & 0xFFFFFFFFFFFFFFFF).random_raw(
        2 * BOOTSTRAP * n).tolist()
    at, scale = 0, 0xFFFFFFFF // n
    rates = []
    for _ in range(BOOTSTRAP):
        st = sm = 0.0
        for _ in range(n):
            while True:  # gsl_rng_uniform_int: reject the top of the range
                k = raw[at] // scale
                at += 1
                if k < n:
                    break
            st += p_tok[k]
            sm += p_ms[k]
        rates.append(st / (sm / 1000.0) if sm > 0 else 0.0)
    rates.sort()
    return quantile_sorted(rates, 0.025), quantile_sorted(rates, 0.975)


SCRIPT = """local fs = flashspec
local traces = {}
for _, n in ipairs { %s } do traces[#traces + 1] = fs.trace("traces/data/" .. n .. ".h5") end
local function sweep()
  return fs.sweep { device = fs.device "%s", target = fs.model "%s",
    draft = fs.model "%s", trace = traces, max_new_tokens = %d,
    policy = { fs.policy.flash_ar {}, fs.policy.chain { k = %d } } }
end
sweep() -- the first pass reads every prompt into the trace cache
for _, r in ipairs(sweep()) do
  print("row", r.trace, r.policy, r.cycles, r.tokens, string.format("%%.17g", r.ms_per_token),
        r.sim_wall_s, r.point_id, string.format("%%.17g %%.17g %%.17g", r.tokens_per_s,
        r.tokens_per_s_lo, r.tokens_per_s_hi))
end
""" % (", ".join(f'"{t}"' for t in TRACES), DEVICE, TARGET, DRAFT, MAX_NEW, K)


def main():
    traces = {t: Trace(os.path.join(HOME, "traces", "data", t + ".h5")) for t in TRACES}
    dev, tgt, dft = profile("devices", DEVICE), profile("models", TARGET), profile("models", DRAFT)
    c_wall, py_wall = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "peer.lua")
        with open(script, "w") as f:
            f.write(SCRIPT)
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
                c_wall.setdefault(key, []).append(float(f[6]))
                t0 = time.perf_counter()
                phone = Phone(dev, tgt, dft)
                cycles, tokens, total_ms, p_tok, p_ms = replay(traces[f[1]], f[2], phone)
                tps = tokens / (total_ms / 1000.0)
                lo, hi = bootstrap(p_tok, p_ms, replay_seed(f[7]), tps)
                py_wall.setdefault(key, []).append(time.perf_counter() - t0)
                ms_tok = total_ms / tokens
                peer = (cycles, tokens, ms_tok, tps, lo, hi)
                ours = (int(f[3]), int(f[4]), float(f[5]), float(f[8]), float(f[9]), float(f[10]))
                if peer != ours:
                    sys.exit(f"bench: {key}: the peer gives cycles, tokens, ms per token, tokens/s "
                             f"and its interval {peer!r}, flashspec {ours!r}")
    print(f"Peer replay (Python, numpy + h5py, phone model included) against flashspec,")
    print(f"{REPEAT} interleaved rounds; cycles, tokens, ms per token, tokens/s and its bootstrap")
    print("interval agree exactly on every point.  Replay loop time per point, median [min, max]:")
    ratios = {"flash_ar": [], "chain": []}
    for key in c_wall:
        c, py = statistics.median(c_wall[key]), statistics.median(py_wall[key])
        r = [b / a for a, b in zip(c_wall[key], py_wall[key])]
        ratios[key[1]].append(py / c)
        print(f"  {key[0]:<26} {key[1]:<9} flashspec {c * 1e3:7.3f} ms "
              f"[{min(c_wall[key]) * 1e3:.3f}, {max(c_wall[key]) * 1e3:.3f}]   "
              f"peer {py * 1e3:8.2f} ms   peer / flashspec {py / c:6.1f} "
              f"[{min(r):.1f}, {max(r):.1f}]")
    for pol, r in ratios.items():
        print(f"  {pol}: peer / flashspec time {statistics.median(r):.1f} (median over traces; "
              f"min {min(r):.1f}, max {max(r):.1f})")


if __name__ == "__main__":
    main()
