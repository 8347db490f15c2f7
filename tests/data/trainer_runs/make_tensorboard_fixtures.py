#!/usr/bin/python3
"""Writes the TensorBoard event-file fixtures of tests/data/trainer_runs/tensorboard/ with the real
writers, and expected.json beside them: every scalar, step and wall time as TensorBoard shows them.

    /usr/bin/python3 tests/data/trainer_runs/make_tensorboard_fixtures.py TENSORBOARD_SRC [OUT]

TENSORBOARD_SRC is a TensorBoard source tree (the folder holding tensorboard/) or its git
directory (the `fetch` tool's mirror of github:tensorflow/tensorboard); it is copied to a temporary
folder, its .proto files compiled there with protoc (Debian: protobuf-compiler), and put first on
sys.path, so that PyTorch's own torch.utils.tensorboard.SummaryWriter (Debian: python3-torch)
imports and writes through TensorBoard's own EventFileWriter. TensorBoard's TF stub imports
absl.flags (Debian: python3-absl); python3-protobuf, python3-numpy, python3-yaml. Nothing of
TensorBoard is kept. The fixtures (a few KB) are committed; this script remakes them.

The runs, each a folder of OUT:
  lightning/  strhub's on PyTorch Lightning: lightning_logs/version_0/ and version_1/, each with
              hparams.yaml and an event file, as Lightning's TensorBoardLogger writes them;
              version_1 is the run resumed from an earlier checkpoint, its steps written again.
  purge/      two sessions of SummaryWriter in one folder, the second with purge_step.
  keras/      TF2's tensor-style scalars in Keras's train/ and validation/ folders.
  styles/     every scalar encoding in one folder: simple_value, SummaryWriter's new_style
              float_val and double_val, TensorBoard's scalar_pb, a DT_DOUBLE tensor_content, and a
              tag whose metadata only its first value carries (TF1's FileWriter), beside values
              that are not scalars (text, histogram).

expected.json is computed from the files with TensorBoard's own reader (event_file_loader's
EventFileLoader, which frames the records, checks their CRCs and migrates simple_value to the
tensor form with the "scalars" metadata), applying what TensorBoard shows for a restarted run:
a point at step s replaces the tag's points at steps >= s (tensorboard/data/server/reservoir.rs,
"preemption"); a SessionLog START at step s (torch's purge_step, writer.py _get_file_writer) drops
every tag's points at steps >= s; the files are read in the order of the time in their names, and
the tags of sibling folders other than version_N/ get the folder as a prefix.
"""
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def prepare_tensorboard(src):
    tmp = tempfile.mkdtemp(prefix="tensorboard-src-")
    if os.path.isdir(os.path.join(src, "tensorboard")):
        def keep(folder, names):
            return [n for n in names if not os.path.isdir(os.path.join(folder, n))
                    and not n.endswith((".py", ".proto"))]
        shutil.copytree(os.path.join(src, "tensorboard"), os.path.join(tmp, "tensorboard"),
                        ignore=keep)
    else:  # a git directory
        # A mirror may lack some large blobs outside tensorboard/; git still writes the tree.
        archive = subprocess.run(["git", "--git-dir", src, "archive", "HEAD", "tensorboard"],
                                 check=False, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    protos = []
    for folder, _, names in os.walk(os.path.join(tmp, "tensorboard")):
        protos += [os.path.relpath(os.path.join(folder, n), tmp) for n in names
                   if n.endswith(".proto")]
    subprocess.run(["protoc", "-I", tmp, "--python_out", tmp] + protos, check=True)
    sys.path.insert(0, tmp)
    return tmp


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "tensorboard")
    tb_tmp = prepare_tensorboard(sys.argv[1])
    try:
        write_all(out)
    finally:
        shutil.rmtree(tb_tmp, ignore_errors=True)


