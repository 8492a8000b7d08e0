#!/usr/bin/env bash
# Shared set-up for scripts/demo, scripts/test and scripts/fuzz (sourced, not run):
# installs only the Debian packages that are missing, then configures and
# builds build/ when needed.  Idempotent and quiet when nothing is to do.
fs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# libssl-dev: OpenSSL's libcrypto, for the SHA-256 of each --plugin file that
# run.json records (libhdf5-dev pulls it in already; named here because the
# build links it itself)
fs_packages=(gcc libc6-dev pkg-config meson ninja-build libgsl-dev libhdf5-dev libssl-dev
             liblua5.4-dev python3 python3-h5py python3-numpy
             openmpi-bin libopenmpi-dev)  # MPI sweeps; the build works without them
# scripts/test also needs these (not the build or the demo): clang and its
# libFuzzer runtime for scripts/fuzz, valgrind for the memcheck of the demo,
# pandas and matplotlib for analysis/, PyTorch for the trace recorder, make for
# the installed-engine example, venv and pip for the test that installs analysis/
# as a package into a fresh virtual environment (offline).
fs_check_packages=(clang libclang-rt-14-dev valgrind make python3-pandas python3-matplotlib
                   python3-venv python3-pip
                   python3-torch)

# Installs the missing ones of the packages named (default: fs_packages).
fs_install_missing() {
    local missing=() p
    [ $# -eq 0 ] && set -- "${fs_packages[@]}"
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "setup: installing ${missing[*]}" >&2
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    "${sudo[@]}" apt-get update -qq >&2 || return 1
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >&2 || return 1
}

fs_build() {
    local dir=${1:-build}
    shift || true
    local stamp="$fs_root/$dir/.fs-packages"
    if [ ! -f "$fs_root/$dir/build.ninja" ]; then
        meson setup "$fs_root/$dir" "$fs_root" "$@" >&2 || return 1
    elif [ "$(cat "$stamp" 2>/dev/null)" != "${fs_packages[*]}" ]; then
        # the package set changed (e.g. OpenMPI added): look for dependencies again
        meson setup --reconfigure "$fs_root/$dir" "$fs_root" "$@" >&2 || return 1
    fi
    echo "${fs_packages[*]}" > "$stamp"
    # $NINJAFLAGS (e.g. "-j 4 -l 8") and $FS_BUILD_JOBS (scripts/demo -j N)
    # reach ninja; without them ninja picks its own job count
    local flags=()
    read -r -a flags <<< "${NINJAFLAGS:-}"
    [ -n "${FS_BUILD_JOBS:-}" ] && flags+=(-j "$FS_BUILD_JOBS")
    ninja -C "$fs_root/$dir" "${flags[@]}" >&2 || return 1
}

# True when clang can link a libFuzzer target (scripts/fuzz can run).
fs_have_libfuzzer() {
    command -v clang >/dev/null 2>&1 || return 1
    local d
    d=$(mktemp -d) || return 1
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n ? 0 : 0; }' \
        > "$d/t.c"
    clang -fsanitize=fuzzer "$d/t.c" -o "$d/t" >/dev/null 2>&1
    local rc=$?
    rm -rf "$d"
    return $rc
}
