#!/usr/bin/python3
"""End-to-end tests of the flashspec command line.

Each test case is one function; meson runs them one by one
(`test_cli.py CASE`).  The binary comes from $FLASHSPEC_BIN, the project root
from $FLASHSPEC_HOME.  Every failure case checks the documented exit code, that
stderr is exactly one line naming the file and place, and that no results file
was left behind.
"""
import csv
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
BAD = os.path.join(HOME, "tests", "data", "bad")
SMALL = os.path.join(HOME, "traces", "data", "synth-small.h5")

# Lever Table 1 (§3): Flash-AR per-token latency on the OnePlus 12.
TABLE1_TOTAL_MS = {"qwen3-8b-q4_0": 1050.0}


def run(*args, cwd=None, env=None):
    env = {**os.environ, **env} if env else None
    p = subprocess.run([BIN, *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def one_line_error(stderr, code, rc, *needles):
    expect(rc == code, f"exit code {rc}, wanted {code}; stderr: {stderr!r}")
    lines = [l for l in stderr.splitlines() if l.strip() and not l.startswith("flashspec: warning:")]
    expect(len(lines) == 1, f"stderr is not one line: {lines!r}")
    expect(lines[0].startswith("flashspec: "), f"error line lacks prefix: {lines[0]!r}")
    for n in needles:
        expect(re.search(n, lines[0]), f"error line {lines[0]!r} lacks {n!r}")


def no_results(d):
    for name in ("results.csv", "results.h5"):
        expect(not os.path.exists(os.path.join(d, name)), f"{name} left behind in {d}")
    if os.path.isdir(d):
        leftovers = [f for f in os.listdir(d) if f.startswith(".") or "tmp" in f]
        expect(not leftovers, f"temporary files left behind: {leftovers}")


def script(name):
    return os.path.join(SCRIPTS, name)


# ------------------------------------------------------------------ basics

def case_version():
    rc, out, _ = run("--version")
    expect(rc == 0 and re.match(r"flashspec \d+\.\d+\.\d+", out), f"--version printed {out!r}")


def case_help():
    for args in (["--help"], ["run", "--help"], ["demo", "--help"], ["trace", "--help"],
                 ["trace", "info", "--help"], ["trace", "check", "--help"],
                 ["trace", "synth", "--help"]):
        rc, out, _ = run(*args)
        expect(rc == 0 and "usage" in out.lower(), f"{args} -> {rc} {out[:80]!r}")


def case_usage_errors():
    for args in (["frobnicate"], ["run"], ["run", "a.lua", "b.lua"], ["run", "--bogus", "x.lua"],
                 ["demo", "extra"], ["trace"], ["trace", "frob"], ["trace", "check"]):
        rc, _, err = run(*args)
        expect(rc == 64, f"{args} -> exit {rc}, wanted 64 ({err!r})")
        expect(err.startswith("flashspec: ") or "usage" in err.lower(), f"{args}: {err!r}")


# --------------------------------------------------------------- good runs

def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def case_run_results():
    with tempfile.TemporaryDirectory() as d:
        rc, out, err = run("run", script("good.lua"), "-o", d, "-q")
        expect(rc == 0, f"run failed {rc}: {err}")
        rows = read_csv(os.path.join(d, "results.csv"))
        expect(len(rows) == 4, f"{len(rows)} rows, wanted 4")
        need = ("policy device target draft trace dram_fraction max_new_tokens tokens_per_s "
                "ms_per_token cycles tokens_per_cycle mean_accepted cycle_ms draft_ms flash_ms "
                "npu_ms cpu_ms verify_ms dram_bytes coverage version script_hash "
                "trace_checksum seed").split()
        for c in need:
            expect(c in rows[0], f"column {c} missing")
        ar = [r for r in rows if r["policy"] == "flash_ar"]
        ch = [r for r in rows if r["policy"] == "chain"]
        expect(len(ar) == 2 and len(ch) == 2, "policies not swept")
        for r in ar:
            expect(float(r["mean_accepted"]) == 0.0, "Flash-AR accepted draft tokens")
            expect(float(r["tokens_per_cycle"]) == 1.0, "Flash-AR emits one token a cycle")
            expect(r["draft"] == "none", "Flash-AR row names a draft")
        for r in ch:
            expect(float(r["tokens_per_cycle"]) > 1.0, "Chain-SD accepted nothing")
            expect(float(r["tokens_per_cycle"]) <= 5.0, "Chain-SD k=4 emitted more than 5")
            expect(abs(float(r["tokens_per_cycle"]) - 1 - float(r["mean_accepted"])) < 1e-9,
                   "tokens_per_cycle != mean_accepted + 1")
        # pinning half of the layers must help Flash-AR
        expect(float(ar[1]["tokens_per_s"]) > float(ar[0]["tokens_per_s"]),
               "DRAM pinning did not speed up Flash-AR")
        expect(os.path.getsize(os.path.join(d, "results.h5")) > 0, "empty results.h5")
        expect(len(out.strip().splitlines()) == 4, "script's own prints missing")


def case_deterministic():
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        for d in (d1, d2):
            rc, _, err = run("run", script("good.lua"), "-o", d, "-q")
            expect(rc == 0, err)
        for name in ("results.csv", "results.h5"):
            a = open(os.path.join(d1, name), "rb").read()
            b = open(os.path.join(d2, name), "rb").read()
            expect(a == b, f"{name} differs between identical runs")


def case_flash_ar_table1():
    src = f"""
local fs = flashspec
local r = fs.run {{ device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  trace = fs.trace "{SMALL}", policy = fs.policy.flash_ar{{}}, max_new_tokens = 16 }}
print(r.ms_per_token)
"""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "t1.lua")
        open(p, "w").write(src)
        rc, out, err = run("run", p, "-o", d, "-q")
        expect(rc == 0, err)
        ms = float(out.strip())
        ref = TABLE1_TOTAL_MS["qwen3-8b-q4_0"]
        expect(abs(ms - ref) / ref < 0.05, f"Flash-AR {ms:.1f} ms/token vs Table 1 {ref}")


def case_demo():
    rc, out, err = run("demo", "-q")
    expect(rc == 0, f"demo failed: {err}")
    for needle in ("flash_ar", "chain", "edgellm", "lever", "speedup", "published", "tok/s",
                   "accepted", "flash", "npu", "Next steps", "scripts/reproduce", "calibrate"):
        expect(needle in out, f"demo output lacks {needle!r}:\n{out}")
    rows = {l.split()[0]: l.split() for l in out.splitlines()
            if l.startswith(("flash_ar ", "chain ", "edgellm ", "lever "))}
    expect(len(rows) == 4, f"demo table rows: {rows}")
    speedup = {k: float(v[2].rstrip("x")) for k, v in rows.items()}
    # the headline of the calibrated phone: Lever fastest, every drafting policy
    # ahead of Flash-AR with the EAGLE-3 draft on the code workload
    expect(speedup["lever"] > max(speedup["chain"], speedup["edgellm"]) > 1.0,
           f"demo speedups: {speedup}")


def case_lua_api():
    with tempfile.TemporaryDirectory() as d:
        rc, out, err = run("run", script("api.lua"), "-o", d, "-q")
        expect(rc == 0 and "api ok" in out, f"api.lua failed ({rc}): {err}")


def case_profile():
    rc, out, err = run("profile", "oneplus12", "qwen3-8b-q4_0", "--draft", "qwen3-8b-eagle3-q4_0")
    expect(rc == 0, f"profile failed: {err}")
    for needle in ("dram plan", "flash read", "npu layer", "draft step", "flash-ar token"):
        expect(needle in out, f"profile output lacks {needle!r}")
    m = re.search(r"flash-ar token\s+([\d.]+) ms = compute ([\d.]+) ms .* I/O ([\d.]+) ms", out)
    expect(m, "no Flash-AR line")
    total, compute, io = map(float, m.groups())
    # Lever Table 1, Qwen3-8B: compute 96.6, I/O 953.4, total 1050.0 ms
    for got, ref in ((total, 1050.0), (compute, 96.6), (io, 953.4)):
        expect(abs(got - ref) / ref < 0.05, f"profile {got} vs Table 1 {ref}")
    rc, _, err = run("profile", "oneplus12", "no-such-model")
    one_line_error(err, 66, rc, "no-such-model")
    rc, _, err = run("profile", "oneplus12")
    one_line_error(err, 64, rc, "DEVICE and MODEL")
    rc, _, err = run("profile", "oneplus12", "qwen3-8b-q4_0", "--dram-fraction", "2")
    one_line_error(err, 64, rc, "dram-fraction")


# ---------------------------------------------------------------- bad input

def run_bad_script(path, code, *needles):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        rc, _, err = run("run", path, "-o", out, "-q")
        one_line_error(err, code, rc, *needles)
        no_results(out)


def bad_trace_case(fname, code, *needles):
    path = os.path.join(BAD, fname)
    rc, _, err = run("trace", "check", path)
    one_line_error(err, code, rc, re.escape(fname), *needles)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "bad.lua")
        open(p, "w").write(f"""local fs = flashspec
fs.run {{ device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  trace = fs.trace "{path}", policy = fs.policy.flash_ar{{}} }}
""")
        run_bad_script(p, code, re.escape(fname), *needles)


def case_bad_truncated():
    bad_trace_case("truncated.h5", 65)


def case_bad_not_hdf5():
    bad_trace_case("not_hdf5.h5", 65)


def case_bad_wrong_version():
    bad_trace_case("wrong_version.h5", 65, "version")


def case_bad_nan_logp():
    bad_trace_case("nan_logp.h5", 65, "logp")


def case_bad_token_ge_vocab():
    bad_trace_case("token_ge_vocab.h5", 65, "vocab")


def case_bad_offsets():
    bad_trace_case("bad_offsets.h5", 65, "offset")


def case_missing_trace():
    rc, _, err = run("trace", "check", "/nonexistent/x.h5")
    one_line_error(err, 66, rc, "x.h5")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.lua")
        open(p, "w").write('local t = flashspec.trace "no-such-trace.h5"\n')
        run_bad_script(p, 66, "m.lua:1", "no-such-trace.h5")


def case_missing_script():
    run_bad_script("/nonexistent/script.lua", 66, "script.lua")


def case_lua_syntax_error():
    run_bad_script(script("syntax_error.lua"), 78, r"syntax_error\.lua:3:")


def case_lua_unknown_key():
    run_bad_script(script("unknown_key.lua"), 78, r"unknown_key\.lua:7:",
                   "dram_fracton", "did you mean 'dram_fraction'")


def case_lua_unknown_policy_key():
    run_bad_script(script("unknown_policy_key.lua"), 78, r"unknown_policy_key\.lua:3:", "'kk'",
                   "did you mean 'k'")


def case_lua_unknown_policy():
    """A policy name the build lacks: one line with the nearest name, or the
    list when none is near; rawget probes without an error."""
    run_bad_script(script("unknown_policy.lua"), 78, r"unknown_policy\.lua:2:",
                   "unknown policy 'eagle_2'", "did you mean 'eagle2'")
    run_bad_script(script("unknown_policy_far.lua"), 78, r"unknown_policy_far\.lua:3:",
                   "unknown policy 'qqqqqqqqqqqq'", "policies: flash_ar, chain", "lever")


def case_profiles():
    """`flashspec profiles` lists every device and model profile with its key
    figures (loaded as a script would); an unknown profile name, on the
    command line or in a script, names the nearest one or lists them all."""
    rc, so, err = run("profiles")
    expect(rc == 0 and err == "", f"profiles: {rc} {err!r}")
    for name in os.listdir(os.path.join(HOME, "configs", "devices")) + \
            os.listdir(os.path.join(HOME, "configs", "models")):
        if name.endswith(".lua"):
            expect(re.search(rf"^{re.escape(name[:-4])}\s", so, re.M), f"{name} not listed")
    row = re.search(r"^oneplus12\s+([\d.]+)\s+([\d.]+)", so, re.M)
    expect(row and float(row.group(1)) > 0 and float(row.group(2)) > 0, f"figures: {so!r}")
    rc, so, err = run("profiles", "models", "--markdown")
    expect(rc == 0 and "| qwen3-8b-q4_0 | decoder | 36 |" in so and "oneplus12" not in so,
           f"markdown models: {so!r}")
    for bad in (["--nope"], ["devices", "models"]):
        rc, so, err = run("profiles", *bad)
        expect(rc == 64 and err.count("\n") == 1, f"profiles {bad}: {rc} {err!r}")
    # a profile that does not load: listed, its error on stderr, exit 78
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "cfg")
        shutil.copytree(os.path.join(HOME, "configs"), cfg)
        open(os.path.join(cfg, "devices", "broken.lua"), "w").write("return { read_gbps = -1 }\n")
        rc, so, err = run("profiles", "devices", env={"FLASHSPEC_CONFIG_DIR": cfg})
        expect(rc == 78 and "broken" in so and "does not load" in so and "broken.lua" in err,
               f"broken profile: {rc} {so!r} {err!r}")
        # nearest names
        rc, so, err = run("profile", "oneplus13", "qwen3-8b-q4_0")
        one_line_error(err, 66, rc, "unknown device 'oneplus13'", "did you mean 'oneplus12'")
        rc, so, err = run("profile", "oneplus12", "zzzzzz")
        one_line_error(err, 66, rc, "unknown model 'zzzzzz'", r"\(models: .*qwen3-8b-q4_0")
        rc, _, err, out = run_src(d, "dev.lua", 'local d = flashspec.device "oneplus13"\n')
        one_line_error(err, 78, rc, r"dev\.lua:1: unknown device 'oneplus13'",
                       "did you mean 'oneplus12'")
        rc, _, err, out = run_src(d, "mod.lua", 'local m = flashspec.model "qwen3-8b-q40"\n')
        one_line_error(err, 78, rc, r"mod\.lua:1: unknown model", "did you mean 'qwen3-8b-q4_0'")