def write_all(out):
    global SummaryWriter, hparams, EventFileWriter, event_pb2, summary_pb2, tensor_pb2
    global tensor_shape_pb2, types_pb2, scalar_metadata, scalar_summary, tensor_util
    global event_file_loader
    import torch  # noqa: F401  (Debian's python3-torch)
    from torch.utils.tensorboard import SummaryWriter
    from torch.utils.tensorboard.summary import hparams
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
    from tensorboard.compat.proto import types_pb2
    from tensorboard.plugins.scalar import metadata as scalar_metadata
    from tensorboard.plugins.scalar import summary_v2 as scalar_summary
    from tensorboard.util import tensor_util
    from tensorboard.backend.event_processing import event_file_loader
    import tensorboard

    runs = {"lightning": write_lightning, "purge": write_purge, "keras": write_keras,
            "styles": write_styles}
    expected = {"_about": {
        "written_by": "tests/data/trainer_runs/make_tensorboard_fixtures.py",
        "torch": torch.__version__, "tensorboard": tensorboard.__version__,
        "read_with": "tensorboard.backend.event_processing.event_file_loader.EventFileLoader"}}
    for name, write in runs.items():
        run = os.path.join(out, name)
        shutil.rmtree(run, ignore_errors=True)
        os.makedirs(run)
        write(run)
        expected[name] = shown(run)
        expected[name]["trainer"] = ("strhub (Lightning)" if name == "lightning" else "TensorBoard")
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    for name in runs:
        n = sum(len(s["points"]) for s in expected[name]["series"])
        print(f"{name}: {len(expected[name]['files'])} files, {len(expected[name]['series'])} "
              f"series, {n} points")


def wait_for_next_second():
    # The files of one run are read in the order of the time in their names (seconds).
    time.sleep(1.05 - (time.time() % 1.0))


# ---- strhub on Lightning ----

# strhub's hyper-parameters as its train.py hands them to the LightningModule (a few of them).
STRHUB_HPARAMS = {"charset_train": "0123456789abcdefghijklmnopqrstuvwxyz",
                  "charset_test": "0123456789abcdefghijklmnopqrstuvwxyz", "max_label_length": 25,
                  "batch_size": 384, "lr": 0.0007, "warmup_pct": 0.075, "weight_decay": 0.0,
                  "img_size": [32, 128], "patch_size": [4, 8], "embed_dim": 384,
                  "name": "parseq"}


def lightning_version(root, version, steps, val_steps, epoch_len, seed):
    """One launch of `strhub train.py`, as Lightning logs it through TensorBoardLogger
    (lightning/fabric/loggers/tensorboard.py at Lightning-AI/pytorch-lightning 00024d71):
    log_dir = root/lightning_logs/version_N (`log_dir`); the SummaryWriter is created there
    (`experiment`); log_hyperparams logs {"hp_metric": -1} at step 0 through log_metrics, then the
    hparams plugin's three summaries (`hparams(params, metrics)`, written with add_summary); the
    PyTorch logger saves hparams.yaml in log_dir. Every log_metrics call is
    experiment.add_scalar(k, v, step) per key; Lightning's logger connector adds "epoch" to each
    dict. strhub logs 'loss' in training_step and, at the end of each validation,
    'val_accuracy' (100 * acc), 'val_NED' (100 * ned), 'val_loss' and 'hp_metric' (acc)
    (strhub/models/base.py, on_validation_epoch_end)."""
    import yaml
    log_dir = os.path.join(root, "lightning_logs", f"version_{version}")
    w = SummaryWriter(log_dir=log_dir)
    with open(os.path.join(log_dir, "hparams.yaml"), "w") as f:
        yaml.safe_dump(STRHUB_HPARAMS, f)
    w.add_scalar("hp_metric", -1, 0)
    params = {k: str(v) if isinstance(v, list) else v for k, v in STRHUB_HPARAMS.items()}
    exp, ssi, sei = hparams(params, {"hp_metric": -1})
    fw = w._get_file_writer()
    for s in (exp, ssi, sei):
        fw.add_summary(s)
    for step in steps:
        epoch = (step - 1) // epoch_len
        loss = 4.0 * math.exp(-step / 60.0) + 0.05 * math.sin(step * seed)
        for k, v in {"loss": loss, "epoch": epoch}.items():
            w.add_scalar(k, v, step)
        if step in val_steps:
            acc = 1.0 - math.exp(-step / 70.0) - 0.01 * seed
            metrics = {"val_accuracy": 100 * acc, "val_NED": 100 * (1 - 0.3 * (1 - acc)),
                       "val_loss": loss * 1.1, "hp_metric": acc, "epoch": epoch}
            for k, v in metrics.items():
                w.add_scalar(k, v, step)
    w.close()


