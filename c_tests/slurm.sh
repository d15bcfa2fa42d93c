#!/usr/bin/env bash
# oxmpi programs under Slurm's `srun --mpi=pmi2` on a local Slurm
# (tools/slurm_local.sh; started here, and stopped after, if it is not
# running; two slurmds on this host stand for two nodes): p2p_basic,
# sessions_basic, reinit_skew and reinit_world at 2, 4 and 16 tasks on
# one node (`-N 1`), and on two nodes (`-N 2`, 4 tasks) where ranks of
# different nodes must talk over TCP (Slurm's PMI_process_mapping says
# where each rank is; every node has the same host name, so only that
# tells them apart); each with the library
# speaking PMI-1 (the default; Slurm's pmi2 plugin answers both wires) and
# PMI-2 (OXMPI_PMI=2). Each run must exit 0 with rank 0 printing
# `No Errors`, and nothing of oxmpi's own on its output.
# Skipped (exit 77, saying why) when not root, when Slurm or munge is not
# installed, or when the local Slurm cannot be started.
#
# Usage: c_tests/slurm.sh   (OXMPI_PREFIX: the install to test, default
#                            build/stage)
# Prints `ok - name` or `not ok - name: why` per case, then `No Errors` and
# exits 0 if everything passed, else exits 1.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
LIMIT=60
failures=0

if [ "$(id -u)" != 0 ]; then
    echo "skipped: the local Slurm (tools/slurm_local.sh) needs root"
    exit 77
fi
for c in srun sinfo slurmctld slurmd munged; do
    if ! command -v "$c" >/dev/null 2>&1; then
        echo "skipped: $c is not installed (Debian: slurmctld slurmd slurm-client munge)"
        exit 77
    fi
done
# A Slurm this test starts, it stops at the end (one already up is left).
started_here=0
"$ROOT/tools/slurm_local.sh" status || started_here=1
if ! start_err=$("$ROOT/tools/slurm_local.sh" start 2>&1); then
    [ "$started_here" = 1 ] && "$ROOT/tools/slurm_local.sh" stop
    echo "$start_err"
    echo "skipped: the local Slurm did not start: $(echo "$start_err" | tail -n 1)"
    exit 77
fi
eval "$("$ROOT/tools/slurm_local.sh" env)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-slurm-test.XXXXXX")
cleanup() {
    rm -rf "$WORK"
    [ "$started_here" = 1 ] && "$ROOT/tools/slurm_local.sh" stop
}
trap cleanup EXIT

. "$ROOT/c_tests/launch_checks.sh"

if [ ! -x "$PREFIX/bin/mpicc" ]; then
    not_ok "setup" "$PREFIX/bin/mpicc is missing (make stage)"
    exit 1
fi
# Each test with its environment and arguments as in c_tests/testlist.
tests=(
    "p2p_basic"
    "sessions_basic OXMPI_INITIAL_ERRHANDLER=return"
    "reinit_skew -- 4"
    "reinit_world"
)
for t in p2p_basic sessions_basic reinit_skew reinit_world; do
    if ! "$PREFIX/bin/mpicc" -O1 -I "$ROOT/c_tests" -o "$WORK/$t" "$ROOT/c_tests/$t.c" 2>"$WORK/cc.err"; then
        not_ok "build $t with oxmpi's mpicc" "$(head -c 600 "$WORK/cc.err")"
    fi
done

for pmi in 1 2; do
    for layout in "-N 1 -n 2" "-N 1 -n 4" "-N 1 -n 16" "-N 2 -n 4"; do
        for spec in "${tests[@]}"; do
            read -r -a words <<< "$spec"
            name=${words[0]}
            envs=(OXMPI_PMI="$pmi")
            args=()
            in_args=0
            for w in "${words[@]:1}"; do
                if [ "$in_args" = 1 ]; then args+=("$w")
                elif [ "$w" = -- ]; then in_args=1
                else envs+=("$w")
                fi
            done
            [ -x "$WORK/$name" ] || continue
            # shellcheck disable=SC2086 # $layout is four words
            run env "${envs[@]}" srun $layout --mpi=pmi2 "$WORK/$name" "${args[@]}"
            passes_c_test "$name under srun $layout --mpi=pmi2, ${envs[*]}${args:+ args ${args[*]}}"
        done
    done
    # With OXMPI_LOG: on two nodes ranks connect over TCP (Slurm's block
    # placement puts ranks 0-2 on the first node, 3 on the second), on one
    # node none does (shared memory); with OXMPI_PMI=2 every rank says it
    # connected with PMI-2 (so those cases did not pass by speaking PMI-1).
    if [ -x "$WORK/p2p_basic" ]; then
        log=oxmpi::transport::tcp=debug,oxmpi::bootstrap::pmi=debug
        for nodes in 1 2; do
            case_name="p2p_basic on $nodes node(s), OXMPI_PMI=$pmi: TCP only between nodes"
            run env OXMPI_PMI="$pmi" OXMPI_LOG=$log srun -N "$nodes" -n 4 --mpi=pmi2 "$WORK/p2p_basic"
            tcp=$(cat "$WORK/out" "$WORK/err" | grep -cE 'tcp [0-9]+: connected to process')
            pmi2=$(grep -c 'PMI-2 connected' "$WORK/err")
            if [ "$RC" -ne 0 ] || ! grep -qx "No Errors" "$WORK/out"; then
                not_ok "$case_name" "$(got)"
            elif [ "$nodes" = 1 ] && [ "$tcp" != 0 ]; then
                not_ok "$case_name" "$tcp TCP connections on one node"
            elif [ "$nodes" = 2 ] && [ "$tcp" = 0 ]; then
                not_ok "$case_name" "no TCP connection between the nodes"
            elif [ "$pmi" = 2 ] && [ "$pmi2" != 4 ]; then
                not_ok "$case_name" "$pmi2 of 4 ranks said they connected with PMI-2"
            else
                ok "$case_name"
            fi
        done
    fi
done

if [ "$failures" -ne 0 ]; then
    echo "$failures case(s) failed"
    exit 1
fi
echo "No Errors"
