#!/bin/sh
# Regenerates the bundled synthetic traces of traces/data (see README.md there).
# usage: traces/data/make.sh [FLASHSPEC]   (run from the project root)
# FLASHSPEC defaults to build/sim/cli/flashspec; any program that provides the
# `trace synth` command works, e.g. BUILD/tests/traces/trc_tool.
# The generator is deterministic: the files come out byte-identical.
set -eu
bin=${1:-build/sim/cli/flashspec}
here=$(cd "$(dirname "$0")" && pwd)

# The generator's defaults (4 prompts x 128 tokens, K 8, D 8, exit layer 18 of 36),
# trees capped at 16 nodes instead of 32 so the bundled data stay small.
"$bin" trace synth -o "$here/synth-default.h5" --nodes 16

# 2 prompts x 32 tokens, small trees: the fixture of the fast tests and the source
# of the bad-input corpora (tests/data/bad/make_bad.py).
"$bin" trace synth -o "$here/synth-small.h5" --prompts 2 --prompt-len 16 --output-len 32 \
    --vocab 32000 --k 4 --depth 4 --nodes 12 --exit-layers 12,24
