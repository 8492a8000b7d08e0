#!/usr/bin/python3
"""Keep the generated tables of the docs equal to what the build says.

Each policy section of docs/policies.md holds a block

    <!-- flashspec policies NAME --markdown -->
    ...the output of `flashspec policies NAME --markdown`...
    <!-- end -->

  scripts/policy_docs.py --check [--bin FLASHSPEC] [--doc FILE]
      exit 1 naming every difference: a registered policy without a section or
      block, a block whose table differs from the build's, a block for a policy
      this build does not have (a note, not a failure: optional policies)
  scripts/policy_docs.py --write [--bin FLASHSPEC] [--doc FILE]
      rewrite every block from the build (the prose is left alone)

docs/results.md (--columns-doc FILE) holds, the same way, the block

    <!-- flashspec columns --markdown -->
    ...the output of `flashspec columns --markdown`...
    <!-- end -->

which --check compares (one block, exactly) and --write refreshes.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- flashspec policies (\w+) --markdown -->\n)(.*?)(<!-- end -->)", re.S)
COLUMNS = re.compile(r"(<!-- flashspec columns --markdown -->\n)(.*?)(<!-- end -->)", re.S)


def columns_problems(exe: str, doc: str, write: bool) -> list[str]:
    """The column table of doc against `flashspec columns --markdown`."""
    r = subprocess.run([exe, "columns", "--markdown"], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        sys.exit(f"policy_docs: {exe} columns: exit {r.returncode}: {r.stderr.strip()}")
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    blocks = list(COLUMNS.finditer(text))
    if len(blocks) != 1:
        return [f"{doc}: {len(blocks)} column blocks (want one "
                "'<!-- flashspec columns --markdown -->' ... '<!-- end -->')"]
    m = blocks[0]
    if m.group(2) == r.stdout:
        return []
    if write:
        with open(doc, "w", encoding="utf-8") as f:
            f.write(text[:m.start(2)] + r.stdout + text[m.end(2):])
        return []
    line = text.count("\n", 0, m.start()) + 1
    return [f"{doc}:{line}: the column table differs from `flashspec columns --markdown`"]


def policy_out(exe: str, *args: str) -> str:
    r = subprocess.run([exe, "policies", *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"policy_docs: {exe} policy {' '.join(args)}: exit {r.returncode}: "
                 f"{r.stderr.strip()}")
    return r.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    ap.add_argument("--bin", default=os.environ.get("FLASHSPEC_BIN",
                                                    os.path.join(HOME, "build/sim/cli/flashspec")))
    ap.add_argument("--doc", default=os.path.join(HOME, "docs/policies.md"))
    ap.add_argument("--columns-doc", default=os.path.join(HOME, "docs/results.md"))
    a = ap.parse_args()
    col_problems = columns_problems(a.bin, a.columns_doc, a.write)

    listing = policy_out(a.bin, "--markdown")
    names = re.findall(r"^\| `(\w+)` \|", listing, re.M)
    if not names:
        sys.exit(f"policy_docs: {a.bin} policy lists no policies")
    with open(a.doc, encoding="utf-8") as f:
        text = f.read()

    problems: list[str] = []
    sections = set(re.findall(r"^## `(\w+)`$", text, re.M))
    blocks = {m.group(2) for m in BLOCK.finditer(text)}
    for n in names:
        if n not in sections:
            problems.append(f"{a.doc}: no section '## `{n}`' for registered policy {n}")
        if n not in blocks:
            problems.append(f"{a.doc}: no parameter block for registered policy {n}")
    for n in sorted(blocks - set(names)):
        print(f"policy_docs: note: {a.doc} documents {n}, which this build does not have",
              file=sys.stderr)

    def fresh(m: re.Match) -> str:
        name = m.group(2)
        if name not in names:
            return m.group(0)
        want = policy_out(a.bin, name, "--markdown")
        if m.group(3) != want:
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{a.doc}:{line}: the {name} table differs from "
                            f"`flashspec policies {name} --markdown`")
        return m.group(1) + want + m.group(4)

    new = BLOCK.sub(fresh, text)
    problems += col_problems
    if a.write:
        if new != text:
            with open(a.doc, "w", encoding="utf-8") as f:
                f.write(new)
        missing = [p for p in problems if "differs" not in p]
        for p in missing:
            print(f"policy_docs: {p}", file=sys.stderr)
        return 1 if missing else 0
    for p in problems:
        print(f"policy_docs: {p}", file=sys.stderr)
    if not problems:
        print(f"policy_docs: {len(names)} policies and the result columns, every table "
              "matches the build", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
