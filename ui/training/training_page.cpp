#include "training_page.h"
#include "run/remote_run.h"
#include "run/run_folder.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

#include "evaluation_panel.h"
#include "image_file.h"
#include "import_question.h"
#include "live_preview.h"
#include "metrics_plot.h"
#include "probe_filmstrip.h"
#include "qcustomplot_include.h"
#include "remote_mirrors.h"
#include "run/remote_run.h"
#include "run_list_model.h"
#include "run_settings_model.h"
#include "settings.h"
#include "trainer_curves.h"
#include "training_launch_dialog.h"

namespace foveal::ui {

namespace {
const Setting<QStringList> kRuns(QStringLiteral("training/runs"), {});
const Setting<QString> kRunsRoot(QStringLiteral("training/runsRoot"),
                                 QDir::home().filePath(QStringLiteral("foveal-runs")));
const Setting<QStringList> kMetrics(QStringLiteral("training/metrics"), {});
/// The panels beyond the catalogue chosen in "More" (other trainers' tags, the probe accuracy).
const Setting<QStringList> kExtraMetrics(QStringLiteral("training/extraMetrics"), {});
const Setting<int> kSmoothing(QStringLiteral("training/smoothing"), 60);
const Setting<bool> kLogScale(QStringLiteral("training/logScale"), false);
const Setting<QString> kExportFolder(QStringLiteral("training/exportFolder"), {});
const Setting<QString> kSampleRuns(QStringLiteral("training/sampleRuns"), {});
constexpr int kCoalesceMs = 40;
constexpr int kMetricColumns = 2;  // of metric check boxes: three made the column too wide
constexpr int kPollMs = 1000;
const QString kDefaultSample = QStringLiteral("digits:len=5,split=test,seed=1");

/// The job a run on another machine last was (remote.json), "" for a local run or an unreadable
/// description (the runs list says what is wrong with it).
std::string remoteJob(const QString& dir) {
  if (!core::RemoteRun::isRemoteRun(dir.toStdString())) return {};
  try {
    return core::RemoteRun::open(dir.toStdString()).jobId();
  } catch (const std::exception&) {
    return {};
  }
}

/// True when `dir` holds a checkpoint to resume from: latest.state here, or, for a run on
/// another machine, there (the mirror notes it without copying it).
bool resumableFolder(const QString& dir) {
  if (QFileInfo::exists(QDir(dir).filePath(QString::fromLatin1(core::run_folder::kState))))
    return true;
  if (!core::RemoteRun::isRemoteRun(dir.toStdString())) return false;
  try {
    return core::RemoteRun::open(dir.toStdString()).resumable();
  } catch (const std::exception&) {
    return false;
  }
}
}  // namespace

TrainingPage::TrainingPage(QWidget* parent)
    : QWidget(parent),
      m_runs(new RunListModel(this)),
      m_launcher(new RunLauncher(this)),
      m_fsWatcher(new QFileSystemWatcher(this)) {
  buildLayout();
  m_coalesce.setSingleShot(true);
  m_coalesce.setInterval(kCoalesceMs);
  connect(&m_coalesce, &QTimer::timeout, this, &TrainingPage::refreshNow);
  m_poll.setInterval(kPollMs);
  connect(&m_poll, &QTimer::timeout, this, &TrainingPage::scheduleRefresh);
  m_poll.start();
  connect(m_fsWatcher, &QFileSystemWatcher::directoryChanged, this, &TrainingPage::scheduleRefresh);
  connect(m_fsWatcher, &QFileSystemWatcher::fileChanged, this, &TrainingPage::scheduleRefresh);
  connect(m_runs, &RunListModel::shownChanged, this, &TrainingPage::updatePlotRuns);
  connect(m_launcher, &RunLauncher::processChanged, this, [this](const QString& dir) {
    m_runs->setProcess(dir, m_launcher->facts(dir));
    updatePlotRuns();
    updateSelection();
    const int row = m_runs->rowOf(dir);
    if (row >= 0 && !m_launcher->isRunning(dir)) {
      const auto st = m_runs->status(row);
      const QString text = tr("%1: %2").arg(m_runs->name(row), QString::fromStdString(st.detail));
      if (st.status == core::RunStatus::Failed)
        Q_EMIT failed(tr("Training run %1").arg(text));
      else
        Q_EMIT message(text);
    }
  });
  connect(m_launcher, &RunLauncher::outputChanged, this, [this](const QString& dir) {
    m_runs->setJobState(dir, m_launcher->jobState(dir));
    if (m_runs->dir(currentRun()) != dir) return;
    m_output->setPlainText(m_launcher->output(dir));
    m_output->verticalScrollBar()->setValue(m_output->verticalScrollBar()->maximum());
  });
  m_mirrors = new RemoteMirrors(this);
  connect(m_mirrors, &RemoteMirrors::mirrored, this, &TrainingPage::onMirrored);
  for (const QString& dir : kRuns.value()) m_runs->addRun(dir);
  updateWatchedPaths();
  updateExtraMetrics();
  updatePlotRuns();
  updateMirrors();
  if (m_runs->rowCount()) selectRun(0);
}

TrainingPage::~TrainingPage() = default;

void TrainingPage::buildLayout() {
  auto* outer = new QHBoxLayout(this);
  outer->setContentsMargins(4, 4, 4, 4);
  auto* split = new QSplitter(Qt::Horizontal, this);
  outer->addWidget(split);

  // Left: runs, buttons, metric choice, preview; it scrolls on a short screen.
  auto* leftScroll = new QScrollArea(split);
  leftScroll->setWidgetResizable(true);
  leftScroll->setFrameShape(QFrame::NoFrame);
  leftScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* left = new QWidget(leftScroll);
  auto* ll = new QVBoxLayout(left);
  ll->setContentsMargins(0, 0, 0, 0);
  ll->addLayout(buildRunButtons(left));
  addRunTables(left, ll);

  auto* metricsBox = new QGroupBox(tr("Curves"), left);
  auto* grid = new QGridLayout(metricsBox);
  grid->setContentsMargins(6, 4, 6, 4);
  grid->setVerticalSpacing(1);
  addCurveControls(metricsBox, grid, addMetricChoices(metricsBox, grid));
  ll->addWidget(metricsBox);

  ll->addStretch(1);
  leftScroll->setWidget(left);
  leftScroll->setMinimumWidth(left->minimumSizeHint().width() +
                              leftScroll->verticalScrollBar()->sizeHint().width());
  split->addWidget(leftScroll);

  split->addWidget(buildRightPane(split));
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({420, 900});
  connectRightPane();
}

QGridLayout* TrainingPage::buildRunButtons(QWidget* left) {
  auto* buttons = new QGridLayout;  // two rows: the runs column stays narrow
  auto* add = new QPushButton(tr("&New run..."), left);
  add->setToolTip(tr("Launch foveal-cli train"));
  auto* open = new QPushButton(tr("&Add folder..."), left);
  open->setToolTip(tr("Follow an existing run folder (local, or synced from a server)"));
  auto* remove = new QPushButton(tr("Remove"), left);
  remove->setToolTip(tr("Stop following the selected run (its folder is kept)"));
  m_stop = new QPushButton(tr("&Stop"), left);
  m_stop->setToolTip(tr("Stop the selected run after a checkpoint (SIGTERM)"));
  m_resume = new QPushButton(tr("&Resume"), left);
  m_resume->setToolTip(tr("Continue the selected run from its latest checkpoint (--resume)"));
  buttons->addWidget(add, 0, 0);
  buttons->addWidget(open, 0, 1);
  buttons->addWidget(remove, 0, 2);
  buttons->addWidget(m_stop, 1, 0);
  buttons->addWidget(m_resume, 1, 1);
  auto* remote = new QPushButton(tr("Follow re&mote..."), left);
  remote->setToolTip(
      tr("Follow another trainer's run folder on an SSH host or a cluster (DTRB, strhub, "
         "MMOCR...): its logs and complete checkpoints are mirrored here"));
  buttons->addWidget(remote, 1, 2);
  connect(remote, &QPushButton::clicked, this, &TrainingPage::addRemoteFolderDialog);
  connect(add, &QPushButton::clicked, this, &TrainingPage::newRun);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Add a run folder"), kRunsRoot.value());
    if (!dir.isEmpty()) addRunFolder(dir);
  });
  connect(remove, &QPushButton::clicked, this, [this] { removeRun(currentRun()); });
  connect(m_stop, &QPushButton::clicked, this, [this] { stopRun(currentRun()); });
  connect(m_resume, &QPushButton::clicked, this, [this] { resumeRun(currentRun()); });
  return buttons;
}

