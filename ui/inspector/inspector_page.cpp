#include "inspector_page.h"

#include <QStandardItemModel>

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "alignment_view.h"
#include "attention_grid.h"
#include "attention_plot.h"
#include "beam_list.h"
#include "deletion_plot.h"
#include "doubt_marks.h"
#include "explain_runner.h"
#include "model_list_model.h"
#include "overlay_painter.h"
#include "patch_strip.h"
#include "qt_convert.h"
#include "reading_controls.h"
#include "reading_document.h"
#include "step_cursor.h"
#include "topk_model.h"
#include "trace_view.h"
#include "why_misread_dialog.h"
#include "why_misread_panel.h"

namespace foveal::ui {

namespace {

// A reading or truth as rich text that may wrap anywhere: a 25-character word at 16 pt is wider
// than the step panel, and an unbreakable word would widen the panel past its view.
QString breakable(const QString& text) {
  QString out;
  for (const QChar c : text) {
    if (!out.isEmpty()) out += QChar(0x200B);  // zero-width space: a line may break here
    out += QString(c).toHtmlEscaped();
  }
  return out;
}

}  // namespace

InspectorPage::InspectorPage(StepCursor* cursor, QWidget* parent)
    : QWidget(parent), m_cursor(cursor) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 6, 6, 6);

  buildOverlayBar(outer);
  auto* vsplit = new QSplitter(Qt::Vertical, this);
  auto* top = new QSplitter(Qt::Horizontal, vsplit);
  top->addWidget(m_view);
  top->addWidget(buildSidePanel(top));
  top->setCollapsible(1, false);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 1);
  auto* bottom = new QSplitter(Qt::Horizontal, vsplit);
  // Alpha of the current step: a bar per region (1-D), or the grid of cells (2-D: a hundred bars
  // in a row would hide the rows).
  m_attention = new QStackedWidget(bottom);
  m_plot = new AttentionPlot(m_attention);
  m_grid = new AttentionGridView(m_attention);
  m_attention->addWidget(m_plot);
  m_attention->addWidget(m_grid);
  m_alignment = new AlignmentView(bottom);
  bottom->addWidget(m_attention);
  bottom->addWidget(m_alignment);
  bottom->setStretchFactor(0, 2);
  bottom->setStretchFactor(1, 3);
  vsplit->addWidget(top);
  vsplit->addWidget(bottom);
  vsplit->setStretchFactor(0, 3);
  vsplit->setStretchFactor(1, 2);
  outer->addWidget(vsplit, 1);

  m_strip = new PatchStrip(this);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(m_strip);
  scroll->setWidgetResizable(true);
  scroll->setFixedHeight(m_strip->minimumHeight() + 20);
  scroll->setFrameShape(QFrame::StyledPanel);
  outer->addWidget(scroll);

  connect(m_alignment, &AlignmentView::stepClicked, cursor, &StepCursor::setStep);
  connect(m_strip, &PatchStrip::stepClicked, cursor, &StepCursor::setStep);
  connect(cursor, &StepCursor::stepChanged, this, &InspectorPage::showStep);
  setStatus({});
}

void InspectorPage::buildOverlayBar(QVBoxLayout* outer) {
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Model:"), this));
  m_models = new QComboBox(this);
  // Long model names are elided in the box rather than widening the window.
  m_models->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_models->setMinimumContentsLength(15);  // with the overlay toggles, the window fits 1200 px
  m_models->setPlaceholderText(tr("no model open"));
  connect(m_models, &QComboBox::activated, this, &InspectorPage::modelChosen);
  bar->addWidget(m_models);
  bar->addSpacing(8);
  m_view = new TraceView(this);
  // One toggle per overlay painter, remembered; the compare page follows them.
  m_view->setOverlays(rememberedOverlays());
  for (const auto& painter : overlayPainters()) {
    const QString name = painter->name();
    auto* box = new QCheckBox(painter->label(), this);
    box->setChecked(m_view->isOverlayOn(name));
    box->setFocusPolicy(Qt::NoFocus);
    box->setObjectName(QStringLiteral("overlay-") + name);
    box->setToolTip(painter->toolTip());
    connect(box, &QCheckBox::toggled, this, [this, name](bool on) {
      m_view->setOverlay(name, on);
      rememberOverlay(name, on);
      Q_EMIT overlaysChanged(m_view->overlays());
    });
    bar->addWidget(box);
  }
  bar->addStretch(1);
  auto* fit = new QToolButton(this);
  fit->setText(tr("Fit"));
  fit->setToolTip(tr("Reset zoom and pan (double-click the image)"));
  connect(fit, &QToolButton::clicked, m_view, &TraceView::resetView);
  bar->addWidget(fit);
  outer->addLayout(bar);
}

