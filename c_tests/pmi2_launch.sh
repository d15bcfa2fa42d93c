#!/usr/bin/env bash
# oxmpi programs speaking PMI-2 under oxmpi's mpiexec, beyond the test
# list's OXMPI_PMI=2 entries: with OXMPI_LOG every rank reports that it
# connected with PMI-2 (with OXMPI_PMI=2 and with auto, over the inherited
# socket and, on two simulated hosts, over TCP after the `initack`), and
# without OXMPI_PMI none does (PMI-1 stays the default); p2p_basic and
# reinit_skew pass on two simulated hosts (`-hosts node-a:2,node-b:2
# -launcher fork -hostname-env OXMPI_HOSTNAME`: shared memory within a
# "host", TCP between them); MPI_Comm_spawn fails with a clear error;
# MPI_Abort's code becomes mpiexec's exit status (PMI-2's abort carries no
# code: oxmpi's client adds one).
#
# Usage: c_tests/pmi2_launch.sh   (OXMPI_PREFIX: the install to test,
#                                  default build/stage; MPIEXEC: its launcher)
# Prints `ok - name` or `not ok - name: why` per case, then `No Errors` and
# exits 0 if everything passed, else exits 1.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
LIMIT=60
failures=0

WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-pmi2.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

. "$ROOT/c_tests/launch_checks.sh"

# connected_with NAME WANT: the run passed and WANT ranks said PMI-2.
connected_with() {
    local n
    n=$(grep -c 'PMI-2 connected' "$WORK/err")
    if [ "$RC" -ne 0 ] || ! grep -qx "No Errors" "$WORK/out" || [ "$n" != "$2" ]; then
        not_ok "$1" "$n ranks connected with PMI-2, expected $2; $(got)"
    else
        ok "$1"
    fi
}

for t in init_basic p2p_basic reinit_skew; do
    if ! "$PREFIX/bin/mpicc" -O1 -I "$ROOT/c_tests" -o "$WORK/$t" "$ROOT/c_tests/$t.c" 2>"$WORK/cc.err"; then
        not_ok "build $t" "$(head -c 600 "$WORK/cc.err")"
        echo "$failures case(s) failed"
        exit 1
    fi
done
cat >"$WORK/spawn_pmi2.c" <<'SRC'
/* MPI_Comm_spawn under PMI-2 fails with MPI_ERR_SPAWN and says why. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Comm child;
    int errcode, class, len;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child, &errcode);
    MPI_Error_class(rc, &class);
    MPI_Error_string(rc, text, &len);
    if (class == MPI_ERR_SPAWN && strstr(text, "PMI-2"))
        printf("No Errors\n");
    else
        printf("spawn returned class %d: %s\n", class, text);
    MPI_Finalize();
    return 0;
}
SRC
if ! "$PREFIX/bin/mpicc" -O1 -o "$WORK/spawn_pmi2" "$WORK/spawn_pmi2.c" 2>"$WORK/cc.err"; then
    not_ok "build spawn_pmi2" "$(head -c 600 "$WORK/cc.err")"
fi

debug=(env OXMPI_LOG=oxmpi::bootstrap::pmi=debug)
run "${debug[@]}" OXMPI_PMI=2 "$MPIEXEC" -n 3 "$WORK/init_basic" 3
connected_with "OXMPI_PMI=2: every rank speaks PMI-2" 3
run "${debug[@]}" OXMPI_PMI=auto "$MPIEXEC" -n 2 "$WORK/init_basic" 2
connected_with "OXMPI_PMI=auto: every rank speaks PMI-2" 2
run "${debug[@]}" "$MPIEXEC" -n 2 "$WORK/init_basic" 2
connected_with "no OXMPI_PMI: PMI-1" 0

hosts=(-hosts node-a:2,node-b:2 -launcher fork -hostname-env OXMPI_HOSTNAME)
run "${debug[@]}" OXMPI_PMI=2 "$MPIEXEC" "${hosts[@]}" -n 4 "$WORK/init_basic" 4
connected_with "two simulated hosts: every rank speaks PMI-2 (over TCP)" 4
run env OXMPI_PMI=2 "$MPIEXEC" "${hosts[@]}" -n 4 "$WORK/p2p_basic"
passes_c_test "p2p_basic on two simulated hosts, OXMPI_PMI=2"
run env OXMPI_PMI=2 "$MPIEXEC" "${hosts[@]}" -n 4 "$WORK/reinit_skew" 4
passes_c_test "reinit_skew on two simulated hosts, OXMPI_PMI=2"

if [ -x "$WORK/spawn_pmi2" ]; then
    run env OXMPI_PMI=2 "$MPIEXEC" -n 1 "$WORK/spawn_pmi2"
    passes_c_test "MPI_Comm_spawn under PMI-2 fails with MPI_ERR_SPAWN naming PMI-2"
fi

if "$PREFIX/bin/mpicc" -O1 -o "$WORK/abort_pmi2" "$ROOT/c_tests/launcher/mpi_abort7.c" 2>"$WORK/cc.err"; then
    run env OXMPI_PMI=2 "$MPIEXEC" -n 3 "$WORK/abort_pmi2"
    if [ "$RC" = 7 ] && grep -q "aborted the job with code 7" "$WORK/err"; then
        ok "MPI_Abort(7) under PMI-2 ends the job with status 7"
    else
        not_ok "MPI_Abort(7) under PMI-2 ends the job with status 7" "$(got)"
    fi
else
    not_ok "build abort_pmi2" "$(head -c 600 "$WORK/cc.err")"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures case(s) failed"
    exit 1
fi
echo "No Errors"
