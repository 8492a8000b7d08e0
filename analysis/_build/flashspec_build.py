"""The build backend of analysis/ (PEP 517, PEP 660): wheels and editable
installs made with the standard library alone, so that

    pip install --no-deps -e analysis/

works offline in a fresh venv, with or without --no-build-isolation: nothing
(setuptools, wheel) has to be fetched or installed first.

The package is the directory above this one: its *.py files (not this
backend), reference/ and README.md, installed as `analysis`.  An editable
install puts a .pth file and a small import hook into site-packages that map
`analysis` (and only it) to that directory.  The metadata and the commands come
from pyproject.toml's [project] and [project.scripts] tables.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # analysis/: the package
PACKAGE = "analysis"


# ----------------------------------------------------------- pyproject.toml

def _project() -> dict:
    """[project] and [project.scripts] of pyproject.toml: tomllib where Python
    has it (3.11), else a reader of the plain strings and lists the file
    uses."""
    path = os.path.join(ROOT, "pyproject.toml")
    with open(path, "rb") as f:
        data = f.read()
    try:
        import tomllib
        doc = tomllib.loads(data.decode("utf-8"))
        proj = dict(doc.get("project", {}))
        return proj
    except ImportError:
        pass
    proj: dict = {}
    table = None
    for raw in data.decode("utf-8").splitlines():
        line = raw.split("#", 1)[0].strip() if not raw.strip().startswith("#") else ""
        if not line:
            continue
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            table = m.group(1).strip()
            continue
        m = re.match(r'^([A-Za-z0-9_."-]+)\s*=\s*(.+)$', line)
        if not m or table not in ("project", "project.scripts"):
            continue
        key, val = m.group(1).strip('"'), m.group(2).strip()
        if val.startswith("["):
            v = re.findall(r'"([^"]*)"', val)
        else:
            v = val.strip('"')
        if table == "project":
            proj[key] = v
        else:
            proj.setdefault("scripts", {})[key] = v
    return proj


def _names() -> tuple[str, str, str]:
    p = _project()
    name, version = p["name"], p["version"]
    dist = re.sub(r"[-_.]+", "_", name)
    return name, version, dist


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    if p.get("description"):
        lines.append(f"Summary: {p['description']}")
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    for d in p.get("dependencies", []):
        lines.append(f"Requires-Dist: {d}")
    return "\n".join(lines) + "\n"


def _entry_points() -> str:
    scripts = _project().get("scripts", {})
    if not scripts:
        return ""
    return "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items()) + "\n"


# ------------------------------------------------------------------ wheels

def _package_files() -> list[tuple[str, str]]:
    """(path in the wheel, file on disk) of the package: *.py, reference/*,
    README.md; not this backend, not caches."""
    out = []
    for name in sorted(os.listdir(ROOT)):
        full = os.path.join(ROOT, name)
        if os.path.isfile(full) and (name.endswith(".py") or name == "README.md"):
            out.append((f"{PACKAGE}/{name}", full))
    ref = os.path.join(ROOT, "reference")
    if os.path.isdir(ref):
        for name in sorted(os.listdir(ref)):
            full = os.path.join(ref, name)
            if os.path.isfile(full):
                out.append((f"{PACKAGE}/reference/{name}", full))
    return out


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, files: list[tuple[str, bytes]]) -> str:
    _, version, dist = _names()
    info = f"{dist}-{version}.dist-info"
    files = list(files) + [
        (f"{info}/METADATA", _metadata().encode()),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: flashspec_build\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{info}/top_level.txt", f"{PACKAGE}\n".encode()),
    ]
    ep = _entry_points()
    if ep:
        files.append((f"{info}/entry_points.txt", ep.encode()))
    record = [_record_line(p, d) for p, d in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    name = f"{dist}-{version}-py3-none-any.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                         compression=zipfile.ZIP_DEFLATED) as z:
        for p, d in files:
            zi = zipfile.ZipInfo(p, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return name


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# ------------------------------------------------------------- PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None) -> list:
    return []


def get_requires_for_build_editable(config_settings=None) -> list:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list:
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    return _write_wheel(wheel_directory, [(p, _read(f)) for p, f in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    _, _, dist = _names()
    hook = f"__editable__{dist}_finder"
    finder = f'''"""Maps the package `{PACKAGE}` to {ROOT!r} (an editable install)."""
import importlib.util
import sys

_ROOT = {ROOT!r}


class _Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != {PACKAGE!r}:
            return None
        return importlib.util.spec_from_file_location(
            name, _ROOT + "/__init__.py", submodule_search_locations=[_ROOT])


if not any(f is _Finder or getattr(f, "__name__", "") == "_Finder" for f in sys.meta_path):
    sys.meta_path.append(_Finder)
'''
    files = [(f"{hook}.py", finder.encode()), (f"__editable__{dist}.pth",
                                                f"import {hook}\n".encode())]
    return _write_wheel(wheel_directory, files)


def build_sdist(sdist_directory, config_settings=None) -> str:
    name, version, dist = _names()
    base = f"{dist}-{version}"
    out = os.path.join(sdist_directory, f"{base}.tar.gz")
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(out, "w:gz") as t:
        paths = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
                 ("_build/flashspec_build.py", os.path.abspath(__file__))]
        paths += [(p[len(PACKAGE) + 1:], f) for p, f in _package_files()]
        for rel, full in paths:
            t.add(full, arcname=f"{base}/{rel}")
        pkg = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg)
        t.addfile(ti, io.BytesIO(pkg))
    return os.path.basename(out)
