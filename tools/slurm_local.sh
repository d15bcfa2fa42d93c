#!/bin/bash
# A local Slurm on this machine, for tests (c_tests/slurm.sh) and CI:
# munged (the installed key /etc/munge/munge.key, generated if missing),
# slurmctld and two slurmds on this host standing for two nodes, `oxmpi1`
# and `oxmpi2` (Slurm's NodeHostname, each slurmd started with -N; Debian's
# Slurm allows it), each with 16 CPUs (more than the cores, so 16 tasks fit
# on one node; SlurmdParameters=config_overrides), no cgroups
# (proctrack/linuxproc, task/none), everything else under $OXMPI_SLURM_DIR.
# `srun -N 1` runs on one node, `srun -N 2` on both.
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge.
#
# Usage: tools/slurm_local.sh start|stop|status|env
#   start   idempotent: starts what is not running, waits until the nodes are idle
#   stop    stops the daemons this script started (munged is left running)
#   status  exit 0 if both nodes are up (idle, mixed or allocated)
#   env     prints `export SLURM_CONF=...`, for `eval`
# Environment: OXMPI_SLURM_DIR (default /tmp/oxmpi-slurm), OXMPI_SLURM_PORT
# (slurmctld's port; the slurmds use the next two; default 16817, away from
# Slurm's own 6817 so a real installation is not disturbed).
set -u

DIR=${OXMPI_SLURM_DIR:-/tmp/oxmpi-slurm}
PORT=${OXMPI_SLURM_PORT:-16817}
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF
NODES="oxmpi1 oxmpi2"
HOST=$(hostname -s)

die() { echo "slurm_local: $*" >&2; exit 1; }

write_conf() {
    mkdir -p "$DIR/ctld" "$DIR/spool" "$DIR/log" || return 1
    cat > "$CONF.new" <<CONF
# Written by tools/slurm_local.sh: a one-node Slurm for oxmpi's tests.
ClusterName=oxmpi
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/spool/%n
# Per node: Slurm's pmix plugin makes its client directories there
# (spmix_appdir_*), which two slurmds on one host would share in /tmp.
TmpFS=$DIR/tmp/%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=oxmpi1 NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((PORT + 1)) CPUs=16 RealMemory=1000 State=UNKNOWN
NodeName=oxmpi2 NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((PORT + 2)) CPUs=16 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=oxmpi1,oxmpi2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    for n in $NODES; do mkdir -p "$DIR/spool/$n" "$DIR/tmp/$n" || return 1; done
    mv "$CONF.new" "$CONF"
}

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
    munge_ok && return 0
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        if command -v mungekey >/dev/null; then mungekey --create --force >/dev/null 2>&1
        else dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 2>/dev/null
        fi
        chown munge:munge /etc/munge/munge.key 2>/dev/null
        chmod 400 /etc/munge/munge.key
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null
    if id munge >/dev/null 2>&1; then daemon runuser -u munge -- munged || return 1
    else daemon munged --force || return 1
    fi
    for _ in $(seq 50); do munge_ok && return 0; sleep 0.1; done
    return 1
}

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# daemon COMMAND...: starts a daemon (which forks itself) with none of this
# shell's descriptors but the standard ones, pointed at /dev/null: a daemon
# must not keep a caller's pipe (a test runner waiting for end of file) or
# lock (`flock` around a test) open after the caller is gone.
daemon() {
    (
        for fd in /proc/$BASHPID/fd/*; do
            fd=${fd##*/}
            [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
        done
        exec "$@" </dev/null >/dev/null 2>&1
    )
}

# Both nodes idle, mixed or allocated.
node_up() { [ "$(sinfo -h -N -o %t 2>/dev/null | grep -cE '^(idle|mix|alloc)')" = 2 ]; }

start() {
    [ "$(id -u)" = 0 ] || die "needs root"
    for c in munged slurmctld slurmd srun sinfo; do
        command -v "$c" >/dev/null || die "$c is not installed (Debian: slurmctld slurmd slurm-client munge)"
    done
    if running "$DIR/slurmctld.pid" && node_up; then return 0; fi
    write_conf 2>/dev/null || die "cannot write $CONF"
    start_munge || die "munged does not answer (see /var/log/munge/munged.log)"
    if ! running "$DIR/slurmctld.pid"; then
        # -c: no state (jobs, nodes) from an earlier run.
        daemon slurmctld -c -f "$CONF" || die "slurmctld did not start (see $DIR/log/slurmctld.log)"
    fi
    for n in $NODES; do
        if ! running "$DIR/slurmd.$n.pid"; then
            daemon slurmd -f "$CONF" -N "$n" || die "slurmd -N $n did not start (see $DIR/log/slurmd.$n.log)"
        fi
    done
    # Up to 30 s for the nodes to register and turn idle.
    for _ in $(seq 60); do
        if node_up; then return 0; fi
        sleep 0.5
    done
    sinfo -N -l >&2
    die "nodes $NODES did not become idle (see $DIR/log/)"
}

stop() {
    for f in "$DIR"/slurmd.*.pid "$DIR/slurmctld.pid"; do
        [ -s "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        rm -f "$f"
    done
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) [ -f "$CONF" ] && node_up ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
