#!/usr/bin/python3
"""Tests of the trace recorder (traces/recorder) against the flashspec binary.

usage: test_recorder.py FLASHSPEC_BIN CASE      (CASE: record_replay, bad_input)

record_replay: two tiny randomly initialised TinyGPT models (a 3-layer target,
a 1-layer narrower draft) are saved, a trace is recorded from them through the
command line, and then
  * `flashspec trace check` accepts it and `trace stats` reads it;
  * an independent greedy decode with the target (its own forward, no
    recorder code) equals the trace's reference, read back with h5py;
  * recording again gives the same bytes (determinism);
  * a greedy Flash-AR, Chain-SD and Lever replay (`flashspec run`) succeeds
    (the replay exits 70 if any emitted token differs from the reference).

bad_input: missing prompts file, malformed prompts, bad K/D/M, missing model,
unwritable output: each exits with its documented code, one line on stderr
naming the file or option, and no output file.
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)

import h5py  # noqa: E402
import torch  # noqa: E402

from traces.recorder import setup_torch  # noqa: E402
from traces.recorder.model import GPTConfig, TinyGPT  # noqa: E402

PY = "/usr/bin/python3"
VOCAB = 64


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def recorder(*args):
    p = subprocess.run([PY, "-m", "traces.recorder", *args], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def make_pair(d):
    """Two random tiny models with weights scaled up so they are not near-uniform."""
    setup_torch(1)
    models = []
    for seed, (name, width, layers) in enumerate([("rand-target", 32, 3), ("rand-draft", 16, 1)]):
        torch.manual_seed(100 + seed)
        m = TinyGPT(GPTConfig(vocab=VOCAB, d_model=width, n_layer=layers, n_head=2, max_pos=64,
                              name=name))
        with torch.no_grad():
            for p in m.parameters():
                if p.dim() == 2:
                    p.mul_(12.0)
        m.round_weights()
        path = os.path.join(d, name + ".pt")
        m.save(path)
        models.append(path)
    prompts = os.path.join(d, "prompts.jsonl")
    with open(prompts, "w") as f:
        f.write(json.dumps({"tokens": [1, 2, 3, 4, 5]}) + "\n")
        f.write(json.dumps({"tokens": [7]}) + "\n\n")
        f.write(json.dumps({"tokens": [9, 30, 41]}) + "\n")
    return models[0], models[1], prompts


def greedy(target_path, prompt, n):
    """Independent greedy decode: TinyGPT's own causal forward in float64."""
    m = TinyGPT.load(target_path).double()
    seq = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            logits = m(torch.tensor([seq])).logits[0, -1]
            seq.append(int(torch.argmax(logits)))
    return seq[len(prompt):]


LUA = """
local fs = flashspec
local tr = fs.trace "%s"
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr, max_new_tokens = %d,
               dram_fraction = 0.0, seed = 1 }
local function point(pol)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  t.policy = pol
  return fs.run(t)
end
for _, pol in ipairs { fs.policy.flash_ar {}, fs.policy.chain { k = 4 }, fs.policy.lever {} } do
  local r = point(pol)
  assert(r.token_mismatch == 0, r.policy .. " emitted a token off the reference")
  assert(r.tokens == %d, r.policy .. ": tokens " .. r.tokens)
  print(string.format("%%-9s %%8.3f tok/s  accepted %%.3f", r.policy, r.tokens_per_s,
                      r.mean_accepted))
end
"""


def case_record_replay(binary):
    L = 12
    with tempfile.TemporaryDirectory() as d:
        tgt, drf, prompts = make_pair(d)
        out = os.path.join(d, "rec.h5")
        args = ["--target", tgt, "--draft", drf, "--prompts", prompts, "--output-len", str(L),
                "--k", "4", "--depth", "4", "--nodes", "12", "--exit-layers", "1,2"]
        rc, so, se = recorder(*args, "-o", out)
        expect(rc == 0, f"recorder failed ({rc}): {se}")
        expect(os.listdir(d).count("rec.h5") == 1 and not [f for f in os.listdir(d) if "tmp" in f],
               f"unexpected files {os.listdir(d)}")
        p = subprocess.run([binary, "trace", "check", out], capture_output=True, text=True)
        expect(p.returncode == 0 and ": ok (3 prompts, 36 trees" in p.stdout,
               f"trace check: {p.returncode} {p.stdout} {p.stderr}")
        p = subprocess.run([binary, "trace", "stats", out], capture_output=True, text=True)
        expect(p.returncode == 0 and p.stdout.startswith("depth\t"), f"trace stats: {p.stderr}")

        with h5py.File(out, "r") as f:
            poff, ptok = f["prompts/offset"][:], f["prompts/tokens"][:]
            roff, rtok = f["reference/offset"][:], f["reference/tokens"][:]
            expect(f.attrs["format"] == b"flashspec-trace", "format attribute")
            expect(list(f.attrs["exit_layers"]) == [1, 2] and int(f.attrs["target_layers"]) == 3,
                   "exit layers / target layers")
            for pi in range(len(poff) - 1):
                prompt = [int(x) for x in ptok[poff[pi]:poff[pi + 1]]]
                want = greedy(tgt, prompt, L)
                got = [int(x) for x in rtok[roff[pi]:roff[pi + 1]]]
                expect(got == want, f"prompt {pi}: trace reference {got} != greedy {want}")
            dl = f["nodes/draft_logp"][:]
            expect(dl.max() < 0 and len(set(rtok.tolist())) > 3,
                   "degenerate random models: reference repeats one token")

        again = os.path.join(d, "again.h5")
        rc, _, se = recorder(*args, "-o", again)
        expect(rc == 0, se)
        with open(out, "rb") as a, open(again, "rb") as b:
            expect(a.read() == b.read(), "recording twice gave different bytes")

        script = os.path.join(d, "replay.lua")
        with open(script, "w") as f:
            f.write(LUA % (out, L, 3 * L))
        p = subprocess.run([binary, "run", script, "-o", os.path.join(d, "res")],
                           capture_output=True, text=True, timeout=120)
        expect(p.returncode == 0, f"replay exited {p.returncode}: {p.stderr.strip()}")
        print(p.stdout, end="")
    print("record_replay ok")


