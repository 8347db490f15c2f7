#!/usr/bin/env python3
"""Compares the tensors of two .fvm model files. Usage: fvm_compare.py A B [TOLERANCE]
[--parameters]. Exit 0 when every float tensor of A is in B with the same values (exactly, or
within TOLERANCE); prints the largest difference. --parameters skips batch-norm statistics.
The .fvm tensor table (core/formats/checkpoint.cpp): after a 40-byte header and the metadata,
u32 count, then per tensor u32 name length, name, u8 dtype, u32 rank, u64 dims[rank], u64 bytes,
data."""
import struct
import sys


def tensors(path):
    data = open(path, "rb").read()
    meta_len, _ = struct.unpack_from("<QQ", data, 16)
    pos = 40 + meta_len
    (count,) = struct.unpack_from("<I", data, pos)
    pos += 4
    out = {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        pos += 4
        name = data[pos:pos + n].decode()
        pos += n
        dtype, rank = struct.unpack_from("<BI", data, pos)
        pos += 5 + 8 * rank
        (nbytes,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        out[name] = (dtype, data[pos:pos + nbytes])
        pos += nbytes
    return out


args = [a for a in sys.argv[1:] if not a.startswith("--")]
params_only = "--parameters" in sys.argv
a, b = tensors(args[0]), tensors(args[1])
tol = float(args[2]) if len(args) > 2 else 0.0
keys = [k for k in a if not params_only or ("running_" not in k and "num_batches" not in k)]
if not keys or not set(keys) <= set(b):
    print("different tensor sets")
    sys.exit(1)
worst = 0.0
for k in keys:
    (da, xa), (db, xb) = a[k], b[k]
    if da != db or len(xa) != len(xb):
        print(f"{k}: different type or size")
        sys.exit(1)
    if da == 1:
        fa = struct.unpack(f"<{len(xa) // 4}f", xa)
        fb = struct.unpack(f"<{len(xb) // 4}f", xb)
        worst = max([worst] + [abs(x - y) for x, y in zip(fa, fb)])
    elif xa != xb:
        print(f"{k}: differs")
        sys.exit(1)
print(f"max |difference| {worst:.3e} over {len(keys)} tensors")
sys.exit(0 if worst <= tol else 1)
