#pragma once
// File > Open Recent: the last ten images opened from files, newest first, remembered across
// sessions.
#include <QMenu>

namespace foveal::ui {

class RecentImagesMenu : public QMenu {
  Q_OBJECT
 public:
  explicit RecentImagesMenu(QWidget* parent = nullptr);

  /// Puts `path` first (once).
  void remember(const QString& path);

 Q_SIGNALS:
  void chosen(const QString& path);

 private:
  void rebuild();
};

}  // namespace foveal::ui
