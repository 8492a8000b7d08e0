#!/usr/bin/python3
"""End-to-end tests of parallel, resumable and distributed sweeps.

Each case is one function, run by meson as `test_sweep.py CASE`.  The binary
comes from $FLASHSPEC_BIN, the project root from $FLASHSPEC_HOME; MPI cases
run when $FLASHSPEC_MPI is 1 (flashspec built with MPI and mpirun found) and
are skipped (exit 77) otherwise.
"""
import atexit
import csv
import glob
import os
import pty
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())
MPI = os.environ.get("FLASHSPEC_MPI", "0") == "1"
MPIRUN = os.environ.get("FLASHSPEC_MPIRUN", "mpirun")
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
SKIP = 77


def script(name):
    return os.path.join(SCRIPTS, name)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def run(*args, timeout=300):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def mpi_cmd(ranks):
    """mpirun on localhost that works as root, oversubscribed, in a container
    without network: shared-memory transport only, no single-copy (CMA needs
    ptrace rights containers often lack)."""
    return [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks),
            "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none",
            BIN]


_ompi_dir = None


def mpi_env():
    """Environment of MPI runs.  Each test process gives mpirun a session
    directory of its own (OpenMPI's default, /tmp/ompi.HOST.UID, is shared:
    two tests starting mpirun at once race to create it).  Sanitizer builds:
    OpenMPI keeps allocations until exit in components it dlopen()s; keeping
    them loaded and unwinding slowly lets tests/sweep/lsan-mpi.supp name their
    libraries."""
    global _ompi_dir
    if _ompi_dir is None:
        _ompi_dir = tempfile.mkdtemp(prefix="fs-ompi-")
        atexit.register(shutil.rmtree, _ompi_dir, True)
    env = dict(os.environ, OMPI_MCA_mca_base_component_disable_dlclose="1",
               OMPI_MCA_orte_tmpdir_base=_ompi_dir)
    for var in ("ASAN_OPTIONS", "LSAN_OPTIONS"):
        env[var] = ":".join(x for x in (env.get(var, ""), "fast_unwind_on_malloc=0") if x)
    return env


def mpi_run(ranks, *args):
    env = mpi_env()
    p = subprocess.run([*mpi_cmd(ranks), *args], capture_output=True, text=True, timeout=300,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def files_of(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in ("results.csv", "results.h5")}


def same_results(d1, d2, what):
    a, b = files_of(d1), files_of(d2)
    for n in a:
        expect(a[n] == b[n], f"{n} differs: {what}")


def counts(stderr):
    """(computed, resumed) from the final 'wrote' line."""
    m = re.search(r"wrote \d+ points? to .* \((\d+) computed, (\d+) resumed\)", stderr)
    expect(m, f"no summary line in stderr: {stderr!r}")
    return int(m.group(1)), int(m.group(2))


def records(d):
    return sorted(glob.glob(os.path.join(d, "points", "*.pt")))


def no_results(d):
    for n in ("results.csv", "results.h5"):
        expect(not os.path.exists(os.path.join(d, n)), f"{n} written in {d}")
    leftovers = [f for f in os.listdir(d) if f.startswith(".") or "tmp" in f] \
        if os.path.isdir(d) else []
    expect(not leftovers, f"temporary files left behind: {leftovers}")


def rows(d):
    with open(os.path.join(d, "results.csv"), newline="") as f:
        return list(csv.DictReader(f))


# ------------------------------------------------------------ determinism

def case_jobs_identical():
    with tempfile.TemporaryDirectory() as t:
        outs = {}
        for tag, args in (("run1", ["run", "-j", "1"]), ("sweep2", ["sweep", "-j", "2"]),
                          ("sweep3", ["sweep", "-j", "3"]), ("sweep", ["sweep"])):
            d = os.path.join(t, tag)
            rc, out, err = run(*args, script("grid.lua"), "-o", d)
            expect(rc == 0, f"{args}: exit {rc}: {err}")
            expect(counts(err) == (51, 0), f"{args}: {counts(err)}")
            outs[tag] = out
        for tag in ("sweep2", "sweep3", "sweep"):
            same_results(os.path.join(t, "run1"), os.path.join(t, tag), f"-j 1 vs {tag}")
            expect(outs[tag] == outs["run1"], f"script output differs for {tag}")
        expect(len(rows(os.path.join(t, "run1"))) == 51, "row count")


def case_mpi_identical():
    if not MPI:
        print("MPI not built or mpirun not found: skipped")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory() as t:
        ref = os.path.join(t, "ref")
        rc, out_ref, err = run("run", script("grid.lua"), "-o", ref)
        expect(rc == 0, err)
        for ranks, jobs in ((2, 1), (2, 2), (3, 1)):
            d = os.path.join(t, f"mpi{ranks}x{jobs}")
            rc, out, err = mpi_run(ranks, "sweep", "-j", str(jobs), script("grid.lua"), "-o", d)
            expect(rc == 0, f"mpirun -n {ranks}: exit {rc}: {err}")
            same_results(ref, d, f"-j 1 vs mpirun -n {ranks} -j {jobs}")
            expect(out == out_ref, f"-n {ranks}: ranks other than 0 printed:\n{out}")
            expect(counts(err) == (51, 0), f"-n {ranks}: {counts(err)}")
            expect(err.count("wrote ") == 1, f"-n {ranks}: more than one rank wrote: {err}")
            expect(not records(d) or len(records(d)) == 51, "records missing")
        # resume under MPI: nothing recomputed, same bytes
        d = os.path.join(t, "mpi2x1")
        rc, _, err = mpi_run(2, "sweep", "-j", "1", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (0, 51), f"MPI resume: {rc} {err}")
        same_results(ref, d, "MPI resume")
        # a bad point under MPI: same report and exit code as locally
        d = os.path.join(t, "bad")
        rc, out, err = mpi_run(2, "sweep", script("bad_points.lua"), "-o", d)
        expect(rc == 78 and "bad points ok" in out, f"MPI bad points: {rc} {err}")
        expect(len(re.findall(r"point \d of 4 failed", err)) == 1, err)


def case_mpi_random():
    """math.random starts from the same seed in every process, so a script
    drawing point values gives the same results locally and under MPI; a
    script that reseeds from the clock makes the ranks disagree on the point
    list, caught before any point runs (exit 78 on every rank, no results)."""
    with tempfile.TemporaryDirectory() as t:
        a, b = os.path.join(t, "a"), os.path.join(t, "b")
        rc1, out1, err1 = run("run", script("random.lua"), "-o", a)
        rc2, out2, err2 = run("run", script("random.lua"), "-o", b)
        expect(rc1 == 0 and rc2 == 0, f"{err1} {err2}")
        expect(out1 == out2, f"math.random differs between processes: {out1!r} {out2!r}")
        same_results(a, b, "two local runs of a math.random script")
        if not MPI:
            print("MPI not built or mpirun not found: MPI part skipped")
            return
        d = os.path.join(t, "mpi")
        rc, out, err = mpi_run(2, "sweep", script("random.lua"), "-o", d)
        expect(rc == 0, f"mpirun -n 2 of a math.random script: exit {rc}: {err}")
        same_results(a, d, "local vs mpirun -n 2 with math.random values")
        # ranks that expand different lists (other values; another count),
        # started as one MPMD job with different arguments per rank
        for i, (a, b) in enumerate(((["--arg", "seed=1"], ["--arg", "seed=2"]),
                                    (["--arg", "n=3"], ["--arg", "n=5"]))):
            d = os.path.join(t, f"bad{i}")
            cmd = mpi_cmd(1)
            cmd = [*cmd, "sweep", script("random.lua"), "-o", d, *a, ":", "-n", "1", BIN,
                   "sweep", script("random.lua"), "-o", d, *b]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=mpi_env())
            rc, err = p.returncode, p.stderr
            expect(rc == 78, f"ranks with different point lists: exit {rc}: {err}")
            expect("expanded different point lists" in err, f"names the mismatch: {err!r}")
            expect(re.search(r"random\.lua:\d+:", err), f"names the script line: {err!r}")
            expect("MPI rank 1 expanded" in err, f"rank 1 says so too: {err!r}")
            expect(not os.path.exists(os.path.join(d, "results.csv")), "no results written")
            expect(not records(d), "no point ran")


