"""Shared look of the analysis figures: a colour-blind-safe palette, series
styles that stay distinct beyond the palette, small-multiple layouts, notes
under a figure, and the check that every figure explains itself and does not
mislead (figure_problems: title, axis labels, legend; no label that is a hash;
no panel thinner than MIN_PANEL_IN; every series of the data in the legend or
reported as not drawn; a tree-size axis that agrees with verify_rows_max).

Palette: Okabe & Ito, "Color Universal Design" (2008), eight colours told apart
under the common colour-vision deficiencies.  Black is kept for the Flash-AR
baseline (and reference lines); the other seven colours go to series in order.
A series' style combines its colour with a marker (six) and a line style or a
bar hatch (four each), so series k and j differ in colour or marker for every
k != j below 42, and the line style or hatch changes every seven series.
"""
from __future__ import annotations

import math
import re
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
NOTE_SIZE = 8
# the least height of a panel (inches), and the most entries of one legend
MIN_PANEL_IN = 1.6
MAX_LEGEND = 10

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
           sharey=False, heights: list[float] | None = None):
    """A figure with n panels (constrained layout), up to ncols a row; one
    column when heights is given (the panels' heights in inches).  Every
    panel is at least MIN_PANEL_IN tall; the unused cells are removed."""
    if heights is not None:
        heights = [max(MIN_PANEL_IN + 0.4, x) for x in heights]
        # an inch more for the title above and the axis label below
        fig, axes = plt.subplots(n, 1, figsize=(w, sum(heights) + 0.45 * n + 1.2),
                                 squeeze=False, sharex=sharex, constrained_layout=True,
                                 gridspec_kw={"height_ratios": heights})
        return fig, list(axes[:, 0])
    h = max(h, MIN_PANEL_IN + 1.2)
    cols = max(1, min(ncols, n))
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(w * cols, h * nrows), squeeze=False,
                             sharex=sharex, sharey=sharey, constrained_layout=True)
    flat = list(axes.flat)
    for ax in flat[n:]:
        fig.delaxes(ax)
    if sharex and n % cols:
        # a panel with no panel below it shows its own x tick labels
        for k in range(max(0, n - cols), n):
            if k + cols >= n:
                flat[k].tick_params(labelbottom=True)
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
    constrained = fig.get_constrained_layout()
    if not constrained:
        # room for the shared labels, which tight_layout does not see
        supx = len(axes) > 1 and bool(xlabel)
        supy = len(axes) > 1 and bool(ylabel)
        # and room above the panels for every line of the title
        top = 1 - min(0.4, (0.22 * (title.count("\n") + 1) + 0.1) / h)
        fig.tight_layout(rect=(0.3 / w if supy else 0, 0.3 / h if supx else 0, 1, top))
    if handles:
        if below:
            ncol = max(1, min(len(handles), 4))
            fig.legend(handles, labels, loc="upper center",
                       bbox_to_anchor=(0.5, 0.0), ncol=ncol,
                       title=legend_title, frameon=False)
            # its height, for the notes below it (place_notes)
            fig._fs_below_in = 0.3 * math.ceil(len(handles) / ncol) + \
                (0.3 if legend_title else 0.0) + 0.1
        else:
            ncol = 1 if len(handles) <= 18 else 2
            # beside the top right panel (wherever the layout puts it)
            corner = _top_right(axes)
            if corner is not None:
                fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                           bbox_transform=corner.transAxes, ncol=ncol, title=legend_title,
                           frameon=False)
            else:
                fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.93),
                           ncol=ncol, title=legend_title, frameon=False)


def _top_right(axes):
    """The panel at the top right of a grid of panels (by grid cell, so
    before any layout has run), or None."""
    cells = []
    for a in axes:
        spec = a.get_subplotspec() if hasattr(a, "get_subplotspec") else None
        if spec is None:
            return None
        cells.append((spec.rowspan.start, -spec.colspan.stop, a))
    if not cells:
        return None
    top = min(c[0] for c in cells)
    return min((c for c in cells if c[0] == top), key=lambda c: c[1])[2]


