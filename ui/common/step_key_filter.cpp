#include "step_key_filter.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QKeyEvent>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTextEdit>

#include "step_cursor.h"

namespace foveal::ui {

StepKeyFilter::StepKeyFilter(QWidget* window, StepCursor* cursor, std::function<bool()> active)
    : QObject(window), m_window(window), m_cursor(cursor), m_active(std::move(active)) {
  qApp->installEventFilter(this);
}

bool StepKeyFilter::isTextField(const QWidget* w) {
  if (const auto* e = qobject_cast<const QLineEdit*>(w))
    // A spin box's editor is typed in too, but its numbers take no arrow keys worth keeping.
    return !e->isReadOnly() && !qobject_cast<const QAbstractSpinBox*>(e->parentWidget());
  if (const auto* e = qobject_cast<const QTextEdit*>(w)) return !e->isReadOnly();
  if (const auto* e = qobject_cast<const QPlainTextEdit*>(w)) return !e->isReadOnly();
  return false;
}

bool StepKeyFilter::isStepKeyFor(QObject* target, const QKeyEvent* event) const {
  switch (event->key()) {
    case Qt::Key_Left:
    case Qt::Key_Right:
    case Qt::Key_Home:
    case Qt::Key_End:
    case Qt::Key_Space:
      break;
    default:
      return false;
  }
  if (event->modifiers() & ~Qt::KeypadModifier) return false;
  auto* widget = qobject_cast<QWidget*>(target);
  if (!widget || widget->window() != m_window) return false;
  if (m_active && !m_active()) return false;
  return !isTextField(widget);
}

bool StepKeyFilter::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride &&
      isStepKeyFor(watched, static_cast<QKeyEvent*>(event))) {
    event->ignore();  // not the widget's: the Step menu's shortcut fires
    return true;
  }
  if (event->type() == QEvent::KeyPress && isStepKeyFor(watched, static_cast<QKeyEvent*>(event))) {
    switch (static_cast<QKeyEvent*>(event)->key()) {
      case Qt::Key_Left:
        m_cursor->previous();
        break;
      case Qt::Key_Right:
        m_cursor->next();
        break;
      case Qt::Key_Home:
        m_cursor->first();
        break;
      case Qt::Key_End:
        m_cursor->last();
        break;
      default:
        m_cursor->togglePlaying();
        break;
    }
    return true;
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace foveal::ui
