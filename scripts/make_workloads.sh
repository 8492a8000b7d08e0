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

# Acceptance: fitted by flashspec calibrate to Lever Table 5 (with Tables 1 and
# 2; configs/calibration/README.md): a depth-1 rate a per workload falling by a
# factor r per depth level, one r per draft (EAGLE-3 0.507991, Qwen3-0.6B
# 0.728639), written out per depth as a r^(d-1) to 6 digits; coverage =
# a + 0.6 (1 - a) (WORKLOADS.md "Coverage").  Seeds as the earlier presets.
#   task     draft  accept (depths 1..8)  coverage seed  draft profile
gen code     strong 0.908634,0.461578,0.234477,0.119112,0.060508,0.030738,0.015614,0.007932 0.963454 1102 qwen3-8b-eagle3-q4_0
gen math     strong 0.871124,0.442523,0.224798,0.114195,0.058010,0.029469,0.014970,0.007605 0.948450 1201 qwen3-8b-eagle3-q4_0
gen dialogue strong 0.791234,0.401940,0.204182,0.103723,0.052690,0.026766,0.013597,0.006907 0.916494 1301 qwen3-8b-eagle3-q4_0
gen code     weak   0.496352,0.361661,0.263521,0.192011,0.139907,0.101942,0.074279,0.054122 0.798541 2102 qwen3-0.6b-q4_0
gen math     weak   0.461793,0.336480,0.245173,0.178642,0.130166,0.094844,0.069107,0.050354 0.784717 2202 qwen3-0.6b-q4_0
gen dialogue weak   0.392414,0.285928,0.208338,0.151803,0.110610,0.080595,0.058724,0.042789 0.756966 2302 qwen3-0.6b-q4_0
