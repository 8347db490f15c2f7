#!/usr/bin/env bash
# Data parallelism across real processes: two `foveal-cli train` processes join a c10d/Gloo group
# from the usual environment variables (WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT),
# batch B each, and must end with the model that one process trains with batch 2B split into two
# micro-batches (rank r's shard = micro-batch r). Compared tensor by tensor from the model files:
# every parameter, with a control run on rank 0's data alone that must differ. Usage: gloo_two_processes.sh FOVEAL_CLI IMAGE
set -euo pipefail
cli=$1
image=$2
work=$(mktemp -d)
trap 'kill -9 ${p0:-} ${p1:-} 2>/dev/null || true; rm -rf "$work"' EXIT
common=(--preset digits-soft --width 0.125 --max-length 3 --iterations 6 --seed 3
  --data "digits:len=3,split=train,seed=1,count=48" --eval-data "digits:len=3,split=test,seed=1,count=8"
  --eval-interval 0 --checkpoint-interval 0 --log-interval 1 --threads 1 --loader-threads 1)
port=$((20000 + RANDOM % 20000))
for r in 0 1; do
  WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    timeout 240 "$cli" train "${common[@]}" --batch 4 --run "$work/dist" >"$work/rank$r.log" 2>&1 &
  eval "p$r=$!"
done
status=0
wait "$p0" || status=$?
wait "$p1" || status=$?
if [ "$status" != 0 ]; then
  echo "FAIL: a rank failed ($status)"; cat "$work/rank0.log" "$work/rank1.log"; exit 1
fi
grep -q "rank 0 of 2" "$work/rank0.log" || { echo "FAIL: rank 0 did not join a group"; cat "$work/rank0.log"; exit 1; }
grep -q "rank 1 of 2" "$work/rank1.log" || { echo "FAIL: rank 1 did not join a group"; exit 1; }
"$cli" train "${common[@]}" --batch 8 --micro-batches 2 --run "$work/single" >"$work/single.log" 2>&1 ||
  { echo "FAIL: the single process failed"; cat "$work/single.log"; exit 1; }
"$cli" train "${common[@]}" --batch 4 --run "$work/half" >"$work/half.log" 2>&1 ||
  { echo "FAIL: the control run failed"; cat "$work/half.log"; exit 1; }
[ "$(ls "$work/dist")" = "$(ls "$work/single")" ] || { echo "FAIL: rank 0 wrote another set of files"; exit 1; }

"$cli" trace --model "$work/dist/latest.fvm" "$image" >/dev/null  # the model reads
# The parameters must agree (batch-norm running statistics follow rank 0's shard by design, so
# the buffers are not compared). The .fvm tensor table (core/formats/checkpoint.cpp): after a 40-byte
# header and the metadata, u32 count, then per tensor u32 name length, name, u8 dtype, u32 rank,
# u64 dims[rank], u64 bytes, data.
python3 - "$work/dist/latest.fvm" "$work/single/latest.fvm" "$work/half/latest.fvm" <<'PY'
import struct, sys
def tensors(path):
    data = open(path, "rb").read()
    meta_len, weight_len = struct.unpack_from("<QQ", data, 16)
    pos = 40 + meta_len
    (count,) = struct.unpack_from("<I", data, pos); pos += 4
    out = {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos); pos += 4
        name = data[pos:pos + n].decode(); pos += n
        dtype, rank = struct.unpack_from("<BI", data, pos); pos += 5
        pos += 8 * rank
        (nbytes,) = struct.unpack_from("<Q", data, pos); pos += 8
        if dtype == 1:
            out[name] = struct.unpack_from(f"<{nbytes // 4}f", data, pos)
        pos += nbytes
    return out
def worst(a, b):
    keys = [k for k in a if "running_" not in k and "num_batches" not in k]
    assert keys and set(keys) <= set(b), "different tensors"
    return max(max(abs(x - y) for x, y in zip(a[k], b[k])) for k in keys)
dist, single, half = (tensors(p) for p in sys.argv[1:4])
d, control = worst(dist, single), worst(dist, half)
print(f"max |w| difference: 2 processes vs 1 process {d:.2e}; vs rank 0's data alone {control:.2e}")
assert d < 1e-5, "the two-process model differs from the one-process model"
assert control > 1e-4, "the control does not differ: the comparison could not fail"
PY
echo "gloo two-process test passed"
