#!/usr/bin/python3
"""End-to-end tests of analysis/ (report.py, fidelity.py, timeline.py) and of
`flashspec run|sweep --timeline`.

    test_analysis.py CASE FLASHSPEC_BIN PROJECT_DIR

Each case runs flashspec on a small study into a fresh temporary directory,
then the analysis scripts, and checks the files they produce (tables with the
expected rows, PNG images, the trace-event format of timelines) and their
documented exit codes on bad input, with no partial output.

Reference metric expressions (analysis/README.md "Reference CSV"):
  metric_expr      precedence, left associativity, parentheses, unary minus and
                   numbers (strtod's: exponents, hexadecimal) evaluate row by
                   row to the values the same double operations give, in
                   metric_values and in fidelity.csv
  metric_errors    malformed expressions, unknown or derived columns and values
                   not finite for a matching row: exit 65, one line naming
                   FILE:LINE and the problem, nothing written
  metric_vs_c      the C reader (flashspec calibrate) and Python accept and
                   reject the same expressions for the same reason and compute
                   the same values
  fidelity_table5  policy / draft / trace keys match the right result rows;
                   Lever Table 5 rows get the draft x policy x trace table
  load             pandas.read_csv and analysis.fsresults.load (directory, CSV
                   or HDF5) give the same DataFrame; bad files raise one error
  figures          every figure of report.py, fidelity.py and timeline.py has a
                   title, axis labels and a legend, and series stay distinct
                   (the Figure objects inspected); the checker flags a figure
                   without a title, a hash as a label, a panel under the least
                   height, a series neither in the legend nor reported as not
                   drawn, an overlong legend and a tree axis that disagrees
                   with verify_rows_max
  report_rules     on synthesised results: tree sizes with the root on the
                   tree axis, nothing left out without a note (baselines
                   borrowed or series reported), hash-named traces named,
                   pruning drawn only where it alone varies, accepted length
                   a panel per DRAM budget, the breakdown per token too
  package          analysis/ installed into a fresh venv (pip -e, offline):
                   the README's recipe and flashspec-report run from another
                   directory; a missing dependency is one line, exit 69
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"
FAILS: list[str] = []


def check(cond: bool, what: str) -> None:
    if not cond:
        FAILS.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode not in (0,) and os.environ.get("VERBOSE"):
        print(r.stderr, file=sys.stderr)
    return r


def is_png(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 1000
    except OSError:
        return False


class Ctx:
    def __init__(self, exe: str, home: str, tmp: str) -> None:
        self.exe, self.home, self.tmp = exe, home, tmp

    def flashspec(self, *args: str) -> subprocess.CompletedProcess:
        return run([self.exe, *args], cwd=self.home)

    def script(self, *args: str) -> subprocess.CompletedProcess:
        return run([PY, *args], cwd=self.home)

    def script_here(self, path: str, *args: str) -> subprocess.CompletedProcess:
        """Runs an analysis/ tool's command line in this process, as
        `python3 PATH ARGS` would from the project root: its __main__ with
        sys.argv set, its own directory first on sys.path, standard output and
        error captured, the exit status from SystemExit.  For the error cases,
        where a fresh interpreter would spend nearly all its time importing
        matplotlib and pandas; an exception that escapes the tool fails the
        test, as a traceback would."""
        import runpy
        out, err = io.StringIO(), io.StringIO()
        argv, path0, cwd, rc = sys.argv, list(sys.path), os.getcwd(), 0
        sys.argv = [path, *args]
        sys.path.insert(0, os.path.dirname(path))
        os.chdir(self.home)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    runpy.run_path(path, run_name="__main__")
                except SystemExit as e:
                    if e.code is None or isinstance(e.code, int):
                        rc = e.code or 0
                    else:  # sys.exit("message"): printed, status 1
                        print(e.code, file=sys.stderr)
                        rc = 1
        finally:
            sys.argv, sys.path[:] = argv, path0
            os.chdir(cwd)
        return subprocess.CompletedProcess([PY, path, *args], rc, out.getvalue(), err.getvalue())

    def mini(self, name: str = "mini", *extra: str) -> str:
        out = os.path.join(self.tmp, name)
        r = self.flashspec("run", "tests/analysis/scripts/mini_study.lua", "-q", "-o", out,
                           *extra)
        check(r.returncode == 0, f"mini study ran (rc {r.returncode}: {r.stderr.strip()})")
        return out

    def study(self) -> str:
        out = os.path.join(self.tmp, "study")
        r = self.flashspec("run", "scripts/study_tables.lua", "-q", "-o", out)
        check(r.returncode == 0, f"study_tables.lua ran (rc {r.returncode}: {r.stderr.strip()})")
        return out

    def tool(self, name: str) -> str:
        return os.path.join(self.home, "analysis", name)


# ------------------------------------------------------------------- report

def table_rows(md: str, heading: str) -> list[str]:
    """Data rows of the first table after a '## heading' line."""
    lines = md.splitlines()
    try:
        i = lines.index(f"## {heading}")
    except ValueError:
        return []
    rows, seen = [], False
    for ln in lines[i + 1:]:
        if ln.startswith("## "):
            break
        if ln.startswith("|"):
            seen = True
            rows.append(ln)
        elif seen:
            break
    return rows[2:]


def case_report(c: Ctx) -> None:
    res = c.mini()
    r = c.script(c.tool("report.py"), res)
    check(r.returncode == 0, f"report.py ran: {r.stderr.strip()}")
    out = os.path.join(res, "report")
    md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
    for png in ("speedup.png", "throughput.png", "throughput_vs_dram.png",
                "latency_breakdown.png", "throughput_vs_tree.png", "pruning_tradeoff.png",
                "accepted_length.png"):
        check(is_png(os.path.join(out, png)), f"{png} is a PNG")
        check(f"]({png})" in md, f"report.md links {png}")
    check(len(table_rows(md, "Points")) == 12, "12 points listed")
    dram = table_rows(md, "Throughput vs DRAM budget")
    check(len(dram) == 12, f"12 rows of throughput vs DRAM (got {len(dram)})")
    check(any(ln.startswith("| flash_ar | 50 |") for ln in dram), "flash_ar at 50% DRAM")
    check(len(table_rows(md, "Latency breakdown per cycle")) == 12, "12 breakdown bars")
    # every policy with a tree size, in nodes with the root: Flash-AR 1, chain k=4 5,
    # eagle2 total_tokens 7 / 15 -> 8 / 16, lever n_max 64 -> 65; per DRAM budget
    tree = table_rows(md, "Throughput vs tree budget")
    budgets = sorted({(ln.split("|")[1].strip().split(" ")[0], ln.split("|")[2].strip())
                      for ln in tree})
    check(len(tree) == 12 and budgets == [("chain", "5"), ("eagle2", "16"), ("eagle2", "8"),
                                          ("flash_ar", "1"), ("lever", "65"),
                                          ("lever[pruning=none]", "65")],
          f"tree budgets, root included ({budgets})")
    prune = table_rows(md, "Pruning trade-off")
    check(len(prune) == 4 and all("lever" in ln for ln in prune), "lever pruning rows")
    # a panel per DRAM budget (the study's variable), not pooled over it
    acc = table_rows(md, "Accepted length")
    check(len(acc) == 10 and sum(ln.startswith("| DRAM 0% |") for ln in acc) == 5 and
          sum(ln.startswith("| DRAM 50% |") for ln in acc) == 5,
          f"5 drafting variants per DRAM budget in the accepted-length table (got {len(acc)})")
    with open(os.path.join(res, "results.csv"), newline="") as f:
        has_ci = "tokens_per_s_lo" in next(csv.reader(f))
    points_header = md.split("## Points")[1].splitlines()[2]
    check(("95% CI lo" in points_header) == has_ci, "CI columns shown exactly when present")

    # optional CI columns are shown when present
    ci = os.path.join(c.tmp, "mini_ci")
    os.makedirs(ci)
    with open(os.path.join(res, "results.csv"), newline="") as f:
        rows = list(csv.reader(f))
    k = rows[0].index("tokens_per_s")
    if "tokens_per_s_lo" not in rows[0]:
        rows[0] += ["tokens_per_s_lo", "tokens_per_s_hi"]
        for row in rows[1:]:
            row += [str(0.9 * float(row[k])), str(1.1 * float(row[k]))]
    with open(os.path.join(ci, "results.csv"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    r = c.script(c.tool("report.py"), ci, "-o", os.path.join(ci, "rep"))
    check(r.returncode == 0, "report.py with CI columns")
    md = open(os.path.join(ci, "rep", "report.md"), encoding="utf-8").read()
    check("| 95% CI lo | 95% CI hi |" in md, "CI columns in the tables")

    # the HDF5 copy alone is enough
    h5 = os.path.join(c.tmp, "mini_h5")
    os.makedirs(h5)
    shutil.copy(os.path.join(res, "results.h5"), h5)
    r = c.script(c.tool("report.py"), h5)
    check(r.returncode == 0 and os.path.exists(os.path.join(h5, "report", "report.md")),
          f"report.py from results.h5: {r.stderr.strip()}")


def case_report_skips(c: Ctx) -> None:
    """One Flash-AR point: every figure but the breakdown is skipped with a note."""
    script = os.path.join(c.tmp, "one.lua")
    with open(script, "w") as f:
        f.write('local fs = flashspec\nfs.run { device = fs.device "oneplus12", '
                'target = fs.model "qwen3-8b-q4_0", trace = fs.trace "' + c.home +
                '/traces/data/synth-small.h5", policy = fs.policy.flash_ar {}, '
                'max_new_tokens = 8 }\n')
    out = os.path.join(c.tmp, "one")
    r = c.flashspec("run", script, "-q", "-o", out)
    check(r.returncode == 0, f"one-point run: {r.stderr.strip()}")
    r = c.script(c.tool("report.py"), out)
    check(r.returncode == 0, f"report.py on one point: {r.stderr.strip()}")
    rep = os.path.join(out, "report")
    md = open(os.path.join(rep, "report.md"), encoding="utf-8").read()
    check(md.count("Skipped:") == 7, "seven figures skipped with a note")
    check(is_png(os.path.join(rep, "latency_breakdown.png")), "breakdown drawn")
    check(not os.path.exists(os.path.join(rep, "throughput_vs_dram.png")), "no DRAM figure")


def case_report_errors(c: Ctx) -> None:
    missing = os.path.join(c.tmp, "nope")
    r = c.script_here(c.tool("report.py"), missing)
    check(r.returncode == 66 and missing in r.stderr, "missing results dir: 66")
    check(not os.path.exists(missing), "nothing created for a missing dir")
    check(r.stderr.count("\n") == 1, "one line")
    bad = os.path.join(c.tmp, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "results.csv"), "w") as f:
        f.write("policy,target,tokens_per_s,dram_fraction\nflash_ar,x,1.5,0\nchain,x,abc,0\n")
    r = c.script_here(c.tool("report.py"), bad)
    check(r.returncode == 65 and "results.csv:3" in r.stderr and "tokens_per_s" in r.stderr,
          f"non-numeric cell: 65 naming file and line ({r.stderr.strip()})")
    check(not os.path.exists(os.path.join(bad, "report")), "no partial output")
    with open(os.path.join(bad, "results.csv"), "w") as f:
        f.write("policy,target\nflash_ar,x\n")
    r = c.script_here(c.tool("report.py"), bad)
    check(r.returncode == 65 and "tokens_per_s" in r.stderr, "missing column: 65")
    with open(os.path.join(bad, "results.csv"), "w") as f:
        f.write("policy,target,tokens_per_s\nflash_ar,x\n")
    r = c.script_here(c.tool("report.py"), bad)
    check(r.returncode == 65 and "results.csv:2" in r.stderr, "short row: 65")
    r = c.script_here(c.tool("report.py"))
    check(r.returncode == 64, "no argument: 64")
    res = c.mini()
    blocker = os.path.join(c.tmp, "file")
    open(blocker, "w").close()
    r = c.script_here(c.tool("report.py"), res, "-o", os.path.join(blocker, "sub"))
    check(r.returncode == 73, f"output under a file: 73 ({r.returncode})")


# ----------------------------------------------------------------- fidelity

def case_fidelity(c: Ctx) -> None:
    res = c.study()
    ref = os.path.join(c.home, "analysis", "reference", "lever_table1_2.csv")
    r = c.script(c.tool("fidelity.py"), res, ref, "--strict")
    check(r.returncode == 0, f"fidelity.py ran: {r.stderr.strip()}")
    out = os.path.join(res, "fidelity")
    md = open(os.path.join(out, "fidelity.md"), encoding="utf-8").read()
    check("Geometric-mean relative error" in md, "headline error")
    check(is_png(os.path.join(out, "fidelity.png")), "scatter plot")
    check(len(table_rows(md, "Per point")) == 24, "24 per-point rows")
    with open(os.path.join(out, "fidelity.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 24, "24 CSV rows")
    metrics = {r["metric"] for r in rows}
    check(metrics == {"npu_ms+cpu_ms", "flash_ms", "ms_per_token", "verify_ms-flash_ms",
                      "waste_ms", "waste_ms/(verify_ms-flash_ms)"}, f"metrics {metrics}")
    for row in rows:
        e = float(row["rel_error"])
        check(abs(e - (float(row["predicted"]) - float(row["measured"])) /
                  float(row["measured"])) < 1e-9, "relative error definition")
        check(row["points"] == "1", "one simulated point per reference row")
        if row["source"] == "Lever Table 1":
            check(abs(e) < 0.10, f"Table 1 {row['target']} {row['metric']} within 10% ({e})")
        if row["metric"] == "verify_ms-flash_ms":  # the calibrated reading of Table 2
            check(abs(e) < 0.10, f"Table 2 {row['target']} verify within 10% ({e})")


def case_fidelity_errors(c: Ctx) -> None:
    res = c.mini()
    out = os.path.join(c.tmp, "fid")

    def ref(text: str) -> str:
        p = os.path.join(c.tmp, "ref.csv")
        with open(p, "w") as f:
            f.write(text)
        return p

    good_head = "target,policy,dram_fraction,metric,value,source\n"
    cases = [
        (good_head.replace("policy", "polcy", 1) + "qwen3-8b-q4_0,flash_ar,0,ms_per_token,1,x\n",
         65, "ref.csv:1", "unknown key column 'polcy'"),
        (good_head + "qwen3-8b-q4_0,flash_ar,0,no_such_ms,1,x\n", 65, "ref.csv:2",
         "unknown metric"),
        (good_head + "qwen3-8b-q4_0,flash_ar,0,ms_per_token,fast,x\n", 65, "ref.csv:2",
         "not a number"),
        (good_head + "qwen3-8b-q4_0,flash_ar,0,ms_per_token,1\n", 65, "ref.csv:2", "fields"),
        (good_head + "qwen3-8b-q4_0,flash_ar,zero,ms_per_token,1,x\n", 65, "ref.csv:2",
         "dram_fraction"),
        (good_head + "llama3.1-8b-q4_0,flash_ar,0,ms_per_token,1,x\n", 65, "ref.csv",
         "no result row"),
        ("target,metric,value\nqwen3-8b-q4_0,ms_per_token,1\n", 65, "ref.csv:1",
         "missing column 'source'"),
        # metric expressions: malformed, an unknown column inside, a division by zero
        (good_head + "qwen3-8b-q4_0,flash_ar,0,(verify_ms-flash_ms,1,x\n", 65, "ref.csv:2",
         "missing ')'"),
        (good_head + "qwen3-8b-q4_0,flash_ar,0,verify_ms*,1,x\n", 65, "ref.csv:2",
         "unexpected end"),
        (good_head + "qwen3-8b-q4_0,flash_ar,0,verify_ms-no_such_ms,1,x\n", 65, "ref.csv:2",
         "unknown metric"),
        (good_head + "qwen3-8b-q4_0,flash_ar,0,verify_ms/draft_ms,1,x\n", 65, "ref.csv:2",
         "not a finite number"),
    ]
    for text, code, where, what in cases:
        r = c.script_here(c.tool("fidelity.py"), res, ref(text), "-o", out)
        check(r.returncode == code and where in r.stderr and what in r.stderr,
              f"fidelity {what}: want {code} naming {where} (rc {r.returncode}: "
              f"{r.stderr.strip()})")
        check(not os.path.exists(out), f"no output after '{what}'")
    # one row unmatched: listed, or an error under --strict
    text = (good_head + "qwen3-8b-q4_0,flash_ar,0,ms_per_token,1000,x\n"
            "llama3.1-8b-q4_0,flash_ar,0,ms_per_token,1000,x\n")
    r = c.script(c.tool("fidelity.py"), res, ref(text), "-o", out, "--strict")
    check(r.returncode == 65 and "ref.csv:3" in r.stderr, "--strict names the unmatched row")
    check(not os.path.exists(out), "no output under --strict")
    r = c.script(c.tool("fidelity.py"), res, ref(text), "-o", out)
    check(r.returncode == 0, "unmatched row tolerated without --strict")
    md = open(os.path.join(out, "fidelity.md"), encoding="utf-8").read()
    check("## Not simulated" in md and len(table_rows(md, "Per point")) == 1,
          "one compared, one listed as not simulated")
    # wildcard keys match several points: the prediction is their mean
    text = "policy,metric,value,source\nflash_ar,ms_per_token,800,x\n"
    r = c.script(c.tool("fidelity.py"), res, ref(text), "-o", out)
    with open(os.path.join(out, "fidelity.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    check(r.returncode == 0 and rows and rows[0]["points"] == "2", "two matching points")
    # an expression evaluates row-wise with precedence, parentheses and unary minus
    text = ("policy,metric,value,source\nflash_ar,ms_per_token,800,x\n"
            "flash_ar,(ms_per_token+npu_ms)*2/2-npu_ms-0,800,x\n"
            "flash_ar,-(-ms_per_token)+1-1*1,800,x\n")
    r = c.script(c.tool("fidelity.py"), res, ref(text), "-o", out)
    with open(os.path.join(out, "fidelity.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    check(r.returncode == 0 and len(rows) == 3, f"expression rows: {r.stderr.strip()}")
    pred = [float(x["predicted"]) for x in rows]
    check(abs(pred[1] - pred[0]) < 1e-6 * pred[0] and abs(pred[2] - pred[0]) < 1e-9 * pred[0],
          f"expressions evaluate like the column they equal: {pred}")
    # rows sourced from Lever Table 5 get their own draft x policy table, one
    # column per benchmark (the note)
    text = ("policy,metric,value,source,note\nflash_ar,tokens_per_s,1.2,Lever Table 5,MBPP\n"
            "flash_ar,tokens_per_s,1.1,Lever Table 5,GSM8K\n")
    r = c.script(c.tool("fidelity.py"), res, ref(text), "-o", out)
    md = open(os.path.join(out, "fidelity.md"), encoding="utf-8").read()
    check(r.returncode == 0 and "## Table 5" in md and "| MBPP | GSM8K |" in md,
          "the Table 5 layout")
    r = c.script(c.tool("fidelity.py"), res, os.path.join(c.tmp, "none.csv"))
    check(r.returncode == 66, "missing reference: 66")
    r = c.script(c.tool("fidelity.py"), os.path.join(c.tmp, "none"), ref(text))
    check(r.returncode == 66, "missing results: 66")


# ------------------------------------------------------- metric expressions

# A hand-made results table: three points whose columns have known values (the
# expressions' expected values below are computed from them with the same
# double operations, in the same order).
EXPR_COLS = ["policy", "policy_params", "target", "draft", "trace", "dram_fraction",
             "tokens_per_s", "ms_per_token", "npu_ms", "cpu_ms", "flash_ms", "verify_ms",
             "waste_ms", "draft_ms", "tokens", "cycles"]
EXPR_ROWS = [
    ["flash_ar", "", "qwen3-8b-q4_0", "none", "synth-small", "0", "0.95", "1052.5", "96.5", "3.5",
     "952.5", "1052.5", "0", "0", "16", "16"],
    ["chain", "k=4,unit=cpu", "qwen3-8b-q4_0", "qwen3-8b-eagle3-q4_0", "synth-small", "0",
     "1.5", "666.75", "210.25", "416.5", "953.25", "1580.125", "383.5", "33.75", "16", "7"],
    ["lever", "", "qwen3-8b-q4_0", "qwen3-8b-eagle3-q4_0", "synth-small", "0", "1.75",
     "571.5", "180.5", "250.75", "953.25", "1400.5", "60.25", "40.5", "24", "9"],
]


def write(path: str, text: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def results_dir(c: Ctx, name: str, cols: list[str], rows: list[list[str]]) -> str:
    d = os.path.join(c.tmp, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([cols] + rows)
    return d


def analysis_module(c: Ctx, name: str):
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(c.home, "analysis"))
    return __import__(name)


def fidelity_main(c: Ctx, *args: str) -> tuple[int, str]:
    """analysis/fidelity.py's main() in this process (no interpreter start-up
    per call): its exit code and what it printed on stderr."""
    fid = analysis_module(c, "fidelity")
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        try:
            rc = fid.main(list(args))
        except Exception as e:  # noqa: BLE001 -- a crash is a failure, not an exit code
            rc = -1
            print(f"crashed: {e!r}", file=buf)
    return rc, buf.getvalue()


def expr_cases():
    """(expression, expected value as a function of one point's columns);
    unary minus is 0 - x, as refcsv.c compiles it."""
    return [
        ("ms_per_token", lambda r: r["ms_per_token"]),
        ("npu_ms+cpu_ms", lambda r: r["npu_ms"] + r["cpu_ms"]),
        ("npu_ms+cpu_ms*2", lambda r: r["npu_ms"] + r["cpu_ms"] * 2),      # * before +
        ("(npu_ms+cpu_ms)*2", lambda r: (r["npu_ms"] + r["cpu_ms"]) * 2),
        ("verify_ms-flash_ms-npu_ms", lambda r: (r["verify_ms"] - r["flash_ms"]) - r["npu_ms"]),
        ("verify_ms-(flash_ms-npu_ms)", lambda r: r["verify_ms"] - (r["flash_ms"] - r["npu_ms"])),
        ("verify_ms/flash_ms/2", lambda r: (r["verify_ms"] / r["flash_ms"]) / 2),  # left assoc.
        ("verify_ms/(flash_ms/2)", lambda r: r["verify_ms"] / (r["flash_ms"] / 2)),
        ("npu_ms-cpu_ms/2+1", lambda r: (r["npu_ms"] - r["cpu_ms"] / 2) + 1),
        ("waste_ms/(verify_ms-flash_ms)",
         lambda r: r["waste_ms"] / (r["verify_ms"] - r["flash_ms"])),
        ("1000/ms_per_token", lambda r: 1000 / r["ms_per_token"]),
        ("-npu_ms", lambda r: 0.0 - r["npu_ms"]),
        ("--npu_ms", lambda r: 0.0 - (0.0 - r["npu_ms"])),
        ("-(npu_ms-cpu_ms)", lambda r: 0.0 - (r["npu_ms"] - r["cpu_ms"])),
        ("-npu_ms*2", lambda r: (0.0 - r["npu_ms"]) * 2),                # unary binds first
        ("2*-npu_ms", lambda r: 2 * (0.0 - r["npu_ms"])),
        ("npu_ms--cpu_ms", lambda r: r["npu_ms"] - (0.0 - r["cpu_ms"])),
        ("-(-(npu_ms))+1-1*1", lambda r: ((0.0 - (0.0 - r["npu_ms"])) + 1) - 1 * 1),
        (" ( npu_ms + cpu_ms ) / verify_ms ",
         lambda r: (r["npu_ms"] + r["cpu_ms"]) / r["verify_ms"]),
        ("tokens/cycles", lambda r: r["tokens"] / r["cycles"]),          # integer columns
        ("2.5e1*npu_ms", lambda r: 25.0 * r["npu_ms"]),
        ("1E-3*verify_ms", lambda r: 1e-3 * r["verify_ms"]),
        (".5*npu_ms", lambda r: 0.5 * r["npu_ms"]),
        ("1.*npu_ms", lambda r: 1.0 * r["npu_ms"]),
        ("0x10*npu_ms", lambda r: 16.0 * r["npu_ms"]),                   # strtod reads hex
        ("0x1.8p1+npu_ms", lambda r: 3.0 + r["npu_ms"]),
        ("6/4", lambda r: 1.5),                                           # numbers only
        ("(" * 16 + "npu_ms" + ")" * 16, lambda r: r["npu_ms"]),  # 16 levels: the most
    ]


def case_metric_expr(c: Ctx) -> None:
    """Expressions parse with precedence, left associativity, parentheses,
    unary minus and strtod numbers, and evaluate row by row."""
    res = results_dir(c, "expr", EXPR_COLS, EXPR_ROWS)
    fr = analysis_module(c, "fsresults")
    import numpy as np
    import pandas as pd
    df, _ = fr.load_results(res)
    df.index = [10, 20, 30]  # the Series keeps the frame's index
    points = [{k: float(v) for k, v in zip(EXPR_COLS, row) if k not in
               ("policy", "policy_params", "target", "draft", "trace")} for row in EXPR_ROWS]
    for expr, fn in expr_cases():
        try:
            got = fr.metric_values(df, expr)
        except Exception as e:  # noqa: BLE001
            check(False, f"metric_values({expr!r}) raised {e!r}")
            continue
        want = np.array([float(fn(p)) for p in points])
        check(isinstance(got, pd.Series) and list(got.index) == [10, 20, 30],
              f"{expr!r}: a Series over the frame's rows")
        check(np.array_equal(got.to_numpy(dtype=float), want),
              f"{expr!r} = {want.tolist()} (got {got.tolist()})")
    # a sub-frame (the rows a reference row matches) evaluates on its rows only
    sub = fr.metric_values(df[df["policy"] != "flash_ar"], "npu_ms/draft_ms")
    check(list(sub.index) == [20, 30] and bool(np.isfinite(sub).all()),
          "a sub-frame's rows only (flash_ar's draft_ms = 0 not involved)")
    # the derived columns are keys, not metric columns (as in the C reader)
    for name in ("tree_nodes", "tree_budget", "policy", "no_such_ms"):
        try:
            fr.metric_values(df, f"1+{name}")
            check(False, f"{name} is no metric column")
        except KeyError as e:
            check(e.args[0] == name, f"KeyError names {name}")

    # end to end: fidelity.csv's prediction is the expression's value (the mean
    # of the per-row values when a reference row matches several points)
    text = "# expressions\npolicy,metric,value,source\n"
    want = []
    for expr, fn in expr_cases():
        text += f"chain,{expr.strip()},1,x\n"
        want.append(float(fn(points[1])))
    text += "chain,-npu_ms,1,x\n,npu_ms/cpu_ms,1,x\n"
    want += [0.0 - points[1]["npu_ms"],
             sum(p["npu_ms"] / p["cpu_ms"] for p in points) / 3]
    out = os.path.join(c.tmp, "expr_out")
    r = c.script(c.tool("fidelity.py"), res, write(os.path.join(c.tmp, "ref.csv"), text),
                 "-o", out)
    check(r.returncode == 0, f"fidelity.py on expressions: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    with open(os.path.join(out, "fidelity.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == len(want), f"{len(want)} rows compared (got {len(rows)})")
    for row, w in zip(rows, want):
        got = float(row["predicted"])
        check(abs(got - w) <= 1e-12 * abs(w), f"{row['metric']}: predicted {got}, want {w}")
    check(rows[-1]["points"] == "3", "the wildcard row averages three points")
    md = open(os.path.join(out, "fidelity.md"), encoding="utf-8").read()
    check("## Table 5" not in md, "no Table 5 section without Lever Table 5 rows")


def case_metric_errors(c: Ctx) -> None:
    """Malformed expressions, unknown columns and values that are not finite
    for a matching row: exit 65, one line naming FILE:LINE and the problem,
    nothing written."""
    res = results_dir(c, "expr", EXPR_COLS, EXPR_ROWS)
    out = os.path.join(c.tmp, "out")
    head = "# reference\npolicy,metric,value,source\nchain,ms_per_token,600,x\n"  # line 3 is good
    deep = "(" * 17 + "npu_ms" + ")" * 17
    long = "+".join(["npu_ms"] * 33)  # 65 compiled steps; 32 terms (63) are fine
    cases = [
        ("(npu_ms", "metric '(npu_ms': missing ')' at character 8"),
        ("((npu_ms)+1", "missing ')'"),
        ("npu_ms)", "metric 'npu_ms)': unexpected character ')' at character 7"),
        ("npu_ms)*(cpu_ms", "unexpected character ')'"),
        ("npu_ms cpu_ms", "unexpected character 'c'"),
        ("npu_ms+", "unexpected end"),
        ("npu_ms*(", "unexpected end"),
        ("*npu_ms", "unexpected character '*'"),
        ("+npu_ms", "unexpected character '+'"),
        ("npu_ms**2", "unexpected character '*'"),
        ("npu_ms^2", "unexpected character '^'"),
        ("()", "unexpected character ')'"),
        ("1.2.3*npu_ms", "unexpected character '.'"),
        ("1e*npu_ms", "unexpected character 'e'"),
        ("1_000*npu_ms", "unexpected character '_'"),
        ("0x*npu_ms", "unexpected character 'x'"),
        (".", "bad number"),
        ("1e999*npu_ms", "bad number"),
        ("\u0663*npu_ms", "unexpected character"),  # a non-ASCII digit
        ("", "empty expression"),
        ("   ", "empty expression"),
        (deep, "expression nested too deeply"),
        (long, "expression too long"),
        ("npu_ms+no_such_ms", "unknown metric 'npu_ms+no_such_ms' (no numeric result column "
                              "'no_such_ms')"),
        ("tree_nodes", "unknown metric 'tree_nodes'"),
        ("policy*2", "no numeric result column 'policy'"),
        ("1/0+nope", "no numeric result column 'nope'"),  # parsing comes first
        ("npu_ms/(cpu_ms-cpu_ms)", "not a finite number"),
        ("0/0", "not a finite number"),
        ("1e308*10", "not a finite number"),
    ]
    ref = os.path.join(c.tmp, "ref.csv")
    for expr, what in cases:
        write(ref, head + f"chain,{expr},1,x\n")
        rc, err = fidelity_main(c, res, ref, "-o", out)
        check(rc == 65 and "ref.csv:4:" in err and what in err and err.count("\n") == 1,
              f"metric {expr!r}: 65 and one line naming ref.csv:4 and {what!r} (rc {rc}: "
              f"{err.strip()})")
        check(not os.path.exists(out), f"nothing written for {expr!r}")
    # the same as a command (a few of them: the exit status and stderr)
    for expr, what in [x for x in cases if x[0] in ("(npu_ms", "", "npu_ms+no_such_ms", "0/0")]:
        write(ref, head + f"chain,{expr},1,x\n")
        r = c.script(c.tool("fidelity.py"), res, ref, "-o", out)
        check(r.returncode == 65 and r.stderr.count("\n") == 1 and
              r.stderr.startswith(f"fidelity.py: {ref}:4: ") and what in r.stderr,
              f"fidelity.py, metric {expr!r}: exit 65, one line ({r.stderr.strip()})")
        check(not os.path.exists(out), f"fidelity.py wrote nothing for {expr!r}")
    # the point whose value is not finite is named
    write(ref, head + ",npu_ms/draft_ms,1,x\n")
    rc, err = fidelity_main(c, res, ref, "-o", out)
    check(rc == 65 and "variant=flash_ar" in err and err.count("\n") == 1,
          f"names the point with draft_ms = 0 ({err.strip()})")
    check(not os.path.exists(out), "nothing written (not finite)")
    # ... but only matching rows count: flash_ar's draft_ms = 0 is not chain's
    write(ref, head + "chain,npu_ms/draft_ms,1,x\n")
    rc, err = fidelity_main(c, res, ref, "-o", out)
    check(rc == 0, f"a non-finite value in a row no reference matches is fine ({err.strip()})")
    shutil.rmtree(out, ignore_errors=True)
    # the longest and deepest expressions the C reader takes are fine
    for expr in ("+".join(["npu_ms"] * 32), "(" * 16 + "npu_ms" + ")" * 16,
                 "-" * 15 + "npu_ms" + "+0"):
        write(ref, head + f"chain,{expr},1,x\n")
        rc, err = fidelity_main(c, res, ref, "-o", out)
        check(rc == 0, f"{expr[:20]}... at the limit ({err.strip()})")
        shutil.rmtree(out, ignore_errors=True)
    # comments (a quote in one opens nothing), indented header, blank lines and
    # a cell spanning two lines: the error names the true line
    write(ref, '# c\n  #,"an open quote\n\tpolicy,metric,value,source,note\n\n'
          'chain,ms_per_token,600,x,"two\nlines"\n"#x",npu_ms,1,x,\nchain,(npu_ms,1,x,\n')
    rc, err = fidelity_main(c, res, ref, "-o", out)
    check(rc == 65 and "ref.csv:8: metric '(npu_ms'" in err,
          f"line numbers past comments and a two-line cell ({err.strip()})")
    # value and numeric key cells are read as strtod reads them
    for value, code in (("0x1p9", 0), ("1_000", 65), ("\u0661", 65), ("inf", 65), ("-1", 65)):
        write(ref, "policy,dram_fraction,metric,value,source\nchain,0x0,ms_per_token,"
              f"{value},x\n")
        rc, err = fidelity_main(c, res, ref, "-o", out)
        check(rc == code and (code == 0 or "ref.csv:2" in err),
              f"value {value!r}: exit {code} (rc {rc}: {err.strip()})")
        shutil.rmtree(out, ignore_errors=True)


# The C reader, through flashspec calibrate: one parameter (the NPU's
# throughput) over two points.  --arg mode=run writes the points for a given
# npu_gflops; --arg mode=fit fits it to --arg ref and prints each reference row's
# prediction at the fitted value.
CAL_SPEC = """local fs = flashspec
local A = fs.args
local function points(p)
  return { device = fs.device("oneplus12", { npu_gflops = p.npu_gflops }),
           target = fs.model "qwen3-8b-q4_0", draft = fs.model "qwen3-8b-eagle3-q4_0",
           trace = fs.trace "HOME/traces/data/synth-small.h5", max_new_tokens = 8,
           points = { { policy = fs.policy.flash_ar {} }, { policy = fs.policy.chain { k = 4 } } } }
end
if A.mode == "run" then
  fs.sweep(points { npu_gflops = tonumber(A.gflops) })
  return
end
local fit = fs.calibrate { reference = A.ref, params = { npu_gflops = { 900, 100, 5000 } },
                           points = points, loo = "none" }
print(string.format("param %.17g", fit.params.npu_gflops.value))
for _, r in ipairs(fit.rows) do print(string.format("row %d %.17g", r.line, r.predicted)) end
"""


def case_metric_vs_c(c: Ctx) -> None:
    """Python and the C reader (flashspec calibrate) accept the same metric
    expressions, reject the same ones for the same reason, and compute the same
    values."""
    spec = write(os.path.join(c.tmp, "cal.lua"), CAL_SPEC.replace("HOME", c.home))
    fr = analysis_module(c, "fsresults")
    import numpy as np

    def run_points(gflops: str) -> str:
        d = os.path.join(c.tmp, f"pts{len(os.listdir(c.tmp))}")
        r = c.flashspec("run", spec, "-q", "-o", d, "--arg", "mode=run", "--arg",
                        f"gflops={gflops}")
        check(r.returncode == 0, f"points at {gflops}: {r.stderr.strip()}")
        os.remove(os.path.join(d, "results.csv"))  # read results.h5
        return d

    def calibrate(text: str) -> subprocess.CompletedProcess:
        ref = write(os.path.join(c.tmp, "cref.csv"), text)
        return c.flashspec("calibrate", spec, "-q", "--arg", "mode=fit", "--arg", f"ref={ref}")

    df, _ = fr.load_results(run_points("1000"))
    chain = df[df["policy"] == "chain"]
    num = "ms_per_token"
    exprs = [e for e, _ in expr_cases() if e.strip() == e] + [
        # valid
        "-ms_per_token", "ms_per_token*-1+0", "1e3/ms_per_token", "0x1p3*ms_per_token",
        "2.5E-1*ms_per_token", "tokens/cycles", "npu_ms/(npu_ms+cpu_ms+1)",
        "+".join([num] * 32), "(" * 16 + num + ")" * 16,
        # not finite for the point
        "1/0", "0/0", "1e308*10", "ms_per_token/(draft_ms-draft_ms)",
        # malformed
        "(ms_per_token", "ms_per_token)", "((ms_per_token)", "ms_per_token ms_per_token",
        "ms_per_token+", "*ms_per_token", "+ms_per_token", "ms_per_token**2", "ms_per_token^2",
        "1.2.3", ".", ".e1", "1e999", "0x", "1e*ms_per_token", "1_000*ms_per_token", "()",
        "-", "(-)", "1 2", "ms_per_token(2)", "2(ms_per_token)", "ms_per_token $",
        "\u0663*ms_per_token", "ms_per_t\u00f6ken", "(" * 17 + num + ")" * 17,
        "-" * 17 + num, "+".join([num] * 33), "-" * 16 + "+".join([num] * 31), "   ",
        # unknown columns
        "no_such_ms", "tree_nodes", "tree_budget", "policy", "trace_checksum",
        "ms_per_token+no_such", "1/0+no_such", "(no_such",
    ]

    def py_class(expr: str) -> str:
        try:
            v = fr.metric_values(chain, expr)
        except KeyError as e:
            return f"unknown {e.args[0]}"
        except fr.MetricSyntaxError as e:
            what = getattr(e, "what", str(e))  # refcsv.c's words; "empty": "unexpected end"
            if what.startswith("unexpected character"):
                what = "unexpected character"  # Python adds which one
            return "syntax " + ("unexpected end" if what == "empty expression" else what)
        return "ok" if np.isfinite(v.to_numpy()).all() else "not finite"

    def c_class(expr: str, r: subprocess.CompletedProcess) -> str:
        err = r.stderr.strip()
        m = re.search(r"cref\.csv:2: unknown metric '.*' \(no numeric result column '(\w*)'\)$",
                      err)
        if m:
            return f"unknown {m.group(1)}"
        m = re.search(r"cref\.csv:2: metric '.*': ([^:]*)$", err)
        if m:
            return "syntax " + m.group(1)
        if "is not a finite number" in err:
            return "not finite"
        if r.returncode == 0 or "did not converge" in err:
            return "ok"
        return f"other: rc {r.returncode} {err}"

    valid = []
    for expr in exprs:
        r = calibrate(f"policy,metric,value,source\nchain,{expr},1,x\n")
        want, got = py_class(expr), c_class(expr, r)
        check(want == got, f"{expr!r}: Python says {want}, C says {got}")
        if want == "ok" and float(fr.metric_values(chain, expr).iloc[0]) > 0:
            valid.append(expr)
    check(len(valid) >= 25, f"{len(valid)} valid positive expressions")

    # values: measurements made from Python's values at npu_gflops = 1000 are
    # fitted back by C from 900; then C's predictions at the fitted value equal
    # Python's on the points simulated at that value
    text = "policy,metric,value,source\n" + "".join(
        f"chain,{e},{float(fr.metric_values(chain, e).iloc[0])!r},x\n" for e in valid)
    r = calibrate(text)
    check(r.returncode == 0, f"the fit converges: {r.stderr.strip()}")
    m = re.search(r"^param (\S+)$", r.stdout, re.M)
    c_rows = [float(x) for x in re.findall(r"^row \d+ (\S+)$", r.stdout, re.M)]
    if not m or len(c_rows) != len(valid):
        check(False, f"calibrate printed the fit: {r.stdout[:200]}")
        return
    df, _ = fr.load_results(run_points(m.group(1)))
    chain = df[df["policy"] == "chain"]
    for expr, cv in zip(valid, c_rows):
        pv = float(fr.metric_values(chain, expr).iloc[0])
        # result files keep 10 significant digits; C works on the full doubles
        check(abs(pv - cv) <= 1e-8 * abs(cv), f"{expr!r}: Python {pv!r}, C {cv!r}")


# ---------------------------------------------------------------- Table 5

def case_fidelity_table5(c: Ctx) -> None:
    """Reference rows keyed by policy, draft and trace match the right result
    rows, and Lever Table 5 rows get their draft x policy x trace table."""
    cols = ["policy", "policy_params", "target", "draft", "trace", "dram_fraction",
            "tokens_per_s", "ms_per_token"]
    rows, tps = [], {}
    i = 0
    for target in ("qwen3-8b-q4_0", "llama3.1-8b-q4_0"):  # the second a decoy
        for strength, draft in (("strong", "qwen3-8b-eagle3-q4_0"), ("weak", "qwen3-0.6b-q4_0")):
            for bench in ("code", "math"):
                trace = f"workload-{bench}-{strength}"
                for pol in ("chain", "lever"):
                    for frac in ("0", "0.5"):  # 0.5: decoys too
                        i += 1
                        v = 1.0 + i / 64
                        rows.append([pol, "k=8" if pol == "chain" else "", target, draft, trace,
                                     frac, repr(v), repr(1000 / v)])
                        if target == "qwen3-8b-q4_0" and frac == "0":
                            tps[(draft, pol, trace)] = v
    res = results_dir(c, "t5", cols, rows)
    bench = {"code": "MBPP", "math": "GSM8K"}
    ref = "target,policy,draft,trace,dram_fraction,metric,value,source,note\n"
    keys = list(tps)
    for draft, pol, trace in keys:
        ref += (f"qwen3-8b-q4_0,{pol},{draft},{trace},0,tokens_per_s,1.25,Lever Table 5,"
                f"{bench[trace.split('-')[1]]}\n")
    ref += "qwen3-8b-q4_0,flash_ar,none,workload-code-strong,0,tokens_per_s,1,Lever Table 5,MBPP\n"
    ref += "qwen3-8b-q4_0,lever,,,0,1000/ms_per_token,2,Table 1,\n"  # not Table 5
    out = os.path.join(c.tmp, "t5_out")
    r = c.script(c.tool("fidelity.py"), res, write(os.path.join(c.tmp, "ref.csv"), ref), "-o",
                 out)
    check(r.returncode == 0, f"fidelity.py on Table 5 rows: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    with open(os.path.join(out, "fidelity.csv"), newline="") as f:
        got = list(csv.DictReader(f))
    check(len(got) == len(keys) + 1, f"{len(keys) + 1} rows compared")
    for row in got[:len(keys)]:
        want = tps[(row["draft"], row["policy"], row["trace"])]
        check(row["points"] == "1" and float(row["predicted"]) == want,
              f"{row['draft']} {row['policy']} {row['trace']}: the one matching point "
              f"({row['predicted']} vs {want}, {row['points']} points)")
    lever = [tps[k] for k in keys if k[1] == "lever"]
    check(got[-1]["points"] == str(len(lever)) and
          abs(float(got[-1]["predicted"]) - sum(1000 / (1000 / v) for v in lever) / len(lever))
          < 1e-12, "empty draft/trace keys match every lever point")
    md = open(os.path.join(out, "fidelity.md"), encoding="utf-8").read()
    t5 = table_rows(md, "Table 5")
    check("| draft | policy | MBPP | GSM8K |" in md, "columns: the benchmarks the notes name")
    check(len(t5) == 5, f"rows draft x policy: 2 drafts x 2 policies + flash_ar (got {len(t5)})")
    v = tps[("qwen3-0.6b-q4_0", "lever", "workload-math-weak")]
    cell = f"{fsnum(v)} / 1.250 ({100 * (v - 1.25) / 1.25:+.1f}%)"
    check(any(ln.startswith("| qwen3-0.6b-q4_0 | lever |") and ln.endswith(f"| {cell} |")
              for ln in t5), f"cell predicted / measured (error): {cell}")
    check(any(ln.startswith("| none | flash_ar | — / 1 (not simulated) | — |") for ln in t5),
          "an unmatched Table 5 row shows as not simulated")
    check("MBPP: workload-code-strong, workload-code-weak" in md, "each column's traces")
    check("source: Lever Table 5" in md and "source: Table 1" in md, "summary per source")

    # the model band: a measured value at either end is held, one a hair
    # outside is not, a band that is missing (NaN) or reversed counts nowhere,
    # and only tokens_per_s rows have one
    bcols = ["policy", "target", "trace", "tokens_per_s", "tokens_per_s_model_lo",
             "tokens_per_s_model_hi", "ms_per_token"]
    brows = [["lever", "t8", "t-lo", "2.0", "1.5", "2.5", "500"],
             ["lever", "t8", "t-hi", "2.0", "1.5", "2.5", "500"],
             ["lever", "t8", "t-out", "2.0", "1.5", "2.5", "500"],
             ["lever", "t8", "t-nan", "2.0", "nan", "2.5", "500"],
             ["lever", "t8", "t-rev", "2.0", "2.5", "1.5", "500"]]
    bres = results_dir(c, "band", bcols, brows)
    bref = ("policy,trace,metric,value,source\n"
            "lever,t-lo,tokens_per_s,1.5,X\nlever,t-hi,tokens_per_s,2.5,X\n"
            "lever,t-out,tokens_per_s,2.5000001,X\nlever,t-nan,tokens_per_s,2.0,X\n"
            "lever,t-rev,tokens_per_s,2.0,X\nlever,t-lo,ms_per_token,500,X\n")
    bout = os.path.join(c.tmp, "band_out")
    r = c.script(c.tool("fidelity.py"), bres, write(os.path.join(c.tmp, "bref.csv"), bref),
                 "-o", bout)
    check(r.returncode == 0, f"fidelity.py with a model band: {r.stderr.strip()}")
    if r.returncode == 0:
        with open(os.path.join(bout, "fidelity.csv"), newline="") as f:
            got = {(x["trace"], x["metric"]): x["in_band"] for x in csv.DictReader(f)}
        check(got == {("t-lo", "tokens_per_s"): "1", ("t-hi", "tokens_per_s"): "1",
                      ("t-out", "tokens_per_s"): "0", ("t-nan", "tokens_per_s"): "",
                      ("t-rev", "tokens_per_s"): "", ("t-lo", "ms_per_token"): ""},
              f"in_band per row: ends held, outside missed, no band blank ({got})")
        bmd = open(os.path.join(bout, "fidelity.md"), encoding="utf-8").read()
        check("**Model band: 2 of 3** released `tokens_per_s` points" in bmd,
              "the headline counts the rows with a band")

    # without notes the columns are the traces
    ref2 = "policy,draft,trace,metric,value,source\n" + "".join(
        f"{pol},{draft},{trace},tokens_per_s,1.25,Lever Table 5 (Qwen3-8B)\n"
        for draft, pol, trace in keys)
    r = c.script(c.tool("fidelity.py"), res, write(os.path.join(c.tmp, "ref2.csv"), ref2), "-o",
                 out)
    check(r.returncode == 0, f"Table 5 without notes: {r.stderr.strip()}")
    md = open(os.path.join(out, "fidelity.md"), encoding="utf-8").read()
    check("| draft | policy | workload-code-strong | workload-math-strong | workload-code-weak "
          "| workload-math-weak |" in md, "one column per trace")
    check(len(table_rows(md, "Table 5")) == 4, "four draft x policy rows")

    # the simulator's own Table 5 points (scripts/study_tables.lua) against the
    # calibration reference: every Table 5 row matches exactly its point
    st = c.study()
    cal = os.path.join(c.home, "configs", "calibration", "lever-oneplus12.csv")
    r = c.script(c.tool("fidelity.py"), st, cal, "-o", out)
    check(r.returncode == 0, f"fidelity.py on study_tables: {r.stderr.strip()}")
    with open(os.path.join(st, "results.csv"), newline="") as f:
        sim = list(csv.DictReader(f))
    with open(os.path.join(out, "fidelity.csv"), newline="") as f:
        got = [x for x in csv.DictReader(f) if x["source"].startswith("Lever Table 5")]
    check(len(got) == 18, f"18 Table 5 rows compared (got {len(got)})")
    for row in got:
        m = [s for s in sim if (s["policy"], s["draft"], s["trace"], s["target"]) ==
             (row["policy"], row["draft"], row["trace"], row["target"])
             and float(s["dram_fraction"]) == 0.0]
        check(row["points"] == "1" and len(m) == 1 and
              abs(float(row["predicted"]) - float(m[0]["tokens_per_s"])) <= 1e-9 *
              float(m[0]["tokens_per_s"]),
              f"Table 5 {row['draft']} {row['policy']} {row['trace']}: its point")
    md = open(os.path.join(out, "fidelity.md"), encoding="utf-8").read()
    check("| draft | policy | MBPP | GSM8K | MT-Bench |" in md and
          len(table_rows(md, "Table 5")) == 6, "Lever's Table 5: 2 drafts x 3 policies")


def fsnum(v: float) -> str:
    """analysis/fsresults.fmt_num for a number in [1, 100)."""
    return str(int(v)) if v == int(v) else f"{v:.3f}"


# ----------------------------------------------------------------- timeline

def validate_trace(path: str) -> dict:
    """The trace-event format as flashspec promises it; returns the document."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "traceEvents")
    ev = doc["traceEvents"]
    names = {}
    proc = False
    by_track: dict[tuple, list[tuple[float, float]]] = {}
    n_c = 0
    for e in ev:
        ph = e.get("ph")
        check(ph in ("X", "C", "M"), f"known phase {ph}")
        if ph == "M":
            if e.get("name") == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            proc = proc or e.get("name") == "process_name"
        elif ph == "X":
            ok = all(isinstance(e.get(k), (int, float)) for k in ("ts", "dur"))
            check(ok and e["dur"] >= 0 and e["ts"] >= 0, "X has numeric ts/dur (µs)")
            check(isinstance(e.get("name"), str) and "pid" in e and "tid" in e, "X named")
            by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        elif ph == "C":
            n_c += 1
            check(isinstance(e.get("ts"), (int, float)) and isinstance(e.get("args"), dict)
                  and all(isinstance(v, (int, float)) for v in e["args"].values()),
                  "counter with numeric series")
    check(proc, "process_name metadata")
    check(n_c > 0, "counters present")
    for track, spans in by_track.items():
        check(track in names, f"track {track} named by metadata")
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack: list[float] = []
        bad = 0
        eps = 1e-6
        for t0, t1 in spans:
            while stack and stack[-1] <= t0 + eps:
                stack.pop()
            if stack and t1 > stack[-1] + eps:
                bad += 1
            stack.append(t1)
        check(bad == 0, f"track {names.get(track)}: {bad} partial overlaps")
    return doc


def case_timeline(c: Ctx) -> None:
    tl1 = os.path.join(c.tmp, "tl1.json")
    tl2 = os.path.join(c.tmp, "tl2.json")
    # point 8 of the mini study: lever without pruning at 0% DRAM (CPU and NPU drafting)
    r = c.flashspec("run", "tests/analysis/scripts/mini_study.lua", "-q", "-o",
                    os.path.join(c.tmp, "a"), "--timeline", tl1, "--timeline-point", "8",
                    "--timeline-prompt", "1")
    check(r.returncode == 0, f"run --timeline: {r.stderr.strip()}")
    r = c.flashspec("sweep", "tests/analysis/scripts/mini_study.lua", "-q", "-j", "2", "-o",
                    os.path.join(c.tmp, "b"), "--timeline", tl2, "--timeline-point", "8",
                    "--timeline-prompt", "1")
    check(r.returncode == 0, f"sweep -j 2 --timeline: {r.stderr.strip()}")
    same = open(tl1, "rb").read() == open(tl2, "rb").read()
    check(same, "byte-identical timelines at -j 1 and -j 2")
    # resumed points: the timeline point is replayed again, same bytes
    tl3 = os.path.join(c.tmp, "tl3.json")
    r = c.flashspec("run", "tests/analysis/scripts/mini_study.lua", "-q", "-o",
                    os.path.join(c.tmp, "a"), "--timeline", tl3, "--timeline-point", "8",
                    "--timeline-prompt", "1")
    check(r.returncode == 0 and open(tl1, "rb").read() == open(tl3, "rb").read(),
          "same timeline from resumed points")
    doc = validate_trace(tl1)
    other = doc.get("otherData", {})
    check(other.get("point") == "8" and other.get("prompt") == "1" and
          other.get("policy") == "lever", f"otherData names the point: {other}")
    tracks = {e["args"]["name"] for e in doc["traceEvents"]
              if e["ph"] == "M" and e.get("name") == "thread_name"}
    check({"cycles", "NPU", "flash"} <= tracks, f"resource tracks {tracks}")
    cycles = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["tid"] == 1
              and e["name"].startswith("cycle ")]
    check(len(cycles) > 0 and all(e["args"]["prompt"] == 1 for e in cycles),
          "cycles of prompt 1")
    check(sum(e["args"]["emitted"] for e in cycles) == 32, "the prompt's 32 tokens")
    layers = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"].startswith("layer")]
    check(len(layers) >= 36 * len(cycles), "every target layer of every cycle")
    png = os.path.join(c.tmp, "tl1.png")
    r = c.script(c.tool("timeline.py"), tl1, "-o", png)
    check(r.returncode == 0 and is_png(png), f"timeline.py PNG: {r.stderr.strip()}")
    r = c.script(c.tool("timeline.py"), tl1, "--cycles", "0:2")
    check(r.returncode == 0 and is_png(os.path.join(c.tmp, "tl1.png")), "default PNG name")

    # errors: exit codes, and no file
    bad = os.path.join(c.tmp, "bad.json")
    for args, code in ((["--timeline-point", "99"], 64), (["--timeline-prompt", "7"], 64),
                       (["--timeline-point", "-1"], 64)):
        r = c.flashspec("run", "tests/analysis/scripts/mini_study.lua", "-q", "-o",
                        os.path.join(c.tmp, "e"), "--timeline", bad, *args)
        errs = [l for l in r.stderr.splitlines() if not l.startswith("flashspec: warning:")]
        check(r.returncode == code and len(errs) == 1,
              f"{args}: exit {code} (got {r.returncode}: {r.stderr.strip()})")
        check(not os.path.exists(bad), f"{args}: no timeline file")
    r = c.flashspec("run", "tests/analysis/scripts/mini_study.lua", "-q", "-o",
                    os.path.join(c.tmp, "e"), "--timeline-point", "1")
    check(r.returncode == 64, "--timeline-point without --timeline: 64")
    r = c.flashspec("run", "tests/analysis/scripts/mini_study.lua", "-q", "-o",
                    os.path.join(c.tmp, "e"), "--timeline", os.path.join(c.tmp, "no", "dir",
                                                                        "t.json"))
    check(r.returncode == 73, "unwritable timeline: 73")
    h = c.flashspec("run", "--help").stdout
    check(all(o in h for o in ("--timeline FILE.json", "--timeline-point N",
                               "--timeline-prompt P")), "--help documents the options")
    with open(bad, "w") as f:
        f.write("{not json")
    r = c.script(c.tool("timeline.py"), bad)
    check(r.returncode == 65 and "bad.json" in r.stderr, "timeline.py on bad JSON: 65")
    r = c.script(c.tool("timeline.py"), os.path.join(c.tmp, "none.json"))
    check(r.returncode == 66, "timeline.py on a missing file: 66")

