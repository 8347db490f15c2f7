#pragma once
// The Help menu: the keyboard shortcuts, the documentation (the README beside the samples) and
// About.
#include <QMenu>

namespace foveal::ui {

class HelpMenu : public QMenu {
  Q_OBJECT
 public:
  explicit HelpMenu(QWidget* parent = nullptr);

  /// The file Documentation opens.
  void setDocumentation(const QString& path) { m_documentation = path; }
  /// The text of Keyboard Shortcuts (rich text).
  static QString shortcutsText();

 Q_SIGNALS:
  /// The documentation was not found.
  void failed(const QString& message);

 private:
  QString m_documentation;
};

}  // namespace foveal::ui
