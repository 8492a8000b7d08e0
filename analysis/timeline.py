#!/usr/bin/python3
"""Renders a flashspec timeline (`flashspec run|sweep --timeline FILE.json`) as
a PNG: one lane per track (the cycles, then CPU, NPU, flash and their extra
tracks, named by the file's thread_name metadata), spans coloured by what they
are (draft, read, layer, kv, head, provisional, ...), and the DRAM counter as a
line underneath.

    analysis/timeline.py FILE.json [-o PNG] [--cycles A:B]

Default PNG: FILE.png next to FILE.json.  --cycles A:B draws only cycles A..B-1
(0-based, as named in the file) and what ran during them.

Exit codes: 0 ok, 64 usage, 65 not a trace-event file, 66 missing input,
73 cannot write the PNG.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import fsresults as fr  # noqa: E402
import matplotlib.pyplot as plt
from matplotlib.patches import Patch

COLORS = {"cycle": "#bbbbbb", "draft": "#1f77b4", "verify": "#ff7f0e", "read": "#2ca02c",
          "read_head": "#98df8a", "layer": "#d62728", "head": "#9467bd", "kv": "#8c564b",
          "provisional": "#e377c2"}


def load(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise fr.AnalysisError(fr.EX_NOINPUT, f"{path}: no such timeline file") from None
    except OSError as e:
        raise fr.AnalysisError(fr.EX_NOINPUT, f"{path}: cannot read: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        line = getattr(e, "lineno", 1)
        raise fr.AnalysisError(fr.EX_DATAERR, f"{path}:{line}: not JSON: {e}") from None
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise fr.AnalysisError(fr.EX_DATAERR, f"{path}: no traceEvents array")
    for i, e in enumerate(doc["traceEvents"]):
        if not isinstance(e, dict) or "ph" not in e:
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}: traceEvents[{i}] is not an event")
        if e["ph"] == "X" and not all(isinstance(e.get(k), (int, float)) for k in ("ts", "dur")):
            raise fr.AnalysisError(fr.EX_DATAERR, f"{path}: traceEvents[{i}]: 'X' event "
                                   "without numeric ts/dur")
    return doc


def kind_of(name: str) -> str:
    base = re.sub(r" \d+$", "", name)
    if base.startswith("cycle"):
        return "cycle"
    return base


def render(doc: dict, cycles: tuple[int, int] | None) -> bytes:
    ev = doc["traceEvents"]
    names = {e.get("tid"): e["args"]["name"] for e in ev
             if e["ph"] == "M" and e.get("name") == "thread_name"}
    title = next((e["args"]["name"] for e in ev
                  if e["ph"] == "M" and e.get("name") == "process_name"), "timeline")
    spans = [e for e in ev if e["ph"] == "X"]
    counters = [e for e in ev if e["ph"] == "C" and e.get("name") == "DRAM"]
    t_lo, t_hi = None, None
    if cycles:
        cyc = [e for e in spans if re.fullmatch(r"cycle \d+", e.get("name", ""))
               and cycles[0] <= int(e["name"].split()[1]) < cycles[1]]
        if cyc:
            t_lo = min(e["ts"] for e in cyc)
            t_hi = max(e["ts"] + e["dur"] for e in cyc)
    if t_lo is not None:
        spans = [e for e in spans if e["ts"] < t_hi and e["ts"] + e["dur"] > t_lo]
        counters = [e for e in counters if t_lo <= e["ts"] <= t_hi]
    tids = sorted({e.get("tid", 0) for e in spans} | set(names))
    lane = {t: k for k, t in enumerate(tids)}
    fig, (ax, axc) = plt.subplots(2, 1, figsize=(13, 1.0 + 0.55 * len(tids) + 1.6),
                                  sharex=True,
                                  gridspec_kw={"height_ratios": [max(1, len(tids)), 1.6]})
    used = {}
    for e in spans:
        k = kind_of(e.get("name", ""))
        if e.get("tid") == 1 and k in ("draft", "verify"):
            y, h = lane[e["tid"]] + 0.05, 0.35  # phases: lower half of the cycles lane
        else:
            y, h = lane[e.get("tid", 0)] - 0.4, 0.8 if e.get("tid") != 1 else 0.45
        c = COLORS.get(k, "#7f7f7f")
        used[k] = c
        ax.broken_barh([(e["ts"] / 1000.0, max(e["dur"], 0) / 1000.0)], (y, h), facecolors=c,
                       edgecolors="none")
    ax.set_yticks(range(len(tids)))
    ax.set_yticklabels([names.get(t, f"track {t}") for t in tids])
    ax.invert_yaxis()
    ax.set_title(title, fontsize=9)
    ax.legend(handles=[Patch(color=c, label=k) for k, c in used.items()], fontsize=7,
              loc="upper right", ncol=min(len(used), 5))
    if counters:
        xs = [e["ts"] / 1000.0 for e in counters]
        ys = [e["args"].get("used_MB", 0) for e in counters]
        axc.step(xs, ys, where="post", color="black")
        axc.set_ylabel("DRAM used (MB)", fontsize=8)
    else:
        axc.text(0.5, 0.5, "no DRAM counter", transform=axc.transAxes, ha="center")
    axc.set_xlabel("simulated time (ms)")
    axc.grid(alpha=0.3)
    return fr.fig_bytes(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="timeline.py",
                                 description="Render a flashspec trace-event timeline as PNG.")
    ap.add_argument("timeline", metavar="FILE.json")
    ap.add_argument("-o", "--output", metavar="PNG", help="default: FILE.png")
    ap.add_argument("--cycles", metavar="A:B", help="only cycles A..B-1")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return fr.EX_USAGE if e.code else 0
    rng = None
    if args.cycles:
        m = re.fullmatch(r"(\d+):(\d+)", args.cycles)
        if not m or int(m.group(1)) >= int(m.group(2)):
            print("timeline.py: --cycles needs A:B with A < B", file=sys.stderr)
            return fr.EX_USAGE
        rng = (int(m.group(1)), int(m.group(2)))

    def body() -> None:
        doc = load(args.timeline)
        png = render(doc, rng)
        out = args.output or os.path.splitext(args.timeline)[0] + ".png"
        d, name = os.path.split(os.path.abspath(out))
        fr.write_outputs(d, {name: png})
        print(f"timeline.py: wrote {out}", file=sys.stderr)

    return fr.run_main("timeline.py", body)


if __name__ == "__main__":
    sys.exit(main())
