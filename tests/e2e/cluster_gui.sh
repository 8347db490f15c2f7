#!/usr/bin/env bash
# The Training page with a run on an SSH host, or on a Slurm cluster through a login host: starts
# an sshd (and, for slurm, munged, slurmctld and slurmd; cluster_fixture.sh) and runs
# test_training's launchOnAnSshHost or launchOnASlurmCluster case against them, which the plain
# suite skips for want of them.
# Usage: cluster_gui.sh TEST_TRAINING [ssh|slurm] (as root: sshd, slurmd)
set -euo pipefail
suite=$(realpath "$1")
mode=${2:-ssh}
case $mode in
  ssh) case_name=launchOnAnSshHost; services=ssh ;;
  slurm) case_name=launchOnASlurmCluster; services=both ;;
  *) echo "cluster_gui.sh: unknown mode '$mode' (ssh or slurm)" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_fixture.sh"
work=$(mktemp -d)
trap 'cluster_stop; rm -rf "$work"' EXIT
cluster_start "$work/fixture" "$services"
# A busy machine (two shared cores) takes minutes for the three jobs: more than QtTest's 300 s.
QTEST_FUNCTION_TIMEOUT=${QTEST_FUNCTION_TIMEOUT:-840000} \
  FOVEAL_TEST_SSH_HOST="$SSH_HOST:$SSH_PORT" FOVEAL_TEST_SSH_CONFIG="$SSH_CONFIG" \
  QT_QPA_PLATFORM=offscreen "$suite" "$case_name" 2>&1 | tee "$work/out.log"
grep -q "^PASS   : TestTraining::$case_name()" "$work/out.log" || {
  echo "FAIL: the case did not pass"
  for f in "$work"/fixture/slurm*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 15 "$f"; }; done
  exit 1
}
echo "cluster gui test passed"
