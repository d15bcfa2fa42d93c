#!/usr/bin/env bash
# Multi-host launching without a second machine: two network namespaces
# stand for two hosts. A bridge in this (root) namespace carries a private
# 10.x.y.0/24 network: mpiexec's PMI listener on 10.x.y.1, the "hosts" on
# .2 and .3, each joined to the bridge by a veth pair. The namespaces have
# no other route, so no traffic leaves the machine. mpiexec reaches them
# with `-launcher-exec "ip netns exec"`, the way it would reach real hosts
# with ssh.
#
# Required cases: ranks start on the right host with the right rank, size
# and local ids, their stdout and stderr come back; PMI over TCP (a raw
# PMI-1 client: put/get/barrier across hosts, PMI_process_mapping, name
# service) for several placements (-hosts, -f hostfile, -ppn, cycling,
# local and remote ranks mixed); an oxmpi MPI program (init, rank, size,
# finalize); stdin reaches a remote rank 0; a failing remote rank, a lost
# host and an interrupt end the job with the right message and status and
# leave no process behind; a wrong job secret is refused; a stray
# connection to the PMI port disturbs nothing.
#
# Unless MULTIHOST_P2P=0: point-to-point and sessions tests across the
# two hosts (needs the TCP transport), each host given its own
# OXMPI_HOSTNAME with `-hostname-env OXMPI_HOSTNAME`; MPI_Comm_spawn with
# info host= one remote host and both (spawn_hosts: the remote children
# are started by that host's proxy).
#
# Needs root and `ip netns`; otherwise exits 77 (skipped) with a notice.
# Usage: c_tests/multihost.sh  (OXMPI_PREFIX: the install, default
#                               build/stage; MPIEXEC: its launcher)
# Prints `ok - name` or `not ok - name: why` per case, then `No Errors` and
# exits 0 if everything passed, else exits 1.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OXMPI_PREFIX:-$ROOT/build/stage}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
HELPERS=$ROOT/c_tests/launcher
LIMIT=40
failures=0

