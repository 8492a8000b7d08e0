"""Shared helpers of the analysis scripts: loading flashspec results, derived
columns, point labels, markdown tables and all-or-nothing output.

Errors are raised as AnalysisError(code, message) with the exit codes of the
flashspec command line (sysexits): 64 usage, 65 bad data, 66 missing input,
73 cannot create output.  Each script's main() prints the one-line message
and exits with the code; nothing is written before all inputs are validated.
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
import sys
import tempfile
from typing import Iterable

# Loading results needs numpy, pandas and (for results.h5) h5py only: nothing
# here imports matplotlib (fig_bytes and capture_figures take the figures
# figstyle made, which chose the Agg backend).
import numpy as np
import pandas as pd

if __package__:
    from . import policies as _policies
else:  # run as a script, analysis/ on sys.path
    import policies as _policies  # noqa: E402

EX_USAGE, EX_DATAERR, EX_NOINPUT, EX_CANTCREAT = 64, 65, 66, 73

# The parameters of a point (rows.c); every other column is an outcome.
PARAM_COLUMNS = [
    "policy", "policy_params", "device", "target", "draft", "trace", "dram_fraction",
    "max_new_tokens", "prompts", "seed", "accept", "top_p", "temperature", "runtime",
]
STRING_COLUMNS = {
    "variant", "policy", "policy_params", "device", "target", "draft", "trace", "version",
    "script_hash", "trace_checksum", "accept", "runtime", "accepted_hist", "synth_tokens",
    "tune_objective",
}
REQUIRED_COLUMNS = ["policy", "target", "tokens_per_s"]
# The per-parameter result columns (param_<name>, one per policy parameter of
# the rows' labels) and the point tags (tag_<name>): numbers or text.
PARAM_PREFIX = "param_"
TAG_PREFIX = "tag_"


class AnalysisError(Exception):
    """An expected failure: exit code plus one line."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def run_main(prog: str, body) -> int:
    """Runs body(), turning AnalysisError into its line and exit code."""
    try:
        body()
    except AnalysisError as e:
        print(f"{prog}: {e.message}", file=sys.stderr)
        return e.code
    return 0


# ------------------------------------------------------------------ loading

