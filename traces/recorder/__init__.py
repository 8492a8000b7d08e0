"""flashspec trace recorder: records schema-v1 traces (traces/README.md) from a
real draft/target model pair.

Modules:
    adapter    -- the model protocol the recorder drives, and the adapter for
                  modules with the common PyTorch causal-LM calling convention
    tokenizer  -- a small deterministic byte-level BPE tokenizer
    model      -- TinyGPT, a small GPT-style model with a tree-mask forward
    predictor  -- early-exit predictor: training (Lever loss) and scoring
    record     -- the recording loop (reference, draft trees, target pass)
    h5write    -- the schema-v1 HDF5 writer (atomic, byte-reproducible)
    cli        -- `python3 -m traces.recorder`

Everything is deterministic: fixed seeds, deterministic torch algorithms,
two CPU threads, no randomness in recording.
"""

RECORDER_VERSION = "1"


class RecorderError(Exception):
    """An expected failure: bad input or an unwritable output.

    ``code`` is the sysexits exit code the command line exits with (64 usage,
    65 bad data, 66 missing input, 70 internal, 73 cannot create output) and
    ``str(err)`` the one-line message.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


EX_USAGE = 64
EX_DATAERR = 65
EX_NOINPUT = 66
EX_SOFTWARE = 70
EX_CANTCREAT = 73


def setup_torch(threads: int = 2) -> None:
    """Pins torch to ``threads`` CPU threads and deterministic algorithms.

    The inter-op pool is sized once per process (torch aborts the process when
    it is set a second time or after parallel work started)."""
    import torch

    global _interop_set
    torch.set_num_threads(threads)
    if not _interop_set:
        _interop_set = True
        torch.set_num_interop_threads(1)
    torch.use_deterministic_algorithms(True)


_interop_set = False
