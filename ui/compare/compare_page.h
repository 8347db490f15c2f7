#pragma once
// The same image through two to four models side by side, steps in sync (one StepCursor), each
// with its overlays, reading, confidence and mean entropy; a summary table underneath.
#include <QImage>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "compare_summary_model.h"
#include "page.h"
#include "trace/model_session.h"

class QComboBox;
class QGridLayout;
class QLabel;
class QSplitter;
class QTableView;

namespace foveal::ui {

class ExplainRunner;
struct ExplainResult;
class PatchStrip;
class ReadingControls;
class ReadingDocument;
class StepCursor;
class TraceView;

class ComparePage : public QWidget, public Page {
  Q_OBJECT
 public:
  ComparePage(StepCursor* cursor, QWidget* parent = nullptr);

  /// Follows the document: its image and truth, and the ticked models' readings; brings the
  /// document's truth and beam controls.
  void observe(ReadingDocument* document);

  QWidget* widget() override { return this; }
  QString title() const override { return tr("&Compare"); }
  QList<QAction*> toolBarActions() const override;
  bool followsSteps() const override { return true; }
  /// The longest reading's steps: the others stay on their last one.
  int stepCount() const override;
  QString readingSummary() const override;
  QWidget* focusView() override;

  void setImage(const QImage& image);
  void setRows(std::vector<CompareSummaryModel::Row> rows);
  void setTruth(const QString& truth);
  /// Each character's true box (empty: unknown): every column shows them and marks its misses.
  void setTruthBoxes(const std::vector<core::Box>& boxes);
  /// The overlays of every column, by painter name (overlay_painter.h), as toggled on the
  /// inspector.
  void setOverlays(const QStringList& overlays);

  int columnCount() const { return static_cast<int>(m_columns.size()); }
  TraceView* traceView(int column) const { return m_columns.at(static_cast<size_t>(column)).view; }
  /// The card of a column (title, view, information, strip).
  QWidget* card(int column) const { return m_columns.at(static_cast<size_t>(column)).box; }
  CompareSummaryModel* summary() const { return m_summary; }
  /// The heat's map for every column (as the inspector's): attention or an attribution method,
  /// computed per column for the shown step.
  QComboBox* heatSourceBox() const { return m_heatSource; }

 private:
  struct Column {
    QWidget* box = nullptr;
    QLabel* title = nullptr;
    TraceView* view = nullptr;
    QLabel* info = nullptr;
    PatchStrip* strip = nullptr;
    // The column's explanations: its reading copied with the maps computed so far.
    ExplainRunner* explainer = nullptr;
    std::shared_ptr<core::Trace> explained;
    std::pair<std::string, int> pending;  ///< the (method, step) being computed
  };
  void showStep(int step);
  /// The doubt setting's marks (doubt_marks.h) of each row, and on the cards.
  static void markDoubt(std::vector<CompareSummaryModel::Row>& rows);
  void updateDoubt();
  void explainColumn(size_t column, int step);
  void explanationReady(size_t column, const ExplainResult& result);

  StepCursor* m_cursor;
  ReadingControls* m_controls = nullptr;
  QImage m_image;
  QString m_truth;
  std::vector<core::Box> m_truthBoxes;
  QStringList m_overlays;
  std::vector<CompareSummaryModel::Row> m_rows;
  std::vector<Column> m_columns;
  QGridLayout* m_grid;
  QLabel* m_empty;
  CompareSummaryModel* m_summary;
  QTableView* m_table;
  QSplitter* m_split = nullptr;
  QComboBox* m_heatSource = nullptr;
  ReadingDocument* m_document = nullptr;
  /// Per row, the model that read it (for explanations).
  std::vector<std::shared_ptr<core::ModelSession>> m_sessions;
};

}  // namespace foveal::ui
