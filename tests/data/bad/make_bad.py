#!/usr/bin/python3
"""Regenerates the bad-input corpus of tests/data/bad from traces/data/synth-small.h5.

Each file breaks exactly one rule of trace schema v1 (traces/README.md); the
expected status code and the dataset named in the error are listed in README.md
here and checked by tests/traces/test_trc_io.c.

usage: tests/data/bad/make_bad.py [SOURCE.h5]   (run with /usr/bin/python3)
"""
import argparse
import os
import shutil
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def copy(src: str, name: str) -> str:
    dst = os.path.join(HERE, name)
    shutil.copyfile(src, dst)
    return dst


def truncated(src: str) -> None:
    data = open(src, "rb").read()
    with open(os.path.join(HERE, "truncated.h5"), "wb") as f:
        f.write(data[: len(data) // 2])


def not_hdf5(_src: str) -> None:
    with open(os.path.join(HERE, "not_hdf5.h5"), "w") as f:
        f.write("this is a text file, not an HDF5 trace\n")


def empty(_src: str) -> None:
    open(os.path.join(HERE, "empty.h5"), "wb").close()


def wrong_version(src: str) -> None:
    with h5py.File(copy(src, "wrong_version.h5"), "r+") as f:
        f.attrs.modify("version", np.int32(2))


def nan_logp(src: str) -> None:
    with h5py.File(copy(src, "nan_logp.h5"), "r+") as f:
        f["nodes/draft_logp"][5, 1] = np.float32("nan")


def token_ge_vocab(src: str) -> None:
    with h5py.File(copy(src, "token_ge_vocab.h5"), "r+") as f:
        off = f["trees/node_offset"][:]
        leaf = int(off[1]) - 1  # last node of tree 0: an off-path leaf
        f["nodes/token"][leaf] = np.int32(f.attrs["vocab"])


def bad_offsets(src: str) -> None:
    with h5py.File(copy(src, "bad_offsets.h5"), "r+") as f:
        off = f["trees/node_offset"][:]
        off[3] = off[2] - 1  # no longer non-decreasing
        f["trees/node_offset"][:] = off


def missing_dataset(src: str) -> None:
    with h5py.File(copy(src, "missing_dataset.h5"), "r+") as f:
        del f["nodes/target_logp"]


def wrong_shape(src: str) -> None:
    with h5py.File(copy(src, "wrong_shape.h5"), "r+") as f:
        tok = f["nodes/draft_tok"][:, :-1]
        del f["nodes/draft_tok"]
        f.create_dataset("nodes/draft_tok", data=tok)


def wrong_type(src: str) -> None:
    with h5py.File(copy(src, "wrong_type.h5"), "r+") as f:
        parent = f["nodes/parent"][:].astype(np.int64)
        del f["nodes/parent"]
        f.create_dataset("nodes/parent", data=parent)


def broken_ref_path(src: str) -> None:
    with h5py.File(copy(src, "broken_ref_path.h5"), "r+") as f:
        off = f["trees/node_offset"][:]
        ref = f["reference/tokens"][:]
        tok = f["nodes/token"][:]
        # node 1 of tree 0 is the reference child of the root (token ref[0]);
        # give it another token that no sibling uses
        assert tok[off[0] + 1] == ref[0]
        siblings = set(int(t) for t in tok[off[0]:off[1]])
        new = next(t for t in range(int(f.attrs["vocab"])) if t not in siblings)
        tok[off[0] + 1] = new
        f["nodes/token"][:] = tok


MAKERS = [truncated, not_hdf5, empty, wrong_version, nan_logp, token_ge_vocab,
          bad_offsets, missing_dataset, wrong_shape, wrong_type, broken_ref_path]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="?",
                    default=os.path.join(ROOT, "traces", "data", "synth-small.h5"))
    args = ap.parse_args()
    for make in MAKERS:
        make(args.source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
