#pragma once
// Bar chart of alpha_t over the receptive fields for the current step (QCustomPlot); the
// selected region's bar is highlighted. Clicking a bar does nothing: the step is the selection.
#include <QWidget>
#include <memory>

#include "trace/trace.h"

class QCustomPlot;
class QCPBars;

namespace foveal::ui {

class AttentionPlot : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionPlot(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<const core::Trace> trace);
  void setStep(int step);
  /// Which attention the bars show (attention_grid.h isAttentionSource; default the mean).
  void setAttentionSource(const QString& source);
  QCustomPlot* plot() const { return m_plot; }
  /// Values currently drawn (for tests).
  std::vector<double> values() const;

 private:
  void refresh();

  QCustomPlot* m_plot;
  QCPBars* m_bars;
  QCPBars* m_selected;
  std::shared_ptr<const core::Trace> m_trace;
  int m_step = 0;
  QString m_source = QString::fromLatin1(core::kAttentionMap);
};

}  // namespace foveal::ui
