#pragma once
// Why a CTC line was misread, drawn in one picture (the "why misread" dialog's body): the line
// image with both sets of character boxes on it (the read characters' from the shown path, the
// true characters' from the forced alignment of the truth, core/trace/ctc_alignment.h), a band
// above it naming what was read where and one below naming where each true character is, the
// shown (greedy) path beside the forced path frame by frame, and the posteriorgram: the top
// characters' probability at every frame (the truth's characters, the blank and the most probable
// others), its columns under the image where the frames lie. A true character misread is red in
// its band; a frame where the two paths differ is marked. Clicking a character in either band
// selects it (its attribution, computed by the panel, is drawn as heat over the image).
#include <QImage>
#include <QWidget>
#include <memory>
#include <vector>

#include "trace/trace.h"

class QPainter;

namespace foveal::ui {

class WhyMisreadView : public QWidget {
  Q_OBJECT
 public:
  /// The two rows of characters: what was read (the trace's steps) and the truth (the
  /// alignment's characters).
  enum class Row { Read, Truth };

  explicit WhyMisreadView(QWidget* parent = nullptr);

  /// The trace (with its alignment) and the line image it read, as shown.
  void setReading(std::shared_ptr<const core::Trace> trace, const QImage& image);
  std::shared_ptr<const core::Trace> trace() const { return m_trace; }
  /// The selected character (-1: none) and a heat map over the image for it (width x height
  /// values of the image, row by row; empty: none).
  void setSelection(Row row, int index);
  void setHeat(const std::vector<double>& map);
  Row selectedRow() const { return m_row; }
  int selectedIndex() const { return m_index; }

  /// Geometry, in widget coordinates, for tests and tool tips.
  QRectF imageRect() const;
  /// Where a source-image box is drawn.
  QRectF toWidget(const core::Box& box) const;
  /// Character `index` of `row`: its box on the image, and its label's cell in its band.
  QRectF boxRect(Row row, int index) const;
  QRectF labelRect(Row row, int index) const;
  /// The character of `row` whose band label contains `p` (-1: none).
  int characterAt(Row row, const QPointF& p) const;
  /// The frames' number, each frame's column in the path rows and the posteriorgram.
  int frameCount() const;
  QRectF frameColumn(int frame) const;
  /// The posteriorgram's rows: the text each row names ("" for the blank) in drawing order.
  const std::vector<QString>& posteriorRows() const { return m_rowTokens; }
  /// The probability drawn at (row, frame); NaN where the trace does not know it (a class
  /// outside that frame's top-k).
  double posteriorAt(int row, int frame) const;
  /// What the path rows write at `frame` ("·" for a blank).
  QString shownAt(int frame) const;
  QString forcedAt(int frame) const;
  QString hoverText(const QPointF& p) const;

  QSize sizeHint() const override { return {900, 520}; }
  QSize minimumSizeHint() const override { return {480, 360}; }

 Q_SIGNALS:
  void characterClicked(foveal::ui::WhyMisreadView::Row row, int index);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Layout {
    double left = 0, width = 0;  // the image's and the frames' horizontal extent
    double scale = 1;            // widget pixels per image pixel
    double readBand = 0, image = 0, truthBand = 0, shownRow = 0, forcedRow = 0, posterior = 0;
    double bandH = 0, imageH = 0, rowH = 0, cellH = 0;
  };
  void relayout();
  void buildPosterior();
  /// The paint event's pieces, in drawing order: the line image with its heat and the rows'
  /// names, both sets of boxes on it, a band of labels (`n` characters of `row`), the two paths
  /// frame by frame, the posteriorgram with its caption, frame and legend, and the forced path's
  /// dots over it.
  void paintLine(QPainter& p) const;
  void paintBoxes(QPainter& p) const;
  void paintBand(QPainter& p, Row row, int n) const;
  void paintPaths(QPainter& p) const;
  void paintPosteriorgram(QPainter& p) const;
  void paintForcedPathDots(QPainter& p) const;
  double frameCentre(int frame) const;  ///< in image pixels

  std::shared_ptr<const core::Trace> m_trace;
  QImage m_image;
  QImage m_heat;  ///< the selection's map, colour-mapped, image-sized
  Layout m_l;
  Row m_row = Row::Truth;
  int m_index = -1;
  std::vector<QString> m_rowTokens;
  std::vector<std::vector<double>> m_rowProbs;  ///< [row][frame], NaN unknown
};

}  // namespace foveal::ui
