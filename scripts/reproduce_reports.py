#!/usr/bin/python3
"""The report stage of scripts/reproduce: every report and fidelity report of
the studies' results, drawn by a bounded pool of worker processes, skipped
where its inputs did not change, with progress, and the figure checker's
verdict on every figure at the end.

    scripts/reproduce_reports.py [-j N] JOB...

JOB is `report:RESULTS_DIR` (analysis/report.py RESULTS_DIR ->
RESULTS_DIR/report/) or `fidelity:RESULTS_DIR:REFERENCE.csv:NAME`
(analysis/fidelity.py -> RESULTS_DIR/NAME/).  A job is skipped when its output
directory holds the outputs of the same inputs: the bytes of the results file
(and of the reference CSV), and the analysis version (the bytes of every
analysis/*.py and analysis/reference/* file); OUT/.inputs records their
SHA-256 and the seconds the job last took, which the ETA uses.

The workers are forked from this process after analysis/ is imported (one
import of pandas and matplotlib, not one per report).  Progress lines go to
stdout as jobs finish: `report k of n: NAME (T s, ...) ETA ~S s`.  Then one
line per figure, `STUDY/FIGURE: ok` or its problems, and the counts.

Exit status: 0 when every job succeeded, 1 otherwise (figure problems are
reported, not fatal).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import math
import multiprocessing
import os
import sys
import time

HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANALYSIS = os.path.join(HOME, "analysis")
sys.dont_write_bytecode = True
sys.path.insert(0, ANALYSIS)


def analysis_version() -> str:
    """SHA-256 over the analysis code and its reference data (names and bytes)."""
    h = hashlib.sha256()
    files = [os.path.join(ANALYSIS, f) for f in sorted(os.listdir(ANALYSIS))
             if f.endswith(".py")]
    ref = os.path.join(ANALYSIS, "reference")
    if os.path.isdir(ref):
        files += [os.path.join(ref, f) for f in sorted(os.listdir(ref))]
    for p in files:
        h.update(os.path.relpath(p, ANALYSIS).encode() + b"\0")
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def file_hash(path: str) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return "missing"
    return h.hexdigest()


class Job:
    def __init__(self, spec: str, version: str) -> None:
        kind, _, rest = spec.partition(":")
        self.kind = kind
        if kind == "report":
            self.results = rest
            self.out = os.path.join(rest, "report")
            self.inputs = [os.path.join(rest, "results.csv")]
            self.args = [rest, "-o", self.out]
            self.name = os.path.basename(os.path.normpath(rest))
            self.outputs = ["report.md", "figcheck.json"]
        elif kind == "fidelity":
            self.results, ref, name = rest.split(":")
            self.out = os.path.join(self.results, name)
            self.inputs = [os.path.join(self.results, "results.csv"), ref]
            self.args = [self.results, ref, "-o", self.out]
            self.name = os.path.basename(os.path.normpath(self.results)) + "/" + name
            self.outputs = ["fidelity.md", "figcheck.json"]
        else:
            raise ValueError(f"unknown job '{spec}'")
        self.key = json.dumps({"version": version,
                               "inputs": [file_hash(p) for p in self.inputs]})
        self.last_s = self.guess_s()

    def guess_s(self) -> float:
        """Seconds the job will take when no earlier run says (a cold start):
        a report grows with about the square root of its points (its panels
        and bars), a fidelity report is short; used to draw the longest
        first."""
        if self.kind == "fidelity":
            return 0.5
        try:
            with open(self.inputs[0], "rb") as f:
                rows = max(0, sum(1 for _ in f) - 1)
        except OSError:
            return 1.0
        return 1.0 + 0.3 * math.sqrt(rows)

    def stamp_path(self) -> str:
        return os.path.join(self.out, ".inputs")

    def up_to_date(self) -> bool:
        try:
            with open(self.stamp_path(), encoding="utf-8") as f:
                stamp = json.load(f)
            self.last_s = float(stamp.get("seconds", self.last_s))
        except (OSError, ValueError, AttributeError):
            return False
        return stamp.get("key") == self.key and \
            all(os.path.exists(os.path.join(self.out, o)) for o in self.outputs)


def run_job(job: Job) -> tuple[str, int, float, str]:
    """Runs one job in this (worker) process: its script's main(), stdout and
    stderr captured.  Returns (name, exit code, seconds, output)."""
    import fidelity
    import report

    t0 = time.monotonic()
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(buf):
        try:
            rc = (report.main if job.kind == "report" else fidelity.main)(job.args)
        except Exception as e:  # a bug: reported with the job, the others go on
            import traceback
            traceback.print_exc()
            rc = 70
            print(f"{job.kind}: internal error: {e}")
    dt = time.monotonic() - t0
    if rc == 0:
        with open(job.stamp_path(), "w", encoding="utf-8") as f:
            json.dump({"key": job.key, "seconds": round(dt, 2)}, f)
    return job.name, rc, dt, buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="reproduce_reports.py")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("specs", nargs="*", metavar="JOB")
    args = ap.parse_args(argv)
    version = analysis_version()
    jobs = [Job(s, version) for s in args.specs]
    todo = [j for j in jobs if not j.up_to_date()]
    for j in jobs:
        if j not in todo:
            print(f"report {j.name}: inputs unchanged, kept ({os.path.relpath(j.out, HOME)})")
    n, done, failed = len(todo), 0, []
    t0 = time.monotonic()
    if todo:
        # imported here, once: the forked workers inherit pandas and matplotlib
        import fidelity  # noqa: F401
        import report  # noqa: F401

        workers = max(1, min(args.jobs, n))
        print(f"drawing {n} report{'s' if n > 1 else ''} with {workers} worker"
              f"{'s' if workers > 1 else ''} (ETA ~{sum(j.last_s for j in todo) / workers:.0f} s)",
              flush=True)
        # the longest first, so that the last to finish is a short one
        todo.sort(key=lambda j: -j.last_s)
        by_name = {j.name: j for j in todo}
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers) as pool:
            for name, rc, dt, out in pool.imap_unordered(run_job, todo):
                done += 1
                j = by_name[name]
                with open(os.path.join(j.results, f"{name.split('/')[-1]}.log"
                                       if j.kind == "fidelity" else "report.log"), "w",
                          encoding="utf-8") as f:
                    f.write(out)
                j.finished = True
                # what is left (the jobs in flight included), by their last times
                remaining = [x for x in todo if not getattr(x, "finished", False)]
                eta = sum(x.last_s for x in remaining) / workers
                status = "ok" if rc == 0 else f"FAILED (exit {rc}; see the log)"
                print(f"report {done} of {n}: {name} ({dt:.1f} s, {status})" +
                      (f"; ETA ~{eta:.0f} s" if remaining else ""), flush=True)
                if rc != 0:
                    failed.append(name)
                    tail = [ln for ln in out.strip().splitlines() if ln][-3:]
                    for ln in tail:
                        print(f"  {ln}")
        print(f"reports drawn in {time.monotonic() - t0:.1f} s")
    # the figure checker's verdict on every figure
    figures = bad = 0
    print("\nfigure check (values within the axes, legends, canonical names, no pooled "
          "panel, one colour per policy):")
    for j in jobs:
        try:
            with open(os.path.join(j.out, "figcheck.json"), encoding="utf-8") as f:
                checks = json.load(f)
        except (OSError, ValueError):
            print(f"  {j.name}: no figure check (report missing)")
            continue
        for fig, probs in sorted(checks.items()):
            figures += 1
            where = f"{j.name}/{fig}"
            if not probs:
                print(f"  {where}: ok")
            else:
                bad += 1
                print(f"  {where}: {len(probs)} problem{'s' if len(probs) > 1 else ''}")
                for p in probs:
                    print(f"    {p}")
    print(f"figure check: {figures} figures, {figures - bad} ok, {bad} with problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
