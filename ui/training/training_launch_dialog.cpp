#include "training_launch_dialog.h"
#include "run/run_folder.h"

#include <functional>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "data_check_panel.h"
#include "model/stages/stage_registry.h"
#include "run_target_box.h"
#include "settings.h"

namespace foveal::ui {

namespace {
const Setting<QString> kPreset(QStringLiteral("training/preset"), QStringLiteral("digits-soft"));
const Setting<double> kWidth(QStringLiteral("training/width"), 0.25);
const Setting<int> kDevice(QStringLiteral("training/device"), 0);
/// The presets foveal-cli had when this was written; replaced by `train --list-presets` output.
/// The settings inside the scroll area: scrolled, never squeezed below their rows' heights (a
/// squeezed form overlapped its last rows).
/// Whenever its rows change (a device or target shows or hides a setting), it says so: the scroll
/// area is then kept as wide as the rows, so that none is cut at the right (CI saw a GPU-count box
/// cut by 14 px when the width had been measured before the box was shown).
class SettingsPane : public QWidget {
 public:
  using QWidget::QWidget;
  QSize minimumSizeHint() const override { return sizeHint(); }
  std::function<void()> onLayoutChange;

 protected:
  bool event(QEvent* e) override {
    const bool handled = QWidget::event(e);
    if (e->type() == QEvent::LayoutRequest && onLayoutChange) onLayoutChange();
    return handled;
  }
};

const QStringList kKnownPresets = {QStringLiteral("digits-soft"),
                                   QStringLiteral("digits-hard"),
                                   QStringLiteral("digits-sharp-pooling"),
                                   QStringLiteral("digits-sharp-chain"),
                                   QStringLiteral("digits-sharp-weighting"),
                                   QStringLiteral("digits-sharp-pooling-reference"),
                                   QStringLiteral("digits-crnn"),
                                   QStringLiteral("digits-rare"),
                                   QStringLiteral("digits-trba"),
                                   QStringLiteral("text-soft"),
                                   QStringLiteral("text-hard"),
                                   QStringLiteral("text-sharp-chain-1stn"),
                                   QStringLiteral("text-sharp-pooling-2stn"),
                                   QStringLiteral("text-sharp-chain-2stn"),
                                   QStringLiteral("text-sharp-weighting-2stn")};
}  // namespace

TrainingLaunchDialog::TrainingLaunchDialog(const QString& cli, const QString& runsRoot,
                                           QWidget* parent)
    : QDialog(parent), m_cli(cli), m_runsRoot(runsRoot) {
  setWindowTitle(tr("New training run"));
  // The settings scroll when the screen is too short for them (a Slurm target at 1280x720 or at
  // scale 2 was 1084 px tall, Start out of reach: issue 64); the command line and the batch
  // script share a tabbed pane under them, and the buttons stay at the bottom, always visible.
  auto* layout = new QVBoxLayout(this);
  m_scroll = new QScrollArea(this);
  m_scroll->setObjectName(QStringLiteral("settingsScroll"));
  m_scroll->setFrameShape(QFrame::NoFrame);
  m_scroll->setWidgetResizable(true);
  m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* settings = new SettingsPane(m_scroll);
  settings->onLayoutChange = [this, settings] {
    const int wide = settings->minimumSizeHint().width() + scrollBarWidth();
    if (m_scroll->minimumWidth() != wide) m_scroll->setMinimumWidth(wide);
  };
  auto* settingsLayout = new QVBoxLayout(settings);
  settingsLayout->setContentsMargins(0, 0, 0, 0);
  auto* form = new QFormLayout;
  settingsLayout->addLayout(form);

  addModelRows(form);
  addTrainingRows(form);
  addRunDirRow(form);

  m_target = new RunTargetBox(this);
  settingsLayout->addWidget(m_target);
  m_note = new QLabel(this);
  m_note->setWordWrap(true);
  settingsLayout->addWidget(m_note);
  // What the run would see of its data, checked before it starts (issue 37: runs whose data
  // was silently filtered away "stayed at accuracy 0").
  m_check = new DataCheckPanel(this);
  settingsLayout->addWidget(m_check);
  settingsLayout->addStretch(1);
  m_scroll->setWidget(settings);
  layout->addWidget(m_scroll, 1);

  layout->addWidget(buildOutputTabs());
  layout->addWidget(buildButtons());
  connectSettings();
  proposeRunDir();
  suggestJobGpus();
  updateCommand();
  loadPresets();
  fitToScreen();
}

void TrainingLaunchDialog::addModelRows(QFormLayout* form) {
  m_preset = new QComboBox(this);
  m_preset->setEditable(true);
  m_preset->setObjectName(QStringLiteral("preset"));
  m_preset->addItems(kKnownPresets);
  m_preset->setCurrentText(kPreset.value());
  m_preset->setToolTip(
      tr("The paper's experiments and the field's models (foveal-cli train "
         "--list-presets)"));
  form->addRow(tr("&Preset:"), m_preset);

  addStageRow(form);

  m_width = new QDoubleSpinBox(this);
  m_width->setRange(0.03125, 2.0);
  m_width->setDecimals(4);
  m_width->setSingleStep(0.125);
  m_width->setValue(kWidth.value());
  m_width->setToolTip(tr("Channel multiplier: 1.0 is the paper's model, 0.125 trains fast on CPU"));
  m_seed = new QSpinBox(this);
  m_seed->setRange(0, std::numeric_limits<int>::max());
  m_seed->setValue(1);
  auto* widthRow = new QHBoxLayout;
  widthRow->addWidget(m_width, 1);
  auto* seedLabel = new QLabel(tr("&Seed:"), this);
  seedLabel->setBuddy(m_seed);
  widthRow->addWidget(seedLabel);
  widthRow->addWidget(m_seed, 1);
  auto* widthLabel = new QLabel(tr("Model &width:"), this);
  widthLabel->setBuddy(m_width);
  form->addRow(widthLabel, widthRow);
}

// A box per stage, the preset's choice first, in a grid of two rows.
void TrainingLaunchDialog::addStageRow(QFormLayout* form) {
  // Any combination of the stages over the preset's model (train --features resnet ...).
  auto stageBox = [this](core::StageKind kind, const QString& tip) {
    auto* box = new QComboBox(this);
    // The first item names the stage, so that each box says what it chooses.
    box->addItem(tr("%1: preset's").arg(QString::fromStdString(core::stageKindName(kind))),
                 QString());
    for (const auto& o : core::stageOptions(kind)) {
      box->addItem(QString::fromStdString(o.name), QString::fromStdString(o.name));
      box->setItemData(box->count() - 1, QString::fromStdString(o.summary), Qt::ToolTipRole);
    }
    box->setToolTip(tip);
    return box;
  };
  m_transformation = stageBox(core::StageKind::Transformation, tr("Transformation stage"));
  m_features = stageBox(core::StageKind::Features, tr("Feature stage"));
  m_sequence = stageBox(core::StageKind::Sequence, tr("Sequence stage"));
  m_prediction = stageBox(core::StageKind::Prediction, tr("Prediction stage"));
  m_glimpse = stageBox(core::StageKind::Glimpse, tr("The attention decoder's glimpse"));
  m_cell = stageBox(core::StageKind::Cell, tr("The attention decoder's cell"));
  m_projection = new QComboBox(this);
  m_projection->addItem(tr("projection: preset's"), -1);
  m_projection->addItem(tr("no projection"), 0);
  m_projection->addItem(tr("projection"), 1);
  m_projection->setToolTip(tr("DTRB's Linear(2h -> h) after each BiLSTM layer"));
  auto* stagesRow = new QGridLayout;
  stagesRow->addWidget(m_transformation, 0, 0);
  stagesRow->addWidget(m_features, 0, 1);
  stagesRow->addWidget(m_sequence, 0, 2);
  stagesRow->addWidget(m_projection, 0, 3);
  stagesRow->addWidget(m_prediction, 1, 0);
  stagesRow->addWidget(m_glimpse, 1, 1);
  stagesRow->addWidget(m_cell, 1, 2);
  auto* stagesLabel = new QLabel(tr("S&tages:"), this);
  stagesLabel->setBuddy(m_transformation);
  stagesLabel->setToolTip(
      tr("transformation, features, sequence (projection); prediction, "
         "glimpse, cell: the preset's unless chosen"));
  form->addRow(stagesLabel, stagesRow);
}

void TrainingLaunchDialog::addTrainingRows(QFormLayout* form) {
  m_data = new QLineEdit(this);
  m_data->setPlaceholderText(tr("the preset's training data"));
  m_data->setToolTip(
      tr("Any dataset the data layer reads: a packed file, an LMDB folder, a "
         "gt.txt folder, or a spec such as digits:len=7,rotated,split=stream; "
         "several separated by ';'"));
  form->addRow(tr("Training &data:"), m_data);
  m_evalData = new QLineEdit(this);
  m_evalData->setPlaceholderText(tr("the preset's evaluation sets"));
  form->addRow(tr("&Evaluation data:"), m_evalData);

  m_iterations = new QSpinBox(this);
  m_iterations->setRange(0, 10'000'000);
  m_iterations->setSpecialValueText(tr("preset (30,000)"));
  m_iterations->setSingleStep(1000);
  m_batch = new QSpinBox(this);
  m_batch->setRange(0, 4096);
  m_batch->setSpecialValueText(tr("preset (192)"));
  m_evalInterval = new QSpinBox(this);
  m_evalInterval->setRange(0, 1'000'000);
  m_evalInterval->setSpecialValueText(tr("preset (1,000)"));
  auto* lengthRow = new QHBoxLayout;
  lengthRow->addWidget(m_iterations, 1);
  for (const auto& [text, box] : {std::pair{tr("&Batch size:"), m_batch},
                                  std::pair{tr("E&valuate every:"), m_evalInterval}}) {
    auto* label = new QLabel(text, this);
    label->setBuddy(box);
    lengthRow->addWidget(label);
    lengthRow->addWidget(box, 1);
  }
  auto* iterationsLabel = new QLabel(tr("&Iterations:"), this);
  iterationsLabel->setBuddy(m_iterations);
  form->addRow(iterationsLabel, lengthRow);

  auto* deviceRow = new QHBoxLayout;
  m_device = new QComboBox(this);
  m_device->addItems({tr("CPU"), tr("One CUDA device"), tr("Several GPUs (one process each)")});
  m_device->setCurrentIndex(std::clamp(kDevice.value(), 0, 2));
  m_cudaIndex = new QSpinBox(this);
  m_cudaIndex->setRange(0, 63);
  m_cudaIndex->setPrefix(QStringLiteral("cuda:"));
  m_gpus = new QSpinBox(this);
  m_gpus->setRange(2, 64);
  m_gpus->setSuffix(tr(" GPUs"));
  m_threads = new QSpinBox(this);
  m_threads->setRange(0, 512);
  m_threads->setSpecialValueText(tr("all cores"));
  m_threads->setSuffix(tr(" threads"));
  deviceRow->addWidget(m_device, 1);
  deviceRow->addWidget(m_cudaIndex);
  deviceRow->addWidget(m_gpus);
  deviceRow->addWidget(m_threads);
  // A row that is a layout gets no buddy from QFormLayout: without one the label would show
  // its '&' literally.
  auto* deviceLabel = new QLabel(tr("Devi&ce:"), this);
  deviceLabel->setBuddy(m_device);
  form->addRow(deviceLabel, deviceRow);

  m_skipEnded = new QCheckBox(
      tr("S&kip the glimpses of labels that have ended (sharp: 1.2-1.4x faster)"), this);
  m_skipEnded->setToolTip(
      tr("train --skip-ended-rows: at each decoding step only the images whose label has not "
         "ended compute a sharp model's glimpse (the loss masks the others' steps anyway); "
         "batch norm's statistics then come from those images alone. Sharp models only."));
  form->addRow(QString(), m_skipEnded);
}

void TrainingLaunchDialog::addRunDirRow(QFormLayout* form) {
  auto* dirRow = new QHBoxLayout;
  m_runDir = new QLineEdit(this);
  auto* browse = new QToolButton(this);
  browse->setText(tr("..."));
  dirRow->addWidget(m_runDir, 1);
  dirRow->addWidget(browse);
  auto* dirLabel = new QLabel(tr("&Run folder:"), this);
  dirLabel->setBuddy(m_runDir);
  form->addRow(dirLabel, dirRow);
  connect(browse, &QToolButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Run folder"), m_runsRoot);
    if (!dir.isEmpty()) {
      m_dirEdited = true;
      m_runDir->setText(dir);
    }
  });
  connect(m_runDir, &QLineEdit::textEdited, this, [this] { m_dirEdited = true; });
}

