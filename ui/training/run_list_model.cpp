#include "run_list_model.h"

#include "base/error.h"
#include "run/remote_run.h"

#include <QDir>
#include <QFileInfo>
#include <cmath>
#include <limits>

namespace foveal::ui {

namespace {

/// Distinct colours for overlaid runs (Tableau 10): soft, hard and sharp side by side stay apart.
const QColor kPalette[] = {QColor(31, 119, 180),  QColor(255, 127, 14),  QColor(44, 160, 44),
                           QColor(214, 39, 40),   QColor(148, 103, 189), QColor(140, 86, 75),
                           QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34),
                           QColor(23, 190, 207)};

QColor statusColour(core::RunStatus s) {
  switch (s) {
    case core::RunStatus::Running:
    case core::RunStatus::Starting:
      return QColor(21, 101, 192);
    case core::RunStatus::Finished:
      return QColor(46, 125, 50);
    case core::RunStatus::Stopped:
      return QColor(110, 110, 110);
    case core::RunStatus::Stale:
      return QColor(191, 120, 0);
    case core::RunStatus::Failed:
    case core::RunStatus::Corrupt:
    case core::RunStatus::Missing:
      return QColor(198, 40, 40);
  }
  return {};
}

}  // namespace

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

QColor RunListModel::nextColour() const {
  // The first palette colour no listed run uses, so removing a run frees its colour.
  for (const QColor& c : kPalette) {
    bool used = false;
    for (const auto& e : m_entries) used = used || e.colour == c;
    if (!used) return c;
  }
  return kPalette[m_entries.size() % std::size(kPalette)];
}

int RunListModel::addRun(const QString& dir) {
  const QString clean = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
  if (const int row = rowOf(clean); row >= 0) return row;
  Entry e;
  e.dir = clean;
  e.log = std::make_shared<core::RunLog>(clean.toStdString());
  e.log->refresh();
  e.colour = nextColour();
  updateStatus(e);
  const int row = static_cast<int>(m_entries.size());
  beginInsertRows({}, row, row);
  m_entries.push_back(std::move(e));
  endInsertRows();
  Q_EMIT shownChanged();
  return row;
}

void RunListModel::removeRun(int row) {
  if (row < 0 || row >= rowCount()) return;
  beginRemoveRows({}, row, row);
  m_entries.erase(m_entries.begin() + row);
  endRemoveRows();
  Q_EMIT shownChanged();
}

int RunListModel::rowOf(const QString& dir) const {
  const QString clean = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
  for (size_t i = 0; i < m_entries.size(); ++i)
    if (m_entries[i].dir == clean) return static_cast<int>(i);
  return -1;
}

QString RunListModel::dir(int row) const {
  return row >= 0 && row < rowCount() ? m_entries[size_t(row)].dir : QString();
}
QString RunListModel::name(int row) const { return QFileInfo(dir(row)).fileName(); }
QColor RunListModel::colour(int row) const {
  return row >= 0 && row < rowCount() ? m_entries[size_t(row)].colour : QColor();
}
bool RunListModel::isShown(int row) const {
  return row >= 0 && row < rowCount() && m_entries[size_t(row)].shown;
}
std::shared_ptr<const core::RunLog> RunListModel::log(int row) const {
  return row >= 0 && row < rowCount() ? m_entries[size_t(row)].log : nullptr;
}
core::RunStatusInfo RunListModel::status(int row) const {
  return row >= 0 && row < rowCount() ? m_entries[size_t(row)].status : core::RunStatusInfo{};
}
QStringList RunListModel::dirs() const {
  QStringList out;
  for (const auto& e : m_entries) out << e.dir;
  return out;
}

void RunListModel::readTarget(Entry& e) const {
  const std::string dir = e.dir.toStdString();
  if (!core::RemoteRun::isRemoteRun(dir)) return;
  try {
    const auto run = core::RemoteRun::open(dir);
    e.target = QString::fromStdString(run.target().toString());
    e.jobId = QString::fromStdString(run.jobId());
  } catch (const core::Error& ex) {
    e.target = tr("(unreadable: %1)").arg(QString::fromStdString(ex.what()));
  }
}