def _read_csv(path: str) -> pd.DataFrame:
    """results.csv as a frame: text columns as str, the others as float where
    every cell is what Python's float() reads (param_ / tag_ columns stay
    text where one is not); errors name the file and line.  pandas' C parser
    reads the cells (a 200k-row file in seconds), numpy's float conversion
    (float() per cell) converts them."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), None)
    except OSError as e:
        raise AnalysisError(EX_NOINPUT, f"{path}: cannot read: {e.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise AnalysisError(EX_DATAERR, f"{path}: not a CSV file: {e}") from None
    if not header:
        raise AnalysisError(EX_DATAERR, f"{path}:1: empty file (no header row)")
    if len(set(header)) != len(header):
        raise AnalysisError(EX_DATAERR, f"{path}:1: duplicate column names")
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[],
                          skip_blank_lines=False, encoding="utf-8", engine="c")
    except pd.errors.ParserError as e:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(e))
        if m:
            raise AnalysisError(EX_DATAERR, f"{path}:{m.group(2)}: {m.group(3)} fields, the "
                                f"header has {len(header)}") from None
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise AnalysisError(EX_DATAERR, f"{path}: not a CSV file: {msg}") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise AnalysisError(EX_DATAERR, f"{path}: not a CSV file: {e}") from None
    except OSError as e:
        raise AnalysisError(EX_NOINPUT, f"{path}: cannot read: {e.strerror}") from None
    # a row with fewer fields than the header (the parser fills them in)
    short = raw.isna().to_numpy().any(axis=1)
    if short.any():
        i = int(np.flatnonzero(short)[0])
        n = int(raw.iloc[i].notna().sum())
        raise AnalysisError(EX_DATAERR, f"{path}:{i + 2}: {n if n > 1 or raw.iat[i, 0] else 0} "
                            f"fields, the header has {len(header)}")
    data = {}
    for c, col in zip(header, (raw.iloc[:, k] for k in range(len(header)))):
        vals = col.to_numpy(dtype=object)
        data[c] = pd.Series(vals, dtype=object)
        if c in STRING_COLUMNS:
            continue
        try:
            data[c] = pd.Series(vals.astype(float), dtype=float)
            continue
        except (TypeError, ValueError):
            bad = _first_not_float(vals)
        # param_ / tag_ columns are text where any value is (a tag "A")
        if c.startswith((PARAM_PREFIX, TAG_PREFIX)) and c not in PARAM_COLUMNS:
            continue
        if c in REQUIRED_COLUMNS or c in PARAM_COLUMNS or _looks_numeric(vals):
            raise AnalysisError(EX_DATAERR, f"{path}:{bad + 2}: column '{c}': not a number: "
                                f"{vals[bad]!r}")
    return pd.DataFrame(data, columns=header)


def _first_not_float(vals) -> int:
    """The index of the first cell float() refuses."""
    for i, v in enumerate(vals):
        try:
            float(v)
        except (TypeError, ValueError):
            return i
    return 0


def _looks_numeric(col: Iterable[str]) -> bool:
    ok = 0
    for v in col:
        try:
            float(v)
            ok += 1
        except ValueError:
            pass
    return ok > 0


def _read_h5(path: str) -> pd.DataFrame:
    import h5py

    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise AnalysisError(EX_DATAERR, f"{path}: not a results HDF5 file: {e}") from None
    with f:
        if "results" not in f:
            raise AnalysisError(EX_DATAERR, f"{path}: no group /results")
        g = f["results"]
        order = [c.decode() if isinstance(c, bytes) else str(c)
                 for c in g.attrs.get("columns", list(g.keys()))]
        data = {}
        for c in order:
            if c not in g:
                raise AnalysisError(EX_DATAERR, f"{path}: /results/{c} listed but missing")
            v = g[c][()]
            if v.dtype.kind in "OSU":
                v = [x.decode() if isinstance(x, bytes) else str(x) for x in v]
                data[c] = pd.Series(v, dtype=object)
            else:
                data[c] = pd.Series(np.asarray(v, dtype=float))
        return pd.DataFrame(data)


def load(path: str) -> pd.DataFrame:
    """The results of a run as a DataFrame, from a results directory, its
    results.csv or its results.h5 (a directory: results.csv, else results.h5).

    Whichever file it reads, the frame equals pandas.read_csv(DIR/results.csv):
    the columns in the files' order, text columns as str (dtype object), int64
    columns as int64 and double columns as float64 (the CSV writes a whole
    double as "2.0", and both files hold the same 10 significant digits).  The
    text columns are read as text even where every value looks like a number
    (a trace named "2024"), which plain read_csv would turn into integers.
    A param_<name> or tag_<name> column is NaN where a point lacks that
    parameter or tag, text or number.  Raises AnalysisError on a missing or
    malformed file."""
    if os.path.isdir(path):
        csv_path = os.path.join(path, "results.csv")
        h5_path = os.path.join(path, "results.h5")
        if os.path.exists(csv_path):
            path = csv_path
        elif os.path.exists(h5_path):
            path = h5_path
        else:
            raise AnalysisError(EX_NOINPUT, f"{path}: holds neither results.csv nor results.h5")
    elif not os.path.exists(path):
        raise AnalysisError(EX_NOINPUT, f"{path}: no such file")
    if path.endswith(".h5"):
        return _absent_as_nan(_load_h5(path))
    try:
        with open(path, newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), [])
        return _absent_as_nan(pd.read_csv(
            path, dtype={c: str for c in header if c in STRING_COLUMNS}, keep_default_na=False,
            na_values={c: ["nan", "NaN"] for c in header if c not in STRING_COLUMNS}))
    except OSError as e:
        raise AnalysisError(EX_NOINPUT, f"{path}: cannot read: {e.strerror}") from None
    except (UnicodeDecodeError, csv.Error, ValueError, pd.errors.ParserError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise AnalysisError(EX_DATAERR, f"{path}: not a results CSV file: {msg}") from None


def _absent_as_nan(df: pd.DataFrame) -> pd.DataFrame:
    """A param_<name> / tag_<name> text column holds "" where a point lacks
    the parameter or tag; as in the numeric ones (and as pandas.read_csv
    reads it) that is NaN."""
    for c in df.columns:
        if isinstance(c, str) and c.startswith((PARAM_PREFIX, TAG_PREFIX)) and \
                df[c].dtype == object:
            df[c] = df[c].where(df[c] != "", np.nan)
    return df


def _load_h5(path: str) -> pd.DataFrame:
    import h5py

    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise AnalysisError(EX_DATAERR, f"{path}: not a results HDF5 file: {e}") from None
    with f:
        g = f.get("results")
        if not isinstance(g, h5py.Group) or "columns" not in g.attrs:
            raise AnalysisError(EX_DATAERR, f"{path}: no group /results with a 'columns' "
                                "attribute")
        order = [c.decode() if isinstance(c, bytes) else str(c) for c in g.attrs["columns"]]
        data = {}
        for c in order:
            d = g.get(c)
            if not isinstance(d, h5py.Dataset) or d.ndim != 1:
                raise AnalysisError(EX_DATAERR, f"{path}: /results/{c} listed but not a 1-D "
                                    "dataset")
            kind = d.dtype.kind
            if h5py.check_string_dtype(d.dtype) is not None:
                data[c] = pd.Series(list(d.asstr()[()]), dtype=object)
            elif kind in "iu":
                data[c] = pd.Series(d[()].astype(np.int64))
            elif kind == "f":
                data[c] = pd.Series(d[()].astype(np.float64))
            else:
                raise AnalysisError(EX_DATAERR, f"{path}: /results/{c}: unsupported type "
                                    f"{d.dtype}")
        if len({len(v) for v in data.values()}) > 1:
            raise AnalysisError(EX_DATAERR, f"{path}: /results columns differ in length")
        return pd.DataFrame(data, columns=order)


def load_results(results_dir: str) -> tuple[pd.DataFrame, str]:
    """DataFrame of RESULTS_DIR/results.csv (or results.h5) and its path."""
    if not os.path.isdir(results_dir):
        raise AnalysisError(EX_NOINPUT, f"{results_dir}: no such results directory")
    csv_path = os.path.join(results_dir, "results.csv")
    h5_path = os.path.join(results_dir, "results.h5")
    if os.path.exists(csv_path):
        df, src = _read_csv(csv_path), csv_path
    elif os.path.exists(h5_path):
        df, src = _read_h5(h5_path), h5_path
    else:
        raise AnalysisError(EX_NOINPUT, f"{results_dir}: holds neither results.csv nor "
                            "results.h5")
    for c in REQUIRED_COLUMNS:
        if c not in df.columns:
            raise AnalysisError(EX_DATAERR, f"{src}:1: missing column '{c}'")
    if len(df) == 0:
        raise AnalysisError(EX_DATAERR, f"{src}: no result rows")
    validate(df, src)
    return add_derived(df), src


# What a row must hold for the reports to draw it (flashspec writes nothing
# else): names without control characters (a policy: a name, no brackets), and
# finite point keys and throughput in their ranges.
NAME_COLUMNS = ("policy", "device", "target", "draft", "trace")
POLICY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.+-]*$")
FINITE_RANGES = {"tokens_per_s": (0.0, math.inf), "dram_fraction": (0.0, 1.0),
                 "max_new_tokens": (0.0, math.inf), "prompts": (0.0, math.inf),
                 "top_p": (0.0, 1.0), "temperature": (0.0, math.inf), "seed": (0.0, math.inf)}


def validate(df: pd.DataFrame, src: str) -> None:
    """Raises AnalysisError(65) naming the file and line (row + 1 of the CSV;
    the row of results.h5) of the first cell the reports cannot draw: a
    control character in a name, a policy name that is not a name
    ('lever[oops'), a point key or tokens_per_s that is not a finite number
    in its range (inf tokens/s, a NaN DRAM budget)."""
    where = (lambda i: f"{src}:{i + 2}") if src.endswith(".csv") else \
        (lambda i: f"{src}: row {i + 1}")
    for c in NAME_COLUMNS:
        if c not in df.columns:
            continue
        col = df[c].astype(str)
        bad = col.str.contains(r"[\x00-\x1f\x7f]", regex=True).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise AnalysisError(EX_DATAERR, f"{where(i)}: column '{c}': a control character "
                                f"in the name {col.iat[i]!r}")
    if "policy" in df.columns:
        ok = df["policy"].astype(str).str.match(POLICY_NAME).to_numpy()
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise AnalysisError(EX_DATAERR, f"{where(i)}: column 'policy': "
                                f"{str(df['policy'].iat[i])!r} is not a policy name (letters, "
                                "digits, _ . + -)")
    for c, (lo, hi) in FINITE_RANGES.items():
        if c not in df.columns or df[c].dtype == object:
            continue
        v = df[c].to_numpy(dtype=float)
        bad = ~(np.isfinite(v) & (v >= lo) & (v <= hi))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            rng = f"[{fmt_num(lo)}, {fmt_num(hi)}]" if math.isfinite(hi) else f">= {fmt_num(lo)}"
            raise AnalysisError(EX_DATAERR, f"{where(i)}: column '{c}': {v[i]!r} is not a "
                                f"finite number {rng}")


# --------------------------------------------------------- derived columns

def _params(s: str) -> dict[str, str]:
    """'k=8,unit=cpu' -> {'k': '8', 'unit': 'cpu'}; list values keep their
    separators ('widths=1,1,3' -> '1,1,3', 'widths=1/1/3' -> '1/1/3': the
    labels flashspec writes separate list items with '/')."""
    out: dict[str, str] = {}
    key = None
    for part in str(s).split(","):
        if "=" in part:
            key, v = part.split("=", 1)
            out[key] = v
        elif key is not None:
            out[key] += "," + part
    return out


def list_items(v: str | None) -> list[str]:
    """The items of a list parameter value, '/'- or ','-separated:
    '1/1/3' and '1,1,3' -> ['1', '1', '3']."""
    if v is None:
        return []
    return [x.strip() for x in re.split(r"[/,]", str(v)) if x.strip()]


def _cell_text(v) -> str | None:
    """A param_<name> cell as the label writes the value: whole numbers
    without '.0'; None for an absent value (NaN, empty)."""
    if v is None:
        return None
    if isinstance(v, str):
        return v if v != "" else None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(f):
        return None
    return str(int(f)) if f == int(f) and abs(f) < 1e15 else repr(f)


def point_params(params, row=None) -> dict[str, str]:
    """A point's policy parameters: its policy_params label parsed (a str,
    or an already parsed dict), completed by the param_<name> columns of
    `row` (a pandas Series or a dict) for every name the label lacks."""
    p = dict(params) if isinstance(params, dict) else \
        (_params(params) if params is not None and str(params) not in ("", "none") else {})
    if row is not None:
        keys = row.index if hasattr(row, "index") and not isinstance(row, dict) else row.keys()
        for c in keys:
            if isinstance(c, str) and c.startswith(PARAM_PREFIX):
                name = c[len(PARAM_PREFIX):]
                if name and name not in p:
                    t = _cell_text(row[c])
                    if t is not None:
                        p[name] = t
    return p


def _int(v: str | None) -> float:
    """An integer parameter value ('8', or '8.0' from a param_ column) as a
    float; NaN when absent or not a whole number."""
    if v is None:
        return math.nan
    try:
        return float(int(v))
    except ValueError:
        try:
            f = float(v)
        except ValueError:
            return math.nan
        return f if math.isfinite(f) and f == int(f) else math.nan


def _as_params(params) -> dict[str, str]:
    return params if isinstance(params, dict) else point_params(params)


def tree_nodes_of(policy: str, params) -> float:
    """Nodes of the verified tree, root included -- the rows of one
    verification -- when the policy fixes it: flash_ar 1; chain k + 1; eagle2
    total_tokens + 1; specinfer 1 + the nodes of its widths (1 + w1 + w1 w2 +
    ..., the widths '/'- or ','-separated).  NaN for policies whose tree size
    is decided per cycle (adaptive_chain, opt_tree, sequoia, lever, ...).
    `params` is the policy_params label or a dict (point_params)."""
    p = _as_params(params)
    if policy == "flash_ar":
        return 1.0
    if policy == "chain":
        return _int(p.get("k")) + 1
    if policy == "eagle2":
        return _int(p.get("total_tokens")) + 1
    if policy == "specinfer" and "widths" in p:
        total, level = 1, 1
        try:
            for w in list_items(p["widths"]):
                level *= int(w)
                total += level
        except ValueError:
            return math.nan
        return float(total)
    return math.nan


def tree_cap_of(policy: str, params) -> float:
    """The node cap (root included) of a policy that sizes its trees per
    cycle, as flashspec counts it (sim/lua/api_objects.c fs_tree_cap): lever
    n_max + 1, lyanna b + 1, sequoia max_nodes, opt_tree nodes + 1, edgellm
    with fallback max_tokens + 1, adaptive_chain k_max + 1, bld max_len + 1;
    NaN otherwise."""
    p = _as_params(params)
    if policy == "lever":
        return _int(p.get("n_max")) + 1
    if policy == "lyanna":
        return _int(p.get("b")) + 1
    if policy == "sequoia":
        return _int(p.get("max_nodes"))
    if policy == "opt_tree":
        return _int(p.get("nodes")) + 1
    if policy == "edgellm" and p.get("fallback") == "true":
        return _int(p.get("max_tokens")) + 1
    if policy == "adaptive_chain":
        return _int(p.get("k_max")) + 1
    if policy == "bld":
        return _int(p.get("max_len")) + 1
    return math.nan


def tree_budget_of(policy: str, params) -> float:
    """The tree size a policy is configured with, in nodes including the root
    (the rows of one verification): tree_nodes_of for the fixed trees, else
    the cap tree_cap_of; NaN when unknown."""
    n = tree_nodes_of(policy, params)
    return n if not math.isnan(n) else tree_cap_of(policy, params)


def tree_rows_are_nodes(policy: str, params) -> bool:
    """Whether one verification sends one row per tree node, so that the
    result column verify_rows_max never exceeds the tree budget: true but for
    edgellm with verify=branches (its default), which sends each branch as a
    sequence of its own and repeats the shared prefixes."""
    p = _as_params(params)
    return not (policy == "edgellm" and p.get("verify", "branches") != "tree")


def is_tuned(row) -> bool:
    """Whether a result row was chosen by flashspec.tune (tune_evals > 0)."""
    try:
        return float(row.get("tune_evals", 0) or 0) > 0
    except (TypeError, ValueError):
        return False


def variants(df: pd.DataFrame, digits: int | None = None,
             parsed: list[dict[str, str]] | None = None) -> list[str]:
    """Policy names of the rows: a built-in policy with, in brackets, the
    parameters that differ from its defaults (policies.canonical:
    'lever[pruning=none]', 'edgellm' for EdgeLLM as shipped), values exact
    (digits None) or at `digits` significant digits; a policy the defaults do
    not know with the parameters that differ among its points.  A tuned row
    (tune_evals > 0) adds ' tuned (max OBJECTIVE)'.  Each distinct setting is
    named once (a large results file repeats a few settings many times)."""
    if "policy_params" not in df.columns:
        return [str(p) for p in df["policy"]]
    parsed = params_per_row(df) if parsed is None else parsed
    pols = [str(p) for p in df["policy"]]
    # the parameters that differ among the points of each unknown policy
    by_pol: dict[str, dict[str, set]] = {}
    for pol, p in zip(pols, parsed):
        if not _policies.known(pol):
            seen = by_pol.setdefault(pol, {})
            for k, v in p.items():
                seen.setdefault(k, set()).add(v)
    tuned = [False] * len(df)
    if "tune_evals" in df.columns:
        ev = pd.to_numeric(df["tune_evals"], errors="coerce").fillna(0).to_numpy()
        tuned = list(ev > 0)
    objective = list(df["tune_objective"]) if "tune_objective" in df.columns else \
        [None] * len(df)
    out, memo = [], {}
    for pol, p, t, obj in zip(pols, parsed, tuned, objective):
        key = (pol, tuple(p.items()), bool(t), str(obj) if t else "")
        name = memo.get(key)
        if name is None:
            name = _policies.canonical(pol, p, digits)
            if name is None:
                keys = [k for k in p if len(by_pol.get(pol, {}).get(k, ())) > 1]
                name = f"{pol}[{','.join(f'{k}={_policies.fmt_value(p[k], digits)}' for k in keys)}]" \
                    if keys else pol
            if t:
                name += " " + _policies.tuned_name("", obj).strip()
            memo[key] = name
        out.append(name)
    return out


def params_per_row(df: pd.DataFrame) -> list[dict[str, str]]:
    """point_params of every row: policy_params (when the results have it)
    completed by the param_<name> columns; each distinct setting parsed once
    (the rows that share it share the dict: do not change it)."""
    pcols = [c for c in df.columns if isinstance(c, str) and c.startswith(PARAM_PREFIX)]
    if not len(df):
        return []
    keycols = (["policy_params"] if "policy_params" in df.columns else []) + pcols
    if not keycols:
        return [{} for _ in range(len(df))]
    keys = df[keycols].astype(str)
    codes = keys.groupby(keycols, sort=False, dropna=False).ngroup().to_numpy() \
        if len(keycols) > 1 else pd.factorize(keys[keycols[0]], sort=False)[0]
    first: dict[int, int] = {}
    for i, k in enumerate(codes):
        first.setdefault(int(k), i)
    labels = df["policy_params"] if "policy_params" in df.columns else None
    parsed = {}
    for k, i in first.items():
        row = {c: df[c].iat[i] for c in pcols}
        parsed[k] = point_params(labels.iat[i] if labels is not None else None, row)
    return [parsed[int(k)] for k in codes]


def add_derived(df: pd.DataFrame) -> pd.DataFrame:
    """Adds tree_nodes, tree_budget and variant (see above) when absent."""
    df = df.copy()
    params = params_per_row(df)
    if "variant" not in df.columns:
        df["variant"] = variants(df, parsed=params)
    if "tree_nodes" not in df.columns or "tree_budget" not in df.columns:
        memo: dict = {}
        budget = [memo[(p, id(q))] if (p, id(q)) in memo else
                  memo.setdefault((p, id(q)), tree_budget_of(p, q))
                  for p, q in zip(df["policy"], params)]
        # results before flashspec wrote the column: the same values (the tree
        # size the point was run with, fixed or cap)
        if "tree_nodes" not in df.columns:
            df["tree_nodes"] = budget
        if "tree_budget" not in df.columns:
            df["tree_budget"] = budget
    return df


def reference_tree_nodes(df: pd.DataFrame) -> list[float]:
    """The reference key `tree_nodes` of every row: the nodes of a *fixed*
    tree (tree_nodes_of: Flash-AR 1, chain k + 1, eagle2 total_tokens + 1,
    specinfer), NaN for a policy that sizes its trees per cycle under a cap --
    a paper's "16-node tree" is a tree of 16 nodes, not a cap of 16.  As
    flashspec calibrate's reader (sim/fit/refcsv.c) derives it, whatever the
    results' own tree_nodes column says."""
    return [tree_nodes_of(p, q) for p, q in zip(df["policy"], params_per_row(df))]


