#include "remote_mirrors.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "run/remote_run.h"
#include "run/run_target.h"

namespace foveal::ui {

namespace {
constexpr int kDefaultIntervalMs = 5000;

MirrorPass runPass(const QString& dir, double settle) {
  MirrorPass p;
  p.dir = dir;
  try {
    auto run = core::RemoteRun::open(dir.toStdString());
    run.setSettleSeconds(settle);
    const core::MirrorResult r = run.mirror();
    p.ok = r.ok;
    p.error = QString::fromStdString(r.error);
    for (const auto& f : r.files) p.files << QString::fromStdString(f);
    for (const auto& s : r.skipped) p.skipped << QString::fromStdString(s);
    p.bytes = qint64(r.bytes);
  } catch (const std::exception& e) {
    p.ok = false;
    p.error = QString::fromStdString(e.what());
  }
  return p;
}
}  // namespace

RemoteMirrors::RemoteMirrors(QObject* parent) : QObject(parent) {
  m_timer.setInterval(kDefaultIntervalMs);
  connect(&m_timer, &QTimer::timeout, this, &RemoteMirrors::mirrorNow);
}

RemoteMirrors::~RemoteMirrors() {
  for (auto& [dir, w] : m_running) w->waitForFinished();
}

void RemoteMirrors::setFolders(const QStringList& dirs) {
  const bool first = m_dirs.isEmpty() && !dirs.isEmpty();
  m_dirs = dirs;
  if (m_dirs.isEmpty()) {
    m_timer.stop();
    return;
  }
  if (!m_timer.isActive()) m_timer.start();
  if (first) mirrorNow();
}

bool RemoteMirrors::isBusy(const QString& dir) const {
  const auto it = m_running.find(dir);
  return it != m_running.end() && it->second->isRunning();
}

void RemoteMirrors::mirrorNow() {
  for (const QString& dir : m_dirs) {
    if (isBusy(dir)) continue;
    auto& w = m_running[dir];
    if (!w) {
      w = std::make_unique<QFutureWatcher<MirrorPass>>();
      auto* watcher = w.get();
      connect(watcher, &QFutureWatcher<MirrorPass>::finished, this, [this, watcher] {
        if (watcher->future().resultCount() == 0) return;
        ++m_passes;
        Q_EMIT mirrored(watcher->result());
      });
    }
    const double settle = m_settle;
    w->setFuture(QtConcurrent::run([dir, settle] { return runPass(dir, settle); }));
  }
}

bool attachRemoteFolder(const QString& target, const QString& sshConfig, const QString& identity,
                        const QString& localDir, QString* error) {
  try {
    core::RunTarget t = core::RunTarget::parse(target.trimmed().toStdString());
    if (!sshConfig.trimmed().isEmpty()) t.host.configFile = sshConfig.trimmed().toStdString();
    if (!identity.trimmed().isEmpty()) t.host.identityFile = identity.trimmed().toStdString();
    core::RemoteRun::attach(QDir::cleanPath(QFileInfo(localDir).absoluteFilePath()).toStdString(),
                            t);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

RemoteFolderDialog::RemoteFolderDialog(const QString& runsRoot, QWidget* parent)
    : QDialog(parent), m_root(runsRoot) {
  setWindowTitle(tr("Follow a run folder on another machine"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(
      tr("Another trainer's run folder (deep-text-recognition-benchmark, strhub, MMOCR, "
         "PaddleOCR, kraken...) on an SSH host or a cluster's login host. Its logs and each "
         "complete checkpoint are copied into the local folder as they appear; nothing is "
         "started there."),
      this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* form = new QFormLayout;
  m_target = new QLineEdit(this);
  m_target->setPlaceholderText(QStringLiteral("ssh://me@gpu-server/saved_models/TPS-ResNet"));
  m_target->setToolTip(
      tr("ssh://[user@]host[:port]/DIR (DIR relative to the home folder; "
         "//DIR absolute), or slurm://login/DIR"));
  m_config = new QLineEdit(this);
  m_config->setPlaceholderText(tr("ssh's own (~/.ssh/config)"));
  m_identity = new QLineEdit(this);
  m_identity->setPlaceholderText(tr("the agent's or the config's"));
  m_local = new QLineEdit(this);
  form->addRow(tr("Folder &there:"), m_target);
  form->addRow(tr("SSH &config:"), m_config);
  form->addRow(tr("&Identity:"), m_identity);
  form->addRow(tr("&Mirror here:"), m_local);
  layout->addLayout(form);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(m_local, &QLineEdit::textEdited, this, [this] { m_localEdited = true; });
  connect(m_target, &QLineEdit::textChanged, this, [this](const QString& text) {
    if (m_localEdited) return;
    // The mirror's default name: the folder's own, in the runs folder.
    QString name = text.section(QLatin1Char('/'), -1, -1, QString::SectionSkipEmpty);
    if (name.isEmpty() || name.contains(QLatin1Char(':'))) name = QStringLiteral("remote-run");
    m_local->setText(QDir(m_root).filePath(name));
  });
  resize(560, sizeHint().height());
}

QString RemoteFolderDialog::target() const { return m_target->text().trimmed(); }
QString RemoteFolderDialog::sshConfig() const { return m_config->text().trimmed(); }
QString RemoteFolderDialog::identity() const { return m_identity->text().trimmed(); }
QString RemoteFolderDialog::localDir() const { return m_local->text().trimmed(); }

}  // namespace foveal::ui
