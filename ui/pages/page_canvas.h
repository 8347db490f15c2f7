#pragma once
// The page itself with its layout drawn over it: the regions' outlines, every line's boundary
// polygon and baseline, each line tinted on the confidence scale once read (flagged lines red)
// with its reading written over it, and the current line's character cuts on the page. Zoom
// with the wheel, pan by dragging, double-click the paper to fit. A click chooses a line;
// Up/Down (Home/End) step through the lines in reading order; Enter or a double-click on a line
// asks to open it in the Inspector. It draws a PageLineModel and follows (and sets) the current
// row of the selection model it shares with the line table.
#include <QImage>
#include <QPointF>
#include <QPolygonF>
#include <QWidget>
#include <memory>
#include <vector>

#include "formats/page_layout.h"

class QItemSelectionModel;
class QPainter;

namespace foveal::ui {

class PageLineModel;

class PageCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit PageCanvas(QWidget* parent = nullptr);

  void setLines(PageLineModel* model, QItemSelectionModel* selection);
  /// The page image and its layout (the model's layout); fits the page.
  void setPage(const QImage& image, std::shared_ptr<const core::PageLayout> layout);
  /// The readings written over the lines (off: the ink shows through the tint).
  void setReadingsShown(bool on);
  bool readingsShown() const { return m_readingsShown; }
  /// What the empty canvas says.
  void setPlaceholder(const QString& text);

  /// The lines the last paint drew (a polygon, a box or a baseline each).
  int drawnLineCount() const { return m_drawnLines; }
  /// The line under `pos` (widget pixels): the smallest polygon holding it, or a baseline near
  /// it; -1 for none.
  int lineAt(const QPointF& pos) const;
  /// A point inside line `line` in widget pixels (for tests and for scrolling to it).
  QPointF lineCentre(int line) const;
  /// Page pixels to widget pixels and back.
  QPointF toWidget(const QPointF& page) const;
  QPointF toPage(const QPointF& widget) const;
  void fitPage();
  double scale() const { return m_scale; }

  QSize sizeHint() const override { return {640, 560}; }
  QSize minimumSizeHint() const override { return {240, 200}; }

 Q_SIGNALS:
  /// The user clicked line `line` (it is the current row by now).
  void lineClicked(int line);
  /// Enter, or a double-click on a line: open it in the Inspector.
  void lineActivated(int line);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  struct LineShape {
    QPolygonF outline;   ///< page pixels: the boundary, or the box; empty when it has neither
    QPolygonF baseline;  ///< page pixels, may be empty
    QRectF bounds;       ///< of both
  };
  int currentLine() const;
  void setCurrentLine(int line);
  /// Scrolls so that line `line` is in view (when zoomed in).
  void ensureVisible(int line);
  /// The paint event's pieces, in drawing order: the page scaled down (smoothly, cached in
  /// m_scaled), then in page pixels the regions and the lines' outlines and baselines and the
  /// current line's character cuts, then in widget pixels the readings over the lines, the
  /// current line's label and the legend.
  void paintScaledImage(QPainter& p);
  void paintLayout(QPainter& p, int current, double threshold) const;
  void paintCurrentCuts(QPainter& p, int current, double threshold) const;
  void paintReadings(QPainter& p, int current) const;
  void paintCurrentLabel(QPainter& p, int current) const;
  void paintLegend(QPainter& p) const;

  PageLineModel* m_model = nullptr;
  QItemSelectionModel* m_selection = nullptr;
  QImage m_image;
  /// m_image scaled to m_scaledFor, smoothly, for the scales under 1: a 17-megapixel scan is
  /// not resampled on every paint.
  QImage m_scaled;
  double m_scaledFor = 0;
  std::shared_ptr<const core::PageLayout> m_layout;
  std::vector<LineShape> m_lines;
  std::vector<QPolygonF> m_regions;
  QString m_placeholder;
  bool m_readingsShown = true;
  bool m_fit = true;  ///< the page follows the widget's size until zoomed or panned
  double m_scale = 1;
  QPointF m_offset;
  QPointF m_pressAt;
  QPointF m_offsetAtPress;
  bool m_dragging = false;
  mutable int m_drawnLines = 0;
};

}  // namespace foveal::ui
