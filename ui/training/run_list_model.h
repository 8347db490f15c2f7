#pragma once
// The training runs the page follows: one row per run folder (launched here, or added from disk,
// e.g. synced from a GPU server), with its status, progress, ETA and best evaluation accuracy.
// The name column is checkable: checked runs are overlaid in the plots, each in its own colour.
// Rows read their folder only when refresh() is called (the page polls and coalesces).
// A folder of another trainer (deep-text-recognition-benchmark, strhub, MMOCR, PaddleOCR...;
// core/run/trainer_logs.h) is a row too: its trainer's logs are read by core::TrainerRun, its
// status is Running while they grow and Stale once they stop (such a trainer writes no end).
#include <QAbstractTableModel>
#include <QColor>
#include <QDateTime>
#include <QStringList>
#include <memory>
#include <vector>

#include "run/run_log.h"
#include "run/trainer_logs.h"

namespace foveal::ui {

class RunListModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Status, Progress, Eta, Best, Where, ColumnCount };
  enum Role { DirRole = Qt::UserRole + 1, StatusRole, DetailRole, ColourRole };

  explicit RunListModel(QObject* parent = nullptr);

  /// Adds a run folder (it need not exist yet) and reads it. Returns its row; a folder already
  /// listed keeps its row.
  int addRun(const QString& dir);
  void removeRun(int row);
  int rowOf(const QString& dir) const;
  QString dir(int row) const;
  QString name(int row) const;
  QColor colour(int row) const;
  bool isShown(int row) const;
  std::shared_ptr<const core::RunLog> log(int row) const;
  core::RunStatusInfo status(int row) const;
  QStringList dirs() const;
  /// Another trainer's run: its logs and checkpoints as read so far (null for Foveal's runs).
  std::shared_ptr<const core::TrainerRun> trainer(int row) const;
  /// True when the row is another trainer's run whose logs were recognised.
  bool isForeign(int row) const;
  /// The latest step another trainer's run logged (-1 none).
  static qint64 latestStep(const core::TrainerRun& run);
  /// Its best validation accuracy as a fraction (core::catalogueValue); NaN without one.
  static double bestAccuracy(const core::TrainerRun& run);

  /// What the launcher knows about the process writing `dir`.
  void setProcess(const QString& dir, const core::ProcessFacts& facts);
  /// A run on another machine: its job's state as its follower reports it (Where column).
  void setJobState(const QString& dir, const QString& state);
  /// Runs whose status is older than this many seconds without a final record are stale.
  void setStaleAfter(double seconds) { m_staleAfter = seconds; }
  /// Seconds another trainer's checkpoint must keep its size before it counts as complete
  /// (core::TrainerRun::setSettleSeconds; negative: TrainerRun's default).
  void setTrainerSettleSeconds(double seconds);

  /// Reads what was appended to every folder. Returns the rows whose records changed (their
  /// status, progress and ETA cells are updated either way).
  std::vector<int> refresh();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

  /// Seconds left: the iterations left at the recent training rate (evaluation pauses left
  /// out of it) plus the evaluations still due at their measured duration. NaN when unknown.
  static double estimateEta(const core::RunLog& log);
  static QString formatEta(double seconds);

 Q_SIGNALS:
  /// The set of overlaid runs changed (a box ticked, a run added or removed).
  void shownChanged();

 private:
  struct Entry {
    QString dir;
    std::shared_ptr<core::RunLog> log;
    core::ProcessFacts process;
    core::RunStatusInfo status;
    QColor colour;
    bool shown = true;
    QString target;  ///< where it trains (remote.json), "" on this machine
    QString jobId;
    QString jobState;  ///< the follower's last "job N: state" line
    /// Another trainer's folder (no config.json, metrics.jsonl nor Foveal remote run).
    std::shared_ptr<core::TrainerRun> trainer;
    QDateTime trainerChanged;  ///< when its logs or checkpoints last changed
  };
  /// Makes or drops the row's TrainerRun as the folder's content says; true when it read more.
  bool refreshTrainer(Entry& e);
  /// The row's tooltip: its folder, status, settings, trainer and what was skipped reading it.
  QString toolTipOf(const Entry& e) const;
  /// data() of a column's cell, for the roles that depend on the column.
  QVariant columnData(const Entry& e, int column, int role) const;
  void readTarget(Entry& e) const;
  bool updateStatus(Entry& e);
  QColor nextColour() const;

  std::vector<Entry> m_entries;
  double m_staleAfter = 600;
  double m_settleSeconds = -1;
};

}  // namespace foveal::ui
