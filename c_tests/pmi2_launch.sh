#!/usr/bin/env bash
# oxmpi programs speaking PMI-2 under oxmpi's mpiexec, beyond the test
# list's OXMPI_PMI=2 entries: with OXMPI_LOG every rank reports that it
# connected with PMI-2 (with OXMPI_PMI=2 and with auto, over the inherited
# socket and, on two simulated hosts, over TCP after the `initack`), and
# without OXMPI_PMI none does (PMI-1 stays the default); p2p_basic and
# reinit_skew pass on two simulated hosts (`-hosts node-a:2,node-b:2
# -launcher fork -hostname-env OXMPI_HOSTNAME`: shared memory within a
# "host", TCP between them); MPI_Comm_spawn starts children that speak
# PMI-2 too and reach their parent;
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
/* MPI_Comm_spawn under PMI-2: the parent starts 2 children, which get
 * their parent intercommunicator and each send the parent its rank. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Comm parent, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        int codes[2] = {-1, -1}, errors = 0;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
        if (rc != MPI_SUCCESS || codes[0] != MPI_SUCCESS || codes[1] != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, text, &len);
            printf("spawn failed: %s (errcodes %d %d)\n", text, codes[0], codes[1]);
            MPI_Finalize();
            return 0;
        }
        int remote;
        MPI_Comm_remote_size(inter, &remote);
        errors += remote != 2;
        for (int c = 0; c < 2; c++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, c, 5, inter, MPI_STATUS_IGNORE);
            errors += v != 100 + c;
        }
        MPI_Comm_disconnect(&inter);
        if (errors == 0)
            printf("No Errors\n");
        else
            printf("Found %d errors\n", errors);
    } else {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        int v = 100 + rank;
        MPI_Send(&v, 1, MPI_INT, 0, 5, parent);
        MPI_Comm_disconnect(&parent);
    }
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
    run "${debug[@]}" OXMPI_PMI=2 "$MPIEXEC" -n 1 "$WORK/spawn_pmi2"
    connected_with "MPI_Comm_spawn under PMI-2: parent and its 2 children speak PMI-2" 3
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
