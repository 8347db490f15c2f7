#include "training_launch_dialog.h"
#include "run/run_folder.h"

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
#include <QSpinBox>
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
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  layout->addLayout(form);

  m_preset = new QComboBox(this);
  m_preset->setEditable(true);
  m_preset->setObjectName(QStringLiteral("preset"));
  m_preset->addItems(kKnownPresets);
  m_preset->setCurrentText(kPreset.value());
  m_preset->setToolTip(
      tr("The paper's experiments and the field's models (foveal-cli train "
         "--list-presets)"));
  form->addRow(tr("&Preset:"), m_preset);

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

  m_width = new QDoubleSpinBox(this);
  m_width->setRange(0.03125, 2.0);
  m_width->setDecimals(4);
  m_width->setSingleStep(0.125);
  m_width->setValue(kWidth.value());
  m_width->setToolTip(tr("Channel multiplier: 1.0 is the paper's model, 0.125 trains fast on CPU"));
  form->addRow(tr("Model &width:"), m_width);

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
  form->addRow(tr("&Iterations:"), m_iterations);
  m_batch = new QSpinBox(this);
  m_batch->setRange(0, 4096);
  m_batch->setSpecialValueText(tr("preset (192)"));
  form->addRow(tr("&Batch size:"), m_batch);
  m_evalInterval = new QSpinBox(this);
  m_evalInterval->setRange(0, 1'000'000);
  m_evalInterval->setSpecialValueText(tr("preset (1,000)"));
  form->addRow(tr("E&valuate every:"), m_evalInterval);

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

  m_seed = new QSpinBox(this);
  m_seed->setRange(0, std::numeric_limits<int>::max());
  m_seed->setValue(1);
  form->addRow(tr("&Seed:"), m_seed);
  m_skipEnded = new QCheckBox(
      tr("S&kip the glimpses of labels that have ended (sharp: 1.2-1.4x faster)"), this);
  m_skipEnded->setToolTip(
      tr("train --skip-ended-rows: at each decoding step only the images whose label has not "
         "ended compute a sharp model's glimpse (the loss masks the others' steps anyway); "
         "batch norm's statistics then come from those images alone. Sharp models only."));
  form->addRow(QString(), m_skipEnded);

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

  m_target = new RunTargetBox(this);
  layout->addWidget(m_target);

  layout->addWidget(new QLabel(tr("Command line (runs as shown; copy it to start the same run on "
                                  "a server):"),
                               this));
  auto* cmdRow = new QHBoxLayout;
  m_command = new QPlainTextEdit(this);
  m_command->setReadOnly(true);
  m_command->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_command->setFixedHeight(m_command->fontMetrics().height() * 4 + 12);
  m_command->setObjectName(QStringLiteral("commandLine"));
  auto* copy = new QPushButton(tr("&Copy"), this);
  connect(copy, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(commandLine()); });
  cmdRow->addWidget(m_command, 1);
  cmdRow->addWidget(copy, 0, Qt::AlignTop);
  layout->addLayout(cmdRow);
  m_note = new QLabel(this);
  m_note->setWordWrap(true);
  layout->addWidget(m_note);
  // What the run would see of its data, checked before it starts (issue 37: runs whose data
  // was silently filtered away "stayed at accuracy 0").
  m_check = new DataCheckPanel(this);
  layout->addWidget(m_check);

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
  layout->addWidget(buttons);

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
  connect(m_device, &QComboBox::currentIndexChanged, this, changed);
  connect(m_skipEnded, &QCheckBox::toggled, this, changed);
  for (auto* c :
       {m_transformation, m_features, m_sequence, m_prediction, m_cell, m_glimpse, m_projection})
    connect(c, &QComboBox::currentIndexChanged, this, changed);
  proposeRunDir();
  updateCommand();
  loadPresets();
  resize(640, sizeHint().height());
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
