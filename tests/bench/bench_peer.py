#!/usr/bin/python3
"""Benchmark against a peer: a straightforward Python replay (Debian's numpy
and h5py) of Flash-AR and Chain-SD (k = 8) over the bundled workload traces,
phone model included, next to flashspec's replay of the same points (meson
benchmark; it checks agreement, and reports speed without asserting it).

The peer does the same work as flashspec's replay loop, written the plain
way: it reads the traces with h5py, then walks every prompt cycle by cycle.
  - Profiles: the peer asks flashspec once for the resolved values of the
    device (with its standing variants) and of the two models -- a one-token
    point into a scratch directory, whose run.json lists every key as
    flashspec resolved it (bases, variants, defaults) -- and reads that file.
    It does not parse the Lua profiles itself.
  - Flash-AR emits one token per cycle; Chain-SD drafts the draft's top-1
    token n = min(k, tokens left - 1) times, one draft call per token; the
    target accepts the longest prefix that matches the reference tokens (its
    own choices, recorded in every tree); the cycle emits the accepted tokens
    plus one.
  - Every cycle is priced on the phone model with flashspec's arithmetic
    (sim/hw): each draft call on the CPU (weights plus KV over its context
    from DRAM, or its FLOPs), then the verification of the chain's rows: the
    tree set-up on the CPU (its parts: a constant, per streamed and per
    resident GB, per streamed op, per tree graph, per row, a KV snapshot
    over the context; paid by a tree of 2+ rows, and by a one-row tree with
    verify_setup_one_row, never by a plain decode step),
    the target's layers streamed from flash and run on the NPU in padded
    graphs (at least verify_min_rows rows from 2 rows on), and the LM head
    -- the walk sim/hw/sim_hw.h describes (nothing pinned: read of op i issued
    when the compute of op i - 1 - prefetch ends, the first ones when the
    verification starts or, with read_during_draft, when the cycle does;
    FIFO reads, serial compute), on an
    integer nanosecond clock rounded the same way.  Like flashspec, the peer
    derives the per-phone constants once per point (read times of a layer
    and of the head, what a verification streams, the tree set-up) and
    computes each cycle's step times from them; with prefetch 0 the walk's
    end is the same closed form flashspec uses.  flashspec keeps no table of
    verification costs by shape for these policies (rp_profile.c's profile cache
    serves policies that calibrate, which these two do not), so neither
    does the peer.
  - On a phone whose runtime verifies on the CPU (verify_unit = cpu:
    CPU_DEVICE, the llama.cpp runtime) the layers and the head are one
    batched CPU pass over the rows -- max(weights and KV / cpu_gbps, rows x
    FLOPs / cpu_gflops) / cpu_efficiency, no padding, no smallest graph, no
    launch or sync -- and the same points are checked on it (one flashspec
    run, not timed).
  - A point is walked once and each cycle priced on the device and on each
    of its standing variants, as flashspec replays a row of a policy whose
    trees do not depend on the phone (tokens_per_s_model_lo / _hi: the least
    and most tokens/s over them); the device's replay ends, as flashspec's
    does, with the 95% bootstrap interval of the tokens per second over
    prompts: 1,000 resamples drawn with GSL's MT19937 seeded as flashspec
    seeds it (the point's replay seed from its point_id, a hash of the point
    that the peer takes from flashspec's rows -- the peer process gets the
    ids on its command line; numpy's MT19937 in the state gsl_rng_set leaves, and
    gsl_rng_uniform_int's rejection rule), summed in order, and GSL's
    quantile rule.
Its cycles, tokens, milliseconds per token, tokens per second, interval and
model band must equal flashspec's point for point (the floating-point values
exactly: the same operations in the same order); the benchmark exits
non-zero when they do not.

Reported:
  - the replay loop's time per point in both -- flashspec's sim_wall_s (set-up
    of the phone model and policy, the device's variants and every interval
    included) after a first pass that reads the traces into memory, and the
    peer's replay of the same (the trace already in Python lists, the profiles
    already read) -- medians over REPEAT interleaved rounds, and the ratio
    peer / flashspec;
  - the whole process: wall time of a fresh `flashspec run -j 1` that runs
    every point once (reading the traces once), against a fresh peer process
    that starts Python, imports numpy and h5py, reads the traces, resolves
    the profiles (its one flashspec call, timed apart too) and replays every
    point -- PROCESS_REPEAT interleaved rounds, median [min, max] of the
    ratio peer / flashspec.
"""
import json
import math
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
POLICIES = ["flash_ar", "chain"]
DEVICE, TARGET, DRAFT = "oneplus12", "qwen3-8b-q4_0", "qwen3-8b-eagle3-q4_0"
# a phone whose runtime verifies on the CPU (runtime/llamacpp-cpu): checked for
# agreement point for point too (one flashspec run), not timed
CPU_DEVICE = "xiaomi10"
MAX_NEW = 128
K = 8
REPEAT = 5
PROCESS_REPEAT = 9
BOOTSTRAP = 1000
CONFIG_TRACE = "synth-small"  # the smallest bundled trace, for the profile query