void TrainingPage::addRunTables(QWidget* left, QVBoxLayout* ll) {
  m_view = new QTableView(left);
  m_view->setModel(m_runs);
  m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_view->setSelectionMode(QAbstractItemView::SingleSelection);
  m_view->verticalHeader()->hide();
  // The names whole (at 1366x768 a stretched Name column was squeezed to "..." by the others:
  // issue 64); the Where column (host, job, queue state) takes what is left, elided in its middle.
  m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_view->horizontalHeader()->setSectionResizeMode(RunListModel::Where, QHeaderView::Stretch);
  m_view->setTextElideMode(Qt::ElideMiddle);
  m_view->setMinimumHeight(120);
  connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &TrainingPage::updateSelection);
  // Beside the runs list: the settings that differ between the ticked runs, sortable.
  auto* runTabs = new QTabWidget(left);
  runTabs->setDocumentMode(true);
  runTabs->addTab(m_view, tr("Runs"));
  m_settings = new RunSettingsModel(m_runs, this);
  auto* sorted = new QSortFilterProxyModel(this);
  sorted->setSourceModel(m_settings);
  sorted->setSortRole(Qt::EditRole);  // numbers as numbers
  m_settingsView = new QTableView(runTabs);
  m_settingsView->setModel(sorted);
  m_settingsView->setSortingEnabled(true);
  m_settingsView->sortByColumn(-1, Qt::AscendingOrder);  // list order until a header is clicked
  m_settingsView->verticalHeader()->hide();
  m_settingsView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_settingsView->setToolTip(
      tr("The settings that differ between the ticked runs (from config.json); click a header "
         "to sort"));
  runTabs->addTab(m_settingsView, tr("Settings"));
  ll->addWidget(runTabs, 2);
  m_detail = new QLabel(left);
  m_detail->setWordWrap(true);
  m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
  ll->addWidget(m_detail);
}

