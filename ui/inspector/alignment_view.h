#pragma once
// The alignment matrix: one row per decoding step, one column per region, cells shaded by
// alpha ("row t is the attention at step t"). The current step's row is outlined; clicking a
// row selects that step.
#include <QWidget>
#include <memory>
#include <vector>

#include "trace.h"

namespace foveal::ui {

class AlignmentView : public QWidget {
  Q_OBJECT
 public:
  explicit AlignmentView(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<const core::Trace> trace);
  void setStep(int step);
  /// The step whose row contains widget point `p` (-1 outside the matrix).
  int stepAt(const QPoint& p) const;
  /// The steps whose token is written left of their row: every one when the rows are tall
  /// enough, else every k-th and the current step, so that no two labels overlap.
  std::vector<int> labelledSteps() const;
  QSize sizeHint() const override { return {360, 200}; }

 Q_SIGNALS:
  void stepClicked(int step);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  QRectF matrixRect() const;

  std::shared_ptr<const core::Trace> m_trace;
  int m_step = 0;
};

}  // namespace foveal::ui
