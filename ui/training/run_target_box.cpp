#include "run_target_box.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "base/error.h"
#include "run/run_target.h"
#include "settings.h"

namespace foveal::ui {

namespace {
const Setting<int> kKind(QStringLiteral("training/target/kind"), 0);
const Setting<QString> kHost(QStringLiteral("training/target/host"), QString());
const Setting<QString> kRemoteDir(QStringLiteral("training/target/remoteDir"),
                                  QStringLiteral("foveal-runs"));
const Setting<QString> kRemoteCli(QStringLiteral("training/target/remoteCli"),
                                  QStringLiteral("foveal-cli"));
const Setting<QString> kSshConfig(QStringLiteral("training/target/sshConfig"), QString());
const Setting<QString> kIdentity(QStringLiteral("training/target/identity"), QString());
const Setting<QString> kPartition(QStringLiteral("training/slurm/partition"), QString());
const Setting<int> kGpus(QStringLiteral("training/slurm/gpus"), 1);
const Setting<int> kCpus(QStringLiteral("training/slurm/cpus"), 0);
const Setting<QString> kMemory(QStringLiteral("training/slurm/mem"), QString());
const Setting<QString> kTime(QStringLiteral("training/slurm/time"), QStringLiteral("1-00:00:00"));
const Setting<QString> kAccount(QStringLiteral("training/slurm/account"), QString());
const Setting<QString> kQos(QStringLiteral("training/slurm/qos"), QString());
const Setting<int> kTasks(QStringLiteral("training/slurm/ntasks"), 1);
const Setting<QString> kExtra(QStringLiteral("training/slurm/extra"), QString());
// The hosts used before, most recent first, each with the fields it was last used with.
const Setting<QVariantList> kHosts(QStringLiteral("training/hosts"), QVariantList());
constexpr int kMaxHosts = 12;

std::vector<std::string> toStd(const QStringList& l) {
  std::vector<std::string> out;
  for (const QString& s : l) out.push_back(s.toStdString());
  return out;
}
}  // namespace

RunTargetBox::RunTargetBox(QWidget* parent) : QGroupBox(tr("Where the run trains"), parent) {
  // Rows that share a line where they belong together (where, then the remote folder and its
  // foveal-cli): the dialog fits a 1280x720 screen with every target (issue 64).
  auto* layout = new QVBoxLayout(this);
  auto* top = new QFormLayout;
  layout->addLayout(top);
  QHBoxLayout* hostRow = addKindRow(top);

  m_sshRows = new QWidget(this);
  auto* ssh = new QFormLayout(m_sshRows);
  ssh->setContentsMargins(0, 0, 0, 0);
  addHostField(hostRow);
  addRemoteRow(ssh);
  addSshFileRow(ssh);
  layout->addWidget(m_sshRows);

  buildSlurmRows();
  layout->addWidget(m_slurmRows);

  buildScriptRow();
  restoreAndConnect();
  updateVisibility();
}

QHBoxLayout* RunTargetBox::addKindRow(QFormLayout* top) {
  auto* kindRow = new QHBoxLayout;
  m_kind = new QComboBox(this);
  m_kind->setObjectName(QStringLiteral("runOn"));
  m_kind->addItems({tr("This machine"), tr("SSH host"), tr("Slurm cluster")});
  kindRow->addWidget(m_kind);
  m_hostRow = new QWidget(this);
  auto* hostRow = new QHBoxLayout(m_hostRow);
  hostRow->setContentsMargins(0, 0, 0, 0);
  kindRow->addWidget(m_hostRow, 1);
  auto* kindLabel = new QLabel(tr("Run &on:"), this);
  kindLabel->setBuddy(m_kind);
  top->addRow(kindLabel, kindRow);
  return hostRow;
}

void RunTargetBox::addHostField(QHBoxLayout* hostRow) {
  m_hostBox = new QComboBox(m_hostRow);
  m_hostBox->setObjectName(QStringLiteral("host"));
  m_hostBox->setEditable(true);
  m_hostBox->setInsertPolicy(QComboBox::NoInsert);
  m_hostBox->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  m_host = m_hostBox->lineEdit();
  m_host->setPlaceholderText(tr("user@host[:port]; empty for a Slurm cluster: sbatch here"));
  m_hostBox->setToolTip(
      tr("ssh logs in with your keys or agent and checks the host key; connect once with ssh "
         "first to accept a new host's key. Hosts used before are in the list, each with the "
         "fields it was last used with."));
  auto* hostLabel = new QLabel(tr("&Host:"), m_hostRow);
  hostLabel->setBuddy(m_hostBox);
  hostRow->addWidget(hostLabel);
  hostRow->addWidget(m_hostBox, 1);
  m_forget = new QToolButton(m_hostRow);
  m_forget->setText(tr("Forget"));
  m_forget->setToolTip(tr("Remove this host and its fields from the list"));
  hostRow->addWidget(m_forget);
}

void RunTargetBox::addRemoteRow(QFormLayout* ssh) {
  auto* remoteRow = new QHBoxLayout;
  m_remoteDir = new QLineEdit(kRemoteDir.value(), m_sshRows);
  m_remoteDir->setToolTip(tr("The run folder there (relative to the home folder)"));
  remoteRow->addWidget(m_remoteDir, 2);
  m_remoteCli = new QLineEdit(kRemoteCli.value(), m_sshRows);
  m_remoteCli->setToolTip(tr("The foveal-cli program there (a name on its PATH, or a path)"));
  auto* cliLabel = new QLabel(tr("foveal-&cli:"), m_sshRows);
  cliLabel->setBuddy(m_remoteCli);
  remoteRow->addWidget(cliLabel);
  remoteRow->addWidget(m_remoteCli, 1);
  auto* remoteLabel = new QLabel(tr("Remote &folder:"), m_sshRows);
  remoteLabel->setBuddy(m_remoteDir);
  ssh->addRow(remoteLabel, remoteRow);
}

void RunTargetBox::addSshFileRow(QFormLayout* ssh) {
  // The CLI's --ssh-config and --ssh-identity: a lab's own ssh_config, a key of its own.
  auto* keyRow = new QHBoxLayout;
  const auto fileField = [this, keyRow](const QString& text, const QString& tip,
                                        const QString& placeholder, QLineEdit** edit) {
    *edit = new QLineEdit(text, m_sshRows);
    (*edit)->setToolTip(tip);
    (*edit)->setPlaceholderText(placeholder);
    auto* browse = new QToolButton(m_sshRows);
    browse->setText(tr("..."));
    browse->setToolTip(tip);
    QLineEdit* e = *edit;
    connect(browse, &QToolButton::clicked, this, [this, e] {
      const QString start =
          e->text().isEmpty() ? QDir::home().filePath(QStringLiteral(".ssh")) : e->text();
      const QString file = QFileDialog::getOpenFileName(this, tr("Choose a file"), start);
      if (!file.isEmpty()) e->setText(file);
    });
    keyRow->addWidget(e, 1);
    keyRow->addWidget(browse);
  };
  fileField(kSshConfig.value(),
            tr("An ssh_config file (ssh -F): the host's name, port, user, keys and known hosts "
               "as your lab sets them; empty: ~/.ssh/config"),
            tr("~/.ssh/config"), &m_sshConfig);
  auto* identityLabel = new QLabel(tr("&Identity:"), m_sshRows);
  keyRow->addWidget(identityLabel);
  fileField(kIdentity.value(),
            tr("A private key (ssh -i), and only it; empty: your agent's or the config's keys"),
            tr("agent's keys"), &m_identity);
  identityLabel->setBuddy(m_identity);
  auto* configLabel = new QLabel(tr("SSH c&onfig:"), m_sshRows);
  configLabel->setBuddy(m_sshConfig);
  ssh->addRow(configLabel, keyRow);
}

void RunTargetBox::buildSlurmRows() {
  m_slurmRows = new QWidget(this);
  auto* slurm = new QFormLayout(m_slurmRows);
  slurm->setContentsMargins(0, 0, 0, 0);
  auto* row1 = new QHBoxLayout;
  m_partition = new QLineEdit(kPartition.value(), m_slurmRows);
  m_partition->setPlaceholderText(tr("the default"));
  m_gpus = new QSpinBox(m_slurmRows);
  m_gpus->setRange(0, 64);
  m_gpus->setValue(kGpus.value());
  m_gpus->setSuffix(tr(" GPUs"));
  m_tasks = new QSpinBox(m_slurmRows);
  m_tasks->setRange(1, 1024);
  m_tasks->setValue(kTasks.value());
  m_tasks->setSuffix(tr(" tasks"));
  m_tasks->setToolTip(tr("Data-parallel processes under srun"));
  m_cpus = new QSpinBox(m_slurmRows);
  m_cpus->setRange(0, 512);
  m_cpus->setValue(kCpus.value());
  m_cpus->setSpecialValueText(tr("default CPUs"));
  m_cpus->setSuffix(tr(" CPUs/task"));
  row1->addWidget(m_partition, 1);
  row1->addWidget(m_gpus);
  row1->addWidget(m_tasks);
  row1->addWidget(m_cpus);
  auto* partitionLabel = new QLabel(tr("&Partition:"), m_slurmRows);
  partitionLabel->setBuddy(m_partition);
  slurm->addRow(partitionLabel, row1);
  auto* row2 = new QHBoxLayout;
  m_memory = new QLineEdit(kMemory.value(), m_slurmRows);
  m_memory->setPlaceholderText(tr("memory, e.g. 16G"));
  m_time = new QLineEdit(kTime.value(), m_slurmRows);
  m_time->setPlaceholderText(tr("time limit"));
  m_account = new QLineEdit(kAccount.value(), m_slurmRows);
  m_account->setPlaceholderText(tr("account"));
  m_qos = new QLineEdit(kQos.value(), m_slurmRows);
  m_qos->setPlaceholderText(tr("QoS"));
  for (auto* e : {m_memory, m_time, m_account, m_qos}) row2->addWidget(e);
  auto* memLabel = new QLabel(tr("&Memory, time:"), m_slurmRows);
  memLabel->setBuddy(m_memory);
  slurm->addRow(memLabel, row2);
  m_extra = new QLineEdit(kExtra.value(), m_slurmRows);
  m_extra->setPlaceholderText(tr("more #SBATCH lines, ';'-separated, e.g. --constraint=a100"));
  slurm->addRow(tr("E&xtra:"), m_extra);
}

void RunTargetBox::buildScriptRow() {
  m_scriptRow = new QWidget(this);
  auto* scriptLayout = new QVBoxLayout(m_scriptRow);
  scriptLayout->setContentsMargins(0, 0, 0, 0);
  auto* scriptHead = new QHBoxLayout;
  scriptHead->addWidget(
      new QLabel(tr("Batch script (submitted as shown; requeued jobs resume by themselves):"),
                 m_scriptRow),
      1);
  auto* copy = new QPushButton(tr("Copy &script"), m_scriptRow);
  connect(copy, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(shownScript()); });
  scriptHead->addWidget(copy);
  scriptLayout->addLayout(scriptHead);
  m_script = new QPlainTextEdit(m_scriptRow);
  m_script->setObjectName(QStringLiteral("batchScript"));
  m_script->setReadOnly(true);
  m_script->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_script->setMinimumHeight(m_script->fontMetrics().height() * 3 + 12);
  scriptLayout->addWidget(m_script);
  // Not in this box's layout: the dialog shows it in a tab beside the command line.
  m_scriptRow->hide();
}

