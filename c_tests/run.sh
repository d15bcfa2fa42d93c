#!/bin/bash
# Runs the C test list (c_tests/testlist). Each line:
#   name  ranks  [VAR=value ...]  [hosts=a:2,b:2]  [-- program arguments ...]
# `name` is c_tests/<name>.c, built with the installed mpicc and run with
# `mpiexec -n ranks` (with `hosts=`, on those simulated hosts: `-hosts
# a:2,b:2 -launcher fork -hostname-env OXMPI_HOSTNAME`, so that ranks of
# different hosts talk over TCP); it passes when it exits 0 and prints a line
# "No Errors" (rank 0 prints it). A name ending in .sh is a script run
# as is (same rule; exit 77 means skipped). A name `abi:<name>` is
# c_tests/<name>.c built with `mpicc -mpi-abi` (against the MPI 5.0
# standard ABI's header, linked to libmpi_abi.so.1).
# Environment: OXMPI_PREFIX (the install to test, default build/stage),
# MPIEXEC (launcher, default $OXMPI_PREFIX/bin/mpiexec), OXMPI_TEST_TIMEOUT
# (seconds per test, default 120), TESTS (only these names),
# OXMPI_TEST_EXTRA_ENV (VAR=value words added to every C test's
# environment, e.g. OXMPI_TRANSPORT=tcp for the TCP pass; a test's own
# settings win), OXMPI_TEST_SKIP_SCRIPTS=1 (run only the C tests),
# OXMPI_TEST_LABEL (a word added to every result line, e.g. "debug"),
# OXMPI_TEST_REPORT (a file: every line `REPORT|area|tried|happened|left`
# a test prints is appended to it after the test's label, and its result
# unless it passed; tools/reliability_report.py makes docs/reliability.md's
# tables of them).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
TIMEOUT=${OXMPI_TEST_TIMEOUT:-120}
# Binaries and outputs per install tested: a binary's rpath names its install.
BUILD=$ROOT/build/c_tests/$(basename "$PREFIX")
mkdir -p "$BUILD"
export OXMPI_ROOT=$ROOT OXMPI_PREFIX=$PREFIX MPIEXEC
status=0
# Lines of the list that name a test; each must be read (a test that reads
# stdin could eat the rest of the list).
listed=$(sed 's/#.*//' c_tests/testlist | grep -c '[^[:space:]]')
seen=0

while read -r line; do
    line=${line%%#*}
    [ -z "${line// }" ] && continue
    seen=$((seen + 1))
    read -r -a words <<< "$line"
    name=${words[0]}
    ranks=${words[1]:-1}
    envs=()
    args=()
    hosts=()
    if [[ "$name" == *.sh ]] && [ "${OXMPI_TEST_SKIP_SCRIPTS:-0}" = 1 ]; then
        continue
    fi
    if [[ "$name" != *.sh ]]; then
        for w in ${OXMPI_TEST_EXTRA_ENV:-}; do envs+=("$w"); done
    fi
    in_args=0
    for w in "${words[@]:2}"; do
        if [ "$in_args" = 1 ]; then args+=("$w")
        elif [ "$w" = "--" ]; then in_args=1
        elif [[ "$w" == hosts=* ]]; then
            hosts=(-hosts "${w#hosts=}" -launcher fork -hostname-env OXMPI_HOSTNAME)
        else envs+=("$w")
        fi
    done
    if [ -n "${TESTS:-}" ] && [[ " $TESTS " != *" $name "* ]]; then
        continue
    fi
    where=${hosts[1]:-}
    label="$name (n=$ranks${envs:+ ${envs[*]}}${where:+ hosts=$where}${OXMPI_TEST_LABEL:+ ${OXMPI_TEST_LABEL}})"
    out=$BUILD/$(echo "$name.$ranks.${envs[*]:-}.$where.${OXMPI_TEST_LABEL:-}" | tr '/ =:,' '_____').out
    if [[ "$name" == *.sh ]]; then
        # stdin from /dev/null: a launcher forwarding stdin must not eat the list.
        timeout -k 5 "$TIMEOUT" env "${envs[@]}" bash "c_tests/$name" "${args[@]}" < /dev/null > "$out" 2>&1
        rc=$?
    else
        src=$name
        abi_flags=()
        lib=$PREFIX/lib/liboxmpi.so
        if [[ "$name" == abi:* ]]; then
            src=${name#abi:}
            abi_flags=(-mpi-abi)
            lib=$PREFIX/lib/libmpi_abi.so.1
        fi
        exe=$BUILD/${name/:/\/}
        mkdir -p "$(dirname "$exe")"
        if [ ! -x "$exe" ] || [ "c_tests/$src.c" -nt "$exe" ] || [ "$lib" -nt "$exe" ]; then
            if ! "$PREFIX/bin/mpicc" "${abi_flags[@]}" -Wall -Werror -O1 -g -I c_tests "c_tests/$src.c" -o "$exe" > "$out" 2>&1; then
                echo "FAIL $label"
                echo "--- FAIL $label: does not compile"; cat "$out"
                status=1
                continue
            fi
        fi
        timeout -k 5 "$TIMEOUT" env "${envs[@]}" "$MPIEXEC" -n "$ranks" "${hosts[@]}" "$exe" "${args[@]}" < /dev/null > "$out" 2>&1
        rc=$?
    fi
    if [ "$rc" = 77 ]; then
        verdict=SKIP
        echo "SKIP $label: $(tail -n 1 "$out")"
    elif [ "$rc" = 0 ] && grep -qx "No Errors" "$out"; then
        verdict=PASS
        # Quiet by default: a correct run prints nothing of oxmpi's own.
        if [[ "$name" != *.sh ]] && [[ " ${envs[*]:-} " != *OXMPI_LOG* ]] \
            && grep -qE '^(oxmpi:|\[(TRACE|DEBUG|INFO|WARN|ERROR)|mpiexec:)' "$out"; then
            verdict=FAIL
            echo "FAIL $label"
            echo "--- FAIL $label: oxmpi printed diagnostics in a correct run"
            grep -E '^(oxmpi:|\[|mpiexec:)' "$out" | head -n 10
            status=1
        else
            echo "PASS $label"
        fi
    else
        verdict=FAIL
        echo "FAIL $label"
        echo "--- FAIL $label: exit $rc$([ "$rc" = 124 ] && echo ' (timed out)')"
        tail -n 40 "$out"
        status=1
    fi
    # The rows of docs/reliability.md this test printed, after its label.
    if [ -n "${OXMPI_TEST_REPORT:-}" ]; then
        tag=$label
        [ "$verdict" = PASS ] || tag="$label: $verdict"
        grep '^REPORT|' "$out" | sed "s#^REPORT#${tag//#/_}#" >> "$OXMPI_TEST_REPORT"
    fi
done < c_tests/testlist
if [ "$seen" != "$listed" ]; then
    echo "FAIL c_tests/run.sh: read $seen of the $listed tests listed"
    status=1
fi
exit $status
