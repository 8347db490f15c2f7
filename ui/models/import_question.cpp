#include "import_question.h"

#include <QCryptographicHash>
#include <QFileInfo>
#include <QSettings>
#include <QVariantMap>
#include <algorithm>
#include <exception>

namespace foveal::ui {

namespace {
QString fileHash(const QString& path) {
  return QString::fromLatin1(QCryptographicHash::hash(QFileInfo(path).absoluteFilePath().toUtf8(),
                                                      QCryptographicHash::Sha1)
                                 .toHex()
                                 .left(16));
}
QString settingsKey(const QString& path) {
  return QStringLiteral("import-options/") + fileHash(path);
}
// Where the DTRB-only dialog of earlier versions kept its answers (its fields, not options).
QString legacyDtrbKey(const QString& path) {
  return QStringLiteral("dtrb-options/") + fileHash(path);
}

std::optional<core::ImportOptions> legacyDtrbOptions(const QString& path) {
  QSettings s;
  s.beginGroup(legacyDtrbKey(path));
  if (!s.contains(QStringLiteral("imgH"))) return std::nullopt;
  core::ImportOptions o;
  const QString character = s.value(QStringLiteral("character")).toString();
  if (!character.isEmpty()) o["character"] = character.toStdString();
  if (s.value(QStringLiteral("sensitive"), false).toBool()) o["sensitive"] = "1";
  if (s.value(QStringLiteral("PAD"), false).toBool()) o["PAD"] = "1";
  // Its defaults were DTRB's: only the values that differ are options.
  for (const auto& [key, fallback] :
       {std::pair{"imgH", 32}, {"imgW", 100}, {"batch_max_length", 25}})
    if (const int v = s.value(QLatin1String(key), fallback).toInt(); v != fallback)
      o[key] = std::to_string(v);
  return o;
}

bool isKeyCharacter(QChar c) {
  return c.isLetterOrNumber() || c == QLatin1Char('_') || c == QLatin1Char('-');
}
}  // namespace

ImportQuestion recogniseImportFile(const QString& path, const core::ImportOptions& options) {
  ImportQuestion q;
  q.path = path;
  q.options = options;
  // The sniffers may read the options (EasyOCR's --easyocr NAME): asked with them, less the
  // format they force; options of another format than the content's are then refused, so the
  // content alone is asked next.
  core::ImportOptions unforced = options;
  unforced.erase(core::kFormatOption);
  try {
    const core::FileProbe probe(path.toStdString());  // keeps the parsed state dict for a retry
    for (const bool withOptions : {true, false}) {
      if (!withOptions && unforced.empty()) break;
      try {
        const core::Recognised r =
            core::recogniseModelFile(probe, withOptions ? unforced : core::ImportOptions{});
        q.format = QString::fromStdString(r.format->name);
        q.why = QString::fromStdString(r.why);
        return q;
      } catch (const std::exception& ex) {
        q.why = QString::fromStdString(ex.what());
      }
    }
  } catch (const std::exception& ex) {  // the file cannot be read
    q.why = QString::fromStdString(ex.what());
  }
  return q;
}

QString optionNamedIn(const QString& message, const core::ModelFormat& format) {
  for (qsizetype at = message.indexOf(QLatin1String("--")); at >= 0;
       at = message.indexOf(QLatin1String("--"), at + 2)) {
    // The longest key that the word after "--" is ("--easyocr-input" is not "--easyocr").
    QString found;
    for (const core::FormatOption& o : format.options) {
      const QString key = QString::fromStdString(o.key);
      const qsizetype end = at + 2 + key.size();
      if (key.size() > found.size() && message.mid(at + 2, key.size()) == key &&
          (end >= message.size() || !isKeyCharacter(message[end])))
        found = key;
    }
    if (!found.isEmpty()) return found;
  }
  return {};
}

QString optionNamedIn(const QString& message, const QString& format) {
  const core::ModelFormat* f = core::findModelFormat(format.toStdString());
  return f ? optionNamedIn(message, *f) : QString();
}

std::optional<core::ImportOptions> rememberedImportOptions(const QString& path) {
  QSettings s;
  s.beginGroup(settingsKey(path));
  if (!s.contains(QStringLiteral("options"))) {
    s.endGroup();
    return legacyDtrbOptions(path);
  }
  core::ImportOptions o;
  const QVariantMap map = s.value(QStringLiteral("options")).toMap();
  for (auto it = map.begin(); it != map.end(); ++it)
    o[it.key().toStdString()] = it.value().toString().toStdString();
  return o;
}

void rememberImportOptions(const QString& path, const core::ImportOptions& options) {
  forgetImportOptions(path);
  if (options.empty()) return;
  QVariantMap map;
  for (const auto& [key, value] : options)
    map.insert(QString::fromStdString(key), QString::fromStdString(value));
  QSettings s;
  s.beginGroup(settingsKey(path));
  s.setValue(QStringLiteral("file"), QFileInfo(path).absoluteFilePath());
  s.setValue(QStringLiteral("options"), map);
}

void forgetImportOptions(const QString& path) {
  QSettings s;
  s.remove(settingsKey(path));
  s.remove(legacyDtrbKey(path));
}

}  // namespace foveal::ui
