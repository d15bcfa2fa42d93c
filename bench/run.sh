#!/usr/bin/env bash
# bench/run.sh: oxmpi against Debian's MPICH and Open MPI, and against plain
# floors (no MPI), all measured in the same run.
#
# Builds every benchmark with each implementation's compiler wrapper
# (build/stage/bin/mpicc, mpicc.mpich, mpicc.openmpi), runs it under that
# implementation's launcher, rotating which implementation goes first from
# one repetition to the next, and writes one table per measure (medians,
# ratios oxmpi / peer from this run, the targets of issues 3, 5, 6, 15, 18
# and 19 marked met or MISSED with the margin) to bench/results/latest.md,
# with PNG plots of latency and bandwidth against size (gnuplot).  A case
# that fails or times out becomes n/a and is not run again.  Open MPI
# missing: its columns are n/a, with a notice.
# Exits 0 whether or not targets are met; see bench/README.md.
#
# Environment (QUICK=1 lowers the defaults marked q:):
#   BENCH_REPS=5 (q: 1)         repetitions of the point-to-point, rma, tcp,
#                               reinit and io cases
#   BENCH_COLL_REPS=3 (q: 1)    repetitions of the collective and comm cases
#   BENCH_COLL_RANKS="2 4 16"   rank counts of the collectives
#   BENCH_START_RUNS=10 (q: 3)  runs of each start-up case per implementation
#   BENCH_REINIT_CYCLES=20 (q: 10)  cycles per reinit run
#   BENCH_IO_MIB=256 (q: 32)    MiB of the MPI-IO strided write and read
#   BENCH_IDLE_SECONDS=5 (q: 1) how long the idle rank waits
#   BENCH_INSTR_ITERS="50 150" (q: "20 60")  the two iteration counts of the
#                               callgrind runs
#   BENCH_BUDGET_SCALE=1 (q: 0.3)  factor on the seconds each program's timed
#                               loops may take (fewer iterations)
#   BENCH_OUT=build/bench       binaries, raw results, logs, plot data
#   BENCH_RESULTS=bench/results where latest.md and the plots go
#   STAGE=build/stage           the oxmpi install to measure
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STAGE=${STAGE:-$ROOT/build/stage}
OUT=${BENCH_OUT:-$ROOT/build/bench}
RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}
QUICK=${QUICK:-}
[[ $QUICK == 0 ]] && QUICK=
if [[ -n $QUICK ]]; then
    REPS=${BENCH_REPS:-1}; COLL_REPS=${BENCH_COLL_REPS:-1}; START_RUNS=${BENCH_START_RUNS:-3}
    REINIT_CYCLES=${BENCH_REINIT_CYCLES:-10}; IO_MIB=${BENCH_IO_MIB:-32}
    IDLE_SECONDS=${BENCH_IDLE_SECONDS:-1}; BUDGET_SCALE=${BENCH_BUDGET_SCALE:-0.3}
    INSTR_ITERS=${BENCH_INSTR_ITERS:-20 60}
else
    REPS=${BENCH_REPS:-5}; COLL_REPS=${BENCH_COLL_REPS:-3}; START_RUNS=${BENCH_START_RUNS:-10}
    REINIT_CYCLES=${BENCH_REINIT_CYCLES:-20}; IO_MIB=${BENCH_IO_MIB:-256}
    IDLE_SECONDS=${BENCH_IDLE_SECONDS:-5}; BUDGET_SCALE=${BENCH_BUDGET_SCALE:-1}
    INSTR_ITERS=${BENCH_INSTR_ITERS:-50 150}
fi
# The programs read it (clock.h's budget_scale) to size their timed loops.
export BENCH_BUDGET_SCALE=$BUDGET_SCALE
COLL_RANKS=${BENCH_COLL_RANKS:-2 4 16}
SRC=$ROOT/bench

# Per-run time limits (seconds).  A case that fails once is not repeated,
# so even if everything hung the script would end within minutes.
T_P2P=30
T_START=20
T_REINIT=20
T_IO=120
T_COLL=60
T_INSTR=120
T_IDLE=$(awk -v s="$IDLE_SECONDS" 'BEGIN {printf "%d", 2 * s + 20}')

# Implementations: compiler, launcher, name.  Plain floors have no launcher.
declare -A CC RUN NAME
CC[ox]=$STAGE/bin/mpicc;  RUN[ox]=$STAGE/bin/mpiexec;  NAME[ox]=oxmpi
CC[mp]=mpicc.mpich;       RUN[mp]=mpiexec.mpich;       NAME[mp]=MPICH
CC[om]=mpicc.openmpi;     RUN[om]=mpirun.openmpi;      NAME[om]="Open MPI"
CC[floor]=cc;  RUN[floor]=;  NAME[floor]="cache-line floor"  # shm_floor.c
CC[memM]=cc;   RUN[memM]=;   NAME[memM]="memcpy floor, glibc memcpy"  # shm_memcpy_floor.c
CC[memS]=cc;   RUN[memS]=;   NAME[memS]="memcpy floor, rep movsb"
CC[tcpP]=cc;   RUN[tcpP]=;   NAME[tcpP]="plain TCP polling"  # plain_tcp.c
CC[tcpB]=cc;   RUN[tcpB]=;   NAME[tcpB]="plain TCP blocking"
MPIS=(ox mp om)
IMPLS=(ox mp om)
OM_NOTICE=
if ! command -v mpicc.openmpi >/dev/null 2>&1 || ! command -v mpirun.openmpi >/dev/null 2>&1; then
    IMPLS=(ox mp)
    OM_NOTICE="Open MPI is not installed (no mpicc.openmpi / mpirun.openmpi): its columns are n/a. Install Debian's openmpi-bin and libopenmpi-dev (then set the mpi and mpirun alternatives back to MPICH)."
    echo "bench: notice: $OM_NOTICE" >&2
fi
have() { local i; for i in "${IMPLS[@]}"; do [[ $i == "$1" ]] && return 0; done; return 1; }

# Open MPI's launcher options: ob1 with shared memory (vader) or TCP, more
# ranks than cores allowed, and root allowed (these VMs run as root).
NET=shm
om_args() {
    local a=(--oversubscribe --mca pml ob1)
    (( EUID == 0 )) && a+=(--allow-run-as-root)
    if [[ $NET == tcp ]]; then a+=(--mca btl self,tcp); else a+=(--mca btl self,vader); fi
    echo "${a[@]}"
}

if [[ ! -x ${CC[ox]} || ! -x ${RUN[ox]} ]]; then
    echo "bench: no oxmpi stage at $STAGE (run 'make stage' or 'make bench')" >&2
    exit 2