QScrollArea* InspectorPage::buildSidePanel(QWidget* top) {
  // The details scroll when the window is short (a laptop screen) instead of making it taller.
  auto* sideScroll = m_sideScroll = new QScrollArea(top);
  sideScroll->setWidgetResizable(true);
  sideScroll->setFrameShape(QFrame::NoFrame);
  sideScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* side = m_side = new QWidget(sideScroll);
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(6, 0, 0, 0);
  m_summary = new QLabel(side);
  m_summary->setObjectName(QStringLiteral("readingSummary"));
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::RichText);
  m_summary->setMinimumWidth(220);
  sideLayout->addWidget(m_summary);
  // CTC models with a truth: where each true character is, beside what was read (a dialog).
  m_whyButton = new QToolButton(side);
  m_whyButton->setObjectName(QStringLiteral("why-misread-button"));
  m_whyButton->setText(tr("Why misread?"));
  m_whyButton->setToolTip(
      tr("The truth force-aligned over the model's frames beside the greedy path, both sets of "
         "character boxes, the posteriorgram and each character's attribution (CTC models)"));
  m_whyButton->hide();
  connect(m_whyButton, &QToolButton::clicked, this, &InspectorPage::openWhyMisread);
  sideLayout->addWidget(m_whyButton);
  m_beams = new BeamList(side);  // a beam search's N best readings, each selectable
  sideLayout->addWidget(m_beams);
  connect(m_beams, &BeamList::hypothesisChosen, this, &InspectorPage::hypothesisChosen);
  m_stepInfo = new QLabel(side);
  m_stepInfo->setTextFormat(Qt::RichText);
  m_stepInfo->setToolTip(
      tr("The step's token and probability, where it looks and the entropy of its attention.\n"
         "\"from the image N %\": of this step's integrated-gradients attribution, the share on "
         "the image's pixels rather than on the previous tokens (100 % = read from the image; "
         "under 50 %, mostly guessed from the tokens before it)."));
  m_stepInfo->setWordWrap(true);  // "entropy H[posterior over columns] ..." is wider than the panel
  sideLayout->addWidget(m_stepInfo);
  // The top-k right under the step, then the heat's map chooser with what depends on the map
  // (issue 64: at 1366x768 the top-k was below the fold, after the patches and the deletion
  // curve).
  sideLayout->addWidget(buildTopkView(side));
  buildMapChooser(side, sideLayout);
  m_patchRow = new QHBoxLayout;
  sideLayout->addLayout(m_patchRow);
  // TPS models: what the features saw, the rectified input (the fiducials are on the image).
  m_rectified = new QLabel(side);
  m_rectified->setAlignment(Qt::AlignCenter);
  m_rectified->setFrameShape(QFrame::StyledPanel);
  m_rectified->setToolTip(tr("The TPS rectification: the model input the features saw"));
  // Scaled to the panel's width (fitPictures): its natural size never widens the panel.
  m_rectified->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  m_rectified->hide();
  sideLayout->addWidget(m_rectified);
  // The shown map's deletion curve for the step (computed with the map, off this thread).
  m_deletion = new DeletionPlot(side);
  m_deletion->setObjectName(QStringLiteral("deletion-curve"));
  sideLayout->addWidget(m_deletion);
  sideLayout->addStretch(1);
  sideScroll->setWidget(side);
  // As wide as the details need: squeezed by the splitter they were cut off on the right.
  sideScroll->setMinimumWidth(side->minimumSizeHint().width() + 16);
  sideScroll->viewport()->installEventFilter(this);
  return sideScroll;
}

