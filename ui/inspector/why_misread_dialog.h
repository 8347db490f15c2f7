#pragma once
// The window the Inspector's "Why misread?" button opens: the WhyMisreadPanel of the inspected
// CTC model's reading of the image against its truth. Not modal: the Inspector stays usable,
// and the dialog follows its reading while it is open.
#include <QDialog>

namespace foveal::ui {

class WhyMisreadPanel;

class WhyMisreadDialog : public QDialog {
  Q_OBJECT
 public:
  explicit WhyMisreadDialog(QWidget* parent = nullptr);
  WhyMisreadPanel* panel() const { return m_panel; }

 private:
  WhyMisreadPanel* m_panel;
};

}  // namespace foveal::ui
