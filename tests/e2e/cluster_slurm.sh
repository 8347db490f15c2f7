#!/usr/bin/env bash
# Training on a Slurm cluster, against a real one-node Slurm (munged, slurmctld, slurmd) and an
# OpenSSH server as its login host, started on this machine (cluster_fixture.sh):
#  1. the batch script (--print-script) is valid bash; a job submitted through the login host by
#     SSH is followed to completion and the mirrored files equal the remote ones;
#  2. preemption: `scontrol requeue` mid-run: the trainer checkpoints, the job starts again and
#     resumes by itself; every iteration's record once, and the final weights equal those of an
#     uninterrupted run;
#  3. stop (scancel --signal=TERM, the batch shell spared) then resume, with sbatch on this machine;
#     the time limit's warning to the batch shell (scancel --batch) checkpoints the same way;
#  4. a 2-task srun (ranks from Slurm's variables, Gloo) equals one process with twice the batch
#     (only when this build trains data-parallel: pass 1 as the second argument).
# Usage: cluster_slurm.sh FOVEAL_CLI [DISTRIBUTED] (as root: slurmd and sshd)
set -euo pipefail
cli=$(realpath "$1")
distributed=${2:-0}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_fixture.sh"
work=$(mktemp -d)
trap 'cluster_stop; [ -n "${FOVEAL_KEEP_TEST_DIR:-}" ] || rm -rf "$work"' EXIT
cluster_start "$work/fixture" both
cd "$work"

common=(--preset digits-soft --width 0.125 --max-length 3 --seed 3
  --data "digits:len=3,split=train,seed=1,count=48" --eval-data "digits:len=3,split=test,seed=1,count=8"
  --eval-interval 10 --checkpoint-interval 5 --history-interval 10 --log-interval 1
  --threads 1 --loader-threads 1)
login="slurm://$SSH_HOST:$SSH_PORT"
ssh_opts=(--ssh-config "$SSH_CONFIG" --remote-cli "$cli")
fail() { echo "FAIL: $*"; for f in "$work"/*-remote/slurm-*.out "$work"/local-*/slurm-*.out; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done; exit 1; }
train_records() { cat "$1" 2>/dev/null | grep -c '"kind": *"train"'; }
wait_records() {  # wait_records FILE N
  for _ in $(seq 1 1200); do [ "$(train_records "$1")" -ge "$2" ] && return 0; sleep 0.1; done
  fail "$1 did not reach $2 records"
}
once_each() {  # once_each METRICS N: the train records are iterations 1..N, each once
  python3 - "$1" "$2" <<'PY'
import json, sys
its = [r["iteration"] for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "train"]
n = int(sys.argv[2])
assert its == list(range(1, n + 1)), f"train iterations {len(its)}, not 1..{n} once each: {its[:8]}..."
PY
}

# 1. The script, then a job through the login host.
"$cli" train "${common[@]}" --batch 4 --iterations 20 --run "$work/a" --target "$login/$work/a-remote" \
  "${ssh_opts[@]}" --slurm-partition test --slurm-time 10:00 --slurm-cpus 1 --slurm-mem 500M \
  --slurm-extra "--comment=foveal test" --print-script >script.sh || fail "--print-script"
bash -n script.sh || fail "the batch script is not valid bash"
grep -q '^#SBATCH --requeue' script.sh && grep -q '^#SBATCH --signal=B:TERM@120' script.sh &&
  grep -q '^#SBATCH --partition=test' script.sh && grep -q '^#SBATCH --comment=foveal test' script.sh ||
  fail "the batch script lacks an option: $(cat script.sh)"
"$cli" train "${common[@]}" --batch 4 --iterations 20 --run "$work/a" --target "$login/$work/a-remote" \
  "${ssh_opts[@]}" --slurm-partition test --slurm-time 10:00 >submit1.log 2>&1 || { cat submit1.log; fail "sbatch through the login host"; }
