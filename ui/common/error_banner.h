#pragma once
// The error banner at the top of the window: one message, at most three lines (the whole text
// is its tooltip) so that it never makes the window taller than the screen, and a dismiss
// button. A message is about a topic; a later success of the same topic clears it, others not
// (a model that finishes loading leaves an unreadable image's message alone). The banner keeps
// the newest message of each topic: when one is cleared, the one it covered shows again (a good
// image after a bad one brings back the model error it had replaced). Dismiss forgets them all.
#include <QWidget>
#include <utility>
#include <vector>

class QLabel;

namespace foveal::ui {

class ErrorBanner : public QWidget {
  Q_OBJECT
 public:
  enum class Topic { Image, Model, Reading, Analysis, Other };

  explicit ErrorBanner(QWidget* parent = nullptr);

  void showMessage(const QString& message, Topic topic);
  /// Forgets the message about `topic`; shows the newest other one, or hides.
  void clear(Topic topic);
  /// The message shown; empty when the banner is hidden.
  QString text() const;

 private:
  void showNewest();

  QLabel* m_label;
  std::vector<std::pair<Topic, QString>> m_messages;  ///< one per topic, oldest first
};

}  // namespace foveal::ui