DERIVED_COLUMNS = {"tree_nodes", "tree_budget", "variant"}


class MetricSyntaxError(ValueError):
    """A metric expression that does not parse: `what` is the problem in the
    words of sim/fit/refcsv.c ("missing ')'", "unexpected end", ...) and `pos`
    the 0-based offset in the expression where it was found."""

    def __init__(self, what: str, pos: int | None = None) -> None:
        super().__init__(what if pos is None else f"{what} at character {pos + 1}")
        self.what, self.pos = what, pos


# The C reader's limits (sim/fit/refcsv.h): ops of one compiled metric, and the
# bytes of a column name it looks up (fs_ref_op.col is char[48]).
METRIC_MAX_OPS = 64
METRIC_MAX_DEPTH = 16
_COL_CAP = 47

# Numbers as C's strtod reads them in the "C" locale (ASCII only): decimal with
# an optional exponent, or hexadecimal ("0x1.8p3") with an optional binary
# exponent; an exponent without digits is not part of the number.
_DEC = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_HEX = r"0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
_NUM_PREFIX = re.compile(f"(?:{_HEX})|(?:{_DEC})")
_NUM_FULL = re.compile(rf"[+-]?(?:(?:{_HEX})|(?:{_DEC})|inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)",
                       re.IGNORECASE)