def write_lightning(run):
    # version_0 trains to step 120 (3 epochs of 40 steps, logging every 10, validating each
    # epoch); the job dies; version_1 resumes from the checkpoint of step 80 and logs steps 90 on
    # again, its hp_metric placeholder at step 0 too.
    lightning_version(run, 0, range(10, 121, 10), {40, 80, 120}, 40, seed=1)
    wait_for_next_second()
    lightning_version(run, 1, range(90, 161, 10), {120, 160}, 40, seed=2)


# ---- torch's purge_step ----

def write_purge(run):
    """SummaryWriter(log_dir, purge_step=N) (torch/utils/tensorboard/writer.py, __init__ and
    _get_file_writer: its new file's first events are file_version and SessionLog START, both at
    step N): the second session resumes from step 60 of a run whose first session reached 100."""
    w = SummaryWriter(log_dir=run)
    for step in range(0, 101, 5):
        w.add_scalar("train/loss", 2.0 / (1 + step / 20.0), step)
        w.add_scalar("train/lr", 0.001 * (0.98 ** step), step)
        if step % 25 == 0 and step > 0:
            w.add_scalar("val/accuracy", step / 110.0, step)
    w.close()
    wait_for_next_second()
    w = SummaryWriter(log_dir=run, purge_step=60)
    for step in range(60, 141, 5):
        w.add_scalar("train/loss", 2.1 / (1 + step / 20.0), step)
        w.add_scalar("train/lr", 0.001 * (0.98 ** step), step)
        if step % 40 == 0:
            w.add_scalar("val/accuracy", step / 150.0, step)
    w.close()


# ---- TF2 / Keras ----

def tf2_scalar_event(tag, value, step, wall_time, dtype=None):
    """An event as TF2's tf.summary.scalar writes it: tensorboard/plugins/scalar/summary_v2.py
    scalar() casts the value to float32 and hands it with the scalar plugin's metadata
    (metadata.create_summary_metadata) to tf.summary.write; TensorFlow's C++ writer
    (tensorflow/core/summary/summary_file_writer.cc, SummaryFileWriter::WriteTensor) sets step and
    wall time, stores the tensor with Tensor::AsProtoTensorContent (dtype, an empty shape
    message, the value's little-endian bytes in tensor_content), then the tag and the metadata."""
    import numpy as np
    dtype = dtype or np.float32
    e = event_pb2.Event(step=step, wall_time=wall_time)
    v = e.summary.value.add()
    v.tensor.dtype = types_pb2.DT_FLOAT if dtype == np.float32 else types_pb2.DT_DOUBLE
    v.tensor.tensor_shape.SetInParent()
    v.tensor.tensor_content = np.array(value, dtype=dtype).tobytes()
    v.tag = tag
    v.metadata.CopyFrom(scalar_metadata.create_summary_metadata(display_name=None,
                                                                description=None))
    return e


def tf2_writer(logdir):
    # TF2's create_file_writer names its files events.out.tfevents.<time>.<host>.<pid>.<n>.v2
    # (summary_file_writer.cc Initialize: ".<pid>.<counter>" and the ".v2" suffix that
    # tf.summary.create_file_writer passes); TensorBoard's EventFileWriter frames and names them
    # the same way and writes the same first event, file_version "brain.Event:2".
    return EventFileWriter(logdir, filename_suffix=".v2")


