#include "page_canvas.h"

#include <QFontMetricsF>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "confidence_scale.h"
#include "page_line_model.h"

namespace foveal::ui {

namespace {
const QColor kUnread(30, 120, 230);
const QColor kCurrent(25, 90, 200);
const QColor kBaseline(200, 0, 150);
constexpr double kMaxScale = 8;

QPolygonF polygonOf(const std::vector<core::LayoutPoint>& points) {
  QPolygonF p;
  for (const auto& q : points) p << QPointF(q.x, q.y);
  return p;
}

// Distance from `p` to the segment a-b.
double segmentDistance(const QPointF& p, const QPointF& a, const QPointF& b) {
  const QPointF d = b - a;
  const double len2 = QPointF::dotProduct(d, d);
  const double t = len2 > 0 ? std::clamp(QPointF::dotProduct(p - a, d) / len2, 0.0, 1.0) : 0.0;
  const QPointF q = a + t * d;
  return std::hypot(p.x() - q.x(), p.y() - q.y());
}
}  // namespace

PageCanvas::PageCanvas(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(false);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setPlaceholder(
      tr("Open a page: File > Open Page... (Ctrl+Shift+P) opens a PAGE-XML or ALTO "
         "layout with its image."));
}

void PageCanvas::setLines(PageLineModel* model, QItemSelectionModel* selection) {
  m_model = model;
  m_selection = selection;
  auto repaint = [this] { update(); };
  connect(model, &QAbstractItemModel::dataChanged, this, repaint);
  connect(model, &QAbstractItemModel::modelReset, this, repaint);
  connect(selection, &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            ensureVisible(current.row());
            update();
          });
}

void PageCanvas::setPage(const QImage& image, std::shared_ptr<const core::PageLayout> layout) {
  m_image = image;
  m_scaled = {};
  m_scaledFor = 0;
  m_layout = std::move(layout);
  m_lines.clear();
  m_regions.clear();
  if (m_layout) {
    for (const auto& l : m_layout->lines) {
      LineShape s;
      if (l.boundary.size() >= 3)
        s.outline = polygonOf(l.boundary);
      else if (l.hasBox)
        s.outline = QPolygonF(QRectF(QPointF(l.bbox[0], l.bbox[1]), QPointF(l.bbox[2], l.bbox[3])));
      s.baseline = polygonOf(l.baseline);
      s.bounds = s.outline.boundingRect().united(s.baseline.boundingRect());
      m_lines.push_back(std::move(s));
    }
    for (const auto& r : m_layout->regions)
      if (r.boundary.size() >= 3) m_regions.push_back(polygonOf(r.boundary));
  }
  m_fit = true;
  fitPage();
}

void PageCanvas::setReadingsShown(bool on) {
  m_readingsShown = on;
  update();
}

void PageCanvas::setPlaceholder(const QString& text) {
  m_placeholder = text;
  update();
}

QPointF PageCanvas::toWidget(const QPointF& page) const { return page * m_scale + m_offset; }
QPointF PageCanvas::toPage(const QPointF& widget) const { return (widget - m_offset) / m_scale; }

void PageCanvas::fitPage() {
  if (m_image.isNull()) return update();
  const double w = std::max(1, width() - 12), h = std::max(1, height() - 12);
  m_scale = std::min(w / m_image.width(), h / m_image.height());
  m_offset = QPointF((width() - m_image.width() * m_scale) / 2,
                     (height() - m_image.height() * m_scale) / 2);
  update();
}

int PageCanvas::currentLine() const {
  return m_selection && m_selection->currentIndex().isValid() ? m_selection->currentIndex().row()
                                                              : -1;
}

