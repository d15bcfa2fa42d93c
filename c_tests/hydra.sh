#!/usr/bin/env bash
# Interoperability with MPICH's Hydra launcher and PMI client, both ways:
#  1. oxmpi-built programs (the installed mpicc) run under MPICH's
#     `mpiexec.mpich -n 4` and pass, with the inherited PMI socket (PMI_FD)
#     and with Hydra's PMI_PORT mode (-pmi-port): init_basic, p2p_basic,
#     sessions_basic (the latter with OXMPI_INITIAL_ERRHANDLER=return).
#  2. MPICH-built programs (mpicc.mpich) run under oxmpi's mpiexec against
#     libmpich itself: a hello world and a MPI_Send/MPI_Recv ring; their
#     MPI_Get_library_version names MPICH.
#  3. The same MPICH-built binaries with LD_LIBRARY_PATH=$PREFIX/lib, so that
#     libmpich.so.12 resolves to oxmpi, under oxmpi's mpiexec: they pass and
#     MPI_Get_library_version names oxmpi.
# Skipped (exit 77) when mpiexec.mpich is not installed; part 2 and 3 are
# skipped, with a notice, when mpicc.mpich is not.
#
# Usage: c_tests/hydra.sh   (OXMPI_PREFIX: the install to test, default
#                            build/stage; MPIEXEC: oxmpi's launcher)
# Prints `ok - name` or `not ok - name: why` per case, then `No Errors` and
# exits 0 if everything passed, else exits 1.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
LIMIT=60
failures=0

if ! command -v mpiexec.mpich >/dev/null 2>&1; then
    echo "skipped: mpiexec.mpich (Debian package mpich) is not installed"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-hydra.XXXXXX")
