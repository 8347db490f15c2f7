#include "trace_view.h"

#include <QHelpEvent>
#include <QToolTip>

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <vector>

#include "attention_grid.h"
#include "qt_convert.h"
#include "trace/localisation.h"

namespace foveal::ui {

QColor heatColour(double v) {
  v = std::clamp(v, 0.0, 1.0);
  // A compact viridis-like ramp through five stops.
  static const QColor stops[] = {QColor(68, 1, 84), QColor(59, 82, 139), QColor(33, 145, 140),
                                 QColor(94, 201, 98), QColor(253, 231, 37)};
  const double x = v * 4.0;
  const int i = std::min(3, static_cast<int>(x));
  const double f = x - i;
  const QColor a = stops[i], b = stops[i + 1];
  return QColor::fromRgbF(a.redF() + f * (b.redF() - a.redF()),
                          a.greenF() + f * (b.greenF() - a.greenF()),
                          a.blueF() + f * (b.blueF() - a.blueF()));
}

TraceView::TraceView(QWidget* parent) : QWidget(parent) {
  setMinimumSize(320, 160);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
  // Clicking the image takes the focus: the step keys work from here (MainWindow).
  setFocusPolicy(Qt::StrongFocus);
}

void TraceView::focusInEvent(QFocusEvent*) { update(); }
void TraceView::focusOutEvent(QFocusEvent*) { update(); }

void TraceView::setImage(const QImage& image) {
  m_image = image;
  m_trace.reset();
  m_heatStep = -1;
  m_truthBoxes.clear();
  m_step = 0;
  m_zoom = 1.0;
  m_pan = {};
  update();
}

void TraceView::setTrace(std::shared_ptr<const core::Trace> trace) {
  m_trace = std::move(trace);
  m_step = 0;
  m_heatStep = -1;
  update();
}

void TraceView::setTruthBoxes(std::vector<core::Box> boxes) {
  m_truthBoxes = std::move(boxes);
  update();
}

std::vector<int> TraceView::stepHits() const {
  if (!m_trace) return {};
  core::Trace probe;  // stepHits reads the steps' focus and the true boxes only
  probe.steps = m_trace->steps;
  probe.truthBoxes = m_truthBoxes;
  return core::stepHits(probe);
}

void TraceView::setStep(int step) {
  if (step == m_step) return;
  m_step = step;
  update();
}

void TraceView::setOverlays(Overlays overlays) {
  m_overlays = overlays;
  update();
}

void TraceView::setOverlay(Overlay overlay, bool on) {
  setOverlays(on ? (m_overlays | overlay) : (m_overlays & ~Overlays(overlay)));
}

void TraceView::setZoom(double zoom, const QPointF& anchor) {
  zoom = std::clamp(zoom, 1.0, 16.0);
  // Keep the image point under `anchor` where it is.
  const QPointF imagePoint = imageToWidget().inverted().map(anchor);
  m_zoom = zoom;
  const QPointF moved = imageToWidget().map(imagePoint);
  m_pan += anchor - moved;
  if (m_zoom == 1.0) m_pan = {};
  update();
}

void TraceView::resetView() {
  m_zoom = 1.0;
  m_pan = {};
  update();
}

QTransform TraceView::imageToWidget() const {
  if (m_image.isNull()) return {};
  const QTransform fit = fitTransform();
  if (m_zoom == 1.0 && m_pan.isNull()) return fit;
  const QPointF c(width() / 2.0, height() / 2.0);
  return fit * QTransform::fromTranslate(-c.x(), -c.y()) * QTransform::fromScale(m_zoom, m_zoom) *
         QTransform::fromTranslate(c.x() + m_pan.x(), c.y() + m_pan.y());
}

void TraceView::wheelEvent(QWheelEvent* event) {
  if (m_image.isNull()) return;
  const double steps = event->angleDelta().y() / 120.0;
  setZoom(m_zoom * std::pow(1.25, steps), event->position());
  event->accept();
}

void TraceView::mousePressEvent(QMouseEvent* event) {
  setFocus(Qt::MouseFocusReason);
  if (event->button() == Qt::LeftButton && m_zoom > 1.0) {
    m_dragging = true;
    m_dragStart = event->position();
    setCursor(Qt::ClosedHandCursor);
  }
}

int TraceView::stripColumnAt(const QPointF& pos) const {
  if (m_image.isNull() || !m_trace || m_trace->regions.empty()) return -1;
  const QTransform t = imageToWidget();
  const QRectF imageRect = t.mapRect(QRectF(0, 0, m_image.width(), m_image.height()));
  if (pos.y() < imageRect.bottom() || pos.y() > imageRect.bottom() + kStripHeight) return -1;
  const double x = t.inverted().map(pos).x();
  int best = -1;
  double bestDistance = 1e300;
  const std::vector<double> xs = columnCentres(*m_trace);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double d = std::abs(xs[i] - x);
    if (d < bestDistance) {
      bestDistance = d;
      best = static_cast<int>(i);
    }
  }
  return best;
}

