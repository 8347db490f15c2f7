#pragma once
// The inspector: one model's reading of one image, step by step. The image with its overlays,
// the STN patches enlarged, top-5 tokens, the attention bar chart (for a 2-D model the per-step
// grid of cells in its place), the alignment matrix and the strip of every step's patch; all
// follow the shared StepCursor.
#include <QImage>
#include <QWidget>
#include <map>
#include <memory>
#include <vector>

#include "page.h"
#include "trace/attribution.h"
#include "trace/faithfulness.h"
#include "trace/trace.h"

class QComboBox;
class QProgressBar;
class QLabel;
class QScrollArea;
class QTableView;
class QHBoxLayout;
class QVBoxLayout;
class QToolButton;
class QStackedWidget;

namespace foveal::ui {

class AlignmentView;
class ExplainRunner;
struct ExplainResult;
class AttentionGridView;
class BeamList;
class ReadingControls;
class ReadingDocument;
class AttentionPlot;
class DeletionPlot;
class PatchStrip;
class StepCursor;
class TopkModel;
class TraceView;
class WhyMisreadDialog;

class InspectorPage : public QWidget, public Page {
  Q_OBJECT
 public:
  InspectorPage(StepCursor* cursor, QWidget* parent = nullptr);

  /// Follows the document: its image and truth, its models (the box chooses the inspected one)
  /// and the inspected model's reading; brings the document's truth and beam controls.
  void observe(ReadingDocument* document);

  QWidget* widget() override { return this; }
  QString title() const override { return tr("&Inspector"); }
  QList<QAction*> toolBarActions() const override;
  bool followsSteps() const override { return true; }
  int stepCount() const override { return m_trace ? static_cast<int>(m_trace->steps.size()) : 0; }
  QString readingSummary() const override;
  QWidget* focusView() override;

  void setImage(const QImage& image);
  void setTrace(std::shared_ptr<const core::Trace> trace);
  void setTruth(const QString& truth);
  /// Busy / error / empty-state text shown over the details (empty: none).
  void setStatus(const QString& text);
  /// A warning about the truth (characters the model cannot read); empty: none.
  void setTruthWarning(const QString& text);
  QString truthWarning() const { return m_truthWarning; }

  std::shared_ptr<const core::Trace> trace() const { return m_trace; }
  TraceView* traceView() const { return m_view; }
  PatchStrip* patchStrip() const { return m_strip; }
  AlignmentView* alignmentView() const { return m_alignment; }
  AttentionPlot* attentionPlot() const { return m_plot; }
  /// The step panel's deletion curve of the shown map.
  DeletionPlot* deletionPlot() const { return m_deletion; }
  /// The per-step grid: shown instead of the bar chart for a 2-D model.
  AttentionGridView* attentionGrid() const { return m_grid; }
  /// The step panel's text (rich text).
  QString stepText() const;
  /// Moves the cursor to the first step whose token disagrees with the truth (if any).
  void showFirstWrongStep();
  TopkModel* topkModel() const { return m_topk; }
  /// The step panel beside the image (summary, beam list, step, patches, top-k): it scrolls
  /// vertically only, so everything in it must fit its width.
  QScrollArea* stepPanel() const { return m_sideScroll; }
  QTableView* topkView() const { return m_topkView; }
  BeamList* beamList() const { return m_beams; }
  /// The heat source's chooser (Attention, then the attribution methods) and the runner that
  /// computes them (tests wait on it).
  QComboBox* heatSourceBox() const { return m_heatSource; }
  ExplainRunner* explainRunner() const { return m_explainer; }
  /// "Why misread?": shown for a CTC reading with a truth; it opens (and the dialog then
  /// follows) the forced alignment of the truth (why_misread_panel.h). Null until opened.
  QToolButton* whyMisreadButton() const { return m_whyButton; }
  WhyMisreadDialog* whyMisreadDialog() const { return m_why; }
  void openWhyMisread();

