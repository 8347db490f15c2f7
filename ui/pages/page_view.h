#pragma once
// The Page view: a page image with its PAGE-XML or ALTO layout (regions, lines with their
// polygons and baselines, in reading order), every line read off the GUI thread with the
// inspected model (and the ticked ones, when asked) with progress and cancel, each line's
// reading and mean confidence drawn over the page on a colour scale with a threshold under which
// lines are flagged, and beside it the lines as a table with the layout's transcription and the
// reading's errors marked. Choosing a line (a click, Up/Down) makes it the document's image, cut
// out as kraken cuts it and read by every model as on the page; Enter or a double-click opens it
// in the Inspector. File > Export Page writes the layout back with the readings, their cuts and
// confidences, as PAGE-XML 2019 or ALTO v4 (core/formats/page_export.h).
#include <QFutureWatcher>
#include <QImage>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "formats/page_layout.h"
#include "image/grey_image.h"
#include "model_list_model.h"
#include "page.h"
#include "page_file.h"
#include "trace/kraken_lines.h"

class QAction;
class QComboBox;
class QDoubleSpinBox;
class QItemSelectionModel;
class QLabel;
class QLayout;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTableView;

namespace foveal::core {
class ModelSession;
}

namespace foveal::ui {

class LineStrip;
class PageCanvas;
class PageLineModel;
class PageReadingRunner;
class ReadingDocument;

class PageView : public QWidget, public Page {
  Q_OBJECT
 public:
  enum class ExportFormat { PageXml, Alto };

  explicit PageView(QWidget* parent = nullptr);
  ~PageView() override;

  /// Reads with the document's inspected model (and its ticked ones when "With ticked models"
  /// is on) at its beam width, and shows the chosen line in it.
  void observe(ReadingDocument* document);

  QWidget* widget() override { return this; }
  QString title() const override { return tr("&Page"); }
  QList<QAction*> toolBarActions() const override;
  QString readingSummary() const override;
  QWidget* focusView() override;

  /// Opens a page off the GUI thread: `imagePath` (empty: the image the layout names) with the
  /// layout `layoutPath`; pageOpened() or failed() (naming the file and the problem) follows,
  /// and the lines are read once a model is there. False at once, with failed(), for a file
  /// that is not there.
  bool openPage(const QString& imagePath, const QString& layoutPath);
  /// File > Open Page...: asks for the layout, and for the image when the one it names is not
  /// there.
  void openPageDialog();
  bool isOpening() const { return m_opening != nullptr; }
  bool hasPage() const { return m_page.layout != nullptr; }
  const PageFile& page() const { return m_page; }

  /// Reads every line again with the models; false (and why, in the status line) when there is
  /// no page or no model.
  bool readLines();
  void cancelReading();
  bool isReading() const;
  /// Blocks until the reading's tasks have stopped (tests); their results still come through
  /// the event loop.
  void waitForReading();

  /// Makes `line` the current line (the canvas and the table follow, and the document shows it).
  void chooseLine(int line);
  /// chooseLine(), then asks the window to show the Inspector (inspectRequested()).
  void inspectLine(int line);
  int currentLine() const;

  /// Writes the page with the shown model's readings; returns the error (naming the file), or
  /// an empty string. Needs every line read.
  QString exportPage(const QString& path, ExportFormat format) const;

  /// Lines under this mean confidence are flagged (remembered).
  void setThreshold(double threshold);
  double threshold() const;
  /// Which of the models read the page the canvas and table show (0: the first).
  void showModel(int index);
  /// The names of the models the page was last read with, in order.
  QStringList modelsRead() const;
  /// Model `model`'s reading of `line` (null: not read).
  std::shared_ptr<const core::LineReading> reading(int model, int line) const;

  QAction* openAction() const { return m_openAction; }
  QAction* readAction() const { return m_readAction; }
  QAction* cancelAction() const { return m_cancelAction; }
  /// "With Ticked Models": the ticked models read the page too (remembered).
  QAction* withTickedAction() const { return m_withTicked; }
  /// File > Export Page as PAGE-XML... and ... as ALTO...
  QList<QAction*> exportActions() const;
  /// Shown in the toolbar once something listens to whyMisreadRequested() (a view of why a line
  /// was misread); enabled for a line whose reading differs from its transcription.
  QAction* whyMisreadAction() const { return m_whyAction; }