void InspectorPage::buildMapChooser(QWidget* side, QVBoxLayout* sideLayout) {
  // The heat's map: attention, or an attribution computed for the shown step on demand (in the
  // side panel, not the overlay bar: the window must fit a 1280-px laptop screen).
  auto* mapRow = new QHBoxLayout;
  mapRow->addWidget(new QLabel(tr("Map:"), side));
  m_heatSource = new QComboBox(side);
  m_heatSource->setObjectName(QStringLiteral("heat-source"));
  m_heatSource->setFocusPolicy(Qt::NoFocus);
  m_heatSource->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_heatSource->setMinimumContentsLength(12);
  m_heatSource->setToolTip(
      tr("What the heat overlay and strip show: the attention, or why the step read its token "
         "(attribution over the image's pixels, computed for the shown step)"));
  m_heatSource->addItem(tr("Attention"), QString::fromLatin1(core::kAttentionMap));
  for (auto method : core::attributionMethods())
    m_heatSource->addItem(qstr(core::attributionLabel(method)), qstr(core::toString(method)));
  mapRow->addWidget(m_heatSource, 1);
  sideLayout->addLayout(mapRow);
  m_explainBusy = new QWidget(side);
  auto* busy = new QHBoxLayout(m_explainBusy);
  busy->setContentsMargins(0, 0, 0, 0);
  m_explainProgress = new QProgressBar(m_explainBusy);
  m_explainProgress->setObjectName(QStringLiteral("explain-progress"));
  m_explainProgress->setRange(0, 100);
  busy->addWidget(m_explainProgress, 1);
  auto* cancel = new QToolButton(m_explainBusy);
  cancel->setObjectName(QStringLiteral("explain-cancel"));
  cancel->setText(tr("Cancel"));
  busy->addWidget(cancel);
  m_explainBusy->hide();
  sideLayout->addWidget(m_explainBusy);
  m_explainer = new ExplainRunner(this);
  connect(cancel, &QToolButton::clicked, m_explainer, &ExplainRunner::cancel);
  connect(m_explainer, &ExplainRunner::progress, this,
          [this](double f) { m_explainProgress->setValue(static_cast<int>(f * 100)); });
  connect(m_explainer, &ExplainRunner::finished, this, &InspectorPage::explanationReady);
  connect(m_explainer, &ExplainRunner::cancelled, this, [this] {
    m_explainBusy->hide();
    m_explainError = tr("cancelled");
    showStep(m_cursor->step());
  });
  connect(m_explainer, &ExplainRunner::failed, this, [this](const QString& message) {
    m_explainBusy->hide();
    m_explainError = message;
    showStep(m_cursor->step());
  });
  connect(m_heatSource, &QComboBox::currentIndexChanged, this, [this] {
    // An attention source (a head, the first pass) goes to every attention view; an
    // explanation to the heat overlays only, the bars and grid keep the (mean) attention.
    const QString source = m_heatSource->currentData().toString();
    const QString attention =
        isAttentionSource(source) ? source : QString::fromLatin1(core::kAttentionMap);
    m_plot->setAttentionSource(attention);
    m_grid->setAttentionSource(attention);
    m_alignment->setAttentionSource(attention);
    m_view->setHeatSource(source);
    m_explainError.clear();
    showStep(m_cursor->step());
  });
}

QTableView* InspectorPage::buildTopkView(QWidget* side) {
  m_topk = new TopkModel(this);
  m_topkView = new QTableView(side);
  m_topkView->setModel(m_topk);
  m_topkView->verticalHeader()->hide();
  // The token takes what is left; the probability column is always as wide as its numbers.
  m_topkView->horizontalHeader()->setSectionResizeMode(TopkModel::TokenColumn,
                                                       QHeaderView::Stretch);
  m_topkView->horizontalHeader()->setSectionResizeMode(TopkModel::ProbabilityColumn,
                                                       QHeaderView::ResizeToContents);
  m_topkView->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_topkView->setSelectionMode(QAbstractItemView::NoSelection);
  m_topkView->setFocusPolicy(Qt::NoFocus);
  m_topkView->verticalHeader()->setDefaultSectionSize(m_topkView->fontMetrics().height() + 6);
  m_topkView->setMinimumHeight(6 * (m_topkView->fontMetrics().height() + 6) + 4);
  m_topkView->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

  return m_topkView;
}

void InspectorPage::observe(ReadingDocument* document) {
  m_document = document;
  m_controls = new ReadingControls(
      document, ReadingControls::Truth | ReadingControls::Beam | ReadingControls::Doubt, this);
  connect(&DoubtMarks::instance(), &DoubtMarks::changed, this, [this] {
    updateDoubt();
    showStep(m_cursor->step());
  });
  connect(m_controls, &ReadingControls::finished, this,
          [this] { focusView()->setFocus(Qt::OtherFocusReason); });
  connect(document, &ReadingDocument::imageChanged, this, [this, document] {
    setImage(document->displayImage());
    m_view->setTruthBoxes(document->truthBoxes());
    m_strip->setTruthBoxes(document->truthBoxes());
  });
  connect(document, &ReadingDocument::truthChanged, this, &InspectorPage::setTruth);
  connect(document, &ReadingDocument::truthWarningChanged, this, &InspectorPage::setTruthWarning);
  connect(document, &ReadingDocument::modelsChanged, this, &InspectorPage::showModelChoices);
  connect(this, &InspectorPage::modelChosen, document, [this, document](int index) {
    document->inspect(m_models->itemData(index).value<ModelId>());
  });
  connect(this, &InspectorPage::hypothesisChosen, document, &ReadingDocument::chooseHypothesis);
  connect(document, &ReadingDocument::readingStarted, this, [this, document] {
    if (document->inspectedModel()) setStatus(tr("<b>Reading...</b>"));
  });
  connect(document, &ReadingDocument::tracesChanged, this, [this, document] {
    const auto trace = document->trace(document->inspectedModel());
    if (trace != m_trace)
      setTrace(trace);
    else if (!trace && document->inspectedModel())
      setStatus({});  // its reading failed (the banner says why): not "Reading..." forever
  });
  connect(document, &ReadingDocument::modelFailed, this,
          [this, document](const QString&, const QString& message) {
            if (!document->inspectedModel())
              setStatus(tr("<b>No model</b><br>%1").arg(message.toHtmlEscaped()));
          });
  showModelChoices();
}

