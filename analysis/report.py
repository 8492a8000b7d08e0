#!/usr/bin/python3
"""Markdown tables and PNG figures of one flashspec results directory.

    analysis/report.py RESULTS_DIR [-o OUT]

Reads RESULTS_DIR/results.csv (or results.h5) and writes OUT/report.md
(default OUT: RESULTS_DIR/report) with the PNG figures next to it:

    speedup.png              speed-up over Flash-AR, grouped bars per target, workload, phone
    throughput.png           every point's tokens/s, grouped bars
    throughput_vs_dram.png   tokens/s against dram_fraction, a line per policy
    throughput_vs_length.png tokens/s against max_new_tokens
    latency_breakdown.png    per-cycle busy times stacked, wall time and overlap marked
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
import warnings
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import figstyle as fs  # noqa: E402
import fsresults as fr  # noqa: E402
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

FIGURES = ["speedup.png", "throughput.png", "throughput_vs_dram.png",
           "throughput_vs_length.png", "latency_breakdown.png", "throughput_vs_tree.png",
           "pruning_tradeoff.png", "accepted_length.png"]
BREAKDOWN = [("draft_ms", "draft"), ("flash_ms", "flash I/O"), ("npu_ms", "NPU"),
             ("cpu_ms", "CPU"), ("kv_ms", "KV"), ("idle_ms", "idle")]
MAX_TABLE_ROWS = 400
# a bar a series lacks in a group is NaN (not drawn): no warning about it
warnings.filterwarnings("ignore", "All-NaN", RuntimeWarning)


def has_ci(df: pd.DataFrame) -> bool:
    return "tokens_per_s_lo" in df.columns and "tokens_per_s_hi" in df.columns


def has_band(df: pd.DataFrame) -> bool:
    """The results carry a model-uncertainty band (the device profile declares
    standing variants): tokens_per_s_model_lo / _hi, finite somewhere."""
    return ("tokens_per_s_model_lo" in df.columns and "tokens_per_s_model_hi" in df.columns
            and bool(np.isfinite(df["tokens_per_s_model_lo"].astype(float)).any()))


def tput_cells(row: pd.Series, ci: bool, band: bool = False) -> list:
    cells = [row["tokens_per_s"]]
    if ci:
        cells += [row["tokens_per_s_lo"], row["tokens_per_s_hi"]]
    if band:
        cells += [row["tokens_per_s_model_lo"], row["tokens_per_s_model_hi"]]
    return cells


def tput_header(ci: bool, band: bool = False) -> list[str]:
    return (["tokens/s"] + (["95% CI lo", "95% CI hi"] if ci else []) +
            (["model lo", "model hi"] if band else []))


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


FACET_ORDER = ["target", "device", "trace", "draft", "dram_fraction", "max_new_tokens",
               "accept", "runtime", "prompts", "seed", "top_p", "temperature", "policy"]
COLUMN_NAMES = {"variant": "policy", "policy": "policy family", "target": "target",
                "device": "phone", "trace": "workload", "draft": "draft",
                "dram_fraction": "DRAM budget", "max_new_tokens": "new tokens",
                "prompts": "prompts"}
MAX_LINES = 10      # series in one panel before the figure is split into panels
MAX_PANELS = 12
MAX_BREAKDOWN = 80  # points in the latency breakdown before it averages
BREAKDOWN_DROP = ["prompts", "seed", "trace", "device", "accept", "runtime", "top_p",
                  "temperature", "draft", "max_new_tokens", "dram_fraction", "target"]


# variant -> the name figures show (see short_variants); set by build()
SHORT_VARIANT: dict[str, str] = {}


def short_variants(df: pd.DataFrame) -> dict[str, str]:
    """Figure names of the variants: the policy, plus the parameters in which
    a variant differs from the setting most variants of its policy share
    ('lever[pruning=none]' among Lever's ablations); a parameter whose every
    value is its own (a swept n_max) always shows."""
    if "policy_params" not in df.columns:
        return {}
    out = {}
    for pol, sub in df.drop_duplicates("variant").groupby("policy", sort=False):
        parsed = [fr._params(q) for q in sub["policy_params"]]
        shown = {}
        for k in dict.fromkeys(k for p in parsed for k in p):
            vals = [p.get(k) for p in parsed]
            if len(set(vals)) < 2:
                continue
            top, n = max(((v, vals.count(v)) for v in dict.fromkeys(vals)),
                         key=lambda t: t[1])
            shown[k] = top if n > 1 else None
        for v, p in zip(sub["variant"], parsed):
            keys = [k for k, mode in shown.items() if p.get(k) != mode]
            out[v] = f"{pol}[{','.join(f'{k}={p[k]}' for k in keys)}]" if keys else str(pol)
    return out


def disp(col: str, v) -> str:
    """A value as a figure shows it (short, with its unit)."""
    if col == "variant":
        return SHORT_VARIANT.get(str(v), str(v))
    if col == "dram_fraction":
        return f"DRAM {100 * float(v):g}%"
    if col == "max_new_tokens":
        return f"{fr.fmt_num(v)} new tokens"
    if col == "prompts":
        return f"{fr.fmt_num(v)} prompts"
    if col == "trace":
        s = str(v)
        return s[len("workload-"):] if s.startswith("workload-") else s
    if col in fr.STRING_COLUMNS:
        return str(v)
    return f"{col}={fr.fmt_num(v)}"


def disp_of(row: pd.Series, cols: list[str], sep: str = " · ") -> str:
    return sep.join(disp(c, row[c]) for c in cols) if cols else "all points"


def names_of(cols: list[str]) -> str:
    return " · ".join(COLUMN_NAMES.get(c, c) for c in cols)


def n_combos(df: pd.DataFrame, cols: list[str]) -> int:
    return len(df[cols].astype(str).drop_duplicates()) if cols else 1


def split_facets(df: pd.DataFrame, cols: list[str], max_series: int = MAX_LINES,
                 order: list[str] = FACET_ORDER) -> tuple[list[str], list[str]]:
    """(panel columns, series columns): columns of `cols` move to the panels,
    in `order`, while a panel would hold more than max_series series and the
    figure stays within MAX_PANELS panels."""
    facet, rest = [], list(cols)
    # first every column but the policy, while the panels stay few: a line per
    # policy, in the same style in every panel
    for c in [c for c in order if c in rest and c not in ("variant", "policy")]:
        if facet and n_combos(df, facet + [c]) == n_combos(df, facet):
            rest.remove(c)  # decided by the panel (the prompts of a trace): no title
        elif n_combos(df, facet + [c]) <= min(6, MAX_PANELS) and len(rest) > 1:
            facet.append(c)
            rest.remove(c)
    while n_combos(df, rest) > max_series:
        cand = [c for c in order if c in rest and c != "variant"]
        moved = False
        for c in cand:
            if n_combos(df, facet + [c]) <= MAX_PANELS and len(rest) > 1:
                facet.append(c)
                rest.remove(c)
                moved = True
                break
        if not moved:
            break
    return facet, rest


def legend_entries(axes) -> tuple[list, list[str]]:
    """Every labelled artist of the panels, once per label, in order."""
    hs, ls = [], []
    for a in axes:
        for h, lab in zip(*a.get_legend_handles_labels()):
            if lab not in ls and not lab.startswith("_"):
                hs.append(h)
                ls.append(lab)
    return hs, ls


def line_figure(df: pd.DataFrame, x: str, xscale: float, series: list[str], ci: bool,
                title: str, xlabel: str, ylabel: str = "decode throughput (tokens/s)",
                order: list[str] = FACET_ORDER, logx: bool = False):
    """tokens/s against column x: a line per series, panels when there are
    more than MAX_LINES series; every series keeps its style in every panel;
    a shaded band where the results carry a model-uncertainty band."""
    band = has_band(df)
    facet, rest = split_facets(df, drop_redundant_draft(df, series), order=order)
    pgroups = fr.groups(df, facet)
    names = [disp_of(r, rest) for _, r in df.iterrows()]
    st = fs.styles(dict.fromkeys(names))
    fig, axes = fs.panels(len(pgroups), sharey=len(pgroups) > 1)
    for ax, (_, sub) in zip(axes, pgroups):
        for _, g in fr.groups(sub, rest):
            g = g.sort_values(x)
            name = disp_of(g.iloc[0], rest)
            line = ax.errorbar(xscale * g[x].to_numpy(dtype=float), g["tokens_per_s"],
                               yerr=yerr_of(g, ci), capsize=3, markersize=5, label=name,
                               **fs.line_kw(st[name]))
            if band:
                ax.fill_between(xscale * g[x].to_numpy(dtype=float),
                                g["tokens_per_s_model_lo"].astype(float),
                                g["tokens_per_s_model_hi"].astype(float),
                                color=line.lines[0].get_color(), alpha=0.15, linewidth=0)
        if facet:
            ax.set_title(disp_of(sub.iloc[0], facet))
        if logx:
            ax.set_xscale("log", base=2)
            xs = []
            for v in sorted(set(df[x].astype(float))):
                if not xs or math.log2(v / xs[-1]) >= 0.3:
                    xs.append(v)
            ax.set_xticks(xs)
            ax.minorticks_off()
            ax.set_xticklabels([fr.fmt_num(v) for v in xs])
        ax.grid(alpha=0.3)
    if facet:
        title += f"\n(one panel per {names_of(facet)})"
    if ci:
        title += "\nerror bars: 95% bootstrap interval over prompts"
    if band:
        title += "; shaded: model band over the profile's standing variants"
    hs, ls = legend_entries(axes)
    fs.finish(fig, title, xlabel, ylabel, hs, ls, legend_title=names_of(rest) or None)
    return fig


def section_dram(df: pd.DataFrame, ci: bool, figs: dict[str, bytes]) -> str:
    md = "## Throughput vs DRAM budget\n\n"
    if "dram_fraction" not in df.columns or df["dram_fraction"].nunique() < 2:
        return md + ("Skipped: the results hold a single `dram_fraction` "
                     "(sweep `dram_fraction` to get this figure).\n\n")
    series = fr.label_columns(df, exclude=["dram_fraction"])
    rows = []
    for key, sub in fr.groups(df, series):
        sub = sub.sort_values("dram_fraction")
        name = fr.label_of(sub.iloc[0], series)
        for _, r in sub.iterrows():
            rows.append([name, 100 * r["dram_fraction"]] + tput_cells(r, ci, has_band(df)))
    fig = line_figure(df, "dram_fraction", 100.0, series, ci,
                      "Decode throughput vs DRAM budget",
                      "target layers pinned in DRAM (%)")
    figs["throughput_vs_dram.png"] = fr.fig_bytes(fig)
    return (md + "![throughput vs DRAM budget](throughput_vs_dram.png)\n\n" +
            fr.md_table(["series", "DRAM %"] + tput_header(ci, has_band(df)), rows) + "\n" +
            ("The model band (`tokens_per_s_model_lo` / `_hi`) spans the device profile "
             "and its standing variants: the explanations its calibration data cannot "
             "tell apart.\n\n" if has_band(df) else ""))


def section_length(df: pd.DataFrame, ci: bool, figs: dict[str, bytes]) -> str:
    md = "## Throughput vs output length\n\n"
    if "max_new_tokens" not in df.columns or df["max_new_tokens"].nunique() < 2:
        return md + ("Skipped: the results hold a single `max_new_tokens` "
                     "(sweep `max_new_tokens` to get this figure).\n\n")
    series = fr.label_columns(df, exclude=["max_new_tokens"])
    rows = []
    for key, sub in fr.groups(df, series):
        sub = sub.sort_values("max_new_tokens")
        name = fr.label_of(sub.iloc[0], series)
        for _, r in sub.iterrows():
            rows.append([name, r["max_new_tokens"]] + tput_cells(r, ci))
    logx = df["max_new_tokens"].max() >= 4 * df["max_new_tokens"].min()
    fig = line_figure(df, "max_new_tokens", 1.0, series, ci,
                      "Decode throughput vs output length",
                      "new tokens generated per prompt" + (" (log scale)" if logx else ""),
                      logx=logx)
    figs["throughput_vs_length.png"] = fr.fig_bytes(fig)
    return (md + "![throughput vs output length](throughput_vs_length.png)\n\n" +
            fr.md_table(["series", "new tokens"] + tput_header(ci), rows) + "\n")


def drop_redundant_draft(df: pd.DataFrame, cols: list[str]) -> list[str]:
    """cols without `draft` when the other columns decide it (each target its
    own draft, Flash-AR none)."""
    if "draft" not in cols:
        return cols
    rest = [c for c in cols if c != "draft"]
    if not rest or df.astype({"draft": str}).groupby(rest)["draft"].nunique().max() <= 1:
        return rest
    return cols


def speedup_frame(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The drafting points that have a Flash-AR point with the same context
    (every varying parameter but the policy and its draft), with columns
    base_tokens_per_s and speedup; and the context columns."""
    ctx = [c for c in fr.label_columns(df) if c not in ("variant", "policy", "policy_params",
                                                          "draft")]
    ar = df[df["policy"] == "flash_ar"]
    other = df[df["policy"] != "flash_ar"]
    if ar.empty or other.empty:
        return other.iloc[0:0], ctx
    key = (lambda d: d[ctx].astype(str).agg("|".join, axis=1)) if ctx else \
        (lambda d: pd.Series("", index=d.index))
    base = dict(zip(key(ar), ar["tokens_per_s"].astype(float)))
    out = other.copy()
    out["base_tokens_per_s"] = [base.get(k, math.nan) for k in key(other)]
    out = out[~out["base_tokens_per_s"].isna()]
    out["speedup"] = out["tokens_per_s"].astype(float) / out["base_tokens_per_s"]
    return out, ctx


def geomean(v) -> float:
    v = np.asarray(v, dtype=float)
    return float(np.exp(np.log(v).mean())) if len(v) else math.nan


def bar_figure(d: pd.DataFrame, value: str, ser: list[str], cat: list[str],
               facet: list[str], title: str, ylabel: str, ci: bool = False,
               with_geomean: bool = False, reference: float | None = None):
    """Grouped vertical bars: a group per combination of `cat` on the x axis,
    a bar per combination of `ser` (colour, hatch; one legend), a panel per
    combination of `facet`; optionally a geometric-mean group per panel and a
    dashed reference line (the Flash-AR baseline at 1x)."""
    one = "decode throughput" + (" (error bar: 95% CI)" if ci else "")
    d = d.assign(_series=[disp_of(r, ser) if ser else one for _, r in d.iterrows()],
                 _group=[disp_of(r, cat, "\n") if cat else "all" for _, r in d.iterrows()])
    series = list(dict.fromkeys(d["_series"]))
    st = fs.styles(series) if "variant" in ser else \
        {n: fs.style(k) for k, n in enumerate(series)}
    pgroups = fr.groups(d, facet)
    ngroups = max(sub["_group"].nunique() for _, sub in pgroups) + (1 if with_geomean else 0)
    w = min(11.0, max(4.8, 0.24 * ngroups * len(series) + 1.5))
    fig, axes = fs.panels(len(pgroups), ncols=2 if w > 6 else 3, w=w, h=3.8, sharey=True)
    top = float(np.nanmax(d[value].astype(float) +
                          ((d["tokens_per_s_hi"] - d["tokens_per_s"]) if ci else 0)))
    for ax, (_, sub) in zip(axes, pgroups):
        gnames = list(dict.fromkeys(sub["_group"]))
        if with_geomean and len(gnames) > 1:
            gnames.append("geomean")
        bw = 0.8 / len(series)
        nbars = len(gnames) * len(series)
        for j, name in enumerate(series):
            s = sub[sub["_series"] == name]
            vals, lo, hi = [], [], []
            for g in gnames:
                sg = s if g == "geomean" else s[s["_group"] == g]
                v = geomean(sg[value]) if g == "geomean" else \
                    float(sg[value].mean()) if len(sg) else math.nan
                vals.append(v)
                one = ci and g != "geomean" and len(sg) == 1
                lo.append(max(0.0, v - float(sg["tokens_per_s_lo"].iloc[0])) if one else 0.0)
                hi.append(max(0.0, float(sg["tokens_per_s_hi"].iloc[0]) - v) if one else 0.0)
            xs = np.arange(len(gnames)) + (j - (len(series) - 1) / 2) * bw
            bars = ax.bar(xs, vals, bw, label=name, yerr=[lo, hi] if ci else None,
                          capsize=2 if ci else 0,
                          error_kw={"elinewidth": 0.8, "ecolor": "#333333"},
                          **fs.bar_kw(st[name]))
            if nbars <= 40 and not ci:
                ax.bar_label(bars, labels=[f"{v:.2f}" if v == v else "" for v in vals],
                             fontsize=6 if nbars > 16 else 7, padding=1,
                             rotation=90 if nbars > 16 else 0)
        if reference is not None:
            ax.axhline(reference, color=fs.BASELINE_COLOUR, linestyle="--", linewidth=1,
                       label="Flash-AR (1×)")
        ax.set_xticks(range(len(gnames)))
        longest = max(len(ln) for g in gnames for ln in g.split("\n"))
        if longest * 0.075 > 0.85 * w / len(gnames):
            ax.set_xticklabels(gnames, rotation=30, ha="right", rotation_mode="anchor")
        else:
            ax.set_xticklabels(gnames)
        if "geomean" in gnames:
            ax.axvline(len(gnames) - 1.5, color="#999999", linewidth=0.8)
        if facet:
            ax.set_title(disp_of(sub.iloc[0], facet))
        ax.grid(alpha=0.3, axis="y")
        ax.set_ylim(0, max(1.15 if reference else 0, top) * 1.22)
    hs, ls = legend_entries(axes)
    fs.finish(fig, title, names_of(cat) if cat else names_of(ser) or "point", ylabel, hs, ls,
              legend_title=names_of(ser) or None)
    return fig


def section_speedup(df: pd.DataFrame, figs: dict[str, bytes]) -> str:
    md = "## Speed-up over Flash-AR\n\n"
    sp, ctx = speedup_frame(df)
    if sp.empty:
        return md + ("Skipped: no drafting point has a Flash-AR point with the same "
                     "target, workload, phone and settings.\n\n")
    # the draft is a series of its own only where one context runs a policy with
    # several drafts (not where each target brings its own)
    sers = drop_redundant_draft(sp, ["variant", "draft"] + ctx)[:2]
    sers = [c for c in sers if c in ("variant", "draft")]
    facet = [c for c in ("target",) if c in ctx] or \
        ([c for c in ("device",) if c in ctx] if n_combos(sp, ctx) > 6 else [])
    within = sorted((c for c in ctx if c not in facet),
                    key=lambda c: {"trace": 0, "device": 1}.get(c, 2))
    title = ("Decode speed-up over Flash-AR\n(each bar: tokens/s over Flash-AR's on the same " +
             (names_of(ctx) if ctx else "settings") + "; geomean = geometric mean)")
    fig = bar_figure(sp, "speedup", sers, within, facet, title, "speed-up over Flash-AR (×)",
                     with_geomean=True, reference=1.0)
    figs["speedup.png"] = fr.fig_bytes(fig)
    names = [disp_of(r, sers) for _, r in sp.iterrows()]
    rows = [[fr.label_of(r, ctx) if ctx else "all", n, r["tokens_per_s"],
             r["base_tokens_per_s"], f"{r['speedup']:.3f}×"]
            for n, (_, r) in zip(names, sp.iterrows())]
    gm = []
    for n in dict.fromkeys(names):
        v = [x for m, x in zip(names, sp["speedup"]) if m == n]
        gm.append([n, len(v), f"{geomean(v):.3f}×"])
    return (md + "Tokens/s of each drafting point over the Flash-AR point with the same " +
            (", ".join(f"`{c}`" for c in ctx) if ctx else "settings") + ".\n\n"
            "![speed-up over Flash-AR](speedup.png)\n\n" +
            fr.md_table(["point", "policy", "tokens/s", "Flash-AR tokens/s", "speed-up"],
                        rows) + "\nGeometric mean per policy:\n\n" +
            fr.md_table(["policy", "points", "speed-up"], gm) + "\n")


def section_throughput(df: pd.DataFrame, labels: list[str], ci: bool,
                       figs: dict[str, bytes]) -> str:
    md = "## Throughput per point\n\n"
    if len(df) < 2:
        return md + "Skipped: a single point (its throughput is in the table above).\n\n"
    cols = drop_redundant_draft(df, labels or ["variant"])
    # a panel per target when there are many bars; on the x axis whichever of
    # the policies and the rest has more values, the other as the bars' colours
    facet = [c for c in ("target",) if c in cols and len(df) > 24]
    rest = [c for c in cols if c not in facet]
    pol = [c for c in rest if c in ("variant", "draft")] or rest[:1]
    ctx = sorted((c for c in rest if c not in pol),
                 key=lambda c: {"trace": 0, "device": 1}.get(c, 2))
    cat, ser = (ctx, pol) if n_combos(df, ctx) > n_combos(df, pol) else (pol, ctx)
    # a sparse design (ablations run most variants on one phone only): more panels,
    # each with the bars its points fill
    while cat and ser:
        cells = n_combos(df, facet) * n_combos(df, cat) * n_combos(df, ser)
        if n_combos(df, facet + cat + ser) >= 0.6 * cells:
            break
        move = next((c for c in ("device", "target", "trace", "draft") if c in ctx), None)
        if move is None or n_combos(df, facet + [move]) > MAX_PANELS:
            break
        facet.append(move)
        ctx.remove(move)
        rest.remove(move)
        cat, ser = (ctx, pol) if n_combos(df, ctx) > n_combos(df, pol) else (pol, ctx)
    title = "Decode throughput per point"
    if facet:
        title += f" (one panel per {names_of(facet)})"
    if ci:
        title += "\nerror bars: 95% bootstrap interval over prompts"
    fig = bar_figure(df, "tokens_per_s", ser, cat, facet, title,
                     "decode throughput (tokens/s)", ci=ci)
    figs["throughput.png"] = fr.fig_bytes(fig)
    return (md + "Every point's tokens/s (the table under Points).\n\n"
            "![throughput per point](throughput.png)\n\n")


def section_breakdown(df: pd.DataFrame, labels: list[str], figs: dict[str, bytes]) -> str:
    md = "## Latency breakdown per cycle\n\n"
    missing = [c for c, _ in BREAKDOWN if c not in df.columns]
    if missing:
        return md + f"Skipped: the results lack {', '.join(missing)}.\n\n"
    cols = drop_redundant_draft(df, list(labels))
    # KV work is part of the CPU's busy time: the CPU segment shows the rest
    d = df.assign(cpu_only_ms=(df["cpu_ms"] - df["kv_ms"]).clip(lower=0))
    num = [c for c, _ in BREAKDOWN] + ["cpu_only_ms"] + \
        (["cycle_ms"] if "cycle_ms" in df.columns else [])
    note = ""
    dropped = []
    while cols and n_combos(d, cols) > MAX_BREAKDOWN:
        c = next((c for c in BREAKDOWN_DROP if c in cols), None)
        if c is None:
            break
        cols.remove(c)
        dropped.append(c)
    if dropped:
        d = d.groupby(cols, sort=False, as_index=False)[num].mean() if cols else \
            d[num].mean().to_frame().T
        note = ("The results hold more than " + str(MAX_BREAKDOWN) + " points: each bar is "
                "the mean over " + ", ".join(f"`{c}`" for c in dropped) + ". ")
    facet = []
    for c in ("target", "device", "dram_fraction", "trace", "max_new_tokens"):
        if c in cols and len(d) > 24 and n_combos(d, facet + [c]) <= 6:
            facet.append(c)
            break
    within = [c for c in cols if c not in facet]
    names = {"draft": "draft_ms", "flash I/O": "flash_ms", "NPU": "npu_ms",
             "CPU": "cpu_only_ms", "KV": "kv_ms", "idle": "idle_ms"}
    pgroups = fr.groups(d, facet)
    heights = [0.27 * len(sub) + 0.9 for _, sub in pgroups]
    fig, axes = fs.panels(len(pgroups), w=9, heights=heights, sharex=True)
    for ax, (_, sub) in zip(axes, pgroups):
        ys = np.arange(len(sub))
        left = np.zeros(len(sub))
        for name, col in names.items():
            v = sub[col].to_numpy(dtype=float)
            colour, hatch = fs.RESOURCE_STYLE[name]
            ax.barh(ys, v, 0.7, left=left, label=name, color=colour, hatch=hatch,
                    edgecolor="white", linewidth=0.4)
            left += v
        if "cycle_ms" in sub.columns:
            wall = sub["cycle_ms"].to_numpy(dtype=float)
            over = np.clip(left - wall, 0, None)
            ax.barh(ys, over, 0.7, left=wall, facecolor="none", edgecolor="black",
                    hatch="////", linewidth=0.6,
                    label="overlap (busy beyond the wall time: resources working at once)")
            ax.plot(wall, ys, linestyle="none", marker="|", markersize=16,
                    markeredgewidth=2.2, color="black", label="cycle wall time")
        ax.set_xlim(0, 1.04 * float(np.nanmax(np.concatenate(
            [left, sub["cycle_ms"].to_numpy(dtype=float) if "cycle_ms" in sub else left]))))
        ax.set_yticks(ys)
        ax.set_yticklabels([disp_of(r, within) if within else "all"
                            for _, r in sub.iterrows()])
        ax.invert_yaxis()
        ax.grid(alpha=0.3, axis="x")
        if facet:
            ax.set_title(disp_of(sub.iloc[0], facet))
    title = ("Latency breakdown per decode cycle\nstacked: busy time of each resource; "
             "black tick: wall time; hatched: overlap")
    if dropped:
        title += "\n(mean over " + ", ".join(names_of([c]) for c in dropped) + ")"
    hs, ls = legend_entries(axes)
    fs.finish(fig, title, "time per cycle (ms)", names_of(within) or "point", hs, ls,
              legend_title="resource", below=True)
    figs["latency_breakdown.png"] = fr.fig_bytes(fig)
    header = (cols or ["point"]) + list(names) + \
        (["cycle", "overlap"] if "cycle_ms" in d.columns else [])
    rows = []
    for _, r in d.iterrows():
        busy = sum(float(r[c]) for c in names.values())
        rows.append(([r[c] if c in fr.STRING_COLUMNS else fr.fmt_num(r[c]) for c in cols]
                     or ["all"]) + [float(r[c]) for c in names.values()] +
                    ([r["cycle_ms"], max(0.0, busy - float(r["cycle_ms"]))]
                     if "cycle_ms" in d.columns else []))
    return (md + note + "Segments are busy times of each resource per cycle (ms; drafting is "
            "the wall time of the draft phase, whose work also counts on its unit; CPU "
            "excludes the KV work shown apart); resources overlap, so a bar can exceed the "
            "cycle's wall time (black tick): the excess, hatched in the figure, is the "
            "`overlap` column.\n\n"
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
    rows = []
    for _, sub in groups:
        sub = sub.sort_values("tree_budget")
        name = fr.label_of(sub.iloc[0], series)
        for _, r in sub.iterrows():
            rows.append([name, r["tree_budget"],
                         r["verify_rows"] if "verify_rows" in r else math.nan] +
                        tput_cells(r, ci) +
                        [r["mean_accepted"] if "mean_accepted" in r else math.nan])
    dd = pd.concat([s for _, s in groups])
    logx = dd["tree_budget"].max() >= 4 * dd["tree_budget"].min()
    fig = line_figure(dd, "tree_budget", 1.0, series, ci, "Decode throughput vs tree budget",
                      "tree budget (nodes, root included" + (", log scale)" if logx else ")"),
                      order=["policy"] + FACET_ORDER, logx=logx)
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
    st = fs.styles(dict.fromkeys(d["variant"]))
    for pol, sub in d.groupby("variant", sort=False):
        kw = {"color": st[pol]["color"], "marker": st[pol]["marker"]}
        a1.scatter(sub["rows_kept"], sub["retention"], label=disp("variant", pol), s=36, alpha=0.85, **kw)
        a2.errorbar(sub["rows_kept"], sub["tokens_per_s"], yerr=yerr_of(sub, ci),
                    linestyle="none", capsize=3, markersize=6, alpha=0.85,
                    label=disp("variant", pol), **kw)
    for _, r in d.iterrows():
        rows.append([fr.label_of(r, labels) if labels else r["policy"], r["rows_kept"],
                     r["retention"]] + tput_cells(r, ci))
    a1.set_xlabel("share of tree rows kept past the exit layer")
    a1.set_ylabel("retention (accepted tokens vs unpruned)")
    a1.set_title("what pruning costs in acceptance")
    a2.set_xlabel("share of tree rows kept past the exit layer")
    a2.set_ylabel("decode throughput (tokens/s)")
    a2.set_title("what it does to throughput")
    for a in (a1, a2):
        a.grid(alpha=0.3)
    others = [c for c in labels if c not in ("variant",)]
    title = "Verification pruning trade-off (one marker per point)"
    if others:
        title += "\npoints differ also in " + names_of(others)
    hs, ls = legend_entries([a1])
    fs.finish(fig, title, None, None, hs, ls, legend_title="policy")
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
        dist = {}
        for name in dict.fromkeys(d["variant"]):
            total: list[float] = []
            for _, r in d[d["variant"] == name].iterrows():
                h = parse_hist(r["accepted_hist"]) or []
                total += [0.0] * (len(h) - len(total))
                for k, x in enumerate(h):
                    total[k] += x
            if total and sum(total) > 0:
                dist[name] = np.asarray(total) / sum(total)
        rows = [[name] + [f"{x:.3f}" for x in p] for name, p in dist.items()]
        fams = list(dict.fromkeys(fs.family(n) for n in dist))
        panel_of = {n: (fs.family(n) if len(dist) > MAX_LINES else "") for n in dist}
        keys = list(dict.fromkeys(panel_of.values()))
        st = fs.styles(dist)
        fig, axes = fs.panels(len(keys), sharex=True, sharey=True, w=4.4, h=3.3)
        width = max(len(p) for p in dist.values()) if dist else 1
        for ax, key in zip(axes, keys):
            for name, p in dist.items():
                if panel_of[name] == key:
                    ax.plot(range(len(p)), p, markersize=4, label=disp("variant", name),
                            **fs.line_kw(st[name]))
            if key:
                ax.set_title(f"{key}")
            ax.grid(alpha=0.3)
            ax.set_xlim(-0.5, width - 0.5)
        title = "Accepted draft tokens per cycle (distribution over cycles)"
        if len(keys) > 1:
            title += f"\n(one panel per policy family: {len(fams)} families)"
        hs, ls = legend_entries(axes)
        fs.finish(fig, title, "accepted draft tokens in a cycle", "share of cycles", hs, ls,
                  legend_title="policy")
        figs["accepted_length.png"] = fr.fig_bytes(fig)
        width = max(len(r) for r in rows) - 1 if rows else 0
        return (md + "Per-cycle distribution (`accepted_hist`, summed over each policy's "
                "points).\n\n![accepted length](accepted_length.png)\n\n" +
                fr.md_table(["policy"] + [str(k) for k in range(width)],
                            [r + [""] * (width + 1 - len(r)) for r in rows]) + "\n")
    pols = list(dict.fromkeys(d["variant"]))
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(pols) + 2), 4.5))
    data = [d[d["variant"] == p]["mean_accepted"].to_numpy(dtype=float) for p in pols]
    ax.boxplot(data, showmeans=True,
               meanprops={"marker": "^", "markerfacecolor": fs.OKABE_ITO["vermillion"],
                          "markeredgecolor": "black"},
               medianprops={"color": fs.OKABE_ITO["blue"], "linewidth": 1.5})
    ax.set_xticks(range(1, len(pols) + 1))
    ax.set_xticklabels([disp("variant", p) for p in pols], rotation=30, ha="right")
    for k, v in enumerate(data, start=1):
        ax.scatter(np.full(len(v), k), v, s=12, alpha=0.6, color="gray", zorder=3,
                   label="one point" if k == 1 else None)
    from matplotlib.lines import Line2D
    hs = [Line2D([], [], color=fs.OKABE_ITO["blue"], linewidth=1.5),
          Line2D([], [], linestyle="none", marker="^",
                 markerfacecolor=fs.OKABE_ITO["vermillion"], markeredgecolor="black"),
          Line2D([], [], linestyle="none", marker="o", color="gray", alpha=0.6)]
    ax.grid(alpha=0.3, axis="y")
    fs.finish(fig, "Mean accepted draft tokens per cycle, spread over each policy's points",
              "policy", "mean accepted draft tokens per cycle", hs,
              ["median", "mean", "one point"])
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
    SHORT_VARIANT.clear()
    SHORT_VARIANT.update(short_variants(df))
    figs: dict[str, bytes] = {}
    md = [f"# flashspec report: {os.path.basename(os.path.normpath(results_dir))}\n\n",
          f"Source: `{src}`, {len(df)} point{'s' if len(df) != 1 else ''}. ",
          ("Parameters that vary: " + ", ".join(f"`{c}`" for c in labels) + ". ")
          if labels else "No parameter varies. ",
          ("Throughput with its 95% confidence interval (`tokens_per_s_lo`, "
           "`tokens_per_s_hi`).\n\n") if ci else
          "The results carry no confidence interval columns.\n\n"]
    md.append(section_points(df, labels, ci))
    md.append(section_speedup(df, figs))
    md.append(section_throughput(df, labels, ci, figs))
    md.append(section_dram(df, ci, figs))
    md.append(section_length(df, ci, figs))
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
