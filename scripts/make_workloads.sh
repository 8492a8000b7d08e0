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
gen humaneval strong 0.847869,0.383217,0.173205,0.078285,0.035383,0.015992,0.007228,0.003267 0.939148 1401 qwen3-8b-eagle3-q4_0
#          target    layers exit vocab task accept (depths 1..8)  coverage seed
gen_target llama3.1-8b 32 16 128256 code 0.940294,0.813776,0.704281,0.609519,0.527507,0.456530,0.395103,0.341942 0.976118 3102
gen_target llama3.1-8b 32 16 128256 math 0.880143,0.747602,0.635021,0.539393,0.458166,0.389170,0.330565,0.280785 0.952057 3201
gen_target llama3.1-8b 32 16 128256 dialogue 0.783586,0.715648,0.653601,0.596933,0.545178,0.497911,0.454741,0.415315 0.913434 3301
gen_target llama3.1-8b 32 16 128256 humaneval 0.847869,0.762360,0.685475,0.616344,0.554184,0.498294,0.448040,0.402855 0.939148 3401
gen_target qwen3-4b 36 18 151936 code 0.872289,0.261687,0.078506,0.023552,0.007066,0.002120,0.000636,0.000191 0.948916 4102
gen_target qwen3-4b 36 18 151936 math 0.765556,0.229667,0.068900,0.020670,0.006201,0.001860,0.000558,0.000167 0.906222 4201
gen_target qwen3-4b 36 18 151936 dialogue 0.689438,0.206832,0.062049,0.018615,0.005584,0.001675,0.000503,0.000151 0.875775 4301
gen_target qwen3-4b 36 18 151936 humaneval 0.776035,0.232810,0.069843,0.020953,0.006286,0.001886,0.000566,0.000170 0.910414 4401
gen_target qwen3-14b 40 20 151936 code 0.940294,0.388791,0.160756,0.066469,0.027484,0.011364,0.004699,0.001943 0.976118 5102
gen_target qwen3-14b 40 20 151936 math 0.880143,0.362075,0.148951,0.061276,0.025208,0.010370,0.004266,0.001755 0.952057 5201
gen_target qwen3-14b 40 20 151936 dialogue 0.771284,0.231385,0.069416,0.020825,0.006247,0.001874,0.000562,0.000169 0.908514 5301
gen_target qwen3-14b 40 20 151936 humaneval 0.847869,0.346734,0.141796,0.057987,0.023714,0.009698,0.003966,0.001622 0.939148 5401
# The bracket of the Llama-3.1-8B presets, whose ratio crosses sources: task W-lo
# and W-hi, written to workload-W-lo-strong-llama3.1-8b.h5 and
# workload-W-hi-strong-llama3.1-8b.h5 (WORKLOADS.md, "How sure this is").
gen_target llama3.1-8b 32 16 128256 code-lo 0.940294,0.559228,0.332594,0.197806,0.117643,0.069967,0.041612,0.024748 0.976118 3102
gen_target llama3.1-8b 32 16 128256 code-hi 0.940294,0.914812,0.890021,0.865902,0.842436,0.819606,0.797395,0.775786 0.976118 3102
gen_target llama3.1-8b 32 16 128256 math-lo 0.880143,0.470399,0.251409,0.134367,0.071814,0.038381,0.020513,0.010963 0.952057 3201
gen_target llama3.1-8b 32 16 128256 math-hi 0.880143,0.856439,0.833374,0.810929,0.789090,0.767838,0.747159,0.727036 0.952057 3201
gen_target llama3.1-8b 32 16 128256 dialogue-lo 0.783586,0.364441,0.169499,0.078833,0.036665,0.017053,0.007931,0.003689 0.913434 3301
gen_target llama3.1-8b 32 16 128256 dialogue-hi 0.783586,0.814716,0.847082,0.880734,0.915723,0.952102,0.989927,0.990000 0.913434 3301
gen_target llama3.1-8b 32 16 128256 humaneval-lo 0.847869,0.517731,0.316141,0.193044,0.117878,0.071979,0.043952,0.026839 0.939148 3401
gen_target llama3.1-8b 32 16 128256 humaneval-hi 0.847869,0.852134,0.856421,0.860729,0.865059,0.869411,0.873784,0.878180 0.939148 3401
