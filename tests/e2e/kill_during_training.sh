#!/usr/bin/env bash
# Fault injection: SIGKILL a CPU training run at random moments, check after every kill that the
# run folder is readable (latest.fvm loads, metrics.jsonl parses up to a possibly half-written last
# line) and resume until the run is complete. Usage: kill_during_training.sh FOVEAL_CLI [KILLS]
set -euo pipefail
cli=$1
kills=${2:-5}
work=$(mktemp -d)
trap 'kill -9 ${pid:-} 2>/dev/null || true; rm -rf "$work"' EXIT
run=$work/run
iterations=120
common=(--threads 1 --loader-threads 1)
RANDOM=${FOVEAL_FAULT_SEED:-7}

check_folder() {
  if [ -f "$run/latest.fvm" ]; then
    "$cli" info --model "$run/latest.fvm" >/dev/null || { echo "FAIL: latest.fvm unreadable after kill $1"; exit 1; }
  fi
  if [ -f "$run/metrics.jsonl" ]; then
    # Every complete line is JSON; only the last may be cut.
    python3 - "$run/metrics.jsonl" <<'PY' || { echo "FAIL: metrics.jsonl corrupt after kill $1"; exit 1; }
import json, sys
data = open(sys.argv[1], encoding="utf-8").read()
lines = data.split("\n")
for line in lines[:-1]:
    json.loads(line)
PY
  fi
}

"$cli" train --preset digits-soft --width 0.125 --batch 8 --iterations $iterations \
  --checkpoint-interval 5 --eval-interval 100000 --log-interval 5 \
  --data "digits:len=3,split=train,seed=1" --eval-data "digits:len=3,split=test,seed=1,count=16" \
  --seed 3 --run "$run" "${common[@]}" >"$work/log" 2>&1 &
pid=$!
for k in $(seq 1 "$kills"); do
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.5 + (r % 250) / 100 }')"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  check_folder "$k"
  echo "kill $k: folder readable"
  if [ -f "$run/latest.state" ]; then
    "$cli" train --run "$run" --resume "${common[@]}" >>"$work/log" 2>&1 &
  else  # killed before the first checkpoint: start again
    rm -rf "$run"
    "$cli" train --preset digits-soft --width 0.125 --batch 8 --iterations $iterations \
      --checkpoint-interval 5 --eval-interval 100000 --log-interval 5 \
      --data "digits:len=3,split=train,seed=1" --eval-data "digits:len=3,split=test,seed=1,count=16" \
      --seed 3 --run "$run" "${common[@]}" >>"$work/log" 2>&1 &
  fi
  pid=$!
done
wait "$pid" || { echo "FAIL: the last resume did not finish"; tail -20 "$work/log"; exit 1; }
check_folder final
grep -q '"reason": *"end"' "$run/metrics.jsonl" || { echo "FAIL: no end checkpoint"; tail -5 "$run/metrics.jsonl"; exit 1; }
last=$(grep '"kind": *"train"' "$run/metrics.jsonl" | tail -1)
echo "last train record: $last"
echo "fault test passed: $kills kills, run completed"
