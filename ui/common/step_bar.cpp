#include "step_bar.h"

#include <QAction>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QStyle>
#include <QToolButton>

#include "step_cursor.h"

namespace foveal::ui {

StepBar::StepBar(StepCursor* cursor, QWidget* parent) : QWidget(parent), m_cursor(cursor) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  auto button = [&](QStyle::StandardPixmap icon, const QString& tip) {
    auto* b = new QToolButton(this);
    b->setIcon(style()->standardIcon(icon));
    b->setToolTip(tip);
    b->setFocusPolicy(Qt::NoFocus);
    b->setAutoRaise(true);
    layout->addWidget(b);
    return b;
  };
  connect(button(QStyle::SP_MediaSkipBackward, tr("First step (Home)")), &QToolButton::clicked,
          cursor, &StepCursor::first);
  connect(button(QStyle::SP_MediaSeekBackward, tr("Previous step (Left)")), &QToolButton::clicked,
          cursor, &StepCursor::previous);
  m_play = button(QStyle::SP_MediaPlay, tr("Play / pause (Space)"));
  connect(m_play, &QToolButton::clicked, cursor, &StepCursor::togglePlaying);
  connect(button(QStyle::SP_MediaSeekForward, tr("Next step (Right)")), &QToolButton::clicked,
          cursor, &StepCursor::next);
  connect(button(QStyle::SP_MediaSkipForward, tr("Last step (End)")), &QToolButton::clicked, cursor,
          &StepCursor::last);

  m_slider = new QSlider(Qt::Horizontal, this);
  m_slider->setFocusPolicy(Qt::NoFocus);
  m_slider->setPageStep(1);
  m_slider->setTickPosition(QSlider::TicksBelow);
  layout->addWidget(m_slider, 1);
  connect(m_slider, &QSlider::valueChanged, cursor, &StepCursor::setStep);

  m_speed = new QDoubleSpinBox(this);
  m_speed->setRange(0.25, 30);
  m_speed->setSingleStep(0.5);
  m_speed->setSuffix(tr(" steps/s"));
  m_speed->setValue(cursor->speed());
  m_speed->setToolTip(tr("Playback speed"));
  m_speed->setFocusPolicy(Qt::ClickFocus);
  connect(m_speed, &QDoubleSpinBox::valueChanged, cursor, &StepCursor::setSpeed);
  layout->addWidget(m_speed);

  m_label = new QLabel(this);
  m_label->setMinimumWidth(100);
  m_label->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  layout->addWidget(m_label);

  connect(cursor, &StepCursor::stepChanged, this, &StepBar::sync);
  connect(cursor, &StepCursor::countChanged, this, &StepBar::sync);
  connect(cursor, &StepCursor::playingChanged, this, &StepBar::sync);
  sync();

  const auto key = [this](const QString& text, Qt::Key shortcut, auto slot) {
    auto* a = new QAction(text, this);
    a->setShortcut(shortcut);
    connect(a, &QAction::triggered, m_cursor, slot);
    addAction(a);
  };
  key(tr("&Previous"), Qt::Key_Left, &StepCursor::previous);
  key(tr("&Next"), Qt::Key_Right, &StepCursor::next);
  key(tr("&First"), Qt::Key_Home, &StepCursor::first);
  key(tr("&Last"), Qt::Key_End, &StepCursor::last);
  key(tr("Play / &Pause"), Qt::Key_Space, &StepCursor::togglePlaying);
  key(tr("Fas&ter"), Qt::Key_BracketRight, [this] { m_cursor->setSpeed(m_cursor->speed() * 1.5); });
  key(tr("&Slower"), Qt::Key_BracketLeft, [this] { m_cursor->setSpeed(m_cursor->speed() / 1.5); });
}

void StepBar::sync() {
  const QSignalBlocker block(m_slider);
  m_slider->setRange(0, std::max(0, m_cursor->count() - 1));
  m_slider->setValue(m_cursor->step());
  m_slider->setEnabled(m_cursor->count() > 1);
  m_play->setIcon(
      style()->standardIcon(m_cursor->isPlaying() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  m_label->setText(m_cursor->count()
                       ? tr("step %1 / %2").arg(m_cursor->step() + 1).arg(m_cursor->count())
                       : tr("no steps"));
}

}  // namespace foveal::ui
