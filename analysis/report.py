#!/usr/bin/python3
"""Markdown tables and PNG figures of one flashspec results directory.

    analysis/report.py RESULTS_DIR [-o OUT]      (installed: flashspec-report)

Reads RESULTS_DIR/results.csv (or results.h5) and writes OUT/report.md
(default OUT: RESULTS_DIR/report) with the PNG figures next to it:

    speedup.png              speed-up over Flash-AR: grouped bars per target, workload,
                             phone, or lines against the DRAM budget / output length
    throughput.png           every point's tokens/s, grouped bars
    throughput_vs_dram.png   tokens/s against dram_fraction, a line per policy
    throughput_vs_length.png tokens/s against max_new_tokens
    latency_breakdown.png    busy times stacked, per cycle and per generated token
    throughput_vs_tree.png   tokens/s against the tree budget (nodes, root included)
    pruning_tradeoff.png     rows kept against retention and tokens/s, where only
                             `pruning` differs between points
    accepted_length.png      distribution of accepted draft tokens per cycle, a panel
                             per value of the study's variables

A figure whose columns or variation the results lack is skipped with a note in
the markdown.  A series is one combination of the other parameters that vary
in the results.  Nothing is left out silently: a series or a point a figure
cannot draw (no Flash-AR baseline, no tree budget, no result row) is named in
a note under the figure and in the markdown.  When the results carry
tokens_per_s_lo / tokens_per_s_hi (95% confidence interval), the tables show
them and the figures draw them.

Exit codes: 0 ok, 64 usage, 65 malformed results, 66 missing results,
69 a Python package it needs is missing, 73 cannot write OUT (nothing is
written unless every input is valid).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
if __name__ == "__main__":
    import depcheck  # the script's own directory is on sys.path

    depcheck.require("report.py")
if __package__:
    from . import fsresults as fr
    from .rep_common import (AS_IS, CHECKS, COLUMN_NAMES, FACET_ORDER, HELD,
        MAX_BARS, MAX_LINES, MAX_PANELS, MAX_POINTS, MAX_SERIES, MAX_TABLE_ROWS,
        SHORT_VARIANT, TRACE_NAMES, TooManySeries, chunk_title, disp, disp_of,
        drop_redundant_draft, facet_panels, fig_png, has_band, has_ci, held_fixed,
        hole_notes, legend_entries, log2_ticks, md_code, md_escape, n_combos,
        names_of, notes_md, panel_title, readable_traces, register, series_guarded,
        short_variants, split_facets, synth_settings, tput_cells, tput_header,
        tuned_knobs, where_it_varies, with_held, yerr_of)  # noqa: F401
    from .rep_lines import (line_figure, section_dram, section_length)  # noqa: F401
    from .rep_bars import (bar_figure, bar_layout, geomean, section_points,
        section_throughput)  # noqa: F401
    from .rep_speedup import (section_speedup, speedup_baselines, speedup_frame)  # noqa: F401
    from .rep_breakdown import (BREAKDOWN, MAX_BREAKDOWN, section_breakdown)  # noqa: F401
    from .rep_tree import (TREE_PARAM, pruning_sets, section_pruning, section_tree,
        tree_series)  # noqa: F401
    from .rep_accepted import (ACCEPT_FACETS, MAX_ACCEPT_PANELS, accepted_bars,
        accepted_facets, parse_hist, section_accepted)  # noqa: F401
else:  # run as a script, or imported with analysis/ on sys.path
    import fsresults as fr  # noqa: E402
    from rep_common import (AS_IS, CHECKS, COLUMN_NAMES, FACET_ORDER, HELD,
        MAX_BARS, MAX_LINES, MAX_PANELS, MAX_POINTS, MAX_SERIES,
        MAX_TABLE_ROWS, SHORT_VARIANT, TRACE_NAMES, TooManySeries, chunk_title,
        disp, disp_of, drop_redundant_draft, facet_panels, fig_png, has_band,
        has_ci, held_fixed, hole_notes, legend_entries, log2_ticks, md_code,
        md_escape, n_combos, names_of, notes_md, panel_title, readable_traces,
        register, series_guarded, short_variants, split_facets, synth_settings,
        tput_cells, tput_header, tuned_knobs, where_it_varies, with_held,
        yerr_of)  # noqa: E402,F401
    from rep_lines import (line_figure, section_dram, section_length)  # noqa: E402,F401
    from rep_bars import (bar_figure, bar_layout, geomean, section_points,
        section_throughput)  # noqa: E402,F401
    from rep_speedup import (section_speedup, speedup_baselines, speedup_frame)  # noqa: E402,F401
    from rep_breakdown import (BREAKDOWN, MAX_BREAKDOWN, section_breakdown)  # noqa: E402,F401
    from rep_tree import (TREE_PARAM, pruning_sets, section_pruning,
        section_tree, tree_series)  # noqa: E402,F401
    from rep_accepted import (ACCEPT_FACETS, MAX_ACCEPT_PANELS, accepted_bars,
        accepted_facets, parse_hist, section_accepted)  # noqa: E402,F401
import pandas as pd  # noqa: E402

FIGURES = ["speedup.png", "throughput.png", "throughput_vs_dram.png",
           "throughput_vs_length.png", "latency_breakdown.png", "throughput_vs_tree.png",
           "pruning_tradeoff.png", "accepted_length.png"]


def check_section(checks: dict[str, list[str]]) -> str:
    """The figure checker's verdict on every figure written."""
    if not checks:
        return ""
    rows = [[name, "ok" if not probs else f"{len(probs)} problem" + ("s" if len(probs) > 1
                                                                      else ""),
             "; ".join(p.split(": ", 1)[-1] for p in probs)]
            for name, probs in checks.items()]
    return ("## Figure check\n\nEvery figure checked (`figstyle.figure_problems`): values "
            "within the axes, legends at most a quarter of the plot, canonical policy names, "
            "no panel that pools targets, workloads or phones, one colour per policy.\n\n" +
            fr.md_table(["figure", "verdict", "problems"], rows) + "\n")