void PageCanvas::setCurrentLine(int line) {
  if (!m_model || !m_selection || line < 0 || line >= m_model->rowCount()) return;
  m_selection->setCurrentIndex(m_model->index(line, 0),
                               QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void PageCanvas::ensureVisible(int line) {
  if (line < 0 || line >= static_cast<int>(m_lines.size()) || m_fit) return;
  const QRectF b = m_lines[static_cast<size_t>(line)].bounds;
  const QRectF inView(toWidget(b.topLeft()), toWidget(b.bottomRight()));
  if (rect().contains(inView.toAlignedRect())) return;
  m_offset += QPointF(width() / 2.0, height() / 2.0) - inView.center();
  update();
}

int PageCanvas::lineAt(const QPointF& pos) const {
  const QPointF at = toPage(pos);
  int best = -1;
  double bestArea = 0;
  for (size_t i = 0; i < m_lines.size(); ++i) {
    const auto& s = m_lines[i];
    if (s.outline.size() >= 3 && s.outline.containsPoint(at, Qt::OddEvenFill)) {
      const double area = s.bounds.width() * s.bounds.height();
      if (best < 0 || area < bestArea) {
        best = static_cast<int>(i);
        bestArea = area;
      }
    }
  }
  if (best >= 0) return best;
  double nearest = 6;  // widget pixels
  for (size_t i = 0; i < m_lines.size(); ++i) {
    const auto& b = m_lines[i].baseline;
    for (int k = 0; k + 1 < b.size(); ++k) {
      const double d = segmentDistance(pos, toWidget(b[k]), toWidget(b[k + 1]));
      if (d < nearest) {
        nearest = d;
        best = static_cast<int>(i);
      }
    }
  }
  return best;
}

QPointF PageCanvas::lineCentre(int line) const {
  if (line < 0 || line >= static_cast<int>(m_lines.size())) return {};
  const auto& s = m_lines[static_cast<size_t>(line)];
  QPointF c = s.bounds.center();
  if (s.outline.size() >= 3 && !s.outline.containsPoint(c, Qt::OddEvenFill) &&
      s.baseline.size() >= 2)
    c = (s.baseline[0] + s.baseline[1]) / 2;
  return toWidget(c);
}

void PageCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(88, 90, 94));
  m_drawnLines = 0;
  if (m_image.isNull()) {
    p.setPen(QColor(235, 235, 235));
    p.drawText(rect().adjusted(24, 24, -24, -24), Qt::AlignCenter | Qt::TextWordWrap,
               m_placeholder);
    return;
  }
  p.setRenderHint(QPainter::Antialiasing);
  const int current = currentLine();
  const double threshold = m_model ? m_model->threshold() : 0.8;
  if (m_scale < 1) paintScaledImage(p);
  p.save();
  p.translate(m_offset);
  p.scale(m_scale, m_scale);
  if (m_scale >= 1) p.drawImage(QPointF(0, 0), m_image);  // pixels enlarged, not smoothed
  paintLayout(p, current, threshold);
  paintCurrentCuts(p, current, threshold);
  p.restore();

  if (m_model && m_readingsShown) paintReadings(p, current);
  if (m_model && current >= 0 && current < static_cast<int>(m_lines.size()))
    paintCurrentLabel(p, current);
  if (m_model && m_model->readCount() > 0) paintLegend(p);
}

