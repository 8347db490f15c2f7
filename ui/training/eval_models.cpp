#include "eval_models.h"

#include <QColor>
#include <QFileInfo>
#include <QFont>
#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <cmath>
#include <limits>

namespace foveal::ui {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A number of eval's JSON; NaN where it holds none (null, absent).
double numberOf(const QJsonValue& v) { return v.isDouble() ? v.toDouble() : kNaN; }
}  // namespace

EvalResultModel::EvalResultModel(QObject* parent) : QAbstractTableModel(parent) {}

QStringList EvalResultModel::protocolColumns() {
  QStringList c;
  for (const char* prefix : {"n", "r"})
    for (int len : {5, 7, 9, 11, 13}) c << QStringLiteral("%1%2").arg(prefix).arg(len);
  return c;
}

QString EvalResultModel::protocolKey(const QString& spec) {
  static const QRegularExpression len(QStringLiteral("(?:^digits:|,)len=(\\d+)"));
  if (!spec.startsWith(QLatin1String("digits:"))) return {};
  const auto m = len.match(spec);
  if (!m.hasMatch()) return {};
  const bool rotated = spec.contains(QRegularExpression(QStringLiteral("[:,]rotated(,|$)")));
  return (rotated ? QStringLiteral("r") : QStringLiteral("n")) + m.captured(1);
}

void EvalResultModel::clear() {
  beginResetModel();
  m_rows.clear();
  m_headers.clear();
  m_skipped = m_counted = 0;
  endResetModel();
}

QString EvalResultModel::summary(const QString& model, int misread) const {
  QString text;
  if (m_counted == 0 && m_skipped > 0)
    return tr("%1 could read none of the %n entries: all were skipped (their labels use "
              "characters outside the model's charset, or their images cannot be read).",
              nullptr, int(m_skipped))
        .arg(model);
  text =
      tr("%1: %n misread image(s) listed below (double-click one to inspect it)", nullptr, misread)
          .arg(model);
  if (m_skipped > 0)
    text +=
        tr("; %n entry(ies) skipped: unreadable by this model (labels outside its charset, "
           "or undecodable images)",
           nullptr, int(m_skipped));
  return text;
}

QString EvalResultModel::setJson(const QByteArray& json, bool digitProtocol) {
  QJsonParseError err;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
  if (doc.isNull()) return tr("cannot read eval's output: %1").arg(err.errorString());
  std::vector<QJsonObject> reports;
  if (doc.isArray())
    for (const auto& v : doc.array()) reports.push_back(v.toObject());
  else if (doc.isObject())
    reports.push_back(doc.object());
  if (reports.empty()) return tr("eval reported nothing");

  beginResetModel();
  m_rows.clear();
  m_protocol = digitProtocol;
  m_skipped = m_counted = 0;
  for (const auto& r : reports)
    for (const auto& d : r.value(QStringLiteral("datasets")).toArray()) {
      m_skipped += d.toObject().value(QStringLiteral("skipped")).toInteger();
      m_counted += d.toObject().value(QStringLiteral("count")).toInteger();
    }
  if (digitProtocol)
    setProtocolRows(reports);
  else
    setDatasetRows(reports.front());
  endResetModel();
  return {};
}

void EvalResultModel::setProtocolRows(const std::vector<QJsonObject>& reports) {
  // Then localisation pooled over every image (absent without character boxes).
  m_headers = QStringList{tr("model")} + protocolColumns() +
              QStringList{tr("mean"), tr("pointing %"), tr("IoU")};
  const QStringList cols = protocolColumns();
  for (const auto& r : reports) {
    Row row;
    row.name = QFileInfo(r.value(QStringLiteral("model")).toString()).fileName();
    row.values.assign(size_t(cols.size() + 3), kNaN);
    double sum = 0;
    int n = 0;
    for (const auto& d : r.value(QStringLiteral("datasets")).toArray()) {
      const QJsonObject o = d.toObject();
      const int c = cols.indexOf(protocolKey(o.value(QStringLiteral("name")).toString()));
      if (c < 0 || o.value(QStringLiteral("count")).toDouble() <= 0) continue;
      row.values[size_t(c)] = 100.0 * numberOf(o.value(QStringLiteral("accuracy")));
    }
    for (int c = 0; c < cols.size(); ++c)
      if (std::isfinite(row.values[size_t(c)])) {
        sum += row.values[size_t(c)];
        ++n;
      }
    // The mean of Table 1 is over all ten settings: only shown when every one was measured.
    if (n == cols.size()) row.values[size_t(cols.size())] = sum / n;
    const QJsonObject all = r.value(QStringLiteral("overall")).toObject();
    row.values[size_t(cols.size() + 1)] = 100.0 * numberOf(all.value(QStringLiteral("pointing")));
    row.values[size_t(cols.size() + 2)] = numberOf(all.value(QStringLiteral("mean_iou")));
    m_rows.push_back(std::move(row));
  }
}

