#include "recent_images_menu.h"

#include <QFileInfo>

#include "settings.h"

namespace foveal::ui {

namespace {
const Setting<QStringList> kRecentImages(QStringLiteral("inspector/recentImages"), {});
constexpr int kMaxRecent = 10;
}  // namespace

RecentImagesMenu::RecentImagesMenu(QWidget* parent) : QMenu(tr("Open &Recent"), parent) {
  rebuild();
}

void RecentImagesMenu::remember(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList recent = kRecentImages.value();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kMaxRecent) recent.removeLast();
  kRecentImages.set(recent);
  rebuild();
}

void RecentImagesMenu::rebuild() {
  clear();
  const QStringList recent = kRecentImages.value();
  for (int i = 0; i < recent.size(); ++i) {
    const QString path = recent[i];
    auto* a = addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                        [this, path] { Q_EMIT chosen(path); });
    a->setToolTip(path);
  }
  setEnabled(!recent.isEmpty());
}

}  // namespace foveal::ui
