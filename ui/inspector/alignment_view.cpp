#include "alignment_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "attention_grid.h"
#include "qt_convert.h"
#include "trace_view.h"

namespace foveal::ui {

namespace {
constexpr int kLabelW = 34;  // token labels left of the rows
constexpr int kHeaderH = 16;
}  // namespace

AlignmentView::AlignmentView(QWidget* parent) : QWidget(parent) {
  setMinimumSize(160, 80);
  setCursor(Qt::PointingHandCursor);
  setFocusPolicy(Qt::StrongFocus);  // a click takes the focus: the step keys work from here
  setToolTip(tr("Alignment: row t is the attention at step t. Click a row to go to its step."));
}

void AlignmentView::setTrace(std::shared_ptr<const core::Trace> trace) {
  m_trace = std::move(trace);
  m_step = 0;
  update();
}

void AlignmentView::setStep(int step) {
  m_step = step;
  update();
}

int AlignmentView::headerHeight() const {
  // A grid's second header line names its rows.
  return m_trace && gridShape(*m_trace).isGrid() ? 2 * kHeaderH : kHeaderH;
}

QRectF AlignmentView::matrixRect() const {
  const int header = headerHeight();
  return QRectF(kLabelW, header, width() - kLabelW - 4, height() - header - 4);
}

int AlignmentView::columnCount() const {
  return m_trace ? static_cast<int>(m_trace->regions.size()) : 0;
}

double AlignmentView::columnWidth() const {
  return matrixRect().width() / std::max(1, columnCount());
}

std::vector<double> AlignmentView::gridRowStarts() const {
  std::vector<double> xs;
  if (!m_trace) return xs;
  const GridShape g = gridShape(*m_trace);
  if (!g.isGrid()) return xs;
  for (int r = 0; r < g.rows; ++r)
    xs.push_back(matrixRect().left() + r * g.columns * columnWidth());
  return xs;
}

int AlignmentView::regionAt(const QPoint& p) const {
  if (!m_trace || columnCount() == 0 || !matrixRect().contains(p)) return -1;
  return std::min(static_cast<int>((p.x() - matrixRect().left()) / columnWidth()),
                  columnCount() - 1);
}

void AlignmentView::setAttentionSource(const QString& source) {
  if (source == m_source) return;
  m_source = source;
  update();
}

QString AlignmentView::hoverText(const QPoint& p) const {
  const int t = stepAt(p), i = regionAt(p);
  if (t < 0 || i < 0) return {};
  const auto& s = m_trace->steps[static_cast<size_t>(t)];
  QString text = tr("step %1 (%2), %3").arg(t + 1).arg(displayToken(s), regionName(*m_trace, i));
  const auto& alpha = shownAttention(*m_trace, m_source, static_cast<size_t>(t));
  if (i < static_cast<int>(alpha.size()))
    text += tr(": α = %1").arg(alpha[static_cast<size_t>(i)], 0, 'f', 4);
  return text;
}

bool AlignmentView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = hoverText(help->pos());
    QToolTip::showText(help->globalPos(), text.isEmpty() ? toolTip() : text, this);
    return true;
  }
  return QWidget::event(event);
}

int AlignmentView::stepAt(const QPoint& p) const {
  if (!m_trace || m_trace->steps.empty()) return -1;
  const QRectF r = matrixRect();
  if (!r.contains(p)) return -1;
  const double rowH = r.height() / static_cast<double>(m_trace->steps.size());
  return std::min(static_cast<int>((p.y() - r.top()) / rowH), int(m_trace->steps.size()) - 1);
}