void EvalResultModel::setDatasetRows(const QJsonObject& r) {
  m_headers = {tr("dataset"),    tr("images"),  tr("accuracy %"),
               tr("norm. ED"),   tr("entropy"), tr("skipped"),
               tr("pointing %"), tr("IoU"),     tr("pointing % (read right)")};
  auto rowOf = [&](const QString& name, const QJsonObject& o, bool summary) {
    // No image read: no accuracy (not 0.00); the skipped column says why.
    const bool none = !(numberOf(o.value(QStringLiteral("count"))) > 0);
    const QJsonValue skipped = o.value(QStringLiteral("skipped"));
    return Row{name,
               {numberOf(o.value(QStringLiteral("count"))),
                none ? kNaN : 100.0 * numberOf(o.value(QStringLiteral("accuracy"))),
                none ? kNaN : numberOf(o.value(QStringLiteral("ned"))),
                none ? kNaN : numberOf(o.value(QStringLiteral("entropy"))),
                skipped.isDouble() ? skipped.toDouble() : kNaN,
                // Localisation: only where the data knows its character boxes.
                100.0 * numberOf(o.value(QStringLiteral("pointing"))),
                numberOf(o.value(QStringLiteral("mean_iou"))),
                100.0 * numberOf(o.value(QStringLiteral("pointing_correct")))},
               summary};
  };
  const QJsonArray sets = r.value(QStringLiteral("datasets")).toArray();
  for (const auto& d : sets) {
    const QJsonObject o = d.toObject();
    m_rows.push_back(rowOf(o.value(QStringLiteral("name")).toString(), o, false));
  }
  if (sets.size() != 1)
    m_rows.push_back(rowOf(tr("all"), r.value(QStringLiteral("overall")).toObject(), true));
  for (const auto& l : r.value(QStringLiteral("by_length")).toArray()) {
    const QJsonObject o = l.toObject();
    m_rows.push_back(
        rowOf(tr("length %1").arg(o.value(QStringLiteral("length")).toInt()), o, false));
  }
}

int EvalResultModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}
int EvalResultModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_headers.size());
}

QVariant EvalResultModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& row = m_rows[size_t(index.row())];
  if (index.column() == 0) {
    if (role == Qt::DisplayRole) return row.name;
    if (role == Qt::FontRole && row.summary) {
      QFont f;
      f.setBold(true);
      return f;
    }
    return {};
  }
  const size_t c = size_t(index.column() - 1);
  if (c >= row.values.size()) return {};
  const double v = row.values[c];
  if (role == Qt::UserRole) return v;
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  if (!std::isfinite(v)) return QStringLiteral("—");
  if (m_protocol)
    return QString::number(v, 'f', c + 1 == row.values.size() ? 3 : 1);  // IoU: 3 decimals
  switch (c) {
    case 0:
    case 4:
      return QString::number(qint64(v));
    case 1:
    case 5:
    case 7:
      return QString::number(v, 'f', 2);
    default:
      return QString::number(v, 'f', 4);
  }
}

QVariant EvalResultModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 ||
      section >= m_headers.size())
    return {};
  return m_headers[section];
}

FailureModel::FailureModel(QObject* parent) : QAbstractTableModel(parent) {}

void FailureModel::clear() {
  beginResetModel();
  m_rows.clear();
  endResetModel();
}

int FailureModel::setTsv(const QString& tsv) {
  beginResetModel();
  m_rows.clear();
  const QStringList lines = tsv.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  for (int i = 1; i < lines.size(); ++i) {
    const QStringList f = lines[i].split(QLatin1Char('\t'));
    if (f.size() < 5) continue;
    bool ok = false;
    const qint64 index = f[1].toLongLong(&ok);
    if (!ok) continue;
    m_rows.push_back({f[0], index, f[2], f[3], f[4]});
  }
  endResetModel();
  return static_cast<int>(m_rows.size());
}

int FailureModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}
int FailureModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant FailureModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Failure& f = m_rows[size_t(index.row())];
  if (role == Qt::ToolTipRole) return tr("Double-click to open it in the inspector");
  if (role == Qt::ForegroundRole && index.column() == Reading) return QColor(198, 40, 40);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Dataset:
      return f.dataset;
    case Entry:
      return f.entry.isEmpty() ? QString::number(f.index) : f.entry;
    case Truth:
      return f.truth;
    case Reading:
      return f.prediction;
    default:
      return {};
  }
}

QVariant FailureModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Dataset:
      return tr("dataset");
    case Entry:
      return tr("entry");
    case Truth:
      return tr("truth");
    case Reading:
      return tr("read");
    default:
      return {};
  }
}

}  // namespace foveal::ui