def panel_legend(ax, title: str | None = None) -> None:
    """A legend of this panel's own series, right of the panel (for panels
    that each show other series)."""
    hs, ls = [], []
    for hd, lab in zip(*ax.get_legend_handles_labels()):
        if lab not in ls and not lab.startswith("_"):
            hs.append(hd)
            ls.append(lab)
    if hs:
        ax.legend(hs, ls, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
                  title=title, fontsize=LEGEND_SIZE - 1, title_fontsize=LEGEND_SIZE)


def chunk_series(names: list[str], most: int = 8) -> list[list[str]]:
    """Series names split into groups of at most `most` for panels of their
    own: by policy family, a family's variants by the parameters they change
    ('lever[drafting=...]' apart from 'lever[pruning=...]'), the family's
    default variant (no brackets) repeated in each of its groups as the
    reference; small groups share a panel.  One group when all fit."""
    names = list(dict.fromkeys(names))
    if len(names) <= most:
        return [names]
    blocks: list[list[str]] = []
    for fam in dict.fromkeys(family(n) for n in names):
        mem = [n for n in names if family(n) == fam]
        base = [n for n in mem if "[" not in str(n).split(" ")[0]]
        by: dict[str, list[str]] = {}
        for n in mem:
            if n in base:
                continue
            keys = ",".join(sorted(kv.split("=")[0] for kv in
                                   re.findall(r"\[(.*?)\]", str(n))[0].split(",")))
            by.setdefault(keys, []).append(n)
        groups = list(by.values()) or [[]]
        # pack a family's parameter groups, each panel led by the default variant
        room = max(1, most - len(base))
        packed: list[list[str]] = []
        for g in groups:
            for i in range(0, max(1, len(g)), room):
                part = g[i:i + room]
                if packed and len(packed[-1]) + len(part) <= room:
                    packed[-1] += part
                else:
                    packed.append(list(part))
        blocks += [base + p for p in packed if base + p]
    # families that fit together share a panel
    out: list[list[str]] = []
    for b in blocks:
        if out and len(out[-1]) + len(b) <= most and not any(
                family(n) == family(b[0]) for n in out[-1]):
            out[-1] += b
        else:
            out.append(b)
    return out


# ------------------------------------------------------------------ notes

def add_notes(fig, lines: Iterable[str]) -> None:
    """Notes under the figure (what it leaves out and why, what a marker
    means): one text block below everything, placed when the figure is saved
    (fsresults.fig_bytes calls place_notes)."""
    lines = [ln for ln in lines if ln]
    if not lines:
        return
    old = getattr(fig, "fs_notes", [])
    fig.fs_notes = old + [ln for ln in lines if ln not in old]
    art = getattr(fig, "_fs_note_artist", None)
    w, _ = fig.get_size_inches()
    text = "\n".join(textwrap.fill(ln, max(60, int(15 * w)), subsequent_indent="  ",
                                   break_on_hyphens=False, break_long_words=False)
                     for ln in fig.fs_notes)
    if art is None:
        fig._fs_note_artist = fig.text(0.0, 0.0, text, ha="left", va="top", fontsize=NOTE_SIZE,
                                       color="#333333")
        fig._fs_before_save = lambda: place_notes(fig)
    else:
        art.set_text(text)


def place_notes(fig) -> None:
    """Moves the notes' text below the figure's area (the panels and their
    labels fill it, the layout engines see to that) and below a legend
    placed under it (finish(below=True))."""
    art = getattr(fig, "_fs_note_artist", None)
    if art is None:
        return
    _, h = fig.get_size_inches()
    below = getattr(fig, "_fs_below_in", 0.0)
    art.set_position((0.01, -(below + 0.08) / h))


def declare(fig, series: Iterable[str], dropped: dict[str, str] | None = None) -> None:
    """The series the figure's data hold (each must be a legend entry) and
    those it does not draw, each with the reason (shown under the figure).
    figure_problems checks the legend against them."""
    fig.fs_series = [str(s) for s in dict.fromkeys(series)]
    fig.fs_dropped = {str(k): v for k, v in (dropped or {}).items()}
    if fig.fs_dropped:
        add_notes(fig, [f"Not drawn: {k} ({v})" for k, v in fig.fs_dropped.items()])


