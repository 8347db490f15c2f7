#pragma once
// A character confusion matrix as a heat map: truth characters down, read characters across, the
// last row and column "∅" for insertions and deletions; correct readings green, confusions red,
// each scaled to its own maximum so the diagonal does not wash the confusions out. Clicking a
// cell emits cellClicked (the Errors page filters its rows to the images behind it).
#include <QWidget>

#include "train/error_analysis.h"

namespace foveal::ui {

class ConfusionView : public QWidget {
  Q_OBJECT
 public:
  explicit ConfusionView(QWidget* parent = nullptr);

  /// Shows `matrix` (copied); an empty matrix shows a hint instead.
  void setMatrix(const core::train::ConfusionMatrix& matrix);
  const core::train::ConfusionMatrix& matrix() const { return m_matrix; }
  /// The highlighted cell (-1, -1: none).
  void setSelectedCell(int truth, int read);
  /// The cell under a point of the widget, {-1, -1} outside the grid.
  std::pair<int, int> cellAt(const QPoint& pos) const;
  /// The centre of a cell in widget coordinates.
  QPoint cellCenter(int truth, int read) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 Q_SIGNALS:
  void cellClicked(int truth, int read);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct Grid {
    double cell = 0;
    QPointF origin;  ///< top-left of cell (0, 0)
  };
  Grid grid() const;
  QString label(int i) const;

  core::train::ConfusionMatrix m_matrix;
  int m_selTruth = -1, m_selRead = -1;
};

}  // namespace foveal::ui