fi

rm -rf "$OUT"/{ox,mp,om,floor,memM,memS,tcpP,tcpB,res,log,cg,plot}
mkdir -p "$OUT"/{ox,mp,om,floor,memM,memS,tcpP,tcpB,res,log,cg,plot} "$RESULTS"
# Only the cases that need them set these; nothing leaks from the caller.
unset MPIR_CVAR_FINALIZE_ATEXIT OXMPI_FINALIZE_ATEXIT \
    OXMPI_TRANSPORT OXMPI_SHM_SINGLE_COPY UCX_TLS OMPI_MCA_btl OMPI_MCA_pml
FAILURES=()   # "impl case: first lines of stderr"
declare -A BROKEN  # impl:case -> 1 once it failed: not run again
                   # (impl:build-prog once prog did not build)

note_failure() { # impl case logfile rc [limit]
    local msg pat='error|fail|fault|signal|not implemented|abort|exited|MPI_[A-Z]|timed out|undeclared|unknown type'
    msg=$(grep -E -i "$pat" "$3" 2>/dev/null | awk '{k = $0; gsub(/0x[0-9a-fA-F]+|[0-9]+/, "#", k)} !seen[k]++' | head -n 4)
    [[ -n $msg ]] || msg=$(grep -v '^[[:space:]]*$' "$3" 2>/dev/null | head -n 4)
    [[ $4 == 124 ]] && msg="(timed out after ${5:-?} s)"${msg:+$'\n'}$msg
    local head="${NAME[$1]} $2 (exit $4, log ${3#"$ROOT/"})"
    [[ $1 == mp && $2 == reinit-* ]] && head+=" [expected: MPICH 4.0.2 cannot re-initialize, see issue 6]"
    [[ $1 == om && ( $2 == *session* || $2 == *reinit* || $2 == *comm_create* ) ]] \
        && head+=" [expected: Open MPI 4.1 has no sessions]"
    FAILURES+=("$head:"$'\n'"$(sed 's/^/        /' <<<"$msg")")
    BROKEN[$1:$2]=1
}

# ---------------------------------------------------------------- build
echo "building benchmarks into $OUT ..."
build() { # impl output source [flags...]
    local impl=$1 out=$2 src=$3; shift 3
    local log=$OUT/log/build.$impl.$out
    if ! command -v "${CC[$impl]}" >/dev/null 2>&1; then
        echo "${CC[$impl]}: not found" >"$log"
        note_failure "$impl" "build-$out" "$log" 127
        return
    fi
    "${CC[$impl]}" -O2 "$@" -o "$OUT/$impl/$out" "$SRC/$src" >"$log" 2>&1 \
        || note_failure "$impl" "build-$out" "$log" $?
}
for impl in "${IMPLS[@]}"; do
    build "$impl" pingpong pingpong.c
    build "$impl" bandwidth bandwidth.c
    build "$impl" bibw bibw.c
    build "$impl" msgrate msgrate.c
    build "$impl" rma rma.c
    build "$impl" coll coll.c
    build "$impl" comm_dup comm.c
    build "$impl" comm_create comm.c -DUSE_SESSIONS
    build "$impl" hello startup.c
    build "$impl" session_hello startup.c -DUSE_SESSIONS
    build "$impl" reinit reinit.c
    build "$impl" memory memory.c
    build "$impl" idle idle.c -pthread
    build "$impl" instr instr.c
    build "$impl" tcp_side_by_side tcp_side_by_side.c
    build "$impl" io_strided io_strided.c
done
build floor shm_floor shm_floor.c
build memM shm_memcpy_floor shm_memcpy_floor.c
build memS shm_memcpy_floor shm_memcpy_floor.c
build tcpP plain_tcp plain_tcp.c
build tcpB plain_tcp plain_tcp.c

# ---------------------------------------------------------------- helpers
# run_case impl case prog np limit outfile [program args...]
# Runs one program under the implementation's launcher (directly if it has
# none; np is then unused), with the variables in the array RUN_ENV
# (NAME=VALUE) added to the environment and the command in WRAP (e.g.
# valgrind) between launcher and program; 0 on success.
RUN_ENV=()
WRAP=()
run_case() {
    local impl=$1 case=$2 prog=$3 np=$4 limit=$5 out=$6; shift 6
    have "$impl" || [[ -z ${RUN[$impl]} ]] || return 1
    [[ -n ${BROKEN[$impl:$case]:-} || -n ${BROKEN[$impl:build-$prog]:-} ]] && return 1
    local log=$OUT/log/$impl.$case.err rc=0 cmd=("${WRAP[@]}" "$OUT/$impl/$prog")
    if [[ -n ${RUN[$impl]} ]]; then
        local pre=("${RUN[$impl]}")
        # shellcheck disable=SC2207
        [[ $impl == om ]] && pre+=($(om_args))
        cmd=("${pre[@]}" -n "$np" "${cmd[@]}")
    fi
    env "${RUN_ENV[@]}" timeout -k 5 "$limit" \
        "${cmd[@]}" "$@" >"$out" 2>"$log" </dev/null || rc=$?
    if [[ $rc != 0 ]]; then
        note_failure "$impl" "$case" "$log" "$rc" "$limit"
        return 1
    fi
}

