#include "compare_page.h"

#include <QComboBox>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "attention_grid.h"
#include "doubt_marks.h"
#include "explain_runner.h"
#include "model_list_model.h"
#include "overlay_painter.h"
#include "patch_strip.h"
#include "qt_convert.h"
#include "reading_card.h"
#include "reading_controls.h"
#include "reading_document.h"
#include "step_cursor.h"
#include "trace_view.h"
#include "train/evaluation.h"

namespace foveal::ui {

ComparePage::ComparePage(StepCursor* cursor, QWidget* parent)
    : QWidget(parent), m_cursor(cursor), m_overlays(rememberedOverlays()) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 6, 6, 6);
  m_empty = new QLabel(tr("<b>Compare models</b><br>Tick two to four models in the Models list "
                          "and open an image: they read it side by side, steps in sync."),
                       this);
  m_empty->setAlignment(Qt::AlignCenter);
  m_empty->setTextFormat(Qt::RichText);
  outer->addWidget(m_empty, 1);
  // The heat's map for every column: attention, or an attribution computed for the shown step.
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Map:"), this));
  m_heatSource = new QComboBox(this);
  m_heatSource->setObjectName(QStringLiteral("compare-heat-source"));
  m_heatSource->setFocusPolicy(Qt::NoFocus);
  m_heatSource->addItem(tr("Attention"), QString::fromLatin1(core::kAttentionMap));
  for (auto method : core::attributionMethods())
    m_heatSource->addItem(qstr(core::attributionLabel(method)), qstr(core::toString(method)));
  bar->addWidget(m_heatSource);
  bar->addStretch(1);
  outer->addLayout(bar);
  connect(m_heatSource, &QComboBox::currentIndexChanged, this, [this] {
    for (auto& c : m_columns) c.view->setHeatSource(m_heatSource->currentData().toString());
    showStep(m_cursor->step());
  });
  // The columns scroll when the window is short; the summary table shares the height through a
  // splitter.
  auto* split = new QSplitter(Qt::Vertical, this);
  auto* scroll = new QScrollArea(split);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* columns = new QWidget(scroll);
  m_grid = new QGridLayout(columns);
  m_grid->setContentsMargins(0, 0, 0, 0);
  scroll->setWidget(columns);
  split->addWidget(scroll);
  m_summary = new CompareSummaryModel(this);
  m_table = new QTableView(split);
  m_table->setModel(m_summary);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setSelectionMode(QAbstractItemView::NoSelection);
  m_table->setFocusPolicy(Qt::NoFocus);
  const int rowH = m_table->fontMetrics().height() + 8;
  m_table->verticalHeader()->setDefaultSectionSize(rowH);
  m_table->setMinimumHeight(rowH * 2 + 6);  // header + one model; more scroll
  split->addWidget(m_table);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 0);
  split->setCollapsible(0, false);
  split->setSizes({600, rowH * 5 + 6});
  outer->addWidget(split, 3);
  m_split = split;
  m_split->hide();  // until there are columns
  connect(cursor, &StepCursor::stepChanged, this, &ComparePage::showStep);
}

void ComparePage::observe(ReadingDocument* document) {
  m_document = document;
  m_controls = new ReadingControls(
      document, ReadingControls::Truth | ReadingControls::Beam | ReadingControls::Doubt, this);
  connect(m_controls, &ReadingControls::finished, this,
          [this] { focusView()->setFocus(Qt::OtherFocusReason); });
  connect(&DoubtMarks::instance(), &DoubtMarks::changed, this, &ComparePage::updateDoubt);
  connect(document, &ReadingDocument::imageChanged, this, [this, document] {
    setImage(document->displayImage());
    setTruthBoxes(document->truthBoxes());
  });
  connect(document, &ReadingDocument::truthChanged, this, &ComparePage::setTruth);
  connect(document, &ReadingDocument::tracesChanged, this, [this, document] {
    const ModelListModel* models = document->models();
    std::vector<CompareSummaryModel::Row> rows;
    m_sessions.clear();
    for (ModelId id : models->comparedIds())
      if (const TraceOutcome* o = document->outcome(id)) {
        const auto session = models->session(models->rowOf(id));
        bool text = true;  // an engine reads text
        if (session && !session->isEngine())
          text = core::train::wantsTextScoring(session->config().charset, "auto");
        rows.push_back({models->displayName(models->rowOf(id)), o->trace, o->error, text,
                        models->path(models->rowOf(id))});
        m_sessions.push_back(session);
      }
    setRows(std::move(rows));
  });
}

QList<QAction*> ComparePage::toolBarActions() const {
  return m_controls ? m_controls->actions() : QList<QAction*>();
}

