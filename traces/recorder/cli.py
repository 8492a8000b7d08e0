"""`python3 -m traces.recorder`: record a schema-v1 trace from a model pair.

    /usr/bin/python3 -m traces.recorder --target T.pt --draft D.pt \\
        --tokenizer TOK.json --prompts PROMPTS.jsonl --output-len 64 \\
        --k 8 --depth 8 --nodes 32 --exit-layers 2,3 [--predictor P.pt] \\
        -o traces/data/NAME.h5

Models: TinyGPT checkpoints (model.py) by default, or any pair through
``--loader MODULE:FUNCTION`` (adapter.py describes the protocol).

Prompts file: JSON lines, one prompt per line, each either a JSON string (text,
encoded with the tokenizer), ``{"text": "..."}`` or ``{"tokens": [ids...]}``;
blank lines are skipped.  Every prompt needs at least one token.

Errors: one line on stderr, ``recorder: ...`` naming the file and the place;
exit codes 64 usage (bad option or value), 65 bad input data (prompts file or
model files malformed), 66 missing input file, 70 internal error, 73 cannot
create the output.  No output file is left behind on failure.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import List, Optional

from . import (EX_DATAERR, EX_NOINPUT, EX_SOFTWARE, EX_USAGE, RECORDER_VERSION, RecorderError,
               setup_torch)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 64
        raise RecorderError(EX_USAGE, f"{message} (see --help)")


def _int_in(name: str, lo: int, hi: int):
    def parse(s: str) -> int:
        try:
            v = int(s, 10)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise RecorderError(EX_USAGE, f"{name} must be an integer in [{lo}, {hi}] "
                                          f"(got \"{s}\")")
        return v
    return parse


def _layers(s: str) -> List[int]:
    if s.strip() == "":
        return []
    out = []
    for part in s.split(","):
        try:
            out.append(int(part, 10))
        except ValueError:
            raise RecorderError(EX_USAGE, f"--exit-layers: \"{part}\" is not an integer "
                                          f"(got \"{s}\")") from None
    return out


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python3 -m traces.recorder",
                 description="Record a flashspec schema-v1 trace (traces/README.md) from a "
                             "draft/target model pair.",
                 epilog="exit codes: 0 ok, 64 usage, 65 bad input data, 66 missing input, "
                        "70 internal error, 73 cannot create output")
    ap.add_argument("--target", help="target model (TinyGPT checkpoint, or passed to --loader)")
    ap.add_argument("--draft", help="draft model (TinyGPT checkpoint, or passed to --loader)")
    ap.add_argument("--tokenizer", help="tokenizer JSON (tokenizer.py); needed for text prompts")
    ap.add_argument("--loader", help="MODULE:FUNCTION returning (target, draft, tokenizer) "
                                     "adapters from (target, draft) paths")
    ap.add_argument("--prompts", required=True, help="prompts file (JSON lines)")
    ap.add_argument("--output-len", type=_int_in("--output-len", 1, 1 << 20), default=64,
                    help="reference tokens per prompt L (64)")
    ap.add_argument("--k", type=_int_in("--k", 1, 64), default=8,
                    help="candidates per node K (8)")
    ap.add_argument("--depth", type=_int_in("--depth", 1, 64), default=8,
                    help="tree depth limit D (8)")
    ap.add_argument("--nodes", type=_int_in("--nodes", 2, 65536), default=32,
                    help="node limit M per tree, root included, >= D+1 (32)")
    ap.add_argument("--exit-layers", type=_layers, default=None,
                    help="early-exit layers, comma-separated, ascending in [1, target layers) "
                         "(default: the predictor's, else half the target's depth; \"\" none)")
    ap.add_argument("--predictor", help="trained early-exit predictor (predictor.py); "
                                        "default: logit-lens scores")
    ap.add_argument("--max-prompts", type=_int_in("--max-prompts", 1, 1 << 30), default=None,
                    help="record only the first N prompts")
    ap.add_argument("--threads", type=_int_in("--threads", 1, 256), default=1,
                    help="torch CPU threads (1: tiny models are bound by per-op overhead, and extra threads spin on a shared machine)")
    ap.add_argument("-o", "--output", required=True, help="output trace (.h5), written atomically")
    return ap


def read_prompts(path: str, tokenizer, vocab: int, limit: Optional[int]) -> List[List[int]]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise RecorderError(EX_NOINPUT, f"{path}: no such prompts file") from None
    except IsADirectoryError:
        raise RecorderError(EX_NOINPUT, f"{path}: is a directory, not a prompts file") from None
    except UnicodeDecodeError:
        raise RecorderError(EX_DATAERR, f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise RecorderError(EX_NOINPUT, f"{path}: cannot read ({e.strerror})") from None
    prompts: List[List[int]] = []
    for ln, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{ln}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise RecorderError(EX_DATAERR, f"{where}: not valid JSON ({e.msg})") from None
        if isinstance(item, dict) and "tokens" in item:
            toks = item["tokens"]
            if not isinstance(toks, list) or not all(type(x) is int for x in toks):
                raise RecorderError(EX_DATAERR, f"{where}: \"tokens\" must be a list of integers")
            bad = [x for x in toks if not 0 <= x < vocab]
            if bad:
                raise RecorderError(EX_DATAERR, f"{where}: token id {bad[0]} outside the "
                                                f"vocabulary [0, {vocab})")
        else:
            text = item.get("text") if isinstance(item, dict) else item
            if not isinstance(text, str):
                raise RecorderError(EX_DATAERR, f"{where}: expected a JSON string, {{\"text\": "
                                                "...} or {\"tokens\": [...]}")
            if tokenizer is None:
                raise RecorderError(EX_USAGE, f"{where}: a text prompt needs --tokenizer")
            toks = tokenizer.encode(text)
        if not toks:
            raise RecorderError(EX_DATAERR, f"{where}: empty prompt (at least one token needed)")
        prompts.append(toks)
        if limit is not None and len(prompts) == limit:
            break
    if not prompts:
        raise RecorderError(EX_DATAERR, f"{path}: no prompts")
    return prompts


def _need_file(path: Optional[str], what: str) -> str:
    if not path:
        raise RecorderError(EX_USAGE, f"{what} is required (see --help)")
    if not os.path.exists(path):
        raise RecorderError(EX_NOINPUT, f"{path}: no such file ({what})")
    if os.path.isdir(path):
        raise RecorderError(EX_NOINPUT, f"{path}: is a directory ({what})")
    return path


def load_pair(args):
    """(target, draft, tokenizer, tokenizer name) from the command line."""
    if args.loader:
        mod, _, fn = args.loader.partition(":")
        try:
            loader = getattr(importlib.import_module(mod), fn or "load_pair")
        except (ImportError, AttributeError) as e:
            raise RecorderError(EX_USAGE, f"--loader {args.loader}: {e}") from None
        target, draft, tok = loader(args.target, args.draft)
        return target, draft, tok, getattr(tok, "name", "custom")
    from .adapter import tinygpt_adapter
    from .model import TinyGPT
    from .tokenizer import BPETokenizer

    models = []
    for flag, path in (("--target", args.target), ("--draft", args.draft)):
        _need_file(path, flag)
        try:
            models.append(tinygpt_adapter(TinyGPT.load(path)))
        except Exception as e:  # noqa: BLE001 -- any unreadable checkpoint is bad data
            why = (str(e).splitlines() or [""])[0][:120]
            raise RecorderError(EX_DATAERR, f"{path}: not a TinyGPT checkpoint "
                                            f"({type(e).__name__}: {why})") from None
    tok = None
    if args.tokenizer:
        _need_file(args.tokenizer, "--tokenizer")
        try:
            tok = BPETokenizer.load(args.tokenizer)
        except (ValueError, KeyError, TypeError) as e:
            raise RecorderError(EX_DATAERR, f"{args.tokenizer}: not a tokenizer file ({e})") from None
        if tok.vocab_size != models[0].vocab:
            raise RecorderError(EX_DATAERR, f"{args.tokenizer}: {tok.vocab_size} tokens, the "
                                            f"target has a vocabulary of {models[0].vocab}")
    return models[0], models[1], tok, (tok.name if tok else "token-ids")


def run(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.nodes < args.depth + 1:
        raise RecorderError(EX_USAGE, f"--nodes ({args.nodes}) must be at least --depth + 1 "
                                      f"({args.depth + 1})")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise RecorderError(73, f"{args.output}: cannot create output (no directory {out_dir})")
    if not os.path.exists(args.prompts):
        raise RecorderError(EX_NOINPUT, f"{args.prompts}: no such prompts file")
    setup_torch(args.threads)
    from .h5write import write_trace
    from .predictor import ExitPredictor
    from .record import RecordParams, log_stderr, record

    target, draft, tok, tok_name = load_pair(args)
    if args.k > target.vocab:
        raise RecorderError(EX_USAGE, f"--k ({args.k}) exceeds the vocabulary ({target.vocab})")
    pred = None
    if args.predictor:
        _need_file(args.predictor, "--predictor")
        try:
            pred = ExitPredictor.load(args.predictor)
        except Exception as e:  # noqa: BLE001
            raise RecorderError(EX_DATAERR, f"{args.predictor}: not an exit-predictor file "
                                            f"({type(e).__name__})") from None
    layers = args.exit_layers
    if layers is None:
        layers = list(pred.exit_layers) if pred else [max(1, target.n_layers // 2)]
        layers = [x for x in layers if 1 <= x < target.n_layers]
    if len(layers) > 8:
        raise RecorderError(EX_USAGE, f"--exit-layers: at most 8 layers (got {len(layers)})")
    for i, x in enumerate(layers):
        if not 1 <= x < target.n_layers or (i and x <= layers[i - 1]):
            raise RecorderError(EX_USAGE, f"--exit-layers: must be ascending in [1, "
                                          f"{target.n_layers}) (got {','.join(map(str, layers))})")
        if pred and x not in pred.exit_layers:
            raise RecorderError(EX_USAGE, f"--exit-layers: layer {x} has no head in "
                                          f"{args.predictor}")
    if pred and (pred.vocab != target.vocab):
        raise RecorderError(EX_DATAERR, f"{args.predictor}: vocabulary {pred.vocab}, target "
                                        f"has {target.vocab}")
    prompts = read_prompts(args.prompts, tok, target.vocab, args.max_prompts)
    limit = min(m.max_positions or (1 << 62) for m in (target, draft))
    for i, pr in enumerate(prompts):
        need = len(pr) + args.output_len + args.depth
        if need > limit:
            raise RecorderError(EX_USAGE, f"{args.prompts}: prompt {i} has {len(pr)} tokens; with "
                                          f"--output-len {args.output_len} and --depth "
                                          f"{args.depth} it needs {need} positions, the models "
                                          f"have {limit}")
    params = RecordParams(args.output_len, args.k, args.depth, args.nodes, layers)
    attrs, data = record(target, draft, prompts, params, pred, progress=log_stderr)
    scorer = f"predictor {os.path.basename(args.predictor)}" if pred else "logit lens"
    attrs.update({
        "format": "flashspec-trace",
        "target": target.name, "draft": draft.name, "tokenizer": tok_name,
        "source": (f"flashspec-recorder {RECORDER_VERSION}: greedy reference L={args.output_len},"
                   f" best-first draft trees K={args.k} D={args.depth} M={args.nodes}, exit "
                   f"scores from {scorer}, prompts {os.path.basename(args.prompts)}"),
    })
    for key in ("target", "draft", "tokenizer"):
        if len(attrs[key].encode("utf-8")) > 63:
            raise RecorderError(EX_USAGE, f"{key} name \"{attrs[key]}\" is longer than 63 bytes")
    write_trace(args.output, attrs, data)
    print(f"{args.output}: wrote {len(prompts)} prompts, {len(data['reference/tokens'])} trees, "
          f"{len(data['nodes/parent'])} nodes")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    try:
        return run(argv)
    except RecorderError as e:
        print(f"recorder: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("recorder: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print("recorder: out of memory", file=sys.stderr)
        return EX_SOFTWARE
