#include "page_view.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QLabel>
#include <QMetaMethod>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QWidgetAction>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/text_metrics.h"
#include "confidence_scale.h"
#include "formats/page_export.h"
#include "image/kraken_line.h"
#include "line_strip.h"
#include "page_canvas.h"
#include "page_line_model.h"
#include "page_reading_runner.h"
#include "qt_convert.h"
#include "reading_document.h"
#include "settings.h"
#include "trace/model_session.h"

namespace foveal::ui {

namespace {
const Setting<double> kThreshold(QStringLiteral("page/threshold"), 0.8);
const Setting<bool> kShowReadings(QStringLiteral("page/showReadings"), true);
const Setting<bool> kWithTicked(QStringLiteral("page/withTicked"), false);
const Setting<QString> kLastLayoutFolder(QStringLiteral("page/lastFolder"), {});

QAction* item(QWidget* widget, QObject* parent) {
  auto* action = new QWidgetAction(parent);
  action->setDefaultWidget(widget);
  return action;
}

// A line image as shown: its colours when the page has them.
QImage displayOf(const core::GreyImage& g) {
  if (g.empty()) return {};
  if (g.rgb.size() == static_cast<size_t>(g.width) * g.height * 3) {
    QImage img(g.width, g.height, QImage::Format_RGB888);
    for (int y = 0; y < g.height; ++y)
      memcpy(img.scanLine(y), g.rgb.data() + static_cast<size_t>(y) * g.width * 3,
             static_cast<size_t>(g.width) * 3);
    return img.convertToFormat(QImage::Format_RGB32);
  }
  return toQImage(g);
}

// What kraken's extraction needs of a model (as ModelSession::traceLine builds it).
core::KrakenInputSpec inputSpecOf(const core::ModelSession* session) {
  core::KrakenInputSpec in;
  if (!session || session->isEngine()) {
    in.padding = 0;
    return in;
  }
  const auto& cfg = session->config();
  in.height = cfg.preprocessing.inputH;
  in.channels = cfg.preprocessing.channels();
  in.padding = cfg.kraken.empty() ? 0 : cfg.kraken.padding;
  in.legacyPolygons = cfg.kraken.legacyPolygons;
  return in;
}

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }
// A marked character: a space shows as a marked blank.
QString escMarked(const std::string& s) { return s == " " ? QStringLiteral("&nbsp;") : esc(s); }

// The reading and the transcription, each with what the other lacks marked: a character read
// wrongly or read where the transcription has none in red on the reading, a character of the
// transcription not read (or read as another) in amber on it, and a caret where one is missing.
std::pair<QString, QString> markedTexts(const std::string& reading, const std::string& truth) {
  static const QString wrong =
      QStringLiteral("<span style='background:#ffcdd2;color:#b71c1c;font-weight:bold'>%1</span>");
  static const QString missed = QStringLiteral("<span style='background:#ffe082'>%1</span>");
  static const QString caret = QStringLiteral("<span style='color:#b71c1c'>&#8248;</span>");
  QString r, t;
  for (const auto& op : core::alignCharacters(reading, truth)) {
    switch (op.kind) {
      case core::CharOp::Kind::Match:
        r += esc(op.predicted);
        t += esc(op.truth);
        break;
      case core::CharOp::Kind::Substitute:
        r += wrong.arg(escMarked(op.predicted));
        t += missed.arg(escMarked(op.truth));
        break;
      case core::CharOp::Kind::Insert:
        r += wrong.arg(escMarked(op.predicted));
        break;
      case core::CharOp::Kind::Delete:
        r += caret;
        t += missed.arg(escMarked(op.truth));
        break;
    }
  }
  return {r, t};
}
}  // namespace

PageView::PageView(QWidget* parent)
    : QWidget(parent),
      m_runner(new PageReadingRunner(this)),
      m_lines(new PageLineModel(this)),
      m_selection(new QItemSelectionModel(m_lines, this)) {
  m_lines->setThreshold(std::clamp(kThreshold.value(), 0.0, 1.0));

  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 4, 6, 4);
  outer->addLayout(buildStatusRow());
  outer->addWidget(buildSplit(), 1);

  buildActions();

  connectViews();
  connectRunner();
  updateActions();
  updateStatus();
  updateDetail();
}