void RunTargetBox::restoreAndConnect() {
  m_kind->setCurrentIndex(std::clamp(kKind.value(), 0, 2));
  m_hostBox->addItems(knownHosts());
  m_host->setText(kHost.value());
  // Choosing a host from the list brings back the fields it was last used with; typing does not.
  connect(m_hostBox, &QComboBox::activated, this, [this](int index) {
    const QVariantList hosts = kHosts.value();
    if (index >= 0 && index < hosts.size()) applyProfile(hosts[index].toMap());
  });
  connect(m_forget, &QToolButton::clicked, this, [this] { forgetHost(m_host->text().trimmed()); });
  connect(m_kind, &QComboBox::currentIndexChanged, this, [this] {
    updateVisibility();
    Q_EMIT changed();
  });
  for (auto* e : {m_host, m_remoteDir, m_remoteCli, m_sshConfig, m_identity, m_partition, m_memory,
                  m_time, m_account, m_qos, m_extra})
    connect(e, &QLineEdit::textChanged, this, &RunTargetBox::changed);
  for (auto* s : {m_gpus, m_cpus, m_tasks})
    connect(s, &QSpinBox::valueChanged, this, &RunTargetBox::changed);
}

RunTargetBox::Kind RunTargetBox::kind() const { return static_cast<Kind>(m_kind->currentIndex()); }

