#include "reading_card.h"

#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include "patch_strip.h"
#include "trace_view.h"

namespace foveal::ui {

ReadingCard::ReadingCard(QWidget* parent)
    : QFrame(parent),
      m_title(new QLabel(this)),
      m_view(new TraceView(this)),
      m_info(new QLabel(this)),
      m_strip(new PatchStrip),
      m_stripArea(new QScrollArea(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(2);
  m_title->setTextFormat(Qt::RichText);
  m_title->setWordWrap(true);
  layout->addWidget(m_title);
  m_view->setMinimumSize(200, 110);
  layout->addWidget(m_view, 1);
  m_info->setTextFormat(Qt::RichText);
  m_info->setWordWrap(true);
  layout->addWidget(m_info);
  m_stripArea->setWidget(m_strip);
  m_stripArea->setWidgetResizable(true);
  m_stripArea->setFixedHeight(m_strip->minimumHeight() + 20);
  m_stripArea->setFrameShape(QFrame::StyledPanel);
  layout->addWidget(m_stripArea);
}

void ReadingCard::setCompact(bool compact) {
  m_strip->setScale(compact ? 1.0 : 2.0);
  m_stripArea->setFixedHeight(m_strip->minimumHeight() + 20);
  m_view->setMinimumSize(compact ? 160 : 200, compact ? 90 : 110);
}

}  // namespace foveal::ui