PROFILE_SCRIPT = """local fs = flashspec
fs.run { device = fs.device "%s", target = fs.model "%s", draft = fs.model "%s",
  trace = fs.trace "traces/data/%s.h5", prompts = 1, max_new_tokens = 1,
  policy = fs.policy.chain { k = 1 } }
"""


def resolved_profiles(tmp, device=DEVICE):
    """The device (its values and its standing variants', in flashspec's
    order), target and draft as flashspec resolves them: one flashspec call
    on a one-token point, then its run.json."""
    script = os.path.join(tmp, "profiles.lua")
    with open(script, "w") as f:
        f.write(PROFILE_SCRIPT % (device, TARGET, DRAFT, CONFIG_TRACE))
    out = os.path.join(tmp, "profiles-" + device)
    p = subprocess.run([BIN, "run", "-q", "-j", "1", "--no-resume", script, "-o", out],
                       cwd=HOME, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"peer: flashspec could not resolve the profiles ({p.returncode}): {p.stderr}")
    with open(os.path.join(out, "run.json")) as f:
        run = json.load(f)
    dev = run["devices"][0]
    models = {m["name"]: m["values"] for m in run["models"]}
    devices = [dev["values"]] + [v["values"] for v in dev["variants"]]
    return devices, models[TARGET], models[DRAFT]


def llround(x):
    """C's llround for x >= 0: halves away from zero."""
    r = math.floor(x)
    return int(r) + (1 if x - r >= 0.5 else 0)


