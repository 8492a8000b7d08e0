#!/usr/bin/python3
"""The budget check of bench/cycle_costs without valgrind: the committed
budget reads and names every policy on both device kinds; a count exactly 5%
over its budget passes and one just above fails, likewise under (a note, not a
failure); a count without a budget line fails; a malformed line exits 2 with
its file and line number."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_cycle_costs as cc  # noqa: E402

FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def main():
    budget = cc.read_budget(cc.BUDGET)
    want = {(p, m) for p in cc.POLICIES for m in cc.MODELS}
    check(set(budget) == want, f"the committed budget covers every policy and device kind: "
          f"missing {sorted(want - set(budget))}")

    b = {("chain", "one"): 1000}
    fails, notes = cc.check_budget({("chain", "one"): 1050}, b)
    check(not fails and not notes, f"exactly 5% over passes: {fails} {notes}")
    fails, notes = cc.check_budget({("chain", "one"): 1050.5}, b)
    check(len(fails) == 1 and "5.0% over its budget of 1000" in fails[0], f"above 5% fails: {fails}")
    fails, notes = cc.check_budget({("chain", "one"): 950}, b)
    check(not fails and not notes, f"exactly 5% under is quiet: {fails} {notes}")
    fails, notes = cc.check_budget({("chain", "one"): 949.5}, b)
    check(not fails and len(notes) == 1 and "lower the budget" in notes[0],
          f"more than 5% under is a note: {fails} {notes}")
    fails, _ = cc.check_budget({("chain", "band"): 10}, b)
    check(len(fails) == 1 and "no budget line" in fails[0], f"a count without a line fails: {fails}")

    with tempfile.TemporaryDirectory() as tmp:
        def bad(text, msg):
            path = os.path.join(tmp, "b.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            r = subprocess.run([sys.executable, "-c",
                                f"import sys; sys.path.insert(0, {HERE!r}); import bench_cycle_costs "
                                f"as cc; cc.read_budget({path!r})"],
                               capture_output=True, text=True, timeout=60)
            check(r.returncode == 2 and f"{path}:2: {msg}" in r.stderr,
                  f"{text!r}: exit {r.returncode}, {r.stderr.strip()}")
        good = "# comment\n"
        bad(good + "chain one 7100\n", "want POLICY MODELS INSTRUCTIONS REASON")
        bad(good + "chian one 7100 a reason\n", "no policy 'chian'")
        bad(good + "chain two 7100 a reason\n", "models 'two' is neither band nor one")
        bad(good + "chain one 7.1k a reason\n", "instructions '7.1k' is not a positive integer")
        bad(good + "chain one 0 a reason\n", "instructions '0' is not a positive integer")
        bad("chain one 7100 a reason\nchain one 7200 again\n", "a second line for chain one")
        path = os.path.join(tmp, "ok.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("# c\n\nchain one 7100 the reason, with spaces\n")
        check(cc.read_budget(path) == {("chain", "one"): 7100}, "a good line reads")
    if FAILED:
        return 1
    print("cycle_budget: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
