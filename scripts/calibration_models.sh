#!/usr/bin/env bash
# scripts/calibration_models.sh [OUTDIR] -- the model comparison behind the
# OnePlus 12 profile (configs/calibration/README.md "Model selection"): fits
# configs/calibration/oneplus12.lua under each candidate reading and mechanism
# and prints one line per model (parameters, RMS relative error, leave-one-out
# RMS, AIC, BIC), best AIC first.  About 25 s per model on 2 cores.
#
# FLASHSPEC_BIN (default build/sim/cli/flashspec) names the binary; OUTDIR
# (default results/calibration-models) receives one directory per model with
# its report.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${FLASHSPEC_BIN:-$root/build/sim/cli/flashspec}
out=${1:-$root/results/calibration-models}
spec=$root/configs/calibration/oneplus12.lua
mkdir -p "$out" || exit 73

# label | spec arguments
models=(
  "B, set-up per verification, min shape 8 (shipped)|"
  "B, set-up per verification, no min shape|min_rows=1"
  "B, set-up per verification, min shape 4|min_rows=4"
  "B, set-up per verification, min shape 16|min_rows=16"
  "B, set-up per verification, every shape compiled|shapes=all min_rows=1"
  "B, cost per leaf instead|overhead=leaf"
  "B, set-up and per-leaf cost|overhead=both"
  "B, no fixed verification cost|overhead=none"
  "B, acceptance constant with depth|decay=0"
  "B, top-K recovers a share of misses at every depth|coverage=share"
  "B, + stand-alone NPU call cost|fit_call=1"
  "B, + CPU GEMV bandwidth|fit_cpu=1"
  "A, overlapped runtime, set-up per verification|reading=a"
  "A, overlapped runtime, no fixed cost|reading=a overhead=none"
)
lines=()
for m in "${models[@]}"; do
  label=${m%%|*}
  args=()
  for a in ${m#*|}; do args+=(--arg "$a"); done
  dir=$out/$(printf '%s' "$label" | tr -c 'A-Za-z0-9' '_')
  if ! "$bin" calibrate "$spec" -j 2 -q -o "$dir" "${args[@]}" >"$dir.txt" 2>&1; then
    echo "calibration_models: '$label' failed (see $dir.txt)" >&2
    continue
  fi
  first=$(head -n 1 "$dir.txt")
  rms=$(sed -n 's/.*RMS \([0-9.]*\)%.*/\1/p' <<<"$first")
  loo=$(sed -n 's/.*leave-one-out \([0-9.na]*\)%.*/\1/p' <<<"$first")
  aic=$(sed -n 's/.*AIC \([-0-9.]*\).*/\1/p' <<<"$first")
  bic=$(sed -n 's/.*BIC \([-0-9.]*\).*/\1/p' <<<"$first")
  np=$(grep -c '^  [a-z_]* *[-0-9.e+]* +/-' "$dir.txt")
  lines+=("$(printf '%-52s %3s %7s%% %7s%% %8s %8s' "$label" "$np" "$rms" "$loo" "$aic" "$bic")")
done
printf '%-52s %3s %8s %8s %8s %8s\n' "model" "p" "RMS" "LOO RMS" "AIC" "BIC"
printf '%s\n' "${lines[@]}" | awk '{print $(NF-1) "\t" $0}' | sort -g | cut -f2-
