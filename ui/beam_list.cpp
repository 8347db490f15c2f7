#include "beam_list.h"

#include <QSignalBlocker>
#include <cmath>

#include "qt_convert.h"

namespace foveal::ui {

BeamList::BeamList(QWidget* parent) : QListWidget(parent) {
  setObjectName(QStringLiteral("beamList"));
  setSelectionMode(QAbstractItemView::SingleSelection);
  setToolTip(
      tr("The beam search's best readings with the log-probability of their tokens: choose one "
         "to step through it"));
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setTextElideMode(Qt::ElideMiddle);
  connect(this, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row >= 0 && m_trace && row != m_trace->hypothesis) Q_EMIT hypothesisChosen(row);
  });
  hide();
}

void BeamList::setTrace(std::shared_ptr<const core::Trace> trace) {
  m_trace = std::move(trace);
  const QSignalBlocker block(this);
  clear();
  if (!m_trace || m_trace->hypotheses.empty()) {
    hide();
    return;
  }
  for (int h = 0; h < int(m_trace->hypotheses.size()); ++h) addItem(rowText(h));
  setCurrentRow(m_trace->hypothesis);
  updateGeometry();
  show();
}

QString BeamList::rowText(int row) const {
  if (!m_trace || row < 0 || row >= int(m_trace->hypotheses.size())) return {};
  const auto& h = m_trace->hypotheses[size_t(row)];
  return tr("%1.  \"%2\"   log p %3  (p %4)")
      .arg(row + 1)
      .arg(qstr(h.reading))
      .arg(h.logProb, 0, 'f', 3)
      .arg(std::exp(h.logProb), 0, 'g', 3);
}

QSize BeamList::sizeHint() const {
  // Up to five rows without scrolling; more scroll.
  const int rows = std::clamp(count(), 1, 5);
  const int row = sizeHintForRow(0) > 0 ? sizeHintForRow(0) : fontMetrics().height() + 4;
  return {QListWidget::sizeHint().width(), rows * row + 2 * frameWidth() + 2};
}

}  // namespace foveal::ui
