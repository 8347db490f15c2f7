#include "confusion_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "qt_convert.h"

namespace foveal::ui {

namespace {
constexpr int kAxis = 16;   // room for the axis titles
constexpr int kLabel = 16;  // room for the character labels
constexpr double kMaxCell = 34, kMinCell = 9;
const QString kGap = QStringLiteral("∅");
}  // namespace

ConfusionView::ConfusionView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void ConfusionView::setMatrix(const core::train::ConfusionMatrix& matrix) {
  m_matrix = matrix;
  m_selTruth = m_selRead = -1;
  updateGeometry();
  update();
}

void ConfusionView::setSelectedCell(int truth, int read) {
  m_selTruth = truth;
  m_selRead = read;
  update();
}

QSize ConfusionView::sizeHint() const {
  const int n = std::max(1, m_matrix.size());
  const int side = kAxis + kLabel + n * 26 + 8;
  return {side, side};
}

QSize ConfusionView::minimumSizeHint() const { return {160, 160}; }

QString ConfusionView::label(int i) const {
  if (i == m_matrix.gap()) return kGap;
  const QString s = qstr(m_matrix.symbol(i));
  return s == QLatin1String(" ") ? QStringLiteral("␣") : s;
}

ConfusionView::Grid ConfusionView::grid() const {
  Grid g;
  const int n = m_matrix.size();
  if (m_matrix.symbols().empty() || n <= 0) return g;
  const double w = width() - kAxis - kLabel - 6, h = height() - kAxis - kLabel - 6;
  g.cell = std::clamp(std::floor(std::min(w, h) / n), kMinCell, kMaxCell);
  const double side = g.cell * n;
  // Centred in the room the labels leave.
  g.origin = QPointF(kAxis + kLabel + std::max(0.0, (w - side) / 2),
                     kAxis + kLabel + std::max(0.0, (h - side) / 2));
  return g;
}

std::pair<int, int> ConfusionView::cellAt(const QPoint& pos) const {
  const Grid g = grid();
  if (g.cell <= 0) return {-1, -1};
  const int r = int(std::floor((pos.x() - g.origin.x()) / g.cell));
  const int t = int(std::floor((pos.y() - g.origin.y()) / g.cell));
  if (r < 0 || t < 0 || r >= m_matrix.size() || t >= m_matrix.size()) return {-1, -1};
  return {t, r};
}

QPoint ConfusionView::cellCenter(int truth, int read) const {
  const Grid g = grid();
  return QPointF(g.origin.x() + (read + 0.5) * g.cell, g.origin.y() + (truth + 0.5) * g.cell)
      .toPoint();
}

void ConfusionView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const Grid g = grid();
  if (g.cell <= 0) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
               tr("The confusion matrix of the chosen model appears here once an analysis has "
                  "run."));
    return;
  }
  const int n = m_matrix.size();
  int64_t maxDiag = 1;
  for (int i = 0; i < n; ++i) maxDiag = std::max(maxDiag, m_matrix.count(i, i));
  const int64_t maxOff = std::max<int64_t>(1, m_matrix.maxOffDiagonal());
  const double side = g.cell * n;

  // Axis titles and labels.
  p.setPen(palette().color(QPalette::Text));
  QFont f = font();
  p.setFont(f);
  p.drawText(QRectF(g.origin.x(), 0, side, kAxis), Qt::AlignCenter, tr("read →"));
  p.save();
  p.translate(0, g.origin.y() + side / 2);
  p.rotate(-90);
  p.drawText(QRectF(-side / 2, 0, side, kAxis), Qt::AlignCenter,
             tr("← truth"));  // rotated: the arrow points down
  p.restore();
  QFont small = f;
  small.setPointSizeF(std::max(6.0, std::min(f.pointSizeF(), g.cell * 0.45)));
  p.setFont(small);
  for (int i = 0; i < n; ++i) {
    p.drawText(QRectF(g.origin.x() + i * g.cell, kAxis, g.cell, kLabel), Qt::AlignCenter, label(i));
    p.drawText(QRectF(kAxis, g.origin.y() + i * g.cell, kLabel, g.cell), Qt::AlignCenter, label(i));
  }

  // Cells.
  QFont countFont = small;
  countFont.setPointSizeF(std::max(5.5, small.pointSizeF() * 0.85));
  p.setFont(countFont);
  const QFontMetricsF fm(countFont);
  for (int t = 0; t < n; ++t)
    for (int r = 0; r < n; ++r) {
      const QRectF cell(g.origin.x() + r * g.cell, g.origin.y() + t * g.cell, g.cell, g.cell);
      const int64_t c = m_matrix.count(t, r);
      QColor fill = t == n - 1 && r == n - 1 ? QColor(238, 238, 238) : QColor(Qt::white);
      if (c > 0) {
        const double v = std::sqrt(double(c) / double(t == r ? maxDiag : maxOff));
        fill = t == r ? QColor::fromHsvF(0.33, 0.15 + 0.6 * v, 0.95 - 0.25 * v)
                      : QColor::fromHsvF(0.0, 0.12 + 0.75 * v, 1.0 - 0.2 * v);
      }
      p.fillRect(cell, fill);
      p.setPen(QColor(210, 210, 210));
      p.drawRect(cell);
      if (c > 0) {
        const QString text = QString::number(c);
        if (fm.horizontalAdvance(text) <= g.cell - 2 && fm.height() <= g.cell) {
          p.setPen(fill.valueF() < 0.75 || fill.saturationF() > 0.6 ? Qt::white : Qt::black);
          p.drawText(cell, Qt::AlignCenter, text);
        }
      }
    }
  if (m_selTruth >= 0 && m_selRead >= 0) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 2.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(g.origin.x() + m_selRead * g.cell, g.origin.y() + m_selTruth * g.cell, g.cell,
                      g.cell));
  }
}

void ConfusionView::mousePressEvent(QMouseEvent* event) {
  const auto [t, r] = cellAt(event->position().toPoint());
  if (t >= 0 && event->button() == Qt::LeftButton) Q_EMIT cellClicked(t, r);
}

bool ConfusionView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const auto [t, r] = cellAt(help->pos());
    if (t < 0) {
      QToolTip::hideText();
      return true;
    }
    const int64_t c = m_matrix.count(t, r);
    const size_t images = m_matrix.images(t, r).size();
    QString what;
    if (t == m_matrix.gap())
      what = tr("\"%1\" read where the truth has no character").arg(label(r));
    else if (r == m_matrix.gap())
      what = tr("truth \"%1\" not read (dropped)").arg(label(t));
    else if (t == r)
      what = tr("\"%1\" read right").arg(label(t));
    else
      what = tr("truth \"%1\" read as \"%2\"").arg(label(t), label(r));
    QToolTip::showText(
        help->globalPos(),
        tr("%1: %2 times in %3 images (click: show them)").arg(what).arg(c).arg(images), this);
    return true;
  }
  return QWidget::event(event);
}

}  // namespace foveal::ui