TUNE_HEAD = """local fs = flashspec
local tr = fs.trace.synth { prompts = 8, output_len = 64, seed = 3 }
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr, max_new_tokens = 64 }
local function with(t) local o = {} for k, v in pairs(base) do o[k] = v end
  for k, v in pairs(t) do o[k] = v end return o end
"""


def case_tune():
    """flashspec.tune recovers the optimum brute force finds on the tuning
    prompts, reports the chosen knobs on the held-out prompts, is identical at
    -j 1 and -j 2, and refuses a bad search space in one line."""
    with tempfile.TemporaryDirectory() as d:
        src = TUNE_HEAD + """
local rows = fs.tune(with { dram_fraction = { 0, 0.5 }, policy = fs.policy.chain { k = 4 },
                            knobs = { k = { 1, 16 } }, holdout = 0.5 })
assert(#rows == 2)
for _, r in ipairs(rows) do
  -- brute force over the same space on the tuning prompts (the first half)
  local best, arg = -1, nil
  for k = 1, 16 do
    local b = fs.run(with { dram_fraction = r.dram_fraction, policy = fs.policy.chain { k = k },
                            prompts = 4 })
    if b.tokens_per_s > best then best, arg = b.tokens_per_s, k end
  end
  assert(r.tuned.k == arg, ("tuned k %d, brute force %d"):format(r.tuned.k, arg))
  assert(r.tune_train == best, ("train %.17g vs %.17g"):format(r.tune_train, best))
  assert(r.tune_evals == 16 and r.prompt_offset == 4 and r.prompts == 4)
  assert(r.policy_params == ("k=%d,unit=cpu"):format(arg))
  -- the reported row is the held-out half, run with the chosen knob
  local h = fs.run(with { dram_fraction = r.dram_fraction, policy = fs.policy.chain { k = arg },
                          prompt_offset = 4, prompts = 4 })
  assert(h.tokens_per_s == r.tokens_per_s)
end
-- continuous and mixed: a simplex per combination, never worse than the start
local c = fs.tune(with { dram_fraction = 0, policy = fs.policy.edgellm {},
                         knobs = { alpha0 = { 1e-4, 0.5 }, navigation = { values = { true, false } } },
                         max_evals = 60 })[1]
local start = fs.run(with { dram_fraction = 0, policy = fs.policy.edgellm {}, prompts = 4 })
assert(c.tune_train >= start.tokens_per_s)
assert(c.tuned.alpha0 >= 1e-4 and c.tuned.alpha0 <= 0.5 and c.tune_evals <= 60)
assert(type(c.tuned.navigation) == "boolean")
-- the label holds the exact knob: it reads back as the tuned value
assert(tonumber(c.policy_params:match("alpha0=([^,]+)")) == c.tuned.alpha0, c.policy_params)
print(rows[1].tuned.k, rows[2].tuned.k, c.tuned.alpha0, c.tuned.navigation)
"""
        outs = []
        for j in ("1", "2"):
            rc, so, err, out = run_src(d, f"tune{j}.lua", src, "-j", j)
            expect(rc == 0, f"tune -j {j}: {rc} {err!r}")
            outs.append((so, open(os.path.join(out, "results.csv"), "rb").read()))
        expect(outs[0] == outs[1], "tune differs between -j 1 and -j 2")
        header = outs[0][1].split(b"\n")[0].decode()
        for col in ("prompt_offset", "tune_evals", "tune_train"):
            expect(col in header.split(","), f"results lack {col}")
        bad = (
            ("knobs = { kk = { 1, 4 } }", r"policy chain has no knob 'kk' \(did you mean 'k'\?\)"),
            ("knobs = { k = { 4, 4 } }", r"knob 'k': empty range \[4, 4\]"),
            ("knobs = { k = { 0, 8 } }", r"knob 'k': 0 is outside the parameter's range"),
            ("knobs = { unit = { values = { 'cpu', 'gpu' } } }", r"'gpu' is not one of its choices"),
            ("knobs = { k = { 1, 8 } }, objective = 'tokens_per_sec'", r"objective 'tokens_per_sec'"),
            ("knobs = { k = { 1, 8 } }, objective = 'policy'", r"not a numeric result column"),
            # an option's value is checked as the run keys are (lparams.h): the key's line
            ("knobs = { k = { 1, 8 } }, holdout = 1.5",
             r"key 'holdout' = 1\.5 is out of range \[0, 1\]", 8),
            ("knobs = { k = { 1, 8 } }, holdout = 1", r"key 'holdout' = 1 leaves no prompt", 8),
            ("knobs = { k = { 1, 8 } }, max_evals = 2.5",
             r"key 'max_evals' must be an integer \(got 2\.5\)", 8),
            ("knobs = { k = { 1, 8 } }, max_evals = 4", r"8 combinations but max_evals = 4"),
            ("knobs = { k = { 1.5, 8 } }", r"1\.5 is not a whole number"),
            ("knobs = {}", r"knobs is empty"),
            ("knobs = { k = { 1, 8 } }, objective = 'tune_train'",
             r"objective 'tune_train' is not a finite number at any of the 8 knob vectors "
             r"tried for point 1"),
            ("knobs = { k = { 1, 8 } }, objective = 'max_new_tokens'",
             r"objective 'max_new_tokens' is the same at every knob vector tried.*\(k\) do "
             r"not move it"),
        )
        for i, (knobs, needle, *line) in enumerate(bad):
            src = TUNE_HEAD + ("local r = fs.tune(with { policy = fs.policy.chain {},\n"
                               f"  {knobs} }})\n")
            rc, _, err, out = run_src(d, f"bad{i}.lua", src)
            one_line_error(err, 78, rc, rf"bad{i}\.lua:{line[0] if line else 7}: flashspec\.tune: ",
                           needle)
            no_results(out)
        rc, _, err, out = run_src(d, "few.lua", TUNE_HEAD.replace("prompts = 8", "prompts = 1") +
                                  "fs.tune(with { policy = fs.policy.chain {}, knobs = { k = { 1, 4 } } })\n")
        one_line_error(err, 78, rc, "leaves none on one side")


def case_verb_help():
    """Each verb prints its own help (tune and calibrate their own, not run's),
    `flashspec policies` marks a policy that drafts nothing with "-" in its
    drafts column, and a fraction given as a percentage gets a hint."""
    for verb, first in (("run", "usage: flashspec run"), ("sweep", "usage: flashspec sweep"),
                        ("tune", "usage: flashspec tune"),
                        ("calibrate", "usage: flashspec calibrate"),
                        ("demo", "usage: flashspec demo")):
        p = subprocess.run([BIN, verb, "--help"], capture_output=True, text=True, timeout=60)
        expect(p.returncode == 0 and p.stdout.startswith(first),
               f"{verb} --help: {p.returncode} {p.stdout[:80]!r}")
    p = subprocess.run([BIN, "policies"], capture_output=True, text=True, timeout=60)
    rows = {l.split()[0]: l.split()[1] for l in p.stdout.splitlines() if l.strip()}
    expect(rows.get("flash_ar") == "-" and rows.get("chain") == "drafts",
           f"policies drafts column: {p.stdout[:300]!r}")
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, out = run_src(d, "pct.lua", TUNE_HEAD + "fs.run(with { policy = "
                                  "fs.policy.chain {}, dram_fraction = 40 })\n")
        one_line_error(err, 78, rc, r"key 'dram_fraction' = 40 is out of range \[0, 1\] "
                       r"\(a fraction: did you mean 0\.4\?\)")


def case_policy_lists():
    """Lists inside a policy constructor expand like any sweep key: a scalar
    parameter given a list, or a list parameter given a list of lists, makes a
    plain list of policies (declared order, the last fastest), which a sweep's
    policy key expands; an empty list is one line, exit 78."""
    src = TUNE_HEAD + """
local ps = fs.policy.chain { k = { 4, 8, 16 }, unit = { "cpu", "npu" } }
assert(#ps == 6 and tostring(ps[1]) == "policy(chain:k=4,unit=cpu)"
       and tostring(ps[2]) == "policy(chain:k=4,unit=npu)"
       and tostring(ps[6]) == "policy(chain:k=16,unit=npu)", tostring(ps[2]))
local w = fs.policy.specinfer { widths = { { 2, 2, 1 }, { 4, 1 } } }
assert(#w == 2 and tostring(w[2]):find("widths=4/1", 1, true))
assert(tostring(fs.policy.specinfer { widths = { 2, 2, 1 } }):find("widths=2/2/1", 1, true))
local rows = fs.sweep(with { policy = fs.policy.chain { k = { 2, 4 } }, prompts = 2 })
assert(#rows == 2 and rows[1].policy_params == "k=2,unit=cpu"
       and rows[2].policy_params == "k=4,unit=cpu")
local one = fs.run(with { policy = fs.policy.chain { k = 4 }, prompts = 2 })
assert(rows[2].tokens_per_s == one.tokens_per_s)
"""
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, out = run_src(d, "lists.lua", src)
        expect(rc == 0, f"policy lists: {rc} {err}")
        rc, _, err, out = run_src(d, "empty.lua", TUNE_HEAD + "local p = fs.policy.chain "
                                  "{ k = {} }\n")
        one_line_error(err, 78, rc, r"empty\.lua:7: flashspec\.policy\.chain: key 'k' is an "
                       r"empty list")
        # a list parameter the policy needs filled: refused where it is written
        # (was: accepted, then every point failed with exit 70)
        for src, line in (("local p = fs.policy.specinfer {\n  widths = {},\n}\n", 8),
                          ("local p = fs.policy.specinfer { widths = { { 2 }, {} } }\n", 7)):
            rc, _, err, out = run_src(d, "widths.lua", TUNE_HEAD + src)
            one_line_error(err, 78, rc, rf"widths\.lua:{line}: flashspec\.policy\.specinfer: key "
                           r"'widths' is an empty list \(specinfer needs at least one value\)")
        # an empty list the policy accepts (sequoia's prior: measured at run time)
        rc, _, err, out = run_src(d, "prior.lua", TUNE_HEAD + "local p = fs.policy.sequoia "
                                  "{ prior = {} }\n")
        expect(rc == 0, f"sequoia's empty prior: {rc} {err}")


def case_run_record():
    """A results directory says what produced it: run.json (version and build
    key, the command line, the script's path, hash and --arg values, and per
    result row the resolved policy, device with its standing variants, target,
    draft, trace and point keys, devices, models and policies listed once) and
    script.lua, the script's bytes as run."""
    import json
    src = TUNE_HEAD + """
local fast = fs.device("oneplus12", { name = "op12-fast", npu_gflops = 1234.5 })
fs.sweep(with { device = { fs.device "oneplus12", fast }, prompts = 2,
                policy = { fs.policy.flash_ar {}, fs.policy.chain { k = 3 } } })
"""
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, out = run_src(d, "rec.lua", src, "--arg", "tag=one")
        expect(rc == 0, f"{rc} {err}")
        rec = json.load(open(os.path.join(out, "run.json")))
        expect(open(os.path.join(out, "script.lua")).read() == src, "script.lua differs")
        expect(rec["script"]["args"] == {"tag": "one"} and
               rec["script"]["path"].endswith("rec.lua") and
               rec["script"]["copy"] == "script.lua", f"script: {rec['script']}")
        expect(rec["command"][:2] == ["flashspec", "run"] and "tag=one" in rec["command"],
               f"command: {rec['command']}")
        expect(rec["flashspec"]["version"] and rec["flashspec"]["build_key"], rec["flashspec"])
        with open(os.path.join(out, "results.csv"), newline="") as f:
            res = list(csv.DictReader(f))
        expect(len(rec["rows"]) == len(res) == 4, f"{len(rec['rows'])} records, {len(res)} rows")
        names = [x["name"] for x in rec["devices"]]
        expect(names == ["oneplus12", "op12-fast"], f"devices {names}")
        expect(rec["devices"][1]["values"]["npu_gflops"] == 1234.5 and
               rec["devices"][0]["values"]["npu_gflops"] != 1234.5, "device values")
        expect(len(rec["devices"][0]["variants"]) >= 1 and
               all("values" in v for v in rec["devices"][0]["variants"]), "variants")
        for r, row in zip(rec["rows"], res):
            pol = rec["policies"][r["policy"]]
            expect(pol["name"] == row["policy"], f"{pol} vs {row['policy']}")
            expect(rec["devices"][r["device"]]["name"] == row["device"], "device name")
            expect(rec["models"][r["target"]]["name"] == row["target"], "target name")
            if row["policy"] == "flash_ar":
                expect(r["draft"] is None, f"flash_ar draft {r['draft']}")
            else:
                expect(rec["models"][r["draft"]]["name"] == row["draft"] and
                       pol["params"]["k"] == 3, f"chain {pol}")
            expect(r["trace"] == row["trace"] and r["prompts"] == 2, f"row {r}")
            expect(rec["models"][r["target"]]["values"]["layers"] > 0, "model values")


