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
import warnings

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
if __name__ == "__main__":
    import depcheck  # the script's own directory is on sys.path

    depcheck.require("report.py")
if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
    from . import policies as fp
else:  # run as a script, or imported with analysis/ on sys.path
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
    import policies as fp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
import pandas as pd  # noqa: E402

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
                "prompts": "prompts", "tree_series": "policy", "pruning": "pruning"}
MAX_LINES = 10      # series in one panel before the figure is split into panels
MAX_PANELS = 12
MAX_BREAKDOWN = 80  # points in the latency breakdown before it shows per token only
MAX_BARS = 400      # bars (a point each) in one figure: beyond, the table lists them
MAX_POINTS = 2000   # points a report draws: beyond, an evenly spaced sample (said so)


MAX_SERIES = 48  # series (colours x markers) one figure tells apart, panels included


class TooManySeries(Exception):
    """A figure asked to tell more series apart than MAX_SERIES."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.n = n


def series_guarded(heading: str):
    """A section whose figure has more series than MAX_SERIES (144 policies
    in a hand-made results file) is skipped with a note, not drawn unreadable."""
    def wrap(fn):
        def run(*args, **kw):
            try:
                return fn(*args, **kw)
            except TooManySeries as e:
                plt.close("all")
                return (f"## {heading}\n\nSkipped: {e.n} series are more than one figure tells "
                        f"apart ({MAX_SERIES}); the tables list the points.\n\n")
        run.__doc__ = fn.__doc__
        run.__name__ = fn.__name__
        return run
    return wrap


# figure -> what the checker found in it (figstyle.figure_problems); set by build()
CHECKS: dict[str, list[str]] = {}


def fig_png(fig, name: str) -> bytes:
    """The figure's PNG; the checker's verdict on it goes to CHECKS[name]
    (figures captured by a test are checked by the test)."""
    data = fr.fig_bytes(fig, keep=True)
    if fr._CAPTURED is None:
        CHECKS[name] = fs.figure_problems(fig, name)
        plt.close(fig)
    return data


# variant -> the name figures show (see short_variants); set by build()
SHORT_VARIANT: dict[str, str] = {}


def short_variants(df: pd.DataFrame) -> dict[str, str]:
    """Figure names of the variants: the policy and the parameters that differ
    from its defaults (policies.canonical) at 3 significant digits, more where
    two variants would otherwise read alike; a tuned point `POLICY tuned (max
    OBJECTIVE)`, its knobs written beside it (they change from point to
    point)."""
    out: dict[str, str] = {}
    firsts = df.drop_duplicates("variant")
    names = {d: fr.variants(firsts, d) for d in (3, 4, 6, None)}
    pols = [str(p) for p in firsts["policy"]]
    for i, v in enumerate(firsts["variant"]):
        if fr.is_tuned(firsts.iloc[i]):
            out[v] = fp.tuned_name(pols[i], firsts.iloc[i].get("tune_objective"))
    for digits in (3, 4, 6, None):
        cand = {v: n for v, n in zip(firsts["variant"], names[digits]) if v not in out}
        if len(set(cand.values())) == len(cand) or digits is None:
            out.update(cand)
            break
    return out


def tuned_knobs(row: pd.Series) -> str:
    """A tuned point's knobs as its label beside it shows them: the
    parameters that differ from the policy's defaults, 3 significant
    digits."""
    name = fp.canonical(str(row["policy"]), fr.point_params(row.get("policy_params"), row), 3)
    if name is None or "[" not in name:
        return "defaults"
    return name.split("[", 1)[1].rstrip("]")


# trace -> the name figures show (see readable_traces); set by build()
TRACE_NAMES: dict[str, str] = {}
# columns whose values figures show as they are
AS_IS = {"tree_series", "pruning"}


def synth_settings(results_dir: str) -> dict[str, dict]:
    """The generator settings of the synthetic traces the results ran on, by
    trace name, from RESULTS_DIR/run.json ("traces"); {} when it is absent or
    unreadable (the figures then number those traces)."""
    try:
        with open(os.path.join(results_dir, "run.json"), encoding="utf-8") as f:
            rec = json.load(f)
        return {str(t["name"]): dict(t["synth"]) for t in rec.get("traces", [])
                if isinstance(t, dict) and isinstance(t.get("synth"), dict) and "name" in t}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def readable_traces(df: pd.DataFrame, synth: dict[str, dict] | None = None) -> dict[str, str]:
    """Figure names of the traces named by a checksum (flashspec.trace.synth
    names a trace made in memory synth-<hex>): the value of a tag_<name>
    column that names that trace alone ('workload code'); else, for a
    synthetic trace whose generator settings run.json records (`synth`), the
    settings that tell it from the others ('synthetic seed=1102'); else
    'synthetic trace N' (N in order of appearance).  Other traces keep their
    names."""
    if "trace" not in df.columns:
        return {}
    synth = synth or {}
    mine = {t: synth[t] for t in dict.fromkeys(df["trace"].astype(str)) if t in synth}
    differ = [k for k in dict.fromkeys(k for v in mine.values() for k in v)
              if len({json.dumps(v.get(k), sort_keys=True) for v in mine.values()}) > 1]
    tr = df["trace"].astype(str)
    tags = [c for c in df.columns if isinstance(c, str) and c.startswith(fr.TAG_PREFIX)]
    out, k = {}, 0
    for t in dict.fromkeys(tr):
        if not fs.hash_like(t):
            continue
        name = None
        for c in tags:
            vals = set(df.loc[tr == t, c].astype(str))
            if len(vals) != 1:
                continue
            v = vals.pop()
            if v in ("", "nan") or fs.hash_like(v):
                continue
            if set(tr[df[c].astype(str) == v]) == {t}:
                name = f"{c[len(fr.TAG_PREFIX):]} {v}"
                break
        if name is None and t in mine:
            keys = (differ or ["seed"])[:3]
            name = "synthetic " + ",".join(
                f"{key}=" + ("/".join(fr.fmt_num(x) for x in v) if isinstance(v, list)
                             else fr.fmt_num(v))
                for key in keys for v in [mine[t].get(key)])
        if name is None:
            k += 1
            name = f"synthetic trace {k}" if t.startswith("synth-") else f"trace {k}"
        out[t] = name
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
        s = TRACE_NAMES.get(str(v), str(v))
        return s[len("workload-"):] if s.startswith("workload-") else s
    if col == "draft":
        return f"draft {v}"
    if col in fr.STRING_COLUMNS or col in AS_IS:
        return str(v)
    return f"{col}={fr.fmt_num(v)}"


# what a panel must not pool (figstyle.register_panel), in the order titles name it
HELD = ("target", "device", "trace")


def held_fixed(d: pd.DataFrame) -> str:
    """The target, phone and workload every point of d shares, as titles
    name them ('qwen3-8b-q4_0 · oneplus12 · code-strong'); '' when none."""
    return " · ".join(disp(c, d[c].iloc[0]) for c in HELD
                      if c in d.columns and len(d) and d[c].astype(str).nunique() == 1)


def with_held(title: str, d: pd.DataFrame) -> str:
    """title, and on a line of its own what every point of d shares."""
    h = held_fixed(d)
    return title + (f"\n(every point: {h})" if h else "")


def register(ax, rows: pd.DataFrame, separated: list[str]) -> None:
    """What panel ax draws (figstyle.register_panel), values named as the
    figures name them."""
    fs.register_panel(ax, rows, separated, disp)


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


def notes_md(fig) -> str:
    """The notes under a figure (what it does not draw, what its markers
    mean) as markdown paragraphs."""
    out = []
    for n in getattr(fig, "fs_notes", []):
        if n.startswith("Not drawn: "):
            out.append(f"**Not drawn:** {md_escape(n[len('Not drawn: '):])}\n\n")
        else:
            out.append(f"*Note:* {md_escape(n)}\n\n")
    return "".join(out)


def chunk_title(names: list[str]) -> str:
    """What a panel holding these series of a split figure shows: the
    policies and the parameters their variants change."""
    parts = []
    for fam in dict.fromkeys(fs.family(n) for n in names):
        keys = []
        for n in names:
            if fs.family(n) == fam and "[" in n:
                inner = n.split("[", 1)[1].split("]", 1)[0]
                keys += [kv.split("=")[0] for kv in inner.split(",")]
        keys = list(dict.fromkeys(keys))
        parts.append(f"{fam} ({', '.join(keys)})" if keys else fam)
    return "; ".join(parts)


def log2_ticks(values) -> list[float]:
    """Tick positions for a log2 axis: the values, the most frequent first,
    none within a quarter octave of another (caps 16, 32, ... win over a lone 15)."""
    vals = [float(v) for v in values if np.isfinite(v) and v > 0]
    if not vals:
        return []
    counts = pd.Series(vals).value_counts()
    kept: list[float] = []
    for v in sorted(counts.index, key=lambda u: (-counts[u], u)):
        if all(abs(math.log2(v / u)) >= 0.25 for u in kept):
            kept.append(float(v))
    return sorted(kept)


def facet_panels(df: pd.DataFrame, facet: list[str], most: int, w: float, h: float,
                 share_y: bool = True, chunker=None):
    """A panel per combination of `facet`, split further where a panel would
    show more than `most` series (df's `_series` column; chunker(names, most)
    splits them, default fs.chunk_series): (figure, [(axes, facet rows,
    panel rows, series)], split), split telling whether any panel was split.
    With several targets the panels form a row per target, each row with its
    own y range; otherwise the panels share one y range when share_y."""
    chunker = chunker or fs.chunk_series
    cells, split = [], False
    for _, sub in fr.groups(df, facet):
        chunks = chunker(list(dict.fromkeys(sub["_series"])), most)
        split = split or len(chunks) > 1
        for ch in chunks:
            part = sub[sub["_series"].isin(ch)]
            if len(part):
                cells.append((sub, part, [n for n in ch if n in set(part["_series"])]))
    if split:
        # each panel has a legend of its own beside it: room for it
        w, h = 1.2 * w, 1.1 * h
    elif len(cells) == 1:
        # one panel and the figure's legend beside it
        w, h = max(w, 5.6), max(h, 3.8)
    by_target = "target" in facet and df["target"].nunique() > 1
    if by_target and len(cells) > df["target"].nunique():
        rows = list(dict.fromkeys(str(c[0].iloc[0]["target"]) for c in cells))
        per = {r: [c for c in cells if str(c[0].iloc[0]["target"]) == r] for r in rows}
        ncols = max(len(v) for v in per.values())
        if ncols <= 6:
            fig, axes = plt.subplots(len(rows), ncols, squeeze=False, sharey="row",
                                     figsize=(w * ncols, max(h, fs.MIN_PANEL_IN + 1.2) *
                                              len(rows)), constrained_layout=True)
            out = []
            for i, r in enumerate(rows):
                for j in range(ncols):
                    if j < len(per[r]):
                        out.append((axes[i][j],) + per[r][j])
                    else:
                        fig.delaxes(axes[i][j])
            return fig, out, split
    fig, axes = fs.panels(len(cells), ncols=2 if w > 6 else 3, w=w, h=h,
                          sharey=share_y and len(cells) > 1 and not by_target)
    return fig, [(ax,) + c for ax, c in zip(axes, cells)], split


def panel_title(sub: pd.DataFrame, facet: list[str], names: list[str], split: bool) -> str:
    t = disp_of(sub.iloc[0], facet) if facet else ""
    if split:
        t = (t + "\n" if t else "") + chunk_title(names)
    return t


def hole_notes(missing: dict, panels: list[dict], x: str, xscale: float) -> list[str]:
    """Notes for the points a line figure lacks: missing maps (series, the x
    values it has no row at) to the panels (facet values, dicts) where."""
    by: dict = {}
    for (name, lack), where in missing.items():
        key = (lack, tuple(tuple(sorted(p.items())) for p in where))
        by.setdefault(key, []).append(name)
    notes = []
    for (lack, where), names in by.items():
        where = [dict(p) for p in where]
        at = ", ".join(disp(x, v) for v in lack)
        if len(where) == len(panels) or not where or not where[0]:
            place = "every panel" if len(panels) > 1 else ""
        else:
            place = ""
            for c in where[0]:
                vals = {p[c] for p in where}
                full = [p for p in panels if p.get(c) in vals]
                if len(full) == len(where) and len(vals) < len(where):
                    place = "every panel of " + ", ".join(disp(c, v) for v in vals)
                    break
            if not place:
                place = "; ".join(" · ".join(disp(c, v) for c, v in p.items()) for p in where)
        notes.append(f"The results hold no row for {', '.join(names)} at {at}" +
                     (f" ({place})" if place else "") +
                     " (the script ran no such point, or the point failed: a failed point, "
                     "e.g. one that does not fit the phone's DRAM, writes no row).")
    return notes


def line_figure(df: pd.DataFrame, x: str, xscale: float, series: list[str], ci: bool,
                title: str, xlabel: str, ylabel: str = "decode throughput (tokens/s)",
                order: list[str] = FACET_ORDER, logx: bool = False, y: str = "tokens_per_s",
                reference: float | None = None, holes: bool = True, on_series=None,
                hole_frame: pd.DataFrame | None = None, tick_values=None,
                left_out: list | None = None):
    """y (tokens/s) against column x: a line per series, panels when there
    are more than MAX_LINES series (a row of panels per target, each row with
    its own y range), series split into panels of at most fs.MAX_LEGEND
    legend entries; every series keeps its style in every panel; a series's
    line breaks at an x value it lacks inside its range; a shaded
    band where the results carry a model-uncertainty band; a dashed line at
    `reference`.  With `holes`, the x values a series lacks (no result row
    in hole_frame, default df) are named in a note.  on_series(ax, name,
    rows, xs, style) is called after each line is drawn.  On a log x axis
    the labelled ticks go to the most frequent of tick_values (default: the
    x values), every other x value gets an unlabelled tick.  left_out:
    (rows, reason) pairs the caller does not draw: a note counts the rows,
    and a series they alone hold is reported as not drawn."""
    band = has_band(df) and y == "tokens_per_s"
    ci = ci and y == "tokens_per_s"
    facet, rest = split_facets(df, drop_redundant_draft(df, series), order=order)
    df = df.assign(_series=[disp_of(r, rest) for _, r in df.iterrows()])
    hf = df if hole_frame is None else \
        hole_frame.assign(_series=[disp_of(r, rest) for _, r in hole_frame.iterrows()])
    names = list(dict.fromkeys(df["_series"]))
    if len(names) > MAX_SERIES:
        raise TooManySeries(len(names))
    st = fs.styles(names)
    fig, cells, split = facet_panels(df, facet, fs.MAX_LEGEND - 2 -
                                     (1 if reference is not None else 0), 4.6, 3.6)
    all_x = sorted(set(df[x].astype(float)))
    missing: dict = {}
    panels = []
    for ax, sub, part, ch in cells:
        where = {c: sub.iloc[0][c] for c in facet}
        panels.append(where)
        for name in ch:
            g = part[part["_series"] == name].sort_values(x)
            if g.empty:
                continue
            xs = xscale * g[x].to_numpy(dtype=float)
            # an x value the series lacks inside its range breaks the line
            # there (NaN) instead of joining its neighbours across the hole
            lo_x, hi_x = float(g[x].min()), float(g[x].max())
            grid = pd.DataFrame({"_xf": [v for v in all_x if lo_x <= v <= hi_x]})
            gg = grid.merge(g.assign(_xf=g[x].astype(float)), on="_xf", how="left")
            gx = xscale * gg["_xf"].to_numpy(dtype=float)
            line = ax.errorbar(gx, gg[y].astype(float), yerr=yerr_of(gg, ci), capsize=3,
                               markersize=5, label=name, **fs.line_kw(st[name]))
            if band:
                ax.fill_between(gx, gg["tokens_per_s_model_lo"].astype(float),
                                gg["tokens_per_s_model_hi"].astype(float),
                                color=line.lines[0].get_color(), alpha=0.15, linewidth=0)
            if on_series is not None:
                on_series(ax, name, g, xs, st[name])
            if "tune_evals" in g.columns:
                # a tuned point's knobs change from point to point: beside it
                for xv, yv, (_, r) in zip(xs, g[y].astype(float), g.iterrows()):
                    if fr.is_tuned(r) and np.isfinite(yv):
                        ax.annotate(tuned_knobs(r), (xv, yv), xytext=(4, 4),
                                    textcoords="offset points", fontsize=fs.NOTE_SIZE - 2,
                                    color=st[name]["color"])
            if holes:
                mine = hf["_series"] == name
                for c in facet:
                    mine &= hf[c].astype(str) == str(where[c])
                have = set(hf.loc[mine, x].astype(float))
                lack = tuple(v for v in all_x if v not in have)
                if lack:
                    missing.setdefault((name, lack), []).append(where)
        if reference is not None:
            ax.axhline(reference, color=fs.BASELINE_COLOUR, linestyle="--", linewidth=1,
                       label="Flash-AR (1×)")
        t = panel_title(sub, facet, ch, split)
        if t:
            ax.set_title(t)
        register(ax, part, ["_series", x])
        if not logx and all(float(v).is_integer() for v in all_x):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if logx:
            ax.set_xscale("log", base=2)
            xs = log2_ticks(xscale * (df[x] if tick_values is None else
                                      pd.Series(tick_values)).astype(float))
            ax.set_xticks(xs)
            ax.set_xticks([v for v in sorted(set(xscale * df[x].astype(float)))
                           if v not in xs], minor=True)
            ax.set_xticklabels([fr.fmt_num(v) for v in xs])
            ax.tick_params(axis="x", which="minor", labelbottom=False)
        ax.grid(alpha=0.3)
    if not logx and len(all_x) > 1:
        # one x range in every panel: a panel's missing points show as a gap
        lo, hi = xscale * all_x[0], xscale * all_x[-1]
        for c in cells:
            c[0].set_xlim(lo - 0.04 * (hi - lo), hi + 0.04 * (hi - lo))
    title = with_held(title, df)
    if facet:
        title += f"\n(one panel per {names_of(facet)}" + \
            ("; a row per target, each with its own y range)"
             if "target" in facet and df["target"].nunique() > 1 and len(cells) > 1 else ")")
    if ci:
        title += "\nerror bars: 95% bootstrap interval over prompts"
    if band:
        title += "; shaded: model band over the profile's standing variants"
    axes = [c[0] for c in cells]
    if split:
        for ax in axes:
            fs.panel_legend(ax, names_of(rest) or None)
        fs.finish(fig, title, xlabel, ylabel)
    else:
        hs, ls = legend_entries(axes)
        fs.finish(fig, title, xlabel, ylabel, hs, ls, legend_title=names_of(rest) or None)
    fs.add_notes(fig, hole_notes(missing, panels, x, xscale))
    dropped: dict[str, str] = {}
    for rows, why in left_out or []:
        if not len(rows):
            continue
        gone = [disp_of(r, rest) for _, r in rows.iterrows()]
        dropped.update({n: why for n in dict.fromkeys(gone) if n not in names})
        fs.add_notes(fig, [f"{len(rows)} point{'s' if len(rows) > 1 else ''} not drawn: {why}."])
    fs.declare(fig, names + list(dropped), dropped)
    fig.fs_panels = True
    fig.fs_policy_series = names
    return fig


def where_it_varies(df: pd.DataFrame, x: str, series: list[str]) -> pd.Series:
    """The rows of the settings (the columns of `series` but the policy, its
    parameters and draft) in which some series runs at two or more values of
    x: a line against x is drawn there; elsewhere the points would only
    compare different policies at one value each."""
    pol = [c for c in series if c in ("variant", "policy", "policy_params", "tree_series",
                                      "draft")] or ["variant"]
    ctx = [c for c in series if c not in pol]
    keep = pd.Series(False, index=df.index)
    for _, sub in fr.groups(df, ctx):
        if any(g[x].nunique() >= 2 for _, g in fr.groups(sub, pol)):
            keep[sub.index] = True
    return keep


@series_guarded("Throughput vs DRAM budget")
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
    keep = where_it_varies(df, "dram_fraction", series)
    ctx = [c for c in series if c not in ("variant", "policy", "draft")]
    if not keep.any():
        return md + ("Skipped: no series runs at two or more DRAM budgets (each setting ran "
                     "at one only).\n\n")
    fig = line_figure(df[keep], "dram_fraction", 100.0, series, ci,
                      "Decode throughput vs DRAM budget",
                      "target layers pinned in DRAM (%)",
                      left_out=[(df[~keep], f"their setting ({names_of(ctx)}) ran at one DRAM "
                                 "budget only; the Points table lists them")])
    figs["throughput_vs_dram.png"] = fig_png(fig, "throughput_vs_dram.png")
    return (md + "![throughput vs DRAM budget](throughput_vs_dram.png)\n\n" + notes_md(fig) +
            fr.md_table(["series", "DRAM %"] + tput_header(ci, has_band(df)), rows) + "\n" +
            ("The model band (`tokens_per_s_model_lo` / `_hi`) spans the device profile "
             "and its standing variants: the explanations its calibration data cannot "
             "tell apart.\n\n" if has_band(df) else ""))


@series_guarded("Throughput vs output length")
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
    keep = where_it_varies(df, "max_new_tokens", series)
    ctx = [c for c in series if c not in ("variant", "policy", "draft")]
    if not keep.any():
        return md + ("Skipped: no series runs at two or more output lengths (each setting ran "
                     "at one only).\n\n")
    logx = df.loc[keep, "max_new_tokens"].max() >= 4 * df.loc[keep, "max_new_tokens"].min()
    fig = line_figure(df[keep], "max_new_tokens", 1.0, series, ci,
                      "Decode throughput vs output length",
                      "new tokens generated per prompt" + (" (log scale)" if logx else ""),
                      logx=logx,
                      left_out=[(df[~keep], f"their setting ({names_of(ctx)}) ran at one "
                                 "output length only; the Points table lists them")])
    figs["throughput_vs_length.png"] = fig_png(fig, "throughput_vs_length.png")
    return (md + "![throughput vs output length](throughput_vs_length.png)\n\n" +
            notes_md(fig) + fr.md_table(["series", "new tokens"] + tput_header(ci), rows) +
            "\n")


def drop_redundant_draft(df: pd.DataFrame, cols: list[str]) -> list[str]:
    """cols without `draft` when the other columns decide it (each target its
    own draft, Flash-AR none)."""
    if "draft" not in cols:
        return cols
    rest = [c for c in cols if c != "draft"]
    if not rest or df.astype({"draft": str}).groupby(rest)["draft"].nunique().max() <= 1:
        return rest
    return cols


def speedup_baselines(df: pd.DataFrame):
    """The drafting points with their Flash-AR baseline: (frame with columns
    base_tokens_per_s and speedup, context columns, borrowed, lost).  The
    baseline is the Flash-AR point with the same context (every varying
    parameter but the policy and its draft); a point whose trace Flash-AR did
    not run on borrows the Flash-AR point of its context on the other traces
    when those all give the same tokens/s (borrowed: the rows' index ->
    (value, traces it ran on)).  lost: the drafting points without a
    baseline."""
    ctx = [c for c in fr.label_columns(df) if c not in ("variant", "policy", "policy_params",
                                                          "draft")]
    ar = df[df["policy"] == "flash_ar"]
    other = df[df["policy"] != "flash_ar"]
    if ar.empty or other.empty:
        return other.iloc[0:0].assign(base_tokens_per_s=[], speedup=[]), ctx, {}, other

    def key(d: pd.DataFrame, cols: list[str]) -> pd.Series:
        return d[cols].astype(str).agg("|".join, axis=1) if cols else \
            pd.Series("", index=d.index)

    base = dict(zip(key(ar, ctx), ar["tokens_per_s"].astype(float)))
    loose = [c for c in ctx if c != "trace"]
    alt: dict[str, list] = {}
    for k, v, t in zip(key(ar, loose), ar["tokens_per_s"].astype(float),
                       ar["trace"] if "trace" in ar.columns else [""] * len(ar)):
        alt.setdefault(k, []).append((v, str(t)))
    vals, borrowed = [], {}
    for i, k, k2 in zip(other.index, key(other, ctx), key(other, loose)):
        if k in base:
            vals.append(base[k])
            continue
        cand = alt.get(k2, []) if "trace" in ctx else []
        vs = [v for v, _ in cand]
        if vs and max(vs) - min(vs) <= 1e-9 * max(vs):
            vals.append(vs[0])
            borrowed[i] = (vs[0], sorted({t for _, t in cand}))
        else:
            vals.append(math.nan)
    out = other.copy()
    out["base_tokens_per_s"] = vals
    lost = out[out["base_tokens_per_s"].isna()]
    out = out[~out["base_tokens_per_s"].isna()]
    out["speedup"] = out["tokens_per_s"].astype(float) / out["base_tokens_per_s"]
    return out, ctx, borrowed, lost


def speedup_frame(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The drafting points that have a Flash-AR baseline (speedup_baselines),
    with columns base_tokens_per_s and speedup; and the context columns."""
    out, ctx, _, _ = speedup_baselines(df)
    return out, ctx