QTabWidget* TrainingLaunchDialog::buildOutputTabs() {
  m_outputTabs = new QTabWidget(this);
  m_outputTabs->setObjectName(QStringLiteral("commandTabs"));
  m_outputTabs->setDocumentMode(true);
  auto* cmdPane = new QWidget(m_outputTabs);
  auto* cmdLayout = new QVBoxLayout(cmdPane);
  cmdLayout->setContentsMargins(0, 4, 0, 0);
  auto* cmdHead = new QHBoxLayout;
  cmdHead->addWidget(
      new QLabel(tr("Runs as shown; copy it to start the same run on a server:"), cmdPane), 1);
  auto* copy = new QPushButton(tr("&Copy"), cmdPane);
  connect(copy, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(commandLine()); });
  cmdHead->addWidget(copy);
  cmdLayout->addLayout(cmdHead);
  m_command = new QPlainTextEdit(cmdPane);
  m_command->setReadOnly(true);
  m_command->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_command->setMinimumHeight(m_command->fontMetrics().height() * 3 + 12);
  m_command->setObjectName(QStringLiteral("commandLine"));
  cmdLayout->addWidget(m_command, 1);
  m_outputTabs->addTab(cmdPane, tr("Co&mmand line"));
  m_outputTabs->addTab(m_target->scriptPane(), tr("Batch scri&pt"));
  // Four lines of the command or the script: the rest scrolls inside them.
  m_outputTabs->setFixedHeight(m_outputTabs->tabBar()->sizeHint().height() +
                               copy->sizeHint().height() + m_command->fontMetrics().height() * 4 +
                               24);
  return m_outputTabs;
}

