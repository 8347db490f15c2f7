#include "probe_reader.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTextStream>
#include <algorithm>
#include <cmath>
#include <limits>

#include "image_file.h"
#include "qt_convert.h"
#include "run/trainer_checkpoint_options.h"
#include "trace/model_session.h"
#include "train/evaluation.h"

namespace foveal::ui {

namespace {

constexpr int kCacheVersion = 1;
const QString kProbesFile = QStringLiteral("probes.json");
const QString kColumnsFile = QStringLiteral("filmstrip.json");

bool writeJson(const QString& path, const QJsonObject& o, QString* error) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) ||
      f.write(QJsonDocument(o).toJson(QJsonDocument::Compact)) < 0 || !f.commit()) {
    if (error) *error = QObject::tr("%1: cannot write (%2)").arg(path, f.errorString());
    return false;
  }
  return true;
}

// The file's object; an empty one when it does not exist. `error` names a damaged file.
QJsonObject readJson(const QString& path, QString* error) {
  QFile f(path);
  if (!f.exists()) return {};
  if (!f.open(QIODevice::ReadOnly)) {
    if (error) *error = QObject::tr("%1: cannot read (%2)").arg(path, f.errorString());
    return {};
  }
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
  if (!doc.isObject()) {
    if (error)
      *error = QObject::tr("%1: not a JSON object at byte %2 (%3); it is read again")
                   .arg(path)
                   .arg(pe.offset)
                   .arg(pe.errorString());
    return {};
  }
  return doc.object();
}

qint64 fileTimeNs(const QFileInfo& f) { return f.lastModified().toMSecsSinceEpoch() * 1000000LL; }

}  // namespace

QJsonObject ProbeReading::toJson() const {
  QJsonObject o;
  if (!error.isEmpty()) {
    o[QStringLiteral("error")] = error;
    return o;
  }
  o[QStringLiteral("reading")] = reading;
  o[QStringLiteral("confidence")] = std::isfinite(confidence) ? confidence : 0.0;
  if (correct) o[QStringLiteral("correct")] = *correct;
  o[QStringLiteral("decoder")] = decoder;
  o[QStringLiteral("size")] = QJsonArray{imageW, imageH};
  QJsonArray boxes;
  for (const QRectF& r : regions)
    boxes.append(QJsonArray{std::round(r.x() * 10) / 10, std::round(r.y() * 10) / 10,
                            std::round(r.width() * 10) / 10, std::round(r.height() * 10) / 10});
  o[QStringLiteral("regions")] = boxes;
  o[QStringLiteral("grid")] = QJsonArray{gridRows, gridColumns};
  o[QStringLiteral("tokens")] = QJsonArray::fromStringList(tokens);
  // Attention to three decimals: a 25-step, 26-region map is a few kilobytes.
  QJsonArray steps;
  for (const auto& step : attention) {
    QJsonArray a;
    for (float v : step) a.append(std::isfinite(v) ? std::round(double(v) * 1000) / 1000 : 0.0);
    steps.append(a);
  }
  o[QStringLiteral("attention")] = steps;
  return o;
}

ProbeReading ProbeReading::fromJson(const QJsonObject& o) {
  ProbeReading r;
  r.error = o.value(QStringLiteral("error")).toString();
  r.reading = o.value(QStringLiteral("reading")).toString();
  r.confidence = o.value(QStringLiteral("confidence")).toDouble();
  if (o.contains(QStringLiteral("correct")))
    r.correct = o.value(QStringLiteral("correct")).toBool();
  r.decoder = o.value(QStringLiteral("decoder")).toString();
  const QJsonArray size = o.value(QStringLiteral("size")).toArray();
  r.imageW = size.size() == 2 ? size[0].toInt() : 0;
  r.imageH = size.size() == 2 ? size[1].toInt() : 0;
  for (const auto& b : o.value(QStringLiteral("regions")).toArray()) {
    const QJsonArray a = b.toArray();
    if (a.size() == 4)
      r.regions.emplace_back(a[0].toDouble(), a[1].toDouble(), a[2].toDouble(), a[3].toDouble());
  }
  const QJsonArray grid = o.value(QStringLiteral("grid")).toArray();
  if (grid.size() == 2) {
    r.gridRows = std::max(1, grid[0].toInt());
    r.gridColumns = grid[1].toInt();
  }
  for (const auto& t : o.value(QStringLiteral("tokens")).toArray()) r.tokens << t.toString();
  for (const auto& s : o.value(QStringLiteral("attention")).toArray()) {
    std::vector<float> step;
    for (const auto& v : s.toArray()) step.push_back(float(v.toDouble()));
    r.attention.push_back(std::move(step));
  }
  return r;
}