void PageCanvas::paintScaledImage(QPainter& p) {
  if (m_scaledFor != m_scale) {
    m_scaled =
        m_image.scaled(std::max(1, static_cast<int>(std::lround(m_image.width() * m_scale))),
                       std::max(1, static_cast<int>(std::lround(m_image.height() * m_scale))),
                       Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    m_scaledFor = m_scale;
  }
  p.drawImage(QRectF(m_offset, QSizeF(m_image.width() * m_scale, m_image.height() * m_scale)),
              m_scaled);
}

void PageCanvas::paintLayout(QPainter& p, int current, double threshold) const {
  QPen regionPen(QColor(40, 90, 200, 170), 1.4, Qt::DashLine);
  regionPen.setCosmetic(true);
  p.setPen(regionPen);
  p.setBrush(Qt::NoBrush);
  for (const auto& r : m_regions) p.drawPolygon(r);
  for (size_t i = 0; i < m_lines.size(); ++i) {
    const auto& s = m_lines[i];
    const int line = static_cast<int>(i);
    const double conf = m_model ? m_model->confidence(line) : NAN;
    const bool read = m_model && m_model->reading(line) != nullptr;
    const bool flagged = m_model && m_model->isFlagged(line);
    const QColor colour = read ? confidenceColour(conf, threshold) : kUnread;
    QColor fill = colour;
    if (read && m_readingsShown && line != current) {
      fill = colour.lighter(175);
      fill.setAlpha(228);
    } else {
      fill.setAlpha(read ? 70 : 28);
    }
    QPen outline(line == current ? kCurrent : colour.darker(130),
                 line == current ? 3.0 : (flagged ? 2.0 : 1.1));
    outline.setCosmetic(true);
    p.setPen(outline);
    p.setBrush(fill);
    if (s.outline.size() >= 3) p.drawPolygon(s.outline);
    if (s.baseline.size() >= 2) {
      QPen base(kBaseline, line == current ? 2.0 : 1.3);
      base.setCosmetic(true);
      p.setPen(base);
      p.drawPolyline(s.baseline);
    }
    if (s.outline.size() >= 3 || s.baseline.size() >= 2) ++m_drawnLines;
  }
}

void PageCanvas::paintCurrentCuts(QPainter& p, int current, double threshold) const {
  // The current line's character cuts on the page, each tinted by its character's probability.
  if (m_model && current >= 0)
    if (const auto r = m_model->reading(current)) {
      for (size_t k = 0; k < r->cuts.size() && k < r->trace.steps.size(); ++k) {
        QPolygonF cut;
        for (const auto& q : r->cuts[k]) cut << QPointF(q.x, q.y);
        QColor c = confidenceColour(r->trace.steps[k].prob, threshold);
        QPen pen(c.darker(120), 1.0);
        pen.setCosmetic(true);
        p.setPen(pen);
        c.setAlpha(60);
        p.setBrush(c);
        p.drawPolygon(cut);
      }
    }
}

void PageCanvas::paintReadings(QPainter& p, int current) const {
  // The readings, in screen pixels: each in its line, as large as the line allows.
  for (size_t i = 0; i < m_lines.size(); ++i) {
    const int line = static_cast<int>(i);
    const auto r = m_model->reading(line);
    if (!r || line == current) continue;
    const QRectF b = m_lines[i].bounds;
    const QRectF box(toWidget(b.topLeft()), toWidget(b.bottomRight()));
    if (box.height() < 5 || box.width() < 12) continue;
    QFont f = font();
    f.setPixelSize(std::clamp(static_cast<int>(box.height() * 0.6), 6, 40));
    p.setFont(f);
    const QFontMetricsF fm(f);
    const QString conf = std::isfinite(m_model->confidence(line))
                             ? QString::number(m_model->confidence(line), 'f', 2)
                             : QString();
    const double confW = box.width() > 140 ? fm.horizontalAdvance(conf) + 8 : 0;
    const QString text = r->empty ? tr("(nothing read)")
                                  : fm.elidedText(QString::fromStdString(r->trace.prediction),
                                                  Qt::ElideRight, box.width() - 8 - confW);
    p.setPen(m_model->isFlagged(line) ? QColor(150, 20, 20) : QColor(25, 25, 25));
    p.drawText(box.adjusted(4, 0, -4 - confW, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
    if (confW > 0) {
      p.setPen(QColor(60, 60, 60));
      p.drawText(box.adjusted(4, 0, -4, 0), Qt::AlignRight | Qt::AlignVCenter, conf);
    }
  }
}

void PageCanvas::paintCurrentLabel(QPainter& p, int current) const {
  // The current line's reading in a label above it (below when there is no room).
  const QRectF b = m_lines[static_cast<size_t>(current)].bounds;
  const QRectF box(toWidget(b.topLeft()), toWidget(b.bottomRight()));
  const auto r = m_model->reading(current);
  QString text = QString::fromStdString(m_layout->lines[static_cast<size_t>(current)].id);
  if (r)
    // The reading isolated (FSI ... PDI): a right-to-left one keeps the id and the
    // confidence where they are.
    text +=
        QStringLiteral(": ") +
        (r->empty ? tr("(nothing read)")
                  : QChar(0x2068) + QString::fromStdString(r->trace.prediction) + QChar(0x2069)) +
        (std::isfinite(m_model->confidence(current))
             ? QStringLiteral("  (%1)").arg(m_model->confidence(current), 0, 'f', 2)
             : QString());
  QFont f = font();
  f.setPixelSize(14);
  p.setFont(f);
  const QFontMetricsF fm(f);
  const double w = std::min(fm.horizontalAdvance(text) + 14, width() - 8.0);
  const double h = fm.height() + 8;
  double y = box.top() - h - 4;
  if (y < 4) y = box.bottom() + 4;
  const QRectF label(std::clamp(box.left(), 4.0, std::max(4.0, width() - w - 4)), y, w, h);
  p.setPen(QPen(kCurrent, 1.2));
  p.setBrush(QColor(255, 255, 255, 240));
  p.drawRoundedRect(label, 4, 4);
  p.setPen(QColor(20, 20, 20));
  p.drawText(label.adjusted(7, 0, -7, 0), Qt::AlignVCenter | Qt::AlignLeft,
             fm.elidedText(text, Qt::ElideRight, label.width() - 14));
}

void PageCanvas::paintLegend(QPainter& p) const {
  const double threshold = m_model->threshold();
  QFont f = font();
  f.setPixelSize(11);
  p.setFont(f);
  const QRectF panel(8, height() - 46, 236, 38);
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(255, 255, 255, 225));
  p.drawRoundedRect(panel, 4, 4);
  const QRectF bar(panel.left() + 10, panel.top() + 6, panel.width() - 20, 10);
  for (int x = 0; x < static_cast<int>(bar.width()); ++x) {
    p.setPen(confidenceColour(x / (bar.width() - 1), threshold));
    p.drawLine(QPointF(bar.left() + x, bar.top()), QPointF(bar.left() + x, bar.bottom()));
  }
  const double tx = bar.left() + threshold * bar.width();
  p.setPen(QPen(QColor(20, 20, 20), 1.5));
  p.drawLine(QPointF(tx, bar.top() - 3), QPointF(tx, bar.bottom() + 3));
  p.setPen(QColor(30, 30, 30));
  const QRectF text(panel.left() + 10, bar.bottom() + 2, bar.width(), 16);
  p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("0"));
  p.drawText(text, Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("1"));
  p.drawText(text, Qt::AlignHCenter | Qt::AlignVCenter,
             tr("mean confidence, flagged < %1").arg(threshold, 0, 'f', 2));
}

void PageCanvas::resizeEvent(QResizeEvent*) {
  if (m_fit) fitPage();
}

void PageCanvas::wheelEvent(QWheelEvent* event) {
  if (m_image.isNull()) return;
  const QPointF pos = event->position();
  const QPointF at = toPage(pos);
  const double fit =
      std::min((width() - 12.0) / m_image.width(), (height() - 12.0) / m_image.height());
  const double s = std::clamp(m_scale * std::pow(1.0015, event->angleDelta().y()), fit * 0.5,
                              std::max(kMaxScale, fit));
  m_scale = s;
  m_offset = pos - at * s;
  m_fit = false;
  update();
  event->accept();
}

void PageCanvas::mousePressEvent(QMouseEvent* event) {
  setFocus(Qt::MouseFocusReason);
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  m_pressAt = event->position();
  m_offsetAtPress = m_offset;
  m_dragging = false;
}

void PageCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (!(event->buttons() & Qt::LeftButton) || m_image.isNull()) return;
  const QPointF d = event->position() - m_pressAt;
  if (!m_dragging && std::hypot(d.x(), d.y()) < 5) return;
  m_dragging = true;
  m_fit = false;
  m_offset = m_offsetAtPress + d;
  update();
}

void PageCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(event);
  if (m_dragging) {
    m_dragging = false;
    return;
  }
  const int line = lineAt(event->position());
  if (line < 0) return;
  setCurrentLine(line);
  Q_EMIT lineClicked(line);
}

void PageCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  const int line = lineAt(event->position());
  if (line >= 0) {
    setCurrentLine(line);
    Q_EMIT lineActivated(line);
    return;
  }
  m_fit = true;
  fitPage();
}

void PageCanvas::keyPressEvent(QKeyEvent* event) {
  const int n = static_cast<int>(m_lines.size());
  const int cur = currentLine();
  switch (event->key()) {
    case Qt::Key_Up:
      if (n) setCurrentLine(cur < 0 ? 0 : std::max(0, cur - 1));
      break;
    case Qt::Key_Down:
      if (n) setCurrentLine(cur < 0 ? 0 : std::min(n - 1, cur + 1));
      break;
    case Qt::Key_Home:
      if (n) setCurrentLine(0);
      break;
    case Qt::Key_End:
      if (n) setCurrentLine(n - 1);
      break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
      if (cur >= 0) Q_EMIT lineActivated(cur);
      break;
    default:
      return QWidget::keyPressEvent(event);
  }
  event->accept();
}

}  // namespace foveal::ui
