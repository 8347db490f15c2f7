#pragma once
// The main window: a composition root that builds the inspector view, the step controls and the
// step details panel, and wires them. Tracing runs off the GUI thread.
#include <QFutureWatcher>
#include <QMainWindow>
#include <memory>

#include "grey_image.h"
#include "trace.h"

class QLabel;
class QListWidget;
class QSlider;
class QToolButton;

namespace foveal::core {
class ModelSession;
}

namespace foveal::ui {

class TraceView;

struct TraceResult {
  std::shared_ptr<const core::Trace> trace;
  QString error;
};

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Both return false and show the error in the window when the file cannot be used.
  bool openImage(const QString& path);
  bool openModel(const QString& path);

  int step() const { return m_step; }
  int stepCount() const;
  bool isTracing() const;
  QString errorText() const;
  std::shared_ptr<const core::Trace> trace() const { return m_trace; }
  TraceView* traceView() const { return m_view; }

 public Q_SLOTS:
  void setStep(int step);
  void nextStep() { setStep(m_step + 1); }
  void previousStep() { setStep(m_step - 1); }
  void firstStep() { setStep(0); }
  void lastStep() { setStep(stepCount() - 1); }

 Q_SIGNALS:
  void stepChanged(int step);
  void traceReady();

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildActions();
  void buildLayout();
  void startTrace();
  void onTraceFinished();
  void showError(const QString& message);
  void clearError();
  void updateDetails();

  std::shared_ptr<core::ModelSession> m_session;
  core::GreyImage m_image;
  QString m_imagePath;
  std::shared_ptr<const core::Trace> m_trace;
  int m_step = 0;
  bool m_retrace = false;

  QFutureWatcher<TraceResult> m_watcher;
  TraceView* m_view = nullptr;
  QSlider* m_slider = nullptr;
  QLabel* m_stepLabel = nullptr;
  QLabel* m_error = nullptr;
  QLabel* m_summary = nullptr;
  QLabel* m_stepInfo = nullptr;
  QLabel* m_patch = nullptr;
  QListWidget* m_topk = nullptr;
};

}  // namespace foveal::ui
