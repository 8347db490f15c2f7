#pragma once
// A small live view of a run's latest checkpoint reading a fixed sample image: whenever
// latest.fvm changes, the checkpoint is loaded and traced off the GUI thread (QtConcurrent, as
// TraceRunner does) and shown with its attention and patches, so attention can be watched
// sharpening as training goes. The sample is entry 0 of the run's first evaluation set.
#include <QDateTime>
#include <QFutureWatcher>
#include <QImage>
#include <QWidget>
#include <memory>

#include "trace.h"

class QLabel;

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
  TraceView* traceView() const { return m_view; }
  PatchStrip* patchStrip() const { return m_strip; }

 Q_SIGNALS:
  void updated();

 private:
  void start();
  void onFinished();
  QString idleText() const;

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
};

}  // namespace foveal::ui