QLayout* PageView::buildStatusRow() {
  auto* statusRow = new QHBoxLayout;
  m_status = new QLabel(this);
  m_status->setTextFormat(Qt::RichText);
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_status->setMinimumWidth(120);
  statusRow->addWidget(m_status, 1);
  m_progress = new QProgressBar(this);
  m_progress->setMaximumWidth(200);
  m_progress->setFormat(tr("%v / %m lines"));
  m_progress->hide();
  statusRow->addWidget(m_progress);
  m_cancel = new QPushButton(tr("Cancel"), this);
  m_cancel->setToolTip(tr("Stop reading the page (the lines read so far stay)"));
  m_cancel->hide();
  statusRow->addWidget(m_cancel);
  return statusRow;
}

QWidget* PageView::buildSplit() {
  m_split = new QSplitter(Qt::Horizontal, this);
  m_canvas = new PageCanvas(m_split);
  m_canvas->setLines(m_lines, m_selection);
  m_canvas->setReadingsShown(kShowReadings.value());
  auto* side = new QSplitter(Qt::Vertical, m_split);
  buildLineTable(side);
  QWidget* detailScroll = buildDetail(side);
  side->addWidget(m_table);
  side->addWidget(detailScroll);
  side->setStretchFactor(0, 2);
  side->setStretchFactor(1, 1);
  side->setSizes({400, 200});
  m_split->addWidget(m_canvas);
  m_split->addWidget(side);
  // A page is mostly portrait: the table of its lines gets as much room as the page.
  m_split->setStretchFactor(0, 1);
  m_split->setStretchFactor(1, 1);
  m_split->setSizes({500, 500});
  return m_split;
}

void PageView::buildLineTable(QWidget* side) {
  m_table = new QTableView(side);
  m_table->setModel(m_lines);
  m_table->setSelectionModel(m_selection);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setWordWrap(false);
  m_table->verticalHeader()->hide();
  m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
  m_table->horizontalHeader()->setStretchLastSection(false);
  m_table->horizontalHeader()->setSectionResizeMode(PageLineModel::Reading, QHeaderView::Stretch);
  m_table->horizontalHeader()->setSectionResizeMode(PageLineModel::Transcription,
                                                    QHeaderView::Stretch);
  for (int c :
       {PageLineModel::Number, PageLineModel::Id, PageLineModel::Confidence, PageLineModel::Cer})
    m_table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  m_table->setMinimumWidth(200);
}

QWidget* PageView::buildDetail(QWidget* side) {
  // The current line: its strip and its texts, scrolled when a long line's texts wrap.
  auto* detailScroll = new QScrollArea(side);
  detailScroll->setWidgetResizable(true);
  detailScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  detailScroll->setFrameShape(QFrame::NoFrame);
  auto* detail = new QWidget(detailScroll);
  auto* detailLayout = new QVBoxLayout(detail);
  detailLayout->setContentsMargins(2, 2, 2, 2);
  m_strip = new LineStrip(detail);
  detailLayout->addWidget(m_strip, 1);
  m_detail = new QLabel(detail);
  m_detail->setTextFormat(Qt::RichText);
  m_detail->setWordWrap(true);
  m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_detail->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  m_detail->setMinimumWidth(120);
  detailLayout->addWidget(m_detail);
  detailLayout->addStretch(1);
  detailScroll->setWidget(detail);
  return detailScroll;
}

void PageView::connectViews() {
  connect(m_selection, &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { onCurrentLineChanged(current.row()); });
  connect(m_canvas, &PageCanvas::lineActivated, this, &PageView::inspectLine);
  connect(m_table, &QTableView::doubleClicked, this,
          [this](const QModelIndex& index) { inspectLine(index.row()); });
  connect(m_table, &QTableView::activated, this,
          [this](const QModelIndex& index) { inspectLine(index.row()); });
  connect(m_cancel, &QPushButton::clicked, this, &PageView::cancelReading);
  connect(m_lines, &QAbstractItemModel::dataChanged, this, [this] {
    if (currentLine() >= 0) updateDetail();
  });
}

void PageView::connectRunner() {
  connect(m_runner, &PageReadingRunner::started, this, [this](int total) {
    m_done = 0;
    m_total = total;
    m_progress->setRange(0, std::max(1, total));
    m_progress->setValue(0);
    updateActions();
  });
  connect(m_runner, &PageReadingRunner::lineRead, this, &PageView::onLineRead);
  connect(m_runner, &PageReadingRunner::lineFailed, this,
          [this](int model, int line, const QString& error) {
            if (m_lineErrors.size() < 5)
              m_lineErrors << tr("%1 on line %2: %3")
                                  .arg(m_read[static_cast<size_t>(model)].name)
                                  .arg(line + 1)
                                  .arg(error);
          });
  connect(m_runner, &PageReadingRunner::progress, this, [this](int done, int total) {
    m_done = done;
    m_progress->setRange(0, std::max(1, total));
    m_progress->setValue(done);
    updateStatus();
  });
  connect(m_runner, &PageReadingRunner::finished, this, [this] {
    updateActions();
    updateStatus();
    if (!m_lineErrors.isEmpty())
      Q_EMIT failed(tr("Reading the page failed: %1").arg(m_lineErrors.join(QStringLiteral("; "))));
    Q_EMIT message(readingSummary());
  });
  connect(m_runner, &PageReadingRunner::cancelled, this, [this] {
    m_readCancelled = true;
    updateActions();
    updateStatus();
  });
}

