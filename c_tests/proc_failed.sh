#!/bin/bash
# A rank that fails under `mpiexec -disable-auto-cleanup` (see
# c_tests/proc_failed_prog.c): with MPI_ERRORS_RETURN the others' waits on
# it return MPIX_ERR_PROC_FAILED, they go on among themselves and finalize,
# and mpiexec reports the failure once and exits with its status (3); under
# the default handler the first such error ends the job with a message.
# Both over shared memory and over TCP; nothing may hang or stay behind.
set -u
PREFIX=${OXMPI_PREFIX:?}
ROOT=${OXMPI_ROOT:?}
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/" 2>/dev/null; rm -rf "$dir"' EXIT
"$PREFIX/bin/mpicc" -o "$dir/prog" "$ROOT/c_tests/proc_failed_prog.c" || exit 1
errors=0
fail() {
    echo "$1"
    echo "--- stdout"; cat "$dir/out"; echo "--- stderr"; cat "$dir/err"
    errors=$((errors + 1))
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# report HOW RC MS: a row of docs/reliability.md.
report() {
    local left
    left=$(pgrep -f "$dir/prog" | tr '\n' ' ')
    echo "REPORT|fault|-disable-auto-cleanup, OXMPI_TRANSPORT=$transport: rank 3 of 4 calls _exit(3) while the others wait on it (receive, any-source receive, probe, mprobe, send, ssend, barrier), $1|exit $2 after $3 ms; $4|${left:+processes: }${left:-no process}"
}
for transport in auto tcp; do
    start=$(now_ms)
    OXMPI_TRANSPORT=$transport timeout -k 5 60 "$PREFIX/bin/mpiexec" -disable-auto-cleanup -n 4 \
        "$dir/prog" return > "$dir/out" 2> "$dir/err"
    rc=$?
    ms=$(($(now_ms) - start))
    [ "$rc" = 3 ] || fail "$transport, return: mpiexec exited with $rc, expected 3 (rank 3's exit code)"
    grep -q '^No Errors$' "$dir/out" || fail "$transport, return: the survivors did not finish cleanly"
    n=$(grep -c '^mpiexec: rank 3 (pid [0-9]*) exited with code 3; the job goes on (-disable-auto-cleanup)$' "$dir/err")
    [ "$n" = 1 ] || fail "$transport, return: mpiexec reported rank 3's failure $n times"
    sleep 0.2
    report "under MPI_ERRORS_RETURN" "$rc" "$ms" "$(grep -q '^No Errors$' "$dir/out" && echo "every wait returned MPIX_ERR_PROC_FAILED, the survivors went on and finalized; ")$(head -n 1 "$dir/err")"

    start=$(now_ms)
    OXMPI_TRANSPORT=$transport timeout -k 5 60 "$PREFIX/bin/mpiexec" -disable-auto-cleanup -n 4 \
        "$dir/prog" fatal > "$dir/out" 2> "$dir/err"
    rc=$?
    ms=$(($(now_ms) - start))
    if [ "$rc" = 0 ] || [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        fail "$transport, fatal: mpiexec exited with $rc (expected the job to end with an error)"
    fi
    grep -q '^oxmpi: rank 0: MPI_Recv: .*failed.*MPIX_ERR_PROC_FAILED' "$dir/err" ||
        fail "$transport, fatal: no message naming MPIX_ERR_PROC_FAILED"
    if grep -q 'did not end the job' "$dir/out"; then
        fail "$transport, fatal: a rank went on after the fatal error"
    fi
    sleep 0.2
    report "under the default handler" "$rc" "$ms" "$(grep -m1 '^oxmpi: ' "$dir/err")"
    if pgrep -f "$dir/prog" > /dev/null; then
        fail "$transport: ranks left running"
    fi
done
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
