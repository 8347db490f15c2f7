#include "step_cursor.h"

#include <algorithm>

namespace foveal::ui {

StepCursor::StepCursor(QObject* parent) : QObject(parent) {
  m_timer.setInterval(static_cast<int>(1000.0 / m_speed));
  connect(&m_timer, &QTimer::timeout, this, &StepCursor::advance);
}

void StepCursor::setCount(int count) {
  count = std::max(0, count);
  if (count == m_count) return;
  m_count = count;
  Q_EMIT countChanged(count);
  if (m_count == 0) setPlaying(false);
  const int clamped = std::clamp(m_step, 0, std::max(0, m_count - 1));
  if (clamped != m_step) {
    m_step = clamped;
    Q_EMIT stepChanged(m_step);
  }
}

void StepCursor::setStep(int step) {
  if (m_count == 0) return;
  step = std::clamp(step, 0, m_count - 1);
  if (step == m_step) return;
  m_step = step;
  Q_EMIT stepChanged(step);
}

void StepCursor::setPlaying(bool playing) {
  if (playing == isPlaying() || (playing && m_count < 2)) return;
  if (playing) {
    if (m_step >= m_count - 1) setStep(0);  // play from the start when at the end
    m_timer.start();
  } else {
    m_timer.stop();
  }
  Q_EMIT playingChanged(playing);
}

void StepCursor::setSpeed(double stepsPerSecond) {
  m_speed = std::clamp(stepsPerSecond, 0.25, 30.0);
  m_timer.setInterval(static_cast<int>(1000.0 / m_speed));
}

void StepCursor::advance() {
  if (m_step >= m_count - 1) {
    setPlaying(false);
    return;
  }
  setStep(m_step + 1);
}

}  // namespace foveal::ui
