#!/usr/bin/python3
"""No long functions in the project's C code.

  check_functions.py SRC_ROOT
      every function of the C files under engine/, sim/, traces/ and
      examples/ has a body of at most MAX_LINES lines, unless the body is a
      flat switch (a switch whose lines are mostly `case` labels: a table,
      not logic); prints each function over the limit and fails
  check_functions.py --self-test
      the checker finds a long function, passes a short one and a long flat
      switch, and counts a body from its opening to its closing brace

A function is what the project's layout makes of one (clang-format): its
opening and closing braces alone on a line at column 0.  A definition laid
out otherwise (its opening brace at the end of the line that names it) would
hide from the count, so such a line fails the check too.
"""
import os
import re
import sys
import tempfile

MAX_LINES = 80
DIRS = ["engine", "sim", "traces", "examples"]
# a definition at column 0 whose opening brace ends its line: "int f(void) {"
BRACE_ON_HEADER = re.compile(r"^[A-Za-z_].*\)\s*\{\s*$")


def functions(text):
    """(name line, body lines) of each function of a C source."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            j = i + 1
            while j < len(lines) and lines[j] != "}":
                j += 1
            k = i - 1
            while k > 0 and not lines[k][:1].isalpha():
                k -= 1
            out.append((lines[k].strip() if k >= 0 else "?", lines[i + 1:j]))
            i = j
        i += 1
    return out


def flat_switch(body):
    """A body that is one switch whose lines are mostly case labels."""
    code = [l.strip() for l in body if l.strip() and not l.strip().startswith(("/*", "*", "//"))]
    if not any(l.startswith("switch") for l in code[:3]):
        return False
    cases = sum(1 for l in code if l.startswith(("case ", "default:")))
    return cases * 2 >= len(code)


def long_functions(root):
    found = []
    for d in DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for n in sorted(names):
                if not n.endswith(".c"):
                    continue
                path = os.path.join(dirpath, n)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                rel = os.path.relpath(path, root)
                for name, body in functions(text):
                    if len(body) > MAX_LINES and not flat_switch(body):
                        found.append((len(body), rel, name))
                for line in text.split("\n"):
                    if BRACE_ON_HEADER.match(line):
                        found.append((0, rel, line.strip() + "  <- brace not on its own line"))
    return sorted(found, reverse=True)


def self_test():
    body = "\n".join(f"    x += {i};" for i in range(MAX_LINES + 1))
    cases = "\n".join(f"    case {i}: return {i};" for i in range(MAX_LINES + 1))
    short = "\n".join(f"    x += {i};" for i in range(MAX_LINES))
    src = (f"static int long_one(int x)\n{{\n{body}\n    return x;\n}}\n\n"
           f"static int table(int x)\n{{\n    switch (x) {{\n{cases}\n    default: return -1;\n"
           f"    }}\n}}\n\nstatic int short_one(int x)\n{{\n{short}\n}}\n"
           f"static int hidden(int x) {{\n    return x;\n}}\n")
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "sim"))
        with open(os.path.join(tmp, "sim", "f.c"), "w", encoding="utf-8") as f:
            f.write(src)
        found = long_functions(tmp)
    ok = [(n, name) for n, _, name in found] == [
        (MAX_LINES + 2, "static int long_one(int x)"),
        (0, "static int hidden(int x) {  <- brace not on its own line")]
    print("self-test:", "ok" if ok else f"FAIL: found {found}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = long_functions(sys.argv[1])
    for n, path, name in found:
        if n:
            print(f"{path}: {name}: {n} lines (at most {MAX_LINES}, or a flat switch)")
        else:
            print(f"{path}: {name}")
    print(f"{len(found)} function(s) over {MAX_LINES} lines or laid out so they cannot be counted")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
