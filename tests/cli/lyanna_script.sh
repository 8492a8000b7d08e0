#!/bin/sh
# lyanna_script.sh BIN HOME OUTDIR -- runs scripts/lyanna_resampling.lua through
# `flashspec run`: it must exit 0 and print its table -- the header, Flash-AR at
# 1.00x and the three Lyanna variants, each faster than Flash-AR and with at
# least one verification.
set -eu
bin=$1 home=$2 out=$3
cd "$home"
txt="$out/lyanna_resampling.txt"
"$bin" run scripts/lyanna_resampling.lua -q -o "$out/lyanna_resampling" >"$txt"
for col in tok/s speedup accepted rows verifications; do
    grep -q "$col" "$txt" || { echo "lyanna_resampling.lua: no '$col' column" >&2; exit 1; }
done
grep -q '^flash_ar .* 1\.00x ' "$txt" || { echo "lyanna_resampling.lua: no Flash-AR row" >&2; exit 1; }
for v in no_resampling resampling resampling+fusion; do
    awk -v v="$v" '$1 == v { found = 1; sp = $3; sub(/x$/, "", sp);
                             if (sp + 0 <= 1 || $6 + 0 < 1) bad = 1 }
                   END { exit !(found && !bad) }' "$txt" ||
        { echo "lyanna_resampling.lua: row '$v' missing or implausible" >&2; cat "$txt" >&2; exit 1; }
done
echo "lyanna_resampling.lua: table ok"
