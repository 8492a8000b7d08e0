#!/usr/bin/python3
"""The engine as an installed library, and the installed flashspec.

usage: test_installed.py BUILD_DIR SOURCE_DIR

Installs the build into a staging directory (meson install --destdir), then
  * builds examples/engine against the staged libflashspec-engine with
    pkg-config (PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR), shared and static,
    and runs it: the shared build must load the staged .so.0, the static one
    none;
  * runs the staged flashspec from another directory with FLASHSPEC_HOME and
    FLASHSPEC_CONFIG_DIR unset: it must find the profiles and traces
    installed beside it (share/flashspec), not the source tree.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    build, src = sys.argv[1], sys.argv[2]
    env = {k: v for k, v in os.environ.items()
           if k not in ("FLASHSPEC_HOME", "FLASHSPEC_CONFIG_DIR", "DESTDIR")}
    with tempfile.TemporaryDirectory() as t:
        stage = os.path.join(t, "stage")
        p = subprocess.run(["meson", "install", "-C", build, "--destdir", stage, "--quiet",
                            "--no-rebuild"], capture_output=True, text=True, env=env, timeout=300)
        expect(p.returncode == 0, f"meson install failed: {p.stdout[-2000:]} {p.stderr[-2000:]}")
        pcs = glob.glob(os.path.join(stage, "**", "flashspec-engine.pc"), recursive=True)
        expect(len(pcs) == 1, f"flashspec-engine.pc: {pcs}")
        pcdir = os.path.dirname(pcs[0])
        libdir = os.path.dirname(pcdir)
        expect(os.path.exists(os.path.join(libdir, "libflashspec-engine.so.0")) and
               os.path.exists(os.path.join(libdir, "libflashspec-engine.a")),
               f"libraries in {libdir}: {os.listdir(libdir)}")
        pc = open(pcs[0]).read()
        expect(stage not in pc, "the .pc file holds the staging path")
        penv = dict(env, PKG_CONFIG_PATH=pcdir, PKG_CONFIG_SYSROOT_DIR=stage)
        for static in (False, True):
            d = os.path.join(t, "static" if static else "shared")
            shutil.copytree(os.path.join(src, "examples", "engine"), d)
            args = ["make", "-C", d] + (["STATIC=1"] if static else [])
            p = subprocess.run(args, capture_output=True, text=True, env=penv, timeout=300)
            expect(p.returncode == 0, f"{' '.join(args)}: {p.stdout} {p.stderr}")
            renv = dict(env, LD_LIBRARY_PATH=libdir)
            p = subprocess.run([os.path.join(d, "driver"), "chain", "4"], capture_output=True,
                               text=True, env=renv, timeout=60)
            expect(p.returncode == 0 and re.search(r"^chain: \d+ tokens in 4 cycles$", p.stdout,
                                                   re.M), f"driver: {p.stdout} {p.stderr}")
            expect(p.stdout.count("cycle ") == 4, p.stdout)
            p = subprocess.run([os.path.join(d, "driver"), "eagle2", "2"], capture_output=True,
                               text=True, env=renv, timeout=60)
            expect(p.returncode == 0 and "eagle2:" in p.stdout, p.stdout + p.stderr)
            ldd = subprocess.run(["ldd", os.path.join(d, "driver")], capture_output=True,
                                 text=True, env=renv).stdout
            if static:
                expect("flashspec" not in ldd, f"static driver loads a shared engine: {ldd}")
            else:
                expect(re.search(r"libflashspec-engine\.so\.0 => " + re.escape(libdir), ldd),
                       f"shared driver does not load the staged library: {ldd}")
        # native plug-ins: the example built against the staged engine, then
        # run by the staged flashspec; broken plug-ins are one line and 78
        exe = glob.glob(os.path.join(stage, "**", "bin", "flashspec"), recursive=True)
        expect(len(exe) == 1, f"flashspec binary: {exe}")
        pdir = os.path.join(t, "plugin")
        shutil.copytree(os.path.join(src, "examples", "plugin"), pdir)
        p = subprocess.run(["make", "-C", pdir], capture_output=True, text=True, env=penv,
                           timeout=300)
        expect(p.returncode == 0, f"plug-in build: {p.stdout} {p.stderr}")
        plugin = os.path.join(pdir, "libconfidence_chain.so")
        renv = dict(env, LD_LIBRARY_PATH=libdir)
        script = os.path.join(t, "plug.lua")
        open(script, "w").write(
            'local fs = flashspec\n'
            'local rows = fs.sweep { device = fs.device "oneplus12", '
            'target = fs.model "qwen3-8b-q4_0", draft = fs.model "qwen3-8b-eagle3-q4_0", '
            'trace = fs.trace "traces/data/workload-code-strong.h5", max_new_tokens = 32, '
            'policy = { fs.policy.chain {}, fs.policy.confidence_chain { threshold = 0.2 } } }\n'
            'print(rows[2].policy, rows[2].policy_params, rows[2].tokens_per_s > 0)\n')
        outs = []
        for j in ("1", "2"):
            p = subprocess.run([exe[0], "run", "--plugin", plugin, script, "-q", "-j", j,
                                "-o", os.path.join(t, "plug" + j)], cwd="/",
                               capture_output=True, text=True, env=renv, timeout=300)
            expect(p.returncode == 0 and
                   p.stdout.strip() == "confidence_chain\tthreshold=0.2,max_k=12,unit=cpu\ttrue",
                   f"plug-in run: {p.returncode} {p.stdout!r} {p.stderr!r}")
            outs.append(open(os.path.join(t, "plug" + j, "results.csv"), "rb").read())
        expect(outs[0] == outs[1], "a plug-in's results differ between -j 1 and -j 2")
        # run.json names the plug-in: its path and SHA-256, the run's and the
        # policy's; a rebuilt plug-in (here: one byte more) changes them
        import hashlib
        import json

        def plugin_record(d):
            rec = json.load(open(os.path.join(d, "run.json")))
            pol = [x for x in rec["policies"] if x["name"] == "confidence_chain"]
            expect(len(pol) == 1 and "plugin" in pol[0], f"policies: {rec['policies']}")
            expect(not any("plugin" in x for x in rec["policies"] if x is not pol[0]),
                   "a built-in policy names a plug-in")
            expect(rec["plugins"] == [{"policy": "confidence_chain", **pol[0]["plugin"]}],
                   f"plugins: {rec['plugins']} vs {pol[0]['plugin']}")
            return pol[0]["plugin"]

        rec = plugin_record(os.path.join(t, "plug1"))
        expect(rec["path"] == os.path.realpath(plugin) and
               rec["sha256"] == hashlib.sha256(open(plugin, "rb").read()).hexdigest(),
               f"plug-in record {rec}")
        rebuilt = os.path.join(t, "librebuilt.so")
        open(rebuilt, "wb").write(open(plugin, "rb").read() + b"\0")
        p = subprocess.run([exe[0], "run", "--plugin", rebuilt, script, "-q",
                            "-o", os.path.join(t, "plug3")], cwd="/",
                           capture_output=True, text=True, env=renv, timeout=300)
        expect(p.returncode == 0, f"rebuilt plug-in: {p.returncode} {p.stderr!r}")
        rec3 = plugin_record(os.path.join(t, "plug3"))
        expect(rec3["sha256"] == hashlib.sha256(open(rebuilt, "rb").read()).hexdigest() and
               rec3["sha256"] != rec["sha256"], f"rebuilt: {rec3} vs {rec}")
        # the same policy exported with the ABI 1 descriptor (which ends at
        # needs_draft): loaded and run, its missing fields zero -- without a
        # stated tree size it takes no tree_nodes key
        old_abi = os.path.join(t, "libabi1.so")
        cflags1 = subprocess.run(["pkg-config", "--cflags", "flashspec-engine"],
                                 capture_output=True, text=True, env=penv).stdout.split()
        libs1 = subprocess.run(["pkg-config", "--libs", "flashspec-engine"],
                               capture_output=True, text=True, env=penv).stdout.split()
        p = subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-std=c11",
                            *cflags1, "-I", pdir,
                            os.path.join(src, "tests", "engine", "plugins", "abi1.c"), "-o",
                            old_abi, *libs1, "-lm"],
                           capture_output=True, text=True, env=penv, timeout=120)
        expect(p.returncode == 0, f"abi1: {p.stderr}")
        p = subprocess.run([exe[0], "run", "--plugin", old_abi, script, "-q", "-o",
                            os.path.join(t, "plug-abi1")], cwd="/", capture_output=True,
                           text=True, env=renv, timeout=300)
        expect(p.returncode == 0 and
               p.stdout.strip() == "confidence_chain\tthreshold=0.2,max_k=12,unit=cpu\ttrue",
               f"ABI 1 plug-in run: {p.returncode} {p.stdout!r} {p.stderr!r}")
        tn = os.path.join(t, "tn.lua")
        open(tn, "w").write('local x = flashspec.policy.confidence_chain { tree_nodes = 5 }\n')
        p = subprocess.run([exe[0], "run", "--plugin", old_abi, tn, "-q", "-o",
                            os.path.join(t, "plug-tn")], cwd="/", capture_output=True,
                           text=True, env=renv, timeout=60)
        expect(p.returncode == 78 and "key 'tree_nodes' is for tree policies" in p.stderr and
               "confidence_chain declares no such parameter" in p.stderr,
               f"ABI 1 plug-in with tree_nodes: {p.returncode} {p.stderr!r}")
        p = subprocess.run([exe[0], "policies", "--plugin", plugin, "confidence_chain"],
                           capture_output=True, text=True, env=renv, timeout=60)
        expect(p.returncode == 0 and re.search(r"threshold\s+0\.3\s+number 0\.\.1", p.stdout),
               f"policies --plugin: {p.stdout!r} {p.stderr!r}")
        cflags = subprocess.run(["pkg-config", "--cflags", "flashspec-engine"],
                                capture_output=True, text=True, env=penv).stdout.split()
        bad = {}
        for name, extra in (("nosym", []), ("badabi", []), ("clash", ['-DPLUGIN_NAME="chain"']),
                            ("clashcase", ['-DPLUGIN_NAME="Flash_AR"']),
                            ("badname", ['-DPLUGIN_NAME="bad-name"'])):
            out = os.path.join(t, f"lib{name}.so")
            srcf = os.path.join(src, "tests", "engine", "plugins",
                                "clash.c" if name in ("badname", "clashcase") else name + ".c")
            p = subprocess.run(["cc", "-shared", "-fPIC", *cflags, *extra, srcf, "-o", out],
                               capture_output=True, text=True, env=penv, timeout=120)
            expect(p.returncode == 0, f"{name}: {p.stderr}")
            bad[name] = out
        for name, code, needle in (
                ("nosym", 78, "not a flashspec policy plug-in (no symbol flashspec_policy_abi)"),
                ("badabi", 78, "built for policy ABI 1000, this flashspec has ABI 2 (and loads 1 to 2)"),
                ("clash", 78, "policy 'chain' is already built in"),
                ("clashcase", 78, "policy 'Flash_AR' is already built in (as 'flash_ar'"),
                ("badname", 78, "needs a name of letters, digits and '_'")):
            p = subprocess.run([exe[0], "run", "--plugin", bad[name], script, "-q", "-o",
                                os.path.join(t, "bad-" + name)], cwd="/", capture_output=True,
                               text=True, env=renv, timeout=60)
            lines = p.stderr.strip().splitlines()
            expect(p.returncode == code and len(lines) == 1 and needle in lines[0],
                   f"{name}: {p.returncode} {p.stderr!r}")
            expect(not os.path.exists(os.path.join(t, "bad-" + name, "results.csv")),
                   f"{name}: results written")
        # descriptors whose parameter table is wrong (plugins/baddesc.c, -DCASE=N):
        # each refused at load, one line, exit 78, nothing written
        for case, needle in (
                (1, "parameter 'k' inside the params struct"),
                (2, "a capacity (cap) of at least 2 bytes for parameter 's' (it has 0)"),
                (3, "parameter 's' inside the params struct (offset 24, 64 bytes, struct 32 bytes)"),
                (4, "parameter 'xs' inside the params struct"),
                (5, "the element count of parameter 'xs' inside the params struct"),
                (6, "a default of parameter 'unit' that is one of its 2 choices (got 5)"),
                (7, "a range with min <= max for parameter 'k' (got 64..1)"),
                (8, "a default of parameter 'k' inside its range 1..64 (got 100)"),
                (9, "distinct parameter names ('k' twice)"),
                (10, "parameter names of letters, digits and '_' (row 0: '')"),
                (11, "parameter names of letters, digits and '_' (row 0: 'k-max')"),
                (12, "a range inside the 32-bit integers for integer parameter 'k' (got 0..1e+30)"),
                (13, "a whole default for integer parameter 'k' (got 2.5)"),
                (14, "parameters 'xs' and 'k' in separate bytes of the params struct"),
                (15, "choices without control characters (newline, ESC, ...) for parameter "
                     "'unit' (choice 2)"),
                (16, "a default of parameter 's' without control characters")):
            out = os.path.join(t, f"libbaddesc{case}.so")
            q = subprocess.run(["cc", "-shared", "-fPIC", *cflags, f"-DCASE={case}",
                                os.path.join(src, "tests", "engine", "plugins", "baddesc.c"),
                                "-o", out], capture_output=True, text=True, env=penv, timeout=120)
            expect(q.returncode == 0, f"baddesc {case}: {q.stderr}")
            for verb in (["run", "--plugin", out, script, "-q", "-o",
                          os.path.join(t, f"bad-desc{case}")],
                         ["policies", "--plugin", out]):
                p = subprocess.run([exe[0], *verb], cwd="/", capture_output=True, text=True,
                                   env=renv, timeout=60)
                lines = p.stderr.strip().splitlines()
                expect(p.returncode == 78 and len(lines) == 1 and needle in lines[0] and
                       "flashspec_policy needs" in lines[0],
                       f"baddesc {case} ({verb[0]}): {p.returncode} {p.stderr!r}")
            expect(not os.path.exists(os.path.join(t, f"bad-desc{case}", "results.csv")),
                   f"baddesc {case}: results written")
        p = subprocess.run([exe[0], "run", "--plugin", plugin, "--plugin", plugin, script, "-q"],
                           cwd="/", capture_output=True, text=True, env=renv, timeout=60)
        expect(p.returncode == 78 and "already given by --plugin" in p.stderr, p.stderr)
        p = subprocess.run([exe[0], "run", "--plugin", "/nonexistent.so", script, "-q"],
                           cwd="/", capture_output=True, text=True, env=renv, timeout=60)
        expect(p.returncode == 66 and p.stderr.count("\n") == 1, p.stderr)
        p = subprocess.run([exe[0], "demo", "--plugin", plugin], cwd="/", capture_output=True,
                           text=True, env=renv, timeout=60)
        expect(p.returncode == 64, f"demo takes no --plugin: {p.returncode} {p.stderr!r}")

        # the staged flashspec finds its own data, from anywhere
        share = os.path.realpath(os.path.join(os.path.dirname(exe[0]), "..", "share",
                                              "flashspec"))
        p = subprocess.run([exe[0], "profile", "no-such-phone", "qwen3-8b-q4_0"], cwd="/",
                           capture_output=True, text=True, env=env, timeout=60)
        expect(p.returncode == 66 and os.path.join(share, "configs", "devices") in p.stderr,
               f"the installed binary looked elsewhere: {p.stderr!r}")
        p = subprocess.run([exe[0], "demo", "-o", os.path.join(t, "demo")], cwd="/",
                           capture_output=True, text=True, env=env, timeout=300)
        expect(p.returncode == 0 and "lever" in p.stdout, f"installed demo: {p.returncode} "
                                                          f"{p.stderr[-1000:]}")
        p = subprocess.run([exe[0], "policies", os.path.join(share, "examples", "policies",
                                                             "chain.lua")],
                           cwd="/", capture_output=True, text=True, env=env, timeout=60)
        expect(p.returncode == 0 and "chain_lua" in p.stdout, p.stderr)
    print("installed: engine example built and run against the staged libraries (shared and "
          "static); a plug-in built, loaded and run, four broken ones refused; the staged "
          "flashspec found its data beside it")


if __name__ == "__main__":
    main()