def register_tree_points(ax, label: str, xs, caps, rows_max, rows_are_nodes) -> None:
    """Records, for the check, the points of the line `label` on a tree-size
    axis: the x drawn, the budget the point was configured with (nodes, root
    included), the most rows one of its verifications used (verify_rows_max)
    and whether its rows are its tree's nodes."""
    pts = getattr(ax, "fs_tree_points", [])
    for x, c, r, nodes in zip(xs, caps, rows_max, rows_are_nodes):
        pts.append((str(label), float(x), float(c), float(r), bool(nodes)))
    ax.fs_tree_points = pts


# ------------------------------------------------------------------ checking

def _text(t) -> str:
    return t.get_text().strip() if t is not None and t.get_visible() else ""


# a hash as a label: a bare token of 8 or more hex digits with a letter and a
# digit among them ('synth-955c5697', '0x9c7399350640ee40'); whole numbers
# ('12345678') and words are not hashes
_HASH = re.compile(r"(?<![0-9A-Za-z])(?:0[xX])?(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*[0-9])"
                   r"[0-9a-fA-F]{8,}(?![0-9A-Za-z])")


# a number as a whole token
_NUMBER = re.compile(r"(?<![0-9A-Za-z.])[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?(?![0-9A-Za-z])")


def _finite_number(m: re.Match) -> str:
    try:
        return " " if math.isfinite(float(m.group())) else m.group()
    except ValueError:
        return m.group()


def hash_like(text: str) -> bool:
    """Whether a label holds a hash (see _HASH) instead of a name (a number
    such as 5.674926809991031e-06 is none; 1654e936 reads as no finite
    number: a hash)."""
    return bool(_HASH.search(_NUMBER.sub(_finite_number, str(text))))


def _labels(fig) -> list[tuple[str, str]]:
    """(where, text) of every label of the figure: titles, panel titles,
    axis labels, tick labels, legend titles and entries, free texts."""
    out = []
    for what, t in (("title", getattr(fig, "_suptitle", None)),
                    ("x label", getattr(fig, "_supxlabel", None)),
                    ("y label", getattr(fig, "_supylabel", None))):
        if _text(t):
            out.append((what, _text(t)))
    for k, a in enumerate(fig.axes):
        if not a.get_visible():
            continue
        for loc in ("left", "center", "right"):
            if a.get_title(loc).strip():
                out.append((f"panel {k} title", a.get_title(loc).strip()))
        out += [(f"panel {k} x label", a.get_xlabel()), (f"panel {k} y label", a.get_ylabel())]
        out += [(f"panel {k} tick label", t.get_text()) for t in
                a.get_xticklabels() + a.get_yticklabels() if t.get_visible() and t.get_text()]
        out += [(f"panel {k} text", t.get_text()) for t in a.texts if t.get_visible()]
    for lg in _legends(fig):
        if _text(lg.get_title()):
            out.append(("legend title", _text(lg.get_title())))
        out += [("legend entry", t.get_text()) for t in lg.get_texts()]
    out += [("text", t.get_text()) for t in fig.texts if t.get_visible()]
    return out


def _legends(fig) -> list:
    legends = [lg for lg in fig.legends if lg.get_visible()]
    legends += [a.get_legend() for a in fig.axes if a.get_visible() and a.get_legend() is not None
                and a.get_legend().get_visible()]
    return legends


