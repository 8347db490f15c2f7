#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QKeySequence>
#include <QMenuBar>
#include <QMimeData>
#include <QScopedValueRollback>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <memory>
#include <type_traits>

#include "compare_page.h"
#include "dataset_browser.h"
#include "engines/tesseract_spec.h"
#include "errors_page.h"
#include "exporter.h"
#include "help_menu.h"
#include "import_options_dialog.h"
#include "inspector_exports.h"
#include "inspector_page.h"
#include "model_list_model.h"
#include "models_dock.h"
#include "page_view.h"
#include "reading_document.h"
#include "reading_status.h"
#include "recent_images_menu.h"
#include "settings.h"
#include "step_bar.h"
#include "step_cursor.h"
#include "step_key_filter.h"
#include "trace_view.h"
#include "training_page.h"

// resources.qrc lives in a static library: its initialiser must be referenced explicitly.
static void initFovealResources() { Q_INIT_RESOURCE(resources); }

namespace foveal::ui {

namespace {
const Setting<QByteArray> kGeometry(QStringLiteral("window/geometry"), {});
const Setting<QByteArray> kDockState(QStringLiteral("window/state"), {});
const Setting<QStringList> kClosedDocks(QStringLiteral("window/closedDocks"), {});
const Setting<QString> kLastImage(QStringLiteral("inspector/lastImage"), {});
const Setting<QStringList> kComparedModels(QStringLiteral("inspector/comparedModels"), {});
const Setting<QStringList> kOpenedModels(QStringLiteral("inspector/openedModels"), {});
const Setting<QString> kInspectedModel(QStringLiteral("inspector/model"), {});
constexpr int kWindowStateVersion = 1;
const QString kImageFilter =
    QObject::tr("Images (*.png *.jpg *.jpeg *.bmp *.pgm *.ppm *.tif *.tiff *.webp);;All files (*)");
}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_document(new ReadingDocument(this)), m_cursor(new StepCursor(this)) {
  initFovealResources();
  setWindowTitle(tr("Foveal"));
  setWindowIcon(QIcon(QStringLiteral(":/foveal/icon.svg")));
  setAcceptDrops(true);
  buildDocks();
  buildPages();
  buildMenus();
  wireDocument();
  // Step keys reach the cursor from any widget of this window but a text field.
  new StepKeyFilter(this, m_cursor, [this] { return currentPage()->followsSteps(); });
  connect(m_cursor, &StepCursor::stepChanged, this, &MainWindow::stepChanged);
  // The session is saved a moment after it changes, not only on closing: a crash keeps it.
  m_sessionSave = new QTimer(this);
  m_sessionSave->setSingleShot(true);
  m_sessionSave->setInterval(500);
  connect(m_sessionSave, &QTimer::timeout, this, &MainWindow::saveSession);
  auto changed = [this] { m_sessionSave->start(); };
  connect(m_document, &ReadingDocument::modelsChanged, this, changed);
  connect(models(), &ModelListModel::comparedChanged, this, changed);
  connect(m_document, &ReadingDocument::imageOpened, this, changed);
  for (QDockWidget* d : m_docks) {
    connect(d, &QDockWidget::visibilityChanged, this, changed);
    connect(d, &QDockWidget::dockLocationChanged, this, changed);
    connect(d, &QDockWidget::topLevelChanged, this, changed);
  }
  resize(1200, 720);
  statusBar()->showMessage(tr("Ready"));
  showPageChrome();
  focusCurrentView();
}

MainWindow::~MainWindow() {
  // Pages and docks deleted with the window are not switched or closed by the user, and the
  // toolbar gives the current page its controls back before either goes.
  m_tabs->disconnect(this);
  // ~QWidget hides the docks after this destructor has run: their visibilityChanged must not
  // reach the session timer's lambda, whose MainWindow is gone by then (UBSan under the
  // asan-ubsan preset: test_hostile_gui).
  for (QDockWidget* d : m_docks) {
    d->toggleViewAction()->disconnect(this);
    d->disconnect(this);
  }
  m_document->disconnect(this);
  models()->disconnect(this);
  m_sessionSave->stop();
  m_pageBar->clear();
}

void MainWindow::buildDocks() {
  auto* models = new ModelsDock(m_document, this);
  addDockWidget(Qt::LeftDockWidgetArea, models);
  connect(models, &ModelsDock::addRequested, this, [this] { openModelDialog(false); });
  connect(models, &ModelsDock::engineRequested, this,
          [this](const QString& spec) { openModel(spec); });
  connect(models, &ModelsDock::inspected, this, [this] { m_tabs->setCurrentWidget(m_inspector); });
  connect(models, &ModelsDock::failed, this,
          [this](const QString& message) { showError(message, ErrorTopic::Model); });
  connect(models, &ModelsDock::message, this,
          [this](const QString& text) { statusBar()->showMessage(text, 5000); });

  // Dataset browser: entries with their truth; choosing one reads it.
  auto* data = new QDockWidget(tr("Dataset"), this);
  data->toggleViewAction()->setText(tr("&Dataset"));
  data->setObjectName(QStringLiteral("datasetDock"));
  m_datasets = new DatasetBrowser(data);
  data->setWidget(m_datasets);
  addDockWidget(Qt::LeftDockWidgetArea, data);
  connect(m_datasets, &DatasetBrowser::entryChosen, this, &MainWindow::setImage);
  connect(m_datasets, &DatasetBrowser::failed, this,
          [this](const QString& message) { showError(message, ErrorTopic::Image); });

  m_docks = {models, data};
  for (QDockWidget* d : m_docks)
    connect(d->toggleViewAction(), &QAction::toggled, this, [this, d](bool shown) {
      if (m_applyingChrome) return;
      m_closedDocks.removeAll(d->objectName());
      if (!shown) m_closedDocks << d->objectName();
    });
}

void MainWindow::buildPages() {
  auto* central = new QWidget(this);
  auto* outer = new QVBoxLayout(central);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->setSpacing(0);
  m_banner = new ErrorBanner(central);
  outer->addWidget(m_banner);
  m_tabs = new QTabWidget(central);
  m_tabs->setDocumentMode(true);
  outer->addWidget(m_tabs, 1);
  m_stepBar = new StepBar(m_cursor, central);
  outer->addWidget(m_stepBar);
  setCentralWidget(central);
  m_pageBar = addToolBar(tr("Page"));
  m_pageBar->setObjectName(QStringLiteral("pageToolbar"));

  QDockWidget* models = m_docks[0];
  QDockWidget* dataset = m_docks[1];
  m_inspector = new InspectorPage(m_cursor, m_tabs);
  m_inspector->observe(m_document);
  addPage(m_inspector, {models, dataset});
  m_compare = new ComparePage(m_cursor, m_tabs);
  m_compare->observe(m_document);
  addPage(m_compare, {models, dataset});
  m_training = new TrainingPage(m_tabs);
  addPage(m_training, {});
  m_errors = new ErrorsPage(m_tabs);
  m_errors->observe(m_document);
  addPage(m_errors, {models});
  m_pageView = new PageView(m_tabs);
  m_pageView->observe(m_document);
  addPage(m_pageView, {models});
  connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::showPageChrome);

