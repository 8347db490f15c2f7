#include "run_list_model.h"

#include "base/error.h"
#include "run/remote_run.h"
#include "run/run_folder.h"
#include "trainer_curves.h"

#include <QDir>
#include <QDirIterator>
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

/// True when the folder is (or mirrors) one of Foveal's runs: its config.json or metrics.jsonl,
/// or the description of a run Foveal submitted on another machine.
bool fovealFolder(const QString& dir) {
  const QDir d(dir);
  if (QFileInfo::exists(d.filePath(QString::fromLatin1(core::run_folder::kConfig))) ||
      QFileInfo::exists(d.filePath(QString::fromLatin1(core::run_folder::kMetrics))))
    return true;
  if (!core::RemoteRun::isRemoteRun(dir.toStdString())) return false;
  try {
    return !core::RemoteRun::open(dir.toStdString()).foreign();
  } catch (const std::exception&) {
    return true;  // unreadable: the Where column says so, as for Foveal's runs
  }
}

/// The newest file time in a folder another trainer writes (a few levels, a bounded count).
QDateTime newestFile(const QString& dir) {
  QDateTime newest;
  QDirIterator it(dir, QDir::Files | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
  for (int n = 0; it.hasNext() && n < 4000; ++n) {
    it.next();
    const QDateTime t = it.fileInfo().lastModified();
    if (!newest.isValid() || t > newest) newest = t;
  }
  return newest;
}

QString ageText(qint64 seconds) {
  if (seconds < 120) return QObject::tr("%1 s").arg(seconds);
  if (seconds < 7200) return QObject::tr("%1 min").arg(seconds / 60);
  if (seconds < 172800) return QObject::tr("%1 h").arg(seconds / 3600);
  return QObject::tr("%1 days").arg(seconds / 86400);
}

}  // namespace

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

qint64 RunListModel::latestStep(const core::TrainerRun& run) {
  qint64 last = -1;
  for (const auto& s : run.series())
    for (const auto& p : s.points) last = std::max<qint64>(last, p.step);
  for (const auto& c : run.checkpoints()) last = std::max<qint64>(last, c.step);
  return last;
}

double RunListModel::bestAccuracy(const core::TrainerRun& run) {
  double best = std::numeric_limits<double>::quiet_NaN();
  if (!run.format()) return best;
  for (const auto& s : run.series()) {
    if (s.catalogue != "accuracy") continue;
    const double scale = percentAccuracy(run, s) ? 0.01 : 1.0;
    for (const auto& p : s.points) {
      const double v = core::catalogueValue(run.format()->name(), s.tag, p.value) * scale;
      if (std::isfinite(v) && !(v <= best)) best = v;
    }
  }
  return best;
}

bool RunListModel::refreshTrainer(Entry& e) {
  // A folder this window started a trainer in is Foveal's, even before (or, when the trainer
  // failed at once, without) its config.json: never another trainer's run waiting for logs.
  if (e.process.state != core::ProcessFacts::Unknown || fovealFolder(e.dir)) {
    const bool had = e.trainer != nullptr;
    e.trainer.reset();
    return had;
  }
  if (!e.trainer) {
    e.trainer = std::make_shared<core::TrainerRun>(e.dir.toStdString());
    if (m_settleSeconds >= 0) e.trainer->setSettleSeconds(m_settleSeconds);
    e.trainer->refresh();
    e.trainerChanged = newestFile(e.dir);  // what it read now was written then
    return true;
  }
  const bool more = e.trainer->refresh();
  if (more) e.trainerChanged = QDateTime::currentDateTime();
  return more;
}

void RunListModel::setTrainerSettleSeconds(double seconds) {
  m_settleSeconds = seconds;
  for (auto& e : m_entries)
    if (e.trainer && seconds >= 0) e.trainer->setSettleSeconds(seconds);
}

std::shared_ptr<const core::TrainerRun> RunListModel::trainer(int row) const {
  return row >= 0 && row < rowCount() ? m_entries[size_t(row)].trainer : nullptr;
}

bool RunListModel::isForeign(int row) const {
  const auto t = trainer(row);
  return t && t->format();
}

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
  refreshTrainer(e);
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
  refreshTrainer(e);
  updateStatus(e);
  Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

