#include "error_table_model.h"
#include "model_names.h"

#include <QColor>
#include <QFileInfo>
#include <cmath>

#include "qt_convert.h"
#include "trace/attribution.h"

namespace foveal::ui {

namespace {
const QColor kWrong(198, 40, 40);
const QColor kRight(46, 125, 50);
const QColor kGuessed(178, 106, 0);

// The names the whole window uses (model_names.h), told apart among the analysis's models.
QString modelName(const core::train::ErrorAnalysis* a, const std::string& path) {
  QStringList all;
  if (a)
    for (const auto& m : a->models) all << qstr(m.model);
  return modelDisplayName(qstr(path), all);
}
}  // namespace

ErrorTableModel::ErrorTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ErrorTableModel::setAnalysis(std::shared_ptr<const core::train::ErrorAnalysis> analysis,
                                  core::data::DatasetPtr dataset) {
  beginResetModel();
  m_analysis = std::move(analysis);
  m_dataset = std::move(dataset);
  m_entries = m_analysis ? m_analysis->entries() : std::vector<size_t>();
  m_thumbnails.clear();
  endResetModel();
}

void ErrorTableModel::clear() { setAnalysis(nullptr, nullptr); }

int ErrorTableModel::modelCount() const {
  return m_analysis ? static_cast<int>(m_analysis->models.size()) : 0;
}

// The models' readings side by side, then who read it right, then each other field side by side.
int ErrorTableModel::column(int model, ModelColumn field) const {
  const int m = modelCount();
  if (field == Reading) return FixedColumns + model;
  return FixedColumns + m + (m > 1 ? 1 : 0) + (field - 1) * m + model;
}

int ErrorTableModel::rightColumn() const {
  return modelCount() > 1 ? FixedColumns + modelCount() : -1;
}

bool ErrorTableModel::modelField(int col, int* model, ModelColumn* field) const {
  const int m = modelCount();
  if (m == 0 || col < FixedColumns || col == rightColumn() || col >= columnCount()) return false;
  int k = col - FixedColumns;
  if (k < m) {
    *model = k;
    *field = Reading;
    return true;
  }
  k -= m + (m > 1 ? 1 : 0);
  *model = k % m;
  *field = static_cast<ModelColumn>(1 + k / m);
  return true;
}

int ErrorTableModel::rowOf(size_t datasetIndex) const {
  const auto it = std::lower_bound(m_entries.begin(), m_entries.end(), datasetIndex);
  return it != m_entries.end() && *it == datasetIndex ? int(it - m_entries.begin()) : -1;
}

int ErrorTableModel::position(int row, int model) const {
  if (!m_analysis || row < 0 || row >= rowCount() || model < 0 || model >= modelCount()) return -1;
  return m_analysis->models[size_t(model)].positionOf(m_entries[size_t(row)]);
}

const core::train::ImageReading* ErrorTableModel::reading(int row, int model) const {
  const int p = position(row, model);
  return p < 0 ? nullptr : &m_analysis->models[size_t(model)].readings[size_t(p)];
}

bool ErrorTableModel::correct(int row, int model) const {
  const int p = position(row, model);
  return p >= 0 && m_analysis->models[size_t(model)].errors[size_t(p)].correct;
}

std::pair<int, int> ErrorTableModel::rightCount(int row) const {
  int right = 0, read = 0;
  for (int m = 0; m < modelCount(); ++m)
    if (position(row, m) >= 0) {
      ++read;
      right += correct(row, m) ? 1 : 0;
    }
  return {right, read};
}

QString ErrorTableModel::truth(int row) const {
  for (int m = 0; m < modelCount(); ++m)
    if (const auto* r = reading(row, m)) return qstr(r->truth);
  return {};
}

QImage ErrorTableModel::thumbnail(int row) const {
  if (!m_dataset || row < 0 || row >= rowCount()) return {};
  if (const QImage* cached = m_thumbnails.object(row)) return *cached;
  QImage thumb;
  try {
    const auto sample = m_dataset->get(m_entries[size_t(row)]);
    thumb =
        toQImage(sample.image).scaled(kThumbnail, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  } catch (const std::exception&) {
    return {};  // the reading's row still says what it can; the image is just not shown
  }
  m_thumbnails.insert(row, new QImage(thumb), 1);
  return thumb;
}

int ErrorTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int ErrorTableModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || !m_analysis) return 0;
  return FixedColumns + modelCount() * ModelColumns + (modelCount() > 1 ? 1 : 0);
}