int TrainingPage::addMetricChoices(QGroupBox* metricsBox, QGridLayout* grid) {
  m_plot = new MetricsPlot;  // parented by the splitter below
  QStringList chosen = kMetrics.value();
  if (chosen.isEmpty()) chosen = m_plot->metrics();
  m_plot->setMetrics(chosen);
  int i = 0;
  for (const auto& def : metricDefs()) {
    auto* box = new QCheckBox(def.label, metricsBox);
    box->setObjectName(QStringLiteral("metric_") + def.key);
    box->setChecked(chosen.contains(def.key));
    grid->addWidget(box, i / kMetricColumns, i % kMetricColumns);
    ++i;
    connect(box, &QCheckBox::toggled, this, [this, key = def.key](bool on) {
      QStringList keys = m_plot->metrics();
      keys.removeAll(key);
      if (on) keys << key;
      m_plot->setMetrics(keys);
      kMetrics.set(m_plot->metrics());
    });
  }
  // Other trainers' tags and the probe set's accuracy: in a menu (their names are the trainers').
  m_moreCurves = new QToolButton(metricsBox);
  m_moreCurves->setText(tr("More"));
  m_moreCurves->setObjectName(QStringLiteral("moreCurves"));
  m_moreCurves->setToolTip(
      tr("Curves beyond Foveal's own: the probe set's accuracy, other trainers' tags"));
  m_moreCurves->setPopupMode(QToolButton::InstantPopup);
  m_moreCurves->setMenu(new QMenu(m_moreCurves));
  grid->addWidget(m_moreCurves, i / kMetricColumns, i % kMetricColumns, Qt::AlignLeft);
  ++i;
  return i;
}

void TrainingPage::addCurveControls(QGroupBox* metricsBox, QGridLayout* grid, int i) {
  auto* options = new QHBoxLayout;
  options->addWidget(new QLabel(tr("Smoothing"), metricsBox));
  m_smoothing = new QSlider(Qt::Horizontal, metricsBox);
  m_smoothing->setRange(0, 99);
  m_smoothing->setValue(kSmoothing.value());
  m_smoothing->setToolTip(tr("Exponential moving average weight (0: raw values)"));
  options->addWidget(m_smoothing, 1);
  m_log = new QCheckBox(tr("Log scale"), metricsBox);
  m_log->setChecked(kLogScale.value());
  options->addWidget(m_log);
  auto* exportButton = new QPushButton(tr("E&xport curves..."), metricsBox);

  const int rows = (i + kMetricColumns - 1) / kMetricColumns;
  grid->addLayout(options, rows, 0, 1, kMetricColumns);
  // A new short run is lost beside the 8,000-iteration samples: hide them, or zoom to a run.
  auto* view = new QHBoxLayout;
  m_samples = new QCheckBox(tr("Sample runs"), metricsBox);
  m_samples->setChecked(true);
  m_samples->setToolTip(tr("Show the bundled sample runs in the curves"));
  view->addWidget(m_samples);
  view->addStretch(1);
  auto* zoom = new QPushButton(tr("&Zoom to run"), metricsBox);
  zoom->setToolTip(tr("Show the selected run's iterations only"));
  auto* all = new QPushButton(tr("All"), metricsBox);
  all->setToolTip(tr("Show every run whole"));
  view->addWidget(zoom);
  view->addWidget(all);
  view->addWidget(exportButton);
  grid->addLayout(view, rows + 1, 0, 1, kMetricColumns);
  connect(m_samples, &QCheckBox::toggled, this, &TrainingPage::showSampleRuns);
  connect(zoom, &QPushButton::clicked, this, [this] { zoomToRun(currentRun()); });
  connect(all, &QPushButton::clicked, this, [this] { m_plot->zoomTo(0); });
  m_xAxis = new QComboBox(metricsBox);
  m_xAxis->addItems({tr("x: iteration"), tr("x: time"), tr("x: clock")});
  m_xAxis->setToolTip(
      tr("The x axis: iterations, the time since each run started, or the clock (the time of "
         "day, and the date over longer spans)"));
  options->addWidget(m_xAxis);  // beside the log scale: the zoom row is full
  connect(m_xAxis, &QComboBox::currentIndexChanged, this, [this](int i) {
    m_plot->setXAxis(i == 2   ? MetricsPlot::XAxis::WallClock
                     : i == 1 ? MetricsPlot::XAxis::Time
                              : MetricsPlot::XAxis::Iteration);
  });
  m_exportAction = new QAction(tr("Export Training C&urves..."), this);
  m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  m_exportAction->setToolTip(
      tr("Save the curves of the ticked runs as PNG, PDF or SVG (%1)")
          .arg(m_exportAction->shortcut().toString(QKeySequence::NativeText)));
  exportButton->setToolTip(m_exportAction->toolTip());
  addAction(m_exportAction);  // the shortcut works on the page alone too
  connect(m_exportAction, &QAction::triggered, this, &TrainingPage::exportCurvesDialog);
  connect(exportButton, &QPushButton::clicked, m_exportAction, &QAction::trigger);
  m_plot->setSmoothing(m_smoothing->value() / 100.0);
  m_plot->setLogScale(m_log->isChecked());
  connect(m_smoothing, &QSlider::valueChanged, this, [this](int v) {
    m_plot->setSmoothing(v / 100.0);
    kSmoothing.set(v);
  });
  connect(m_log, &QCheckBox::toggled, this, [this](bool on) {
    m_plot->setLogScale(on);
    kLogScale.set(on);
  });
}