QString ProbeColumn::key() const {
  return QStringLiteral("%1|%2|%3").arg(file).arg(size).arg(mtimeNs);
}

QString ProbeVerdict::text() const {
  switch (kind) {
    case NoTruth:
      return QObject::tr("no truth");
    case NotRead:
      return QObject::tr("not read yet");
    case StillWrong:
      return QObject::tr("still wrong");
    case FirstCorrect:
      return QObject::tr("first read correctly at step %1").arg(step);
    case Regressed:
      return QObject::tr("regressed at step %1").arg(step);
  }
  return {};
}

ProbeVerdict probeVerdict(const std::vector<ProbeColumn>& columns, const ProbeImage& probe) {
  ProbeVerdict v;
  if (!probe.hasTruth()) {
    v.kind = ProbeVerdict::NoTruth;
    return v;
  }
  qint64 firstCorrect = -1, wentWrong = -1;
  bool any = false, last = false;
  for (const auto& c : columns) {
    const auto it = c.readings.find(probe.path);
    if (it == c.readings.end() || !it->second.correct) continue;
    const bool ok = *it->second.correct;
    if (ok && firstCorrect < 0) firstCorrect = c.step;
    if (any && last && !ok) wentWrong = c.step;  // the latest fall from right to wrong
    any = true;
    last = ok;
  }
  if (!any) return v;  // NotRead
  if (firstCorrect < 0) {
    v.kind = ProbeVerdict::StillWrong;
  } else if (!last) {
    v.kind = ProbeVerdict::Regressed;
    v.step = wentWrong;
  } else {
    v.kind = ProbeVerdict::FirstCorrect;
    v.step = firstCorrect;
  }
  return v;
}