def geomean(v) -> float:
    v = np.asarray(v, dtype=float)
    return float(np.exp(np.log(v).mean())) if len(v) else math.nan


def bar_figure(d: pd.DataFrame, value: str, ser: list[str], cat: list[str],
               facet: list[str], title: str, ylabel: str, ci: bool = False,
               with_geomean: bool = False, reference: float | None = None):
    """Grouped vertical bars: a group per combination of `cat` on the x axis,
    a bar per combination of `ser` (colour, hatch; one legend), a panel per
    combination of `facet` (and per chunk of at most fs.MAX_LEGEND series,
    each panel then with its own legend); optionally a geometric-mean group
    per panel and a dashed reference line (the Flash-AR baseline at 1x).
    A bar a series lacks in a group is named in a note."""
    one = "decode throughput" + (" (error bar: 95% CI)" if ci else "")
    d = d.assign(_series=[disp_of(r, ser) if ser else one for _, r in d.iterrows()],
                 _group=[disp_of(r, cat, "\n") if cat else "all" for _, r in d.iterrows()])
    series = list(dict.fromkeys(d["_series"]))
    if len(series) > MAX_SERIES:
        raise TooManySeries(len(series))
    st = fs.styles(series, policies="variant" in ser)
    title = with_held(title, d)
    most = fs.MAX_LEGEND - 2 - (1 if reference is not None else 0)

    def in_order(names: list[str], k: int) -> list[list[str]]:
        return [names[i:i + k] for i in range(0, len(names), k)]

    chunker = fs.chunk_series if "variant" in ser else in_order
    ngroups = max(sub["_group"].nunique() for _, sub in fr.groups(d, facet)) + \
        (1 if with_geomean else 0)
    nser = max(len(c) for _, sub in fr.groups(d, facet)
               for c in chunker(list(dict.fromkeys(sub["_series"])), most))
    w = min(11.0, max(4.8, 0.24 * ngroups * nser + 1.5))
    # group names too long for their place are written at a slant, on one line
    # (slanted lines of one name would run into the next name's)
    longest = max(len(ln) for g in d["_group"] for ln in str(g).split("\n"))
    slant = longest * 0.075 > 0.85 * w / max(1, ngroups)
    if slant:
        longest = max(len(str(g).replace("\n", " · ")) for g in d["_group"])
    h = 3.2 + (0.045 * longest + 0.2 if slant else
               0.3 + 0.15 * max(str(g).count("\n") for g in d["_group"]))
    fig, cells, split = facet_panels(d, facet, most, w, h, chunker=chunker)
    tops = {}
    lacking: dict[tuple[str, str], list[str]] = {}
    for ax, sub, part, ch in cells:
        gnames = list(dict.fromkeys(sub["_group"]))
        if with_geomean and len(gnames) > 1:
            gnames.append("geomean")
        bw = 0.8 / len(ch)
        nbars = len(gnames) * len(ch)
        top = 0.0
        for j, name in enumerate(ch):
            s = part[part["_series"] == name]
            vals, lo, hi = [], [], []
            for g in gnames:
                sg = s if g == "geomean" else s[s["_group"] == g]
                v = geomean(sg[value]) if g == "geomean" else \
                    float(sg[value].mean()) if len(sg) else math.nan
                if g != "geomean" and not len(sg):
                    lacking.setdefault((name, g.replace("\n", " · ")), []).append(
                        disp_of(sub.iloc[0], facet) if facet else "")
                vals.append(v)
                single = ci and g != "geomean" and len(sg) == 1
                lo.append(max(0.0, v - float(sg["tokens_per_s_lo"].iloc[0])) if single else 0.0)
                hi.append(max(0.0, float(sg["tokens_per_s_hi"].iloc[0]) - v) if single else 0.0)
                if v == v:
                    top = max(top, v + hi[-1])
            xs = np.arange(len(gnames)) + (j - (len(ch) - 1) / 2) * bw
            bars = ax.bar(xs, vals, bw, label=name, yerr=[lo, hi] if ci else None,
                          capsize=2 if ci else 0,
                          error_kw={"elinewidth": 0.8, "ecolor": "#333333"},
                          **fs.bar_kw(st[name]))
            if nbars <= 40 and not ci:
                ax.bar_label(bars, labels=[f"{v:.2f}" if v == v else "" for v in vals],
                             fontsize=6 if nbars > 16 else 7, padding=1,
                             rotation=90 if nbars > 16 else 0)
        tops[ax] = max(top, 1.15 if reference else 0.0)
        if reference is not None:
            ax.axhline(reference, color=fs.BASELINE_COLOUR, linestyle="--", linewidth=1,
                       label="Flash-AR (1×)")
        ax.set_xticks(range(len(gnames)))
        if slant:
            ax.set_xticklabels([g.replace("\n", " · ") for g in gnames], rotation=30,
                               ha="right", rotation_mode="anchor")
        else:
            ax.set_xticklabels(gnames)
        if "geomean" in gnames:
            ax.axvline(len(gnames) - 1.5, color="#999999", linewidth=0.8)
        t = panel_title(sub, facet, ch, split)
        if t:
            ax.set_title(t)
        register(ax, part, ["_series", "_group"])
        ax.grid(alpha=0.3, axis="y")
    for ax in tops:
        sib = [a for a in ax.get_shared_y_axes().get_siblings(ax) if a in tops]
        ax.set_ylim(0, max(tops[a] for a in sib) * 1.22)
    axes = [c[0] for c in cells]
    xlabel = names_of(cat) if cat else names_of(ser) or "point"
    if split:
        for ax in axes:
            fs.panel_legend(ax, names_of(ser) or None)
        fs.finish(fig, title, xlabel, ylabel)
    else:
        hs, ls = legend_entries(axes)
        fs.finish(fig, title, xlabel, ylabel, hs, ls, legend_title=names_of(ser) or None)
    notes = []
    if lacking:
        # per series and panel the groups it lacks, then the series alike
        per: dict = {}
        for (name, g), where in lacking.items():
            for w in where:
                per.setdefault((name, w), []).append(g)
        by: dict = {}
        for (name, w), gs in per.items():
            by.setdefault((w, tuple(gs)), []).append(name)
        items = [f"{', '.join(ns)} at {', '.join(gs)}" + (f" ({w})" if w else "")
                 for (w, gs), ns in by.items()]
        if len(items) > 12:
            items = items[:12] + [f"and {len(items) - 12} more"]
        notes.append("No bar for " + "; ".join(items) + ": the results hold no such row "
                     "(the script ran no such point, or it failed).")
    fs.add_notes(fig, notes)
    fs.declare(fig, series)
    fig.fs_panels = True
    if "variant" in ser:
        fig.fs_policy_series = series
    return fig