def write_keras(run):
    """Keras's TensorBoard callback (keras/src/callbacks/tensorboard.py at keras-team/keras
    08995a40): set_model puts its writers in log_dir/train and log_dir/validation;
    _write_keras_model_summary writes the model's JSON as tag "keras" (plugin graph_keras_model,
    content b"1", a DT_STRING tensor: WriteTensor's AsProtoField) at step 0; on_test_end writes
    evaluation_<name>_vs_iterations to the validation writer at step = optimizer.iterations;
    _log_epoch_metrics writes epoch_<name> (with epoch_learning_rate) to train/ and, without
    their val_ prefix, the validation metrics to validation/, at step = epoch. Five epochs of 25
    iterations."""
    train, val = tf2_writer(os.path.join(run, "train")), tf2_writer(os.path.join(run, "validation"))
    t0 = time.time()
    e = event_pb2.Event(step=0, wall_time=t0)
    v = e.summary.value.add()
    v.tensor.dtype = types_pb2.DT_STRING
    v.tensor.tensor_shape.SetInParent()
    v.tensor.string_val.append(json.dumps({"class_name": "Sequential",
                                           "config": {"name": "sequential"}}).encode())
    v.tag = "keras"
    v.metadata.plugin_data.plugin_name = "graph_keras_model"
    v.metadata.plugin_data.content = b"1"
    train.add_event(e)
    for epoch in range(5):
        t = t0 + 3.25 * (epoch + 1)
        iterations = 25 * (epoch + 1)
        logs = {"loss": 1.5 * 0.6 ** epoch, "accuracy": 0.4 + 0.11 * epoch,
                "val_loss": 1.7 * 0.65 ** epoch, "val_accuracy": 0.35 + 0.1 * epoch}
        for name in ("loss", "accuracy"):
            val.add_event(tf2_scalar_event(f"evaluation_{name}_vs_iterations",
                                           logs["val_" + name], iterations, t - 0.5))
        for name in ("loss", "accuracy"):
            train.add_event(tf2_scalar_event("epoch_" + name, logs[name], epoch, t))
        train.add_event(tf2_scalar_event("epoch_learning_rate", 0.001 * 0.9 ** epoch, epoch, t))
        for name in ("loss", "accuracy"):
            val.add_event(tf2_scalar_event("epoch_" + name, logs["val_" + name], epoch, t))
    train.close()
    val.close()


# ---- every encoding ----

def write_styles(run):
    """One folder, two files. SummaryWriter (torch/utils/tensorboard/summary.py scalar()):
    add_scalar writes simple_value; new_style=True a DT_FLOAT tensor in float_val with the
    "scalars" plugin's metadata; new_style with double_precision a DT_DOUBLE double_val; add_text
    and add_histogram are not scalars. Then TensorBoard's own writer: scalar_pb
    (tensorboard/plugins/scalar/summary_v2.py, make_tensor_proto of a float32: float_val); a
    DT_DOUBLE tensor in tensor_content (tf.summary.write of a float64 tensor with the scalars
    metadata, through WriteTensor); and TF1's FileWriter, which keeps a tag's metadata on its
    first value only (tensorflow/python/summary/writer/writer.py, SummaryToEventTransformer.
    add_summary strips it from tags seen before)."""
    import numpy as np
    w = SummaryWriter(log_dir=run)
    for step in range(0, 50, 7):
        w.add_scalar("simple", 0.1 * step + 1 / 3, step)
        w.add_scalar("new_style_float", 1.0 / (step + 3), step, new_style=True)
        w.add_scalar("new_style_double", 1.0 / (step + 7), step, new_style=True,
                     double_precision=True)
        if step % 14 == 0:
            w.add_text("notes", f"step {step}", step)
            # add_histogram_raw: add_histogram's own binning fails on Debian 12's numpy 1.24
            # (np.greater with dtype=np.int32, summary.py make_histogram).
            edges = list(np.linspace(-1, 1, 5) * (step + 1))
            w.add_histogram_raw("weights", edges[0], edges[-1], 10, 0.0, 4.0 * (step + 1) ** 2,
                                edges[1:], [2, 3, 3, 2], step)
    w.close()
    wait_for_next_second()
    tb = EventFileWriter(run)
    t0 = time.time()
    for i, step in enumerate(range(3, 60, 8)):
        t = t0 + 0.75 * i
        e = event_pb2.Event(step=step, wall_time=t)
        e.summary.CopyFrom(scalar_summary.scalar_pb("tb_scalar_pb", math.sqrt(step)))
        tb.add_event(e)
        tb.add_event(tf2_scalar_event("tensor_content_double", math.pi * step, step, t,
                                      dtype=np.float64))
        e = event_pb2.Event(step=step, wall_time=t)
        v = e.summary.value.add(tag="tf1_metadata_once")
        v.tensor.CopyFrom(tensor_util.make_tensor_proto(np.float32(2.0 ** -i)))
        if i == 0:
            v.metadata.CopyFrom(scalar_metadata.create_summary_metadata(None, None))
        tb.add_event(e)
    tb.close()