QDialogButtonBox* TrainingLaunchDialog::buildButtons() {
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  auto* start = m_start = buttons->addButton(tr("&Start"), QDialogButtonBox::AcceptRole);
  start->setDefault(true);
  connect(m_check, &DataCheckPanel::stateChanged, this, [this](DataCheckPanel::State state) {
    const bool refuse = state == DataCheckPanel::State::NothingUsable;
    m_start->setEnabled(!refuse);
    m_start->setToolTip(refuse ? tr("Nothing in the training data is usable by this model: see "
                                    "the data check above")
                               : QString());
  });
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    if (m_check->state() == DataCheckPanel::State::NothingUsable) return;  // Start is disabled
    kPreset.set(m_preset->currentText());
    kWidth.set(m_width->value());
    kDevice.set(m_device->currentIndex());
    m_target->saveSettings();
    accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  return buttons;
}

void TrainingLaunchDialog::connectSettings() {
  auto changed = [this] { updateCommand(); };
  connect(m_preset, &QComboBox::currentTextChanged, this, [this] {
    proposeRunDir();
    updateCommand();
  });
  for (auto* e : {m_data, m_evalData, m_runDir}) connect(e, &QLineEdit::textChanged, this, changed);
  for (auto* s : {m_iterations, m_batch, m_evalInterval, m_cudaIndex, m_gpus, m_threads, m_seed})
    connect(s, &QSpinBox::valueChanged, this, changed);
  connect(m_width, &QDoubleSpinBox::valueChanged, this, changed);
  connect(m_target, &RunTargetBox::changed, this, changed);
  connect(m_target, &RunTargetBox::changed, this, &TrainingLaunchDialog::fitToScreen);
  // The data check's lines arrive later: grown for them once their layout is done.
  connect(m_check, &DataCheckPanel::stateChanged, this,
          [this] { QTimer::singleShot(0, this, &TrainingLaunchDialog::fitToScreen); });
  connect(m_device, &QComboBox::currentIndexChanged, this, [this] {
    suggestJobGpus();
    updateCommand();
  });
  connect(m_gpus, &QSpinBox::valueChanged, this, &TrainingLaunchDialog::suggestJobGpus);
  connect(m_skipEnded, &QCheckBox::toggled, this, changed);
  for (auto* c :
       {m_transformation, m_features, m_sequence, m_prediction, m_cell, m_glimpse, m_projection})
    connect(c, &QComboBox::currentIndexChanged, this, changed);
}