class Phone:
    """The phone model's costs for one device, target and draft, all target
    layers streamed (dram_fraction 0), without thermal throttling."""

    def __init__(self, dev, tgt, dft):
        if dev["thermal"] and dev["thermal_throttle"] > 0:
            sys.exit("peer: the device enables thermal throttling; not modelled")
        self.d, self.t, self.e = dev, tgt, dft
        # the runtime that verifies on the CPU (verify_unit = cpu, sim_hw.h "Two
        # runtimes"): layers and head in one batched CPU pass, no padding
        self.cpu = dev.get("verify_unit", "npu") == "cpu"
        self.L = tgt["layers"]
        # DRAM residency at dram_fraction 0: no layer pinned; the head is in
        # DRAM when tied to the embeddings or kept there by the runtime
        # (head_resident; sim_hw_memory.c)
        self.head_resident = bool(tgt["tied_embeddings"]) or bool(dev["head_resident"])
        self.layer_bytes = self.bytes_of(tgt, self.layer_params(tgt))
        self.head_bytes = self.bytes_of(tgt, float(tgt["vocab"]) * tgt["hidden"])
        self.kv_layer_bytes = 2.0 * tgt["kv_heads"] * tgt["head_dim"] * tgt["kv_bits"] / 8.0
        self.layer_flops = 2.0 * self.layer_params(tgt)
        self.head_flops = 2.0 * tgt["vocab"] * tgt["hidden"]
        self.attn_flops = 4.0 * tgt["heads"] * tgt["head_dim"]
        # each runtime's reads: 0 the device's, 1 its spec_* alternative
        self.read_ns, self.stream_ns = [], []
        for queue in (dev["queue_depth"], dev["spec_queue_depth"]):
            lr = llround(self.flash_ms(self.layer_bytes, queue) * 1e6)
            hr = llround(self.flash_ms(self.head_bytes, queue) * 1e6)
            self.read_ns.append((lr, hr))
            self.stream_ns.append(self.L * lr + (0 if self.head_resident else hr))
        self.prefetch = (dev["prefetch_layers"], dev["spec_prefetch_layers"])
        # the tree set-up, by part (sim_hw_tree_setup_ms)
        streamed = self.L * self.layer_bytes + (0.0 if self.head_resident else self.head_bytes)
        resident = 0.0 + (self.head_bytes if self.head_resident else 0.0)
        self.tree_setup_ms = (dev["verify_setup_us"] * 1e-3
                              + streamed * 1e-9 * dev["verify_setup_streamed_us_per_gb"] * 1e-3
                              + resident * 1e-9 * dev["verify_setup_resident_us_per_gb"] * 1e-3
                              + (self.L + (not self.head_resident)) * dev["verify_setup_layer_us"]
                              * 1e-3
                              + (self.L + 1) * dev["verify_graph_us"] * 1e-3)
        self.kv_token_bytes = self.L * self.kv_layer_bytes
        e = dft
        self.d_bytes = (e["layers"] * self.bytes_of(e, self.layer_params(e))
                        + self.bytes_of(e, float(e["fusion_in"]) * e["hidden"] * e["hidden"])
                        + self.bytes_of(e, float(e["vocab"]) * e["hidden"]))
        self.d_flops = 2.0 * (e["layers"] * self.layer_params(e)
                              + float(e["fusion_in"]) * e["hidden"] * e["hidden"]
                              + float(e["vocab"]) * e["hidden"])
        self.d_kv_bytes = e["layers"] * (2.0 * e["kv_heads"] * e["head_dim"] * e["kv_bits"] / 8.0)
        self.d_attn = 4.0 * e["layers"] * e["heads"] * e["head_dim"]

    @staticmethod
    def bytes_of(m, params):
        return params * m["weight_bits"] / 8.0

    @staticmethod
    def layer_params(m):
        h, a = float(m["hidden"]), float(m["attn_in_mult"])
        qd, kvd = float(m["heads"]) * m["head_dim"], float(m["kv_heads"]) * m["head_dim"]
        return a * h * qd + 2.0 * a * h * kvd + qd * h + 3.0 * h * m["ffn"]

    def flash_ms(self, nbytes, queue):
        d = self.d
        requests = math.ceil(nbytes / (d["request_kb"] * 1024.0))
        return (nbytes / (d["read_gbps"] * 1e6)
                + requests * d["request_latency_us"] * 1e-3 / max(queue, 1)) / self.t[
                    "flash_efficiency"]

    def pad(self, rows):
        shapes = self.d["npu_shapes"]
        smax = shapes[-1]
        if rows > smax:
            return smax, (rows + smax - 1) // smax
        for s in shapes:
            if s >= rows:
                return s, 1
        return smax, 1

    def npu_ms(self, rows, nbytes, flops, eff):
        d = self.d
        p, execs = self.pad(rows)
        mem = nbytes / (d["npu_gbps"] * 1e6)
        comp = p * flops / (d["npu_gflops"] * 1e6)
        return execs * ((d["launch_us"] + d["sync_us"]) * 1e-3 + max(mem, comp)) / eff

    def cpu_ms(self, rows, nbytes, flops, eff):
        d = self.d
        return max(nbytes / (d["cpu_gbps"] * 1e6), rows * flops / (d["cpu_gflops"] * 1e6)) / eff

    def graph_rows(self, rows):
        if self.cpu:
            return rows
        vmin = self.d["verify_min_rows"]
        return vmin if 2 <= rows < vmin else rows

    def draft_call_ns(self, ctx):
        """One draft forward of one row on the CPU over ctx tokens."""
        d = self.d
        nbytes = self.d_bytes + ctx * self.d_kv_bytes
        flops = self.d_flops + self.d_attn * (ctx + 1)
        ms = max(nbytes / (d["cpu_gbps"] * 1e6), flops / (d["cpu_gflops"] * 1e6)) / self.e[
            "cpu_efficiency"]
        return llround(ms * 1e6)

    def verify_ns(self, rows, ctx, decode, drafted_ns=0):
        """The verification of a chain of `rows` rows (root included), one
        leaf; decode: a plain decode step (nothing drafted); drafted_ns: how
        long the cycle drafted before it (the loader may read meanwhile)."""
        g = self.graph_rows(rows)
        if self.cpu:  # one batched pass over the rows on the CPU
            eff = self.t["cpu_efficiency"]
            layer = llround(self.cpu_ms(g, self.layer_bytes + ctx * self.kv_layer_bytes,
                                        self.layer_flops + self.attn_flops * (ctx + g), eff) * 1e6)
            head = llround(self.cpu_ms(g, self.head_bytes, self.head_flops, eff) * 1e6)
        else:
            p, execs = self.pad(g)
            eff = self.t["npu_efficiency"]
            layer = llround(self.npu_ms(g, self.layer_bytes + ctx * self.kv_layer_bytes,
                                        self.layer_flops + self.attn_flops * (ctx + p * execs),
                                        eff) * 1e6)
            head = llround(self.npu_ms(g, self.head_bytes, self.head_flops, eff) * 1e6)
        tree = rows >= 2 or (self.d["verify_setup_one_row"] and not decode)
        setup = 0.0
        if tree:  # sim_hw_setup_ms: the tree set-up, per row, the KV snapshot
            setup = self.tree_setup_ms + rows * self.d["verify_row_us"] * 1e-3
            if self.d["verify_kv_snapshot"]:
                setup += 2.0 * ctx * self.kv_token_bytes / (self.d["cpu_gbps"] * 1e6)
        kv = llround(setup * 1e6)
        t_read = -drafted_ns if self.d["read_during_draft"] else 0
        rt = 1 if self.d["verify_overlap"] and not decode else 0
        lr, hr = self.read_ns[rt]
        prefetch = self.prefetch[rt]
        if prefetch == 0:
            # read, compute, read, ...: layer 0 starts once its read (from
            # t_read) and the set-up are done, every later op when the one
            # before ends plus its read
            return max(t_read + lr, kv) + (self.stream_ns[rt] - lr) + self.L * layer + head
        end = []
        flash_free, prev = t_read, 0
        for i in range(self.L + 1):
            is_head = i == self.L
            issue = t_read if i <= prefetch else end[i - 1 - prefetch]
            ready = issue
            if not (is_head and self.head_resident):
                flash_free = max(flash_free, issue) + (hr if is_head else lr)
                ready = flash_free
            prev = max(ready, prev, kv) + (head if is_head else layer)
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


