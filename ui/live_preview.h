#pragma once
// A small live view of a run's latest checkpoint reading a fixed sample image: whenever
// latest.fvm changes, the checkpoint is loaded and traced off the GUI thread (QtConcurrent, as
// TraceRunner does) and shown with its attention and patches, so attention can be watched
// sharpening as training goes. The sample is entry 0 of the run's first evaluation set. Every
// checkpoint read while the run is followed is kept: a slider scrubs back through them to watch
// the attention form (the newest is shown as it arrives unless the slider was moved back).
#include <QDateTime>
#include <QFutureWatcher>
#include <QImage>
#include <QWidget>
#include <memory>

#include "trace.h"

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
  QString runDir;  ///< the run it belongs to (a reply for a run no longer shown is dropped)
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
  /// The checkpoints read since the run was chosen, oldest first; the one shown.
  int historySize() const { return static_cast<int>(m_history.size()); }
  int historyIndex() const;
  /// Shows the `index`th checkpoint read (the slider does this).
  void showHistory(int index);
  QSlider* historySlider() const { return m_slider; }
  TraceView* traceView() const { return m_view; }
  PatchStrip* patchStrip() const { return m_strip; }

 Q_SIGNALS:
  void updated();

 private:
  void start();
  void onFinished();
  QString idleText() const;
  struct Shot {
    QDateTime modified;
    PreviewResult result;
  };
  void showShot(const Shot& shot);

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
};

}  // namespace foveal::ui
