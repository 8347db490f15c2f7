#include "beam_list.h"

#include <QHeaderView>
#include <QSignalBlocker>
#include <algorithm>
#include <cmath>

#include "qt_convert.h"

namespace foveal::ui {

BeamList::BeamList(QWidget* parent) : QTreeWidget(parent) {
  setObjectName(QStringLiteral("beamList"));
  setColumnCount(ColumnCount);
  setHeaderLabels({tr("#"), tr("beam reading"), tr("log p")});
  setRootIsDecorated(false);
  setUniformRowHeights(true);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setTextElideMode(Qt::ElideRight);
  header()->setStretchLastSection(false);
  header()->setSectionResizeMode(RankColumn, QHeaderView::ResizeToContents);
  header()->setSectionResizeMode(ReadingColumn, QHeaderView::Stretch);
  header()->setSectionResizeMode(LogProbColumn, QHeaderView::ResizeToContents);
  setToolTip(
      tr("The beam search's best readings, each with the log-probability of its tokens: choose "
         "one to step through it"));
  connect(this, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    const int row = item ? indexOfTopLevelItem(item) : -1;
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
  for (int h = 0; h < int(m_trace->hypotheses.size()); ++h) {
    const auto& hyp = m_trace->hypotheses[size_t(h)];
    auto* item = new QTreeWidgetItem(this);
    item->setText(RankColumn, QString::number(h + 1));
    item->setText(ReadingColumn, qstr(hyp.reading));
    item->setText(LogProbColumn, QString::number(hyp.logProb, 'f', 3));
    item->setTextAlignment(LogProbColumn, Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(ReadingColumn, tr("\"%1\": log p %2, p %3")
                                        .arg(qstr(hyp.reading))
                                        .arg(hyp.logProb, 0, 'f', 4)
                                        .arg(std::exp(hyp.logProb), 0, 'g', 3));
  }
  setCurrentRow(m_trace->hypothesis);
  updateGeometry();
  show();
}

int BeamList::currentRow() const { return currentItem() ? indexOfTopLevelItem(currentItem()) : -1; }

void BeamList::setCurrentRow(int row) {
  if (auto* item = topLevelItem(row)) setCurrentItem(item);
}

QString BeamList::rowText(int row) const {
  const auto* item = topLevelItem(row);
  if (!item) return {};
  return QStringLiteral("%1  %2  %3")
      .arg(item->text(RankColumn), item->text(ReadingColumn), item->text(LogProbColumn));
}

QRect BeamList::rowRect(int row) const {
  const auto* item = topLevelItem(row);
  return item ? visualItemRect(item) : QRect();
}

QSize BeamList::sizeHint() const {
  // Up to five rows without scrolling; more scroll.
  const int rows = std::clamp(topLevelItemCount(), 1, 5);
  const int row = topLevelItemCount() > 0 ? visualItemRect(topLevelItem(0)).height() : 0;
  const int h = (row > 0 ? row : fontMetrics().height() + 4) * rows +
                header()->sizeHint().height() + 2 * frameWidth() + 2;
  return {QTreeWidget::sizeHint().width(), h};
}

}  // namespace foveal::ui
