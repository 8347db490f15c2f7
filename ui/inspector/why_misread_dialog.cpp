#include "why_misread_dialog.h"

#include <QDialogButtonBox>
#include <QVBoxLayout>

#include "why_misread_panel.h"

namespace foveal::ui {

WhyMisreadDialog::WhyMisreadDialog(QWidget* parent) : QDialog(parent) {
  setObjectName(QStringLiteral("why-misread-dialog"));
  setWindowTitle(tr("Why misread?"));
  auto* layout = new QVBoxLayout(this);
  m_panel = new WhyMisreadPanel(this);
  layout->addWidget(m_panel, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  // Fits a 1366x768 laptop screen beside the window's frame.
  resize(1180, 680);
}

}  // namespace foveal::ui
