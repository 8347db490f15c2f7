#pragma once
// The source image, large, with the current step's overlays: the attention as a heat strip under
// the image (per column; a grid's column marginal) and as a heat map over it, the selected
// region's box (named as a cell (row, column) for a 2-D model), each STN's quadrilateral
// (coarse and fine in different colours) and the tokens read so far. The fit leaves room for every
// region box and STN quad of the trace (they reach past the image's edges), and the tokens are
// laid out side by side under their regions so that none hides another.
#include <QImage>
#include <QTransform>
#include <QWidget>
#include <memory>
#include <vector>

#include "trace/trace.h"

namespace foveal::ui {

class TraceView : public QWidget {
  Q_OBJECT
 public:
  /// HeatStrip: one cell per feature column under the image; for a 2-D model the column marginal
  /// (alpha summed over the grid's rows), so the strip reads like a 1-D model's.
  /// HeatImage: the heat map, alpha on the grid at the cells' centres, bilinear between them,
  /// colour-mapped and blended over the image (attention_grid.h, heatMapImage); the same code for
  /// 1-D models (one row) and 2-D ones.
  /// Fiducials: a TPS model's fiducial points on the source (top edge, bottom edge). RegionBox
  /// also marks a CTC step's emitting columns. Focus: the step's focus point and character box
  /// (core/trace/localisation.h); green when the focus lies in its character's true box, red when it
  /// misses. TruthBoxes: the true box of every character (when the data knows them), the current
  /// step's character bold.
  enum Overlay {
    HeatStrip = 1,
    RegionBox = 2,
    StnQuads = 4,
    Tokens = 8,
    HeatImage = 16,
    Fiducials = 32,
    Focus = 64,
    TruthBoxes = 128,
    DefaultOverlays = 47 | Focus | TruthBoxes,
    AllOverlays = 255
  };
  Q_DECLARE_FLAGS(Overlays, Overlay)

  explicit TraceView(QWidget* parent = nullptr);

  void setOverlays(Overlays overlays);
  Overlays overlays() const { return m_overlays; }
  void setOverlay(Overlay overlay, bool on);
  /// Zoom factor on top of fit-to-window (1 = fit); `anchor` (widget coordinates) stays put.
  void setZoom(double zoom, const QPointF& anchor);
  double zoom() const { return m_zoom; }
  void resetView();

  /// The image as shown (in colour when the file has colour; the model reads it grey).
  void setImage(const QImage& image);
  const QImage& image() const { return m_image; }
  /// The dotted frame that shows the keyboard focus (off while exporting a figure).
  void setFocusFrame(bool on) {
    m_focusFrame = on;
    update();
  }
  void setTrace(std::shared_ptr<const core::Trace> trace);
  std::shared_ptr<const core::Trace> trace() const { return m_trace; }
  /// Each character's true box in source pixels (empty: unknown). Kept across traces of the
  /// same image; setImage() clears them.
  void setTruthBoxes(std::vector<core::Box> boxes);
  const std::vector<core::Box>& truthBoxes() const { return m_truthBoxes; }
  /// Per step of the trace: 1 focus on its character, 0 a miss, -1 no true box for it.
  std::vector<int> stepHits() const;
  void setStep(int step);
  int step() const { return m_step; }

  /// Maps source-image pixels to widget coordinates (and back with inverted()).
  QTransform imageToWidget() const;
  /// Height reserved under the image for the heat strip and the tokens.
  static constexpr int kStripHeight = 18;
  static constexpr int kTokenHeight = 26;

  QSize sizeHint() const override { return {720, 260}; }

  /// Where the tokens read so far (steps 0 .. step()) are drawn, in step order.
  std::vector<QRectF> tokenRects() const;
  /// The feature column under a widget position on the heat strip, or -1.
  int stripColumnAt(const QPointF& pos) const;
  /// The region whose cell centre is nearest a widget position on the image, or -1.
  int regionAtImagePoint(const QPointF& pos) const;
  /// What hovering shows at a widget position: the strip's column (with a grid's marginal, a CTC
  /// model's top-k), or on the image the nearest cell (row, column) or region and its alpha.
  QString hoverText(const QPointF& pos) const;
  /// The heat map drawn for the current step (HeatImage), in its own pixels over the image.
  QImage heatMap() const;
  /// What the fit keeps in view, in source-image pixels: the image, and with a trace every
  /// selected region and STN quad.
  QRectF contentRect() const;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;
  void focusInEvent(QFocusEvent* event) override;
  void focusOutEvent(QFocusEvent* event) override;

 private:
  QTransform fitTransform() const;
  QFont tokenFont(double factor) const;
  struct TokenLabel {
    int step;
    QString text;
    QRectF rect;
    QFont font;
  };
  std::vector<TokenLabel> layoutTokens() const;
  Overlays m_overlays = DefaultOverlays;
  double m_zoom = 1.0;
  QPointF m_pan;
  QPointF m_dragStart;
  bool m_dragging = false;
  bool m_focusFrame = true;

  QImage m_image;
  std::shared_ptr<const core::Trace> m_trace;
  std::vector<core::Box> m_truthBoxes;
  int m_step = 0;
  // The current step's heat map, made when first drawn after the trace or the step changed.
  mutable QImage m_heatMap;
  mutable int m_heatStep = -1;
};

Q_DECLARE_OPERATORS_FOR_FLAGS(TraceView::Overlays)

/// Attention is drawn relative to max(largest weight, kHeatFloor): a peaked distribution fills
/// the colour range, a near-uniform one stays dark instead of looking like certainty everywhere.
constexpr double kHeatFloor = 0.25;

/// Colour of an attention weight (0 -> dark blue, 1 -> yellow), a perceptual ramp.
QColor heatColour(double value);

}  // namespace foveal::ui
