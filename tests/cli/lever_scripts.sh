#!/bin/sh
# lever_scripts.sh BIN HOME OUTDIR -- runs the five Lever scripts; each must
# exit 0 and print its table header.
set -eu
bin=$1 home=$2 out=$3
cd "$home"
for s in drafting:drafting pruning:rows_kept draft_schedule:draft_ms projection:proj_ms \
         end_to_end:speedup; do
    name=${s%%:*} col=${s#*:}
    "$bin" run "scripts/lever_$name.lua" -q -o "$out/$name" >"$out/$name.txt"
    grep -q "$col" "$out/$name.txt" || { echo "lever_$name.lua: no '$col' column" >&2; exit 1; }
    [ "$(wc -l <"$out/$name.txt")" -ge 4 ] || { echo "lever_$name.lua: table too short" >&2; exit 1; }
done
echo "lever scripts: 5 ran"
