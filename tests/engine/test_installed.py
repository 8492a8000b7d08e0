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
        # the staged flashspec finds its own data, from anywhere
        exe = glob.glob(os.path.join(stage, "**", "bin", "flashspec"), recursive=True)
        expect(len(exe) == 1, f"flashspec binary: {exe}")
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
          "static); the staged flashspec found its data beside it")


if __name__ == "__main__":
    main()
