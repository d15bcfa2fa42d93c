#!/bin/bash
# ABI check of include/mpi.h against Debian MPICH 4.0.2's header.
#
# 1. Builds c_tests/abi_constants.c twice, against oxmpi's header and with mpicc.mpich, runs
#    both and compares their output (every constant, typedef size/type, struct layout and data
#    symbol size the MPICH ABI fixes).
# 2. Compiles c_tests/abi_prototypes.c with -Wall -Werror against both headers (the
#    prototypes and callback types are usable with the MPI standard's C types), checks that
#    it also compiles as ISO C99 with -pedantic (as it does with MPICH's header), and that
#    oxmpi's header compiles as C++.
#
# Usage: c_tests/abi_constants.sh        (from anywhere; the repository is the script's parent dir)
# Environment: OXMPI_ROOT     repository root (default: the script's parent directory)
#              OXMPI_INCLUDE  directory of the mpi.h to test (default: $OXMPI_ROOT/include)
#              CC, CXX        compilers for oxmpi's side (default: cc, c++)
# Exit status: 0 and "No Errors" when everything agrees, 1 on a difference or a build failure,
#              77 (skip) when mpicc.mpich is not installed.
set -u

ROOT="${OXMPI_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
INCLUDE="${OXMPI_INCLUDE:-$ROOT/include}"
CC="${CC:-cc}"
CXX="${CXX:-c++}"
TESTS="$ROOT/c_tests"

if ! command -v mpicc.mpich >/dev/null 2>&1; then
    echo "SKIP: mpicc.mpich not installed"
    exit 77
fi
if [ ! -f "$INCLUDE/mpi.h" ]; then
    echo "FAIL: $INCLUDE/mpi.h does not exist (run cargo build first)"
    exit 1
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-abi.XXXXXX")" || exit 1
trap 'rm -rf "$tmp"' EXIT

failed=0

# --- 1. constants, types, layouts ---
if ! "$CC" -std=c11 -Wall -I"$INCLUDE" -o "$tmp/ours" "$TESTS/abi_constants.c" 2>"$tmp/ours.log"; then
    echo "FAIL: abi_constants.c does not build against $INCLUDE/mpi.h:"
    cat "$tmp/ours.log"
    exit 1
fi
if ! mpicc.mpich -std=c11 -Wall -o "$tmp/mpich" "$TESTS/abi_constants.c" 2>"$tmp/mpich.log"; then
    echo "FAIL: abi_constants.c does not build with mpicc.mpich:"
    cat "$tmp/mpich.log"
    exit 1
fi
if ! "$tmp/ours" >"$tmp/ours.out" || ! "$tmp/mpich" >"$tmp/mpich.out"; then
    echo "FAIL: abi_constants did not run"
    exit 1
fi
if ! diff "$tmp/mpich.out" "$tmp/ours.out" >"$tmp/diff"; then
    echo "FAIL: constants differ (< MPICH, > oxmpi):"
    grep '^[<>]' "$tmp/diff"
    failed=1
fi

# --- 2. prototypes ---
if ! "$CC" -std=c11 -Wall -Werror -I"$INCLUDE" -c -o "$tmp/proto_ours.o" \
        "$TESTS/abi_prototypes.c" 2>"$tmp/proto_ours.log"; then
    echo "FAIL: abi_prototypes.c does not compile against $INCLUDE/mpi.h:"
    cat "$tmp/proto_ours.log"
    failed=1
fi
if ! mpicc.mpich -std=c11 -Wall -Werror -c -o "$tmp/proto_mpich.o" \
        "$TESTS/abi_prototypes.c" 2>"$tmp/proto_mpich.log"; then
    echo "FAIL: abi_prototypes.c does not compile with mpicc.mpich:"
    cat "$tmp/proto_mpich.log"
    failed=1
fi
# ISO C without extensions: MPICH's header passes -std=c99 -pedantic, so ours must too.
if mpicc.mpich -std=c99 -pedantic -Wall -Werror -c -o "$tmp/proto_mpich99.o" \
        "$TESTS/abi_prototypes.c" >/dev/null 2>&1 &&
    ! "$CC" -std=c99 -pedantic -Wall -Werror -I"$INCLUDE" -c -o "$tmp/proto_ours99.o" \
        "$TESTS/abi_prototypes.c" 2>"$tmp/proto_ours99.log"; then
    echo "FAIL: $INCLUDE/mpi.h is not ISO C99 (-pedantic), MPICH's header is:"
    head -20 "$tmp/proto_ours99.log"
    failed=1
fi
if command -v "$CXX" >/dev/null 2>&1; then
    printf '#include <mpi.h>\nint main() { return MPI_Pcontrol(0) + MPI_Send(MPI_BOTTOM, 0, MPI_INT, 0, 0, MPI_COMM_WORLD); }\n' \
        >"$tmp/cxx.cc"
    if ! "$CXX" -Wall -Werror -fsyntax-only -I"$INCLUDE" "$tmp/cxx.cc" 2>"$tmp/cxx.log"; then
        echo "FAIL: $INCLUDE/mpi.h does not compile as C++:"
        cat "$tmp/cxx.log"
        failed=1
    fi
fi

if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "No Errors"
exit 0