# ------------------------------------------------------------------ figures

ALL_FIGURES = {"speedup.png", "throughput.png", "throughput_vs_dram.png",
               "throughput_vs_length.png", "latency_breakdown.png", "throughput_vs_tree.png",
               "pruning_tradeoff.png", "accepted_length.png"}


def widened(src: str, dst: str) -> str:
    """The mini study's rows repeated for 3 targets x 3 workloads x 2 output
    lengths (throughput scaled): more series than one legend holds and more
    points than the latency breakdown draws one by one."""
    with open(os.path.join(src, "results.csv"), newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    ix = {c: head.index(c) for c in ("target", "trace", "max_new_tokens", "tokens_per_s")}
    out = []
    for t, target in enumerate(["t-4b", "t-8b", "t-14b"]):
        for w, trace in enumerate(["workload-code", "workload-math", "workload-dialogue"]):
            for n in ("32", "64"):
                for r in body:
                    r = list(r)
                    r[ix["target"]], r[ix["trace"]], r[ix["max_new_tokens"]] = target, trace, n
                    r[ix["tokens_per_s"]] = repr(float(r[ix["tokens_per_s"]]) *
                                                 (1 + 0.1 * t + 0.05 * w + 0.01 * int(n)))
                    out.append(r)
    return results_dir_rows(dst, head, out)


def results_dir_rows(d: str, head: list[str], rows: list[list[str]]) -> str:
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([head] + rows)
    return d


def series_clashes(fig) -> list[str]:
    """Labelled lines of one panel that share colour, marker and line style."""
    out = []
    for k, ax in enumerate(fig.axes):
        seen: dict[tuple, str] = {}
        for ln in ax.get_lines():
            lab = ln.get_label()
            if lab.startswith("_"):
                continue
            key = (str(ln.get_color()), str(ln.get_marker()), str(ln.get_linestyle()))
            if key in seen and seen[key] != lab:
                out.append(f"panel {k}: '{lab}' looks like '{seen[key]}'")
            seen[key] = lab
    return out


def legend_texts(fig) -> list[str]:
    """The entries of every legend of a figure (the figure's and its panels')."""
    legends = list(fig.legends) + [a.get_legend() for a in fig.axes if a.get_legend()]
    return [t.get_text() for lg in legends for t in lg.get_texts()]


def plain_figure(plt, label: str = "a", title: str = "t", size=(6.0, 4.0)):
    """A figure the checker passes: title, labelled axes, a legend."""
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    ax.plot([0, 1], [0, 1], label=label)
    ax.set_title(title)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend()
    return fig, ax


def negative_checks(fs) -> None:
    """figure_problems flags each way a figure misleads: a hash as a label
    (legend entry, tick label, figure title, panel title), a panel under the
    least height, a series of the data neither in the legend nor reported as
    not drawn (and one reported but named in no note), a legend too long to
    read, and a tree-size axis that disagrees with verify_rows_max."""
    import matplotlib.pyplot as plt

    def flags(fig, words: str) -> bool:
        return any(words in p for p in fs.figure_problems(fig, "neg"))

    fig, ax = plain_figure(plt)
    check(fs.figure_problems(fig, "neg") == [], f"plain figure passes "
          f"({fs.figure_problems(fig, 'neg')})")
    plt.close(fig)
    # a hash instead of a name, wherever the label is
    for where in ("legend", "tick", "title", "panel title"):
        fig, ax = plain_figure(plt, label="synth-955c5697" if where == "legend" else "a")
        if where == "tick":
            ax.set_xticks([0, 1])
            ax.set_xticklabels(["code", "0x9c7399350640ee40"])
        elif where == "title":
            fig.suptitle("Throughput on synth-1654e936")
        elif where == "panel title":
            ax.set_title("trace 955c5697")
        check(flags(fig, "is a hash, not a name"), f"a hash as {where} is caught "
              f"({fs.figure_problems(fig, 'neg')})")
        plt.close(fig)
    fig, ax = plain_figure(plt, label="lever[theta=5.674926809991031e-06]")
    check(not flags(fig, "is a hash"), "a number in scientific notation is no hash")
    plt.close(fig)
    # a thin strip of a panel
    fig, axes = plt.subplots(4, 1, figsize=(6, 4), layout="constrained")
    for a in axes:
        a.plot([0, 1], [0, 1], label="a")
        a.set_xlabel("x")
        a.set_ylabel("y")
    fig.suptitle("t")
    fig.legend()
    check(flags(fig, f"less than {fs.MIN_PANEL_IN:g} in"), "a panel under the least height "
          f"is caught ({fs.figure_problems(fig, 'neg')})")
    plt.close(fig)
    # series of the data against the legend
    fig, ax = plain_figure(plt)
    fs.declare(fig, ["a", "weak draft"])
    check(flags(fig, "series 'weak draft' is in the data but neither in the legend"),
          "a series missing from the legend is caught")
    fs.declare(fig, ["a", "weak draft"], {"weak draft": "no Flash-AR point"})
    check(not flags(fig, "weak draft"), "a series reported as not drawn passes "
          f"({fs.figure_problems(fig, 'neg')})")
    fig.fs_dropped = {"edgellm": "no tree budget"}  # dropped, but no note says so
    check(flags(fig, "series 'edgellm' is not drawn and no note"),
          "a dropped series without a note is caught")
    plt.close(fig)
    fig, ax = plain_figure(plt)
    for k in range(fs.MAX_LEGEND + 1):
        ax.plot([0, 1], [k, k], label=f"s{k}")
    ax.legend()
    check(flags(fig, "a legend of"), "a legend of too many entries is caught")
    plt.close(fig)
    # the tree axis: lever n_max = 15 is a 16-node cap (it verified 16 rows)
    for xs, caps, rows, nodes, bad in (
            ([16, 32], [16, 32], [16, 16], [True, True], None),
            ([15, 31], [15, 31], [16, 16], [True, True], "verified up to 16 rows"),
            ([15, 32], [16, 32], [16, 16], [True, True], "bound its cap of 16"),
            ([16, 32], [16, 32], [19, 19], [False, False], None),   # EdgeLLM's branches
            ([16], [16], [16], [True], "has no point at x = 32")):
        fig, ax = plain_figure(plt)
        ax.errorbar(xs, [1.0] * len(xs), label="lever", color=fs.policy_colour("lever"))
        ax.legend()
        fs.register_tree_points(ax, "lever", [16, 32] if bad and "x = 32" in bad else xs,
                                caps if not (bad and "x = 32" in bad) else [16, 32],
                                rows if not (bad and "x = 32" in bad) else [16, 16],
                                nodes if not (bad and "x = 32" in bad) else [True, True])
        probs = fs.figure_problems(fig, "neg")
        if bad is None:
            check(probs == [], f"tree axis at {xs} with rows {rows} passes ({probs})")
        else:
            check(any(bad in p for p in probs), f"tree axis at {xs}, caps {caps}, rows {rows}: "
                  f"'{bad}' caught ({probs})")
        plt.close(fig)


def case_figures(c: Ctx) -> None:
    """Every figure of report.py, fidelity.py and timeline.py, built in this
    process from small results, passes figstyle.figure_problems (title,
    labelled axes, a legend of at most MAX_LEGEND entries, no hash as a label,
    no panel under MIN_PANEL_IN, every series of its data in the legend or
    reported as not drawn, a tree axis that agrees with verify_rows_max; the
    matplotlib Figure objects are inspected, laid out but not made into PNG
    bytes, which the report tests check), and no two series of a panel
    look alike; the checker itself flags each of these (negative_checks)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    report = analysis_module(c, "report")
    fs = analysis_module(c, "figstyle")
    fr = analysis_module(c, "fsresults")
    timeline = analysis_module(c, "timeline")
    fidelity = analysis_module(c, "fidelity")

    res = c.mini()
    wide = widened(res, os.path.join(c.tmp, "wide"))
    made: set[str] = set()
    for d in (res, wide):
        with fr.capture_figures(render=False) as caught:
            _, figs = report.build(d)
            check(len(caught) == len(figs), f"{d}: one Figure per PNG ({len(caught)})")
            by = dict(zip(figs, caught))
            for name, fig in by.items():
                made.add(name)
                for p in fs.figure_problems(fig, f"{os.path.basename(d)}/{name}"):
                    check(False, p)
                for p in series_clashes(fig):
                    check(False, f"{os.path.basename(d)}/{name}: {p}")
                # the series check has the data's series to compare the legend with
                check(bool(getattr(fig, "fs_series", None)),
                      f"{os.path.basename(d)}/{name} declares the series of its data")
            if d != wide:
                continue
            # the wide results: many series go to panels, not to a dropped legend;
            # the speed-up against the DRAM budget, a row of panels per target, each
            # row with its own y range
            sp = by.get("speedup.png")
            check(sp is not None, "speed-up drawn")
            if sp is not None:
                labels = legend_texts(sp)
                check("Flash-AR (1×)" in labels and
                      all(any(lab.split(" · ")[0] == pol for lab in labels)
                          for pol in ("chain[k=4]", "eagle2[total_tokens=7]",
                                      "lever[pruning=none]")),
                      f"speed-up legends name the policies and the baseline ({labels})")
                check(max(len(lg.get_texts()) for lg in [a.get_legend() for a in sp.axes
                                                         if a.get_legend()] + sp.legends)
                      <= fs.MAX_LEGEND, "speed-up: no legend longer than figstyle.MAX_LEGEND")
                rows: dict[str, list] = {}
                for a in sp.axes:
                    if a.get_visible() and a.get_title():
                        rows.setdefault(a.get_title().split(" · ")[0], []).append(a)
                check(set(rows) == {"t-4b", "t-8b", "t-14b"}, f"a row per target ({set(rows)})")
                if set(rows) == {"t-4b", "t-8b", "t-14b"}:
                    share = sp.axes[0].get_shared_y_axes()
                    check(all(share.joined(r[0], a) for r in rows.values() for a in r) and
                          not share.joined(rows["t-4b"][0], rows["t-14b"][0]),
                          "the panels of a target share a y range, other targets' do not")
                check(all(a.xaxis.get_label_text() == "" for a in sp.axes) and
                      "DRAM" in sp._supxlabel.get_text(), "speed-up against the DRAM budget")
            lb = by.get("latency_breakdown.png")
            if lb is not None:
                labels = [t.get_text() for lg in lb.legends for t in lg.get_texts()]
                check(any(lab.startswith("overlap") for lab in labels) and
                      "wall time" in labels,
                      f"breakdown legend: overlap and wall time {labels}")
                # more points than one column of bars holds: a panel per target and
                # phone, every point a bar of its own (none averaged), per token
                titles = [a.get_title() for a in lb.axes if a.get_visible()]
                check(len(titles) > 1 and
                      all(t.endswith("per generated token") for t in titles) and
                      len({t.split(" · ")[0] for t in titles}) == 3 and
                      "per cycle in the table" in lb._suptitle.get_text(),
                      f"breakdown of many points: per target and per token ({titles[:2]})")
    check(made == ALL_FIGURES, f"every report figure built (missing {ALL_FIGURES - made})")

    # fidelity.py and timeline.py
    ref = write(os.path.join(c.tmp, "ref.csv"),
                "policy,dram_fraction,metric,value,source\n"
                "flash_ar,0,tokens_per_s,1.0,a test\nchain,0,ms_per_token,500,a test\n")
    with fr.capture_figures(render=False) as caught:
        files, _ = fidelity.build(res, ref, False)
        check(len(caught) == 1, f"fidelity: one figure ({len(caught)})")
        for fig in caught:
            for p in fs.figure_problems(fig, "fidelity.png"):
                check(False, p)
            # a dot per reference row at (simulated - published) / published in %,
            # the +-10% band shaded
            errs = sorted(100 * float(r["rel_error"]) for r in
                          csv.DictReader(io.StringIO(files["fidelity.csv"].decode())))
            dots = sorted(float(x) for col in fig.axes[0].collections
                          for x, _ in col.get_offsets())
            check(len(dots) == len(errs) and all(abs(a - b) < 1e-9 for a, b in zip(dots, errs)),
                  f"fidelity: a dot per row at its relative error ({dots} vs {errs})")
            band = [p.get_xy() for p in fig.axes[0].patches]
            check(any(abs(min(x for x, _ in xy) + 10) < 1e-9 and
                      abs(max(x for x, _ in xy) - 10) < 1e-9 for xy in band),
                  "fidelity: the +-10% band shaded")
    tl = os.path.join(c.tmp, "tl.json")
    r = c.flashspec("run", "tests/analysis/scripts/mini_study.lua", "-q", "-o",
                    os.path.join(c.tmp, "tlrun"), "--timeline", tl, "--timeline-point", "8")
    check(r.returncode == 0, f"timeline run: {r.stderr.strip()}")
    with fr.capture_figures(render=False) as caught:
        timeline.render(timeline.load(tl), None)
        timeline.render(timeline.load(tl), (0, 2))
        for fig in caught:
            for p in fs.figure_problems(fig, "timeline.png"):
                check(False, p)
            w, _ = fig.get_size_inches()
            check(w <= 12, f"timeline.png at most 12 in wide ({w})")
            check(bool(fig.legends) and not any(a.get_legend() for a in fig.axes),
                  "timeline legend outside the lanes")

    negative_checks(fs)

    # negative checks: the checker catches what a figure lacks
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a")
    ax.set_title("t")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend()
    check(fs.figure_problems(fig) == [], "complete figure passes")
    ax.set_title("")
    probs = fs.figure_problems(fig, "untitled")
    check(probs == ["untitled: no title"], f"a figure without a title is caught ({probs})")
    ax.set_title("t")
    ax.set_xlabel("")
    ax.get_legend().remove()
    probs = fs.figure_problems(fig, "bare")
    check("bare: panel 0 has no x-axis label" in probs and "bare: no legend" in probs,
          f"missing x label and legend caught ({probs})")
    plt.close(fig)
    fig, axes = plt.subplots(1, 2)
    for a in axes:
        a.plot([0, 1], [0, 1], label="a")
        a.set_title("panel")
    fig.legend()
    fig.supylabel("y")
    probs = fs.figure_problems(fig, "panels")
    check("panels: no title" in probs, "panel titles alone are no figure title")
    check("panels: panel 1 has no x-axis label" in probs, "each panel needs an x label")
    plt.close(fig)
    check(len({(s["color"], s["marker"]) for s in (fs.style(k) for k in range(42))}) == 42,
          "42 series styles differ in colour or marker")


# ------------------------------------------------------------- report rules

SYNTH_HEAD = ["policy", "policy_params", "device", "target", "draft", "trace",
              "dram_fraction", "max_new_tokens", "prompts", "tokens_per_s", "tokens_per_cycle",
              "mean_accepted", "cycle_ms", "draft_ms", "flash_ms", "npu_ms", "cpu_ms", "kv_ms",
              "idle_ms", "verify_rows", "verify_rows_max", "rows_kept", "retention",
              "accepted_hist"]


def synth_row(policy: str, params: str, tps: float, trace: str = "workload-code-strong",
              dram: float = 0.0, rows_max: int = 1, draft: str = "d-strong", tpc: float = 2.0,
              rows_kept: float = 1.0, **extra) -> dict:
    """One result row with plausible values; `extra` adds or replaces columns."""
    r = {"policy": policy, "policy_params": params, "device": "phone", "target": "t-8b",
         "draft": "none" if policy == "flash_ar" else draft, "trace": trace,
         "dram_fraction": repr(dram), "max_new_tokens": "64", "prompts": "4",
         "tokens_per_s": repr(tps), "tokens_per_cycle": repr(1.0 if policy == "flash_ar" else tpc),
         "mean_accepted": repr(0.0 if policy == "flash_ar" else tpc - 1),
         "cycle_ms": "1000.0", "draft_ms": "50.0", "flash_ms": "700.0", "npu_ms": "200.0",
         "cpu_ms": "80.0", "kv_ms": "30.0", "idle_ms": "10.0", "verify_rows": repr(rows_max * 0.9),
         "verify_rows_max": str(rows_max), "rows_kept": repr(rows_kept),
         "retention": repr(1.0 - (1.0 - rows_kept) / 10), "accepted_hist": "10;20;10"}
    r.update({k: str(v) for k, v in extra.items()})
    return r


def synth_dir(c: Ctx, name: str, rows: list[dict]) -> str:
    head = list(SYNTH_HEAD) + [k for r in rows for k in r if k not in SYNTH_HEAD]
    head = list(dict.fromkeys(head))
    return results_dir(c, name, head, [[r.get(k, "") for k in head] for r in rows])


def line_x(fig, label: str) -> list[list[float]]:
    """The x data of every line (or errorbar) labelled `label`, per panel."""
    out = []
    for a in fig.axes:
        for cont in a.containers:
            if hasattr(cont, "lines") and cont.get_label() == label:
                out.append([float(v) for v in cont.lines[0].get_xdata()])
    return out


def case_report_rules(c: Ctx) -> None:
    """report.py's figures never mislead: one tree size (nodes with the root,
    flashspec's caps: lever n_max + 1, edgellm max_tokens + 1, ...) on the
    tree axis and its ticks; no series or point left out without a note in
    the figure and in report.md (a drafting point on a trace Flash-AR did not
    run on borrows the baseline Flash-AR gives on every other trace, or is
    reported as not drawn); traces named by a hash get a name; pruning drawn
    only where it alone varies; accepted length a panel per DRAM budget; the
    latency breakdown per cycle and per generated token.  Synthesised results,
    built in this process (laid out, not made into PNG bytes)."""
    import matplotlib
    matplotlib.use("Agg")
    report = analysis_module(c, "report")
    fs = analysis_module(c, "figstyle")
    fr = analysis_module(c, "fsresults")

    # the tree size of every policy, root included, from policy_params or param_ columns
    for pol, params, want in [
            ("flash_ar", "none", 1), ("chain", "k=8,unit=cpu", 9),
            ("eagle2", "top_k=8,depth=8,total_tokens=15,unit=npu", 16),
            ("specinfer", "widths=1/1/3/1/1/1/1/1,unit=cpu", 21),
            ("specinfer", "widths=1,1,3", 6), ("lever", "drafting=gain_cost,n_max=15,d_max=10", 16),
            ("lyanna", "b=16,k=4", 17), ("sequoia", "max_nodes=16,max_depth=8", 16),
            ("opt_tree", "nodes=15", 16), ("adaptive_chain", "k_min=1,k_max=8", 9),
            ("bld", "fallback=0.6,max_len=10,unit=cpu", 11),
            ("edgellm", "navigation=true,fallback=true,max_tokens=15,verify=branches", 16)]:
        got = fr.tree_budget_of(pol, params)
        check(got == want, f"tree budget of {pol} {params}: {got}, want {want}")
    check(str(fr.tree_budget_of("edgellm", "fallback=false,max_tokens=15")) == "nan",
          "edgellm without fallback has no node cap")
    check(not fr.tree_rows_are_nodes("edgellm", "verify=branches") and
          fr.tree_rows_are_nodes("edgellm", "verify=tree") and
          fr.tree_rows_are_nodes("lever", "n_max=15"), "branch verification repeats prefixes")
    import pandas as pd
    pdf = fr.add_derived(pd.DataFrame({"policy": ["lever", "chain", "lever"],
                                       "target": ["t"] * 3, "tokens_per_s": [1.0, 1.0, 1.0],
                                       "param_n_max": [15.0, float("nan"), 63.0],
                                       "param_k": [float("nan"), 8.0, float("nan")]}))
    check(list(pdf["tree_budget"]) == [16.0, 9.0, 64.0],
          f"tree budget from param_ columns ({list(pdf['tree_budget'])})")
    pdf = fr.add_derived(pd.DataFrame({"policy": ["lever"], "target": ["t"],
                                       "tokens_per_s": [1.0], "policy_params": ["n_max=31"],
                                       "param_n_max": [15.0]}))
    check(list(pdf["tree_budget"]) == [32.0], "policy_params first, param_ columns second")

    def built(d: str):
        with fr.capture_figures(render=False) as caught:
            md, figs = report.build(d)
            by = dict(zip(figs, caught))
            for name, fig in by.items():
                for p in fs.figure_problems(fig, f"{os.path.basename(d)}/{name}"):
                    check(False, p)
            return md, by, [(n, getattr(f, "fs_notes", []),
                             legend_texts(f), getattr(f, "fs_dropped", {}),
                             {n2: line_x(f, n2) for n2 in legend_texts(f)},
                             [t.get_text() for a in f.axes for t in a.get_xticklabels()])
                            for n, f in by.items()]

    # tree sizes on the axis; EdgeLLM drawn; weak-draft points on their own traces
    ed = "navigation=true,fallback={fb},budget=8,max_tokens={m},verify=branches"
    rows = [synth_row("flash_ar", "none", 1.0, rows_max=1),
            synth_row("chain", "k=8,unit=cpu", 1.3, rows_max=9),
            synth_row("specinfer", "widths=1/1/3,unit=cpu", 1.2, rows_max=6)]
    for m in (15, 31):
        rows += [synth_row("lever", f"drafting=gain_cost,n_max={m},d_max=10", 1.8, rows_max=16),
                 synth_row("eagle2", f"top_k=8,depth=8,total_tokens={m},unit=npu",
                           1.9 - m / 100, rows_max=m + 1),
                 synth_row("sequoia", f"max_nodes={m + 1},max_depth=8", 1.1, rows_max=16),
                 synth_row("edgellm", ed.format(fb="true", m=m), 1.4, rows_max=19)]
    rows.append(synth_row("edgellm", ed.format(fb="false", m=32), 1.3, rows_max=9))
    # the weak draft's traces: no Flash-AR point there; the one Flash-AR gives on
    # every trace it ran (1.0) is their baseline
    rows += [synth_row("chain", "k=8,unit=cpu", 0.9, trace="workload-code-weak", draft="d-weak",
                       rows_max=9),
             synth_row("lever", "drafting=gain_cost,n_max=15,d_max=10", 1.2,
                       trace="workload-code-weak", draft="d-weak", rows_max=16)]
    # a trace made in memory, named by its checksum, with a tag naming it
    rows += [synth_row("flash_ar", "none", 1.0, trace="synth-955c5697", tag_workload="dialogue"),
             synth_row("chain", "k=8,unit=cpu", 1.1, trace="synth-955c5697",
                       tag_workload="dialogue", rows_max=9)]
    for r in rows:
        r.setdefault("tag_workload", "code")
    d = synth_dir(c, "rules_tree", rows)
    md, by, info = built(d)
    info = {n: rest for n, *rest in info}
    tree = info.get("throughput_vs_tree.png")
    check(tree is not None, "tree figure drawn")
    if tree is not None:
        notes, legend, dropped, xs, ticks = tree
        # named by what differs from each policy's defaults (the tree-size
        # parameter apart): specinfer runs on the CPU, eagle2 with top_k 8 and
        # depth 8, edgellm as shipped
        want = {"flash_ar": [1.0], "chain": [9.0], "specinfer[unit=cpu]": [6.0],
                "lever": [16.0, 32.0], "eagle2[top_k=8,depth=8]": [16.0, 32.0],
                "sequoia": [16.0, 32.0], "edgellm": [16.0, 32.0]}
        for name, x in want.items():
            check(xs.get(name) == [x], f"tree axis: {name} at {x} nodes ({xs.get(name)})")
        check("15" not in ticks and "31" not in ticks and {"16", "32"} <= set(ticks),
              f"tree ticks name the budgets 16, 32 ({ticks})")
        check("edgellm[fallback=false]" in dropped and
              any("Not drawn: edgellm[fallback=false]" in n for n in notes) and
              "**Not drawn:** edgellm[fallback=false]" in md,
              f"EdgeLLM without a cap: reported as not drawn ({dropped})")
        check(any(n.startswith("Hollow marker") for n in notes),
              "a cap that never bound is marked and explained")
        check(any("not drawn: no series of their setting" in n for n in notes),
              f"points whose setting varies no tree budget are counted ({notes})")
    tree_md = table_rows(md, "Throughput vs tree budget")
    lever = {ln.split("|")[2].strip(): ln.split("|")[5].strip() for ln in tree_md
             if ln.startswith("| lever ")}
    check(lever == {"16": "yes", "32": "no"},
          f"tree table: lever's cap of 16 binds, 32 does not ({lever})")
    sp = info.get("speedup.png")
    check(sp is not None, "speed-up drawn")
    if sp is not None:
        notes, legend, dropped, xs, ticks = sp
        check(not dropped and any("Flash-AR did not run on code-weak" in n for n in notes),
              f"weak-draft points drawn over the borrowed baseline ({notes}, {dropped})")
    sp_md = table_rows(md, "Speed-up over Flash-AR")
    check(any("workload-code-weak" in ln and "| 0.900×" in ln for ln in sp_md),
          f"chain on the weak draft: 0.9 over Flash-AR's 1.0 ({sp_md})")
    check("workload dialogue = `synth-955c5697`" in md,
          "the hash-named trace is shown by its tag, the mapping in report.md")
    check(all("955c5697" not in t for n in info.values() for t in n[4] + n[1]),
          "no figure label holds the trace's hash")

    # a baseline that cannot be borrowed (Flash-AR differs between traces): not drawn
    rows = [synth_row("flash_ar", "none", 1.0, trace="a"),
            synth_row("flash_ar", "none", 1.2, trace="b"),
            synth_row("chain", "k=8,unit=cpu", 1.3, trace="a", rows_max=9),
            synth_row("chain", "k=8,unit=cpu", 1.5, trace="b", rows_max=9),
            synth_row("lever", "n_max=15", 1.8, trace="c", rows_max=16),
            synth_row("chain", "k=8,unit=cpu", 1.4, trace="c", rows_max=9)]
    md, by, info = built(synth_dir(c, "rules_lost", rows))
    info = {n: rest for n, *rest in info}
    sp = info.get("speedup.png")
    if check_true(sp is not None, "speed-up drawn with a lost baseline"):
        notes, legend, dropped, xs, ticks = sp
        check("lever[n_max=15]" in dropped and "lever[n_max=15]" not in legend and
              "chain" in legend,
              f"lever (only on trace c) is reported as not drawn ({dropped}, {legend})")
        check(any("chain at c: not drawn (no Flash-AR point" in n for n in notes),
              f"chain's point on trace c is named ({notes})")
    check("**Not drawn:** lever[n_max=15] (no Flash-AR point with the same workload)" in md,
          "report.md names the series left out and why")

    # pruning: confounded with the DRAM budget -> skipped; alone -> drawn
    rows = [synth_row("flash_ar", "none", 1.0, dram=0.0),
            synth_row("flash_ar", "none", 2.0, dram=1.0),
            synth_row("flash_ar", "none", 1.5, dram=0.5),
            synth_row("lever", "pruning=full,n_max=15", 1.8, dram=0.0, rows_max=16,
                      rows_kept=0.8),
            synth_row("lever", "pruning=none,n_max=15", 2.5, dram=1.0, rows_max=16),
            synth_row("chain", "k=8,unit=cpu", 1.3, dram=0.0, rows_max=9,
                      accepted_hist="30;10;5"),
            synth_row("chain", "k=8,unit=cpu", 1.9, dram=0.5, rows_max=9,
                      accepted_hist="30;10;5", tpc=4.0)]
    md, by, info = built(synth_dir(c, "rules_prune", rows))
    check("pruning_tradeoff.png" not in by and
          "Skipped: `pruning` does not vary with everything else fixed" in md and
          "DRAM budget" in md.split("## Pruning trade-off")[1].split("##")[0],
          "pruning confounded with the DRAM budget: skipped with the reason")
    acc = by.get("accepted_length.png")
    check(acc is not None and sorted(a.get_title() for a in acc.axes if a.get_visible()) ==
          ["DRAM 0%", "DRAM 100%", "DRAM 50%"],
          "accepted length: a panel per DRAM budget "
          f"({[a.get_title() for a in acc.axes] if acc else None})")
    dram = dict((n, rest) for n, *rest in info).get("throughput_vs_dram.png")
    check(dram is not None and
          any("The results hold no row for chain at DRAM 100%" in n for n in dram[0])
          and "The results hold no row for chain at DRAM 100%" in md,
          "a missing DRAM point is named under the figure and in report.md")
    # a series that lacks a DRAM budget inside its range: its line breaks there
    rows = [synth_row("flash_ar", "none", v, dram=d) for v, d in ((1.0, 0.0), (1.5, 0.5),
                                                                  (2.0, 1.0))]
    rows += [synth_row("chain", "k=8,unit=cpu", v, dram=d, rows_max=9)
             for v, d in ((1.3, 0.0), (2.1, 1.0))]
    _, gby, _ = built(synth_dir(c, "rules_gap", rows))
    gap = gby.get("throughput_vs_dram.png")
    ys = [cont.lines[0].get_ydata() for a in (gap.axes if gap else []) for cont in a.containers
          if cont.get_label() == "chain" and cont.lines and cont.lines[0] is not None]
    check(len(ys) == 1 and len(ys[0]) == 3 and float(ys[0][1]) != float(ys[0][1]),
          f"a missing DRAM point inside a line breaks it, not a straight join ({ys})")
    lb = by.get("latency_breakdown.png")
    if check_true(lb is not None, "latency breakdown drawn"):
        # chain at DRAM 50%: 4 tokens per cycle, its flash I/O 700 ms a cycle, 175 a token
        widths = {}
        for a in lb.axes:
            for p in a.patches:
                if p.get_label() == "flash I/O" or p.get_facecolor()[:3] == \
                        matplotlib.colors.to_rgb(fs.RESOURCE_STYLE["flash I/O"][0]):
                    widths.setdefault(a.get_title().split("\n")[-1], set()).add(
                        round(p.get_width(), 6))
        check(widths.get("per decode cycle") == {700.0} and
              175.0 in widths.get("per generated token", set()) and
              350.0 in widths.get("per generated token", set()),
              f"flash I/O per cycle 700 ms, per token 700 / tokens per cycle ({widths})")
    rows = [synth_row("lever", "pruning=full,n_max=15", 1.8, rows_max=16, rows_kept=0.8),
            synth_row("lever", "pruning=none,n_max=15", 1.7, rows_max=16),
            synth_row("lever", "pruning=full,n_max=15", 2.8, rows_max=16, rows_kept=0.8,
                      dram=0.5),
            synth_row("lever", "pruning=none,n_max=15", 2.7, rows_max=16, dram=0.5)]
    md, by, info = built(synth_dir(c, "rules_prune2", rows))
    pr = by.get("pruning_tradeoff.png")
    check(pr is not None and "2 sets" in pr._suptitle.get_text() and
          set(legend_texts(pr)) == {"pruning=full", "pruning=none"},
          "pruning varied alone: drawn, a set per DRAM budget")

    # a phone's standing-variant replays (PHONE~VARIANT) are the model band of
    # its comparisons: listed in the table, left out of the figures with a note;
    # a variant whose phone is not in the results is a point of its own
    rows = [synth_row("chain", "k=4", 1.5, rows_max=5, device=dv)
            for dv in ("phone", "phone~all", "phone~const", "solo~min8")]
    rows += [synth_row("chain", "k=8", 1.6, rows_max=9, device=dv)
             for dv in ("phone", "phone~all", "phone~const", "solo~min8")]
    md, by, info = built(synth_dir(c, "rules_variants", rows))
    check(len(table_rows(md, "Points")) == 8, "every point in the table, replays included")
    check("leave out the 4 points that replay a phone's standing variants "
          "(`phone~all`, `phone~const`)" in md,
          f"the note names the replays left out of the figures ({md[:2000]!r})")
    tp = by.get("throughput.png")
    n_bars = sum(1 for a in tp.axes for cont in a.containers
                 if hasattr(cont, "patches") for _ in cont.patches) if tp else -1
    check(n_bars == 4, f"throughput draws phone's and solo~min8's 4 points, not 8 ({n_bars})")
    fdf, _, left = report.standing_variant_replays(pd_read(synth_dir(c, "rules_variants2",
                                                                     rows)), ["device"])
    check(left == ["phone~all", "phone~const"] and
          sorted(set(fdf["device"])) == ["phone", "solo~min8"],
          f"replays of a phone in the results only ({left}, {sorted(set(fdf['device']))})")


def case_plotted_columns(c: Ctx) -> None:
    """Each figure draws the columns it names, read from the figure's own
    artists on results whose every column holds values of its own: the
    throughput line is tokens_per_s, its error bars tokens_per_s_lo / _hi,
    its shaded band tokens_per_s_model_lo / _hi (not the confidence
    interval's); the latency breakdown's segments are draft_ms, flash_ms,
    npu_ms, cpu_ms - kv_ms, kv_ms and idle_ms, its tick cycle_ms, its
    per-token panel each over tokens_per_cycle; the speed-up bars
    tokens_per_s over the Flash-AR baseline's."""
    sys.path.insert(0, os.path.join(c.home, "analysis"))
    import fsresults as fr  # noqa: E402
    import report  # noqa: E402
    rows = []
    for i, dram in enumerate((0.0, 0.25, 0.5)):
        for j, (pol, params) in enumerate((("flash_ar", "none"), ("chain", "k=4,unit=cpu"))):
            v = 10.0 + 3 * i + 17 * j  # a distinct value per point and column
            rows.append(synth_row(pol, params, v, dram=dram, tpc=2.0 + j,
                                  tokens_per_s_lo=v - 1.25, tokens_per_s_hi=v + 1.5,
                                  tokens_per_s_model_lo=v - 0.5, tokens_per_s_model_hi=v + 0.75,
                                  draft_ms=1 + v, flash_ms=2 + 2 * v, npu_ms=3 + 3 * v,
                                  cpu_ms=9 + 5 * v, kv_ms=4 + v, idle_ms=0.5 + v,
                                  cycle_ms=20 + 10 * v))
    d = synth_dir(c, "plotted", rows)
    df = pd_read(d)
    with fr.capture_figures(render=False) as caught:
        md, figs = report.build(d)
        by = dict(zip(figs, caught))

        def series(pol):
            return df[df["policy"] == pol].sort_values("dram_fraction")

        # throughput vs DRAM budget: line, error bars, band
        fig = by["throughput_vs_dram.png"]
        ax = fig.axes[0]
        for cont in ax.containers:
            pol = "flash_ar" if "Flash-AR" in cont.get_label() or "flash" in \
                cont.get_label().lower() else "chain"
            s = series(pol)
            check(list(cont.lines[0].get_ydata()) == list(s["tokens_per_s"]),
                  f"{cont.get_label()}: line {list(cont.lines[0].get_ydata())}")
            segs = cont.lines[2][0].get_segments()
            got = sorted((float(a[0][1]), float(a[1][1])) for a in segs)
            want = sorted(zip(s["tokens_per_s_lo"], s["tokens_per_s_hi"]))
            check(got == want, f"{cont.get_label()}: error bars {got} vs {want}")
        bands = [p for p in ax.collections if p.__class__.__name__ in
                 ("PolyCollection", "FillBetweenPolyCollection")]
        check(len(bands) == 2, f"{len(bands)} bands")
        want = {float(x) for x in df["tokens_per_s_model_lo"]} | \
            {float(x) for x in df["tokens_per_s_model_hi"]}
        got = {round(float(y), 9) for b in bands for path in b.get_paths()
               for y in path.vertices[:, 1]}
        check(got == {round(y, 9) for y in want}, f"band edges {sorted(got)} vs {sorted(want)}")
        # latency breakdown: each stacked segment's width is its column
        fig = by["latency_breakdown.png"]
        want_cols = {"draft": df["draft_ms"], "flash I/O": df["flash_ms"], "NPU": df["npu_ms"],
                     "CPU": df["cpu_ms"] - df["kv_ms"], "KV": df["kv_ms"],
                     "idle": df["idle_ms"]}
        for k, ax in enumerate(fig.axes[:2]):
            tpc = df["tokens_per_cycle"] if k else 1.0
            for cont in ax.containers:
                lab = cont.get_label()
                if lab not in want_cols:
                    continue
                widths = sorted(round(p.get_width(), 9) for p in cont.patches)
                check(widths == sorted(round(float(w), 9) for w in want_cols[lab] / tpc),
                      f"breakdown panel {k} '{lab}': {widths}")
            ticks = [ln for ln in ax.lines if ln.get_marker() == "|"]
            check(len(ticks) == 1 and sorted(round(float(x), 9) for x in ticks[0].get_xdata())
                  == sorted(round(float(x), 9) for x in df["cycle_ms"] / tpc),
                  f"breakdown panel {k}: wall-time ticks")
        # speed-up over Flash-AR (a line over the DRAM budget): chain's
        # tokens_per_s over the baseline's at each budget
        fig = by["speedup.png"]
        ys = [round(float(y), 9) for a in fig.axes for cont in a.containers
              if hasattr(cont, "lines") for y in cont.lines[0].get_ydata()]
        fa, ch = series("flash_ar"), series("chain")
        want = [round(float(b / a), 9) for a, b in
                zip(fa["tokens_per_s"], ch["tokens_per_s"])]
        check(ys == want, f"speed-up line {ys} vs {want}")
    print("plotted_columns: ok")


def pd_read(d: str):
    import pandas as pd
    return pd.read_csv(os.path.join(d, "results.csv"))


def check_true(cond: bool, what: str) -> bool:
    check(cond, what)
    return cond


# ----------------------------------------------------------------- package

def readme_recipe(home: str) -> str:
    """The README's Python recipe (the ```python block that imports
    analysis.fsresults)."""
    with open(os.path.join(home, "README.md"), encoding="utf-8") as f:
        text = f.read()
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        if "from analysis import fsresults" in block:
            return block
    return ""


def readme_install(home: str) -> str:
    """The README's install line (the sh line that runs pip install)."""
    with open(os.path.join(home, "README.md"), encoding="utf-8") as f:
        text = f.read()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if "pip install" in line:
                return line.strip()
    return ""


def case_package(c: Ctx) -> None:
    """analysis/ installs as the package `analysis` with the README's line,
    run verbatim in a directory holding a copy of analysis/, offline
    (PIP_NO_INDEX): it makes a venv that sees Debian's numpy, pandas, h5py and
    matplotlib and installs the package editable -- with nothing to fetch or
    find beforehand: the build backend is analysis/'s own, and the same
    install with --no-build-isolation works where setuptools and wheel cannot
    be imported.  From another directory the README's recipe (from analysis
    import fsresults; fsresults.load(DIR)) runs and `flashspec-report DIR`
    writes report.md; with pandas missing, flashspec-report says so in one
    line naming the interpreter and the fix, exit 69, no traceback."""
    line = readme_install(c.home)
    if not check_true(line.startswith("/usr/bin/python3 -m venv --system-site-packages .venv") and
                      ".venv/bin/pip install --no-deps -e analysis/" in line,
                      f"README.md has the install line ({line!r})"):
        return
    proj = os.path.join(c.tmp, "proj")
    shutil.copytree(os.path.join(c.home, "analysis"), os.path.join(proj, "analysis"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    r = run(["bash", "-c", line], env=env, cwd=proj)
    venv = os.path.join(proj, ".venv")
    if not check_true(r.returncode == 0 and os.path.exists(os.path.join(venv, "bin", "python")),
                      "the README's install line, verbatim, offline: "
                      f"{(r.stdout + r.stderr).strip()[-600:]}"):
        return
    # the same without build isolation, where setuptools and wheel cannot be imported
    no_tools = os.path.join(c.tmp, "no-tools")
    os.makedirs(no_tools)
    for mod in ("setuptools", "wheel"):
        write(os.path.join(no_tools, f"{mod}.py"), f'raise ImportError("no {mod} here")\n')
    r = run([os.path.join(venv, "bin", "pip"), "install", "--no-deps", "--no-build-isolation",
             "--force-reinstall", "-e", "analysis/"],
            env=dict(env, PYTHONPATH=no_tools), cwd=proj)
    check(r.returncode == 0, "pip install --no-build-isolation without setuptools or wheel: "
          f"{(r.stdout + r.stderr).strip()[-600:]}")
    res = os.path.join(c.tmp, "mixed")  # 6 points, with chain's param_k
    r = c.flashspec("run", "tests/analysis/scripts/load.lua", "-q", "-o", res,
                    "--arg", "which=mixed")
    check(r.returncode == 0, f"load.lua mixed: {r.stderr.strip()}")
    elsewhere = os.path.join(c.tmp, "elsewhere")
    os.makedirs(elsewhere)
    recipe = readme_recipe(c.home)
    check(bool(recipe), "README.md holds the fsresults recipe")
    recipe, n = re.subn(r"fsresults\.load\((['\"]).*?\1\)", f"fsresults.load({res!r})", recipe)
    check(n == 1, "the recipe loads one results directory")
    code = recipe + "\nimport analysis, sys\nprint(analysis.__file__)\nprint(len(df), sys.prefix)\n"
    py = os.path.join(venv, "bin", "python")
    r = run([py, "-c", code], env=env, cwd=elsewhere)
    out = r.stdout.strip().splitlines()
    check(r.returncode == 0 and len(out) >= 2 and
          out[-2] == os.path.join(proj, "analysis", "__init__.py") and
          out[-1] == f"6 {venv}",
          f"README recipe from another directory, the package from the venv: "
          f"{r.stdout.strip()[-400:]} {r.stderr.strip()[-400:]}")
    exe = os.path.join(venv, "bin", "flashspec-report")
    r = run([exe, res, "-o", os.path.join(c.tmp, "rep")], env=env, cwd=elsewhere)
    check(r.returncode == 0 and os.path.exists(os.path.join(c.tmp, "rep", "report.md")) and
          is_png(os.path.join(c.tmp, "rep", "speedup.png")),
          f"flashspec-report wrote report.md: {r.stderr.strip()[-400:]}")
    check(r.stderr.startswith("flashspec-report: wrote "), f"named as the command ({r.stderr})")
    # a missing dependency: one line, the interpreter, the fix, exit 69
    no_pandas = os.path.join(c.tmp, "no-pandas")
    os.makedirs(no_pandas)
    write(os.path.join(no_pandas, "pandas.py"), 'raise ImportError("No module named \'pandas\'")\n')
    r = run([exe, res, "-o", os.path.join(c.tmp, "rep2")], env=dict(env, PYTHONPATH=no_pandas),
            cwd=elsewhere)
    line = r.stderr.strip()
    check(r.returncode == 69 and "\n" not in line and "Traceback" not in r.stderr and
          line.startswith(f"flashspec-report: {os.path.join(venv, 'bin', 'python')}") and
          "lacks pandas" in line and "apt-get install python3-pandas" in line and
          "pip install pandas" in line and not os.path.exists(os.path.join(c.tmp, "rep2")),
          f"missing pandas: one line, exit 69 ({r.returncode}: {r.stderr.strip()[-400:]})")
    r = run([PY, c.tool("report.py"), res], env=dict(env, PYTHONPATH=no_pandas), cwd=elsewhere)
    check(r.returncode == 69 and r.stderr.startswith(f"report.py: {PY} lacks pandas"),
          f"report.py run directly says the same ({r.stderr.strip()[-300:]})")


# ----------------------------------------------------------------- loading

def case_load(c: Ctx) -> None:
    """pandas.read_csv(DIR/results.csv) and analysis.fsresults.load() of the
    directory, its CSV or its HDF5 file give the same frame: the files' column
    order, text as str, int64 and float64 numbers."""
    import pandas as pd
    import h5py

    sys.path.insert(0, c.home)
    from analysis import fsresults as fr  # the documented call

    dirs = {}
    for which in ("ar", "mixed"):
        d = os.path.join(c.tmp, which)
        r = c.flashspec("run", "tests/analysis/scripts/load.lua", "-q", "-o", d,
                        "--arg", f"which={which}")
        check(r.returncode == 0, f"load.lua {which}: {r.stderr.strip()}")
        dirs[which] = d
    for which, d in dirs.items():
        csv_path, h5_path = os.path.join(d, "results.csv"), os.path.join(d, "results.h5")
        with open(csv_path, encoding="utf-8") as f:
            header = f.readline().rstrip("\n").split(",")
        frames = {"load(DIR)": fr.load(d), "load(results.csv)": fr.load(csv_path),
                  "load(results.h5)": fr.load(h5_path)}
        for name, df in frames.items():
            check(list(df.columns) == header, f"{which} {name}: the CSV header's column order")
        with h5py.File(h5_path, "r") as h5:
            kinds = {k: h5["results"][k].dtype.kind for k in h5["results"]}
        want = {k: ("object" if v == "O" else "int64" if v == "i" else "float64")
                for k, v in kinds.items()}
        for name, df in frames.items():
            got = {k: str(t) for k, t in df.dtypes.items()}
            check(got == want, f"{which} {name}: dtypes follow the stored types "
                  f"{sorted(set(got.items()) ^ set(want.items()))}")
            text = [k for k, v in want.items() if v == "object"]
            # a point without that parameter or tag: NaN in a param_ / tag_ column
            check(all(isinstance(v, str) or (k.startswith(("param_", "tag_")) and v != v)
                      for k in text for v in df[k]),
                  f"{which} {name}: every text cell is a str")
        first = frames["load(DIR)"]
        for name, df in frames.items():
            try:
                pd.testing.assert_frame_equal(first, df, check_exact=True)
            except AssertionError as e:
                check(False, f"{which}: {name} differs from load(DIR): {str(e)[:300]}")
        plain = pd.read_csv(csv_path)
        if which == "ar":
            # nothing here reads as another type: plain read_csv agrees exactly
            try:
                pd.testing.assert_frame_equal(plain, first, check_exact=True)
            except AssertionError as e:
                check(False, f"pandas.read_csv differs from load(): {str(e)[:300]}")
            check(first["policy_params"].tolist() == ["none"] and
                  first["accepted_hist"].iloc[0] == f"{first['tokens'].iloc[0]};0" and
                  first["dram_fraction"].dtype == "float64",
                  f"Flash-AR alone: {first[['policy_params', 'accepted_hist']].values}")
        else:
            # a trace named "2024": read_csv makes it a number, load() keeps the text
            check(first["trace"].tolist() == ["2024"] * 6, f"trace names {first['trace'].tolist()}")
            check(plain["trace"].dtype == "int64", "plain read_csv reads '2024' as a number")
            rest = [k for k in first.columns if k != "trace"]
            try:
                pd.testing.assert_frame_equal(plain[rest], first[rest], check_exact=True)
            except AssertionError as e:
                check(False, f"pandas.read_csv differs from load(): {str(e)[:300]}")

    # errors: one AnalysisError each, with the exit codes of the command line
    os.makedirs(os.path.join(c.tmp, "bad"))
    bad_h5 = write(os.path.join(c.tmp, "bad", "results.h5"), "not hdf5")
    no_attr = os.path.join(c.tmp, "noattr.h5")
    with h5py.File(no_attr, "w") as h5:
        h5.create_group("results").create_dataset("policy", data=[b"x"])
    cases = [(os.path.join(c.tmp, "missing"), 66, "no such file"),
             (os.path.join(c.tmp, "bad"), 65, "not a results HDF5 file"),
             (os.path.join(c.tmp, "ar", "load.lua"), 66, "no such file"),
             (bad_h5, 65, "not a results HDF5 file"),
             (no_attr, 65, "'columns' attribute"),
             (write(os.path.join(c.tmp, "empty.csv"), ""), 65, "not a results CSV file")]
    for path, code, words in cases:
        try:
            fr.load(path)
            check(False, f"load({path}) raises")
        except fr.AnalysisError as e:
            check(e.code == code and words in e.message and "\n" not in e.message,
                  f"load({path}): {e.code} {e.message}")


CASES = {
    "report": case_report,
    "report_skips": case_report_skips,
    "report_errors": case_report_errors,
    "fidelity": case_fidelity,
    "fidelity_errors": case_fidelity_errors,
    "fidelity_table5": case_fidelity_table5,
    "metric_expr": case_metric_expr,
    "metric_errors": case_metric_errors,
    "metric_vs_c": case_metric_vs_c,
    "timeline": case_timeline,
    "load": case_load,
    "figures": case_figures,
    "report_rules": case_report_rules,
    "plotted_columns": case_plotted_columns,
    "package": case_package,
}


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        print(f"usage: test_analysis.py {{{'|'.join(CASES)}}} FLASHSPEC PROJECT_DIR",
              file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="fs-analysis-")
    try:
        CASES[sys.argv[1]](Ctx(os.path.abspath(sys.argv[2]), sys.argv[3], tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print(f"{sys.argv[1]}: {len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{sys.argv[1]}: ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