int TraceView::regionAtImagePoint(const QPointF& pos) const {
  if (m_image.isNull() || !m_trace || m_trace->regions.empty()) return -1;
  const QTransform t = imageToWidget();
  if (!t.mapRect(QRectF(0, 0, m_image.width(), m_image.height())).contains(pos)) return -1;
  const QPointF p = t.inverted().map(pos);
  const GridShape g = gridShape(*m_trace);
  const std::vector<double> xs = columnCentres(*m_trace), ys = rowCentres(*m_trace);
  auto nearest = [](const std::vector<double>& v, double x) {
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i)
      if (std::abs(v[i] - x) < std::abs(v[best] - x)) best = i;
    return static_cast<int>(best);
  };
  if (xs.empty() || ys.empty()) return -1;
  return nearest(ys, p.y()) * g.columns + nearest(xs, p.x());
}

QString TraceView::hoverText(const QPointF& pos) const {
  if (!m_trace || m_trace->steps.empty()) return {};
  const auto current =
      static_cast<size_t>(std::clamp<int>(m_step, 0, int(m_trace->steps.size()) - 1));
  const auto& step = m_trace->steps[current];
  const std::vector<double>& alpha = m_trace->attention(current);
  const GridShape g = gridShape(*m_trace);
  // The heat strip: the column, a grid's column marginal, a CTC model's top-k posteriors.
  if (const int c = stripColumnAt(pos); c >= 0) {
    QString text = tr("column %1").arg(c);
    if (g.isGrid())
      text += tr("\nα summed over the %1 rows: %2")
                  .arg(g.rows)
                  .arg(columnMarginal(*m_trace, alpha)[static_cast<size_t>(c)], 0, 'f', 4);
    if (c < int(m_trace->columnTopk.size()))
      for (const auto& tp : m_trace->columnTopk[static_cast<size_t>(c)])
        text += QStringLiteral("\n%1  %2")
                    .arg(tp.token == core::Charset::kBlankName ? QStringLiteral("blank")
                                                               : qstr(tp.token))
                    .arg(tp.prob, 0, 'f', 3);
    return text;
  }
  // The image: the cell (or column) whose centre is nearest, with its weight.
  const int region = regionAtImagePoint(pos);
  if (region < 0 || region >= int(alpha.size())) return {};
  QString text = regionName(*m_trace, region) +
                 tr(": α = %1").arg(alpha[static_cast<size_t>(region)], 0, 'f', 4);
  if (region == step.region) text += tr("\nthe step's region");
  return text;
}

QImage TraceView::heatMap() const {
  if (!m_trace || m_trace->steps.empty()) return {};
  const int s = std::clamp<int>(m_step, 0, int(m_trace->steps.size()) - 1);
  if (m_heatStep != s || m_heatMap.isNull()) {
    m_heatMap =
        heatMapImage(*m_trace, m_trace->attention(static_cast<size_t>(s)), heatMapSize(*m_trace));
    m_heatStep = s;
  }
  return m_heatMap;
}

bool TraceView::event(QEvent* event) {
  // Hovering names the strip's column or the image's cell (attention_grid.h, regionName).
  if (event->type() == QEvent::ToolTip && m_trace) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = hoverText(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
      event->ignore();
      return true;
    }
    QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(event);
}

void TraceView::mouseMoveEvent(QMouseEvent* event) {
  if (!m_dragging) return;
  m_pan += event->position() - m_dragStart;
  m_dragStart = event->position();
  update();
}

void TraceView::mouseReleaseEvent(QMouseEvent*) {
  m_dragging = false;
  unsetCursor();
}

