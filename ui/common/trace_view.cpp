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
#include "overlay_painter.h"
#include "qt_convert.h"
#include "trace/localisation.h"

namespace foveal::ui {

QColor heatColour(double v) {
  // NaN (a model whose weights hold NaN, a 0/0 normalisation) passes std::clamp unchanged and
  // made the stop index below INT_MIN: it draws as no attention. Infinities clamp to the ends.
  if (std::isnan(v)) v = 0.0;
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
  setOverlays(defaultOverlays());
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
  m_doubtful.clear();
  update();
}

void TraceView::setDoubtful(std::vector<bool> flags) {
  m_doubtful = std::move(flags);
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
  m_heatStep = -1;
  update();
}

void TraceView::setOverlays(const QStringList& names) {
  m_overlays = QSet<QString>(names.begin(), names.end());
  update();
}

QStringList TraceView::overlays() const {
  QStringList on;
  for (const auto& painter : overlayPainters())
    if (isOverlayOn(painter->name())) on << painter->name();
  return on;
}

void TraceView::setOverlay(const QString& name, bool on) {
  if (on)
    m_overlays.insert(name);
  else
    m_overlays.remove(name);
  update();
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
  const std::vector<double>& alpha = shownAttention(*m_trace, m_heatSource, current);
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
    if (isAttentionSource(m_heatSource))
      m_heatMap =
          heatMapImage(*m_trace, shownAttention(*m_trace, m_heatSource, static_cast<size_t>(s)),
                       heatMapSize(*m_trace));
    else
      m_heatMap = pixelHeatImage(pixelHeat(), m_trace->imageW, m_trace->imageH);
    m_heatStep = s;
  }
  return m_heatMap;
}

void TraceView::setHeatSource(const QString& name) {
  if (name == m_heatSource) return;
  m_heatSource = name;
  m_heatStep = -1;
  update();
}

const std::vector<double>& TraceView::pixelHeat() const {
  static const std::vector<double> none;
  if (!m_trace || isAttentionSource(m_heatSource)) return none;
  const core::StepMap* map = m_trace->map(m_heatSource.toStdString());
  if (!map || map->layout != core::MapLayout::Pixels || m_step < 0 ||
      static_cast<size_t>(m_step) >= map->steps.size())
    return none;
  const auto& values = map->steps[static_cast<size_t>(m_step)];
  return values.size() == static_cast<size_t>(map->width) * static_cast<size_t>(map->height)
             ? values
             : none;
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

QRect TraceView::figureRect() const {
  if (m_image.isNull()) return rect();
  const QTransform t = imageToWidget();
  QRectF r = t.mapRect(contentRect());
  const QRectF image = t.mapRect(QRectF(0, 0, m_image.width(), m_image.height()));
  // The heat strip and the tokens below the image.
  r |= QRectF(image.left(), image.bottom(), image.width(), kStripHeight + kTokenHeight);
  for (const QRectF& token : tokenRects()) r |= token;
  constexpr double kMargin = 6;
  return r.adjusted(-kMargin, -kMargin, kMargin, kMargin).toAlignedRect().intersected(rect());
}

QRectF TraceView::contentRect() const {
  QRectF r(0, 0, m_image.width(), m_image.height());
  if (!m_trace) return r;
  // Only what is drawn: the selected regions and the quads (fixed for the trace, so stepping
  // does not rescale the view).
  // Receptive fields far wider than the image (a ResNet's) would shrink it: a quarter of the
  // image's width either side is kept in view, the rest of such a box is clipped.
  const QRectF reach = r.adjusted(-r.width() / 4, -r.height() / 4, r.width() / 4, r.height() / 4);
  for (const auto& f : m_trace->fiducials) r |= QRectF(f.x - 2, f.y - 2, 4, 4).intersected(reach);
  // Fields that span the image are not drawn (each step's focus box is, inside the image).
  const bool regionsDrawn = !fieldsSpanTheImage(*m_trace);
  for (const auto& s : m_trace->steps) {
    if (regionsDrawn && s.region >= 0 && s.region < int(m_trace->regions.size()))
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

std::vector<TraceView::TokenLabel> TraceView::tokenLabels() const {
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
  for (const auto& l : tokenLabels()) rects.push_back(l.rect);
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
  const auto current =
      static_cast<size_t>(std::clamp<int>(m_step, 0, int(m_trace->steps.size()) - 1));
  const TraceViewContext context{*this, *m_trace,  current,     m_trace->steps[current],
                                 t,     imageRect, m_truthBoxes};
  p.setClipRect(rect());
  for (const auto& painter : overlayPainters()) {
    if (!isOverlayOn(painter->name())) continue;
    p.save();
    painter->paint(p, context);
    p.restore();
  }
  if (hasFocus() && m_focusFrame) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DotLine));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
  }
}

}  // namespace foveal::ui
