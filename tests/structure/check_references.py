#!/usr/bin/python3
"""Every file of the project stands alone: none sends its reader to a
document the project does not ship.

  check_references.py SRC_ROOT
      no tracked text file (git ls-files; binary files skipped; outside a git
      checkout, every file under SRC_ROOT but hidden folders and build
      folders) names one of the background notes kept beside the project --
      the calibration, algorithms, design and style notes (their upper-case
      names with ".md"), a Markdown note under a "papers/" folder -- or the
      sibling folder "shared" reached by "..".  A reader has none of them:
      cite the primary source (paper and section, table or equation; vendor
      page; datasheet) or the project's own docs/*.md instead.  Prints each
      hit as FILE:LINE and fails.
  check_references.py --self-test
      plants each kind of reference in a scratch git repository and expects
      exactly those hits: not in a binary file, not in an untracked file, and
      not for near misses (docs/policies.md, DESIGNS.md, a longer name or
      extension, a note under a folder whose name merely ends in papers, a
      folder named shared_x)
"""
import os
import re
import subprocess
import sys
import tempfile

# Spelled in parts so that this file does not name them itself.
NOTES = ("CALIBRATION", "ALGORITHMS", "DESIGN", "STYLE")
PATTERN = re.compile(r"\b(?:" + "|".join(NOTES) + r")\.md\b"
                     r"|(?<![\w-])papers/[\w.+-]+\.md\b"
                     r"|\.\./shared\b")


def tracked_files(root):
    """Paths (relative to root) of the files git tracks, or of every file
    outside hidden and build folders when root is not a git checkout."""
    r = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True)
    if r.returncode == 0:
        return [p for p in r.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    out = []
    for dp, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and
                         not os.path.exists(os.path.join(dp, d, "build.ninja")))
        out += [os.path.relpath(os.path.join(dp, f), root) for f in sorted(files)]
    return out


def hits(root):
    """(file, line, text named) of every reference, in file order."""
    out = []
    for rel in tracked_files(root):
        path = os.path.join(root, rel)
        if os.path.islink(path) or not os.path.isfile(path):
            continue  # a link's target is checked as its own file; a deleted file is gone
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            continue  # binary, as git judges it
        text = data.decode("utf-8", "replace")
        for m in PATTERN.finditer(text):
            out.append((rel, text.count("\n", 0, m.start()) + 1, m.group(0)))
    return out


def check(root):
    found = hits(root)
    for rel, line, what in found:
        print(f"{rel}:{line}: names {what}, which the project does not ship: cite the "
              f"primary source or docs/*.md instead")
    return len(found)


def self_test():
    md, up, pp = ".md", "../", "papers"
    planted = {
        "a.c": f"/* rule of {NOTES[1]}{md} */\nint x;\n",
        "b.lua": f"x = 1 -- {NOTES[0]}{md} model table\n",
        "c.py": f"# see {up}shared/papers/lever{md}\n",
        "d.md": f"ok line\n[design]({NOTES[2]}{md})\n{NOTES[3]}{md}\n",
        "e.txt": f"papers/android-speculative-notes{md}: thermal\n",
        "clean.md": (f"docs/policies.md, DESIGNS.md, my{pp}/x{md}, {up}shared_x, "
                     f"{NOTES[0]} without extension, docs/{NOTES[2].lower()}{md}, "
                     f"MY{NOTES[3]}{md}, {NOTES[3]}{md}x\n"),
    }
    want = [("a.c", 1), ("b.lua", 1), ("c.py", 1), ("c.py", 1), ("d.md", 2), ("d.md", 3),
            ("e.txt", 1)]
    with tempfile.TemporaryDirectory() as t:
        for name, text in planted.items():
            with open(os.path.join(t, name), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(t, "blob.bin"), "wb") as f:
            f.write(b"\0\1" + f"{NOTES[0]}{md}".encode())
        if subprocess.run(["git", "init", "-q", t], capture_output=True).returncode != 0 or \
                subprocess.run(["git", "-C", t, "add", "."], capture_output=True).returncode != 0:
            print("self-test: git init/add failed")
            return 1
        with open(os.path.join(t, "untracked.txt"), "w", encoding="utf-8") as f:
            f.write(f"{NOTES[1]}{md}\n")
        got = [(rel, line) for rel, line, _ in hits(t)]
        if got != want:
            print(f"self-test: found {got}, wanted {want}")
            return 1
        if check(t) != len(want):
            return 1
    print("self-test: ok")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) != 2:
        print("usage: check_references.py SRC_ROOT | --self-test", file=sys.stderr)
        sys.exit(2)
    n = check(sys.argv[1])
    print(f"{n} reference(s) to documents the project does not ship" if n else
          "no file names a document the project does not ship")
    sys.exit(1 if n else 0)
