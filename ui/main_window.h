#pragma once
// The main window, a composition root: the menus, the page stack (Inspector, Compare, Training,
// Errors: each a Page that brings its own toolbar actions), the docks the pages share (Models,
// Dataset), the banner and the status line, wired to one ReadingDocument (what is read, with
// what, and the readings) and one StepCursor. It owns no data and no jobs; it keeps the session
// (the window's layout, last time's models and image, the recent images).
#include <QMainWindow>
#include <memory>
#include <utility>
#include <vector>

#include "error_banner.h"
#include "formats/model_format.h"
#include "model/geometry.h"
#include "trace/trace.h"

class QDockWidget;
class QTabWidget;
class QTimer;
class QToolBar;

namespace foveal::ui {

class ComparePage;
class DatasetBrowser;
class ErrorsPage;
class PageView;
class HelpMenu;
class InspectorExports;
class InspectorPage;
class ModelListModel;
class Page;
class ReadingDocument;
class RecentImagesMenu;
class StepBar;
class StepCursor;
class TraceView;
class TrainingPage;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Starts reading an image file off the GUI thread: the pages show it once it is read, a file
  /// that cannot be decoded is reported in the error banner then, and a later image supersedes
  /// it. False at once, with the error shown, for a file that does not exist.
  bool openImage(const QString& path);
  /// Loads a model file off the GUI thread and makes it the inspected model once loaded (the
  /// Models dock shows it as loading meanwhile). Returns false at once, with the error shown,
  /// for a file that does not exist; a file that cannot be loaded is reported in the error
  /// banner when its load ends, and its row is removed.
  bool openModel(const QString& path);  ///< a .fvm, or a DTRB .pth (asks what it must)
  /// The same with the import's options (the import dialog's answers, remembered for the file).
  bool openModelWith(const QString& path, const core::ImportOptions& options);
  /// Opens the models named (the command line's --model list): they are the ones ticked for
  /// Compare (the first kMaxCompared of them), the first inspected. False when one is missing
  /// (its error shown; the others open).
  bool openModels(const QStringList& paths);
  /// Opens a page image (empty: the one the layout names) with its PAGE-XML or ALTO layout in
  /// the Page view (read off the GUI thread, its lines then read with the inspected model).
  /// False at once, with the error shown, for a file that does not exist.
  bool openPage(const QString& image, const QString& layout);
  /// Uses an image that is already in memory (paste, dataset browser) with its truth (empty:
  /// unknown, the previous image's truth is cleared).
  void setImage(const QImage& image, const QString& source, const QString& truth = {},
                const std::vector<core::Box>& truthBoxes = {});
  void setTruth(const QString& truth);
  /// Adds the *.fvm files of a folder (the bundled samples) without opening the inspector;
  /// they load off the GUI thread, failures are shown in the error banner naming the file.
  void addModelFolder(const QString& folder);
  /// On a first start (no saved run list), follows the bundled sample runs in `runsFolder`.
  int addSampleRuns(const QString& runsFolder);

  /// Opens the models ticked for comparison last time, the last image, the window geometry and
  /// the dock layout (the models listed by then keep their rows). False on a first start: no
  /// session was saved.
  bool restoreSession();
  /// A first start: what `scripts/foveal-dev run` opens, from the samples folder (its models/,
  /// images/): sharp-chain inspected on the sample image, and the sample dataset in its dock.
  void openFirstStart(const QString& samplesFolder);
  /// Saves the session now (it is saved a moment after each change: the ticked and inspected
  /// models, the image, the docks, the geometry; and on closing).
  void saveSession() const;

