#!/usr/bin/env bash
# Foveal's own trainer writes TensorBoard event files (issue 72, item 5): a short run and its
# resume through the command line, then every record decoded with Debian's python3-protobuf
# against core/run/tensorboard_event.proto (tests/support/decode_tensorboard_events.py) and checked
# against the run's metrics.jsonl. Usage: tensorboard_events.sh FOVEAL_CLI SOURCE_DIR
set -euo pipefail
cli=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=$work/run
common=(--threads 1 --loader-threads 1)
"$cli" train --preset digits-soft --width 0.125 --batch 8 --iterations 20 \
  --checkpoint-interval 10 --eval-interval 10 --log-interval 2 --eval-limit 16 \
  --data "digits:len=3,split=train,seed=1,count=64" \
  --eval-data "digits:len=3,split=test,seed=1,count=16;digits:len=3,split=test,seed=2,count=8" \
  --seed 3 --run "$run" "${common[@]}" >"$work/first" 2>&1 ||
  { echo "FAIL: the first session"; cat "$work/first"; exit 1; }
"$cli" train --run "$run" --resume --iterations 30 "${common[@]}" >"$work/second" 2>&1 ||
  { echo "FAIL: the resumed session"; cat "$work/second"; exit 1; }
/usr/bin/python3 "$src/tests/support/decode_tensorboard_events.py" "$run" \
  "$src/core/run/tensorboard_event.proto"
