#!/usr/bin/env bash
# Fortran programs built against MPICH run on oxmpi: each program of
# c_tests/fortran/ (mpif.h, `use mpi`, `use mpi_f08`, and attrs.f90:
# attributes, keyvals with Fortran callbacks and generalized requests,
# which libmpichfort does through libmpich's MPII_* helpers) is built with MPICH's
# mpif90.mpich, so it links MPICH's libmpichfort.so.12 on top of
# libmpich.so.12, and runs on 2 ranks under oxmpi's mpiexec with
# LD_LIBRARY_PATH=$PREFIX/lib, so libmpich.so.12 is oxmpi. Each must exit 0
# with `No Errors`; the `use mpi` one also prints the library version,
# which must name oxmpi (proof that oxmpi, not MPICH, ran).
# Skipped (exit 77) when gfortran or mpif90.mpich is not installed.
#
# Usage: c_tests/fortran_mpich.sh   (OXMPI_PREFIX: the install to test)
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
LIMIT=60
failures=0

for tool in gfortran mpif90.mpich; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "skipped: $tool is not installed (Debian packages gfortran, libmpich-dev)"
        exit 77
    fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-fortran.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
. "$ROOT/c_tests/launch_checks.sh"

for src in mpif_h.f use_mpi.f90 use_mpi_f08.f90 attrs.f90; do
    exe=$WORK/${src%.*}
    if ! (cd "$WORK" && mpif90.mpich -o "$exe" "$ROOT/c_tests/fortran/$src") >"$WORK/build.log" 2>&1; then
        not_ok "$src builds with mpif90.mpich" "$(tail -n 20 "$WORK/build.log")"
        continue
    fi
    # The binary must really depend on MPICH's Fortran library over libmpich.
    if ! ldd "$exe" | grep -q 'libmpichfort\.so\.12'; then
        not_ok "$src links libmpichfort.so.12" "$(ldd "$exe")"
        continue
    fi
    resolved=$(LD_LIBRARY_PATH=$PREFIX/lib ldd "$exe" | awk '/libmpich\.so\.12/ {print $3}')
    if [ "$(readlink -f "$resolved")" != "$(readlink -f "$PREFIX/lib/liboxmpi.so")" ]; then
        not_ok "$src finds oxmpi as libmpich.so.12" "ldd says $resolved"
        continue
    fi
    run env LD_LIBRARY_PATH="$PREFIX/lib" "$MPIEXEC" -n 2 "$exe"
    passes_c_test "$src on 2 ranks"
    if [ "$src" = use_mpi.f90 ]; then
        if grep -q '^library: .*oxmpi' "$WORK/out"; then
            ok "use_mpi.f90: MPI_Get_library_version names oxmpi"
        else
            not_ok "use_mpi.f90: MPI_Get_library_version names oxmpi" "$(got)"
        fi
    fi
done

if [ "$failures" -eq 0 ]; then
    echo "No Errors"
    exit 0
fi
echo "$failures failures"
exit 1