# Order of the implementations given ($2...; default all MPI ones) in
# repetition $1: rotated by one each repetition, so each goes first in turn.
order() {
    local rep=$1 i; shift
    local l=("$@"); (( ${#l[@]} )) || l=("${IMPLS[@]}")
    for (( i = 0; i < ${#l[@]}; i++ )); do echo "${l[(i + rep) % ${#l[@]}]}"; done
}

# median of the numbers on stdin ("n/a" if none)
median() {
    sort -g | awk '{v[NR]=$1} END {
        if (NR == 0) { print "n/a"; exit }
        if (NR % 2) print v[(NR+1)/2]; else printf "%.6g\n", (v[NR/2]+v[NR/2+1])/2 }'
}

# value for key $2 in result files $1.* (lines "key value"), median over reps
med_of() { # prefix key
    local f
    for f in "$1".*; do
        [[ -e $f ]] || continue
        awk -v k="$2" '$1 == k {print $2}' "$f"
    done | median
}

ratio() { # a b -> a/b or n/a
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'
}

# best lower|higher a b...: the best of the values that are not n/a
best() {
    local how=$1; shift
    printf '%s\n' "$@" | grep -v '^n/a$' | sort -g | { if [[ $how == lower ]]; then head -n 1; else tail -n 1; fi; } \
        | grep . || echo n/a
}

# judge "what" ratio op limit: sets V ("met (r <= l)", "MISSED (r > l, by x%)",
# "n/a") and records the target for the summary.
TARGETS_MET=0; TARGETS_ALL=0; V=; TARGET_LINES=()
judge() {
    local what=$1 r=$2 op=$3 lim=$4
    TARGETS_ALL=$((TARGETS_ALL + 1))
    if [[ $r == n/a ]]; then
        V="n/a"
    else
        V=$(awk -v v="$r" -v op="$op" -v l="$lim" 'BEGIN {
            ok = (op == "<=" && v <= l) || (op == ">=" && v >= l) || (op == "<" && v < l)
            if (op == ">=") { bad = (l - v) / l * 100; good = (v - l) / l * 100 }
            else            { bad = (v - l) / l * 100; good = (l - v) / l * 100 }
            if (ok) printf "met (%s %s %s, %.0f%% margin)", v, op, l, good
            else    printf "MISSED (%s, target %s %s, by %.0f%%)", v, op, l, bad }')
        [[ $V == met* ]] && TARGETS_MET=$((TARGETS_MET + 1))
    fi
    TARGET_LINES+=("$what: $V")
}

human() { # bytes -> 0, 8, 4K, 1M
    local b=$1
    if (( b >= 1048576 && b % 1048576 == 0 )); then echo "$((b / 1048576))M"
    elif (( b >= 1024 && b % 1024 == 0 )); then echo "$((b / 1024))K"
    else echo "$b"; fi
}

fmt() { # number with $1 decimals (3 significant digits below 1), n/a, or empty
    if [[ $2 == n/a || -z $2 ]]; then echo "$2"
    else awk -v d="$1" -v v="$2" 'BEGIN {
        if (v != 0 && v < 1 && v > -1) printf "%.3g", v; else printf "%.*f", d, v }'
    fi
}

REPORT=$OUT/report.md
: >"$REPORT"
out() { printf '%s\n' "$@" >>"$REPORT"; }
trow() { local r="|" c; for c in "$@"; do r+=" $c |"; done; out "$r"; } # one markdown table row
thead() { trow "$@"; local s=() i; for i in "$@"; do s+=("---"); done; trow "${s[@]}"; }

T_BEGIN=$EPOCHREALTIME
section() { echo "[$(awk -v a="$T_BEGIN" -v b="$EPOCHREALTIME" 'BEGIN {printf "%4.0f s", b - a}')] $*"; }

# ---------------------------------------------------------------- shm p2p
P2P_PROGS="pingpong bandwidth bibw msgrate"
section "shared memory: pingpong, bandwidth, bibw, msgrate ($REPS repetitions, rotating) ..."
for rep in $(seq 1 "$REPS"); do
    for impl in $(order "$rep" "${IMPLS[@]}" floor memM memS); do
        case $impl in
            floor) run_case floor pingpong shm_floor 2 $T_P2P "$OUT/res/pingpong.floor.$rep" ;;
            memM)  run_case memM pingpong shm_memcpy_floor 2 $T_P2P "$OUT/res/pingpong.memM.$rep" latency memcpy ;;
            memS)  run_case memS pingpong shm_memcpy_floor 2 $T_P2P "$OUT/res/pingpong.memS.$rep" latency movsb ;;
            *)     run_case "$impl" pingpong pingpong 2 $T_P2P "$OUT/res/pingpong.$impl.$rep" ;;
        esac || rm -f "$OUT/res/pingpong.$impl.$rep"
    done
    for impl in $(order "$rep" "${IMPLS[@]}" memM memS); do
        case $impl in
            memM) run_case memM bandwidth shm_memcpy_floor 2 $T_P2P "$OUT/res/bandwidth.memM.$rep" bandwidth memcpy ;;
            memS) run_case memS bandwidth shm_memcpy_floor 2 $T_P2P "$OUT/res/bandwidth.memS.$rep" bandwidth movsb ;;
            *)    run_case "$impl" bandwidth bandwidth 2 $T_P2P "$OUT/res/bandwidth.$impl.$rep" ;;
        esac || rm -f "$OUT/res/bandwidth.$impl.$rep"
    done
    for prog in bibw msgrate; do
        for impl in $(order "$rep"); do
            run_case "$impl" $prog $prog 2 $T_P2P "$OUT/res/$prog.$impl.$rep" \
                || rm -f "$OUT/res/$prog.$impl.$rep"
        done
    done
done

# ---------------------------------------------------------------- rma
section "rma ($REPS repetitions, rotating) ..."
for rep in $(seq 1 "$REPS"); do
    for impl in $(order "$rep"); do
        run_case "$impl" rma rma 2 $T_P2P "$OUT/res/rma.$impl.$rep" \
            || rm -f "$OUT/res/rma.$impl.$rep"
    done
done

# ---------------------------------------------------------------- tcp
# oxmpi: OXMPI_TRANSPORT=tcp (no shared memory; single copy is offered only
# to peers reached through shared memory, so every byte crosses a socket);
# MPICH: UCX with only its tcp and self transports; Open MPI: ob1 with the
# tcp and self BTLs.  The floor: plain_tcp.c, polling and blocking.
tcp_env() { # impl: sets RUN_ENV and NET for the tcp section
    NET=tcp
    case $1 in
        ox) RUN_ENV=(OXMPI_TRANSPORT=tcp) ;;
        mp) RUN_ENV=("UCX_TLS=tcp,self") ;;
        *)  RUN_ENV=() ;;
    esac
}
section "tcp: the MPI libraries and plain TCP, polling and blocking ($REPS repetitions, rotating) ..."
for rep in $(seq 1 "$REPS"); do
    # Each MPI library and plain TCP in the same process pair, block by
    # block (tcp_side_by_side.c): the judged latency ratio.
    for impl in $(order "$rep"); do
        tcp_env "$impl"
        run_case "$impl" tcp-side-by-side tcp_side_by_side 2 $T_P2P "$OUT/res/tcp-sbs.$impl.$rep" \
            || rm -f "$OUT/res/tcp-sbs.$impl.$rep"
    done
    for prog in pingpong bandwidth; do
        what=$([[ $prog == pingpong ]] && echo latency || echo bandwidth)
        for impl in $(order "$rep" "${IMPLS[@]}" tcpP tcpB); do
            tcp_env "$impl"
            o=$OUT/res/tcp-$prog.$impl.$rep
            case $impl in
                tcpP) run_case tcpP "$what" plain_tcp 2 $T_P2P "$o" "$what" polling ;;
                tcpB) run_case tcpB "$what" plain_tcp 2 $T_P2P "$o" "$what" blocking ;;
                *)    run_case "$impl" "$prog-tcp" "$prog" 2 $T_P2P "$o" ;;
            esac || rm -f "$o"
        done
    done
    for prog in bibw msgrate; do
        for impl in $(order "$rep"); do
            tcp_env "$impl"
            run_case "$impl" "$prog-tcp" "$prog" 2 $T_P2P "$OUT/res/tcp-$prog.$impl.$rep" \
                || rm -f "$OUT/res/tcp-$prog.$impl.$rep"
        done
    done