@series_guarded("Speed-up over Flash-AR")
def section_speedup(df: pd.DataFrame, figs: dict[str, bytes]) -> str:
    md = "## Speed-up over Flash-AR\n\n"
    sp, ctx, borrowed, lost = speedup_baselines(df)
    if sp.empty:
        return md + ("Skipped: no drafting point has a Flash-AR point with the same "
                     "target, workload, phone and settings.\n\n")
    notes, dropped = [], {}
    if borrowed:
        rows = df.loc[list(borrowed)]
        traces = list(dict.fromkeys(rows["trace"].astype(str)))
        ran = sorted({t for _, ts in borrowed.values() for t in ts})
        notes.append(
            f"Flash-AR did not run on {', '.join(disp('trace', t) for t in traces)}: "
            f"those points' baseline is the Flash-AR point with the same "
            f"{names_of([c for c in ctx if c != 'trace']) or 'settings'} on "
            f"{', '.join(disp('trace', t) for t in ran)}, which all give the same tokens/s "
            "(Flash-AR drafts nothing, so it does not see the draft data that tell these "
            "traces apart).")
    drawn = set(sp["variant"])
    for v in dict.fromkeys(lost["variant"]):
        pts = lost[lost["variant"] == v]
        why = ("no Flash-AR point with the same " +
               (names_of(ctx) if ctx else "settings"))
        if v not in drawn:
            dropped[disp("variant", v)] = why
        else:
            at = ", ".join(dict.fromkeys(disp_of(r, ctx) for _, r in pts.iterrows()))
            notes.append(f"{disp('variant', v)} at {at}: not drawn ({why}).")
    numeric = [c for c in ("dram_fraction", "max_new_tokens")
               if c in ctx and sp[c].nunique() > 1]
    # several drafts per policy that the target and the phone do not decide (the
    # trace may: a weak draft's own traces)
    several_drafts = "draft" in sp.columns and "draft" in drop_redundant_draft(
        sp, ["variant", "draft"] + [c for c in ctx if c != "trace"])
    if numeric:
        x = numeric[0]
        series = ["variant"] + (["draft"] if several_drafts else []) + \
            [c for c in ctx if c != x]
        logx = x == "max_new_tokens" and sp[x].max() >= 4 * sp[x].min()
        fig = line_figure(sp, x, 100.0 if x == "dram_fraction" else 1.0, series, False,
                          "Decode speed-up over Flash-AR\n(tokens/s over Flash-AR's on the "
                          "same " + names_of(ctx) + ")",
                          "target layers pinned in DRAM (%)" if x == "dram_fraction" else
                          "new tokens generated per prompt" + (" (log scale)" if logx else ""),
                          "speed-up over Flash-AR (×)", y="speedup", reference=1.0, logx=logx,
                          hole_frame=df[df["policy"] != "flash_ar"])
        names = [disp_of(r, ["variant"]) for _, r in sp.iterrows()]
        panel_of = ["" for _ in names]
    else:
        # the draft is a panel of its own where a policy ran with several drafts
        facet = [c for c in ("target",) if c in ctx] + (["draft"] if several_drafts else [])
        if not facet and n_combos(sp, ctx) > 6:
            facet = [c for c in ("device",) if c in ctx]
        within = sorted((c for c in ctx if c not in facet),
                        key=lambda c: {"trace": 0, "device": 1}.get(c, 2))
        title = ("Decode speed-up over Flash-AR\n(each bar: tokens/s over Flash-AR's on the "
                 "same " + (names_of(ctx) if ctx else "settings") +
                 "; geomean = geometric mean" + (" per panel" if facet else "") + ")")
        fig = bar_figure(sp, "speedup", ["variant"], within, facet, title,
                         "speed-up over Flash-AR (×)", with_geomean=True, reference=1.0)
        names = [disp_of(r, ["variant"]) for _, r in sp.iterrows()]
        panel_of = [disp_of(r, facet) if facet else "" for _, r in sp.iterrows()]
    fs.add_notes(fig, notes)
    if dropped:
        fs.declare(fig, list(getattr(fig, "fs_series", [])) + list(dropped),
                   {**getattr(fig, "fs_dropped", {}), **dropped})
    figs["speedup.png"] = fig_png(fig, "speedup.png")
    rows = [[fr.label_of(r, ctx) if ctx else "all", n, r["tokens_per_s"],
             r["base_tokens_per_s"], f"{r['speedup']:.3f}×"]
            for n, (_, r) in zip(names, sp.iterrows())]
    gm = []
    for p, n in dict.fromkeys(zip(panel_of, names)):
        v = [x for q, m, x in zip(panel_of, names, sp["speedup"]) if m == n and q == p]
        gm.append(([p] if any(panel_of) else []) + [n, len(v), f"{geomean(v):.3f}×"])
    return (md + "Tokens/s of each drafting point over the Flash-AR point with the same " +
            (", ".join(f"`{c}`" for c in ctx) if ctx else "settings") + ".\n\n"
            "![speed-up over Flash-AR](speedup.png)\n\n" + notes_md(fig) +
            fr.md_table(["point", "policy", "tokens/s", "Flash-AR tokens/s", "speed-up"],
                        rows) + "\nGeometric mean per policy" +
            (" and panel" if any(panel_of) else "") + ":\n\n" +
            fr.md_table((["panel"] if any(panel_of) else []) + ["policy", "points",
                                                                 "speed-up"], gm) + "\n")