grep -q "submitted job" submit1.log || fail "no job id: $(cat submit1.log)"
"$cli" runs follow "$work/a" --interval 0.3 --timeout 240 >follow1.log 2>&1 || { cat follow1.log; fail "follow 1"; }
grep -q ": completed" follow1.log || fail "job 1 did not complete: $(tail -3 follow1.log)"
for f in config.json metrics.jsonl train.log latest.fvm best.fvm history/iter-000000010.fvm; do
  cmp -s "$work/a/$f" "$work/a-remote/$f" || fail "$f: mirror differs"
done
"$cli" runs list "$work" | grep -q "^a  $login" || fail "runs list: $("$cli" runs list "$work")"
echo "slurm: job through the login host followed to completion; mirror equal"

# 2. scontrol requeue mid-run.
n=300
# The reference runs as a job too: a job's environment (its BLAS kernels) may round differently
# from this shell's.
"$cli" train "${common[@]}" --batch 4 --iterations $n --run "$work/straight" --target "$login/$work/straight-remote" \
  "${ssh_opts[@]}" >straight.log 2>&1 || { cat straight.log; fail "reference submit"; }
"$cli" runs follow "$work/straight" --interval 0.3 --timeout 240 >straight-follow.log 2>&1 ||
  { cat straight-follow.log; fail "reference run failed"; }
"$cli" train "${common[@]}" --batch 4 --iterations $n --run "$work/b" --target "$login/$work/b-remote" \
  "${ssh_opts[@]}" >submit2.log 2>&1 || { cat submit2.log; fail "submit 2"; }
job=$(sed -n 's/^submitted job \([0-9]*\).*/\1/p' submit2.log)
wait_records "$work/b-remote/metrics.jsonl" 40
scontrol requeue "$job" || fail "scontrol requeue"
"$cli" runs follow "$work/b" --interval 0.3 --timeout 280 >follow2.log 2>&1 || { cat follow2.log; fail "follow 2"; }
grep -q "restarted 1x" follow2.log || fail "the job did not restart: $(grep job follow2.log)"
grep -q '"kind": *"stop"' "$work/b/metrics.jsonl" || fail "no checkpoint on the requeue's SIGTERM"
grep -q '"kind": *"resume"' "$work/b/metrics.jsonl" || fail "the requeued job did not resume"
once_each "$work/b/metrics.jsonl" $n || fail "records lost or doubled across the requeue"
cmp -s "$work/b/metrics.jsonl" "$work/b-remote/metrics.jsonl" || fail "metrics mirror differs"
python3 "$here/fvm_compare.py" "$work/straight/latest.fvm" "$work/b/latest.fvm" || fail "requeued run differs from the uninterrupted one"
echo "slurm: requeued mid-run, checkpointed, resumed by itself, weights equal"

# 3. Stop with scancel --signal=TERM, resume; sbatch on this machine.
"$cli" train "${common[@]}" --batch 4 --iterations $n --run "$work/local-c" --target slurm --remote-cli "$cli" >submit3.log 2>&1 ||
  { cat submit3.log; fail "local sbatch"; }
wait_records "$work/local-c/metrics.jsonl" 40
"$cli" runs stop "$work/local-c" >stop.log 2>&1 || { cat stop.log; fail "stop"; }
"$cli" runs follow "$work/local-c" --interval 0.3 --timeout 120 >follow3.log 2>&1 || { cat follow3.log; fail "follow 3"; }
grep -q ": stopped" follow3.log || fail "not stopped: $(tail -3 follow3.log)"
grep -q '"kind": *"stop"' "$work/local-c/metrics.jsonl" || fail "no stop checkpoint"
"$cli" runs resume "$work/local-c" >resume.log 2>&1 || { cat resume.log; fail "resume"; }
"$cli" runs follow "$work/local-c" --interval 0.3 --timeout 240 >follow4.log 2>&1 || { cat follow4.log; fail "follow 4"; }
grep -q ": completed" follow4.log || fail "resumed job did not complete"
# sbatch here passes this shell's environment to the job: the reference is a process of this shell.
"$cli" train "${common[@]}" --batch 4 --iterations $n --run "$work/straight-here" >straight-here.log 2>&1 || fail "reference run here"
python3 "$here/fvm_compare.py" "$work/straight-here/latest.fvm" "$work/local-c/latest.fvm" || fail "stop + resume differs"
echo "slurm: stopped with scancel --signal=TERM, resumed, weights equal"

