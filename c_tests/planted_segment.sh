#!/bin/bash
# A stranger who guessed a rank's shared-memory name and planted something
# there first (a symlink to a file of the victim's, or a file of its own):
# with named segments (OXMPI_SHM_SEGMENTS=named) the rank's MPI_Init fails
# cleanly, naming the segment (O_EXCL: the plant is neither followed nor
# used), the job ends with an error, the file the symlink points to is
# untouched and no process is left; with the default anonymous segments
# there is no name to plant and the job runs. Each rank's plant is made by
# a wrapper that knows the job id (what the stranger would have guessed).
set -u
PREFIX=${OXMPI_PREFIX:?}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/sum.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, v = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("sum %d\n", v);
    MPI_Finalize();
    return 0;
}
C
"$PREFIX/bin/mpicc" -o "$dir/sum" "$dir/sum.c" || exit 1
echo "the victim's data" > "$dir/victim"
errors=0
# run SEGMENTS PLANT: 2 ranks; rank 1 first plants PLANT (symlink or file)
# at the name of its epoch-1 inbox.
run() {
    OXMPI_SHM_SEGMENTS=$1 PLANT=$2 VICTIM=$dir/victim timeout -k 5 30 "$MPIEXEC" -n 2 sh -c '
        if [ "$PMI_RANK" = 1 ]; then
            name=/dev/shm/oxmpi-${OXMPI_JOBID}-e1-r1
            if [ "$PLANT" = symlink ]; then ln -s "$VICTIM" "$name"; else echo planted > "$name"; fi
            echo "$name" > "$0.name"
        fi
        exec "$0"' "$dir/sum" > "$dir/out" 2> "$dir/err"
    RC=$?
    NAME=$(cat "$dir/sum.name" 2>/dev/null)
    rm -f "$dir/sum.name"
}
left_after() { # what of the plant and the job is left
    local left=()
    [ -n "$NAME" ] && { [ -e "$NAME" ] || [ -L "$NAME" ]; } && left+=("the planted $NAME")
    pgrep -f "$dir/sum" > /dev/null && left+=("processes: $(pgrep -f "$dir/sum" | tr '\n' ' ')")
    if [ ${#left[@]} = 0 ]; then echo nothing; else echo "${left[*]}"; fi
}
for plant in symlink file; do
    run named "$plant"
    line=$(grep '^oxmpi: ' "$dir/err" | head -n 1)
    left=$(left_after)
    echo "REPORT|attack|named segments: a $plant planted at a rank's inbox name|exit $RC: $line|$left"
    if [ "$RC" = 0 ] || [ "$RC" = 124 ]; then
        echo "not ok - named, planted $plant: exit $RC"; errors=$((errors + 1))
    elif ! [[ $line =~ ^oxmpi:\ rank\ 1:\ MPI_Init:\ .*oxmpi-.*-e1-r1.*File\ exists ]]; then
        echo "not ok - named, planted $plant: stderr $(cat "$dir/err")"; errors=$((errors + 1))
    elif [ "$(cat "$dir/victim")" != "the victim's data" ]; then
        echo "not ok - named, planted $plant: the symlink's target changed"; errors=$((errors + 1))
    elif pgrep -f "$dir/sum" > /dev/null; then
        echo "not ok - named, planted $plant: processes left"; errors=$((errors + 1))
    else
        echo "ok - named, planted $plant: $line"
    fi
    [ -n "$NAME" ] && rm -f "$NAME"
done
run auto symlink
echo "REPORT|attack|anonymous segments (default): a symlink planted at the name a named inbox would have|exit $RC, $(cat "$dir/out"): no name is used|$(left_after | sed 's/^nothing$/nothing of the job/')"
if [ "$RC" != 0 ] || ! grep -qx "sum 2" "$dir/out"; then
    echo "not ok - anonymous segments with a plant: exit $RC, $(cat "$dir/out" "$dir/err")"; errors=$((errors + 1))
else
    echo "ok - anonymous segments ignore the plant"
fi
[ -n "$NAME" ] && rm -f "$NAME"
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