void TrainingLaunchDialog::suggestJobGpus() {
  // A Slurm job asks for the GPUs the trainer will use: none for a CPU run (one that asks for a
  // GPU waits for a GPU node, for ever on a CPU cluster). The box may be changed afterwards.
  const auto device = static_cast<LaunchSpec::Device>(m_device->currentIndex());
  m_target->gpusBox()->setValue(device == LaunchSpec::Device::Cpu    ? 0
                                : device == LaunchSpec::Device::Cuda ? 1
                                                                     : m_gpus->value());
}

int TrainingLaunchDialog::scrollBarWidth() const {
  return style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, m_scroll->verticalScrollBar()) +
         2 * m_scroll->frameWidth() + 2;
}

QSize TrainingLaunchDialog::sizeHint() const {
  if (!m_start) return QDialog::sizeHint();  // still being built
  // QScrollArea caps its hint at 24 lines: ask for all of the settings, fitToScreen bounds it.
  const QMargins m = layout()->contentsMargins();
  const int spacing = std::max(0, layout()->spacing());
  const QSize settings = m_scroll->widget()->sizeHint();
  const int scrollBar = scrollBarWidth();
  const int buttons = m_start->sizeHint().height();
  return {std::max(640, settings.width() + scrollBar + m.left() + m.right()),
          m.top() + settings.height() + spacing + m_outputTabs->height() + spacing + buttons +
              m.bottom() + 12};
}

