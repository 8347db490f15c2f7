#include "dataset_model.h"

#include <QBrush>
#include <algorithm>

#include "base/error.h"

namespace foveal::ui {

namespace {
// Endless generated streams are browsed over a fixed window of entries.
constexpr size_t kEndlessWindow = 10000;
}  // namespace

DatasetModel::DatasetModel(QObject* parent) : QAbstractListModel(parent) {}

void DatasetModel::setDataset(core::data::DatasetPtr dataset) {
  beginResetModel();
  m_dataset = std::move(dataset);
  m_labels.clear();
  m_bad.clear();
  endResetModel();
  if (canFetchMore({})) fetchMore({});
}

int DatasetModel::total() const {
  if (!m_dataset) return 0;
  const size_t n =
      m_dataset->endless() ? std::min(m_dataset->size(), kEndlessWindow) : m_dataset->size();
  return static_cast<int>(std::min<size_t>(n, static_cast<size_t>(INT32_MAX)));
}

int DatasetModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_labels.size());
}

QVariant DatasetModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const auto row = static_cast<size_t>(index.row());
  switch (role) {
    case Qt::DisplayRole:
      return m_bad[row] ? QStringLiteral("#%1  (unreadable)").arg(row)
                        : QStringLiteral("#%1  %2").arg(row).arg(m_labels[row]);
    case Qt::ToolTipRole:
      return m_bad[row] ? m_labels[row] : QString::fromStdString(m_dataset->entryName(row));
    case Qt::ForegroundRole:
      return m_bad[row] ? QVariant(QBrush(QColor(180, 30, 30))) : QVariant();
    case IndexRole:
      return index.row();
    case LabelRole:
      return m_bad[row] ? QString() : m_labels[row];
    default:
      return {};
  }
}

bool DatasetModel::canFetchMore(const QModelIndex& parent) const {
  return !parent.isValid() && m_dataset && rowCount() < total();
}

void DatasetModel::fetchMore(const QModelIndex& parent) {
  if (!canFetchMore(parent)) return;
  const int first = rowCount();
  const int last = std::min(total(), first + kChunk) - 1;
  std::vector<QString> labels;
  std::vector<bool> bad;
  for (int i = first; i <= last; ++i) {
    try {
      labels.push_back(QString::fromStdString(m_dataset->label(static_cast<size_t>(i))));
      bad.push_back(false);
    } catch (const std::exception& e) {
      labels.push_back(QString::fromStdString(e.what()));
      bad.push_back(true);
    }
  }
  beginInsertRows({}, first, last);
  m_labels.insert(m_labels.end(), labels.begin(), labels.end());
  m_bad.insert(m_bad.end(), bad.begin(), bad.end());
  endInsertRows();
}

}  // namespace foveal::ui
