#!/usr/bin/python3
"""Every format string handed to Lua's own formatter uses conversions it knows.

  check_lua_formats.py SRC_ROOT
      the format argument of every luaL_error, lua_pushfstring and
      lua_pushvfstring call in the C files under engine/, sim/, traces/ and
      examples/ holds only the conversions lua_pushfstring supports (%% %s
      %f %I %p %d %c %U, no flags, width or precision); prints each call that
      holds another and fails.  A bad one is not a compile error: Lua raises
      "invalid option '%l' to 'lua_pushfstring'" where the message should be
      (as `tree:add(999, ...)` once did with %lld).
  check_lua_formats.py --self-test
      the checker finds %lld, %zu, %.80s and %g across joined literals, and
      passes %I, %d, %s, %% and a format that is not a literal
"""
import os
import re
import sys
import tempfile

DIRS = ["engine", "sim", "traces", "examples"]
CALLS = re.compile(r"\b(luaL_error|lua_pushfstring|lua_pushvfstring)\s*\(")
KNOWN = set("%sfIpdcU")


def skip_string(src, i):
    """Index after the string literal that starts at src[i] == '"'."""
    i += 1
    while src[i] != '"':
        i += 2 if src[i] == "\\" else 1
    return i + 1


def call_args(src, start):
    """The top-level arguments of the call whose '(' ends at start, as text."""
    args, cur, depth, i = [], "", 0, start
    while i < len(src):
        c = src[i]
        if c == '"':
            j = skip_string(src, i)
            cur += src[i:j]
            i = j
            continue
        if c == "'":
            j = i + 1
            while src[j] != "'":
                j += 2 if src[j] == "\\" else 1
            cur += src[i:j + 1]
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append(cur)
                return args
            depth -= 1
        if c == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    return args


def bad_calls(src):
    """(line, function, format) of each call whose literal format holds an
    unknown conversion."""
    out = []
    for m in CALLS.finditer(src):
        args = call_args(src, m.end())
        if len(args) < 2:
            continue
        literals = re.findall(r'"((?:[^"\\]|\\.)*)"', args[1])
        fmt = "".join(literals)
        k = 0
        while k < len(fmt):
            if fmt[k] == "%":
                if k + 1 >= len(fmt) or fmt[k + 1] not in KNOWN:
                    out.append((src.count("\n", 0, m.start()) + 1, m.group(1), fmt))
                    break
                k += 2
            else:
                k += 1
    return out


def check(root):
    bad = 0
    for d in DIRS:
        for dp, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dp, f)
                for line, fn, fmt in bad_calls(open(path, errors="replace").read()):
                    print(f"{os.path.relpath(path, root)}:{line}: {fn} format {fmt!r} holds a "
                          f"conversion lua_pushfstring does not know (it knows %% %s %f %I %p "
                          f"%d %c %U, without flags, width or precision)")
                    bad += 1
    return bad


def self_test():
    src = ('luaL_error(L, "node %lld is " "not here", (long long)id);\n'
           'lua_pushfstring(L, "%zu bytes", n);\n'
           'luaL_error(L, "%.80s: x", s);\n'
           'lua_pushfstring(L, "%s: %g", f(a, b), x);\n'
           'luaL_error(L, "node %I of %d: %s (100%%)", id, n, s);\n'
           'lua_pushfstring(L, fmt, x);\n'
           'luaL_error(L, "%s", g("%lld", 1));\n')
    found = [line for line, _, _ in bad_calls(src)]
    if found != [1, 2, 3, 4]:
        print(f"self-test: found bad formats on lines {found}, wanted [1, 2, 3, 4]")
        return 1
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "sim"))
        open(os.path.join(t, "sim", "x.c"), "w").write(src)
        if check(t) != 4:
            return 1
    print("self-test: ok")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    n = check(sys.argv[1])
    print(f"{n} bad Lua format(s)" if n else "every Lua format string uses known conversions")
    sys.exit(1 if n else 0)
