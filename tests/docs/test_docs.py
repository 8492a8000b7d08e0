#!/usr/bin/python3
"""Docs that live in the repository and agree with the build.

  test_docs.py policies FLASHSPEC HOME
      docs/policies.md documents every registered policy and its tables equal
      `flashspec policies NAME --markdown`; scripts/policy_docs.py --check fails
      on a changed default, a missing section or a missing block, and --write
      repairs a stale table
  test_docs.py links FLASHSPEC HOME
      README.md and the docs it links stay inside the repository: no link or
      path leaves the project directory, and every relative link resolves
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILS: list[str] = []


def check(cond: bool, what: str) -> None:
    if not cond:
        FAILS.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def case_policies(exe: str, home: str, tmp: str) -> None:
    tool = os.path.join(home, "scripts", "policy_docs.py")
    doc = os.path.join(home, "docs", "policies.md")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, tool, "--bin", exe, *args], capture_output=True,
                              text=True, timeout=120)

    r = run("--check", "--doc", doc)
    check(r.returncode == 0, f"docs/policies.md matches the build: {r.stderr.strip()}")
    names = re.findall(r"^(\w+)\s", subprocess.run([exe, "policies"], capture_output=True,
                                                   text=True).stdout, re.M)
    check(len(names) >= 10 and "lever" in names and "flash_ar" in names,
          f"flashspec policies lists the policies: {names}")
    text = open(doc, encoding="utf-8").read()
    for args, words in ((["nope"], "no policy 'nope' in this build"),
                        (["eagle_2"], "no policy 'eagle_2' in this build (did you mean 'eagle2'?)"),
                        (["lever", "--bogus"], "unexpected argument '--bogus'"),
                        (["lever", "chain"], "unexpected argument 'chain'")):
        r = subprocess.run([exe, "policies", *args], capture_output=True, text=True)
        check(r.returncode == 64 and r.stdout == "" and words in r.stderr and
              r.stderr.count("\n") == 1, f"flashspec policies {' '.join(args)}: "
              f"{r.returncode} {r.stderr!r}")
    r = subprocess.run([exe, "policies", "lever"], capture_output=True, text=True)
    check(r.returncode == 0 and all(k in r.stdout for k in ("theta", "n_max", "projection")),
          "flashspec policies lever lists its keys")

    # a stale default is caught, with the line, and --write repairs it
    stale = os.path.join(tmp, "stale.md")
    with open(stale, "w", encoding="utf-8") as f:
        f.write(text.replace("| `theta` | `0.1` |", "| `theta` | `0.2` |"))
    r = run("--check", "--doc", stale)
    check(r.returncode == 1 and re.search(r"stale\.md:\d+: the lever table differs", r.stderr),
          f"a changed default fails the check: {r.returncode} {r.stderr.strip()}")
    r = run("--write", "--doc", stale)
    check(r.returncode == 0 and open(stale, encoding="utf-8").read() == text,
          f"--write restores the table: {r.stderr.strip()}")

    # the result-column table: a stale or missing one is caught, --write repairs it
    res = os.path.join(home, "docs", "results.md")
    rtext = open(res, encoding="utf-8").read()
    want = subprocess.run([exe, "columns", "--markdown"], capture_output=True, text=True).stdout
    rows = re.findall(r"^\| `([a-z_0-9<>]+)` \|", want, re.M)
    with open(os.path.join(home, "sim", "out", "rows.c"), encoding="utf-8") as f:
        fixed = re.findall(r'^\s*\{"([a-z_0-9]+)", COL_', f.read(), re.M)
    check(rows == fixed + ["param_<name>", "tag_<name>"],
          f"flashspec columns lists rows.c's columns in file order, then the dynamic ones: {rows}")
    stale = os.path.join(tmp, "results.md")
    with open(stale, "w", encoding="utf-8") as f:
        f.write(rtext.replace("| `cycles` | integer |", "| `cycles` | number |"))
    r = run("--check", "--doc", doc, "--columns-doc", stale)
    check(r.returncode == 1 and re.search(r"results\.md:\d+: the column table differs", r.stderr),
          f"a stale column table fails the check: {r.returncode} {r.stderr.strip()}")
    # --write rewrites the policy tables too: a copy, so that a build whose
    # tables differ (a changed default) never edits the project's own page
    doc_copy = os.path.join(tmp, "policies-copy.md")
    shutil.copy(doc, doc_copy)
    r = run("--write", "--doc", doc_copy, "--columns-doc", stale)
    check(r.returncode == 0 and open(stale, encoding="utf-8").read() == rtext,
          f"--write restores the column table: {r.stderr.strip()}")
    with open(stale, "w", encoding="utf-8") as f:
        f.write(rtext.replace("<!-- flashspec columns --markdown -->", ""))
    r = run("--check", "--doc", doc, "--columns-doc", stale)
    check(r.returncode == 1 and "0 column blocks" in r.stderr, f"no block: {r.stderr.strip()}")
    # the results of a run carry exactly those columns, in that order
    out = os.path.join(tmp, "run")
    script = os.path.join(home, "configs", "default.lua")
    r = subprocess.run([exe, "run", script, "-q", "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, f"default run: {r.stderr.strip()}")
    with open(os.path.join(out, "results.csv"), encoding="utf-8") as f:
        head = f.readline().strip().split(",")
    check(head[:len(fixed)] == fixed and
          all(c.startswith(("param_", "tag_")) for c in head[len(fixed):]),
          f"results.csv columns follow the table: {head}")

    # a policy without its section or block
    cut = os.path.join(tmp, "cut.md")
    start = text.index("## `opt_tree`")
    with open(cut, "w", encoding="utf-8") as f:
        f.write(text[:start] + text[text.index("## `sequoia`"):])
    r = run("--check", "--doc", cut)
    check(r.returncode == 1 and "no section '## `opt_tree`'" in r.stderr and
          "no parameter block for registered policy opt_tree" in r.stderr,
          f"a missing section fails the check: {r.stderr.strip()}")


def case_links(exe: str, home: str, tmp: str) -> None:
    del exe, tmp
    docs = [os.path.join(home, "README.md")]
    docs += [os.path.join(home, "docs", f) for f in sorted(os.listdir(os.path.join(home, "docs")))
             if f.endswith(".md")]
    check(any(d.endswith("policies.md") for d in docs), "docs/policies.md exists")
    readme = open(docs[0], encoding="utf-8").read()
    check("docs/policies.md" in readme, "README.md points to docs/policies.md")
    for d in docs:
        text = open(d, encoding="utf-8").read()
        for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+://", target):
                continue
            line = text.count("\n", 0, m.start()) + 1
            path = os.path.normpath(os.path.join(os.path.dirname(d), target))
            inside = os.path.commonpath([path, home]) == home
            check(inside, f"{d}:{line}: link {target} leaves the project")
            check(not inside or os.path.exists(path), f"{d}:{line}: link {target} is broken")
        for m in re.finditer(r"\.\./shared\b", text):
            check(False, f"{d}:{text.count(chr(10), 0, m.start()) + 1}: refers to a sibling shared folder")


def case_readme(exe: str, home: str, tmp: str) -> None:
    """The README's first study runs as printed, and its Python lines read the
    results from another directory."""
    text = open(os.path.join(home, "README.md"), encoding="utf-8").read()
    lua = re.findall(r"```lua\n(.*?)```", text, re.S)
    py = re.findall(r"```python\n(.*?)```", text, re.S)
    check(len(lua) == 1 and len(py) == 1, f"one Lua and one Python block ({len(lua)}, {len(py)})")
    if not lua or not py:
        return
    study = os.path.join(tmp, "my_study.lua")
    with open(study, "w", encoding="utf-8") as f:
        f.write(lua[0])
    out = os.path.join(tmp, "results", "my_study")
    r = subprocess.run([exe, "sweep", study, "-j", "2", "-q", "-o", out], capture_output=True,
                       text=True, cwd=tmp, timeout=300)
    check(r.returncode == 0 and len(r.stdout.splitlines()) == 18,
          f"the README study: exit {r.returncode}, {len(r.stdout.splitlines())} rows; "
          f"{r.stderr.strip()}")
    code = py[0] + "\nassert len(df) == 18 and df['param_k'].dropna().tolist()[:1] == [7.0]\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp,
                       env={**os.environ, "PYTHONPATH": home}, timeout=300)
    check(r.returncode == 0, f"the README's Python lines: {r.stderr.strip()[-500:]}")


CASES = {"policies": case_policies, "links": case_links, "readme": case_readme}


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        print(f"usage: test_docs.py {{{'|'.join(CASES)}}} FLASHSPEC HOME", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="fs-docs-")
    try:
        CASES[sys.argv[1]](os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3]), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print(f"{sys.argv[1]}: {len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{sys.argv[1]}: ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