C_SPACE = " \t\n\v\f\r"  # isspace() in the "C" locale
_DIGITS = "0123456789"
_ALPHA = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"


def _to_double(text: str) -> float:
    """A number text matched by _DEC / _HEX (an optional sign first) as strtod
    converts it: correctly rounded, overflow to +-inf."""
    body = text.lstrip("+-")
    try:
        x = float.fromhex(body) if body[:2] in ("0x", "0X") else float(body)
    except OverflowError:
        x = math.inf
    return -x if text.startswith("-") else x


def c_number(text: str) -> float | None:
    """The whole of `text` (surrounding "C" whitespace allowed) read as C's
    strtod reads a number, or None when strtod would not consume all of it --
    what the C reference reader accepts for `value` and numeric key cells.
    Unlike float(): no '_' separators, no non-ASCII digits, hexadecimal
    allowed.  May return inf or nan ("inf", "nan", overflow)."""
    t = text.strip(C_SPACE)
    if not _NUM_FULL.fullmatch(t):
        return None
    body = t.lstrip("+-").lower()
    if body.startswith(("inf", "nan")):
        x = math.inf if body.startswith("inf") else math.nan
        return -x if t.startswith("-") else x
    return _to_double(t)


class _MetricParser:
    """Recursive descent over the text, compiling to reverse Polish notation
    exactly as refcsv.c does: the same emitted ops (unary minus is 0 - x), the
    same limits, and the first problem found wins while parsing goes on."""

    def __init__(self, text: str, numeric: set[str]) -> None:
        self.s, self.i, self.numeric = text, 0, numeric
        self.ops: list[tuple[str, object]] = []
        self.bad: str | None = None
        self.bad_at = 0
        self.col = ""

    def ch(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def fail(self, what: str) -> None:
        if self.bad is None:
            self.bad, self.bad_at = what, self.i

    def emit(self, kind: str, arg: object = None) -> None:
        if len(self.ops) >= METRIC_MAX_OPS:
            self.fail("expression too long")
            return
        self.ops.append((kind, arg))

    def skip(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in C_SPACE:
            self.i += 1

    def factor(self, depth: int) -> None:
        self.skip()
        if depth > METRIC_MAX_DEPTH:
            self.fail("expression nested too deeply")
            return
        c = self.ch()
        if c == "(":
            self.i += 1
            self.expr(depth + 1)
            self.skip()
            if self.ch() != ")":
                self.fail("missing ')'")
                return
            self.i += 1
            return
        if c == "-":  # unary minus: 0 - factor
            self.i += 1
            self.emit("n", 0.0)
            self.factor(depth + 1)
            self.emit("-")
            return
        if c and c in _DIGITS + ".":
            m = _NUM_PREFIX.match(self.s, self.i)
            x = _to_double(m.group()) if m else math.nan
            if not m or not math.isfinite(x):
                self.fail("bad number")  # strtod consumed nothing, or +-inf
                return
            self.i = m.end()
            self.emit("n", x)
            return
        if c and c in _ALPHA:
            j = self.i
            while j < len(self.s) and (self.s[j] in _ALPHA or self.s[j] in _DIGITS):
                j += 1
            name = self.s[self.i:j][:_COL_CAP]
            if name not in self.numeric:
                if self.bad is None:
                    self.bad, self.bad_at, self.col = "unknown", self.i, name
            else:
                self.emit("c", name)
            self.i = j
            return
        self.fail("unexpected character" if c else "unexpected end")

    def term(self, depth: int) -> None:
        self.factor(depth)
        while True:
            self.skip()
            c = self.ch()
            if c not in ("*", "/") or not c:
                return
            self.i += 1
            self.factor(depth)
            self.emit(c)

    def expr(self, depth: int) -> None:
        self.term(depth)
        while True:
            self.skip()
            c = self.ch()
            if c not in ("+", "-") or not c:
                return
            self.i += 1
            self.term(depth)
            self.emit(c)


def numeric_columns(df: pd.DataFrame) -> set[str]:
    """The columns a metric may name: the numeric result columns (the derived
    tree_nodes / tree_budget are keys only, as in the C reader)."""
    return {c for c in df.columns
            if df[c].dtype != object and c not in DERIVED_COLUMNS and isinstance(c, str)}


def compile_metric(metric: str, numeric: set[str]) -> list[tuple[str, object]]:
    """The metric in reverse Polish notation: ('n', number), ('c', column) and
    ('+' | '-' | '*' | '/', None).  Raises KeyError(column) for a name that is
    not in `numeric` and MetricSyntaxError for a malformed expression."""
    if not metric.strip(C_SPACE):
        raise MetricSyntaxError("empty expression")
    p = _MetricParser(metric, numeric)
    p.expr(0)
    p.skip()
    if p.bad is None and p.i < len(p.s):
        p.fail("unexpected character")
    if p.bad == "unknown":
        raise KeyError(p.col)
    if p.bad is not None:
        what = p.bad
        if what == "unexpected character":
            what += f" {metric[p.bad_at]!r}"
        raise MetricSyntaxError(what, p.bad_at)
    return p.ops


def eval_metric(ops: list[tuple[str, object]], df: pd.DataFrame) -> pd.Series:
    """A compiled metric over every row of df at once (float64, IEEE semantics:
    a division by zero gives inf or nan, which the caller reports)."""
    stack: list[object] = []
    with np.errstate(all="ignore"):
        for kind, arg in ops:
            if kind == "n":
                stack.append(np.float64(arg))
            elif kind == "c":
                stack.append(df[arg].to_numpy(dtype=np.float64))
            else:
                b, a = stack.pop(), stack.pop()
                stack.append(a + b if kind == "+" else a - b if kind == "-"
                             else a * b if kind == "*" else a / b)
        (v,) = stack
        out = np.broadcast_to(np.asarray(v, dtype=np.float64), (len(df),)).copy()
    return pd.Series(out, index=df.index, dtype=float)


def metric_values(df: pd.DataFrame, metric: str) -> pd.Series:
    """A metric over result columns, one value per row of df (a Series): an
    arithmetic expression with + - * /, parentheses, unary minus, numbers and
    numeric result columns ('ms_per_token', 'npu_ms+cpu_ms',
    'verify_ms-flash_ms', 'waste_ms/(verify_ms-flash_ms)', '1000/ms_per_token')
    in the grammar of sim/fit/refcsv.c, which this mirrors step by step:
        expr = term {(+|-) term}; term = factor {(*|/) factor};
        factor = number | column | ( expr ) | - factor
    (numbers as C's strtod reads them, hexadecimal included; columns
    [A-Za-z_][A-Za-z0-9_]*; at most 16 levels of nesting and 64 compiled
    ops).  Raises KeyError(column) for an unknown or non-numeric column and
    MetricSyntaxError for a malformed expression.  The text is never eval'd."""
    return eval_metric(compile_metric(metric, numeric_columns(df)), df)


# ------------------------------------------------------------------ labels

def varying(df: pd.DataFrame, cols: Iterable[str]) -> list[str]:
    """The columns among cols that take more than one value in df."""
    out = []
    for c in cols:
        if c in df.columns and df[c].astype(str).nunique() > 1:
            out.append(c)
    return out


def label_columns(df: pd.DataFrame, exclude: Iterable[str] = ()) -> list[str]:
    """The columns naming a point among others: the varying parameters, with
    policy + policy_params shown as `variant`, and `draft` left out when the
    variant already decides it (Flash-AR has none)."""
    exclude = set(exclude)
    cols = [c for c in varying(df, PARAM_COLUMNS) if c not in exclude]
    if "policy" in cols or "policy_params" in cols:
        first = min(cols.index(c) for c in ("policy", "policy_params") if c in cols)
        cols = [c for c in cols if c not in ("policy", "policy_params")]
        if "variant" not in exclude and "policy" not in exclude:
            cols.insert(first, "variant")
    if "draft" in cols and "variant" in df.columns and \
            df.groupby("variant")["draft"].nunique().max() <= 1:
        cols.remove("draft")
    return cols


def groups(df: pd.DataFrame, cols: list[str]) -> list[tuple[object, pd.DataFrame]]:
    """(key, sub-frame) per combination of cols, in order of appearance."""
    if not cols:
        return [((), df)]
    return list(df.groupby(cols if len(cols) > 1 else cols[0], sort=False))


def label_of(row: pd.Series, cols: list[str]) -> str:
    parts = []
    for c in cols:
        v = row[c]
        if c == "policy_params":
            parts.append(f"{v}" if v else "(defaults)")
        elif c in ("policy", "variant", "target", "device", "trace", "draft", "accept",
                   "runtime"):
            parts.append(str(v))
        else:
            parts.append(f"{c}={fmt_num(v)}")
    return " ".join(parts) if parts else "all"


def fmt_num(v) -> str:
    if isinstance(v, str):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(f):
        return "—"
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    if abs(f) >= 100:
        return f"{f:.1f}"
    if abs(f) >= 1:
        return f"{f:.3f}"
    return f"{f:.4g}"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def md_escape(text) -> str:
    """Text from the results (a name, a label) as markdown shows it and
    nothing more: control characters (a newline would end a table row) as one
    space, '<' and '>' as entities (no HTML: '<script>' stays text), '|'
    escaped (no cell break), '](' escaped (no link)."""
    s = _CONTROL.sub(" ", str(text))
    return s.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|") \
        .replace("](", "]\\(")


def md_code(text) -> str:
    """Text for a `code span`: control characters as one space, backticks as
    quotes (a code span shows '<' and '|' as they are; a table's '|' is
    escaped by md_table)."""
    return _CONTROL.sub(" ", str(text)).replace("`", "'")


def md_table(header: list[str], rows: list[list]) -> str:
    def cell(v) -> str:
        return md_escape(fmt_num(v) if not isinstance(v, str) else v)

    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(cell(v) for v in r) + " |")
    return "\n".join(out) + "\n"


# When a list, fig_bytes appends every figure it renders to it and leaves them
# open (see capture_figures), so that a test can inspect the Figure objects;
# with _RENDER false it lays them out without making the PNG.
_CAPTURED: list | None = None
_RENDER = True


class capture_figures:
    """`with fsresults.capture_figures() as figs:` collects the matplotlib
    Figures that fig_bytes renders inside the block, in order, instead of
    closing them; they are closed when the block ends.  With render=False,
    fig_bytes places the notes and returns no bytes: the figures are laid out
    when first inspected (figstyle.figure_problems draws them), and no PNG is
    made (a test that inspects the Figure objects only)."""

    def __init__(self, render: bool = True) -> None:
        self.render = render

    def __enter__(self) -> list:
        global _CAPTURED, _RENDER
        self.figs: list = []
        _CAPTURED = self.figs
        _RENDER = self.render
        return self.figs

    def __exit__(self, *exc) -> None:
        global _CAPTURED, _RENDER
        import matplotlib.pyplot as plt

        _CAPTURED = None
        _RENDER = True
        for f in self.figs:
            plt.close(f)


def fig_bytes(fig, keep: bool = False) -> bytes:
    """The figure as PNG bytes (110 dpi, cut to its content); closed after
    unless `keep` (the caller checks it, then closes it) or captured."""
    import matplotlib.pyplot as plt

    b = io.BytesIO()
    before = getattr(fig, "_fs_before_save", None)
    if before is not None:
        before()  # figstyle.before_save: clipped values marked, notes below everything
    if _CAPTURED is not None and not _RENDER:
        _CAPTURED.append(fig)
        return b""
    # one layout pass without rasterising, the content's box from it, then one
    # rasterising draw into that box (savefig's bbox_inches="tight" draws the
    # whole figure twice); the layout is kept as computed
    fig.draw_without_rendering()
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.1)
    if fig.get_layout_engine() is not None:
        fig.set_layout_engine("none")
    fig.savefig(b, format="png", dpi=110, bbox_inches=box, metadata={"Software": None},
                pil_kwargs={"compress_level": 3})
    fig._fs_drawn = True  # laid out and drawn (figstyle.figure_problems)
    if _CAPTURED is not None:
        _CAPTURED.append(fig)
    elif not keep:
        plt.close(fig)
    return b.getvalue()


# ------------------------------------------------------------------ output

def write_outputs(out_dir: str, files: dict[str, bytes], stale: Iterable[str] = ()) -> None:
    """Writes every file of `files` into out_dir (created if needed), each to a
    temporary file renamed into place; removes our own `stale` names that this
    run did not produce.  On failure removes what it wrote and raises
    AnalysisError(73)."""
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise AnalysisError(EX_CANTCREAT, f"cannot create output directory '{out_dir}': "
                            f"{e.strerror}") from None
    temps: list[str] = []
    done: list[str] = []
    try:
        for name, data in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=out_dir)
            temps.append(tmp)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o644)
        for name, tmp in zip(files, temps):
            os.replace(tmp, os.path.join(out_dir, name))
            done.append(name)
        for name in stale:
            p = os.path.join(out_dir, name)
            if name not in files and os.path.exists(p):
                os.remove(p)
    except OSError as e:
        for t in temps:
            if os.path.exists(t):
                os.remove(t)
        for name in done:
            try:
                os.remove(os.path.join(out_dir, name))
            except OSError:
                pass
        raise AnalysisError(EX_CANTCREAT, f"cannot write output '{out_dir}': "
                            f"{e.strerror or e}") from None


def safe_name(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s)
