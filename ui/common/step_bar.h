#pragma once
// The time-step control: first / previous / play-pause / next / last, a slider, the speed and a
// "step t / T" label, all bound to a StepCursor. Its actions() are the same moves with their
// keys (Left, Right, Home, End, Space, [ and ]), for the window's Step menu.
#include <QWidget>

class QDoubleSpinBox;
class QLabel;
class QSlider;
class QToolButton;

namespace foveal::ui {

class StepCursor;

class StepBar : public QWidget {
  Q_OBJECT
 public:
  StepBar(StepCursor* cursor, QWidget* parent = nullptr);
  QSlider* slider() const { return m_slider; }
  QToolButton* playButton() const { return m_play; }

 private:
  void sync();

  StepCursor* m_cursor;
  QSlider* m_slider;
  QToolButton* m_play;
  QDoubleSpinBox* m_speed;
  QLabel* m_label;
};

}  // namespace foveal::ui
