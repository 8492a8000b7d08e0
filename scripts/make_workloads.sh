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
# the same without the target's shape (gen_target gives its own)
common="--prompts 16 --prompt-len 64 --output-len 128 --k 4 --depth 8 --nodes 12 \
--calibration 0.7 --predictor-accuracy 0.85 --node-streams"

# gen TASK DRAFT ACCEPT COVERAGE SEED DRAFT_PROFILE
gen() {
    # shellcheck disable=SC2086  # $shape is a list of options
    "$bin" trace synth -o "$out/workload-$1-$2.h5" $shape --accept "$3" --coverage "$4" \
        --seed "$5" --draft "$6" >/dev/null
}

# Other targets (strong draft): the target's own layers, early-exit layer and
# vocabulary, its EAGLE-3 draft, written to workload-TASK-strong-TARGET.h5.
# gen_target TARGET LAYERS EXIT VOCAB TASK ACCEPT COVERAGE SEED
gen_target() {
    # shellcheck disable=SC2086  # $common is a list of options
    "$bin" trace synth -o "$out/workload-$5-strong-$1.h5" $common --target-layers "$2" \
        --exit-layers "$3" --vocab "$4" --target "$1-q4_0" --draft "$1-eagle3-q4_0" \
        --accept "$6" --coverage "$7" --seed "$8" >/dev/null
}

# Acceptance: fitted by flashspec calibrate to Lever Table 5 (with Tables 1, 2
# and the Table 6 curve; configs/calibration/README.md): a depth-1 rate a per
# workload falling by a factor r per depth level, one r per draft (EAGLE-3
# 0.504926, Qwen3-0.6B 0.488772), written out per depth as a r^(d-1) to 6 digits;
# coverage =
# a + 0.6 (1 - a) (WORKLOADS.md "Coverage").  Seeds as the earlier presets.
#   task     draft  accept (depths 1..8)  coverage seed  draft profile
gen code     strong 0.925665,0.467392,0.235999,0.119162,0.060168,0.030380,0.015340,0.007745 0.970266 1102 qwen3-8b-eagle3-q4_0
gen math     strong 0.874461,0.441538,0.222944,0.112570,0.056840,0.028700,0.014491,0.007317 0.949784 1201 qwen3-8b-eagle3-q4_0
gen dialogue strong 0.803568,0.405742,0.204870,0.103444,0.052232,0.026373,0.013316,0.006724 0.921427 1301 qwen3-8b-eagle3-q4_0
gen code     weak   0.524067,0.256149,0.125199,0.061194,0.029910,0.014619,0.007145,0.003492 0.809627 2102 qwen3-0.6b-q4_0
gen math     weak   0.468402,0.228942,0.111900,0.054694,0.026733,0.013066,0.006386,0.003121 0.787361 2202 qwen3-0.6b-q4_0
gen dialogue weak   0.409735,0.200267,0.097885,0.047843,0.023385,0.011430,0.005587,0.002731 0.763894 2302 qwen3-0.6b-q4_0

# HumanEval, the fourth workload (not in Table 5), and the other targets:
# transferred from the fitted presets above through public acceptance-length
# ratios (traces/data/acceptance-sources.csv) by scripts/transfer_acceptance.py,
# which prints these lines (WORKLOADS.md, "Other targets and HumanEval").
gen humaneval strong 0.901306,0.391566,0.184695,0.090257,0.044844,0.022461,0.011296,0.005692 0.960522 1401 qwen3-8b-eagle3-q4_0
#          target    layers exit vocab task accept (depths 1..8)  coverage seed
gen_target llama3.1-8b 32 16 128256 code 0.993480,0.914810,0.790793,0.623414,0.439275,0.277146,0.160114,0.087187 0.997392 3102
gen_target llama3.1-8b 32 16 128256 math 0.980950,0.853903,0.679588,0.483934,0.308205,0.179275,0.098043,0.051674 0.992380 3201
gen_target llama3.1-8b 32 16 128256 dialogue 0.970226,0.844691,0.672391,0.478917,0.305071,0.177476,0.097068,0.051165 0.988090 3301
gen_target llama3.1-8b 32 16 128256 humaneval 0.991487,0.891392,0.742867,0.558549,0.374512,0.226623,0.127175,0.068039 0.996595 3401
gen_target qwen3-4b 36 18 151936 code 0.835419,0.263468,0.111834,0.052263,0.025433,0.012611,0.006310,0.003172 0.934168 4102
gen_target qwen3-4b 36 18 151936 math 0.716305,0.222751,0.094202,0.043959,0.021378,0.010597,0.005302,0.002665 0.886522 4201
gen_target qwen3-4b 36 18 151936 dialogue 0.648188,0.235186,0.103978,0.049398,0.024220,0.012053,0.006041,0.003040 0.859275 4301
gen_target qwen3-4b 36 18 151936 humaneval 0.783862,0.203552,0.082537,0.037906,0.018304,0.009042,0.004517,0.002268 0.913545 4401
gen_target qwen3-14b 40 20 151936 code 0.915099,0.431680,0.210964,0.104821,0.052504,0.026403,0.013305,0.006711 0.966040 5102
gen_target qwen3-14b 40 20 151936 math 0.859581,0.409968,0.201368,0.100297,0.050299,0.025310,0.012757,0.006436 0.943832 5201
gen_target qwen3-14b 40 20 151936 dialogue 0.729972,0.310912,0.145493,0.070844,0.035139,0.017585,0.008839,0.004454 0.891989 5301
gen_target qwen3-14b 40 20 151936 humaneval 0.887120,0.356428,0.163143,0.078662,0.038834,0.019390,0.009736,0.004902 0.954848 5401
