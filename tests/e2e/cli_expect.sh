#!/usr/bin/env bash
# One command-line check: run COMMAND and require both its exit status and a line of its output
# (stdout and stderr together) matching REGEX (grep -E). CTest's PASS_REGULAR_EXPRESSION alone
# ignores the exit status, so a command that printed the right words and then crashed passed.
#
#   cli_expect.sh STATUS REGEX [--setup SHELL] [--after SHELL] [--timeout S] -- COMMAND [ARG...]
#
# STATUS is the exact exit status expected (0 success, 1 error, 2 bad usage; 134 or 135 mean the
# process died of a signal and never pass). --setup runs before the command and --after after it
# (both with sh -c, in the current folder; --after must succeed: a post-condition such as "no
# .part file left"). --timeout (default 60 s) makes a hang a failure.
set -uo pipefail
want=$1
regex=$2
shift 2
setup="" after="" limit=60
while [ $# -gt 0 ]; do
  case $1 in
    --setup) setup=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "cli_expect.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -n "$setup" ]; then
  sh -c "$setup" || { echo "FAIL: setup failed: $setup"; exit 1; }
fi
out=$(timeout -k 5 "$limit" "$@" 2>&1 </dev/null)
got=$?
printf '%s\n' "$out" | tail -40
echo "--- exit status $got (expected $want)"
fail=0
if [ "$got" = 124 ] || [ "$got" = 137 ]; then
  echo "FAIL: the command hung (killed after ${limit} s)"
  fail=1
elif [ "$got" != "$want" ]; then
  echo "FAIL: exit status $got, expected $want"
  fail=1
fi
# Not grep -q: it stops reading at the first match, and with pipefail the writer's SIGPIPE on a
# long output (a JSON of maps) made a matching output fail.
if ! printf '%s\n' "$out" | grep -E -- "$regex" >/dev/null; then
  echo "FAIL: no output line matches: $regex"
  fail=1
fi
if [ -n "$after" ] && ! sh -c "$after"; then
  echo "FAIL: post-condition failed: $after"
  fail=1
fi
[ $fail = 0 ] && echo "cli check passed"
exit $fail