void RunTargetBox::setKind(Kind kind) { m_kind->setCurrentIndex(kind); }

void RunTargetBox::updateVisibility() {
  m_hostRow->setVisible(kind() != ThisMachine);
  m_sshRows->setVisible(kind() != ThisMachine);
  m_slurmRows->setVisible(kind() == Slurm);
}

QString RunTargetBox::target(const QString& localRunDir) const {
  const QString host = m_host->text().trimmed();
  QString remote = m_remoteDir->text().trimmed();
  while (remote.endsWith(QLatin1Char('/')) && remote.size() > 1) remote.chop(1);
  remote += QLatin1Char('/') + QFileInfo(QDir::cleanPath(localRunDir)).fileName();
  switch (kind()) {
    case ThisMachine:
      return {};
    case SshHost:
      return QStringLiteral("ssh://%1/%2").arg(host, remote);
    case Slurm:
      return host.isEmpty() ? QStringLiteral("slurm")
                            : QStringLiteral("slurm://%1/%2").arg(host, remote);
  }
  return {};
}

QStringList RunTargetBox::arguments(const QString& localRunDir) const {
  if (kind() == ThisMachine) return {};
  QStringList a{QStringLiteral("--target"), target(localRunDir)};
  if (!m_remoteCli->text().trimmed().isEmpty() && m_remoteCli->text().trimmed() != "foveal-cli")
    a << QStringLiteral("--remote-cli") << m_remoteCli->text().trimmed();
  if (!m_host->text().trimmed().isEmpty()) {  // "slurm" alone runs sbatch here: no ssh
    if (!m_sshConfig->text().trimmed().isEmpty())
      a << QStringLiteral("--ssh-config") << m_sshConfig->text().trimmed();
    if (!m_identity->text().trimmed().isEmpty())
      a << QStringLiteral("--ssh-identity") << m_identity->text().trimmed();
  }
  if (kind() != Slurm) return a;
  const std::pair<const char*, QLineEdit*> texts[] = {
      {"--slurm-partition", m_partition}, {"--slurm-mem", m_memory}, {"--slurm-time", m_time},
      {"--slurm-account", m_account},     {"--slurm-qos", m_qos},    {"--slurm-extra", m_extra}};
  for (const auto& [flag, edit] : texts)
    if (!edit->text().trimmed().isEmpty()) a << QString::fromLatin1(flag) << edit->text().trimmed();
  if (m_gpus->value() > 0) a << QStringLiteral("--slurm-gpus") << QString::number(m_gpus->value());
  if (m_cpus->value() > 0) a << QStringLiteral("--slurm-cpus") << QString::number(m_cpus->value());
  if (m_tasks->value() > 1)
    a << QStringLiteral("--slurm-ntasks") << QString::number(m_tasks->value());
  return a;
}

