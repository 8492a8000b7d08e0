"""What every section of the report (analysis/report.py) shares: the
throughput cells, the names figures show (variants, traces, held values),
facets and panels, notes, the figure checker's verdicts (CHECKS, set by
report.build) and the limits on what one figure draws.
"""
from __future__ import annotations

import json
import math
import os
import warnings

if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
    from . import policies as fp
else:  # imported with analysis/ on sys.path (analysis/report.py run as a script)
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
    import policies as fp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


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


FACET_ORDER = ["target", "device", "trace", "draft", "dram_fraction", "max_new_tokens",
               "accept", "runtime", "prompts", "seed", "top_p", "temperature", "policy"]
COLUMN_NAMES = {"variant": "policy", "policy": "policy family", "target": "target",
                "device": "phone", "trace": "workload", "draft": "draft",
                "dram_fraction": "DRAM budget", "max_new_tokens": "new tokens",
                "prompts": "prompts", "tree_series": "policy", "pruning": "pruning"}
MAX_LINES = 10      # series in one panel before the figure is split into panels
MAX_PANELS = 12
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


def drop_redundant_draft(df: pd.DataFrame, cols: list[str]) -> list[str]:
    """cols without `draft` when the other columns decide it (each target its
    own draft, Flash-AR none)."""
    if "draft" not in cols:
        return cols
    rest = [c for c in cols if c != "draft"]
    if not rest or df.astype({"draft": str}).groupby(rest)["draft"].nunique().max() <= 1:
        return rest
    return cols


# markdown escapes, as every section writes them
md_escape, md_code = fr.md_escape, fr.md_code
