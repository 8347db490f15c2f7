#pragma once
// Attention over a grid of cells (2-D attention, docs/DESIGN.md "Two-dimensional attention") and
// over one row of columns (every 1-D model, the grid's case of one row), for the views that draw
// it: the layout of a trace's regions, where each cell's centre lies in the source image, the heat
// map over the image, and the per-step grid widget shown beside the bar chart.
#include <QComboBox>
#include <QImage>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QWidget>
#include <memory>
#include <utility>
#include <vector>

#include "trace/trace.h"

namespace foveal::ui {

/// A trace's regions as rows x columns: a 2-D model's gridRows x gridColumns cells (row by row),
/// or one row of all the regions (1-D models, and traces that do not state a grid).
struct GridShape {
  int rows = 1, columns = 0;
  bool isGrid() const { return rows > 1; }
  int count() const { return rows * columns; }
  /// Region i as (row, column).
  std::pair<int, int> cell(int region) const {
    return columns > 0 ? std::pair<int, int>{region / columns, region % columns}
                       : std::pair<int, int>{0, region};
  }
};
GridShape gridShape(const core::Trace& trace);

/// A row of columns whose receptive fields are each at least as wide as the image (a ResNet's):
/// a region says nothing of where a step looks, so the views show each step's focus box (the
/// trace builder puts it in the step's box, and its crop in the step's patch).
bool fieldsSpanTheImage(const core::Trace& trace);

/// How the views name region i: "region 7" for a 1-D model, "cell (2, 10)" (row, column) for a
/// grid.
QString regionName(const core::Trace& trace, int region);

/// Where the cells' centres lie in source-image pixels: the receptive fields' centres the trace
/// carries (core::Trace::regionCentres; the clipped boxes cannot say where a row is, since each
/// vgg2d cell's receptive field is taller than the image). A trace without them (made by hand):
/// the columns' box centres (boxes are clipped only vertically, so their x is exact) and rows
/// evenly spaced over the image's height, (r + 0.5) * imageH / rows.
std::vector<double> columnCentres(const core::Trace& trace);
std::vector<double> rowCentres(const core::Trace& trace);
QPointF cellCentre(const core::Trace& trace, int region);

/// Per column, the sum of `alpha` over the rows (the column marginal); 1-D: alpha itself.
std::vector<double> columnMarginal(const core::Trace& trace, const std::vector<double>& alpha);

/// The heat map of `alpha` over the source image, `size` pixels covering (0, 0, imageW, imageH):
/// alpha laid out on the grid at the cells' centres, bilinear between neighbouring centres
/// (constant beyond the outermost ones), each weight relative to max(largest, kHeatFloor),
/// coloured by heatColour and translucent where the weight is low (premultiplied ARGB, to be
/// drawn over the image). Null when the trace has no regions or alpha does not cover them.
QImage heatMapImage(const core::Trace& trace, const std::vector<double>& alpha, QSize size);
/// A pixel map (an explanation: width x height values over the source image) as a heat map: its
/// positive part relative to the 99th percentile of its positive values (clamped), coloured and
/// translucent as heatMapImage. Null when the values do not fill the size.
QImage pixelHeatImage(const std::vector<double>& values, int width, int height);
/// Per source-pixel column, the positive mass of a pixel map (the heat strip of an explanation).
std::vector<double> pixelColumnProfile(const std::vector<double>& values, int width, int height);
/// The map's size for a trace: the source image's, at most `longSide` pixels on its longer side
/// (drawn scaled smoothly).
QSize heatMapSize(const core::Trace& trace, int longSide = 640);

/// Which attention a view shows, for models with several (PARSeq's cross-attention per head and
/// of its first pass; core/trace/trace.h kAttentionHeadPrefix): a "heat source" that names an
/// attention map over the regions, not a pixel map (an explanation).
bool isAttentionSource(const QString& source);
/// The attention values `source` names at `step`: that map's where the trace has it with values at
/// the step (a first pass may not have run every step), else the trace's (mean) attention.
const std::vector<double>& shownAttention(const core::Trace& trace, const QString& source,
                                          size_t step);
/// The attention maps a trace offers beyond the mean, as (map name, menu label): each head, then
/// the first pass. Empty for a model with one attention.
std::vector<std::pair<QString, QString>> extraAttentionSources(const core::Trace& trace);
/// Puts `trace`'s extra attention sources into a map menu right after its first entry (the
/// mean attention), replacing those of the last trace, and keeps the chosen entry where it still
/// exists (else the mean). Each item's data is the map's name.
void offerAttentionSources(QComboBox* menu, const core::Trace* trace);

/// The current step's alpha as a rows x columns grid of square cells (a 2-D model; a 1-D model
/// shows one row), coloured like the heat map; the selected cell outlined. Hovering a cell names
/// its row, column and alpha.
class AttentionGridView : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionGridView(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<const core::Trace> trace);
  void setStep(int step);
  /// Which attention the cells show (isAttentionSource; default the mean, core::kAttentionMap).
  void setAttentionSource(const QString& source);
  GridShape shape() const;
  /// Cell (row, column)'s square in widget coordinates (empty without a trace).
  QRectF cellRect(int row, int column) const;
  /// The region under widget point `p`, or -1.
  int regionAt(const QPointF& p) const;
  /// The colour cell `region` is filled with at the current step.
  QColor cellColour(int region) const;
  /// The hover text of cell `region` at the current step.
  QString cellText(int region) const;
  QSize sizeHint() const override { return {420, 140}; }
  QSize minimumSizeHint() const override { return {160, 60}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  QRectF gridRect() const;
  const core::TraceStep* currentStep() const;
  /// The current step's attention map (empty without a step).
  const std::vector<double>& currentAttention() const;

  std::shared_ptr<const core::Trace> m_trace;
  int m_step = 0;
  QString m_source = QString::fromLatin1(core::kAttentionMap);
};

}  // namespace foveal::ui
