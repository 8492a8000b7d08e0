#!/usr/bin/python3
"""Markdown tables and PNG figures of one flashspec results directory.

    analysis/report.py RESULTS_DIR [-o OUT]

Reads RESULTS_DIR/results.csv (or results.h5) and writes OUT/report.md
(default OUT: RESULTS_DIR/report) with the PNG figures next to it:

    throughput_vs_dram.png   tokens/s against dram_fraction, one line per series
    latency_breakdown.png    per-cycle draft / flash / NPU / CPU / KV / idle, stacked
    throughput_vs_tree.png   tokens/s against the tree budget
    pruning_tradeoff.png     rows kept against retention and tokens/s
    accepted_length.png      distribution of accepted draft tokens per cycle

A figure whose columns or variation the results lack is skipped with a note in
the markdown.  A series is one combination of the other parameters that vary
in the results.  When the results carry tokens_per_s_lo / tokens_per_s_hi
(95% confidence interval), the tables show them and the figures draw them.

Exit codes: 0 ok, 64 usage, 65 malformed results, 66 missing results,
73 cannot write OUT (nothing is written unless every input is valid).
"""
from __future__ import annotations

import argparse
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import fsresults as fr  # noqa: E402
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

FIGURES = ["throughput_vs_dram.png", "latency_breakdown.png", "throughput_vs_tree.png",
           "pruning_tradeoff.png", "accepted_length.png"]
BREAKDOWN = [("draft_ms", "draft"), ("flash_ms", "flash I/O"), ("npu_ms", "NPU"),
             ("cpu_ms", "CPU"), ("kv_ms", "KV"), ("idle_ms", "idle")]
MAX_BARS = 40
MAX_TABLE_ROWS = 400


def has_ci(df: pd.DataFrame) -> bool:
    return "tokens_per_s_lo" in df.columns and "tokens_per_s_hi" in df.columns


def tput_cells(row: pd.Series, ci: bool) -> list:
    cells = [row["tokens_per_s"]]
    if ci:
        cells += [row["tokens_per_s_lo"], row["tokens_per_s_hi"]]
    return cells


def tput_header(ci: bool) -> list[str]:
    return ["tokens/s"] + (["95% CI lo", "95% CI hi"] if ci else [])


def yerr_of(sub: pd.DataFrame, ci: bool):
    if not ci:
        return None
    lo = (sub["tokens_per_s"] - sub["tokens_per_s_lo"]).clip(lower=0)
    hi = (sub["tokens_per_s_hi"] - sub["tokens_per_s"]).clip(lower=0)
    return np.vstack([lo.to_numpy(), hi.to_numpy()])


# ------------------------------------------------------------------ sections

def section_points(df: pd.DataFrame, labels: list[str], ci: bool) -> str:
    extra = [c for c in ("ms_per_token", "mean_accepted", "cycle_ms", "verify_rows")
             if c in df.columns]
    header = (labels or ["point"]) + tput_header(ci) + extra
    rows = []
    for i, r in df.head(MAX_TABLE_ROWS).iterrows():
        lab = [r[c] if c in fr.STRING_COLUMNS else fr.fmt_num(r[c]) for c in labels] or [str(i)]
        rows.append(lab + tput_cells(r, ci) + [r[c] for c in extra])
    md = "## Points\n\n" + fr.md_table(header, rows)
    if len(df) > MAX_TABLE_ROWS:
        md += f"\n({len(df) - MAX_TABLE_ROWS} more points not listed.)\n"
    return md + "\n"


