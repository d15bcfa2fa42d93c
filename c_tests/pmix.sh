#!/usr/bin/env bash
# oxmpi programs under PMIx launchers, the library speaking PMIx through
# Debian's libpmix2 (loaded at run time):
# - Slurm's `srun --mpi=pmix` on the local Slurm (tools/slurm_local.sh;
#   started here, and stopped after, if it is not running): p2p_basic,
#   sessions_basic, reinit_skew and reinit_world with 2 and 4 tasks on one
#   node (`-N 1`) and 4 tasks on two nodes (`-N 2`: ranks of different
#   nodes talk over TCP; PMIx's PMIX_LOCAL_PEERS says which share one);
#   MPI_Publish_name there fails saying that Slurm's PMIx server has no
#   name service;
# - Open MPI's `mpirun.openmpi -n 2/4 --oversubscribe` (its daemons serve
#   PMIx; the programs are built with oxmpi's mpicc, so Open MPI's own
#   libmpi is never loaded): the same tests, and dynamic (ports, accept/
#   connect, join, and the name service through PMIx_Publish/Lookup/
#   Unpublish, which Open MPI's server keeps).
# Under each: every rank says it connected with PMIx (OXMPI_LOG), so no case
# passes as a singleton or over another interface; 100 epochs leave as
# many descriptors and threads as one (reinit_resources, its
# MPIR_CVAR_FINALIZE_ATEXIT form: PMIx stays initialized across epochs);
# MPI_Abort(7) ends the job with status 7; and with the PMIx library missing
# (OXMPI_PMIX_LIBRARY=/nonexistent) MPI_Init fails saying so.
# Each C test run must exit 0 with rank 0 printing `No Errors`, and nothing
# of oxmpi's own on its output.
# A launcher that is not here (Slurm needs root, Debian's slurmctld, slurmd,
# slurm-client and munge; Open MPI needs openmpi-bin) is skipped with a
# notice; exit 77 when libpmix2 is missing or neither launcher is here.
#
# Usage: c_tests/pmix.sh   (OXMPI_PREFIX: the install to test, default
#                           build/stage)
# Prints `ok - name` or `not ok - name: why` per case, then `No Errors` and
# exits 0 if everything passed, else exits 1.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
LIMIT=60
failures=0

if ! ldconfig -p 2>/dev/null | grep -q 'libpmix\.so\.2 '; then
    echo "skipped: libpmix.so.2 is not installed (Debian: libpmix2)"
    exit 77
fi

# Which launchers are here.
slurm=1
slurm_why=""
if [ "$(id -u)" != 0 ]; then
    slurm=0; slurm_why="the local Slurm (tools/slurm_local.sh) needs root"
fi
for c in srun sinfo slurmctld slurmd munged; do
    if [ "$slurm" = 1 ] && ! command -v "$c" >/dev/null 2>&1; then
        slurm=0; slurm_why="$c is not installed (Debian: slurmctld slurmd slurm-client munge)"
    fi
done
openmpi=1
if ! command -v mpirun.openmpi >/dev/null 2>&1; then
    openmpi=0
fi
if [ "$slurm" = 0 ] && [ "$openmpi" = 0 ]; then
    echo "skipped: no PMIx launcher: $slurm_why; mpirun.openmpi is not installed (Debian: openmpi-bin)"
    exit 77
fi

started_here=0
if [ "$slurm" = 1 ]; then
    # A Slurm this test starts, it stops at the end (one already up is left).
    "$ROOT/tools/slurm_local.sh" status || started_here=1
    if ! start_err=$("$ROOT/tools/slurm_local.sh" start 2>&1); then
        [ "$started_here" = 1 ] && "$ROOT/tools/slurm_local.sh" stop
        started_here=0
        slurm=0
        slurm_why="the local Slurm did not start: $(echo "$start_err" | tail -n 1)"
    else
        eval "$("$ROOT/tools/slurm_local.sh" env)"
        if ! srun --mpi=list 2>&1 | grep -qw pmix; then
            slurm=0
            slurm_why="this Slurm has no pmix plugin (srun --mpi=list)"
        fi
    fi
fi
if [ "$slurm" = 0 ] && [ "$openmpi" = 0 ]; then
    [ "$started_here" = 1 ] && "$ROOT/tools/slurm_local.sh" stop
    echo "skipped: $slurm_why; mpirun.openmpi is not installed (Debian: openmpi-bin)"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-pmix-test.XXXXXX")
