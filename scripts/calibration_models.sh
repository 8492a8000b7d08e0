#!/usr/bin/env bash
# scripts/calibration_models.sh [OUTDIR [MODEL ...]] -- the model comparison behind the
# OnePlus 12 profile (configs/calibration/README.md "Model selection"): fits
# configs/calibration/oneplus12.lua under each candidate mechanism
# and prints one line per model (parameters, RMS relative error, leave-one-out
# RMS, AIC, BIC, and the RMS of a held-out table's predictions), best AIC
# first (a held-out fit's AIC counts its fitted rows only: compare those lines
# by their held-out RMS).  About 1-3 min per model on 2 cores.
#
# The models are fitted CALIBRATION_MODELS_JOBS at a time (default: one per
# CPU), each on the CPUs left to it (-j; a fit is the same at any -j): on two
# CPUs two models at -j 1, which keeps both busy where one fit at -j 2 leaves
# them idle between its evaluations.
#
# FLASHSPEC_BIN (default build/sim/cli/flashspec) names the binary; OUTDIR
# (default results/calibration-models) receives one directory per model with
# its report.  Each MODEL after it, "LABEL|KEY=VALUE ...", is compared too
# (e.g. "smallest shape 4|min_rows=4").
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${FLASHSPEC_BIN:-$root/build/sim/cli/flashspec}
out=${1:-$root/results/calibration-models}
shift || true
spec=$root/configs/calibration/oneplus12.lua
mkdir -p "$out" || exit 73

# label | spec arguments
models=(
  "set-up per tree graph, one-row pays, head resident, pow2 from 1 (shipped)|"
  "the same, a constant per verification (variant const)|setup=const"
  "the same, constant + per tree graph|setup=const+graph"
  "the same, smallest multi-row graph 8 (variant min8)|min_rows=8"
  "the same, every row count compiled (variant all)|shapes=all"
  "the same, set-up per GB of the target|setup=weights"
  "the same, + per streamed layer|setup=const+layer"
  "the same, tree verifications read ahead|overlap=1"
  "the same, reads during drafting|draft_reads=1"
  "the same, a KV snapshot per verification|snapshot=1"
  "the same, thermal throttling|thermal=1"
  "one-row verification free|one_row=0"
  "set-up per streamed GB|setup=streamed"
  "set-up per leaf instead|overhead=leaf"
  "acceptance constant with depth|decay=0"
  "shipped, Table 6 held out|holdout=table6"
  "shipped, Table 5 held out|holdout=table5"
  "min8, Table 6 held out|min_rows=8 holdout=table6"
  "$@"
)
cpus=$(nproc 2>/dev/null || echo 2)
njobs=${CALIBRATION_MODELS_JOBS:-$cpus}
[[ $njobs =~ ^[1-9][0-9]*$ ]] || { echo "calibration_models: CALIBRATION_MODELS_JOBS must be a positive integer" >&2; exit 64; }
per=$(( cpus / njobs > 0 ? cpus / njobs : 1 ))
dir_of() { printf '%s/%s' "$out" "$(printf '%s' "${1%%|*}" | tr -c 'A-Za-z0-9' '_')"; }
for m in "${models[@]}"; do
  args=()
  for a in ${m#*|}; do args+=(--arg "$a"); done
  dir=$(dir_of "$m")
  while (( $(jobs -rp | wc -l) >= njobs )); do wait -n; done
  { "$bin" calibrate "$spec" -j "$per" -q -o "$dir" "${args[@]}" >"$dir.txt" 2>&1
    echo $? >"$dir.rc"; } &
done
wait
lines=()
for m in "${models[@]}"; do
  label=${m%%|*}
  dir=$(dir_of "$m")
  rc=$(cat "$dir.rc" 2>/dev/null || echo 1)
  rm -f "$dir.rc"
  if [ "$rc" != 0 ]; then
    echo "calibration_models: '$label' failed (see $dir.txt)" >&2
    continue
  fi
  first=$(grep -m 1 ", RMS .*leave-one-out" "$dir.txt")  # past any warning line
  rms=$(sed -n 's/.*RMS \([0-9.]*\)%.*/\1/p' <<<"$first")
  loo=$(sed -n 's/.*leave-one-out \([0-9.na]*\)%.*/\1/p' <<<"$first")
  aic=$(sed -n 's/.*AIC \([-0-9.]*\).*/\1/p' <<<"$first")
  bic=$(sed -n 's/.*BIC \([-0-9.]*\).*/\1/p' <<<"$first")
  np=$(grep -c '^  [a-z_]* *[-0-9.e+]* +/-' "$dir.txt")
  held=$(sed -n 's/^held out: .*RMS \([0-9.]*\)%.*/\1/p' "$dir.txt")
  lines+=("$(printf '%-60s %3s %7s%% %7s%% %8s %8s %8s' "$label" "$np" "$rms" "$loo" "$aic" "$bic" "${held:--}")")
done
printf '%-60s %3s %8s %8s %8s %8s %8s\n' "model" "p" "RMS" "LOO RMS" "AIC" "BIC" "held-out"
printf '%s\n' "${lines[@]}" | awk '{print $(NF-2) "\t" $0}' | sort -g | cut -f2-
