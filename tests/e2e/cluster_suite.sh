#!/usr/bin/env bash
# Runs cases of a Qt Test suite against a real sshd on this machine (cluster_fixture.sh), which
# the plain suite skips for want of one: FOVEAL_TEST_SSH_HOST (host:port) and
# FOVEAL_TEST_SSH_CONFIG (ssh -F) name it. Each case must pass (not skip).
# Usage: cluster_suite.sh SUITE CASE... (as root: sshd)
set -euo pipefail
suite=$(realpath "$1")
shift
[ $# -gt 0 ] || { echo "cluster_suite.sh: name the cases to run" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_fixture.sh"
work=$(mktemp -d)
trap 'cluster_stop; rm -rf "$work"' EXIT
cluster_start "$work/fixture" ssh
name=$(basename "$suite")
QTEST_FUNCTION_TIMEOUT=${QTEST_FUNCTION_TIMEOUT:-840000} \
  FOVEAL_TEST_SSH_HOST="$SSH_HOST:$SSH_PORT" FOVEAL_TEST_SSH_CONFIG="$SSH_CONFIG" \
  QT_QPA_PLATFORM=offscreen "$suite" "$@" 2>&1 | tee "$work/out.log"
for c in "$@"; do
  grep -q "^PASS   : .*::$c()" "$work/out.log" || { echo "FAIL: $name $c did not pass"; exit 1; }
done
echo "cluster suite test passed"
