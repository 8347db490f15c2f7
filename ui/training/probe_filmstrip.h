#pragma once
// The probe filmstrip (issue 72, item 4): for each image of the run's probe set, what every
// checkpoint of the run read in it, side by side along the training steps: the reading (green
// when it is the truth, red when not), its confidence and where the attention lay (CTC: each
// token's posterior over the columns), under a step ruler that places each checkpoint on the
// curves' step axis and the probe set's accuracy. Each row says what the probe did: "first read
// correctly at step N", "still wrong", "regressed at step N". Clicking a cell chooses that
// checkpoint's reading of that image (the page opens it in the Inspector); hovering the curves
// highlights the checkpoint nearest the step under the mouse.
//
// Checkpoints come from the run: another trainer's as core::TrainerRun lists them once complete
// (a half-written file is never listed, so never opened), Foveal's own from history/*.fvm. Each
// new one is read off the window's thread (readProbeColumn) and kept in the run's side folder
// (probe_reader.h), so reopening a run reads nothing again.
#include <QFutureWatcher>
#include <QImage>
#include <QWidget>
#include <deque>
#include <map>
#include <memory>

#include "probe_reader.h"

class QLabel;
class QPushButton;
class QScrollArea;

namespace foveal::core {
class TrainerRun;
}

namespace foveal::ui {

class FilmstripCanvas;

class ProbeFilmstrip : public QWidget {
  Q_OBJECT
 public:
  explicit ProbeFilmstrip(QWidget* parent = nullptr);
  /// Waits for a checkpoint being read.
  ~ProbeFilmstrip() override;

  /// Shows run `runDir` (empty: none): `trainer` for another trainer's run, whose checkpoints it
  /// lists; null for Foveal's own (history/*.fvm). Reads the side folder's probe set and readings.
  void setRun(const QString& runDir, std::shared_ptr<const core::TrainerRun> trainer);
  QString runDir() const { return m_runDir; }
  /// Looks for checkpoints not read yet (the page calls it after each refresh of the run).
  void checkForUpdate();

  /// The run's probe set: saved in its side folder, and read by every checkpoint.
  void setProbes(const std::vector<ProbeImage>& probes);
  const std::vector<ProbeImage>& probes() const { return m_probes; }
  /// Asks for images (the "Choose probes..." button).
  void chooseProbes();

  /// The checkpoints, in step order, with what was read.
  const std::vector<ProbeColumn>& columns() const { return m_columns; }
  /// Readings of probe `probe` kept per column (a column not read yet has none).
  ProbeVerdict verdict(int probe) const;
  std::vector<double> accuracy() const { return probeAccuracy(m_columns, m_probes); }
  /// Every checkpoint version this widget opened (its ProbeColumn::key()), oldest first.
  const QStringList& opened() const { return m_opened; }
  bool isBusy() const { return m_watcher.isRunning(); }
  QString sideFolder() const { return m_side; }
  QString statusText() const;

  /// As a click on the cell does: chooses that checkpoint's reading of that probe.
  void chooseCell(int probe, int column);
  int currentColumn() const { return m_current; }
  /// Highlights the checkpoint nearest `step` (the curves' hover); NaN clears it.
  void setCurrentStep(double step);
  /// The run's latest step: the ruler spans 0 to it, as the curves do.
  void setLastStep(qint64 step);

  /// Cell size in pixels (the screenshots fit 1366x768 with the defaults).
  static constexpr int kCellWidth = 116;
  static constexpr int kCellHeight = 72;

 Q_SIGNALS:
  /// New readings arrived or the probe set changed (the page redraws the probe-accuracy curve).
  void columnsChanged();
  /// A cell was chosen: that checkpoint (still the file read) and that probe, for the Inspector.
  void cellChosen(const QString& checkpointPath, const ProbeImage& probe, qint64 step);
  /// A checkpoint's column was chosen or hovered: its step (the curves mark it).
  void stepChosen(double step);
  void failed(const QString& message);

 private:
  /// The checkpoints the run holds now, complete, in step order.
  std::vector<ProbeColumn> listCheckpoints() const;
  void startNext();
  void onFinished();
  void updateView();
  bool isCurrentFile(const ProbeColumn& c) const;

  QString m_runDir;
  QString m_side;
  std::shared_ptr<const core::TrainerRun> m_trainer;
  std::vector<ProbeImage> m_probes;
  std::vector<ProbeColumn> m_columns;
  std::deque<QString> m_queue;  ///< column keys to read, newest first
  QStringList m_opened;
  QString m_reading;  ///< the key being read
  int m_current = -1;
  int m_probeRow = 0;  ///< the probe chosen last: a click on the ruler reads it there
  qint64 m_lastStep = 0;
  QFutureWatcher<ProbeJobResult> m_watcher;
  QString m_sideError;

  QLabel* m_status;
  QPushButton* m_choose;
  QScrollArea* m_scroll;
  FilmstripCanvas* m_canvas;
  friend class FilmstripCanvas;
};

}  // namespace foveal::ui
