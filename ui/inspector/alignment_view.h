#pragma once
// The alignment matrix: one row per decoding step, one column per region, cells shaded by
// alpha ("row t is the attention at step t"). The current step's row is outlined; clicking a
// row selects that step. A 2-D model's cells are flattened row by row (R x M cells give R*M
// columns): a line marks where each grid row starts and the header names it ("row 0", ...).
// Hovering names the step and the region or cell (row, column) with its alpha.
#include <QWidget>
#include <memory>
#include <vector>

#include "trace/trace.h"

namespace foveal::ui {

class AlignmentView : public QWidget {
  Q_OBJECT
 public:
  explicit AlignmentView(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<const core::Trace> trace);
  void setStep(int step);
  /// Which attention the matrix shows (attention_grid.h isAttentionSource; default the mean).
  void setAttentionSource(const QString& source);
  /// The step whose row contains widget point `p` (-1 outside the matrix).
  int stepAt(const QPoint& p) const;
  /// The steps whose token is written left of their row: every one when the rows are tall
  /// enough, else every k-th and the current step, so that no two labels overlap.
  std::vector<int> labelledSteps() const;
  /// The matrix (cells only) in widget coordinates.
  QRectF matrixRect() const;
  /// The matrix's columns (the trace's regions: R*M for a grid) and the width of one.
  int columnCount() const;
  double columnWidth() const;
  /// A grid's row starts: the x of each grid row's first column (none for a 1-D model).
  std::vector<double> gridRowStarts() const;
  /// The region under widget point `p` (-1 outside the matrix).
  int regionAt(const QPoint& p) const;
  /// What hovering widget point `p` shows (empty outside the matrix).
  QString hoverText(const QPoint& p) const;
  QSize sizeHint() const override { return {360, 200}; }

 Q_SIGNALS:
  void stepClicked(int step);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  int headerHeight() const;

  std::shared_ptr<const core::Trace> m_trace;
  int m_step = 0;
  QString m_source = QString::fromLatin1(core::kAttentionMap);
};

}  // namespace foveal::ui
