#pragma once
// Reading a training run directory while it is being written (by `foveal-cli train` here, or by
// a run on a GPU server whose folder is synced): metrics.jsonl read incrementally from a byte
// offset, and the run's status inferred from what the folder holds. Torch-free and Qt-free, so
// the GUI and tools can use it without the engine.
//
// metrics.jsonl holds one JSON object per line with a "kind" ("train", "eval", "skip",
// "checkpoint", "stop", "resume"; fields in core/train/trainer.cpp). The reader
//  - consumes complete lines only: a half-written last line waits until its newline arrives;
//  - reports a complete line that is not a JSON object with a "kind" as corrupt (with its line
//    number) and goes on with the next one;
//  - maps null, "nan", "inf", "-inf" (and the bare NaN / Infinity that Python's json writes) to
//    non-finite doubles;
//  - notices a file that was replaced or shrank (a resumed run rewrites it) and starts over.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace foveal::core {

/// One line of metrics.jsonl.
struct MetricRecord {
  int64_t line = 0;  ///< 1-based line number in the file
  std::string kind;
  /// Every numeric field (booleans as 0/1); null and non-finite strings are NaN or +-inf.
  std::map<std::string, double> values;
  std::map<std::string, std::string> strings;  ///< string fields that are not numbers ("reason")
  struct DatasetValues {
    std::string name;
    std::map<std::string, double> values;
  };
  std::vector<DatasetValues> datasets;  ///< eval records: per evaluation set

  bool has(const std::string& key) const { return values.count(key) != 0; }
  /// The field's value; NaN when absent.
  double value(const std::string& key) const;
  std::string string(const std::string& key) const;
  int64_t iteration() const;  ///< -1 when absent or not finite
};

struct CorruptLine {
  int64_t line = 0;
  std::string message;
};

/// "nan", "inf", "-Infinity"... (any case) as a double; nothing for other strings.
std::optional<double> nonFinite(const std::string& s);
/// Python's json module writes NaN, Infinity and -Infinity bare: the line with them (and the
/// other spellings nonFinite() reads) quoted outside strings, so that it parses as JSON.
std::string quoteBareNonFinite(const std::string& line);

/// Parses one line (without its newline). Throws Error describing the problem.
MetricRecord parseMetricLine(const std::string& line, int64_t lineNumber);

/// Reads metrics.jsonl from where it stopped last time.
class MetricsReader {
 public:
  explicit MetricsReader(std::string path);

  struct Chunk {
    bool missing = false;  ///< the file does not exist (yet, or any more)
    /// The file was replaced or shrank: records read before are void, these start at line 1.
    bool reset = false;
    std::vector<MetricRecord> records;
    std::vector<CorruptLine> corrupt;
    std::string error;  ///< an I/O error other than a missing file
  };
  /// Reads the complete lines appended since the last call. Never throws.
  Chunk readNew();

  const std::string& path() const { return m_path; }
  uint64_t offset() const { return m_offset; }    ///< bytes consumed (up to the last newline)
  int64_t lines() const { return m_lines; }       ///< complete lines consumed
  bool partialLine() const { return m_partial; }  ///< bytes after the last newline are waiting

 private:
  std::string m_path;
  uint64_t m_offset = 0;
  int64_t m_lines = 0;
  bool m_partial = false;
  std::string m_tail;  ///< the last consumed bytes, to recognise the same file next time
};

enum class RunStatus { Missing, Corrupt, Starting, Running, Finished, Stopped, Failed, Stale };
const char* runStatusName(RunStatus status);

/// What config.json says (the parts a monitor needs).
struct RunConfigSummary {
  bool ok = false;
  std::string error;  ///< why it is not ok (missing, not JSON...)
  std::string preset;
  std::string attention;  ///< model.attention
  double width = 0;       ///< model.width
  int64_t iterations = 0;
  int64_t batchSize = 0;
  int64_t maxNonFinite = 20;
  std::string device;
  std::vector<std::string> trainData;
  std::vector<std::string> evalData;
};
RunConfigSummary readRunConfig(const std::string& runDir);

/// What the monitor knows about the process that writes the folder (when it started it).
struct ProcessFacts {
  enum State { Unknown, Running, Exited } state = Unknown;
  int exitCode = 0;
  bool crashed = false;  ///< killed by a signal
  std::string message;   ///< e.g. the last line it printed to stderr
};

/// Everything the status depends on, gathered by RunLog (kept separate so it can be tested).
struct RunFacts {
  bool folderExists = false;
  RunConfigSummary config;
  bool metricsExists = false;
  int64_t records = 0;
  int64_t corruptLines = 0;
  std::string lastKind;           ///< kind of the last record ("" without records)
  std::string lastReason;         ///< its "reason" (checkpoint records)
  int64_t consecutiveSkips = 0;   ///< "consecutive" of a trailing skip record
  double secondsSinceUpdate = 0;  ///< since the newest file of the folder was written
  ProcessFacts process;
};

struct RunStatusInfo {
  RunStatus status = RunStatus::Missing;
  std::string detail;  ///< one line for the user
};
/// The rules: a missing folder is Missing; a final "checkpoint" with reason "end" is Finished; a
/// "stop" record (or the process exiting after SIGTERM) is Stopped; the process failing, or
/// trailing skips reaching the configured limit, is Failed; no usable config and no records is
/// Corrupt; a live process is Running; otherwise Running while the folder changes and Stale once
/// nothing was written for `staleAfterSeconds`.
RunStatusInfo inferRunStatus(const RunFacts& facts, double staleAfterSeconds);

/// A run folder followed over time: the records read so far and what they add up to.
class RunLog {
 public:
  explicit RunLog(std::string runDir);

  /// Re-reads config.json while it is unusable, appends new records. Returns true when anything
  /// the caller shows may have changed (records added or reset, the folder appearing or going).
  bool refresh();

  const std::string& dir() const { return m_dir; }
  const std::string& metricsPath() const { return m_reader.path(); }
  const RunConfigSummary& config() const { return m_config; }
  const std::vector<MetricRecord>& records() const { return m_records; }
  const std::vector<CorruptLine>& corruptLines() const { return m_corrupt; }
  bool folderExists() const { return m_exists; }
  bool partialLine() const { return m_reader.partialLine(); }
  std::string readError() const { return m_error; }
  /// Bumped whenever records() was cleared (the file was replaced).
  int generation() const { return m_generation; }

  int64_t iteration() const;  ///< latest iteration of any record (0 without records)
  int64_t totalIterations() const { return m_config.iterations; }
  double bestAccuracy() const;  ///< best eval accuracy; NaN without evaluations
  /// Seconds left at the recent rate (from the train records' elapsed_s); NaN when unknown.
  double etaSeconds() const;

  RunFacts facts(const ProcessFacts& process = {}) const;
  RunStatusInfo status(const ProcessFacts& process = {}, double staleAfterSeconds = 600) const;

 private:
  std::string m_dir;
  MetricsReader m_reader;
  RunConfigSummary m_config;
  std::vector<MetricRecord> m_records;
  std::vector<CorruptLine> m_corrupt;
  bool m_exists = false;
  std::string m_error;
  int m_generation = 0;
};

}  // namespace foveal::core
