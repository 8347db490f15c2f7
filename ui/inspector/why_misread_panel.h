#pragma once
// The "why misread" panel (core/trace/ctc_alignment.h in the GUI): for a CTC model and a known
// truth, the line read again with the truth force-aligned over the same frames (off the GUI
// thread), a summary of what was read where each true character is, the WhyMisreadView picture
// (both sets of boxes, both paths, the posteriorgram) and, for the character clicked in either
// band, its attribution with the existing methods (ExplainRunner; a true character is explained
// at its forced frames through core::alignedTrace), drawn as heat over the line with the share
// of its mass inside the character's true and read boxes.
#include <QFutureWatcher>
#include <QImage>
#include <QWidget>
#include <memory>

#include "image/grey_image.h"
#include "trace/attribution.h"
#include "trace/model_session.h"
#include "trace/trace.h"
#include "why_misread_view.h"

class QComboBox;
class QLabel;
class QProgressBar;

namespace foveal::ui {

class ExplainRunner;
struct ExplainResult;

struct WhyMisreadOutcome {
  std::shared_ptr<const core::Trace> trace;    ///< null on error
  std::shared_ptr<const core::Trace> aligned;  ///< the truth's characters as steps (or null)
  QString error;
};

class WhyMisreadPanel : public QWidget {
  Q_OBJECT
 public:
  explicit WhyMisreadPanel(QWidget* parent = nullptr);
  ~WhyMisreadPanel() override;

  /// Reads `image` again with `session` (as `options` say, the truth added) and aligns `truth`;
  /// ready() or failed() follows. `display` is the image as shown. A newer call supersedes one
  /// still running.
  void setReading(std::shared_ptr<core::ModelSession> session, const core::GreyImage& image,
                  const QImage& display, const QString& source, const QString& truth,
                  core::TraceOptions options = {});
  bool isBusy() const { return m_busy; }
  std::shared_ptr<const core::Trace> trace() const { return m_trace; }
  /// The trace whose steps are the truth's characters (null without an alignment).
  std::shared_ptr<const core::Trace> alignedTrace() const { return m_aligned; }
  const QString& truth() const { return m_truth; }
  WhyMisreadView* view() const { return m_view; }
  QComboBox* methodBox() const { return m_method; }
  ExplainRunner* explainRunner() const { return m_explainer; }
  /// The summary above the picture (rich text) and the selected character's attribution line.
  QString summaryText() const;
  QString attributionText() const;
  /// Selects character `index` of `row` and computes its attribution.
  void explainCharacter(WhyMisreadView::Row row, int index);

 Q_SIGNALS:
  void ready();
  void failed(const QString& message);
  /// The selected character's attribution arrived (attributionText() says it).
  void explained();

 private:
  void onRead();
  void onExplained(const ExplainResult& result);
  void showSummary();

  std::shared_ptr<core::ModelSession> m_session;
  core::GreyImage m_image;
  QImage m_display;
  QString m_truth;
  quint64 m_generation = 0;
  bool m_busy = false;
  QFutureWatcher<WhyMisreadOutcome>* m_watcher;
  std::shared_ptr<const core::Trace> m_trace, m_aligned;
  QString m_error;
  QLabel* m_summary;
  QComboBox* m_method;
  QLabel* m_attribution;
  QProgressBar* m_progress;
  WhyMisreadView* m_view;
  ExplainRunner* m_explainer;
};

}  // namespace foveal::ui