  connect(m_inspector, &InspectorPage::overlaysChanged, m_compare, &ComparePage::setOverlays);
  auto report = [this](auto* page) {
    connect(page, &std::remove_pointer_t<decltype(page)>::failed, this,
            [this](const QString& message) { showError(message); });
    connect(page, &std::remove_pointer_t<decltype(page)>::message, this,
            [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  };
  report(m_training);
  report(m_pageView);
  // An analysis that failed is an error until the next one succeeds (issue 64: its banner
  // outlived a later success).
  connect(m_errors, &ErrorsPage::failed, this,
          [this](const QString& message) { showError(message, ErrorTopic::Analysis); });
  connect(m_errors, &ErrorsPage::message, this,
          [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  connect(m_errors, &ErrorsPage::analysed, this, [this] { clearError(ErrorTopic::Analysis); });
  // A page's line is the document's image by now: the Inspector shows it.
  connect(m_pageView, &PageView::inspectRequested, this,
          [this] { m_tabs->setCurrentWidget(m_inspector); });
  connect(m_pageView, &PageView::pageOpened, this,
          [this] { m_tabs->setCurrentWidget(m_pageView); });
  auto inspectFailure = [this](const QImage& image, const QString& source, const QString& truth,
                               const QString& model, int beamWidth) {
    openFailure(image, source, truth, {model}, model, beamWidth);
  };
  connect(m_training, &TrainingPage::failureChosen, this, inspectFailure);
  connect(m_errors, &ErrorsPage::inspectRequested, this, inspectFailure);
  connect(m_errors, &ErrorsPage::compareRequested, this, &MainWindow::openFailure);

  m_exports = new InspectorExports(m_inspector, m_document, this);
  report(m_exports);
}

void MainWindow::addPage(Page* page, QList<QDockWidget*> docks) {
  m_tabs->addTab(page->widget(), page->title());
  m_pages.emplace_back(page, std::move(docks));
}

Page* MainWindow::currentPage() const {
  return m_pages[static_cast<size_t>(std::max(0, m_tabs->currentIndex()))].first;
}

void MainWindow::showPageChrome() {
  const auto& [page, docks] = m_pages[static_cast<size_t>(std::max(0, m_tabs->currentIndex()))];
  m_pageBar->clear();
  m_pageBar->addActions(page->toolBarActions());
  m_pageBar->setVisible(!page->toolBarActions().isEmpty());
  {
    const QScopedValueRollback<bool> applying(m_applyingChrome, true);
    for (QDockWidget* d : m_docks) {
      d->toggleViewAction()->setEnabled(docks.contains(d));
      d->setVisible(docks.contains(d) && !m_closedDocks.contains(d->objectName()));
    }
  }
  // Off the steps pages the arrow keys belong to the lists and tables again.
  m_stepBar->setVisible(page->followsSteps());
  for (QAction* a : m_stepBar->actions()) a->setEnabled(page->followsSteps());
  showReading();
}

void MainWindow::buildMenus() {
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Open &Image..."), QKeySequence::Open, this, &MainWindow::openImageDialog);
  m_recentMenu = new RecentImagesMenu(file);
  file->addMenu(m_recentMenu);
  connect(m_recentMenu, &RecentImagesMenu::chosen, this, &MainWindow::openImage);
  file->addAction(tr("&Paste Image"), QKeySequence::Paste, this, &MainWindow::pasteImage);
  file->addAction(tr("Open &Model..."), QKeySequence(Qt::CTRL | Qt::Key_M), this,
                  [this] { openModelDialog(false); });
  file->addAction(tr("Open Model with &Options..."), this, [this] { openModelDialog(true); });
  file->addAction(m_pageView->openAction());  // Ctrl+Shift+P
  file->addSeparator();
  file->addAction(tr("&Export View..."), QKeySequence(Qt::CTRL | Qt::Key_E), this,
                  &MainWindow::exportView);
  file->addMenu(tr("Export &Figure"))->addActions(m_exports->figureActions());
  file->addAction(m_exports->traceAction());  // Ctrl+Shift+E
  file->addActions(m_pageView->exportActions());
  file->addAction(m_training->exportCurvesAction());  // Ctrl+Shift+C
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  auto* view = menuBar()->addMenu(tr("&View"));
  for (size_t i = 0; i < m_pages.size(); ++i) {
    QWidget* page = m_pages[i].first->widget();
    view->addAction(m_pages[i].first->title(), QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + int(i))),
                    this, [this, page] { m_tabs->setCurrentWidget(page); });
  }
  view->addAction(tr("&Fit Image"), QKeySequence(Qt::CTRL | Qt::Key_0), this,
                  [this] { traceView()->resetView(); });
  view->addSeparator();
  // Closed docks come back from here.
  for (QDockWidget* d : m_docks) view->addAction(d->toggleViewAction());

  menuBar()->addMenu(tr("&Step"))->addActions(m_stepBar->actions());
  m_help = new HelpMenu(this);
  menuBar()->addMenu(m_help);
  connect(m_help, &HelpMenu::failed, this, [this](const QString& message) { showError(message); });
}

void MainWindow::wireDocument() {
  new ReadingStatus(m_document, statusBar());
  // An image from a file is named by its file, one from memory (paste, dataset) by its source.
  connect(m_document, &ReadingDocument::imageChanged, this, [this] {
    setWindowTitle(tr("%1 - Foveal").arg(m_document->source()));
    clearError(ErrorTopic::Image);
  });
  connect(m_document, &ReadingDocument::imageOpened, this, [this](const QString& path) {
    m_recentMenu->remember(path);
    kLastFolder.set(QFileInfo(path).absolutePath());
    kLastImage.set(QFileInfo(path).absoluteFilePath());
    m_datasets->forgetEntry();
    setWindowTitle(tr("%1 - Foveal").arg(QFileInfo(path).fileName()));
  });
  connect(m_document, &ReadingDocument::imageOpenFailed, this,
          [this](const QString& message) { showError(message, ErrorTopic::Image); });
  connect(m_document, &ReadingDocument::imageWarning, this, [this](const QString& message) {
    showError(tr("Warning: %1").arg(message), ErrorTopic::Image);
  });
  connect(m_document, &ReadingDocument::modelLoaded, this, [this](ModelId, bool requested) {
    if (requested) clearError(ErrorTopic::Model);
  });
  connect(
      m_document, &ReadingDocument::modelFailed, this,
      [this](const QString&, const QString& message) { showError(message, ErrorTopic::Model); });
  connect(m_document, &ReadingDocument::optionsNeeded, this,
          [this](ModelId id, const ImportQuestion& question) {
            ImportOptionsDialog dialog(question, this);
            if (dialog.exec() != QDialog::Accepted)
              return m_document->abandonModel(id, question.message);
            openModelWith(question.path, dialog.options());  // the failed entry is read again
          });
  connect(m_document, &ReadingDocument::tracesChanged, this, &MainWindow::onTracesChanged);
}

bool MainWindow::openImage(const QString& path) {
  QString error;
  if (!m_document->openImage(path, &error)) {
    showError(error, ErrorTopic::Image);
    return false;
  }
  statusBar()->showMessage(tr("Reading %1 ...").arg(QFileInfo(path).fileName()));
  return true;  // imageOpened() or imageOpenFailed() follows
}

void MainWindow::openImageDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open image"), kLastFolder.value(), kImageFilter);
  if (!path.isEmpty()) openImage(path);
  focusCurrentView();
}

void MainWindow::setImage(const QImage& image, const QString& source, const QString& truth,
                          const std::vector<core::Box>& truthBoxes) {
  m_document->setImage(image, source, truth, truthBoxes);
}

bool MainWindow::openModel(const QString& path) { return openModelFile(path, nullptr); }

bool MainWindow::openModelWith(const QString& path, const core::ImportOptions& options) {
  return openModelFile(path, &options);
}

bool MainWindow::openModelFile(const QString& path, const core::ImportOptions* options) {
  statusBar()->showMessage(tr("Loading %1 ...").arg(QFileInfo(path).fileName()));
  QString error;
  if (!(options ? m_document->openModelWith(path, *options, &error)
                : m_document->openModel(path, &error))) {
    showError(error, ErrorTopic::Model);
    return false;
  }
  if (!core::isTesseractSpec(path.toStdString())) kLastFolder.set(QFileInfo(path).absolutePath());
  return true;
}

void MainWindow::openModelDialog(bool withOptions) {
  const QString path = QFileDialog::getOpenFileName(
      this, withOptions ? tr("Open model with options") : tr("Open model"), kLastFolder.value(),
      tr("Models (*.fvm *.pth *.pt *.ckpt *.mlmodel *.safetensors);;Foveal models (*.fvm);;"
         "PyTorch checkpoints: deep-text-recognition-benchmark, EasyOCR, the PARSeq hub "
         "(*.pth *.pt *.ckpt);;kraken models (*.mlmodel *.safetensors);;All files (*)"));
  if (path.isEmpty()) return focusCurrentView();
  if (!withOptions) {
    openModel(path);
    return focusCurrentView();
  }
  statusBar()->showMessage(tr("Reading %1 ...").arg(QFileInfo(path).fileName()));
  askImportOptions(path, rememberedImportOptions(path).value_or(core::ImportOptions{}), this,
                   [this, path](std::optional<core::ImportOptions> options) {
                     statusBar()->clearMessage();
                     if (options) openModelWith(path, *options);
                     focusCurrentView();
                   });
}

void MainWindow::addModelFolder(const QString& folder) {
  m_document->addModelFolder(folder);
  if (const int n = models()->loadingCount()) {
    statusBar()->showMessage(tr("Loading %n model(s)...", nullptr, n));
    // The message ends with the loading (issue 64: it stayed for good).
    auto* done = new QMetaObject::Connection;
    auto finish = [this, done] {
      if (models()->loadingCount() > 0) return;
      if (statusBar()->currentMessage().startsWith(tr("Loading")))
        statusBar()->showMessage(tr("%n model(s) listed", nullptr, models()->rowCount()), 4000);
      QObject::disconnect(*done);
      delete done;
    };
    *done = connect(models(), &QAbstractItemModel::dataChanged, this, finish);
  }
}

int MainWindow::addSampleRuns(const QString& runsFolder) {
  return m_training->addSampleRuns(runsFolder);
}

void MainWindow::onTracesChanged() {
  if (!m_document->readingError().isEmpty())
    showError(m_document->readingError(), ErrorTopic::Reading);
  else if (m_document->hasReadings())
    clearError(ErrorTopic::Reading);
  showReading();
  if (m_goToFirstError && trace()) {
    m_goToFirstError = false;
    m_inspector->showFirstWrongStep();
  }
}

void MainWindow::showReading() {
  Page* page = currentPage();
  if (page->followsSteps()) m_cursor->setCount(page->stepCount());
  if (!m_document->isBusy() && !page->readingSummary().isEmpty())
    statusBar()->showMessage(page->readingSummary());
}

void MainWindow::openFailure(const QImage& image, const QString& source, const QString& truth,
                             const QStringList& models, const QString& focus, int beamWidth) {
  QString error;
  if (!m_document->readFailure(image, source, truth, models, focus, beamWidth, &error))
    return showError(error, ErrorTopic::Model);
  m_tabs->setCurrentWidget(models.size() > 1 ? static_cast<QWidget*>(m_compare) : m_inspector);
  m_goToFirstError = true;
}

bool MainWindow::openPage(const QString& image, const QString& layout) {
  m_tabs->setCurrentWidget(m_pageView);
  return m_pageView->openPage(image, layout);  // failed() reaches the banner
}

void MainWindow::setTruth(const QString& truth) { m_document->setTruth(truth); }
QString MainWindow::truth() const { return m_document->truth(); }
ModelListModel* MainWindow::models() const { return m_document->models(); }
int MainWindow::currentModel() const { return models()->rowOf(m_document->inspectedModel()); }
bool MainWindow::isTracing() const { return m_document->isBusy(); }
int MainWindow::beamWidth() const { return m_document->beamWidth(); }
void MainWindow::setBeamWidth(int width) { m_document->setBeamWidth(width); }
void MainWindow::chooseHypothesis(int index) { m_document->chooseHypothesis(index); }
int MainWindow::step() const { return m_cursor->step(); }
int MainWindow::stepCount() const { return m_cursor->count(); }
std::shared_ptr<const core::Trace> MainWindow::trace() const { return m_inspector->trace(); }
TraceView* MainWindow::traceView() const { return m_inspector->traceView(); }
QString MainWindow::errorText() const { return m_banner->text(); }
void MainWindow::setStep(int step) { m_cursor->setStep(step); }
void MainWindow::nextStep() { m_cursor->next(); }
void MainWindow::previousStep() { m_cursor->previous(); }
void MainWindow::firstStep() { m_cursor->first(); }
void MainWindow::lastStep() { m_cursor->last(); }

void MainWindow::showError(const QString& message, ErrorTopic topic) {
  m_banner->showMessage(message, topic);
  statusBar()->showMessage(tr("Error"), 5000);
}

void MainWindow::clearError(ErrorTopic topic) { m_banner->clear(topic); }

void MainWindow::focusCurrentView() { currentPage()->focusView()->setFocus(Qt::OtherFocusReason); }

QString MainWindow::shortcutsText() { return HelpMenu::shortcutsText(); }
void MainWindow::setDocumentation(const QString& path) { m_help->setDocumentation(path); }

void MainWindow::saveSession() const {
  kGeometry.set(saveGeometry());
  kDockState.set(saveState(kWindowStateVersion));
  kClosedDocks.set(m_closedDocks);
  // Ticked models still loading are kept: saved while they load, they come back next time.
  kComparedModels.set(models()->checkedPaths());
  QStringList opened;  // ticked or not, engines too
  for (int r = 0; r < models()->rowCount(); ++r) opened << models()->path(r);
  kOpenedModels.set(opened);
  if (currentModel() >= 0 || models()->loadingCount() == 0)
    kInspectedModel.set(models()->path(currentModel()));
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  if (m_sessionSave && isVisible()) m_sessionSave->start();
}

void MainWindow::moveEvent(QMoveEvent* event) {
  QMainWindow::moveEvent(event);
  if (m_sessionSave && isVisible()) m_sessionSave->start();
}

bool MainWindow::openModels(const QStringList& paths) {
  bool all = true;
  for (const QString& p : paths) all = openModel(p) && all;
  if (paths.isEmpty()) return all;
  models()->setCompared(paths);
  // The first named is inspected (each openModel() made its own the inspected one); it is read
  // once loaded.
  if (const ModelId id = models()->idOf(paths.front())) m_document->inspect(id);
  return all;
}

bool MainWindow::restoreSession() {
  const bool saved = !kGeometry.value().isEmpty() || !kComparedModels.value().isEmpty() ||
                     !kOpenedModels.value().isEmpty() || !kLastImage.value().isEmpty();
  if (const QByteArray g = kGeometry.value(); !g.isEmpty()) restoreGeometry(g);
  m_closedDocks = kClosedDocks.value();
  if (const QByteArray st = kDockState.value(); !st.isEmpty()) {
    const QScopedValueRollback<bool> applying(m_applyingChrome, true);
    restoreState(st, kWindowStateVersion);
  }
  showPageChrome();  // the state was saved on some page: this one's docks and toolbar
  m_document->restoreModels(kOpenedModels.value(), kComparedModels.value(),
                            kInspectedModel.value());
  // The image last shown: a dataset entry (with its truth) or an image file.
  if (m_datasets->restoreLastEntry()) return saved;
  const QString image = kLastImage.value();
  if (!image.isEmpty() && QFileInfo(image).isFile()) openImage(image);
  return saved;
}

void MainWindow::openFirstStart(const QString& samplesFolder) {
  const QString chain = samplesFolder + QStringLiteral("/models/sharp-chain.fvm");
  const QString image = samplesFolder + QStringLiteral("/images/digits-46214.png");
  if (QFileInfo::exists(chain)) openModels({chain});
  if (QFileInfo::exists(image)) openImage(image);
  m_datasets->openDataset(QStringLiteral("digits:len=7,rotated,split=test,seed=1"));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  for (const auto& [page, docks] : m_pages)
    if (m_confirmClose && !page->confirmClose()) return event->ignore();
  saveSession();
  QMainWindow::closeEvent(event);
}

void MainWindow::pasteImage() {
  const QImage image = QApplication::clipboard()->image();
  if (image.isNull()) return showError(tr("The clipboard holds no image."), ErrorTopic::Image);
  setImage(image, tr("pasted image"));
}

void MainWindow::exportView() {
  // A name to start from: the page and the image ("compare_digits-46214.png").
  QString name = m_tabs->tabText(m_tabs->currentIndex()).remove(QLatin1Char('&')).toLower();
  if (const QString image = QFileInfo(m_document->source()).completeBaseName(); !image.isEmpty())
    name += QLatin1Char('_') + image;
  const QString folder = kLastFolder.value().isEmpty() ? QDir::homePath() : kLastFolder.value();
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export view"), QDir(folder).filePath(name + QStringLiteral(".png")),
      tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
  if (path.isEmpty()) return;
  const QString error = exportWidget(m_tabs->currentWidget(), path);
  if (!error.isEmpty()) {
    showError(error);
  } else {
    kLastFolder.set(QFileInfo(path).absolutePath());  // the next export starts there
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
  }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() || event->mimeData()->hasImage()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  if (event->mimeData()->hasUrls()) {
    for (const QUrl& url : event->mimeData()->urls()) {
      const QString path = url.toLocalFile();
      if (path.endsWith(QLatin1String(".fvm"), Qt::CaseInsensitive) ||
          path.endsWith(QLatin1String(".pth"), Qt::CaseInsensitive) ||
          path.endsWith(QLatin1String(".pt"), Qt::CaseInsensitive))
        openModel(path);
      else
        openImage(path);
    }
  } else if (event->mimeData()->hasImage()) {
    setImage(qvariant_cast<QImage>(event->mimeData()->imageData()), tr("dropped image"));
  }
}

}  // namespace foveal::ui