QVariant ErrorTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const int row = index.row(), col = index.column();
  if (role == DatasetIndexRole) return qulonglong(m_entries[size_t(row)]);
  if (col < FixedColumns) return fixedData(row, static_cast<FixedColumn>(col), role);
  if (col == rightColumn()) return rightData(row, role);
  int model = 0;
  ModelColumn field = Reading;
  if (!modelField(col, &model, &field)) return {};
  const int p = position(row, model);
  if (p < 0) {
    if (role == Qt::DisplayRole) return QStringLiteral("—");
    if (role == Qt::ToolTipRole)
      return tr("%1 skipped this entry (it cannot read it)")
          .arg(modelName(m_analysis.get(), m_analysis->models[size_t(model)].model));
    if (role == SortRole) return field == Reading ? QVariant(QString()) : QVariant(-1.0);
    return {};
  }
  const auto& me = m_analysis->models[size_t(model)];
  const auto& r = me.readings[size_t(p)];
  const auto& e = me.errors[size_t(p)];
  if (role == Qt::TextAlignmentRole && field != Reading)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && field == Reading) return e.correct ? kRight : kWrong;
  return field == ImageShare ? imageShareData(e, role)
         : field == Doubt    ? doubtData(r, role)
                             : readingData(r, e, field, role);
}

QVariant ErrorTableModel::fixedData(int row, FixedColumn col, int role) const {
  const core::train::ImageReading* any = nullptr;
  int length = 0;
  for (int m = 0; m < modelCount() && !any; ++m)
    if ((any = reading(row, m)))
      length = m_analysis->models[size_t(m)].errors[size_t(position(row, m))].length;
  switch (col) {
    case Image:
      if (role == Qt::DecorationRole) return thumbnail(row);
      if (role == Qt::SizeHintRole) return kThumbnail + QSize(6, 4);
      if (role == SortRole) return qulonglong(m_entries[size_t(row)]);
      if (role == Qt::ToolTipRole) return tr("Double-click to open it at its first wrong step");
      return {};
    case Entry:
      if (role == Qt::DisplayRole) return QString::number(m_entries[size_t(row)]);
      if (role == SortRole) return qulonglong(m_entries[size_t(row)]);
      if (role == Qt::ToolTipRole && any) return qstr(any->entry);
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case Truth:
      if (role == Qt::DisplayRole || role == SortRole) return any ? qstr(any->truth) : QString();
      return {};
    case Length:
      if (role == Qt::DisplayRole || role == SortRole) return length;
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    default:
      return {};
  }
}

QVariant ErrorTableModel::rightData(int row, int role) const {
  const auto [right, read] = rightCount(row);
  if (role == Qt::DisplayRole) return QStringLiteral("%1/%2").arg(right).arg(read);
  if (role == SortRole) return read ? double(right) / read : -1.0;
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignCenter);
  if (role == Qt::ForegroundRole) return right == read ? kRight : right == 0 ? kWrong : QColor();
  if (role == Qt::ToolTipRole) {
    QStringList who;
    for (int m = 0; m < modelCount(); ++m)
      if (correct(row, m)) who << modelName(m_analysis.get(), m_analysis->models[size_t(m)].model);
    return who.isEmpty() ? tr("No model read it right")
                         : tr("Read right by %1").arg(who.join(QStringLiteral(", ")));
  }
  return {};
}

QVariant ErrorTableModel::readingData(const core::train::ImageReading& r,
                                      const core::train::ImageErrors& e, ModelColumn field,
                                      int role) const {
  switch (field) {
    case Reading:
      if (role == Qt::DisplayRole || role == SortRole) return qstr(r.reading);
      if (role == Qt::ToolTipRole)
        return e.correct ? tr("Read right") : tr("Misread: %n edit(s)", nullptr, e.distance);
      return {};
    case Confidence:
      if (role == Qt::DisplayRole) return QString::number(r.confidence, 'f', 3);
      if (role == SortRole) return r.confidence;
      return {};
    case Edits:
      if (role == Qt::DisplayRole || role == SortRole) return e.distance;
      return {};
    case Cer:
      if (role == Qt::DisplayRole) return QString::number(e.cer, 'f', 3);
      if (role == SortRole) return e.cer;
      return {};
    case Entropy:
      if (role == Qt::DisplayRole)
        return std::isfinite(r.entropy) ? QString::number(r.entropy, 'f', 3) : QStringLiteral("—");
      if (role == SortRole) return std::isfinite(r.entropy) ? r.entropy : -1.0;
      if (role == Qt::ToolTipRole && !std::isfinite(r.entropy))
        return tr("CTC has no attention: no entropy");
      return {};
    default:
      return {};
  }
}

