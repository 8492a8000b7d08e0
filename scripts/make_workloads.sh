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
# factor r per depth level, one r per draft (EAGLE-3 0.464833, Qwen3-0.6B
# 0.577153), written out per depth as a r^(d-1) to 6 digits; coverage =
# a + 0.6 (1 - a) (WORKLOADS.md "Coverage").  Seeds as the earlier presets.
#   task     draft  accept (depths 1..8)  coverage seed  draft profile
gen code     strong 0.929013,0.431836,0.200732,0.093307,0.043372,0.020161,0.009371,0.004356 0.971605 1102 qwen3-8b-eagle3-q4_0
gen math     strong 0.884799,0.411284,0.191178,0.088866,0.041308,0.019201,0.008925,0.004149 0.953920 1201 qwen3-8b-eagle3-q4_0
gen dialogue strong 0.779179,0.362188,0.168357,0.078258,0.036377,0.016909,0.007860,0.003654 0.911672 1301 qwen3-8b-eagle3-q4_0
gen code     weak   0.519163,0.299636,0.172936,0.099811,0.057606,0.033247,0.019189,0.011075 0.807665 2102 qwen3-0.6b-q4_0
gen math     weak   0.472969,0.272975,0.157549,0.090930,0.052480,0.030289,0.017481,0.010089 0.789188 2202 qwen3-0.6b-q4_0
gen dialogue weak   0.416627,0.240458,0.138781,0.080098,0.046229,0.026681,0.015399,0.008888 0.766651 2302 qwen3-0.6b-q4_0
