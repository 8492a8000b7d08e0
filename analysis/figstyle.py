"""Shared look of the analysis figures and the check that holds every figure
to it.

Colours: one per policy in every figure of the project (POLICY_COLOURS:
Okabe & Ito's "Color Universal Design" (2008) colours, told apart under the
common colour-vision deficiencies, and four of Paul Tol's; Flash-AR black);
a policy's variants keep its colour and differ in marker, line style and bar
hatch.  Series that are not policies take Tol's light palette
(CONTEXT_COLOURS), which shares no colour with a policy; context series k and
j differ in colour or marker for every k != j below 54.

Layout helpers: small multiples, one legend beside or below the panels (the
figure grown so that it covers at most about a fifth of it), notes under the
figure, values beyond an axis cut at it and marked with their number
(clip_overflow, run as every figure is saved).

figure_problems(fig) lists where a figure fails to explain itself or
misleads: title, axis labels, legend; no label that is a hash; no panel
thinner than MIN_PANEL_IN; every series of the data in the legend or reported
as not drawn; a tree-size axis that agrees with verify_rows_max; every value
within its axes; no legend over a quarter of the figure or larger than its
panel; canonical policy names (policies.py); no panel pooling targets,
workloads or phones (register_panel); every policy in its colour.
"""
from __future__ import annotations

import math
import re
import textwrap
import zlib
from typing import Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

try:
    from . import policies as _policies
except ImportError:  # run as a script, analysis/ on sys.path
    import policies as _policies  # noqa: E402

# Okabe-Ito, by name
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky blue": "#56B4E9",
    "bluish green": "#009E73", "yellow": "#F0E442", "blue": "#0072B2",
    "vermillion": "#D55E00", "reddish purple": "#CC79A7",
}
# One colour per policy in every figure of the project (the checker holds every
# figure to it): Okabe-Ito's seven strong colours, then four of Paul Tol's
# (wine, olive, indigo, sand) for the rest; Flash-AR black.  A policy this map does not
# know (a Lua policy, a plug-in) takes one of EXTRA_POLICY_COLOURS by a hash of
# its name, the same one in every figure.
POLICY_COLOURS = {
    "flash_ar": OKABE_ITO["black"],
    "chain": OKABE_ITO["blue"],
    "adaptive_chain": OKABE_ITO["sky blue"],
    "specinfer": OKABE_ITO["orange"],
    "eagle2": OKABE_ITO["bluish green"],
    "opt_tree": "#882255",
    "sequoia": "#999933",
    "edgellm": OKABE_ITO["vermillion"],
    "lever": OKABE_ITO["reddish purple"],
    "lyanna": "#332288",
    "bld": "#DDCC77",
}
EXTRA_POLICY_COLOURS = ["#44AA99", "#AA4499", "#117733", "#661100", "#6699CC", "#CC6677"]
# Series that are not policies (workloads, pruning modes, metrics, resources)
# take Paul Tol's light palette, which shares no colour with the policies.
CONTEXT_COLOURS = ["#77AADD", "#EE8866", "#44BB99", "#FFAABB", "#EEDD88", "#99DDFF",
                   "#BBCC33", "#AAAA00", "#DDDDDD"]
SERIES_COLOURS = CONTEXT_COLOURS
BASELINE_COLOUR = OKABE_ITO["black"]
MARKERS = ["o", "s", "^", "D", "v", "P"]
LINESTYLES = ["-", "--", ":", "-."]
HATCHES = ["", "//", "..", "xx", "\\\\", "--", "++", "oo", "||", "**", "/o", "\\|", "-\\", "x*",
           "O.", "+o"]
# resources of the latency breakdown, each its own colour and hatch
RESOURCE_STYLE = {
    "draft": ("#FFAABB", ""),
    "flash I/O": ("#77AADD", ""),
    "NPU": ("#EE8866", ""),
    "CPU": ("#44BB99", ""),
    "KV": ("#EEDD88", ""),
    "idle": ("#DDDDDD", ""),
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
    "axes.prop_cycle": matplotlib.cycler(color=CONTEXT_COLOURS),
})


def family(name: str) -> str:
    """The policy of a series label: 'lever[n_max=64] code' -> 'lever'."""
    return str(name).split("[")[0].split(" ")[0]


def is_baseline(name: str) -> bool:
    return family(name) == "flash_ar"