# ---- what TensorBoard shows ----

def event_files(run):
    found = []
    for folder, dirs, names in os.walk(run):
        depth = os.path.relpath(folder, run).count(os.sep) + (folder != run)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < 3)
        for n in names:
            if n.startswith("events.out.tfevents."):
                rel = os.path.relpath(os.path.join(folder, n), run).replace(os.sep, "/")
                digits = n[len("events.out.tfevents."):].split(".")[0]
                found.append((int(digits) if digits.isdigit() else -1, rel))
    return [rel for _, rel in sorted(found)]


def prefixes(files):
    streams = [[c for c in rel.split("/")[:-1]
                if not (c.startswith("version_") and c[8:].isdigit() and len(c) > 8)]
               for rel in files]
    common = 0
    if streams:
        common = min(len(s) for s in streams)
        for k in range(common):
            if any(s[k] != streams[0][k] for s in streams):
                common = k
                break
    return ["/".join(s) for s in streams], [
        "/".join(s[common:]) + "/" if s[common:] else "" for s in streams]


def shown(run):
    files = event_files(run)
    streams, prefix = prefixes(files)
    series, stream_of, initial = {}, {}, {}
    for rel, stream, pre in zip(files, streams, prefix):
        for e in event_file_loader.EventFileLoader(os.path.join(run, rel)).Load():
            if e.HasField("session_log") and e.session_log.status == event_pb2.SessionLog.START:
                for tag, points in series.items():
                    if stream_of[tag] == stream:
                        points[:] = [p for p in points if p[0] < e.step]
            if not e.HasField("summary"):
                continue
            for v in e.summary.value:
                tag = pre + v.tag
                if tag not in initial and v.HasField("metadata"):
                    initial[tag] = v.metadata
                md = initial.get(tag)
                if md is None or not (md.plugin_data.plugin_name == "scalars" or
                                      md.data_class == summary_pb2.DATA_CLASS_SCALAR):
                    continue
                if v.WhichOneof("value") == "simple_value":
                    value = float(v.simple_value)
                elif v.WhichOneof("value") == "tensor":
                    a = tensor_util.make_ndarray(v.tensor)
                    if a.shape != () or a.dtype.kind != "f":
                        continue
                    value = float(a)
                else:
                    continue
                points = series.setdefault(tag, [])
                stream_of.setdefault(tag, stream)
                points[:] = [p for p in points if p[0] < e.step]
                points.append([int(e.step), value, float(e.wall_time)])
    return {"files": files,
            "series": [{"tag": tag, "points": points} for tag, points in series.items()]}


if __name__ == "__main__":
    main()
