#!/usr/bin/env bash
# Parallel HDF5 built against MPICH runs on oxmpi: c_tests/hdf5/h5par.c is
# built with Debian's h5pcc.mpich (libhdf5-mpich-dev: HDF5's MPI-IO driver
# over libmpich.so.12) and runs on 1, 3 and 4 ranks under oxmpi's mpiexec
# with LD_LIBRARY_PATH=$PREFIX/lib, so libmpich.so.12 is oxmpi: collective
# hyperslab writes (contiguous rows, a strided column), an attribute, then
# the file reopened and read back in full and checked. Each run must exit
# 0 with `No Errors` and name oxmpi as its MPI library.
# Skipped (exit 77) when h5pcc.mpich is not installed.
#
# Usage: c_tests/hdf5_mpich.sh   (OXMPI_PREFIX: the install to test)
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
LIMIT=60
failures=0

if ! command -v h5pcc.mpich >/dev/null 2>&1; then
    echo "skipped: h5pcc.mpich is not installed (Debian package libhdf5-mpich-dev)"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-hdf5.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
. "$ROOT/c_tests/launch_checks.sh"

exe=$WORK/h5par
if ! (cd "$WORK" && h5pcc.mpich -o "$exe" "$ROOT/c_tests/hdf5/h5par.c") >"$WORK/build.log" 2>&1; then
    not_ok "h5par.c builds with h5pcc.mpich" "$(tail -n 20 "$WORK/build.log")"
else
    resolved=$(LD_LIBRARY_PATH=$PREFIX/lib ldd "$exe" | awk '/libmpich\.so\.12/ {print $3}')
    if [ "$(readlink -f "$resolved")" != "$(readlink -f "$PREFIX/lib/liboxmpi.so")" ]; then
        not_ok "h5par finds oxmpi as libmpich.so.12" "ldd says $resolved"
    else
        for n in 1 3 4; do
            run env LD_LIBRARY_PATH="$PREFIX/lib" "$MPIEXEC" -n "$n" "$exe" "$WORK/h5par-$n.h5"
            passes_c_test "h5par on $n ranks"
            if grep -q '^library: .*oxmpi' "$WORK/out"; then
                ok "h5par on $n ranks: MPI_Get_library_version names oxmpi"
            else
                not_ok "h5par on $n ranks: MPI_Get_library_version names oxmpi" "$(got)"
            fi
        done
    fi
fi

if [ "$failures" -eq 0 ]; then
    echo "No Errors"
    exit 0
fi
echo "$failures failures"
exit 1