def section_dram(df: pd.DataFrame, ci: bool, figs: dict[str, bytes]) -> str:
    md = "## Throughput vs DRAM budget\n\n"
    if "dram_fraction" not in df.columns or df["dram_fraction"].nunique() < 2:
        return md + ("Skipped: the results hold a single `dram_fraction` "
                     "(sweep `dram_fraction` to get this figure).\n\n")
    series = fr.label_columns(df, exclude=["dram_fraction"])
    rows = []
    groups = fr.groups(df, series)
    for key, sub in groups:
        sub = sub.sort_values("dram_fraction")
        name = fr.label_of(sub.iloc[0], series)
        for _, r in sub.iterrows():
            rows.append([name, 100 * r["dram_fraction"]] + tput_cells(r, ci))
    pol = "variant" if "variant" in series else "policy" if "policy" in series else None
    panel = "target" if "target" in series and pol else None
    if len(groups) > 12 and pol:
        # too many series for one legend: a panel per target, a line per policy,
        # the geometric mean over the other parameters (workloads, phones, ...)
        keys = list(dict.fromkeys(df[panel])) if panel else [None]
        fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys) + 1, 4.2), squeeze=False,
                                 sharey=True)
        for ax, k in zip(axes[0], keys):
            sub = df[df[panel] == k] if panel else df
            for name in dict.fromkeys(sub[pol]):
                g = sub[sub[pol] == name].groupby("dram_fraction", sort=True)["tokens_per_s"]
                gm = g.apply(lambda v: float(np.exp(np.log(v.astype(float)).mean())))
                ax.plot(100 * gm.index.to_numpy(dtype=float), gm.to_numpy(), marker="o",
                        label=str(name))
            ax.set_title(str(k) if k is not None else "all", fontsize=9)
            ax.set_xlabel("target layers pinned in DRAM (%)")
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("decode throughput (tokens/s, geometric mean)")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
    else:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for key, sub in groups:
            sub = sub.sort_values("dram_fraction")
            x = 100 * sub["dram_fraction"].to_numpy(dtype=float)
            ax.errorbar(x, sub["tokens_per_s"], yerr=yerr_of(sub, ci), marker="o", capsize=3,
                        label=fr.label_of(sub.iloc[0], series))
        ax.set_xlabel("target layers pinned in DRAM (%)")
        ax.set_ylabel("decode throughput (tokens/s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    figs["throughput_vs_dram.png"] = fr.fig_bytes(fig)
    return (md + "![throughput vs DRAM budget](throughput_vs_dram.png)\n\n" +
            fr.md_table(["series", "DRAM %"] + tput_header(ci), rows) + "\n")


def section_breakdown(df: pd.DataFrame, labels: list[str], figs: dict[str, bytes]) -> str:
    md = "## Latency breakdown per cycle\n\n"
    missing = [c for c, _ in BREAKDOWN if c not in df.columns]
    if missing:
        return md + f"Skipped: the results lack {', '.join(missing)}.\n\n"
    sub = df
    note = ""
    if len(sub) > MAX_BARS and "dram_fraction" in sub.columns:
        sub = sub[sub["dram_fraction"] == sub["dram_fraction"].min()]
        note = f"Only the points at dram_fraction = {fr.fmt_num(sub['dram_fraction'].iloc[0])}. "
    if len(sub) > MAX_BARS:
        note += f"Only the first {MAX_BARS} points. "
        sub = sub.head(MAX_BARS)
    names = [fr.label_of(r, labels) if labels else str(i) for i, r in sub.iterrows()]
    # KV work is part of the CPU's busy time: the CPU segment shows the rest
    parts = {"draft": sub["draft_ms"], "flash I/O": sub["flash_ms"], "NPU": sub["npu_ms"],
             "CPU": (sub["cpu_ms"] - sub["kv_ms"]).clip(lower=0), "KV": sub["kv_ms"],
             "idle": sub["idle_ms"]}
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(sub) + 2), 4.8))
    bottom = np.zeros(len(sub))
    for name, vals in parts.items():
        v = vals.to_numpy(dtype=float)
        ax.bar(range(len(sub)), v, bottom=bottom, label=name)
        bottom += v
    if "cycle_ms" in sub.columns:
        ax.scatter(range(len(sub)), sub["cycle_ms"], marker="_", s=300, color="black",
                   zorder=3, label="cycle wall time")
    ax.set_xticks(range(len(sub)))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("ms per cycle")
    ax.legend(fontsize=7)
    figs["latency_breakdown.png"] = fr.fig_bytes(fig)
    header = ["point"] + [n for n in parts] + (["cycle"] if "cycle_ms" in sub.columns else [])
    rows = []
    for k, (_, r) in enumerate(sub.iterrows()):
        rows.append([names[k]] + [float(parts[n].iloc[k]) for n in parts] +
                    ([r["cycle_ms"]] if "cycle_ms" in sub.columns else []))
    return (md + note + "Segments are busy times of each resource per cycle (ms; drafting is "
            "the wall time of the draft phase, whose work also counts on its unit; CPU "
            "excludes the KV work shown apart); resources overlap, so a bar can exceed the "
            "cycle's wall time (black tick).\n\n"
            "![latency breakdown](latency_breakdown.png)\n\n" + fr.md_table(header, rows) +
            "\n")


