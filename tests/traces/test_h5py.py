#!/usr/bin/python3
"""Opens a bundled trace with plain h5py and checks the schema v1 layout that
traces/README.md documents: root attributes, dataset names, dtypes, shapes and
the offset/tree invariants.  Proves the files are ordinary HDF5 that any tool
can read without flashspec.

usage: test_h5py.py TRACE.h5
"""
import sys

import h5py
import numpy as np

INT_ATTRS = ["version", "vocab", "k", "max_depth", "max_nodes", "target_layers"]
STR_ATTRS = ["format", "target", "draft", "tokenizer", "source"]


def text(value) -> str:
    """String attributes are fixed-length (h5py gives bytes); accept str too."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


def check(cond: bool, what: str, failures: list) -> None:
    if not cond:
        failures.append(what)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    failures: list = []
    with h5py.File(sys.argv[1], "r") as f:
        a = f.attrs
        for name in STR_ATTRS:
            check(isinstance(text(a.get(name)), str), f"@{name} is a string", failures)
        for name in INT_ATTRS:
            check(np.asarray(a.get(name)).dtype == np.int32, f"@{name} is int32", failures)
        check(text(a["format"]) == "flashspec-trace", "@format", failures)
        check(int(a["version"]) == 1, "@version == 1", failures)
        exits = np.asarray(a["exit_layers"])
        check(exits.dtype == np.int32 and exits.ndim == 1, "@exit_layers int32[E]", failures)
        check(bool(np.all(np.diff(exits) > 0)), "@exit_layers ascending", failures)
        check(bool(np.all((exits >= 1) & (exits < a["target_layers"]))),
              "@exit_layers in [1, target_layers)", failures)
        V, K, D, M, E = (int(a["vocab"]), int(a["k"]), int(a["max_depth"]),
                         int(a["max_nodes"]), len(exits))

        poff = f["prompts/offset"][:]
        ptok = f["prompts/tokens"][:]
        roff = f["reference/offset"][:]
        rtok = f["reference/tokens"][:]
        noff = f["trees/node_offset"][:]
        P, T = len(poff) - 1, len(rtok)
        N = len(f["nodes/parent"])
        expect = {
            "prompts/offset": (np.int64, (P + 1,)),
            "prompts/tokens": (np.int32, (int(poff[-1]),)),
            "reference/offset": (np.int64, (P + 1,)),
            "reference/tokens": (np.int32, (T,)),
            "trees/node_offset": (np.int64, (T + 1,)),
            "nodes/parent": (np.int32, (N,)),
            "nodes/token": (np.int32, (N,)),
            "nodes/depth": (np.uint8, (N,)),
            "nodes/draft_tok": (np.int32, (N, K)),
            "nodes/draft_logp": (np.float32, (N, K)),
            "nodes/target_tok": (np.int32, (N, K)),
            "nodes/target_logp": (np.float32, (N, K)),
            "nodes/exit_score": (np.float32, (N, E, K)),
        }
        for name, (dtype, shape) in expect.items():
            ds = f[name]
            check(ds.dtype == dtype, f"/{name} dtype {ds.dtype} == {np.dtype(dtype)}", failures)
            check(ds.shape == shape, f"/{name} shape {ds.shape} == {shape}", failures)
        check(P >= 1 and len(ptok) == poff[-1], "prompt offsets", failures)
        check(roff[0] == 0 and roff[-1] == T and bool(np.all(np.diff(roff) >= 1)),
              "reference offsets", failures)
        sizes = np.diff(noff)
        check(noff[0] == 0 and noff[-1] == N and bool(np.all((sizes >= 1) & (sizes <= M))),
              "tree offsets and sizes", failures)

        parent = f["nodes/parent"][:]
        token = f["nodes/token"][:]
        depth = f["nodes/depth"][:]
        dtok = f["nodes/draft_tok"][:]
        dlp = f["nodes/draft_logp"][:]
        ttok = f["nodes/target_tok"][:]
        tlp = f["nodes/target_logp"][:]
        for name, arr in [("token", token), ("draft_tok", dtok), ("target_tok", ttok),
                          ("reference", rtok), ("prompts", ptok)]:
            check(bool(np.all((arr >= 0) & (arr < V))), f"{name} ids in [0, vocab)", failures)
        for name, arr in [("draft_logp", dlp), ("target_logp", tlp)]:
            check(bool(np.all(np.isfinite(arr)) and np.all(arr <= 1e-4)),
                  f"{name} finite and <= 0", failures)
            check(bool(np.all(np.diff(arr, axis=1) <= 0)), f"{name} sorted", failures)
        check(bool(np.all(np.isfinite(f["nodes/exit_score"][:]))), "exit scores finite",
              failures)

        # tree structure and the reference path, prompt by prompt
        for p in range(P):
            ref = rtok[roff[p]:roff[p + 1]]
            L = len(ref)
            for pos in range(L):
                b, e = int(noff[roff[p] + pos]), int(noff[roff[p] + pos + 1])
                par, tok, dep = parent[b:e], token[b:e], depth[b:e]
                ok = par[0] == -1 and dep[0] == 0
                for i in range(1, e - b):
                    ok = ok and 0 <= par[i] < i and dep[i] == dep[par[i]] + 1 <= D
                want_root = ref[pos - 1] if pos else (ptok[poff[p + 1] - 1]
                                                      if poff[p + 1] > poff[p] else tok[0])
                ok = ok and tok[0] == want_root
                u = 0
                for d in range(min(D, L - pos)):
                    ok = ok and ttok[b + u, 0] == ref[pos + d]
                    kids = [i for i in range(1, e - b) if par[i] == u and tok[i] == ref[pos + d]]
                    ok = ok and len(kids) == 1
                    if not ok:
                        break
                    u = kids[0]
                check(bool(ok), f"tree (prompt {p}, pos {pos}) structure", failures)
    for f_ in failures:
        print("FAIL:", f_, file=sys.stderr)
    print(f"test_h5py: {len(failures)} failures", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
