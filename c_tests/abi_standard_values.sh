#!/bin/bash
# The constants of oxmpi's include/mpi_abi.h against the standard ABI's
# values, written down as facts in docs/reference/standard-abi-values.txt:
# generates a C program that compares each one (an integer, a handle's or a
# pointer's value), builds it with the installed `mpicc -mpi-abi` and runs
# it (no MPI calls, so no launcher). Also checks that the header compiles
# as ISO C99 -pedantic and as C++.
# When GitHub is reachable, MPICH main's mpi_abi.h is fetched into
# build/ and compared too (its values are the same facts); otherwise that
# part is skipped with a notice.
set -u
ROOT="${OXMPI_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
PREFIX="${OXMPI_PREFIX:-$ROOT/build/stage}"
LIST="$ROOT/docs/reference/standard-abi-values.txt"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-stdabi.XXXXXX")" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

{
    echo '#include <mpi.h>'
    echo '#include <stdio.h>'
    echo '#include <stdint.h>'
    echo 'int main(void) {'
    echo '    int errors = 0, checked = 0;'
    grep -v '^#' "$LIST" | while read -r name value; do
        [ -z "$name" ] && continue
        echo "    checked++; if ((long long)(intptr_t)($name) != (long long)($value)) { errors++; printf(\"%s is %lld, the standard says %s\\n\", \"$name\", (long long)(intptr_t)($name), \"$value\"); }"
    done
    echo '    printf("%d constants compared\n", checked);'
    echo '    if (errors == 0) printf("No Errors\n");'
    echo '    return errors != 0;'
    echo '}'
} > "$tmp/values.c"

if ! "$PREFIX/bin/mpicc" -mpi-abi -Wall -Werror -o "$tmp/values" "$tmp/values.c" > "$tmp/build.log" 2>&1; then
    echo "FAIL: the comparison program does not build against mpi_abi.h"
    head -n 30 "$tmp/build.log"
    exit 1
fi
"$tmp/values" > "$tmp/values.out" || fail=1
grep -v '^No Errors' "$tmp/values.out"

# The header in other dialects.
echo '#include <mpi.h>
int main(void) { MPI_Comm c = MPI_COMM_WORLD; return c == MPI_COMM_NULL; }' > "$tmp/dialect.c"
if ! "$PREFIX/bin/mpicc" -mpi-abi -std=c99 -pedantic -Wall -Werror -c -o "$tmp/d.o" "$tmp/dialect.c" > "$tmp/c99.log" 2>&1; then
    echo "FAIL: mpi_abi.h is not ISO C99 -pedantic clean"; head -n 20 "$tmp/c99.log"; fail=1
fi
if command -v c++ >/dev/null 2>&1; then
    cp "$tmp/dialect.c" "$tmp/dialect.cc"
    if ! c++ -Wall -Werror -I"$PREFIX/include/abi" -c -o "$tmp/dpp.o" "$tmp/dialect.cc" > "$tmp/cxx.log" 2>&1; then
        echo "FAIL: mpi_abi.h does not compile as C++"; head -n 20 "$tmp/cxx.log"; fail=1
    fi
fi

# MPICH main's header, when reachable (never committed: fetched into build/).
cache="$ROOT/build/reference/mpich-main-mpi_abi.h"
url=https://raw.githubusercontent.com/pmodels/mpich/main/src/binding/abi/mpi_abi.h
if [ ! -s "$cache" ]; then
    mkdir -p "$(dirname "$cache")"
    curl -sf --max-time 20 -o "$cache" "$url" 2>/dev/null || rm -f "$cache"
fi
if [ -s "$cache" ]; then
    echo "comparing with MPICH main's mpi_abi.h ($cache)"
    sed 's/#include <mpi.h>/#include "mpich-main-mpi_abi.h"/' "$tmp/values.c" > "$(dirname "$cache")/values-mpich.c"
    if cc -w -I"$(dirname "$cache")" -o "$tmp/values-mpich" "$(dirname "$cache")/values-mpich.c" > "$tmp/mpich.log" 2>&1; then
        "$tmp/values-mpich" | grep -v '^No Errors' || echo "MPICH main's header differs from the list above (a newer or older draft?)"
    else
        echo "notice: MPICH main's header did not build standalone; not compared"
    fi
else
    echo "notice: $url not reachable; compared with the committed list only"
fi

if [ "$fail" = 0 ] && grep -qx 'No Errors' "$tmp/values.out"; then
    echo "No Errors"
    exit 0
fi
exit 1
