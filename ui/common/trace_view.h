#pragma once
// The source image, large, with the current step's overlays: the named painters of
// overlay_painter.h (the attention as a heat strip under the image and as a heat map over it, the
// region the step used, STN quads, TPS fiducials, localisation, the tokens read so far), each
// drawn when its toggle is on. The fit leaves room for every region box and STN quad of the trace
// (they reach past the image's edges), and the tokens are laid out side by side under their
// regions so that none hides another.
#include <QImage>
#include <QSet>
#include <QStringList>
#include <QTransform>
#include <QWidget>
#include <algorithm>
#include <memory>
#include <vector>

#include "trace/trace.h"

namespace foveal::ui {

class TraceView : public QWidget {
  Q_OBJECT
 public:
  explicit TraceView(QWidget* parent = nullptr);

  /// The overlays drawn, by painter name (overlay_painter.h; the others are off). Unknown names
  /// are kept but draw nothing.
  void setOverlays(const QStringList& names);
  /// The overlays on, in drawing order.
  QStringList overlays() const;
  void setOverlay(const QString& name, bool on);
  bool isOverlayOn(const QString& name) const { return m_overlays.contains(name); }
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
  /// Per step: whether it is marked doubtful (doubt_marks.h; the doubt overlay draws it). Empty:
  /// none. setTrace() clears them.
  void setDoubtful(std::vector<bool> flags);
  const std::vector<bool>& doubtful() const { return m_doubtful; }

  /// Maps source-image pixels to widget coordinates (and back with inverted()).
  QTransform imageToWidget() const;
  /// What a figure of the view holds, in widget coordinates: the image with what is drawn around
  /// it (regions, quads, the heat strip, the tokens) and a small margin; not the blank space
  /// the view leaves beside it. The whole view when there is no image.
  QRect figureRect() const;
  /// Height reserved under the image for the heat strip and the tokens.
  static constexpr int kStripHeight = 18;
  static constexpr int kTokenHeight = 26;

  QSize sizeHint() const override { return {720, 260}; }

  /// The tokens read so far (steps 0 .. step()), in step order, where and how they are drawn.
  struct TokenLabel {
    int step;
    QString text;
    QRectF rect;
    QFont font;
  };
  std::vector<TokenLabel> tokenLabels() const;
  /// Where the tokens read so far are drawn, in step order.
  std::vector<QRectF> tokenRects() const;
  /// The feature column under a widget position on the heat strip, or -1.
  int stripColumnAt(const QPointF& pos) const;
  /// The region whose cell centre is nearest a widget position on the image, or -1.
  int regionAtImagePoint(const QPointF& pos) const;
  /// What hovering shows at a widget position: the strip's column (with a grid's marginal, a CTC
  /// model's top-k), or on the image the nearest cell (row, column) or region and its alpha.
  QString hoverText(const QPointF& pos) const;
  /// The heat map of the current step's heat source (the heat-image overlay), in its own pixels
  /// over the image.
  QImage heatMap() const;
  /// The per-step map the heat overlays draw: core::kAttentionMap (the default) or a pixel map's
  /// name (an explanation, core/trace/attribution.h). A step where that map has no values yet
  /// draws no heat.
  void setHeatSource(const QString& name);
  const QString& heatSource() const { return m_heatSource; }
  /// The heat source's values at the current step over the source pixels when it is a pixel map
  /// (empty for attention, or when not computed).
  const std::vector<double>& pixelHeat() const;
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
  QSet<QString> m_overlays;
  std::vector<bool> m_doubtful;
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
  QString m_heatSource = QString::fromLatin1(core::kAttentionMap);
};

/// Attention is drawn relative to max(largest weight, floor): a peaked distribution fills the
/// colour range, a near-uniform one stays dark instead of looking like certainty everywhere.
/// The floor is kHeatFloor for a row of columns, and six times the uniform weight for more
/// regions: over a 2-D grid's hundred cells a clear spot of 0.05 would otherwise be drawn at a
/// fifth of the range (faint), while uniform attention (0.01) stays dark.
constexpr double kHeatFloor = 0.25;
inline double heatFloor(size_t regions) {
  return regions > 0 ? std::min(kHeatFloor, 6.0 / static_cast<double>(regions)) : kHeatFloor;
}

/// Colour of an attention weight (0 -> dark blue, 1 -> yellow), a perceptual ramp.
QColor heatColour(double value);

}  // namespace foveal::ui
