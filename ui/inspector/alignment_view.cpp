#include "alignment_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

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

QRectF AlignmentView::matrixRect() const {
  return QRectF(kLabelW, kHeaderH, width() - kLabelW - 4, height() - kHeaderH - 4);
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
  p.drawText(QRectF(kLabelW, 0, width() - kLabelW, kHeaderH), Qt::AlignLeft | Qt::AlignVCenter,
             tr("alignment (steps × regions)"));
  if (!m_trace || m_trace->steps.empty()) return;
  const QRectF r = matrixRect();
  const size_t rows = m_trace->steps.size();
  const size_t cols = m_trace->regions.size();
  const double rowH = r.height() / static_cast<double>(rows);
  const double colW = r.width() / static_cast<double>(std::max<size_t>(1, cols));
  for (size_t t = 0; t < rows; ++t) {
    const auto& s = m_trace->steps[t];
    const double top = s.alpha.empty() ? 1.0 : *std::max_element(s.alpha.begin(), s.alpha.end());
    for (size_t i = 0; i < cols && i < s.alpha.size(); ++i)
      p.fillRect(QRectF(r.left() + i * colW, r.top() + t * rowH, colW + 0.5, rowH + 0.5),
                 heatColour(s.alpha[i] / std::max(top, kHeatFloor)));
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