QVariant ErrorTableModel::imageShareData(const core::train::ImageErrors& e, int role) const {
  // Lowest first when sorted ascending: the most guessed readings on top, the unmeasured last.
  if (role == Qt::DisplayRole)
    return std::isfinite(e.imageShare) ? QStringLiteral("%1 %").arg(100 * e.imageShare, 0, 'f', 0)
                                       : QStringLiteral("—");
  if (role == SortRole) return std::isfinite(e.imageShare) ? e.imageShare : 2.0;
  if (role == Qt::ForegroundRole && std::isfinite(e.imageShare) &&
      e.imageShare < core::kGuessedShare)
    return kGuessed;
  if (role == Qt::ToolTipRole)
    return std::isfinite(e.imageShare)
               ? (e.imageShare < core::kGuessedShare
                      ? tr("Its least-read character was mostly guessed from the previous tokens")
                      : tr("Every character was mostly read from the image"))
               : tr("Not measured (right readings, CTC; tick \"From the image\" and analyse "
                    "again)");
  return {};
}

QVariant ErrorTableModel::doubtData(const core::train::ImageReading& r, int role) const {
  // The doubt of the worst step: its token's probability, the most doubtful (lowest) first when
  // sorted ascending; a reading of no character last.
  const double p = r.lowestStepProbability;
  if (role == Qt::DisplayRole)
    return std::isfinite(p) ? QString::number(p, 'f', 3) : QStringLiteral("—");
  if (role == SortRole) return std::isfinite(p) ? p : 2.0;
  if (role == Qt::ForegroundRole && std::isfinite(p) && p < kDoubtfulProbability) return kGuessed;
  if (role == Qt::ToolTipRole)
    return std::isfinite(p) ? tr("The lowest probability a step gave its token: %1%2")
                                  .arg(p, 0, 'f', 3)
                                  .arg(p < kDoubtfulProbability
                                           ? tr(" (doubtful: under %1)").arg(kDoubtfulProbability)
                                           : QString())
                            : tr("No character was read");
  return {};
}

QVariant ErrorTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  if (section < FixedColumns) {
    static const char* names[] = {"image", "entry", "truth", "length"};
    static const char* tips[] = {"The image (double-click a row to inspect it)",
                                 "The entry's index in the dataset", "The label",
                                 "Characters in the label"};
    return role == Qt::DisplayRole ? tr(names[section]) : tr(tips[section]);
  }
  if (section == rightColumn())
    return role == Qt::DisplayRole ? tr("right") : tr("How many models read the image right");
  int model = 0;
  ModelColumn field = Reading;
  if (!modelField(section, &model, &field)) return {};
  static const char* names[] = {"read", "conf.",   "lowest p",  "edits",
                                "CER",  "entropy", "from image"};
  static const char* tips[] = {
      "The reading (red: wrong)",
      "Confidence: the product of the chosen tokens' probabilities",
      "Doubt of the worst step: the lowest probability a step gave its token (the signal that "
      "finds wrong steps best, docs/RESULTS.md). Sort ascending: the most doubtful first",
      "Edit distance to the truth (characters)",
      "Character error rate: edits / truth length",
      "Mean attention entropy over the decoded steps (nats)",
      "Wrong readings: how much of its least-read character came from the image rather than "
      "the previous tokens (integrated gradients; below 50 %: guessed). Sort ascending: the "
      "most guessed first"};
  const QString name = modelName(m_analysis.get(), m_analysis->models[size_t(model)].model);
  if (role == Qt::ToolTipRole) return QStringLiteral("%1: %2").arg(name, tr(tips[field]));
  return modelCount() > 1 ? QStringLiteral("%1\n%2").arg(tr(names[field]), name) : tr(names[field]);
}

}  // namespace foveal::ui