def standing_variant_replays(df: pd.DataFrame, labels: list[str]
                             ) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The points the figures draw, their varying parameters and the devices
    left out: a device named PHONE~VARIANT (`dev:variant "VARIANT"`, a standing
    variant of the phone's profile) is left out when PHONE's own points are in
    the results -- its points are the model band of PHONE's comparisons, not
    points of their own, and drawn beside them they would multiply every
    figure's bars by the number of variants."""
    if "device" not in df.columns:
        return df, labels, []
    devices = set(df["device"].astype(str))
    base = df["device"].astype(str).str.extract(r"^(.+)~[^~]+$")[0]
    drop = base.notna() & base.isin(devices)
    if not drop.any():
        return df, labels, []
    out = df[~drop]
    left = sorted(set(df.loc[drop, "device"].astype(str)))
    return out, fr.label_columns(out), left


def build(results_dir: str, out_dir: str | None = None) -> tuple[str, dict[str, bytes]]:
    out_dir = out_dir or os.path.join(results_dir, "report")
    df, src = fr.load_results(results_dir)
    CHECKS.clear()
    total = len(df)
    sampled = ""
    if total > MAX_POINTS:
        # an evenly spaced sample, said so at the top: the whole file would
        # take minutes and no figure could show it
        step = math.ceil(total / MAX_POINTS)
        df = df.iloc[::step]
        sampled = (f"**Sampled:** the results hold {total} points; the tables and figures below "
                   f"show every {step}th of them ({len(df)} points: rows 1, {1 + step}, "
                   f"{1 + 2 * step}, ... of the results file).\n\n")
        print(f"report.py: {src}: {total} points; drawing every {step}th ({len(df)})",
              file=sys.stderr)
    ci = has_ci(df)
    labels = fr.label_columns(df)
    SHORT_VARIANT.clear()
    SHORT_VARIANT.update(short_variants(df))
    TRACE_NAMES.clear()
    TRACE_NAMES.update(readable_traces(df, synth_settings(results_dir)))
    figs: dict[str, bytes] = {}
    md = [f"# flashspec report: {md_escape(os.path.basename(os.path.normpath(results_dir)))}"
          "\n\n",
          f"Source: `{md_code(os.path.relpath(src, out_dir))}` (relative to this file), "
          f"{len(df)} point{'s' if len(df) != 1 else ''}. ",
          ("Parameters that vary: " + ", ".join(f"`{md_code(c)}`" for c in labels) + ". ")
          if labels else "No parameter varies. ",
          ("Throughput with its 95% confidence interval (`tokens_per_s_lo`, "
           "`tokens_per_s_hi`).\n\n") if ci else
          "The results carry no confidence interval columns.\n\n"]
    if sampled:
        md.append(sampled)
    if TRACE_NAMES:
        md.append("Traces named by a checksum are shown in the figures as: " +
                  ", ".join(f"{md_escape(v)} = `{md_code(k)}`" for k, v in TRACE_NAMES.items())
                  + ".\n\n")
    md.append(section_points(df, labels, ci))
    fdf, flabels, replays = standing_variant_replays(df, labels)
    if replays:
        md.append(f"The figures below leave out the {len(df) - len(fdf)} points that replay "
                  "a phone's standing variants (" + ", ".join(f"`{md_code(d)}`" for d in replays)
                  + "): they are the same comparisons on each model the calibration data "
                  "cannot rule out, the model band of a gain; the table above lists them, "
                  "and each phone's own points carry their band in "
                  "`tokens_per_s_model_lo` / `_hi`.\n\n")
    md.append(section_speedup(fdf, figs))
    md.append(section_throughput(fdf, flabels, ci, figs))
    md.append(section_dram(fdf, ci, figs))
    md.append(section_length(fdf, ci, figs))
    md.append(section_breakdown(fdf, flabels, figs))
    md.append(section_tree(fdf, ci, figs))
    md.append(section_pruning(fdf, flabels, ci, figs))
    md.append(section_accepted(fdf, flabels, figs))
    md.append(check_section(CHECKS))
    return "".join(md), figs


def main(argv: list[str] | None = None, prog: str = "report.py") -> int:
    ap = argparse.ArgumentParser(prog=prog,
                                 description="Tables and figures of a flashspec results "
                                 "directory.")
    ap.add_argument("results_dir", metavar="RESULTS_DIR")
    ap.add_argument("-o", "--output", metavar="OUT",
                    help="output directory (default: RESULTS_DIR/report)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return fr.EX_USAGE if e.code else 0

    def body() -> None:
        out = args.output or os.path.join(args.results_dir, "report")
        md, figs = build(args.results_dir, out)
        files = {"report.md": md.encode()}
        files.update(figs)
        # the checker's verdict per figure, for scripts/reproduce
        files["figcheck.json"] = (json.dumps(CHECKS, indent=1, sort_keys=True) + "\n").encode()
        fr.write_outputs(out, files, stale=FIGURES + ["figcheck.json"])
        bad = sum(1 for p in CHECKS.values() if p)
        print(f"{prog}: wrote {os.path.join(out, 'report.md')} and {len(figs)} "
              f"figure{'s' if len(figs) != 1 else ''}; figure check: "
              f"{len(CHECKS) - bad} ok, {bad} with problems", file=sys.stderr)
        for name, probs in CHECKS.items():
            for p in probs:
                print(f"{prog}: figure check: {p}", file=sys.stderr)

    return fr.run_main(prog, body)


if __name__ == "__main__":
    sys.exit(main())
