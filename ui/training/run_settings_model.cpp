#include "run_settings_model.h"
#include "run/run_folder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>

#include "run_list_model.h"

namespace foveal::ui {

namespace {
// Shown first when they differ: what people compare runs by.
const QStringList kPreferred = {QStringLiteral("preset"),        QStringLiteral("model.attention"),
                                QStringLiteral("model.context"), QStringLiteral("model.width"),
                                QStringLiteral("batch_size"),    QStringLiteral("lambda_r"),
                                QStringLiteral("learning_rate"), QStringLiteral("lr"),
                                QStringLiteral("seed"),          QStringLiteral("warm_start"),
                                QStringLiteral("iterations")};

void flatten(const QJsonValue& v, const QString& key, std::map<QString, QVariant>& out) {
  if (v.isObject()) {
    const QJsonObject o = v.toObject();
    for (auto it = o.begin(); it != o.end(); ++it)
      flatten(it.value(), key.isEmpty() ? it.key() : key + QLatin1Char('.') + it.key(), out);
  } else if (v.isArray()) {
    QStringList parts;
    for (const auto& e : v.toArray())
      parts << (e.isString() ? e.toString()
                             : QString::fromUtf8(QJsonDocument(QJsonArray{e})
                                                     .toJson(QJsonDocument::Compact)
                                                     .mid(1)
                                                     .chopped(1)));
    out[key] = parts.join(QStringLiteral(", "));
  } else if (v.isDouble()) {
    out[key] = v.toDouble();
  } else if (v.isBool()) {
    out[key] = v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
  } else if (v.isString()) {
    out[key] = v.toString();
  } else if (v.isNull()) {
    out[key] = QStringLiteral("null");
  }
}
}  // namespace

RunSettingsModel::RunSettingsModel(RunListModel* runs, QObject* parent)
    : QAbstractTableModel(parent), m_runs(runs) {
  connect(runs, &RunListModel::shownChanged, this, &RunSettingsModel::rebuild);
  connect(runs, &QAbstractItemModel::rowsInserted, this, &RunSettingsModel::rebuild);
  connect(runs, &QAbstractItemModel::rowsRemoved, this, &RunSettingsModel::rebuild);
  connect(runs, &QAbstractItemModel::modelReset, this, &RunSettingsModel::rebuild);
  connect(runs, &QAbstractItemModel::dataChanged, this, [this] {
    // Best accuracies move as runs evaluate; settings change only with config.json.
    if (!m_rows.empty())
      Q_EMIT dataChanged(index(0, columnCount() - 1), index(rowCount() - 1, columnCount() - 1));
  });
  rebuild();
}

const RunSettingsModel::Settings& RunSettingsModel::settingsOf(const QString& dir) {
  const QString path = QDir(dir).filePath(QString::fromLatin1(core::run_folder::kConfig));
  const QDateTime modified = QFileInfo(path).lastModified();
  Settings& s = m_cache[dir];
  if (s.modified == modified && modified.isValid()) return s;
  s = Settings{modified, {}};
  QFile f(path);
  if (f.open(QIODevice::ReadOnly))
    flatten(QJsonDocument::fromJson(f.readAll()).object(), {}, s.values);
  return s;
}

void RunSettingsModel::rebuild() {
  beginResetModel();
  m_rows.clear();
  std::vector<const Settings*> settings;
  for (int r = 0; r < m_runs->rowCount(); ++r) {
    if (!m_runs->isShown(r)) continue;
    m_rows.push_back({r, {}, 0});
    settings.push_back(&settingsOf(m_runs->dir(r)));
  }
  // The keys whose values are not all equal (a key missing from a run counts as a value).
  std::map<QString, bool> differs;
  for (const Settings* s : settings)
    for (const auto& [key, value] : s->values) differs.emplace(key, false);
  for (auto& [key, d] : differs) {
    const QVariant* first = nullptr;
    bool missing = false;
    for (const Settings* s : settings) {
      const auto it = s->values.find(key);
      if (it == s->values.end()) {
        missing = true;
        continue;
      }
      if (!first)
        first = &it->second;
      else if (*first != it->second)
        d = true;
    }
    d = d || (missing && first);
  }
  m_keys.clear();
  for (const QString& k : kPreferred)
    if (differs.count(k) && differs[k]) m_keys << k;
  for (const auto& [key, d] : differs)
    if (d && !m_keys.contains(key)) m_keys << key;
  for (size_t i = 0; i < m_rows.size(); ++i)
    for (const QString& k : m_keys) {
      const auto it = settings[i]->values.find(k);
      m_rows[i].values.push_back(it == settings[i]->values.end() ? QVariant() : it->second);
    }
  endResetModel();
}

int RunSettingsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunSettingsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_keys.size()) + 2;
}

QVariant RunSettingsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& row = m_rows[size_t(index.row())];
  const int c = index.column();
  if (c == 0) {
    if (role == Qt::DisplayRole || role == Qt::EditRole) return m_runs->name(row.run);
    if (role == Qt::DecorationRole) return m_runs->colour(row.run);
    if (role == Qt::ToolTipRole) return m_runs->dir(row.run);
    return {};
  }
  if (c == columnCount() - 1) {
    const auto log = m_runs->log(row.run);
    const double best = log ? log->bestAccuracy() : std::nan("");
    if (role == Qt::EditRole) return std::isfinite(best) ? best : -1.0;  // sorts last
    if (role == Qt::DisplayRole)
      return std::isfinite(best) ? QStringLiteral("%1%").arg(100 * best, 0, 'f', 2)
                                 : QStringLiteral("—");
    if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  const QVariant& v = row.values[size_t(c - 1)];
  if (role == Qt::EditRole) return v;
  if (role == Qt::DisplayRole) return v.isValid() ? v.toString() : QStringLiteral("—");
  if (role == Qt::TextAlignmentRole && v.typeId() == QMetaType::Double)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant RunSettingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == 0) return tr("Run");
  if (section == columnCount() - 1) return tr("Best acc.");
  return section - 1 < m_keys.size() ? m_keys[section - 1] : QVariant();
}

}  // namespace foveal::ui