QSize TrainingLaunchDialog::minimumSizeHint() const {
  if (!m_start) return QDialog::minimumSizeHint();
  // The settings scroll: a few of their lines, the command pane and the buttons.
  const QMargins m = layout()->contentsMargins();
  const int scrollBar = scrollBarWidth();
  return {m_scroll->widget()->minimumSizeHint().width() + scrollBar + m.left() + m.right(),
          m.top() + fontMetrics().height() * 8 + m_outputTabs->height() +
              m_start->sizeHint().height() + m.bottom() + 24};
}

void TrainingLaunchDialog::showEvent(QShowEvent* event) {
  QDialog::showEvent(event);
  // Measured once the window is shown: before that the rows a target shows are not counted.
  QTimer::singleShot(0, this, &TrainingLaunchDialog::fitToScreen);
}

void TrainingLaunchDialog::fitToScreen() {
  // The settings never narrower than their rows (they scroll up and down, not sideways).
  m_scroll->setMinimumWidth(m_scroll->widget()->minimumSizeHint().width() + scrollBarWidth());
  // Grows to show every setting (a Slurm target adds rows) as far as the screen allows, less a
  // title bar and a panel; never shrinks what the user made larger.
  const QRect avail = screen() ? screen()->availableGeometry() : QRect(0, 0, 1280, 720);
  constexpr int kFrame = 64;
  const QSize want = sizeHint()
                         .boundedTo(QSize(avail.width(), avail.height() - kFrame))
                         .expandedTo(minimumSizeHint());
  if (!isVisible()) {
    resize(want);
    return;
  }
  const QSize grown = size().expandedTo(want);
  if (grown == size()) return;
  resize(grown);
  // Still on the screen: a taller dialog moves up rather than past the panel.
  const QRect frame = frameGeometry();
  if (frame.bottom() > avail.bottom())
    move(x(), std::max(avail.top(), y() - (frame.bottom() - avail.bottom())));
}