def case_speed_reference():
    """Results equal, value for value, those the same points gave before the
    speed work (tests/data/speed_reference.csv.gz, re-made since for the
    construction of unrecorded candidate ids and for re-sampled sets after a
    compaction; speed_reference.lua says which rows moved and why): every
    policy, trees up to 64 rows, greedy and sampled
    acceptance; then rows added since (the first 384 untouched): top-p
    acceptance and the LM head's residency at 34, 35 and 36 of 36 layers.  Columns added since are not in
    the reference and are not compared; the script's hash and the version
    name the run, not its results."""
    import gzip
    ref_path = os.path.join(HOME, "tests", "data", "speed_reference.csv.gz")
    with gzip.open(ref_path, "rt", newline="") as f:
        ref = list(csv.DictReader(f))
    with tempfile.TemporaryDirectory() as t:
        d = os.path.join(t, "now")
        rc, _, err = run("sweep", "-j", "2", "-q", script("speed_reference.lua"), "-o", d)
        expect(rc == 0, f"exit {rc}: {err}")
        with open(os.path.join(d, "results.csv"), newline="") as f:
            now = list(csv.DictReader(f))
    expect(len(now) == len(ref), f"{len(now)} rows, the reference has {len(ref)}")
    skip = {"script_hash", "version"}
    for i, (a, b) in enumerate(zip(ref, now)):
        for k, v in a.items():
            if k in skip:
                continue
            expect(k in b, f"column {k} is gone")
            expect(b[k] == v, f"row {i + 1} ({a['policy']} {a['policy_params']}, {a['trace']}, "
                              f"{a['device']}, {a['accept']}): {k} = {b[k]}, reference {v}")
    print(f"speed_reference: {len(ref)} rows equal to the reference")


def case_model_band():
    """Standing variants: each point is replayed on its device's variants too;
    tokens_per_s_model_lo <= tokens_per_s <= tokens_per_s_model_hi, Flash-AR's
    band is a point (no variant touches a decode step), a profile that clears
    its variants gives nan, the band is the same at -j 1 and -j 2, and changing
    a variant changes the point's id (a resumed run recomputes it)."""
    src = """local fs = flashspec
local dev = fs.device(fs.args.dev or "oneplus12")
local pts = {}
for _, f in ipairs { 0, 1 } do
  for _, p in ipairs { fs.policy.lever {}, fs.policy.flash_ar {} } do
    pts[#pts + 1] = { policy = p, dram_fraction = f }
  end
end
fs.sweep { device = dev, target = fs.model "qwen3-8b-q4_0",
           draft = fs.model "qwen3-8b-eagle3-q4_0",
           trace = fs.trace "traces/data/workload-code-strong.h5", max_new_tokens = 32,
           prompts = 2, points = pts }
"""
    with tempfile.TemporaryDirectory() as t:
        sp = os.path.join(t, "band.lua")
        open(sp, "w").write(src)
        cfg = os.path.join(t, "configs")
        shutil.copytree(os.path.join(HOME, "configs"), cfg)
        open(os.path.join(cfg, "devices", "plain.lua"), "w").write(
            'return { base = "oneplus12", name = "oneplus12", variants = {} }\n')
        env = dict(os.environ, FLASHSPEC_CONFIG_DIR=cfg)
        outs = {}
        for name, args in (("j1", ["-j", "1"]), ("j2", ["-j", "2"]),
                           ("plain", ["-j", "2", "--arg", "dev=plain"])):
            d = os.path.join(t, name)
            p = subprocess.run([BIN, "sweep", "-q", *args, sp, "-o", d], capture_output=True,
                               text=True, timeout=300, env=env, cwd=HOME)
            expect(p.returncode == 0, f"{name}: exit {p.returncode}: {p.stderr}")
            with open(os.path.join(d, "results.csv"), newline="") as f:
                outs[name] = list(csv.DictReader(f))
        for r in outs["j1"]:
            lo, x, hi = (float(r[k]) for k in ("tokens_per_s_model_lo", "tokens_per_s",
                                                "tokens_per_s_model_hi"))
            expect(lo <= x <= hi, f"{r['policy']} at {r['dram_fraction']}: {lo} {x} {hi}")
            if r["policy"] == "flash_ar":
                expect(lo == x == hi, f"Flash-AR's band is a point: {lo} {x} {hi}")
            else:
                expect(hi > lo, f"Lever's band is not empty at {r['dram_fraction']}: {lo} {hi}")
        keys = ("tokens_per_s", "tokens_per_s_model_lo", "tokens_per_s_model_hi")
        expect([[r[k] for k in keys] for r in outs["j1"]] ==
               [[r[k] for k in keys] for r in outs["j2"]], "-j 1 and -j 2 agree")
        for r in outs["plain"]:
            expect(r["tokens_per_s_model_lo"] == "nan" and r["tokens_per_s_model_hi"] == "nan",
                   f"no variants: nan, got {r['tokens_per_s_model_lo']}")
        for a, b in zip(outs["j1"], outs["plain"]):
            expect(a["tokens_per_s"] == b["tokens_per_s"], "variants change no row number")
        # the variants are part of the point's id: the plain profile's records
        # are not resumed as the banded points'
        p = subprocess.run([BIN, "sweep", "-j", "2", sp, "-o", os.path.join(t, "plain")],
                           capture_output=True, text=True, timeout=300, env=env, cwd=HOME)
        expect(p.returncode == 0 and counts(p.stderr) == (4, 0),
               f"banded points resumed from a profile without variants: {p.stderr}")
    print("model_band: ok")