  PageCanvas* canvas() const { return m_canvas; }
  PageLineModel* lineModel() const { return m_lines; }
  QTableView* lineTable() const { return m_table; }
  QItemSelectionModel* selection() const { return m_selection; }
  LineStrip* lineStrip() const { return m_strip; }
  /// The current line's reading and transcription with the errors marked (rich text).
  QString lineText() const;
  QString statusText() const;

 Q_SIGNALS:
  void pageOpened(const QString& layoutPath);
  /// Something the user should see (the window's error banner): a file that cannot be opened,
  /// a page image that does not match its layout, an export that failed.
  void failed(const QString& message);
  void message(const QString& text);
  /// The user asked to open the current line in the Inspector (the document shows it already).
  void inspectRequested();
  /// The user asked why line `line` was misread (the document shows it already).
  void whyMisreadRequested(int line);

 private:
  struct ModelRead {
    ModelId id = 0;
    QString name;
    std::shared_ptr<core::ModelSession> session;
    std::vector<std::shared_ptr<const core::LineReading>> lines;
  };
  /// The constructor's sections: the status row (status, progress, Cancel), the splitter with
  /// the canvas beside the line table over the current line's detail (strip and texts), and the
  /// connections of the views and of the runner.
  QLayout* buildStatusRow();
  QWidget* buildSplit();
  void buildLineTable(QWidget* side);
  QWidget* buildDetail(QWidget* side);
  void connectViews();
  void connectRunner();
  /// The actions, by what they act on: opening and reading the page, whose readings it shows,
  /// the flag threshold (its label returned), the current line, and the export.
  void buildActions();
  void buildReadingActions();
  void buildModelBox();
  QLabel* buildThresholdBox();
  void buildLineActions();
  void buildExportActions();
  void onPageRead(PageFile file);
  /// The models a reading uses now: the inspected one, then (when asked) the ticked ones.
  std::vector<ModelRead> readingModels() const;
  /// Reads again when the models (or the beam width) differ from those of the last reading.
  void readIfModelsChanged();
  void onLineRead(int model, int line, std::shared_ptr<const core::LineReading> reading);
  void onCurrentLineChanged(int line);
  /// The document shows `line`: its extraction by the inspected model, read as on the page.
  void showLineInDocument(int line);
  /// The document's image is `line` (showLineInDocument() made it so, and nothing replaced it).
  bool documentShows(int line) const;
  void updateDetail();
  void updateStatus();
  void updateActions();
  void setStatus(const QString& html);
  void exportDialog(ExportFormat format);
  int shownModel() const;

  ReadingDocument* m_document = nullptr;
  PageFile m_page;
  QFutureWatcher<PageFile>* m_opening = nullptr;
  std::vector<ModelRead> m_read;  ///< the models of the last reading, with what they read
  int m_readBeam = 1;
  bool m_readCancelled = false;
  int m_done = 0, m_total = 0;
  QStringList m_lineErrors;

  PageReadingRunner* m_runner;
  PageLineModel* m_lines;
  QItemSelectionModel* m_selection;
  PageCanvas* m_canvas;
  QTableView* m_table;
  QLabel* m_status;
  QProgressBar* m_progress;
  QPushButton* m_cancel;
  QLabel* m_detail;
  LineStrip* m_strip;
  QSplitter* m_split;

  QAction* m_openAction;
  QAction* m_readAction;
  QAction* m_cancelAction;
  QAction* m_withTicked;
  QAction* m_showReadings;
  QAction* m_inspectAction;
  QAction* m_whyAction;
  QAction* m_exportPage;
  QAction* m_exportAlto;
  QAction* m_modelBoxAction;
  QComboBox* m_modelBox;
  QDoubleSpinBox* m_thresholdBox;
  QList<QAction*> m_toolActions;
};

}  // namespace foveal::ui