def case_param_tag_columns():
    """Policy parameters become param_<name> columns (exact doubles with NaN
    where absent, text otherwise) and point tags tag_<name> columns, in results.csv,
    results.h5 and the Lua rows; a list of tag maps is a sweep key; a policy
    list inside the policy list is flattened; bad tags are one line, exit 78."""
    import h5py
    import math
    src = TUNE_HEAD + """
local rows = fs.sweep(with { prompts = 2,
  policy = { fs.policy.chain { k = { 3, 5 } }, fs.policy.lever { theta = 0.090373524058708 } },
  tags = { { arm = "A", dose = 3 }, { arm = "B, the second", dose = 2.5, blind = true } } })
assert(#rows == 6, #rows)
assert(rows[1].param_k == 3 and math.type(rows[1].param_k) == "integer" and rows[1].param_unit == "cpu")
assert(rows[1].tag_arm == "A" and rows[1].tag_dose == 3 and rows[1].tag_blind == nil)
assert(rows[2].tag_arm == "B, the second" and rows[2].tag_dose == 2.5 and rows[2].tag_blind == "true")
assert(rows[5].param_theta == 0.090373524058708 and rows[5].param_k == nil)
local one = fs.run(with { prompts = 2, policy = fs.policy.chain { k = 3 }, tags = { arm = "A" } })
assert(one.tag_arm == "A" and one.tokens_per_s == rows[1].tokens_per_s)
"""
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, out = run_src(d, "cols.lua", src)
        expect(rc == 0, f"{rc} {err}")
        with open(os.path.join(out, "results.csv"), newline="") as f:
            rd = csv.reader(f)
            head = next(rd)
            body = list(rd)
        rows = [dict(zip(head, r)) for r in body]
        dyn = [c for c in head if c.startswith(("param_", "tag_"))]
        expect(dyn[:3] == ["param_k", "param_unit", "param_drafting"] and
               dyn[-3:] == ["tag_arm", "tag_dose", "tag_blind"] and
               head.index("param_k") > head.index("tokens_per_s_model_hi"), f"order {dyn}")
        expect([r["param_k"] for r in rows] == ["3.0", "3.0", "5.0", "5.0", "nan", "nan", "3.0"],
               f"param_k {[r['param_k'] for r in rows]}")
        expect(rows[4]["param_theta"] == "0.090373524058708", rows[4]["param_theta"])
        expect(rows[4]["param_n_max"] == "64.0" and rows[0]["param_unit"] == "cpu" and
               rows[4]["param_unit"] == "", "lever n_max and chain-only unit")
        expect(rows[1]["tag_arm"] == "B, the second" and rows[1]["tag_blind"] == "true" and
               rows[0]["tag_blind"] == "" and rows[0]["tag_dose"] == "3.0", f"tags {rows[:2]}")
        with h5py.File(os.path.join(out, "results.h5")) as f:
            g = f["results"]
            expect(g["param_theta"][4] == 0.090373524058708, "h5 theta exact")
            expect(math.isnan(g["param_theta"][0]) and g["param_k"].dtype.kind == "f", "h5 kinds")
            expect(g["tag_arm"][1].decode() == "B, the second", "h5 tag")
            cols = [c if isinstance(c, str) else c.decode() for c in g.attrs["columns"]]
            expect(cols == head, "h5 column order = csv")
        # every row has k and each is whole: still doubles
        rc, _, err, out = run_src(d, "ints.lua", TUNE_HEAD + "fs.sweep(with { prompts = 1, "
                                  "policy = fs.policy.chain { k = { 2, 4 } } })\n")
        expect(rc == 0, err)
        with open(os.path.join(out, "results.csv"), newline="") as f:
            ks = [r["param_k"] for r in csv.DictReader(f)]
        expect(ks == ["2.0", "4.0"], f"a number column is a double column whatever the rows {ks}")
        for name, tags, needle in [
                ("t1.lua", '"A"', r"key 'tags' must be a table"),
                ("t2.lua", '{ ["two words"] = 1 }', r"every key must be a name"),
                ("t3.lua", '{ arm = {} }', r"'arm' must be a string, number or boolean"),
                ("t4.lua", '{ arm = "a\\nb" }', r"without control characters"),
                ("t5.lua", '{ x = 0/0 }', r"'x' is not a finite number"),
                ("t6.lua", '{ arm = "A" }, tagz = 1', r"unknown key 'tagz'.*did you mean 'tags'")]:
            rc, _, err, out = run_src(d, name, TUNE_HEAD + "fs.sweep(with { prompts = 1, policy = "
                                      "fs.policy.flash_ar {}, tags = " + tags + " })\n")
            one_line_error(err, 78, rc, re.escape(name) + r":7:", needle)
            no_results(out)


def case_record_false():
    """`record = false` returns a call's rows to the script only: they carry
    every column (the model band too) and are the recorded rows' numbers,
    but neither results file nor the run record holds them; a bad value or
    an entry of `points` that disagrees with its call is one line, exit 78."""
    src = TUNE_HEAD + """
local kept = fs.run(with { prompts = 2, policy = fs.policy.chain { k = 3 } })
local aside = fs.run(with { prompts = 2, policy = fs.policy.chain { k = 3 }, record = false })
assert(aside.tokens_per_s == kept.tokens_per_s and aside.point_id == kept.point_id)
assert(aside.tokens_per_s_model_lo == kept.tokens_per_s_model_lo)
local rows = fs.sweep(with { prompts = 2, record = false,
                             policy = { fs.policy.flash_ar {}, fs.policy.chain { k = 2 } } })
assert(#rows == 2 and rows[2].policy == "chain" and rows[1].tokens_per_s > 0)
local same = fs.sweep(with { prompts = 2, record = false,
                             points = { { policy = fs.policy.flash_ar {} } } })
assert(#same == 1 and same[1].tokens_per_s == rows[1].tokens_per_s)
fs.run(with { prompts = 2, policy = fs.policy.flash_ar {}, record = true })
print("record ok")
"""
    with tempfile.TemporaryDirectory() as d:
        rc, so, err, out = run_src(d, "rec.lua", src)
        expect(rc == 0 and "record ok" in so, f"{rc} {err}")
        with open(os.path.join(out, "results.csv"), newline="") as f:
            body = list(csv.DictReader(f))
        expect([(r["policy"], r["policy_params"]) for r in body] ==
               [("chain", "k=3,unit=cpu"), ("flash_ar", "none")],
               f"only the recorded rows: {[(r['policy'], r['policy_params']) for r in body]}")
        for name, tail, needle in [
                ("r1.lua", 'record = "no" })', r"key 'record' must be a boolean \(got string\)"),
                ("r2.lua", 'record = false, points = { { record = true } } })',
                 r"points\[1\]: key 'record' applies to the whole call"),
                ("r3.lua", 'points = { {}, { record = false } } })',
                 r"points\[2\]: key 'record' applies to the whole call"),
                ("r4.lua", 'recrod = false })', r"unknown key 'recrod'.*did you mean 'record'")]:
            rc, _, err, out = run_src(d, name, TUNE_HEAD + "fs.sweep(with { prompts = 1, policy = "
                                      "fs.policy.flash_ar {}, " + tail + "\n")
            one_line_error(err, 78, rc, re.escape(name) + r":7:", needle)
            no_results(out)


def case_lua_range_error():
    run_bad_script(script("range_error.lua"), 78, r"range_error\.lua:7:", "dram_fraction",
                   "1.5")


def case_sandbox():
    marker = "/tmp/flashspec-sandbox-escape"
    if os.path.exists(marker):
        os.remove(marker)
    run_bad_script(script("sandbox_exec.lua"), 78, r"sandbox_exec\.lua:1:")
    expect(not os.path.exists(marker), "sandboxed script ran a command")
    run_bad_script(script("sandbox_io.lua"), 78, r"sandbox_io\.lua:1:")
    run_bad_script(script("sandbox_bytecode.lua"), 78, "binary")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "u.lua")
        open(p, "w").write('assert(io.open("' + p + '")):close()\nprint("unsafe ok")\n')
        rc, out, err = run("run", p, "--unsafe", "-o", os.path.join(d, "o"), "-q")
        expect(rc == 0 and "unsafe ok" in out, f"--unsafe did not lift the sandbox: {err}")


def run_src(d, name, src, *args, env=None):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(src)
    out = os.path.join(d, "out-" + name)
    rc, so, err = run("run", p, "-o", out, "-q", *args, env=env)
    return rc, so, err, out


def case_sandbox_globals():
    """Every way out of a default script is gone, and each use is one clear error."""
    probes = {
        "debug": "debug.getinfo(1)",
        "require": 'require "os"',
        "package": "package.loadlib('libc.so.6', '*')",
        "dofile": "dofile('/etc/passwd')",
        "loadfile": "loadfile('/etc/passwd')",
        "io_open": "io.open('/etc/passwd')",
        "io_write": "io.open('/tmp/flashspec-sandbox-write', 'w')",
        "os_execute": "os.execute('true')",
        "os_remove": "os.remove('/tmp/x')",
        "os_rename": "os.rename('/tmp/x', '/tmp/y')",
        "os_getenv": "os.getenv('HOME')",
        "os_exit": "os.exit(0)",
        "load_bytecode": 'load(string.dump(function() end), "x", "b")',
        "load_function": "load(function() return nil end)",
    }
    with tempfile.TemporaryDirectory() as d:
        for name, code in probes.items():
            rc, _, err, out = run_src(d, name + ".lua", code + "\nprint('escaped')\n")
            one_line_error(err, 78, rc, re.escape(name) + r"\.lua:1:")
            no_results(out)
        expect(not os.path.exists("/tmp/flashspec-sandbox-write"), "sandbox wrote a file")
        # what stays: pure functions, os.clock/time/date, text-only load
        rc, so, err, _ = run_src(d, "kept.lua", """
assert(os.clock() >= 0 and os.time() > 0 and os.date("%Y"))
assert(load("return 1 + 1")() == 2)
local ok, msg = pcall(load, string.dump(function() end))
assert(not ok or msg == nil)
assert(debug == nil and io == nil and package == nil and require == nil)
print("kept ok")
""")
        expect(rc == 0 and "kept ok" in so, f"safe functions missing ({rc}): {err}")


def case_sandbox_limits():
    """Endless loops and memory hogs end in one line and exit 78; flags tune both."""
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, out = run_src(d, "loop.lua", "local n = 0\nwhile true do n = n + 1 end\n",
                                  "--max-instructions", "200000")
        one_line_error(err, 78, rc, r"loop\.lua:2:", "instruction limit of 200000 exceeded")
        no_results(out)
        hog = 'local t = {}\nfor i = 1, 1e9 do t[i] = string.rep("x", 4096) .. i end\n'
        rc, _, err, out = run_src(d, "hog.lua", hog, "--max-memory-mb", "32")
        one_line_error(err, 78, rc, r"hog\.lua", "memory limit of 32 MiB")
        no_results(out)
        # sweep takes the same flags
        p = os.path.join(d, "loop.lua")
        rc, _, err = run("sweep", p, "-o", os.path.join(d, "s"), "-q", "-j", "1",
                         "--max-instructions", "100000")
        one_line_error(err, 78, rc, "instruction limit of 100000")
        # a limit that is high enough lets a script finish
        rc, so, err, _ = run_src(d, "short.lua", "local n = 0\nfor i = 1, 1000 do n = n + i end\n"
                                 "print(n)\n", "--max-instructions", "1000000")
        expect(rc == 0 and so.strip() == "500500", f"short script failed ({rc}): {err}")
        for flag, val in (("--max-instructions", "0"), ("--max-instructions", "x"),
                          ("--max-memory-mb", "-1"), ("--max-memory-mb", "")):
            rc, _, err, _ = run_src(d, "short.lua", "print(1)\n", flag, val)
            one_line_error(err, 64, rc, re.escape(flag))
        rc, _, err = run("demo", "--max-instructions", "10")
        expect(rc == 64, f"demo accepted --max-instructions ({rc})")