def replay(tr, policy, phones):
    """Cycles and tokens of one point, and per phone its milliseconds in all
    and its tokens and milliseconds per prompt: the point is walked once and
    each cycle priced on every phone (the trees and tokens of these policies
    do not depend on the phone)."""
    cycles = tokens = 0
    total_ms = [0.0] * len(phones)
    p_tok, p_ms = [], [[] for _ in phones]
    for p in range(len(tr.ref_off) - 1):
        p_tok.append(0)
        for m in p_ms:
            m.append(0.0)
        plen = tr.prompt_off[p + 1] - tr.prompt_off[p]
        r0 = tr.ref_off[p]
        gen = min(tr.ref_off[p + 1] - r0, MAX_NEW)
        pos = 0
        while pos < gen:
            n = 0
            if policy == "flash_ar":
                emitted = 1
            else:
                t = r0 + pos
                b, e = tr.node_off[t], tr.node_off[t + 1]
                n = max(min(K, gen - pos - 1), 0)
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
            for i, phone in enumerate(phones):
                draft_ns = 0
                for depth in range(n):  # one call per drafted token
                    draft_ns += phone.draft_call_ns(plen + pos + depth + 1)
                cycle_ms = (draft_ns + phone.verify_ns(n + 1, plen + pos, n == 0, draft_ns)) * 1e-6
                total_ms[i] += cycle_ms
                p_ms[i][-1] += cycle_ms
            p_tok[-1] += emitted
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
        return float(x[lhs])
    return float((1 - delta) * x[lhs] + delta * x[lhs + 1])


