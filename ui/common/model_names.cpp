#include "model_names.h"

#include <QDir>
#include <QFileInfo>

namespace foveal::ui {

namespace {

bool isFile(const QString& path) { return path.contains(QLatin1Char('/')) || path.contains('.'); }

// The name of `path` with `depth` folders above its file name (depth -1: the stem alone).
QString nameAt(const QString& path, int depth) {
  const QFileInfo info(path);
  if (depth < 0) return info.completeBaseName();
  QStringList parts = QDir::cleanPath(info.filePath()).split(QLatin1Char('/'), Qt::SkipEmptyParts);
  const int keep = std::min<int>(parts.size(), depth + 1);
  return parts.mid(parts.size() - keep).join(QLatin1Char('/'));
}

bool isRunCheckpoint(const QString& path) {
  const QString stem = QFileInfo(path).completeBaseName();
  return stem == QLatin1String("latest") || stem == QLatin1String("best");
}

}  // namespace

QStringList modelDisplayNames(const QStringList& paths) {
  QStringList names;
  for (int i = 0; i < paths.size(); ++i) {
    const QString& p = paths[i];
    if (!isFile(p) || p.startsWith(QLatin1String("tesseract:"))) {
      names << p;
      continue;
    }
    // The first depth at which no other path shows the same name; the run checkpoints start with
    // their folder.
    const int maxDepth = int(QDir::cleanPath(p).count(QLatin1Char('/')));
    int depth = isRunCheckpoint(p) ? 1 : -1;
    for (; depth < maxDepth; ++depth) {
      bool shared = false;
      for (int j = 0; j < paths.size() && !shared; ++j)
        shared = j != i && paths[j] != p && nameAt(paths[j], depth) == nameAt(p, depth);
      if (!shared) break;
    }
    // "exp1/best_accuracy" reads better than "exp1/best_accuracy.pth" when the extension does not
    // tell them apart.
    QString name = nameAt(p, depth);
    if (depth >= 1) {
      const QFileInfo info(p);
      const QString withoutSuffix =
          name.left(name.size() - info.fileName().size()) + info.completeBaseName();
      bool shared = false;
      for (int j = 0; j < paths.size() && !shared; ++j) {
        if (j == i || paths[j] == p) continue;
        const QFileInfo other(paths[j]);
        const QString o = nameAt(paths[j], depth);
        shared =
            o.left(o.size() - other.fileName().size()) + other.completeBaseName() == withoutSuffix;
      }
      if (!shared) name = withoutSuffix;
    }
    names << name;
  }
  return names;
}

QString modelDisplayName(const QString& path, const QStringList& all) {
  QStringList paths = all;
  int at = paths.indexOf(path);
  if (at < 0) {
    paths << path;
    at = int(paths.size()) - 1;
  }
  return modelDisplayNames(paths)[at];
}

}  // namespace foveal::ui