QSplitter* TrainingPage::buildRightPane(QSplitter* split) {
  // Right: the curves over the evaluation and the process output.
  auto* right = new QSplitter(Qt::Vertical, split);
  right->addWidget(m_plot);
  auto* tabs = new QTabWidget(right);
  // The live preview first, under the curves: at the foot of the runs column it was below the
  // fold of a 1366x768 screen.
  m_preview = new LivePreview(tabs);
  tabs->addTab(m_preview, tr("Live preview"));
  // Every checkpoint's reading of the run's probe images (another trainer's too).
  m_filmstrip = new ProbeFilmstrip(tabs);
  tabs->addTab(m_filmstrip, tr("&Probes"));
  m_bottomTabs = tabs;
  m_eval = new EvaluationPanel(tabs);
  m_eval->setProgram(m_launcher->program());
  tabs->addTab(m_eval, tr("E&valuate"));
  m_output = new QPlainTextEdit(tabs);
  m_output->setReadOnly(true);
  m_output->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_output->setPlaceholderText(tr("The output of runs started here appears here."));
  tabs->addTab(m_output, tr("&Output"));
  right->addWidget(tabs);
  right->setStretchFactor(0, 2);
  right->setStretchFactor(1, 1);
  return right;
}

void TrainingPage::connectRightPane() {
  connect(m_eval, &EvaluationPanel::failed, this, &TrainingPage::failed);
  connect(m_eval, &EvaluationPanel::failureChosen, this, &TrainingPage::failureChosen);
  connect(m_filmstrip, &ProbeFilmstrip::failed, this, &TrainingPage::failed);
  connect(m_filmstrip, &ProbeFilmstrip::columnsChanged, this, &TrainingPage::updatePlotRuns);
  connect(m_filmstrip, &ProbeFilmstrip::stepChosen, m_plot, &MetricsPlot::setMarkedStep);
  connect(m_plot, &MetricsPlot::hovered, this, [this](const QString&, double x) {
    if (m_plot->xAxis() == MetricsPlot::XAxis::Iteration) m_filmstrip->setCurrentStep(x);
  });
  connect(m_filmstrip, &ProbeFilmstrip::cellChosen, this,
          [this](const QString& checkpoint, const ProbeImage& probe, qint64) {
            // The Inspector opens the checkpoint with the options the filmstrip read it with
            // (DTRB's opt.txt), remembered for the file as an answer given in the window is.
            QString error;
            const auto options = probeImportOptions(m_filmstrip->runDir(), checkpoint, &error);
            if (!error.isEmpty()) return Q_EMIT failed(error);
            if (!options.empty()) rememberImportOptions(checkpoint, options);
            const ImageFile image = readImageFile(probe.path);
            if (!image.error.isEmpty()) return Q_EMIT failed(image.error);
            Q_EMIT failureChosen(image.display, probe.path, probe.truth, checkpoint, 1);
          });
}

int TrainingPage::addRunFolder(const QString& dir) {
  const int row = m_runs->addRun(dir);
  m_runs->setProcess(m_runs->dir(row), m_launcher->facts(m_runs->dir(row)));
  saveRunList();
  updateWatchedPaths();
  updateExtraMetrics();
  updatePlotRuns();
  updateMirrors();
  selectRun(row);
  const auto st = m_runs->status(row);
  if (st.status == core::RunStatus::Corrupt || st.status == core::RunStatus::Missing)
    Q_EMIT failed(tr("%1: %2").arg(m_runs->dir(row), QString::fromStdString(st.detail)));
  return row;
}

