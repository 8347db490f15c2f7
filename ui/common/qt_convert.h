#pragma once
// Conversions between core's plain values and Qt types. Header-only, Torch-free.
#include <QImage>
#include <QPointF>
#include <QPolygonF>
#include <QRectF>
#include <QString>

#include "image/grey_image.h"
#include "model/charset.h"
#include "trace/trace.h"

namespace foveal::ui {

inline QImage toQImage(const core::GreyImage& g) {
  if (g.empty()) return {};
  QImage img(g.width, g.height, QImage::Format_Grayscale8);
  for (int y = 0; y < g.height; ++y)
    memcpy(img.scanLine(y), g.pixels.data() + static_cast<size_t>(y) * g.width, g.width);
  return img;
}

inline core::GreyImage fromQImage(const QImage& image) {
  const QImage grey = image.convertToFormat(QImage::Format_Grayscale8);
  core::GreyImage g{grey.width(), grey.height(), {}};
  g.pixels.resize(static_cast<size_t>(g.width) * g.height);
  for (int y = 0; y < g.height; ++y)
    memcpy(g.pixels.data() + static_cast<size_t>(y) * g.width, grey.constScanLine(y), g.width);
  return g;
}

inline QRectF toRect(const core::Box& b) { return QRectF(b.x, b.y, b.w, b.h); }

inline QPolygonF toPolygon(const core::Quad& q) {
  QPolygonF p;
  for (const auto& c : q) p << QPointF(c.x, c.y);
  return p;
}

inline QString qstr(const std::string& s) { return QString::fromStdString(s); }

/// How a step's token is drawn: its text, or "end" for the end token (a symbol such as U+23F9
/// is missing from common fonts and showed as an empty box).
inline bool isEndToken(const core::TraceStep& s) { return s.token == core::Charset::kEndName; }
inline QString displayToken(const core::TraceStep& s) {
  return isEndToken(s) ? QStringLiteral("end") : qstr(s.token);
}

}  // namespace foveal::ui
