#!/usr/bin/python3
"""The table of paper claims that ends scripts/reproduce.

    scripts/claims.py RESULTS_ROOT [--claims scripts/claims.csv] [-o claims.md]

Reads every RESULTS_ROOT/STUDY/table.txt (what the study printed) for its
tested outcomes,

    == SECTION TITLE ...
    LABEL (22 columns)     WORKLOAD  TOK/S [LO, HI] ...
    paper: CLAIM   simulated R.RRRx  agree|DISAGREE

and scripts/claims.csv for each claim's place in the paper, the two variants
it compares and, for a DISAGREE, the reason.  Prints one row per claim --
claim, paper, simulated ratio with its band, agree or DISAGREE -- then the
reason of each DISAGREE, and writes the same as markdown to -o.  The band is
the ratio of the two variants' geometric means over the workloads with each
workload's 95% bootstrap interval taken at its least and at its most
favourable end.  A new claim is a `paper:` line in a study and a row in the
CSV; this script does not change.

Exit codes: 0 (whatever the verdicts), 65 a malformed claims file, 66 a
missing one.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import re
import sys

EX_DATAERR, EX_NOINPUT = 65, 66
CLAIM = re.compile(r"^paper: (.*?)\s+simulated ([0-9.]+)x\s+(agree|DISAGREE)\s*$")
ROW = re.compile(r"^(.{22}) (\S+)\s+([0-9.]+) \[([0-9.]+), ([0-9.]+)\]")
COLUMNS = ["study", "section", "claim", "paper", "winner", "loser", "reason"]


class ClaimsError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def read_claims(path: str) -> dict[tuple[str, str, str], dict[str, str]]:
    """(study, section, claim) -> the row of the claims file."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = [(i, ln) for i, ln in enumerate(f, start=1) if not ln.startswith("#")]
    except OSError as e:
        raise ClaimsError(EX_NOINPUT, f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ClaimsError(EX_DATAERR, f"{path}: not UTF-8 text: {e}") from None
    rows = list(csv.reader([ln for _, ln in lines]))
    if not rows or rows[0] != COLUMNS:
        raise ClaimsError(EX_DATAERR, f"{path}: the header must be {','.join(COLUMNS)}")
    out = {}
    for (line, _), r in zip(lines[1:], rows[1:]):
        if not r:
            continue
        if len(r) != len(COLUMNS):
            raise ClaimsError(EX_DATAERR, f"{path}:{line}: {len(r)} fields, the header has "
                              f"{len(COLUMNS)}")
        d = dict(zip(COLUMNS, r))
        out[(d["study"], d["section"], d["claim"])] = d
    return out


def parse_table(path: str) -> list[dict]:
    """The claims one study printed, each with its section's rows."""
    out: list[dict] = []
    section, rows = "", {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for ln in f:
            ln = ln.rstrip("\n")
            if ln.startswith("== "):
                section, rows = ln[3:].strip(), {}
                continue
            m = ROW.match(ln)
            if m:
                rows.setdefault(m.group(1).strip(), []).append(
                    (float(m.group(3)), float(m.group(4)), float(m.group(5))))
                continue
            m = CLAIM.match(ln)
            if m:
                out.append({"section": section, "claim": m.group(1).strip(),
                            "ratio": float(m.group(2)), "verdict": m.group(3),
                            "rows": dict(rows)})
    return out


def geo(v: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v and min(v) > 0 else math.nan


def band(rows: dict, winner: str, loser: str) -> tuple[float, float] | None:
    """The ratio of the geometric means at the ends of the workloads' 95%
    intervals: (winner low / loser high, winner high / loser low)."""
    w, lo = rows.get(winner), rows.get(loser)
    if not w or not lo:
        return None
    return (geo([r[1] for r in w]) / geo([r[2] for r in lo]),
            geo([r[2] for r in w]) / geo([r[1] for r in lo]))


def section_key(section: str, known: dict, study: str, claim: str) -> dict | None:
    """The claims-file row whose section the printed section title starts with."""
    for (s, sec, c), d in known.items():
        if s == study and c == claim and section.startswith(sec):
            return d
    return None


def table(root: str, known: dict) -> tuple[list[list[str]], list[tuple[int, str, str]], dict]:
    rows, reasons = [], []
    count = {"agree": 0, "DISAGREE": 0, "no reason": 0, "not recorded": 0}
    studies = sorted(d for d in os.listdir(root)
                     if os.path.isfile(os.path.join(root, d, "table.txt")))
    for study in studies:
        for c in parse_table(os.path.join(root, study, "table.txt")):
            d = section_key(c["section"], known, study, c["claim"])
            b = band(c["rows"], d["winner"], d["loser"]) if d else None
            sim = f"{c['ratio']:.3f}x" + (f" [{b[0]:.3f}, {b[1]:.3f}]" if b else "")
            n = len(rows) + 1
            count[c["verdict"]] += 1
            if d is None:
                count["not recorded"] += 1
            rows.append([str(n), c["claim"] + f" ({study}: {c['section'].split(' (')[0]})",
                         d["paper"] if d else "not recorded (scripts/claims.csv)", sim,
                         c["verdict"]])
            if c["verdict"] == "DISAGREE":
                why = d["reason"] if d and d["reason"] else ""
                if not why:
                    count["no reason"] += 1
                reasons.append((n, c["claim"], why or "no reason recorded (scripts/claims.csv)"))
    return rows, reasons, count


def md_cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="claims.py", description="The table of paper claims.")
    ap.add_argument("root", metavar="RESULTS_ROOT")
    ap.add_argument("--claims", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "claims.csv"))
    ap.add_argument("-o", "--output", metavar="FILE.md")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 64 if e.code else 0
    try:
        known = read_claims(args.claims)
        if not os.path.isdir(args.root):
            raise ClaimsError(EX_NOINPUT, f"{args.root}: no such results directory")
        rows, reasons, count = table(args.root, known)
    except ClaimsError as e:
        print(f"claims.py: {e.message}", file=sys.stderr)
        return e.code
    head = ["#", "claim (study: section)", "paper", "simulated [band]", "verdict"]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(md_cell(x) for x in r) + " |" for r in rows]
    md.append("")
    if reasons:
        md.append("Why the simulator disagrees:")
        md.append("")
        md += [f"- **{n}** ({md_cell(claim)}): {md_cell(why)}" for n, claim, why in reasons]
        md.append("")
    summary = (f"paper claims: {count['agree']} agree, {count['DISAGREE']} DISAGREE"
               f" ({count['DISAGREE'] - count['no reason']} with a reason, "
               f"{count['no reason']} without); {count['not recorded']} not in "
               f"{os.path.basename(args.claims)}")
    text = "\n".join(md)
    print(text)
    print(summary)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write("# Paper claims\n\nSimulated: the ratio of the two variants' geometric "
                        "means over the workloads; band: the same with each workload's 95% "
                        "interval at its least and most favourable end.\n\n" + text + "\n" +
                        summary + "\n")
        except OSError as e:
            print(f"claims.py: cannot write {args.output}: {e.strerror}", file=sys.stderr)
            return 73
    return 0


if __name__ == "__main__":
    sys.exit(main())
