#!/usr/bin/python3
"""Runs the study scripts (scripts/study_*.lua) through the built flashspec.

    test_studies.py CASE OUTDIR

CASE is a study name (end_to_end, draft_quality, dram_budget, output_length,
tree_budget: the quick grid) or dram_budget_full (the full grid, whose
Qwen3-14B points beyond 40% pinned do not fit the OnePlus 12's DRAM budget).  table5,
ablations, tuned and edgellm_phones have checks of their own.
Checks the exit code, that results.csv holds one row per point that ran with
every result column (sim/out/rows.c), tokens_per_s_lo <= tokens_per_s <=
tokens_per_s_hi, and that the printed table has its header and one
`tok/s [lo, hi]` row per point.

The binary comes from $FLASHSPEC_BIN, the project root from $FLASHSPEC_HOME.
"""
import csv
import os
import re
import subprocess
import sys

BIN = os.environ.get("FLASHSPEC_BIN", "build/sim/cli/flashspec")
HOME = os.environ.get("FLASHSPEC_HOME", os.getcwd())

# study -> (header words, summary header, quick-grid points, full-grid points,
#           whether some full-grid points do not fit the DRAM budget: every
#           quick-grid point fits)
STUDIES = {
    "end_to_end": (["target", "workload", "phone", "policy", "accept", "speedup"],
                   "geomean speedup", 4, 4 * 4 * 3 * 4, False),
    "draft_quality": (["workload", "draft", "policy", "speedup", "dram_gb"],
                      "geomean speedup", 1 + 2 * 3, 3 * (1 + 2 * 3), False),
    "dram_budget": (["target", "workload", "pinned", "policy", "dram_gb", "flash_ms"],
                    "geomean", 2 * 4, 3 * 3 * 6 * 4, True),
    "output_length": (["workload", "tokens", "policy", "speedup"], "geomean speedup",
                      2 * 2, 3 * 5 * 4, False),
    "tree_budget": (["workload", "policy", "cap", "speedup", "rows", "coverage"],
                    "geomean speedup", 1 + 2 * 2, 3 * (2 + 4 * 4), False),
}
CI_ROW = re.compile(r"\d+\.\d+ \[\s*\d+\.\d+,\s*\d+\.\d+\]")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def result_columns():
    """The result columns the binary writes, from its column table."""
    with open(os.path.join(HOME, "sim", "out", "rows.c")) as f:
        return re.findall(r'^\s*\{"([a-z_0-9]+)", COL_', f.read(), re.M)


def columns_ok(header):
    """The fixed columns in rows.c's order, then param_<name> / tag_<name> ones."""
    cols = result_columns()
    return header[:len(cols)] == cols and \
        all(c.startswith(("param_", "tag_")) for c in header[len(cols):])


def grid_args(grid):
    """Command-line arguments that choose the grid (the one place that decides
    how the grid reaches the script): none for the full grid."""
    return [] if grid != "quick" else ["--arg", "grid=quick"]


