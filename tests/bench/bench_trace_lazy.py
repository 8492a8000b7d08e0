#!/usr/bin/python3
"""Benchmark of traces read prompt by prompt (meson benchmark, not a test).

Writes a synthetic trace with `flashspec trace synth` (which stores the index
that lets it open without its nodes) and an index-free copy of it (h5py),
which flashspec loads whole.  Then, interleaved (indexed, whole, indexed,
whole, ...) REPEAT times:

  - a one-prompt, 8-token point (`flashspec run`): process wall time and peak
    RSS (the time a point takes to start on a large trace), beside the same
    point on the smallest bundled trace (what a process costs anyway);
  - a sweep of one point per prompt over every prompt (chain k=4, 16 tokens,
    -j 2): wall time and peak RSS, with the default prompt cache (512 MiB)
    and with --trace-cache-mb 64.

Prints medians with min and max, and the whole/indexed ratios (median of the
per-round ratios).  Sizes: FLASHSPEC_BENCH_PROMPTS prompts of 1,000 reference
tokens with trees of up to 32 nodes (default 64: a trace of about 220 MB);
FLASHSPEC_BENCH_SKIP_WHOLE=1 skips the loaded-whole runs and writes the trace
with `trace synth --by-prompt` (for traces larger than memory, e.g. 1,500
prompts: about 5 GB).  FLASHSPEC_BENCH_DIR: where the
files go (default $TMPDIR or /tmp), removed afterwards.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec"))
HOME = os.environ.get("FLASHSPEC_HOME", ".")
PROMPTS = int(os.environ.get("FLASHSPEC_BENCH_PROMPTS", "64"))
SKIP_WHOLE = os.environ.get("FLASHSPEC_BENCH_SKIP_WHOLE", "0") == "1"
REPEAT = 5

ONE = """local fs = flashspec
fs.run { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = fs.trace "t.h5",
  policy = fs.policy.chain { k = 4 }, prompts = 1, prompt_offset = %d, max_new_tokens = 8 }
"""

ALL = """local fs = flashspec
local pts = {}
for p = 0, %d do pts[#pts + 1] = { prompt_offset = p } end
fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = fs.trace "t.h5",
  policy = fs.policy.chain { k = 4 }, prompts = 1, max_new_tokens = 16, points = pts }
"""


def hwm_mib(pid):
    """The process's peak resident set so far (VmHWM), MiB; None once gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def run(cmd, cwd):
    """(wall seconds, peak RSS in MiB) of one process.  The peak is the
    process's own high-water mark, sampled every 2 ms until it exits (the
    rusage of a child started from this Python process would carry the
    parent's peak across exec)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0.0
    while p.poll() is None:
        h = hwm_mib(p.pid)
        if h is not None:
            peak = max(peak, h)
        time.sleep(0.002)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} in {cwd} failed ({p.returncode}): {err}")
    return wall, peak


def med(xs):
    return f"{statistics.median(xs):.3f} [{min(xs):.3f}, {max(xs):.3f}]"


def main():
    base = os.environ.get("FLASHSPEC_BENCH_DIR") or os.environ.get("TMPDIR") or "/tmp"
    tmp = tempfile.mkdtemp(prefix="bench-lazy-", dir=base)
    try:
        lazy, whole = os.path.join(tmp, "lazy"), os.path.join(tmp, "whole")
        os.makedirs(lazy)
        os.makedirs(whole)
        t0 = time.perf_counter()
        # a trace larger than memory is written prompt by prompt as well
        by_prompt = ["--by-prompt"] if SKIP_WHOLE else []
        p = subprocess.run([BIN, "trace", "synth", "-o", os.path.join(lazy, "t.h5"), "--prompts",
                            str(PROMPTS), "--output-len", "1000", "--seed", "5"] + by_prompt,
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bench: trace synth failed: {p.stderr}")
        size = os.path.getsize(os.path.join(lazy, "t.h5"))
        print(f"trace: {PROMPTS} prompts x 1000 tokens, {size / 1e6:.0f} MB "
              f"(written in {time.perf_counter() - t0:.1f} s{', by prompt' if SKIP_WHOLE else ''})")
        dirs = [("indexed", lazy)]
        if not SKIP_WHOLE:
            import h5py
            with h5py.File(os.path.join(lazy, "t.h5"), "r") as f, \
                    h5py.File(os.path.join(whole, "t.h5"), "w") as g:
                for k, v in f.attrs.items():
                    g.attrs[k] = v
                for grp in ("prompts", "reference", "trees", "nodes"):
                    for ds in f[grp]:
                        src = f[f"{grp}/{ds}"]
                        g.create_dataset(f"{grp}/{ds}", data=src[()], chunks=src.chunks,
                                         compression="gzip", compression_opts=4, shuffle=True)
            dirs.append(("whole", whole))
        tiny = os.path.join(tmp, "tiny")
        os.makedirs(tiny)
        shutil.copy(os.path.join(HOME, "traces", "data", "synth-small.h5"),
                    os.path.join(tiny, "t.h5"))
        open(os.path.join(tiny, "one.lua"), "w").write(ONE % 0)
        for _, d in dirs:
            open(os.path.join(d, "one.lua"), "w").write(ONE % (PROMPTS // 2))
            open(os.path.join(d, "all.lua"), "w").write(ALL % (PROMPTS - 1))
        # (label, directory, extra options of the sweep)
        sweeps = [("indexed", lazy, []), ("indexed, cache 64 MiB", lazy,
                                          ["--trace-cache-mb", "64"])]
        if not SKIP_WHOLE:
            sweeps.append(("whole", whole, []))
        ones = [("small bundled trace", tiny)] + [(tag, d) for tag, d in dirs]
        res = {}
        for i in range(REPEAT + 1):  # round 0 warms the page cache
            for tag, d in ones:
                w, r = run([BIN, "run", "one.lua", "-q"], d)
                if i:
                    res.setdefault(("one", tag), []).append((w, r))
            for tag, d, extra in sweeps:
                w, r = run([BIN, "sweep", "all.lua", "-q", "-j", "2", "--no-resume", "-o",
                            os.path.join(d, "out"), *extra], d)
                if i:
                    res.setdefault(("all", tag), []).append((w, r))
        print(f"median [min, max] of {REPEAT} interleaved rounds")
        for tag, _ in ones:
            x = res[("one", tag)]
            print(f"one-prompt 8-token point, {tag}: {med([a for a, _ in x])} s, "
                  f"peak RSS {med([b for _, b in x])} MiB")
        for tag, _, _ in sweeps:
            x = res[("all", tag)]
            print(f"sweep of {PROMPTS} one-prompt points (-j 2), {tag}: "
                  f"{med([a for a, _ in x])} s, peak RSS {med([b for _, b in x])} MiB")
        if not SKIP_WHOLE:
            for kind, tag, label in (("one", "indexed", "one-prompt point"),
                                     ("all", "indexed", "sweep")):
                a, b = res[(kind, "whole")], res[(kind, tag)]
                print(f"whole / indexed, {label} time: "
                      f"{med([x[0] / y[0] for x, y in zip(a, b)])}, peak RSS: "
                      f"{med([x[1] / y[1] for x, y in zip(a, b)])}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
