#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDesktopServices>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QIcon>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QProgressDialog>
#include <QPushButton>
#include <QShortcut>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "alignment_view.h"
#include "base/error.h"
#include "compare_page.h"
#include "dataset_browser.h"
#include "dtrb_options_dialog.h"
#include "error_banner.h"
#include "errors_page.h"
#include "exporter.h"
#include "image_file.h"
#include "inspector_page.h"
#include "model/charset.h"
#include "model_list_model.h"
#include "patch_strip.h"
#include "qt_convert.h"
#include "run_launcher.h"
#include "run_list_model.h"
#include "settings.h"
#include "step_bar.h"
#include "step_cursor.h"
#include "step_key_filter.h"
#include "trace/model_session.h"
#include "trace_view.h"
#include "training_page.h"

// resources.qrc lives in a static library: its initialiser must be referenced explicitly.
static void initFovealResources() { Q_INIT_RESOURCE(resources); }

namespace foveal::ui {

namespace {
const Setting<QStringList> kRecentImages(QStringLiteral("inspector/recentImages"), {});
const Setting<QString> kLastFolder(QStringLiteral("inspector/lastFolder"), {});
const Setting<int> kBeamWidth(QStringLiteral("inspector/beamWidth"), 1);
const Setting<QByteArray> kGeometry(QStringLiteral("window/geometry"), {});
const Setting<QByteArray> kDockState(QStringLiteral("window/state"), {});
const Setting<QString> kLastImage(QStringLiteral("inspector/lastImage"), {});
const Setting<QStringList> kComparedModels(QStringLiteral("inspector/comparedModels"), {});
const Setting<QString> kInspectedModel(QStringLiteral("inspector/model"), {});
constexpr int kWindowStateVersion = 1;

constexpr int kMaxRecent = 10;
const QString kImageFilter =
    QObject::tr("Images (*.png *.jpg *.jpeg *.bmp *.pgm *.ppm *.tif *.tiff *.webp);;All files (*)");

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_models(new ModelListModel(this)),
      m_cursor(new StepCursor(this)),
      m_runner(new TraceRunner(this)),
      m_document(new ReadingDocument(this)) {
  initFovealResources();
  setWindowTitle(tr("Foveal"));
  setWindowIcon(QIcon(QStringLiteral(":/foveal/icon.svg")));
  setAcceptDrops(true);
  buildLayout();
  buildActions();
  // Step keys reach the cursor from any widget of this window but a text field.
  new StepKeyFilter(this, m_cursor, [this] {
    return m_tabs->currentWidget() != m_training && m_tabs->currentWidget() != m_errors;
  });
  qRegisterMetaType<std::vector<foveal::ui::TraceOutcome>>();
  connect(m_runner, &TraceRunner::finished, this, &MainWindow::onTracesFinished);
  connect(m_runner, &TraceRunner::started, this, [this](int n) {
    m_progress->setRange(0, n);
    m_progress->setValue(0);
    m_progress->show();
    statusBar()->showMessage(tr("Reading %1 with %n model(s)...", nullptr, n)
                                 .arg(QFileInfo(m_document->source()).fileName()));
  });
  connect(m_runner, &TraceRunner::progress, m_progress, &QProgressBar::setValue);
  connect(m_cursor, &StepCursor::stepChanged, this, &MainWindow::stepChanged);
  connect(m_models, &ModelListModel::comparedChanged, this, &MainWindow::retrace);
  connect(m_models, &ModelListModel::modelLoaded, this, &MainWindow::onModelLoaded);
  connect(m_models, &ModelListModel::loadFailed, this, &MainWindow::onModelLoadFailed);
  connect(m_models, &ModelListModel::charsetNeeded, this, &MainWindow::askDtrbCharset);
  connect(m_models, &ModelListModel::rowsRemoved, this,
          [this](const QModelIndex&, int first, int last) { onModelRowsRemoved(first, last); });
  connect(m_models, &ModelListModel::compareLimitReached, this, [this] {
    statusBar()->showMessage(
        tr("Compare shows at most %1 models: untick one first.").arg(ModelListModel::kMaxCompared),
        8000);
  });
  resize(1200, 720);
  statusBar()->showMessage(tr("Ready"));
  m_inspector->traceView()->setFocus(Qt::OtherFocusReason);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildLayout() {
  auto* central = new QWidget(this);
  auto* outer = new QVBoxLayout(central);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->setSpacing(0);

  m_banner = new ErrorBanner(central);
  outer->addWidget(m_banner);

  m_tabs = new QTabWidget(central);
  m_tabs->setDocumentMode(true);
  m_inspector = new InspectorPage(m_cursor, m_tabs);
  m_compare = new ComparePage(m_cursor, m_tabs);
  m_tabs->addTab(m_inspector, tr("&Inspector"));
  m_tabs->addTab(m_compare, tr("&Compare"));
  m_training = new TrainingPage(m_tabs);
  m_tabs->addTab(m_training, tr("&Training"));
  connect(m_training, &TrainingPage::failed, this,
          [this](const QString& message) { showError(message); });
  connect(m_training, &TrainingPage::message, this,
          [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  connect(m_training, &TrainingPage::failureChosen, this, &MainWindow::inspectFailure);
  m_errors = new ErrorsPage(m_tabs);
  m_tabs->addTab(m_errors, tr("E&rrors"));
  connect(m_errors, &ErrorsPage::failed, this,
          [this](const QString& message) { showError(message); });
  connect(m_errors, &ErrorsPage::message, this,
          [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  connect(m_errors, &ErrorsPage::inspectRequested, this, &MainWindow::inspectFailure);
  connect(m_errors, &ErrorsPage::compareRequested, this, &MainWindow::compareFailure);
  outer->addWidget(m_tabs, 1);
  connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
    // The step bar drives the inspector and compare pages; training and errors have no steps.
    const bool stepping =
        m_tabs->currentWidget() != m_training && m_tabs->currentWidget() != m_errors;
    if (m_stepBar) m_stepBar->setVisible(stepping);
    // Off the steps pages the arrow keys belong to the lists and tables again.
    for (QAction* a : m_stepActions) a->setEnabled(stepping);
    showCurrentModel();
  });
  connect(m_inspector, &InspectorPage::overlaysChanged, m_compare, &ComparePage::setOverlays);
  connect(m_inspector, &InspectorPage::hypothesisChosen, this, &MainWindow::chooseHypothesis);
  connect(m_inspector, &InspectorPage::modelChosen, this, [this](int row) {
    m_currentModel = row;
    retrace();
  });

  // The pages follow the document; the window reads the new image with every model it shows.
  m_inspector->observe(m_document);
  m_compare->observe(m_document);
  connect(m_document, &ReadingDocument::imageChanged, this, &MainWindow::retrace);
  connect(m_document, &ReadingDocument::truthChanged, this, [this](const QString& truth) {
    if (m_truthEdit->text().trimmed() != truth) {
      const QSignalBlocker block(m_truthEdit);
      m_truthEdit->setText(truth);
    }
    updateTruthWarning();
  });

  m_stepBar = new StepBar(m_cursor, central);
  outer->addWidget(m_stepBar);
  setCentralWidget(central);

  // Models dock: the open model files; ticked ones are compared; double-click inspects.
  auto* dock = new QDockWidget(tr("Models"), this);
  dock->toggleViewAction()->setText(tr("&Models"));
  dock->setObjectName(QStringLiteral("modelsDock"));
  auto* panel = new QWidget(dock);
  auto* pl = new QVBoxLayout(panel);
  pl->setContentsMargins(4, 4, 4, 4);
  m_modelView = new QListView(panel);
  m_modelView->setModel(m_models);
  m_modelView->setToolTip(tr("Tick up to four models to compare; double-click one to inspect it."));
  pl->addWidget(m_modelView);
  auto* buttons = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add..."), panel);
  auto* remove = new QPushButton(tr("Remove"), panel);
  buttons->addWidget(add);
  buttons->addWidget(remove);
  pl->addLayout(buttons);
  dock->setWidget(panel);
  addDockWidget(Qt::LeftDockWidgetArea, dock);
  connect(add, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open model"), kLastFolder.value(),
        tr("Models (*.fvm *.pth *.pt);;Foveal models (*.fvm);;deep-text-recognition-benchmark "
           "checkpoints (*.pth *.pt);;All files (*)"));
    if (!path.isEmpty()) openModel(path);
    focusCurrentView();
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    const int row = m_modelView->currentIndex().row();
    if (row < 0) return;
    m_models->removeModel(row);  // onModelRowsRemoved() moves the current model
    retrace();
  });
  connect(m_modelView, &QListView::doubleClicked, this, [this](const QModelIndex& index) {
    if (m_models->isLoading(index.row())) {
      m_currentModel = index.row();  // inspected as soon as it is loaded
      m_tabs->setCurrentWidget(m_inspector);
      statusBar()->showMessage(tr("%1 is still loading...").arg(m_models->displayName(index.row())),
                               5000);
      retrace();
      return;
    }
    if (!m_models->session(index.row())) {
      showError(m_models->data(index, ModelListModel::ErrorRole).toString(), ErrorTopic::Model);
      return;
    }
    m_currentModel = index.row();
    m_tabs->setCurrentWidget(m_inspector);
    retrace();
  });

  // Dataset browser: entries with their truth; choosing one reads it.
  m_docks << dock;
  auto* dataDock = new QDockWidget(tr("Dataset"), this);
  dataDock->toggleViewAction()->setText(tr("&Dataset"));
  dataDock->setObjectName(QStringLiteral("datasetDock"));
  m_datasets = new DatasetBrowser(dataDock);
  dataDock->setWidget(m_datasets);
  addDockWidget(Qt::LeftDockWidgetArea, dataDock);
  connect(m_datasets, &DatasetBrowser::entryChosen, this,
          [this](const QImage& image, const QString& source, const QString& truth,
                 const std::vector<core::Box>& truthBoxes) {
            setImage(image, source, truth, truthBoxes);
          });
  connect(m_datasets, &DatasetBrowser::failed, this,
          [this](const QString& message) { showError(message, ErrorTopic::Image); });
  m_docks << dataDock;

  // Truth entry and progress.
  auto* tb = addToolBar(tr("Image"));
  tb->setObjectName(QStringLiteral("imageToolbar"));
  auto* truthLabel = new QLabel(tr(" &Truth: "), tb);
  tb->addWidget(truthLabel);
  m_truthEdit = new QLineEdit(tb);
  truthLabel->setBuddy(m_truthEdit);
  m_truthEdit->setPlaceholderText(tr("expected text (optional)"));
  m_truthEdit->setMaximumWidth(240);
  m_truthEdit->setClearButtonEnabled(true);
  connect(m_truthEdit, &QLineEdit::textChanged, this, &MainWindow::setTruth);
  // Enter ends typing: the step keys go back to the views.
  connect(m_truthEdit, &QLineEdit::returnPressed, this, &MainWindow::focusCurrentView);
  auto* leave = new QShortcut(QKeySequence(Qt::Key_Escape), m_truthEdit);
  leave->setContext(Qt::WidgetShortcut);
  connect(leave, &QShortcut::activated, this, &MainWindow::focusCurrentView);
  tb->addWidget(m_truthEdit);
  tb->addSeparator();
  auto* beamLabel = new QLabel(tr(" &Beam: "), tb);
  tb->addWidget(beamLabel);
  m_beam = new QSpinBox(tb);
  m_beam->setObjectName(QStringLiteral("beamWidth"));
  m_beam->setRange(1, 16);
  m_beam->setSpecialValueText(tr("greedy"));  // shown for 1
  m_beam->setValue(std::clamp(kBeamWidth.value(), 1, 16));
  m_beam->setToolTip(
      tr("Decoding: greedy takes the most probable token at each step; a beam search of width N "
         "keeps the N most probable readings so far and returns the best whole reading (about "
         "N times slower). Regions are chosen by argmax either way."));
  m_beam->setKeyboardTracking(false);  // typing "12" traces once, not for 1 then 12
  beamLabel->setBuddy(m_beam);
  connect(m_beam, &QSpinBox::valueChanged, this, [this](int width) {
    kBeamWidth.set(width);
    retrace();
  });
  connect(m_beam, &QSpinBox::editingFinished, this, [this] {
    if (m_beam->hasFocus()) focusCurrentView();
  });
  tb->addWidget(m_beam);
  m_progress = new QProgressBar(this);
  m_progress->setMaximumWidth(160);
  m_progress->hide();
  statusBar()->addPermanentWidget(m_progress);
}

void MainWindow::buildActions() {
  auto* file = menuBar()->addMenu(tr("&File"));
  auto* openImage = file->addAction(tr("Open &Image..."), this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open image"), kLastFolder.value(), kImageFilter);
    if (!path.isEmpty()) this->openImage(path);
    focusCurrentView();
  });
  openImage->setShortcut(QKeySequence::Open);
  m_recentMenu = file->addMenu(tr("Open &Recent"));
  rebuildRecentMenu();
  auto* paste = file->addAction(tr("&Paste Image"), this, &MainWindow::pasteImage);
  paste->setShortcut(QKeySequence::Paste);
  auto* openModel = file->addAction(tr("Open &Model..."), this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open model"), kLastFolder.value(),
        tr("Models (*.fvm *.pth *.pt);;Foveal models (*.fvm);;deep-text-recognition-benchmark "
           "checkpoints (*.pth *.pt);;All files (*)"));
    if (!path.isEmpty()) this->openModel(path);
    focusCurrentView();
  });
  openModel->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
  file->addSeparator();
  auto* exportView = file->addAction(tr("&Export View..."), this, &MainWindow::exportView);
  exportView->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  auto* figures = file->addMenu(tr("Export &Figure"));
  figures->addAction(tr("&Image with Overlays..."), this,
                     [this] { exportFigureDialog(m_inspector->traceView(), tr("image")); });
  figures->addAction(tr("&Alignment Matrix..."), this,
                     [this] { exportFigureDialog(m_inspector->alignmentView(), tr("alignment")); });
  figures->addAction(tr("Patch &Strip..."), this, &MainWindow::exportStrip);
  auto* exportTrace =
      file->addAction(tr("Export &Trace (JSON/CSV)..."), this, &MainWindow::exportTrace);
  exportTrace->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
  file->addAction(m_training->exportCurvesAction());  // Ctrl+Shift+C
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  auto* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Inspector"), QKeySequence(Qt::CTRL | Qt::Key_1), this,
                  [this] { m_tabs->setCurrentWidget(m_inspector); });
  view->addAction(tr("&Compare"), QKeySequence(Qt::CTRL | Qt::Key_2), this,
                  [this] { m_tabs->setCurrentWidget(m_compare); });
  view->addAction(tr("&Training"), QKeySequence(Qt::CTRL | Qt::Key_3), this,
                  [this] { m_tabs->setCurrentWidget(m_training); });
  view->addAction(tr("&Errors"), QKeySequence(Qt::CTRL | Qt::Key_4), this,
                  [this] { m_tabs->setCurrentWidget(m_errors); });
  view->addAction(tr("&Fit Image"), QKeySequence(Qt::CTRL | Qt::Key_0), this,
                  [this] { traceView()->resetView(); });
  view->addSeparator();
  // Closed docks come back from here.
  for (QDockWidget* d : m_docks) view->addAction(d->toggleViewAction());

  auto* step = menuBar()->addMenu(tr("&Step"));
  m_stepActions = {
      step->addAction(tr("&Previous"), QKeySequence(Qt::Key_Left), m_cursor, &StepCursor::previous),
      step->addAction(tr("&Next"), QKeySequence(Qt::Key_Right), m_cursor, &StepCursor::next),
      step->addAction(tr("&First"), QKeySequence(Qt::Key_Home), m_cursor, &StepCursor::first),
      step->addAction(tr("&Last"), QKeySequence(Qt::Key_End), m_cursor, &StepCursor::last),
      step->addAction(tr("Play / &Pause"), QKeySequence(Qt::Key_Space), m_cursor,
                      &StepCursor::togglePlaying),
      step->addAction(tr("Fas&ter"), QKeySequence(Qt::Key_BracketRight), this,
                      [this] { m_cursor->setSpeed(m_cursor->speed() * 1.5); }),
      step->addAction(tr("&Slower"), QKeySequence(Qt::Key_BracketLeft), this,
                      [this] { m_cursor->setSpeed(m_cursor->speed() / 1.5); })};

  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keyboard Shortcuts"), QKeySequence::HelpContents, this, [this] {
    QMessageBox box(QMessageBox::NoIcon, tr("Keyboard shortcuts"), shortcutsText(),
                    QMessageBox::Close, this);
    box.setTextFormat(Qt::RichText);
    box.exec();
  });
  help->addAction(tr("&Documentation"), this, [this] {
    if (m_documentation.isEmpty() || !QFileInfo::exists(m_documentation))
      return showError(tr("The documentation (README.md) was not found next to the samples."));
    QDesktopServices::openUrl(QUrl::fromLocalFile(m_documentation));
  });
  help->addSeparator();
  help->addAction(tr("&About Foveal"), this, [this] {
    QMessageBox::about(this, tr("About Foveal"),
                       tr("<b>Foveal %1</b><br>A lab for attention-based image-to-sequence "
                          "recognition: soft, hard and sharp attention, step by step.")
                           .arg(QStringLiteral(FOVEAL_VERSION)));
  });
}