def case_sandbox_unsafe():
    """--unsafe lifts the library restrictions and the instruction limit."""
    with tempfile.TemporaryDirectory() as d:
        target = os.path.join(d, "written.txt")
        rc, so, err, _ = run_src(d, "u.lua", f"""
local f = assert(io.open("{target}", "w")); f:write("x"); f:close()
assert(type(debug.getinfo(1)) == "table")
assert(require("string") == string)
assert(os.getenv("PATH"))
local n = 0
for i = 1, 2e5 do n = n + 1 end
print("unsafe ok")
""", "--unsafe")
        expect(rc == 0 and "unsafe ok" in so, f"--unsafe run failed ({rc}): {err}")
        expect(os.path.exists(target), "--unsafe script could not write its file")
        # the same loop stops under a default-sized limit set explicitly
        rc, _, err, _ = run_src(d, "u2.lua", "for i = 1, 2e5 do end\n", "--unsafe",
                                "--max-instructions", "50000")
        one_line_error(err, 78, rc, "instruction limit of 50000")


def case_sandbox_finalizers():
    """A __gc metamethod, which would run outside every limit, is refused in
    scripts and profiles; profiles have no pattern functions."""
    with tempfile.TemporaryDirectory() as d:
        gc = "setmetatable({}, {__gc = function() while true do end end})\n"
        rc, _, err, out = run_src(d, "gc.lua", gc, "--max-instructions", "1000")
        one_line_error(err, 78, rc, r"gc\.lua:1:", "__gc metamethods are not allowed")
        no_results(out)
        # a metatable without __gc still works, and __gc added later is inert
        ok = ("local mt = {__index = function() return 7 end}\n"
              "local t = setmetatable({}, mt)\nmt.__gc = function() while true do end end\n"
              "t = nil\ncollectgarbage()\nassert(setmetatable({}, mt) == nil or true)\n")
        rc, _, err, _ = run_src(d, "ok.lua", ok.replace("assert(setmetatable({}, mt) == nil or "
                                                       "true)", "print('fine')"))
        expect(rc == 0, f"metatable without __gc refused ({rc}): {err}")
        cfg = os.path.join(d, "cfg")
        os.makedirs(os.path.join(cfg, "devices"))
        os.makedirs(os.path.join(cfg, "models"))
        with open(os.path.join(HOME, "configs", "models", "qwen3-8b-q4_0.lua")) as f:
            model = f.read()
        with open(os.path.join(cfg, "models", "qwen3-8b-q4_0.lua"), "w") as f:
            f.write(model)
        with open(os.path.join(cfg, "devices", "gc.lua"), "w") as f:
            f.write(gc + "return {}\n")
        with open(os.path.join(cfg, "devices", "pat.lua"), "w") as f:
            f.write("local s = ('a'):rep(30)\nreturn { name = s:match('a*') }\n")
        env = {"FLASHSPEC_CONFIG_DIR": cfg}
        rc, _, err = run("profile", "gc", "qwen3-8b-q4_0", env=env)
        one_line_error(err, 78, rc, r"gc\.lua:1:", "__gc metamethods are not allowed")
        rc, _, err = run("profile", "pat", "qwen3-8b-q4_0", env=env)
        one_line_error(err, 78, rc, r"pat\.lua:2:", "nil value")


def case_library_work_charged():
    """Pattern searches count against the instruction limit by the bytes they
    scan: a short loop over a 1 MiB string stops within the default limit."""
    with tempfile.TemporaryDirectory() as d:
        src = ('local s = string.rep("a", 1 << 20)\n'
               'for i = 1, 1e9 do local _ = s:find("b", 1, true) end\n')
        t0 = time.monotonic()
        rc, _, err, out = run_src(d, "scan.lua", src)
        one_line_error(err, 78, rc, r"scan\.lua:2:", "instruction limit of 1000000000")
        expect(time.monotonic() - t0 < 60, "the scan loop stopped in time")
        for fn, args in (("match", '"b"'), ("gmatch", '"b"'), ("gsub", '"b", "c"')):
            rc, _, err, _ = run_src(d, fn + ".lua", 'local s = string.rep("a", 1 << 20)\n'
                                    f'for i = 1, 1e9 do local _ = s:{fn}({args}) end\n',
                                    "--max-instructions", "100000000")
            one_line_error(err, 78, rc, "instruction limit of 100000000 ")
        expect(time.monotonic() - t0 < 90, "the pattern loops stopped in time")


def case_api_work_not_charged():
    """The simulator's own work inside a flashspec call (a synthetic trace,
    a sweep, the callbacks a calibration makes) is not charged to the script
    by the CPU-time backstop: a script that spends seconds in API calls runs
    under a small instruction limit, while the same limit still stops Lua
    code of its own."""
    with tempfile.TemporaryDirectory() as d:
        src = ('local fs = flashspec\n'
               'local tr = fs.trace.synth { prompts = 24, output_len = 128, nodes = 24, seed = 3 }\n'
               'local n = 0\n'
               'for k = 1, 12 do\n'
               '  local r = fs.run { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",\n'
               '                     draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr,\n'
               '                     policy = fs.policy.eagle2 { total_tokens = 60 } }\n'
               '  n = n + r.tokens\n'
               '  for i = 1, 250 do n = n + i % 2 end -- the backstop looks about once a run\n'
               'end\n'
               'print("api work ok", n)\n')
        rc, out_s, err, _ = run_src(d, "api.lua", src, "--max-instructions", "2000000")
        expect(rc == 0 and "api work ok" in out_s, f"API work was charged ({rc}): {err}")
        rc, _, err, _ = run_src(d, "own.lua", "local n = 0\nwhile true do n = n + 1 end\n",
                                "--max-instructions", "2000000")
        one_line_error(err, 78, rc, "instruction limit of 2000000 ")


