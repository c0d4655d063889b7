#!/usr/bin/env bash
# A single-node Slurm for the tests: munged, slurmctld and slurmd on this machine only, every
# file (keys aside) under one folder, on ports of their own, so that nothing of a real cluster
# is touched.
#
#   cluster.sh start DIR [CPUS]   starts them (CPUS: the node's, default 2) and waits until the
#                                 node is idle; prints the slurm.conf to use (export SLURM_CONF).
#                                 Exit 3 with the reason on stderr when they cannot start.
#   cluster.sh stop DIR           stops them.
#
# Needs Debian's slurmctld, slurmd, slurm-client and munge (packaging/setup.sh installs them when
# the tests are built) and root, as slurmd runs the jobs as their users.
set -euo pipefail

cmd="${1:-}"
dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: cluster.sh start|stop DIR [CPUS]" >&2; exit 2; }

stop_all() {
    local f
    # its jobs first: slurmd going away leaves their steps running
    if [ -s "$dir/slurmctld.pid" ] && [ -f "$dir/slurm.conf" ]; then
        SLURM_CONF="$dir/slurm.conf" scancel --user="$(id -un)" 2>/dev/null || true
        for _ in $(seq 1 20); do
            [ -z "$(SLURM_CONF="$dir/slurm.conf" squeue --noheader 2>/dev/null)" ] && break
            sleep 0.5
        done
    fi
    for f in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
        if [ -s "$f" ]; then kill "$(cat "$f")" 2>/dev/null || true; fi
    done
    sleep 1
    for f in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
        if [ -s "$f" ]; then kill -9 "$(cat "$f")" 2>/dev/null || true; rm -f "$f"; fi
    done
}

if [ "$cmd" = stop ]; then
    stop_all
    exit 0
fi
[ "$cmd" = start ] || { echo "cluster.sh: unknown command $cmd" >&2; exit 2; }

cpus="${3:-2}"
fail() { echo "cluster.sh: $*" >&2; stop_all; exit 3; }
for p in munged slurmctld slurmd sbatch; do
    command -v "$p" >/dev/null || PATH="$PATH:/usr/sbin:/sbin" command -v "$p" >/dev/null || fail "$p is not installed (Debian: slurmctld slurmd slurm-client munge)"
done
export PATH="$PATH:/usr/sbin:/sbin"
[ "$(id -u)" -eq 0 ] || fail "slurmd must run as root to start jobs; this is uid $(id -u)"
[ -r /etc/munge/munge.key ] || fail "no munge key at /etc/munge/munge.key (the munge package makes one)"

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
munged --force --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
       --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" || fail "munged did not start: $(tail -3 "$dir/munge/munged.log" 2>/dev/null)"

host="$(hostname -s)"
base=$(( 20000 + ($$ % 2000) * 2 ))
cat > "$dir/slurm.conf" <<CONF
ClusterName=parrotscope-test
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -c -f "$SLURM_CONF" || fail "slurmctld did not start: $(tail -3 "$dir/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start: $(tail -3 "$dir/slurmd.log" 2>/dev/null)"
for _ in $(seq 1 60); do
    if sinfo --noheader --format=%T 2>/dev/null | grep -q idle; then
        echo "$SLURM_CONF"
        exit 0
    fi
    sleep 0.5
done
fail "the node did not come up within 30 s: $(sinfo 2>&1 | tail -2); slurmd: $(tail -3 "$dir/slurmd.log" 2>/dev/null)"
