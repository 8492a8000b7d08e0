#!/usr/bin/python3
"""Simulated points against reference measurements.

    analysis/fidelity.py RESULTS_DIR REFERENCE.csv [-o OUT] [--strict]

Joins every row of REFERENCE.csv with the result rows of RESULTS_DIR whose
parameters match its key columns and writes to OUT (default
RESULTS_DIR/fidelity):

    fidelity.md    per-point table (measured, predicted, relative error) and
                   the summary: geometric-mean relative error overall, per
                   metric and per source; when some rows' source starts with
                   "Lever Table 5", a "Table 5" section laid out as the paper's
                   (rows draft x policy, columns the traces, or the benchmarks
                   the notes name; cells "predicted / measured (error)")
    fidelity.csv   the per-point table as CSV
    fidelity.png   relative error (simulated - published) / published of every
                   compared row, a dot per row, the +-10% band shaded

Reference CSV (analysis/README.md "Reference CSV"): columns `metric`, `value`,
`source` (required) and `note` (optional); every other column is a key that
must name a result column or a derived one (`tree_nodes`, `tree_budget`,
`variant`); an empty key cell matches anything.  `metric` names the result
column compared with `value`, or an arithmetic expression over numeric result
columns and numbers with + - * /, parentheses and unary minus
("npu_ms+cpu_ms", "verify_ms-flash_ms", "waste_ms/(verify_ms-flash_ms)",
"1000/ms_per_token"), in the grammar of flashspec calibrate's reference
reader (sim/fit/refcsv.c), which fsresults.metric_values mirrors:
    expr = term {(+|-) term}; term = factor {(*|/) factor};
    factor = number | column | ( expr ) | - factor
numbers as C's strtod reads them, columns [A-Za-z_][A-Za-z0-9_]* naming
numeric result columns (not the derived ones).  Evaluated per matching result
row; a value that is not finite there (a division by zero) is an error.

Errors: relative error e = (predicted - measured) / measured; the geometric-
mean relative error of a set is exp(mean(ln(1 + |e|))) - 1; the bias is the
geometric mean of predicted / measured, minus 1 (points with a positive
prediction).  When several result rows match one reference row (e.g. several
traces), the prediction is their mean and `points` says how many.

Exit codes: 0 ok, 64 usage, 65 bad data (malformed reference, unknown key or
metric column, malformed metric expression, a metric that is not finite for a
matching result row, no result row matching any reference row, or with
--strict a reference row without a match), 66 missing input, 73 cannot write
OUT.
Nothing is written unless every input is valid.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
if __name__ == "__main__":
    import depcheck  # the script's own directory is on sys.path

    depcheck.require("fidelity.py")
if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
else:  # run as a script, or imported with analysis/ on sys.path
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

RESERVED = ("metric", "value", "source", "note")
OUTPUTS = ["fidelity.md", "fidelity.csv", "fidelity.png", "figcheck.json"]


class RefRow:
    def __init__(self, line: int, keys: dict[str, str], metric: str, value: float, source: str,
                 note: str, ops: list | None = None) -> None:
        self.line, self.keys, self.metric = line, keys, metric
        self.value, self.source, self.note = value, source, note
        self.ops = ops  # the metric compiled (fsresults.compile_metric)


class _Lines:
    """The lines of a text, '\n' kept, one at a time (csv.reader pulls exactly
    the lines of one record), with the index of the next one."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.lines = [ln + "\n" for ln in self.lines[:-1]] + \
            ([self.lines[-1]] if self.lines[-1] else [])
        self.i = 0

    def __iter__(self) -> "_Lines":
        return self

    def __next__(self) -> str:
        if self.i >= len(self.lines):
            raise StopIteration
        self.i += 1
        return self.lines[self.i - 1]


