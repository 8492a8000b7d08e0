"""The report's tree sections (analysis/report.py): tokens/s against the tree
budget, and the pruning trade-off where only `pruning` differs.
"""
from __future__ import annotations

import math

if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
    from . import policies as fp
    from .rep_common import (FACET_ORDER, disp_of, fig_png, legend_entries, names_of, notes_md,
        register, series_guarded, tput_cells, tput_header, where_it_varies, with_held, yerr_of)
    from .rep_lines import (line_figure)
else:  # imported with analysis/ on sys.path (analysis/report.py run as a script)
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
    import policies as fp  # noqa: E402
    from rep_common import (FACET_ORDER, disp_of, fig_png, legend_entries, names_of,
        notes_md, register, series_guarded, tput_cells, tput_header,
        where_it_varies, with_held, yerr_of)  # noqa: E402
    from rep_lines import (line_figure)  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


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
