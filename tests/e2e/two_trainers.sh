#!/usr/bin/env bash
# Two trainers in one run folder (issue 20, case 4): while `train` runs, a second `train` into the
# same folder, fresh or --resume, is refused naming the holder; after the first is SIGKILLed its
# lock is stale and a --resume takes the folder over and finishes the run.
# Usage: two_trainers.sh FOVEAL_CLI
set -euo pipefail
cli=$1
work=$(mktemp -d)
trap 'kill -9 ${pid:-} 2>/dev/null || true; rm -rf "$work"' EXIT
run=$work/run
args=(--preset digits-soft --width 0.125 --batch 8 --checkpoint-interval 5 --eval-interval 100000
  --log-interval 5 --data "digits:len=3,split=train,seed=1" --seed 3 --threads 1 --loader-threads 1)

"$cli" train "${args[@]}" --iterations 100000 --run "$run" >"$work/first" 2>&1 &
pid=$!
for _ in $(seq 1 600); do  # wait for the first checkpoint (at most 60 s)
  [ -f "$run/latest.state" ] && break
  sleep 0.1
done
[ -f "$run/latest.state" ] || { echo "FAIL: the first trainer wrote no checkpoint"; cat "$work/first"; exit 1; }

expect_refusal() {
  local what=$1
  shift
  set +e
  "$cli" train "$@" >"$work/second" 2>&1
  local rc=$?
  set -e
  if [ $rc != 1 ] || ! grep -q "another training process (pid $pid on " "$work/second"; then
    echo "FAIL: $what was not refused naming pid $pid (exit $rc):"
    cat "$work/second"
    exit 1
  fi
  echo "$what refused: $(tail -1 "$work/second")"
}
expect_refusal "a fresh start into the running folder" "${args[@]}" --iterations 10 --run "$run"
expect_refusal "a --resume of the running folder" --run "$run" --resume --threads 1

kill -9 "$pid"
wait "$pid" 2>/dev/null || true
"$cli" train --run "$run" --resume --iterations 20 --threads 1 --loader-threads 1 >"$work/third" 2>&1 ||
  { echo "FAIL: --resume after the holder was killed:"; cat "$work/third"; exit 1; }
grep -q '"reason": *"end"' "$run/metrics.jsonl" || { echo "FAIL: no end checkpoint"; exit 1; }
echo "two-trainers test passed: refused twice while held, taken over after SIGKILL"
