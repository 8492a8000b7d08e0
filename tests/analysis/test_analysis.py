#!/usr/bin/python3
"""End-to-end tests of analysis/ (report.py, fidelity.py, timeline.py) and of
`flashspec run|sweep --timeline`.

    test_analysis.py CASE FLASHSPEC_BIN PROJECT_DIR

Each case runs flashspec on a small study into a fresh temporary directory,
then the analysis scripts, and checks the files they produce (tables with the
expected rows, PNG images, the trace-event format of timelines) and their
documented exit codes on bad input, with no partial output.
"""
from __future__ import annotations

import csv
import json
import os
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
    for png in ("throughput_vs_dram.png", "latency_breakdown.png", "throughput_vs_tree.png",
                "pruning_tradeoff.png", "accepted_length.png"):
        check(is_png(os.path.join(out, png)), f"{png} is a PNG")
        check(f"]({png})" in md, f"report.md links {png}")
    check(len(table_rows(md, "Points")) == 12, "12 points listed")
    dram = table_rows(md, "Throughput vs DRAM budget")
    check(len(dram) == 12, f"12 rows of throughput vs DRAM (got {len(dram)})")
    check(any(ln.startswith("| flash_ar | 50 |") for ln in dram), "flash_ar at 50% DRAM")
    check(len(table_rows(md, "Latency breakdown per cycle")) == 12, "12 breakdown bars")
    tree = table_rows(md, "Throughput vs tree budget")
    check(len(tree) == 4 and all("eagle2" in ln for ln in tree), "eagle2 8/16-node series")
    check(any("| 16 |" in ln for ln in tree) and any("| 8 |" in ln for ln in tree),
          "tree budgets 8 and 16")
    prune = table_rows(md, "Pruning trade-off")
    check(len(prune) == 4 and all("lever" in ln for ln in prune), "lever pruning rows")
    acc = table_rows(md, "Accepted length")
    check(len(acc) == 5, f"5 drafting variants in the accepted-length table (got {len(acc)})")
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
    check(md.count("Skipped:") == 4, "four figures skipped with a note")
    check(is_png(os.path.join(rep, "latency_breakdown.png")), "breakdown drawn")
    check(not os.path.exists(os.path.join(rep, "throughput_vs_dram.png")), "no DRAM figure")


def case_report_errors(c: Ctx) -> None:
    missing = os.path.join(c.tmp, "nope")
    r = c.script(c.tool("report.py"), missing)
    check(r.returncode == 66 and missing in r.stderr, "missing results dir: 66")
    check(not os.path.exists(missing), "nothing created for a missing dir")
    check(r.stderr.count("\n") == 1, "one line")
    bad = os.path.join(c.tmp, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "results.csv"), "w") as f:
        f.write("policy,target,tokens_per_s,dram_fraction\nflash_ar,x,1.5,0\nchain,x,abc,0\n")
    r = c.script(c.tool("report.py"), bad)
    check(r.returncode == 65 and "results.csv:3" in r.stderr and "tokens_per_s" in r.stderr,
          f"non-numeric cell: 65 naming file and line ({r.stderr.strip()})")
    check(not os.path.exists(os.path.join(bad, "report")), "no partial output")
    with open(os.path.join(bad, "results.csv"), "w") as f:
        f.write("policy,target\nflash_ar,x\n")
    r = c.script(c.tool("report.py"), bad)
    check(r.returncode == 65 and "tokens_per_s" in r.stderr, "missing column: 65")
    with open(os.path.join(bad, "results.csv"), "w") as f:
        f.write("policy,target,tokens_per_s\nflash_ar,x\n")
    r = c.script(c.tool("report.py"), bad)
    check(r.returncode == 65 and "results.csv:2" in r.stderr, "short row: 65")
    r = c.script(c.tool("report.py"))
    check(r.returncode == 64, "no argument: 64")
    res = c.mini()
    blocker = os.path.join(c.tmp, "file")
    open(blocker, "w").close()
    r = c.script(c.tool("report.py"), res, "-o", os.path.join(blocker, "sub"))
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
        r = c.script(c.tool("fidelity.py"), res, ref(text), "-o", out)
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
            "flash_ar,(flash_ms+npu_ms+cpu_ms)*2/2-0,800,x\n"
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
        check(r.returncode == code and r.stderr.count("\n") == 1,
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


CASES = {
    "report": case_report,
    "report_skips": case_report_skips,
    "report_errors": case_report_errors,
    "fidelity": case_fidelity,
    "fidelity_errors": case_fidelity_errors,
    "timeline": case_timeline,
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