def case_setup_cache():
    """The per-phone calibration tables are measured once per script run (its
    profile cache) and reused by later points: a point computed after others
    (warm tables) gives the same bytes as the same point alone in a fresh run
    (cold)."""
    src = """local fs = flashspec
local pols = { fs.policy.lever {}, fs.policy.sequoia {}, fs.policy.lever { n_max = 16 } }
local want = tonumber(fs.args.only or "0")
local pts = {}
for i, p in ipairs(pols) do
  for _, f in ipairs { 0, 0.3 } do
    if want == 0 or want == #pts + 1 then
      pts[#pts + 1] = { policy = p, dram_fraction = f }
    else
      pts[#pts + 1] = false
    end
  end
end
local keep = {}
for _, p in ipairs(pts) do if p then keep[#keep + 1] = p end end
fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = fs.trace "traces/data/synth-small.h5",
  max_new_tokens = 16, points = keep }
"""
    with tempfile.TemporaryDirectory() as t:
        path = os.path.join(t, "cache.lua")
        open(path, "w").write(src)
        rc, _, err = run("run", path, "-o", os.path.join(t, "all"), "-q")
        expect(rc == 0, err)
        with open(os.path.join(t, "all", "results.csv")) as f:
            warm = f.read().splitlines()
        expect(len(warm) == 7, f"{len(warm)} lines")
        for i in range(1, 7):
            d = os.path.join(t, f"one{i}")
            rc, _, err = run("run", path, "--arg", f"only={i}", "-o", d, "-q")
            expect(rc == 0, err)
            with open(os.path.join(d, "results.csv")) as f:
                cold = f.read().splitlines()
            # the other points' policies add param_ columns: compare by name
            c_row = dict(zip(cold[0].split(","), next(csv.reader([cold[1]]))))
            w_row = dict(zip(warm[0].split(","), next(csv.reader([warm[i]]))))
            expect(all(w_row.get(k) == v for k, v in c_row.items()) and
                   all(v in ("", "nan") for k, v in w_row.items() if k not in c_row),
                   f"point {i}: warm tables gave another row than cold ones")


# ----------------------------------------------------------------- resume