def bootstrap(p_tok, p_ms, seed, point):
    """The 95% percentile-bootstrap interval of sum(tokens) / sum(s) over
    prompts, as flashspec draws it; (point, point) below two prompts."""
    n = len(p_tok)
    if n < 2:
        return point, point
    bg = gsl_mt19937((seed ^ 0xB0075A3B1E5) & 0xFFFFFFFFFFFFFFFF)
    # gsl_rng_uniform_int: k = draw // (0xFFFFFFFF // n), drawn again while k >= n
    need, scale, idx = BOOTSTRAP * n, 0xFFFFFFFF // n, np.empty(0, dtype=np.uint64)
    while len(idx) < need:
        k = bg.random_raw(need - len(idx)) // scale
        idx = np.concatenate([idx, k[k < n]])
    idx = idx.astype(np.intp).reshape(BOOTSTRAP, n)
    # cumsum adds left to right, as flashspec's loop does (sum() would not)
    st = np.cumsum(np.array(p_tok, dtype=np.float64)[idx], axis=1)[:, -1]
    sm = np.cumsum(np.array(p_ms)[idx], axis=1)[:, -1]
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.where(sm > 0, st / (sm / 1000.0), 0.0)
    rates.sort()
    return quantile_sorted(rates, 0.025), quantile_sorted(rates, 0.975)


def peer_point(tr, policy, devices, tgt, dft, point_id):
    """A point as flashspec replays a row of these policies: walked once,
    priced on the device and on each of its standing variants, with the
    device's interval.  Returns cycles, tokens, ms per token, tokens/s, its
    interval, and the least and most tokens/s over the device and its
    variants (nan, nan without variants)."""
    phones = [Phone(dev, tgt, dft) for dev in devices]
    cycles, tokens, total_ms, p_tok, p_ms = replay(tr, policy, phones)
    band = [tokens / (ms / 1000.0) for ms in total_ms]
    tps = band[0]
    lo, hi = bootstrap(p_tok, p_ms[0], replay_seed(point_id), tps)
    model = (min(band), max(band)) if len(phones) > 1 else (math.nan, math.nan)
    return (cycles, tokens, total_ms[0] / tokens, tps, lo, hi) + model


FIELDS = "cycles, tokens, ms per token, tokens/s, its interval (lo, hi) and model band (lo, hi)"


def same(a, b):
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


def flashspec_script(passes, device=DEVICE):
    """A sweep of every point; passes = 2 reads the traces in a first pass and
    prints the second's rows."""
    return """local fs = flashspec
local traces = {}
for _, n in ipairs { %s } do traces[#traces + 1] = fs.trace("traces/data/" .. n .. ".h5") end
local function sweep()
  return fs.sweep { device = fs.device "%s", target = fs.model "%s",
    draft = fs.model "%s", trace = traces, max_new_tokens = %d,
    policy = { fs.policy.flash_ar {}, fs.policy.chain { k = %d } } }
end
%sfor _, r in ipairs(sweep()) do
  print("row", r.trace, r.policy, r.point_id, r.sim_wall_s, r.cycles, r.tokens,
        string.format("%%.17g %%.17g %%.17g %%.17g %%.17g %%.17g", r.ms_per_token, r.tokens_per_s,
        r.tokens_per_s_lo, r.tokens_per_s_hi, r.tokens_per_s_model_lo, r.tokens_per_s_model_hi))
end
""" % (", ".join(f'"{t}"' for t in TRACES), device, TARGET, DRAFT, MAX_NEW, K,
       "sweep() -- the first pass reads every prompt into the trace cache\n" if passes == 2
       else "")


