#pragma once
// A page of the main window, as the window sees it (Tiled's Editor): its title, the actions it
// brings to the window's page toolbar, whether the step bar and the step keys drive it, what
// the status line says about it, and whether it lets the window close. The window shows the current
// page's chrome and hides the others'; it knows nothing else about a page. The docks the pages
// share (Models, Dataset) are the window's, and it says which page shows which
// (MainWindow::addPage).
#include <QList>
#include <QString>

class QAction;
class QWidget;

namespace foveal::ui {

class Page {
 public:
  virtual ~Page() = default;

  /// The page itself, for the window's page stack.
  virtual QWidget* widget() = 0;
  /// The tab's text, with its mnemonic ("&Inspector").
  virtual QString title() const = 0;
  /// What the page toolbar holds while this page is current (none: the toolbar hides).
  virtual QList<QAction*> toolBarActions() const { return {}; }
  /// Whether the step bar, the Step menu and the step keys drive this page.
  virtual bool followsSteps() const { return false; }
  /// The steps the cursor runs through on this page (followsSteps() pages).
  virtual int stepCount() const { return 0; }
  /// A line for the status bar once a reading is shown ("Read ... in 6 steps"); empty: none.
  virtual QString readingSummary() const { return {}; }
  /// Where the keyboard focus goes on this page (at start, after a dialog or typing).
  virtual QWidget* focusView() { return widget(); }
  /// Asked before the window closes, of a page whose work would stop with it; false keeps the
  /// window open.
  virtual bool confirmClose() { return true; }
};

}  // namespace foveal::ui