bool MainWindow::openImage(const QString& path) {
  // Read and decoded on a worker thread; the window keeps handling events meanwhile, and a read
  // that takes more than a moment shows a progress dialog whose Cancel abandons it (a huge or
  // slow file never freezes the window). Opening another image abandons this one too.
  auto future = QtConcurrent::run([file = path] { return readImageFile(file); });
  if (!future.isFinished()) {
    if (m_cancelImageRead) *m_cancelImageRead = true;  // a newer request wins
    auto cancelled = std::make_shared<bool>(false);
    m_cancelImageRead = cancelled;
    QEventLoop loop;
    QFutureWatcher<ImageFile> watcher;
    connect(&watcher, &QFutureWatcher<ImageFile>::finished, &loop, &QEventLoop::quit);
    QProgressDialog progress(tr("Reading %1 ...").arg(QFileInfo(path).fileName()), tr("Cancel"), 0,
                             0, this);
    progress.setObjectName(QStringLiteral("imageReadProgress"));
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(300);
    progress.setValue(0);  // starts the dialog's clock: it shows if the read is still going
    connect(&progress, &QProgressDialog::canceled, &loop, [&loop, cancelled] {
      *cancelled = true;
      loop.quit();
    });
    QTimer poll;  // a newer request or the window closing ends this wait as well
    connect(&poll, &QTimer::timeout, &loop, [&loop, cancelled] {
      if (*cancelled) loop.quit();
    });
    poll.start(50);
    watcher.setFuture(future);
    if (!future.isFinished()) loop.exec();
    if (m_cancelImageRead == cancelled) m_cancelImageRead.reset();
    if (*cancelled || !future.isFinished()) {
      statusBar()->showMessage(tr("Stopped reading %1").arg(QFileInfo(path).fileName()), 5000);
      return false;
    }
  }
  ImageFile read = future.result();
  if (!read.error.isEmpty()) {
    showError(read.error, ErrorTopic::Image);
    return false;
  }
  rememberRecent(path);
  kLastFolder.set(QFileInfo(path).absolutePath());
  kLastImage.set(QFileInfo(path).absoluteFilePath());
  setTruth(truthFromFileName(path));  // never the previous image's
  setWindowTitle(tr("%1 - Foveal").arg(QFileInfo(path).fileName()));
  clearError(ErrorTopic::Image);
  m_document->setImage(std::move(read.grey), std::move(read.display), path);  // pages follow
  return true;
}