def read_records(path: str) -> list[tuple[int, list[str]]]:
    """The CSV records of a reference file with the line each starts on, as
    sim/fit/refcsv.c reads them: a line whose first character other than
    spaces and tabs is '#' is a comment, skipped before it is parsed (a quote
    in it opens nothing); blank lines are skipped; quoted cells may span
    lines, and line numbers stay true."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise fr.AnalysisError(fr.EX_NOINPUT, f"{path}: no such reference file") from None
    except OSError as e:
        raise fr.AnalysisError(fr.EX_NOINPUT, f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise fr.AnalysisError(fr.EX_DATAERR, f"{path}: not a CSV file: {e}") from None
    src = _Lines(text)
    rd = csv.reader(src)
    out = []
    while src.i < len(src.lines):
        start = src.i + 1
        if src.lines[src.i].lstrip(" \t").startswith("#"):
            src.i += 1
            continue
        try:
            rec = next(rd)
        except StopIteration:
            break
        except csv.Error as e:
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{start}: not a CSV record: {e}") \
                from None
        out.append((start, rec))
    return out


def load_reference(path: str, df: pd.DataFrame) -> tuple[list[str], list[RefRow]]:
    records = read_records(path)
    # blank lines and comments are allowed; line numbers stay true (as
    # sim/fit/refcsv.c: cells are trimmed of "C" whitespace, and a record whose
    # first cell then starts with '#' is a comment too)
    sp = fr.C_SPACE
    numbered = [(i, r) for i, r in records
                if r and not (len(r) == 1 and not r[0].strip(sp))
                and not r[0].strip(sp).startswith("#")]
    if not numbered:
        raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:1: empty file (no header row)")
    hline, header = numbered[0]
    header = [h.strip(sp) for h in header]
    for c in ("metric", "value", "source"):
        if c not in header:
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{hline}: missing column '{c}'")
    if len(set(header)) != len(header):
        raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{hline}: duplicate column names")
    keys = [h for h in header if h not in RESERVED]
    if not keys:
        raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{hline}: no key column (e.g. target, "
                               "policy, dram_fraction, tree_nodes)")
    for k in keys:
        if k not in df.columns:
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{hline}: unknown key column '{k}' "
                                   "(not a result column; derived: tree_nodes, tree_budget, "
                                   "variant)")
    numeric = fr.numeric_columns(df)
    out = []
    for line, r in numbered[1:]:
        if len(r) != len(header):
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{line}: {len(r)} fields, the header "
                                   f"has {len(header)}")
        cell = dict(zip(header, (c.strip(sp) for c in r)))
        kv = {}
        for k in keys:
            v = cell[k]
            if v and df[k].dtype != object:
                x = fr.c_number(v)
                if x is None or not math.isfinite(x):
                    raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{line}: key '{k}': "
                                           f"{v!r} is not a number")
            kv[k] = v
        metric = cell["metric"]
        try:
            ops = fr.compile_metric(metric, numeric)
        except KeyError as e:
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{line}: unknown metric '{metric}' "
                                   f"(no numeric result column '{e.args[0]}')") from None
        except fr.MetricSyntaxError as e:
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{line}: metric '{metric}': {e}") \
                from None
        value = fr.c_number(cell["value"])
        if value is None:
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{line}: value {cell['value']!r} is "
                                   "not a number")
        if not (math.isfinite(value) and value > 0):
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{line}: value must be a positive "
                                   f"number, got {cell['value']}")
        if not cell["source"]:
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{line}: empty source")
        out.append(RefRow(line, kv, metric, value, cell["source"], cell.get("note", ""), ops))
    if not out:
        raise fr.AnalysisError(fr.EX_DATAERR, f"{path}: no reference rows")
    return keys, out


def match(df: pd.DataFrame, ref: RefRow) -> pd.DataFrame:
    mask = np.ones(len(df), dtype=bool)
    for k, v in ref.keys.items():
        if v == "":
            continue
        col = df[k]
        if col.dtype == object:
            mask &= (col.astype(str) == v).to_numpy()
        else:
            x = fr.c_number(v)
            mask &= (np.abs(col.to_numpy(dtype=float) - x) <= 1e-9 * max(1.0, abs(x)))
    return df[mask]


def model_band(ref: RefRow, m: pd.DataFrame) -> tuple[float, float] | None:
    """The model band of a `tokens_per_s` reference row: the means of its
    matching points' tokens_per_s_model_lo and _hi (the phone's standing
    variants), or None where the metric is another or the band is missing or
    not finite."""
    cols = ("tokens_per_s_model_lo", "tokens_per_s_model_hi")
    if ref.metric != "tokens_per_s" or any(c not in m.columns for c in cols):
        return None
    lo, hi = (float(pd.to_numeric(m[c], errors="coerce").mean()) for c in cols)
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        return None
    return lo, hi


def in_band(value: float, band: tuple[float, float]) -> bool:
    """Whether a measured value lies in [lo, hi], both ends included."""
    return band[0] <= value <= band[1]


TABLE5_SOURCE = "Lever Table 5"


def table5(keys: list[str], recs: list[tuple[RefRow, float, int, float]],
           missing: list[RefRow]) -> str:
    """The "Table 5" section for the reference rows whose source starts with
    "Lever Table 5" ("" when there are none): rows draft x policy, one column
    per trace, each cell "predicted / measured (error)"; a row no result
    matched shows "— / measured (not simulated)".

    When every such row has a note and the notes name one cell per draft x
    policy (Lever's benchmarks: MBPP, GSM8K, MT-Bench, whose traces differ per
    draft: workload-code-strong / -weak), the columns are the notes, as in the
    paper, and a line says which traces each column holds.  The rows also
    show the metric when there are several, and further key columns only
    where two reference rows would otherwise share a cell."""
    got = {id(r): (p, e) for r, p, _, e in recs}
    rows = sorted((r for r in [r for r, *_ in recs] + missing
                   if r.source.startswith(TABLE5_SOURCE)), key=lambda r: r.line)
    if not rows:
        return ""

    def key(r: RefRow, k: str) -> str:
        if k == "metric":
            return r.metric
        return r.keys.get(k, "") or "*"

    base = ["draft", "policy"]  # "*" where the reference has no such key
    if len({r.metric for r in rows}) > 1:
        base.append("metric")

    def clashes(dims: list[str], col) -> bool:
        cells = [(tuple(key(r, k) for k in dims), col(r)) for r in rows]
        return len(set(cells)) < len(cells)

    by_note = all(r.note for r in rows) and not clashes(base, lambda r: r.note)
    col = (lambda r: r.note) if by_note else (lambda r: key(r, "trace"))
    dims = list(base)
    for k in keys:  # further row keys, only as many as needed
        if not clashes(dims, col):
            break
        if k not in dims and (k != "trace" or by_note) and len({key(r, k) for r in rows}) > 1:
            dims.append(k)
    columns = list(dict.fromkeys(col(r) for r in rows))
    grid: dict[tuple[str, ...], dict[str, list[str]]] = {}
    for r in rows:
        if id(r) in got:
            p, e = got[id(r)]
            cell = f"{fr.fmt_num(p)} / {fr.fmt_num(r.value)} ({pct(e)})"
        else:
            cell = f"— / {fr.fmt_num(r.value)} (not simulated)"
        grid.setdefault(tuple(key(r, k) for k in dims), {}).setdefault(col(r), []).append(cell)
    metrics = list(dict.fromkeys(r.metric for r in rows))
    what = "decode throughput, tokens/s" if metrics == ["tokens_per_s"] else \
        ", ".join(f"`{m}`" for m in metrics)
    out = [f"\n## Table 5\n\nReference rows from {TABLE5_SOURCE}: {what}; each cell "
           "predicted / measured (relative error).\n\n"]
    if by_note and "trace" in keys:
        out.append("Columns are the benchmarks the rows' notes name; their traces: " +
                   "; ".join(f"{c}: " + ", ".join(dict.fromkeys(key(r, "trace") for r in rows
                                                                 if col(r) == c))
                             for c in columns) + ".\n\n")
    out.append(fr.md_table(dims + columns,
                           [list(d) + ["; ".join(cells.get(c, ["—"])) for c in columns]
                            for d, cells in grid.items()]))
    return "".join(out)


def geo_err(errs: list[float]) -> float:
    return math.exp(sum(math.log1p(abs(e)) for e in errs) / len(errs)) - 1 if errs else math.nan


def bias(pairs: list[tuple[float, float]]) -> float:
    r = [math.log(p / m) for p, m in pairs if p > 0]
    return math.exp(sum(r) / len(r)) - 1 if r else math.nan


def pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{100 * x:+.1f}%"


def apct(x: float) -> str:
    return "—" if math.isnan(x) else f"{100 * x:.1f}%"


BAND = 0.10  # the shaded band of the error figure: +-10%


def row_label(ref: RefRow, keys: list[str], vary: list[str]) -> str:
    """A reference row as the error figure names it: its source, the key
    values that differ between the rows and its metric."""
    parts = [ref.source] if ref.source else []
    for k in vary:
        v = ref.keys.get(k, "")
        if v:
            parts.append(v if fr.c_number(v) is None else f"{k}={v}")
    parts.append(ref.metric)
    return " · ".join(parts)


def error_figure(keys: list[str], recs: list, geo: float):
    """(simulated - measured) / measured of every compared reference row as a
    dot (a row per reference row, a colour and marker per metric), a line
    at 0 and the +-10% band shaded."""
    vary = [k for k in keys if len({r.keys.get(k, "") for r, *_ in recs}) > 1]
    labels = [row_label(r, keys, vary) for r, *_ in recs]
    errs = np.array([100 * e for *_, e in recs], dtype=float)
    n = len(recs)
    longest = max(len(lb) for lb in labels)
    fig, ax = plt.subplots(figsize=(4.5 + 0.07 * longest, max(3.2, 0.24 * n + 1.8)),
                           constrained_layout=True)
    ax.axvspan(-100 * BAND, 100 * BAND, color=fs.CONTEXT_COLOURS[6], alpha=0.25,
               linewidth=0, label=f"within ±{100 * BAND:g}%")
    ax.axvline(0, color="black", linewidth=0.8)
    metrics = list(dict.fromkeys(r.metric for r, *_ in recs))
    for k, met in enumerate(metrics):
        st = fs.style(k + (1 if k >= 6 else 0))  # CONTEXT_COLOURS[6] is the band's
        idx = [i for i, (r, *_) in enumerate(recs) if r.metric == met]
        ax.scatter(errs[idx], idx, label=met, s=30, zorder=3, color=st["color"],
                   marker=st["marker"])
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels)
    ax.set_ylim(n - 0.5, -0.5)
    pad = 0.08 * max(3 * 100 * BAND, float(np.ptp(errs)) if n else 0)
    ax.set_xlim(min(-1.5 * 100 * BAND, float(np.min(errs)) - pad if n else 0),
                max(1.5 * 100 * BAND, float(np.max(errs)) + pad if n else 0))
    ax.set_xlabel("relative error (simulated − published) / published (%)")
    ax.set_ylabel("reference row")
    ax.set_title(f"geometric-mean relative error {apct(geo)}; "
                 f"{int(np.sum(np.abs(errs) <= 100 * BAND))} of {n} rows within "
                 f"±{100 * BAND:g}%")
    ax.grid(alpha=0.3, axis="x")
    hs, ls = ax.get_legend_handles_labels()
    fs.finish(fig, "Relative error of each reference row", None, None, hs, ls,
              legend_title="metric")
    fs.declare(fig, metrics)
    return fig


def build(results_dir: str, ref_path: str, strict: bool,
          out_dir: str | None = None) -> tuple[dict[str, bytes], float]:
    out_dir = out_dir or os.path.join(results_dir, "fidelity")
    df, src = fr.load_results(results_dir)
    # the key tree_nodes is a fixed tree's size, as the C reader derives it
    df = df.assign(tree_nodes=fr.reference_tree_nodes(df))
    keys, refs = load_reference(ref_path, df)
    recs, missing = [], []
    bands: dict[int, tuple[float, float] | None] = {}
    for ref in refs:
        m = match(df, ref)
        if m.empty:
            if strict:
                raise fr.AnalysisError(fr.EX_DATAERR, f"{ref_path}:{ref.line}: no result row "
                                       f"of {src} matches "
                                       + ", ".join(f"{k}={v}" for k, v in ref.keys.items() if v))
            missing.append(ref)
            continue
        vals = fr.eval_metric(ref.ops, m)
        bad = ~np.isfinite(vals.to_numpy(dtype=float))
        if bad.any():
            row = m[bad].iloc[0]
            point = " ".join(f"{c}={fr.fmt_num(row[c])}"
                             for c in ("variant", "target", "draft", "device", "trace",
                                       "dram_fraction") if c in m.columns)
            raise fr.AnalysisError(fr.EX_DATAERR, f"{ref_path}:{ref.line}: metric "
                                   f"'{ref.metric}' is not a finite number for a matching "
                                   f"result row ({point}): a division by zero?")
        pred = float(vals.mean())
        recs.append((ref, pred, len(m), (pred - ref.value) / ref.value))
        bands[id(ref)] = model_band(ref, m)
    if not recs:
        raise fr.AnalysisError(fr.EX_DATAERR, f"{ref_path}: no result row of {src} matches any "
                               "reference row (check the key columns against the results)")
    for ref in missing:
        print(f"fidelity.py: {ref_path}:{ref.line}: no matching result row (listed as not "
              "simulated)", file=sys.stderr)

    # per-point table (markdown + CSV)
    head = keys + ["metric", "measured", "predicted", "error", "points", "source", "model band"]
    md_rows, csv_rows = [], []
    for ref, pred, n, e in recs:
        kv = [ref.keys[k] or "*" for k in keys]
        band = bands.get(id(ref))
        inside = band is not None and in_band(ref.value, band)
        md_rows.append(kv + [f"`{ref.metric}`", fr.fmt_num(ref.value), fr.fmt_num(pred), pct(e),
                             str(n), ref.source,
                             "—" if band is None else
                             f"[{fr.fmt_num(band[0])}, {fr.fmt_num(band[1])}] "
                             + ("holds it" if inside else "misses")])
        csv_rows.append([ref.keys[k] for k in keys] +
                        [ref.metric, repr(ref.value), repr(pred), repr(e), n, ref.source] +
                        (["", "", ""] if band is None else
                         [repr(band[0]), repr(band[1]), "1" if inside else "0"]))
    banded = [(r, bands[id(r)]) for r, *_ in recs if bands.get(id(r)) is not None]
    held = sum(1 for r, b in banded if in_band(r.value, b))
    band_line = (f"**Model band: {held} of {len(banded)}** released `tokens_per_s` points lie "
                 "within the simulated band (the mean `tokens_per_s_model_lo` to "
                 "`tokens_per_s_model_hi` of their points: the phone's standing variants).\n\n"
                 if banded else
                 "The results carry no model band (`tokens_per_s_model_lo` / `_hi`) for a "
                 "`tokens_per_s` reference row.\n\n")
    all_err = [e for *_, e in recs]
    pairs = [(p, r.value) for r, p, _, _ in recs]
    summary = [["all", len(recs), apct(geo_err(all_err)),
                apct(float(np.mean(np.abs(all_err)))), apct(float(np.max(np.abs(all_err)))),
                pct(bias(pairs))]]
    for label, attr in (("metric", "metric"), ("source", "source")):
        for val in dict.fromkeys(getattr(r, attr) for r, *_ in recs):
            sub = [(r, p, e) for r, p, _, e in recs if getattr(r, attr) == val]
            errs = [e for *_, e in sub]
            summary.append([f"{label} `{val}`" if label == "metric" else f"{label}: {val}",
                            len(sub), apct(geo_err(errs)), apct(float(np.mean(np.abs(errs)))),
                            apct(float(np.max(np.abs(errs)))),
                            pct(bias([(p, r.value) for r, p, _ in sub]))])
    geo = geo_err(all_err)
    md = [f"# Fidelity: {fr.md_escape(os.path.basename(os.path.normpath(results_dir)))} vs "
          f"{fr.md_escape(os.path.basename(ref_path))}\n\n",
          f"Simulated: `{fr.md_code(os.path.relpath(src, out_dir))}`. Reference: "
          f"`{fr.md_code(os.path.relpath(ref_path, out_dir))}` (both relative to this file), "
          f"{len(refs)} rows, {len(recs)} compared.\n\n",
          f"**Geometric-mean relative error: {apct(geo)}** over {len(recs)} points "
          "(exp(mean ln(1 + |e|)) − 1 with e = (predicted − measured) / measured; bias = "
          "geometric mean of predicted / measured − 1).\n\n",
          band_line,
          "## Summary\n\n",
          fr.md_table(["set", "points", "geomean error", "mean abs error", "max abs error",
                       "bias"], summary),
          "\n## Per point\n\n![relative error per reference row](fidelity.png)\n\n",
          fr.md_table(head, md_rows)]
    t5 = table5(keys, recs, missing)
    if t5:
        md.append(t5)
    if missing:
        md.append("\n## Not simulated\n\nReference rows without a matching result row:\n\n")
        md.append(fr.md_table(["line"] + keys + ["metric", "value", "source"],
                              [[str(r.line)] + [r.keys[k] or "*" for k in keys] +
                               [r.metric, fr.fmt_num(r.value), r.source] for r in missing]))

    # relative error per reference row, a dot each, the +-10% band shaded
    fig = error_figure(keys, recs, geo)
    png = fr.fig_bytes(fig, keep=True)
    checks = {"fidelity.png": fs.figure_problems(fig, "fidelity.png")}
    plt.close(fig)

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(keys + ["metric", "measured", "predicted", "rel_error", "points", "source",
                       "band_lo", "band_hi", "in_band"])
    w.writerows(csv_rows)
    return {"fidelity.md": "".join(md).encode(), "fidelity.csv": buf.getvalue().encode(),
            "fidelity.png": png,
            "figcheck.json": (json.dumps(checks, indent=1) + "\n").encode()}, geo


def main(argv: list[str] | None = None, prog: str = "fidelity.py") -> int:
    ap = argparse.ArgumentParser(prog=prog,
                                 description="Relative error of simulated points against "
                                 "reference measurements.")
    ap.add_argument("results_dir", metavar="RESULTS_DIR")
    ap.add_argument("reference", metavar="REFERENCE.csv")
    ap.add_argument("-o", "--output", metavar="OUT",
                    help="output directory (default: RESULTS_DIR/fidelity)")
    ap.add_argument("--strict", action="store_true",
                    help="every reference row must match a result row")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return fr.EX_USAGE if e.code else 0

    def body() -> None:
        out = args.output or os.path.join(args.results_dir, "fidelity")
        files, geo = build(args.results_dir, args.reference, args.strict, out)
        fr.write_outputs(out, files, stale=OUTPUTS)
        print(f"{prog}: geometric-mean relative error {apct(geo)}; wrote "
              f"{os.path.join(out, 'fidelity.md')}", file=sys.stderr)

    return fr.run_main(prog, body)


if __name__ == "__main__":
    sys.exit(main())
