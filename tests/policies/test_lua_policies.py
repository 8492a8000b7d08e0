#!/usr/bin/python3
"""Policies written in Lua (flashspec.policy.lua).

usage: test_lua_policies.py CASE    (FLASHSPEC_BIN, FLASHSPEC_HOME from the environment)

  differential  the Lua ports in examples/policies (Chain-SD, SpecInfer) give
                the same result rows as the built-in C policies -- every
                column but the policy's name and parameters -- on the bundled
                workload traces, at -j 1 and -j 2 alike
  errors        a Lua error in a hook fails the point with one line naming the
                file, line and hook; a broken policy file is one line at the
                script line that loads it; limits hold inside hooks
"""
import csv
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
EX = os.path.join(HOME, "examples", "policies")

HEAD = """local fs = flashspec
local traces = {}
for _, w in ipairs { "code-strong", "code-weak", "math-strong", "math-weak",
                     "dialogue-strong", "dialogue-weak" } do
  traces[#traces + 1] = fs.trace("traces/data/workload-" .. w .. ".h5")
end
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", trace = traces,
               max_new_tokens = 128, dram_fraction = { 0, 0.5 } }
local function with(p) local t = {} for k, v in pairs(base) do t[k] = v end
  t.policy = p return t end
"""


ONE = HEAD.replace("trace = traces", "trace = traces[1]").replace(
    "dram_fraction = { 0, 0.5 }", "dram_fraction = 0")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def run(script_text, d, name, *args):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(script_text)
    out = os.path.join(d, "out-" + name)
    p = subprocess.run([BIN, "run", path, "-q", "-o", out, *args], cwd=HOME,
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr, out


def rows(out):
    with open(os.path.join(out, "results.csv"), newline="") as f:
        return list(csv.DictReader(f))


def case_differential():
    pairs = [
        ("fs.policy.chain { k = 8 }", f'fs.policy.lua("{EX}/chain.lua", {{ k = 8 }})'),
        ("fs.policy.chain { k = 16 }", f'fs.policy.lua("{EX}/chain.lua", {{ k = 16 }})'),
        ('fs.policy.chain { k = 3, unit = "npu" }',
         f'fs.policy.lua("{EX}/chain.lua", {{ k = 3, unit = "npu" }})'),
        ("fs.policy.specinfer {}", f'fs.policy.lua("{EX}/specinfer.lua")'),
        ('fs.policy.specinfer { widths = { 2, 2, 2, 1 }, unit = "cpu" }',
         f'fs.policy.lua("{EX}/specinfer.lua", {{ widths = "2,2,2,1", unit = "cpu" }})'),
    ]
    src = HEAD + "fs.sweep(with { " + ", ".join(c for c, _ in pairs) + " })\n" + \
        "fs.sweep(with { " + ", ".join(l for _, l in pairs) + " })\n"
    with tempfile.TemporaryDirectory() as d:
        outs = []
        for j in ("1", "2"):
            rc, _, err, out = run(src, d, f"diff{j}.lua", "-j", j)
            expect(rc == 0, f"-j {j}: exit {rc}: {err}")
            outs.append(open(os.path.join(out, "results.csv"), "rb").read())
        expect(outs[0] == outs[1], "Lua policies: results differ between -j 1 and -j 2")
        rs = rows(out)
        half = len(rs) // 2
        expect(half == len(pairs) * 6 * 2, f"{len(rs)} rows")
        # the bootstrap interval resamples prompts with a stream seeded by the
        # point id, which names the policy: the one pair of columns a port
        # cannot share (the per-prompt figures it resamples are equal); and
        # tree_nodes, the tree size the built-in's table maps (a port that
        # declares no tree_nodes parameter reports none)
        skip = {"policy", "policy_params", "tokens_per_s_lo", "tokens_per_s_hi", "tree_nodes"}
        for a, b in zip(rs[:half], rs[half:]):
            expect(b["policy"] in ("chain_lua", "specinfer_lua"), b["policy"])
            for k in a:
                # a port's label names the parameters it was given
                if k not in skip and not k.startswith("param_"):
                    expect(a[k] == b[k], f"{a['policy']} {a['policy_params']} vs {b['policy']} "
                                         f"{b['policy_params']} on {a['trace']}: column {k}: "
                                         f"{a[k]} != {b[k]}")
        print(f"lua policies: {half} point pairs identical in every column, -j 1 == -j 2")


def one_line(err, rc, code, *needles):
    lines = [l for l in err.splitlines() if l.strip() and "warning:" not in l]
    expect(rc == code, f"exit {rc}, wanted {code}: {err!r}")
    expect(len(lines) == 1, f"not one line: {lines!r}")
    for n in needles:
        expect(re.search(n, lines[0]), f"{lines[0]!r} lacks {n!r}")


def case_errors():
    with tempfile.TemporaryDirectory() as d:
        def pol(name, text):
            p = os.path.join(d, name)
            open(p, "w").write(text)
            return p
        boom = pol("boom.lua", 'local P = {}\nfunction P.build(tree, draft, lim)\n'
                               '  draft:expand(0, "cpu")\n  error("no tree today")\nend\nreturn P\n')
        src = ONE + \
            f'local r = fs.run(with(fs.policy.lua("{boom}")))\n'
        rc, _, err, out = run(src, d, "s1.lua")
        one_line(err, rc, 78, r"boom\.lua:4: no tree today", r"build", r"prompt 0, position 0")
        expect(not os.path.exists(os.path.join(out, "results.csv")), "results written")
        # a failing point in a sweep fails alone, with its own line
        src = ONE + \
            f'local r = fs.sweep(with {{ fs.policy.chain {{}}, fs.policy.lua("{boom}") }})\n' + \
            'assert(r[1].tokens_per_s > 0 and r[2].error:find("no tree today"))\n'
        rc, _, err, out = run(src, d, "s2.lua")
        expect(rc == 78 and len(re.findall(r"point 2 of 2 failed: .*: build: .*boom\.lua:4: "
                                          r"no tree today", err)) == 1, f"sweep: {rc} {err!r}")
        expect(len(rows(out)) == 1, "the good point's row is written")
        # broken files: one line at the loading script's line
        for name, text, needle in (
                ("syntax.lua", "local P = {\nreturn P\n", r"syntax\.lua:2:"),
                ("nobuild.lua", "return { name = 'x' }\n", "has no build function"),
                ("notable.lua", "return 42\n", "must return a table of hooks"),
                ("badhook.lua", "return { build = function() end, prune = 3 }\n",
                 "hook 'prune' must be a function"),
                ("badparam.lua", "local p = ...\nassert(p.k == nil, 'k not allowed')\n"
                                 "return { build = function() end }\n", "k not allowed")):
            p = pol(name, text)
            src = HEAD + f'local pol = fs.policy.lua("{p}", {{ k = 1 }})\n'
            rc, _, err, out = run(src, d, "load-" + name)
            one_line(err, rc, 78, r"load-" + re.escape(name) + r":12: flashspec\.policy\.lua: ",
                     needle)
        rc, _, err, out = run(HEAD + 'local p = fs.policy.lua("nope.lua")\n', d, "missing.lua")
        one_line(err, rc, 66, r"missing\.lua:12: .*'nope\.lua' not found")
        rc, _, err, out = run(HEAD + f'local p = fs.policy.lua("{boom}", {{ t = {{}} }})\n', d,
                              "tblparam.lua")
        one_line(err, rc, 78, "param 't' must be a finite number, a string or a boolean")
        # the instruction limit holds inside a hook
        spin = pol("spin.lua", "return { build = function() while true do end end }\n")
        src = ONE + \
            f'local r = fs.run(with(fs.policy.lua("{spin}")))\n'
        rc, _, err, out = run(src, d, "s3.lua", "--max-instructions", "2000000")
        one_line(err, rc, 78, r"spin\.lua:1: instruction limit", "build")
        # an edited policy file is a new point (its hash is in the id)
        ok = pol("ok.lua", open(os.path.join(EX, "chain.lua")).read())
        src = ONE + \
            f'local r = fs.run(with(fs.policy.lua("{ok}", {{ k = 4 }})))\nprint(r.point_id)\n'
        rc, id1, err, _ = run(src, d, "s4.lua")
        expect(rc == 0, err)
        open(ok, "a").write("-- edited\n")
        rc, id2, err, _ = run(src, d, "s4.lua")
        expect(rc == 0 and id1 != id2, f"an edited file kept its point id: {id1} {id2}")
        # read once: the bytes hashed into the id are the bytes every point runs.
        # The script loads the policy, says so on stderr (a warning), spins ~1 s,
        # then runs it; meanwhile the file is replaced by one that fails.  The
        # row must be the original file's (its point id and figures).
        ro = pol("readonce.lua", open(os.path.join(EX, "chain.lua")).read())
        rc, want, err, _ = run(ONE + f'local r = fs.run(with(fs.policy.lua("{ro}", {{ k = 4 }})))\n'
                               'print(r.point_id, r.tokens_per_s)\n', d, "s5a.lua")
        expect(rc == 0, err)
        src = ONE + f'local pol = fs.policy.lua("{ro}", {{ k = 4 }})\n' + \
            'local w = with(fs.policy.flash_ar {}) w.max_new_tokens = 100000 w.prompts = 1\n' \
            'fs.run(w)\n' \
            'local x = 0 for i = 1, 2e8 do x = x + i if os.clock() > 1.0 then break end end\n' \
            'local r = fs.run(with(pol))\nprint(r.point_id, r.tokens_per_s)\n'
        path = os.path.join(d, "s5b.lua")
        open(path, "w").write(src)
        q = subprocess.Popen([BIN, "run", path, "-q", "-o", os.path.join(d, "out-s5b")],
                             cwd=HOME, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = q.stderr.readline()
        expect("max_new_tokens = 100000" in line, f"no warning first: {line!r}")
        open(ro, "w").write('return { name = "chain_lua", build = function() error("edited") end }\n')
        so, rest = q.communicate(timeout=300)
        expect(q.returncode == 0 and so == want,
               f"the edited file ran under the loaded one's id: exit {q.returncode}, "
               f"{so!r} vs {want!r}, {rest!r}")
        # hook outputs are checked against the tree: a plan's rows below the
        # verified nodes or beyond any verification, a tree changed outside build,
        # duplicate expand ids, drafting without a draft -- each one line, 78,
        # naming the hook and the field (was: priced as given, or exit 70)
        chain6 = ("local P = { name = 'c6' }\nfunction P.build(tree, draft, lim)\n"
                  "  local tip = 0\n  for _ = 1, math.min(6, lim.remaining - 1) do\n"
                  "    draft:expand(tip, 'cpu')\n    local tok, lq = tree:cand(tip, 1)\n"
                  "    tip = tree:add(tip, tok, lq)\n  end\nend\n")
        for name, extra, needle in (
                ("plan_rows1.lua", "function P.plan(tree, keep) return { rows = 1 } end\n",
                 r"plan: rows = 1 is outside \[7, \d+\]"),
                ("plan_rows_huge.lua", "function P.plan(tree, keep) return { rows = 100000 } end\n",
                 r"plan: rows = 100000 is outside"),
                ("plan_rows_max.lua", "function P.plan(tree, keep) return { rows = 2147483647 } end\n",
                 r"plan: rows = 2147483647 is outside"),
                ("plan_exit.lua", "function P.plan(tree, keep) return { exit_layer = 99 } end\n",
                 r"plan: exit_layer = 99 is not -1 \(none\) or a layer in \[0, 36\)"),
                ("plan_leaves.lua", "function P.plan(tree, keep) return { leaves = 0 } end\n",
                 r"plan: leaves = 0 is outside \[1, 7\]"),
                ("plan_add.lua", "function P.plan(tree, keep) tree:add(0, 5, -1) end\n",
                 r"plan: .*tree:add: the tree is read-only outside build and provisional"),
                ("prune_rm.lua", "function P.prune(tree, target) tree:remove({ [1] = true }) end\n",
                 r"prune: .*tree:remove: the tree is read-only"),
                # a node id that is not in the tree names the id (was: "invalid
                # option '%l' to 'lua_pushfstring'", a format Lua does not know)
                ("add_999.lua", "function P.build(tree) tree:add(999, 1, 0) end\n",
                 r"build: .*add_999\.lua:\d+: node 999 is not in the tree \(size 1\)"),
                ("parent_neg.lua", "function P.build(tree) tree:parent(-5) end\n",
                 r"build: .*node -5 is not in the tree \(size 1\)")):
            f = pol(name, chain6 + extra + "return P\n")
            rc, _, err, out = run(ONE + f'local r = fs.run(with(fs.policy.lua("{f}")))\n', d,
                                  "run-" + name)
            one_line(err, rc, 78, needle)
        # an endless loop in reset is reported as reset's, not as the next hook's
        rspin = pol("rspin.lua", chain6 + "function P.reset() while true do end end\nreturn P\n")
        rc, _, err, out = run(ONE + f'local r = fs.run(with(fs.policy.lua("{rspin}")))\n', d,
                              "run-rspin.lua", "--max-instructions", "2000000")
        one_line(err, rc, 78, r": reset: .*rspin\.lua:\d+: instruction limit")
        nodraft = pol("nodraft.lua", "return { name = 'nd', needs_draft = false, build = "
                                     "function(tree, draft) draft:expand(0, 'cpu') end }\n")
        dup = pol("dup.lua", "return { name = 'dup', build = function(tree, draft) "
                             "local ids = {} for i = 1, 4096 do ids[i] = 0 end "
                             "draft:expand(ids, 'cpu') end }\n")
        for f, needle in ((nodraft, r"build: .*draft:expand: this policy declares needs_draft = "
                                    r"false"),
                          (dup, r"build: .*draft:expand: node 0 is given more than once")):
            rc, _, err, out = run(ONE + f'local r = fs.run(with(fs.policy.lua("{f}")))\n', d,
                                  "run-" + os.path.basename(f))
            one_line(err, rc, 78, needle)
        # one memory limit for the run: the script's heap and every point's policy
        # state share --max-memory-mb (was: each state had the whole limit, so a
        # 100 MiB run peaked at 221 MB at -j 1 and 423 MB at -j 2)
        hog = pol("hog.lua", "local keep\nreturn { name = 'hog', build = function(tree, draft) "
                             "keep = keep or string.rep('x', 40 << 20) end }\n")
        small = ('local fs = flashspec\nlocal function go(pol) return fs.run { device = '
                 'fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0", draft = fs.model '
                 '"qwen3-8b-eagle3-q4_0", trace = fs.trace "traces/data/synth-small.h5", '
                 'max_new_tokens = 8, policy = pol } end\n')
        for held, code in (("", 0), ("local ballast = string.rep('y', 35 << 20)\n", 78)):
            src = small + held + f'local r = go(fs.policy.lua("{hog}"))\n' + \
                ("assert(#ballast > 0)\n" if held else "")
            rc, _, err, out = run(src, d, f"hog-run{code}.lua", "--max-memory-mb", "100")
            if code == 0:
                expect(rc == 0, f"40 MiB in one policy state under 100 MiB: {rc} {err}")
            else:
                one_line(err, rc, 78, r"build: the run's memory limit of 100 MiB is reached "
                                      r"\(the script and every point's policy state share it")
        # too large to be a policy: one line (the old hash stopped at 64 MiB)
        big = pol("big.lua", "return { build = function() end }\n" + "-" * (17 << 20) + "\n")
        rc, _, err, out = run(HEAD + f'local p = fs.policy.lua("{big}")\n', d, "big-load.lua")
        one_line(err, rc, 66, r"big-load\.lua:12: flashspec\.policy\.lua: .*big\.lua' is larger "
                              r"than 16 MiB")
        os.unlink(big)
        # declared params: checked before any point runs; listed by `policies FILE`
        for args, needle in (("{ kk = 3 }", r"unknown param 'kk' \(did you mean 'k'\?\)"),
                             ("{ k = 300 }", r"param 'k' = 300\.0 is out of range"),
                             ("{ k = 2.5 }", r"param 'k' must be an integer"),
                             ('{ unit = "gpu" }', r"param 'unit' is not one of its choices")):
            rc, _, err, out = run(HEAD + f'local p = fs.policy.lua("{EX}/chain.lua", {args})\n',
                                  d, "decl.lua")
            one_line(err, rc, 78, r"decl\.lua:12: flashspec\.policy\.lua: " + needle)
        p = subprocess.run([BIN, "policies", os.path.join(EX, "chain.lua")], capture_output=True,
                           text=True, timeout=60)
        expect(p.returncode == 0 and p.stdout.startswith("chain_lua: Lua policy") and
               re.search(r"^\s+k\s+8\s+integer 1\.\.64\s+draft tokens", p.stdout, re.M),
               f"policies FILE: {p.returncode} {p.stdout!r} {p.stderr!r}")
        p = subprocess.run([BIN, "policies", os.path.join(d, "nobuild.lua")], capture_output=True,
                           text=True, timeout=60)
        expect(p.returncode == 78 and "has no build function" in p.stderr, p.stderr)
        # hostile tables: a metamethod that errors or never ends, or values that
        # are not plain, is one line and exit 78 in `run` and in `policies FILE`,
        # never a crash (every read of the user's tables is protected and charged)
        for name, text, needle in (
                ("idx_error.lua", 'return setmetatable({build=function() end},{__index='
                                  'function(t,k) if k=="params" then return nil end '
                                  'error("no hook "..k) end})\n', r"idx_error\.lua:1: no hook"),
                ("idx_loop.lua", "return setmetatable({build=function() end},{__index="
                                 "function() while true do end end})\n", "instruction limit"),
                ("spec_error.lua", 'local s = setmetatable({}, {__index=function(t,k) '
                                   'error("spec "..k) end})\n'
                                   "return { build = function() end, params = { k = s } }\n",
                 r"spec_error\.lua:1: spec default"),
                ("spec_loop.lua", "local s = setmetatable({}, {__index=function() "
                                  "while true do end end})\n"
                                  "return { build = function() end, params = { k = s } }\n",
                 "instruction limit"),
                ("spec_table.lua", "return { build = function() end, params = { k = "
                                   "{ default = setmetatable({}, {__tostring = function() "
                                   "error('x') end}) } } }\n",
                 r"param 'k': default must be a number, string or boolean"),
                ("name_table.lua", "return { build = function() end, name = {} }\n",
                 r"name must be a number, string or boolean"),
                ("name_bytes.lua", "return { build = function() end, name = 'a b\\1\\255' }\n",
                 r"its policy name must be 1 to 63 letters, digits, '_', '-' or '\.'")):
            f = pol(name, text)
            src = HEAD + f'local pol = fs.policy.lua("{f}")\n'
            rc, _, err, out = run(src, d, "load-" + name, "--max-instructions", "2000000")
            one_line(err, rc, 78, r"load-" + re.escape(name) + r":12: flashspec\.policy\.lua: ",
                     needle)
            q = subprocess.run([BIN, "policies", f], capture_output=True, text=True, timeout=120)
            lines = q.stderr.strip().splitlines()
            expect(q.returncode == 78 and len(lines) == 1 and re.search(needle, lines[0]),
                   f"policies {name}: exit {q.returncode}, {q.stderr!r}")
        # a Lua policy may not pass for another policy: a built-in's name, given
        # or taken from the file name, is one line and exit 78 (and in `policies FILE`)
        for name, text, needle in (
                ("named_ar.lua", 'return { name = "flash_ar", build = function() end }\n',
                 r"policy name 'flash_ar' is already a policy's name"),
                ("lua.lua", 'return { name = "lua", build = function() end }\n',
                 r"policy name 'lua' is already"),
                ("lever.lua", "return { build = function() end }\n",
                 r"its file name 'lever' is already a policy's name")):
            f = pol(name, text)
            rc, _, err, out = run(HEAD + f'local pol = fs.policy.lua("{f}")\n', d,
                                  "load-" + name)
            one_line(err, rc, 78, r"load-" + re.escape(name) + r":12: flashspec\.policy\.lua: ",
                     needle)
        q = subprocess.run([BIN, "policies", os.path.join(d, "named_ar.lua")],
                           capture_output=True, text=True, timeout=60)
        expect(q.returncode == 78 and "already a built-in policy's name" in q.stderr,
               f"policies named_ar.lua: {q.returncode} {q.stderr!r}")
        print("lua policy errors: one line each, file:line and hook named")


# Hooks whose work a VM instruction count cannot see (the build hook spins):
# (name, file top, loop body)
HOOK_ESCAPES = (
    ("utf8", 'local s = string.rep("a", 16 << 20)\n', "local n = utf8.len(s)"),
    ("eq", 'local s, t = string.rep("a", 16 << 20), string.rep("a", 16 << 20)\n',
     "local e = s == t"),
    ("move", "", "table.move({}, 1, 1e15, 2)"),
    ("rep", "", 'local e = string.rep("", 1e15)'),
)


def case_limits():
    """Inside a Lua policy's hook, during `flashspec sweep -j 2`: work the
    instruction count cannot see (utf8.len and == on 16 MiB strings,
    table.move over 1e15 elements, string.rep of an empty string) counts
    against --max-instructions -- each Lua point fails with one line naming
    the hook, the other points are written -- and one SIGTERM ends the sweep
    within 2 s (exit 130), the finished points saved.  Times are printed."""
    bound_s = 2.0
    with tempfile.TemporaryDirectory() as d:
        for name, top, body in HOOK_ESCAPES:
            pol = os.path.join(d, f"spin_{name}.lua")
            open(pol, "w").write(top + f'return {{ name = "spin_{name}", build = function() '
                                 f"while true do {body} end end }}\n")
            src = ('local fs = flashspec\nfs.sweep { device = fs.device "oneplus12", '
                   'target = fs.model "qwen3-8b-q4_0", draft = fs.model "qwen3-8b-eagle3-q4_0", '
                   'trace = fs.trace "traces/data/synth-small.h5", max_new_tokens = 8, '
                   f'policy = {{ fs.policy.chain {{ k = 4 }}, fs.policy.lua("{pol}") }}, '
                   "dram_fraction = { 0, 0.5 } }\n")
            path = os.path.join(d, f"sweep_{name}.lua")
            open(path, "w").write(src)
            out = os.path.join(d, "o-" + name)
            t0 = time.monotonic()
            p = subprocess.run([BIN, "sweep", path, "-q", "-j", "2", "-o", out,
                                "--max-instructions", "20000000"], cwd=HOME, capture_output=True,
                               text=True, timeout=300)
            dt = time.monotonic() - t0
            failed = re.findall(rf"point \d of 4 failed: .*: build: .*spin_{name}\.lua:\d+: "
                                r"(instruction limit of 20000000 exceeded|.*this call could "
                                r"take up to)", p.stderr)
            expect(p.returncode == 78 and len(failed) == 2, f"{name}: {p.returncode} {p.stderr!r}")
            expect(len(rows(out)) == 2, f"{name}: the chain points' rows")
            out = os.path.join(d, "t-" + name)
            q = subprocess.Popen([BIN, "sweep", path, "-q", "-j", "2", "-o", out], cwd=HOME,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # the chain points take well under a second; the Lua ones never end
            deadline = time.monotonic() + 60
            pts = os.path.join(out, "points")
            while time.monotonic() < deadline and q.poll() is None and \
                    len(os.listdir(pts) if os.path.isdir(pts) else []) < 2:
                time.sleep(0.05)
            time.sleep(0.3)
            expect(q.poll() is None, f"{name}: the sweep ended by itself: {q.returncode}")
            t1 = time.monotonic()
            q.send_signal(signal.SIGTERM)
            try:
                _, err = q.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                q.kill()
                q.communicate()
                raise AssertionError(f"{name}: one SIGTERM did not end the sweep in 30 s")
            st = time.monotonic() - t1
            expect(q.returncode == 130 and "interrupted" in err, f"{name}: {q.returncode} {err!r}")
            expect(st < bound_s, f"{name}: one SIGTERM took {st:.2f} s")
            expect(len(os.listdir(pts)) == 2, f"{name}: the chain points are saved")
            print(f"hook escape {name}: --max-instructions 2e7: {dt:.2f} s; SIGTERM to exit "
                  f"during sweep -j 2: {st:.3f} s")


def case_tune():
    """flashspec.tune searches a Lua policy's declared params as a built-in's:
    the Lua port of Chain-SD tuned over k (an integer range, a discrete set of
    its unit choices) picks the knobs and training value the built-in does;
    an undeclared knob names the nearest declared one; a value outside the
    declaration is refused."""
    src = ONE + """
local function tuned(pol)
  local w = with(pol)
  w.knobs = { k = { 1, 12 }, unit = { values = { "cpu", "npu" } } }
  w.holdout = 0.5
  w.dram_fraction = { 0, 0.5 }
  return fs.tune(w)
end
local c = tuned(fs.policy.chain { k = 4 })
local l = tuned(fs.policy.lua("%s/chain.lua", { k = 4 }))
for i = 1, 2 do
  assert(c[i].tuned.k == l[i].tuned.k and c[i].tuned.unit == l[i].tuned.unit,
         ("point %%d: C k=%%s unit=%%s, Lua k=%%s unit=%%s"):format(i, c[i].tuned.k,
         c[i].tuned.unit, l[i].tuned.k, l[i].tuned.unit))
  assert(c[i].tune_train == l[i].tune_train and c[i].tokens_per_s == l[i].tokens_per_s)
  assert(l[i].policy == "chain_lua" and l[i].policy_params:find("k=" .. l[i].tuned.k, 1, true))
  print(l[i].tuned.k, l[i].tuned.unit, l[i].tune_evals)
end
""" % EX
    with tempfile.TemporaryDirectory() as d:
        rc, so, err, out = run(src, d, "tune.lua")
        expect(rc == 0, f"tune over a Lua policy: {rc} {err}")
        print(so.strip())
        for knobs, needle in (("{ kk = { 1, 4 } }", r"policy chain_lua has no knob 'kk' "
                                                   r"\(did you mean 'k'\?\)"),
                              ("{ k = { 1, 300 } }",
                               r"knob 'k': 300 is outside the parameter's range \[1, 64\]"),
                              ("{ unit = { values = { 'gpu' } } }", r"'gpu' is not one of")):
            src = HEAD + (f'local w = with(fs.policy.lua("{EX}/chain.lua"))\n'
                          f'w.knobs = {knobs}\nlocal r = fs.tune(w)\n')
            rc, _, err, out = run(src, d, "tbad.lua")
            one_line(err, rc, 78, r"tbad\.lua:14: flashspec\.tune: ", needle)
    print("lua policy tune: ok")


def case_api():
    """tree:remove drops nodes with their subtrees and renumbers the rest."""
    pol = """local P = { name = "pool_lua" }
function P.build(tree, draft, lim)
  draft:expand(0, "cpu")
  local kids = {}
  for j = 1, math.min(3, tree:ncands(0)) do
    local tok, lp = tree:cand(0, j)
    kids[#kids + 1] = tree:add(0, tok, lp)
  end
  draft:expand(kids, "cpu")
  for _, u in ipairs(kids) do
    local tok, lp = tree:cand(u, 1)
    if tok then tree:add(u, tok, lp) end
  end
  local before = tree:size()
  local map = tree:remove { [kids[2]] = true, [0] = true }
  assert(tree:size() == before - 2, "a child and its grandchild dropped, never the root")
  assert(map[kids[2]] == nil and map[0] == 0 and map[kids[3]] == kids[2], "renumbered")
  assert(tree:parent(map[kids[3]]) == 0 and tree:depth(tree:size() - 1) == 2)
end
return P
"""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "pool.lua")
        open(p, "w").write(pol)
        rc, so, err, out = run(ONE + f'local r = fs.run(with(fs.policy.lua("{p}")))\n'
                               'print(r.verify_rows)\n', d, "api.lua")
        expect(rc == 0 and float(so.split()[0]) == 5.0, f"{rc} {so!r} {err!r}")
        # reals in a Lua policy's params are written as the shortest decimal
        # that reads back the same, kept floats (was: hex, 0x1.999999999999ap-4)
        decl = os.path.join(d, "decl.lua")
        open(decl, "w").write(
            'local p = ...\nassert(math.type(p.y) == "float" and p.x == 0.1 and p.z == 1/3)\n'
            'return { name = "decl", build = function() end, params = {\n'
            '  x = { default = 0.5, doc = "x" }, y = { default = 1.5, doc = "y" },\n'
            '  z = { default = 0.5, doc = "z" }, w = { default = 1, doc = "w" } } }\n')
        rc, so, err, out = run(ONE + f'local r = fs.run(with(fs.policy.lua("{decl}", '
                               '{ x = 0.1, y = 2.0, z = 1/3, w = 1e300 })))\n'
                               'print(r.policy_params)\n', d, "reals.lua")
        expect(rc == 0 and so.strip() == "w=1e+300,x=0.1,y=2.0,z=0.3333333333333333",
               f"reals: {rc} {so!r} {err!r}")
    print("lua policy api: tree:remove keeps the root, drops subtrees, renumbers")


if __name__ == "__main__":
    {"differential": case_differential, "errors": case_errors, "api": case_api,
     "tune": case_tune, "limits": case_limits}[sys.argv[1]]()