void InspectorPage::showModelChoices() {
  const ModelListModel* models = m_document->models();
  const QSignalBlocker block(m_models);
  m_models->clear();
  for (int r = 0; r < models->rowCount(); ++r)
    m_models->addItem(models->displayName(r), QVariant::fromValue(models->idAt(r)));
  m_models->setCurrentIndex(m_models->findData(QVariant::fromValue(m_document->inspectedModel())));
}

QList<QAction*> InspectorPage::toolBarActions() const {
  return m_controls ? m_controls->actions() : QList<QAction*>();
}

QWidget* InspectorPage::focusView() { return m_view; }

QString InspectorPage::readingSummary() const {
  if (!m_trace) return {};
  return tr("Read \"%1\" in %2 steps%3")
      .arg(qstr(m_trace->prediction))
      .arg(m_trace->steps.size())
      .arg(m_trace->beamWidth > 1 ? tr(" (beam search, width %1)").arg(m_trace->beamWidth)
                                  : QString());
}

void InspectorPage::setImage(const QImage& image) {
  m_view->setImage(image);
  setTrace(nullptr);
}

void InspectorPage::setTruth(const QString& truth) {
  m_truth = truth;
  m_strip->setTruth(truth);
  showStep(m_cursor->step());
  updateWhyMisread();
}

void InspectorPage::updateWhyMisread() {
  const bool offered = m_trace && m_trace->isCtc() && !m_truth.isEmpty() && m_document;
  m_whyButton->setVisible(offered);
  // An open dialog follows the reading and the truth.
  if (m_why && m_why->isVisible() && offered) openWhyMisread();
}

void InspectorPage::openWhyMisread() {
  if (!m_trace || m_truth.isEmpty() || !m_document) return;
  const int row = m_document->models()->rowOf(m_document->inspectedModel());
  auto session = row >= 0 ? m_document->models()->session(row) : nullptr;
  if (!session) return;
  if (!m_why) m_why = new WhyMisreadDialog(this);
  m_why->setWindowTitle(tr("Why misread? %1").arg(m_document->models()->displayName(row)));
  core::TraceOptions options;
  options.beamWidth = m_trace->beamWidth;
  options.beamHypothesis = m_trace->hypothesis;
  m_why->panel()->setReading(session, m_document->image(), m_document->displayImage(),
                             m_document->source(), m_truth, options);
  m_why->show();
  m_why->raise();
}

void InspectorPage::setTruthWarning(const QString& text) {
  m_truthWarning = text;
  showStep(m_cursor->step());
}

void InspectorPage::setStatus(const QString& text) {
  if (!text.isEmpty()) {
    m_summary->setText(text);
    return;
  }
  if (!m_trace)
    m_summary->setText(
        tr("<b>Nothing to show yet</b><br>Open an image (Ctrl+O) and a model "
           "(Ctrl+M), or drop them on the window."));
}

