#pragma once
// The Errors page: where a model fails across a dataset, and why. Reads a dataset with the models
// of the Models dock (the ticked ones, else the inspected one) off the GUI thread, then shows one
// row per image (thumbnail, truth, each model's reading, confidence, edit distance, CER,
// entropy; who read it right), sortable and filtered by right/wrong, length, a character
// confusion and text; beside it the chosen model's confusion matrix (a click filters the rows to
// the images behind a cell) and its accuracy and CER per label length and per character.
// Double-clicking a row opens the image in the inspector (in compare with several models) at
// its first wrong step.
#include <QImage>
#include <QStringList>
#include <QWidget>
#include <memory>

#include "page.h"
#include "train/error_analysis.h"

class QCheckBox;
class QHBoxLayout;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTableView;
class QTableWidget;
class QTabWidget;
class QVBoxLayout;
class QToolButton;

namespace foveal::ui {

class ConfusionView;
class ErrorAnalysisRunner;
class ErrorFilterModel;
class ErrorTableModel;
class ReadingControls;
class ReadingDocument;

class ErrorsPage : public QWidget, public Page {
  Q_OBJECT
 public:
  explicit ErrorsPage(QWidget* parent = nullptr);
  ~ErrorsPage() override;

  /// Reads with the document's models (the ticked ones, else the inspected one) and its beam
  /// width, and brings the beam control.
  void observe(ReadingDocument* document);

  QWidget* widget() override { return this; }
  QString title() const override { return tr("E&rrors"); }
  QList<QAction*> toolBarActions() const override;

  /// The model files the next analysis reads with (observe() passes the ticked models, or the
  /// inspected one), and what to call that choice in the status line.
  void setModels(const QStringList& paths, const QString& origin = {});
  QStringList models() const { return m_modelPaths; }
  void setDataset(const QString& spec);
  QString dataset() const;
  /// First N entries (0: all).
  void setLimit(int images);
  /// Whether the next analysis measures each wrong reading's image share (read or guessed).
  void setMeasureImageShare(bool on);
  /// Decoding of the next analysis: 1 greedy, more a beam search of that width.
  void setBeamWidth(int width) { m_beamWidth = width; }

  /// Starts the analysis; false (and the reason in the status line) when it cannot start.
  bool analyse();
  void cancel();
  bool isRunning() const;
  /// Blocks until the run in flight (if any) has stopped; its result is then delivered by the
  /// event loop (tests).
  void waitForRunner();

  ErrorTableModel* table() const { return m_table; }
  ErrorFilterModel* filter() const { return m_filter; }
  ConfusionView* confusionView() const { return m_confusion; }
  QTableView* view() const { return m_view; }
  QTableWidget* lengthTable() const { return m_byLength; }
  QTableWidget* characterTable() const { return m_byChar; }
  QString statusText() const;
  /// Chooses the model the filters, the matrix and the statistics are about.
  void setFocusModel(int model);

  /// Opens the image of row `row` of the (filtered, sorted) view: emits inspectRequested or,
  /// with several models, compareRequested.
  void chooseRow(int row);
  /// Writes the rows shown as CSV. Returns an error message, empty on success.
  QString exportTable(const QString& path) const;
  /// Writes the chosen model's confusion matrix: .csv (counts), .png (at `scale`) or .svg.
  QString exportConfusion(const QString& path, double scale = 2.0) const;
  /// Sorts the rows by the doubt of their worst step under the chosen model (its lowest token
  /// probability), the most doubtful first ("Doubtful first").
  void sortByDoubt();

 Q_SIGNALS:
  void inspectRequested(const QImage& image, const QString& source, const QString& truth,
                        const QString& model, int beamWidth);
  void compareRequested(const QImage& image, const QString& source, const QString& truth,
                        const QStringList& models, const QString& focus, int beamWidth);
  void failed(const QString& message);
  void message(const QString& text);
  /// An analysis finished and is shown.
  void analysed();

 private:
  /// The page's parts, top to bottom: what to read and the run's controls; the filters (and the
  /// confusion and text searches); the rows beside the chosen model's matrix and statistics.
  void buildRunRow(QVBoxLayout* layout);
  void buildFilterRow(QVBoxLayout* layout);
  void buildSearchControls(QHBoxLayout* row);
  void buildRowsAndSide(QVBoxLayout* layout);
  QWidget* buildSide();
  void connectRunner();
  void onFinished(std::shared_ptr<const core::train::ErrorAnalysis> analysis);
  void showFocus();
  void applyConfusionText();
  void updateSummary();
  void setRunning(bool running);
  void exportMenu();
  void setStatus(const QString& html);

  ReadingControls* m_controls = nullptr;
  QStringList m_modelPaths;
  QString m_modelOrigin;
  int m_beamWidth = 1;
  int m_runningBeam = 1;
  QString m_runningDataset;
  ErrorAnalysisRunner* m_runner;
  ErrorTableModel* m_table;
  ErrorFilterModel* m_filter;

  QLineEdit* m_dataset;
  QSpinBox* m_limit;
  QCheckBox* m_imageShare;  ///< measure the wrong readings' image share
  bool m_runningShare = false;
  QPushButton* m_run;
  QPushButton* m_cancel;
  QProgressBar* m_progress;
  QLabel* m_status;
  QComboBox* m_show;
  QComboBox* m_focus;
  QSpinBox* m_minLength;
  QSpinBox* m_maxLength;
  QLineEdit* m_confusionEdit;
  QLineEdit* m_search;
  QToolButton* m_export;
  QLabel* m_shown;
  QSplitter* m_split;
  QTableView* m_view;
  QLabel* m_matrixTitle;
  ConfusionView* m_confusion;
  QTabWidget* m_statsTabs;
  QTableWidget* m_byLength;
  QTableWidget* m_byChar;
};

}  // namespace foveal::ui