void MainWindow::setImage(const QImage& image, const QString& source, const QString& truth,
                          const std::vector<core::Box>& truthBoxes) {
  setTruth(truth);
  ImageFile read = imageFromQImage(image);
  setWindowTitle(tr("%1 - Foveal").arg(source));
  clearError(ErrorTopic::Image);
  m_document->setImage(std::move(read.grey), std::move(read.display), source, truthBoxes);
}

bool MainWindow::openModel(const QString& path) {
  const QFileInfo info(path);
  if (!info.isFile()) {
    showError(tr("%1: cannot open model file (%2)")
                  .arg(path, info.exists() ? tr("not a file") : tr("no such file")),
              ErrorTopic::Model);
    return false;
  }
  kLastFolder.set(info.absolutePath());
  if (core::isTorchFile(path.toStdString()) && !prepareDtrbModel(path)) return false;
  const int row = m_models->loadModel(path);
  m_userChoseModel = true;
  if (m_currentModel != row && m_models->session(m_currentModel)) m_previousModel = m_currentModel;
  m_currentModel = row;
  if (m_models->session(row)) {  // already listed and loaded
    clearError(ErrorTopic::Model);
    statusBar()->showMessage(
        tr("Model: %1")
            .arg(m_models->data(m_models->index(row), ModelListModel::DescriptionRole).toString()));
    retrace();
    return true;
  }
  if (!m_openRequests.contains(m_models->path(row))) m_openRequests << m_models->path(row);
  statusBar()->showMessage(tr("Loading %1 ...").arg(info.fileName()));
  retrace();  // the inspector lists it; it is read once loaded
  return true;
}