def bar_layout(df: pd.DataFrame, labels: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(panel, x-axis group, bar colour) columns of a bar figure of every
    point: the bars' colours are always the policies (one colour per policy in
    every figure), the other varying columns on the x axis, and panels per
    target when there are many bars, per phone, ... when the design is sparse
    (ablations run most variants on one phone only), per DRAM budget, ...
    when groups of many bars are many."""
    cols = drop_redundant_draft(df, labels or ["variant"])
    facet = [c for c in ("target",) if c in cols and len(df) > 24]
    rest = [c for c in cols if c not in facet]
    ser = [c for c in rest if c in ("variant", "draft")] or ["variant"]
    cat = sorted((c for c in rest if c not in ser),
                 key=lambda c: {"trace": 0, "device": 1}.get(c, 2))
    while cat:
        cells = n_combos(df, facet) * n_combos(df, cat) * n_combos(df, ser)
        if n_combos(df, facet + cat + ser) >= 0.6 * cells:
            break
        move = next((c for c in ("device", "target", "trace", "draft") if c in cat), None)
        if move is None or n_combos(df, facet + [move]) > MAX_PANELS:
            break
        facet.append(move)
        cat.remove(move)
    while n_combos(df, cat) * n_combos(df, ser) > 60 and len(cat) > 1:
        move = next((c for c in ("dram_fraction", "max_new_tokens", "trace", "device")
                     if c in cat and n_combos(df, facet + [c]) <= MAX_PANELS), None)
        if move is None:
            break
        facet.append(move)
        cat.remove(move)
    return facet, cat, ser


@series_guarded("Throughput per point")
def section_throughput(df: pd.DataFrame, labels: list[str], ci: bool,
                       figs: dict[str, bytes]) -> str:
    md = "## Throughput per point\n\n"
    if len(df) < 2:
        return md + "Skipped: a single point (its throughput is in the table above).\n\n"
    if len(df) > MAX_BARS:
        return md + (f"Skipped: {len(df)} points are more than one figure shows as a bar each "
                     f"({MAX_BARS}); the table under Points lists them.\n\n")
    facet, cat, ser = bar_layout(df, labels)
    title = "Decode throughput per point"
    if facet:
        title += f" (one panel per {names_of(facet)})"
    if ci:
        title += "\nerror bars: 95% bootstrap interval over prompts"
    fig = bar_figure(df, "tokens_per_s", ser, cat, facet, title,
                     "decode throughput (tokens/s)", ci=ci)
    figs["throughput.png"] = fig_png(fig, "throughput.png")
    return (md + "Every point's tokens/s (the table under Points).\n\n"
            "![throughput per point](throughput.png)\n\n" + notes_md(fig))


def _stack(ax, sub: pd.DataFrame, names: dict[str, str], suffix: str, wall_col: str) -> float:
    """Horizontal stacked bars of the busy times (columns names[...] +
    suffix), the wall time as a black tick and the busy time beyond it
    hatched.  Returns the largest value drawn (the caller sets one x range
    over every panel of a column)."""
    ys = np.arange(len(sub))
    left = np.zeros(len(sub))
    for name, col in names.items():
        v = sub[col + suffix].to_numpy(dtype=float)
        colour, hatch = fs.RESOURCE_STYLE[name]
        ax.barh(ys, v, 0.7, left=left, label=name, color=colour, hatch=hatch,
                edgecolor="white", linewidth=0.4)
        left += v
    right = left
    if wall_col + suffix in sub.columns:
        wall = sub[wall_col + suffix].to_numpy(dtype=float)
        over = np.clip(left - wall, 0, None)
        ax.barh(ys, over, 0.7, left=wall, facecolor="none", edgecolor="black",
                hatch="////", linewidth=0.6,
                label="overlap (busy beyond the wall time: resources working at once)")
        ax.plot(wall, ys, linestyle="none", marker="|", markersize=12,
                markeredgewidth=2.2, color="black", label="wall time")
        right = np.concatenate([left, wall])
    ax.grid(alpha=0.3, axis="x")
    return float(np.nanmax(right)) if len(right) and np.isfinite(right).any() else 1.0


def section_breakdown(df: pd.DataFrame, labels: list[str], figs: dict[str, bytes]) -> str:
    md = "## Latency breakdown per cycle\n\n"
    missing = [c for c, _ in BREAKDOWN if c not in df.columns]
    if missing:
        return md + f"Skipped: the results lack {', '.join(missing)}.\n\n"
    if len(df) > MAX_BARS:
        return md + (f"Skipped: {len(df)} points are more than one figure shows as a bar each "
                     f"({MAX_BARS}; a mean over some of them would pool what differs).\n\n")
    cols = drop_redundant_draft(df, list(labels))
    names = {"draft": "draft_ms", "flash I/O": "flash_ms", "NPU": "npu_ms",
             "CPU": "cpu_only_ms", "KV": "kv_ms", "idle": "idle_ms"}
    # KV work is part of the CPU's busy time: the CPU segment shows the rest
    d = df.assign(cpu_only_ms=(df["cpu_ms"] - df["kv_ms"]).clip(lower=0))
    per_cycle = list(names.values()) + (["cycle_ms"] if "cycle_ms" in df.columns else [])
    # per generated token: a cycle's times over the tokens it emits
    tpc = d["tokens_per_cycle"].astype(float) if "tokens_per_cycle" in d.columns else None
    per_token = tpc is not None and bool((tpc > 0).all())
    if per_token:
        d = d.assign(**{c + "_tok": d[c].astype(float) / tpc for c in per_cycle})
    # every point is a bar of its own (a mean over workloads or phones would
    # pool what differs); many points: a grid of panels, a row per target and a
    # column per phone, per generated token only (the table has both)
    many = len(d) > MAX_BREAKDOWN
    facet = []
    if many:
        facet = [c for c in ("target", "device") if c in cols]
    else:
        for c in ("target", "device", "dram_fraction", "trace", "max_new_tokens"):
            if c in cols and len(d) > 24 and n_combos(d, facet + [c]) <= 6:
                facet.append(c)
                break
    within = [c for c in cols if c not in facet]
    pgroups = fr.groups(d, facet)
    sides = [("_tok", "per generated token")] if many and per_token else \
        [("", "per decode cycle")] + ([("_tok", "per generated token")] if per_token else [])
    longest = max([len(disp_of(r, within)) for _, r in d.iterrows()] if within else [3])
    label_in = 0.075 * longest + 0.3
    grid_layout = many and len(facet) >= 1
    if grid_layout:
        # a grid: a row per target and a column per phone, or (one of them
        # varies) the panels in rows of three; bars thinner than below 80
        if len(facet) == 2:
            rows_k = list(dict.fromkeys(d["target"].astype(str)))
            cols_k = list(dict.fromkeys(d["device"].astype(str)))
            place = {(rows_k.index(str(sub.iloc[0]["target"])),
                      cols_k.index(str(sub.iloc[0]["device"]))): sub for _, sub in pgroups}
        else:
            ncol = min(3, len(pgroups))
            place = {(k // ncol, k % ncol): sub for k, (_, sub) in enumerate(pgroups)}
            rows_k = list(range(max(i for i, _ in place) + 1))
            cols_k = list(range(ncol))
        per_row = [max([len(v) for (i, _), v in place.items() if i == r] or [1])
                   for r in range(len(rows_k))]
        heights = [max(fs.MIN_PANEL_IN + 0.4, 0.2 * n + 0.9) for n in per_row]
        fig, grid = plt.subplots(len(rows_k), len(cols_k), squeeze=False, sharex=True,
                                 figsize=((label_in + 3.6) * len(cols_k) + 0.6,
                                          sum(heights) + 0.5 * len(heights) + 1.8),
                                 gridspec_kw={"height_ratios": heights},
                                 constrained_layout=True)
        panels = []
        for i in range(len(rows_k)):
            for j in range(len(cols_k)):
                if (i, j) in place:
                    panels.append(([grid[i][j]], place[(i, j)]))
                else:
                    fig.delaxes(grid[i][j])
    else:
        heights = [max(fs.MIN_PANEL_IN + 0.4, 0.27 * len(sub) + 0.9) for _, sub in pgroups]
        fig, grid = plt.subplots(len(pgroups), len(sides), squeeze=False, sharey="row",
                                 sharex="col",
                                 figsize=(label_in + 3.7 + 4.0 * len(sides),
                                          sum(heights) + 0.5 * len(heights) + 1.6),
                                 gridspec_kw={"height_ratios": heights},
                                 constrained_layout=True)
        panels = [(list(grid[i]), sub) for i, (_, sub) in enumerate(pgroups)]
    # one x range per side over every panel: the largest bar may be anywhere
    tops = [0.0] * len(sides)
    for axes_row, sub in panels:
        for k, (suffix, what) in enumerate(sides):
            ax = axes_row[k]
            tops[k] = max(tops[k], _stack(ax, sub, names, suffix, "cycle_ms"))
            ys = np.arange(len(sub))
            ax.set_yticks(ys)
            ax.set_yticklabels([disp_of(r, within) if within else "all"
                                for _, r in sub.iterrows()], fontsize=7 if many else None)
            ax.set_ylim(len(sub) - 0.5, -0.5)  # first point on top
            head = disp_of(sub.iloc[0], facet) + "\n" if facet else ""
            ax.set_title(head + what)
            register(ax, sub, within)
    for axes_row, _ in panels:
        for k in range(len(sides)):
            axes_row[k].set_xlim(0, 1.04 * tops[k])
    flat = [a for row, _ in panels for a in row]
    bottom = [row for row, _ in panels][-1]
    for k, (suffix, what) in enumerate(sides):
        if not grid_layout:
            bottom[k].set_xlabel("time per decode cycle (ms)" if not suffix else
                                 "time per generated token (ms)\n= per cycle ÷ tokens per cycle")
    title = ("Latency breakdown: busy time of each resource, stacked\n"
             "black tick: wall time; hatched: overlap (resources working at once)")
    if len(sides) == 2:
        title += "\nleft per decode cycle; right per generated token, so that policies " \
            "emitting different tokens per cycle compare"
    elif many and per_token:
        title += f"\nper generated token (the cycle's times over tokens per cycle; {len(d)} " \
            "points: per cycle in the table)"
    title = with_held(title, d)
    if grid_layout and len(facet) == 2:
        title += "\n(a row of panels per target, a column per phone)"
    hs, ls = legend_entries(flat)
    fs.finish(fig, title, ("time per generated token (ms)" if per_token else
                           "time per decode cycle (ms)") if grid_layout else None,
              names_of(within) or "point", hs, ls, legend_title="resource", below=True)
    if not per_token:
        fs.add_notes(fig, ["No per-token panel: the results lack `tokens_per_cycle` (or it "
                           "is 0 somewhere)."])
    fs.declare(fig, ls)
    fig.fs_panels = True
    figs["latency_breakdown.png"] = fig_png(fig, "latency_breakdown.png")
    header = (cols or ["point"]) + list(names) + \
        (["cycle", "overlap"] if "cycle_ms" in d.columns else []) + \
        (["tokens/cycle", "ms/token"] if per_token else [])
    rows = []
    for _, r in d.iterrows():
        busy = sum(float(r[c]) for c in names.values())
        rows.append(([r[c] if c in fr.STRING_COLUMNS else fr.fmt_num(r[c]) for c in cols]
                     or ["all"]) + [float(r[c]) for c in names.values()] +
                    ([r["cycle_ms"], max(0.0, busy - float(r["cycle_ms"]))]
                     if "cycle_ms" in d.columns else []) +
                    ([r["tokens_per_cycle"], r["cycle_ms_tok"]]
                     if per_token and "cycle_ms" in d.columns else
                     [r["tokens_per_cycle"], math.nan] if per_token else []))
    return (md + "Segments are busy times of each resource (ms; drafting is the wall "
            "time of the draft phase, whose work also counts on its unit; CPU excludes the KV "
            "work shown apart), per decode cycle" +
            (" and per generated token (the cycle's times over `tokens_per_cycle`)"
             if per_token else "") +
            "; resources overlap, so a bar can exceed the wall time (black tick): the "
            "excess, hatched in the figure, is the `overlap` column.\n\n"
            "![latency breakdown](latency_breakdown.png)\n\n" + notes_md(fig) +
            fr.md_table(header, rows) + "\n")


# the parameter of each policy that sets its tree size (fsresults.tree_budget_of)
TREE_PARAM = {"lever": "n_max", "lyanna": "b", "sequoia": "max_nodes", "eagle2": "total_tokens",
              "opt_tree": "nodes", "edgellm": "max_tokens", "adaptive_chain": "k_max",
              "bld": "max_len", "chain": "k", "specinfer": "widths"}


def tree_series(df: pd.DataFrame, params: list[dict[str, str]]) -> list[str]:
    """A name per point for the tree figure: the policy and the parameters
    other than its tree-size parameter that differ from its defaults (3
    significant digits); a tuned point `POLICY tuned (max OBJECTIVE)`."""
    out = []
    for i, (p_, p) in enumerate(zip(df["policy"].astype(str), params)):
        row = df.iloc[i]
        if fr.is_tuned(row):
            out.append(fp.tuned_name(p_, row.get("tune_objective")))
            continue
        rest = {k: v for k, v in p.items() if k != TREE_PARAM.get(p_)}
        name = fp.canonical(p_, rest, 3)
        if name is None:  # a policy the defaults do not know
            same = [q for r, q in zip(df["policy"].astype(str), params) if r == p_]
            keys = [k for k in rest if len({q.get(k) for q in same}) > 1]
            name = f"{p_}[{','.join(f'{k}={rest[k]}' for k in keys)}]" if keys else p_
        out.append(name)
    return out


@series_guarded("Throughput vs tree budget")
def section_tree(df: pd.DataFrame, ci: bool, figs: dict[str, bytes]) -> str:
    md = "## Throughput vs tree budget\n\n"
    params = fr.params_per_row(df)
    d = df.assign(tree_series=tree_series(df, params),
                  _rows_nodes=[fr.tree_rows_are_nodes(p, q)
                               for p, q in zip(df["policy"], params)],
                  _capped=[not math.isnan(fr.tree_cap_of(p, q))
                           for p, q in zip(df["policy"], params)])
    ctx = [c for c in fr.label_columns(d) if c not in ("variant", "policy", "policy_params")]
    known = d[~d["tree_budget"].isna()]
    key = ["tree_series"] + ctx
    varies = [s for _, s in fr.groups(known, key) if s["tree_budget"].nunique() >= 2] \
        if len(known) else []
    if not varies:
        return md + ("Skipped: no series of points varies the tree budget (the nodes, root "
                     "included, of chain k, eagle2 total_tokens, specinfer widths, opt_tree "
                     "nodes, sequoia max_nodes, lever n_max, lyanna b, edgellm max_tokens "
                     "with fallback, adaptive_chain k_max, bld max_len).\n\n")
    has_max = "verify_rows_max" in known.columns
    hollow: list[str] = []

    def mark(ax, name, g, xs, st) -> None:
        ys = g["tokens_per_s"].to_numpy(dtype=float)
        rmax = g["verify_rows_max"].to_numpy(dtype=float) if has_max else \
            np.full(len(g), math.nan)
        free = g["_capped"].to_numpy(dtype=bool) & (rmax < g["tree_budget"].to_numpy(float))
        if free.any():
            ax.plot(xs[free], ys[free], linestyle="none", marker=st["marker"], markersize=6,
                    markerfacecolor="white", markeredgecolor=st["color"], zorder=4)
            hollow.append(name)
        fs.register_tree_points(ax, name, xs, g["tree_budget"].to_numpy(float), rmax,
                                g["_rows_nodes"].to_numpy(dtype=bool))

    keep = where_it_varies(known, "tree_budget", key)
    left = known[~keep]
    known = known[keep]
    logx = known["tree_budget"].max() >= 4 * known["tree_budget"].min()
    fig = line_figure(known, "tree_budget", 1.0, key, ci, "Decode throughput vs tree budget",
                      "tree budget: nodes, root included (the rows of one verification)" +
                      (", log scale" if logx else ""),
                      order=["policy"] + FACET_ORDER, logx=logx, holes=False, on_series=mark,
                      # the ticks name the budgets of the series that vary first
                      tick_values=list(known["tree_budget"]) +
                      3 * list(pd.concat(varies)["tree_budget"]),
                      left_out=[(left, f"no series of their setting "
                                       f"({names_of(ctx) or 'all'}) varies the tree budget"),
                                (d[d["tree_budget"].isna()],
                                 "their policy's parameters set no tree size or node cap")])
    notes = []
    if hollow:
        notes.append("Hollow marker: the cap never bound (no verification used as many rows "
                     "as the cap, verify_rows_max); the policy sized its trees below it, so a "
                     "larger cap gives the same point.")
    br = known[~known["_rows_nodes"]]
    if len(br):
        notes.append(f"{', '.join(dict.fromkeys(br['tree_series']))}: each branch is verified "
                     "as a sequence of its own (shared prefixes repeated), so a verification "
                     "sends more rows than the tree has nodes" +
                     (f" (up to {fr.fmt_num(br['verify_rows_max'].max())})" if has_max else "")
                     + ".")
    fs.add_notes(fig, notes)
    figs["throughput_vs_tree.png"] = fig_png(fig, "throughput_vs_tree.png")
    rows = []
    series = ["tree_series"] + ctx
    for _, sub in fr.groups(known, series):
        sub = sub.sort_values("tree_budget")
        name = disp_of(sub.iloc[0], series)
        for _, r in sub.iterrows():
            rmax = r["verify_rows_max"] if has_max else math.nan
            binds = "—" if not r["_capped"] or rmax != rmax else \
                ("yes" if rmax >= r["tree_budget"] else "no")
            rows.append([name, r["tree_budget"],
                         r["verify_rows"] if "verify_rows" in r else math.nan, rmax, binds] +
                        tput_cells(r, ci) +
                        [r["mean_accepted"] if "mean_accepted" in r else math.nan])
    return (md + "Tree budget: the nodes of one verified tree, root included (the rows of one "
            "verification): the fixed tree of chain (k + 1), eagle2 (total_tokens + 1) and "
            "specinfer, Flash-AR 1, or the cap of lever (n_max + 1), lyanna (b + 1), sequoia "
            "(max_nodes), opt_tree (nodes + 1), edgellm with fallback (max_tokens + 1), "
            "adaptive_chain (k_max + 1) and bld (max_len + 1).\n\n"
            "![throughput vs tree budget](throughput_vs_tree.png)\n\n" + notes_md(fig) +
            fr.md_table(["series", "budget", "rows/cycle", "most rows", "cap binds"] +
                        tput_header(ci) + ["accepted/cycle"], rows) + "\n")


def pruning_sets(df: pd.DataFrame) -> list[pd.DataFrame]:
    """Sets of points that differ in their policy's `pruning` parameter
    alone (every other parameter and every other column of PARAM_COLUMNS
    equal), each with at least two pruning settings."""
    params = fr.params_per_row(df)
    other = [c for c in fr.PARAM_COLUMNS if c in df.columns and c != "policy_params"]
    sets: dict = {}
    for (idx, r), p in zip(df.iterrows(), params):
        if "pruning" not in p:
            continue
        key = (tuple(sorted((k, v) for k, v in p.items() if k != "pruning")),
               tuple(str(r[c]) for c in other))
        sets.setdefault(key, []).append((idx, p["pruning"]))
    out = []
    for members in sets.values():
        if len({m for _, m in members}) >= 2:
            sub = df.loc[[i for i, _ in members]].copy()
            sub["pruning"] = [m for _, m in members]
            out.append(sub)
    return out


def section_pruning(df: pd.DataFrame, labels: list[str], ci: bool,
                    figs: dict[str, bytes]) -> str:
    md = "## Pruning trade-off\n\n"
    missing = [c for c in ("rows_kept", "retention") if c not in df.columns]
    if missing:
        return md + f"Skipped: the results lack {', '.join(missing)}.\n\n"
    pruned = df[df["rows_kept"] < 1 - 1e-12]
    if pruned.empty:
        return md + ("Skipped: no point pruned any row (rows_kept = 1 everywhere; "
                     "lever's `pruning` switch prunes).\n\n")
    sets = pruning_sets(df)
    if not sets:
        with_p = df[[("pruning" in p) for p in fr.params_per_row(df)]]
        diff = [names_of([c]) for c in fr.label_columns(with_p)
                if c not in ("variant", "policy", "policy_params")]
        return md + ("Skipped: `pruning` does not vary with everything else fixed (no two "
                     "points differ in their policy's `pruning` parameter alone), so a "
                     "trend across these points would show their other differences" +
                     (f" ({', '.join(diff)})" if diff else "") + ", not pruning.\n\n")
    d = pd.concat(sets)
    modes = list(dict.fromkeys(d["pruning"]))
    st = fs.styles([f"pruning={m}" for m in modes], policies=False)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.4), constrained_layout=True)
    for sub in sets:
        sub = sub.sort_values("rows_kept")
        for a, y in ((a1, "retention"), (a2, "tokens_per_s")):
            a.plot(sub["rows_kept"], sub[y], color="#aaaaaa", linewidth=0.8, zorder=1)
    for m in modes:
        sub = d[d["pruning"] == m]
        name = f"pruning={m}"
        kw = {"color": st[name]["color"], "marker": st[name]["marker"]}
        a1.scatter(sub["rows_kept"], sub["retention"], label=name, s=36, alpha=0.9, zorder=3,
                   **kw)
        a2.errorbar(sub["rows_kept"], sub["tokens_per_s"], yerr=yerr_of(sub, ci),
                    linestyle="none", capsize=3, markersize=6, alpha=0.9, label=name,
                    zorder=3, **kw)
    a1.set_xlabel("share of tree rows kept past the exit layer")
    a1.set_ylabel("retention (accepted tokens vs unpruned)")
    a1.set_title("what pruning costs in acceptance")
    a2.set_xlabel("share of tree rows kept past the exit layer")
    a2.set_ylabel("decode throughput (tokens/s)")
    a2.set_title("what it does to throughput")
    # every marker is one point: it pools nothing
    every = fr.label_columns(d) + ["pruning"]
    for a in (a1, a2):
        a.grid(alpha=0.3)
        register(a, d, every)
    title = with_held("Verification pruning trade-off: points that differ in `pruning` alone\n"
                      f"(a grey line joins each such set: {len(sets)} set"
                      f"{'s' if len(sets) > 1 else ''})", d)
    hs, ls = legend_entries([a1])
    fs.finish(fig, title, None, None, hs, ls, legend_title="pruning")
    left = len(df[[("pruning" in p) for p in fr.params_per_row(df)]]) - len(d)
    if left:
        fs.add_notes(fig, [f"{left} point(s) with a `pruning` parameter have no counterpart "
                           "that differs in `pruning` alone; they are not drawn (they would "
                           "mix other differences into the trend)."])
    fs.declare(fig, [f"pruning={m}" for m in modes])
    fig.fs_panels = True
    figs["pruning_tradeoff.png"] = fig_png(fig, "pruning_tradeoff.png")
    rows = []
    for k, sub in enumerate(sets, start=1):
        for _, r in sub.iterrows():
            rows.append([str(k), fr.label_of(r, labels) if labels else r["policy"],
                         r["pruning"], r["rows_kept"], r["retention"]] + tput_cells(r, ci))
    return (md + "![pruning trade-off](pruning_tradeoff.png)\n\n" + notes_md(fig) +
            fr.md_table(["set", "point", "pruning", "rows kept", "retention"] +
                        tput_header(ci), rows) + "\n")


def parse_hist(s) -> list[float] | None:
    """accepted_hist cell: ';'-separated cycle counts by accepted length 0, 1, ..."""
    try:
        return [float(x) for x in str(s).split(";") if x != ""]
    except ValueError:
        return None


# the columns the accepted-length figure gets a panel per value of, in order
# (a study's own variable first), while the panels stay few
ACCEPT_FACETS = ["dram_fraction", "max_new_tokens", "target", "draft", "device", "trace",
                 "accept", "temperature", "top_p", "runtime"]
MAX_ACCEPT_PANELS = 9


def accepted_facets(d: pd.DataFrame) -> list[str]:
    """The columns of ACCEPT_FACETS the accepted-length distribution gets a
    panel per value of: every one that varies among the drafting points (a
    panel pools no target, workload, phone, DRAM budget, ...), less those the
    others decide."""
    facet: list[str] = []
    for c in fr.varying(d, ACCEPT_FACETS):
        if n_combos(d, facet + [c]) > n_combos(d, facet):
            facet.append(c)
    return facet


@series_guarded("Accepted length")
def section_accepted(df: pd.DataFrame, labels: list[str], figs: dict[str, bytes]) -> str:
    md = "## Accepted length\n\n"
    d = df[df["policy"] != "flash_ar"]
    if "mean_accepted" not in df.columns or d.empty:
        return md + "Skipped: no drafting point (only Flash-AR, or no `mean_accepted`).\n\n"
    facet = accepted_facets(d)
    hist = "accepted_hist" in d.columns and \
        all(parse_hist(h) is not None for h in d["accepted_hist"])
    if hist:
        cells = sum(len(fs.chunk_series(list(dict.fromkeys(disp("variant", v)
                                                           for v in sub["variant"])),
                                        fs.MAX_LEGEND - 2))
                    for _, sub in fr.groups(d, facet))
        hist = cells <= MAX_ACCEPT_PANELS
    if not hist:
        return md + accepted_bars(d, labels, figs, "accepted_hist" in d.columns)
    # per-cycle distribution per panel and policy variant: its points' histograms summed
    # (one point each: the panels hold every other variable fixed)
    dist: dict[tuple, np.ndarray] = {}
    panel_rows = {}
    for key, sub in fr.groups(d, facet):
        pk = disp_of(sub.iloc[0], facet) if facet else ""
        panel_rows[pk] = sub
        shown_sub = sub["variant"].map(lambda v: disp("variant", v))
        for name in dict.fromkeys(shown_sub):
            total: list[float] = []
            for _, r in sub[shown_sub == name].iterrows():
                h = parse_hist(r["accepted_hist"]) or []
                total += [0.0] * (len(h) - len(total))
                for k, x in enumerate(h):
                    total[k] += x
            if total and sum(total) > 0:
                dist[(pk, name)] = np.asarray(total) / sum(total)
    names_all = list(dict.fromkeys(n for _, n in dist))
    if len(names_all) > MAX_SERIES:
        raise TooManySeries(len(names_all))
    st = fs.styles(names_all)
    cells, split = [], False
    for pk in panel_rows:
        chunks = fs.chunk_series([n for (p, n) in dist if p == pk], fs.MAX_LEGEND - 2)
        split = split or len(chunks) > 1
        cells += [(pk, ch) for ch in chunks]
    same = len({tuple(p) for _, p in cells}) == 1
    # a legend beside every panel (panels that show different series): room for it
    own = split or not same
    fig, axes = fs.panels(len(cells), sharex=True, sharey=True, w=5.6 if own else 4.6,
                          h=3.6 if own else 3.3)
    width = max(len(p) for p in dist.values()) if dist else 1
    for ax, (pk, part) in zip(axes, cells):
        for name in part:
            p = dist[(pk, name)]
            ax.plot(range(len(p)), p, markersize=4, label=name, **fs.line_kw(st[name]))
        t = pk + ("\n" + chunk_title(part) if split and "[" in "".join(part) else "")
        if t.strip():
            ax.set_title(t.strip())
        ax.grid(alpha=0.3)
        ax.set_xlim(-0.5, width - 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        rows = panel_rows[pk]
        register(ax, rows[rows["variant"].map(lambda v: disp("variant", v)).isin(part)],
                 ["variant"])
    title = with_held("Accepted draft tokens per cycle (distribution over cycles)", d)
    if facet:
        title += f"\none panel per {names_of(facet)}"
    if same and not split:
        hs, ls = legend_entries(axes)
        fs.finish(fig, title, "accepted draft tokens in a cycle", "share of cycles", hs, ls,
                  legend_title="policy")
    else:
        for ax in axes:
            fs.panel_legend(ax, "policy")
        fs.finish(fig, title, "accepted draft tokens in a cycle", "share of cycles")
    fs.declare(fig, names_all)
    fig.fs_panels = True
    fig.fs_policy_series = names_all
    figs["accepted_length.png"] = fig_png(fig, "accepted_length.png")
    width = max(len(p) for p in dist.values()) if dist else 0
    rows = [([pk] if facet else []) + [n] + [f"{x:.3f}" for x in p] +
            [""] * (width - len(p)) for (pk, n), p in dist.items()]
    return (md + "Per-cycle distribution (`accepted_hist`) of each policy" +
            (f", a panel per {names_of(facet)}" if facet else "") +
            ".\n\n![accepted length](accepted_length.png)\n\n" + notes_md(fig) +
            fr.md_table((["panel"] if facet else []) + ["policy"] +
                        [str(k) for k in range(width)], rows) + "\n")


def accepted_bars(d: pd.DataFrame, labels: list[str], figs: dict[str, bytes],
                  has_hist: bool) -> str:
    """Mean accepted draft tokens per cycle of every drafting point as bars
    (the layout of the throughput figure): where the distribution would need
    more than MAX_ACCEPT_PANELS panels to pool nothing, or the results lack
    accepted_hist."""
    if len(d) > MAX_BARS:
        return (f"Skipped: {len(d)} drafting points are more than one figure shows as a bar "
                f"each ({MAX_BARS}).\n\n")
    facet, cat, ser = bar_layout(d, [c for c in labels if c in fr.label_columns(d)] or
                                 ["variant"])
    title = "Mean accepted draft tokens per cycle, per point"
    if facet:
        title += f" (one panel per {names_of(facet)})"
    fig = bar_figure(d, "mean_accepted", ser, cat, facet, title,
                     "mean accepted draft tokens per cycle")
    figs["accepted_length.png"] = fig_png(fig, "accepted_length.png")
    why = ("the per-cycle distributions (`accepted_hist`) would need more than "
           f"{MAX_ACCEPT_PANELS} panels to keep every target, workload, phone and setting "
           "apart" if has_hist else "the results hold per-point means only (no "
           "`accepted_hist` column)")
    rows = [[disp_of(r, fr.label_columns(d)) if fr.label_columns(d) else "all",
             r["mean_accepted"], r.get("tokens_per_cycle", math.nan)] for _, r in d.iterrows()]
    return ("Mean accepted draft tokens per cycle of every drafting point (" + why +
            ").\n\n![accepted length](accepted_length.png)\n\n" + notes_md(fig) +
            fr.md_table(["point", "accepted/cycle", "tokens/cycle"], rows[:MAX_TABLE_ROWS]) +
            "\n")


# ---------------------------------------------------------------------- main

md_escape, md_code = fr.md_escape, fr.md_code


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