void InspectorPage::setTrace(std::shared_ptr<const core::Trace> trace) {
  m_trace = std::move(trace);
  // A new reading: the explanations of the last one no longer apply.
  {
    const QSignalBlocker quiet(m_explainer);
    m_explainer->cancel();
  }
  m_explainBusy->hide();
  m_explainPending = {};
  m_explainFigures.clear();
  m_curves.clear();
  m_explainError.clear();
  m_explained = m_trace ? std::make_shared<core::Trace>(*m_trace) : nullptr;
  m_view->setTrace(m_explained);
  m_topk->setTrace(m_trace);
  m_beams->setTrace(m_trace);
  m_plot->setTrace(m_trace);
  m_grid->setTrace(m_trace);
  m_attention->setCurrentWidget(m_trace && m_trace->isGrid() ? static_cast<QWidget*>(m_grid)
                                                             : static_cast<QWidget*>(m_plot));
  m_alignment->setTrace(m_trace);
  m_strip->setTrace(m_trace);
  updateDoubt();
  offerAttentionSources(m_heatSource, m_trace.get());  // PARSeq's heads, its first pass
  offerEngineMethods();
  m_strip->setTruth(m_truth);
  if (m_trace && m_trace->hasTps() && !m_trace->rectified.empty()) {
    const QImage img = toQImage(m_trace->rectified);
    m_rectifiedImage = img.scaled(img.size() * 2, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    m_rectified->show();
    fitPictures();
  } else {
    m_rectifiedImage = QImage();
    m_rectified->clear();
    m_rectified->hide();
  }
  setStatus({});
  showStep(m_cursor->step());
  updateWhyMisread();
}

QString InspectorPage::stepText() const { return m_stepInfo->text(); }

void InspectorPage::showFirstWrongStep() {
  const auto& correct = m_strip->correct();
  const auto wrong = std::find(correct.begin(), correct.end(), false);
  if (wrong != correct.end()) m_cursor->setStep(static_cast<int>(wrong - correct.begin()));
}

void InspectorPage::showStep(int step) {
  if (!m_trace || m_trace->steps.empty()) {
    showEmptyReading();
    return;
  }
  step = std::clamp(step, 0, static_cast<int>(m_trace->steps.size()) - 1);
  m_view->setStep(step);
  m_topk->setStep(step);
  m_plot->setStep(step);
  m_grid->setStep(step);
  m_alignment->setStep(step);
  m_strip->setStep(step);
  showReadingSummary();
  showStepDetails(step);
  explainStep(step);
  showCurve(step);
  showStepPatches(step);
}

void InspectorPage::showEmptyReading() {
  m_stepInfo->clear();
  for (auto* l : m_patchLabels) l->deleteLater();
  m_patchLabels.clear();
  // A reading of "" is a reading (issue 64): say so, and keep nothing of another model's.
  m_deletion->clearCurve(tr("no deletion curve: nothing was read"));
  if (!m_trace) return;
  QString verdict;
  if (!m_truth.isEmpty())
    verdict = tr(" <span style='color:#c62828'>✘ truth \"%1\"</span>").arg(breakable(m_truth));
  m_summary->setText(tr("<b>Read nothing</b>%1<br>confidence %2<br><small>%3</small>")
                         .arg(verdict)
                         .arg(m_trace->confidence, 0, 'f', 3)
                         .arg(qstr(m_trace->modelDescription).toHtmlEscaped()));
}

void InspectorPage::showReadingSummary() {
  QString verdict;
  if (!m_truth.isEmpty())
    verdict =
        qstr(m_trace->prediction) == m_truth
            ? tr(" <span style='color:#1a7f37'>✔ correct</span>")
            : tr(" <span style='color:#c62828'>✘ truth \"%1\"</span>").arg(breakable(m_truth));
  if (!m_truthWarning.isEmpty())
    verdict += QStringLiteral("<br><span style='color:#b26a00'>⚠ %1</span>")
                   .arg(m_truthWarning.toHtmlEscaped());
  const QString notes =
      qstr(m_trace->modelDescription).toHtmlEscaped() +
      (m_trace->inputPass.empty()  // EasyOCR's readtext: which pass is shown, and why
           ? QString()
           : QStringLiteral("<br>") + qstr(m_trace->inputPass).toHtmlEscaped()) +
      (m_trace->decodingNote.empty()  // PARSeq with a beam: read greedily, and why
           ? QString()
           : QStringLiteral("<br><span style='color:#b26a00'>%1</span>")
                 .arg(qstr(m_trace->decodingNote).toHtmlEscaped()));
  const QString beam =
      m_trace->beamWidth > 1
          ? (m_trace->hypothesis > 0 ? tr(" &middot; beam %1, reading %2")
                                           .arg(m_trace->beamWidth)
                                           .arg(m_trace->hypothesis + 1)
                                     : tr(" &middot; beam %1").arg(m_trace->beamWidth))
          : QString();
  m_summary->setText(tr("<b>Prediction</b> <span style='font-size:16pt'>%1</span>%2<br>"
                        "confidence %3 &middot; mean entropy %4%6%7<br><small>%5</small>")
                         .arg(breakable(qstr(m_trace->prediction)), verdict)
                         .arg(m_trace->confidence, 0, 'f', 3)
                         .arg(m_trace->meanEntropy, 0, 'f', 3)
                         .arg(notes, beam, doubtSummary()));
}

QString InspectorPage::doubtSummary() const {
  const DoubtMarking marking = DoubtMarks::instance().marking();
  if (!marking.on()) return {};
  if (m_doubtful.empty())
    return QStringLiteral(" &middot; <span style='color:#b26a00'>%1</span>")
        .arg(tr("no doubt marks: %1").arg(m_doubtWhy.toHtmlEscaped()));
  const auto n = std::count(m_doubtful.begin(), m_doubtful.end(), true);
  return QStringLiteral(" &middot; <span style='color:#b26a00'>%1</span>")
      .arg(tr("%n doubtful step(s)", nullptr, static_cast<int>(n)));
}

QString InspectorPage::doubtStepText(int step) const {
  const auto t = static_cast<size_t>(step);
  if (t >= m_doubtful.size() || !m_doubtful[t]) return {};
  const DoubtMarking marking = DoubtMarks::instance().marking();
  const bool low = marking.signal != kCombinedDoubt && lowIsDoubtful(marking.signal);
  const QString name = marking.signal == kCombinedDoubt ? tr("P(wrong)") : marking.signal;
  return tr("<br><span style='color:#b26a00'>? doubtful: %1 %2 %3 %4</span>")
      .arg(name)
      .arg(t < m_doubtValues.size() ? m_doubtValues[t] : 0.0, 0, 'f', 3)
      .arg(low ? QStringLiteral("≤") : QStringLiteral("≥"))
      .arg(marking.threshold, 0, 'f', 2);
}

void InspectorPage::showStepDetails(int step) {
  const auto& s = m_trace->steps[static_cast<size_t>(step)];
  const QString where =
      !m_trace->isCtc() || s.columns.empty()
          ? regionName(*m_trace, s.region)
          : tr("emitted by column%1 %2 (most probable in %3)")
                .arg(s.columns.size() > 1 ? QStringLiteral("s") : QString())
                .arg(s.columns.size() > 1
                         ? QStringLiteral("%1-%2").arg(s.columns.front()).arg(s.columns.back())
                         : QString::number(s.columns.front()))
                .arg(s.region);
  // Localisation: where the step looks, and whether that is its character (when known).
  const auto hits = m_strip->hits();
  const int hit = static_cast<size_t>(step) < hits.size() ? hits[static_cast<size_t>(step)] : -1;
  const QString focus = tr("focus (%1, %2)").arg(s.focus.x, 0, 'f', 1).arg(s.focus.y, 0, 'f', 1) +
                        (hit == 1   ? tr(" <span style='color:#1a7f37'>✔ on its character</span>")
                         : hit == 0 ? tr(" <span style='color:#c62828'>✘ misses</span>")
                                    : QString());
  // What the entropy is of: the attention map's own label (α; a CTC trace's column posterior).
  const core::StepMap* attention = m_trace->map(core::kAttentionMap);
  const QString attentionLabel = attention ? qstr(attention->label) : tr("α");
  m_stepInfo->setText(tr("<b>Step %1</b>: <span style='font-size:14pt'>%2</span> (p %3)<br>"
                         "entropy H[%4] %5 &middot; %6<br>%7")
                          .arg(step + 1)
                          .arg(displayToken(s).toHtmlEscaped())
                          .arg(s.prob, 0, 'f', 3)
                          .arg(attentionLabel)
                          .arg(s.entropy, 0, 'f', 3)
                          .arg(where, focus) +
                      doubtStepText(step) + explainStepText(step));
}

void InspectorPage::showStepPatches(int step) {
  const auto& s = m_trace->steps[static_cast<size_t>(step)];
  // Patches enlarged: each STN's output (coarse, fine), or the region crop.
  std::vector<std::pair<QString, QImage>> patches;
  if (!m_trace->hasStn()) {
    patches.emplace_back(fieldsSpanTheImage(*m_trace)                       ? tr("focus box")
                         : m_trace->patch == core::StepPatch::AlphaWeighted ? tr("α-weighted field")
                         : m_trace->isGrid()                                ? tr("cell's field")
                                                                            : tr("column's field"),
                         toQImage(s.patch));
  } else {
    for (size_t k = 0; k < s.stn.size(); ++k)
      patches.emplace_back(s.stn.size() == 2 && k == 0 ? tr("coarse STN") : tr("STN patch"),
                           toQImage(s.stn[k].patch));
  }
  while (m_patchLabels.size() < static_cast<int>(patches.size())) {
    auto* l = new QLabel(this);
    l->setAlignment(Qt::AlignCenter);
    l->setFrameShape(QFrame::StyledPanel);
    l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);  // fitPictures() sizes it
    m_patchRow->addWidget(l);
    m_patchLabels << l;
  }
  while (m_patchLabels.size() > static_cast<int>(patches.size())) delete m_patchLabels.takeLast();
  m_patchImages.clear();
  for (size_t k = 0; k < patches.size(); ++k) {
    const QImage& img = patches[k].second;
    const int scale = std::max(1, 64 / std::max(1, img.height()));
    m_patchImages << img.scaled(img.size() * scale, Qt::KeepAspectRatio, Qt::FastTransformation);
    m_patchLabels[static_cast<int>(k)]->setToolTip(patches[k].first);
  }
  fitPictures();
}