int ComparePage::stepCount() const {
  int steps = 0;
  for (const auto& r : m_rows)
    if (r.trace) steps = std::max(steps, static_cast<int>(r.trace->steps.size()));
  return steps;
}

QString ComparePage::readingSummary() const {
  return m_columns.empty() ? QString() : tr("Compared %n model(s)", nullptr, columnCount());
}

QWidget* ComparePage::focusView() {
  return m_columns.empty() ? static_cast<QWidget*>(this) : m_columns.front().view;
}

void ComparePage::setTruthBoxes(const std::vector<core::Box>& boxes) {
  m_truthBoxes = boxes;
  for (auto& c : m_columns) {
    c.view->setTruthBoxes(boxes);
    c.strip->setTruthBoxes(boxes);
  }
}

void ComparePage::setImage(const QImage& image) {
  m_image = image;
  for (auto& c : m_columns) c.view->setImage(image);
}

void ComparePage::setOverlays(const QStringList& overlays) {
  m_overlays = overlays;
  for (auto& c : m_columns) c.view->setOverlays(overlays);
}

void ComparePage::setTruth(const QString& truth) {
  m_truth = truth;
  m_summary->setTruth(truth);
  for (auto& c : m_columns) c.strip->setTruth(truth);
}

void ComparePage::markDoubt(std::vector<CompareSummaryModel::Row>& rows) {
  for (auto& r : rows) {
    r.doubtNote.clear();
    r.doubtful = r.trace ? DoubtMarks::instance().flags(*r.trace, r.path, &r.doubtNote)
                         : std::vector<bool>();
  }
}

void ComparePage::updateDoubt() {
  markDoubt(m_rows);
  m_summary->setRows(m_rows);
  for (size_t i = 0; i < m_columns.size() && i < m_rows.size(); ++i) {
    m_columns[i].view->setDoubtful(m_rows[i].doubtful);
    m_columns[i].strip->setDoubtful(m_rows[i].doubtful);
  }
  showStep(m_cursor->step());
}

void ComparePage::setRows(std::vector<CompareSummaryModel::Row> rows) {
  markDoubt(rows);
  m_rows = rows;
  m_summary->setRows(std::move(rows));
  for (auto& c : m_columns) delete c.box;
  m_columns.clear();
  for (size_t i = 0; i < m_rows.size(); ++i) {
    Column c;
    auto* card = new ReadingCard(m_grid->parentWidget());
    card->setFrameShape(QFrame::StyledPanel);
    c.box = card;
    c.title = card->title();
    // A 2-D model says so in its title: its heat map and region names are per cell.
    const QString grid = m_rows[i].trace && m_rows[i].trace->isGrid()
                             ? tr(" &middot; 2-D, %1 × %2 cells")
                                   .arg(m_rows[i].trace->gridRows)
                                   .arg(m_rows[i].trace->gridColumns)
                             : QString();
    c.title->setText(QStringLiteral("<b>%1</b>%2").arg(m_rows[i].model.toHtmlEscaped(), grid));
    c.view = card->view();
    c.view->setImage(m_image);
    c.view->setTruthBoxes(m_truthBoxes);
    c.explained = m_rows[i].trace ? std::make_shared<core::Trace>(*m_rows[i].trace) : nullptr;
    c.view->setTrace(c.explained);
    c.view->setDoubtful(m_rows[i].doubtful);
    c.view->setOverlays(m_overlays);
    c.view->setHeatSource(m_heatSource->currentData().toString());
    c.explainer = new ExplainRunner(card);
    connect(c.explainer, &ExplainRunner::finished, this,
            [this, i](const ExplainResult& r) { explanationReady(i, r); });
    c.info = card->info();
    c.strip = card->strip();
    c.strip->setTrace(m_rows[i].trace);
    c.strip->setDoubtful(m_rows[i].doubtful);
    c.strip->setTruth(m_truth);
    c.strip->setTruthBoxes(m_truthBoxes);
    connect(c.strip, &PatchStrip::stepClicked, m_cursor, &StepCursor::setStep);
    // One row (a laptop screen is wide, not tall); from three models on the cards are compact
    // (their strips at the patches' own size) so that four fit 1366x768 without scrolling.
    const int perRow = static_cast<int>(m_rows.size());
    card->setCompact(m_rows.size() >= 3);
    m_grid->addWidget(c.box, static_cast<int>(i) / perRow, static_cast<int>(i) % perRow);
    m_columns.push_back(c);
  }
  // The summary table as tall as its rows, the columns take the rest.
  const int rowH = m_table->verticalHeader()->defaultSectionSize();
  const int tableH = rowH * (static_cast<int>(m_rows.size()) + 1) + 6;
  m_split->setSizes({std::max(200, m_split->height() - tableH), tableH});
  m_empty->setVisible(m_columns.empty());
  m_split->setVisible(!m_columns.empty());
  // The heads on offer are those of the model with the most (PARSeq beside one-attention models:
  // a column without the chosen head shows its own attention).
  const core::Trace* most = nullptr;
  for (const auto& r : m_rows)
    if (r.trace &&
        (!most || extraAttentionSources(*r.trace).size() > extraAttentionSources(*most).size()))
      most = r.trace.get();
  offerAttentionSources(m_heatSource, most);
  showStep(m_cursor->step());
}