skip() {
    echo "skipped: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "multihost.sh needs root (it creates network namespaces)"
command -v ip >/dev/null 2>&1 || skip "the ip command (iproute2) is not installed"
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"

# Unique names per run (interface names have at most 15 characters).
TAG=oxmh$$
NS1=${TAG}a
NS2=${TAG}b
BRIDGE=${TAG}br
WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-multihost.XXXXXX")
BIN=$WORK/bin
mkdir -p "$BIN"

cleanup() {
    local pid
    # Anything a failed case left behind: by its path, or by namespace.
    for pid in $(pgrep -f -- "$WORK/" 2>/dev/null) \
        $(ip netns pids "$NS1" 2>/dev/null) $(ip netns pids "$NS2" 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null
    done
    ip netns del "$NS1" 2>/dev/null
    ip netns del "$NS2" 2>/dev/null
    ip link del "${TAG}v1" 2>/dev/null
    ip link del "${TAG}v2" 2>/dev/null
    ip link del "$BRIDGE" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ok() { echo "ok - $1"; }
not_ok() {
    echo "not ok - $1: $2"
    failures=$((failures + 1))
}

# ---------------------------------------------------------------- network
# A 10.x.y.0/24 that nothing here uses yet.
NET=""
for _ in $(seq 1 50); do
    candidate=10.$((RANDOM % 200 + 50)).$((RANDOM % 250 + 1))
    if [ -z "$(ip -4 route show to match "$candidate.1" 2>/dev/null | grep -v '^default')" ] \
        && ! ip -4 addr show | grep -q " inet $candidate\."; then
        NET=$candidate
        break
    fi
done
[ -n "$NET" ] || skip "no free 10.x.y.0/24 network for the namespaces"
ADDR=$NET.1

setup_network() {
    ip link add "$BRIDGE" type bridge || return 1
    ip addr add "$ADDR/24" dev "$BRIDGE" || return 1
    ip link set "$BRIDGE" up || return 1
    local i ns
    for i in 1 2; do
        ns=$NS1
        [ "$i" = 2 ] && ns=$NS2
        ip netns add "$ns" || return 1
        ip link add "${TAG}v$i" type veth peer name eth0 netns "$ns" || return 1
        ip link set "${TAG}v$i" master "$BRIDGE" up || return 1
        ip -n "$ns" addr add "$NET.$((i + 1))/24" dev eth0 || return 1
        ip -n "$ns" link set eth0 up || return 1
        ip -n "$ns" link set lo up || return 1
    done
}
if ! setup_network 2>"$WORK/net.err"; then
    skip "cannot create network namespaces and a bridge: $(head -c 300 "$WORK/net.err")"
fi
# Both "hosts" reach the listener address.
for ns in "$NS1" "$NS2"; do
    if ! ip netns exec "$ns" bash -c "exec 3<>/dev/tcp/$ADDR/9" 2>"$WORK/ping.err" \
        && ! grep -q "refused" "$WORK/ping.err"; then
        not_ok "network" "$ns cannot reach $ADDR: $(head -c 300 "$WORK/ping.err")"
        exit 1
    fi
done

# ---------------------------------------------------------------- helpers
MPX=("$MPIEXEC" -launcher-exec "ip netns exec" -pmi-addr "$ADDR")

# run ARGS...: runs mpiexec (stdin from $STDIN, default /dev/null) and sets
# RC, OUT, ERR and MS (wall time in milliseconds).
run() {
    local start
    start=$(($(date +%s%N) / 1000000))
    timeout -k 2 "$LIMIT" "${MPX[@]}" "$@" <"${STDIN:-/dev/null}" >"$WORK/out" 2>"$WORK/err"
    RC=$?
    MS=$(($(date +%s%N) / 1000000 - start))
    OUT=$(cat "$WORK/out")
    ERR=$(cat "$WORK/err")
}
got() { printf 'exit %s, stdout %q, stderr %q' "$RC" "$(tail -c 800 <<<"$OUT")" "$(tail -c 800 <<<"$ERR")"; }

begin() {
    CASE=$1
    WHY=""
}
expect() {
    local what=$1
    shift
    if [ -z "$WHY" ] && ! "$@"; then
        WHY=$what
    fi
}
finish() {
    if [ -z "$WHY" ]; then ok "$CASE"; else not_ok "$CASE" "$WHY"; fi
}
rc_is() { [ "$RC" -eq "$1" ]; }
err_empty() { [ -z "$ERR" ]; }
err_matches() { [[ $ERR =~ $1 ]]; }
sorted_out_is() { [ "$(sort <<<"$OUT")" = "$(sort <<<"$1")" ]; }
sorted_err_is() { [ "$(sort <<<"$ERR")" = "$(sort <<<"$1")" ]; }
out_has() { grep -qx -- "$1" "$WORK/out"; }
# ended_early: the job ended on the fault, long before its other ranks'
# 30 s sleep or the time limit would end it. No tighter bound: these
# machines are noisy; the time measured goes to docs/reliability.md.
ended_early() { [ "$MS" -lt 15000 ]; }

new_piddir() {
    PIDDIR=$WORK/pids-$1
    mkdir -p "$PIDDIR"
}
# survivors: rank processes of the current case still alive (not zombies).
survivors() {
    local f pid state left="" waited=0
    while :; do
        left=""
        for f in "${PIDDIR:-/nonexistent}"/*.pid; do
            [ -e "$f" ] || continue
            pid=$(cat "$f")
            state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)
            [ -n "$state" ] && [ "$state" != Z ] && left="$left $pid"
        done
        for pid in $(ip netns pids "$NS1" 2>/dev/null) $(ip netns pids "$NS2" 2>/dev/null); do
            state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)
            [ -n "$state" ] && [ "$state" != Z ] && left="$left ns:$pid"
        done
        if [ -z "$left" ] || [ "$waited" -ge 2000 ]; then
            echo "$left"
            return
        fi
        sleep 0.05
        waited=$((waited + 50))
    done
}
none_left() { [ -z "$(survivors)" ]; }
# report AREA: the current case as a row of docs/reliability.md (after
# `finish`): exit status, time, mpiexec's first line on stderr, and what
# of the case's processes is left on either "host".
report() {
    local left
    left=$(survivors)
    echo "REPORT|$1|two hosts (network namespaces): $CASE|exit $RC${MS:+ after $MS ms}${ERR:+; ${ERR%%$'\n'*}}|${left:+processes:$left}${left:-no process on either host}"
}
# proxy_in NS: the pid of the mpiexec proxy running in namespace NS.
proxy_in() {
    local pid
    for pid in $(ip netns pids "$1" 2>/dev/null); do
        if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- '--proxy'; then
            echo "$pid"
            return
        fi
    done
}
# wait_pids N: waits until N helpers recorded their pid in $PIDDIR.
wait_pids() {
    local waited=0
    while [ "$(ls "$PIDDIR" | wc -l)" -lt "$1" ] && [ $waited -lt 200 ]; do
        sleep 0.05
        waited=$((waited + 1))
    done
}

# ---------------------------------------------------------------- build
if [ ! -x "$MPIEXEC" ]; then
    not_ok "setup" "$MPIEXEC is missing (make stage)"
    exit 1
fi
for helper in pmi_client sleeper exit3; do
    if ! cc -O1 -Wall -o "$BIN/$helper" "$HELPERS/$helper.c" 2>"$WORK/cc.err"; then
        not_ok "build $helper" "$(head -c 300 "$WORK/cc.err")"
        exit 1
    fi
done
cat >"$WORK/mpi_hello.c" <<'EOF'
/* Prints rank, size and the host the launcher says it is on. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    const char *host = getenv("OXMPI_HOSTNAME");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("mpi hello rank %d of %d on %s\n", rank, size, host ? host : "?");
    MPI_Finalize();
    return 0;
}
EOF
if ! "$PREFIX/bin/mpicc" -O1 -o "$BIN/mpi_hello" "$WORK/mpi_hello.c" 2>"$WORK/cc.err"; then
    not_ok "build mpi_hello with oxmpi's mpicc" "$(head -c 300 "$WORK/cc.err")"
fi

# ---------------------------------------------------------------- launch and stdio
begin "hello on two hosts: rank, size, host, local ids, stdout and stderr"
run -hosts "$NS1:2,$NS2:2" sh -c \
    'echo "hello rank $PMI_RANK of $PMI_SIZE on $(ip netns identify) local $MPI_LOCALRANKID/$MPI_LOCALNRANKS pmi ${PMI_FD:-port=$PMI_ID}"; echo "stderr of $PMI_RANK" >&2'
expect "$(got)" rc_is 0
expect "stdout: $OUT" sorted_out_is "hello rank 0 of 4 on $NS1 local 0/2 pmi port=0
hello rank 1 of 4 on $NS1 local 1/2 pmi port=1
hello rank 2 of 4 on $NS2 local 0/2 pmi port=2
hello rank 3 of 4 on $NS2 local 1/2 pmi port=3"
expect "stderr: $ERR" sorted_err_is "stderr of 0
stderr of 1
stderr of 2
stderr of 3"
finish

# ---------------------------------------------------------------- PMI over TCP
# pmi_case NAME MAPPING EXPECTED_LINES MPIEXEC_ARGS...
pmi_case() {
    local name=$1 mapping=$2 expected=$3
    shift 3
    begin "PMI across hosts: $name"
    run "$@" "$BIN/pmi_client" 1 "$mapping"
    expect "$(got)" rc_is 0
    expect "stderr: $ERR" err_empty
    expect "stdout: $OUT" sorted_out_is "$expected"
    finish
}
pmi_case "-hosts ns1:2,ns2:2" "(vector,(0,2,2))" "pmi_client rank 0 of 4 ok local 0/2
pmi_client rank 1 of 4 ok local 1/2
pmi_client rank 2 of 4 ok local 0/2
pmi_client rank 3 of 4 ok local 1/2" -hosts "$NS1:2,$NS2:2"

printf '# two hosts\n\n%s:1   # one slot\n%s:3\n' "$NS1" "$NS2" >"$WORK/hostfile"
pmi_case "-f hostfile (1 and 3 slots)" "(vector,(0,1,1),(1,1,3))" "pmi_client rank 0 of 4 ok local 0/1
pmi_client rank 1 of 4 ok local 0/3
pmi_client rank 2 of 4 ok local 1/3
pmi_client rank 3 of 4 ok local 2/3" -f "$WORK/hostfile"

pmi_case "-hosts ns1,ns2 -n 5 (cycling)" "(vector,(0,2,1))" "pmi_client rank 0 of 5 ok local 0/3
pmi_client rank 1 of 5 ok local 0/2
pmi_client rank 2 of 5 ok local 1/3
pmi_client rank 3 of 5 ok local 1/2
pmi_client rank 4 of 5 ok local 2/3" -hosts "$NS1,$NS2" -n 5

pmi_case "-ppn 1 overrides slots" "(vector,(0,2,1))" "pmi_client rank 0 of 2 ok local 0/1
pmi_client rank 1 of 2 ok local 0/1" -hosts "$NS1:4,$NS2:4" -ppn 1

pmi_case "localhost and two hosts (PMI_FD and PMI_PORT mixed)" "(vector,(0,3,1))" "pmi_client rank 0 of 3 ok local 0/1
pmi_client rank 1 of 3 ok local 0/1
pmi_client rank 2 of 3 ok local 0/1" -hosts "localhost,$NS1,$NS2"

begin "PMI address from -iface"
timeout -k 2 "$LIMIT" "$MPIEXEC" -launcher-exec "ip netns exec" -iface "$BRIDGE" -hosts "$NS1,$NS2" \
    sh -c 'echo "$PMI_RANK $PMI_PORT"' </dev/null >"$WORK/out" 2>"$WORK/err"
RC=$?
OUT=$(cat "$WORK/out")
ERR=$(cat "$WORK/err")
expect "$(got)" rc_is 0
expect "stdout: $OUT" [ "$(sort <<<"$OUT" | sed 's/:[0-9]*$//')" = "0 $ADDR
1 $ADDR" ]
finish

begin "a stray connection to the PMI port disturbs nothing"
# Before it starts, rank 0 sends garbage to the listener, and keeps a
# connection open after half a handshake while the job runs.
run -hosts "$NS1:2,$NS2:2" bash -c '
    if [ "$PMI_RANK" = 0 ]; then
        (exec 3<>"/dev/tcp/${PMI_PORT%:*}/${PMI_PORT##*:}" && printf "garbage\n" >&3)
        (exec 4<>"/dev/tcp/${PMI_PORT%:*}/${PMI_PORT##*:}" && printf "cmd=initack pmi" >&4 && sleep 2) &
    fi
    exec "$0" 1 "(vector,(0,2,2))"' "$BIN/pmi_client"
expect "$(got)" rc_is 0
expect "stdout: $OUT" sorted_out_is "pmi_client rank 0 of 4 ok local 0/2
pmi_client rank 1 of 4 ok local 1/2
pmi_client rank 2 of 4 ok local 0/2
pmi_client rank 3 of 4 ok local 1/2"
finish
report attack

begin "a connection without the job secret is refused"
run -hosts "$NS1:2,$NS2:2" sh -c \
    'if [ "$PMI_RANK" = 2 ]; then export OXMPI_JOB_SECRET=not-the-secret; fi; exec "$0" 1 "(vector,(0,2,2))"' "$BIN/pmi_client"
expect "$(got)" rc_is 1
expect "stderr: $ERR" err_matches "mpiexec: refused a PMI connection from $NET\.3:[0-9]+ \(rank 2\): wrong job secret"
expect "stderr: $ERR" err_matches "mpiexec: rank 2 \(pid [0-9]+ on $NS2\) exited with code 1"
finish
report attack

# ---------------------------------------------------------------- MPI
if [ -x "$BIN/mpi_hello" ]; then
    begin "oxmpi MPI hello on two hosts"
    run -hosts "$NS1:2,$NS2:2" -hostname-env OXMPI_HOSTNAME "$BIN/mpi_hello"
    expect "$(got)" rc_is 0
    expect "stderr: $ERR" err_empty
    expect "stdout: $OUT" sorted_out_is "mpi hello rank 0 of 4 on $NS1
mpi hello rank 1 of 4 on $NS1
mpi hello rank 2 of 4 on $NS2
mpi hello rank 3 of 4 on $NS2"
    finish
fi

# ---------------------------------------------------------------- stdin
begin "stdin reaches rank 0 on a remote host, others get none"
printf 'first\nsecond\n' >"$WORK/stdin"
STDIN=$WORK/stdin run -hosts "$NS1:1,$NS2:1" sh -c 'echo "$PMI_RANK:$(tr "\n" " ")"'
expect "$(got)" rc_is 0
expect "stdout: $OUT" sorted_out_is "0:first second 
1:"
finish

# ---------------------------------------------------------------- failures
begin "a remote rank exiting with code 3 ends the job, naming its host"
new_piddir exit3
run -hosts "$NS1:2,$NS2:2" "$BIN/exit3" "$PIDDIR"
expect "$(got)" rc_is 3
expect "stderr: $ERR" err_matches "^mpiexec: rank 1 \(pid [0-9]+ on $NS1\) exited with code 3$"
expect "took ${MS} ms" ended_early
expect "left behind:$(survivors)" none_left
finish
report fault

begin "a lost host ends the job, naming it"
new_piddir lost
timeout -k 2 "$LIMIT" "${MPX[@]}" -hosts "$NS1:2,$NS2:2" "$BIN/sleeper" "$PIDDIR" 30 \
    </dev/null >"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_pids 4
proxy=$(proxy_in "$NS2")
start=$(($(date +%s%N) / 1000000))
if [ -n "$proxy" ]; then
    kill -KILL "$proxy"
fi
wait "$launcher"
RC=$?
MS=$(($(date +%s%N) / 1000000 - start))
ERR=$(cat "$WORK/err")
expect "no proxy found in $NS2" test -n "$proxy"
expect "$(got)" rc_is 255
expect "stderr: $ERR" err_matches "^mpiexec: lost host $NS2: .* while ranks 2,3 ran there$"
expect "left behind:$(survivors)" none_left
finish
report fault

begin "SIGINT to mpiexec reaches the remote ranks"
new_piddir int
timeout -k 2 "$LIMIT" env --default-signal=INT,TERM,HUP "${MPX[@]}" -hosts "$NS1:2,$NS2:2" \
    "$BIN/sleeper" "$PIDDIR" 30 </dev/null >"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_pids 4
start=$(($(date +%s%N) / 1000000))
kill -INT "$(pgrep -P "$launcher" -f -- "$PIDDIR")"
wait "$launcher"
RC=$?
MS=$(($(date +%s%N) / 1000000 - start))
ERR=$(cat "$WORK/err")
expect "$(got)" rc_is 130
expect "stderr: $ERR" err_empty
expect "left behind:$(survivors)" none_left
finish
report fault

begin "remote ranks die with a SIGKILLed mpiexec"
new_piddir killed
"${MPX[@]}" -hosts "$NS1:2,$NS2:2" "$BIN/sleeper" "$PIDDIR" 30 </dev/null >/dev/null 2>&1 &
launcher=$!
disown "$launcher"
wait_pids 4
kill -KILL "$launcher"
expect "left behind:$(survivors)" none_left
finish
RC="none (killed)" MS="" ERR="" report fault

begin "a host that does not exist"
run -hosts "$NS1:1,${TAG}none:1" "$BIN/pmi_client" 1 "(vector,(0,2,1))"
expect "$(got)" rc_is 255
expect "stderr: $ERR" err_matches "mpiexec: lost host ${TAG}none: its launcher \`ip netns exec ${TAG}none\` exited with code [0-9]+ before its proxy connected back"
finish
report fault

# ---------------------------------------------------------------- bad host lists
# usage_case NAME ERR_REGEX MPIEXEC_ARGS...: exit 2, one line, nothing started.
usage_case() {
    local name=$1 pattern=$2
    shift 2
    begin "bad usage: $name"
    timeout -k 2 "$LIMIT" "$MPIEXEC" "$@" </dev/null >"$WORK/out" 2>"$WORK/err"
    RC=$?
    OUT=$(cat "$WORK/out")
    ERR=$(cat "$WORK/err")
    expect "$(got)" rc_is 2
    expect "stderr: $ERR" [ "$(wc -l <"$WORK/err")" -eq 1 ]
    expect "stderr: $ERR" err_matches "$pattern"
    expect "stdout: $OUT" [ -z "$OUT" ]
    finish
}
usage_case "host that does not resolve, no -pmi-addr" \
    "^mpiexec: cannot choose the address on which host '${TAG}x' reaches mpiexec: .*-pmi-addr" \
    -launcher-exec "ip netns exec" -hosts "${TAG}x" echo started
usage_case "missing host file" "^mpiexec: cannot read host file '$WORK/none': " -f "$WORK/none" echo started
printf '%s:1 extra\n' "$NS1" >"$WORK/badhosts"
usage_case "bad host file line" "^mpiexec: $WORK/badhosts:1: unexpected 'extra'" -f "$WORK/badhosts" echo started
usage_case "bad slot count" "^mpiexec: -hosts: '$NS1:0': invalid slot count '0'$" -hosts "$NS1:0" echo started
usage_case "-pmi-addr not of this host" "^mpiexec: cannot listen for PMI connections on 192\.0\.2\.254: " \
    -launcher-exec "ip netns exec" -pmi-addr 192.0.2.254 -hosts "$NS1" echo started

# ---------------------------------------------------------------- ssh
# The default launcher for real: an sshd in each namespace ("host"), with
# keys made for this run, reached by the ssh client that mpiexec runs
# (`ssh -x HOST 'mpiexec' --proxy`, through the remote shell). The client
# reads this run's config through a wrapper named ssh first in PATH; the
# root's own ssh configuration and known hosts are not touched.
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
SSH=$(command -v ssh)
SSHDIR=$WORK/ssh
if [ -x "$SSHD" ] && [ -n "$SSH" ] && command -v ssh-keygen >/dev/null 2>&1 \
    && [ -x "$BIN/mpi_hello" ] && mkdir -p "$SSHDIR/bin"; then
    begin "-launcher ssh: sshd on both hosts, MPI hello, stdio and exit codes through ssh"
    chmod 700 "$SSHDIR"
    made_privsep=""
    if [ ! -d /run/sshd ]; then
        # sshd's privilege separation directory (the package makes it at boot).
        mkdir -p /run/sshd && chmod 755 /run/sshd && made_privsep=1
    fi
    ssh-keygen -q -t ed25519 -N '' -f "$SSHDIR/client" </dev/null
    ssh-keygen -q -t ed25519 -N '' -f "$SSHDIR/host" </dev/null
    cp "$SSHDIR/client.pub" "$SSHDIR/authorized_keys"
    printf '%s\n' "HostKey $SSHDIR/host" "AuthorizedKeysFile $SSHDIR/authorized_keys" \
        "PermitRootLogin prohibit-password" "PubkeyAuthentication yes" \
        "PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" \
        "StrictModes no" "X11Forwarding no" >"$SSHDIR/sshd_config"
    printf '%s\n' "Host *" "IdentityFile $SSHDIR/client" "IdentitiesOnly yes" "BatchMode yes" \
        "StrictHostKeyChecking no" "UserKnownHostsFile /dev/null" "LogLevel ERROR" \
        "ConnectTimeout 5" >"$SSHDIR/config"
    printf '#!/bin/sh\nexec "%s" -F "%s" "$@"\n' "$SSH" "$SSHDIR/config" >"$SSHDIR/bin/ssh"
    chmod 755 "$SSHDIR/bin/ssh"
    SSHD_PIDS=""
    for i in 1 2; do
        ns=$NS1
        [ "$i" = 2 ] && ns=$NS2
        ip netns exec "$ns" "$SSHD" -D -e -f "$SSHDIR/sshd_config" \
            -o "ListenAddress=$NET.$((i + 1))" -o "PidFile=$SSHDIR/sshd$i.pid" \
            2>"$SSHDIR/sshd$i.log" &
        SSHD_PIDS="$SSHD_PIDS $!"
    done
    # Both daemons answer before the job starts (at most 5 s each).
    for host in "$NET.2" "$NET.3"; do
        for _ in $(seq 1 50); do
            "$SSHDIR/bin/ssh" "$host" true 2>"$SSHDIR/probe.err" </dev/null && break
            sleep 0.1
        done
    done
    PATH="$SSHDIR/bin:$PATH" timeout -k 2 "$LIMIT" "$MPIEXEC" -launcher ssh -pmi-addr "$ADDR" \
        -hosts "$NET.2:2,$NET.3:2" -hostname-env OXMPI_HOSTNAME "$BIN/mpi_hello" \
        </dev/null >"$WORK/out" 2>"$WORK/err"
    RC=$?
    OUT=$(cat "$WORK/out")
    ERR=$(cat "$WORK/err")
    expect "$(got); sshd: $(tail -c 300 "$SSHDIR/sshd1.log"); probe: $(tail -c 200 "$SSHDIR/probe.err")" rc_is 0
    expect "stderr: $ERR" err_empty
    expect "stdout: $OUT" sorted_out_is "mpi hello rank 0 of 4 on $NET.2
mpi hello rank 1 of 4 on $NET.2
mpi hello rank 2 of 4 on $NET.3
mpi hello rank 3 of 4 on $NET.3"
    # A remote rank's exit code comes back through ssh too.
    PATH="$SSHDIR/bin:$PATH" timeout -k 2 "$LIMIT" "$MPIEXEC" -launcher ssh -pmi-addr "$ADDR" \
        -hosts "$NET.2,$NET.3" -n 2 sh -c 'exit $((PMI_RANK * 3))' \
        </dev/null >"$WORK/out" 2>"$WORK/err"
    RC=$?
    ERR=$(cat "$WORK/err")
    expect "a remote rank's exit 3: exit $RC, stderr $ERR" rc_is 3
    for pid in $SSHD_PIDS; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    [ -n "$made_privsep" ] && rmdir /run/sshd 2>/dev/null
    finish
else
    echo "notice: -launcher ssh not tested for real (needs sshd, ssh and ssh-keygen: Debian packages openssh-server and openssh-client)"
fi

# ---------------------------------------------------------------- optional: MPI across hosts
if [ "${MULTIHOST_P2P:-1}" = 1 ]; then
    # With -hostname-env each "host" has its own name; without it the ranks
    # of both namespaces share this machine's name and boot id, and only
    # the launcher's placement says they are on different hosts (the ranks
    # must follow it: TCP between the namespaces, not shared memory).
    for names in "-hostname-env OXMPI_HOSTNAME" ""; do
        for t in p2p_basic sessions_basic; do
            begin "$t across two hosts (${names:-one host name for both})"
            if [ -x "$BIN/$t" ] || "$PREFIX/bin/mpicc" -O1 -I "$ROOT/c_tests" -o "$BIN/$t" "$ROOT/c_tests/$t.c" 2>"$WORK/cc.err"; then
                # shellcheck disable=SC2086 # $names is zero or two words
                run -hosts "$NS1:2,$NS2:2" $names \
                    -genv OXMPI_INITIAL_ERRHANDLER return "$BIN/$t"
                expect "$(got)" rc_is 0
                expect "no 'No Errors' line: $(got)" out_has "No Errors"
            else
                WHY="does not compile: $(head -c 300 "$WORK/cc.err")"
            fi
            finish
            [ -z "$names" ] && report fault
        done
    done
    # MPI_Comm_spawn onto the job's hosts: the proxy of a remote host
    # starts the children put there (spawn_hosts checks each child's host
    # and local id, and talks with it). Parents on both hosts; children on
    # the second only, then on both in turn.
    for children in "$NS2" "$NS1,$NS2"; do
        begin "MPI_Comm_spawn with info host=$children (proxies start the children)"
        if [ -x "$BIN/spawn_hosts" ] || "$PREFIX/bin/mpicc" -O1 -I "$ROOT/c_tests" -o "$BIN/spawn_hosts" "$ROOT/c_tests/spawn_hosts.c" 2>"$WORK/cc.err"; then
            run -hosts "$NS1:1,$NS2:1" -hostname-env OXMPI_HOSTNAME "$BIN/spawn_hosts" "$children"
            expect "$(got)" rc_is 0
            expect "no 'No Errors' line: $(got)" out_has "No Errors"
        else
            WHY="does not compile: $(head -c 300 "$WORK/cc.err")"
        fi
        finish
    done
else
    echo "notice: MPI point-to-point and spawn across hosts not tested (MULTIHOST_P2P=0)"
fi

if [ "$failures" -eq 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