void RunListModel::setJobState(const QString& dir, const QString& state) {
  const int row = rowOf(dir);
  if (row < 0 || m_entries[size_t(row)].jobState == state) return;
  auto& e = m_entries[size_t(row)];
  e.jobState = state;
  readTarget(e);  // the job id arrives with the submission
  Q_EMIT dataChanged(index(row, Where), index(row, Where));
}

void RunListModel::setProcess(const QString& dir, const core::ProcessFacts& facts) {
  const int row = rowOf(dir);
  if (row < 0) return;
  auto& e = m_entries[size_t(row)];
  e.process = facts;
  e.log->refresh();  // the process's last lines are on disk now
  updateStatus(e);
  Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

bool RunListModel::updateStatus(Entry& e) {
  const auto s = e.log->status(e.process, m_staleAfter);
  const bool changed = s.status != e.status.status || s.detail != e.status.detail;
  e.status = s;
  return changed;
}

std::vector<int> RunListModel::refresh() {
  std::vector<int> changed;
  for (size_t i = 0; i < m_entries.size(); ++i) {
    auto& e = m_entries[i];
    if (e.target.isEmpty() || e.jobId.isEmpty()) readTarget(e);
    const bool records = e.log->refresh();
    const bool status = updateStatus(e);
    if (records) changed.push_back(static_cast<int>(i));
    // ETA moves with the clock only through new records; status can change with time (stale).
    if (records || status) Q_EMIT dataChanged(index(int(i), 0), index(int(i), ColumnCount - 1));
  }
  return changed;
}

int RunListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int RunListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

double RunListModel::estimateEta(const core::RunLog& log) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const int64_t total = log.totalIterations();
  if (total <= 0) return kNaN;
  // The current session's records (after the last resume), oldest first.
  const auto& all = log.records();
  size_t begin = all.size();
  while (begin > 0 && all[begin - 1].kind != "resume") --begin;
  double trainTime = 0, trainIters = 0, evalTime = 0;
  int evals = 0;
  int64_t firstEval = -1, lastEval = -1;
  const core::MetricRecord* prev = nullptr;  // the previous train or eval record
  for (size_t i = begin; i < all.size(); ++i) {
    const auto& r = all[i];
    const double t = r.value("elapsed_s");
    if ((r.kind != "train" && r.kind != "eval") || !std::isfinite(t) || r.iteration() < 0) continue;
    if (prev) {
      const double dt = t - prev->value("elapsed_s");
      if (r.kind == "eval") {
        // Time from the last training record to the end of the evaluation.
        evalTime += std::max(0.0, dt);
        ++evals;
      } else if (prev->kind == "train" && r.iteration() > prev->iteration() && dt >= 0) {
        trainTime += dt;
        trainIters += double(r.iteration() - prev->iteration());
      }
    }
    if (r.kind == "eval") {
      if (firstEval < 0) firstEval = r.iteration();
      lastEval = r.iteration();
    }
    prev = &r;
  }
  if (trainIters <= 0 || trainTime <= 0) return log.etaSeconds();
  const int64_t now = log.iteration();
  double eta = double(std::max<int64_t>(0, total - now)) * trainTime / trainIters;
  if (evals > 0) {
    // The evaluation interval: the spacing of the evaluations seen (the first one's iteration
    // when there was only one).
    const double interval = evals > 1 ? double(lastEval - firstEval) / (evals - 1)
                                      : double(std::max<int64_t>(1, firstEval));
    if (interval > 0) {
      const double due = std::floor(double(total) / interval) - std::floor(double(now) / interval);
      eta += std::max(0.0, due) * evalTime / evals;
    }
  }
  return eta;
}

