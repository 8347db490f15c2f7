#pragma once
// The error banner at the top of the window: one message, at most three lines (the whole text
// is its tooltip) so that it never makes the window taller than the screen, and a dismiss
// button. A message is about a topic; a later success of the same topic clears it, others not
// (a model that finishes loading leaves an unreadable image's message alone).
#include <QWidget>

class QLabel;

namespace foveal::ui {

class ErrorBanner : public QWidget {
  Q_OBJECT
 public:
  enum class Topic { Image, Model, Reading, Other };

  explicit ErrorBanner(QWidget* parent = nullptr);

  void showMessage(const QString& message, Topic topic);
  /// Hides the banner when its message is about `topic`.
  void clear(Topic topic);
  /// The message shown; empty when the banner is hidden.
  QString text() const;

 private:
  QLabel* m_label;
  Topic m_topic = Topic::Other;
};

}  // namespace foveal::ui