cleanup() {
    rm -rf "$WORK"
    [ "$started_here" = 1 ] && "$ROOT/tools/slurm_local.sh" stop
}
trap cleanup EXIT

. "$ROOT/c_tests/launch_checks.sh"

[ "$slurm" = 0 ] && echo "notice: not under Slurm: $slurm_why"
[ "$openmpi" = 0 ] && echo "notice: not under Open MPI: mpirun.openmpi is not installed (Debian: openmpi-bin)"

if [ ! -x "$PREFIX/bin/mpicc" ]; then
    not_ok "setup" "$PREFIX/bin/mpicc is missing (make stage)"
    exit 1
fi
for t in p2p_basic sessions_basic reinit_skew reinit_world reinit_resources dynamic abort_pmix publish_probe; do
    src=$ROOT/c_tests/$t.c
    [ "$t" = abort_pmix ] && src=$ROOT/c_tests/launcher/mpi_abort7.c
    [ "$t" = publish_probe ] && src=$ROOT/c_tests/launcher/publish_probe.c
    if ! "$PREFIX/bin/mpicc" -O1 -I "$ROOT/c_tests" -o "$WORK/$t" "$src" 2>"$WORK/cc.err"; then
        not_ok "build $t with oxmpi's mpicc" "$(head -c 600 "$WORK/cc.err")"
    fi
done

# Each test with its environment and arguments as in c_tests/testlist.
tests=(
    "p2p_basic"
    "sessions_basic OXMPI_INITIAL_ERRHANDLER=return"
    "reinit_skew -- 4"
    "reinit_world"
)
# Under Open MPI's mpirun only: its server has a name service (Slurm's
# has none; `checks` makes sure the error says so).
mpirun_tests=(
    "dynamic"
)

# launch N WHERE ENV... -- PROGRAM ARGS...: runs PROGRAM on N processes
# under the launcher WHERE names (`srun LAYOUT` or `mpirun`), with ENV.
launch() {
    local where=$1
    shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    if [ "$where" = mpirun ]; then
        local n=$1
        shift
        local exports=()
        for e in "${envs[@]}"; do exports+=(-x "$e"); done
        run env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            mpirun.openmpi -n "$n" --oversubscribe "${exports[@]}" "$@"
    else
        # shellcheck disable=SC2086 # $where is srun's layout words
        run env "${envs[@]}" srun $where --mpi=pmix "$@"
    fi
}

# c_tests WHERE N LABEL: the C tests under one launcher and layout.
c_tests() {
    local where=$1 n=$2 label=$3 specs=("${tests[@]}")
    [ "$where" = mpirun ] && specs+=("${mpirun_tests[@]}")
    for spec in "${specs[@]}"; do
        read -r -a words <<< "$spec"
        local name=${words[0]} envs=() args=() in_args=0
        for w in "${words[@]:1}"; do
            if [ "$in_args" = 1 ]; then args+=("$w")
            elif [ "$w" = -- ]; then in_args=1
            else envs+=("$w")
            fi
        done
        [ -x "$WORK/$name" ] || continue
        if [ "$where" = mpirun ]; then
            launch mpirun "${envs[@]}" -- "$n" "$WORK/$name" "${args[@]}"
        else
            launch "$where" "${envs[@]}" -- "$WORK/$name" "${args[@]}"
        fi
        passes_c_test "$name under $label${envs:+, ${envs[*]}}${args:+ args ${args[*]}}"
    done
}