def one_line(rc, so, se, code, *needles):
    lines = [l for l in se.splitlines() if l.strip()]
    expect(rc == code, f"exit {rc}, wanted {code}: {se!r}")
    expect(len(lines) == 1 and lines[0].startswith("recorder: "), f"not one error line: {lines!r}")
    for n in needles:
        expect(n in lines[0], f"{lines[0]!r} lacks {n!r}")


def in_process(*args):
    """The recorder's main() in this process (torch is imported once): (rc, out, err)."""
    from traces.recorder.cli import main as rec_main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = rec_main(list(args))
    return rc, out.getvalue(), err.getvalue()


def case_bad_input(binary):
    del binary
    with tempfile.TemporaryDirectory() as d:
        tgt, drf, prompts = make_pair(d)
        out = os.path.join(d, "bad.h5")
        base = ["--target", tgt, "--draft", drf, "--output-len", "4", "-o", out]
        missing = os.path.join(d, "nope.jsonl")
        # the real entry point once, then the rest in-process
        one_line(*recorder(*base, "--prompts", missing), 66, missing)
        one_line(*recorder(*base, "--prompts", prompts, "--k", "0"), 64, "--k", "\"0\"")

        def rec(*extra, prompts_file=prompts):
            return in_process(*base, "--prompts", prompts_file, *extra)

        one_line(*rec(prompts_file=missing), 66, missing)
        one_line(*rec("--k", "0"), 64, "--k", "\"0\"")
        one_line(*rec("--k", "x"), 64, "--k")
        one_line(*rec("--k", "65"), 64, "--k")
        one_line(*rec("--depth", "0"), 64, "--depth")
        one_line(*rec("--depth", "8", "--nodes", "8"), 64, "--nodes (8)", "--depth + 1")
        one_line(*rec("--nodes", "-3"), 64, "--nodes")
        one_line(*rec("--exit-layers", "2,1"), 64, "--exit-layers")
        one_line(*rec("--exit-layers", "3"), 64, "--exit-layers")
        one_line(*rec("--bogus"), 64, "--bogus")
        one_line(*in_process(*base), 64, "--prompts")
        one_line(*rec("--output-len", "60"), 64, prompts, "positions")

        bad = os.path.join(d, "bad.jsonl")
        for content, needle, code in [
            ('{"tokens": [1, 2]}\n{"tokens": [1, 99]}\n', ":2: token id 99", 65),
            ('{"tokens": [1, 2]}\nnot json\n', ":2: not valid JSON", 65),
            ('{"tokens": []}\n', ":1: empty prompt", 65),
            ('"text prompt"\n', ":1: a text prompt needs --tokenizer", 64),
            ("\n\n", "no prompts", 65),
        ]:
            with open(bad, "w") as f:
                f.write(content)
            one_line(*rec(prompts_file=bad), code, bad + needle if needle.startswith(":") else needle)

        one_line(*in_process("--target", os.path.join(d, "none.pt"), "--draft", drf,
                             "--prompts", prompts, "-o", out), 66, "none.pt")
        with open(bad, "w") as f:
            f.write("garbage")
        one_line(*in_process("--target", bad, "--draft", drf, "--prompts", prompts, "-o", out),
                 65, bad, "not a TinyGPT checkpoint")
        nodir = os.path.join(d, "no", "dir", "x.h5")
        one_line(*in_process(*base[:-1], nodir, "--prompts", prompts), 73, nodir)
        expect(not os.path.exists(out), "an output file was left behind")
        expect(not [f for f in os.listdir(d) if "tmp" in f], "temporary files left behind")
    print("bad_input ok")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, case = sys.argv[1], sys.argv[2]
    {"record_replay": case_record_replay, "bad_input": case_bad_input}[case](binary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