QString RunListModel::formatEta(double seconds) {
  if (!std::isfinite(seconds)) return QStringLiteral("—");
  const auto s = static_cast<qint64>(std::llround(seconds));
  if (s < 60) return tr("%1 s").arg(s);
  if (s < 3600) return tr("%1 min %2 s").arg(s / 60).arg(s % 60);
  return tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

QVariant RunListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const auto& e = m_entries[size_t(index.row())];
  const auto& log = *e.log;
  const bool live =
      e.status.status == core::RunStatus::Running || e.status.status == core::RunStatus::Starting;
  switch (role) {
    case DirRole:
      return e.dir;
    case StatusRole:
      return static_cast<int>(e.status.status);
    case DetailRole:
      return QString::fromStdString(e.status.detail);
    case ColourRole:
      return e.colour;
    case Qt::ToolTipRole: {
      QString tip = e.dir.toHtmlEscaped() + QStringLiteral("<br>") +
                    QString::fromStdString(e.status.detail).toHtmlEscaped();
      if (log.config().ok)
        tip += tr("<br>preset %1, %2 attention, width %3, batch %4, device %5")
                   .arg(QString::fromStdString(log.config().preset),
                        QString::fromStdString(log.config().attention))
                   .arg(log.config().width)
                   .arg(log.config().batchSize)
                   .arg(QString::fromStdString(log.config().device));
      if (!log.corruptLines().empty()) {
        QStringList lines;
        for (const auto& c : log.corruptLines()) {
          if (lines.size() == 5) {
            lines << QStringLiteral("...");
            break;
          }
          lines << QString::fromStdString(c.message).toHtmlEscaped();
        }
        tip += tr("<br><b>metrics.jsonl:</b> ") + lines.join(QStringLiteral("<br>"));
      }
      return tip;
    }
    default:
      break;
  }
  switch (index.column()) {
    case Name:
      if (role == Qt::DisplayRole) return QFileInfo(e.dir).fileName();
      if (role == Qt::CheckStateRole) return e.shown ? Qt::Checked : Qt::Unchecked;
      if (role == Qt::DecorationRole) return e.colour;
      break;
    case Status:
      if (role == Qt::DisplayRole) {
        QString s = QString::fromLatin1(core::runStatusName(e.status.status));
        if (!log.corruptLines().empty())
          s += tr(" (%n bad line(s))", nullptr, int(log.corruptLines().size()));
        return s;
      }
      if (role == Qt::ForegroundRole) return statusColour(e.status.status);
      break;
    case Progress:
      if (role == Qt::DisplayRole) {
        if (log.totalIterations() <= 0)
          return log.records().empty() ? QString() : QString::number(log.iteration());
        return QStringLiteral("%1 / %2").arg(log.iteration()).arg(log.totalIterations());
      }
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Eta:
      if (role == Qt::DisplayRole) return live ? formatEta(estimateEta(log)) : QStringLiteral("—");
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Best:
      if (role == Qt::DisplayRole) {
        const double b = log.bestAccuracy();
        return std::isfinite(b) ? QStringLiteral("%1%").arg(100.0 * b, 0, 'f', 2)
                                : QStringLiteral("—");
      }
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Where:
      if (role == Qt::DisplayRole) {
        if (e.target.isEmpty()) return tr("this machine");
        QString s = e.target;
        if (!e.jobId.isEmpty()) s += tr(" · job %1").arg(e.jobId);
        const int colon = e.jobState.indexOf(QStringLiteral(": "));
        if (colon > 0) s += QStringLiteral(" · ") + e.jobState.mid(colon + 2);
        return s;
      }
      if (role == Qt::ToolTipRole && !e.target.isEmpty())
        return tr("Trains on %1; this folder mirrors its run folder").arg(e.target);
      break;
    default:
      break;
  }
  return {};
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Name:
      return tr("Run");
    case Status:
      return tr("Status");
    case Progress:
      return tr("Iteration");
    case Eta:
      return tr("ETA");
    case Best:
      return tr("Best acc.");
    case Where:
      return tr("Where");
    default:
      return {};
  }
}

bool RunListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) ||
      index.column() != Name || role != Qt::CheckStateRole)
    return false;
  auto& e = m_entries[size_t(index.row())];
  const bool shown = value.toInt() == Qt::Checked;
  if (shown == e.shown) return true;
  e.shown = shown;
  Q_EMIT dataChanged(index, index, {Qt::CheckStateRole});
  Q_EMIT shownChanged();
  return true;
}

Qt::ItemFlags RunListModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
  if (index.column() == Name) f |= Qt::ItemIsUserCheckable;
  return f;
}

}  // namespace foveal::ui