PageView::~PageView() {
  if (m_opening) m_opening->disconnect(this);
}

void PageView::buildActions() {
  buildReadingActions();
  buildModelBox();
  QLabel* thresholdLabel = buildThresholdBox();
  buildLineActions();
  buildExportActions();

  auto* separator = [this] {
    auto* s = new QAction(this);
    s->setSeparator(true);
    return s;
  }();
  m_toolActions = {m_openAction,
                   m_readAction,
                   m_cancelAction,
                   m_withTicked,
                   separator,
                   m_modelBoxAction,
                   item(thresholdLabel, this),
                   item(m_thresholdBox, this),
                   m_showReadings,
                   m_inspectAction,
                   m_whyAction};
}

void PageView::buildReadingActions() {
  m_openAction = new QAction(tr("Open &Page..."), this);
  m_openAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
  m_openAction->setToolTip(tr("Open a page image with its PAGE-XML or ALTO layout (Ctrl+Shift+P)"));
  connect(m_openAction, &QAction::triggered, this, &PageView::openPageDialog);

  m_readAction = new QAction(tr("&Read Lines"), this);
  m_readAction->setShortcut(QKeySequence(Qt::Key_F5));
  m_readAction->setToolTip(tr("Read every line of the page again with the inspected model (F5)"));
  connect(m_readAction, &QAction::triggered, this, [this] { readLines(); });
  m_cancelAction = new QAction(tr("Cancel"), this);
  m_cancelAction->setToolTip(tr("Stop reading the page"));
  connect(m_cancelAction, &QAction::triggered, this, &PageView::cancelReading);

  m_withTicked = new QAction(tr("With &Ticked Models"), this);
  m_withTicked->setCheckable(true);
  m_withTicked->setChecked(kWithTicked.value());
  m_withTicked->setToolTip(
      tr("Read the page with the models ticked in the Models dock too, not only the inspected "
         "one"));
  connect(m_withTicked, &QAction::toggled, this, [this](bool on) {
    kWithTicked.set(on);
    readIfModelsChanged();
  });
}

void PageView::buildModelBox() {
  m_modelBox = new QComboBox;
  m_modelBox->setToolTip(tr("Whose readings the page shows"));
  m_modelBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(m_modelBox, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) showModel(index);
  });
  m_modelBoxAction = item(m_modelBox, this);
  m_modelBoxAction->setVisible(false);
}

QLabel* PageView::buildThresholdBox() {
  auto* thresholdLabel = new QLabel(tr(" &Flag below: "));
  m_thresholdBox = new QDoubleSpinBox;
  m_thresholdBox->setObjectName(QStringLiteral("pageThreshold"));
  m_thresholdBox->setRange(0, 1);
  m_thresholdBox->setSingleStep(0.05);
  m_thresholdBox->setDecimals(2);
  m_thresholdBox->setValue(m_lines->threshold());
  m_thresholdBox->setKeyboardTracking(false);
  m_thresholdBox->setToolTip(
      tr("Lines whose mean character confidence is under this are drawn red and counted as "
         "doubtful"));
  thresholdLabel->setBuddy(m_thresholdBox);
  connect(m_thresholdBox, &QDoubleSpinBox::valueChanged, this, &PageView::setThreshold);
  return thresholdLabel;
}

void PageView::buildLineActions() {
  m_showReadings = new QAction(tr("Readings &Over Lines"), this);
  m_showReadings->setCheckable(true);
  m_showReadings->setChecked(m_canvas->readingsShown());
  m_showReadings->setToolTip(
      tr("Write each line's reading over it (off: the ink shows through the confidence tint)"));
  connect(m_showReadings, &QAction::toggled, this, [this](bool on) {
    kShowReadings.set(on);
    m_canvas->setReadingsShown(on);
  });

  m_inspectAction = new QAction(tr("&Inspect Line"), this);
  m_inspectAction->setToolTip(
      tr("Open the current line in the Inspector, cut out as kraken cuts it (Enter, or "
         "double-click the line)"));
  connect(m_inspectAction, &QAction::triggered, this, [this] { inspectLine(currentLine()); });

  m_whyAction = new QAction(tr("&Why Misread?"), this);
  m_whyAction->setToolTip(tr("Show why the current line was read other than its transcription"));
  connect(m_whyAction, &QAction::triggered, this, [this] {
    const int line = currentLine();
    if (line < 0) return;
    if (!documentShows(line)) showLineInDocument(line);
    Q_EMIT whyMisreadRequested(line);
  });
}

