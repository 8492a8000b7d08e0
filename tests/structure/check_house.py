#!/usr/bin/python3
"""The house rules of sim/: layers, one status space, policy knowledge in the
policies, the Lua folder as a binding.

  check_house.py SRC_ROOT
      checks the C files (.c, .h) under engine/, traces/ and sim/ and prints
      each breach as FILE:LINE: RULE; fails when there is one:
        exit-codes    FS_EXIT_* appears only in sim/sim_status.{c,h}, the one
                      mapping from statuses to exit codes
        exit-mapping  sim_status_exit() is called only by sim/cli/main.c (the
                      command's status) and by sim/lua (the `code` of an error
                      object or failed point a script reads)
        layers        a sim/ folder includes only folders below it (LAYERS);
                      engine/ includes nothing of sim/ or traces/, traces/
                      nothing of sim/
        policy-names  no string literal in sim/ names a built-in policy (the
                      names of engine/policies.def, and the papers' spellings
                      in DISPLAY): a policy's knowledge lives in its
                      descriptor; "chain", also an English word, only as a
                      whole literal
        lua-binding   every .c file of sim/lua uses the Lua C API (calls it or
                      works on a lua_State)
        raise         sim/lua has one raise helper, fs_raise: no other
                      function whose name ends in "raise" is defined in sim/
  check_house.py --self-test
      plants each breach (and a near miss of each) in a scratch tree and
      expects exactly the breaches
"""
import os
import re
import sys
import tempfile

# Folder ranks: a folder includes only folders of a lower rank ("" is sim/
# itself: the status space and point identities).
LAYERS = {"": 0, "des": 1, "hw": 2, "config": 3, "replay": 3, "out": 4, "sweep": 5,
          "fit": 6, "lpolicy": 6, "lua": 7, "cli": 8}
DISPLAY = ("Flash-AR", "Chain-SD", "EdgeLLM", "SpecInfer", "Sequoia", "Lyanna", "Lever",
           "EAGLE-2", "Big Little Decoder")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
RAISE_DEF = re.compile(r"^[A-Za-z_][\w \*]*?\b(\w*raise)\s*\(", re.M)


def c_files(root, top):
    out = []
    for dp, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        out += [os.path.join(dp, f) for f in sorted(files) if f.endswith((".c", ".h"))]
    return out


def split_code(text):
    """(code with comments blanked, [(line, literal text)]) of a C source."""
    code, lits, i, n = [], [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            code.append("\n" * text.count("\n", i, j))
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text[i] in "\"'":
            j = i + 1
            while j < n and text[j] != text[i] and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            if text[i] == '"':
                lits.append((text.count("\n", 0, i) + 1, text[i + 1:j - 1]))
            code.append(text[i:j])
        else:
            j = i + 1
            code.append(text[i])
        i = j
    return "".join(code), lits


def policy_names(root):
    with open(os.path.join(root, "engine", "policies.def"), encoding="utf-8") as f:
        return re.findall(r"^ENG_POLICY\((\w+)\)", f.read(), re.M)


def breaches(root):
    out = []
    names = policy_names(root)
    words = [n for n in names if n != "chain"]
    word_re = re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, words)) + r")(?![\w-])")
    disp_re = re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, DISPLAY)) + r")(?![\w])")
    for top in ("engine", "traces", "sim"):
        for path in c_files(root, top):
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            code, lits = split_code(text)
            parts = rel.split(os.sep)
            folder = parts[1] if top == "sim" and len(parts) > 2 else ""
            for k, ln in enumerate(code.split("\n"), 1):
                if "FS_EXIT_" in ln and rel not in ("sim/sim_status.c", "sim/sim_status.h"):
                    out.append((rel, k, "exit-codes"))
                if re.search(r"\bsim_status_exit\s*\(", ln) and top == "sim" and \
                        rel not in ("sim/sim_status.c", "sim/sim_status.h",
                                    "sim/cli/main.c") and folder != "lua":
                    out.append((rel, k, "exit-mapping"))
            for k, ln in enumerate(text.split("\n"), 1):
                m = INCLUDE.match(ln)
                if not m:
                    continue
                inc = m.group(1).split("/")
                if top == "engine" and inc[0] in ("sim", "traces"):
                    out.append((rel, k, "layers"))
                elif top == "traces" and inc[0] == "sim":
                    out.append((rel, k, "layers"))
                elif top == "sim" and inc[0] == "sim":
                    dest = inc[1] if len(inc) > 2 else ""
                    if dest != folder and LAYERS.get(dest, 99) >= LAYERS.get(folder, -1):
                        out.append((rel, k, "layers"))
            if top == "sim":
                for k, lit in lits:
                    if lit in names or word_re.search(lit) or disp_re.search(lit):
                        out.append((rel, k, "policy-names"))
                for m in RAISE_DEF.finditer(code):
                    if m.group(1) != "fs_raise" and m.group(1) != "raise":
                        k = code.count("\n", 0, m.start()) + 1
                        line_text = code.split("\n")[k - 1]
                        if not line_text.rstrip().endswith(";"):
                            out.append((rel, k, "raise"))
            if top == "sim" and folder == "lua" and path.endswith(".c") and \
                    not re.search(r"\blua[L]?_\w+", code):
                out.append((rel, 1, "lua-binding"))
    return sorted(set(out))