done
RUN_ENV=(); NET=shm

# ---------------------------------------------------------------- collectives
section "collectives on $COLL_RANKS ranks, comm dup/create on 4 ($COLL_REPS repetitions, rotating) ..."
for rep in $(seq 1 "$COLL_REPS"); do
    for np in $COLL_RANKS; do
        for impl in $(order "$rep"); do
            run_case "$impl" "coll-$np" coll "$np" $T_COLL "$OUT/res/coll$np.$impl.$rep" \
                || rm -f "$OUT/res/coll$np.$impl.$rep"
        done
    done
    for impl in $(order "$rep"); do
        run_case "$impl" comm_dup comm_dup 4 $T_COLL "$OUT/res/comm-dup.$impl.$rep" 1000 \
            || rm -f "$OUT/res/comm-dup.$impl.$rep"
        run_case "$impl" comm_create comm_create 4 $T_COLL "$OUT/res/comm-create.$impl.$rep" 100 \
            || rm -f "$OUT/res/comm-create.$impl.$rep"
    done
done

# ---------------------------------------------------------------- start-up
section "start-up, -n 2 and -n 16 ($START_RUNS runs of each case per implementation) ..."
# The cost of starting `timeout` itself is in every column; measured to read
# small numbers.
for run in $(seq 1 "$START_RUNS"); do
    t0=$EPOCHREALTIME
    timeout -k 5 $T_START true
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "ms %.3f\n", (b - a) * 1000}' >>"$OUT/res/start.timeout.all"
done
for run in $(seq 1 "$START_RUNS"); do
    for np in 2 16; do
        for prog in hello session_hello; do
            for impl in $(order "$run"); do
                t0=$EPOCHREALTIME
                if run_case "$impl" "$prog-$np" "$prog" "$np" $T_START /dev/null; then
                    t1=$EPOCHREALTIME
                    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "ms %.3f\n", (b - a) * 1000}' \
                        >>"$OUT/res/start.$prog$np.$impl.all"
                fi
            done
        done
    done
done

# ---------------------------------------------------------------- re-init
section "reinit (4 ranks, $REINIT_CYCLES cycles, $REPS repetitions per mode) ..."
for rep in $(seq 1 "$REPS"); do
    for impl in $(order "$rep"); do
        RUN_ENV=(MPIR_CVAR_FINALIZE_ATEXIT=1)
        run_case "$impl" reinit-atexit reinit 4 $T_REINIT \
            "$OUT/res/reinit-atexit.$impl.$rep" "$REINIT_CYCLES" \
            || rm -f "$OUT/res/reinit-atexit.$impl.$rep"
        RUN_ENV=()
        run_case "$impl" reinit-default reinit 4 $T_REINIT \
            "$OUT/res/reinit-default.$impl.$rep" "$REINIT_CYCLES" \
            || rm -f "$OUT/res/reinit-default.$impl.$rep"
    done
done

# ---------------------------------------------------------------- memory
section "resident memory at 2 and 16 ranks ..."
for rep in $(seq 1 "$COLL_REPS"); do
    for np in 2 16; do
        for impl in $(order "$rep"); do
            run_case "$impl" "memory-$np" memory "$np" $T_COLL "$OUT/res/mem$np.$impl.$rep" \
                || rm -f "$OUT/res/mem$np.$impl.$rep"
        done
    done
done

# ---------------------------------------------------------------- idle
section "idle CPU ($IDLE_SECONDS s in MPI_Recv, then in MPI_Barrier) ..."
for impl in $(order 1); do
    run_case "$impl" idle idle 2 "$T_IDLE" "$OUT/res/idle.$impl.1" "$IDLE_SECONDS" \
        || rm -f "$OUT/res/idle.$impl.1"
done

# ---------------------------------------------------------------- instructions
section "instructions per iteration (callgrind, $INSTR_ITERS iterations) ..."
if command -v valgrind >/dev/null 2>&1; then
    for n in $INSTR_ITERS; do
        for impl in $(order 1); do
            WRAP=(valgrind -q --tool=callgrind --toggle-collect=send8 --toggle-collect=recv8
                  "--callgrind-out-file=$OUT/cg/$impl.$n.%p")
            run_case "$impl" instr instr 2 $T_INSTR "$OUT/log/$impl.instr.$n.out" "$n"
            WRAP=()
        done
    done
else
    echo "bench: notice: valgrind not found; no instruction counts" >&2
fi
# per iteration per rank: (sum over ranks at N2 - at N1) / (N2 - N1) / 2
read -r N1 N2 _ <<<"$INSTR_ITERS"
for impl in "${MPIS[@]}"; do
    a=$(cat "$OUT"/cg/"$impl.$N1".* 2>/dev/null | awk '/^totals:/ {s += $2; k++} END {if (k == 2) print s}')
    b=$(cat "$OUT"/cg/"$impl.$N2".* 2>/dev/null | awk '/^totals:/ {s += $2; k++} END {if (k == 2) print s}')
    if [[ -n $a && -n $b ]]; then
        awk -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" \
            'BEGIN {printf "per_iter %.0f\n", (b - a) / (n2 - n1) / 2}' >"$OUT/res/instr.$impl.1"
    fi
done

# ---------------------------------------------------------------- MPI-IO
section "io_strided (4 ranks, $IO_MIB MiB, $REPS repetitions) ..."
for rep in $(seq 1 "$REPS"); do
    for impl in $(order "$rep"); do
        run_case "$impl" io io_strided 4 $T_IO "$OUT/res/io.$impl.$rep" \
            "$OUT/io.$impl.dat" "$IO_MIB" || rm -f "$OUT/res/io.$impl.$rep"
        rm -f "$OUT/io.$impl.dat"
    done
done
T_END=$EPOCHREALTIME
section "done; writing the report"

