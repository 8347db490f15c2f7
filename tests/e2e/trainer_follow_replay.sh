#!/usr/bin/env bash
# `foveal-cli runs follow` on another trainer's run (issue 72): DTRB's real run
# (tests/data/trainer_runs/dtrb, written by its own train.py) replayed into a folder as train.py
# wrote it: log_train.txt grows validation by validation, and best_accuracy.pth is written in two
# halves with a pause between (a copy in progress) at the moments train.py saved it, then the
# validation's lines. The follow must print the values as they come, each version of the
# checkpoint once it is complete with the step train.py saved it at, read the probe images with
# each, and never open a half-written file (opening one fails: it would print "cannot read").
# Usage: trainer_follow_replay.sh FOVEAL_CLI TRAINER_RUNS_DIR
set -euo pipefail
cli=$1
data=$2/dtrb
work=$(mktemp -d)
trap 'kill ${pid:-} 2>/dev/null || true; rm -rf "$work"' EXIT
exp=tiny-None-VGG-BiLSTM-Attn
src=$data/$exp
run=$work/saved_models/$exp
mkdir -p "$run"
cp "$src/opt.txt" "$src/log_dataset.txt" "$run/"
: >"$run/log_train.txt"

"$cli" runs follow "$run" --interval 0.25 --settle 1 --idle 5 --timeout 150 \
  --probe "$data"/probes/probe-307.png "$data"/probes/probe-4182.png "$data"/probes/probe-65.png \
  >"$work/follow" 2>&1 &
pid=$!

logged=0
grow_log() {  # the log up to byte $1
  if [ "$1" -gt "$logged" ]; then
    # head reads only its bytes and tail reads to the end: no writer into a closed pipe (a
    # `tail | head` could die of SIGPIPE under pipefail when head had what it wanted first).
    head -c "$1" "$src/log_train.txt" | tail -c +$((logged + 1)) >>"$run/log_train.txt"
    logged=$1
  fi
}
# Writes $1 to $2 in two halves, 1.5 s apart: a follower that opened it in between fails.
write_slowly() {
  local size half
  size=$(stat -c %s "$1")
  half=$((size / 2))
  head -c $half "$1" >"$2"
  sleep 1.5
  tail -c +$((half + 1)) "$1" >>"$2"
}

saves=0
while read -r before after step file kept; do
  [ "$kept" = "-" ] && continue
  grow_log "$before"
  sleep 1
  write_slowly "$data/replay/$kept" "$run/$file"
  grow_log "$after"  # train.py writes the validation's lines after saving
  saves=$((saves + 1))
  sleep 2.5
done <"$data/replay/timeline.txt"
grow_log "$(stat -c %s "$src/log_train.txt")"
write_slowly "$src/best_norm_ED.pth" "$run/best_norm_ED.pth"

status=0
wait "$pid" || status=$?
pid=
cat "$work/follow"
fail() {
  echo "FAIL: $*"
  exit 1
}
[ "$status" = 0 ] || fail "runs follow exited $status"
[ "$saves" = 3 ] || fail "the replay made $saves saves, expected 3"
grep -q "^following $run: deep-text-recognition-benchmark (dtrb)$" "$work/follow" ||
  fail "no line naming the trainer"
# The three versions of best_accuracy.pth, in order, at the steps train.py saved them.
got=$(grep -o '^checkpoint best_accuracy.pth (step [0-9]*' "$work/follow" | grep -o '[0-9]*$' | tr '\n' ' ')
[ "$got" = "1 800 1300 " ] || fail "best_accuracy.pth listed at steps '$got', expected '1 800 1300 '"
grep -q '^checkpoint best_norm_ED.pth (step [0-9]*, 308439 bytes)$' "$work/follow" ||
  fail "best_norm_ED.pth not listed whole"
# Each checkpoint read the three probes; no half-written file was ever opened.
[ "$(grep -c '^  probe probe-[0-9]*.png: ".*" confidence [0-9.]*$' "$work/follow")" = 12 ] ||
  fail "expected 12 probe readings (4 checkpoints x 3 images)"
! grep -q "cannot read" "$work/follow" || fail "a checkpoint could not be opened"
# The readings are DTRB's own: replay/probes.txt holds what its Model (demo.py's decoding) reads
# with each of these checkpoints; the confidences as printed, to their 4 decimals.
grep -A3 '^checkpoint ' "$work/follow" | grep '^  probe ' |
  sed -E 's/^  probe ([^:]*): "(.*)" confidence ([0-9.]*)$/\1 \2 \3/' >"$work/read"
awk '{print $3, $4, $5}' "$data/replay/probes.txt" >"$work/want"
paste -d' ' "$work/read" "$work/want" | awk '
  $1 != $4 || $2 != $5 || ($3 - $6 > 0.00006 || $6 - $3 > 0.00006) { bad = 1; print "  got " $1 " \"" $2 "\" " $3 ", DTRB reads \"" $5 "\" " $6 }
  END { exit bad }' || fail "a reading differs from DTRB's"
[ "$(wc -l <"$work/read")" = "$(wc -l <"$work/want")" ] || fail "not every checkpoint was read"
# The values as the log grew, up to the last validation.
grep -q '^step 1500:  Train_loss 0.05401  Valid_loss 0.1398  Elapsed_time 108.785  Current_accuracy 88  Current_norm_ED 0.97  Best_accuracy 90  Best_norm_ED 0.97$' \
  "$work/follow" || fail "no line with the last validation's values"
[ "$(grep -c '^step [0-9]*:' "$work/follow")" -ge 4 ] || fail "the values came in fewer than 4 lines"
grep -q "^nothing new for 5 s: stopped following$" "$work/follow" || fail "did not stop when idle"
echo "trainer follow replay test passed"
