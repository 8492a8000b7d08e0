"""The report's latency breakdown section (analysis/report.py): busy times
stacked per cycle and per generated token.
"""
from __future__ import annotations

import math

if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
    from .rep_common import (MAX_BARS, disp_of, drop_redundant_draft, fig_png, legend_entries,
        n_combos, names_of, notes_md, register, with_held)
else:  # imported with analysis/ on sys.path (analysis/report.py run as a script)
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
    from rep_common import (MAX_BARS, disp_of, drop_redundant_draft, fig_png,
        legend_entries, n_combos, names_of, notes_md, register, with_held)  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


BREAKDOWN = [("draft_ms", "draft"), ("flash_ms", "flash I/O"), ("npu_ms", "NPU"),
             ("cpu_ms", "CPU"), ("kv_ms", "KV"), ("idle_ms", "idle")]
MAX_BREAKDOWN = 80  # points in the latency breakdown before it shows per token only


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