# 3b. The time limit's warning (--signal=B:TERM@N) reaches the batch shell only; scancel --batch
# sends the same signal now. The script passes it on: the trainer checkpoints, the job stops.
"$cli" train "${common[@]}" --batch 4 --iterations $n --run "$work/local-e" --target slurm --remote-cli "$cli" \
  --slurm-time 30:00 --slurm-signal 60 >submit5.log 2>&1 || { cat submit5.log; fail "local sbatch (warning)"; }
grep -q '^#SBATCH --signal=B:TERM@60$' "$work/local-e/job.sbatch" || fail "no warning signal in the script"
wait_records "$work/local-e/metrics.jsonl" 40
scancel --batch --signal=TERM "$(sed -n 's/^submitted job \([0-9]*\).*/\1/p' submit5.log)" || fail "scancel --batch"
"$cli" runs follow "$work/local-e" --interval 0.3 --timeout 120 >follow6.log 2>&1 || { cat follow6.log; fail "follow 6"; }
grep -q ": stopped" follow6.log || fail "the warning did not stop the job with a checkpoint: $(tail -3 follow6.log)"
grep -q '"reason": *"stop"' "$work/local-e/metrics.jsonl" || fail "no checkpoint on the warning signal"
"$cli" runs resume "$work/local-e" >resume2.log 2>&1 || { cat resume2.log; fail "resume 2"; }
"$cli" runs follow "$work/local-e" --interval 0.3 --timeout 240 >follow7.log 2>&1 || { cat follow7.log; fail "follow 7"; }
python3 "$here/fvm_compare.py" "$work/straight-here/latest.fvm" "$work/local-e/latest.fvm" || fail "warning + resume differs"
echo "slurm: the time limit's warning signal checkpointed through the batch shell; resumed, weights equal"

# 4. Two tasks under srun = one process with twice the batch.
if [ "$distributed" = 1 ]; then
  short=(--iterations 6 --eval-interval 0 --checkpoint-interval 0 --history-interval 0)
  "$cli" train "${common[@]}" "${short[@]}" --batch 4 --run "$work/local-d" --target slurm --remote-cli "$cli" --slurm-ntasks 2 \
    >submit4.log 2>&1 || { cat submit4.log; fail "2-task submit"; }
  "$cli" runs follow "$work/local-d" --interval 0.3 --timeout 240 >follow5.log 2>&1 || { cat follow5.log; fail "follow 5"; }
  grep -q "rank 1 of 2" "$work"/local-d/slurm-*.out || fail "no second rank joined"
  "$cli" train "${common[@]}" "${short[@]}" --batch 8 --micro-batches 2 --run "$work/single" >single.log 2>&1 || fail "single"
  "$cli" train "${common[@]}" "${short[@]}" --batch 4 --run "$work/half" >half.log 2>&1 || fail "half"
  python3 "$here/fvm_compare.py" "$work/local-d/latest.fvm" "$work/single/latest.fvm" 1e-5 --parameters || fail "2 tasks differ from 1 process"
  if python3 "$here/fvm_compare.py" "$work/local-d/latest.fvm" "$work/half/latest.fvm" 1e-4 --parameters; then
    fail "the control equals too: the comparison could not fail"
  fi
  echo "slurm: 2-task srun equals one process with twice the batch"
fi
echo "cluster slurm test passed"