TrainingLaunchDialog::~TrainingLaunchDialog() {
  if (m_presetProcess && m_presetProcess->state() != QProcess::NotRunning) {
    m_presetProcess->kill();
    m_presetProcess->waitForFinished(1000);
  }
}

void TrainingLaunchDialog::loadPresets() {
  if (m_cli.isEmpty()) return;
  // Asks the trainer for its presets, as JSON (train --list-presets --json).
  m_presetProcess = new QProcess(this);
  connect(m_presetProcess, &QProcess::finished, this, [this](int code) {
    if (code != 0) return;
    const auto doc = QJsonDocument::fromJson(m_presetProcess->readAllStandardOutput());
    if (!doc.isArray()) return;
    const QString current = m_preset->currentText();
    const QSignalBlocker block(m_preset);
    m_preset->clear();
    for (const auto& v : doc.array()) {
      const auto o = v.toObject();
      const QString name = o.value(QStringLiteral("name")).toString();
      if (name.isEmpty()) continue;
      m_preset->addItem(name);
      m_preset->setItemData(
          m_preset->count() - 1,
          QStringLiteral("%1 (%2)").arg(o.value(QStringLiteral("description")).toString(),
                                        o.value(QStringLiteral("stages")).toString()),
          Qt::ToolTipRole);
    }
    m_preset->setCurrentText(current);
  });
  m_presetProcess->start(
      m_cli, {QStringLiteral("train"), QStringLiteral("--list-presets"), QStringLiteral("--json")});
}

QStringList TrainingLaunchDialog::presets() const {
  QStringList out;
  for (int i = 0; i < m_preset->count(); ++i) out << m_preset->itemText(i);
  return out;
}

