#!/bin/sh
# A fatal signal in foveal-cli reports itself: SIGSEGV sent to a training run must end it with the
# signal's own status (139) and write the command, the signal and a call stack through foveal-cli
# to stderr. Usage: crash_report.sh CLI
cli=$1
ulimit -c 0 2>/dev/null  # no core file from the signal sent below
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" train --preset digits-soft --width 0.125 --batch 4 --iterations 1000000 --threads 1 \
  --checkpoint-interval 0 --run "$dir/run" >"$dir/out" 2>"$dir/err" &
pid=$!
i=0
while [ ! -s "$dir/run/train.log" ]; do  # the run has started: its log has a line
  i=$((i + 1))
  if [ $i -gt 120 ]; then
    echo "the training run did not start in 60 s"
    kill -KILL $pid
    exit 3
  fi
  sleep 0.5
done
sleep 1
kill -SEGV $pid
wait $pid
status=$?
cat "$dir/err"
[ $status -eq 139 ] || { echo "exit status $status, not 139 (SIGSEGV)"; exit 1; }
grep -q "^foveal-cli train: crashed (SIGSEGV" "$dir/err" || { echo "no crash line"; exit 1; }
grep -q "foveal-cli(" "$dir/err" || { echo "no call stack through foveal-cli"; exit 1; }
grep -q "^Please report it" "$dir/err" || { echo "no closing line"; exit 1; }
echo "crash report: ok"
