"""The report's line figures (analysis/report.py): tokens/s against a swept
value, a line per series (line_figure, also drawn by the speed-up and tree
sections), and the sections against the DRAM budget and the output length.
"""
from __future__ import annotations

if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
    from .rep_common import (FACET_ORDER, MAX_SERIES, TooManySeries, disp_of,
        drop_redundant_draft, facet_panels, fig_png, has_band, hole_notes, legend_entries,
        log2_ticks, names_of, notes_md, panel_title, register, series_guarded, split_facets,
        tput_cells, tput_header, tuned_knobs, where_it_varies, with_held, yerr_of)
else:  # imported with analysis/ on sys.path (analysis/report.py run as a script)
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
    from rep_common import (FACET_ORDER, MAX_SERIES, TooManySeries, disp_of,
        drop_redundant_draft, facet_panels, fig_png, has_band, hole_notes,
        legend_entries, log2_ticks, names_of, notes_md, panel_title, register,
        series_guarded, split_facets, tput_cells, tput_header, tuned_knobs,
        where_it_varies, with_held, yerr_of)  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
import pandas as pd  # noqa: E402


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
