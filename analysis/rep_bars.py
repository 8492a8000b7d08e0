"""The report's bar figures (analysis/report.py): grouped bars per series
(bar_figure, bar_layout, also drawn by the speed-up and accepted-length
sections), the table of every point and the throughput section.
"""
from __future__ import annotations

import math

if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
    from .rep_common import (MAX_BARS, MAX_PANELS, MAX_SERIES, MAX_TABLE_ROWS, TooManySeries,
        disp_of, drop_redundant_draft, facet_panels, fig_png, legend_entries, n_combos, names_of,
        notes_md, panel_title, register, series_guarded, tput_cells, tput_header, with_held)
else:  # imported with analysis/ on sys.path (analysis/report.py run as a script)
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
    from rep_common import (MAX_BARS, MAX_PANELS, MAX_SERIES, MAX_TABLE_ROWS,
        TooManySeries, disp_of, drop_redundant_draft, facet_panels, fig_png,
        legend_entries, n_combos, names_of, notes_md, panel_title, register,
        series_guarded, tput_cells, tput_header, with_held)  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


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