void InspectorPage::updateDoubt() {
  m_doubtWhy.clear();
  m_doubtful = m_trace ? DoubtMarks::instance().flags(*m_trace, inspectedModelPath(), &m_doubtWhy,
                                                      &m_doubtValues)
                       : std::vector<bool>();
  m_view->setDoubtful(m_doubtful);
  m_strip->setDoubtful(m_doubtful);
}

QString InspectorPage::inspectedModelPath() const {
  if (!m_document) return {};
  const int row = m_document->models()->rowOf(m_document->inspectedModel());
  return row >= 0 ? m_document->models()->path(row) : QString();
}

bool InspectorPage::eventFilter(QObject* watched, QEvent* event) {
  if (m_sideScroll && watched == m_sideScroll->viewport() && event->type() == QEvent::Resize)
    fitPictures();
  return QWidget::eventFilter(watched, event);
}

void InspectorPage::fitPictures() {
  if (!m_sideScroll) return;
  // What the panel's layout leaves inside its margins (the vertical scroll bar is outside the
  // viewport).
  const QMargins margins = m_side->layout()->contentsMargins();
  const int available =
      std::max(40, m_sideScroll->viewport()->width() - margins.left() - margins.right());
  auto fitted = [](const QImage& img, int width) {
    if (img.isNull() || img.width() <= width) return img;
    return img.scaledToWidth(width, Qt::SmoothTransformation);
  };
  const int n = static_cast<int>(m_patchLabels.size());
  const int spacing = std::max(0, m_patchRow->spacing());
  // A frame's border on each side of each picture.
  const int each = n > 0 ? (available - spacing * (n - 1)) / n - 4 : available;
  for (int k = 0; k < n && k < static_cast<int>(m_patchImages.size()); ++k) {
    const QImage img = fitted(m_patchImages[k], each);
    m_patchLabels[k]->setPixmap(QPixmap::fromImage(img));
    m_patchLabels[k]->setFixedHeight(img.height() + 4);
  }
  if (!m_rectifiedImage.isNull()) {
    const QImage img = fitted(m_rectifiedImage, available - 4);
    m_rectified->setPixmap(QPixmap::fromImage(img));
    m_rectified->setFixedHeight(img.height() + 4);
  }
}

}  // namespace foveal::ui

