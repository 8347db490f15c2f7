#!/usr/bin/env bash
# The real programs a cluster test talks to, started on this machine in a temporary folder and
# stopped by pid: munged (its own socket and key), slurmctld and slurmd (a one-node cluster from a
# generated slurm.conf, free ports) and an unprivileged-port sshd (a generated host key, a
# generated user key in an AuthorizedKeysFile of the folder). Needs root (slurmd and sshd) and the
# packages scripts/foveal-dev installs. Source it, then:
#   cluster_start DIR [ssh|slurm|both]   exports SLURM_CONF, SSH_CONFIG (ssh -F), SSH_HOST, SSH_PORT
#   sshd_stop / sshd_start               (the same host key and port: a dropped connection)
#   cluster_stop                         everything started, by pid
# Tests call cluster_stop from their EXIT trap.

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_for() {  # wait_for SECONDS WHAT COMMAND...
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $end ]; then echo "FIXTURE: $what did not come up in ${limit}s" >&2; return 1; fi
    sleep 0.5
  done
}

cluster_pids=()

sshd_start() {
  /usr/sbin/sshd -f "$CLUSTER_DIR/sshd_config" -D -E "$CLUSTER_DIR/sshd.log" &
  sshd_pid=$!
  cluster_pids+=("$sshd_pid")
  wait_for 20 sshd ssh -F "$SSH_CONFIG" -p "$SSH_PORT" -- "$SSH_HOST" true
}

sshd_stop() {
  kill "$sshd_pid" 2>/dev/null || true
  wait "$sshd_pid" 2>/dev/null || true
}

start_ssh() {
  local d=$CLUSTER_DIR
  ssh-keygen -q -t ed25519 -N '' -f "$d/host_key" -C foveal-test-host
  ssh-keygen -q -t ed25519 -N '' -f "$d/user_key" -C foveal-test-user
  cp "$d/user_key.pub" "$d/authorized_keys"
  SSH_PORT=$(free_port)
  SSH_HOST=foveal-test-host
  # SetEnv: the remote shells find this cluster's slurm.conf as a login on a cluster would.
  cat >"$d/sshd_config" <<CONF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $d/host_key
PidFile $d/sshd.pid
AuthorizedKeysFile $d/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
SetEnv SLURM_CONF=$d/slurm.conf
CONF
  # The client knows the host by its real key, under the address and port it connects to.
  echo "[127.0.0.1]:$SSH_PORT $(cat "$d/host_key.pub")" >"$d/known_hosts"
  cat >"$d/ssh_config" <<CONF
Host $SSH_HOST
  HostName 127.0.0.1
  User $(id -un)
  IdentityFile $d/user_key
  IdentitiesOnly yes
  UserKnownHostsFile $d/known_hosts
  GlobalKnownHostsFile /dev/null
  LogLevel ERROR
CONF
  SSH_CONFIG=$d/ssh_config
  export SSH_CONFIG SSH_HOST SSH_PORT
  mkdir -p /run/sshd  # sshd's privilege-separation directory
  sshd_start
}

start_slurm() {
  local d=$CLUSTER_DIR
  # munged wants its key private and every folder above its socket open to all (execute
  # permission): its own folder under /tmp, whatever the caller's folder allows.
  munge_dir=$(mktemp -d /tmp/foveal-munge.XXXXXX)
  chmod 755 "$munge_dir"
  mkdir -p "$munge_dir/socket" "$munge_dir/key" "$d/state" "$d/spool"
  chown munge:munge "$munge_dir/socket" "$munge_dir/key"
  chmod 755 "$munge_dir/socket"
  chmod 700 "$munge_dir/key"
  head -c 1024 /dev/urandom >"$munge_dir/key/munge.key"
  chown munge:munge "$munge_dir/key/munge.key"
  chmod 400 "$munge_dir/key/munge.key"
  runuser -u munge -- /usr/sbin/munged --socket="$munge_dir/socket/munge.sock" \
    --key-file="$munge_dir/key/munge.key" --pid-file="$munge_dir/socket/munged.pid" \
    --log-file="$munge_dir/socket/munged.log" --seed-file="$munge_dir/socket/seed" \
    --foreground 2>/dev/null &
  cluster_pids+=($!)
  wait_for 20 munged test -S "$munge_dir/socket/munge.sock"
  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
  # cred_expire: a requeued job waits that long before it may start again (default 120 s).
  # The controller and the node by address: the host name need not resolve (a fresh root's
  # /etc/hosts may not name it).
  cat >"$d/slurm.conf" <<CONF
ClusterName=foveal-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$munge_dir/socket/munge.sock,cred_expire=10
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
MinJobAge=600
KillWait=30
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  # Slurm 24.05 and later (Debian 13: 24.11) start the cgroup plugin in slurmd whatever the
  # proctrack and task plugins, and stop where /sys/fs/cgroup is not mounted (a chroot, a
  # container): the tests need no cgroups, so they are switched off where Slurm can ("disabled"
  # is not a value Slurm 22.05 of Debian 12 knows).
  local slurm_version
  slurm_version=$(/usr/sbin/slurmd -V 2>/dev/null | awk '{print $2}')
  if [ "$(printf '%s\n' "$slurm_version" 24.05 | sort -V | head -n1)" = 24.05 ]; then
    echo "CgroupPlugin=disabled" >"$d/cgroup.conf"
  fi
  export SLURM_CONF=$d/slurm.conf
  /usr/sbin/slurmctld -D -f "$SLURM_CONF" 2>>"$d/slurmctld.stderr" &
  cluster_pids+=($!)
  /usr/sbin/slurmd -D -f "$SLURM_CONF" 2>>"$d/slurmd.stderr" &
  cluster_pids+=($!)
  if ! wait_for 120 "the Slurm node" sh -c 'sinfo -h -o %T | grep -Eq "^idle"'; then
    # What the daemons said, so that a failure names its cause.
    sinfo -N -l >&2 || true
    local f
    for f in "$d"/slurmctld.log "$d"/slurmd.log "$d"/slurmctld.stderr "$d"/slurmd.stderr; do
      if [ -s "$f" ]; then echo "== $f" >&2; tail -n 15 "$f" >&2; fi
    done
    return 1
  fi
}

cluster_start() {
  CLUSTER_DIR=$1
  mkdir -p "$CLUSTER_DIR"
  export CLUSTER_DIR
  case ${2:-both} in
    ssh) start_ssh ;;
    slurm) start_slurm ;;
    both) start_slurm && start_ssh ;;
  esac
}

cluster_stop() {
  local pid
  for pid in "${cluster_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${cluster_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  cluster_pids=()
  if [ -n "${munge_dir:-}" ]; then rm -rf "$munge_dir"; fi
  munge_dir=
}
