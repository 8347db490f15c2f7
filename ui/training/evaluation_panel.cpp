#include "evaluation_panel.h"
#include "run/run_folder.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "base/error.h"
#include "data/dataset_factory.h"
#include "eval_models.h"
#include "qt_convert.h"

namespace foveal::ui {

EvaluationPanel::EvaluationPanel(QWidget* parent)
    : QWidget(parent), m_results(new EvalResultModel(this)), m_failures(new FailureModel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* row1 = new QHBoxLayout;
  row1->addWidget(new QLabel(tr("Checkpoint:"), this));
  m_checkpoint = new QComboBox(this);
  m_checkpoint->setEditable(true);
  m_checkpoint->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_checkpoint->setMinimumContentsLength(12);
  row1->addWidget(m_checkpoint, 1);
  auto* browse = new QToolButton(this);
  browse->setText(tr("..."));
  connect(browse, &QToolButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Checkpoint"), {},
                                                   tr("Foveal models (*.fvm);;All files (*)"));
    if (!f.isEmpty()) setCheckpoint(f);
  });
  row1->addWidget(browse);
  layout->addLayout(row1);

  auto* row2 = new QHBoxLayout;
  m_dataset = new QLineEdit(this);
  m_dataset->setPlaceholderText(tr("dataset path or spec; several separated by ';'"));
  m_dataset->setText(QStringLiteral("digits:len=5,split=test,seed=1"));
  row2->addWidget(m_dataset, 1);
  m_protocol = new QCheckBox(tr("Table 1"), this);
  m_protocol->setToolTip(
      tr("The paper's digit protocol: normal and rotated sequences of 5 to 13 digits"));
  connect(m_protocol, &QCheckBox::toggled, m_dataset, &QWidget::setDisabled);
  row2->addWidget(m_protocol);
  m_limit = new QSpinBox(this);
  m_limit->setRange(0, 10'000'000);
  m_limit->setValue(200);
  m_limit->setSpecialValueText(tr("all images"));
  m_limit->setSuffix(tr(" images"));
  m_limit->setToolTip(tr("First N images of each set (0: all)"));
  row2->addWidget(m_limit);
  m_beam = new QSpinBox(this);
  m_beam->setRange(1, 16);
  m_beam->setPrefix(tr("beam "));
  m_beam->setSpecialValueText(tr("greedy"));
  m_beam->setToolTip(tr("Decoding: greedy, or a beam search keeping this many readings"));
  row2->addWidget(m_beam);
  m_run = new QPushButton(tr("&Evaluate"), this);
  m_cancel = new QPushButton(tr("Cancel"), this);
  m_cancel->setEnabled(false);
  // The buttons share the checkpoint's row: the panel stays narrow enough for a laptop.
  row1->addWidget(m_run);
  row1->addWidget(m_cancel);
  layout->addLayout(row2);
  connect(m_run, &QPushButton::clicked, this, [this] { evaluate(); });
  connect(m_cancel, &QPushButton::clicked, this, [this] {
    if (isRunning()) m_process->kill();
  });

  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_status);

  auto* split = new QSplitter(Qt::Vertical, this);
  m_resultView = new QTableView(split);
  m_resultView->setModel(m_results);
  m_resultView->verticalHeader()->hide();
  m_resultView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_resultView->horizontalHeader()->setStretchLastSection(true);
  m_failureView = new QTableView(split);
  m_failureView->setModel(m_failures);
  m_failureView->verticalHeader()->hide();
  m_failureView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_failureView->horizontalHeader()->setStretchLastSection(true);
  m_failureView->setToolTip(tr("Double-click a misread image to open it in the inspector"));
  connect(m_failureView, &QTableView::doubleClicked, this,
          [this](const QModelIndex& i) { chooseFailure(i.row()); });
  split->addWidget(m_resultView);
  split->addWidget(m_failureView);
  layout->addWidget(split, 1);
}

EvaluationPanel::~EvaluationPanel() {
  if (isRunning()) {
    m_process->disconnect(this);
    m_process->kill();
    m_process->waitForFinished(2000);
  }
}

void EvaluationPanel::setRun(const QString& runDir, const QStringList& evalSets) {
  const QString current = m_checkpoint->currentText();
  m_checkpoint->clear();
  // The run's checkpoints that exist (best first); both names when it has none yet.
  QStringList files;
  for (const char* name : {core::run_folder::kBestModel, core::run_folder::kLatestModel})
    files << QDir(runDir).filePath(QString::fromLatin1(name));
  QStringList existing;
  for (const auto& f : files)
    if (QFileInfo::exists(f)) existing << f;
  m_checkpoint->addItems(existing.isEmpty() ? files : existing);
  if (current.startsWith(runDir)) m_checkpoint->setCurrentText(current);
  if (!evalSets.isEmpty() && !isRunning()) m_dataset->setText(evalSets.first());
  if (isRunning() || runDir.isEmpty()) return;
  const QDir dir(runDir);
  const bool none =
      !QFileInfo::exists(dir.filePath(QString::fromLatin1(core::run_folder::kBestModel))) &&
      !QFileInfo::exists(dir.filePath(QString::fromLatin1(core::run_folder::kLatestModel)));
  if (none)
    m_status->setText(tr("<i>%1 holds no checkpoint (yet): type the path of a model file to "
                         "evaluate another one.</i>")
                          .arg(QFileInfo(runDir).fileName().toHtmlEscaped()));
  else if (m_noCheckpointNote)
    m_status->clear();
  m_noCheckpointNote = none;
}

