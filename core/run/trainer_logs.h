#pragma once
// Other trainers' run folders (issue 72): the curves they log (TensorBoard event files, DTRB's and
// EasyOCR's log_train.txt, MMEngine's vis_data/scalars.json, PaddleOCR's train.log, Lightning's
// and PyLaia's metrics.csv) and the checkpoints they write, read while the trainer still writes
// them. Torch-free and Qt-free, like RunLog: the Training page, `foveal-cli runs show` and
// `runs follow` read a folder through TrainerRun.
//
// One seam, RunLogFormat: a name, a sniffer and a reader that is called again as the files grow.
// Every reader
//  - consumes complete records only (a short last record or a line without its newline is "not
//    yet": it is read on a later call once complete, never reported as damage);
//  - reports damage (a bad CRC, a record that does not parse) as LogDamage naming the file and the
//    byte offset, skips it, and goes on;
//  - never throws from readNew().
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace foveal::core {

struct ScalarPoint {
  int64_t step = 0;
  double value = 0;
  double wallTime = 0;  ///< seconds since the epoch; NaN when the log has no time for it
};

/// One curve: the trainer's own tag ("train/loss", "Valid_loss", "val_accuracy"...) and the name
/// it maps to in Foveal's metric catalogue ("loss", "accuracy", "ned", "lr", "val_loss"...; ""
/// for a tag kept under its own name only).
struct ScalarSeries {
  std::string tag;
  std::string catalogue;
  std::vector<ScalarPoint> points;  ///< in the order TensorBoard would show them (by step)
};

struct LogDamage {
  std::string file;
  uint64_t offset = 0;  ///< byte offset of the damaged record or line in the file
  std::string message;
};

class RunLogReader {
 public:
  virtual ~RunLogReader() = default;
  struct Update {
    /// The files were replaced or shrank: every point read before is void and `series` holds
    /// everything again.
    bool reset = false;
    std::vector<ScalarSeries> series;  ///< the points new since the last call, per tag
    /// A restart (steps logged again, or torch's purge_step): per tag, the points at or after
    /// this step read before are void; the new ones replace them (as TensorBoard shows it).
    std::vector<std::pair<std::string, int64_t>> purged;
    std::vector<LogDamage> damage;  ///< new damage only (after `reset`, all of it again)
    /// Checkpoints the log says were written since the last call: the file's name without its
    /// folder and extension ("best_accuracy", "iter_epoch_3") and the step it was written at.
    /// Where a trainer rewrites one file (DTRB's best_accuracy.pth), its latest entry is the one
    /// on disk.
    std::vector<std::pair<std::string, int64_t>> checkpointSteps;
  };
  /// Reads what was appended (or added: a new event file, a new version_N/) since the last call.
  virtual Update readNew() = 0;
};

class RunLogFormat {
 public:
  virtual ~RunLogFormat() = default;
  /// "tensorboard", "dtrb", "mmengine", "paddleocr", "metrics-csv".
  virtual std::string name() const = 0;
  /// The trainer a user would name ("strhub (Lightning)", "deep-text-recognition-benchmark"...).
  virtual std::string trainer(const std::string& runDir) const = 0;
  /// 0: not this format's folder; higher: more certain (a folder may hold several formats).
  virtual int sniff(const std::string& runDir) const = 0;
  virtual std::unique_ptr<RunLogReader> open(const std::string& runDir) const = 0;
};

/// Every format, in the order they are tried.
const std::vector<const RunLogFormat*>& runLogFormats();
/// The format whose sniff() is highest for the folder; nullptr when none knows it.
const RunLogFormat* detectRunLogFormat(const std::string& runDir);
/// The catalogue name of a trainer's tag ("" when it has none).
std::string catalogueName(const std::string& format, const std::string& tag);
/// A value of a trainer's tag in the units of its catalogue name: Foveal's accuracy is a fraction
/// and its "ned" a distance (lower is better), where DTRB logs accuracy in % and norm_ED as
/// 1 - NED, strhub 100 * accuracy and 100 * (1 - NED), PaddleOCR and MMOCR 1 - NED. `value`
/// itself for tags without a catalogue name or already in Foveal's units.
double catalogueValue(const std::string& format, const std::string& tag, double value);

/// A trainer's checkpoint in the folder.
struct TrainerCheckpoint {
  std::string file;    ///< path relative to the run folder
  int64_t step = -1;   ///< the iteration or step it was written at (from its name or the log); -1
  int64_t epoch = -1;  ///< the epoch its name says (epoch_3.pth, epoch=3-...); -1
  uint64_t size = 0;
  int64_t mtimeNs = 0;  ///< modification time, nanoseconds since the epoch
};

/// A run folder of any supported trainer, followed over time.
class TrainerRun {
 public:
  explicit TrainerRun(std::string runDir);
  ~TrainerRun();
  TrainerRun(TrainerRun&&) noexcept;
  TrainerRun& operator=(TrainerRun&&) noexcept;

  /// Reads what is new. Returns true when series, checkpoints or damage changed. Never throws.
  bool refresh();

  const std::string& dir() const;
  const RunLogFormat* format() const;  ///< nullptr until a known log appears
  std::string trainer() const;         ///< "" until known
  const std::vector<ScalarSeries>& series() const;
  const ScalarSeries* find(const std::string& tagOrCatalogue) const;
  /// The checkpoints that are complete: their size and time unchanged across two refreshes at
  /// least `settleSeconds` apart (or renamed into place, which looks the same), and whole where the
  /// format can tell (a torch zip's end record). A half-written file is never listed.
  const std::vector<TrainerCheckpoint>& checkpoints() const;
  const std::vector<LogDamage>& damage() const;
  void setSettleSeconds(double seconds);

 private:
  struct State;
  std::unique_ptr<State> m;
};

}  // namespace foveal::core
