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

# HumanEval, the fourth workload (not in Table 5), and the other targets:
# transferred from the fitted presets above through public acceptance-length
# ratios (traces/data/acceptance-sources.csv) by scripts/transfer_acceptance.py,
# which prints these lines (WORKLOADS.md, "Other targets and HumanEval").
gen humaneval strong 0.910584,0.323378,0.133255,0.057917,0.025731,0.011541,0.005198,0.002346 0.964234 1401 qwen3-8b-eagle3-q4_0
#          target    layers exit vocab task accept (depths 1..8)  coverage seed
gen_target llama3.1-8b 32 16 128256 code 0.995803,0.917590,0.781743,0.588860,0.380916,0.213845,0.108524,0.051934 0.998321 3102
gen_target llama3.1-8b 32 16 128256 math 0.984427,0.850448,0.653628,0.432284,0.247126,0.126882,0.061101,0.028457 0.993771 3201
gen_target llama3.1-8b 32 16 128256 dialogue 0.969866,0.829773,0.628813,0.409429,0.231062,0.117660,0.056406,0.026212 0.987946 3301
gen_target llama3.1-8b 32 16 128256 humaneval 0.994026,0.886479,0.715263,0.501120,0.301445,0.160208,0.078659,0.037000 0.997610 3401
gen_target qwen3-4b 36 18 151936 code 0.848609,0.208277,0.078021,0.032732,0.014329,0.006386,0.002868,0.001293 0.939444 4102
gen_target qwen3-4b 36 18 151936 math 0.708641,0.179518,0.067691,0.028463,0.012472,0.005560,0.002498,0.001126 0.883456 4201
gen_target qwen3-4b 36 18 151936 dialogue 0.611833,0.192716,0.076608,0.032837,0.014503,0.006488,0.002919,0.001316 0.844733 4301
gen_target qwen3-4b 36 18 151936 humaneval 0.776364,0.140098,0.049800,0.020527,0.008923,0.003964,0.001778,0.000801 0.910546 4401
gen_target qwen3-14b 40 20 151936 code 0.930462,0.385737,0.168057,0.074740,0.033538,0.015109,0.006819,0.003080 0.972185 5102
gen_target qwen3-14b 40 20 151936 math 0.864449,0.364551,0.159929,0.071337,0.032053,0.014449,0.006522,0.002946 0.945780 5201
gen_target qwen3-14b 40 20 151936 dialogue 0.701366,0.262374,0.110018,0.048153,0.021457,0.009637,0.004343,0.001960 0.880546 5301
gen_target qwen3-14b 40 20 151936 humaneval 0.895285,0.286351,0.114319,0.049081,0.021692,0.009707,0.004368,0.001970 0.958114 5401
