#!/usr/bin/python3
"""Results that say what ran, or no results: end-to-end cases of the
flashspec command line (tests/cli/test_integrity.py CASE).

  list_holes    a list value with a hole ({ [1] = 2, [3] = 4 }) is refused
                wherever lists are read -- policy parameters and their
                alternatives, tree_nodes, sweep keys, the policy list, tune's
                knob values --, one line naming the key, exit 78, nothing
                written; a list without one runs every value
  long_labels   two Sequoia points whose `prior` lists differ only in their
                sixth value get different policy_params and param_prior,
                each holding every value whole
  exact_numbers every real a run records reads back as the value it ran:
                run.json's point keys (35/36, 0.1 + 0.2), device values
                (1000/3) and policy parameters (1/3), the param_ column,
                the timeline's dram_fraction
  same_names    two different devices (or models, or Lua policies) under one
                name in the rows -- a modified copy that kept the name,
                names that differ only in case -- are refused, one line,
                exit 78; one thing used twice is not; a Lua policy named like
                a built-in without regard to case (Flash_AR) is refused

The binary comes from $FLASHSPEC_BIN, the project root from $FLASHSPEC_HOME.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
CHAIN_LUA = os.path.join(HOME, "examples", "policies", "chain.lua")

HEAD = """local fs = flashspec
local tr = fs.trace.synth { prompts = 2, output_len = 16, seed = 3 }
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr, max_new_tokens = 16 }
local function with(t) local o = {} for k, v in pairs(base) do o[k] = v end
  for k, v in pairs(t) do o[k] = v end return o end
"""
HEAD_LINES = HEAD.count("\n")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def run_src(d, name, src, *args):
    """Writes src to d/name and runs it with -o d/out-name."""
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(src)
    out = os.path.join(d, "out-" + name)
    r = subprocess.run([BIN, "run", p, "-o", out, "-q", *args], capture_output=True, text=True,
                       timeout=300, cwd=d)
    return r.returncode, r.stdout, r.stderr, out


def one_line_error(rc, err, code, *needles):
    lines = [l for l in err.splitlines() if l.strip()]
    expect(rc == code, f"exit {rc}, wanted {code}: {err!r}")
    expect(len(lines) == 1 and lines[0].startswith("flashspec: "), f"not one line: {err!r}")
    for n in needles:
        expect(re.search(n, lines[0]), f"{lines[0]!r} lacks {n!r}")


def no_results(out):
    for name in ("results.csv", "results.h5", "run.json"):
        expect(not os.path.exists(os.path.join(out, name)), f"{name} written in {out}")


def rows(out):
    with open(os.path.join(out, "results.csv"), newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------- list holes

def case_list_holes():
    line = HEAD_LINES + 1
    bad = [
        ("k.lua", "fs.sweep(with { policy = fs.policy.chain { k = { [1] = 2, [3] = 4 } } })",
         r"flashspec\.policy\.chain: key 'k' is a list with a hole \(no value at \[2\] of 3\)"),
        ("prior.lua", "fs.sweep(with { policy = fs.policy.sequoia { prior = { [1] = 0.5, "
                      "[3] = 0.2 } } })",
         r"flashspec\.policy\.sequoia: key 'prior' is a list with a hole"),
        ("alts.lua", "fs.sweep(with { policy = fs.policy.specinfer { widths = { { 2, 2 }, "
                     "[3] = { 4 } } } })",
         r"key 'widths' is a list with a hole \(no value at \[2\] of 3\)"),
        ("zero.lua", "fs.sweep(with { policy = fs.policy.chain { k = { [0] = 2, 4 } } })",
         r"key 'k' is a list with a hole \(a value at \[0\], not a list position\)"),
        ("nodes.lua", "fs.sweep(with { policy = fs.policy.chain { tree_nodes = { [1] = 3, "
                      "[4] = 5 } } })",
         r"key 'tree_nodes' is a list with a hole \(no value at \[2\] of 4\)"),
        ("dram.lua", "fs.sweep(with { policy = fs.policy.flash_ar {}, dram_fraction = "
                     "{ [1] = 0, [3] = 0.5 } })",
         r"flashspec\.sweep: key 'dram_fraction' is a list with a hole"),
        ("pols.lua", "fs.sweep(with { policy = { [1] = fs.policy.flash_ar {}, "
                     "[3] = fs.policy.chain {} } })",
         r"flashspec\.sweep: key 'policy' is a list with a hole"),
        ("pts.lua", "fs.sweep(with { points = { { policy = fs.policy.flash_ar {} }, [3] = "
                    "{ policy = fs.policy.chain {} } } })",
         r"flashspec\.sweep: key 'points' is a list with a hole"),
        ("tune.lua", "fs.tune(with { policy = fs.policy.chain {}, knobs = { k = { values = "
                     "{ [1] = 2, [3] = 4 } } } })",
         r"flashspec\.tune: key 'values' is a list with a hole"),
    ]
    with tempfile.TemporaryDirectory() as d:
        for name, body, needle in bad:
            rc, _, err, out = run_src(d, name, HEAD + body + "\n")
            one_line_error(rc, err, 78, re.escape(f"{name}:{line}:"), needle,
                           r"without gaps")
            no_results(out)
        # the same lists without a hole: every value runs
        rc, _, err, out = run_src(d, "ok.lua", HEAD + "fs.sweep(with { policy = fs.policy.chain "
                                  "{ k = { 2, 4 } }, dram_fraction = { 0, 0.5 } })\n")
        expect(rc == 0, f"lists without holes: {rc} {err}")
        got = sorted((r["policy_params"], float(r["dram_fraction"])) for r in rows(out))
        expect(got == [("k=2,unit=cpu", 0.0), ("k=2,unit=cpu", 0.5), ("k=4,unit=cpu", 0.0),
                       ("k=4,unit=cpu", 0.5)], f"rows {got}")
    print("list_holes: ok")


# --------------------------------------------------------------- long labels

def case_long_labels():
    prior = [0.123456789012345 + 1e-15 * i for i in range(8)]
    other = list(prior)
    other[5] = 0.22345678901235
    lua = lambda xs: "{ " + ", ".join(repr(x) for x in xs) + " }"
    src = HEAD + f"""local a = fs.policy.sequoia {{ prior = {lua(prior)} }}
