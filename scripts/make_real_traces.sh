#!/bin/sh
# Trains the tiny real draft/target pair and records the three real traces.
#
#   scripts/make_real_traces.sh              # train (~8 min on 2 idle cores), then record
#   scripts/make_real_traces.sh --record-only  # reuse traces/models/, record only
#
# Outputs: traces/models/{tokenizer.json,target.pt,draft.pt,predictor.pt,
# prompts-*.jsonl} and traces/data/real-{code,prose,math}.h5.  Needs Debian's
# python3-torch and python3-h5py; run from anywhere.  Deterministic: the same
# machine and packages give the same files.
set -eu
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
M=traces/models

if [ "${1:-}" != "--record-only" ]; then
    "$PY" scripts/train_tiny_pair.py --out "$M" --seed 1 --threads 2
fi

for domain in code prose math; do
    "$PY" -m traces.recorder \
        --target "$M/target.pt" --draft "$M/draft.pt" --tokenizer "$M/tokenizer.json" \
        --predictor "$M/predictor.pt" --exit-layers 2,3 \
        --prompts "$M/prompts-$domain.jsonl" \
        --output-len 64 --k 8 --depth 8 --nodes 32 \
        -o "traces/data/real-$domain.h5"
done