void ComparePage::showStep(int step) {
  for (size_t i = 0; i < m_columns.size(); ++i) {
    auto& c = m_columns[i];
    const auto& r = m_rows[i];
    if (!r.trace) {
      c.info->setText(tr("<span style='color:#c62828'>%1</span>").arg(r.error.toHtmlEscaped()));
      continue;
    }
    if (r.trace->steps.empty()) {
      // A reading of no step (a CTC model that emitted nothing on a blank or broken image):
      // std::clamp(step, 0, -1) gave -1 and the step list was indexed before its start.
      c.view->setStep(0);
      c.strip->setStep(0);
      c.info->setText(r.trace->prediction.empty()
                          ? tr("read nothing: no step was emitted")
                          : tr("read <b>%1</b> &middot; no step")
                                .arg(qstr(r.trace->prediction).toHtmlEscaped()));
      continue;
    }
    const int s = std::clamp(step, 0, static_cast<int>(r.trace->steps.size()) - 1);
    c.view->setStep(s);
    explainColumn(i, s);
    c.strip->setStep(s);
    const auto& st = r.trace->steps[static_cast<size_t>(s)];
    const bool doubtful = static_cast<size_t>(s) < r.doubtful.size() && r.doubtful[size_t(s)];
    c.info->setText(tr("read <b>%1</b> &middot; conf %2 &middot; H̄ %3<br>step %4: <b>%5</b> "
                       "(p %6, H %7) &middot; %8%9")
                        .arg(qstr(r.trace->prediction).toHtmlEscaped())
                        .arg(r.trace->confidence, 0, 'f', 3)
                        .arg(r.trace->meanEntropy, 0, 'f', 3)
                        .arg(s + 1)
                        .arg(displayToken(st).toHtmlEscaped())
                        .arg(st.prob, 0, 'f', 3)
                        .arg(st.entropy, 0, 'f', 3)
                        .arg(r.trace->isCtc() ? tr("column %1").arg(st.region)
                                              : regionName(*r.trace, st.region))
                        .arg(doubtful
                                 ? tr(" &middot; <span style='color:#b26a00'>? doubtful</span>")
                                 : QString()));
  }
}

void ComparePage::explainColumn(size_t i, int step) {
  const QString method = m_heatSource->currentData().toString();
  auto& c = m_columns[i];
  if (isAttentionSource(method) || !c.explained || !m_document || i >= m_sessions.size() ||
      !m_sessions[i])
    return;
  const core::StepMap* map = c.explained->map(method.toStdString());
  if (map && static_cast<size_t>(step) < map->steps.size() &&
      !map->steps[static_cast<size_t>(step)].empty())
    return;  // computed before
  const std::pair<std::string, int> request{method.toStdString(), step};
  if (c.explainer->isRunning() && c.pending == request) return;
  c.pending = request;
  c.explainer->start(m_sessions[i], m_document->image(), m_rows[i].trace,
                     core::attributionMethodFromString(method.toStdString()), step,
                     /*curves=*/false);  // the cards show maps, not deletion curves
}

void ComparePage::explanationReady(size_t i, const ExplainResult& r) {
  if (i >= m_columns.size() || r.trace != m_rows[i].trace) return;
  auto& c = m_columns[i];
  const std::string name = core::toString(r.method);
  core::StepMap* map = nullptr;
  for (auto& m : c.explained->maps)
    if (m.name == name) map = &m;
  if (!map) {
    map = &c.explained->addMap(name, core::attributionLabel(r.method), core::MapLayout::Pixels);
    map->width = c.explained->imageW;
    map->height = c.explained->imageH;
    map->steps.resize(c.explained->steps.size());
  }
  map->steps[static_cast<size_t>(r.step)] = r.map;
  c.view->setTrace(c.explained);
  c.view->setDoubtful(m_rows[i].doubtful);
  const int s = std::clamp(m_cursor->step(), 0, static_cast<int>(c.explained->steps.size()) - 1);
  c.view->setStep(s);
}

}  // namespace foveal::ui