  int step() const;
  int stepCount() const;
  /// The model row the inspector shows (-1: none).
  int currentModel() const;
  /// True while an image is read or traced, or a reading waits to start.
  bool isTracing() const;
  QString errorText() const;
  /// The truth field (the expected text of the image).
  QString truth() const;
  /// What is read and with what (the pages observe it).
  ReadingDocument* document() const { return m_document; }
  /// What the error banner is about: a later success of the same kind clears it, others not.
  using ErrorTopic = ErrorBanner::Topic;
  void showError(const QString& message, ErrorTopic topic = ErrorTopic::Other);
  /// The shared docks (Models, Dataset), also listed in the View menu.
  QList<QDockWidget*> docks() const { return m_docks; }
  /// The text of Help > Keyboard Shortcuts.
  static QString shortcutsText();
  /// The inspector's exports (figures, the patch strip, the trace), as the File menu has them.
  InspectorExports* exports() const { return m_exports; }
  /// Whether closing asks the pages first (runs started here still training). Tests turn it off.
  void setConfirmClose(bool on) { m_confirmClose = on; }
  /// The file Help > Documentation opens (the README).
  void setDocumentation(const QString& path);
  std::shared_ptr<const core::Trace> trace() const;
  TraceView* traceView() const;
  InspectorPage* inspector() const { return m_inspector; }
  ComparePage* comparePage() const { return m_compare; }
  TrainingPage* trainingPage() const { return m_training; }
  ErrorsPage* errorsPage() const { return m_errors; }
  PageView* pageView() const { return m_pageView; }
  ModelListModel* models() const;
  StepCursor* cursor() const { return m_cursor; }
  StepBar* stepBar() const { return m_stepBar; }
  QTabWidget* tabs() const { return m_tabs; }
  DatasetBrowser* datasetBrowser() const { return m_datasets; }
  /// Decoding of every trace: 1 greedy, more a beam search of that width (remembered).
  int beamWidth() const;
  void setBeamWidth(int width);
  /// Reads the image again showing the inspected model's `index`th best beam hypothesis (the
  /// inspector's beam list does this); an index the shown trace does not list is ignored.
  void chooseHypothesis(int index);

 public Q_SLOTS:
  void setStep(int step);
  void nextStep();
  void previousStep();
  void firstStep();
  void lastStep();

 Q_SIGNALS:
  void stepChanged(int step);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void moveEvent(QMoveEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildDocks();
  void buildPages();
  void buildMenus();
  void wireDocument();
  /// Adds a page to the stack; `docks`: the shared docks it shows while it is current.
  void addPage(Page* page, QList<QDockWidget*> docks);
  Page* currentPage() const;
  /// Shows the current page's toolbar actions, docks and step bar, and hides the others'.
  void showPageChrome();
  /// The cursor's steps and the status line for the current page's reading.
  void showReading();
  void onTracesChanged();
  /// Gives the keyboard focus to the current page's main view (after a dialog, at start).
  void focusCurrentView();
  void openImageDialog();
  /// File > Open Model...; `withOptions`: ... with Options..., which asks the import dialog's
  /// questions first.
  void openModelDialog(bool withOptions);
  /// openModel() (`options` null: those remembered for the file) or openModelWith().
  bool openModelFile(const QString& path, const core::ImportOptions* options);
  /// Opens a misread image (from an evaluation or the error analysis) with the models that
  /// misread it, in the inspector (one model) or compare (several), at the first step whose
  /// token disagrees with the truth once the reading is shown.
  void openFailure(const QImage& image, const QString& source, const QString& truth,
                   const QStringList& models, const QString& focus, int beamWidth);
  /// Hides the banner when it is about `topic`.
  void clearError(ErrorTopic topic);
  void pasteImage();
  void exportView();

  ReadingDocument* m_document;
  StepCursor* m_cursor;
  std::vector<std::pair<Page*, QList<QDockWidget*>>> m_pages;  ///< in tab order, with docks
  QTabWidget* m_tabs = nullptr;
  InspectorPage* m_inspector = nullptr;
  ComparePage* m_compare = nullptr;
  TrainingPage* m_training = nullptr;
  ErrorsPage* m_errors = nullptr;
  PageView* m_pageView = nullptr;
  InspectorExports* m_exports = nullptr;
  QToolBar* m_pageBar = nullptr;
  StepBar* m_stepBar = nullptr;
  DatasetBrowser* m_datasets = nullptr;
  ErrorBanner* m_banner = nullptr;
  RecentImagesMenu* m_recentMenu = nullptr;
  HelpMenu* m_help = nullptr;
  QList<QDockWidget*> m_docks;
  QStringList m_closedDocks;      ///< closed by the user: closed on every page (object names)
  bool m_applyingChrome = false;  ///< docks hidden with their page are not closed by the user
  bool m_goToFirstError = false;  ///< after the next trace (a failure opened from a page)
  bool m_confirmClose = true;
  QTimer* m_sessionSave = nullptr;  ///< single-shot: saves the session after a change
};

}  // namespace foveal::ui
