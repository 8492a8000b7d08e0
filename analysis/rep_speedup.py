"""The report's speed-up section (analysis/report.py): each point's tokens/s
over its Flash-AR baseline, as bars or lines.
"""
from __future__ import annotations

import math

if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
    from .rep_common import (disp, disp_of, drop_redundant_draft, fig_png, n_combos, names_of,
        notes_md, series_guarded)
    from .rep_lines import (line_figure)
    from .rep_bars import (bar_figure, geomean)
else:  # imported with analysis/ on sys.path (analysis/report.py run as a script)
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
    from rep_common import (disp, disp_of, drop_redundant_draft, fig_png, n_combos,
        names_of, notes_md, series_guarded)  # noqa: E402
    from rep_lines import (line_figure)  # noqa: E402
    from rep_bars import (bar_figure, geomean)  # noqa: E402
import pandas as pd  # noqa: E402


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