local b = fs.policy.sequoia {{ prior = {lua(other)} }}
local rows = fs.sweep(with {{ policy = {{ a, b }}, prompts = 1 }})
assert(rows[1].policy_params ~= rows[2].policy_params)
"""
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, out = run_src(d, "labels.lua", src)
        expect(rc == 0, f"{rc} {err}")
        rs = rows(out)
        expect(len(rs) == 2, f"{len(rs)} rows")
        expect(rs[0]["policy_params"] != rs[1]["policy_params"] and
               rs[0]["param_prior"] != rs[1]["param_prior"], f"alike: {rs[0]['param_prior']}")
        for r, want in zip(rs, (prior, other)):
            got = [float(x) for x in r["param_prior"].split("/")]
            expect(got == want, f"param_prior {r['param_prior']} is not {want}")
            expect(f"prior={r['param_prior']}," in r["policy_params"], r["policy_params"])
    print("long_labels: ok")


# -------------------------------------------------------------- exact numbers

def case_exact_numbers():
    import json
    src = HEAD + """local dev = fs.device("oneplus12", { name = "op12-third", npu_gflops = 1000 / 3,
                                      dram_budget_gb = 16 })
fs.run(with { device = dev, policy = fs.policy.lever { eta = 1 / 3 }, dram_fraction = 35 / 36,
              accept = "top_p", top_p = 0.1 + 0.2, prompts = 1 })
