#!/usr/bin/env bash
# Training on an SSH host, against a real OpenSSH server on this machine (cluster_fixture.sh):
#  1. submit with hostile run names (spaces, quotes, $(...), backquotes, ;): follow to completion,
#     nothing executed, the mirrored files equal the remote ones byte for byte;
#  2. stop (SIGTERM over SSH), then resume: the final weights equal those of an uninterrupted run;
#  3. sshd killed and restarted mid-run: follow reports the lost connection, the mirror catches up,
#     metrics.jsonl equals the remote one (no record lost or doubled);
#  4. a wrong host key, and an unknown one, are refused with a clear message; nothing is started.
# Usage: cluster_ssh.sh FOVEAL_CLI (as root: sshd)
set -euo pipefail
cli=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_fixture.sh"
work=$(mktemp -d)
trap 'cluster_stop; [ -n "${FOVEAL_KEEP_TEST_DIR:-}" ] || rm -rf "$work"' EXIT
cluster_start "$work/fixture" ssh
cd "$work"  # a command a quoting bug would run lands here (or in the remote home)

common=(--preset digits-soft --width 0.125 --max-length 3 --batch 4 --seed 3
  --data "digits:len=3,split=train,seed=1,count=48" --eval-data "digits:len=3,split=test,seed=1,count=8"
  --eval-interval 10 --checkpoint-interval 5 --history-interval 10 --log-interval 1
  --threads 1 --loader-threads 1)
target() { echo "ssh://$SSH_HOST:$SSH_PORT/$1"; }  # $1 absolute: "ssh://host:port//abs"
ssh_opts=(--ssh-config "$SSH_CONFIG" --remote-cli "$cli")
fail() { echo "FAIL: $*"; exit 1; }

same_files() {  # same_files LOCAL REMOTE: every mirrored file equal
  local f n=0
  for f in config.json metrics.jsonl train.log latest.fvm best.fvm; do
    [ -f "$2/$f" ] || continue
    cmp -s "$1/$f" "$2/$f" || fail "$f differs between the mirror and the remote folder"
    n=$((n + 1))
  done
  [ "$(cd "$2/history" && ls)" = "$(cd "$1/history" && ls)" ] || fail "history/ lists differ"
  for f in "$2"/history/*.fvm; do cmp -s "$f" "$1/history/${f##*/}" || fail "history/${f##*/} differs"; done
  [ $n -ge 4 ] || fail "only $n files to compare"
}

# 1. Hostile names, locally and remotely.
evil="run 'q' \"dq\" \$(touch PWNED1) \`touch PWNED2\` ; touch PWNED3 & x"
"$cli" train "${common[@]}" --iterations 20 --run "$work/local $evil" \
  --target "$(target "$work/remote $evil")" "${ssh_opts[@]}" >submit1.log 2>&1 ||
  { cat submit1.log; fail "submitting over SSH failed"; }
grep -q "started trainer pid" submit1.log || fail "no pid: $(cat submit1.log)"
"$cli" runs follow "$work/local $evil" --interval 0.3 --timeout 240 >follow1.log 2>&1 ||
  { cat follow1.log; fail "following the SSH run failed"; }
grep -q "completed" follow1.log || fail "the run did not complete: $(tail -3 follow1.log)"
[ -d "$work/remote $evil" ] || fail "the remote folder's name was not kept literally"
if ls "$work"/PWNED* "$HOME"/PWNED* "$work/fixture"/PWNED* 2>/dev/null; then fail "a hostile name executed"; fi
same_files "$work/local $evil" "$work/remote $evil"
grep -q '"reason": *"end"' "$work/local $evil/metrics.jsonl" || fail "no end checkpoint mirrored"
echo "ssh: submitted, followed, mirror equal, hostile names inert"

# 2. Stop, then resume = an uninterrupted run of the same length.
n=400
# The reference runs where the run runs: another host's environment (its BLAS kernels) may round
# differently from this shell's.
"$cli" train "${common[@]}" --iterations $n --run "$work/straight" --target "$(target "$work/straight-remote")" \
  "${ssh_opts[@]}" >straight.log 2>&1 || { cat straight.log; fail "reference submit"; }
"$cli" runs follow "$work/straight" --interval 0.3 --timeout 240 >straight-follow.log 2>&1 ||
  { cat straight-follow.log; fail "reference run failed"; }
"$cli" train "${common[@]}" --iterations $n --run "$work/stopped" --target "$(target "$work/stopped-remote")" \
  "${ssh_opts[@]}" >submit2.log 2>&1 || { cat submit2.log; fail "submit 2"; }
for _ in $(seq 1 600); do  # until the trainer has written a few records
  [ "$(cat "$work/stopped-remote/metrics.jsonl" 2>/dev/null | grep -c '"kind": *"train"')" -ge 30 ] && break
  sleep 0.1