def check(study, grid, outdir):
    words, summary, quick_n, full_n, some_nofit = STUDIES[study]
    n = quick_n if grid == "quick" else full_n
    some_nofit = some_nofit and grid != "quick"
    os.makedirs(outdir, exist_ok=True)
    res = os.path.join(outdir, f"{study}-{grid}")
    script = os.path.join(HOME, "scripts", f"study_{study}.lua")
    p = subprocess.run([BIN, "sweep", script, *grid_args(grid), "-j", "2", "-q",
                        "--no-resume", "-o", res], cwd=HOME, capture_output=True, text=True,
                       timeout=300)
    want_rc = 78 if some_nofit else 0
    expect(p.returncode == want_rc,
           f"{study}: exit {p.returncode}, wanted {want_rc}; stderr: {p.stderr[-2000:]}")
    failed = [l for l in p.stderr.splitlines() if re.search(r"point \d+ of \d+ failed:", l)]
    nofit = len(failed)
    expect((nofit > 0) == some_nofit and nofit < n,
           f"{study}: {nofit} of {n} points failed" + (", wanted some" if some_nofit else ""))
    expect(all("does not fit" in l for l in failed),
           f"{study}: a point failed for another reason than the DRAM budget: {failed}")

    cols = result_columns()
    with open(os.path.join(res, "results.csv"), newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    expect(columns_ok(header), f"{study}: CSV columns {header} != rows.c columns {cols}")
    expect(len(body) == n - nofit, f"{study}: {len(body)} CSV rows, wanted {n - nofit}")
    ix = {c: header.index(c) for c in ("tokens_per_s", "tokens_per_s_lo", "tokens_per_s_hi")}
    for r in body:
        expect(len(r) == len(header), f"{study}: ragged CSV row {r}")
        x, lo, hi = (float(r[ix[c]]) for c in ("tokens_per_s", "tokens_per_s_lo",
                                                "tokens_per_s_hi"))
        eps = 1e-9 * max(1.0, abs(x))
        expect(0 < lo <= x + eps and x <= hi + eps,
               f"{study}: CI [{lo}, {hi}] does not hold tokens_per_s {x}")

    out = p.stdout.splitlines()
    heads = [l for l in out if "tok/s [lo, hi]" in l]
    expect(len(heads) == 1, f"{study}: no single table header in {out[:3]}")
    for w in words:
        expect(re.search(r"(^|\s)" + re.escape(w) + r"(\s|$)", heads[0]),
               f"{study}: header {heads[0]!r} lacks {w!r}")
    ci_rows = [l for l in out if CI_ROW.search(l)]
    expect(len(ci_rows) == n - nofit,
           f"{study}: {len(ci_rows)} table rows with a 95% CI, wanted {n - nofit}")
    expect(sum("does not fit" in l for l in out) >= nofit,
           f"{study}: the table does not show the points that do not fit")
    expect(any(l.startswith(summary) for l in out), f"{study}: no '{summary}' summary")
    print(f"{study} ({grid} grid): {n} points, {n - nofit} rows, exit {p.returncode}")


def run_study(study, grid, outdir):
    res = os.path.join(outdir, f"{study}-{grid}")
    script = os.path.join(HOME, "scripts", f"study_{study}.lua")
    p = subprocess.run([BIN, "sweep", script, *grid_args(grid), "-j", "2", "-q",
                        "--no-resume", "-o", res], cwd=HOME, capture_output=True, text=True,
                       timeout=300)
    expect(p.returncode == 0, f"{study}: exit {p.returncode}; stderr: {p.stderr[-2000:]}")
    with open(os.path.join(res, "results.csv"), newline="") as f:
        rows = list(csv.reader(f))
    expect(columns_ok(rows[0]), f"{study}: CSV columns differ from rows.c")
    return p.stdout.splitlines(), rows[1:]


def check_table5(outdir):
    """Table 5 on the quick grid (code workloads): 2 drafts x 4 policies; the
    calibrated phone keeps the orderings the paper reports."""
    out, body = run_study("table5", "quick", outdir)
    expect(len(body) == 8, f"table5: {len(body)} rows, wanted 8")
    expect(len([l for l in out if CI_ROW.search(l)]) == 8, "table5: 8 rows with a 95% CI")
    expect(any(l.startswith("geometric-mean relative error") for l in out), "table5: summary")
    checks = [l for l in out if l.split()[-1:] in (["yes"], ["no"])]
    expect(len(checks) == 5, f"table5: 5 ordering checks, got {len(checks)}")
    # the orderings the calibrated phone must keep: Lever first with both
    # drafts, Chain-SD with the 0.6B draft slower than Flash-AR
    must = [l for l in checks if "Lever >" in l or "< Flash-AR" in l]
    expect(len(must) == 3 and all(l.endswith("yes") for l in must),
           f"table5: a required ordering disagrees: {must}")
    print(f"table5 (quick grid): 8 points, {sum(l.endswith('yes') for l in checks)} of 5 "
          "orderings agree")


def check_ablations(outdir):
    """The ablation tables on the quick grid (code workload): 19 points, every
    row with a 95% CI, and a verdict for each of the paper's 10 statements, each
    followed by the gain's model band over the phone's standing variants (the
    19 points again on each of the OnePlus 12's four variants: the
    calibration's three and parts_slow, the runtime's prior for a stand-alone
    NPU call)."""
    out, body = run_study("ablations", "quick", outdir)
    dev = result_columns().index("device")
    on_variant = [r for r in body if "~" in r[dev]]
    expect(len(body) - len(on_variant) == 19 and len(on_variant) == 4 * 19,
           f"ablations: {len(body)} rows, {len(on_variant)} on a variant; wanted 19 + 4 x 19")
    expect(sorted({r[dev] for r in on_variant}) ==
           ["oneplus12~all", "oneplus12~const", "oneplus12~min8", "oneplus12~parts_slow"],
           f"ablations: variant devices {sorted({r[dev] for r in on_variant})}")
    expect(len([l for l in out if CI_ROW.search(l)]) == 19, "ablations: 19 rows with a CI")
    claims = [l for l in out if l.startswith("paper: ")]
    expect(len(claims) == 10, f"ablations: {len(claims)} verdicts, wanted 10")
    expect(all(l.endswith(" agree") or l.endswith(" DISAGREE") for l in claims),
           "ablations: every verdict says agree or DISAGREE")
    bands = [out[i + 1] for i, l in enumerate(out) if l.startswith("paper: ") and i + 1 < len(out)]
    band = re.compile(r"^  model band of the gain: ([0-9.]+)x - ([0-9.]+)x \(all [0-9.]+x, "
                      r"const [0-9.]+x, min8 [0-9.]+x, parts_slow [0-9.]+x\)")
    for l, b in zip(claims, bands):
        m = band.match(b)
        expect(m is not None, f"ablations: no model band after {l!r}: {b!r}")
        gain = float(re.search(r"simulated ([0-9.]+)x", l).group(1))
        expect(float(m.group(1)) <= gain + 5e-4 and gain - 5e-4 <= float(m.group(2)),
               f"ablations: the band {b!r} does not hold the gain {gain}")
    print(f"ablations (quick grid): 19 points, {sum(l.endswith(' agree') for l in claims)} of "
          "10 statements agree")


def check_tuned(outdir):
    """Tuned knobs per DRAM budget on the quick grid: 3 policies x 2 shares,
    each tuned row (held-out prompts, tune_evals > 0) next to the default
    knobs on the same prompts, and the geomean gain summary."""
    out, body = run_study("tuned", "quick", outdir)
    cols = result_columns()
    ix = {c: cols.index(c) for c in ("tune_evals", "prompt_offset", "prompts", "tune_train")}
    tuned = [r for r in body if int(r[ix["tune_evals"]]) > 0]
    plain = [r for r in body if int(r[ix["tune_evals"]]) == 0]
    expect(len(tuned) == 6 and len(plain) == 6, f"tuned: {len(tuned)} tuned, {len(plain)} default")
    for r in tuned:
        expect(int(r[ix["prompt_offset"]]) > 0, "a tuned row is not on held-out prompts")
        expect(r[ix["tune_train"]] != "nan", "a tuned row lacks tune_train")
    for r in plain:
        expect(r[ix["tune_train"]] == "nan", "an untuned row has tune_train")
    expect(len([l for l in out if CI_ROW.search(l)]) == 6, "tuned: 6 table rows with a CI")
    expect(any(l.startswith("geomean gain") for l in out), "tuned: no geomean gain summary")
    print("tuned (quick grid): 6 tuned points on held-out prompts")


def check_edgellm_phones(outdir):
    """EdgeLLM's phones on the quick grid (Xiaomi 10, LLaMA-2-Chat pair, SQuAD;
    Std, SP, EdgeLLM): each policy's per-token time inside its model band,
    EdgeLLM's speed-up over each baseline inside the band of the phone's
    variants, EdgeLLM faster than the target alone swapped in, and the
    memory-budget sweep: the larger budget keeps more of the target under the
    active-list reading, and Std is never slower for it."""
    out, body = run_study("edgellm_phones", "quick", outdir)
    row = re.compile(r"^xiaomi10 llama2-chat squad +(Std|SP|EdgeLLM) +([0-9.]+) +"
                     r"\[([0-9.]+), ([0-9.]+)\] +([0-9.]+) +([0-9.]+) +([0-9.]+)$")
    per = {m.group(1): [float(x) for x in m.groups()[1:]] for m in map(row.match, out) if m}
    expect(sorted(per) == ["EdgeLLM", "SP", "Std"], f"edgellm_phones: per-token rows {per}")
    for pol, (ms, lo, hi, t256, jt, _acc) in per.items():
        expect(lo <= ms <= hi, f"edgellm_phones: {pol} {ms} ms/token outside [{lo}, {hi}]")
        expect(abs(t256 - 256 * ms / 1000) <= 0.051 + 1e-9 * t256 and jt > 0,
               f"edgellm_phones: {pol}: 256th token at {t256} s, {jt} J/token")
    sp = re.compile(r"^xiaomi10 EdgeLLM over (Std|SP) +([0-9.]+)x +\[([0-9.]+), ([0-9.]+)\]")
    gains = {m.group(1): [float(x) for x in m.groups()[1:]] for m in map(sp.match, out) if m}
    expect(sorted(gains) == ["SP", "Std"], f"edgellm_phones: speed-up lines {gains}")
    for pol, (g, lo, hi) in gains.items():
        expect(lo <= g <= hi, f"edgellm_phones: over {pol}: {g} outside [{lo}, {hi}]")
    expect(abs(gains["Std"][0] - per["Std"][0] / per["EdgeLLM"][0]) < 0.006,
           f"edgellm_phones: the speed-up over Std is the time ratio ({gains['Std']})")
    expect(gains["Std"][0] > 1, "edgellm_phones: EdgeLLM slower than the target alone")
    bud = re.compile(r"^(\d+) GB +(Std|EdgeLLM) +([0-9.]+) +([0-9.]+)% +([0-9.]+) +([0-9.]+)$")
    b = {(int(m.group(1)), m.group(2)): [float(x) for x in m.groups()[2:]]
         for m in map(bud.match, out) if m}
    expect(sorted(b) == [(6, "EdgeLLM"), (6, "Std"), (10, "EdgeLLM"), (10, "Std")],
           f"edgellm_phones: budget rows {sorted(b)}")
    for pol in ("Std", "EdgeLLM"):
        expect(b[(10, pol)][1] > b[(6, pol)][1] and b[(10, pol)][2] <= b[(6, pol)][2],
               f"edgellm_phones: {pol}: 10 GB keeps no more, or is slower, than 6 GB")
        for gb in (6, 10):
            expect(b[(gb, pol)][2] <= b[(gb, pol)][0],
                   f"edgellm_phones: {pol} at {gb} GB: caching made it slower")
    expect(b[(10, "Std")][1] == 100.0, "edgellm_phones: 10 GB holds the whole 13B target")
    print(f"edgellm_phones (quick grid): EdgeLLM over Std {gains['Std'][0]}x, over SP "
          f"{gains['SP'][0]}x")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_studies.py CASE OUTDIR")
    case, outdir = sys.argv[1], sys.argv[2]
    if case == "table5":
        check_table5(outdir)
    elif case == "ablations":
        check_ablations(outdir)
    elif case == "tuned":
        check_tuned(outdir)
    elif case == "edgellm_phones":
        check_edgellm_phones(outdir)
    elif case.endswith("_full"):
        check(case[:-len("_full")], "full", outdir)
    else:
        check(case, "quick", outdir)


if __name__ == "__main__":
    main()
