#!/bin/sh
# A single-node Slurm on this machine, for loom sweep's tests and for trying `--on slurm`.
#   scripts/slurm-local.sh start   install slurm-wlm and munge if missing (Debian), write a minimal
#                                  slurm.conf for this host, start munged, slurmctld and slurmd
#   scripts/slurm-local.sh stop    stop what start started (nothing else)
#   scripts/slurm-local.sh env     print the export line the Slurm commands need
#   scripts/slurm-local.sh status  exit 0 when its munged, slurmctld and slurmd are running
# Everything lives in $LOOM_SLURM_DIR (default /tmp/loom-slurm-$USER): the configuration, a munge
# key and socket, state, logs and the daemons' pid files. Slurm's commands find the configuration
# through SLURM_CONF: run `eval "$(scripts/slurm-local.sh env)"` (start prints it too).
set -eu

DIR=${LOOM_SLURM_DIR:-/tmp/loom-slurm-$(id -un)}
CONF=$DIR/slurm.conf
HOST=$(hostname -s)

say() { echo "slurm-local: $*"; }

need_root() {
  if [ "$(id -u)" = 0 ]; then SUDO=""
  elif command -v sudo >/dev/null 2>&1; then SUDO=sudo
  else say "installing packages and running slurmd needs root or sudo"; exit 1; fi
}

install_missing() {
  missing=""
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  command -v apt-get >/dev/null 2>&1 || { say "missing:$missing and no apt-get to install them"; exit 1; }
  say "installing$missing"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 ||
    { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null; }
  # the packages start their own daemons with the system's configuration: not ours, stop them
  for s in slurmctld slurmd munge; do
    $SUDO sh -c "command -v service >/dev/null && service $s stop" >/dev/null 2>&1 || true
  done
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_conf() {
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.8 }' /proc/meminfo)
  cat > "$CONF" <<EOF
# written by scripts/slurm-local.sh: one node, this host, everything under $DIR
ClusterName=loom
SlurmctldHost=$HOST
SlurmUser=$(id -un)
SlurmctldPort=${LOOM_SLURMCTLD_PORT:-6817}
SlurmdPort=${LOOM_SLURMD_PORT:-6818}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MaxArraySize=100001
MaxJobCount=200000
MinJobAge=30
NodeName=$HOST CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=loom Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  need_root
  install_missing
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
  chmod 700 "$DIR/munge"
  if alive "$DIR/slurmctld.pid" && alive "$DIR/slurmd.pid" && alive "$DIR/munge/munged.pid"; then
    say "already running ($DIR)"
  else
    write_conf
    if ! alive "$DIR/munge/munged.pid"; then
      [ -f "$DIR/munge/munge.key" ] || { dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null; chmod 400 "$DIR/munge/munge.key"; }
      $SUDO munged --force --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
        --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed"
    fi
    alive "$DIR/slurmctld.pid" || $SUDO env SLURM_CONF="$CONF" slurmctld -f "$CONF"
    alive "$DIR/slurmd.pid" || $SUDO env SLURM_CONF="$CONF" slurmd -f "$CONF"
  fi
  # wait until the node takes jobs
  i=0
  until SLURM_CONF="$CONF" sinfo -h -o %T 2>/dev/null | grep -Eq "idle|mixed|allocated"; do
    i=$((i + 1))
    if [ $i -gt 60 ]; then
      say "the node did not come up in 30 s; logs: $DIR/slurmctld.log $DIR/slurmd.log"
      SLURM_CONF="$CONF" sinfo 2>&1 | sed 's/^/  /' || true
      exit 1
    fi
    sleep 0.5
  done
  say "running: one node ($HOST, $(nproc) CPUs), partition 'loom'"
  echo "export SLURM_CONF=$CONF"
}

stop() {
  stopped=""
  for pf in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" "$DIR/munge/munged.pid"; do
    if alive "$pf"; then
      pid=$(cat "$pf")
      ${SUDO:-} kill "$pid" 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.3; done
      kill -0 "$pid" 2>/dev/null && ${SUDO:-} kill -9 "$pid" 2>/dev/null || true
      stopped="$stopped $(basename "$pf" .pid)"
    fi
    rm -f "$pf"
  done
  say "stopped:${stopped:- nothing was running}"
}

case "${1:-}" in
  start) start ;;
  stop) [ "$(id -u)" = 0 ] && SUDO="" || SUDO=sudo; stop ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  status)
    if alive "$DIR/slurmctld.pid" && alive "$DIR/slurmd.pid" && alive "$DIR/munge/munged.pid"; then
      say "running ($DIR)"
    else
      say "not running"; exit 1
    fi ;;
  *) echo "usage: scripts/slurm-local.sh start|stop|env|status"; exit 2 ;;
esac
