#!/bin/sh
# edgellm_script.sh BIN HOME OUTDIR -- runs scripts/edgellm_ablation.lua through
# `flashspec run`: it must exit 0 and print its table -- the header, and for
# each bundled trace the five variants in order, Flash-AR at 1.00x, every
# other variant faster than Flash-AR, each throughput inside its 95% interval,
# and provisional tokens kept only by the +provisional variant.
set -eu
bin=$1 home=$2 out=$3
cd "$home"
txt="$out/edgellm_ablation.txt"
"$bin" run scripts/edgellm_ablation.lua -q -o "$out/edgellm_ablation" >"$txt"
for col in tok/s "95% CI" speedup accept rows draft verify kept; do
    grep -q "$col" "$txt" || { echo "edgellm_ablation.lua: no '$col' column" >&2; exit 1; }
done
awk 'NR == 1 { next }
     { gsub(/[\[\],]/, " "); n++
       want = (n - 1) % 5
       split("flash_ar chain_sd +navigation +fallback +provisional", names, " ")
       if ($1 != names[want + 1]) bad = bad " order:" $1
       sp = $6; sub(/x$/, "", sp)
       if (want == 0 && sp != "1.00") bad = bad " ar-speedup"
       if (want > 0 && sp + 0 <= 1) bad = bad " slow:" $1
       if ($3 + 0 < $4 - 1e-3 || $3 + 0 > $5 + 1e-3) bad = bad " ci:" $1
       if (want < 4 && $11 + 0 != 0) bad = bad " kept:" $1 }
     END { if (n != 10 || bad != "") { print "bad table (" n " rows):" bad > "/dev/stderr"; exit 1 } }' \
    "$txt" || { cat "$txt" >&2; exit 1; }
echo "edgellm_ablation.lua: table ok"