bool RunListModel::updateStatus(Entry& e) {
  auto s = e.log->status(e.process, m_staleAfter);
  if (e.trainer) {
    // Another trainer's run: it writes no end record, so it runs while its logs grow.
    const auto& t = *e.trainer;
    if (!QFileInfo(e.dir).isDir()) {
      s = {core::RunStatus::Missing, "the folder does not exist (yet)"};
    } else if (!t.format()) {
      s = {core::RunStatus::Starting,
           "waiting for a trainer's logs (log_train.txt, events.out.tfevents.*, metrics.csv, "
           "scalars.json, train.log)"};
    } else {
      const qint64 age = e.trainerChanged.isValid()
                             ? e.trainerChanged.secsTo(QDateTime::currentDateTime())
                             : qint64(m_staleAfter) + 1;
      const qint64 step = latestStep(t);
      std::string detail = t.trainer();
      if (step >= 0) detail += ": step " + std::to_string(step);
      detail += ", " + std::to_string(t.checkpoints().size()) + " checkpoint(s)";
      if (!t.damage().empty())
        detail += ", " + std::to_string(t.damage().size()) + " damaged record(s) skipped";
      if (age > m_staleAfter) {
        s.status = core::RunStatus::Stale;
        detail += "; nothing new for " + ageText(age).toStdString() +
                  " (finished or stopped: the trainer does not say which)";
      } else {
        s.status = core::RunStatus::Running;
      }
      s.detail = detail;
    }
  }
  const bool changed = s.status != e.status.status || s.detail != e.status.detail;
  e.status = s;
  return changed;
}

std::vector<int> RunListModel::refresh() {
  std::vector<int> changed;
  for (size_t i = 0; i < m_entries.size(); ++i) {
    auto& e = m_entries[i];
    if (e.target.isEmpty() || e.jobId.isEmpty()) readTarget(e);
    const bool records = e.log->refresh() | refreshTrainer(e);
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
  switch (role) {
    case DirRole:
      return e.dir;
    case StatusRole:
      return static_cast<int>(e.status.status);
    case DetailRole:
      return QString::fromStdString(e.status.detail);
    case ColourRole:
      return e.colour;
    case Qt::ToolTipRole:
      return toolTipOf(e);
    default:
      break;
  }
  return columnData(e, index.column(), role);
}

QString RunListModel::toolTipOf(const Entry& e) const {
  const auto& log = *e.log;
  QString tip = e.dir.toHtmlEscaped() + QStringLiteral("<br>") +
                QString::fromStdString(e.status.detail).toHtmlEscaped();
  if (log.config().ok)
    tip += tr("<br>preset %1, %2 attention, width %3, batch %4, device %5")
               .arg(QString::fromStdString(log.config().preset),
                    QString::fromStdString(log.config().attention))
               .arg(log.config().width)
               .arg(log.config().batchSize)
               .arg(QString::fromStdString(log.config().device));
  if (e.trainer && e.trainer->format())
    tip += tr("<br>%1's run (%2 logs): %n curve(s)", nullptr, int(e.trainer->series().size()))
               .arg(QString::fromStdString(e.trainer->trainer()).toHtmlEscaped(),
                    QString::fromStdString(e.trainer->format()->name()));
  if (e.trainer && !e.trainer->damage().empty()) {
    QStringList lines;
    for (const auto& d : e.trainer->damage()) {
      if (lines.size() == 5) {
        lines << QStringLiteral("...");
        break;
      }
      lines << tr("%1 at byte %2: %3")
                   .arg(QString::fromStdString(d.file).toHtmlEscaped())
                   .arg(qulonglong(d.offset))
                   .arg(QString::fromStdString(d.message).toHtmlEscaped());
    }
    tip += tr("<br><b>skipped:</b> ") + lines.join(QStringLiteral("<br>"));
  }
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

QVariant RunListModel::columnData(const Entry& e, int column, int role) const {
  const auto& log = *e.log;
  const bool live =
      e.status.status == core::RunStatus::Running || e.status.status == core::RunStatus::Starting;
  switch (column) {
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
      if (role == Qt::DisplayRole && e.trainer && e.trainer->format()) {
        const qint64 step = latestStep(*e.trainer);
        return step >= 0 ? QString::number(step) : QString();
      }
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
        const double b =
            e.trainer && e.trainer->format() ? bestAccuracy(*e.trainer) : log.bestAccuracy();
        return std::isfinite(b) ? QStringLiteral("%1%").arg(100.0 * b, 0, 'f', 2)
                                : QStringLiteral("—");
      }
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Where:
      if (role == Qt::DisplayRole) {
        const QString trainer =
            e.trainer && e.trainer->format()
                ? QStringLiteral(" · ") + QString::fromStdString(e.trainer->trainer())
                : QString();
        if (e.target.isEmpty()) return tr("this machine") + trainer;
        QString s = e.target + trainer;
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
