#include "help_menu.h"

#include <QDesktopServices>
#include <QFileInfo>
#include <QKeySequence>
#include <QMessageBox>
#include <QUrl>
#include <utility>

namespace foveal::ui {

HelpMenu::HelpMenu(QWidget* parent) : QMenu(tr("&Help"), parent) {
  addAction(tr("&Keyboard Shortcuts"), QKeySequence::HelpContents, this, [this] {
    QMessageBox box(QMessageBox::NoIcon, tr("Keyboard shortcuts"), shortcutsText(),
                    QMessageBox::Close, parentWidget());
    box.setTextFormat(Qt::RichText);
    box.exec();
  });
  addAction(tr("&Documentation"), this, [this] {
    if (m_documentation.isEmpty() || !QFileInfo::exists(m_documentation)) {
      Q_EMIT failed(tr("The documentation (README.md) was not found next to the samples."));
      return;
    }
    QDesktopServices::openUrl(QUrl::fromLocalFile(m_documentation));
  });
  addSeparator();
  addAction(tr("&About Foveal"), this, [this] {
    QMessageBox::about(parentWidget(), tr("About Foveal"),
                       tr("<b>Foveal %1</b><br>A lab for attention-based image-to-sequence "
                          "recognition: soft, hard and sharp attention, step by step.")
                           .arg(QStringLiteral(FOVEAL_VERSION)));
  });
}

QString HelpMenu::shortcutsText() {
  const std::pair<const char*, const char*> rows[] = {
      {"Left / Right", "previous / next step"},
      {"Home / End", "first / last step"},
      {"Space", "play / pause"},
      {"[ / ]", "slower / faster"},
      {"Ctrl+O", "open an image"},
      {"Ctrl+V", "paste an image"},
      {"Ctrl+M", "open a model"},
      {"Ctrl+1 / 2 / 3 / 4 / 5", "Inspector / Compare / Training / Errors / Page"},
      {"Ctrl+Shift+P", "open a page with its PAGE-XML or ALTO layout"},
      {"Up / Down, Enter", "on a page: previous / next line, open it in the Inspector"},
      {"Ctrl+0", "fit the image (or double-click it)"},
      {"Ctrl+E", "export the view"},
      {"Ctrl+Shift+E", "export the trace (JSON/CSV)"},
      {"Ctrl+Shift+C", "export the training curves"},
      {"Wheel / drag", "zoom / pan the image"}};
  QString html =
      tr("<p>The step keys work wherever the focus is, except while typing in a text "
         "field (Enter or Escape leaves it); click a view to give it the focus.</p>"
         "<table cellspacing='4'>");
  for (const auto& [keys, what] : rows)
    html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                .arg(QString::fromUtf8(keys), tr(what));
  return html + QStringLiteral("</table>");
}

}  // namespace foveal::ui
