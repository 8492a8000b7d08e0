#!/usr/bin/python3
"""Hostile traces: a trace must not make the reader touch any other file.

Each case copies a good trace, rewires one dataset or group the way a hostile
file could -- external raw-data storage, a virtual dataset, an external or soft
link -- and checks that `flashspec trace check` refuses it with exit 65 and one
line naming the file and the object, quickly, even when the other file is a
FIFO that would block a reader forever.  A FIFO given as the trace itself is
refused the same way.

usage: test_hostile.py FLASHSPEC GOOD_TRACE.h5
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

FAILS: list[str] = []
DS = "/reference/tokens"


def check(cond: bool, what: str) -> None:
    if not cond:
        FAILS.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def rewrite(src: str, dst: str, edit) -> None:
    shutil.copyfile(src, dst)
    with h5py.File(dst, "r+") as f:
        edit(f)


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, good = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="fs-hostile-")
    try:
        with h5py.File(good, "r") as f:
            tokens = f[DS][()]
        other = os.path.join(tmp, "other.h5")  # a file holding the same data
        with h5py.File(other, "w") as o:
            o.create_dataset("tokens", data=tokens)
            with h5py.File(good, "r") as f:
                f.copy("nodes", o, "nodes")
        raw = os.path.join(tmp, "raw.bin")
        tokens.astype("<i4").tofile(raw)
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)

        def external(path):
            def edit(f):
                del f[DS]
                f.create_dataset(DS, shape=tokens.shape, dtype="<i4",
                                 external=[(path, 0, h5py.h5f.UNLIMITED)])
            return edit

        def virtual(path, name):
            def edit(f):
                del f[DS]
                lay = h5py.VirtualLayout(shape=tokens.shape, dtype=tokens.dtype)
                lay[:] = h5py.VirtualSource(path, name, shape=tokens.shape)
                f.create_virtual_dataset(DS, lay)
            return edit

        def ext_link(obj, path, target):
            def edit(f):
                del f[obj]
                f[obj] = h5py.ExternalLink(path, target)
            return edit

        def soft_link(f):
            del f[DS]
            f[DS] = h5py.SoftLink("/prompts/tokens")

        def virtual_index(path):
            def edit(f):
                n = f["/index/prompt_hash"].shape
                del f["/index/prompt_hash"]
                lay = h5py.VirtualLayout(shape=n, dtype="<u8")
                lay[:] = h5py.VirtualSource(path, "tokens", shape=n)
                f.create_virtual_dataset("/index/prompt_hash", lay)
            return edit

        def soft_index(f):
            del f["/index/checksum"]
            f["/index/checksum"] = h5py.SoftLink("/index/prompt_hash")

        cases = [
            ("external storage", external(raw), "stores its data in external files"),
            ("external storage on a FIFO", external(fifo), "stores its data in external files"),
            ("virtual dataset", virtual(other, "tokens"), "is a virtual dataset"),
            ("virtual dataset over a FIFO", virtual(fifo, "tokens"), "is a virtual dataset"),
            ("external link to a dataset", ext_link(DS, other, "/tokens"),
             "is an external (other-file) link"),
            ("external link to a group", ext_link("/nodes", other, "/nodes"),
             "/nodes: is an external (other-file) link"),
            ("soft link", soft_link, "is a soft link"),
            # the index a trace opens by (traces/README.md, "Index")
            ("external link to the index", ext_link("/index", other, "/nodes"),
             "/index: is an external (other-file) link"),
            ("index hash as a virtual dataset", virtual_index(other), "is a virtual dataset"),
            ("index hash as a soft link", soft_index, "is a soft link"),
        ]
        for i, (what, edit, words) in enumerate(cases):
            path = os.path.join(tmp, f"hostile{i}.h5")
            rewrite(good, path, edit)
            # check reads it whole; info opens it prompt by prompt (the
            # index, the resident part), as a run does
            for verb in ("check", "info"):
                t0 = time.monotonic()
                try:
                    r = subprocess.run([exe, "trace", verb, path], capture_output=True,
                                       text=True, timeout=30)
                except subprocess.TimeoutExpired:
                    check(False, f"{what}: trace {verb} hung (followed the link to a FIFO?)")
                    continue
                dt = time.monotonic() - t0
                lines = r.stderr.strip().splitlines()
                check(r.returncode == 65 and len(lines) == 1 and words in lines[0] and
                      lines[0].startswith(f"flashspec: {path}:") and r.stdout == "",
                      f"{what}: trace {verb}: rc {r.returncode}, stderr {r.stderr!r}")
                check(dt < 10, f"{what}: trace {verb}: {dt:.1f} s")
        # memory bombs: datasets whose declared shapes the file never stored
        def unwritten(name, n=None, chunked=True):
            def edit(f):
                d = f["nodes"][name]
                shape = ((n,) if n else d.shape[:1]) + d.shape[1:]
                dt = d.dtype
                del f["nodes"][name]
                kw = {"chunks": (64,) + shape[1:]} if chunked else {}
                f["nodes"].create_dataset(name, shape=shape, dtype=dt, **kw)
            return edit

        def huge(f):
            # k = 1 and no exit layers keep each dataset under the per-dataset
            # bound: only the file-wide bound (or the missing chunks) stop it
            f.attrs["k"] = np.int32(1)
            f.attrs["exit_layers"] = np.zeros(0, dtype=np.int32)
            n = 1 << 28
            for name in ("parent", "token", "depth", "draft_tok", "draft_logp", "target_tok",
                         "target_logp", "exit_score"):
                d = f["nodes"][name]
                tail = {"exit_score": (0, 1)}.get(name, (1,) if d.ndim == 2 else ())
                del f["nodes"][name]
                nd = f["nodes"].create_dataset(name, shape=(n,) + tail, dtype=d.dtype,
                                               chunks=(1 << 20,) + tail if tail != (0, 1)
                                               else None)
                if nd.size:
                    nd[:16] = 0  # one chunk written, the rest never

        bombs = [
            ("a never-written chunked dataset", unwritten("draft_logp"), "never written"),
            ("a never-written contiguous dataset", unwritten("exit_score", chunked=False),
             "never written"),
            ("2^28 nodes declared, one chunk written", huge, "partly written"),
        ]
        for i, (what, edit, words) in enumerate(bombs):
            path = os.path.join(tmp, f"bomb{i}.h5")
            rewrite(good, path, edit)
            t0 = time.monotonic()
            r = subprocess.run([exe, "trace", "check", path], capture_output=True, text=True,
                               timeout=60)
            dt = time.monotonic() - t0
            rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 65 and len(lines) == 1 and words in lines[0] and
                  lines[0].startswith(f"flashspec: {path}:"),
                  f"{what}: rc {r.returncode}, stderr {r.stderr!r}")
            check(dt < 5, f"{what}: {dt:.1f} s")
            check(rss_mb < 600, f"{what}: the reader grew to {rss_mb:.0f} MB")
            print(f"{what}: {os.path.getsize(path)} bytes, refused in {dt:.2f} s, "
                  f"max RSS {rss_mb:.0f} MB", file=sys.stderr)

        # sanity: the unmodified copy passes, so the refusals above are the rewiring's
        plain = os.path.join(tmp, "plain.h5")
        rewrite(good, plain, lambda f: None)
        r = subprocess.run([exe, "trace", "check", plain], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, f"an unmodified copy passes: {r.stderr.strip()}")

        # a FIFO as the trace itself
        try:
            r = subprocess.run([exe, "trace", "check", fifo], capture_output=True, text=True,
                               timeout=30)
            check(r.returncode == 65 and "not a regular file" in r.stderr and
                  r.stderr.count("\n") == 1, f"FIFO trace: rc {r.returncode} {r.stderr!r}")
        except subprocess.TimeoutExpired:
            check(False, "a FIFO given as the trace hung the check")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print(f"test_hostile: {len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    print("test_hostile: ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
