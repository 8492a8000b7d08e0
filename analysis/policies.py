"""Canonical names of policy variants: a variant is named by the parameters in
which it differs from its policy's *defaults* (reference/policy_defaults.csv,
the build's `flashspec policies NAME` listing, kept equal by a test), never by
what is most common in a data set.  So `edgellm` is EdgeLLM as shipped in every
report, and `edgellm[fallback=false,provisional=false]` the same policy with
two techniques switched off, whichever of them a study happens to run most.

    canonical("lever", {"pruning": "none", "n_max": "64", ...})  -> "lever[pruning=none]"

Values: whole numbers as they are, other numbers at `digits` significant
digits (figures: 3; tables and CSV: exact, digits=None), lists item by item
('/'-separated as in the policy_params labels), text as it is.  Keys follow the
policy's declared order; keys the defaults do not know (a newer build, a Lua
or plug-in policy) always show.  A policy the table does not know returns
None: the caller names it by what differs among its own points.

A tuned point (tune_evals > 0) is named `POLICY tuned (max OBJECTIVE)`: its
knobs change from point to point, so they go beside each point, not into the
series' name.

Imports nothing beyond the standard library.
"""
from __future__ import annotations

import csv
import math
import os
import re

_DEFAULTS: dict[str, dict[str, str]] | None = None
DEFAULTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                             "policy_defaults.csv")


def defaults() -> dict[str, dict[str, str]]:
    """policy -> {key: default} in declared order (read once)."""
    global _DEFAULTS
    if _DEFAULTS is None:
        out: dict[str, dict[str, str]] = {}
        try:
            with open(DEFAULTS_FILE, newline="", encoding="utf-8") as f:
                rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
        except OSError:
            rows = []
        for r in rows[1:]:
            if len(r) != 3:
                continue
            pol, key, val = r
            out.setdefault(pol, {})
            if key:
                out[pol][key] = val
        _DEFAULTS = out
    return _DEFAULTS


def known(policy: str) -> bool:
    return str(policy) in defaults()


def _num(v: str) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _items(v: str) -> list[str]:
    return [x.strip() for x in re.split(r"[/,]", str(v)) if x.strip()]


def same_value(a: str, b: str) -> bool:
    """Whether two parameter values are the same setting: numbers equal to
    1e-6 relative (the listing prints defaults with %g), lists item by item,
    text exactly."""
    a, b = str(a).strip(), str(b).strip()
    if a == b:
        return True
    ia, ib = _items(a), _items(b)
    if len(ia) != len(ib) or not ia:
        return False
    for x, y in zip(ia, ib):
        nx, ny = _num(x), _num(y)
        if nx is None or ny is None:
            if x != y:
                return False
        elif abs(nx - ny) > 1e-6 * max(abs(nx), abs(ny), 1e-300):
            return False
    return True


def fmt_number(x: float, digits: int | None) -> str:
    """A number as a label shows it: whole numbers plainly, others at
    `digits` significant digits (None: the shortest text that reads back as
    x)."""
    if not math.isfinite(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    if digits is None:
        return repr(x)
    return f"{x:.{digits}g}"


def fmt_value(v: str, digits: int | None) -> str:
    """A parameter value (a number, a '/'-separated list, text) as a label
    shows it; brackets in it as parentheses (the name's brackets stay
    balanced)."""
    # a bracket inside a value (a hand-edited label) would end the name's own
    s = str(v).replace("[", "(").replace("]", ")")
    parts = s.split("/")
    out = []
    for p in parts:
        n = _num(p)
        out.append(fmt_number(n, digits) if n is not None and p.strip() else p)
    return "/".join(out)


def differing(policy: str, params: dict[str, str]) -> list[str] | None:
    """The keys of params that differ from the policy's defaults, in declared
    order (keys it does not know last, in their own order); None for a
    policy the defaults do not know."""
    d = defaults().get(str(policy))
    if d is None:
        return None
    keys = [k for k in d if k in params and not same_value(params[k], d[k])]
    keys += [k for k in params if k not in d]
    return keys


def canonical(policy: str, params: dict[str, str], digits: int | None = 3) -> str | None:
    """`policy[k=v,...]` with the keys that differ from the defaults (none:
    the bare policy name); None for a policy the defaults do not know."""
    keys = differing(policy, params)
    if keys is None:
        return None
    if not keys:
        return str(policy)
    return f"{policy}[{','.join(f'{k}={fmt_value(params[k], digits)}' for k in keys)}]"


def tuned_name(policy: str, objective: str | None) -> str:
    """The series name of a tuned point: `POLICY tuned (max OBJECTIVE)`."""
    obj = str(objective).strip() if objective is not None else ""
    if not obj or obj in ("nan", "none"):
        obj = "tokens_per_s"  # flashspec.tune's default objective
    return f"{policy} tuned (max {obj})"


_LABEL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(.*)\])?(?: tuned \(max [A-Za-z_0-9]+\))?$")


def label_problems(label: str) -> list[str]:
    """What is not canonical in a figure label that names a built-in policy
    variant ('lever[pruning=none]'): an unbalanced bracket, a key not in the
    policy's parameters, a key shown at its default value, a number with more
    than three significant digits.  [] for labels that name no known policy
    (a workload, a resource) and for canonical ones."""
    text = str(label).strip()
    head = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)", text)
    if not head or not known(head.group(1)):
        return []
    pol = head.group(1)
    rest = text[len(pol):]
    if rest and not (rest.startswith("[") or rest.startswith(" ")):
        return []  # another word ('lever_like'): not a policy label
    if rest.count("[") != rest.count("]"):
        return [f"'{text}': unbalanced brackets"]
    m = _LABEL.match(text.split(" · ")[0].split("\n")[0])
    if not m:
        return []
    probs = []
    d = defaults()[pol]
    inner = m.group(2)
    if inner:
        for part in re.split(r",(?=[A-Za-z_][A-Za-z0-9_]*=)", inner):
            if "=" not in part:
                probs.append(f"'{text}': '{part}' is no key=value")
                continue
            k, v = part.split("=", 1)
            if k not in d:
                probs.append(f"'{text}': {pol} has no parameter '{k}'")
                continue
            if same_value(v, d[k]):
                probs.append(f"'{text}': {k}={v} is {pol}'s default (a label names only what "
                             "differs from the defaults)")
            for item in v.split("/"):
                n = _num(item)
                if n is not None and n != int(n) and _significant(item) > 3:
                    probs.append(f"'{text}': {k}={v} has more than 3 significant digits")
                    break
    return probs


def _significant(text: str) -> int:
    """Significant digits of a number as written ('0.4172' -> 4, '1.5e-05' -> 2)."""
    mant = re.split(r"[eE]", text.strip().lstrip("+-"))[0].replace(".", "").lstrip("0")
    return len(mant.rstrip("0")) if mant else 1
