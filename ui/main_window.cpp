#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QIcon>
#include <QKeySequence>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSlider>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "error.h"
#include "model_session.h"
#include "qt_convert.h"
#include "trace_view.h"

// resources.qrc lives in a static library: its initialiser must be referenced explicitly.
static void initFovealResources() { Q_INIT_RESOURCE(resources); }

namespace foveal::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("Foveal"));
  initFovealResources();
  setWindowIcon(QIcon(QStringLiteral(":/foveal/icon.svg")));
  setAcceptDrops(true);
  buildLayout();
  buildActions();
  connect(&m_watcher, &QFutureWatcher<TraceResult>::finished, this, &MainWindow::onTraceFinished);
  resize(1100, 560);
  statusBar()->showMessage(tr("Ready"));
  updateDetails();
}

MainWindow::~MainWindow() { m_watcher.waitForFinished(); }

void MainWindow::buildLayout() {
  auto* central = new QWidget(this);
  auto* outer = new QVBoxLayout(central);

  m_error = new QLabel(central);
  m_error->setWordWrap(true);
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->setStyleSheet(
      "QLabel { background: #fdecea; color: #8a1c1c; border: 1px solid #e0a3a3; padding: 6px; }");
  m_error->hide();
  outer->addWidget(m_error);

  auto* body = new QHBoxLayout;
  m_view = new TraceView(central);
  body->addWidget(m_view, 1);

  auto* side = new QVBoxLayout;
  m_summary = new QLabel(central);
  m_summary->setWordWrap(true);
  m_summary->setMinimumWidth(260);
  m_summary->setTextFormat(Qt::RichText);
  side->addWidget(m_summary);
  m_stepInfo = new QLabel(central);
  m_stepInfo->setTextFormat(Qt::RichText);
  side->addWidget(m_stepInfo);
  m_patch = new QLabel(central);
  m_patch->setMinimumSize(160, 128);
  m_patch->setAlignment(Qt::AlignCenter);
  m_patch->setFrameShape(QFrame::StyledPanel);
  side->addWidget(m_patch);
  side->addWidget(new QLabel(tr("Top-5 tokens"), central));
  m_topk = new QListWidget(central);
  m_topk->setMaximumHeight(120);
  m_topk->setFocusPolicy(Qt::NoFocus);
  side->addWidget(m_topk);
  side->addStretch(1);
  body->addLayout(side);
  outer->addLayout(body, 1);

  auto* controls = new QHBoxLayout;
  auto button = [&](QStyle::StandardPixmap icon, const QString& tip, void (MainWindow::*slot)()) {
    auto* b = new QToolButton(central);
    b->setIcon(style()->standardIcon(icon));
    b->setToolTip(tip);
    b->setFocusPolicy(Qt::NoFocus);
    connect(b, &QToolButton::clicked, this, slot);
    controls->addWidget(b);
  };
  button(QStyle::SP_MediaSkipBackward, tr("First step (Home)"), &MainWindow::firstStep);
  button(QStyle::SP_MediaSeekBackward, tr("Previous step (Left)"), &MainWindow::previousStep);
  m_slider = new QSlider(Qt::Horizontal, central);
  m_slider->setFocusPolicy(Qt::NoFocus);
  m_slider->setEnabled(false);
  connect(m_slider, &QSlider::valueChanged, this, &MainWindow::setStep);
  controls->addWidget(m_slider, 1);
  button(QStyle::SP_MediaSeekForward, tr("Next step (Right)"), &MainWindow::nextStep);
  button(QStyle::SP_MediaSkipForward, tr("Last step (End)"), &MainWindow::lastStep);
  m_stepLabel = new QLabel(central);
  m_stepLabel->setMinimumWidth(90);
  controls->addWidget(m_stepLabel);
  outer->addLayout(controls);
  setCentralWidget(central);
}

void MainWindow::buildActions() {
  auto* file = menuBar()->addMenu(tr("&File"));
  auto* openImage = file->addAction(tr("Open &Image..."), this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open image"), QString(),
        tr("Images (*.png *.jpg *.jpeg *.bmp *.pgm *.ppm *.tif *.tiff);;All files (*)"));
    if (!path.isEmpty()) this->openImage(path);
  });
  openImage->setShortcut(QKeySequence::Open);
  auto* openModel = file->addAction(tr("Open &Model..."), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), QString(),
                                                      tr("Foveal models (*.fvm);;All files (*)"));
    if (!path.isEmpty()) this->openModel(path);
  });
  openModel->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  auto* view = menuBar()->addMenu(tr("&Step"));
  view->addAction(tr("&Previous"), QKeySequence(Qt::Key_Left), this, &MainWindow::previousStep);
  view->addAction(tr("&Next"), QKeySequence(Qt::Key_Right), this, &MainWindow::nextStep);
  view->addAction(tr("&First"), QKeySequence(Qt::Key_Home), this, &MainWindow::firstStep);
  view->addAction(tr("&Last"), QKeySequence(Qt::Key_End), this, &MainWindow::lastStep);

  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Foveal"), this, [this] {
    QMessageBox::about(this, tr("About Foveal"),
                       tr("<b>Foveal %1</b><br>A lab for attention-based image-to-sequence "
                          "recognition: soft, hard and sharp attention, step by step.")
                           .arg(QStringLiteral(FOVEAL_VERSION)));
  });
}

