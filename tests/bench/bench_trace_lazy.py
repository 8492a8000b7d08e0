#!/usr/bin/python3
"""Benchmark of traces read prompt by prompt (meson benchmark, not a test).

Writes a synthetic trace with `flashspec trace synth` (which stores the index
that lets it open without its nodes) and an index-free copy of it (h5py),
which flashspec loads whole.  Then, interleaved (indexed, whole, indexed,
whole, ...) REPEAT times:

  - a one-prompt, 8-token point (`flashspec run`): process wall time and peak
    RSS (the time a point takes to start on a large trace);
  - a sweep of one point per prompt over every prompt (chain k=4, 16 tokens,
    -j 2) with the default prompt cache: wall time and peak RSS.

Prints medians with min and max, and the whole/indexed ratios (median of the
per-round ratios).  Sizes: FLASHSPEC_BENCH_PROMPTS prompts of 1,000 reference
tokens with trees of up to 32 nodes (default 64: a trace of about 220 MB);
FLASHSPEC_BENCH_SKIP_WHOLE=1 skips the loaded-whole runs (for traces larger
than memory, e.g. 1,500 prompts: about 5 GB).  FLASHSPEC_BENCH_DIR: where the
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


def run(cmd, cwd):
    """(wall seconds, peak RSS in MiB) of one process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} in {cwd} failed ({p.returncode}): {err}")
    return wall, ru.ru_maxrss / 1024.0


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
        p = subprocess.run([BIN, "trace", "synth", "-o", os.path.join(lazy, "t.h5"), "--prompts",
                            str(PROMPTS), "--output-len", "1000", "--seed", "5"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bench: trace synth failed: {p.stderr}")
        size = os.path.getsize(os.path.join(lazy, "t.h5"))
        print(f"trace: {PROMPTS} prompts x 1000 tokens, {size / 1e6:.0f} MB "
              f"(written in {time.perf_counter() - t0:.1f} s)")
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
        for _, d in dirs:
            open(os.path.join(d, "one.lua"), "w").write(ONE % (PROMPTS // 2))
            open(os.path.join(d, "all.lua"), "w").write(ALL % (PROMPTS - 1))
        res = {(tag, what): [] for tag, _ in dirs for what in ("one_s", "one_mb", "all_s",
                                                                 "all_mb")}
        for i in range(REPEAT + 1):  # round 0 warms the page cache
            for tag, d in dirs:
                w1, r1 = run([BIN, "run", "one.lua", "-q"], d)
                w2, r2 = run([BIN, "sweep", "all.lua", "-q", "-j", "2", "--no-resume", "-o",
                              os.path.join(d, "out")], d)
                if i == 0:
                    continue
                res[(tag, "one_s")].append(w1)
                res[(tag, "one_mb")].append(r1)
                res[(tag, "all_s")].append(w2)
                res[(tag, "all_mb")].append(r2)
        print(f"median [min, max] of {REPEAT} interleaved rounds")
        for tag, _ in dirs:
            print(f"{tag:8s} one-prompt point: {med(res[(tag, 'one_s')])} s, "
                  f"peak RSS {med(res[(tag, 'one_mb')])} MiB")
            print(f"{tag:8s} sweep of {PROMPTS} points (every prompt, -j 2): "
                  f"{med(res[(tag, 'all_s')])} s, peak RSS {med(res[(tag, 'all_mb')])} MiB")
        if not SKIP_WHOLE:
            for what, label in (("one_s", "one-prompt point time"), ("one_mb", "its RSS"),
                                ("all_s", "sweep time"), ("all_mb", "sweep RSS")):
                r = [w / l for w, l in zip(res[("whole", what)], res[("indexed", what)])]
                print(f"whole / indexed, {label}: {med(r)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