bool MainWindow::prepareDtrbModel(const QString& path) {
  // A deep-text-recognition-benchmark .pth: its charset and input size are not in the file. The
  // answer given once for this file is remembered; otherwise the worker reads it with DTRB's
  // standard sets where the class count fits, and asks (askDtrbCharset) only when none does.
  // Nothing is parsed here: a 200 MB file is read once, off the GUI thread.
  const QString absolute = QFileInfo(path).absoluteFilePath();
  if (const auto remembered = rememberedDtrbOptions(absolute))
    m_models->setDtrbOptions(absolute, *remembered);
  return true;
}

void MainWindow::askDtrbCharset(int row, const QString& message, const QString& architecture,
                                int classes) {
  const QString path = m_models->path(row);
  // Only for a file the user opened: a folder's files report the error instead of asking.
  if (!m_openRequests.contains(path)) {
    onModelLoadFailed(row, message);
    return;
  }
  DtrbOptionsDialog dialog(path, architecture,
                           tr("The file has %1 classes and does not say which characters they "
                              "are: give the characters the model was trained with, in order.")
                               .arg(classes),
                           core::DtrbOptions{}, this);
  if (dialog.exec() != QDialog::Accepted) {
    onModelLoadFailed(row, message);
    return;
  }
  rememberDtrbOptions(path, dialog.options());
  m_models->setDtrbOptions(path, dialog.options());
  statusBar()->showMessage(tr("Loading %1 ...").arg(QFileInfo(path).fileName()));
  m_models->loadModel(path);  // a failed row is read again, now with the characters
}