"""
    with tempfile.TemporaryDirectory() as d:
        tl = os.path.join(d, "tl.json")
        rc, _, err, out = run_src(d, "exact.lua", src, "--timeline", tl)
        expect(rc == 0, f"{rc} {err}")
        rec = json.load(open(os.path.join(out, "run.json")))
        row = rec["rows"][0]
        expect(row["dram_fraction"] == 35 / 36, f"run.json dram_fraction {row['dram_fraction']!r}")
        expect(row["top_p"] == 0.1 + 0.2, f"run.json top_p {row['top_p']!r}")
        dev = rec["devices"][row["device"]]["values"]
        expect(dev["npu_gflops"] == 1000 / 3, f"run.json npu_gflops {dev['npu_gflops']!r}")
        pol = rec["policies"][row["policy"]]["params"]
        expect(pol["eta"] == 1 / 3, f"run.json eta {pol['eta']!r}")
        r = rows(out)[0]
        expect(float(r["param_eta"]) == 1 / 3, f"param_eta {r['param_eta']}")
        meta = json.load(open(tl))["otherData"]
        expect(float(meta["dram_fraction"]) == 35 / 36, f"timeline {meta['dram_fraction']}")
    print("exact_numbers: ok")


# ---------------------------------------------------------------- same names

def case_same_names():
    line = HEAD_LINES + 2
    src_chain = open(CHAIN_LUA).read()
    with tempfile.TemporaryDirectory() as d:
        def policy_file(name, body):
            with open(os.path.join(d, name), "w") as f:
                f.write(body)
        policy_file("mine.lua", src_chain.replace('name = "chain_lua"', 'name = "mine"'))
        policy_file("copy.lua", src_chain.replace('name = "chain_lua"', 'name = "mine"')
                    .replace("local k = params.k or 8", "local k = (params.k or 8) - 1"))
        policy_file("Mine.lua", src_chain.replace('name = "chain_lua"', 'name = "Mine"'))
        policy_file("far.lua", src_chain.replace('name = "chain_lua"', 'name = "Flash_AR"'))
        bad = [
            ("dev.lua", 'local d2 = fs.device("oneplus12", { name = "oneplus12", npu_gflops = '
                        '1000 })\nfs.sweep(with { policy = fs.policy.flash_ar {}, device = '
                        '{ base.device, d2 } })',
             r"two different devices are called 'oneplus12'"),
            ("devcase.lua", 'local d2 = fs.device("oneplus12", { name = "OnePlus12", npu_gflops = '
                            '1000 })\nfs.sweep(with { policy = fs.policy.flash_ar {}, device = '
                            '{ base.device, d2 } })',
             r"two different devices are called 'OnePlus12' / oneplus12"),
            ("model.lua", 'local m2 = fs.model("qwen3-8b-q4_0", { name = "qwen3-8b-q4_0", '
                          'layers = 30 })\nfs.sweep(with { policy = fs.policy.flash_ar {}, '
                          'target = { base.target, m2 } })',
             r"two different models are called 'qwen3-8b-q4_0'"),
            ("pol.lua", '\nfs.sweep(with { policy = { fs.policy.lua("mine.lua", { k = 4 }), '
                        'fs.policy.lua("copy.lua", { k = 4 }) } })',
             r"two different policies are called 'mine'"),
            ("polcase.lua", '\nfs.sweep(with { policy = { fs.policy.lua("mine.lua", { k = 4 }), '
                            'fs.policy.lua("Mine.lua", { k = 4 }) } })',
             r"two different policies are called 'Mine' / mine"),
            ("flashar.lua", '\nlocal p = fs.policy.lua("far.lua", {})',
             r"policy name 'Flash_AR' is already a policy's name \('flash_ar', names compared "
             r"without regard to case\)"),
        ]
        for name, body, needle in bad:
            rc, _, err, out = run_src(d, name, HEAD + body + "\n")
            one_line_error(rc, err, 78, re.escape(f"{name}:{line}:"), needle)
            no_results(out)
        # one thing under its name, used as often as wished; another thing
        # under another name
        ok = HEAD + """local d2 = fs.device("oneplus12", { name = "op12-fast", npu_gflops = 1000 })
local again = fs.device "oneplus12"
fs.sweep(with { policy = { fs.policy.lua("mine.lua", { k = 4 }), fs.policy.lua("mine.lua",
                { k = 2 }) }, device = { base.device, d2, again } })
fs.run(with { policy = fs.policy.flash_ar {} })
"""
        rc, _, err, out = run_src(d, "ok.lua", ok)
        expect(rc == 0, f"one thing under its name: {rc} {err}")
        expect(len(rows(out)) == 7, f"{len(rows(out))} rows")
    print("same_names: ok")


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: {sys.argv[0]} {{{'|'.join(CASES)}}}")
        sys.exit(64)
    try:
        CASES[sys.argv[1]]()
    except AssertionError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
