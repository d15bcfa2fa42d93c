#!/usr/bin/env bash
# oxmpi programs speaking PMI-2 (OXMPI_PMI=2) under MPICH's Hydra
# (`mpiexec.mpich`, whose 4.0.2 serves PMI-2 clients), with the inherited
# PMI socket (PMI_FD) and with -pmi-port (PMI_PORT, PMI_ID): init_basic,
# p2p_basic, sessions_basic and reinit_world (every rank re-initializes
# together, as Hydra needs) pass at 3 or 4 ranks; with OXMPI_LOG every
# rank reports that it connected with PMI-2 (so the other cases did not
# pass by speaking PMI-1).
# Skipped (exit 77) when mpiexec.mpich is not installed.
#
# Usage: c_tests/hydra_pmi2.sh   (OXMPI_PREFIX: the install to test,
#                                 default build/stage)
# Prints `ok - name` or `not ok - name: why` per case, then `No Errors` and
# exits 0 if everything passed, else exits 1.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
LIMIT=60
failures=0

if ! command -v mpiexec.mpich >/dev/null 2>&1; then
    echo "skipped: mpiexec.mpich (Debian package mpich) is not installed"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-hydra-pmi2.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

. "$ROOT/c_tests/launch_checks.sh"

if [ ! -x "$PREFIX/bin/mpicc" ]; then
    not_ok "setup" "$PREFIX/bin/mpicc is missing (make stage)"
    exit 1
fi
for t in init_basic p2p_basic sessions_basic reinit_world; do
    if ! "$PREFIX/bin/mpicc" -O1 -I "$ROOT/c_tests" -o "$WORK/$t" "$ROOT/c_tests/$t.c" 2>"$WORK/cc.err"; then
        not_ok "build $t with oxmpi's mpicc" "$(head -c 600 "$WORK/cc.err")"
    fi
done

for mode in fd port; do
    hydra=(mpiexec.mpich -genv OXMPI_PMI 2)
    [ "$mode" = port ] && hydra+=(-pmi-port)
    if [ -x "$WORK/init_basic" ]; then
        run "${hydra[@]}" -genv OXMPI_LOG oxmpi::bootstrap::pmi=debug -n 4 "$WORK/init_basic" 4
        connected=$(grep -c 'PMI-2 connected' "$WORK/err")
        if [ "$RC" -ne 0 ] || ! grep -qx "No Errors" "$WORK/out" || [ "$connected" != 4 ]; then
            not_ok "init_basic -n 4 speaks PMI-2 (PMI $mode)" "$connected ranks said so; $(got)"
        else
            ok "init_basic -n 4 speaks PMI-2 (PMI $mode)"
        fi
        run "${hydra[@]}" -n 4 "$WORK/init_basic" 4
        passes_c_test "oxmpi init_basic under mpiexec.mpich -n 4, OXMPI_PMI=2 (PMI $mode)"
    fi
    if [ -x "$WORK/p2p_basic" ]; then
        run "${hydra[@]}" -n 4 "$WORK/p2p_basic"
        passes_c_test "oxmpi p2p_basic under mpiexec.mpich -n 4, OXMPI_PMI=2 (PMI $mode)"
    fi
    if [ -x "$WORK/sessions_basic" ]; then
        run "${hydra[@]}" -n 4 -genv OXMPI_INITIAL_ERRHANDLER return "$WORK/sessions_basic"
        passes_c_test "oxmpi sessions_basic under mpiexec.mpich -n 4, OXMPI_PMI=2 (PMI $mode)"
    fi
    if [ -x "$WORK/reinit_world" ]; then
        run "${hydra[@]}" -n 3 "$WORK/reinit_world"
        passes_c_test "oxmpi reinit_world under mpiexec.mpich -n 3, OXMPI_PMI=2 (PMI $mode)"
    fi
done

if [ "$failures" -ne 0 ]; then
    echo "$failures case(s) failed"
    exit 1
fi
echo "No Errors"
