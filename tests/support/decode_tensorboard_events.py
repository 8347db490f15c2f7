#!/usr/bin/python3
"""Decodes the TensorBoard event files of a Foveal run folder (RUN/tensorboard/) with Debian's
python3-protobuf against Foveal's own .proto, and checks them against the run's metrics.jsonl.

    /usr/bin/python3 tests/support/decode_tensorboard_events.py RUN core/run/tensorboard_event.proto

The .proto is compiled with protoc (--python_out) into a temporary folder. Every record's framing
is checked with a CRC-32C written here (not Foveal's), every file must start with file_version
"brain.Event:2" and be named events.out.tfevents.<time>.<host>.<pid>.<n>; a session after the
first must start with a SessionLog START at the iteration after its resume. The scalars, shown as
TensorBoard shows a restarted run (a point at step s replaces the tag's points at steps >= s, a
START at step s drops every tag's points at steps >= s), must be exactly metrics.jsonl's train
and eval fields as float32, at step = iteration, with the record's time.
"""
import importlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    TABLE.append(c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fail(msg):
    sys.exit("FAIL: " + msg)


def records(path):
    data = open(path, "rb").read()
    pos = 0
    while pos < len(data):
        if len(data) - pos < 12:
            fail(f"{path}: {len(data) - pos} bytes after the last record")
        (length,) = struct.unpack_from("<Q", data, pos)
        (length_crc,) = struct.unpack_from("<I", data, pos + 8)
        if masked(data[pos:pos + 8]) != length_crc:
            fail(f"{path}: the length at offset {pos} fails its CRC-32C")
        body = data[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack_from("<I", data, pos + 12 + length)
        if masked(body) != data_crc:
            fail(f"{path}: the data at offset {pos} fails its CRC-32C")
        yield body
        pos += 16 + length


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    run, proto = sys.argv[1], os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="foveal-tb-proto-")
    try:
        subprocess.run(["protoc", "-I", os.path.dirname(proto), "--python_out", tmp, proto],
                       check=True)
        sys.path.insert(0, tmp)
        pb = importlib.import_module(os.path.splitext(os.path.basename(proto))[0] + "_pb2")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    folder = os.path.join(run, "tensorboard")
    names = sorted(os.listdir(folder), key=lambda n: (int(n.split(".")[3]), n))
    series, n_records = {}, 0
    for k, name in enumerate(names):
        if not re.fullmatch(r"events\.out\.tfevents\.\d{10}\.[^/]+\.\d+\.\d+", name):
            fail(f"{name}: not named as TensorBoard's writers name event files")
        events = []
        for body in records(os.path.join(folder, name)):
            e = pb.Event()
            e.ParseFromString(body)
            events.append(e)
        n_records += len(events)
        if not events or events[0].WhichOneof("what") != "file_version" or \
                events[0].file_version != b"brain.Event:2":
            fail(f"{name}: the first event is not file_version brain.Event:2")
        if k > 0 and (len(events) < 2 or events[1].WhichOneof("what") != "session_log" or
                      events[1].session_log.status != pb.SessionLog.START):
            fail(f"{name}: a resumed session's file does not start with SessionLog START")
        for e in events[1:]:
            if e.WhichOneof("what") == "session_log" and e.session_log.status == pb.SessionLog.START:
                for points in series.values():
                    points[:] = [p for p in points if p[0] < e.step]
            elif e.WhichOneof("what") == "summary":
                for v in e.summary.value:
                    if v.WhichOneof("value") != "simple_value":
                        fail(f"{name}: {v.tag} is not a simple_value")
                    points = series.setdefault(v.tag.decode(), [])
                    points[:] = [p for p in points if p[0] < e.step]
                    points.append((e.step, v.simple_value, e.wall_time))

    want, starts = {}, []
    skip = {"iteration", "elapsed_s", "count", "time"}

    def add(fields, prefix, it, t):
        for key, value in fields.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and key not in skip:
                f32 = struct.unpack("<f", struct.pack("<f", value))[0] if abs(value) < 3.4e38 \
                    else value
                want.setdefault(prefix + key, []).append((it, f32, t))

    with open(os.path.join(run, "metrics.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r["kind"] == "resume":
                starts.append(r["iteration"] + 1)
            if r["kind"] not in ("train", "eval"):
                continue
            add(r, r["kind"] + "/", r["iteration"], r["time"])
            for s in r.get("datasets", []):
                add(s, "eval/" + s["name"] + "/", r["iteration"], r["time"])
    if len(starts) != len(names) - 1:
        fail(f"{len(names)} event files for {len(starts)} resumes")
    if series != want:
        for tag in sorted(set(series) | set(want)):
            if series.get(tag) != want.get(tag):
                fail(f"{tag}: events {series.get(tag)} but metrics.jsonl {want.get(tag)}")
    print(f"tensorboard decode test passed: {len(names)} files, {n_records} records, "
          f"{sum(len(p) for p in series.values())} scalars in {len(series)} tags match "
          f"metrics.jsonl")


if __name__ == "__main__":
    main()