# ---------------------------------------------------------------- report
# m prefix key impl -> median; the three MPI columns of one key: cols.
m() { med_of "$OUT/res/$1.$3" "$2"; }
declare -A VAL
cols() { # prefix key: sets VAL[ox], VAL[mp], VAL[om]
    local i; for i in "${MPIS[@]}"; do VAL[$i]=$(m "$1" "$2" "$i"); done
}

pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"; }
out "# oxmpi benchmarks: latest run" ""
out "Written by \`bench/run.sh\` ($([[ -n $QUICK ]] && echo "QUICK=1, a short run: few repetitions" || echo "full run")); see [bench/README.md](../README.md) for the methods and knobs."
out ""
out "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); benchmark time $(awk -v a="$T_BEGIN" -v b="$T_END" 'BEGIN {printf "%.0f s", b - a}')"
out "- oxmpi: $(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -1), commit $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?') (stage ${STAGE#"$ROOT/"})"
out "- MPICH: Debian mpich $(pkg_version mpich) ($(command -v mpiexec.mpich || echo 'not found'), ch4:ucx)"
out "- Open MPI: Debian openmpi-bin $(pkg_version openmpi-bin) ($(command -v mpirun.openmpi || echo 'not found'); pml ob1, btl vader or tcp)"
out "- machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs ($(lscpu | sed -n 's/^Hypervisor vendor: *//p' | head -1) guest), $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo); $(uname -srm)"
out "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
out "- medians of $REPS repetitions (collectives, comm, memory: $COLL_REPS; start-up: $START_RUNS runs), time budgets scaled by $BUDGET_SCALE, implementations rotating which goes first; ratios are oxmpi / the peer from this run"
[[ -n $OM_NOTICE ]] && out "" "**Notice:** $OM_NOTICE"
out "" "@@SUMMARY@@" ""

# --- latency
pl_dat() { # file header: starts a plot data file
    echo "# $2" >"$OUT/plot/$1.dat"
}
lat_table() { # net: shm|tcp
    local net=$1 pre=pingpong size
    [[ $net == tcp ]] && pre=tcp-pingpong
    if [[ $net == shm ]]; then
        out "## Latency, shared memory (pingpong.c, 2 ranks, one-way, µs; lower is better)" ""
        thead size oxmpi MPICH "Open MPI" "cache-line floor" "memcpy floor" "ox/MPICH" "ox/Open MPI" target
        pl_dat lat-shm "size oxmpi MPICH OpenMPI memcpy-floor"
    else
        out "## Latency, TCP (pingpong.c, 2 ranks, one-way, µs; lower is better)" ""
        thead size oxmpi MPICH "Open MPI" "plain polling" "plain blocking" "ox/MPICH" "ox/Open MPI" target
        pl_dat lat-tcp "size oxmpi MPICH OpenMPI plain-polling plain-blocking"
    fi
    for size in 0 1 8 64 512 4096 16384 65536 1048576 4194304; do
        cols "$pre" "$size"
        local f1 f2 r1 r2 t=""
        if [[ $net == shm ]]; then
            f1=$([[ $size == 8 ]] && m pingpong 8 floor || echo "")
            f2=$(best lower "$(m pingpong "$size" memM)" "$(m pingpong "$size" memS)")
        else
            f1=$(m tcp-pingpong "$size" tcpP); f2=$(m tcp-pingpong "$size" tcpB)
        fi
        r1=$(ratio "${VAL[ox]}" "${VAL[mp]}"); r2=$(ratio "${VAL[ox]}" "${VAL[om]}")
        if [[ $net == shm && $size == 8 ]]; then
            judge "shm 8 B latency vs MPICH" "$r1" "<=" 0.6; t="≤ 0.6× MPICH: $V"
            judge "shm 8 B latency vs Open MPI" "$r2" "<=" 0.8; t+="; ≤ 0.8× Open MPI: $V"
        fi
        if [[ $net == tcp && $size == 8 ]]; then
            judge "TCP 8 B latency, ahead of MPICH" "$r1" "<=" 1; t="≤ MPICH: $V"
            judge "TCP 8 B latency, ahead of Open MPI" "$r2" "<=" 1; t+="; ≤ Open MPI: $V"
        fi
        trow "$(human "$size")" "$(fmt 3 "${VAL[ox]}")" "$(fmt 3 "${VAL[mp]}")" "$(fmt 3 "${VAL[om]}")" \
            "$(fmt 3 "$f1")" "$(fmt 3 "$f2")" "$r1" "$r2" "$t"
        if (( size > 0 )); then
            if [[ $net == tcp ]]; then echo "$size ${VAL[ox]} ${VAL[mp]} ${VAL[om]} $f1 $f2"
            else echo "$size ${VAL[ox]} ${VAL[mp]} ${VAL[om]} $f2"; fi | sed 's#n/a#?#g' >>"$OUT/plot/lat-$net.dat"
        fi
    done
    out ""
}
lat_table shm
f=$(m pingpong 8 floor)
above() { awk -v a="$1" -v f="$2" 'BEGIN { if (a == "n/a" || f == "n/a") print "n/a"; else printf "%.3f\n", a - f }'; }
cols pingpong 8
out "8 B above the cache-line floor ($(fmt 3 "$f") µs, shm_floor.c): oxmpi $(fmt 3 "$(above "${VAL[ox]}" "$f")"), MPICH $(fmt 3 "$(above "${VAL[mp]}" "$f")"), Open MPI $(fmt 3 "$(above "${VAL[om]}" "$f")") µs. The floors: shm_floor.c moves one cache line each way; shm_memcpy_floor.c copies each message once from the sender's buffer in a shared mapping (the single-copy ideal), with glibc's memcpy and with rep movsb, and the memcpy floor column is the faster of the two medians (glibc's memcpy: $(fmt 3 "$(m pingpong 1048576 memM)") µs at 1 MiB, rep movsb: $(fmt 3 "$(m pingpong 1048576 memS)") µs). On a VM the cache-line floor moves with the placement of the virtual CPUs (bench/README.md)." ""

