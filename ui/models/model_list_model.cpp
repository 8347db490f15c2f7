#include "model_list_model.h"
#include "model_names.h"

#include <QBrush>
#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "base/error.h"
#include "engines/tesseract_spec.h"
#include "formats/dtrb_charset_needed.h"
#include "qt_convert.h"
#include "trace/model_session.h"

namespace foveal::ui {

namespace {
// A model file by its absolute path; an engine spec (tesseract:eng) as it is.
QString canonicalModelPath(const QString& path) {
  return core::isTesseractSpec(path.toStdString()) ? path : QFileInfo(path).absoluteFilePath();
}
}  // namespace

ModelListModel::ModelListModel(QObject* parent) : QAbstractListModel(parent) {
  // Loading is disk- and memory-bound: two at a time keep a folder of samples quick without
  // starving the trace runner of cores.
  m_pool.setMaxThreadCount(2);
}

ModelListModel::~ModelListModel() { m_pool.waitForDone(); }

void ModelListModel::setImportOptions(const QString& path, const core::ImportOptions& options) {
  m_options[canonicalModelPath(path)] = options;
}

ModelListModel::LoadResult ModelListModel::load(const QString& path,
                                                const core::ImportOptions& options) {
  LoadResult r;
  QString holds;  // what the file holds, for the question
  try {
    r.session = core::ModelSession::open(path.toStdString(), options);
    r.description = qstr(r.session->describe());
    return r;
  } catch (const core::DtrbCharsetNeeded& ex) {
    r.error = QString::fromStdString(ex.what());
    r.optionsNeeded = true;
    holds = qstr(ex.architecture);
  } catch (const std::exception& ex) {
    r.error = QString::fromStdString(ex.what());
    if (!r.error.contains(path)) r.error = QObject::tr("%1: %2").arg(path, r.error);
  }
  r.session.reset();
  // An error that names an option of the file's format (--character has 10 characters, ...):
  // the answer given was wrong, or one is needed. Only then is the file read again, to say which
  // format it is and why.
  if (core::isTesseractSpec(path.toStdString()) ||
      !(r.optionsNeeded || r.error.contains(QLatin1String("--"))))
    return r;
  ImportQuestion q = recogniseImportFile(path, options);
  const auto forced = options.find(core::kFormatOption);
  const QString used = forced != options.end() ? qstr(forced->second) : q.format;
  if (!r.optionsNeeded && optionNamedIn(r.error, used).isEmpty()) return r;
  q.message = r.error;
  q.description = holds;
  r.optionsNeeded = true;
  r.question = std::move(q);
  return r;
}

int ModelListModel::checkedCount() const {
  int n = 0;
  for (const auto& e : m_entries) n += e.checked ? 1 : 0;
  return n;
}

ModelId ModelListModel::addModel(const QString& path, QString* error) {
  const QString canonical = canonicalModelPath(path);
  for (size_t i = 0; i < m_entries.size(); ++i)
    if (m_entries[i].path == canonical && m_entries[i].session) return m_entries[i].id;
  Entry e;
  e.id = m_nextId++;
  e.path = canonical;
  auto it = m_options.find(canonical);
  LoadResult r = load(path, it == m_options.end() ? core::ImportOptions{} : it->second);
  e.session = std::move(r.session);
  e.description = r.description;
  e.error = r.error;
  if (error && !e.error.isEmpty()) *error = e.error;
  e.checked = e.session && checkedCount() < kMaxCompared;
  const ModelId id = e.id;
  const int row = static_cast<int>(m_entries.size());
  beginInsertRows({}, row, row);
  m_entries.push_back(std::move(e));
  endInsertRows();
  if (row > 0) Q_EMIT dataChanged(index(0), index(row - 1), {Qt::DisplayRole});  // shared names
  if (m_entries.back().checked) Q_EMIT comparedChanged();
  return id;
}

void ModelListModel::startLoad(Entry& e) {
  e.loading = true;
  e.error.clear();
  const ModelId id = e.id;
  auto* watcher = new QFutureWatcher<LoadResult>(this);
  connect(watcher, &QFutureWatcher<LoadResult>::finished, this, [this, watcher, id] {
    watcher->deleteLater();
    if (watcher->future().resultCount() == 0) return;
    onLoaded(id, watcher->result());
  });
  auto it = m_options.find(e.path);
  watcher->setFuture(QtConcurrent::run(&m_pool, &ModelListModel::load, e.path,
                                       it == m_options.end() ? core::ImportOptions{} : it->second));
}

ModelId ModelListModel::loadModel(const QString& path) {
  const QString canonical = canonicalModelPath(path);
  for (size_t i = 0; i < m_entries.size(); ++i) {
    Entry& e = m_entries[i];
    if (e.path != canonical) continue;
    if (e.session || e.loading) return e.id;
    e.checked = checkedCount() < kMaxCompared;  // a failed row is never checked
    startLoad(e);
    const int row = static_cast<int>(i);
    Q_EMIT dataChanged(index(row), index(row));
    return e.id;
  }
  Entry e;
  e.id = m_nextId++;
  e.path = canonical;
  e.checked = checkedCount() < kMaxCompared;  // decided now: list order, not load order
  const ModelId id = e.id;
  const int row = static_cast<int>(m_entries.size());
  beginInsertRows({}, row, row);
  m_entries.push_back(std::move(e));
  endInsertRows();
  if (row > 0) Q_EMIT dataChanged(index(0), index(row - 1), {Qt::DisplayRole});  // shared names
  startLoad(m_entries.back());
  return id;
}

void ModelListModel::onLoaded(ModelId id, const LoadResult& result) {
  const int row = rowOf(id);
  if (row < 0) return;  // removed while it loaded
  Entry& e = m_entries[static_cast<size_t>(row)];
  e.loading = false;
  e.session = result.session;
  e.description = result.description;
  e.error = result.error;
  if (!e.session) e.checked = false;
  const bool ok = static_cast<bool>(e.session);
  const bool checked = e.checked;
  const QString error = e.error;
  Q_EMIT dataChanged(index(row), index(row));
  if (!ok) {
    if (result.optionsNeeded)
      Q_EMIT optionsNeeded(id, result.question);
    else
      Q_EMIT loadFailed(id, error);
    return;
  }
  Q_EMIT modelLoaded(id);
  if (checked) Q_EMIT comparedChanged();
}

void ModelListModel::removeModel(int row) {
  if (row < 0 || row >= rowCount()) return;
  const auto& e = m_entries[static_cast<size_t>(row)];
  const bool wasCompared = e.checked && e.session;
  beginRemoveRows({}, row, row);
  m_entries.erase(m_entries.begin() + row);
  endRemoveRows();
  if (rowCount() > 0) Q_EMIT dataChanged(index(0), index(rowCount() - 1), {Qt::DisplayRole});
  if (wasCompared) Q_EMIT comparedChanged();
}

void ModelListModel::addFolder(const QString& folder) {
  const QDir dir(folder);
  for (const QString& name : dir.entryList({QStringLiteral("*.fvm")}, QDir::Files, QDir::Name))
    loadModel(dir.filePath(name));
}

ModelId ModelListModel::idAt(int row) const {
  return row >= 0 && row < rowCount() ? m_entries[static_cast<size_t>(row)].id : 0;
}

int ModelListModel::rowOf(ModelId id) const {
  for (size_t i = 0; id != 0 && i < m_entries.size(); ++i)
    if (m_entries[i].id == id) return static_cast<int>(i);
  return -1;
}

ModelId ModelListModel::idOf(const QString& path) const {
  if (path.isEmpty()) return 0;
  const QString canonical = canonicalModelPath(path);
  for (const auto& e : m_entries)
    if (e.path == canonical) return e.id;
  return 0;
}

std::shared_ptr<core::ModelSession> ModelListModel::session(int row) const {
  if (row < 0 || row >= rowCount()) return nullptr;
  return m_entries[static_cast<size_t>(row)].session;
}

QString ModelListModel::path(int row) const {
  return row >= 0 && row < rowCount() ? m_entries[static_cast<size_t>(row)].path : QString();
}

QString ModelListModel::displayName(int row) const {
  QStringList all;
  for (int r = 0; r < rowCount(); ++r) all << path(r);
  return modelDisplayName(path(row), all);
}

void ModelListModel::setCompared(const QStringList& paths) {
  QStringList wanted;
  for (const QString& p : paths) wanted << canonicalModelPath(p);
  int n = 0;
  bool changed = false;
  for (auto& e : m_entries) {
    const bool on = wanted.contains(e.path) && n < kMaxCompared;
    n += on ? 1 : 0;
    changed = changed || on != e.checked;
    e.checked = on;
  }
  if (!changed) return;
  Q_EMIT dataChanged(index(0), index(rowCount() - 1), {Qt::CheckStateRole});
  Q_EMIT comparedChanged();
}

bool ModelListModel::isLoading(int row) const {
  return row >= 0 && row < rowCount() && m_entries[static_cast<size_t>(row)].loading;
}

int ModelListModel::loadingCount() const {
  int n = 0;
  for (const auto& e : m_entries) n += e.loading ? 1 : 0;
  return n;
}

QStringList ModelListModel::checkedPaths() const {
  QStringList out;
  for (const auto& e : m_entries)
    if (e.checked && (e.session || e.loading)) out << e.path;
  return out;
}

std::vector<int> ModelListModel::comparedRows() const {
  std::vector<int> rows;
  for (size_t i = 0; i < m_entries.size(); ++i)
    if (m_entries[i].checked && m_entries[i].session) rows.push_back(static_cast<int>(i));
  return rows;
}

std::vector<ModelId> ModelListModel::comparedIds() const {
  std::vector<ModelId> ids;
  for (int row : comparedRows()) ids.push_back(idAt(row));
  return ids;
}

int ModelListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

QVariant ModelListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const auto& e = m_entries[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return e.loading ? tr("%1 (loading...)").arg(displayName(index.row()))
                       : displayName(index.row());
    case Qt::ToolTipRole:
      if (e.loading) return tr("Loading %1 ...").arg(e.path);
      return e.error.isEmpty() ? e.description + QLatin1Char('\n') + e.path : e.error;
    case Qt::ForegroundRole:
      if (e.loading) return QBrush(QColor(120, 120, 120));
      return e.error.isEmpty() ? QVariant() : QVariant(QBrush(QColor(180, 30, 30)));
    case Qt::CheckStateRole:
      return e.checked && !e.loading ? Qt::Checked : Qt::Unchecked;
    case PathRole:
      return e.path;
    case DescriptionRole:
      return e.description;
    case ErrorRole:
      return e.error;
    case LoadedRole:
      return static_cast<bool>(e.session);
    case LoadingRole:
      return e.loading;
    default:
      return {};
  }
}

bool ModelListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || role != Qt::CheckStateRole || index.row() >= rowCount()) return false;
  auto& e = m_entries[static_cast<size_t>(index.row())];
  const bool checked = value.toInt() == Qt::Checked;
  if (checked == e.checked) return true;
  if (checked && !e.session) return false;
  if (checked && checkedCount() >= kMaxCompared) {
    Q_EMIT compareLimitReached();
    return false;
  }
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
