#pragma once
// The source image, large, with the current step's overlays: every receptive field's attention
// as a heat strip under the image, the selected region's box, each STN's quadrilateral
// (coarse and fine in different colours) and the tokens read so far.
#include <QImage>
#include <QTransform>
#include <QWidget>
#include <memory>

#include "trace.h"

namespace foveal::ui {

class TraceView : public QWidget {
  Q_OBJECT
 public:
  explicit TraceView(QWidget* parent = nullptr);

  void setImage(const QImage& image);
  void setTrace(std::shared_ptr<const core::Trace> trace);
  void setStep(int step);
  int step() const { return m_step; }

  /// Maps source-image pixels to widget coordinates (and back with inverted()).
  QTransform imageToWidget() const;
  /// Height reserved under the image for the heat strip and the tokens.
  static constexpr int kStripHeight = 18;
  static constexpr int kTokenHeight = 26;

  QSize sizeHint() const override { return {720, 260}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QImage m_image;
  std::shared_ptr<const core::Trace> m_trace;
  int m_step = 0;
};

/// Colour of an attention weight (0 -> dark blue, 1 -> yellow), a perceptual ramp.
QColor heatColour(double value);

}  // namespace foveal::ui
