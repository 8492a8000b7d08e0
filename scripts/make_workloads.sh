#!/bin/sh
# Regenerates the bundled workload traces traces/data/workload-<task>-<draft>.h5:
# three workloads (code generation, math reasoning, open dialogue) x two drafts
# (strong = EAGLE-3 class feature-level draft, weak = separate small model of the
# target's family), target Qwen3-8B (36 layers, vocab 151936, early-exit layer 18);
# HumanEval and three more targets transferred from them; and EdgeLLM's model
# pairs, 13B targets with the 7B model of their family as the draft
# (workload-<task>-weak-<target>.h5).
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

# EdgeLLM's model pairs: a 13B target with the 7B model of its family as a separate
# draft (the weak class), the target's layers, early-exit layer and vocabulary,
# written to workload-TASK-weak-TARGET.h5.
# gen_pair TARGET DRAFT LAYERS EXIT VOCAB TASK ACCEPT COVERAGE SEED
gen_pair() {
    # shellcheck disable=SC2086  # $common is a list of options
    "$bin" trace synth -o "$out/workload-$6-weak-$1.h5" $common --target-layers "$3" \
        --exit-layers "$4" --vocab "$5" --target "$1-q4_0" --draft "$2-q4_0" \
        --accept "$7" --coverage "$8" --seed "$9" >/dev/null
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
gen humaneval strong 0.854973,0.431698,0.217975,0.110061,0.055573,0.028060,0.014168,0.007154 0.941989 1401 qwen3-8b-eagle3-q4_0
#          target    layers exit vocab task accept (depths 1..8)  coverage seed
gen_target llama3.1-8b 32 16 128256 code 0.925665,0.820712,0.727659,0.645157,0.572008,0.507154,0.449652,0.398670 0.970266 3102
gen_target llama3.1-8b 32 16 128256 math 0.874461,0.761167,0.662552,0.576713,0.501995,0.436957,0.380346,0.331069 0.949784 3201
gen_target llama3.1-8b 32 16 128256 dialogue 0.803568,0.739142,0.679881,0.625372,0.575233,0.529113,0.486692,0.447671 0.921427 3301
gen_target llama3.1-8b 32 16 128256 humaneval 0.854973,0.779133,0.710021,0.647039,0.589644,0.537340,0.489675,0.446239 0.941989 3401
gen_target qwen3-4b 36 18 151936 code 0.896781,0.269034,0.080710,0.024213,0.007264,0.002179,0.000654,0.000196 0.958712 4102
gen_target qwen3-4b 36 18 151936 math 0.793795,0.238138,0.071442,0.021432,0.006430,0.001929,0.000579,0.000174 0.917518 4201
gen_target qwen3-4b 36 18 151936 dialogue 0.738350,0.221505,0.066451,0.019935,0.005981,0.001794,0.000538,0.000161 0.895340 4301
gen_target qwen3-4b 36 18 151936 humaneval 0.817235,0.245170,0.073551,0.022065,0.006620,0.001986,0.000596,0.000179 0.926894 4401
gen_target qwen3-14b 40 20 151936 code 0.925665,0.433482,0.202997,0.095062,0.044517,0.020847,0.009762,0.004572 0.970266 5102
gen_target qwen3-14b 40 20 151936 math 0.874461,0.407994,0.190357,0.088814,0.041438,0.019333,0.009020,0.004209 0.949784 5201
gen_target qwen3-14b 40 20 151936 dialogue 0.803568,0.273741,0.093251,0.031767,0.010822,0.003686,0.001256,0.000428 0.921427 5301
gen_target qwen3-14b 40 20 151936 humaneval 0.854973,0.397441,0.184754,0.085884,0.039924,0.018559,0.008627,0.004010 0.941989 5401
# The bracket of the Llama-3.1-8B presets, whose ratio crosses sources: task W-lo
# and W-hi, written to workload-W-lo-strong-llama3.1-8b.h5 and
# workload-W-hi-strong-llama3.1-8b.h5 (WORKLOADS.md, "How sure this is").
gen_target llama3.1-8b 32 16 128256 code-lo 0.925665,0.591511,0.377982,0.241535,0.154344,0.098627,0.063024,0.040273 0.970266 3102
gen_target llama3.1-8b 32 16 128256 code-hi 0.925665,0.911856,0.898253,0.884852,0.871652,0.858648,0.845839,0.833221 0.970266 3102
gen_target llama3.1-8b 32 16 128256 math-lo 0.874461,0.509113,0.296406,0.172568,0.100470,0.058494,0.034055,0.019827 0.949784 3201
gen_target llama3.1-8b 32 16 128256 math-hi 0.874461,0.859760,0.845307,0.831096,0.817125,0.803388,0.789882,0.776604 0.949784 3201
gen_target llama3.1-8b 32 16 128256 dialogue-lo 0.803568,0.415375,0.214713,0.110988,0.057371,0.029656,0.015330,0.007924 0.921427 3301
gen_target llama3.1-8b 32 16 128256 dialogue-hi 0.803568,0.834065,0.865718,0.898574,0.932676,0.968072,0.990000,0.990000 0.921427 3301
gen_target llama3.1-8b 32 16 128256 humaneval-lo 0.854973,0.556438,0.362144,0.235693,0.153395,0.099833,0.064974,0.042287 0.941989 3401
gen_target llama3.1-8b 32 16 128256 humaneval-hi 0.854973,0.862701,0.870499,0.878367,0.886306,0.894317,0.902401,0.910557 0.941989 3401
# EdgeLLM's pairs (LLaMA-2-Chat-13B / 7B, Vicuna-13B / 7B): the pair's public
# per-token acceptance, constant over depth, and translation's low and high end
# around its nearest family, by scripts/transfer_acceptance.py (WORKLOADS.md,
# "EdgeLLM's model pairs").
#        target draft layers exit vocab task accept (depths 1..8) coverage seed
gen_pair llama2-13b-chat llama2-7b-chat 40 20 32000 cnndm 0.907000,0.907000,0.907000,0.907000,0.907000,0.907000,0.907000,0.907000 0.962800 6101
gen_pair llama2-13b-chat llama2-7b-chat 40 20 32000 squad 0.899000,0.899000,0.899000,0.899000,0.899000,0.899000,0.899000,0.899000 0.959600 6201
gen_pair llama2-13b-chat llama2-7b-chat 40 20 32000 truthfulqa 0.871000,0.871000,0.871000,0.871000,0.871000,0.871000,0.871000,0.871000 0.948400 6301
gen_pair llama2-13b-chat llama2-7b-chat 40 20 32000 translation-lo 0.763346,0.763346,0.763346,0.763346,0.763346,0.763346,0.763346,0.763346 0.905338 6401
gen_pair llama2-13b-chat llama2-7b-chat 40 20 32000 translation-hi 0.871000,0.871000,0.871000,0.871000,0.871000,0.871000,0.871000,0.871000 0.948400 6401
gen_pair vicuna-13b vicuna-7b 40 20 32000 cnndm 0.907000,0.907000,0.907000,0.907000,0.907000,0.907000,0.907000,0.907000 0.962800 7101
gen_pair vicuna-13b vicuna-7b 40 20 32000 squad 0.899000,0.899000,0.899000,0.899000,0.899000,0.899000,0.899000,0.899000 0.959600 7201
gen_pair vicuna-13b vicuna-7b 40 20 32000 truthfulqa 0.871000,0.871000,0.871000,0.871000,0.871000,0.871000,0.871000,0.871000 0.948400 7301
gen_pair vicuna-13b vicuna-7b 40 20 32000 translation-lo 0.763346,0.763346,0.763346,0.763346,0.763346,0.763346,0.763346,0.763346 0.905338 7401
gen_pair vicuna-13b vicuna-7b 40 20 32000 translation-hi 0.871000,0.871000,0.871000,0.871000,0.871000,0.871000,0.871000,0.871000 0.948400 7401