int TrainingPage::addSampleRuns(const QString& runsFolder) {
  // Only a user who has never kept a run (first start), or who removed them all.
  if (!kRuns.value().isEmpty() || m_runs->rowCount() > 0) return 0;
  const QDir root(runsFolder);
  int added = 0;
  for (const QString& name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    const QString dir = root.filePath(name);
    if (!QFileInfo(QDir(dir).filePath(QString::fromLatin1(core::run_folder::kMetrics))).isFile())
      continue;
    const int row = m_runs->addRun(dir);
    m_runs->setProcess(m_runs->dir(row), m_launcher->facts(m_runs->dir(row)));
    ++added;
  }
  if (!added) return 0;
  kSampleRuns.set(QDir(runsFolder).absolutePath());
  saveRunList();
  updateWatchedPaths();
  updatePlotRuns();
  if (currentRun() < 0) selectRun(0);
  return added;
}

bool TrainingPage::exportCurves(const QString& path, QSize size, QString* error) {
  if (!size.isValid() || size.isEmpty()) size = m_plot->plot()->size();
  if (size.width() < 400 || size.height() < 300) size = QSize(1200, 700);  // never laid out
  return m_plot->exportTo(path, size.width(), size.height(), error);
}

void TrainingPage::exportCurvesDialog() {
  bool anyShown = false;
  for (int r = 0; r < m_runs->rowCount(); ++r) anyShown = anyShown || m_runs->isShown(r);
  if (!anyShown) {
    Q_EMIT failed(tr("Nothing to export: tick a run in the runs list first."));
    return;
  }
  if (m_plot->metrics().isEmpty()) {
    Q_EMIT failed(tr("Nothing to export: choose at least one curve."));
    return;
  }
  QString folder = kExportFolder.value();
  if (folder.isEmpty()) folder = kRunsRoot.value();
  const QString name = m_runs->name(currentRun()).isEmpty()
                           ? QStringLiteral("curves.png")
                           : m_runs->name(currentRun()) + QStringLiteral("-curves.png");
  QString filter;
  QString path =
      QFileDialog::getSaveFileName(this, tr("Export curves"), QDir(folder).filePath(name),
                                   tr("PNG image (*.png);;PDF (*.pdf);;SVG (*.svg)"), &filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty())  // the filter chosen gives the format
    path += filter.contains(QLatin1String("*.pdf"))   ? QStringLiteral(".pdf")
            : filter.contains(QLatin1String("*.svg")) ? QStringLiteral(".svg")
                                                      : QStringLiteral(".png");
  kExportFolder.set(QFileInfo(path).absolutePath());
  QString error;
  if (!exportCurves(path, {}, &error)) {
    Q_EMIT failed(tr("Export of the curves failed: %1").arg(error));
    return;
  }
  Q_EMIT message(tr("Exported the curves to %1").arg(QDir::toNativeSeparators(path)));
}

void TrainingPage::removeRun(int row) {
  if (row < 0 || row >= m_runs->rowCount()) return;
  m_runs->removeRun(row);
  saveRunList();
  updateWatchedPaths();
  updateMirrors();
  updateSelection();
}

bool TrainingPage::launch(const LaunchSpec& spec) {
  QString error;
  if (!m_launcher->start(spec, &error)) {
    Q_EMIT failed(error);
    return false;
  }
  const QString dir = QDir::cleanPath(QFileInfo(spec.runDir).absoluteFilePath());
  if (!spec.resume) kRunsRoot.set(QFileInfo(dir).absolutePath());
  addRunFolder(dir);
  Q_EMIT message(tr("Started %1").arg(QFileInfo(dir).fileName()));
  return true;
}

bool TrainingPage::stopRun(int row) {
  const QString dir = m_runs->dir(row);
  if (dir.isEmpty() || !m_launcher->stop(dir)) {
    Q_EMIT failed(tr("No run started here is running in %1 (runs started elsewhere are stopped "
                     "there, e.g. with kill -TERM).")
                      .arg(dir));
    return false;
  }
  Q_EMIT message(tr("Stopping %1 after a checkpoint...").arg(m_runs->name(row)));
  return true;
}

bool TrainingPage::resumeRun(int row) {
  const QString dir = m_runs->dir(row);
  if (dir.isEmpty()) return false;
  LaunchSpec spec;
  spec.resume = true;
  spec.runDir = dir;
  const std::string device = m_runs->log(row)->config().device;
  if (device.rfind("cuda", 0) == 0) {
    spec.device = LaunchSpec::Device::Cuda;
    spec.cudaIndex = device.size() > 5 ? QString::fromStdString(device.substr(5)).toInt() : 0;
  }
  return launch(spec);
}

void TrainingPage::newRun() {
  TrainingLaunchDialog dialog(m_launcher->program(), kRunsRoot.value(), this);
  if (dialog.exec() == QDialog::Accepted) launch(dialog.spec());
}