void MainWindow::addModelFolder(const QString& folder) {
  m_models->addFolder(folder);
  if (const int n = m_models->loadingCount())
    statusBar()->showMessage(tr("Loading %n model(s)...", nullptr, n));
  retrace();  // lists them in the inspector; each is read once loaded
}

int MainWindow::addSampleRuns(const QString& runsFolder) {
  return m_training->addSampleRuns(runsFolder);
}

void MainWindow::onModelLoaded(int row) {
  const QString path = m_models->path(row);
  const bool requested = m_openRequests.removeAll(path) > 0;
  if (requested) {
    clearError(ErrorTopic::Model);
    statusBar()->showMessage(
        tr("Model: %1")
            .arg(m_models->data(m_models->index(row), ModelListModel::DescriptionRole).toString()));
  } else if (!m_models->loadingCount() && !m_runner->isRunning()) {
    statusBar()->showMessage(tr("Models loaded"), 3000);
  }
  // A model loaded in the background shows only while the user has chosen none (a failed
  // --model or Open Model leaves the inspector empty with the error, not on a sample).
  const bool becameCurrent =
      !m_userChoseModel && (m_currentModel < 0 || (!m_models->session(m_currentModel) &&
                                                   !m_models->isLoading(m_currentModel)));
  if (becameCurrent) m_currentModel = row;
  // A checked model is traced by the comparedChanged() that follows; otherwise trace it here
  // when it is the inspected one.
  const bool compared =
      m_models->data(m_models->index(row), Qt::CheckStateRole).toInt() == Qt::Checked;
  if (row == m_currentModel && !compared) retrace();
  updateErrorModels();
}

void MainWindow::onModelLoadFailed(int row, const QString& message) {
  showError(message, ErrorTopic::Model);
  const QString path = m_models->path(row);
  forgetDtrbOptions(path);  // a .pth opened with a wrong answer asks again next time
  const bool wasCurrent = row == m_currentModel;
  // The inspector goes back to the model it showed before, or shows none: never another one
  // that merely happens to be listed.
  const QString previous = m_models->path(m_previousModel);
  if (m_openRequests.removeAll(path) > 0) m_models->removeModel(row);  // as if never opened
  if (wasCurrent) {
    m_currentModel = -1;
    for (int r = 0; r < m_models->rowCount(); ++r)
      if (!previous.isEmpty() && m_models->path(r) == previous && m_models->session(r))
        m_currentModel = r;
    m_previousModel = -1;
  }
  retrace();
  if (m_currentModel < 0)
    m_inspector->setStatus(tr("<b>No model</b><br>%1").arg(message.toHtmlEscaped()));
}