void PageView::buildExportActions() {
  m_exportPage = new QAction(tr("Export Page as PAGE-&XML..."), this);
  m_exportPage->setToolTip(
      tr("Write the page with its readings, cuts and confidences as "
         "PAGE-XML 2019"));
  connect(m_exportPage, &QAction::triggered, this, [this] { exportDialog(ExportFormat::PageXml); });
  m_exportAlto = new QAction(tr("Export Page as &ALTO..."), this);
  m_exportAlto->setToolTip(tr("Write the page with its readings, cuts and confidences as ALTO v4"));
  connect(m_exportAlto, &QAction::triggered, this, [this] { exportDialog(ExportFormat::Alto); });
}

QList<QAction*> PageView::toolBarActions() const {
  QList<QAction*> actions = m_toolActions;
  // The hook for a view of why a line was misread: shown once one listens.
  if (!isSignalConnected(QMetaMethod::fromSignal(&PageView::whyMisreadRequested)))
    actions.removeAll(m_whyAction);
  return actions;
}

QList<QAction*> PageView::exportActions() const { return {m_exportPage, m_exportAlto}; }

QWidget* PageView::focusView() { return m_canvas; }

void PageView::observe(ReadingDocument* document) {
  m_document = document;
  connect(document, &ReadingDocument::modelsChanged, this, &PageView::readIfModelsChanged);
  connect(document, &ReadingDocument::beamWidthChanged, this, &PageView::readIfModelsChanged);
}

// ---- Opening

bool PageView::openPage(const QString& imagePath, const QString& layoutPath) {
  auto missing = [this](const QString& file, const QString& what) {
    const QFileInfo info(file);
    if (info.isFile()) return false;
    const QString error = tr("%1: cannot open the page %2 (%3)")
                              .arg(file.isEmpty() ? tr("(no file named)") : file, what,
                                   info.exists() ? tr("not a file") : tr("no such file"));
    setStatus(QStringLiteral("<span style='color:#c62828'>%1</span>").arg(error.toHtmlEscaped()));
    Q_EMIT failed(error);
    return true;
  };
  if (missing(layoutPath, tr("layout")) ||
      (!imagePath.isEmpty() && missing(imagePath, tr("image"))))
    return false;
  if (m_opening) {  // a newer page supersedes one still being read: its result is nobody's
    m_opening->disconnect(this);
    m_opening->deleteLater();
  }
  auto* watcher = new QFutureWatcher<PageFile>(this);
  m_opening = watcher;
  connect(watcher, &QFutureWatcher<PageFile>::finished, this, [this, watcher] {
    watcher->deleteLater();
    m_opening = nullptr;
    onPageRead(watcher->result());
  });
  watcher->setFuture(
      QtConcurrent::run([imagePath, layoutPath] { return readPageFile(imagePath, layoutPath); }));
  setStatus(tr("Opening %1 ...").arg(QFileInfo(layoutPath).fileName().toHtmlEscaped()));
  return true;
}

void PageView::openPageDialog() {
  const QString start =
      kLastLayoutFolder.value().isEmpty() ? kLastFolder.value() : kLastLayoutFolder.value();
  const QString layout =
      QFileDialog::getOpenFileName(this, tr("Open page layout"), start,
                                   tr("Page layouts: PAGE-XML, ALTO (*.xml);;All files (*)"));
  if (layout.isEmpty()) return;
  kLastLayoutFolder.set(QFileInfo(layout).absolutePath());
  QString error;
  const QString named = layoutImagePath(layout, &error);
  if (!error.isEmpty()) {
    Q_EMIT failed(error);
    setStatus(QStringLiteral("<span style='color:#c62828'>%1</span>").arg(error.toHtmlEscaped()));
    return;
  }
  QString image;
  if (!QFileInfo(named).isFile()) {
    image = QFileDialog::getOpenFileName(
        this, tr("Open the page image of %1").arg(QFileInfo(layout).fileName()),
        QFileInfo(layout).absolutePath(),
        tr("Images (*.png *.jpg *.jpeg *.tif *.tiff *.bmp *.webp *.pgm *.ppm);;All files (*)"));
    if (image.isEmpty()) return;
  }
  openPage(image, layout);
}

