#!/bin/bash
# Profiling through the PMPI interface, and the drop-in path proven by the
# dynamic linker:
# - a tool library (the way mpiP and other profilers work: it defines
#   MPI_Send, MPI_Recv and MPI_Finalize, counts, and calls PMPI_*),
#   preloaded in front of oxmpi, sees every call of a program built with
#   oxmpi's mpicc, and of one built with MPICH's mpicc.mpich and run on
#   oxmpi through LD_PRELOAD; the counts it prints at MPI_Finalize are
#   exact and the program's results right;
# - LD_DEBUG=bindings of the preloaded MPICH-built program: every MPI_* and
#   PMPI_* symbol binds to oxmpi's library, none to libmpich.
# The MPICH-built parts are skipped (with a notice) without mpicc.mpich.
set -u
PREFIX=${OXMPI_PREFIX:?}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/tool.c" <<'C'
/* A PMPI tool: counts MPI_Send and MPI_Recv calls and bytes sent. */
#include <mpi.h>
#include <stdio.h>
static long sends, recvs, bytes;
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    int size;
    PMPI_Type_size(type, &size);
    sends++;
    bytes += (long)count * size;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *st) {
    recvs++;
    return PMPI_Recv(buf, count, type, source, tag, comm, st);
}
int MPI_Finalize(void) {
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("tool: rank %d: %ld MPI_Send (%ld bytes), %ld MPI_Recv\n", rank, sends, bytes, recvs);
    fflush(stdout);
    return PMPI_Finalize();
}
C
cat > "$dir/app.c" <<'C'
/* 2 ranks: rank 0 sends 10 messages of 3 ints, rank 1 receives and checks. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, v[3], bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            v[0] = i; v[1] = 2 * i; v[2] = 3 * i;
            MPI_Send(v, 3, MPI_INT, 1, i, MPI_COMM_WORLD);
        } else {
            MPI_Recv(v, 3, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += v[0] != i || v[1] != 2 * i || v[2] != 3 * i;
        }
    }
    if (rank == 1) printf("app: %d wrong messages\n", bad);
    MPI_Finalize();
    return 0;
}
C
errors=0
fail() { echo "not ok - $1"; errors=$((errors + 1)); }
# The tool is built against oxmpi's header; the MPICH ABI makes it the
# same library for MPICH-built programs.
"$PREFIX/bin/mpicc" -shared -fPIC -o "$dir/libtool.so" "$dir/tool.c" || exit 1
"$PREFIX/bin/mpicc" -o "$dir/app_oxmpi" "$dir/app.c" || exit 1

# counts OUTPUT LABEL: the tool's lines and the app's result are right.
counts() {
    if ! grep -qx 'tool: rank 0: 10 MPI_Send (120 bytes), 0 MPI_Recv' "$1" \
        || ! grep -qx 'tool: rank 1: 0 MPI_Send (0 bytes), 10 MPI_Recv' "$1" \
        || ! grep -qx 'app: 0 wrong messages' "$1"; then
        fail "$2: output $(tr '\n' '|' < "$1")"
    else
        echo "ok - $2: the tool counted every call"
    fi
}

LD_PRELOAD="$dir/libtool.so" timeout -k 5 30 "$MPIEXEC" -n 2 "$dir/app_oxmpi" > "$dir/out1" 2>&1
counts "$dir/out1" "oxmpi-built program, tool preloaded"

if command -v mpicc.mpich > /dev/null; then
    mpicc.mpich -o "$dir/app_mpich" "$dir/app.c" || exit 1
    lib=$PREFIX/lib/libmpi.so.12
    LD_PRELOAD="$dir/libtool.so $lib" timeout -k 5 30 "$MPIEXEC" -n 2 "$dir/app_mpich" > "$dir/out2" 2>&1
    counts "$dir/out2" "MPICH-built program on oxmpi (LD_PRELOAD), tool in front"

    # Who binds MPI symbols: oxmpi's library only (the program still names
    # libmpich.so.12, which the loader loads but nothing may use).
    LD_DEBUG=bindings LD_DEBUG_OUTPUT="$dir/bind" LD_PRELOAD="$lib" \
        timeout -k 5 30 "$MPIEXEC" -n 2 "$dir/app_mpich" > "$dir/out3" 2>&1
    real_lib=$(readlink -f "$lib")
    mpi_bindings=$(cat "$dir"/bind.* 2>/dev/null | grep -E "normal symbol \`P?MPIX?_" || true)
    to_oxmpi=$(grep -c -e "to $real_lib " -e "to $lib " <<< "$mpi_bindings")
    to_mpich=$(grep -E "to [^ ]*libmpich[^ ]* " <<< "$mpi_bindings" | grep -v -e "$real_lib" -e "$PREFIX/" || true)
    if ! grep -qx 'app: 0 wrong messages' "$dir/out3"; then
        fail "LD_DEBUG run: $(tr '\n' '|' < "$dir/out3")"
    elif [ "$to_oxmpi" -lt 4 ]; then
        fail "only $to_oxmpi MPI symbol bindings to oxmpi's library ($real_lib) were seen"
    elif [ -n "$to_mpich" ]; then
        fail "MPI symbols bound to libmpich: $(head -n 3 <<< "$to_mpich")"
    else
        echo "ok - LD_DEBUG=bindings: $to_oxmpi MPI symbol bindings, all to $real_lib, none to libmpich"
    fi
else
    echo "notice: mpicc.mpich is not installed (Debian package libmpich-dev): the MPICH-built cases are not run"
fi
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