def run_flashspec(script, out):
    """One flashspec process: {(trace, policy): (point_id, sim_wall_s, values)}."""
    p = subprocess.run([BIN, "run", "-q", "-j", "1", "--no-resume", script, "-o", out], cwd=HOME,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"bench: flashspec failed ({p.returncode}): {p.stderr}")
    rows = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if f[:1] == ["row"]:
            rows[(f[1], f[2])] = (f[3], float(f[4]),
                                  (int(f[5]), int(f[6])) + tuple(float(x) for x in f[7:13]))
    if len(rows) != len(TRACES) * len(POLICIES):
        sys.exit(f"bench: flashspec printed {len(rows)} rows: {p.stdout}")
    return rows


def peer_process(ids):
    """The whole peer as one process (`bench_peer.py --peer TRACE:POLICY=ID ...`):
    traces, profiles, every point; one JSON line per point on stdout."""
    t0 = time.perf_counter()
    traces = {t: Trace(os.path.join(HOME, "traces", "data", t + ".h5")) for t in TRACES}
    with tempfile.TemporaryDirectory() as tmp:
        t1 = time.perf_counter()
        devices, tgt, dft = resolved_profiles(tmp)
        t2 = time.perf_counter()
    for arg in ids:
        key, point_id = arg.split("=")
        trace, policy = key.split(":")
        values = peer_point(traces[trace], policy, devices, tgt, dft, point_id)
        print(json.dumps({"trace": trace, "policy": policy, "values": [repr(v) for v in values]}))
    print(json.dumps({"profiles_s": t2 - t1, "traces_s": t1 - t0}))