def section_tree(df: pd.DataFrame, ci: bool, figs: dict[str, bytes]) -> str:
    md = "## Throughput vs tree budget\n\n"
    d = df[~df["tree_budget"].isna()]
    series = fr.label_columns(d, exclude=["variant"])
    if "variant" in fr.label_columns(d) and "policy" not in series:
        series.insert(0, "policy")
    groups = fr.groups(d, series)
    groups = [(k, s) for k, s in groups if s["tree_budget"].nunique() >= 2]
    if not groups:
        return md + ("Skipped: no series of points varies the tree budget (the node count "
                     "of chain k, eagle2 total_tokens, specinfer widths, opt_tree nodes, "
                     "sequoia max_nodes or lever n_max).\n\n")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    rows = []
    for _, sub in groups:
        sub = sub.sort_values("tree_budget")
        name = fr.label_of(sub.iloc[0], series)
        ax.errorbar(sub["tree_budget"], sub["tokens_per_s"], yerr=yerr_of(sub, ci), marker="o",
                    capsize=3, label=name)
        for _, r in sub.iterrows():
            rows.append([name, r["tree_budget"],
                         r["verify_rows"] if "verify_rows" in r else math.nan] +
                        tput_cells(r, ci) +
                        [r["mean_accepted"] if "mean_accepted" in r else math.nan])
    ax.set_xlabel("tree budget (nodes, root included)")
    ax.set_ylabel("decode throughput (tokens/s)")
    ax.grid(alpha=0.3)
    if len(groups) <= 12:
        ax.legend(fontsize=7)
    figs["throughput_vs_tree.png"] = fr.fig_bytes(fig)
    return (md + "![throughput vs tree budget](throughput_vs_tree.png)\n\n" +
            fr.md_table(["series", "budget", "rows/cycle"] + tput_header(ci) +
                        ["accepted/cycle"], rows) + "\n")


def section_pruning(df: pd.DataFrame, labels: list[str], ci: bool,
                    figs: dict[str, bytes]) -> str:
    md = "## Pruning trade-off\n\n"
    missing = [c for c in ("rows_kept", "retention") if c not in df.columns]
    if missing:
        return md + f"Skipped: the results lack {', '.join(missing)}.\n\n"
    d = df[df["rows_kept"] < 1 - 1e-12]
    if d.empty:
        return md + ("Skipped: no point pruned any row (rows_kept = 1 everywhere; "
                     "lever's `pruning` switch prunes).\n\n")
    # the pruned points and the unpruned points of the same policies
    d = df[df["policy"].isin(d["policy"].unique())]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.2))
    rows = []
    for pol, sub in d.groupby("variant", sort=False):
        a1.scatter(sub["rows_kept"], sub["retention"], label=pol)
        a2.errorbar(sub["rows_kept"], sub["tokens_per_s"], yerr=yerr_of(sub, ci), fmt="o",
                    capsize=3, label=pol)
    for _, r in d.iterrows():
        rows.append([fr.label_of(r, labels) if labels else r["policy"], r["rows_kept"],
                     r["retention"]] + tput_cells(r, ci))
    a1.set_xlabel("rows kept past the exit layer")
    a1.set_ylabel("retention (accepted vs unpruned)")
    a2.set_xlabel("rows kept past the exit layer")
    a2.set_ylabel("decode throughput (tokens/s)")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    figs["pruning_tradeoff.png"] = fr.fig_bytes(fig)
    return (md + "![pruning trade-off](pruning_tradeoff.png)\n\n" +
            fr.md_table(["point", "rows kept", "retention"] + tput_header(ci), rows) + "\n")


def parse_hist(s) -> list[float] | None:
    """accepted_hist cell: ';'-separated cycle counts by accepted length 0, 1, ..."""
    try:
        return [float(x) for x in str(s).split(";") if x != ""]
    except ValueError:
        return None


