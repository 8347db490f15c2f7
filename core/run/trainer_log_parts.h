#pragma once
// Two small parts the run-log readers share (run/trainer_logs.h): reading a text file's complete
// lines from where the last call stopped, and gathering each call's new points per tag with the
// restart rule. Kept in one internal header because neither is useful alone. Torch- and Qt-free.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "run/trainer_logs.h"

namespace foveal::core {

/// A text log read as it grows: the complete lines appended since the last call, each with the
/// byte offset where it starts. Notices a file that was replaced or shrank (its first and its
/// last consumed bytes differ, or with `wholePrefix` any consumed byte: for files rewritten in
/// place, such as Lightning's metrics.csv when a key appears) and starts over.
class TextTail {
 public:
  explicit TextTail(std::string path, bool wholePrefix = false);

  struct Line {
    std::string text;  ///< without its newline (and a '\r' before it)
    uint64_t offset = 0;
  };
  struct Chunk {
    bool missing = false;  ///< no such file (yet)
    bool reset = false;    ///< replaced or shrunk: these lines start at byte 0 again
    std::vector<Line> lines;
    std::string error;    ///< an I/O problem, or a line too long to be one
    uint64_t offset = 0;  ///< where `error` is
  };
  /// Never throws.
  Chunk readNew();

  const std::string& path() const { return m_path; }
  uint64_t offset() const { return m_offset; }    ///< bytes consumed (up to the last newline)
  bool partialLine() const { return m_partial; }  ///< bytes after the last newline wait

 private:
  /// Starts again from byte 0 (the file was replaced, shrank or went): `chunk` says so.
  void restart(Chunk& chunk);
  /// Takes `consumed` (the bytes up to the last newline read) as read: edges, hash, offset.
  void consume(const std::string& consumed);

  std::string m_path;
  bool m_wholePrefix = false;
  uint64_t m_offset = 0;
  bool m_partial = false;
  std::string m_head, m_tail;  ///< the first and the last consumed bytes (up to 64 each)
  uint64_t m_hash = 0;         ///< FNV-1a of every consumed byte (wholePrefix)
};

/// A reader's new points per tag, with TensorBoard's rule for a restarted run: a point at a step
/// at or before the tag's last one starts again from there (the later points replace the earlier
/// ones). Points of this call are dropped at once; those of earlier calls go to Update::purged.
class SeriesBuilder {
 public:
  /// `format` names the catalogue mapping (catalogueName).
  void add(const std::string& format, const std::string& tag, int64_t step, double value,
           double wallTime);
  /// Appends this call's points and purges to `u`, and starts the next call.
  void take(RunLogReader::Update& u);
  /// Forgets everything (the files are read again from the start).
  void reset();

 private:
  std::map<std::string, int64_t> m_last;  ///< per tag, the step of its last point
  std::vector<ScalarSeries> m_pending;
  std::map<std::string, size_t> m_index;
  std::map<std::string, int64_t> m_purged;
};

/// Applies an update to `series` (a consumer's copy): reset, then purges, then the new points.
void applyUpdate(std::vector<ScalarSeries>& series, const RunLogReader::Update& u);

}  // namespace foveal::core
