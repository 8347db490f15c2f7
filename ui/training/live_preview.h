#pragma once
// A small live view of a run's latest checkpoint reading a fixed sample image: whenever
// latest.fvm changes, the checkpoint is loaded and traced off the GUI thread (QtConcurrent, as
// TraceRunner does) and shown with its attention and patches, so attention can be watched
// sharpening as training goes. The sample is entry 0 of the run's first evaluation set.
// A slider scrubs through the run's checkpoints to watch the attention form: the trainer's
// history (history/iter-N.fvm, run_folder.h), oldest first, each traced when first shown, then
// every latest.fvm read while following the run that is newer than the history's last file (a
// run from before the history has only those). The newest is shown as it arrives unless the
// slider was moved back.
#include <QDateTime>
#include <QFutureWatcher>
#include <QImage>
#include <QWidget>
#include <memory>

#include "trace/trace.h"

class QLabel;
class QSlider;

namespace foveal::ui {

class PatchStrip;
class TraceView;

struct PreviewResult {
  std::shared_ptr<const core::Trace> trace;
  QImage image;
  QString truth;
  qint64 iteration = -1;  ///< from the checkpoint's file time; -1 unknown
  QString error;
  QString runDir;     ///< the run it belongs to (a reply for a run no longer shown is dropped)
  QString modelPath;  ///< the checkpoint traced
};

class LivePreview : public QWidget {
  Q_OBJECT
 public:
  explicit LivePreview(QWidget* parent = nullptr);
  ~LivePreview() override;

  /// Follows `runDir` (empty: none). `sampleSpec` names the dataset whose entry 0 is read.
  /// `expectCheckpoint` false: the run is over and wrote no latest.fvm (a folder of logs only),
  /// so the preview says there is nothing to show instead of waiting for one.
  void setRun(const QString& runDir, const QString& sampleSpec, bool expectCheckpoint = true);
  /// Checks latest.fvm and traces it when it changed (call it when the folder changes).
  void checkForUpdate();
  bool isBusy() const { return m_watcher.isRunning(); }
  int tracesDone() const { return m_done; }
  std::shared_ptr<const core::Trace> trace() const { return m_trace; }
  QString statusText() const;
  /// The checkpoints the slider offers (the history's files, then the newer latest.fvm reads),
  /// oldest first; the one shown.
  int historySize() const { return static_cast<int>(m_entries.size()); }
  int historyIndex() const;
  /// The slider's names of its checkpoints ("iteration 2000", "latest.fvm 12:01:02").
  QStringList historyLabels() const;
  /// Shows the `index`th checkpoint (the slider does this); one not traced yet is traced first.
  void showHistory(int index);
  QSlider* historySlider() const { return m_slider; }
  TraceView* traceView() const { return m_view; }
  PatchStrip* patchStrip() const { return m_strip; }

 Q_SIGNALS:
  void updated();

 private:
  void start(const QString& modelPath);
  void startNext();
  void onFinished();
  QString idleText() const;
  QString latestPath() const;
  struct Shot {
    QDateTime modified;
    PreviewResult result;
  };
  struct HistoryFile {
    QString path;
    qint64 iteration = 0;
    QDateTime modified;
    qint64 size = 0;
    std::shared_ptr<const PreviewResult> result;  ///< null until traced
  };
  struct Entry {
    int file = -1;  ///< index into m_files, or
    int shot = -1;  ///< index into m_history
  };
  /// Reads the history folder again (keeping what was traced of unchanged files).
  bool scanHistory();
  /// The slider's entries from m_files and m_history; follows the newest when at the end.
  void rebuildEntries();
  void showEntry(int index);
  void showResult(const PreviewResult& r, const QString& which);

  QString m_runDir;
  QString m_sampleSpec;
  bool m_expectCheckpoint = true;
  QDateTime m_lastModified;
  qint64 m_lastSize = -1;
  bool m_pending = false;
  int m_done = 0;
  std::shared_ptr<const core::Trace> m_trace;
  QFutureWatcher<PreviewResult> m_watcher;
  QLabel* m_title;
  TraceView* m_view;
  PatchStrip* m_strip;
  QSlider* m_slider;
  std::vector<Shot> m_history;
  std::vector<HistoryFile> m_files;
  std::vector<Entry> m_entries;
  QString m_wanted;  ///< a history file to trace (the slider is on it)
};

}  // namespace foveal::ui