void TraceView::mouseDoubleClickEvent(QMouseEvent*) { resetView(); }

QRectF TraceView::contentRect() const {
  QRectF r(0, 0, m_image.width(), m_image.height());
  if (!m_trace) return r;
  // Only what is drawn: the selected regions and the quads (fixed for the trace, so stepping
  // does not rescale the view).
  // Receptive fields far wider than the image (a ResNet's) would shrink it: a quarter of the
  // image's width either side is kept in view, the rest of such a box is clipped.
  const QRectF reach = r.adjusted(-r.width() / 4, -r.height() / 4, r.width() / 4, r.height() / 4);
  for (const auto& f : m_trace->fiducials) r |= QRectF(f.x - 2, f.y - 2, 4, 4).intersected(reach);
  for (const auto& s : m_trace->steps) {
    if (s.region >= 0 && s.region < int(m_trace->regions.size()))
      r |= toRect(m_trace->regions[static_cast<size_t>(s.region)]).intersected(reach);
    for (const auto& stn : s.stn) r |= toPolygon(stn.quad).boundingRect();
  }
  return r;
}

QTransform TraceView::fitTransform() const {
  // Small views (compare page) keep a small margin so the image stays large.
  const QRectF c = contentRect();
  const double margin = std::min(24.0, std::min(width(), height()) * 0.05);
  const double availW = std::max(1.0, width() - 2 * margin);
  const double availH = std::max(1.0, height() - 2 * margin - kStripHeight - kTokenHeight);
  const double scale = std::min(availW / c.width(), availH / c.height());
  const double w = c.width() * scale;
  const double h = c.height() * scale + kStripHeight + kTokenHeight;
  const double x0 = (width() - w) / 2.0 - c.left() * scale;
  const double y0 = (height() - h) / 2.0 - c.top() * scale;
  return QTransform::fromScale(scale, scale) * QTransform::fromTranslate(x0, y0);
}

QFont TraceView::tokenFont(double factor) const {
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * factor);
  return f;
}

std::vector<TraceView::TokenLabel> TraceView::layoutTokens() const {
  std::vector<TokenLabel> labels;
  if (m_image.isNull() || !m_trace || m_trace->steps.empty()) return labels;
  const QTransform t = imageToWidget();
  const double top =
      t.mapRect(QRectF(0, 0, m_image.width(), m_image.height())).bottom() + 4 + kStripHeight;
  // Every step read so far, under the centre of its region (the end step under the last one).
  std::vector<double> want;
  const int last = std::clamp(m_step, 0, int(m_trace->steps.size()) - 1);
  for (int s = 0; s <= last; ++s) {
    const auto& st = m_trace->steps[static_cast<size_t>(s)];
    double x = width() / 2.0;
    if (st.region >= 0 && st.region < int(m_trace->regions.size())) {
      const auto& r = m_trace->regions[static_cast<size_t>(st.region)];
      x = t.map(QPointF(r.x + r.w / 2.0, 0)).x();
    }
    want.push_back(x);
    labels.push_back({s, displayToken(st), {}, {}});
  }
  // Shrink the font until the labels fit side by side, then place them in reading order as
  // close to their regions as they can be without touching.
  const double left = 2, right = std::max(left + 1.0, width() - 2.0);
  const double pad = 6;
  for (double factor : {1.3, 1.1, 0.95, 0.8, 0.7}) {
    const QFontMetricsF fm(tokenFont(factor));
    double total = 0;
    for (auto& l : labels) {
      l.font = tokenFont(factor);
      l.rect.setWidth(fm.horizontalAdvance(l.text) + pad);
      total += l.rect.width();
    }
    if (total <= right - left) break;
  }
  double prevRight = left;
  for (size_t i = 0; i < labels.size(); ++i) {
    const double w = labels[i].rect.width();
    const double x = std::max(want[i] - w / 2.0, prevRight);
    labels[i].rect = QRectF(x, top, w, kTokenHeight);
    prevRight = x + w;
  }
  double nextLeft = right;
  for (size_t i = labels.size(); i-- > 0;) {
    QRectF& r = labels[i].rect;
    if (r.right() > nextLeft) r.moveRight(nextLeft);
    nextLeft = r.left();
  }
  return labels;
}