cleanup() {
    local pid
    for pid in $(pgrep -f -- "$WORK/" 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null
    done
    rm -rf "$WORK"
}
trap cleanup EXIT

ok() { echo "ok - $1"; }
not_ok() {
    echo "not ok - $1: $2"
    failures=$((failures + 1))
}

# The ranks must see no launcher variables of an outer job.
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE OXMPI_JOBID OXMPI_JOB_SECRET \
    MPI_LOCALNRANKS MPI_LOCALRANKID OXMPI_PSETS

# run NAME COMMAND...: runs COMMAND (stdin /dev/null) and sets RC, OUT, ERR.
run() {
    timeout -k 2 "$LIMIT" "$@" </dev/null >"$WORK/out" 2>"$WORK/err"
    RC=$?
    OUT=$(cat "$WORK/out")
    ERR=$(cat "$WORK/err")
}
got() { printf 'exit %s, output %q, stderr %q' "$RC" "$(tail -c 600 <<<"$OUT")" "$(tail -c 600 <<<"$ERR")"; }

# passes_c_test NAME: exit 0, a "No Errors" line and no oxmpi diagnostics.
passes_c_test() {
    local name=$1
    if [ "$RC" -ne 0 ] || ! grep -qx "No Errors" "$WORK/out"; then
        not_ok "$name" "$(got)"
    elif grep -qE '^(oxmpi:|\[(TRACE|DEBUG|INFO|WARN|ERROR))' "$WORK/out" "$WORK/err"; then
        not_ok "$name" "oxmpi printed diagnostics: $(got)"
    else
        ok "$name"
    fi
}

# ---------------------------------------------------------------- oxmpi under Hydra
if [ ! -x "$PREFIX/bin/mpicc" ]; then
    not_ok "setup" "$PREFIX/bin/mpicc is missing (make stage)"
    exit 1
fi
for t in init_basic p2p_basic sessions_basic; do
    if ! "$PREFIX/bin/mpicc" -O1 -I "$ROOT/c_tests" -o "$WORK/$t" "$ROOT/c_tests/$t.c" 2>"$WORK/cc.err"; then
        not_ok "build $t with oxmpi's mpicc" "$(head -c 600 "$WORK/cc.err")"
    fi
done

for mode in fd port; do
    hydra=(mpiexec.mpich)
    [ "$mode" = port ] && hydra+=(-pmi-port)
    if [ -x "$WORK/init_basic" ]; then
        run "${hydra[@]}" -n 4 "$WORK/init_basic" 4
        passes_c_test "oxmpi init_basic under mpiexec.mpich -n 4 (PMI $mode)"
    fi
    if [ -x "$WORK/p2p_basic" ]; then
        run "${hydra[@]}" -n 4 "$WORK/p2p_basic"
        passes_c_test "oxmpi p2p_basic under mpiexec.mpich -n 4 (PMI $mode)"
    fi
    if [ -x "$WORK/sessions_basic" ]; then
        run "${hydra[@]}" -n 4 -genv OXMPI_INITIAL_ERRHANDLER return "$WORK/sessions_basic"
        passes_c_test "oxmpi sessions_basic under mpiexec.mpich -n 4 (PMI $mode)"
    fi
done

# ---------------------------------------------------------------- MPICH under oxmpi's mpiexec
if ! command -v mpicc.mpich >/dev/null 2>&1; then
    echo "notice: mpicc.mpich is not installed: MPICH-built programs not tested"
else
    if [ ! -x "$MPIEXEC" ]; then
        not_ok "setup" "$MPIEXEC is missing (make stage)"
        exit 1
    fi
    cat >"$WORK/mpich_ring.c" <<'EOF'
/* A token goes twice around a ring with MPI_Send/MPI_Recv; every rank adds
 * its rank. Rank 0 checks the sum and prints the library version's first
 * line and "No Errors". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int lap = 0; lap < 2; lap++) {
        long token = 0;
        MPI_Status status;
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, &status);
            if (token != (long) size * (size - 1) / 2) {
                printf("lap %d: token %ld, expected %ld\n", lap, token, (long) size * (size - 1) / 2);
                errors++;
            }
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, &status);
            if (status.MPI_SOURCE != prev || status.MPI_TAG != lap) {
                printf("rank %d: status source %d tag %d\n", rank, status.MPI_SOURCE, status.MPI_TAG);
                errors++;
            }
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Get_library_version(version, &len);
        version[strcspn(version, "\n")] = '\0';
        printf("library: %s\n", version);
        if (errors == 0)
            printf("No Errors\n");
    }
    MPI_Finalize();
    return errors != 0;
}
EOF
    built=1
    for p in mpich_ring:"$WORK/mpich_ring.c" mpich_hello:"$ROOT/c_tests/launcher/mpich_hello.c"; do
        if ! mpicc.mpich -O1 -o "$WORK/${p%%:*}" "${p#*:}" 2>"$WORK/cc.err"; then
            not_ok "build ${p%%:*} with mpicc.mpich" "$(head -c 600 "$WORK/cc.err")"
            built=0
        fi
    done
    if [ "$built" = 1 ]; then
        hello_lines=$(for r in 0 1 2 3; do echo "hello from rank $r of 4"; done)

        run "$MPIEXEC" -n 4 "$WORK/mpich_hello"
        if [ "$RC" -eq 0 ] && [ -z "$ERR" ] && [ "$(sort <<<"$OUT")" = "$hello_lines" ]; then
            ok "MPICH hello (libmpich) under oxmpi's mpiexec -n 4"
        else
            not_ok "MPICH hello (libmpich) under oxmpi's mpiexec -n 4" "$(got)"
        fi

        run "$MPIEXEC" -n 4 "$WORK/mpich_ring"
        if [ "$RC" -eq 0 ] && grep -qx "No Errors" "$WORK/out" && grep -q "^library: MPICH" "$WORK/out"; then
            ok "MPICH ring (libmpich) under oxmpi's mpiexec -n 4"
        else
            not_ok "MPICH ring (libmpich) under oxmpi's mpiexec -n 4" "$(got)"
        fi

        run env LD_LIBRARY_PATH="$PREFIX/lib" "$MPIEXEC" -n 4 "$WORK/mpich_hello"
        if [ "$RC" -eq 0 ] && [ -z "$ERR" ] && [ "$(sort <<<"$OUT")" = "$hello_lines" ]; then
            ok "MPICH-built hello with oxmpi preloaded under oxmpi's mpiexec -n 4"
        else
            not_ok "MPICH-built hello with oxmpi preloaded under oxmpi's mpiexec -n 4" "$(got)"
        fi

        run env LD_LIBRARY_PATH="$PREFIX/lib" "$MPIEXEC" -n 4 "$WORK/mpich_ring"
        if [ "$RC" -eq 0 ] && grep -qx "No Errors" "$WORK/out" && grep -q "^library: oxmpi " "$WORK/out"; then
            ok "MPICH-built ring with oxmpi preloaded under oxmpi's mpiexec -n 4"
        else
            not_ok "MPICH-built ring with oxmpi preloaded under oxmpi's mpiexec -n 4" "$(got)"
        fi
    fi
fi

if [ "$failures" -eq 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