def build_variant(t, old, new, where="sim/hw/sim_hw.c"):
    """Builds flashspec from a copy of the source tree with one constant
    changed; returns the binary's path."""
    src = os.path.join(t, "src")
    shutil.copytree(HOME, src, symlinks=True,
                    ignore=lambda d, names: [n for n in names
                                             if (d == HOME and (n.startswith("build")
                                                                or n in ("results", "out")))
                                             or n in (".git", "__pycache__")])
    path = os.path.join(src, where)
    code = open(path).read()
    expect(old in code, f"{where} no longer contains {old!r}: update the test")
    open(path, "w").write(code.replace(old, new, 1))
    b = os.path.join(t, "build")
    # -O0: this build is run briefly, and compiles in a third of the time
    for cmd in (["meson", "setup", b, src, "-Dmpi=disabled", "-Dfuzz=disabled",
                 "-Doptimization=0"],
                ["ninja", "-C", b, "sim/cli/flashspec"]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        expect(p.returncode == 0, f"{' '.join(cmd)} failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return os.path.join(b, "sim", "cli", "flashspec")


def case_resume_build():
    """Records are keyed on the build: a binary rebuilt with one changed
    constant recomputes every point instead of reusing the other build's
    numbers; --resume=force reuses them on purpose."""
    with tempfile.TemporaryDirectory() as t:
        other = build_variant(t, "d->verify_setup_us * 1e-3", "d->verify_setup_us * 2e-3",
                              "sim/hw/sim_runtime.c")
        d, ref = os.path.join(t, "out"), os.path.join(t, "ref")
        rc, _, err = run("run", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (51, 0), f"first run: {rc} {err}")
        shutil.copytree(d, ref)
        p = subprocess.run([other, "run", script("grid.lua"), "-o", d], capture_output=True,
                           text=True, timeout=300, env=dict(os.environ, FLASHSPEC_HOME=HOME))
        expect(p.returncode == 0, f"rebuilt binary: {p.returncode} {p.stderr}")
        expect(counts(p.stderr) == (51, 0),
               f"a rebuilt binary reused the old build's points: {counts(p.stderr)}")
        a, b = files_of(ref), files_of(d)
        expect(a["results.csv"] != b["results.csv"], "the changed constant changed no result")
        changed = dict(b)
        rc, _, err = run("run", "--resume=force", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (0, 51), f"--resume=force: {rc} {err}")
        expect(files_of(d) == changed, "--resume=force did not reuse the other build's points")
        rc, _, err = run("run", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (51, 0), f"back to this build: {rc} {err}")
        same_results(ref, d, "this build's results after the other build's")
        rc, _, err = run("run", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (0, 51), f"same build resumes: {rc} {err}")
        for bad in (["--resume=later"], ["--resume=force", "--no-resume"]):
            rc, _, err = run("run", *bad, script("grid.lua"), "-o", d)
            expect(rc == 64 and err.count("\n") == 1 and "--resume" in err,
                   f"{bad}: {rc} {err!r}")


def start_long(d, *extra):
    return subprocess.Popen([BIN, "sweep", "-j", "1", *extra, script("long.lua"), "-o", d],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stop(pid, timeout=10.0):
    """SIGSTOP pid and wait until it is stopped: the signal lands when the
    process is next scheduled, and a record it was writing meanwhile would
    appear under the caller's feet."""
    os.kill(pid, signal.SIGSTOP)
    end = time.time() + timeout
    while time.time() < end:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] in ("T", "t"):
                return
        time.sleep(0.002)
    raise AssertionError(f"process {pid} did not stop within {timeout} s")


def wait_records(p, d, n, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        if len(records(d)) >= n:
            return
        expect(p.poll() is None, f"sweep ended before {n} points were saved")
        time.sleep(0.01)
    raise AssertionError(f"{n} points not saved within {timeout} s")


def case_resume_after_kill():
    with tempfile.TemporaryDirectory() as t:
        d = os.path.join(t, "killed")
        p = start_long(d)
        wait_records(p, d, 20)
        p.send_signal(signal.SIGKILL)
        p.communicate()
        saved = len(records(d))
        expect(20 <= saved < 400, f"{saved} records after the kill")
        no_results(d)
        rc, _, err = run("sweep", "-j", "2", script("long.lua"), "-o", d)
        expect(rc == 0, err)
        computed, resumed = counts(err)
        expect(resumed == saved and computed == 400 - saved,
               f"after kill: {computed} computed, {resumed} resumed, {saved} saved")
        ref = os.path.join(t, "ref")
        rc, _, err = run("sweep", "-j", "2", script("long.lua"), "-o", ref)
        expect(rc == 0 and counts(err) == (400, 0), err)
        same_results(ref, d, "resumed vs uninterrupted")


def case_sigint():
    with tempfile.TemporaryDirectory() as t:
        d = os.path.join(t, "int")
        p = start_long(d)
        wait_records(p, d, 10)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        expect(p.returncode == 130, f"exit {p.returncode} after SIGINT: {err}")
        lines = [l for l in err.splitlines() if l.strip()]
        expect(re.search(r"run the same command again to resume", lines[-1]), lines[-1])
        expect(lines[-1].startswith("flashspec: "), lines[-1])
        no_results(d)
        saved = len(records(d))
        m = re.search(r"(\d+) points? computed in this run", lines[-1])
        expect(m and int(m.group(1)) == saved, f"{lines[-1]!r} vs {saved} records")
        rc, _, err = run("sweep", "-j", "2", script("long.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (400 - saved, saved), f"{rc} {err}")
        # interrupting twice abandons the points in flight at once
        d2 = os.path.join(t, "int2")
        p = start_long(d2, "--no-resume")
        wait_records(p, d2, 5)
        p.send_signal(signal.SIGINT)
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=120)
        expect(p.returncode in (130, -signal.SIGINT), f"second SIGINT: {p.returncode}")
        no_results(d2)


def case_resume_counts():
    with tempfile.TemporaryDirectory() as d:
        rc, _, err = run("run", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (51, 0), err)
        first = files_of(d)
        recs = records(d)
        expect(len(recs) == 51, f"{len(recs)} records for 51 points")
        rc, _, err = run("run", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (0, 51), f"re-run recomputed: {err}")
        # a corrupted record and a missing one are recomputed, nothing else
        with open(recs[0], "r+b") as f:
            f.seek(60)
            b = f.read(1)
            f.seek(60)
            f.write(bytes([b[0] ^ 0xFF]))
        os.remove(recs[1])
        with open(recs[2], "r+b") as f:
            f.truncate(10)
        rc, _, err = run("run", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (3, 48), f"damaged records: {err}")
        rc, _, err = run("run", "--no-resume", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (51, 0), f"--no-resume: {err}")
        expect(files_of(d) == first, "results changed across resumes")


# ----------------------------------------------------------------- errors

def case_bad_points():
    with tempfile.TemporaryDirectory() as d:
        rc, out, err = run("sweep", script("bad_points.lua"), "-o", d)
        expect(rc == 78, f"exit {rc}, wanted 78: {err}")
        expect("bad points ok" in out, f"script did not continue: {out!r} {err!r}")
        failed = [l for l in err.splitlines() if re.match(r"flashspec: point \d of 4 failed", l)]
        expect(len(failed) == 1, f"per-point error lines: {failed}")
        expect("point 2 of 4" in failed[0] and "does not fit" in failed[0], failed[0])
        expect(err.splitlines()[-1].startswith("flashspec: 1 point failed"), err)
        got = rows(d)
        expect([r["dram_fraction"] for r in got] == ["0.0", "0.1", "0.2"], f"rows {got}")
        # quiet: the error lines stay
        rc, _, err = run("sweep", "-q", script("bad_points.lua"), "-o", d)
        expect(rc == 78 and len(err.strip().splitlines()) == 2, f"-q: {err!r}")


def case_bad_points_invalid():
    # an invalid point anywhere in the list: one line before anything runs
    for which, needles in (("combination", ("needs a draft model", r"point 2 of 3")),
                           ("range", (r"key 'dram_fraction' = 1.5 is out of range",
                                      r"3 of 12 points", "no point ran"))):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "o")
            rc, stdout, err = run("sweep", script("bad_points_invalid.lua"), "--arg",
                                  f"which={which}", "-o", out)
            one_line(err, 78, rc, "bad_points_invalid.lua:")
            for n in needles:
                expect(re.search(n, err), f"{which}: {err!r} lacks {n!r}")
            expect("not reached" not in stdout, f"{which}: the script went on")
            no_results(out)
            expect(not os.path.exists(os.path.join(out, "points")) or
                   not os.listdir(os.path.join(out, "points")), f"{which}: a point ran")


def case_bad_points_key():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "o")
        rc, _, err = run("sweep", "-q", script("bad_points_key.lua"), "-o", out)
        lines = err.strip().splitlines()
        expect(rc == 78 and len(lines) == 1, f"{rc} {err!r}")
        expect("dram_fracton" in lines[0] and "did you mean 'dram_fraction'" in lines[0],
               lines[0])
        no_results(out)


def case_usage():
    for args in (["sweep", "-j", "0", "x.lua"], ["sweep", "-j", "many", "x.lua"],
                 ["run", "-j"], ["sweep"], ["demo", "-j", "2"]):
        rc, _, err = run(*args)
        expect(rc == 64, f"{args}: exit {rc} ({err!r})")
    rc, out, _ = run("sweep", "--help")
    expect(rc == 0 and "-j, --jobs" in out and "resume" in out, out)


def case_ids():
    with tempfile.TemporaryDirectory() as d:
        rc, out, err = run("run", "-j", "2", script("ids.lua"), "-o", d)
        expect(rc == 0 and "ids ok" in out, f"ids.lua failed ({rc}): {err}")


SYNTH_SCRIPT = """local fs = flashspec
local pts = {}
for _, pol in ipairs { fs.policy.specinfer {}, fs.policy.lyanna {} } do
  pts[#pts + 1] = { policy = pol, synth_tokens = fs.args.synth }
end
fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = fs.trace "traces/data/synth-default.h5",
  prompts = 2, max_new_tokens = 32, points = pts }
"""


def case_synth_tokens():
    """The point key synth_tokens: `offset` is the default (same rows, same
    point ids as leaving it out), `drawn` is another point (its own id, its
    column says so); a misspelt key or value is one line and exit 78."""
    with tempfile.TemporaryDirectory() as t:
        src = os.path.join(t, "s.lua")
        open(src, "w").write(SYNTH_SCRIPT)
        out = {}
        for name, args in (("default", []), ("offset", ["--arg", "synth=offset"]),
                           ("drawn", ["--arg", "synth=drawn"])):
            d = os.path.join(t, name)
            rc, _, err = run("sweep", "-q", "-j", "2", src, "-o", d, *args)
            expect(rc == 0, f"{name}: exit {rc}: {err}")
            out[name] = (rows(d), [os.path.basename(r) for r in records(d)])
        skip = {"script_hash", "sim_wall_s"}
        for a, b in zip(out["default"][0], out["offset"][0]):
            expect({k: v for k, v in a.items() if k not in skip} ==
                   {k: v for k, v in b.items() if k not in skip},
                   "synth_tokens = 'offset' changed a row")
        expect(out["default"][1] == out["offset"][1], "synth_tokens = 'offset' changed a point id")
        expect(not set(out["default"][1]) & set(out["drawn"][1]),
               "synth_tokens = 'drawn' kept a point id")
        expect([r["synth_tokens"] for r in out["default"][0]] == ["offset", "offset"] and
               [r["synth_tokens"] for r in out["drawn"][0]] == ["drawn", "drawn"],
               "the synth_tokens column")
        for bad, needle in (("synth_token = 'drawn'", "did you mean 'synth_tokens'"),
                            ("synth_tokens = 'random'", "synth_tokens")):
            bsrc = os.path.join(t, "bad.lua")
            open(bsrc, "w").write(SYNTH_SCRIPT.replace("synth_tokens = fs.args.synth", bad))
            rc, _, err = run("sweep", "-q", bsrc, "-o", os.path.join(t, "bad"))
            one_line(err, 78, rc, needle)
            no_results(os.path.join(t, "bad"))


# --------------------------------------------------------------- progress

def case_progress():
    with tempfile.TemporaryDirectory() as t:
        # terminal: one line rewritten with \r, with a rate and an ETA
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(BIN, [BIN, "sweep", "-j", "1", script("long.lua"), "-o",
                           os.path.join(t, "tty")])
        buf = b""
        while True:
            r, _, _ = select.select([fd], [], [], 120)
            if not r:
                break
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
        _, status = os.waitpid(pid, 0)
        expect(os.WEXITSTATUS(status) == 0, f"tty run failed: {buf[-500:]!r}")
        text = buf.decode(errors="replace")
        expect("\r" in text and re.search(r"\d+/400 points", text), f"no \\r progress: "
               f"{text[-300:]!r}")
        expect("points/s" in text and "ETA" in text, "progress lacks rate or ETA")
        # not a terminal: no \r; summaries; -q: nothing at all
        rc, _, err = run("sweep", script("long.lua"), "-o", os.path.join(t, "tty"))
        expect(rc == 0 and "\r" not in err and "sweep of 400 points" in err, err)
        rc, out, err = run("sweep", "-q", "--no-resume", script("long.lua"), "-o",
                           os.path.join(t, "q"))
        expect(rc == 0 and err == "" and out.strip() == "400", f"-q printed {err!r}")


# -------------------------------------------------------- fault injection

def one_line(stderr, code, rc, needle):
    lines = [l for l in stderr.splitlines() if l.strip()]
    expect(rc == code, f"exit {rc}, wanted {code}: {stderr!r}")
    expect(lines and lines[-1].startswith("flashspec: ") and re.search(needle, lines[-1]),
           f"last stderr line lacks {needle!r}: {lines!r}")
    errors = [l for l in lines if not re.match(r"flashspec: (sweep of|wrote|warning:) ", l)]
    expect(len(errors) == 1, f"more than one error line: {errors!r}")


def limited_file_size(limit, ignore=True):
    """preexec_fn: files may not grow past `limit` bytes; write(2) then fails with
    EFBIG (SIGXFSZ ignored, which exec keeps) -- a full disk without a mount.
    ignore=False leaves SIGXFSZ at its default (kill), as `ulimit -f` in a
    shell does: flashspec must ignore it itself."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN if ignore else signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def temporaries(d):
    """Hidden temporaries in d and d/points."""
    return sorted(glob.glob(os.path.join(d, ".*")) + glob.glob(os.path.join(d, "points", ".*")))


def case_fault_full_disk():
    """Results that cannot be written: exit 73, one line, no partial results,
    every finished point kept for the next run."""
    with tempfile.TemporaryDirectory() as t:
        d = os.path.join(t, "full")
        p = subprocess.run([BIN, "sweep", "-j", "2", script("grid.lua"), "-o", d, "-q"],
                           capture_output=True, text=True, timeout=300,
                           preexec_fn=limited_file_size(4096))
        one_line(p.stderr, 73, p.returncode,
                 r"cannot write output .*(results|run\.json|script\.lua).*File too large")
        no_results(d)
        expect(not any(os.path.exists(os.path.join(d, f)) for f in ("run.json", "script.lua")),
               "a run record left without results")
        saved = len(records(d))
        expect(saved == 51, f"{saved} of 51 finished points saved")
        expect(temporaries(d) == [], f"temporaries left: {temporaries(d)}")
        rc, _, err = run("sweep", "-j", "2", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (0, 51), f"resume after a full disk: {rc} {err}")
        # `ulimit -f` as a shell sets it: SIGXFSZ not ignored by the caller
        for name, cmd in (("sweep", ["sweep", "-j", "2", script("grid.lua"), "-o",
                                     os.path.join(t, "xfsz"), "-q"]),
                          ("trace synth", ["trace", "synth", "-o", os.path.join(t, "x.h5"),
                                           "--prompts", "64", "--output-len", "256"]),
                          ("trace synth --by-prompt",
                           ["trace", "synth", "-o", os.path.join(t, "x.h5"), "--prompts", "64",
                            "--output-len", "256", "--by-prompt"])):
            p = subprocess.run([BIN, *cmd], capture_output=True, text=True, timeout=300,
                               preexec_fn=limited_file_size(4096, ignore=False))
            expect(p.returncode == 73, f"{name} under ulimit -f: exit {p.returncode} "
                                       f"(SIGXFSZ kills with 153/-25): {p.stderr!r}")
            one_line(p.stderr, 73, p.returncode, r"File too large")
        expect(temporaries(os.path.join(t, "xfsz")) == [], "sweep temporaries left")
        left = [n for n in os.listdir(t) if n.startswith("x.h5") or n.startswith(".x.h5")]
        expect(left == [], f"trace temporaries left: {left}")
        # records that cannot be written either: a warning, and the results still come
        d2 = os.path.join(t, "tiny")
        os.makedirs(os.path.join(d2, "points"))
        p = subprocess.run([BIN, "run", script("grid.lua"), "-o", d2, "-q"],
                           capture_output=True, text=True, timeout=300,
                           preexec_fn=limited_file_size(64))
        expect(p.returncode == 73, f"exit {p.returncode}: {p.stderr!r}")
        lost = re.findall(r"warning: (\d+) finished points? could not be saved", p.stderr)
        expect(sum(map(int, lost)) == 51, f"store warnings: {p.stderr!r}")
        expect(records(d2) == [], "a record was written past the size limit")
        no_results(d2)


def case_stale_temporaries():
    """Temporaries a killed run left behind (its process gone) are removed by
    the next run into that directory; a live writer's are kept."""
    with tempfile.TemporaryDirectory() as t:
        d = os.path.join(t, "out")
        rc, _, err = run("run", script("grid.lua"), "-o", d, "-q")
        expect(rc == 0, err)
        dead = subprocess.Popen(["true"])  # a process id that is now free
        dead.wait()
        # this host's tag in temporary names: FNV-1a 32 of the host name
        h = 2166136261
        for c in os.uname().nodename.encode():
            h = ((h ^ c) * 16777619) & 0xffffffff
        host = f"{h:08x}"
        stale = [os.path.join(d, f".results.csv.fstmp-{dead.pid}-{host}-abcdef"),
                 os.path.join(d, "points", f".{'0' * 32}.fstmp-{dead.pid}-{host}-7")]
        old = os.path.join(d, f".results.h5.fstmp-{os.getpid()}-0badf00d-uvwxyz")
        live = [os.path.join(d, f".results.h5.fstmp-{os.getpid()}-{host}-ghijkl"),
                os.path.join(d, "points", f".{'1' * 32}.fstmp-{os.getpid()}-{host}-8"),
                os.path.join(d, ".notes.fstmp-x")]
        for f in stale + live + [old]:
            open(f, "w").write("partial")
        day_ago = time.time() - 2 * 86400
        os.utime(old, (day_ago, day_ago))
        rc, _, err = run("run", script("grid.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (0, 51), f"rerun: {rc} {err}")
        expect("removed 3 temporary files" in err, f"says what it removed: {err!r}")
        for f in stale + [old]:
            expect(not os.path.exists(f), f"stale temporary kept: {f}")
        for f in live:
            expect(os.path.exists(f), f"a live writer's temporary was removed: {f}")


def case_fault_unwritable():
    """An output directory that cannot be created or written: exit 73 before
    any point runs."""
    with tempfile.TemporaryDirectory() as t:
        blocker = os.path.join(t, "file")
        open(blocker, "w").write("x")
        for d, needle in ((os.path.join(blocker, "out"), re.escape(blocker)),
                          ("/proc/flashspec-no-such-dir/out", "flashspec-no-such-dir")):
            rc, _, err = run("sweep", "-j", "1", script("grid.lua"), "-o", d, "-q")
            one_line(err, 73, rc, needle)
        if os.geteuid() != 0:  # root writes anywhere: the mode bits test is moot
            ro = os.path.join(t, "ro")
            os.makedirs(ro)
            os.chmod(ro, 0o555)
            rc, _, err = run("sweep", "-j", "1", script("grid.lua"), "-o", ro, "-q")
            one_line(err, 73, rc, re.escape(ro))
            os.chmod(ro, 0o755)
        # a points/ path that is a file: the store cannot open
        d = os.path.join(t, "pfile")
        os.makedirs(d)
        open(os.path.join(d, "points"), "w").write("x")
        rc, _, err = run("sweep", "-j", "1", script("grid.lua"), "-o", d, "-q")
        one_line(err, 73, rc, "points")
        no_results(d)


def case_fault_vanish():
    """The output directory removed while a sweep runs: the store recreates it,
    the points finished afterwards are saved, the results are complete."""
    with tempfile.TemporaryDirectory() as t:
        d = os.path.join(t, "gone")
        p = start_long(d, "-q")
        wait_records(p, d, 20)
        # the sweep keeps writing records while the tree is removed: a record
        # landing between rmtree's listing and its rmdir makes one pass fail
        for _ in range(50):
            shutil.rmtree(d, ignore_errors=True)
            if not os.path.exists(d):
                break
        out, err = p.communicate(timeout=300)
        expect(p.returncode == 0, f"exit {p.returncode}: {err}")
        expect(out.strip() == "400", f"script saw {out.strip()!r} rows")
        expect(len(rows(d)) == 400, "results incomplete")
        saved = len(records(d))
        expect(0 < saved < 400, f"{saved} records after the removal")
        rc, _, err = run("sweep", "-j", "2", script("long.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (400 - saved, saved), f"{rc} {err}")


def case_two_writers():
    """A second run writing the same output directory while the first runs
    fails at once: one line, exit 73, nothing of its own written; the first
    finishes with all its results (before the lock, 1 run in 150 mixed one
    run's results.csv with the other's results.h5).  Once the first has ended
    the directory is free again; a run that fails before writing anything
    removes the directory it made."""
    with tempfile.TemporaryDirectory() as t:
        d = os.path.join(t, "shared")
        p = start_long(d, "-q")
        wait_records(p, d, 5)
        rc, _, err = run("sweep", "-j", "1", script("long.lua"), "-o", d)
        lines = err.strip().splitlines()
        expect(rc == 73 and len(lines) == 1 and
               re.search(r"cannot write output '.*shared': another flashspec run is writing it",
                         lines[0]), f"second writer: {rc} {err!r}")
        expect(p.poll() is None, "the first run ended before the second was refused")
        out, err = p.communicate(timeout=300)
        expect(p.returncode == 0 and out.strip() == "400", f"first run: {p.returncode} {err}")
        expect(len(rows(d)) == 400, "results incomplete")
        rc, _, err = run("sweep", "-j", "2", script("long.lua"), "-o", d)
        expect(rc == 0 and counts(err) == (0, 400), f"after the first: {rc} {err}")
        bad = os.path.join(t, "bad.lua")
        open(bad, "w").write("error('no')\n")
        e = os.path.join(t, "new", "dir")
        rc, _, err = run("run", bad, "-o", e)
        expect(rc == 78 and not os.path.exists(e), f"failed run left {e}: {rc} {err}")


def case_lock_on_path():
    """The lock holds for the path, not only for the directory it was taken
    on: the output directory removed under a running writer (stopped there by
    SIGSTOP, so the order is certain), a second run making it anew and
    writing it, the first -- resumed -- writes nothing more there: its next
    record and its results ask that the path still name its locked
    directory, find another run holding it (the second run stopped meanwhile,
    so it still holds the path), and it ends with one line, exit 73; the
    second run's results and record are whole and its own.  When the
    second run has already finished, the first still refuses (another run's
    results are there)."""
    import json
    with tempfile.TemporaryDirectory() as t:
        for second_done in (False, True):
            d = os.path.join(t, f"shared{int(second_done)}")
            p = start_long(d, "-q")
            wait_records(p, d, 5)
            stop(p.pid)
            try:
                shutil.rmtree(d)
                q = subprocess.Popen([BIN, "sweep", "-j", "1", "-q", script("long.lua"), "-o", d,
                                      "--arg", "tag=second"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
                if second_done:
                    q.communicate(timeout=300)
                else:
                    wait_records(q, d, 5)
                    # stopped too, so the second run holds the path (and has not
                    # finished) whenever the first writes, however loaded the machine
                    stop(q.pid)
            finally:
                os.kill(p.pid, signal.SIGCONT)
            try:
                out, err = p.communicate(timeout=300)
            finally:
                if not second_done:
                    os.kill(q.pid, signal.SIGCONT)
            lines = [l for l in err.splitlines() if not l.startswith("flashspec: warning:")]
            expect(p.returncode == 73 and len(lines) == 1 and
                   re.search(r"cannot write output '.*shared\d': the directory this run locked "
                             r"was removed or replaced while it ran", lines[0]) and
                   ("another run has written its results there" if second_done else
                    "another run holds it now") in lines[0],
                   f"first run (second done: {second_done}): {p.returncode} {err!r}")
            qout, qerr = q.communicate(timeout=300)
            expect(q.returncode == 0 and qout.strip() == "400",
                   f"second run: {q.returncode} {qerr!r}")
            expect(len(rows(d)) == 400, "the second run's results are not whole")
            rec = json.load(open(os.path.join(d, "run.json")))
            expect("tag=second" in rec["command"], f"run.json is not the second run's: "
                   f"{rec['command']}")


def case_fault_trace_changed():
    """A trace replaced between runs: its checksum is part of every point id and
    record, so nothing is resumed and the results follow the new trace; a trace
    damaged between runs is a one-line exit 65."""
    with tempfile.TemporaryDirectory() as t:
        tr = os.path.join(t, "t.h5")
        src = os.path.join(t, "s.lua")
        open(src, "w").write("""local fs = flashspec
fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  trace = fs.trace "t.h5", policy = fs.policy.flash_ar {}, dram_fraction = { 0, 0.5 },
  max_new_tokens = 16 }
""")
        d = os.path.join(t, "out")

        def synth(seed):
            rc, _, err = run("trace", "synth", "-o", tr, "--prompts", "2", "--output-len", "40",
                             "--seed", str(seed))
            expect(rc == 0, err)

        synth(1)
        rc, _, err = run("sweep", "-j", "1", src, "-o", d)
        expect(rc == 0 and counts(err) == (2, 0), err)
        first = rows(d)
        rc, _, err = run("sweep", "-j", "1", src, "-o", d)
        expect(rc == 0 and counts(err) == (0, 2), f"same trace not resumed: {err}")
        synth(2)
        rc, _, err = run("sweep", "-j", "1", src, "-o", d)
        expect(rc == 0 and counts(err) == (2, 0), f"changed trace resumed: {err}")
        second = rows(d)
        expect(first[0]["trace_checksum"] != second[0]["trace_checksum"],
               "results still carry the old trace checksum")
        data = open(tr, "rb").read()
        open(tr, "wb").write(data[: len(data) // 2])
        rc, _, err = run("sweep", "-j", "1", src, "-o", d, "-q")
        one_line(err, 65, rc, "t.h5")
        expect(rows(d) == second, "a failed run changed the previous results")


LAZY_SCRIPT = """local fs = flashspec
local first = tonumber(fs.args.first or 0)
local last = tonumber(fs.args.last or 5)
local pts = {}
for p = first, last do
  for _, pol in ipairs{ fs.policy.chain { k = 4 }, fs.policy.eagle2 {} } do
    pts[#pts + 1] = { prompt_offset = p, policy = pol }
  end
end
fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = fs.trace "t.h5", prompts = 1,
  max_new_tokens = 32, points = pts }
"""


def lazy_setup(t):
    """Directory a: a trace with its index; b: the same trace without one."""
    import h5py
    a, b = os.path.join(t, "a"), os.path.join(t, "b")
    os.makedirs(a)
    os.makedirs(b)
    tr = os.path.join(a, "t.h5")
    rc, _, err = run("trace", "synth", "-o", tr, "--prompts", "6", "--output-len", "48",
                     "--nodes", "24")
    expect(rc == 0, err)
    with h5py.File(tr, "r") as f, h5py.File(os.path.join(b, "t.h5"), "w") as g:
        expect("index" in f, "trace synth wrote no /index")
        for k, v in f.attrs.items():
            g.attrs[k] = v
        for name in ("prompts", "reference", "trees", "nodes"):
            for ds in f[name]:
                g.create_dataset(f"{name}/{ds}", data=f[f"{name}/{ds}"][()])
    for d in (a, b):
        open(os.path.join(d, "s.lua"), "w").write(LAZY_SCRIPT)
    return a, b


def case_index_fsize():
    """`trace index` that cannot write (a file-size limit below the file's size,
    so the copy fails, or just above it, so the index fails) is one line and
    exit 73, and leaves the file byte for byte as it was, still a valid trace,
    with no temporary beside it; without the limit it adds the index."""
    import hashlib
    import resource
    with tempfile.TemporaryDirectory() as t:
        _, b = lazy_setup(t)
        tr = os.path.join(b, "t.h5")
        before = hashlib.sha256(open(tr, "rb").read()).hexdigest()
        size = os.path.getsize(tr)
        for limit in (size // 2, size + 64):
            def cap(limit=limit):
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            p = subprocess.run([BIN, "trace", "index", tr], capture_output=True, text=True,
                               timeout=120, preexec_fn=cap)
            lines = p.stderr.strip().splitlines()
            expect(p.returncode == 73 and len(lines) == 1 and tr in lines[0],
                   f"limit {limit}: exit {p.returncode}: {p.stderr!r}")
            print(f"  limit {limit} of {size} bytes: {lines[0]}")
            expect(hashlib.sha256(open(tr, "rb").read()).hexdigest() == before,
                   f"limit {limit}: the trace changed")
            expect(sorted(os.listdir(b)) == ["s.lua", "t.h5"], f"left behind: {os.listdir(b)}")
            rc, _, err = run("trace", "check", tr)
            expect(rc == 0, f"limit {limit}: the trace no longer checks: {err}")
        mode = os.stat(tr).st_mode & 0o777
        rc, out, err = run("trace", "index", tr)
        expect(rc == 0 and out.strip().endswith("index added"), f"trace index: {rc} {out} {err}")
        expect(os.stat(tr).st_mode & 0o777 == mode, "permissions changed")
        expect(sorted(os.listdir(b)) == ["s.lua", "t.h5"], f"left behind: {os.listdir(b)}")
    print("index_fsize: ok")


def sweep_counts(err):
    """(computed, resumed, failed) from the sweep's summary line."""
    m = re.search(r"sweep of \d+ points?: (\d+) computed, (\d+) resumed, (\d+) failed", err)
    expect(m, f"no sweep summary in stderr: {err!r}")
    return tuple(int(x) for x in m.groups())


def case_resume_content():
    """A resume is keyed on the content actually read: a record is trusted only
    after the prompts its point covers have been read and checked against
    their hashes, and its key holds those hashes.  (1) A prompt changed after
    the first run (its index kept): its points are not resumed but fail (65),
    the others resume.  (2) A trace of other data carrying the first one's
    index checksum: nothing is resumed, its rows are its own.  (3) A poked
    /index/checksum: --verify-trace refuses the trace (65, one line)."""
    import h5py
    with tempfile.TemporaryDirectory() as t:
        a, _ = lazy_setup(t)
        o = os.path.join(t, "out")
        rc, _, err = run("sweep", os.path.join(a, "s.lua"), "-o", o)
        expect(rc == 0 and sweep_counts(err) == (12, 0, 0), f"first run: {rc} {err}")
        # (1) prompt 2 changed under its index: was "0 computed, 12 resumed", exit 0
        c = os.path.join(t, "c")
        damaged_copy(a, c, 2, "lower")
        rc, _, err = run("sweep", os.path.join(c, "s.lua"), "-o", o)
        expect(rc == 65 and sweep_counts(err) == (0, 10, 2) and
               len(re.findall(r"/index/prompt_hash: prompt 2", err)) == 2,
               f"changed prompt: {rc} {err}")
        # (2) other data under the same index checksum: recomputed, its own rows
        b2 = os.path.join(t, "b2")
        os.makedirs(b2)
        tr = os.path.join(b2, "t.h5")
        rc, _, err = run("trace", "synth", "-o", tr, "--prompts", "6", "--output-len", "48",
                         "--nodes", "24", "--seed", "7")
        expect(rc == 0, err)
        open(os.path.join(b2, "s.lua"), "w").write(LAZY_SCRIPT)
        own = os.path.join(t, "own")
        rc, _, err = run("sweep", os.path.join(b2, "s.lua"), "-q", "-o", own)
        expect(rc == 0, err)
        with h5py.File(os.path.join(a, "t.h5"), "r") as f, h5py.File(tr, "r+") as g:
            g["index/checksum"][0] = f["index/checksum"][0]
        rc, _, err = run("sweep", os.path.join(b2, "s.lua"), "-o", o)
        expect(rc == 0 and sweep_counts(err) == (12, 0, 0), f"borrowed checksum: {rc} {err}")
        expect([r["tokens_per_s"] for r in rows(o)] == [r["tokens_per_s"] for r in rows(own)],
               "a trace with a borrowed checksum got another trace's rows")
        # (3) a poked checksum: --verify-trace checks the index against the data
        rc, _, err = run("sweep", os.path.join(b2, "s.lua"), "-q", "--verify-trace", "-o",
                         os.path.join(t, "v"))
        lines = err.strip().splitlines()
        expect(rc == 65 and len(lines) == 1 and "--verify-trace" in lines[0] and
               "index" in lines[0], f"--verify-trace: {rc} {err!r}")
        rc, _, err = run("sweep", os.path.join(a, "s.lua"), "-q", "--verify-trace", "-o",
                         os.path.join(t, "v2"))
        expect(rc == 0, f"--verify-trace on a sound trace: {rc} {err}")
    print("resume_content: ok")


def damaged_copy(src_dir, dst_dir, prompt, how):
    """A copy of src_dir/t.h5 with one value of `prompt` changed: 'nan' (invalid)
    or 'lower' (valid, but not what the index recorded)."""
    import h5py
    os.makedirs(dst_dir)
    shutil.copy(os.path.join(src_dir, "t.h5"), dst_dir)
    shutil.copy(os.path.join(src_dir, "s.lua"), dst_dir)
    with h5py.File(os.path.join(dst_dir, "t.h5"), "r+") as f:
        row = f["trees/node_offset"][f["reference/offset"][prompt]] + 3
        v = f["nodes/draft_logp"][row]
        if how == "nan":
            v[1] = float("nan")
        else:
            v[-1] -= 1.0
        f["nodes/draft_logp"][row] = v


def case_lazy_trace():
    """Traces read prompt by prompt: results identical to a trace loaded whole
    (whatever the cache size and worker count); a damaged prompt fails only the
    points that use it (exit 65, its own line each), the others are written;
    `trace check` catches it; under MPI a rank never reads prompts its points
    do not use (a damaged prompt nobody uses goes unnoticed); `trace index`
    gives a file without an index one, with the same results."""
    with tempfile.TemporaryDirectory() as t:
        a, b = lazy_setup(t)
        outs = []
        for i, (d, extra) in enumerate(((a, []), (a, ["-j", "2", "--trace-cache-mb", "1"]),
                                        (b, []), (b, ["-j", "2", "--trace-cache-mb", "1"]))):
            o = os.path.join(t, f"out{i}")
            rc, _, err = run("sweep", os.path.join(d, "s.lua"), "-q", "-o", o, *extra)
            expect(rc == 0, f"{d} {extra}: exit {rc}: {err}")
            outs.append(o)
        # the index added to the file without one: opened prompt by prompt now
        rc, out, err = run("trace", "index", os.path.join(b, "t.h5"))
        expect(rc == 0 and out.strip().endswith("index added"), f"trace index: {rc} {out} {err}")
        rc, out, err = run("trace", "index", os.path.join(b, "t.h5"))
        expect(rc == 0 and "has an index (checked)" in out, f"trace index again: {rc} {out}")
        o = os.path.join(t, "out-indexed")
        rc, _, err = run("sweep", os.path.join(b, "s.lua"), "-q", "-o", o)
        expect(rc == 0, f"after trace index: exit {rc}: {err}")
        outs.append(o)
        for o in outs[1:]:
            same_results(outs[0], o, f"lazy vs {o}")
        expect(len(rows(outs[0])) == 12, "row count")
        rc, _, err = run("sweep", os.path.join(a, "s.lua"), "-q", "-o", outs[0],
                         "--trace-cache-mb", "0")
        one_line(err, 64, rc, "--trace-cache-mb")

        for how, prompt, needle in (("nan", 3, "/nodes/draft_logp: node .*prompt 3,"),
                                    ("lower", 1, "/index/prompt_hash: prompt 1")):
            c = os.path.join(t, f"bad-{how}")
            damaged_copy(a, c, prompt, how)
            o = os.path.join(t, f"out-{how}")
            rc, _, err = run("sweep", os.path.join(c, "s.lua"), "-q", "-o", o)
            expect(rc == 65, f"{how}: exit {rc}, wanted 65: {err}")
            failed = [l for l in err.splitlines() if re.match(r"flashspec: point \d+ of 12 failed", l)]
            expect(len(failed) == 2 and all(re.search(needle, l) for l in failed),
                   f"{how}: failed points {failed}")
            got = rows(o)
            expect(len(got) == 10, f"{how}: {len(got)} rows written")
            good = [r for r in rows(outs[0]) if r["prompt_offset"] != str(prompt)]
            expect([r["tokens_per_s"] for r in got] == [r["tokens_per_s"] for r in good],
                   f"{how}: the good points changed")
            rc, _, err = run("trace", "check", os.path.join(c, "t.h5"))
            expect(rc == 65 and re.search(needle.split(":")[0], err), f"trace check: {rc} {err}")
            # points that do not use the damaged prompt run clean
            rc, _, err = run("sweep", os.path.join(c, "s.lua"), "-q", "-o", o + "-first",
                             "--arg", "first=0", "--arg", f"last={prompt - 1}")
            expect(rc == 0, f"{how}: prompts before the damage: exit {rc}: {err}")
            if MPI:
                m = o + "-mpi"
                rc, _, err = mpi_run(2, "sweep", "-j", "1", os.path.join(c, "s.lua"), "-q",
                                     "-o", m, "--arg", "first=0", "--arg", f"last={prompt - 1}")
                expect(rc == 0, f"{how}: MPI ranks read the damaged prompt: exit {rc}: {err}")
                same_results(o + "-first", m, f"{how}: MPI vs local")
                rc, _, err = mpi_run(2, "sweep", "-j", "1", os.path.join(c, "s.lua"), "-q",
                                     "-o", m + "2")
                expect(rc == 65 and len(re.findall(r"point \d+ of 12 failed", err)) == 2,
                       f"{how}: MPI: {rc} {err}")


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print("usage: test_sweep.py CASE\ncases: " + " ".join(sorted(CASES)), file=sys.stderr)
        sys.exit(2)
    CASES[sys.argv[1]]()
    print(f"sweep/{sys.argv[1]}: ok")
