"""The installed commands (pyproject.toml [project.scripts]): each checks the
packages it needs first -- a missing one is one line naming the interpreter
and the fix, exit code 69 -- then runs its script's main()."""
from __future__ import annotations

import sys

from . import depcheck


def _run(prog: str, module: str, argv: list[str] | None) -> int:
    depcheck.require(prog)
    import importlib

    mod = importlib.import_module(f"{__package__}.{module}")
    return mod.main(sys.argv[1:] if argv is None else argv, prog=prog)


def report(argv: list[str] | None = None) -> int:
    """flashspec-report RESULTS_DIR [-o OUT] (analysis/report.py)."""
    return _run("flashspec-report", "report", argv)


def fidelity(argv: list[str] | None = None) -> int:
    """flashspec-fidelity RESULTS_DIR REFERENCE.csv [-o OUT] [--strict]
    (analysis/fidelity.py)."""
    return _run("flashspec-fidelity", "fidelity", argv)


def timeline(argv: list[str] | None = None) -> int:
    """flashspec-timeline FILE.json [-o PNG] [--cycles A:B] (analysis/timeline.py)."""
    return _run("flashspec-timeline", "timeline", argv)
