#!/usr/bin/env bash
# The Training page with a run on an SSH host: starts an sshd (cluster_fixture.sh) and runs
# test_training's launchOnAnSshHost case against it, which the plain suite skips for want of one.
# Usage: cluster_gui.sh TEST_TRAINING (as root: sshd)
set -euo pipefail
suite=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_fixture.sh"
work=$(mktemp -d)
trap 'cluster_stop; rm -rf "$work"' EXIT
cluster_start "$work/fixture" ssh
FOVEAL_TEST_SSH_HOST="$SSH_HOST:$SSH_PORT" FOVEAL_TEST_SSH_CONFIG="$SSH_CONFIG" \
  QT_QPA_PLATFORM=offscreen "$suite" launchOnAnSshHost 2>&1 | tee "$work/out.log"
grep -q "^PASS   : TestTraining::launchOnAnSshHost()" "$work/out.log" || { echo "FAIL: the case did not pass"; exit 1; }
echo "cluster gui test passed"