# --- bandwidth and bidirectional bandwidth
bw_table() { # net prefix title
    local net=$1 pre=$2 title=$3 size
    out "## $title" ""
    if [[ $pre == *bandwidth ]]; then
        if [[ $net == shm ]]; then
            thead size oxmpi MPICH "Open MPI" "memcpy floor" "ox/MPICH" "ox/Open MPI" "ox/floor" target
            pl_dat bw-shm "size oxmpi MPICH OpenMPI memcpy-floor"
        else
            thead size oxmpi MPICH "Open MPI" "plain polling" "plain blocking" "ox/MPICH" "ox/Open MPI" "ox/faster plain" target
            pl_dat bw-tcp "size oxmpi MPICH OpenMPI plain-polling plain-blocking"
        fi
    else
        thead size oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI"
    fi
    for size in 8 64 512 4096 16384 65536 262144 1048576 4194304; do
        cols "$pre" "$size"
        local r1 r2 f1 f2 fl rf t=""
        r1=$(ratio "${VAL[ox]}" "${VAL[mp]}"); r2=$(ratio "${VAL[ox]}" "${VAL[om]}")
        if [[ $pre != *bandwidth ]]; then
            trow "$(human "$size")" "$(fmt 0 "${VAL[ox]}")" "$(fmt 0 "${VAL[mp]}")" "$(fmt 0 "${VAL[om]}")" "$r1" "$r2"
            continue
        fi
        if [[ $net == shm ]]; then
            fl=$(best higher "$(m bandwidth "$size" memM)" "$(m bandwidth "$size" memS)"); rf=$(ratio "${VAL[ox]}" "$fl")
            if (( size >= 65536 )); then
                judge "shm bandwidth $(human "$size") vs MPICH" "$r1" ">=" 1.3; t="≥ 1.3× MPICH: $V"
                judge "shm bandwidth $(human "$size") vs Open MPI" "$r2" ">=" 1.1; t+="; ≥ 1.1× Open MPI: $V"
            fi
            trow "$(human "$size")" "$(fmt 0 "${VAL[ox]}")" "$(fmt 0 "${VAL[mp]}")" "$(fmt 0 "${VAL[om]}")" \
                "$(fmt 0 "$fl")" "$r1" "$r2" "$rf" "$t"
            echo "$size ${VAL[ox]} ${VAL[mp]} ${VAL[om]} $fl" | sed 's#n/a#?#g' >>"$OUT/plot/bw-shm.dat"
        else
            f1=$(m tcp-bandwidth "$size" tcpP); f2=$(m tcp-bandwidth "$size" tcpB)
            fl=$(best higher "$f1" "$f2"); rf=$(ratio "${VAL[ox]}" "$fl")
            if (( size == 1048576 )); then
                judge "TCP 1 MiB bandwidth vs the faster plain TCP" "$rf" ">=" 0.9; t="≥ 0.9× faster plain: $V"
                judge "TCP 1 MiB bandwidth, ahead of MPICH" "$r1" ">=" 1; t+="; ≥ MPICH: $V"
                judge "TCP 1 MiB bandwidth, ahead of Open MPI" "$r2" ">=" 1; t+="; ≥ Open MPI: $V"
            fi
            trow "$(human "$size")" "$(fmt 0 "${VAL[ox]}")" "$(fmt 0 "${VAL[mp]}")" "$(fmt 0 "${VAL[om]}")" \
                "$(fmt 0 "$f1")" "$(fmt 0 "$f2")" "$r1" "$r2" "$rf" "$t"
            echo "$size ${VAL[ox]} ${VAL[mp]} ${VAL[om]} $f1 $f2" | sed 's#n/a#?#g' >>"$OUT/plot/bw-tcp.dat"
        fi
    done
    out ""
}
bw_table shm bandwidth "Bandwidth, shared memory (bandwidth.c, osu_bw method, window 64, MB/s = 10^6 B/s; higher is better)"
bw_table shm bibw "Bidirectional bandwidth, shared memory (bibw.c, osu_bibw method, window 64 each way, MB/s both directions; higher is better)"

msgrate_table() { # net
    local pre=msgrate t r1 r2
    [[ $1 == tcp ]] && pre=tcp-msgrate
    cols "$pre" mmsgs
    r1=$(ratio "${VAL[ox]}" "${VAL[mp]}"); r2=$(ratio "${VAL[ox]}" "${VAL[om]}")
    t=""
    if [[ $1 == shm ]]; then
        judge "shm message rate vs MPICH" "$r1" ">=" 1.2; t="≥ 1.2× MPICH: $V"
        judge "shm message rate vs Open MPI" "$r2" ">=" 1.2; t+="; ≥ 1.2× Open MPI: $V"
    fi
    trow "$1" "$(fmt 3 "${VAL[ox]}")" "$(fmt 3 "${VAL[mp]}")" "$(fmt 3 "${VAL[om]}")" "$r1" "$r2" "$t"
}
out "## Small-message rate (msgrate.c, osu_mbw_mr method, 1 pair, 8 B, window 64; million messages/s; higher is better)" ""
thead transport oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI" target
msgrate_table shm
msgrate_table tcp
out ""