void PageView::onPageRead(PageFile file) {
  if (!file.error.isEmpty()) {
    setStatus(
        QStringLiteral("<span style='color:#c62828'>%1</span>").arg(file.error.toHtmlEscaped()));
    Q_EMIT failed(file.error);
    return;
  }
  m_runner->cancel();
  m_page = std::move(file);
  m_read.clear();
  m_readCancelled = false;
  m_lineErrors.clear();
  m_modelBox->clear();
  m_modelBoxAction->setVisible(false);
  m_lines->setLayout(m_page.layout);
  m_canvas->setPage(m_page.display, m_page.layout);
  m_strip->clear();
  updateDetail();
  updateActions();
  updateStatus();
  Q_EMIT pageOpened(m_page.layoutPath);
  if (!m_page.warning.isEmpty()) Q_EMIT failed(tr("Warning: %1").arg(m_page.warning));
  if (!readingModels().empty()) readLines();
}

// ---- Reading

std::vector<PageView::ModelRead> PageView::readingModels() const {
  std::vector<ModelRead> out;
  if (!m_document) return out;
  const ModelListModel* models = m_document->models();
  auto add = [&](ModelId id) {
    const int row = models->rowOf(id);
    const auto session = models->session(row);
    if (!session) return;
    for (const auto& m : out)
      if (m.id == id) return;
    ModelRead m;
    m.id = id;
    m.name = models->displayName(row);
    m.session = session;
    out.push_back(std::move(m));
  };
  add(m_document->inspectedModel());
  if (m_withTicked->isChecked())
    for (ModelId id : models->comparedIds()) add(id);
  return out;
}

void PageView::readIfModelsChanged() {
  if (!hasPage() || isOpening()) return;
  const auto now = readingModels();
  const int beam = m_document ? m_document->beamWidth() : 1;
  bool same = now.size() == m_read.size() && beam == m_readBeam;
  for (size_t i = 0; same && i < now.size(); ++i)
    same = now[i].id == m_read[i].id && now[i].session == m_read[i].session;
  if (!same && !now.empty()) readLines();
}

bool PageView::readLines() {
  if (!hasPage()) {
    setStatus(tr("Open a page first (File > Open Page...)."));
    return false;
  }
  auto models = readingModels();
  if (models.empty()) {
    setStatus(tr("<b>%1</b>: %2 lines. Open a model (File > Open Model...) to read them.")
                  .arg(QFileInfo(m_page.layoutPath).fileName().toHtmlEscaped())
                  .arg(m_lines->lineCount()));
    return false;
  }
  m_runner->cancel();
  const size_t n = m_page.layout->lines.size();
  std::vector<std::shared_ptr<core::ModelSession>> sessions;
  for (auto& m : models) {
    m.lines.assign(n, nullptr);
    sessions.push_back(m.session);
  }
  const int shown = std::clamp(m_modelBox->currentIndex(), 0, static_cast<int>(models.size()) - 1);
  m_read = std::move(models);
  m_readCancelled = false;
  m_lineErrors.clear();
  m_readBeam = m_document ? m_document->beamWidth() : 1;
  {
    const QSignalBlocker block(m_modelBox);
    m_modelBox->clear();
    for (const auto& m : m_read) m_modelBox->addItem(m.name);
    m_modelBox->setCurrentIndex(shown);
  }
  m_modelBoxAction->setVisible(m_read.size() > 1);
  m_lines->setReadings({});
  core::TraceOptions options;
  options.beamWidth = m_readBeam;
  m_runner->start(m_page.grey, m_page.layout, m_page.imagePath, std::move(sessions), options);
  updateStatus();
  return true;
}

void PageView::cancelReading() { m_runner->cancel(); }
bool PageView::isReading() const { return m_runner->isRunning(); }
void PageView::waitForReading() { m_runner->wait(); }

void PageView::onLineRead(int model, int line, std::shared_ptr<const core::LineReading> reading) {
  if (model < 0 || model >= static_cast<int>(m_read.size())) return;
  auto& lines = m_read[static_cast<size_t>(model)].lines;
  if (line < 0 || line >= static_cast<int>(lines.size())) return;
  lines[static_cast<size_t>(line)] = reading;
  if (model == shownModel()) m_lines->setReading(line, std::move(reading));
  if (line == currentLine()) updateDetail();
}

int PageView::shownModel() const {
  return m_read.empty()
             ? -1
             : std::clamp(m_modelBox->currentIndex(), 0, static_cast<int>(m_read.size()) - 1);
}

