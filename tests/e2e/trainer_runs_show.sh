#!/usr/bin/env bash
# `foveal-cli runs show DIR --json` on another trainer's run folder (issue 72): the exact shape
# ({"trainer", "series": [{"tag", "catalogue", "points": [{"step", "value", "wall_time"}]}],
# "checkpoints": [{"file", "step"}], "damage"}) and every value, against the fixture's
# expected.json (read from the trainer's files independently by scripts/make-trainer-run-fixtures).
# Usage: trainer_runs_show.sh FOVEAL_CLI TRAINER_RUNS_DIR TRAINER
set -euo pipefail
cli=$1
base=$2/$3
run=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"])' "$base/expected.json")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
TZ=UTC "$cli" runs show "$base/$run" --json --settle 0 >"$out"
/usr/bin/python3 - "$out" "$base/expected.json" "$3" <<'EOF'
import json, math, sys
got = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
trainer = sys.argv[3]
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
if set(got) != {"trainer", "series", "checkpoints", "damage"}:
    fail("keys %s" % sorted(got))
if got["trainer"] != want["trainer"]:
    fail("trainer %r" % got["trainer"])
if got["damage"]:
    fail("damage %s" % got["damage"])
series = {s["tag"]: s for s in got["series"]}
if len(series) != len(want["series"]):
    fail("%d series, expected %d" % (len(series), len(want["series"])))
for w in want["series"]:
    s = series.get(w["tag"]) or fail("no series %s" % w["tag"])
    if set(s) != {"tag", "catalogue", "points"}:
        fail("series keys %s" % sorted(s))
    pts = [[p["step"], p["value"], p["wall_time"]] for p in s["points"]]
    if any(set(p) != {"step", "value", "wall_time"} for p in s["points"]):
        fail("point keys in %s" % w["tag"])
    if pts != w["points"]:
        fail("%s: %s, expected %s" % (w["tag"], pts[:4], w["points"][:4]))
ckpts = [(c["file"], c["step"]) for c in got["checkpoints"]]
if any(set(c) != {"file", "step"} for c in got["checkpoints"]):
    fail("checkpoint keys")
expect = sorted((c["file"], c["step"]) for c in want["checkpoints"])
if trainer == "dtrb":  # best_norm_ED.pth: 1500 by the log's rule (test_trainer_logs says why)
    expect = [(f, 1500 if f == "best_norm_ED.pth" else s) for f, s in expect]
if sorted(ckpts) != expect:
    fail("checkpoints %s, expected %s" % (ckpts, expect))
cat = {s["tag"]: s["catalogue"] for s in got["series"]}
print("PASS: %d series, %d points, %d checkpoints; catalogue %s" % (
    len(series), sum(len(s["points"]) for s in got["series"]), len(ckpts),
    {k: v for k, v in cat.items() if v}))
EOF