std::vector<int> AlignmentView::labelledSteps() const {
  std::vector<int> steps;
  if (!m_trace || m_trace->steps.empty()) return steps;
  const int rows = static_cast<int>(m_trace->steps.size());
  const double rowH = matrixRect().height() / rows;
  const int every = std::max(1, static_cast<int>(std::ceil(fontMetrics().height() / rowH)));
  const double labelH = fontMetrics().height();
  double lastBottom = -1e9;
  for (int t = 0; t < rows; ++t) {
    // The current step always; the others on the grid when they clear the current one.
    const double centre = matrixRect().top() + (t + 0.5) * rowH;
    const bool current = t == m_step;
    const double currentCentre = matrixRect().top() + (m_step + 0.5) * rowH;
    const bool clearsCurrent = std::abs(centre - currentCentre) >= labelH;
    if (current || (t % every == 0 && clearsCurrent && centre - labelH / 2 >= lastBottom)) {
      steps.push_back(t);
      lastBottom = centre + labelH / 2;
    }
  }
  return steps;
}

void AlignmentView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  p.setPen(palette().color(QPalette::Text));
  const bool grid = m_trace && gridShape(*m_trace).isGrid();
  p.drawText(
      QRectF(kLabelW, 0, width() - kLabelW, kHeaderH), Qt::AlignLeft | Qt::AlignVCenter,
      grid ? tr("alignment (steps × cells, row by row)") : tr("alignment (steps × regions)"));
  if (!m_trace || m_trace->steps.empty()) return;
  const QRectF r = matrixRect();
  const size_t rows = m_trace->steps.size();
  const size_t cols = m_trace->regions.size();
  const double rowH = r.height() / static_cast<double>(rows);
  const double colW = r.width() / static_cast<double>(std::max<size_t>(1, cols));
  for (size_t t = 0; t < rows; ++t) {
    const auto& alpha = shownAttention(*m_trace, m_source, t);
    const double top = alpha.empty() ? 1.0 : *std::max_element(alpha.begin(), alpha.end());
    for (size_t i = 0; i < cols && i < alpha.size(); ++i)
      p.fillRect(QRectF(r.left() + i * colW, r.top() + t * rowH, colW + 0.5, rowH + 0.5),
                 heatColour(alpha[i] / std::max(top, heatFloor(alpha.size()))));
  }
  // A grid's rows: a line where each starts, its name above (shortened when the band is narrow).
  if (grid) {
    const GridShape g = gridShape(*m_trace);
    const double band = g.columns * colW;
    const std::vector<double> starts = gridRowStarts();
    for (size_t k = 0; k < starts.size(); ++k) {
      const QString full = tr("row %1").arg(k), brief = QString::number(k);
      const QString name = fontMetrics().horizontalAdvance(full) + 4 <= band ? full : brief;
      p.setPen(palette().color(QPalette::Text));
      p.drawText(QRectF(starts[k] + 2, kHeaderH, band - 2, kHeaderH),
                 Qt::AlignLeft | Qt::AlignVCenter, name);
      if (k == 0) continue;
      p.setPen(QPen(palette().color(QPalette::Base), 2));
      p.drawLine(QPointF(starts[k], r.top() - kHeaderH / 2.0), QPointF(starts[k], r.bottom()));
    }
  }
  // Token labels, as many as fit without overlapping (centred on their rows).
  const double labelH = fontMetrics().height();
  for (int t : labelledSteps()) {
    QFont f = font();
    f.setBold(t == m_step);
    p.setFont(f);
    p.setPen(palette().color(QPalette::Text));
    const double centre = r.top() + (t + 0.5) * rowH;
    p.drawText(QRectF(0, centre - labelH / 2, kLabelW - 4, labelH),
               Qt::AlignRight | Qt::AlignVCenter, displayToken(m_trace->steps[size_t(t)]));
  }
  if (m_step >= 0 && m_step < static_cast<int>(rows)) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(r.left(), r.top() + m_step * rowH, r.width(), rowH));
  }
}

void AlignmentView::mousePressEvent(QMouseEvent* event) {
  setFocus(Qt::MouseFocusReason);
  const int step = stepAt(event->position().toPoint());
  if (step >= 0) Q_EMIT stepClicked(step);
}

}  // namespace foveal::ui