namespace foveal::ui {

QString InspectorPage::explainStepText(int step) const {
  const QString method = m_heatSource->currentData().toString();
  if (isAttentionSource(method)) {
    // What integrated gradients said of this step, if it was computed.
    const auto it = m_explainFigures.find({"ig", step});
    if (it == m_explainFigures.end() || std::isnan(it->second.imageShare)) return {};
    return readShareText(it->second);
  }
  const auto it = m_explainFigures.find({method.toStdString(), step});
  if (it == m_explainFigures.end()) {
    if (!m_explainError.isEmpty())
      return tr("<br>%1: <span style='color:#c62828'>%2</span>")
          .arg(m_heatSource->currentText(), m_explainError.toHtmlEscaped());
    return tr("<br>%1: computing...").arg(m_heatSource->currentText());
  }
  QString text = tr("<br>%1: map sum %2 (log p %3)")
                     .arg(m_heatSource->currentText())
                     .arg(it->second.imageTotal, 0, 'g', 3)
                     .arg(it->second.value, 0, 'f', 3);
  if (!std::isnan(it->second.imageShare)) text += readShareText(it->second);
  return text;
}

QString InspectorPage::readShareText(const core::StepAttribution& f) const {
  const bool guessed = f.imageShare < core::kGuessedShare;
  return tr("<br>from the image <b>%1 %</b>%2")
      .arg(100 * f.imageShare, 0, 'f', 0)
      .arg(guessed ? tr(" <span style='color:#b26a00'>&mdash; mostly guessed from the previous "
                        "tokens</span>")
                   : QString());
}

void InspectorPage::offerEngineMethods() {
  // An engine (Tesseract) reads with its own code: no gradient method applies to it (issue 64).
  auto* items = qobject_cast<QStandardItemModel*>(m_heatSource->model());
  if (!items) return;
  const bool engine = m_trace && m_trace->decoder == "tesseract";
  for (int i = 0; i < items->rowCount(); ++i) {
    const QString method = m_heatSource->itemData(i).toString();
    if (isAttentionSource(method)) continue;
    items->item(i)->setEnabled(!engine);
    items->item(i)->setToolTip(
        engine ? tr("Not for an engine: Tesseract has no gradients to explain") : QString());
  }
  if (engine && !isAttentionSource(m_heatSource->currentData().toString()))
    m_heatSource->setCurrentIndex(0);
}

void InspectorPage::explainStep(int step) {
  const QString method = m_heatSource->currentData().toString();
  if (!m_trace || !m_document || !m_explained) return;
  // A head or PARSeq's first pass: shown as it is, nothing computed for it.
  if (isAttentionSource(method) && method != QLatin1String(core::kAttentionMap)) return;
  const bool attention = method == QLatin1String(core::kAttentionMap);
  if (attention ? m_curves.count({core::kAttentionMap, step}) > 0
                : m_explainFigures.count({method.toStdString(), step}) > 0) {  // cached
    m_explainBusy->hide();
    return;
  }
  if (!m_explainError.isEmpty()) return;  // failed or cancelled: choosing again retries
  const std::pair<std::string, int> request{method.toStdString(), step};
  if (m_explainer->isRunning() && m_explainPending == request) return;
  m_explainPending = request;
  const int row = m_document->models()->rowOf(m_document->inspectedModel());
  auto session = row >= 0 ? m_document->models()->session(row) : nullptr;
  if (!session) return;
  if (session->isEngine()) {  // nothing to differentiate: say so, not "computing..." for ever
    m_explainError = tr("%1 is an engine: it has no gradients to explain")
                         .arg(m_document->models()->displayName(row));
    m_explainBusy->hide();
    showStep(m_cursor->step());
    return;
  }
  if (attention) {  // only the curve: quick, no progress bar
    m_explainBusy->hide();
    m_explainer->startAttentionCurve(session, m_document->image(), m_trace, step);
    return;
  }
  m_explainProgress->setValue(0);
  m_explainBusy->show();
  m_explainer->start(session, m_document->image(), m_trace,
                     core::attributionMethodFromString(method.toStdString()), step);
}

void InspectorPage::explanationReady(const ExplainResult& r) {
  m_explainBusy->hide();
  if (r.trace != m_trace || !m_explained) return;  // an older reading's
  if (r.hasCurves) m_curves[{r.mapName, r.step}] = r.curves;
  if (r.mapName == core::kAttentionMap) {
    showCurve(m_cursor->step());
    if (r.step != m_cursor->step()) explainStep(m_cursor->step());  // the step moved on meanwhile
    return;
  }
  const std::string name = core::toString(r.method);
  core::StepMap* map = nullptr;
  for (auto& m : m_explained->maps)
    if (m.name == name) map = &m;
  if (!map) {
    map = &m_explained->addMap(name, core::attributionLabel(r.method), core::MapLayout::Pixels);
    map->width = m_explained->imageW;
    map->height = m_explained->imageH;
    map->steps.resize(m_explained->steps.size());
  }
  map->steps[static_cast<size_t>(r.step)] = r.map;
  m_explainFigures[{name, r.step}] = r.figures;
  m_view->setTrace(m_explained);  // redraws the heat from the new values
  m_view->setDoubtful(m_doubtful);
  showStep(m_cursor->step());
}

void InspectorPage::showCurve(int step) {
  const QString method = m_heatSource->currentData().toString();
  const auto it = m_curves.find({method.toStdString(), step});
  if (it != m_curves.end()) {
    m_deletion->setCurve(m_heatSource->currentText(), it->second.deletion, it->second.deletionAuc);
    return;
  }
  const bool engine = [&] {
    if (!m_document) return false;
    const int row = m_document->models()->rowOf(m_document->inspectedModel());
    auto session = row >= 0 ? m_document->models()->session(row) : nullptr;
    return session && session->isEngine();
  }();
  m_deletion->clearCurve(!m_trace || engine          ? tr("no deletion curve for this reading")
                         : !m_explainError.isEmpty() ? tr("deletion curve: %1").arg(m_explainError)
                                                     : tr("deletion curve: computing..."));
}

}  // namespace foveal::ui
