"""Shared look of the analysis figures: a colour-blind-safe palette, series
styles that stay distinct beyond the palette, small-multiple layouts, and the
check that every figure explains itself (title, axis labels, legend).

Palette: Okabe & Ito, "Color Universal Design" (2008), eight colours told apart
under the common colour-vision deficiencies.  Black is kept for the Flash-AR
baseline (and reference lines); the other seven colours go to series in order.
A series' style combines its colour with a marker (six) and a line style or a
bar hatch (four each), so series k and j differ in colour or marker for every
k != j below 42, and the line style or hatch changes every seven series.
"""
from __future__ import annotations

import math
import textwrap
from typing import Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Okabe-Ito, by name; SERIES_COLOURS is the order series take them in
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky blue": "#56B4E9",
    "bluish green": "#009E73", "yellow": "#F0E442", "blue": "#0072B2",
    "vermillion": "#D55E00", "reddish purple": "#CC79A7",
}
SERIES_COLOURS = [OKABE_ITO[c] for c in ("blue", "vermillion", "bluish green", "orange",
                                         "reddish purple", "sky blue", "yellow")]
BASELINE_COLOUR = OKABE_ITO["black"]
MARKERS = ["o", "s", "^", "D", "v", "P"]
LINESTYLES = ["-", "--", ":", "-."]
HATCHES = ["", "//", "..", "xx"]
# resources of the latency breakdown, each its own colour and hatch
RESOURCE_STYLE = {
    "draft": (OKABE_ITO["reddish purple"], ""),
    "flash I/O": (OKABE_ITO["blue"], ""),
    "NPU": (OKABE_ITO["vermillion"], ""),
    "CPU": (OKABE_ITO["bluish green"], ""),
    "KV": (OKABE_ITO["orange"], ""),
    "idle": ("#dddddd", ""),
}

TITLE_SIZE = 12
PANEL_TITLE_SIZE = 10
LABEL_SIZE = 10
TICK_SIZE = 9
LEGEND_SIZE = 9

matplotlib.rcParams.update({
    "axes.titlesize": PANEL_TITLE_SIZE, "axes.labelsize": LABEL_SIZE,
    "xtick.labelsize": TICK_SIZE, "ytick.labelsize": TICK_SIZE,
    "legend.fontsize": LEGEND_SIZE, "figure.titlesize": TITLE_SIZE,
    "axes.prop_cycle": matplotlib.cycler(color=SERIES_COLOURS),
})


def family(name: str) -> str:
    """The policy of a series label: 'lever[n_max=64] code' -> 'lever'."""
    return str(name).split("[")[0].split(" ")[0]


def is_baseline(name: str) -> bool:
    return family(name) == "flash_ar"