def case_time_limit():
    """--max-seconds ends a script's Lua code (one line, exit 78, no results);
    Lua code stuck inside one library call is ended 10 s later; a pcall cannot
    swallow the stop."""
    with tempfile.TemporaryDirectory() as d:
        loop = "local n = 0\nwhile true do n = n + 1 end\n"
        t0 = time.monotonic()
        rc, _, err, out = run_src(d, "loop.lua", loop, "--unsafe", "--max-seconds", "0.5")
        dt = time.monotonic() - t0
        one_line_error(err, 78, rc, r"loop\.lua: time limit of 0\.5 s exceeded")
        expect(dt < 5, f"--max-seconds 0.5 took {dt:.1f} s")
        no_results(out)
        catch = "while true do pcall(function() while true do end end) end\n"
        rc, _, err, out = run_src(d, "catch.lua", catch, "--unsafe", "--max-seconds", "0.5")
        one_line_error(err, 78, rc, "time limit of 0.5 s exceeded")
        # exponential backtracking inside one string.find call
        expo = ('local s = string.rep("a", 40)\n'
                'print(s:find(string.rep("a?", 40) .. string.rep("a", 40) .. "b"))\n')
        t0 = time.monotonic()
        rc, _, err, out = run_src(d, "expo.lua", expo, "--unsafe", "--max-seconds", "0.5")
        dt = time.monotonic() - t0
        expect(rc == 78 and "still running 10 s after the time limit" in err,
               f"stuck library call: rc {rc} {err!r}")
        expect(dt < 30, f"stuck library call ended after {dt:.1f} s")
        no_results(out)
        # under an instruction limit such a pattern is refused before it runs
        t0 = time.monotonic()
        rc, _, err, out = run_src(d, "expo2.lua", expo)
        one_line_error(err, 78, rc, r"expo2\.lua:2: string\.find: the pattern could take up to "
                       r"\S+ match steps on this 40-byte subject", "more than the")
        expect(time.monotonic() - t0 < 5, "the pattern was not refused up front")
        # the backtracking of the report (five lazy items, no ?): refused at once
        lazy = ('local s = string.rep("a", 3000)\n'
                'print(s:find("(.-)(.-)(.-)(.-)(.-)b"))\n')
        t0 = time.monotonic()
        rc, _, err, out = run_src(d, "lazy.lua", lazy, "--max-seconds", "5")
        one_line_error(err, 78, rc, r"lazy\.lua:2: string\.find: the pattern could take up to "
                       r"4\.28e\+19 match steps on this 3000-byte subject")
        expect(time.monotonic() - t0 < 5, "the lazy pattern was not refused up front")
        # and one SIGTERM ends a match that is running (a limit above its bound:
        # 2^36 ways to try, minutes of backtracking)
        path = os.path.join(d, "expo3.lua")
        open(path, "w").write(expo.replace("40", "36"))
        q = subprocess.Popen([BIN, "run", path, "-q", "-o", os.path.join(d, "out-expo3"),
                              "--max-instructions", "1000000000000000"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        t0 = time.monotonic()
        q.send_signal(signal.SIGTERM)
        try:
            _, err = q.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            q.kill()
            raise AssertionError("SIGTERM did not end a running pattern match")
        lines = err.strip().splitlines()
        expect(q.returncode == 130 and len(lines) == 1 and
               "interrupted inside a long library call" in lines[0],
               f"SIGTERM in a match: {q.returncode} {err!r}")
        expect(time.monotonic() - t0 < 5, "SIGTERM did not end the match at once")
        # a sweep in progress stops too, keeping its finished points
        sweep = ('local fs = flashspec\nfs.sweep{ device = fs.device "oneplus12", '
                 'target = fs.model "qwen3-8b-q4_0", trace = fs.trace "' + SMALL + '", '
                 'policy = fs.policy.flash_ar{}, max_new_tokens = 8, '
                 'seed = {' + ",".join(str(i) for i in range(1, 20001)) + '} }\n')
        rc, _, err, out = run_src(d, "sweep.lua", sweep, "--max-seconds", "1")
        one_line_error(err, 78, rc, "time limit of 1 s exceeded",
                       r"saved in .*points|no point had finished, nothing is saved")
        no_results(out)
        for val in ("0", "-1", "x", "1e9"):
            rc, _, err, _ = run_src(d, "loop.lua", loop, "--max-seconds", val)
            one_line_error(err, 64, rc, "--max-seconds")


def sigterm_exit(path, *args, wait=0.6):
    """Starts `flashspec run PATH -q ARGS`, sends one SIGTERM after `wait`
    seconds and returns (exit code, stderr, seconds from the signal to the
    exit)."""
    p = subprocess.Popen([BIN, "run", path, "-q", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(wait)
    expect(p.poll() is None, f"{path} ended before the signal: {p.returncode}")
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError(f"one SIGTERM did not end {path} within 30 s")
    return p.returncode, err, time.monotonic() - t0


# One SIGTERM must end a run within 1 s (a watchdog ends what has not stopped
# 0.5 s after it); the tests allow twice that on a loaded machine.
SIGTERM_BOUND_S = 2.0

# Work inside one library call or one VM instruction that the count hook never
# sees, on the 16 MiB strings of the report: (name, script, limit that ends it)
LIMIT_ESCAPES = (
    ("rep-empty", 'local n = 0\nwhile true do n = n + #string.rep("", 1e15) end\n', 1000000),
    ("utf8-len", 'local s = string.rep("a", 16 << 20)\n'
                 "while true do local n = utf8.len(s) end\n", 20000000),
    ("eq", 'local s, t = string.rep("a", 16 << 20), string.rep("a", 16 << 20)\n'
           "while true do local e = s == t end\n", 20000000),
    ("lt-zeros", 'local s, t = string.rep("\\0", 16 << 20), string.rep("\\0", 16 << 20)\n'
                 "while true do local e = s < t end\n", 20000000),
    ("concat", 'local t = {} for i = 1, 1e6 do t[i] = "" end\n'
               "while true do local c = table.concat(t) end\n", 20000000),
    ("move", "while true do table.move({}, 1, 1e15, 2) end\n", 1000000),
    ("format", 'local f = string.rep("%99.99f", 100000)\n'
               "local a = {} for i = 1, 100000 do a[i] = 1e300 end\n"
               "while true do local s = string.format(f, table.unpack(a)) end\n", 20000000),
    ("gc", "local t = {} for i = 1, 1e6 do t[i] = {} end\n"
           "while true do collectgarbage() end\n", 20000000),
)


def case_limit_escapes():
    """Work a VM instruction count cannot see -- string.rep of an empty
    string, utf8.len, == and < on 16 MiB strings, table.concat, table.move
    over 1e15 elements, long formats, collections of a large heap -- counts
    against --max-instructions (one line, exit 78, within a few seconds), and
    one SIGTERM ends each within SIGTERM_BOUND_S (exit 130).  A back-reference
    the pattern bound once ignored is refused before it runs.  The measured
    times are printed."""
    with tempfile.TemporaryDirectory() as d:
        for name, src, limit in LIMIT_ESCAPES:
            path = os.path.join(d, name + ".lua")
            open(path, "w").write(src)
            t0 = time.monotonic()
            rc, _, err = run("run", path, "-q", "-o", os.path.join(d, "o-" + name),
                             "--max-instructions", str(limit))
            dt = time.monotonic() - t0
            one_line_error(err, 78, rc, re.escape(name) + r"\.lua:\d+: ",
                           f"instruction limit of {limit} exceeded|this call could take up to")
            expect(dt < 30, f"{name}: --max-instructions {limit} took {dt:.1f} s")
            rc, err, st = sigterm_exit(path, "-o", os.path.join(d, "t-" + name))
            expect(rc == 130 and "interrupted" in err, f"{name}: SIGTERM: exit {rc} {err!r}")
            expect(st < SIGTERM_BOUND_S, f"{name}: one SIGTERM took {st:.2f} s to end the run")
            print(f"limit escape {name}: --max-instructions {limit}: {dt:.2f} s; "
                  f"SIGTERM to exit: {st:.3f} s")
        # the pattern bound counts back-references (this ran 27 s in one call)
        path = os.path.join(d, "backref.lua")
        open(path, "w").write('print(string.find(string.rep("a", 31000), "(.-)%1c"))\n')
        t0 = time.monotonic()
        rc, _, err = run("run", path, "-q", "-o", os.path.join(d, "o-backref"))
        one_line_error(err, 78, rc, r"backref\.lua:1: string\.find: the pattern could take up to "
                       r"\S+ match steps on this 31000-byte subject", "back-references")
        expect(time.monotonic() - t0 < 5, "the back-reference was not refused up front")
        # and when a limit high enough admits it, one SIGTERM ends the match
        rc, err, st = sigterm_exit(path, "-o", os.path.join(d, "t-backref"),
                                   "--max-instructions", "1000000000000000")
        expect(rc == 130 and "inside a long library call" in err, f"backref: {rc} {err!r}")
        expect(st < SIGTERM_BOUND_S, f"backref: one SIGTERM took {st:.2f} s")
        print(f"limit escape backref: refused up front; SIGTERM to exit in the match: {st:.3f} s")
        # C work that no hook and no library charge reaches (a synthetic trace
        # generated in the script's thread, ~2 s): the watchdog ends it 0.5 s
        # after the signal
        path = os.path.join(d, "synth.lua")
        open(path, "w").write('local t = flashspec.trace.synth { name = "big", prompts = 16, '
                              'prompt_len = 16, output_len = 8192, vocab = 32000, k = 4, '
                              'depth = 8, nodes = 12, target_layers = 36 }\n')
        rc, err, st = sigterm_exit(path, "-o", os.path.join(d, "t-synth"), wait=0.3)
        expect(rc == 130 and "still running 0.5 s after SIGTERM; ended at once" in err,
               f"synth: SIGTERM: exit {rc} {err!r}")
        expect(st < SIGTERM_BOUND_S, f"synth: one SIGTERM took {st:.2f} s")
        print(f"limit escape synth (C work): SIGTERM to exit: {st:.3f} s")
        # the time limit inside one long library call ends the run at once too
        expo = ('local s = string.rep("a", 36)\n'
                'print(s:find(string.rep("a?", 36) .. string.rep("a", 36) .. "b"))\n')
        path = os.path.join(d, "expo.lua")
        open(path, "w").write(expo)
        t0 = time.monotonic()
        rc, _, err = run("run", path, "-q", "-o", os.path.join(d, "o-expo"), "--max-seconds",
                         "0.5", "--max-instructions", "1000000000000000")
        dt = time.monotonic() - t0
        one_line_error(err, 78, rc, r"time limit \(--max-seconds\) reached inside a long library "
                       r"call")
        expect(dt < 5, f"the time limit inside a match took {dt:.1f} s")
        print(f"limit escape: --max-seconds 0.5 inside a match: {dt:.2f} s")


def case_signal_in_lua():
    """SIGTERM stops a script busy in Lua code (not only in sweeps): exit 130
    within a second or two."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "busy.lua")
        with open(p, "w") as f:
            f.write('local s = string.rep("ab", 1000)\nwhile true do local _ = s:gsub("a", "b") end\n')
        proc = subprocess.Popen([BIN, "run", p, "-q", "--unsafe", "-o", os.path.join(d, "o")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError("SIGTERM did not stop a script running Lua code")
        expect(proc.returncode == 130, f"exit {proc.returncode}, wanted 130: {err!r}")
        expect(time.monotonic() - t0 < 5, "stopped within a few seconds")
        expect("interrupted" in err, f"says it was interrupted: {err!r}")


def case_fifo_inputs():
    """A FIFO given as a trace or a profile is refused at once, never waited on."""
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "fifo.h5")
        os.mkfifo(fifo)
        rc, _, err, out = run_src(d, "t.lua", f'local t = flashspec.trace "{fifo}"\n')
        one_line_error(err, 65, rc, "not a regular file")
        cfg = os.path.join(d, "cfg")
        os.makedirs(os.path.join(cfg, "devices"))
        os.makedirs(os.path.join(cfg, "models"))
        os.mkfifo(os.path.join(cfg, "devices", "x.lua"))
        rc, _, err = run("profile", "x", "qwen3-8b-q4_0", env={"FLASHSPEC_CONFIG_DIR": cfg})
        one_line_error(err, 66, rc, "not a regular file")
        # a FIFO on the search path (a user directory before the shipped
        # profiles) named by a script, and one given as a profile file beside
        # it: "not a regular file", never "not found" or a wait
        os.mkfifo(os.path.join(d, "dev.lua"))
        user = os.path.join(d, "user")
        os.makedirs(os.path.join(user, "devices"))
        os.mkfifo(os.path.join(user, "devices", "y.lua"))
        for arg, needle in (('"y"', r"user/devices/y\.lua: cannot open device profile: not a "
                                    r"regular file"),
                            ('"dev.lua"', r"p\.lua:1: device profile file 'dev\.lua' is not a "
                                          r"regular file")):
            rc, _, err, out = run_src(d, "p.lua", f"flashspec.device {arg}\n",
                                      env={"FLASHSPEC_CONFIG_PATH": user})
            one_line_error(err, 66, rc, needle)


def case_error_messages():
    """Every script error is one line with file:line -- error(nil), error({}),
    a C stack overflow inside a library call, an error repeated by nested
    coroutine.wrap -- and control characters never reach the terminal raw."""
    with tempfile.TemporaryDirectory() as d:
        cases = (
            ("nil.lua", "local x = 1\nerror(nil)\n", r"nil\.lua:2: error raised with a nil value"),
            ("tbl.lua", "error({})\n", r"tbl\.lua:1: error raised with a table value"),
            ("cb.lua", 'string.rep("x", 3):gsub(".", function() error() end)\n',
             r"cb\.lua:1: error raised with a nil value"),
            ("cstack.lua", 'local function f() return string.gsub("a", "a", f) end\nf()\n',
             r"cstack\.lua:1: C stack overflow"),
            ("wrap.lua", "local function f() return coroutine.wrap(f)() end\nf()\n",
             r"^flashspec: \S*wrap\.lua:1: C stack overflow$"),
            ("esc.lua", 'error("bad \\27[31mred\\27[0m \\7")\n',
             r"esc\.lua:1: bad \\x1b\[31mred\\x1b\[0m \\x07$"),
        )
        # a caught flashspec error raised again keeps its status (66); a table
        # that only looks like one is the script's own error (78)
        rc, _, err, out = run_src(d, "again.lua", 'local ok, e = pcall(flashspec.trace, '
                                  '"no/such.h5")\nassert(e.code == 66)\nerror(e)\n')
        one_line_error(err, 66, rc, r"again\.lua:1: .*no/such\.h5")
        no_results(out)
        # an end of a trace's acceptance bracket that lacks the point's
        # prompts fails the point (78), naming the bracket
        rc, _, err, out = run_src(d, "short.lua", (
            "local fs = flashspec\n"
            "local t = fs.trace.synth { prompts = 2, output_len = 24 }\n"
            "local s = fs.trace.synth { prompts = 1, output_len = 24, seed = 2 }\n"
            "fs.run { device = fs.device 'oneplus12', target = fs.model 'qwen3-8b-q4_0',\n"
            "  draft = fs.model 'qwen3-8b-eagle3-q4_0', trace = t:bracket(s), max_new_tokens = 24,\n"
            "  policy = fs.policy.chain { k = 4 } }\n"))
        one_line_error(err, 78, rc, r"short\.lua:4: .*acceptance bracket: trace 1 of 1 holds 1 "
                       r"prompts; the point replays prompts 1 to 2")
        no_results(out)
        for forged in ('error({ code = 65, status = 5, msg = "forged" })\n',
                       'error(setmetatable({ code = 65, status = 5, msg = "forged" }, {}))\n'):
            rc, _, err, out = run_src(d, "forged.lua", forged)
            one_line_error(err, 78, rc, "forged")
            no_results(out)
        for name, src, needle in cases:
            rc, _, err, out = run_src(d, name, src)
            one_line_error(err, 78, rc, needle)
            expect("\x1b" not in err and "\x07" not in err, f"raw control bytes: {err!r}")
            no_results(out)
        # a profile name with a control character is refused where it is written
        cfg = os.path.join(d, "cfg")
        shutil.copytree(os.path.join(HOME, "configs"), cfg)
        path = os.path.join(cfg, "devices", "evil.lua")
        text = open(os.path.join(cfg, "devices", "oneplus12.lua")).read()
        expect('name = "oneplus12"' in text, "oneplus12.lua names itself")
        open(path, "w").write(text.replace('name = "oneplus12"', 'name = "evil\\27[2J"'))
        rc, so, err = run("profile", "evil", "qwen3-8b-q4_0", env={"FLASHSPEC_CONFIG_DIR": cfg})
        one_line_error(err, 78, rc, r"evil\.lua:\d+: .*'name' holds a control character")
        expect("\x1b" not in so + err, "raw ESC printed")
        # `flashspec policies FILE` prints what a policy file says of itself:
        # its control bytes (an OSC title sequence, a C1 CSI) escaped, UTF-8 kept
        pol = os.path.join(d, "osc.lua")
        open(pol, "w").write('return { name = "osc", build = function() end, params = {\n'
                             '  k = { default = 1, min = 0, max = 9, doc = "a \\27]0;pwned\\7 '
                             'title \\194\\155 csi \\195\\169t\\195\\169" },\n'
                             '  ["e\\27[2Jx"] = { default = "\\27[31m", doc = "key" } } }\n')
        for extra in ([], ["--markdown"]):
            rc, so, err = run("policies", pol, *extra)
            expect(rc == 0, f"policies {pol}: {rc} {err}")
            expect("\x1b" not in so and "\x07" not in so and "\u009b" not in so,
                   f"raw control bytes on stdout: {so!r}")
            expect("\\x1b]0;pwned\\x07 title \\xc2\\x9b csi \u00e9t\u00e9" in so, so)


def case_memory_counted():
    """--max-memory-mb counts what the API holds for the script (synthetic and
    loaded traces, result rows), not only the Lua heap: a synth loop stops at
    the limit instead of growing to gigabytes."""
    with tempfile.TemporaryDirectory() as d:
        loop = ("for i = 1, 1000 do\n"
                "  local t = flashspec.trace.synth { prompts = 8, output_len = 256, seed = i }\n"
                "end\n")
        open(os.path.join(d, "loop.lua"), "w").write(loop)
        t0 = time.monotonic()
        p = subprocess.Popen([BIN, "run", os.path.join(d, "loop.lua"), "-q", "-o",
                              os.path.join(d, "o1"), "--max-memory-mb", "64"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, err = p.communicate(timeout=120)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        one_line_error(err, 78, p.returncode, r"loop\.lua:2: flashspec\.trace\.synth: .*"
                       r"memory limit of 64 MiB")
        expect(usage.ru_maxrss < 400 * 1024, f"grew to {usage.ru_maxrss // 1024} MB")
        expect(time.monotonic() - t0 < 60, "stopped quickly")
        no_results(os.path.join(d, "o1"))
        # one request far past the limit is refused before anything is generated
        rc, _, err, out = run_src(d, "big.lua", "local t = flashspec.trace.synth "
                                  "{ prompts = 100000, output_len = 100000, nodes = 4096 }\n")
        one_line_error(err, 78, rc, r"big\.lua:1: .*may need .* MiB")
        # a loaded trace is counted too
        rc, _, err, out = run_src(d, "load.lua", "local t\nfor i = 1, 3 do t = flashspec.trace "
                                  f'"{SMALL}" end\nprint(t.name)\n', "--max-memory-mb", "64")
        expect(rc == 0, f"a small trace fits: {rc} {err!r}")


def case_script_args():
    """--arg KEY=VALUE reaches the script as flashspec.args; malformed or repeated keys are usage errors."""
    with tempfile.TemporaryDirectory() as d:
        src = ('local a = flashspec.args\n'
               'print("grid=" .. tostring(a.grid) .. " n=" .. tostring(a.n) .. '
               '" e=[" .. tostring(a.e) .. "] x=" .. tostring(a.x))\n')
        rc, so, err, out = run_src(d, "args.lua", src, "--arg", "grid=quick", "--arg", "n=3",
                                   "--arg", "e=")
        expect(rc == 0, f"--arg run failed: {rc} {err!r}")
        expect(so.strip() == "grid=quick n=3 e=[] x=nil", f"args seen: {so!r}")
        rc, so, err, out = run_src(d, "args.lua", src)
        expect(rc == 0 and so.strip() == "grid=nil n=nil e=[nil] x=nil", f"no args: {so!r}")
        for bad, needle in ((["--arg", "grid"], "KEY=VALUE"), (["--arg", "=x"], "KEY=VALUE"),
                            (["--arg", "a=1", "--arg", "a=2"], "given twice")):
            rc, so, err, out = run_src(d, "args.lua", src, *bad)
            one_line_error(err, 64, rc, needle)
            no_results(out)


def case_profile_overrides():
    """flashspec.device/model(NAME, { key = value }): overrides validated like profile keys."""
    with tempfile.TemporaryDirectory() as d:
        rc, out, err = run("run", script("overrides.lua"), "-o", d, "-q")
        expect(rc == 0 and "overrides ok" in out, f"overrides.lua failed ({rc}): {err}")
        rows = read_csv(os.path.join(d, "results.csv"))
        expect("oneplus12[read_gbps=2.5]" in [r["device"] for r in rows],
               f"derived name not in results.csv: {[r['device'] for r in rows]}")
        cases = {
            "unknown.lua": ('local fs = flashspec\nlocal d = fs.device("oneplus12", {\n'
                            '  read_gbp = 4.2,\n})\n', [r"unknown\.lua:3:", "'read_gbp'",
                                                        "did you mean 'read_gbps'"]),
            "range.lua": ('local fs = flashspec\nlocal m = fs.model("qwen3-8b-q4_0", '
                          '{ npu_efficiency = 9 })\n',
                          [r"range\.lua:2:", "'npu_efficiency'", "= 9 ", r"\[0\.001, 4\]"]),
            "notable.lua": ('local d = flashspec.device("oneplus12", "fast")\n',
                            [r"notable\.lua:1:", "must be a table", "got string"]),
            "base.lua": ('local fs = flashspec\nlocal d = fs.device("oneplus12", {\n'
                         '  read_gbps = 4,\n  base = "sd8elite_ufs41",\n})\n',
                         [r"base\.lua:4:", "'base' is not allowed"]),
            "check.lua": ('local d = flashspec.device("oneplus12", { npu_gbps = 100 })\n',
                          [r"check\.lua:1:", "cannot exceed dram_gbps"]),
        }
        for name, (src, needles) in cases.items():
            rc, _, err, out = run_src(d, name, src)
            one_line_error(err, 78, rc, *needles)
            no_results(out)


def case_profile_search_path():
    """Profiles come from the search path: $FLASHSPEC_CONFIG_PATH's directories
    first, the shipped ones last.  A user profile derives from a shipped one,
    may shadow it under the same name (its base then resolves further along),
    a profile file is loaded by path, `flashspec profiles` lists the union,
    and an unknown name names every directory looked in."""
    with tempfile.TemporaryDirectory() as d:
        u1, u2 = os.path.join(d, "u1"), os.path.join(d, "u2")
        for u in (u1, u2):
            os.makedirs(os.path.join(u, "devices"))
            os.makedirs(os.path.join(u, "models"))
        write_file(os.path.join(u1, "devices"), "myphone.lua",
                   'return { base = "oneplus12", npu_gflops = 1234.5 }\n')
        # shadows the shipped oneplus12 and derives from it
        write_file(os.path.join(u2, "devices"), "oneplus12.lua",
                   'return { base = "oneplus12", read_gbps = 2.5 }\n')
        write_file(os.path.join(u2, "models"), "tiny8b.lua",
                   'return { base = "qwen3-8b-q4_0", name = "tiny8b" }\n')
        scr = os.path.join(d, "scr")
        os.makedirs(scr)
        write_file(scr, "local.lua", 'return { base = "myphone", cpu_gflops = 77 }\n')
        src = TUNE_HEAD + """
local rows = fs.sweep(with { prompts = 1, policy = fs.policy.flash_ar {},
  device = { fs.device "myphone", fs.device "oneplus12", fs.device "local.lua" },
  target = fs.model "tiny8b" })
for _, r in ipairs(rows) do print(r.device, r.target, r.tokens_per_s) end
"""
        p = write_file(scr, "s.lua", src)
        env = {"FLASHSPEC_CONFIG_PATH": f"{u1}::{u2}"}
        rc, out, err = run("run", p, "-q", "-o", os.path.join(d, "o"), env=env)
        expect(rc == 0, f"{rc} {err}")
        import json
        rec = json.load(open(os.path.join(d, "o", "run.json")))
        vals = {x["name"]: x["values"] for x in rec["devices"]}
        expect(set(vals) == {"myphone", "oneplus12", "local"}, f"devices {set(vals)}")
        # myphone -> oneplus12 (the user's, read_gbps 2.5) -> shipped oneplus12
        expect(vals["myphone"]["npu_gflops"] == 1234.5 and vals["myphone"]["read_gbps"] == 2.5,
               f"myphone {vals['myphone']}")
        expect(vals["oneplus12"]["read_gbps"] == 2.5 and vals["local"]["cpu_gflops"] == 77 and
               vals["local"]["npu_gflops"] == 1234.5, "shadowing and file profiles")
        rc, out, err = run("profiles", env=env)
        expect(rc == 0 and re.search(r"^myphone ", out, re.M) and re.search(r"^tiny8b ", out, re.M)
               and re.search(r"^sd8elite_ufs41 ", out, re.M) and
               len(re.findall(r"^oneplus12 ", out, re.M)) == 1, f"profiles: {rc} {out} {err}")
        # without the path the user's names are unknown, and said so
        rc, _, err = run("run", p, "-q", "-o", os.path.join(d, "o2"))
        one_line_error(err, 78, rc, r"unknown device 'myphone'")
        rc, _, err = run("run", write_file(scr, "bad.lua", 'flashspec.device "myphon"\n'), "-q",
                         "-o", os.path.join(d, "o3"), env=env)
        one_line_error(err, 78, rc, r"did you mean 'myphone'", "no devices/myphon.lua in " +
                       re.escape(u1) + ", " + re.escape(u2) + ", ")
        rc, _, err = run("run", write_file(scr, "nofile.lua", 'flashspec.device "gone.lua"\n'),
                         "-q", "-o", os.path.join(d, "o4"), env=env)
        one_line_error(err, 66, rc, r"device profile file 'gone\.lua' not found")
        # profile files are found beside the script or in the project: an
        # absolute path or one through '..' is refused, even to a valid profile
        for fn, arg in (("device", os.path.join(scr, "local.lua")), ("device", "../scr/local.lua"),
                        ("model", "sub/../../x.lua"), ("device", "a/.."),
                        ("model", os.path.join(HOME, "configs", "models", "qwen3-8b-q4_0.lua"))):
            rc, _, err = run("run", write_file(scr, "abs.lua", f'flashspec.{fn} "{arg}"\n'),
                             "-q", "-o", os.path.join(d, "o5"), env=env)
            one_line_error(err, 78, rc, rf"abs\.lua:1: {fn} profile file '{re.escape(arg)}': a "
                           r"profile file is a path inside the script's directory or the project, "
                           r"without '\.\.' and not absolute")


def case_model_pair():
    """A point whose models do not match the pair its trace was recorded with
    (roles swapped, another architecture) gets one warning line per trace and
    pair, and is an error (exit 78, nothing written) under --strict; a derived
    profile of the same architecture, the recorded pair itself, and traces
    recorded with models that have no profile (synthetic) pass quietly."""
    src = """local fs = flashspec
local tr = fs.trace "traces/data/workload-code-strong.h5"
local q8, e3 = fs.model "qwen3-8b-q4_0", fs.model "qwen3-8b-eagle3-q4_0"
local function go(t, d, pol, trace)
  return fs.run { device = fs.device "oneplus12", target = t, draft = d, trace = trace or tr,
                  prompts = 1, max_new_tokens = 8, policy = pol or fs.policy.chain {} }
end
go(q8, e3)
go(fs.model("qwen3-8b-q4_0", { name = "q8-what-if", flash_efficiency = 1.5 }), e3)
go(q8, e3, nil, fs.trace "traces/data/synth-small.h5")
go(fs.model "qwen3-14b-q4_0", e3, nil, fs.trace "traces/data/synth-small.h5")
if flashspec.args.bad == "swap" then go(e3, q8) go(e3, q8) end
if flashspec.args.bad == "family" then go(fs.model "llama3.1-8b-q4_0", e3, fs.policy.flash_ar {}) end
if flashspec.args.bad == "draft" then go(q8, fs.model "qwen3-0.6b-q4_0") end
print("done")
"""
    with tempfile.TemporaryDirectory() as d:
        p = write_file(d, "pair.lua", src)
        rc, out, err = run("run", p, "-o", os.path.join(d, "ok"), "--strict", "-q")
        expect(rc == 0 and "done" in out and "recorded with" not in err, f"quiet: {rc} {err}")
        for bad, needle in [("swap", r"its draft qwen3-8b-q4_0 is the recorded target and its "
                                     r"target the recorded draft \(swapped\)"),
                            ("family", r"the target llama3\.1-8b-q4_0 \(layers 32, hidden 4096, "
                                       r"vocab 128256\) is another model than the recorded "
                                       r"qwen3-8b-q4_0 \(layers 36"),
                            ("draft", r"the draft qwen3-0\.6b-q4_0 .* is another model than "
                                      r"the recorded qwen3-8b-eagle3-q4_0")]:
            rc, out, err = run("run", p, "-q", "--arg", f"bad={bad}", "-o",
                               os.path.join(d, "w" + bad))
            warns = [l for l in err.splitlines() if "recorded with" in l]
            expect(rc == 0 and "done" in out and len(warns) == 1 and
                   warns[0].startswith("flashspec: warning: ") and re.search(needle, warns[0])
                   and "trace 'workload-code-strong' was recorded with target qwen3-8b-q4_0 "
                   "and draft qwen3-8b-eagle3-q4_0" in warns[0], f"{bad}: {rc} {err}")
            out_dir = os.path.join(d, "s" + bad)
            rc, out, err = run("run", p, "-q", "--strict", "--arg", f"bad={bad}", "-o", out_dir)
            one_line_error(err, 78, rc, r"pair\.lua:5:", needle, r"\(--strict\)$")
            no_results(out_dir)


def case_demo_jobs():
    """scripts/demo -j N (and $NINJAFLAGS) reach ninja: fs_build, with a ninja
    that records its arguments, passes both; a bad -j is one line, exit 64,
    before anything is built."""
    with tempfile.TemporaryDirectory() as d:
        fake = os.path.join(d, "bin")
        os.makedirs(fake)
        log = os.path.join(d, "ninja.args")
        with open(os.path.join(fake, "ninja"), "w") as f:
            f.write(f'#!/bin/sh\necho "$@" > {log}\n')
        os.chmod(os.path.join(fake, "ninja"), 0o755)
        bdir = os.path.join(d, "b")
        os.makedirs(bdir)
        open(os.path.join(bdir, "build.ninja"), "w").close()
        setup = os.path.join(HOME, "scripts", "setup.sh")
        cmd = (f'. "{setup}"; echo "${{fs_packages[*]}}" > "{bdir}/.fs-packages"; '
               f'fs_root=/; fs_build "{bdir[1:]}"')
        for env, want in [({"FS_BUILD_JOBS": "3", "NINJAFLAGS": "-l 9"}, f"-C /{bdir[1:]} -l 9 -j 3"),
                          ({"NINJAFLAGS": ""}, f"-C /{bdir[1:]}")]:
            p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True,
                               env={**os.environ, "PATH": fake + ":" + os.environ["PATH"], **env})
            got = open(log).read().strip() if os.path.exists(log) else ""
            expect(p.returncode == 0 and got.replace("//", "/") == want,
                   f"ninja got '{got}', wanted '{want}': {p.stderr}")
        demo = os.path.join(HOME, "scripts", "demo")
        for args, needle in [(["-j", "x"], "positive number of jobs, got 'x'"),
                             (["-j0"], "got '0'"), (["--jobs"], "--jobs needs a number")]:
            p = subprocess.run([demo, *args], capture_output=True, text=True, timeout=60)
            expect(p.returncode == 64 and p.stderr.count("\n") == 1 and needle in p.stderr,
                   f"scripts/demo {args}: {p.returncode} {p.stderr!r}")


def case_profile_inheritance():
    """A profile with `base = NAME` is its base plus its own keys, through the CLI and scripts."""
    with tempfile.TemporaryDirectory() as cfg:
        for kind in ("devices", "models"):
            os.mkdir(os.path.join(cfg, kind))
        for rel in ("devices/oneplus12.lua", "models/qwen3-8b-q4_0.lua"):
            with open(os.path.join(HOME, "configs", rel)) as f, \
                    open(os.path.join(cfg, rel), "w") as g:
                g.write(f.read())
        shutil.copytree(os.path.join(HOME, "configs", "parts"), os.path.join(cfg, "parts"))
        files = {
            "slowphone.lua": '-- the OnePlus 12 with slower flash\nreturn {\n'
                             '  base = "oneplus12",\n  read_gbps = 2.5,\n}\n',
            "orphan.lua": 'return {\n  base = "nothere",\n}\n',
            "loop_a.lua": 'return { base = "loop_b" }\n',
            "loop_b.lua": 'return {\n  base = "loop_a",\n}\n',
            "bad_child.lua": 'return {\n  base = "oneplus12",\n  read_gbs = 2,\n}\n',
        }
        for name, text in files.items():
            with open(os.path.join(cfg, "devices", name), "w") as f:
                f.write(text)
        env = {"FLASHSPEC_CONFIG_DIR": cfg}

        def token_ms(dev):
            rc, out, err = run("profile", dev, "qwen3-8b-q4_0", env=env)
            expect(rc == 0, f"profile {dev} failed ({rc}): {err}")
            m = re.search(r"flash-ar token\s+([\d.]+) ms", out)
            expect(m, f"no Flash-AR line for {dev}")
            return float(m.group(1))
        expect(token_ms("slowphone") > 1.5 * token_ms("oneplus12"),
               "the derived profile's read_gbps did not apply")
        rc, _, err = run("profile", "orphan", "qwen3-8b-q4_0", env=env)
        one_line_error(err, 66, rc, r"orphan\.lua:2:", "'nothere'")
        rc, _, err = run("profile", "loop_a", "qwen3-8b-q4_0", env=env)
        one_line_error(err, 78, rc, r"loop_b\.lua:2:", "cycle", "loop_a -> loop_b -> loop_a")
        rc, _, err = run("profile", "bad_child", "qwen3-8b-q4_0", env=env)
        one_line_error(err, 78, rc, r"bad_child\.lua:3:", "'read_gbs'", "did you mean 'read_gbps'")

        with tempfile.TemporaryDirectory() as d:
            src = f"""local fs = flashspec
local tr = fs.trace "{SMALL}"
local tgt = fs.model "qwen3-8b-q4_0"
local function tps(dev)
  return fs.run {{ device = dev, target = tgt, trace = tr, policy = fs.policy.flash_ar {{}},
                  max_new_tokens = 16 }}
end
local a, b = tps(fs.device "oneplus12"), tps(fs.device "slowphone")
local c = tps(fs.device("slowphone", {{ read_gbps = 1 }}))
assert(b.tokens_per_s < a.tokens_per_s and c.tokens_per_s < b.tokens_per_s)
assert(b.device == "slowphone" and c.device == "slowphone[read_gbps=1]", c.device)
print("inheritance ok")
"""
            p = os.path.join(d, "inherit.lua")
            with open(p, "w") as f:
                f.write(src)
            rc, out, err = run("run", p, "-o", os.path.join(d, "out"), "-q", env=env)
            expect(rc == 0 and "inheritance ok" in out, f"inherit.lua failed ({rc}): {err}")
            for dev, code, needles in (("orphan", 66, [r"orphan\.lua:2:", "'nothere'"]),
                                       ("loop_a", 78, ["cycle"])):
                p = os.path.join(d, dev + ".lua")
                with open(p, "w") as f:
                    f.write(f'local d = flashspec.device "{dev}"\n')
                out = os.path.join(d, "out-" + dev)
                rc, _, err = run("run", p, "-o", out, "-q", env=env)
                one_line_error(err, code, rc, *needles)
                no_results(out)


def case_unwritable_output():
    with tempfile.TemporaryDirectory() as d:
        blocker = os.path.join(d, "file")
        open(blocker, "w").write("x")
        rc, _, err = run("run", script("good.lua"), "-o", os.path.join(blocker, "out"), "-q")
        one_line_error(err, 73, rc, "file/out")


def case_early_output_errors():
    # output paths are checked before the script runs: nothing is printed or
    # computed, one line, exit 73
    with tempfile.TemporaryDirectory() as d:
        blocker = os.path.join(d, "file")
        open(blocker, "w").write("x")
        for args, needle in ((["-o", ""], "empty directory name"),
                             (["-o", os.path.join(d, "out"), "--timeline", d], "Is a directory"),
                             (["-o", os.path.join(blocker, "deeper", "out")], "Not a directory")):
            rc, out, err = run("run", script("good.lua"), *args)
            one_line_error(err, 73, rc, needle)
            expect(out == "", f"the script ran before the output check: {out!r}")
        rc, out, err = run("run", d, "-q")  # a directory as the script
        one_line_error(err, 66, rc, "is a directory")
        rc, out, err = run("run", script("good.lua"), "-q", "-o", os.path.join(d, "a", "b", "c"))
        expect(rc == 0 and os.path.isfile(os.path.join(d, "a", "b", "c", "results.csv")),
               f"a missing directory chain is created: {rc} {err}")


def case_silent_clamps():
    rc, out, err = run("run", script("clamps.lua"), "-q")
    expect(rc == 0 and "clamps ok" in out, f"clamps.lua: {rc} {err}")
    warns = [l for l in err.splitlines() if l.startswith("flashspec: warning:")]
    expect(len(warns) == 2, f"one warning per kind, said once: {warns!r}")
    expect("max_new_tokens = 1024" in warns[0] and "effective_new_tokens" in warns[0], warns[0])
    expect("in 2 of 4 points the tree-size cap the script set never bound" in warns[1] and
           "verify_rows_max" in warns[1], warns[1])


def case_tree_nodes():
    """`tree_nodes` (nodes per verified tree, root included) sizes every tree
    policy through its own parameter; no verification passes it; a list
    sweeps; the cap warning comes only where the script set a cap that never
    bound, once per script; misuse is one line, exit 78."""
    mapping = {"chain": ("k", -1), "adaptive_chain": ("k_max", -1),
               "eagle2": ("total_tokens", -1), "opt_tree": ("nodes", -1),
               "sequoia": ("max_nodes", 0), "lever": ("n_max", -1), "lyanna": ("b", -1),
               "edgellm": ("max_tokens", -1), "bld": ("max_len", -1)}
    pols = ", ".join(f"fs.policy.{p} {{ tree_nodes = {{ 8, 24 }} }}" for p in mapping)
    src = TUNE_HEAD + f"""
local rows = fs.sweep(with {{ prompts = 2, policy = {{ {pols},
  fs.policy.edgellm {{ tree_nodes = 12, fallback = false }},
  fs.policy.specinfer {{ tree_nodes = {{ 6, 16, 100 }} }},
  fs.policy.specinfer {{ tree_nodes = 10, widths = {{ 3, 2, 1 }} }} }} }})
for _, r in ipairs(rows) do
  print(r.policy, r.policy_params, r.verify_rows_max, r.tree_nodes)
end
"""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "tn.lua")
        open(p, "w").write(src)
        rc, out, err = run("run", p, "-o", os.path.join(d, "out"))
        expect(rc == 0, f"{rc} {err}")
        rows = [l.split("\t") for l in out.splitlines()]
        expect(len(rows) == 2 * len(mapping) + 5, f"{len(rows)} rows")
        for i, (pol, (param, off)) in enumerate(mapping.items()):
            for j, n in enumerate((8, 24)):
                name, params, vmax, tn = rows[2 * i + j]
                kv = dict(x.split("=", 1) for x in params.split(","))
                expect(name == pol and int(kv[param]) == n + off, f"{pol}: {params}")
                # the results' column reads the same rule back
                expect(float(tn) == n, f"{pol} tree_nodes column {tn}, set {n}")
                # Lyanna fuses a re-sampled subtree (up to B more rows) into a
                # tree; EdgeLLM verifies branch by branch (shared prefixes repeat)
                most = 2 * n - 1 if pol == "lyanna" else n
                expect(pol == "edgellm" or int(vmax) <= most,
                       f"{pol} tree_nodes={n}: {vmax} rows verified")
                if pol in ("chain", "eagle2"):  # fixed sizes; the others are caps
                    expect(int(vmax) == n, f"{pol} tree_nodes={n} binds: {vmax}")
        e = rows[2 * len(mapping)]
        expect("budget=11" in e[1] and "fallback=false" in e[1], f"edgellm without fallback {e}")
        expect(float(e[3]) == 12, f"edgellm without fallback: tree_nodes column {e}")
        sp = rows[-4:-1]
        expect([r[1].split(",")[0] for r in sp] ==
               ["widths=1/1/3", "widths=1/1/3/1/1/1", "widths=1/1/3/1/1/1/1/1"], f"{sp}")
        expect([int(r[2]) for r in sp] == [6, 15, 21], f"specinfer rows {sp}")
        expect([float(r[3]) for r in rows[-4:]] == [6, 15, 21, 10], f"specinfer column {sp}")
        expect(rows[-1][1].startswith("widths=3/2,"), f"specinfer shape kept {rows[-1]}")
        warns = [l for l in err.splitlines() if "tree-size cap" in l]
        expect(len(warns) == 1 and "said once per script" in warns[0], f"{warns}")
        # a default cap that never binds is no news; a set one, once per script
        quiet = TUNE_HEAD + "fs.sweep(with { prompts = 2, policy = fs.policy.lever {} })\n"
        rc, _, err = run("run", write_file(d, "q.lua", quiet), "-o", os.path.join(d, "q"))
        expect(rc == 0 and "tree-size cap" not in err, f"default caps warned: {err}")
        twice = TUNE_HEAD + ("fs.sweep(with { prompts = 2, policy = fs.policy.lever "
                             "{ tree_nodes = 128 } })\n") * 2
        rc, _, err = run("run", write_file(d, "t.lua", twice), "-o", os.path.join(d, "t"))
        expect(rc == 0 and err.count("tree-size cap the script set never bound") == 1, err)
        for name, pol, needle in [
                ("b1.lua", "flash_ar { tree_nodes = 8 }", r"flash_ar verifies one row"),
                ("b2.lua", "chain { tree_nodes = 8, k = 7 }", r"set one of 'tree_nodes' and 'k'"),
                ("b3.lua", "lever { tree_nodes = 1 }", r"tree_nodes must be an integer in \[2, "),
                ("b4.lua", "chain { tree_nodes = { 8, 2.5 } }", r"must be a list of integers"),
                ("b5.lua", "specinfer { tree_nodes = 3, widths = { 4 } }",
                 r"not even the first level of widths fits"),
                ("b6.lua", "chain { tree_nodes = {} }", r"'tree_nodes' is an empty list")]:
            rc, _, err, out = run_src(d, name, TUNE_HEAD + f"fs.sweep(with {{ prompts = 1, "
                                      f"policy = fs.policy.{pol} }})\n")
            one_line_error(err, 78, rc, re.escape(name) + r":7:", needle)
            no_results(out)


def case_bld():
    """Big Little Decoder from a script: `flashspec policies bld` lists its
    parameters (fallback, max_len, unit) and tree_nodes; fallback = 0 never
    falls back, so bld is then Chain-SD with k = max_len, number for number;
    a stricter threshold drafts shorter chains; greedy output is the
    reference's (token_mismatch 0) at every threshold; a value out of range
    is one line naming the key, exit 78."""
    rc, out, err = run("policies", "bld")
    expect(rc == 0, f"policies bld: {rc} {err}")
    rows = {l.split()[0]: l.split()[1:4] for l in out.splitlines()[2:] if l.strip()}
    expect(rows.get("fallback") == ["0.6", "number", "0..1"] and
           rows.get("max_len") == ["10", "integer", "1..64"] and
           rows.get("unit", [None])[0] == "cpu" and
           rows.get("tree_nodes") == ["11", "integer", "2..65"], f"policies bld: {out!r}")
    rc, out, _ = run("policies")
    expect(any(l.split()[:2] == ["bld", "drafts"] for l in out.splitlines()),
           f"bld in the policy list: {out!r}")
    src = TUNE_HEAD + """
local rows = fs.sweep(with { prompts = 4, policy = {
  fs.policy.bld { max_len = 5, fallback = { 0, 0.6, 0.95 } }, fs.policy.chain { k = 5 } } })
for _, r in ipairs(rows) do
  print(r.policy, r.policy_params, r.tree_nodes, r.verify_rows_max, r.token_mismatch,
        r.tokens, r.cycles, r.verify_rows, string.format("%.17g", r.tokens_per_s))
end
"""
    with tempfile.TemporaryDirectory() as d:
        rc, out, err, _ = run_src(d, "bld.lua", src)
        expect(rc == 0, f"bld sweep: {rc} {err}")
        rows = [l.split("\t") for l in out.splitlines()]
        expect(len(rows) == 4 and [r[1] for r in rows] ==
               ["fallback=0,max_len=5,unit=cpu", "fallback=0.6,max_len=5,unit=cpu",
                "fallback=0.95,max_len=5,unit=cpu", "k=5,unit=cpu"], f"rows {rows}")
        expect(all(float(r[2]) == 6 and int(r[3]) <= 6 and float(r[4]) == 0 for r in rows),
               f"tree_nodes 6, at most 6 rows, exact output: {rows}")
        expect(rows[0][3:] == rows[3][3:], f"fallback = 0 is chain k = 5: {rows[0]} {rows[3]}")
        rows_verified = [float(r[7]) for r in rows[:3]]
        expect(rows_verified[0] > rows_verified[1] > rows_verified[2],
               f"a stricter threshold verifies fewer rows a cycle: {rows_verified}")
        for name, pol, needle in [
                ("f1.lua", "bld { fallback = 1.5 }", r"key 'fallback' = 1\.5 is out of range \[0, 1\]"),
                ("f2.lua", "bld { fallback = -0.1 }", r"key 'fallback' = -0\.1 is out of range \[0, 1\]"),
                ("f3.lua", "bld { max_len = 0 }", r"key 'max_len' = 0 is out of range \[1, 64\]"),
                ("f4.lua", "bld { max_len = 65 }", r"key 'max_len' = 65 is out of range \[1, 64\]"),
                # BiLD's relaxed rollback is the run's accept rule, not a key
                ("f5.lua", "bld { rollback = 5 }", r"unknown key 'rollback' in flashspec\.policy\.bld")]:
            rc, _, err, o = run_src(d, name, TUNE_HEAD + f"local p = fs.policy.{pol}\n")
            one_line_error(err, 78, rc, re.escape(name) + r":7: ", r"flashspec\.policy\.bld", needle)
            no_results(o)


def write_file(d, name, text):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def case_researcher():
    """What a user reads: `sweep --help` is sweep's own; `policies chain` and
    `policies lever` list `tree_nodes` (its default and range in nodes, root
    included), Flash-AR none; results carry a tree_nodes column (the size the
    script set, for a fixed tree and a cap alike) and tune_objective; run.json
    names each trace's file (relative to the project, or as given) and a
    synthetic trace's generator settings; a missing trace names the nearest
    file; an unwritable -o names what is in the way; calibrate's progress
    line on a terminal has an ETA."""
    import json
    import pty
    import select
    rc, out, _ = run("sweep", "--help")
    expect(rc == 0 and out.startswith("usage: flashspec sweep") and "MPI" in out and
           "flashspec run --help" in out, f"sweep --help: {out[:200]!r}")
    for pol, default, lo, hi in (("chain", "9", "2", "65"), ("lever", "65", "2", "256")):
        rc, out, _ = run("policies", pol)
        row = [l.split() for l in out.splitlines() if l.split()[:1] == ["tree_nodes"]]
        expect(rc == 0 and row and row[0][1] == default and row[0][2:4] == ["integer",
                                                                            f"{lo}..{hi}"],
               f"policies {pol} lists tree_nodes: {out[-400:]!r}")
    rc, out, _ = run("policies", "flash_ar")
    expect(rc == 0 and "tree_nodes" not in out, "Flash-AR takes no tree_nodes")
    with tempfile.TemporaryDirectory() as d:
        outside = os.path.join(d, "mine.h5")
        shutil.copy(SMALL, outside)
        src = f"""local fs = flashspec
local base = {{ device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", max_new_tokens = 8, prompts = 1 }}
local syn = fs.trace.synth {{ prompts = 1, prompt_len = 8, output_len = 16, vocab = 32000,
  k = 4, depth = 8, nodes = 12, target_layers = 36, exit_layers = {{ 18 }},
  accept = {{ 0.7, 0.6 }}, coverage = 0.9, seed = 4242 }}
local pts = {{}}
for _, tr in ipairs {{ fs.trace "traces/data/synth-small.h5", fs.trace "{outside}", syn }} do
  for _, p in ipairs {{ fs.policy.chain {{ tree_nodes = 8 }}, fs.policy.lever {{ tree_nodes = 8 }},
                       fs.policy.flash_ar {{}} }} do
    pts[#pts + 1] = {{ trace = tr, policy = p }}
  end
end
base.points = pts
fs.sweep(base)
"""
        rc, _, err, res = run_src(d, "tn.lua", src)
        expect(rc == 0, f"tree_nodes run: {err}")
        with open(os.path.join(res, "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        own = {"chain": "param_k", "lever": "param_n_max"}
        tn = {(r["policy"], r["tree_nodes"], r.get(own.get(r["policy"], ""), "-")) for r in rows}
        expect(tn == {("chain", "8.0", "7.0"), ("lever", "8.0", "7.0"), ("flash_ar", "1.0", "-")},
               f"tree_nodes column (what the script set; k and n_max 7): {sorted(tn)}")
        expect({r["tune_objective"] for r in rows} == {"none"}, "tune_objective: none")
        rec = json.load(open(os.path.join(res, "run.json")))
        traces = {t["name"]: t for t in rec["traces"]}
        expect(traces.get("synth-small", {}).get("path") == "traces/data/synth-small.h5" and
               traces.get("mine", {}).get("path") == outside,
               f"trace paths: relative to the project, else as given ({traces})")
        syn = [t["synth"] for t in rec["traces"] if "synth" in t]
        expect(len(syn) == 1 and syn[0]["seed"] == 4242 and syn[0]["accept"] == [0.7, 0.6] and
               syn[0]["output_len"] == 16, f"the synthetic trace's settings: {syn}")
        # a missing trace: the nearest file; an output directory under a file
        rc, _, err, _ = run_src(d, "typo.lua",
                                'flashspec.trace "traces/data/workload-code-strng.h5"\n')
        one_line_error(err, 66, rc, re.escape("did you mean "
                                              "'traces/data/workload-code-strong.h5'?"))
        blocker = os.path.join(d, "file")
        open(blocker, "w").close()
        rc, _, err = run("run", os.path.join(SCRIPTS, "good.lua"), "-q", "-o",
                         os.path.join(blocker, "a", "b"))
        one_line_error(err, 73, rc, re.escape(f"'{blocker}' is a file, not a directory; choose "
                                              "another directory with -o DIR"))
        # calibrate on a terminal: the progress line has an ETA
        spec = os.path.join(HOME, "tests", "calibrate", "data", "device.lua")
        ref = os.path.join(HOME, "tests", "calibrate", "data", "ref-device.csv")
        master, slave = pty.openpty()
        p = subprocess.Popen([BIN, "calibrate", spec, "-j", "2", "-o", os.path.join(d, "cal"),
                              "--arg", "mode=fit", "--arg", f"ref={ref}"],
                             stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
        os.close(slave)
        seen = b""
        while True:
            r, _, _ = select.select([master], [], [], 120)
            if not r:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        p.wait(timeout=300)
        os.close(master)
        text = seen.decode(errors="replace")
        expect(p.returncode == 0 and re.search(r"evaluation \d+, RMS [0-9.]+%, [0-9.]+ s each, "
                                               r"ETA at most ~\d+ s \(max_iter\)", text),
               f"calibrate's progress line has an ETA: {text[-400:]!r}")


def case_rerun():
    """flashspec rerun DIR runs DIR/script.lua with run.json's arguments and
    recorded profiles: the same result bytes even after a profile file
    changed, with one warning naming the changed key and both values; the
    script's relative trace path resolves from the recorded script's
    directory; a run.json that is not JSON, or has no profiles, is one line,
    exit 65; a directory without script.lua, exit 66."""
    import json
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "cfg", "devices")
        os.makedirs(cfg)
        prof = os.path.join(cfg, "myphone.lua")
        with open(prof, "w") as f:
            f.write('return { base = "oneplus12", read_gbps = 4.5 }\n')
        work = os.path.join(d, "work")
        os.makedirs(work)
        shutil.copy(SMALL, os.path.join(work, "small.h5"))
        script_path = os.path.join(work, "study.lua")
        with open(script_path, "w") as f:
            f.write("""local fs = flashspec
fs.sweep { device = fs.device "myphone", target = fs.model "qwen3-8b-q4_0",
           draft = fs.model "qwen3-8b-eagle3-q4_0", trace = fs.trace "small.h5",
           policy = { fs.policy.flash_ar {}, fs.policy.chain { k = tonumber(fs.args.k) } },
           max_new_tokens = 8, prompts = 1 }
""")
        env = {"FLASHSPEC_CONFIG_PATH": os.path.join(d, "cfg")}
        res = os.path.join(d, "res")
        rc, _, err = run("sweep", script_path, "-q", "-o", res, "--arg", "k=5", env=env)
        expect(rc == 0, f"the run: {err}")
        rec = json.load(open(os.path.join(res, "run.json")))
        profs = {p["path"]: p for p in rec["profiles"]}
        expect(prof in profs and profs[prof]["values"]["read_gbps"] == 4.5 and
               "configs/models/qwen3-8b-q4_0.lua" in profs,
               f"run.json records the profiles as loaded: {sorted(profs)}")
        # today's file changes; the rerun uses the recorded value
        with open(prof, "w") as f:
            f.write('return { base = "oneplus12", read_gbps = 7 }\n')
        rc, _, err = run("rerun", res, env=env)
        lines = err.splitlines()
        expect(rc == 0 and any("warning: rerun:" in l and "myphone.lua" in l and
                               "read_gbps 7 today, 4.5 in run.json" in l for l in lines),
               f"rerun warns about the changed profile: {err}")
        expect(any(l.endswith("rerun/results.csv is byte-identical to " +
                              os.path.join(res, "results.csv")) for l in lines) and
               open(os.path.join(res, "rerun", "results.csv"), "rb").read() ==
               open(os.path.join(res, "results.csv"), "rb").read() and
               open(os.path.join(res, "rerun", "results.h5"), "rb").read() ==
               open(os.path.join(res, "results.h5"), "rb").read(),
               f"the rerun gives the same bytes: {err}")
        # the file gone altogether: the recorded values still stand for it
        os.rename(prof, prof + ".away")
        rc, _, err = run("rerun", res, "-o", os.path.join(d, "gone"), env=env)
        expect(rc == 0 and "no longer loads" in err and
               open(os.path.join(d, "gone", "results.csv"), "rb").read() ==
               open(os.path.join(res, "results.csv"), "rb").read(),
               f"a profile file gone since: the recorded one is used ({rc}: {err})")
        os.rename(prof + ".away", prof)
        # the same script run afresh sees today's profile: other bytes
        rc, _, err = run("sweep", script_path, "-q", "-o", os.path.join(d, "today"), "--arg",
                         "k=5", env=env)
        expect(rc == 0 and open(os.path.join(d, "today", "results.csv"), "rb").read() !=
               open(os.path.join(res, "results.csv"), "rb").read(),
               "today's profile gives other results (the rerun did not read it)")
        # bad records
        broken = os.path.join(d, "broken")
        shutil.copytree(res, broken, ignore=shutil.ignore_patterns("rerun", "points"))
        with open(os.path.join(broken, "run.json"), "w") as f:
            f.write('{"script": {"path": "x"}, "profiles": [1, }')
        rc, _, err = run("rerun", broken, "-o", os.path.join(d, "o1"))
        one_line_error(err, 65, rc, r"run\.json: not a run record: byte \d+")
        with open(os.path.join(broken, "run.json"), "w") as f:
            json.dump({"script": {"path": "x", "args": {"k": "5"}}, "command": []}, f)
        rc, _, err = run("rerun", broken, "-o", os.path.join(d, "o2"))
        one_line_error(err, 65, rc, "no \"profiles\" member")
        os.remove(os.path.join(broken, "script.lua"))
        rc, _, err = run("rerun", broken)
        one_line_error(err, 66, rc, "script.lua: cannot read")
        rc, out, _ = run("rerun", "--help")
        expect(rc == 0 and out.startswith("usage: flashspec rerun DIR"), "rerun --help")


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print("usage: test_cli.py CASE\ncases: " + " ".join(sorted(CASES)), file=sys.stderr)
        sys.exit(2)
    CASES[sys.argv[1]]()
    print(f"cli/{sys.argv[1]}: ok")