def policy_colour(policy: str) -> str:
    """The colour of a policy in every figure (POLICY_COLOURS; a policy it
    does not know: one of EXTRA_POLICY_COLOURS by a hash of its name)."""
    p = str(policy)
    if p in POLICY_COLOURS:
        return POLICY_COLOURS[p]
    return EXTRA_POLICY_COLOURS[zlib.crc32(p.encode()) % len(EXTRA_POLICY_COLOURS)]


def style(k: int) -> dict:
    """Series k's colour, marker, line style and hatch, for series that are
    not policies (CONTEXT_COLOURS)."""
    n = len(CONTEXT_COLOURS)
    # the marker moves two more places each round of colours: series k and j
    # differ in colour or marker for every k != j below 54
    return {"color": CONTEXT_COLOURS[k % n],
            "marker": MARKERS[(k + 2 * (k // n)) % len(MARKERS)],
            "linestyle": LINESTYLES[(k // len(CONTEXT_COLOURS)) % len(LINESTYLES)],
            "hatch": HATCHES[(k // len(CONTEXT_COLOURS)) % len(HATCHES)]}


def variant_style(policy: str, k: int) -> dict:
    """The k-th variant of a policy in a figure: the policy's colour, and a
    marker, line style and hatch that tell its variants apart (k = 0, the
    first, is plain: circle, solid line, no hatch)."""
    return {"color": policy_colour(policy),
            "marker": "X" if policy == "flash_ar" and k == 0 else MARKERS[k % len(MARKERS)],
            "linestyle": LINESTYLES[(k // len(MARKERS)) % len(LINESTYLES)],
            "hatch": HATCHES[k % len(HATCHES)]}


def styles(names: Iterable[str], policies: bool = True) -> dict[str, dict]:
    """A style per series name, in order.  policies: the names are policy
    series ('lever[pruning=none] · code'), each in its policy's colour, its
    variants told apart by marker, line style and hatch; otherwise context
    colours in order."""
    out: dict[str, dict] = {}
    count: dict[str, int] = {}
    k = 0
    for n in names:
        if n in out:
            continue
        if policies:
            fam = family(n)
            out[n] = variant_style(fam, count.get(fam, 0))
            count[fam] = count.get(fam, 0) + 1
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
    fig._fs_before_save = lambda: before_save(fig)
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
    title = "\n".join(textwrap.fill(line, width, break_on_hyphens=False)
                      for line in title.split("\n"))
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
        _room_for_legend(fig, axes, labels, legend_title, title)
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


def _room_for_legend(fig, axes, labels, legend_title, title) -> None:
    """Grows a figure whose one legend would cover more than a fifth of the
    image (the checker allows a quarter): the legend's size is fixed by its
    entries, the panels grow with the figure."""
    labels = [str(x) for x in labels or []]
    if not labels:
        return
    longest = max([len(x) for x in labels] + [len(legend_title or "")])
    lw = 0.07 * longest + 0.6
    lh = 0.21 * len(labels) + (0.3 if legend_title else 0) + 0.2
    w, h = fig.get_size_inches()
    k = 0
    while lw * lh > 0.2 * (w + lw) * max(h, lh) and k < 12:
        w, h = 1.1 * w, 1.06 * h
        k += 1
    if k:
        fig.set_size_inches(w, h)


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
        fig._fs_before_save = lambda: before_save(fig)
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


def before_save(fig) -> None:
    """What fsresults.fig_bytes runs before it renders: values beyond an axis
    drawn as clipped markers with their number (clip_overflow), the notes
    below everything (place_notes)."""
    for ax in fig.axes:
        if ax.get_visible() and ax.axison:
            clip_overflow(ax)
    place_notes(fig)


# ------------------------------------------------------- values beyond an axis

def _fmt_clipped(v: float) -> str:
    return f"{v:.3g}"


def clip_overflow(ax) -> None:
    """Every bar or line point of ax that reaches past its axis limits is cut
    at the limit and marked there with a triangle pointing out of the axis and
    its value, so that no value is lost off an axis (a limit set by hand, or
    shared with another panel).  Recorded in ax.fs_clipped: (x, y) of each
    value as it is, for the checker."""
    from matplotlib.container import BarContainer

    if getattr(ax, "_fs_clip_done", False):
        return
    ax._fs_clip_done = True
    x0, x1 = sorted(ax.get_xlim())
    y0, y1 = sorted(ax.get_ylim())
    clipped = getattr(ax, "fs_clipped", [])
    marks = []
    for c in ax.containers:
        if not isinstance(c, BarContainer):
            continue
        horizontal = getattr(c, "orientation", "vertical") == "horizontal"
        for r in c.patches:
            x, y, w, h = r.get_x(), r.get_y(), r.get_width(), r.get_height()
            if not all(map(math.isfinite, (x, y, w, h))):
                continue
            if horizontal and x + w > x1:
                clipped.append((x + w, y + h / 2))
                r.set_width(x1 - x)
                marks.append((x1, y + h / 2, ">", x + w, "left", "center"))
            elif not horizontal and y + h > y1:
                clipped.append((x + w / 2, y + h))
                r.set_height(y1 - y)
                marks.append((x + w / 2, y1, "^", y + h, "center", "bottom"))
    for ln in ax.get_lines():
        if ln.get_transform() != ax.transData or getattr(ln, "_fs_clip_mark", False):
            continue
        xs = [float(v) for v in ln.get_xdata(orig=False)]
        ys = [float(v) for v in ln.get_ydata(orig=False)]
        changed = False
        for i, (x, y) in enumerate(zip(xs, ys)):
            if not (math.isfinite(x) and math.isfinite(y)) or not x0 <= x <= x1:
                continue
            if y > y1 or y < y0:
                edge = y1 if y > y1 else y0
                clipped.append((x, y))
                marks.append((x, edge, "^" if y > y1 else "v", y, "center",
                              "bottom" if y > y1 else "top"))
                ys[i] = edge
                changed = True
        if changed:
            ln.set_ydata(ys)
    for x, y, m, v, ha, va in marks:
        mk = ax.plot([x], [y], linestyle="none", marker=m, color="black", markersize=7,
                     clip_on=False, zorder=6, label="_clipped")[0]
        mk._fs_clip_mark = True
        ax.annotate(_fmt_clipped(v), (x, y), xytext=(0, 6) if va == "bottom" else
                    (4, 0) if ha == "left" else (0, -6), textcoords="offset points",
                    ha=ha, va=va, fontsize=NOTE_SIZE, annotation_clip=False,
                    color="black")
    if marks:
        ax.fs_clipped = clipped


# ------------------------------------------------------------- panel contents

# What a panel must not pool: points of different targets, workloads (traces)
# or phones in one bar, line point or distribution.
POOL_KEYS = ("target", "trace", "device")


def register_panel(ax, rows, separated: Iterable[str] = (), shown=None) -> None:
    """Records what panel ax draws, for the checker: rows (a DataFrame of the
    result rows behind its marks) and `separated`, the columns whose values
    its marks tell apart (the series, the x axis, the groups).  For each of
    POOL_KEYS: the most values one mark pools (more than 1: a pooled panel)
    and, where the panel holds one value, that value as the titles must name
    it (shown(column, value), default str)."""
    info = {"pooled": {}, "fixed": {}}
    sep = [c for c in dict.fromkeys(separated) if c in rows.columns]
    for c in POOL_KEYS:
        if c not in rows.columns or c in sep or not len(rows):
            continue
        vals = rows[c].astype(str)
        if sep:
            n = int(rows.assign(_k=vals).groupby(sep, dropna=False, sort=False)["_k"]
                    .nunique().max())
        else:
            n = int(vals.nunique())
        if n > 1:
            info["pooled"][c] = n
        elif vals.nunique() == 1:
            v = rows[c].iloc[0]
            info["fixed"][c] = shown(c, v) if shown else str(v)
    ax.fs_panel = info


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
    probs += value_problems(fig, name, axes)
    probs += legend_size_problems(fig, name, axes, legends)
    probs += label_problems(fig, name)
    probs += pool_problems(fig, name, axes)
    probs += colour_problems(fig, name, legends)
    return probs


# ------------------------------------------------------------ the five rules

def _limits(ax) -> tuple[float, float, float, float]:
    x0, x1 = sorted(ax.get_xlim())
    y0, y1 = sorted(ax.get_ylim())
    return x0, x1, y0, y1


def _inside(v: float, lo: float, hi: float, log: bool) -> bool:
    if not math.isfinite(v) or (log and v <= 0):
        return True  # not drawn (NaN: a gap; log scale: no place)
    tol = 1e-9 * max(1.0, abs(hi - lo), abs(hi), abs(lo))
    return lo - tol <= v <= hi + tol


def _data_points(ax):
    """(x or None, y or None) of every plotted value of ax in data
    coordinates: line points (a horizontal reference line gives y only, a
    vertical one x only), bar corners, error bars, scatter points and filled
    bands; the clip markers (clip_overflow) left out."""
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection
    from matplotlib.patches import Rectangle

    data = ax.transData
    yax, xax = ax.get_yaxis_transform(), ax.get_xaxis_transform()
    for ln in ax.get_lines():
        if getattr(ln, "_fs_clip_mark", False) or not ln.get_visible():
            continue
        t = ln.get_transform()
        try:
            xs = [float(v) for v in ln.get_xdata(orig=False)]
            ys = [float(v) for v in ln.get_ydata(orig=False)]
        except (TypeError, ValueError):
            continue
        if t == data:
            yield from zip(xs, ys)
        elif t == yax:
            yield from ((None, y) for y in ys)
        elif t == xax:
            yield from ((x, None) for x in xs)
    for r in ax.patches:
        if isinstance(r, Rectangle) and r.get_data_transform() == data and r.get_visible():
            x, y, w, h = r.get_x(), r.get_y(), r.get_width(), r.get_height()
            if not all(map(math.isfinite, (x, y, w, h))):
                continue  # a bar of no value (NaN) is not drawn
            yield (x, y)
            yield (x + w, y + h)
    for c in ax.collections:
        if not c.get_visible():
            continue
        if isinstance(c, LineCollection) and c.get_transform() == data:
            for seg in c.get_segments():
                yield from ((float(p[0]), float(p[1])) for p in seg)
        elif isinstance(c, PathCollection) and c.get_offset_transform() == data:
            yield from ((float(p[0]), float(p[1])) for p in c.get_offsets())
        elif isinstance(c, PolyCollection) and c.get_transform() == data:
            for path in c.get_paths():
                yield from ((float(p[0]), float(p[1])) for p in path.vertices)


def value_problems(fig, name: str, axes) -> list[str]:
    """A plotted value beyond its axis (lost off the panel), unless it was
    cut there and marked with its number (clip_overflow)."""
    probs = []
    for k, a in enumerate(axes):
        x0, x1, y0, y1 = _limits(a)
        lx, ly = a.get_xscale() == "log", a.get_yscale() == "log"
        bad = [(x, y) for x, y in _data_points(a)
               if not ((x is None or _inside(x, x0, x1, lx)) and
                       (y is None or _inside(y, y0, y1, ly)))]
        for x, y in bad[:3]:
            at = ", ".join(f"{w} = {v:.4g}" for w, v in (("x", x), ("y", y)) if v is not None)
            probs.append(f"{name}: panel {k}: a value at {at} lies beyond the axes "
                         f"(x {x0:.4g}..{x1:.4g}, y {y0:.4g}..{y1:.4g}) and is not marked as "
                         "clipped")
        if len(bad) > 3:
            probs.append(f"{name}: panel {k}: {len(bad) - 3} more values beyond the axes")
        for x, y in getattr(a, "fs_clipped", []):
            texts = {t.get_text() for t in a.texts}
            if _fmt_clipped(y if y is not None and not (y0 <= y <= y1) else x) not in texts:
                probs.append(f"{name}: panel {k}: a clipped value at ({x:.4g}, {y:.4g}) has no "
                             "number beside its marker")
    return probs


MAX_LEGEND_SHARE = 0.25


def legend_size_problems(fig, name: str, axes, legends) -> list[str]:
    """A legend that covers more than a quarter of the figure (the image as
    saved: the figure and whatever legend lies beside it), and a panel's own
    legend larger than its panel: either squeezes the data."""
    probs = []
    try:
        r = fig.canvas.get_renderer()
    except AttributeError:
        return probs

    def area(bb) -> float:
        return max(0.0, bb.width) * max(0.0, bb.height)

    boxes = [lg.get_window_extent(r) for lg in legends]
    from matplotlib.transforms import Bbox
    whole = area(Bbox.union([fig.bbox] + boxes)) if boxes else area(fig.bbox)
    owned = {id(a.get_legend()): a for a in axes if a.get_legend() is not None}
    for lg, bb in zip(legends, boxes):
        la = area(bb)
        if whole > 0 and la > MAX_LEGEND_SHARE * whole:
            probs.append(f"{name}: a legend of {len(lg.get_texts())} entries covers "
                         f"{100 * la / whole:.0f}% of the figure (at most "
                         f"{100 * MAX_LEGEND_SHARE:.0f}%)")
        own = owned.get(id(lg))
        if own is not None and la > area(own.get_window_extent(r)):
            probs.append(f"{name}: a panel's legend of {len(lg.get_texts())} entries is larger "
                         "than its panel")
    return probs


def label_problems(fig, name: str) -> list[str]:
    """Labels that name a built-in policy's variant other than canonically:
    by parameters at their defaults, with more than three significant digits,
    with an unbalanced bracket (policies.label_problems)."""
    probs = []
    seen = set()
    for where, text in _labels(fig):
        if where == "text" or where.endswith(" text"):
            continue  # notes and value labels say more than a name
        for part in re.split(r" · |\n|; ", str(text)):
            for p in _policies.label_problems(part.strip()):
                if p not in seen:
                    seen.add(p)
                    probs.append(f"{name}: {where} {p}")
    return probs


def pool_problems(fig, name: str, axes) -> list[str]:
    """Panels that pool points of different targets, workloads or phones into
    one mark, and panels whose one target, workload or phone no title names
    (register_panel).  Checked on figures that register their panels
    (fig.fs_panels: every panel must)."""
    if not getattr(fig, "fs_panels", False):
        return []
    probs = []
    sup = _text(getattr(fig, "_suptitle", None))
    for k, a in enumerate(axes):
        info = getattr(a, "fs_panel", None)
        if info is None:
            probs.append(f"{name}: panel {k} does not say what it holds (register_panel)")
            continue
        for c, n in info["pooled"].items():
            probs.append(f"{name}: panel {k} pools {n} values of {c} in one mark (facet by "
                         f"{c}, or draw it as a series)")
        # where a reader finds it: the panel's title or the figure's, or the
        # one tick label or legend entry that names it
        names = [a.get_title("center"), a.get_title("left"), a.get_title("right"), sup]
        names += [t.get_text() for t in a.get_xticklabels() + a.get_yticklabels()]
        names += [t.get_text() for lg in _legends(fig) for t in lg.get_texts()]
        titles = " \u2016 ".join(t for t in names if t)
        flat = {titles.replace("\n", " "), titles.replace("\n", "")}
        for c, text in info["fixed"].items():
            if not any(text in t for t in flat):
                probs.append(f"{name}: panel {k} holds one {c} ({text}) that neither its title "
                             "nor the figure's, nor a tick label or legend entry, names")
    return probs


def _handle_colour(h) -> str | None:
    from matplotlib.collections import Collection
    from matplotlib.colors import to_hex
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    try:
        if isinstance(h, Line2D):
            c = h.get_color()
            if h.get_linestyle() in ("None", "none", "") and h.get_marker() not in (None, "None"):
                face = h.get_markerfacecolor()
                c = face if face not in ("none", "None") else h.get_markeredgecolor()
        elif isinstance(h, Patch):
            fc = h.get_facecolor()
            c = fc if fc[3] > 0 else h.get_edgecolor()
        elif isinstance(h, Collection):
            fc = h.get_facecolor()
            c = fc[0] if len(fc) else h.get_edgecolor()[0]
        else:
            return None
        return to_hex(c, keep_alpha=False).lower()
    except (ValueError, TypeError, IndexError):
        return None


def colour_problems(fig, name: str, legends) -> list[str]:
    """A legend entry of a policy not in its colour (POLICY_COLOURS; a figure
    whose series are all policies, fig.fs_policy_series, holds unknown
    policies to policy_colour too), and an entry that is no policy in a
    policy's colour (a colour means one policy in every figure)."""
    probs = []
    declared = set(getattr(fig, "fs_policy_series", []))
    owner = {v.lower(): p for p, v in POLICY_COLOURS.items() if p != "flash_ar"}
    for lg in legends:
        handles = getattr(lg, "legend_handles", None) or getattr(lg, "legendHandles", [])
        for h, t in zip(handles, lg.get_texts()):
            label = t.get_text()
            col = _handle_colour(h)
            if col is None:
                continue
            fam = family(label)
            if fam in POLICY_COLOURS or label in declared:
                want = policy_colour(fam).lower()
                if col != want:
                    probs.append(f"{name}: legend entry '{label}' is drawn in {col}, not "
                                 f"{fam}'s {want}")
            elif col in owner:
                probs.append(f"{name}: legend entry '{label}' is drawn in {col}, the colour of "
                             f"{owner[col]}")
    return probs
