#!/bin/bash
# make check: Rust unit tests, the generated header's freshness, then the C
# test list (c_tests/testlist). Ends with one line "N passed, M failed".
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
STAGE=$ROOT/build/stage
passed=0
failed=0
skipped=0
failures=()

# A section's heading, with the seconds since the start (CI must stay
# under 40 minutes: the headings show where the time goes).
section() { echo "== $* [${SECONDS} s]"; }

record() { # name status(0 pass, 77 skip, else fail)
    case "$2" in
        0) passed=$((passed + 1)); echo "PASS $1" ;;
        77) skipped=$((skipped + 1)); echo "SKIP $1" ;;
        *) failed=$((failed + 1)); failures+=("$1"); echo "FAIL $1" ;;
    esac
}

mkdir -p build
section "Rust unit tests"
cargo test --release > build/unit-tests.log 2>&1
status=$?
grep -E '^test result:|FAILED|panicked' build/unit-tests.log | tail -n 30
record "rust-unit-tests" "$status"

section "cargo fmt --check, cargo clippy -D warnings"
cargo fmt --check > build/fmt.log 2>&1
record "rustfmt" "$?"
cargo clippy --release --all-targets --quiet -- -D warnings > build/clippy.log 2>&1
status=$?
# The standard-ABI build (its own entry points and callback conversions).
cargo clippy --release --lib --features standard-abi --target-dir target/stdabi --quiet -- -D warnings \
    >> build/clippy.log 2>&1 || status=1
[ "$status" = 0 ] || tail -n 40 build/clippy.log
record "clippy" "$status"

section "layers: no module uses a higher layer (tools/check_layers.py)"
python3 tools/check_layers.py --self-test > build/layers.log 2>&1 && python3 tools/check_layers.py >> build/layers.log 2>&1
status=$?
tail -n 20 build/layers.log
record "layers" "$status"

section "include/mpi.h and include/mpi_abi.h are current"
if git rev-parse --git-dir >/dev/null 2>&1 && git ls-files --error-unmatch include/mpi.h >/dev/null 2>&1; then
    if git diff --quiet -- include/mpi.h include/mpi_abi.h; then
        record "header-current" 0
    else
        echo "include/mpi.h or include/mpi_abi.h differs from the committed one: the committed header is stale (commit the regenerated one)"
        git diff --stat -- include/mpi.h include/mpi_abi.h
        record "header-current" 1
    fi
else
    echo "not a git checkout with include/mpi.h committed"
    record "header-current" 77
fi

# One pass over the C test list: each test's PASS/FAIL/SKIP line counts,
# and run.sh failing without naming a test (it could not read the list,
# say) counts as a failure of the pass itself.
c_pass() { # label log [VAR=value ...]
    local label=$1 log=$2
    shift 2
    env "$@" bash c_tests/run.sh > "$log" 2>&1
    local status=$? fails=0
    while read -r result name; do
        echo "$result $name"
        case "$result" in
            PASS) passed=$((passed + 1)) ;;
            SKIP) skipped=$((skipped + 1)) ;;
            FAIL) failed=$((failed + 1)); fails=$((fails + 1)); failures+=("$name") ;;
        esac
    done < <(grep -E '^(PASS|FAIL|SKIP) ' "$log")
    if [ "$status" -ne 0 ] && [ "$fails" -eq 0 ]; then
        failed=$((failed + 1)); failures+=("c_tests/run.sh ($label)")
        echo "FAIL c_tests/run.sh ($label): exit $status without a failing test; see $log"
    fi
}

section "C tests"
# Its REPORT rows become the tables of docs/reliability.md (see the end).
rm -f build/reliability-rows.txt
c_pass "shm" build/c_tests.log OXMPI_PREFIX="$STAGE" OXMPI_TEST_REPORT="$ROOT/build/reliability-rows.txt"

# MPICH's own test suite: the entries of tools/mpich_suite/subset.txt
# (those that pass, from the folders whose features oxmpi has), built with
# the staged mpicc; any that fails is a regression. Skipped (77) with a
# notice when MPICH's source package cannot be fetched.
section "MPICH's test suite, a subset (make check-mpich runs all of it)"
python3 tools/mpich_suite.py --subset tools/mpich_suite/subset.txt --timeout-scale 0.5 --prefix "$STAGE" \
    > build/mpich-suite.log 2>&1
status=$?
grep -E '^(SKIP|== |  |check-mpich)' build/mpich-suite.log | tail -n 40
record "mpich-suite-subset" "$status"

# mpi4py's test suite on 1, 2 and 4 ranks (about 3 minutes, plus about 4
# to build mpi4py the first time; build/mpi4py-venv is kept): any failure
# tools/mpi4py_suite/expected.txt does not list is a regression. Skipped
# (77) with a notice when PyPI is not reachable. make check-mpi4py runs it
# beside MPICH and writes docs/mpi4py.md.
section "mpi4py's test suite (make check-mpi4py runs it beside MPICH)"
python3 tools/mpi4py_suite.py --impls oxmpi --prefix "$STAGE" > build/mpi4py-suite.log 2>&1
status=$?
grep -E '^(SKIP|== |  [0-9]+ ranks|check-mpi4py|    (fail|error):)' build/mpi4py-suite.log | tail -n 40
record "mpi4py-suite" "$status"

section "C tests again over TCP only (OXMPI_TRANSPORT=tcp)"
c_pass "tcp" build/c_tests_tcp.log OXMPI_PREFIX="$STAGE" \
    OXMPI_TEST_EXTRA_ENV="OXMPI_TRANSPORT=tcp" OXMPI_TEST_SKIP_SCRIPTS=1

# The debug build checks the lock order (core/locks.rs) and every
# debug assertion; its C tests run with their labels marked "debug".
section "C tests against a debug build (lock order checked)"
if make -s stage-debug > build/stage-debug.log 2>&1; then
    c_pass "debug" build/c_tests_debug.log OXMPI_PREFIX="$ROOT/build/stage-debug" \
        OXMPI_TEST_LABEL=debug OXMPI_TEST_SKIP_SCRIPTS=1
else
    tail -n 20 build/stage-debug.log
    record "stage-debug" 1
fi

section "reliability tables (docs/reliability.md; make reliability-report rewrites them there)"
touch build/reliability-rows.txt
python3 tools/reliability_report.py build/reliability-rows.txt build/unit-tests.log build/reliability.md
record "reliability-tables" "$?"

if [ ${#failures[@]} -gt 0 ]; then
    echo "== failures: ${failures[*]} (details in build/c_tests.log and above)"
    grep -h -A30 -E '^--- FAIL' build/c_tests.log build/c_tests_tcp.log build/c_tests_debug.log 2>/dev/null | head -n 300
fi
section "done"
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