def section_accepted(df: pd.DataFrame, labels: list[str], figs: dict[str, bytes]) -> str:
    md = "## Accepted length\n\n"
    d = df[df["policy"] != "flash_ar"]
    if "mean_accepted" not in df.columns or d.empty:
        return md + "Skipped: no drafting point (only Flash-AR, or no `mean_accepted`).\n\n"
    if "accepted_hist" in d.columns:
        # per-cycle distribution per policy variant: the histograms of its points summed
        fig, ax = plt.subplots(figsize=(7, 4.5))
        rows = []
        for name in list(dict.fromkeys(d["variant"]))[:12]:
            total: list[float] = []
            for _, r in d[d["variant"] == name].iterrows():
                h = parse_hist(r["accepted_hist"]) or []
                total += [0.0] * (len(h) - len(total))
                for k, x in enumerate(h):
                    total[k] += x
            if not total or sum(total) <= 0:
                continue
            p = np.asarray(total) / sum(total)
            ax.plot(range(len(p)), p, marker="o", label=name)
            rows.append([name] + [f"{x:.3f}" for x in p])
        ax.set_xlabel("accepted draft tokens in a cycle")
        ax.set_ylabel("share of cycles")
        ax.legend(fontsize=7)
        figs["accepted_length.png"] = fr.fig_bytes(fig)
        width = max(len(r) for r in rows) - 1 if rows else 0
        return (md + "Per-cycle distribution (`accepted_hist`, summed over each policy's "
                "points).\n\n![accepted length](accepted_length.png)\n\n" +
                fr.md_table(["policy"] + [str(k) for k in range(width)],
                            [r + [""] * (width + 1 - len(r)) for r in rows]) + "\n")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    pols = list(dict.fromkeys(d["variant"]))
    data = [d[d["variant"] == p]["mean_accepted"].to_numpy(dtype=float) for p in pols]
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(range(1, len(pols) + 1))
    ax.set_xticklabels(pols, rotation=30, ha="right", fontsize=7)
    for k, v in enumerate(data, start=1):
        ax.scatter(np.full(len(v), k), v, s=12, alpha=0.6, color="gray", zorder=3)
    ax.set_ylabel("mean accepted draft tokens per cycle (per point)")
    ax.grid(alpha=0.3, axis="y")
    figs["accepted_length.png"] = fr.fig_bytes(fig)
    rows = []
    for p, v in zip(pols, data):
        sub = d[d["variant"] == p]
        tpc = sub["tokens_per_cycle"].mean() if "tokens_per_cycle" in sub else math.nan
        rows.append([p, len(v), float(np.min(v)), float(np.median(v)), float(np.mean(v)),
                     float(np.max(v)), tpc])
    return (md + "The results hold per-point means only (`mean_accepted`), so this is their "
            "spread across the points of each policy, not the per-cycle distribution (which "
            "needs an `accepted_hist` column).\n\n![accepted length](accepted_length.png)\n\n" +
            fr.md_table(["policy", "points", "min", "median", "mean", "max",
                         "tokens/cycle (mean)"], rows) + "\n")


# ---------------------------------------------------------------------- main

def build(results_dir: str) -> tuple[str, dict[str, bytes]]:
    df, src = fr.load_results(results_dir)
    ci = has_ci(df)
    labels = fr.label_columns(df)
    figs: dict[str, bytes] = {}
    md = [f"# flashspec report: {os.path.basename(os.path.normpath(results_dir))}\n\n",
          f"Source: `{src}`, {len(df)} point{'s' if len(df) != 1 else ''}. ",
          ("Parameters that vary: " + ", ".join(f"`{c}`" for c in labels) + ". ")
          if labels else "No parameter varies. ",
          ("Throughput with its 95% confidence interval (`tokens_per_s_lo`, "
           "`tokens_per_s_hi`).\n\n") if ci else
          "The results carry no confidence interval columns.\n\n"]
    md.append(section_points(df, labels, ci))
    md.append(section_dram(df, ci, figs))
    md.append(section_breakdown(df, labels, figs))
    md.append(section_tree(df, ci, figs))
    md.append(section_pruning(df, labels, ci, figs))
    md.append(section_accepted(df, labels, figs))
    return "".join(md), figs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="report.py",
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
        md, figs = build(args.results_dir)
        out = args.output or os.path.join(args.results_dir, "report")
        files = {"report.md": md.encode()}
        files.update(figs)
        fr.write_outputs(out, files, stale=FIGURES)
        print(f"report.py: wrote {os.path.join(out, 'report.md')} and {len(figs)} "
              f"figure{'s' if len(figs) != 1 else ''}", file=sys.stderr)

    return fr.run_main("report.py", body)


if __name__ == "__main__":
    sys.exit(main())
