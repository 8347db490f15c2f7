#include "line_strip.h"

#include <QPainter>
#include <algorithm>

#include "confidence_scale.h"

namespace foveal::ui {

LineStrip::LineStrip(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void LineStrip::setLine(const QImage& line, std::shared_ptr<const core::LineReading> reading,
                        double threshold) {
  m_image = line;
  m_reading = std::move(reading);
  m_threshold = threshold;
  update();
}

void LineStrip::clear() {
  m_image = {};
  m_reading.reset();
  update();
}

void LineStrip::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (m_image.isNull()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("Choose a line to see it as the models read it"));
    return;
  }
  const double s = std::min((width() - 4.0) / m_image.width(), (height() - 4.0) / m_image.height());
  const QRectF target(2, (height() - m_image.height() * s) / 2, m_image.width() * s,
                      m_image.height() * s);
  p.setRenderHint(QPainter::SmoothPixmapTransform);
  p.drawImage(target, m_image);
  if (!m_reading) return;
  p.setRenderHint(QPainter::Antialiasing);
  for (const auto& st : m_reading->trace.steps) {
    if (st.box.w <= 0 && st.box.h <= 0) continue;
    QColor c = confidenceColour(st.prob, m_threshold);
    const QRectF b(target.left() + st.box.x * s, target.top() + st.box.y * s,
                   std::max(1.0, st.box.w * s), st.box.h * s);
    p.setPen(QPen(c.darker(115), 1));
    c.setAlpha(70);
    p.setBrush(c);
    p.drawRect(b);
  }
}

}  // namespace foveal::ui