void MainWindow::onModelRowsRemoved(int first, int last) {
  const int n = last - first + 1;
  auto shift = [&](int& r, int gone) {
    if (r > last)
      r -= n;
    else if (r >= first)
      r = gone;
  };
  const bool wasCurrent = m_currentModel >= first && m_currentModel <= last;
  shift(m_currentModel, -1);
  shift(m_previousModel, -1);
  // A model the user removed makes way for the first loaded one (a failed load is handled by
  // onModelLoadFailed(), which knows what was shown before).
  if (m_currentModel < 0 && wasCurrent)
    for (int r = 0; r < m_models->rowCount(); ++r)
      if (m_models->session(r)) {
        m_currentModel = r;
        break;
      }
  for (int& r : m_tracedRows) shift(r, -2);  // -2: matches no row, not even "none" (-1)
}

void MainWindow::setTruth(const QString& truth) { m_document->setTruth(truth); }

void MainWindow::updateTruthWarning() {
  QString warning;
  const auto session = m_models->session(m_currentModel);
  const QString& truth = m_document->truth();
  if (session && !truth.isEmpty()) {
    const QString outside = charactersOutside(session->config().charset, truth);
    if (!outside.isEmpty())
      warning = tr("the truth uses %1, outside the charset of %2: it cannot be read right")
                    .arg(QLatin1Char('"') + outside + QLatin1Char('"'),
                         m_models->displayName(m_currentModel));
  }
  if (warning != m_inspector->truthWarning()) {
    m_inspector->setTruthWarning(warning);
    if (!warning.isEmpty()) statusBar()->showMessage(warning, 8000);
  }
}

void MainWindow::updateErrorModels() {
  QStringList paths;
  for (int r : m_models->comparedRows())
    if (m_models->session(r)) paths << m_models->path(r);
  QString origin = tr("ticked in the Models dock");
  if (paths.isEmpty() && m_models->session(m_currentModel)) {
    paths << m_models->path(m_currentModel);
    origin = tr("the inspected model");
  }
  m_errors->setModels(paths, origin);
  m_errors->setBeamWidth(beamWidth());
}

void MainWindow::retrace() {
  updateErrorModels();
  std::vector<int> rows;
  if (m_currentModel >= 0 && m_models->session(m_currentModel)) rows.push_back(m_currentModel);
  for (int r : m_models->comparedRows())
    if (std::find(rows.begin(), rows.end(), r) == rows.end()) rows.push_back(r);
  QStringList names;
  for (int r = 0; r < m_models->rowCount(); ++r) names << m_models->displayName(r);
  m_inspector->setModelChoices(names, m_currentModel);
  updateTruthWarning();
  if (!m_document->hasImage() || rows.empty()) {
    m_outcomes.clear();
    m_tracedRows.clear();
    showCurrentModel();
    return;
  }
  std::vector<std::shared_ptr<core::ModelSession>> sessions;
  for (int r : rows) sessions.push_back(m_models->session(r));
  m_tracedRows = rows;
  m_inspector->setStatus(tr("<b>Reading...</b>"));
  core::TraceOptions options;
  options.beamWidth = beamWidth();
  // A hypothesis chosen in the inspector's beam list is for this reading only: anything else that
  // reads again (another image, model or width) starts from the best.
  options.beamHypothesis = options.beamWidth > 1 && !rows.empty() && rows.front() == m_currentModel
                               ? std::exchange(m_hypothesis, 0)
                               : 0;
  m_hypothesis = 0;
  m_runner->start(m_document->image(), m_document->source(), std::move(sessions), options);
}

void MainWindow::chooseHypothesis(int index) {
  const auto shown = trace();
  if (!shown || index < 0 || index >= int(shown->hypotheses.size())) return;
  m_hypothesis = index;
  retrace();
}

void MainWindow::onTracesFinished(const std::vector<TraceOutcome>& outcomes) {
  m_progress->hide();
  m_outcomes = outcomes;
  QStringList errors;
  for (size_t i = 0; i < outcomes.size() && i < m_tracedRows.size(); ++i)
    if (!outcomes[i].trace)
      errors << tr("%1: %2").arg(m_models->displayName(m_tracedRows[i]), outcomes[i].error);
  if (!errors.isEmpty())
    showError(tr("Reading failed: %1").arg(errors.join(QLatin1Char('\n'))), ErrorTopic::Reading);
  else if (!outcomes.empty())
    clearError(ErrorTopic::Reading);
  showCurrentModel();
  if (m_goToFirstError && trace()) {
    m_goToFirstError = false;
    const auto& correct = m_inspector->patchStrip()->correct();
    const auto wrong = std::find(correct.begin(), correct.end(), false);
    if (wrong != correct.end()) m_cursor->setStep(static_cast<int>(wrong - correct.begin()));
  }
  Q_EMIT traceReady();
}

void MainWindow::inspectFailure(const QImage& image, const QString& source, const QString& truth,
                                const QString& model, int beamWidth) {
  // Decode as the evaluation did (without a trace of the old image at the new width).
  if (beamWidth != m_beam->value()) {
    const QSignalBlocker block(m_beam);
    m_beam->setValue(beamWidth);
    kBeamWidth.set(m_beam->value());
  }
  // The checkpoint may have changed since it was listed: load it afresh.
  for (int r = m_models->rowCount() - 1; r >= 0; --r)
    if (m_models->path(r) == QFileInfo(model).absoluteFilePath()) m_models->removeModel(r);
  if (!openModel(model)) return;
  m_tabs->setCurrentWidget(m_inspector);
  m_goToFirstError = true;
  setImage(image, source, truth);
}