# --- one-sided
out "## One-sided (rma.c, 2 ranks, OSU methods with lock_all + flush, shared memory)" ""
out "Windows of \`MPI_Win_allocate\`, then (rows \"create\") of \`MPI_Win_create\` over malloc'd memory, which no other process maps." ""
thead measure oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI" target
for key in put_lat_8 put_lat_4096 fop_lat intrinsic_fop_lat put_bw_65536 put_bw_1048576 put_bw_4194304 \
    create_put_lat_8 create_put_bw_8 create_put_bw_4096 create_put_bw_1048576; do
    cols rma "$key"
    r1=$(ratio "${VAL[ox]}" "${VAL[mp]}"); r2=$(ratio "${VAL[ox]}" "${VAL[om]}"); t=""
    case $key in
        put_lat_8) label="put 8 B latency (µs)"; d=3; judge "rma put 8 B latency vs MPICH" "$r1" "<=" 0.5; t="≤ 0.5× MPICH: $V" ;;
        put_lat_4096) label="put 4 KiB latency (µs)"; d=3 ;;
        fop_lat) label="fetch-and-op latency (µs)"; d=3 ;;
        intrinsic_fop_lat) label="fetch-and-op latency, acc_single_intrinsic=true (µs)"; d=3 ;;
        put_bw_1048576) label="put 1 MiB bw (MB/s)"; d=0; judge "rma put 1 MiB bandwidth vs MPICH" "$r1" ">=" 1; t="≥ MPICH: $V" ;;
        create_put_lat_8) label="create: put 8 B latency (µs)"; d=3 ;;
        create_put_bw_*) label="create: put $(human "${key#create_put_bw_}") bw (MB/s)"; d=0 ;;
        *) label="put $(human "${key#put_bw_}") bw (MB/s)"; d=0 ;;
    esac
    trow "$label" "$(fmt "$d" "${VAL[ox]}")" "$(fmt "$d" "${VAL[mp]}")" "$(fmt "$d" "${VAL[om]}")" "$r1" "$r2" "$t"
done
out ""

# --- TCP
out "## TCP (2 processes over loopback TCP)" ""
out "oxmpi: \`OXMPI_TRANSPORT=tcp\`; MPICH: \`UCX_TLS=tcp,self\`; Open MPI: \`--mca pml ob1 --mca btl self,tcp\`. The floor is plain_tcp.c (no MPI), polling (nonblocking calls retried at once) and blocking (ordinary blocking calls), measured in the same rotation; the faster of the two is the floor judged against." ""
out "### 8-byte latency, same process pair (tcp_side_by_side.c; judged)" ""
out "Each MPI library and plain TCP, polling and blocking, in alternating blocks in the same two processes; ratio = median over the block triples of MPI / faster plain block of the triple, median of $REPS runs." ""
thead library "MPI (µs)" "plain polling (µs)" "plain blocking (µs)" "floor (µs)" "MPI / floor" target
for impl in "${MPIS[@]}"; do
    r=$(m tcp-sbs ratio "$impl"); [[ $r == n/a ]] || r=$(awk -v r="$r" 'BEGIN {printf "%.2f", r}')
    t=""
    if [[ $impl == ox ]]; then judge "TCP 8 B latency vs the faster plain TCP (same pair)" "$r" "<=" 1.15; t="≤ 1.15: $V"; fi
    trow "${NAME[$impl]}" "$(fmt 3 "$(m tcp-sbs mpi "$impl")")" "$(fmt 3 "$(m tcp-sbs plain "$impl")")" \
        "$(fmt 3 "$(m tcp-sbs plain_blocking "$impl")")" "$(fmt 3 "$(m tcp-sbs floor "$impl")")" "$r" "$t"
done
out ""
lat_table tcp
bw_table tcp tcp-bandwidth "Bandwidth, TCP (bandwidth.c; MB/s; higher is better)"
bw_table tcp tcp-bibw "Bidirectional bandwidth, TCP (bibw.c; MB/s both directions; higher is better)"

# --- collectives
for np in $COLL_RANKS; do
    out "## Collectives, $np ranks$( (( np > $(nproc) )) && echo " (oversubscribed: $(nproc) CPUs)") (coll.c; µs per call, max over ranks; lower is better)" ""
    thead operation oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI" "ox/faster" target
    for key in barrier bcast_8 bcast_1M allreduce_8 allreduce_1K allreduce_64K allreduce_1M alltoall_1K; do
        cols "coll$np" "$key"
        r1=$(ratio "${VAL[ox]}" "${VAL[mp]}"); r2=$(ratio "${VAL[ox]}" "${VAL[om]}")
        rb=$(ratio "${VAL[ox]}" "$(best lower "${VAL[mp]}" "${VAL[om]}")"); t=""
        if (( np == 16 )); then
            judge "16 ranks: $key vs the faster of MPICH and Open MPI" "$rb" "<=" 1; t="≤ faster: $V"
        elif (( np == 4 )) && [[ $key == allreduce_* ]]; then
            judge "4 ranks: $key vs MPICH" "$r1" "<=" 1; t="≤ MPICH: $V"
            judge "4 ranks: $key vs Open MPI" "$r2" "<=" 1; t+="; ≤ Open MPI: $V"
        fi
        trow "$key" "$(fmt 1 "${VAL[ox]}")" "$(fmt 1 "${VAL[mp]}")" "$(fmt 1 "${VAL[om]}")" "$r1" "$r2" "$rb" "$t"
    done
    out ""
done
out "## Making communicators (comm.c, 4 ranks; µs per call, max over ranks; lower is better)" ""
thead call oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI"
for pair in "dup:comm-dup:MPI_Comm_dup (1000 alive)" "create:comm-create:MPI_Comm_create_from_group (sessions, mpi://WORLD)"; do
    key=${pair%%:*}; rest=${pair#*:}; pre=${rest%%:*}; label=${rest#*:}
    cols "$pre" "$key"
    trow "$label" "$(fmt 2 "${VAL[ox]}")" "$(fmt 2 "${VAL[mp]}")" "$(fmt 2 "${VAL[om]}")" \
        "$(ratio "${VAL[ox]}" "${VAL[mp]}")" "$(ratio "${VAL[ox]}" "${VAL[om]}")"
done
out ""

# --- start-up, re-init
out "## Start-up (wall time of \`mpiexec -n N ./prog\`, launcher included; ms; lower is better)" ""
thead case oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI" target
for np in 2 16; do
    for prog in hello session_hello; do
        for i in "${MPIS[@]}"; do VAL[$i]=$(med_of "$OUT/res/start.$prog$np.$i" ms); done
        r1=$(ratio "${VAL[ox]}" "${VAL[mp]}"); r2=$(ratio "${VAL[ox]}" "${VAL[om]}")
        label="$([[ $prog == hello ]] && echo "MPI_Init hello" || echo "session hello"), -n $np"
        judge "start-up $label vs MPICH" "$r1" "<=" 0.5
        trow "$label" "$(fmt 1 "${VAL[ox]}")" "$(fmt 1 "${VAL[mp]}")" "$(fmt 1 "${VAL[om]}")" "$r1" "$r2" "≤ 0.5× MPICH: $V"
    done
done
out "" "Every column includes about $(fmt 1 "$(med_of "$OUT/res/start.timeout" ms)") ms for starting \`timeout\` itself. Open MPI 4.1 has no sessions." ""

out "## Re-init cycle (reinit.c, 4 ranks, ms per cycle = mean of cycles 2..$REINIT_CYCLES; lower is better)" ""
thead mode oxmpi MPICH "Open MPI" "ox/MPICH" target
for mode in atexit default; do
    cols "reinit-$mode" cycle_ms
    if [[ $mode == atexit ]]; then label="FINALIZE_ATEXIT=1"; lim=2; else label="default (teardown)"; lim=20; fi
    judge "re-init cycle, $label (oxmpi, ms)" "${VAL[ox]}" "<" "$lim"
    trow "$label" "$(fmt 3 "${VAL[ox]}")" "$(fmt 3 "${VAL[mp]}")" "$(fmt 3 "${VAL[om]}")" \
        "$(ratio "${VAL[ox]}" "${VAL[mp]}")" "oxmpi < $lim ms: $V"
done
out "" "First cycle, including the first initialization, oxmpi: ATEXIT $(fmt 3 "$(m reinit-atexit first_ms ox)") ms, default $(fmt 3 "$(m reinit-default first_ms ox)") ms. MPICH 4.0.2 cannot re-initialize (issue 6); Open MPI 4.1 has no sessions." ""

# --- memory, idle, instructions
out "## Memory (memory.c: MPI_Init, one barrier, then /proc/self; KiB; lower is better)" ""
out "Resident: VmHWM of each rank (peak resident set, shared pages it touched included). Shared memory per node: the sum over the ranks of the Pss (proportional share) of their shared mappings (smaps entries with permission s: POSIX shm, memfd, shared anonymous), i.e. the job's resident shared memory on the node; mapped: the largest rank's mapped shared memory (Size), touched or not." ""
thead measure oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI"
for np in 2 16; do
    for pair in "hwm_max:resident per rank, max" "hwm_mean:resident per rank, mean" "shm_node:shared memory per node (resident)" "shm_mapped_max:shared memory mapped per rank, max"; do
        key=${pair%%:*}; label=${pair#*:}
        cols "mem$np" "$key"
        trow "$np ranks: $label" "$(fmt 0 "${VAL[ox]}")" "$(fmt 0 "${VAL[mp]}")" "$(fmt 0 "${VAL[om]}")" \
            "$(ratio "${VAL[ox]}" "${VAL[mp]}")" "$(ratio "${VAL[ox]}" "${VAL[om]}")"
    done
done
out ""
out "## Idle CPU (idle.c: rank 0 waits $IDLE_SECONDS s while rank 1 sleeps; % of one core after the first 10 ms; lower is better)" ""
thead wait oxmpi MPICH "Open MPI" target
for key in recv barrier; do
    cols idle "$key"
    judge "idle rank in MPI_$([[ $key == recv ]] && echo Recv || echo Barrier) (oxmpi, % of a core)" "${VAL[ox]}" "<" 5
    trow "MPI_$([[ $key == recv ]] && echo Recv || echo Barrier)" "$(fmt 1 "${VAL[ox]}")" "$(fmt 1 "${VAL[mp]}")" "$(fmt 1 "${VAL[om]}")" "oxmpi < 5%: $V"
done
cols idle recv_all
out "" "From the start of the wait (first 10 ms included), MPI_Recv: oxmpi $(fmt 1 "${VAL[ox]}"), MPICH $(fmt 1 "${VAL[mp]}"), Open MPI $(fmt 1 "${VAL[om]}") %. One run each." ""
out "## Instructions per 8-byte iteration (instr.c under callgrind; per rank; lower is better)" ""
out "One iteration: one MPI_Send and one MPI_Recv of 8 bytes per rank over shared memory, the receive finding its message (the ranks wait outside MPI); counted inside the two calls only; (count at $N2 iterations - count at $N1) / $((N2 - N1)), mean of the two ranks." ""
thead "" oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI" target
cols instr per_iter
r1=$(ratio "${VAL[ox]}" "${VAL[mp]}"); r2=$(ratio "${VAL[ox]}" "${VAL[om]}")
judge "instructions per iteration vs MPICH" "$r1" "<" 1; t="< MPICH: $V"
judge "instructions per iteration vs Open MPI" "$r2" "<" 1; t+="; < Open MPI: $V"
trow "send + receive" "${VAL[ox]}" "${VAL[mp]}" "${VAL[om]}" "$r1" "$r2" "$t"
out ""

# --- MPI-IO
out "## MPI-IO (io_strided.c: 4 ranks, each every 4th block of 4 KiB, $IO_MIB MiB, collective; MB/s; higher is better)" ""
thead measure oxmpi MPICH "Open MPI" "ox/MPICH" "ox/Open MPI" target
for what in write read; do
    cols io "${what}_mbs"
    r1=$(ratio "${VAL[ox]}" "${VAL[mp]}")
    judge "MPI-IO strided $what vs MPICH" "$r1" ">=" 1
    trow "strided $what" "$(fmt 0 "${VAL[ox]}")" "$(fmt 0 "${VAL[mp]}")" "$(fmt 0 "${VAL[om]}")" "$r1" \
        "$(ratio "${VAL[ox]}" "${VAL[om]}")" "≥ MPICH: $V"
done
out "" "Files in $([[ $OUT == "$ROOT"/* ]] && echo "${OUT#"$ROOT/"}" || echo "$OUT"), so through its file system and page cache." ""

# --- plots
PLOTS=
if command -v gnuplot >/dev/null 2>&1; then
    plot() { # name title ylabel ncols(after size) log-y
        local f=$OUT/plot/$1.dat n=$4 i cmd="" names
        read -r -a names <<<"$(head -n 1 "$f" | sed 's/^# size //')"
        for (( i = 0; i < n; i++ )); do
            cmd+="${cmd:+, }'$f' using 1:$((i + 2)) with linespoints title '${names[i]}'"
        done
        gnuplot >"$OUT/log/plot.$1" 2>&1 <<EOF || { echo "bench: notice: plot $1 failed" >&2; return; }
set terminal pngcairo size 800,500
set output '$RESULTS/$1.png'
set datafile missing '?'
set logscale x 2
set logscale y
set format x '%.0b%B'
set title '$2'
set xlabel 'message size (bytes)'
set ylabel '$3'
set key left top
set grid
plot $cmd
EOF
        PLOTS+="![$2]($1.png)"$'\n'
    }
    plot lat-shm "Latency, shared memory" "one-way latency (us)" 4
    plot lat-tcp "Latency, TCP" "one-way latency (us)" 5
    plot bw-shm "Bandwidth, shared memory" "MB/s" 4
    plot bw-tcp "Bandwidth, TCP" "MB/s" 5
    out "## Plots" "" "$PLOTS"
else
    echo "bench: notice: gnuplot not found (apt-get install gnuplot-nox); no plots" >&2
    out "## Plots" "" "None: gnuplot was not found." ""
fi

# --- failures and the summary
if (( ${#FAILURES[@]} )); then
    out "## Failed cases (n/a in the tables; each not repeated after its first failure)" "" '```'
    for f in "${FAILURES[@]}"; do out "$f"; done
    out '```' ""
fi
{
    echo "## Targets: $TARGETS_MET met of $TARGETS_ALL (n/a counts as not met)"
    echo
    for l in "${TARGET_LINES[@]}"; do echo "- $l"; done
} >"$OUT/summary.md"
awk -v sf="$OUT/summary.md" '$0 == "@@SUMMARY@@" { while ((getline l < sf) > 0) print l; next } { print }' \
    "$REPORT" >"$RESULTS/latest.md"
cat "$RESULTS/latest.md"
echo
echo "results: ${RESULTS}/latest.md; raw results and logs in $OUT"
exit 0