void TrainingPage::selectRun(int row) {
  if (row < 0 || row >= m_runs->rowCount()) return;
  m_view->selectionModel()->setCurrentIndex(
      m_runs->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  updateSelection();
}

bool TrainingPage::confirmClose() {
  int running = 0;
  for (int r = 0; r < m_runs->rowCount(); ++r) running += m_launcher->isRunning(m_runs->dir(r));
  if (!running) return true;
  return QMessageBox::question(
             this, tr("Quit Foveal"),
             tr("%n training run(s) started here are still running. Quitting stops them after a "
                "checkpoint (they can be resumed later).",
                nullptr, running),
             QMessageBox::Close | QMessageBox::Cancel, QMessageBox::Cancel) == QMessageBox::Close;
}

int TrainingPage::currentRun() const {
  const QModelIndex i = m_view->selectionModel()->currentIndex();
  return i.isValid() ? i.row() : -1;
}

QString TrainingPage::detailText() const { return m_detail->text(); }

void TrainingPage::setStaleAfter(double seconds) {
  m_runs->setStaleAfter(seconds);
  scheduleRefresh();
}

void TrainingPage::setPollInterval(int ms) { m_poll.setInterval(ms); }

void TrainingPage::setProgram(const QString& cli) {
  m_launcher->setProgram(cli);
  m_eval->setProgram(cli);
}

void TrainingPage::scheduleRefresh() {
  if (!m_coalesce.isActive()) m_coalesce.start();
}

void TrainingPage::refreshNow() {
  m_coalesce.stop();
  ++m_refreshes;
  const auto changed = m_runs->refresh();
  bool shownChanged = false, foreignChanged = false;
  for (int row : changed) {
    shownChanged = shownChanged || m_runs->isShown(row);
    foreignChanged = foreignChanged || m_runs->trainer(row);
  }
  if (foreignChanged) {  // their points are copies: made again
    updateExtraMetrics();
    updatePlotRuns();
  } else if (shownChanged) {
    m_plot->scheduleReplot();
  }
  if (!changed.empty()) updateWatchedPaths();
  m_preview->checkForUpdate();
  m_filmstrip->checkForUpdate();
  followRemoteJobs();
  updateSelection();
}

void TrainingPage::followRemoteJobs() {
  // A job submitted outside the window (`foveal-cli runs resume` in a terminal) is followed as
  // one started here: its description names a job the page has not seen.
  for (const QString& dir : m_runs->dirs()) {
    const std::string job = remoteJob(dir);
    if (job.empty()) continue;
    const auto seen = m_remoteJobs.find(dir);
    if (seen == m_remoteJobs.end()) {
      m_remoteJobs[dir] = job;  // the job it had when it was added: followed when started here
      continue;
    }
    if (seen->second == job) continue;
    seen->second = job;
    if (m_launcher->isRunning(dir)) continue;  // started (and followed) here
    QString error;
    if (m_launcher->follow(dir, &error))
      Q_EMIT message(tr("Following job %1 of %2 (submitted outside the window)")
                         .arg(QString::fromStdString(job), QFileInfo(dir).fileName()));
    else
      Q_EMIT failed(error);
  }
}

void TrainingPage::updatePlotRuns() {
  std::vector<PlotRun> runs;
  const bool probes = m_plot->metrics().contains(kProbeAccuracyKey);
  for (int r = 0; r < m_runs->rowCount(); ++r) {
    if (!m_runs->isShown(r)) continue;
    PlotRun run{m_runs->name(r), m_runs->colour(r), m_runs->log(r), runStartedAt(r), {}};
    if (const auto trainer = m_runs->trainer(r)) run.points = plotPointsOf(*trainer);
    if (probes) {
      // The probe set's accuracy: the filmstrip's run as it reads, the others as they were kept.
      const QString dir = m_runs->dir(r);
      if (m_filmstrip && m_filmstrip->runDir() == dir) {
        run.points[kProbeAccuracyKey] =
            probeAccuracyPoints(m_filmstrip->columns(), m_filmstrip->probes());
      } else if (const QString side = probeSideFolder(dir, nullptr, false); !side.isEmpty()) {
        run.points[kProbeAccuracyKey] =
            probeAccuracyPoints(loadProbeColumns(side), loadProbeSet(side));
      }
    }
    runs.push_back(std::move(run));
  }
  m_plot->setRuns(std::move(runs));
}

void TrainingPage::updateExtraMetrics() {
  std::vector<std::shared_ptr<const core::TrainerRun>> trainers;
  for (int r = 0; r < m_runs->rowCount(); ++r)
    if (m_runs->isForeign(r)) trainers.push_back(m_runs->trainer(r));
  std::vector<MetricDef> defs = extraMetricDefsOf(trainers);
  bool same = defs.size() == m_plot->extraMetrics().size();
  for (size_t i = 0; same && i < defs.size(); ++i)
    same = defs[i].key == m_plot->extraMetrics()[i].key;
  if (same && !m_moreCurves->menu()->isEmpty()) return;
  m_plot->setExtraMetrics(defs);
  QStringList keys = m_plot->metrics();
  for (const QString& k : kExtraMetrics.value())
    if (!keys.contains(k)) keys << k;
  m_plot->setMetrics(keys);
  QMenu* menu = m_moreCurves->menu();
  menu->clear();
  for (const auto& d : defs) {
    QAction* a = menu->addAction(d.label);
    a->setCheckable(true);
    a->setChecked(kExtraMetrics.value().contains(d.key));
    a->setData(d.key);
    connect(a, &QAction::toggled, this, [this, key = d.key](bool on) {
      QStringList extra = kExtraMetrics.value();
      extra.removeAll(key);
      if (on) extra << key;
      kExtraMetrics.set(extra);
      QStringList keys = m_plot->metrics();
      keys.removeAll(key);
      if (on) keys << key;
      m_plot->setMetrics(keys);
      kMetrics.set(m_plot->metrics());  // the catalogue's boxes save this list too
      updatePlotRuns();
    });
  }
  m_moreCurves->setText(defs.size() > 1 ? tr("More (%1)").arg(defs.size()) : tr("More"));
}

void TrainingPage::updateMirrors() {
  QStringList dirs;
  for (const QString& dir : m_runs->dirs()) {
    if (!core::RemoteRun::isRemoteRun(dir.toStdString())) continue;
    try {
      if (core::RemoteRun::open(dir.toStdString()).foreign()) dirs << dir;
    } catch (const std::exception&) {  // the runs list says what is wrong with it
    }
  }
  if (dirs != m_mirrors->folders()) m_mirrors->setFolders(dirs);
}

void TrainingPage::onMirrored(const MirrorPass& pass) {
  if (m_runs->rowOf(pass.dir) < 0) return;
  const QString when = QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss"));
  if (!pass.ok) {
    m_runs->setJobState(pass.dir,
                        tr("mirror: connection lost at %1 (%2); retrying").arg(when, pass.error));
    return;
  }
  QString state = tr("mirror: mirrored %1").arg(when);
  if (!pass.skipped.isEmpty()) {
    state += tr(", %n file(s) left out", nullptr, int(pass.skipped.size()));
    Q_EMIT message(
        tr("%1: left out %2")
            .arg(QFileInfo(pass.dir).fileName(), pass.skipped.join(QStringLiteral("; "))));
  }
  m_runs->setJobState(pass.dir, state);
  if (!pass.files.isEmpty()) scheduleRefresh();
}

int TrainingPage::addRemoteFolder(const QString& target, const QString& sshConfig,
                                  const QString& identity, const QString& localDir,
                                  QString* error) {
  QString why;
  if (localDir.trimmed().isEmpty())
    why = tr("Choose a local folder for the mirror.");
  else if (!attachRemoteFolder(target, sshConfig, identity, localDir, &why))
    why = tr("Cannot follow %1: %2").arg(target, why);
  if (!why.isEmpty()) {
    if (error) *error = why;
    Q_EMIT failed(why);
    return -1;
  }
  const int row = addRunFolder(localDir);
  m_mirrors->mirrorNow();
  return row;
}

void TrainingPage::addRemoteFolderDialog() {
  RemoteFolderDialog dialog(kRunsRoot.value(), this);
  if (dialog.exec() == QDialog::Accepted)
    addRemoteFolder(dialog.target(), dialog.sshConfig(), dialog.identity(), dialog.localDir());
}

void TrainingPage::updateWatchedPaths() {
  QStringList wanted;
  for (const QString& dir : m_runs->dirs()) {
    if (QFileInfo(dir).isDir()) wanted << dir;
    const QString metrics = QDir(dir).filePath(QString::fromLatin1(core::run_folder::kMetrics));
    if (QFileInfo(metrics).isFile()) wanted << metrics;
  }
  QStringList stale;
  for (const QString& p : m_fsWatcher->files() + m_fsWatcher->directories())
    if (!wanted.contains(p)) stale << p;
  if (!stale.isEmpty()) m_fsWatcher->removePaths(stale);
  QStringList fresh;
  for (const QString& p : wanted)
    if (!m_fsWatcher->files().contains(p) && !m_fsWatcher->directories().contains(p)) fresh << p;
  if (!fresh.isEmpty()) m_fsWatcher->addPaths(fresh);
}

void TrainingPage::updateSelection() {
  const int row = currentRun();
  const QString dir = m_runs->dir(row);
  const bool running = !dir.isEmpty() && m_launcher->isRunning(dir);
  m_stop->setEnabled(running);
  const auto status = m_runs->status(row).status;
  m_resume->setEnabled(!dir.isEmpty() && !running && resumableFolder(dir) &&
                       status != core::RunStatus::Finished && status != core::RunStatus::Running);
  if (row < 0) {
    m_detail->clear();
    m_preview->setRun({}, {});
    m_filmstrip->setRun({}, nullptr);
    return;
  }
  const auto log = m_runs->log(row);
  const auto st = m_runs->status(row);
  // A folder may hold only the logs (the bundled sample runs, a partial sync): say so instead of
  // offering what needs a checkpoint.
  const QDir folder(dir);
  const bool hasCheckpoint =
      QFileInfo::exists(folder.filePath(QString::fromLatin1(core::run_folder::kLatestModel))) ||
      QFileInfo::exists(folder.filePath(QString::fromLatin1(core::run_folder::kBestModel)));
  const bool live =
      running || st.status == core::RunStatus::Running || st.status == core::RunStatus::Starting;
  const bool foreign = m_runs->isForeign(row);
  // Another trainer's run shows its checkpoints' readings: the Probes tab, once per run shown.
  if (m_filmstrip->runDir() != QDir::cleanPath(QFileInfo(dir).absoluteFilePath()))
    m_showedProbesFor = false;
  m_filmstrip->setRun(dir, m_runs->trainer(row));
  m_filmstrip->setLastStep(foreign ? RunListModel::latestStep(*m_runs->trainer(row))
                                   : log->iteration());
  if (foreign && !m_showedProbesFor && m_bottomTabs->currentWidget() == m_preview) {
    m_bottomTabs->setCurrentWidget(m_filmstrip);
    m_showedProbesFor = true;
  }
  QString detail = QString::fromStdString(st.detail);
  if (st.status == core::RunStatus::Stopped && !m_resume->isEnabled())
    detail = tr("stopped (this folder holds no checkpoint to resume from)");
  QString text = QStringLiteral("<b>%1</b> — %2")
                     .arg(m_runs->name(row).toHtmlEscaped(), detail.toHtmlEscaped());
  if (!hasCheckpoint && !live && log->folderExists() && !m_runs->trainer(row))
    text += QStringLiteral("<br><i>%1</i>")
                .arg(tr("Logs only: no checkpoint (latest.fvm, best.fvm) to preview or evaluate.")
                         .toHtmlEscaped());
  if (log->partialLine()) text += tr(" (a line is being written)");
  if (!log->corruptLines().empty())
    text += QStringLiteral("<br><span style='color:#c62828'>%1</span>")
                .arg(QString::fromStdString(log->corruptLines().front().message).toHtmlEscaped());
  if (m_detail->text() != text) m_detail->setText(text);
  const auto& evalSets = log->config().evalData;
  QStringList sets;
  for (const auto& s : evalSets) sets << QString::fromStdString(s);
  if (m_shownRun != dir) {
    m_shownRun = dir;
    m_shownHasCheckpoint = hasCheckpoint;
    m_eval->setRun(dir, sets);
    m_output->setPlainText(m_launcher->output(dir));
  } else if (m_shownHasCheckpoint != hasCheckpoint) {
    // The run wrote its first checkpoint (or lost it): the evaluation offers it now.
    m_shownHasCheckpoint = hasCheckpoint;
    m_eval->setRun(dir, sets);
  }
  m_preview->setRun(dir, sets.isEmpty() ? kDefaultSample : sets.first(), live || hasCheckpoint);
}

bool TrainingPage::isSampleRun(int row) const {
  const QString root = kSampleRuns.value();
  const QString dir = m_runs->dir(row);
  return !root.isEmpty() && !dir.isEmpty() && QFileInfo(dir).absolutePath() == root;
}

void TrainingPage::showSampleRuns(bool on) {
  if (m_samples->isChecked() != on) m_samples->setChecked(on);  // comes back here
  for (int r = 0; r < m_runs->rowCount(); ++r)
    if (isSampleRun(r))
      m_runs->setData(m_runs->index(r, RunListModel::Name), on ? Qt::Checked : Qt::Unchecked,
                      Qt::CheckStateRole);
}

void TrainingPage::zoomToRun(int row) {
  if (row < 0 || row >= m_runs->rowCount()) return;
  const auto log = m_runs->log(row);
  if (!log) return;
  double last = double(std::max<int64_t>(log->iteration(), log->totalIterations()));
  if (m_plot->xAxis() == MetricsPlot::XAxis::WallClock) {  // the moments it ran
    const auto [first, end] = wallClockSpan(*log, runStartedAt(row));
    if (std::isfinite(first) && std::isfinite(end))
      m_plot->zoomTo(std::max(end, first + 60.0), first);
    return;
  }
  if (m_plot->xAxis() == MetricsPlot::XAxis::Time) {
    last = 0;  // the time it has run, stretched to its planned length
    for (auto r = log->records().rbegin(); r != log->records().rend() && last <= 0; ++r)
      if (std::isfinite(r->value("elapsed_s")) && r->iteration() > 0)
        last = r->value("elapsed_s") *
               double(std::max<int64_t>(r->iteration(), log->totalIterations())) /
               double(r->iteration());
  }
  m_plot->zoomTo(std::max(1.0, last));
}

double TrainingPage::runStartedAt(int row) const {
  // config.json is the first file a run writes: its time places a run whose records carry none.
  const QFileInfo config(
      QDir(m_runs->dir(row)).filePath(QString::fromLatin1(core::run_folder::kConfig)));
  if (!config.isFile()) return std::numeric_limits<double>::quiet_NaN();
  return double(config.birthTime().isValid() ? config.birthTime().toMSecsSinceEpoch()
                                             : config.lastModified().toMSecsSinceEpoch()) /
         1000.0;
}

void TrainingPage::saveRunList() const { kRuns.set(m_runs->dirs()); }

}  // namespace foveal::ui
