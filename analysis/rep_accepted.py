"""The report's accepted-length section (analysis/report.py): the
distribution of accepted draft tokens per cycle, a panel per value of the
study's variables.
"""
from __future__ import annotations

import math

if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
    from .rep_common import (MAX_BARS, MAX_SERIES, MAX_TABLE_ROWS, TooManySeries, chunk_title,
        disp, disp_of, fig_png, legend_entries, n_combos, names_of, notes_md, register,
        series_guarded, with_held)
    from .rep_bars import (bar_figure, bar_layout)
else:  # imported with analysis/ on sys.path (analysis/report.py run as a script)
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
    from rep_common import (MAX_BARS, MAX_SERIES, MAX_TABLE_ROWS, TooManySeries,
        chunk_title, disp, disp_of, fig_png, legend_entries, n_combos, names_of,
        notes_md, register, series_guarded, with_held)  # noqa: E402
    from rep_bars import (bar_figure, bar_layout)  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
import pandas as pd  # noqa: E402


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