void PageView::showModel(int index) {
  if (index < 0 || index >= static_cast<int>(m_read.size())) return;
  if (m_modelBox->currentIndex() != index) {
    const QSignalBlocker block(m_modelBox);
    m_modelBox->setCurrentIndex(index);
  }
  m_lines->setReadings(m_read[static_cast<size_t>(index)].lines);
  updateDetail();
  updateStatus();
  updateActions();
}

QStringList PageView::modelsRead() const {
  QStringList names;
  for (const auto& m : m_read) names << m.name;
  return names;
}

std::shared_ptr<const core::LineReading> PageView::reading(int model, int line) const {
  if (model < 0 || model >= static_cast<int>(m_read.size())) return nullptr;
  const auto& lines = m_read[static_cast<size_t>(model)].lines;
  return line >= 0 && line < static_cast<int>(lines.size()) ? lines[static_cast<size_t>(line)]
                                                            : nullptr;
}

void PageView::setThreshold(double threshold) {
  threshold = std::clamp(threshold, 0.0, 1.0);
  kThreshold.set(threshold);
  m_lines->setThreshold(threshold);
  if (m_thresholdBox->value() != threshold) {
    const QSignalBlocker block(m_thresholdBox);
    m_thresholdBox->setValue(threshold);
  }
  updateDetail();
  updateStatus();
}

double PageView::threshold() const { return m_lines->threshold(); }

// ---- Lines

int PageView::currentLine() const {
  return m_selection->currentIndex().isValid() ? m_selection->currentIndex().row() : -1;
}

bool PageView::documentShows(int line) const {
  return m_document && hasPage() && line >= 0 && line < m_lines->lineCount() &&
         m_document->isPageLine() &&
         m_document->source().toStdString() ==
             PageReadingRunner::lineSource(m_page.imagePath,
                                           m_page.layout->lines[static_cast<size_t>(line)]);
}

