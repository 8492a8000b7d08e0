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
import textwrap

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
if __name__ == "__main__":
    import depcheck  # the script's own directory is on sys.path

    depcheck.require("timeline.py")
if __package__:
    from . import figstyle as fs
    from . import fsresults as fr
else:  # run as a script, or imported with analysis/ on sys.path
    import figstyle as fs  # noqa: E402
    import fsresults as fr  # noqa: E402
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

# the context colours of analysis/figstyle.py (none is a policy's colour: a
# colour means one policy in every figure), the resources as in the latency
# breakdown (draft, flash I/O, NPU, CPU, KV)
COLORS = {"cycle": "#cccccc", "draft": fs.RESOURCE_STYLE["draft"][0],
          "verify": fs.CONTEXT_COLOURS[7], "read": fs.RESOURCE_STYLE["flash I/O"][0],
          "read_head": fs.CONTEXT_COLOURS[5], "layer": fs.RESOURCE_STYLE["NPU"][0],
          "head": fs.RESOURCE_STYLE["CPU"][0], "kv": fs.RESOURCE_STYLE["KV"][0],
          "provisional": fs.OKABE_ITO["black"]}
OTHER = "#888888"
WIDTH_IN = 11.0


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
    t_all = [e["ts"] for e in spans] + [e["ts"] + e["dur"] for e in spans]
    secs = bool(t_all) and max(t_all) - min(t_all) > 20e6  # more than 20 s: seconds
    unit = 1e6 if secs else 1e3
    # the lanes half an inch each, the DRAM counter a panel of its own at least
    # figstyle.MIN_PANEL_IN tall
    lanes_in, dram_in = max(fs.MIN_PANEL_IN, 0.5 * len(tids)), fs.MIN_PANEL_IN + 0.4
    fig, (ax, axc) = plt.subplots(2, 1, figsize=(WIDTH_IN, lanes_in + dram_in + 2.0),
                                  sharex=True,
                                  gridspec_kw={"height_ratios": [lanes_in, dram_in]})
    used = {}
    for e in spans:
        k = kind_of(e.get("name", ""))
        if e.get("tid") == 1 and k in ("draft", "verify"):
            y, h = lane[e["tid"]] + 0.05, 0.35  # phases: lower half of the cycles lane
        else:
            y, h = lane[e.get("tid", 0)] - 0.4, 0.8 if e.get("tid") != 1 else 0.45
        c = COLORS.get(k, OTHER)
        used[k] = c
        ax.broken_barh([(e["ts"] / unit, max(e["dur"], 0) / unit)], (y, h), facecolors=c,
                       edgecolors="white" if k == "cycle" else "none", linewidth=0.6)
    ax.set_yticks(range(len(tids)))
    ax.set_yticklabels([names.get(t, f"track {t}") for t in tids])
    ax.invert_yaxis()
    ax.set_ylabel("track")
    ax.grid(alpha=0.3, axis="x")
    order = [k for k in COLORS if k in used] + [k for k in used if k not in COLORS]
    if counters:
        xs = [e["ts"] / unit for e in counters]
        ys = [e["args"].get("used_MB", 0) for e in counters]
        axc.step(xs, ys, where="post", color="black")
    else:
        axc.text(0.5, 0.5, "no DRAM counter", transform=axc.transAxes, ha="center")
    axc.set_ylabel("DRAM used (MB)")
    axc.set_xlabel("simulated time (s)" if secs else "simulated time (ms)")
    axc.grid(alpha=0.3)
    other = doc.get("otherData") if isinstance(doc.get("otherData"), dict) else {}
    if other.get("policy"):
        trace = str(other.get("trace", "?"))
        # a trace made in memory is named by its checksum: no name to show
        trace = "a synthetic trace" if fs.hash_like(trace) else f"trace {trace}"
        head = (f"Timeline of {other.get('policy')}: {other.get('target', '?')} on "
                f"{other.get('device', '?')}, {trace}, DRAM "
                f"{100 * float(other.get('dram_fraction') or 0):g}% (point "
                f"{other.get('point', '?')}, prompt {other.get('prompt', '?')})")
        params = other.get("policy_params", "")
        sub = textwrap.fill(params.replace(",", ", "), 120) if params and params != "none" \
            else ""
    else:
        head, sub = "Timeline: " + textwrap.shorten(title, 110), ""
    if cycles:
        head += f", cycles {cycles[0]}..{cycles[1] - 1}"
    fig.suptitle(head, fontsize=fs.TITLE_SIZE, fontweight="bold", x=0.02, ha="left")
    if sub:
        ax.set_title(sub, fontsize=7, loc="left", color="#444444")
    fig.tight_layout()
    handles = [Patch(color=used[k], label=k) for k in order]
    handles.append(Line2D([], [], color="black", label="DRAM in use"))
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.9),
               title="span kind", frameon=False)
    fs.declare(fig, [h.get_label() for h in handles])
    return fr.fig_bytes(fig)


def main(argv: list[str] | None = None, prog: str = "timeline.py") -> int:
    ap = argparse.ArgumentParser(prog=prog,
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
            print(f"{prog}: --cycles needs A:B with A < B", file=sys.stderr)
            return fr.EX_USAGE
        rng = (int(m.group(1)), int(m.group(2)))

    def body() -> None:
        doc = load(args.timeline)
        png = render(doc, rng)
        out = args.output or os.path.splitext(args.timeline)[0] + ".png"
        d, name = os.path.split(os.path.abspath(out))
        fr.write_outputs(d, {name: png})
        print(f"{prog}: wrote {out}", file=sys.stderr)

    return fr.run_main(prog, body)


if __name__ == "__main__":
    sys.exit(main())