std::vector<QRectF> TraceView::tokenRects() const {
  std::vector<QRectF> rects;
  for (const auto& l : layoutTokens()) rects.push_back(l.rect);
  return rects;
}

void TraceView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  if (m_image.isNull()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter,
               tr("Open an image (Ctrl+O) and a model (Ctrl+M), or drop files here"));
    return;
  }
  const QTransform t = imageToWidget();
  const QRectF imageRect = t.mapRect(QRectF(0, 0, m_image.width(), m_image.height()));
  p.save();
  p.setRenderHint(QPainter::SmoothPixmapTransform, false);
  p.drawImage(imageRect, m_image);
  p.restore();

  if (!m_trace || m_trace->steps.empty()) return;
  const auto& step =
      m_trace
          ->steps[static_cast<size_t>(std::clamp<int>(m_step, 0, int(m_trace->steps.size()) - 1))];

  p.setClipRect(rect());
  // Heat on the image: the heat map (attention_grid.h), drawn first so every outline stays on
  // top. The trace's image size, not the widget's image, places it (they are the same image).
  if (m_overlays & HeatImage) {
    const QImage map = heatMap();
    if (!map.isNull()) {
      p.save();
      p.setRenderHint(QPainter::SmoothPixmapTransform, true);
      p.drawImage(t.mapRect(QRectF(0, 0, m_trace->imageW, m_trace->imageH)).intersected(imageRect),
                  map);
      p.restore();
    }
  }

  // Heat strip: one cell per feature column, centred on the column's centre, as wide as the
  // stride; a grid's column marginal (alpha summed over its rows), normalised like alpha.
  const double stripTop = imageRect.bottom() + 4;
  if (m_overlays & HeatStrip) {
    const std::vector<double> xs = columnCentres(*m_trace);
    const std::vector<double> marginal = columnMarginal(
        *m_trace, m_trace->attention(static_cast<size_t>(&step - m_trace->steps.data())));
    const double top = marginal.empty() ? 0.0 : *std::max_element(marginal.begin(), marginal.end());
    for (size_t i = 0; i < xs.size() && i < marginal.size(); ++i) {
      const double stride = xs.size() > 1 ? xs[1] - xs[0] : m_trace->regions[i].w;
      QRectF cell = t.mapRect(QRectF(xs[i] - stride / 2.0, 0, stride, 1));
      cell.setTop(stripTop);
      cell.setHeight(kStripHeight - 4);
      cell = cell.intersected(QRectF(imageRect.left(), stripTop, imageRect.width(), kStripHeight));
      p.fillRect(cell, heatColour(marginal[i] / std::max(top, kHeatFloor)));
    }
  }

  // CTC: the columns that emitted this token, each as a band one stride wide over the image.
  for (int c : (m_overlays & RegionBox) ? step.columns : std::vector<int>{}) {
    if (c < 0 || c >= int(m_trace->regions.size())) continue;
    const auto& r = m_trace->regions[static_cast<size_t>(c)];
    const double stride =
        m_trace->regions.size() > 1 ? m_trace->regions[1].x - m_trace->regions[0].x : r.w;
    QRectF band = t.mapRect(QRectF(r.x + r.w / 2.0 - stride / 2.0, 0, stride, m_image.height()));
    p.fillRect(band.intersected(imageRect), QColor(255, 200, 0, 90));
    p.setPen(QPen(QColor(255, 200, 0), 1));
    p.drawLine(QPointF(band.center().x(), imageRect.top()),
               QPointF(band.center().x(), imageRect.bottom()));
  }
  // TPS: the fiducial points the localiser placed, top edge and bottom edge joined.
  if ((m_overlays & Fiducials) && !m_trace->fiducials.empty()) {
    const size_t half = m_trace->fiducials.size() / 2;
    for (int edge = 0; edge < 2; ++edge) {
      QPolygonF line;
      for (size_t i = 0; i < half; ++i) {
        const auto& f = m_trace->fiducials[edge * half + i];
        line << t.map(QPointF(f.x, f.y));
      }
      const QColor colour = edge == 0 ? QColor(0, 200, 120) : QColor(255, 140, 0);
      p.setPen(QPen(colour, 1.5));
      p.setBrush(Qt::NoBrush);
      p.drawPolyline(line);
      p.setBrush(colour);
      for (const auto& q : line) p.drawEllipse(q, 3.0, 3.0);
    }
    p.setBrush(Qt::NoBrush);
  }

  // Selected region; on a grid, its cell named (row, column) and its centre marked, since the
  // cells' boxes overlap so much that the box alone does not say which cell it is.
  if ((m_overlays & RegionBox) && step.region >= 0 && step.region < int(m_trace->regions.size())) {
    p.setPen(QPen(QColor(255, 200, 0), 2));
    p.setBrush(Qt::NoBrush);
    const QRectF box = t.mapRect(toRect(m_trace->regions[static_cast<size_t>(step.region)]));
    p.drawRect(box);
    if (gridShape(*m_trace).isGrid()) {
      // The heat map shows the cell itself; without it, a cross marks the cell's centre.
      if (!(m_overlays & HeatImage)) {
        const QPointF c = t.map(cellCentre(*m_trace, step.region));
        p.drawLine(c - QPointF(5, 5), c + QPointF(5, 5));
        p.drawLine(c - QPointF(-5, 5), c + QPointF(-5, 5));
      }
      const QString name = regionName(*m_trace, step.region);
      const QFontMetricsF fm(font());
      const QRectF label(box.left() + 1, box.top() + 1, fm.horizontalAdvance(name) + 8,
                         fm.height() + 2);
      p.fillRect(label, QColor(0, 0, 0, 150));
      p.setPen(QColor(255, 200, 0));
      p.drawText(label, Qt::AlignCenter, name);
    }
  }
  // STN quads: coarse (first of two) cyan, fine magenta.
  for (size_t k = 0; (m_overlays & StnQuads) && k < step.stn.size(); ++k) {
    const bool fine = k + 1 == step.stn.size();
    p.setPen(QPen(fine ? QColor(255, 64, 200) : QColor(0, 220, 255), 2,
                  fine ? Qt::SolidLine : Qt::DashLine));
    p.drawPolygon(t.map(toPolygon(step.stn[k].quad)));
  }

  // True character boxes: every one thin, the current step's character bold.
  const size_t current = static_cast<size_t>(&step - m_trace->steps.data());
  if (m_overlays & TruthBoxes) {
    p.setBrush(Qt::NoBrush);
    for (size_t k = 0; k < m_truthBoxes.size(); ++k) {
      const bool now = k == current;
      p.setPen(QPen(now ? QColor(60, 230, 90) : QColor(60, 230, 90, 150), now ? 2.5 : 1));
      p.drawRect(t.mapRect(toRect(m_truthBoxes[k])));
    }
  }
  // The step's focus and character box: green on its character, red off it, white unknown.
  if (m_overlays & Focus) {
    const bool known = current < m_truthBoxes.size();
    const bool hit = known && core::contains(m_truthBoxes[current], step.focus);
    const QColor c = !known ? QColor(255, 255, 255)
                     : hit  ? QColor(60, 230, 90)
                            : QColor(240, 40, 40);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(c, 1.5, Qt::DashLine));
    p.drawRect(t.mapRect(toRect(step.box)));
    const QPointF f = t.map(QPointF(step.focus.x, step.focus.y));
    p.setPen(QPen(Qt::black, 1));
    p.setBrush(c);
    p.drawEllipse(f, 4.5, 4.5);
    p.setPen(QPen(c, 1.5));
    p.drawLine(f - QPointF(9, 0), f - QPointF(5.5, 0));
    p.drawLine(f + QPointF(5.5, 0), f + QPointF(9, 0));
    p.drawLine(f - QPointF(0, 9), f - QPointF(0, 5.5));
    p.drawLine(f + QPointF(0, 5.5), f + QPointF(0, 9));
    p.setBrush(Qt::NoBrush);
  }

  // Tokens read so far, in reading order under their regions; the current one bold.
  if (m_overlays & Tokens) {
    for (auto& l : layoutTokens()) {
      l.font.setBold(l.step == m_step);
      p.setFont(l.font);
      p.setPen(l.step == m_step ? palette().color(QPalette::Highlight)
                                : palette().color(QPalette::Text));
      p.drawText(l.rect, Qt::AlignCenter, l.text);
    }
  }
  if (hasFocus() && m_focusFrame) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DotLine));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
  }
}

}  // namespace foveal::ui
