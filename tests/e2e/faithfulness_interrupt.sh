#!/bin/sh
# eval --faithfulness interrupted: Ctrl-C (SIGINT) once the first progress line is out must end
# the run with status 0 and the table of the images done. Usage: faithfulness_interrupt.sh CLI MODEL
cli=$1
model=$2
out=faithfulness-interrupt.out
err=faithfulness-interrupt.err
rm -f "$out" "$err"
"$cli" eval --model "$model" --data digits:len=5,split=test --limit 1000 --faithfulness \
  --threads 1 >"$out" 2>"$err" &
pid=$!
i=0
while ! grep -q " images" "$err" 2>/dev/null; do
  i=$((i + 1))
  if [ $i -gt 100 ]; then
    echo "no progress line after 100 s"
    kill -KILL $pid
    exit 3
  fi
  sleep 1
done
kill -INT $pid
wait $pid
status=$?
cat "$err" "$out"
exit $status
