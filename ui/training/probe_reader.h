#pragma once
// A run's probe set and what each of its checkpoints reads on it (issue 72, items 3 and 4): the
// handful of images (and their truths, when known) the user picks once per run, each checkpoint's
// reading, confidence and attention over the image's regions (CTC: each emitted token's posterior
// over the columns), and the verdicts along training ("first read correctly at step N", "still
// wrong", "regressed at step N"). Everything is kept as JSON in the run's side folder, so that
// reopening a run shows its filmstrip without reading a checkpoint again.
//
// The side folder: <run>/.foveal/probes when the run folder can be written (a folder followed
// here, or the local mirror of a folder on another machine, which the mirror never writes into),
// else the application's data folder, keyed by the run folder's path.
//
// readProbeColumn() opens a checkpoint (the window's importers, with the options the trainer
// wrote beside it: DTRB's opt.txt) and reads every probe: a worker's job, never the window's
// thread. The rest are plain values and functions, safe on any thread.
#include <QImage>
#include <QJsonObject>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <map>
#include <optional>
#include <vector>

#include "formats/model_format.h"

namespace foveal::ui {

struct ProbeImage {
  QString path;   ///< absolute
  QString truth;  ///< empty: not known
  bool hasTruth() const { return !truth.isEmpty(); }
};

/// One probe read by one checkpoint.
struct ProbeReading {
  QString reading;
  double confidence = 0;
  QString error;                ///< the image or the checkpoint could not be read: why
  std::optional<bool> correct;  ///< scored against the truth (as evaluation scores); none: no truth
  QString decoder;              ///< "attention" or "ctc"
  int imageW = 0, imageH = 0;
  /// The regions the attention weighs, in image pixels (x, y, w, h), and their layout.
  std::vector<QRectF> regions;
  int gridRows = 1, gridColumns = 0;
  /// Per step (the end token's too), its token and its attention over the regions.
  QStringList tokens;
  std::vector<std::vector<float>> attention;

  QJsonObject toJson() const;
  static ProbeReading fromJson(const QJsonObject& o);
};

/// One checkpoint of the run (one version of its file: a file the trainer rewrites, such as DTRB's
/// best_accuracy.pth, is a new column each time it is complete again).
struct ProbeColumn {
  QString file;  ///< relative to the run folder
  qint64 step = -1;
  qint64 size = 0;
  qint64 mtimeNs = 0;
  /// Probe path -> its reading; probes not read yet are absent.
  std::map<QString, ProbeReading> readings;
  QString error;  ///< the checkpoint could not be opened: why (then no readings)

  QString key() const;  ///< file, size and time: one version of the file
  bool sameVersion(const ProbeColumn& o) const { return key() == o.key(); }
};

/// What a probe did along the columns (in step order).
struct ProbeVerdict {
  enum Kind { NoTruth, NotRead, StillWrong, FirstCorrect, Regressed } kind = NotRead;
  qint64 step = -1;  ///< FirstCorrect: first correct; Regressed: where it went wrong again
  QString text() const;
};
ProbeVerdict probeVerdict(const std::vector<ProbeColumn>& columns, const ProbeImage& probe);

/// The probe set's accuracy at each column (correct probes with a truth / probes with a truth
/// read there); NaN where none was read.
std::vector<double> probeAccuracy(const std::vector<ProbeColumn>& columns,
                                  const std::vector<ProbeImage>& probes);

/// The run's side folder (created with `create`). Empty when none can be made (the message in
/// `error`), or without `create` when none exists yet.
QString probeSideFolder(const QString& runDir, QString* error = nullptr, bool create = true);

/// The probe set remembered for the run (probes.json); empty when none was chosen.
std::vector<ProbeImage> loadProbeSet(const QString& sideFolder, QString* error = nullptr);
bool saveProbeSet(const QString& sideFolder, const std::vector<ProbeImage>& probes,
                  QString* error = nullptr);
/// The images chosen, with the truths their names (truth=TEXT, digits-N) or a gt.txt beside them
/// (DTRB's "NAME<TAB>TRUTH" lines) state.
std::vector<ProbeImage> probesFromFiles(const QStringList& paths);

/// The readings kept (filmstrip.json), in step order.
std::vector<ProbeColumn> loadProbeColumns(const QString& sideFolder, QString* error = nullptr);
bool saveProbeColumns(const QString& sideFolder, const std::vector<ProbeColumn>& columns,
                      QString* error = nullptr);

/// A job for a worker: one checkpoint file and the probes it has not read yet.
struct ProbeJob {
  QString runDir;
  ProbeColumn column;  ///< file, step, size, mtime of the version to read
  std::vector<ProbeImage> probes;
};
/// What a worker hands back: the job's column key (the version asked for), what it read, and
/// whether the file changed while it was read (then nothing of it is kept).
struct ProbeJobResult {
  QString runDir;
  QString key;
  ProbeColumn column;
  bool changed = false;
};
/// Opens the checkpoint with the importers (core::ModelSession; a DTRB .pth with its run's
/// opt.txt) and reads each probe. Never throws: a checkpoint that cannot be opened gives the
/// column's `error`, an image that cannot be read that probe's. When the file's size or time is
/// not the job's any more when it has been read (rewritten meanwhile), `changed` is set and the
/// readings are not to be kept.
ProbeColumn readProbeColumn(const ProbeJob& job, bool* changed = nullptr);

/// The import options of a run's checkpoint (DTRB's opt.txt), for the Inspector to open it as the
/// filmstrip did. Empty when it needs none; `error` says why opt.txt could not be read.
core::ImportOptions probeImportOptions(const QString& runDir, const QString& file,
                                       QString* error = nullptr);

}  // namespace foveal::ui
