#include "error_filter_model.h"

#include "error_table_model.h"
#include "qt_convert.h"

namespace foveal::ui {

ErrorFilterModel::ErrorFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(ErrorTableModel::SortRole);
  setSortCaseSensitivity(Qt::CaseInsensitive);
}

void ErrorFilterModel::setTable(ErrorTableModel* table) {
  m_table = table;
  setSourceModel(table);
  // A new analysis: the confusion filter named cells of the old one.
  connect(table, &QAbstractItemModel::modelAboutToBeReset, this, [this] {
    m_confusionOn = false;
    m_confusionEntries.clear();
  });
}

void ErrorFilterModel::refilter() { invalidateFilter(); }

void ErrorFilterModel::setFocusModel(int model) {
  if (model == m_focus) return;
  m_focus = model;
  if (m_confusionOn) clearConfusion();  // the cell was the previous model's
  refilter();
}

void ErrorFilterModel::setStatus(Status status) {
  if (status == m_status) return;
  m_status = status;
  refilter();
}

void ErrorFilterModel::setLengthRange(int min, int max) {
  if (min == m_minLength && max == m_maxLength) return;
  m_minLength = min;
  m_maxLength = max;
  refilter();
}

bool ErrorFilterModel::setConfusion(const QString& truth, const QString& read) {
  const auto* a = m_table ? m_table->analysis() : nullptr;
  if (!a || m_focus < 0 || m_focus >= int(a->models.size())) return false;
  const auto& c = a->models[size_t(m_focus)].confusion;
  return setConfusionCell(c.indexOf(truth.toStdString()), c.indexOf(read.toStdString()));
}

bool ErrorFilterModel::setConfusionCell(int truthIndex, int readIndex) {
  const auto* a = m_table ? m_table->analysis() : nullptr;
  if (!a || m_focus < 0 || m_focus >= int(a->models.size())) return false;
  const auto& me = a->models[size_t(m_focus)];
  if (truthIndex < 0 || readIndex < 0 ||
      (truthIndex == me.confusion.gap() && readIndex == me.confusion.gap()))
    return false;
  const auto& images = me.confusion.images(truthIndex, readIndex);
  if (images.empty()) return false;
  m_confusionEntries.clear();
  for (size_t position : images) m_confusionEntries.insert(me.readings[position].index);
  m_confusionOn = true;
  m_confusionTruth = truthIndex;
  m_confusionRead = readIndex;
  refilter();
  return true;
}

void ErrorFilterModel::clearConfusion() {
  if (!m_confusionOn) return;
  m_confusionOn = false;
  m_confusionEntries.clear();
  refilter();
}

QString ErrorFilterModel::confusionText() const {
  const auto* a = m_table ? m_table->analysis() : nullptr;
  if (!m_confusionOn || !a) return {};
  const auto& c = a->models[size_t(m_focus)].confusion;
  const QString t = qstr(c.symbol(m_confusionTruth)), r = qstr(c.symbol(m_confusionRead));
  if (m_confusionTruth == c.gap()) return tr("\"%1\" inserted").arg(r);
  if (m_confusionRead == c.gap()) return tr("\"%1\" dropped").arg(t);
  if (m_confusionTruth == m_confusionRead) return tr("\"%1\" read right").arg(t);
  return tr("truth \"%1\" read as \"%2\"").arg(t, r);
}

void ErrorFilterModel::setText(const QString& text) {
  if (text == m_text) return;
  m_text = text;
  refilter();
}

std::vector<size_t> ErrorFilterModel::shownEntries() const {
  std::vector<size_t> out;
  out.reserve(size_t(rowCount()));
  for (int r = 0; r < rowCount(); ++r)
    out.push_back(m_table->datasetIndex(mapToSource(index(r, 0)).row()));
  return out;
}

bool ErrorFilterModel::filterAcceptsRow(int row, const QModelIndex& parent) const {
  if (parent.isValid() || !m_table) return false;
  const int models = m_table->modelCount();
  switch (m_status) {
    case All:
      break;
    case Wrong:
      if (m_table->position(row, m_focus) < 0 || m_table->correct(row, m_focus)) return false;
      break;
    case Right:
      if (!m_table->correct(row, m_focus)) return false;
      break;
    case WrongByAny:
    case WrongByAll:
    case Disagree: {
      const auto [right, read] = m_table->rightCount(row);
      if (m_status == WrongByAny && right == read) return false;
      if (m_status == WrongByAll && right > 0) return false;
      if (m_status == Disagree && (right == 0 || right == read)) return false;
      break;
    }
  }
  if (m_minLength > 0 || m_maxLength > 0) {
    const int length =
        m_table->data(m_table->index(row, ErrorTableModel::Length), ErrorTableModel::SortRole)
            .toInt();
    if (m_minLength > 0 && length < m_minLength) return false;
    if (m_maxLength > 0 && length > m_maxLength) return false;
  }
  if (m_confusionOn && !m_confusionEntries.count(m_table->datasetIndex(row))) return false;
  if (!m_text.isEmpty()) {
    bool found = m_table->truth(row).contains(m_text, Qt::CaseInsensitive);
    for (int m = 0; m < models && !found; ++m)
      found = m_table
                  ->data(m_table->index(row, m_table->column(m, ErrorTableModel::Reading)),
                         ErrorTableModel::SortRole)
                  .toString()
                  .contains(m_text, Qt::CaseInsensitive);
    if (!found) return false;
  }
  return true;
}

}  // namespace foveal::ui