done
"$cli" runs stop "$work/stopped" >stop.log 2>&1 || { cat stop.log; fail "stop failed"; }
"$cli" runs follow "$work/stopped" --interval 0.3 --timeout 120 >follow2.log 2>&1 || { cat follow2.log; fail "follow after stop"; }
grep -q "stopped" follow2.log || fail "the run did not stop: $(tail -3 follow2.log)"
grep -q '"kind": *"stop"' "$work/stopped/metrics.jsonl" || fail "no stop record: the trainer did not checkpoint on SIGTERM"
stopped_at=$(grep '"kind": *"stop"' "$work/stopped/metrics.jsonl" | tail -1)
"$cli" runs resume "$work/stopped" >resume.log 2>&1 || { cat resume.log; fail "resume failed"; }
"$cli" runs follow "$work/stopped" --interval 0.3 --timeout 240 >follow3.log 2>&1 || { cat follow3.log; fail "follow after resume"; }
grep -q "completed" follow3.log || fail "the resumed run did not complete"
python3 "$here/fvm_compare.py" "$work/straight/latest.fvm" "$work/stopped/latest.fvm" ||
  fail "stop + resume differs from the uninterrupted run"
cmp -s "$work/stopped/latest.fvm" "$work/stopped-remote/latest.fvm" || fail "latest.fvm mirror differs"
echo "ssh: stopped ($stopped_at), resumed, weights equal to the uninterrupted run"

# 3. sshd killed and restarted while a run is followed.
# 1,500 iterations: 300 could finish before the outage on a fast core (a Zen 5 VM), and the
# follower with them.
"$cli" train "${common[@]}" --iterations 1500 --run "$work/drop" --target "$(target "$work/drop-remote")" \
  "${ssh_opts[@]}" >submit3.log 2>&1 || { cat submit3.log; fail "submit 3"; }
if "$cli" runs resume "$work/drop" >resume-early.log 2>&1; then fail "resumed a running job"; fi
grep -q "is still running; stop it" resume-early.log || fail "unclear refusal: $(cat resume-early.log)"
"$cli" runs follow "$work/drop" --interval 0.3 --timeout 300 >follow4.log 2>&1 &
follower=$!
for _ in $(seq 1 600); do grep -q "^iteration" follow4.log && break; sleep 0.1; done
sshd_stop
sleep 4  # the trainer goes on; the follower's polls fail
sshd_start
wait $follower || { cat follow4.log; fail "follow across the sshd restart failed"; }
grep -q "connection lost" follow4.log || fail "the outage went unnoticed: $(head -5 follow4.log)"
grep -q "connection back" follow4.log || fail "the follower did not reconnect"
cmp -s "$work/drop/metrics.jsonl" "$work/drop-remote/metrics.jsonl" || fail "metrics.jsonl differs after the outage"
python3 - "$work/drop/metrics.jsonl" <<'PY' || fail "records lost or doubled"
import json, sys
its = [r["iteration"] for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "train"]
assert its == list(range(1, 1501)), f"train iterations {its[:5]}... ({len(its)}) are not 1..1500 once each"
PY
[ "$(grep -c '^iteration' follow4.log)" = 1500 ] || fail "follow printed $(grep -c '^iteration' follow4.log) train records, not 1500"
echo "ssh: sshd restarted mid-run, mirror caught up, nothing lost or doubled"

# 4. A wrong host key: refused, with ssh's words, and nothing started.
ssh-keygen -q -t ed25519 -N '' -f "$work/other_key"
echo "[127.0.0.1]:$SSH_PORT $(cat "$work/other_key.pub")" >"$work/wrong_known_hosts"
sed "s|UserKnownHostsFile .*|UserKnownHostsFile $work/wrong_known_hosts|" "$SSH_CONFIG" >"$work/wrong_config"
if "$cli" train "${common[@]}" --iterations 5 --run "$work/wrong" --target "$(target "$work/wrong-remote")" \
  --ssh-config "$work/wrong_config" --remote-cli "$cli" >wrong.log 2>&1; then
  fail "a wrong host key was accepted"
fi
grep -q "ssh could not connect: Host key verification failed. The host.s key differs from the one known_hosts holds" wrong.log || fail "unclear message: $(cat wrong.log)"
[ ! -e "$work/wrong-remote" ] || fail "something ran on a host with a wrong key"
echo "ssh: wrong host key refused: $(tail -1 wrong.log)"
: >"$work/wrong_known_hosts"  # an unknown host: refused too, never accepted on first sight
if "$cli" train "${common[@]}" --iterations 5 --run "$work/unknown" --target "$(target "$work/unknown-remote")" \
  --ssh-config "$work/wrong_config" --remote-cli "$cli" >unknown.log 2>&1; then
  fail "an unknown host key was accepted"
fi
grep -q "The host's key is not in known_hosts" unknown.log || fail "unclear message: $(cat unknown.log)"
[ ! -e "$work/unknown-remote" ] || fail "something ran on a host with an unknown key"
echo "cluster ssh test passed"