std::vector<double> probeAccuracy(const std::vector<ProbeColumn>& columns,
                                  const std::vector<ProbeImage>& probes) {
  std::vector<double> out;
  for (const auto& c : columns) {
    int read = 0, right = 0;
    for (const auto& p : probes) {
      const auto it = c.readings.find(p.path);
      if (!p.hasTruth() || it == c.readings.end() || !it->second.correct) continue;
      ++read;
      right += *it->second.correct;
    }
    out.push_back(read ? double(right) / read : std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

QString probeSideFolder(const QString& runDir, QString* error, bool create) {
  const QString clean = QDir::cleanPath(QFileInfo(runDir).absoluteFilePath());
  const QString inRun = QDir(clean).filePath(QStringLiteral(".foveal/probes"));
  QString base = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
  if (base.isEmpty()) base = QDir::home().filePath(QStringLiteral(".local/share/foveal"));
  const QString key = QString::fromLatin1(
      QCryptographicHash::hash(clean.toUtf8(), QCryptographicHash::Sha1).toHex().left(16));
  const QString elsewhere =
      QDir(base).filePath(QStringLiteral("run-probes/%1-%2").arg(QFileInfo(clean).fileName(), key));
  if (!create) {
    if (QFileInfo(inRun).isDir()) return inRun;
    if (QFileInfo(elsewhere).isDir()) return elsewhere;
    return {};
  }
  // The run folder's own side folder when it may be written (a probe file there is found by
  // whoever opens the folder next); else the application's, keyed by the path.
  if (QFileInfo(clean).isDir() && QFileInfo(clean).isWritable() && QDir().mkpath(inRun) &&
      QFileInfo(inRun).isWritable())
    return inRun;
  if (QDir().mkpath(elsewhere)) {
    QFile note(QDir(elsewhere).filePath(QStringLiteral("run-folder.txt")));
    if (!note.exists() && note.open(QIODevice::WriteOnly)) note.write(clean.toUtf8() + "\n");
    return elsewhere;
  }
  if (error)
    *error = QObject::tr("%1 cannot be written, nor %2: the probe set cannot be kept")
                 .arg(QDir::toNativeSeparators(inRun), QDir::toNativeSeparators(elsewhere));
  return {};
}

std::vector<ProbeImage> loadProbeSet(const QString& sideFolder, QString* error) {
  std::vector<ProbeImage> probes;
  if (sideFolder.isEmpty()) return probes;
  const QJsonObject o = readJson(QDir(sideFolder).filePath(kProbesFile), error);
  for (const auto& p : o.value(QStringLiteral("probes")).toArray()) {
    const QJsonObject e = p.toObject();
    ProbeImage img{e.value(QStringLiteral("path")).toString(),
                   e.value(QStringLiteral("truth")).toString()};
    if (!img.path.isEmpty()) probes.push_back(img);
  }
  return probes;
}

bool saveProbeSet(const QString& sideFolder, const std::vector<ProbeImage>& probes,
                  QString* error) {
  QJsonArray a;
  for (const auto& p : probes)
    a.append(QJsonObject{{QStringLiteral("path"), p.path}, {QStringLiteral("truth"), p.truth}});
  return writeJson(
      QDir(sideFolder).filePath(kProbesFile),
      QJsonObject{{QStringLiteral("version"), kCacheVersion}, {QStringLiteral("probes"), a}},
      error);
}

std::vector<ProbeImage> probesFromFiles(const QStringList& paths) {
  std::vector<ProbeImage> out;
  std::map<QString, std::map<QString, QString>> gtByFolder;  // folder -> name -> truth
  for (const QString& p : paths) {
    const QFileInfo info(p);
    ProbeImage img{QDir::cleanPath(info.absoluteFilePath()), truthFromFileName(p)};
    if (img.truth.isEmpty()) {
      const QString folder = info.absolutePath();
      auto it = gtByFolder.find(folder);
      if (it == gtByFolder.end()) {
        std::map<QString, QString> gt;
        QFile f(QDir(folder).filePath(QStringLiteral("gt.txt")));
        if (f.open(QIODevice::ReadOnly | QIODevice::Text)) {
          QTextStream in(&f);
          in.setEncoding(QStringConverter::Utf8);
          while (!in.atEnd()) {
            const QString line = in.readLine();
            const int tab = line.indexOf(QLatin1Char('\t'));
            if (tab > 0) gt[QFileInfo(line.left(tab)).fileName()] = line.mid(tab + 1);
          }
        }
        it = gtByFolder.emplace(folder, std::move(gt)).first;
      }
      if (const auto t = it->second.find(info.fileName()); t != it->second.end())
        img.truth = t->second;
    }
    out.push_back(img);
  }
  return out;
}

std::vector<ProbeColumn> loadProbeColumns(const QString& sideFolder, QString* error) {
  std::vector<ProbeColumn> columns;
  if (sideFolder.isEmpty()) return columns;
  const QJsonObject o = readJson(QDir(sideFolder).filePath(kColumnsFile), error);
  if (!o.isEmpty() && o.value(QStringLiteral("version")).toInt() != kCacheVersion) return columns;
  for (const auto& c : o.value(QStringLiteral("columns")).toArray()) {
    const QJsonObject e = c.toObject();
    ProbeColumn col;
    col.file = e.value(QStringLiteral("file")).toString();
    col.step = qint64(e.value(QStringLiteral("step")).toDouble(-1));
    col.size = qint64(e.value(QStringLiteral("size")).toDouble());
    col.mtimeNs = e.value(QStringLiteral("mtime_ns")).toString().toLongLong();
    col.error = e.value(QStringLiteral("error")).toString();
    const QJsonObject readings = e.value(QStringLiteral("readings")).toObject();
    for (auto it = readings.begin(); it != readings.end(); ++it)
      col.readings[it.key()] = ProbeReading::fromJson(it.value().toObject());
    if (!col.file.isEmpty()) columns.push_back(std::move(col));
  }
  std::stable_sort(columns.begin(), columns.end(),
                   [](const ProbeColumn& a, const ProbeColumn& b) { return a.step < b.step; });
  return columns;
}

bool saveProbeColumns(const QString& sideFolder, const std::vector<ProbeColumn>& columns,
                      QString* error) {
  QJsonArray a;
  for (const auto& c : columns) {
    QJsonObject readings;
    for (const auto& [path, r] : c.readings) readings[path] = r.toJson();
    QJsonObject e{{QStringLiteral("file"), c.file},
                  {QStringLiteral("step"), double(c.step)},
                  {QStringLiteral("size"), double(c.size)},
                  // Nanoseconds pass 2^53: a string keeps them exact.
                  {QStringLiteral("mtime_ns"), QString::number(c.mtimeNs)},
                  {QStringLiteral("readings"), readings}};
    if (!c.error.isEmpty()) e[QStringLiteral("error")] = c.error;
    a.append(e);
  }
  return writeJson(
      QDir(sideFolder).filePath(kColumnsFile),
      QJsonObject{{QStringLiteral("version"), kCacheVersion}, {QStringLiteral("columns"), a}},
      error);
}

core::ImportOptions probeImportOptions(const QString& runDir, const QString& file, QString* error) {
  try {
    return core::trainerCheckpointOptions(runDir.toStdString(), file.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return {};
  }
}

ProbeColumn readProbeColumn(const ProbeJob& job, bool* changed) {
  ProbeColumn col = job.column;
  col.error.clear();
  if (changed) *changed = false;
  const QString path = QDir(job.runDir).filePath(col.file);
  // The file as it was when the job began: the version listed, unchanged until the readings are
  // done.
  const QFileInfo before(path);
  const qint64 startSize = before.exists() ? before.size() : -1;
  const qint64 startNs = before.exists() ? fileTimeNs(before) : -1;
  // The lister's time is Unix nanoseconds too; QFileInfo's has milliseconds.
  const bool listedTime = col.mtimeNs == 0 || startNs / 1000000 == col.mtimeNs / 1000000;
  const auto sameFile = [&] {
    const QFileInfo f(path);
    return f.isFile() && listedTime && startSize == col.size && f.size() == col.size &&
           fileTimeNs(f) == startNs;
  };
  try {
    QString optionsError;
    const core::ImportOptions options = probeImportOptions(job.runDir, col.file, &optionsError);
    if (!optionsError.isEmpty()) throw std::runtime_error(optionsError.toStdString());
    const auto session = core::ModelSession::open(path.toStdString(), options);
    const bool text = core::train::wantsTextScoring(session->config().charset, std::string("auto"));
    for (const auto& probe : job.probes) {
      ProbeReading r;
      const ImageFile image = readImageFile(probe.path);
      if (!image.error.isEmpty()) {
        r.error = image.error;
        col.readings[probe.path] = r;
        continue;
      }
      try {
        const core::Trace t = session->trace(image.grey, probe.path.toStdString());
        r.reading = qstr(t.prediction);
        r.confidence = t.confidence;
        r.decoder = qstr(t.decoder);
        r.imageW = t.imageW;
        r.imageH = t.imageH;
        for (const auto& b : t.regions) r.regions.push_back(toRect(b));
        r.gridRows = t.isGrid() ? t.gridRows : 1;
        r.gridColumns = t.isGrid() ? t.gridColumns : int(t.regions.size());
        for (size_t s = 0; s < t.steps.size(); ++s) {
          r.tokens << displayToken(t.steps[s]);
          const auto& a = t.attention(s);
          r.attention.emplace_back(a.begin(), a.end());
        }
        if (probe.hasTruth())
          r.correct =
              core::train::scorePrediction(t.prediction, probe.truth.toStdString(), text).correct;
      } catch (const std::exception& e) {
        r = ProbeReading{};
        r.error = QString::fromStdString(e.what());
      }
      col.readings[probe.path] = r;
    }
  } catch (const std::exception& e) {
    col.error = QString::fromStdString(e.what());
  }
  // The trainer rewrote the file while it was read: what was read may be neither version.
  if (!sameFile() && changed) *changed = true;
  return col;
}

}  // namespace foveal::ui
