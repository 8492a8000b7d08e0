"""Schema-v1 trace writer (traces/README.md), atomic and byte-reproducible.

Layout rules mirrored from the C writer: HDF5 1.10 file format (libver bounds
V110, checksummed metadata); no object timestamps (file, group and dataset
creation properties); strings as fixed-length NUL-terminated UTF-8; integer
attributes int32; datasets of 4 KiB or more chunked along their first dimension
(about 1 MiB per chunk) with shuffle + deflate level 4, smaller ones contiguous.

Atomicity: the file is written as ``PATH.tmp<pid>-<n>`` in the target directory
(created exclusively), flushed, fsynced and renamed over ``PATH``; on any
failure the temporary is removed and ``PATH`` is left as it was.
"""
from __future__ import annotations

import itertools
import os
from typing import Dict

import h5py
import numpy as np

from . import EX_CANTCREAT, RecorderError

STRING_ATTRS = ("format", "target", "draft", "tokenizer", "source")
INT_ATTRS = ("version", "vocab", "k", "max_depth", "max_nodes", "target_layers")
STRING_CAPS = {"format": 63, "target": 63, "draft": 63, "tokenizer": 63, "source": 255}

# dataset name -> dtype, in the order of the schema table
DATASETS = (
    ("prompts/offset", np.int64),
    ("prompts/tokens", np.int32),
    ("reference/offset", np.int64),
    ("reference/tokens", np.int32),
    ("trees/node_offset", np.int64),
    ("nodes/parent", np.int32),
    ("nodes/token", np.int32),
    ("nodes/depth", np.uint8),
    ("nodes/draft_tok", np.int32),
    ("nodes/draft_logp", np.float32),
    ("nodes/target_tok", np.int32),
    ("nodes/target_logp", np.float32),
    ("nodes/exit_score", np.float32),
)

CHUNK_BYTES = 1 << 20
CHUNK_MIN_BYTES = 4096
_counter = itertools.count()


def fit_utf8(s: str, cap: int) -> bytes:
    """UTF-8 bytes of s, cut to at most cap bytes on a character boundary."""
    b = s.encode("utf-8")
    while len(b) > cap:
        s = s[:-1]
        b = s.encode("utf-8")
    return b


def _fixed_string(b: bytes) -> np.ndarray:
    return np.array(b, dtype=f"S{len(b) + 1}")  # room for the terminating NUL


def _write(f: h5py.File, attrs: Dict, data: Dict[str, np.ndarray]) -> None:
    for name in STRING_ATTRS:
        f.attrs.create(name, _fixed_string(fit_utf8(str(attrs[name]), STRING_CAPS[name])))
    for name in INT_ATTRS:
        f.attrs.create(name, np.int32(attrs[name]))
    f.attrs.create("exit_layers", np.asarray(attrs["exit_layers"], dtype=np.int32).reshape(-1))
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    for g in ("prompts", "reference", "trees", "nodes"):
        h5py.h5g.create(f.id, g.encode(), gcpl=gcpl)
    for name, dtype in DATASETS:
        arr = np.ascontiguousarray(data[name], dtype=dtype)
        kw = {}
        if arr.nbytes >= CHUNK_MIN_BYTES and arr.shape[0] > 0:
            row = max(1, arr.nbytes // arr.shape[0])
            rows = min(arr.shape[0], max(1, CHUNK_BYTES // row))
            kw = dict(chunks=(rows,) + arr.shape[1:], compression="gzip",
                      compression_opts=4, shuffle=True)
        f.create_dataset(name, data=arr, track_times=False, **kw)


def write_trace(path: str, attrs: Dict, data: Dict[str, np.ndarray]) -> None:
    """Writes a trace atomically; raises RecorderError(73) when it cannot."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, f"{os.path.basename(path)}.tmp{os.getpid()}-{next(_counter)}")
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_obj_track_times(False)
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_V110, h5py.h5f.LIBVER_V110)
    created = False
    try:
        if not os.path.isdir(d):
            raise OSError(f"directory {d} does not exist")
        fid = h5py.h5f.create(tmp.encode(), h5py.h5f.ACC_EXCL, fcpl=fcpl, fapl=fapl)
        created = True
        with h5py.File(fid) as f:
            _write(f, attrs, data)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        created = False
    except (OSError, ValueError, RuntimeError) as e:
        msg = getattr(e, "strerror", None) or str(e)
        raise RecorderError(EX_CANTCREAT, f"{path}: cannot write the trace ({msg})") from None
    finally:
        if created and os.path.exists(tmp):
            os.unlink(tmp)