def main():
    traces = {t: Trace(os.path.join(HOME, "traces", "data", t + ".h5")) for t in TRACES}
    c_wall, py_wall, ref, ids = {}, {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        devices, tgt, dft = resolved_profiles(tmp)
        loop_script = os.path.join(tmp, "loop.lua")
        with open(loop_script, "w") as f:
            f.write(flashspec_script(2))
        one_script = os.path.join(tmp, "once.lua")
        with open(one_script, "w") as f:
            f.write(flashspec_script(1))

        # the replay loops, interleaved: a flashspec run, then the peer's points
        for i in range(REPEAT):
            for key, (point_id, wall, ours) in run_flashspec(loop_script,
                                                             os.path.join(tmp, f"r{i}")).items():
                c_wall.setdefault(key, []).append(wall)
                t0 = time.perf_counter()
                peer = peer_point(traces[key[0]], key[1], devices, tgt, dft, point_id)
                py_wall.setdefault(key, []).append(time.perf_counter() - t0)
                if not same(peer, ours):
                    sys.exit(f"bench: {key}: the peer gives {FIELDS} {peer!r}, "
                             f"flashspec {ours!r}")
                if ref.setdefault(key, ours) != ours and not same(ref[key], ours):
                    sys.exit(f"bench: {key}: flashspec changed its result between runs")
                ids[key] = point_id

        # whole processes, interleaved: flashspec run once, the peer process
        argv = [sys.executable, os.path.abspath(__file__), "--peer"] + [
            f"{t}:{p}={ids[(t, p)]}" for (t, p) in ids]
        c_proc, py_proc, prof_s = [], [], []
        for i in range(PROCESS_REPEAT):
            t0 = time.perf_counter()
            rows = run_flashspec(one_script, os.path.join(tmp, f"w{i}"))
            c_proc.append(time.perf_counter() - t0)
            for key, (_, _, ours) in rows.items():
                if not same(ref[key], ours):
                    sys.exit(f"bench: {key}: flashspec's single pass gives {ours!r}, "
                             f"its loop runs {ref[key]!r}")
            t0 = time.perf_counter()
            p = subprocess.run(argv, cwd=HOME, capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, FLASHSPEC_BIN=BIN, FLASHSPEC_HOME=HOME))
            py_proc.append(time.perf_counter() - t0)
            if p.returncode != 0:
                sys.exit(f"bench: the peer process failed ({p.returncode}): {p.stderr}")
            got = 0
            for line in p.stdout.splitlines():
                r = json.loads(line)
                if "profiles_s" in r:
                    prof_s.append(r["profiles_s"])
                    continue
                key, peer = (r["trace"], r["policy"]), tuple(float(v) for v in r["values"])
                peer = (int(peer[0]), int(peer[1])) + peer[2:]
                if not same(peer, ref[key]):
                    sys.exit(f"bench: {key}: the peer process gives {FIELDS} {peer!r}, "
                             f"flashspec {ref[key]!r}")
                got += 1
            if got != len(ref):
                sys.exit(f"bench: the peer process gave {got} of {len(ref)} points")

        # the CPU runtime: the same points on a phone that verifies on the CPU
        cpu_devices, _, _ = resolved_profiles(tmp, CPU_DEVICE)
        if cpu_devices[0].get("verify_unit") != "cpu":
            sys.exit(f"bench: {CPU_DEVICE} does not verify on the CPU")
        cpu_script = os.path.join(tmp, "cpu.lua")
        with open(cpu_script, "w") as f:
            f.write(flashspec_script(1, CPU_DEVICE))
        for key, (point_id, _, ours) in run_flashspec(cpu_script, os.path.join(tmp, "cpu")).items():
            peer = peer_point(traces[key[0]], key[1], cpu_devices, tgt, dft, point_id)
            if not same(peer, ours):
                sys.exit(f"bench: {CPU_DEVICE} {key}: the peer gives {FIELDS} {peer!r}, "
                         f"flashspec {ours!r}")
            if ours == ref[key]:
                sys.exit(f"bench: {CPU_DEVICE} {key}: the same numbers as {DEVICE}")

    n_var = len(devices) - 1
    print(f"On {CPU_DEVICE} (the runtime that verifies on the CPU, {len(cpu_devices) - 1} "
          f"standing variants): {len(ref)} points agree exactly too.")
    print("Peer replay (Python, numpy + h5py, phone model included) against flashspec "
          f"({DEVICE}: the device and its {n_var} standing variants per point).")
    print("Cycles, tokens, ms per token, tokens/s, its bootstrap interval and the model band "
          "agree exactly on every point.")
    print(f"Replay loop time per point, median [min, max] over {REPEAT} interleaved rounds:")
    ratios = {p: [] for p in POLICIES}
    for key in c_wall:
        c, py = statistics.median(c_wall[key]), statistics.median(py_wall[key])
        r = [b / a for a, b in zip(c_wall[key], py_wall[key])]
        ratios[key[1]].append(statistics.median(r))
        print(f"  {key[0]:<26} {key[1]:<9} flashspec {c * 1e3:7.3f} ms "
              f"[{min(c_wall[key]) * 1e3:.3f}, {max(c_wall[key]) * 1e3:.3f}]   "
              f"peer {py * 1e3:8.2f} ms   peer / flashspec {statistics.median(r):6.1f} "
              f"[{min(r):.1f}, {max(r):.1f}]")
    for pol, r in ratios.items():
        print(f"  replay loop, {pol}: peer / flashspec {statistics.median(r):.1f} "
              f"(median over traces; min {min(r):.1f}, max {max(r):.1f})")
    r = [b / a for a, b in zip(c_proc, py_proc)]
    print(f"Whole process, every point once, median [min, max] over {PROCESS_REPEAT} "
          "interleaved rounds:")
    print(f"  flashspec run -j 1 {statistics.median(c_proc) * 1e3:7.1f} ms "
          f"[{min(c_proc) * 1e3:.1f}, {max(c_proc) * 1e3:.1f}]   peer process "
          f"{statistics.median(py_proc) * 1e3:7.1f} ms [{min(py_proc) * 1e3:.1f}, "
          f"{max(py_proc) * 1e3:.1f}] (of which its flashspec call for the profiles "
          f"{statistics.median(prof_s) * 1e3:.1f} ms)")
    print(f"  whole process: peer / flashspec {statistics.median(r):.2f} "
          f"[{min(r):.2f}, {max(r):.2f}]")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--peer"]:
        peer_process(sys.argv[2:])
    else:
        main()