def style(k: int) -> dict:
    """Series k's colour, marker, line style and hatch."""
    return {"color": SERIES_COLOURS[k % len(SERIES_COLOURS)],
            "marker": MARKERS[k % len(MARKERS)],
            "linestyle": LINESTYLES[(k // len(SERIES_COLOURS)) % len(LINESTYLES)],
            "hatch": HATCHES[(k // len(SERIES_COLOURS)) % len(HATCHES)]}


def styles(names: Iterable[str]) -> dict[str, dict]:
    """A distinct style per name, in order; Flash-AR series are black."""
    out: dict[str, dict] = {}
    k = 0
    for n in names:
        if n in out:
            continue
        if is_baseline(n):
            out[n] = {"color": BASELINE_COLOUR, "marker": "X", "linestyle": "-", "hatch": ""}
        else:
            out[n] = style(k)
            k += 1
    return out


def line_kw(st: dict) -> dict:
    return {"color": st["color"], "marker": st["marker"], "linestyle": st["linestyle"]}


def bar_kw(st: dict) -> dict:
    return {"color": st["color"], "hatch": st["hatch"], "edgecolor": "white" if not st["hatch"]
            else "#333333", "linewidth": 0.4}


def panels(n: int, ncols: int = 3, w: float = 4.6, h: float = 3.6, sharex: bool = False,
           sharey: bool = False, heights: list[float] | None = None):
    """A figure with n panels, up to ncols a row (one column when heights is
    given: the panels' relative heights); the unused cells are removed."""
    if heights is not None:
        # an inch more for the title above and the axis label below
        fig, axes = plt.subplots(n, 1, figsize=(w, sum(heights) + 1.0), squeeze=False,
                                 sharex=sharex, gridspec_kw={"height_ratios": heights})
        return fig, list(axes[:, 0])
    cols = max(1, min(ncols, n))
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(w * cols, h * rows), squeeze=False,
                             sharex=sharex, sharey=sharey)
    flat = list(axes.flat)
    for ax in flat[n:]:
        fig.delaxes(ax)
    return fig, flat[:n]


def finish(fig, title: str, xlabel: str | None = None, ylabel: str | None = None,
           handles=None, labels=None, legend_title: str | None = None,
           below: bool = False) -> None:
    """Title, shared axis labels (for several panels) and one figure legend
    outside the panels (right of them, or below when `below`)."""
    axes = [a for a in fig.axes if a.get_visible()]
    if len(axes) > 1:
        if xlabel:
            fig.supxlabel(xlabel, fontsize=LABEL_SIZE)
        if ylabel:
            fig.supylabel(ylabel, fontsize=LABEL_SIZE)
    elif axes:
        if xlabel:
            axes[0].set_xlabel(xlabel)
        if ylabel:
            axes[0].set_ylabel(ylabel)
    w, h = fig.get_size_inches()
    # a title no wider than the figure (about 8 bold characters an inch)
    width = max(40, int(8 * w))
    title = "\n".join(textwrap.fill(line, width) for line in title.split("\n"))
    fig.suptitle(title, fontsize=TITLE_SIZE, fontweight="bold")
    # room for the shared labels, which tight_layout does not see
    supx = len(axes) > 1 and bool(xlabel)
    supy = len(axes) > 1 and bool(ylabel)
    # and room above the panels for every line of the title
    top = 1 - min(0.4, (0.22 * (title.count("\n") + 1) + 0.1) / h)
    fig.tight_layout(rect=(0.3 / w if supy else 0, 0.3 / h if supx else 0, 1, top))
    if handles:
        if below:
            ncol = max(1, min(len(handles), 4))
            fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                       ncol=ncol, title=legend_title, frameon=False)
        else:
            ncol = 1 if len(handles) <= 18 else 2
            top = max(a.get_position().y1 for a in axes) if axes else 0.93
            fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, top),
                       ncol=ncol, title=legend_title, frameon=False)


# ------------------------------------------------------------------ checking

def _text(t) -> str:
    return t.get_text().strip() if t is not None and t.get_visible() else ""


def figure_problems(fig, name: str = "figure") -> list[str]:
    """What a figure lacks to explain itself: a title (the figure's, or the
    title of its only panel), x and y axis labels on every panel (the figure's
    shared labels count), and a legend (the figure's or a panel's)."""
    probs = []
    axes = [a for a in fig.axes if a.get_visible() and a.axison]
    if not axes:
        return [f"{name}: no axes"]
    title = _text(getattr(fig, "_suptitle", None))
    if not title and len(axes) == 1:
        title = axes[0].get_title().strip()
    if not title:
        probs.append(f"{name}: no title")
    supx = _text(getattr(fig, "_supxlabel", None))
    supy = _text(getattr(fig, "_supylabel", None))
    for k, a in enumerate(axes):
        if a.get_label() == "<colorbar>":
            continue
        # a panel sharing its x axis with a labelled one (stacked lanes) counts
        xs = a.get_shared_x_axes().get_siblings(a)
        if not (supx or any(b.get_xlabel().strip() for b in xs)):
            probs.append(f"{name}: panel {k} has no x-axis label")
        if not (a.get_ylabel().strip() or supy):
            probs.append(f"{name}: panel {k} has no y-axis label")
    legends = [lg for lg in fig.legends if lg.get_visible()]
    legends += [a.get_legend() for a in axes if a.get_legend() is not None
                and a.get_legend().get_visible()]
    if not legends:
        probs.append(f"{name}: no legend")
    return probs