QString RunTargetBox::batchScript(const QStringList& trainArguments,
                                  const QString& localRunDir) const {
  if (kind() != Slurm) return {};
  try {
    core::RunTarget t = core::RunTarget::parse(target(localRunDir).toStdString());
    t.remoteCli = m_remoteCli->text().trimmed().toStdString();
    if (!t.mirrored())
      t.remoteDir = QDir::cleanPath(QFileInfo(localRunDir).absoluteFilePath()).toStdString();
    auto& s = t.slurm;
    s.partition = m_partition->text().trimmed().toStdString();
    s.gpus = m_gpus->value();
    s.cpusPerTask = m_cpus->value();
    s.ntasks = m_tasks->value();
    s.memory = m_memory->text().trimmed().toStdString();
    s.time = m_time->text().trimmed().toStdString();
    s.account = m_account->text().trimmed().toStdString();
    s.qos = m_qos->text().trimmed().toStdString();
    for (const QString& line : m_extra->text().split(QLatin1Char(';'), Qt::SkipEmptyParts))
      s.extra.push_back(line.trimmed().toStdString());
    return QString::fromStdString(t.batchScript(toStd(trainArguments)));
  } catch (const core::Error& e) {
    return tr("# cannot write the script: %1").arg(QString::fromStdString(e.what()));
  }
}

void RunTargetBox::showScript(const QStringList& trainArguments, const QString& localRunDir) {
  m_script->setPlainText(batchScript(trainArguments, localRunDir));
}

QString RunTargetBox::shownScript() const { return m_script->toPlainText(); }

