#pragma once
// TensorBoard event files (events.out.tfevents.*), read while the trainer writes them and written
// by Foveal's own trainer. Torch-free and Qt-free.
//
// A file is a sequence of TFRecords: uint64 length, uint32 masked CRC-32C of those 8 bytes, the
// data, uint32 masked CRC-32C of the data (little-endian; mask: ((crc >> 15) | (crc << 17)) +
// 0xa282ead8). Each record's data is an Event protobuf (run/tensorboard_event.proto, compiled with
// libprotobuf): the first holds file_version "brain.Event:2", the others a step, a wall time and
// summary values. The scalars come in two styles: `simple_value` (TF1, PyTorch's SummaryWriter,
// Lightning) and a rank-0 DT_FLOAT / DT_DOUBLE tensor (float_val, double_val or tensor_content)
// whose tag's metadata names the "scalars" plugin (TF2's tf.summary.scalar, SummaryWriter's
// new_style); the metadata may come with a tag's first value only.
//
// The folder reader (the "tensorboard" run-log format) finds every event file up to three folders
// down (Lightning's lightning_logs/version_N/, Keras's train/ and validation/), reads each from
// the byte offset it stopped at, in the order the files were written (the time in their names),
// and shows what TensorBoard shows for one run restarted from a checkpoint:
//  - a point at step s replaces the points of its tag at steps >= s read before (TensorBoard's
//    data server, tensorboard/data/server/reservoir.rs: "preemption"): a restarted run's steps
//    written twice, in a second file or a version_1/ folder, show the later ones;
//  - a SessionLog START at step s (torch's SummaryWriter(purge_step=s)) drops every tag's points
//    at steps >= s, as torch documents it and TensorBoard's Python loader does for a restart;
//  - files in sibling folders that are not version_N/ (Keras's train/ and validation/, the
//    sub-writers of SummaryWriter.add_scalars) are separate curves: their tags are prefixed with
//    the folder ("validation/epoch_loss").
// A short last record is "not yet" (read once complete). A record whose data fails its CRC or
// does not parse is damage named with its offset and skipped by its framed length; a length that
// fails its CRC stops that file there (reported once). Nothing here throws from readNew().
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "run/trainer_logs.h"

namespace foveal::core {

/// The "tensorboard" run-log format, for the registry (trainer_logs.cpp).
const RunLogFormat& tensorboardFormat();

/// False when Foveal was built without protobuf: event files are then found but not read, and
/// each says why (tensorboardUnavailableReason()).
bool tensorboardEventsAvailable();
/// Why event files cannot be read or written here ("" when they can).
std::string tensorboardUnavailableReason();

/// TFRecord's masked CRC-32C of `size` bytes.
uint32_t maskedCrc32c(const void* data, size_t size);

/// `data` framed as one TFRecord.
std::string frameEventRecord(const std::string& data);

/// One record of an event file.
struct EventRecord {
  uint64_t offset = 0;  ///< of its first byte (the length) in the file
  std::string data;     ///< the serialized Event; its data CRC was good
};

/// The records of a stretch of an event file that starts at a record boundary.
struct RecordScan {
  std::vector<EventRecord> records;
  std::vector<LogDamage> damage;
  /// Where the next record starts: every byte before it was consumed (as a record or as damage
  /// skipped by its framed length, which may lie beyond the bytes given).
  uint64_t next = 0;
  /// A length failed its CRC at `next`: no later record can be framed.
  bool stopped = false;
};

/// Frames the records of `bytes`, which start at byte `offset` of `file` (named in the damage).
/// Stops before a record that is not complete. Never throws.
RecordScan scanEventRecords(const std::string& bytes, uint64_t offset, const std::string& file);

/// One value of a summary, as far as scalars are concerned.
struct EventValue {
  std::string tag;
  bool hasMetadata = false;
  std::string plugin;         ///< the metadata's plugin name ("scalars", "hparams", ...)
  bool scalarClass = false;   ///< the metadata's data_class is DATA_CLASS_SCALAR
  bool simple = false;        ///< a simple_value
  bool scalarTensor = false;  ///< a rank-0 DT_FLOAT or DT_DOUBLE tensor holding one value
  double value = std::numeric_limits<double>::quiet_NaN();  ///< of a simple value or such a tensor
};

/// What Foveal uses of one Event.
struct TensorBoardEvent {
  double wallTime = 0;
  int64_t step = 0;
  bool hasFileVersion = false;
  std::string fileVersion;    ///< "brain.Event:2"
  bool sessionStart = false;  ///< a SessionLog with status START
  std::vector<EventValue> values;
};

/// Decodes a record's data. Throws Error saying what is wrong (or that protobuf is missing).
TensorBoardEvent decodeTensorBoardEvent(const std::string& data);

/// Reads a run folder's event files as they grow (what tensorboardFormat().open() returns).
class TensorBoardRunReader : public RunLogReader {
 public:
  explicit TensorBoardRunReader(std::string runDir);
  ~TensorBoardRunReader() override;
  TensorBoardRunReader(const TensorBoardRunReader&) = delete;
  TensorBoardRunReader& operator=(const TensorBoardRunReader&) = delete;

  /// As RunLogReader. After `reset`, `damage` holds all the damage again too. ScalarSeries::
  /// catalogue is left "": the registry maps tags (catalogueName("tensorboard", tag)).
  Update readNew() override;
  /// The event files found, relative to the run folder, in the order they are read.
  std::vector<std::string> files() const;
  /// Every series as it stands (as TensorBoard shows it), in the order the tags first appeared.
  std::vector<ScalarSeries> series() const;

 private:
  struct State;
  std::unique_ptr<State> m;
};

/// Writes an event file as PyTorch's SummaryWriter does: events.out.tfevents.<time>.<host>.<pid>.
/// <n> in `dir`, file_version "brain.Event:2" first, then scalars as simple_value, each record
/// written through to the file as it comes (a monitor or `tensorboard` sees it at once).
class TensorBoardWriter {
 public:
  /// Creates `dir` (and its parents) and a new event file in it, named with `wallTime` (now when
  /// NaN) or, when a file in `dir` is named as late or later, a second after the latest: readers
  /// order files by that time. Throws Error naming the file when it cannot (or when Foveal was
  /// built without protobuf).
  explicit TensorBoardWriter(const std::string& dir,
                             double wallTime = std::numeric_limits<double>::quiet_NaN());
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  /// wallTime NaN: now. Throws Error naming the file when the write fails.
  void addScalar(const std::string& tag, double value, int64_t step,
                 double wallTime = std::numeric_limits<double>::quiet_NaN());
  /// A SessionLog START at `step` (torch's purge_step): the points of every tag at steps >= step
  /// written before are void; a resumed run writes it first.
  void addSessionStart(int64_t step, double wallTime = std::numeric_limits<double>::quiet_NaN());
  const std::string& path() const { return m_path; }

 private:
  void write(const std::string& eventBytes);
  std::string m_path;
  std::FILE* m_file = nullptr;
};

}  // namespace foveal::core
