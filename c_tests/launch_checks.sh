# Sourced by the shell tests that run oxmpi programs under a launcher
# (pmi2_launch.sh, hydra_pmi2.sh, slurm.sh, pmix.sh): reporting one case, running
# one command, and judging a C test's run. The sourcing script sets WORK
# (a scratch folder) and LIMIT (seconds per run), and counts failures in
# `failures`.

ok() { echo "ok - $1"; }
not_ok() {
    echo "not ok - $1: $2"
    failures=$((failures + 1))
}

# The ranks must see no launcher variables of an outer job.
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE PMI_JOBID OXMPI_JOBID OXMPI_JOB_SECRET \
    MPI_LOCALNRANKS MPI_LOCALRANKID OXMPI_PSETS OXMPI_LOG OXMPI_PMI
# Nor an outer PMIx job's (the library would take it for its launcher).
unset OXMPI_PMIX_LIBRARY "${!PMIX_@}"

# run COMMAND...: runs it under `timeout LIMIT`; RC, $WORK/out, $WORK/err.
run() {
    timeout -k 5 "$LIMIT" "$@" </dev/null >"$WORK/out" 2>"$WORK/err"
    RC=$?
}
got() { printf 'exit %s, output %q, stderr %q' "$RC" "$(tail -c 600 "$WORK/out")" "$(tail -c 600 "$WORK/err")"; }

# passes_c_test NAME: the last run exited 0, rank 0 printed `No Errors`,
# and nothing of oxmpi's or its launcher's own was printed.
passes_c_test() {
    if [ "$RC" -ne 0 ] || ! grep -qx "No Errors" "$WORK/out"; then
        not_ok "$1" "$(got)"
    elif grep -qE '^(oxmpi:|mpiexec:|\[(TRACE|DEBUG|INFO|WARN|ERROR))' "$WORK/out" "$WORK/err"; then
        not_ok "$1" "diagnostics in a correct run: $(got)"
    else
        ok "$1"
    fi
}