void TrainingLaunchDialog::proposeRunDir() {
  if (m_dirEdited) return;
  const QSignalBlocker block(m_runDir);
  m_runDir->setText(
      QDir(m_runsRoot)
          .filePath(m_preset->currentText() + QLatin1Char('-') +
                    QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
}

LaunchSpec TrainingLaunchDialog::spec() const {
  LaunchSpec s;
  s.preset = m_preset->currentText().trimmed();
  s.width = m_width->value();
  s.data = m_data->text().trimmed();
  s.evalData = m_evalData->text().trimmed();
  s.iterations = m_iterations->value();
  s.batch = m_batch->value();
  s.evalInterval = m_evalInterval->value();
  s.seed = m_seed->value();
  s.device = static_cast<LaunchSpec::Device>(m_device->currentIndex());
  s.cudaIndex = m_cudaIndex->value();
  s.gpus = m_gpus->value();
  s.threads = m_threads->value();
  s.transformation = m_transformation->currentData().toString();
  s.features = m_features->currentData().toString();
  s.sequence = m_sequence->currentData().toString();
  s.prediction = m_prediction->currentData().toString();
  s.cell = m_cell->currentData().toString();
  s.attention = m_glimpse->currentData().toString();
  s.projection = m_projection->currentData().toInt();
  s.skipEndedRows = m_skipEnded->isEnabled() && m_skipEnded->isChecked();
  s.runDir = m_runDir->text().trimmed();
  s.targetArguments = m_target->arguments(s.runDir);
  return s;
}

void TrainingLaunchDialog::setSpec(const LaunchSpec& s) {
  m_preset->setCurrentText(s.preset);
  m_width->setValue(s.width);
  m_data->setText(s.data);
  m_evalData->setText(s.evalData);
  m_iterations->setValue(s.iterations);
  m_batch->setValue(s.batch);
  m_evalInterval->setValue(s.evalInterval);
  m_seed->setValue(s.seed);
  m_device->setCurrentIndex(static_cast<int>(s.device));
  m_cudaIndex->setValue(s.cudaIndex);
  m_gpus->setValue(s.gpus);
  m_threads->setValue(s.threads);
  const std::pair<QComboBox*, const QString*> stages[] = {
      {m_transformation, &s.transformation}, {m_features, &s.features}, {m_sequence, &s.sequence},
      {m_prediction, &s.prediction},         {m_cell, &s.cell},         {m_glimpse, &s.attention}};
  for (const auto& [box, value] : stages) box->setCurrentIndex(std::max(0, box->findData(*value)));
  m_projection->setCurrentIndex(std::max(0, m_projection->findData(s.projection)));
  m_skipEnded->setChecked(s.skipEndedRows);
  if (!s.runDir.isEmpty()) {
    m_dirEdited = true;
    m_runDir->setText(s.runDir);
  }
  updateCommand();
}

QString TrainingLaunchDialog::commandLine() const { return m_command->toPlainText(); }

void TrainingLaunchDialog::updateCommand() {
  const auto device = static_cast<LaunchSpec::Device>(m_device->currentIndex());
  m_outputTabs->setTabVisible(1, m_target->kind() == RunTargetBox::Slurm);
  m_cudaIndex->setVisible(device == LaunchSpec::Device::Cuda);
  m_gpus->setVisible(device == LaunchSpec::Device::MultiGpu);
  m_threads->setVisible(device == LaunchSpec::Device::Cpu);
  // Sharp models only: the chosen glimpse, or the preset's.
  const QString glimpse = m_glimpse->currentData().toString();
  m_skipEnded->setEnabled(
      glimpse == QLatin1String("sharp") ||
      (glimpse.isEmpty() && m_preset->currentText().contains(QLatin1String("sharp"))));
  const LaunchSpec s = spec();
  m_command->setPlainText(s.commandLine(m_cli.isEmpty() ? QStringLiteral("foveal-cli") : m_cli));
  {
    // The trainer's own options, as the batch script passes them (the script adds --run).
    LaunchSpec trainer = s;
    trainer.targetArguments.clear();
    m_target->showScript(trainer.arguments(0).mid(3), s.runDir);
  }
  QStringList notes;
  if (m_cli.isEmpty())
    notes << tr(
        "<b>foveal-cli was not found next to this program:</b> the run cannot start "
        "from here, but the command line works wherever foveal-cli is installed.");
  if (device == LaunchSpec::Device::MultiGpu)
    notes << tr("%1 processes, one per GPU (cuda:0 .. cuda:%2), meet at 127.0.0.1:%3; rank 0 "
                "writes the run folder.")
                 .arg(s.processes())
                 .arg(s.processes() - 1)
                 .arg(s.masterPort);
  if (QFileInfo::exists(QDir(s.runDir).filePath(QString::fromLatin1(core::run_folder::kConfig))))
    notes << tr(
        "<b>This folder already holds a run:</b> choose another, or resume it from the "
        "runs list.");
  m_note->setText(notes.join(QStringLiteral("<br>")));
  if (s.remote())
    m_check->skip(
        tr("The training data lies on the run's host: it is not checked from here "
           "(foveal-cli data check there shows what the run will see)."));
  else if (!s.resume)
    m_check->check(s);
}

}  // namespace foveal::ui
