#include "error_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace foveal::ui {

ErrorBanner::ErrorBanner(QWidget* parent) : QWidget(parent), m_label(new QLabel(this)) {
  setObjectName(QStringLiteral("errorBanner"));
  setAttribute(Qt::WA_StyledBackground);
  setStyleSheet(
      QStringLiteral("#errorBanner { background: #fdecea; border-bottom: 1px solid #e0a3a3; }"
                     "#errorBanner QLabel { color: #8a1c1c; }"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(6, 3, 3, 3);
  m_label->setWordWrap(true);
  m_label->setTextFormat(Qt::PlainText);
  m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Ignored: a long message wraps or is cut, it never sets the window's minimum width.
  m_label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_label->setMaximumHeight(3 * m_label->fontMetrics().lineSpacing() + 4);
  layout->addWidget(m_label, 1);
  auto* dismiss = new QToolButton(this);
  dismiss->setObjectName(QStringLiteral("dismissError"));
  dismiss->setText(QStringLiteral("\u2715"));
  dismiss->setAutoRaise(true);
  dismiss->setFocusPolicy(Qt::NoFocus);
  dismiss->setToolTip(tr("Dismiss"));
  connect(dismiss, &QToolButton::clicked, this, [this] {
    m_messages.clear();
    hide();
  });
  layout->addWidget(dismiss, 0, Qt::AlignTop);
  hide();
}

void ErrorBanner::showMessage(const QString& message, Topic topic) {
  clear(topic);
  m_messages.emplace_back(topic, message);
  showNewest();
}

void ErrorBanner::clear(Topic topic) {
  for (auto it = m_messages.begin(); it != m_messages.end(); ++it)
    if (it->first == topic) {
      m_messages.erase(it);
      break;
    }
  showNewest();
}

void ErrorBanner::showNewest() {
  if (m_messages.empty()) {
    hide();
    return;
  }
  const QString& message = m_messages.back().second;
  m_label->setText(message);
  m_label->setToolTip(message);
  show();
}

QString ErrorBanner::text() const {
  return isVisibleTo(parentWidget()) ? m_label->text() : QString();
}

}  // namespace foveal::ui