bool MainWindow::openImage(const QString& path) {
  try {
    m_image = core::readImage(path.toStdString());
  } catch (const core::Error& e) {
    showError(QString::fromStdString(e.what()));
    return false;
  }
  m_imagePath = path;
  m_trace.reset();
  m_view->setImage(toQImage(m_image));
  clearError();
  setWindowTitle(tr("%1 - Foveal").arg(QFileInfo(path).fileName()));
  startTrace();
  return true;
}

bool MainWindow::openModel(const QString& path) {
  try {
    m_session = core::ModelSession::open(path.toStdString());
  } catch (const core::Error& e) {
    showError(QString::fromStdString(e.what()));
    return false;
  }
  clearError();
  statusBar()->showMessage(tr("Model: %1").arg(qstr(m_session->config().describe())));
  startTrace();
  return true;
}

void MainWindow::startTrace() {
  if (!m_session || m_image.empty()) {
    updateDetails();
    return;
  }
  if (m_watcher.isRunning()) {  // trace again when the running one ends
    m_retrace = true;
    return;
  }
  statusBar()->showMessage(tr("Tracing %1...").arg(QFileInfo(m_imagePath).fileName()));
  QApplication::setOverrideCursor(Qt::BusyCursor);
  auto session = m_session;
  auto image = m_image;
  const std::string source = m_imagePath.toStdString();
  m_watcher.setFuture(QtConcurrent::run([session, image, source]() -> TraceResult {
    try {
      return {std::make_shared<const core::Trace>(session->trace(image, source)), {}};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromStdString(e.what())};
    }
  }));
}

void MainWindow::onTraceFinished() {
  QApplication::restoreOverrideCursor();
  const TraceResult result = m_watcher.result();
  if (m_retrace) {
    m_retrace = false;
    startTrace();
    return;
  }
  if (!result.trace) {
    showError(tr("Tracing failed: %1").arg(result.error));
    statusBar()->showMessage(tr("Tracing failed"));
    return;
  }
  m_trace = result.trace;
  m_view->setTrace(m_trace);
  m_slider->setRange(0, stepCount() - 1);
  m_slider->setEnabled(stepCount() > 1);
  m_step = -1;
  setStep(0);
  statusBar()->showMessage(
      tr("Read \"%1\" in %2 steps").arg(qstr(m_trace->prediction)).arg(stepCount()));
  Q_EMIT traceReady();
}

int MainWindow::stepCount() const { return m_trace ? static_cast<int>(m_trace->steps.size()) : 0; }

bool MainWindow::isTracing() const { return m_watcher.isRunning(); }

QString MainWindow::errorText() const { return m_error->isVisible() ? m_error->text() : QString(); }

void MainWindow::setStep(int step) {
  if (stepCount() == 0) return;
  step = std::clamp(step, 0, stepCount() - 1);
  if (step == m_step) return;
  m_step = step;
  m_view->setStep(step);
  {
    const QSignalBlocker block(m_slider);
    m_slider->setValue(step);
  }
  updateDetails();
  Q_EMIT stepChanged(step);
}

void MainWindow::showError(const QString& message) {
  m_error->setText(message);
  m_error->show();
  statusBar()->showMessage(tr("Error"), 5000);
}

void MainWindow::clearError() { m_error->hide(); }

void MainWindow::updateDetails() {
  m_topk->clear();
  if (!m_trace) {
    m_summary->setText(m_session ? tr("<b>Model</b><br>%1<br><br>Open an image to read it.")
                                       .arg(qstr(m_session->config().describe()).toHtmlEscaped())
                                 : tr("<b>No model</b><br>Open a model file (Ctrl+M)."));
    m_stepInfo->clear();
    m_patch->clear();
    m_stepLabel->setText(tr("no steps"));
    return;
  }
  m_summary->setText(tr("<b>Prediction</b> <span style='font-size:16pt'>%1</span><br>"
                        "confidence %2 &middot; mean entropy %3<br><small>%4</small>")
                         .arg(qstr(m_trace->prediction).toHtmlEscaped())
                         .arg(m_trace->confidence, 0, 'f', 3)
                         .arg(m_trace->meanEntropy, 0, 'f', 3)
                         .arg(qstr(m_trace->modelDescription).toHtmlEscaped()));
  const auto& s = m_trace->steps[static_cast<size_t>(m_step)];
  m_stepInfo->setText(tr("<b>Step %1</b>: token <b>%2</b> (p %3)<br>entropy %4 &middot; region %5")
                          .arg(m_step)
                          .arg(qstr(s.token).toHtmlEscaped())
                          .arg(s.prob, 0, 'f', 3)
                          .arg(s.entropy, 0, 'f', 3)
                          .arg(s.region));
  const QImage patch = toQImage(s.patch);
  m_patch->setPixmap(QPixmap::fromImage(
      patch.scaled(patch.size() * 4, Qt::KeepAspectRatio, Qt::FastTransformation)));
  for (const auto& t : s.topk)
    m_topk->addItem(QStringLiteral("%1   %2").arg(qstr(t.token), -6).arg(t.prob, 0, 'f', 3));
  m_stepLabel->setText(tr("step %1 / %2").arg(m_step + 1).arg(stepCount()));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const QUrl& url : event->mimeData()->urls()) {
    const QString path = url.toLocalFile();
    if (path.endsWith(QLatin1String(".fvm"), Qt::CaseInsensitive))
      openModel(path);
    else
      openImage(path);
  }
}

}  // namespace foveal::ui