void MainWindow::compareFailure(const QImage& image, const QString& source, const QString& truth,
                                const QStringList& models, const QString& focus, int beamWidth) {
  if (beamWidth != m_beam->value()) {
    const QSignalBlocker block(m_beam);
    m_beam->setValue(beamWidth);
    kBeamWidth.set(m_beam->value());
  }
  QStringList absolute;
  for (const QString& m : models) {
    if (!QFileInfo(m).isFile()) {
      showError(tr("%1: cannot open model file (no such file)").arg(m), ErrorTopic::Model);
      return;
    }
    absolute << QFileInfo(m).absoluteFilePath();
    m_models->loadModel(m);  // already listed: kept as it is (the analysis read that one)
  }
  m_models->setCompared(absolute);
  for (int r = 0; r < m_models->rowCount(); ++r)
    if (m_models->path(r) == QFileInfo(focus).absoluteFilePath()) m_currentModel = r;
  m_tabs->setCurrentWidget(m_compare);
  m_goToFirstError = true;
  setImage(image, source, truth);
}

void MainWindow::showCurrentModel() {
  auto outcomeFor = [this](int row) -> const TraceOutcome* {
    for (size_t i = 0; i < m_tracedRows.size() && i < m_outcomes.size(); ++i)
      if (m_tracedRows[i] == row) return &m_outcomes[i];
    return nullptr;
  };
  const TraceOutcome* current = outcomeFor(m_currentModel);
  if (current && current->trace != m_inspector->trace()) m_inspector->setTrace(current->trace);
  if (!current && m_inspector->trace()) m_inspector->setTrace(nullptr);

  std::vector<CompareSummaryModel::Row> rows;
  int maxSteps = 0;
  for (int r : m_models->comparedRows()) {
    const TraceOutcome* o = outcomeFor(r);
    if (!o) continue;
    rows.push_back({m_models->displayName(r), o->trace, o->error});
    if (o->trace) maxSteps = std::max(maxSteps, static_cast<int>(o->trace->steps.size()));
  }
  m_compare->setRows(std::move(rows));

  const bool comparing = m_tabs->currentWidget() == m_compare;
  const auto trace = m_inspector->trace();
  m_cursor->setCount(comparing ? maxSteps : (trace ? static_cast<int>(trace->steps.size()) : 0));
  if (m_runner->isRunning()) return;
  if (comparing)
    statusBar()->showMessage(tr("Compared %n model(s)", nullptr, m_compare->columnCount()));
  else if (trace)
    statusBar()->showMessage(tr("Read \"%1\" in %2 steps%3")
                                 .arg(qstr(trace->prediction))
                                 .arg(trace->steps.size())
                                 .arg(trace->beamWidth > 1
                                          ? tr(" (beam search, width %1)").arg(trace->beamWidth)
                                          : QString()));
}

int MainWindow::step() const { return m_cursor->step(); }

int MainWindow::beamWidth() const { return m_beam ? m_beam->value() : 1; }

void MainWindow::setBeamWidth(int width) { m_beam->setValue(width); }
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

void MainWindow::focusCurrentView() {
  QWidget* page = m_tabs->currentWidget();
  if (page == m_inspector)
    m_inspector->traceView()->setFocus(Qt::OtherFocusReason);
  else if (page == m_compare && m_compare->columnCount() > 0)
    m_compare->traceView(0)->setFocus(Qt::OtherFocusReason);
  else if (page)
    page->setFocus(Qt::OtherFocusReason);
}

QString MainWindow::shortcutsText() {
  const std::pair<const char*, const char*> rows[] = {
      {"Left / Right", "previous / next step"},
      {"Home / End", "first / last step"},
      {"Space", "play / pause"},
      {"[ / ]", "slower / faster"},
      {"Ctrl+O", "open an image"},
      {"Ctrl+V", "paste an image"},
      {"Ctrl+M", "open a model"},
      {"Ctrl+1 / 2 / 3 / 4", "Inspector / Compare / Training / Errors"},
      {"Ctrl+0", "fit the image (or double-click it)"},
      {"Ctrl+E", "export the view"},
      {"Ctrl+Shift+E", "export the trace (JSON/CSV)"},
      {"Ctrl+Shift+C", "export the training curves"},
      {"Wheel / drag", "zoom / pan the image"}};
  QString html =
      tr("<p>The step keys work wherever the focus is, except while typing in a text "
         "field (Enter or Escape leaves it); click a view to give it the focus.</p>"
         "<table cellspacing='4'>");
  for (const auto& [keys, what] : rows)
    html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                .arg(QString::fromUtf8(keys), tr(what));
  return html + QStringLiteral("</table>");
}

void MainWindow::saveSession() const {
  kGeometry.set(saveGeometry());
  kDockState.set(saveState(kWindowStateVersion));
  QStringList compared;
  for (int r : m_models->comparedRows()) compared << m_models->path(r);
  kComparedModels.set(compared);
  kInspectedModel.set(m_models->path(m_currentModel));
}

