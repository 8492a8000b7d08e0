"""The Python packages the analysis scripts need, checked before they are
imported: a missing one is one line naming the interpreter and the fix, and
exit code 69 (EX_UNAVAILABLE), not a traceback."""
from __future__ import annotations

import importlib
import sys

# import name -> (Debian package, PyPI package)
NEEDED = {
    "numpy": ("python3-numpy", "numpy"),
    "pandas": ("python3-pandas", "pandas"),
    "h5py": ("python3-h5py", "h5py"),
    "matplotlib": ("python3-matplotlib", "matplotlib"),
}
EX_UNAVAILABLE = 69


def missing() -> list[str]:
    """The packages of NEEDED this interpreter cannot import."""
    out = []
    for name in NEEDED:
        try:
            importlib.import_module(name)
        except ImportError:
            out.append(name)
    return out


def message(prog: str, names: list[str]) -> str:
    them = "it" if len(names) == 1 else "them"
    return (f"{prog}: {sys.executable} lacks {', '.join(names)}; install {them} "
            f"(Debian: apt-get install {' '.join(NEEDED[n][0] for n in names)}; "
            f"pip: pip install {' '.join(NEEDED[n][1] for n in names)})")


def require(prog: str) -> None:
    """Exits with one line and EX_UNAVAILABLE when a needed package is missing."""
    names = missing()
    if names:
        print(message(prog, names), file=sys.stderr)
        sys.exit(EX_UNAVAILABLE)
