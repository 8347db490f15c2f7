#pragma once
// The main window: a composition root. It builds the Models list, the Inspector and Compare
// pages and the step bar, wires them to one ReadingDocument (the image and its truth, which the
// pages observe), one StepCursor and one TraceRunner, and owns no computation itself.
#include <QImage>
#include <QMainWindow>
#include <memory>
#include <vector>

#include "error_banner.h"
#include "image/grey_image.h"
#include "reading_document.h"
#include "trace_runner.h"

class QDockWidget;
class QLabel;
class QLineEdit;
class QListView;
class QMenu;
class QProgressBar;
class QSpinBox;
class QTabWidget;

namespace foveal::ui {

class ComparePage;
class DatasetBrowser;
class ErrorsPage;
class InspectorPage;
class ModelListModel;
class StepBar;
class StepCursor;
class TraceView;
class TrainingPage;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Returns false and shows the error in the window when the file cannot be used.
  bool openImage(const QString& path);
  /// Loads a model file off the GUI thread and makes it the inspected model once loaded (the
  /// Models dock shows it as loading meanwhile). Returns false at once, with the error shown,
  /// for a file that does not exist; a file that cannot be loaded is reported in the error
  /// banner when its load ends, and its row is removed.
  bool openModel(const QString& path);  ///< a .fvm, or a DTRB .pth (asks what it must)
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
  /// the dock layout (the models listed by then keep their rows).
  void restoreSession();

  int step() const;
  int stepCount() const;
  /// The model row the inspector shows (-1: none).
  int currentModel() const { return m_currentModel; }
  bool isTracing() const { return m_runner->isRunning(); }
  QString errorText() const;
  /// The truth field (the expected text of the image).
  QString truth() const { return m_document->truth(); }
  /// The image being read, its source and truth (the pages observe it).
  ReadingDocument* document() const { return m_document; }
  /// What the error banner is about: a later success of the same kind clears it, others not.
  using ErrorTopic = ErrorBanner::Topic;
  void showError(const QString& message, ErrorTopic topic = ErrorTopic::Other);
  /// The docks (Models, Dataset), also listed in the View menu.
  QList<QDockWidget*> docks() const { return m_docks; }
  /// The text of Help > Keyboard Shortcuts.
  static QString shortcutsText();
  /// Writes the inspector's image with its overlays, or its alignment matrix, alone as a figure
  /// (.png at `scale`, .svg, .pdf). Returns an error message, empty on success.
  QString exportImageFigure(const QString& path, double scale = 3.0);
  QString exportAlignmentFigure(const QString& path, double scale = 3.0);
  /// Whether closing asks first (runs started here are still training). Tests turn it off.
  void setConfirmClose(bool on) { m_confirmClose = on; }
  /// The file Help > Documentation opens (the README).
  void setDocumentation(const QString& path) { m_documentation = path; }
  std::shared_ptr<const core::Trace> trace() const;
  TraceView* traceView() const;
  InspectorPage* inspector() const { return m_inspector; }
  ComparePage* comparePage() const { return m_compare; }
  TrainingPage* trainingPage() const { return m_training; }
  ErrorsPage* errorsPage() const { return m_errors; }
  ModelListModel* models() const { return m_models; }
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
  void traceReady();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  bool prepareDtrbModel(const QString& path);
  /// A DTRB file's characters could not be inferred: asks for them and reads it again.
  void askDtrbCharset(int row, const QString& message, const QString& architecture, int classes);
  /// Set to abandon the image read openImage() is waiting for (null when none).
  std::shared_ptr<bool> m_cancelImageRead;
  void buildActions();
  void buildLayout();
  void retrace();
  void onTracesFinished(const std::vector<TraceOutcome>& outcomes);
  void showCurrentModel();
  /// Gives the keyboard focus to the current page's main view (after a dialog, at start).
  void focusCurrentView();
  void saveSession() const;
  /// Opens a misread image with the model that misread it; the inspector goes to the first
  /// step whose token disagrees with the truth once the trace is ready.
  void inspectFailure(const QImage& image, const QString& source, const QString& truth,
                      const QString& model, int beamWidth);
  /// The same with several models: they are ticked and shown side by side in compare, `focus`
  /// inspected (the step goes to its first wrong one).
  void compareFailure(const QImage& image, const QString& source, const QString& truth,
                      const QStringList& models, const QString& focus, int beamWidth);
  /// Tells the Errors page which models an analysis reads with: the ticked ones, else the
  /// inspected one.
  void updateErrorModels();
  /// Hides the banner when it is about `topic`.
  void clearError(ErrorTopic topic);
  void onModelLoaded(int row);
  void onModelLoadFailed(int row, const QString& message);
  void onModelRowsRemoved(int first, int last);
  /// Warns, on the inspector, of truth characters outside the inspected model's charset.
  void updateTruthWarning();
  void rememberRecent(const QString& path);
  void rebuildRecentMenu();
  void pasteImage();
  void exportView();
  void exportStrip();
  /// Asks for a file (and, for PNG, a scale) and writes the inspector's `what` as a figure.
  void exportFigureDialog(QWidget* what, const QString& title);
  void exportTrace();

  ModelListModel* m_models;
  StepCursor* m_cursor;
  TraceRunner* m_runner;
  int m_currentModel = -1;
  int m_hypothesis = 0;  ///< the beam hypothesis the next reading shows (then back to 0)

  ReadingDocument* m_document;
  std::vector<int> m_tracedRows;         ///< model rows of the last trace request
  std::vector<TraceOutcome> m_outcomes;  ///< per traced row
  QStringList m_openRequests;            ///< paths given to openModel() still loading

  QSpinBox* m_beam = nullptr;
  QTabWidget* m_tabs = nullptr;
  InspectorPage* m_inspector = nullptr;
  ComparePage* m_compare = nullptr;
  TrainingPage* m_training = nullptr;
  ErrorsPage* m_errors = nullptr;
  bool m_goToFirstError = false;  ///< after the next trace (a failure opened from Training)
  StepBar* m_stepBar = nullptr;
  DatasetBrowser* m_datasets = nullptr;
  QListView* m_modelView = nullptr;
  ErrorBanner* m_banner = nullptr;
  QList<QDockWidget*> m_docks;
  QList<QAction*> m_stepActions;
  int m_previousModel = -1;  ///< inspected before the pending openModel(); back to it on failure
  bool m_confirmClose = true;
  QString m_documentation;
  bool m_userChoseModel = false;  ///< a model was opened by name: background loads do not show
  QLineEdit* m_truthEdit = nullptr;
  QProgressBar* m_progress = nullptr;
  QMenu* m_recentMenu = nullptr;
};

}  // namespace foveal::ui