void MainWindow::restoreSession() {
  if (const QByteArray g = kGeometry.value(); !g.isEmpty()) restoreGeometry(g);
  if (const QByteArray st = kDockState.value(); !st.isEmpty())
    restoreState(st, kWindowStateVersion);
  const QStringList compared = kComparedModels.value();
  if (!compared.isEmpty()) {
    for (const QString& path : compared)
      if (QFileInfo(path).isFile()) m_models->loadModel(path);
    m_models->setCompared(compared);
  }
  const QString inspected = kInspectedModel.value();
  for (int r = 0; r < m_models->rowCount(); ++r)
    if (!inspected.isEmpty() && m_models->path(r) == inspected) m_currentModel = r;
  const QString image = kLastImage.value();
  if (!image.isEmpty() && QFileInfo(image).isFile())
    openImage(image);
  else
    retrace();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (m_cancelImageRead) *m_cancelImageRead = true;  // stop waiting for an image being read
  int running = 0;
  auto* runs = m_training->runs();
  for (int r = 0; r < runs->rowCount(); ++r)
    running += m_training->launcher()->isRunning(runs->dir(r)) ? 1 : 0;
  if (running && m_confirmClose) {
    const auto answer = QMessageBox::question(
        this, tr("Quit Foveal"),
        tr("%n training run(s) started here are still running. Quitting stops them after a "
           "checkpoint (they can be resumed later).",
           nullptr, running),
        QMessageBox::Close | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Close) {
      event->ignore();
      return;
    }
  }
  saveSession();
  QMainWindow::closeEvent(event);
}

void MainWindow::rememberRecent(const QString& path) {
  QStringList recent = kRecentImages.value();
  recent.removeAll(QFileInfo(path).absoluteFilePath());
  recent.prepend(QFileInfo(path).absoluteFilePath());
  while (recent.size() > kMaxRecent) recent.removeLast();
  kRecentImages.set(recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  m_recentMenu->clear();
  const QStringList recent = kRecentImages.value();
  for (int i = 0; i < recent.size(); ++i) {
    const QString path = recent[i];
    auto* a =
        m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()),
                                this, [this, path] { openImage(path); });
    a->setToolTip(path);
  }
  m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::pasteImage() {
  const QImage image = QApplication::clipboard()->image();
  if (image.isNull()) {
    showError(tr("The clipboard holds no image."), ErrorTopic::Image);
    return;
  }
  setImage(image, tr("pasted image"));
}

void MainWindow::exportView() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export view"), kLastFolder.value(),
                                                    tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
  if (path.isEmpty()) return;
  const QString error = exportWidget(m_tabs->currentWidget(), path);
  if (!error.isEmpty())
    showError(error);
  else
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
}

void MainWindow::exportStrip() {
  if (!trace()) return showError(tr("Nothing to export: open an image and a model first."));
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export patch strip"), kLastFolder.value(),
                                   tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
  if (path.isEmpty()) return;
  const QString error = exportImage(m_inspector->patchStrip()->render(3.0), path);
  if (!error.isEmpty())
    showError(error);
  else
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
}

QString MainWindow::exportImageFigure(const QString& path, double scale) {
  if (!trace()) return tr("Nothing to export: open an image and a model first.");
  TraceView* view = m_inspector->traceView();
  view->setFocusFrame(false);
  const QString error = exportFigure(view, path, scale);
  view->setFocusFrame(true);
  return error;
}

QString MainWindow::exportAlignmentFigure(const QString& path, double scale) {
  if (!trace()) return tr("Nothing to export: open an image and a model first.");
  return exportFigure(m_inspector->alignmentView(), path, scale);
}

void MainWindow::exportFigureDialog(QWidget* what, const QString& title) {
  if (!trace()) return showError(tr("Nothing to export: open an image and a model first."));
  QString filter;
  QString path =
      QFileDialog::getSaveFileName(this, tr("Export %1 figure").arg(title), kLastFolder.value(),
                                   tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"), &filter);
  focusCurrentView();
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty())
    path += filter.startsWith(QLatin1String("SVG"))   ? QStringLiteral(".svg")
            : filter.startsWith(QLatin1String("PDF")) ? QStringLiteral(".pdf")
                                                      : QStringLiteral(".png");
  double scale = 3.0;
  if (path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive)) {
    bool ok = false;
    scale = QInputDialog::getDouble(
        this, tr("Export %1 figure").arg(title),
        tr("Pixels per screen pixel (%1 x %2 on screen):").arg(what->width()).arg(what->height()),
        3.0, 1.0, 16.0, 1, &ok);
    if (!ok) return;
  }
  const QString error = what == m_inspector->traceView() ? exportImageFigure(path, scale)
                                                         : exportAlignmentFigure(path, scale);
  if (!error.isEmpty())
    showError(error);
  else
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
}

void MainWindow::exportTrace() {
  if (!trace()) return showError(tr("Nothing to export: open an image and a model first."));
  const QString path = QFileDialog::getSaveFileName(this, tr("Export trace"), kLastFolder.value(),
                                                    tr("JSON (*.json);;CSV (*.csv)"));
  if (path.isEmpty()) return;
  core::Trace withTruth = *trace();  // the image's true character boxes, when the data knows them
  withTruth.truthBoxes = m_document->truthBoxes();
  const QString error = ui::exportTrace(withTruth, path);
  if (!error.isEmpty())
    showError(error);
  else
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
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
