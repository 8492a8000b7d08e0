#!/usr/bin/python3
"""Tests of what a researcher sees in analysis/'s figures and reports, and of
the figure checker that holds every figure to it.

    test_figcheck.py CASE FLASHSPEC_BIN PROJECT_DIR

  rules      on synthesised results, in this process: variants named by what
             differs from the policy's defaults (EdgeLLM as shipped is
             `edgellm` even where most points switch its techniques off);
             tuned points `POLICY tuned (max OBJECTIVE)`, one connected line,
             knobs at 3 significant digits beside the points and exact in the
             table; synthetic workloads named by their settings (run.json);
             no panel pooling targets; the latency breakdown's x range over
             every panel (the largest bar in the first); one colour per policy
             in every figure; fsresults loads without matplotlib; report.md's
             Source relative; and a broken figure for each of the checker's
             rules (a value off the axes, an oversized legend, a name with a
             default or 16 digits, a pooled panel, a policy in another colour)
  hostile    hand-edited results: inf tokens/s, NaN and inf DRAM budgets, a
             policy named with '[', a newline in a name: one line, exit 65, no
             traceback; `<script>` in a name escaped in report.md; 144 policy
             names; 200,000 rows drawn from a sample that report.md names, in
             under a minute
  defaults   analysis/reference/policy_defaults.csv equals the build's
             `flashspec policies NAME --markdown` for every policy
  reproduce  a small scripts/reproduce (three studies, quick grids): study k of
             n and report k of n with an ETA, reports drawn by two workers,
             every figure's checker verdict ok (one colour per policy across
             every report), the paper-claims table with a reason for each
             DISAGREE; run again, every report is kept (inputs unchanged)
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_analysis as ta  # noqa: E402  (helpers: Ctx, synth_row, synth_dir, check)

check = ta.check
PY = "/usr/bin/python3"


def modules(c):
    import matplotlib
    matplotlib.use("Agg")
    return (ta.analysis_module(c, "report"), ta.analysis_module(c, "figstyle"),
            ta.analysis_module(c, "fsresults"))


# policy -> the colours its legend entries had, over every figure built here
COLOURS: dict[str, set] = {}


def built(c, report, fs, fr, d: str):
    """report.build of d, its figures captured (laid out, not rendered), each
    checked, the colours of its policies noted in COLOURS; (markdown,
    {name: summary}, {name: figure})."""
    with fr.capture_figures(render=False) as caught:
        md, figs = report.build(d)
        by = dict(zip(figs, caught))
        for name, fig in by.items():
            for p in fs.figure_problems(fig, f"{os.path.basename(d)}/{name}"):
                check(False, p)
        # the figures stay open until the block ends: inspect them here
        out = {n: summary(f) for n, f in by.items()}
        for f in out.values():
            for t, col in f["legend"]:
                if fs.family(t) in fs.POLICY_COLOURS:
                    COLOURS.setdefault(fs.family(t), set()).add(col)
        return md, out, by


def summary(fig) -> dict:
    """What the tests read of a figure after it is closed: legend entries with
    their colours, panel titles, texts, x limits and the registered panels."""
    fs_mod = sys.modules.get("figstyle") or sys.modules.get("analysis.figstyle")
    out = {"legend": [], "titles": [], "texts": [], "xlim": [], "panels": [],
           "suptitle": fig._suptitle.get_text() if fig._suptitle else ""}
    for lg in list(fig.legends) + [a.get_legend() for a in fig.axes if a.get_legend()]:
        hs = getattr(lg, "legend_handles", None) or getattr(lg, "legendHandles", [])
        for h, t in zip(hs, lg.get_texts()):
            out["legend"].append((t.get_text(), fs_mod._handle_colour(h) if fs_mod else None))
    for a in fig.axes:
        if not a.get_visible():
            continue
        out["titles"].append(a.get_title())
        out["texts"] += [t.get_text() for t in a.texts]
        out["xlim"].append(tuple(a.get_xlim()))
        out["panels"].append(getattr(a, "fs_panel", None))
    return out


# ------------------------------------------------------------------- rules

def case_rules(c) -> None:
    report, fs, fr = modules(c)
    sr = ta.synth_row

    # 1. names relative to the defaults: most EdgeLLM points here switch its
    # techniques off; the one as shipped is still `edgellm`
    ed = ("navigation={n},fallback={f},provisional={p},budget=8,max_tokens=32,max_branches=8,"
          "alpha0=0.01,alpha_decay=0.5,prov_max=16,gate=true,verify=branches,unit=cpu")
    rows = []
    for tr in ("workload-code-strong", "workload-math-strong"):
        rows += [sr("edgellm", ed.format(n="true", f="false", p="false"), 1.3, trace=tr),
                 sr("edgellm", ed.format(n="true", f="false", p="false"), 1.3, trace=tr,
                    device="phone2"),
                 sr("edgellm", ed.format(n="true", f="true", p="true"), 1.4, trace=tr),
                 sr("edgellm", ed.format(n="false", f="false", p="false"), 1.2, trace=tr)]
    md, figs, _ = built(c, report, fs, fr, ta.synth_dir(c, "names", rows))
    names = {t for f in figs.values() for t, _ in f["legend"]}
    check({"edgellm", "edgellm[fallback=false,provisional=false]",
           "edgellm[navigation=false,fallback=false,provisional=false]"} <= names,
          f"EdgeLLM named by what differs from its defaults ({sorted(names)})")
    check(not any("fallback=true" in n or "provisional=true" in n for n in names),
          f"no label shows a default value ({sorted(names)})")

    # 2. tuned points: one connected series per policy, knobs beside the
    # points at 3 significant digits, exact in the table
    lv = ("drafting=gain_cost,pruning=full,n_max={n},d_max=10,b_min=4,b_max={b},"
          "theta={t}")
    rows = [sr("flash_ar", "none", 1.0, dram=d, tune_evals="0", tune_train="nan",
               tune_objective="none") for d in (0.0, 0.2, 0.4)]
    rows += [sr("lever", lv.format(n=64, b=16, t=0.1), 1.8 + d, dram=d, rows_max=16,
                tune_evals="0", tune_train="nan", tune_objective="none")
             for d in (0.0, 0.2, 0.4)]
    for d, n, t in ((0.0, 29, "0.416962615100577"), (0.2, 10, "0.4970110961547846"),
                    (0.4, 64, "5.674926809991031e-06")):
        rows.append(sr("lever", lv.format(n=n, b=8, t=t), 1.9 + d, dram=d, rows_max=16,
                       tune_evals="84", tune_train="1.9", tune_objective="tokens_per_s"))
    md, figs, _ = built(c, report, fs, fr, ta.synth_dir(c, "tuned", rows))
    dram = figs.get("throughput_vs_dram.png", {})
    legend = [t for t, _ in dram.get("legend", [])]
    check("lever tuned (max tokens_per_s)" in legend and
          legend.count("lever tuned (max tokens_per_s)") == 1 and
          not any("0.41696" in t for t in legend),
          f"tuned Lever: one series, named tuned and how ({legend})")
    texts = dram.get("texts", [])
    check(any("n_max=29" in t and "theta=0.417" in t and "b_max=8" in t for t in texts) and
          any("theta=5.67e-06" in t for t in texts) and
          not any("0.416962615100577" in t for t in texts),
          f"knobs at 3 significant digits beside the points ({texts})")
    check("theta=0.416962615100577" in md, "the table gives the knobs exactly")
    check("not run, or failed" not in md, "no note claims a failure that did not happen")

    # 3. workloads named: two synthetic traces without a tag, their settings in
    # run.json tell them apart
    rows = []
    for tr in ("synth-1a2b3c4d", "synth-5e6f7a8b"):
        rows += [sr("flash_ar", "none", 1.0, trace=tr), sr("chain", "k=8,unit=cpu", 1.3,
                                                           trace=tr, rows_max=9)]
    d = ta.synth_dir(c, "synth", rows)
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump({"traces": [{"name": "synth-1a2b3c4d", "synth": {"seed": 1102,
                                                                   "accept": [0.76]}},
                              {"name": "synth-5e6f7a8b", "synth": {"seed": 1201,
                                                                   "accept": [0.745]}}]}, f)
    md, figs, _ = built(c, report, fs, fr, d)
    shown = " ".join(t for f in figs.values() for t in f["titles"] + [x for x, _ in f["legend"]])
    check("synthetic seed=1102" in md and "synthetic seed=1201" in md and
          "synthetic trace 1" not in md, "synthetic traces named by their settings")

    # 4. no pooled panel: two targets, the second stops at 40%: accepted length
    # and every other figure keep the targets apart
    rows = []
    for tgt, fr_ in (("t-8b", (0.0, 0.4, 0.6)), ("t-14b", (0.0, 0.4))):
        for dfrac in fr_:
            rows += [sr("flash_ar", "none", 1.0 + dfrac, dram=dfrac, target=tgt),
                     sr("lever", "n_max=64", 1.5 + dfrac, dram=dfrac, target=tgt, rows_max=65,
                        accepted_hist="10;20;30" if tgt == "t-8b" else "30;20;10")]
    md, figs, byfig = built(c, report, fs, fr, ta.synth_dir(c, "pool", rows))
    for name, f in figs.items():
        for p in f["panels"]:
            check(p is not None and not p["pooled"], f"{name}: no panel pools ({p})")
    acc = figs.get("accepted_length.png", {})
    check(any("t-8b" in t for t in acc.get("titles", []) + [acc.get("suptitle", "")]) and
          any("t-14b" in t for t in acc.get("titles", [])),
          f"accepted length: a panel per target ({acc.get('titles')})")

    # 5. the breakdown's x range holds the largest bar, which is in the first panel
    rows = []
    for k, tgt in enumerate(("t-a", "t-b", "t-c")):
        for j in range(9):
            rows.append(sr("chain", f"k={j + 1},unit=cpu", 1.0, target=tgt, trace=f"w{j}",
                           flash_ms="3481.0" if (k, j) == (0, 0) else "500.0",
                           cycle_ms="3600.0" if (k, j) == (0, 0) else "900.0"))
    md, figs, _ = built(c, report, fs, fr, ta.synth_dir(c, "axes", rows))
    lb = figs.get("latency_breakdown.png", {})
    lims = lb.get("xlim", [])
    check(len(lims) >= 3 and all(hi >= 3481.0 + 50 + 200 for _, hi in lims[:1]) and
          len({round(hi, 6) for _, hi in lims[::2]}) == 1,
          f"one x range over every panel holds the largest bar ({lims})")

    # 6. one colour per policy across the figures of every report above
    check(len(COLOURS) >= 4 and all(len(v) == 1 and v == {fs.policy_colour(k).lower()}
                                    for k, v in COLOURS.items()),
          f"every policy in its one colour in every figure ({COLOURS})")

    # 7. report.md's Source is relative; fsresults needs no matplotlib
    out = os.path.join(c.tmp, "rel", "report")
    rc = report.main([os.path.join(c.tmp, "synth"), "-o", out])
    text = open(os.path.join(out, "report.md"), encoding="utf-8").read() if rc == 0 else ""
    check("Source: `../../synth/results.csv`" in text, f"relative Source: {text[:200]!r}")
    check(os.path.exists(os.path.join(out, "figcheck.json")), "the verdict is written")
    r = subprocess.run([PY, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
                        "from analysis import fsresults; df = fsresults.load(sys.argv[2]);"
                        "print(len(df), 'matplotlib' in sys.modules)",
                        c.home, os.path.join(c.tmp, "pool")],
                       capture_output=True, text=True)
    check(r.stdout.split() == ["10", "False"], f"fsresults loads without matplotlib: "
          f"{r.stdout} {r.stderr[-300:]}")

    broken_figures(fs)


def broken_figures(fs) -> None:
    """A broken figure for each rule of the checker, and the fixed one passing."""
    import matplotlib.pyplot as plt
    import pandas as pd

    def fig1(label="chain", colour=None):
        fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
        ax.plot([0, 1], [1, 2], label=label, color=colour or fs.policy_colour("chain"))
        ax.set_title("t")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.legend()
        return fig, ax

    def probs(fig) -> list[str]:
        p = fs.figure_problems(fig, "broken")
        plt.close(fig)
        return p

    fig, _ = fig1()
    check(probs(fig) == [], "a plain figure passes")
    # values within the axes: a bar cut off by a limit, unless clipped with its number
    fig, ax = fig1()
    ax.bar([0.5], [3481.0], 0.2, color=fs.policy_colour("chain"))
    ax.set_ylim(0, 3380)
    p = probs(fig)
    check(any("beyond the axes" in x for x in p), f"a value off the axes is caught ({p})")
    fig, ax = fig1()
    ax.bar([0.5], [3481.0], 0.2, color=fs.policy_colour("chain"))
    ax.set_ylim(0, 3380)
    fs.clip_overflow(ax)
    texts = [t.get_text() for t in ax.texts]
    p = probs(fig)
    check(p == [] and "3.48e+03" in texts, f"clipped with its number, it passes ({p}, {texts})")
    # a legend over a quarter of the figure
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    for k in range(9):
        ax.plot([0, 1], [k, k], label=f"lever[drafting=specinfer,pruning=none] {k}",
                color=fs.policy_colour("lever"))
    ax.set_title("t")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    fig.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    p = probs(fig)
    check(any("covers" in x for x in p), f"an oversized legend is caught ({p})")
    # names: a default shown, 16 digits, an unbalanced bracket
    for label, words in (("lever[pruning=full]", "default"),
                         ("lever[theta=0.416962615100577]", "significant digits"),
                         ("lever[pruning=none", "unbalanced")):
        fig, _ = fig1(label, fs.policy_colour("lever"))
        p = probs(fig)
        check(any(words in x for x in p), f"'{label}' is caught ({p})")
    fig, _ = fig1("lever[pruning=none,theta=0.417]", fs.policy_colour("lever"))
    check(probs(fig) == [], "a canonical name passes")
    # a pooled panel: one line over two targets; and a target no title names
    for targets, words in ((["t-8b", "t-14b"], "pools 2 values of target"),
                           (["t-8b", "t-8b"], "holds one target (t-8b)")):
        fig, ax = fig1()
        fig.fs_panels = True
        rows = pd.DataFrame({"target": targets, "policy": ["chain", "chain"],
                             "dram_fraction": [0.0, 0.0]})
        fs.register_panel(ax, rows, ["policy"])
        p = probs(fig)
        check(any(words in x for x in p), f"{words}: caught ({p})")
    fig, ax = fig1()
    fig.fs_panels = True
    ax.set_title("t-8b")
    fs.register_panel(ax, pd.DataFrame({"target": ["t-8b"] * 2, "policy": ["chain"] * 2}),
                      ["policy"])
    check(probs(fig) == [], "a panel of one target that its title names passes")
    fig, ax = fig1()
    fig.fs_panels = True
    p = probs(fig)
    check(any("does not say what it holds" in x for x in p), f"an unregistered panel ({p})")
    # colours: a policy in another colour, a non-policy in a policy's colour
    fig, _ = fig1("lever", fs.policy_colour("chain"))
    p = probs(fig)
    check(any("not lever's" in x for x in p), f"lever in chain's colour is caught ({p})")
    fig, _ = fig1("code-strong", fs.policy_colour("lever"))
    p = probs(fig)
    check(any("the colour of lever" in x for x in p), f"a workload in lever's colour ({p})")


# ------------------------------------------------------------------ hostile

def case_hostile(c) -> None:
    report, fs, fr = modules(c)
    sr = ta.synth_row
    base = [sr("flash_ar", "none", 1.0), sr("chain", "k=8,unit=cpu", 1.3, rows_max=9),
            sr("lever", "n_max=15", 1.8, rows_max=16)]

    def run(name: str, rows: list[dict]) -> tuple[int, str, str]:
        d = ta.synth_dir(c, name, rows)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                rc = report.main([d])
            except Exception as e:  # a traceback is the failure this test exists for
                import traceback
                traceback.print_exc(file=err)
                rc = -1
        md = os.path.join(d, "report", "report.md")
        return rc, err.getvalue(), open(md, encoding="utf-8").read() if os.path.exists(md) else ""

    def edit(**kw) -> list[dict]:
        rows = [dict(r) for r in base]
        rows[1].update(kw)
        return rows

    for name, rows, words in (
            ("inf_tps", edit(tokens_per_s="inf"), "column 'tokens_per_s': inf"),
            ("neg_tps", edit(tokens_per_s="-1.5"), "column 'tokens_per_s': -1.5"),
            ("nan_dram", edit(dram_fraction="nan"), "column 'dram_fraction': nan"),
            ("inf_dram", edit(dram_fraction="inf"), "column 'dram_fraction': inf"),
            ("bracket", edit(policy="lever[oops"), "'lever[oops' is not a policy name"),
            ("newline", edit(trace="code\nstrong"), "a control character"),
            ("text_tps", edit(tokens_per_s="fast"), "not a number: 'fast'")):
        rc, err, md = run(name, rows)
        check(rc == 65 and "Traceback" not in err and err.count("\n") == 1 and words in err and
              ":3:" in err and not md,
              f"{name}: one line naming the file and line, exit 65, nothing written "
              f"({rc}: {err[-300:]!r})")
    rc, err, md = run("script", edit(trace="<script>alert(1)</script>"))
    check(rc == 0 and "<script>" not in md and "&lt;script&gt;" in md and "Traceback" not in err,
          f"<script> in a name is escaped in report.md ({rc}: {err[-300:]})")
    rc, err, md = run("params", edit(policy_params="k=[3,unit=cpu"))
    check(rc == 0 and "Traceback" not in err, f"a bracket in a parameter value ({rc}: {err[-300:]})")
    many = [sr(f"pol{i}", "x=1", 1.0 + i / 100) for i in range(144)]
    t0 = time.monotonic()
    rc, err, md = run("many", many)
    check(rc == 0 and "Traceback" not in err and "pol143" in md and
          "Skipped: 144 series are more than one figure tells apart" in md,
          f"144 policy names: tables, no unreadable figure ({rc}, "
          f"{time.monotonic() - t0:.1f} s: {err[-300:]})")
    # 200,000 rows: a sample, said so, in under a minute
    d = os.path.join(c.tmp, "big")
    os.makedirs(d)
    head = ["policy", "policy_params", "device", "target", "draft", "trace", "dram_fraction",
            "max_new_tokens", "seed", "tokens_per_s", "mean_accepted"]
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        for i in range(200000):
            pol = ("flash_ar", "chain", "lever")[i % 3]
            w.writerow([pol, "none" if pol == "flash_ar" else "k=8" if pol == "chain"
                        else "n_max=15", "phone", "t-8b", "none" if pol == "flash_ar" else "d",
                        f"w{i % 7}", f"{(i // 21) % 5 / 4:g}", "64", str(i),
                        f"{1 + (i % 97) / 100:.3f}", "0" if pol == "flash_ar" else "1.5"])
    t0 = time.monotonic()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = report.main([d])
    took = time.monotonic() - t0
    md = open(os.path.join(d, "report", "report.md"), encoding="utf-8").read() if rc == 0 else ""
    check(rc == 0 and took < 60 and "**Sampled:** the results hold 200000 points" in md and
          "every 100th" in md, f"200k rows: {rc} in {took:.1f} s ({err.getvalue()[-300:]})")
    print(f"hostile: 200,000 rows reported in {took:.1f} s", file=sys.stderr)


# ----------------------------------------------------------------- defaults

def case_defaults(c) -> None:
    listed = subprocess.run([c.exe, "policies"], capture_output=True, text=True)
    names = [ln.split()[0] for ln in listed.stdout.splitlines() if ln.strip()]
    want = []
    for p in names:
        r = subprocess.run([c.exe, "policies", p, "--markdown"], capture_output=True, text=True)
        rows = [ln for ln in r.stdout.splitlines()[2:] if ln.startswith("|")]
        keys = []
        for ln in rows:
            cells = [x.strip() for x in ln.strip("|").split("|")]
            key, default = cells[0].strip("`"), cells[1].strip("`")
            if key in ("—", "tree_nodes"):
                continue
            keys.append((p, key, default.strip("{}").replace(", ", "/")))
        want += keys or [(p, "", "")]
    path = os.path.join(c.home, "analysis", "reference", "policy_defaults.csv")
    with open(path, newline="", encoding="utf-8") as f:
        got = [tuple(r) for r in csv.reader(ln for ln in f if not ln.startswith("#"))][1:]
    check(got == want, "policy_defaults.csv equals `flashspec policies NAME --markdown`: "
          f"{sorted(set(want) ^ set(got))[:10]}")


# ---------------------------------------------------------------- reproduce

def case_reproduce(c) -> None:
    out = os.path.join(c.tmp, "repro")
    build = os.path.relpath(os.path.dirname(os.path.dirname(os.path.dirname(c.exe))), c.home)
    env = dict(os.environ, FLASHSPEC_REPRODUCE_OUT=out, FLASHSPEC_BUILD_DIR=build,
               FLASHSPEC_REPRODUCE_ARGS="--arg grid=quick", PYTHONDONTWRITEBYTECODE="1")
    studies = ["ablations", "output_length", "tuned"]
    t0 = time.monotonic()
    r = subprocess.run([os.path.join(c.home, "scripts", "reproduce"), *studies],
                       capture_output=True, text=True, env=env, cwd=c.home)
    cold = time.monotonic() - t0
    text = r.stdout
    check(r.returncode == 0, f"reproduce: exit {r.returncode}: {text[-800:]} {r.stderr[-800:]}")
    for k, s in enumerate(studies, start=1):
        check(f"== study {k} of 3: {s} (" in text and "ETA ~" in text, f"study {k} of 3 shown")
    check("drawing 3 reports with 2 workers" in text and
          all(f"report {k} of 3:" in text for k in (1, 2, 3)),
          f"reports drawn concurrently, k of n: {re.findall(r'^report.*$', text, re.M)}")
    m = re.search(r"figure check: (\d+) figures, (\d+) ok, (\d+) with problems", text)
    check(m is not None and m.group(1) == m.group(2) and int(m.group(1)) >= 12,
          f"every figure passes the checker ({m.group(0) if m else text[-1500:]})")
    for s in studies:
        v = json.load(open(os.path.join(out, s, "report", "figcheck.json")))
        check(all(p == [] for p in v.values()), f"{s}: {v}")
    claims = re.findall(r"^\| \d+ \| .* \| (agree|DISAGREE) \|$", text, re.M)
    why = re.findall(r"^- \*\*\d+\*\* ", text, re.M)
    check(len(claims) >= 5 and len(why) == claims.count("DISAGREE") and
          "paper claims:" in text and os.path.exists(os.path.join(out, "claims.md")),
          f"the claims table: {len(claims)} claims, {len(why)} reasons")
    md = open(os.path.join(out, "output_length", "report", "report.md"), encoding="utf-8").read()
    check("workload code" in md, "the in-memory workload traces are named by their workload")
    t0 = time.monotonic()
    r = subprocess.run([os.path.join(c.home, "scripts", "reproduce"), *studies],
                       capture_output=True, text=True, env=env, cwd=c.home)
    warm = time.monotonic() - t0
    kept = re.findall(r"^report \S+: inputs unchanged, kept", r.stdout, re.M)
    check(r.returncode == 0 and len(kept) == 3 and "drawing" not in r.stdout,
          f"run again: every report kept ({kept})")
    print(f"reproduce: small reproduce {cold:.1f} s cold, {warm:.1f} s warm", file=sys.stderr)


CASES = {"rules": case_rules, "hostile": case_hostile, "defaults": case_defaults,
         "reproduce": case_reproduce}


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        print(f"usage: test_figcheck.py {{{'|'.join(CASES)}}} FLASHSPEC PROJECT_DIR",
              file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="fs-figcheck-")
    try:
        CASES[sys.argv[1]](ta.Ctx(os.path.abspath(sys.argv[2]), sys.argv[3], tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if ta.FAILS:
        print(f"{sys.argv[1]}: {len(ta.FAILS)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{sys.argv[1]}: ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