void PageView::chooseLine(int line) {
  if (line < 0 || line >= m_lines->lineCount()) return;
  if (line == currentLine()) {  // the document may show another image by now
    if (!documentShows(line)) showLineInDocument(line);
    return;
  }
  m_selection->setCurrentIndex(m_lines->index(line, 0),
                               QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void PageView::inspectLine(int line) {
  if (line < 0 || line >= m_lines->lineCount()) return;
  chooseLine(line);
  if (documentShows(line)) Q_EMIT inspectRequested();  // kraken may cut nothing out for it
}

void PageView::onCurrentLineChanged(int line) {
  if (line >= 0) {
    m_table->scrollTo(m_lines->index(line, 0));
    showLineInDocument(line);
  }
  updateDetail();
  updateActions();
}

void PageView::showLineInDocument(int line) {
  if (!m_document || !hasPage() || line < 0 || line >= m_lines->lineCount()) return;
  const auto& layout = *m_page.layout;
  const auto& l = layout.lines[static_cast<size_t>(line)];
  const QString name = l.id.empty() ? tr("line %1").arg(line + 1) : QString::fromStdString(l.id);
  core::KrakenLineSpec spec;
  try {
    spec = core::krakenLineOf(l, layout.textDirection);
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromStdString(e.what()));
    return;
  }
  // The image is the inspected model's extraction: its reading's, or made now (the same cut).
  const ModelListModel* models = m_document->models();
  const auto session = models->session(models->rowOf(m_document->inspectedModel()));
  core::GreyImage cut;
  for (const auto& m : m_read)
    if (m.session == session && session)
      if (const auto& r = m.lines[static_cast<size_t>(line)]; r && !r->empty) cut = r->line;
  QString why;
  if (cut.empty()) {
    try {
      const core::KrakenLine k =
          core::extractKrakenLine(*m_page.grey, spec, inputSpecOf(session.get()));
      if (k.empty)
        why = QString::fromStdString(k.emptyReason);
      else
        cut = k.extracted;
    } catch (const std::exception& e) {
      why = QString::fromStdString(e.what());
    }
  }
  if (cut.empty()) {
    Q_EMIT message(tr("%1: kraken's extraction gives no image (%2)").arg(name, why));
    return;
  }
  const QImage display = displayOf(cut);
  m_document->setPageLine(
      m_page.grey, spec, std::move(cut), display,
      QString::fromStdString(PageReadingRunner::lineSource(m_page.imagePath, l)),
      QString::fromStdString(l.text));
}

QString PageView::lineText() const { return m_detail->text(); }
QString PageView::statusText() const { return m_status->text(); }

void PageView::updateDetail() {
  const int line = currentLine();
  if (!hasPage() || line < 0 || line >= m_lines->lineCount()) {
    m_detail->setText(hasPage() ? tr("<i>Click a line (or press Up/Down on the page) to see its "
                                     "reading; Enter or a double-click opens it in the "
                                     "Inspector.</i>")
                                : QString());
    m_strip->clear();
    return;
  }
  const auto& l = m_page.layout->lines[static_cast<size_t>(line)];
  const auto r = m_lines->reading(line);
  QStringList facts;
  facts << QStringLiteral("<b>%1</b>")
               .arg(l.id.empty() ? tr("line %1").arg(line + 1)
                                 : QString::fromStdString(l.id).toHtmlEscaped());
  if (!l.regionId.empty())
    facts << tr("in %1").arg(QString::fromStdString(l.regionId).toHtmlEscaped());
  facts << (l.baseline.empty() ? tr("read by its box") : tr("read along its baseline"));
  const double conf = m_lines->confidence(line);
  if (std::isfinite(conf))
    facts << QStringLiteral("<span style='background:%1'>&nbsp;%2&nbsp;</span>")
                 .arg(confidenceColour(conf, threshold()).lighter(140).name(),
                      tr("mean confidence %1%2")
                          .arg(conf, 0, 'f', 2)
                          .arg(m_lines->isFlagged(line)
                                   ? tr(", under %1").arg(threshold(), 0, 'f', 2)
                                   : QString()));
  if (std::isfinite(m_lines->cer(line)))
    facts << tr("CER %1%").arg(100 * m_lines->cer(line), 0, 'f', 1);
  QString html = facts.join(QStringLiteral(" &middot; "));
  const QString row = QStringLiteral("<tr><td><i>%1</i>&nbsp;</td><td>%2</td></tr>");
  html += QStringLiteral("<table cellspacing='0' cellpadding='1'>");
  if (!r) {
    html += row.arg(tr("Reading"), tr("<i>not read</i>"));
    if (!l.text.empty()) html += row.arg(tr("Transcription"), esc(l.text));
  } else if (r->empty) {
    html += row.arg(tr("Reading"),
                    tr("<i>nothing: %1</i>").arg(QString::fromStdString(r->why).toHtmlEscaped()));
    if (!l.text.empty()) html += row.arg(tr("Transcription"), esc(l.text));
  } else if (l.text.empty()) {
    html += row.arg(tr("Reading"), esc(r->trace.prediction));
  } else {
    const auto [reading, truth] = markedTexts(r->trace.prediction, l.text);
    html += row.arg(tr("Reading"), reading);
    html += row.arg(tr("Transcription"), truth);
  }
  html += QStringLiteral("</table>");
  m_detail->setText(html);
  if (r && !r->empty)
    m_strip->setLine(displayOf(r->line), r, threshold());
  else
    m_strip->clear();
}

// ---- Status

void PageView::setStatus(const QString& html) { m_status->setText(html); }

void PageView::updateActions() {
  const bool reading = isReading();
  m_readAction->setEnabled(hasPage() && !reading);
  m_cancelAction->setEnabled(reading);
  m_cancel->setVisible(reading);
  m_progress->setVisible(reading);
  const int shown = shownModel();
  bool complete = shown >= 0 && hasPage();
  if (complete)
    for (const auto& r : m_read[static_cast<size_t>(shown)].lines) complete = complete && r;
  m_exportPage->setEnabled(complete);
  m_exportAlto->setEnabled(complete);
  const int line = currentLine();
  m_inspectAction->setEnabled(line >= 0);
  const auto r = m_lines->reading(line);
  m_whyAction->setEnabled(r && !m_lines->transcription(line).isEmpty() &&
                          m_lines->readingText(line) != m_lines->transcription(line));
}

void PageView::updateStatus() {
  if (!hasPage()) {
    if (!isOpening())
      setStatus(
          tr("<i>Open a page (File > Open Page..., Ctrl+Shift+P): a page image with its "
             "PAGE-XML or ALTO layout. Its lines are read with the inspected model.</i>"));
    return;
  }
  const auto& layout = *m_page.layout;
  QString html = tr("<b>%1</b> (%2) on %3: %n line(s) in %4 region(s)", nullptr,
                    static_cast<int>(layout.lines.size()))
                     .arg(QFileInfo(m_page.layoutPath).fileName().toHtmlEscaped(),
                          layout.format == "alto" ? tr("ALTO") : tr("PAGE-XML"),
                          QFileInfo(m_page.imagePath).fileName().toHtmlEscaped())
                     .arg(layout.regions.size());
  const int shown = shownModel();
  if (isReading()) {
    html += tr(". Reading with %1 ... %2 of %3")
                .arg(modelsRead().join(QStringLiteral(", ")).toHtmlEscaped())
                .arg(m_done)
                .arg(m_total);
  } else if (shown >= 0) {
    const int read = m_lines->readCount();
    html += tr(". %1: ").arg(m_read[static_cast<size_t>(shown)].name.toHtmlEscaped());
    if (m_readCancelled)
      html += tr("cancelled after %1 of %2 lines; ").arg(read).arg(m_lines->lineCount());
    const int flagged = m_lines->flaggedCount();
    html += tr("<span style='color:%1'>%2 under %3</span>")
                .arg(flagged ? QStringLiteral("#c62828") : QStringLiteral("#2e7d32"))
                .arg(flagged)
                .arg(threshold(), 0, 'f', 2);
    if (std::isfinite(m_lines->pageCer()))
      html += tr(", CER %1% against the transcription").arg(100 * m_lines->pageCer(), 0, 'f', 1);
  } else if (readingModels().empty()) {
    html += tr(". Open a model to read them.");
  }
  setStatus(html);
}

QString PageView::readingSummary() const {
  if (!hasPage() || isReading()) return {};
  const int shown = shownModel();
  if (shown < 0)
    return tr("Page %1: %2 lines")
        .arg(QFileInfo(m_page.layoutPath).fileName())
        .arg(m_lines->lineCount());
  QString s =
      tr("Page %1 read by %2: %3 of %4 lines, %5 under %6")
          .arg(QFileInfo(m_page.layoutPath).fileName(), m_read[static_cast<size_t>(shown)].name)
          .arg(m_lines->readCount())
          .arg(m_lines->lineCount())
          .arg(m_lines->flaggedCount())
          .arg(threshold(), 0, 'f', 2);
  if (std::isfinite(m_lines->pageCer()))
    s += tr(", CER %1%").arg(100 * m_lines->pageCer(), 0, 'f', 1);
  return s;
}

// ---- Export

QString PageView::exportPage(const QString& path, ExportFormat format) const {
  if (!hasPage()) return tr("No page to export: open one first.");
  const int shown = shownModel();
  if (shown < 0) return tr("The page has not been read: open a model and read its lines first.");
  const auto& model = m_read[static_cast<size_t>(shown)];
  std::vector<core::LineReading> readings;
  for (const auto& r : model.lines) {
    if (!r)
      return tr("Not every line has been read by %1 (%2 of %3): read the page again first.")
          .arg(model.name)
          .arg(m_lines->readCount())
          .arg(m_lines->lineCount());
    readings.push_back(*r);
  }
  for (const QString& own : {m_page.imagePath, m_page.layoutPath})
    if (QFileInfo(path).absoluteFilePath() == QFileInfo(own).absoluteFilePath())
      return tr("%1: that is the page's own file; choose another name").arg(path);
  core::PageExportOptions options;
  for (const auto& r : readings)
    if (!r.trace.modelDescription.empty()) {
      options.modelDescription = r.trace.modelDescription;
      break;
    }
  if (options.modelDescription.empty()) options.modelDescription = model.name.toStdString();
  std::string xml;
  try {
    xml = format == ExportFormat::Alto ? core::toAltoPage(*m_page.layout, readings, options)
                                       : core::toPageXmlPage(*m_page.layout, readings, options);
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  QSaveFile out(path);
  if (!out.open(QIODevice::WriteOnly))
    return tr("%1: cannot write the page (%2)").arg(path, out.errorString());
  out.write(xml.data(), static_cast<qint64>(xml.size()));
  if (!out.commit()) return tr("%1: cannot write the page (%2)").arg(path, out.errorString());
  return {};
}

void PageView::exportDialog(ExportFormat format) {
  const bool alto = format == ExportFormat::Alto;
  const QFileInfo layout(m_page.layoutPath);
  const QString name = layout.completeBaseName() + (alto ? QStringLiteral(".foveal.alto.xml")
                                                         : QStringLiteral(".foveal.page.xml"));
  const QString path = QFileDialog::getSaveFileName(
      this, alto ? tr("Export page as ALTO") : tr("Export page as PAGE-XML"),
      QDir(layout.absolutePath()).filePath(name), tr("XML (*.xml)"));
  if (path.isEmpty()) return;
  const QString error = exportPage(path, format);
  if (!error.isEmpty()) return Q_EMIT failed(error);
  Q_EMIT message(
      tr("Exported the page as %1 to %2").arg(alto ? tr("ALTO v4") : tr("PAGE-XML 2019"), path));
}

}  // namespace foveal::ui