def self_test():
    files = {
        "engine/policies.def": "ENG_POLICY(flash_ar)\nENG_POLICY(chain)\nENG_POLICY(lever)\n",
        "engine/e.c": '#include "engine/eng.h"\n#include "sim/hw/x.h"\n',
        "traces/t.c": '#include "traces/trc.h"\n#include "sim/sim_status.h"\n',
        "sim/sim_status.c": "int x = FS_EXIT_OK;\nint sim_status_exit(int s) { return s; }\n",
        "sim/hw/h.c": ('#include "sim/des/d.h"\n#include "sim/replay/r.h"\n'
                       'int a = FS_EXIT_DATA; /* FS_EXIT_USAGE in a comment */\n'
                       'const char *s = "base chain deeper";\n'
                       'const char *t = "chain";\nconst char *u = "leverage, lever";\n'
                       'const char *v = "EdgeLLM\'s pacer";\n'),
        "sim/out/o.c": ('#include "sim/replay/r.h"\n#include "sim/config/c.h"\n'
                        'int f(int s) { return sim_status_exit(s); }\n'),
        "sim/replay/r.c": '#include "sim/config/c.h"\n#include "sim/hw/h.h"\n',
        "sim/cli/main.c": ('#include "sim/lua/api.h"\n'
                           'int main(void) { return sim_status_exit(0); }\n'),
        "sim/lua/a.c": ('#include "sim/cli/c.h"\n#include "sim/fit/f.h"\n'
                        'int fs_raise(lua_State *L) { return lua_error(L); }\n'
                        'static int tune_raise(lua_State *L)\n{\n    return fs_raise(L);\n}\n'
                        'int fs_cal_raise(void);\n'
                        'int g(int s) { return sim_status_exit(s); }\n'),
        "sim/lua/b.c": 'static int plain(int x)\n{\n    return x; /* lua_error(L) */\n}\n',
        "sim/lua/c.c": 'static int st(lua_State *L)\n{\n    return L != 0;\n}\n',
    }
    want = [("engine/e.c", 2, "layers"), ("sim/hw/h.c", 2, "layers"),
            ("sim/hw/h.c", 3, "exit-codes"), ("sim/hw/h.c", 5, "policy-names"),
            ("sim/hw/h.c", 6, "policy-names"), ("sim/hw/h.c", 7, "policy-names"),
            ("sim/lua/a.c", 1, "layers"), ("sim/lua/a.c", 4, "raise"),
            ("sim/lua/b.c", 1, "lua-binding"), ("sim/out/o.c", 3, "exit-mapping"),
            ("sim/replay/r.c", 1, "layers"), ("traces/t.c", 2, "layers")]
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                f.write(text)
        found = breaches(tmp)
    ok = found == sorted(want)
    print("self-test:", "ok" if ok else f"FAIL: found {found}, want {sorted(want)}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = breaches(sys.argv[1])
    for rel, k, rule in found:
        print(f"{rel}:{k}: {rule}")
    print(f"{len(found)} breach(es) of the house rules")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