QStringList RunTargetBox::knownHosts() {
  QStringList out;
  for (const QVariant& v : kHosts.value())
    out << v.toMap().value(QStringLiteral("host")).toString();
  return out;
}

QVariantMap RunTargetBox::profile() const {
  return {{QStringLiteral("host"), m_host->text().trimmed()},
          {QStringLiteral("kind"), m_kind->currentIndex()},
          {QStringLiteral("remoteDir"), m_remoteDir->text().trimmed()},
          {QStringLiteral("remoteCli"), m_remoteCli->text().trimmed()},
          {QStringLiteral("sshConfig"), m_sshConfig->text().trimmed()},
          {QStringLiteral("identity"), m_identity->text().trimmed()},
          {QStringLiteral("partition"), m_partition->text().trimmed()},
          {QStringLiteral("gpus"), m_gpus->value()},
          {QStringLiteral("cpus"), m_cpus->value()},
          {QStringLiteral("ntasks"), m_tasks->value()},
          {QStringLiteral("mem"), m_memory->text().trimmed()},
          {QStringLiteral("time"), m_time->text().trimmed()},
          {QStringLiteral("account"), m_account->text().trimmed()},
          {QStringLiteral("qos"), m_qos->text().trimmed()},
          {QStringLiteral("extra"), m_extra->text().trimmed()}};
}

void RunTargetBox::applyProfile(const QVariantMap& p) {
  const auto text = [&p](const char* key, QLineEdit* edit) {
    if (p.contains(QLatin1String(key))) edit->setText(p.value(QLatin1String(key)).toString());
  };
  const auto number = [&p](const char* key, QSpinBox* box) {
    if (p.contains(QLatin1String(key))) box->setValue(p.value(QLatin1String(key)).toInt());
  };
  if (p.contains(QStringLiteral("kind")))
    m_kind->setCurrentIndex(std::clamp(p.value(QStringLiteral("kind")).toInt(), 1, 2));
  text("host", m_host);
  text("remoteDir", m_remoteDir);
  text("remoteCli", m_remoteCli);
  // A host saved before these fields existed uses ssh's own configuration.
  m_sshConfig->setText(p.value(QStringLiteral("sshConfig")).toString());
  m_identity->setText(p.value(QStringLiteral("identity")).toString());
  text("partition", m_partition);
  text("mem", m_memory);
  text("time", m_time);
  text("account", m_account);
  text("qos", m_qos);
  text("extra", m_extra);
  number("gpus", m_gpus);
  number("cpus", m_cpus);
  number("ntasks", m_tasks);
}

void RunTargetBox::forgetHost(const QString& host) {
  QVariantList hosts = kHosts.value();
  for (int i = static_cast<int>(hosts.size()) - 1; i >= 0; --i)
    if (hosts[i].toMap().value(QStringLiteral("host")).toString() == host) hosts.removeAt(i);
  kHosts.set(hosts);
  const QString typed = m_host->text();
  m_hostBox->clear();
  m_hostBox->addItems(knownHosts());
  m_host->setText(typed == host ? QString() : typed);
}

void RunTargetBox::saveSettings() const {
  kKind.set(m_kind->currentIndex());
  kHost.set(m_host->text().trimmed());
  kRemoteDir.set(m_remoteDir->text().trimmed());
  kRemoteCli.set(m_remoteCli->text().trimmed());
  kSshConfig.set(m_sshConfig->text().trimmed());
  kIdentity.set(m_identity->text().trimmed());
  kPartition.set(m_partition->text().trimmed());
  kGpus.set(m_gpus->value());
  kCpus.set(m_cpus->value());
  kMemory.set(m_memory->text().trimmed());
  kTime.set(m_time->text().trimmed());
  kAccount.set(m_account->text().trimmed());
  kQos.set(m_qos->text().trimmed());
  kTasks.set(m_tasks->value());
  kExtra.set(m_extra->text().trimmed());
  const QString host = m_host->text().trimmed();
  if (kind() == ThisMachine || host.isEmpty()) return;
  QVariantList hosts = kHosts.value();
  for (int i = static_cast<int>(hosts.size()) - 1; i >= 0; --i)
    if (hosts[i].toMap().value(QStringLiteral("host")).toString() == host) hosts.removeAt(i);
  hosts.prepend(profile());
  while (hosts.size() > kMaxHosts) hosts.removeLast();
  kHosts.set(hosts);
}

}  // namespace foveal::ui
