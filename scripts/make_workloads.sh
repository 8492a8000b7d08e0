#!/bin/sh
# Regenerates the bundled workload traces traces/data/workload-<task>-<draft>.h5:
# three workloads (code generation, math reasoning, open dialogue) x two drafts
# (strong = EAGLE-3 class feature-level draft, weak = separate small model of the
# target's family), target Qwen3-8B (36 layers, vocab 151936, early-exit layer 18).
# Sources of every number and the arithmetic: traces/data/WORKLOADS.md.
#
# usage: scripts/make_workloads.sh [FLASHSPEC [OUTDIR]]   (run from the project root)
# FLASHSPEC defaults to build/sim/cli/flashspec (any program with `trace synth`
# works); OUTDIR defaults to traces/data.  The generator is deterministic (fixed
# seeds below): the files come out byte-identical on every run.
set -eu
bin=${1:-build/sim/cli/flashspec}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$here/traces/data}
mkdir -p "$out"

# Shape shared by all six (about 1.5 MB each): 16 prompts x 128 reference tokens
# (Lever's 128-token output cap), K 4 candidates per node, depth 8 (an 8-token
# chain, Chain-SD's length), recorded trees capped at 12 nodes; nodes a policy
# asks for beyond them are synthesised by the replay and counted in coverage.
# Calibration 0.7 and predictor accuracy 0.85 are the generator defaults.  The
# same shape is what configs/calibration/oneplus12.lua fits the acceptance with;
# --node-streams gives every node its own random stream, so the files are the
# very traces the fit evaluated (the acceptance below is written in full).
shape="--prompts 16 --prompt-len 64 --output-len 128 --vocab 151936 --k 4 --depth 8 \
--nodes 12 --target-layers 36 --exit-layers 18 --calibration 0.7 --predictor-accuracy 0.85 \
--target qwen3-8b-q4_0 --node-streams"

# gen TASK DRAFT ACCEPT COVERAGE SEED DRAFT_PROFILE
gen() {
    # shellcheck disable=SC2086  # $shape is a list of options
    "$bin" trace synth -o "$out/workload-$1-$2.h5" $shape --accept "$3" --coverage "$4" \
        --seed "$5" --draft "$6" >/dev/null
}

# Acceptance: fitted by flashspec calibrate to Lever Table 5 (with Tables 1, 2
# and the Table 6 curve; configs/calibration/README.md): a depth-1 rate a per
# workload falling by a factor r per depth level, one r per draft (EAGLE-3
# 0.451977, Qwen3-0.6B 0.913147), written out per depth as a r^(d-1) to 6 digits;
# coverage =
# a + 0.6 (1 - a) (WORKLOADS.md "Coverage").  Seeds as the earlier presets.
#   task     draft  accept (depths 1..8)  coverage seed  draft profile
gen code     strong 0.940294,0.424991,0.192086,0.086819,0.039240,0.017736,0.008016,0.003623 0.976118 1102 qwen3-8b-eagle3-q4_0
gen math     strong 0.880143,0.397804,0.179798,0.081265,0.036730,0.016601,0.007503,0.003391 0.952057 1201 qwen3-8b-eagle3-q4_0
gen dialogue strong 0.783586,0.354163,0.160073,0.072350,0.032700,0.014780,0.006680,0.003019 0.913434 1301 qwen3-8b-eagle3-q4_0
gen code     weak   0.438447,0.400367,0.365594,0.333841,0.304846,0.278369,0.254192,0.232114 0.775379 2102 qwen3-0.6b-q4_0
gen math     weak   0.393631,0.359443,0.328224,0.299717,0.273686,0.249915,0.228209,0.208389 0.757452 2202 qwen3-0.6b-q4_0
gen dialogue weak   0.355641,0.324753,0.296547,0.270791,0.247272,0.225796,0.206184,0.188277 0.742256 2302 qwen3-0.6b-q4_0
