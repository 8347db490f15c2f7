#include "model_list_model.h"

#include <QBrush>
#include <QDir>
#include <QFileInfo>

#include "error.h"
#include "model_session.h"
#include "qt_convert.h"

namespace foveal::ui {

ModelListModel::ModelListModel(QObject* parent) : QAbstractListModel(parent) {}

int ModelListModel::addModel(const QString& path, QString* error) {
  const QString canonical = QFileInfo(path).absoluteFilePath();
  for (size_t i = 0; i < m_entries.size(); ++i)
    if (m_entries[i].path == canonical && m_entries[i].session) return static_cast<int>(i);
  Entry e;
  e.path = canonical;
  try {
    e.session = core::ModelSession::open(path.toStdString());
    e.description = qstr(e.session->config().describe());
  } catch (const core::Error& ex) {
    e.error = QString::fromStdString(ex.what());
    if (error) *error = e.error;
  }
  int checked = 0;
  for (const auto& x : m_entries) checked += x.checked ? 1 : 0;
  e.checked = e.session && checked < kMaxCompared;
  const int row = static_cast<int>(m_entries.size());
  beginInsertRows({}, row, row);
  m_entries.push_back(std::move(e));
  endInsertRows();
  if (m_entries.back().checked) Q_EMIT comparedChanged();
  return row;
}

void ModelListModel::removeModel(int row) {
  if (row < 0 || row >= rowCount()) return;
  const bool wasChecked = m_entries[static_cast<size_t>(row)].checked;
  beginRemoveRows({}, row, row);
  m_entries.erase(m_entries.begin() + row);
  endRemoveRows();
  if (wasChecked) Q_EMIT comparedChanged();
}

void ModelListModel::addFolder(const QString& folder) {
  const QDir dir(folder);
  for (const QString& name : dir.entryList({QStringLiteral("*.fvm")}, QDir::Files, QDir::Name))
    addModel(dir.filePath(name));
}

std::shared_ptr<core::ModelSession> ModelListModel::session(int row) const {
  if (row < 0 || row >= rowCount()) return nullptr;
  return m_entries[static_cast<size_t>(row)].session;
}

QString ModelListModel::path(int row) const {
  return row >= 0 && row < rowCount() ? m_entries[static_cast<size_t>(row)].path : QString();
}

QString ModelListModel::displayName(int row) const {
  return QFileInfo(path(row)).completeBaseName();
}

std::vector<int> ModelListModel::comparedRows() const {
  std::vector<int> rows;
  for (size_t i = 0; i < m_entries.size(); ++i)
    if (m_entries[i].checked && m_entries[i].session) rows.push_back(static_cast<int>(i));
  return rows;
}

int ModelListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

QVariant ModelListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const auto& e = m_entries[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return displayName(index.row());
    case Qt::ToolTipRole:
      return e.error.isEmpty() ? e.description + QLatin1Char('\n') + e.path : e.error;
    case Qt::ForegroundRole:
      return e.error.isEmpty() ? QVariant() : QVariant(QBrush(QColor(180, 30, 30)));
    case Qt::CheckStateRole:
      return e.checked ? Qt::Checked : Qt::Unchecked;
    case PathRole:
      return e.path;
    case DescriptionRole:
      return e.description;
    case ErrorRole:
      return e.error;
    case LoadedRole:
      return static_cast<bool>(e.session);
    default:
      return {};
  }
}

bool ModelListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || role != Qt::CheckStateRole || index.row() >= rowCount()) return false;
  auto& e = m_entries[static_cast<size_t>(index.row())];
  const bool checked = value.toInt() == Qt::Checked;
  if (checked == e.checked) return true;
  if (checked && (!e.session || static_cast<int>(comparedRows().size()) >= kMaxCompared))
    return false;
  e.checked = checked;
  Q_EMIT dataChanged(index, index, {Qt::CheckStateRole});
  Q_EMIT comparedChanged();
  return true;
}

Qt::ItemFlags ModelListModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
  if (m_entries[static_cast<size_t>(index.row())].session) f |= Qt::ItemIsUserCheckable;
  return f;
}

}  // namespace foveal::ui