# checks WHERE N LABEL: every rank connected over PMIx; MPI_Abort's code
# is the job's status; a missing PMIx library is a clear error.
checks() {
    local where=$1 n=$2 label=$3 head=()
    [ "$where" = mpirun ] && head=("$n")
    local log=oxmpi::bootstrap::pmi=debug
    if [ -x "$WORK/p2p_basic" ]; then
        case_name="p2p_basic under $label: every rank connected with PMIx"
        launch "$where" OXMPI_LOG=$log -- "${head[@]}" "$WORK/p2p_basic"
        connected=$(grep -c 'PMIx connected' "$WORK/err")
        if [ "$RC" -ne 0 ] || ! grep -qx "No Errors" "$WORK/out"; then
            not_ok "$case_name" "$(got)"
        elif [ "$connected" != "$n" ]; then
            not_ok "$case_name" "$connected of $n ranks said they connected with PMIx"
        else
            ok "$case_name"
        fi
        case_name="p2p_basic under $label without the PMIx library: MPI_Init says so"
        launch "$where" OXMPI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 -- "${head[@]}" "$WORK/p2p_basic"
        if [ "$RC" -ne 0 ] && ! grep -qx "No Errors" "$WORK/out" \
            && grep -q 'PMIx library cannot be used: cannot load /nonexistent/libpmix.so.2' "$WORK/err"; then
            ok "$case_name"
        else
            not_ok "$case_name" "$(got)"
        fi
    fi
    # PMIx stays initialized across epochs (README): its descriptors and
    # thread must not grow with epochs (the FINALIZE_ATEXIT form of the
    # check compares the first cycle with the last).
    if [ -x "$WORK/reinit_resources" ]; then
        local two="srun -N 1 -n 2 --mpi=pmix"
        if [ "$where" = mpirun ]; then
            two="mpirun.openmpi -n 2"
            launch mpirun MPIR_CVAR_FINALIZE_ATEXIT=1 -- 2 "$WORK/reinit_resources" 100
        else
            launch "-N 1 -n 2" MPIR_CVAR_FINALIZE_ATEXIT=1 -- "$WORK/reinit_resources" 100
        fi
        passes_c_test "reinit_resources, 100 epochs under $two: no growth"
    fi
    if [ -x "$WORK/publish_probe" ] && [ "$where" != mpirun ]; then
        case_name="MPI_Publish_name under $label (no name service there) says so"
        launch "$where" -- "${head[@]}" "$WORK/publish_probe"
        if [ "$RC" = 0 ] && grep -q "^publish: .*this PMIx server has no name service" "$WORK/out"; then
            ok "$case_name"
        else
            not_ok "$case_name" "$(got)"
        fi
    fi
    if [ -x "$WORK/abort_pmix" ]; then
        case_name="MPI_Abort(7) under $label ends the job with status 7"
        launch "$where" -- "${head[@]}" "$WORK/abort_pmix"
        if [ "$RC" = 7 ] && grep -q "MPI_Abort(MPI_COMM_WORLD, 7)" "$WORK/err"; then
            ok "$case_name"
        else
            not_ok "$case_name" "$(got)"
        fi
    fi
}

if [ "$slurm" = 1 ]; then
    layouts=("-N 1 -n 2" "-N 1 -n 4")
    # Two slurmds on one host share /tmp unless each has its own TmpFS
    # (tools/slurm_local.sh writes one; a Slurm started by an older copy
    # has not).
    if grep -q '^TmpFS=.*%n' "${SLURM_CONF:-/nonexistent}" 2>/dev/null; then
        layouts+=("-N 2 -n 4")
    else
        echo "notice: not on two Slurm nodes: the running local Slurm has no TmpFS per node (restart it with tools/slurm_local.sh)"
    fi
    for layout in "${layouts[@]}"; do
        c_tests "$layout" "${layout##* }" "srun $layout --mpi=pmix"
    done
    checks "-N 1 -n 3" 3 "srun -n 3 --mpi=pmix"
    if [[ " ${layouts[*]} " == *"-N 2 -n 4"* ]] && [ -x "$WORK/p2p_basic" ]; then
        case_name="p2p_basic on two nodes under srun --mpi=pmix: ranks of different nodes connect over TCP"
        run env OXMPI_LOG=oxmpi::transport::tcp=debug srun -N 2 -n 4 --mpi=pmix "$WORK/p2p_basic"
        tcp=$(cat "$WORK/out" "$WORK/err" | grep -cE 'tcp [0-9]+: connected to process')
        if [ "$RC" -ne 0 ] || ! grep -qx "No Errors" "$WORK/out"; then
            not_ok "$case_name" "$(got)"
        elif [ "$tcp" = 0 ]; then
            not_ok "$case_name" "no TCP connection between the nodes"
        else
            ok "$case_name"
        fi
    fi
fi

if [ "$openmpi" = 1 ]; then
    for n in 2 4; do
        c_tests mpirun "$n" "mpirun.openmpi -n $n"
    done
    checks mpirun 3 "mpirun.openmpi -n 3"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures case(s) failed"
    exit 1
fi
echo "No Errors"