def figure_problems(fig, name: str = "figure", min_panel_in: float = MIN_PANEL_IN) -> list[str]:
    """What a figure lacks to explain itself, or where it misleads:
    - a title (the figure's, or the title of its only panel), x and y axis
      labels on every panel (the figure's shared labels count), a legend (the
      figure's or a panel's), at most MAX_LEGEND entries in one legend;
    - a label (title, panel title, axis or tick label, legend entry, note)
      that is a hash ('synth-955c5697') instead of a name;
    - a panel less than min_panel_in inches tall;
    - a series the data hold (declare()) that is neither a legend entry nor
      reported as not drawn, and one reported as not drawn that no note under
      the figure names;
    - on a tree-size axis (register_tree_points): a point not drawn at the x
      recorded for it, a point whose cap bound (verify_rows_max equal to its
      budget) drawn elsewhere than at verify_rows_max, and a point drawn left
      of verify_rows_max where its rows are its tree's nodes (a tree larger
      than its place on the axis)."""
    probs = []
    axes = [a for a in fig.axes if a.get_visible() and a.axison]
    if not axes:
        return [f"{name}: no axes"]
    if not getattr(fig, "_fs_drawn", False):
        # final layout, tick labels (fig_bytes drew it); matplotlib < 3.6 draws on its canvas
        getattr(fig, "draw_without_rendering", fig.canvas.draw)()
    title = _text(getattr(fig, "_suptitle", None))
    if not title and len(axes) == 1:
        title = axes[0].get_title().strip()
    if not title:
        probs.append(f"{name}: no title")
    supx = _text(getattr(fig, "_supxlabel", None))
    supy = _text(getattr(fig, "_supylabel", None))
    _, fig_h = fig.get_size_inches()
    for k, a in enumerate(axes):
        if a.get_label() == "<colorbar>":
            continue
        # a panel sharing its x axis with a labelled one (stacked lanes) counts
        xs = a.get_shared_x_axes().get_siblings(a)
        if not (supx or any(b.get_xlabel().strip() for b in xs)):
            probs.append(f"{name}: panel {k} has no x-axis label")
        if not (a.get_ylabel().strip() or supy):
            probs.append(f"{name}: panel {k} has no y-axis label")
        tall = a.get_position().height * fig_h
        if tall < min_panel_in - 1e-6:
            probs.append(f"{name}: panel {k} is {tall:.2f} in tall, less than {min_panel_in:g} in")
    legends = _legends(fig)
    if not legends:
        probs.append(f"{name}: no legend")
    for lg in legends:
        n = len(lg.get_texts())
        if n > MAX_LEGEND:
            probs.append(f"{name}: a legend of {n} entries (at most {MAX_LEGEND}: split the "
                         "series into panels)")
    for where, text in _labels(fig):
        if hash_like(text):
            probs.append(f"{name}: {where} '{text}' is a hash, not a name")
    # series of the data against the legend and the notes
    entries = {t.get_text() for lg in legends for t in lg.get_texts()}
    dropped = getattr(fig, "fs_dropped", {})
    for s in getattr(fig, "fs_series", []):
        if s not in entries and s not in dropped:
            probs.append(f"{name}: series '{s}' is in the data but neither in the legend nor "
                         "reported as not drawn")
    notes = "\n".join(t.get_text() for t in fig.texts if t.get_visible()).replace("\n  ", " ")
    for s in dropped:
        if s not in notes:
            probs.append(f"{name}: series '{s}' is not drawn and no note under the figure says so")
    # the tree-size axis
    for k, a in enumerate(axes):
        pts = getattr(a, "fs_tree_points", [])
        lines: dict[str, list[float]] = {}
        drawn_lines = [(ln.get_label(), ln) for ln in a.get_lines()]
        # an errorbar's data line is labelled through its container
        drawn_lines += [(c.get_label(), c.lines[0]) for c in a.containers
                        if hasattr(c, "lines") and c.lines and c.lines[0] is not None]
        for lab, ln in drawn_lines:
            lines.setdefault(str(lab), []).extend(
                float(v) for v in ln.get_xdata() if v is not None)
        for label, x, cap, rows_max, nodes in pts:
            drawn = lines.get(label, [])
            if not any(abs(v - x) <= 1e-9 * max(1.0, abs(x)) for v in drawn):
                probs.append(f"{name}: panel {k}: '{label}' has no point at x = {x:g}")
            if math.isnan(rows_max):
                continue
            if rows_max == cap and x != rows_max:
                probs.append(f"{name}: panel {k}: '{label}' bound its cap of {cap:g} nodes "
                             f"(verify_rows_max {rows_max:g}) but is drawn at {x:g}")
            elif nodes and rows_max > x:
                probs.append(f"{name}: panel {k}: '{label}' is drawn at {x:g} nodes but verified "
                             f"up to {rows_max:g} rows (verify_rows_max): the tree axis is off")
    return probs
