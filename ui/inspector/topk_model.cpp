#include "topk_model.h"

#include "model/charset.h"

#include <QBrush>
#include <QFont>

#include "qt_convert.h"

namespace foveal::ui {

TopkModel::TopkModel(QObject* parent) : QAbstractTableModel(parent) {}

void TopkModel::setTrace(std::shared_ptr<const core::Trace> trace) {
  beginResetModel();
  m_trace = std::move(trace);
  m_step = 0;
  endResetModel();
}

void TopkModel::setStep(int step) {
  if (step == m_step) return;
  beginResetModel();
  m_step = step;
  endResetModel();
}

const core::TraceStep* TopkModel::current() const {
  if (!m_trace || m_step < 0 || m_step >= static_cast<int>(m_trace->steps.size())) return nullptr;
  return &m_trace->steps[static_cast<size_t>(m_step)];
}

int TopkModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid()) return 0;
  const auto* s = current();
  return s ? static_cast<int>(s->topk.size()) : 0;
}

int TopkModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant TopkModel::data(const QModelIndex& index, int role) const {
  const auto* s = current();
  if (!s || !index.isValid() || index.row() >= static_cast<int>(s->topk.size())) return {};
  const auto& t = s->topk[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      if (index.column() == TokenColumn) {
        if (t.token == core::Charset::kEndName) return tr("end");
        if (t.token == core::Charset::kBlankName) return tr("blank");
        return qstr(t.token);
      }
      return QString::number(t.prob, 'f', 3);
    case Qt::UserRole:
      return index.column() == TokenColumn ? QVariant(t.index) : QVariant(t.prob);
    case Qt::TextAlignmentRole:
      return index.column() == ProbabilityColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                 : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::FontRole:
      if (index.row() == 0) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    default:
      return {};
  }
}

QVariant TopkModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == TokenColumn ? tr("Token") : tr("p");
}

}  // namespace foveal::ui
