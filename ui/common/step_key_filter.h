#pragma once
// The step keys (Left/Right, Home/End, Space) for one window, wherever its focus is, except
// while the user types in a text field. Installed on the application: a focused list, spin box
// or combo box claims these keys (ShortcutOverride) before the window's shortcuts see them; the
// filter refuses the claim so the Step menu's shortcuts fire, and steps itself on a key press
// that no shortcut took.
#include <QObject>
#include <functional>

class QKeyEvent;
class QWidget;

namespace foveal::ui {

class StepCursor;

class StepKeyFilter : public QObject {
  Q_OBJECT
 public:
  /// `active` says whether the window's current page has steps (not the Training page).
  StepKeyFilter(QWidget* window, StepCursor* cursor, std::function<bool()> active);

  /// Whether a step key pressed in `target` steps (true) or belongs to the widget.
  bool isStepKeyFor(QObject* target, const QKeyEvent* event) const;
  /// An editable line edit (not a spin box's), text edit or plain text edit.
  static bool isTextField(const QWidget* widget);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QWidget* m_window;
  StepCursor* m_cursor;
  std::function<bool()> m_active;
};

}  // namespace foveal::ui
