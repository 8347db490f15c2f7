#pragma once
// The current time step: one selection shared by every view of the inspector and the compare
// page. Views call setStep(); all of them follow stepChanged().
#include <QObject>
#include <QTimer>

namespace foveal::ui {

class StepCursor : public QObject {
  Q_OBJECT
 public:
  explicit StepCursor(QObject* parent = nullptr);

  int step() const { return m_step; }
  int count() const { return m_count; }
  bool isPlaying() const { return m_timer.isActive(); }
  /// Steps per second while playing.
  double speed() const { return m_speed; }

 public Q_SLOTS:
  /// Number of steps (0: nothing to step through). Keeps the step when still valid.
  void setCount(int count);
  void setStep(int step);
  void next() { setStep(m_step + 1); }
  void previous() { setStep(m_step - 1); }
  void first() { setStep(0); }
  void last() { setStep(m_count - 1); }
  void setPlaying(bool playing);
  void togglePlaying() { setPlaying(!isPlaying()); }
  void setSpeed(double stepsPerSecond);

 Q_SIGNALS:
  void stepChanged(int step);
  void countChanged(int count);
  void playingChanged(bool playing);

 private:
  void advance();

  int m_step = 0;
  int m_count = 0;
  double m_speed = 2.0;
  QTimer m_timer;
};

}  // namespace foveal::ui
