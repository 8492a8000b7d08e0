#!/bin/sh
# check_portable.sh [--expect-violations] DIR -- fails (status 1) when a C file in
# DIR includes something the portable engine must not depend on: stdio, HDF5,
# Lua, GSL, or any simulator (sim/, sim_*.h) or trace (traces/, trc_*.h) header.
# The engine is the code a phone runtime links, so it may use only the C11
# library (no I/O) and libm.  Prints every offending line as FILE:LINE:TEXT.
# --expect-violations inverts the verdict (used to test the checker itself on a
# fixture directory); usage errors exit 2 in both modes.
set -u
expect=0
if [ "${1:-}" = "--expect-violations" ]; then
    expect=1
    shift
fi
dir=${1:?usage: check_portable.sh [--expect-violations] DIR}
[ -d "$dir" ] || { echo "check_portable: $dir: not a directory" >&2; exit 2; }
files=$(find "$dir/" -type f \( -name '*.c' -o -name '*.h' \) | sort)
[ -n "$files" ] || { echo "check_portable: $dir: no C files" >&2; exit 2; }
pattern='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]*/)?(stdio\.h|hdf5[^>"]*\.h|H5[^>"]*\.h|lua\.h|luaconf\.h|lauxlib\.h|lualib\.h|gsl/|sim/|traces/|sim_[^>"]*\.h|trc_[^>"]*\.h)'
n=$(echo "$files" | wc -l)
# shellcheck disable=SC2086
if grep -nE "$pattern" $files; then
    echo "check_portable: forbidden include in $dir (engine must stay pure C11 + libm)" >&2
    [ "$expect" = 1 ] && exit 0
    exit 1
fi
if [ "$expect" = 1 ]; then
    echo "check_portable: $n files in $dir, expected violations but found none" >&2
    exit 1
fi
echo "check_portable: $n files clean"