void EvaluationPanel::setCheckpoint(const QString& path) { m_checkpoint->setCurrentText(path); }
QString EvaluationPanel::checkpoint() const { return m_checkpoint->currentText().trimmed(); }
void EvaluationPanel::setDataset(const QString& spec) { m_dataset->setText(spec); }
void EvaluationPanel::setDigitProtocol(bool on) { m_protocol->setChecked(on); }
void EvaluationPanel::setLimit(int images) { m_limit->setValue(images); }
void EvaluationPanel::setBeamWidth(int width) { m_beam->setValue(width); }
int EvaluationPanel::beamWidth() const { return m_beam->value(); }
bool EvaluationPanel::isRunning() const {
  return m_process && m_process->state() != QProcess::NotRunning;
}
QString EvaluationPanel::statusText() const { return m_status->text(); }

bool EvaluationPanel::evaluate() {
  m_noCheckpointNote = false;  // the status is about this evaluation from now on
  auto fail = [this](const QString& message) {
    m_status->setText(
        QStringLiteral("<span style='color:#c62828'>%1</span>").arg(message.toHtmlEscaped()));
    Q_EMIT failed(message);
    return false;
  };
  if (isRunning()) return fail(tr("An evaluation is already running."));
  if (m_cli.isEmpty() || !QFileInfo(m_cli).isExecutable())
    return fail(tr("foveal-cli was not found next to this program: cannot evaluate."));
  const QString model = checkpoint();
  if (!QFileInfo(model).isFile())
    return fail(tr("%1: no such checkpoint (the run has not written one, or its folder holds "
                   "only logs)")
                    .arg(model));
  if (!m_tmp.isValid()) return fail(tr("cannot create a temporary folder for the failures"));
  const bool protocol = m_protocol->isChecked();
  if (!protocol && m_dataset->text().trimmed().isEmpty()) return fail(tr("Choose a dataset."));
  QStringList args{QStringLiteral("eval"),
                   QStringLiteral("--model"),
                   model,
                   QStringLiteral("--json"),
                   QStringLiteral("--failures"),
                   m_tmp.filePath(QStringLiteral("failures.tsv"))};
  if (protocol)
    args << QStringLiteral("--digit-protocol");
  else
    args << QStringLiteral("--data") << m_dataset->text().trimmed();
  if (m_limit->value() > 0) args << QStringLiteral("--limit") << QString::number(m_limit->value());
  if (m_beam->value() > 1) args << QStringLiteral("--beam") << QString::number(m_beam->value());
  // As during training: entries the model cannot read are counted per reason, not fatal (the
  // command line stops at the first one unless --skip-bad).
  args << QStringLiteral("--skip-bad");
  QFile::remove(m_tmp.filePath(QStringLiteral("failures.tsv")));
  if (!m_process) {
    m_process = new QProcess(this);
    connect(m_process, &QProcess::finished, this, [this](int code) { onFinished(code); });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
      if (e == QProcess::FailedToStart) onFinished(-1);
    });
  }
  m_runningModel = model;
  m_runningProtocol = protocol;
  m_runningBeam = m_beam->value();
  m_results->clear();
  m_failures->clear();
  m_status->setText(tr("Evaluating %1 ...").arg(QFileInfo(model).fileName()));
  m_run->setEnabled(false);
  m_cancel->setEnabled(true);
  m_process->start(m_cli, args);
  return true;
}

void EvaluationPanel::onFinished(int code) {
  m_run->setEnabled(true);
  m_cancel->setEnabled(false);
  const QByteArray out = m_process->readAllStandardOutput();
  const QString err = QString::fromLocal8Bit(m_process->readAllStandardError()).trimmed();
  auto fail = [this](const QString& message) {
    m_status->setText(
        QStringLiteral("<span style='color:#c62828'>%1</span>").arg(message.toHtmlEscaped()));
    Q_EMIT failed(message);
    Q_EMIT finished(false);
  };
  if (code != 0 || m_process->exitStatus() != QProcess::NormalExit) {
    const QString why =
        m_process->error() == QProcess::FailedToStart
            ? m_process->errorString()
            : (err.isEmpty() ? tr("exit code %1").arg(code) : err.section(QLatin1Char('\n'), -1));
    return fail(tr("Evaluation failed: %1").arg(why));
  }
  const QString error = m_results->setJson(out, m_runningProtocol);
  if (!error.isEmpty()) return fail(error);
  QFile tsv(m_tmp.filePath(QStringLiteral("failures.tsv")));
  int misread = 0;
  if (tsv.open(QIODevice::ReadOnly)) misread = m_failures->setTsv(QString::fromUtf8(tsv.readAll()));
  m_failureView->resizeColumnsToContents();
  m_status->setText(m_results->summary(QFileInfo(m_runningModel).fileName(), misread));
  Q_EMIT finished(true);
}

void EvaluationPanel::chooseFailure(int row) {
  if (row < 0 || row >= m_failures->rowCount()) return;
  const auto& f = m_failures->failure(row);
  try {
    const auto dataset = core::data::openDataset(f.dataset.toStdString());
    const auto sample = dataset->get(static_cast<size_t>(f.index));
    const QString source = QStringLiteral("%1 #%2").arg(f.dataset).arg(f.index);
    Q_EMIT failureChosen(toQImage(sample.image), source, f.truth, m_runningModel, m_runningBeam);
  } catch (const core::Error& e) {
    Q_EMIT failed(QString::fromStdString(e.what()));
  } catch (const std::exception& e) {
    Q_EMIT failed(tr("%1 #%2: %3").arg(f.dataset).arg(f.index).arg(e.what()));
  }
}

}  // namespace foveal::ui
