#pragma once
// The current line as kraken's extraction cut it out of the page (the image the models read),
// with each character's box on it tinted by its probability on the confidence scale: the Page
// view's preview of what the Inspector will step through.
#include <QImage>
#include <QWidget>
#include <memory>

#include "trace/kraken_lines.h"

namespace foveal::ui {

class LineStrip : public QWidget {
  Q_OBJECT
 public:
  explicit LineStrip(QWidget* parent = nullptr);

  /// The line image and its reading (null: the image alone); `threshold` as the page's.
  void setLine(const QImage& line, std::shared_ptr<const core::LineReading> reading,
               double threshold);
  void clear();
  const QImage& image() const { return m_image; }

  QSize sizeHint() const override { return {360, 64}; }
  QSize minimumSizeHint() const override { return {120, 48}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QImage m_image;
  std::shared_ptr<const core::LineReading> m_reading;
  double m_threshold = 0.8;
};

}  // namespace foveal::ui