 Q_SIGNALS:
  /// The user chose the model box's `index`th entry (observe() makes it the inspected model).
  void modelChosen(int index);
  /// The user chose one of a beam search's N best readings (0: the best).
  void hypothesisChosen(int index);
  /// The overlay toggles changed: the overlays on, by painter name (the compare page follows).
  void overlaysChanged(const QStringList& overlays);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  /// The page's parts: the model box and overlay toggles over the image; the details beside it
  /// (summary, beams, the heat's map chooser with the explanation's progress, the step, its
  /// patches, the deletion curve, the top-k).
  void buildOverlayBar(QVBoxLayout* outer);
  QScrollArea* buildSidePanel(QWidget* top);
  void buildMapChooser(QWidget* side, QVBoxLayout* sideLayout);
  QTableView* buildTopkView(QWidget* side);
  void showStep(int step);
  /// The parts of a step's display: a reading of nothing, the reading's summary, the step's text
  /// and its patches enlarged.
  void showEmptyReading();
  void showReadingSummary();
  void showStepDetails(int step);
  void showStepPatches(int step);
  /// The doubt setting's marks of the shown reading (doubt_marks.h), on the view and the strip.
  void updateDoubt();
  QString doubtSummary() const;
  QString doubtStepText(int step) const;
  QString inspectedModelPath() const;
  /// Scales the patches and the rectified input to the panel's width (never wider, never larger
  /// than their natural enlargement), and lets the panel widen for what cannot wrap.
  void fitPictures();
  /// The document's models in the model box, the inspected one current.
  void showModelChoices();

  StepCursor* m_cursor;
  ReadingDocument* m_document = nullptr;
  ReadingControls* m_controls = nullptr;
  std::shared_ptr<const core::Trace> m_trace;
  QComboBox* m_models;
  TraceView* m_view;
  QLabel* m_summary;
  QLabel* m_stepInfo;
  BeamList* m_beams;
  QHBoxLayout* m_patchRow;
  QLabel* m_rectified = nullptr;
  QList<QLabel*> m_patchLabels;
  QList<QImage> m_patchImages;  ///< the current step's patches, enlarged to 64 px high
  QImage m_rectifiedImage;      ///< the rectified input, enlarged twice
  QScrollArea* m_sideScroll = nullptr;
  QWidget* m_side = nullptr;
  QTableView* m_topkView;
  TopkModel* m_topk;
  AttentionPlot* m_plot;
  AttentionGridView* m_grid;
  QStackedWidget* m_attention;
  AlignmentView* m_alignment;
  PatchStrip* m_strip;
  QString m_truth;
  QString m_truthWarning;
  // The heat's map (attention or an explanation), computed for the shown step on demand: the
  // document's trace copied with the explanations computed so far (the view draws it), and each
  // explained step's figures by (method name, step). Cleared with every new reading.
  QComboBox* m_heatSource = nullptr;
  QWidget* m_explainBusy = nullptr;
  QProgressBar* m_explainProgress = nullptr;
  ExplainRunner* m_explainer = nullptr;
  std::shared_ptr<core::Trace> m_explained;
  std::map<std::pair<std::string, int>, core::StepAttribution> m_explainFigures;
  /// Deletion curves by (map name, step), computed with the maps (attention: on its own).
  std::map<std::pair<std::string, int>, core::FaithfulnessCurves> m_curves;
  DeletionPlot* m_deletion = nullptr;
  void showCurve(int step);
  QString m_explainError;
  std::vector<bool> m_doubtful;       ///< per step: marked doubtful
  std::vector<double> m_doubtValues;  ///< per step: the doubt setting's signal (or P(wrong))
  QString m_doubtWhy;                 ///< why there are no marks though the setting is on
  std::pair<std::string, int> m_explainPending;  ///< the (method, step) being computed
  void offerEngineMethods();
  void explainStep(int step);
  QString explainStepText(int step) const;
  QString readShareText(const core::StepAttribution& figures) const;
  void explanationReady(const ExplainResult& result);
  void updateWhyMisread();
  QToolButton* m_whyButton = nullptr;
  WhyMisreadDialog* m_why = nullptr;
};

}  // namespace foveal::ui
