#pragma once
// Other trainers' run folders on SSH hosts and Slurm login hosts, mirrored into local folders
// while the Training page follows them (issue 72, item 2): every few seconds each folder gets one
// pass of core::RemoteRun::mirror() on a worker thread (never two at once for a folder): the
// trainer's logs by their new bytes, each checkpoint once it is complete. Foveal's own remote runs
// are mirrored by their `foveal-cli runs follow` process instead (run_launcher.h).
//
// attachRemoteFolder() makes the local mirror's description (remote.json); the dialog asks for
// the folder there, the SSH settings and the local folder.
#include <QDialog>
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <map>
#include <memory>

class QLineEdit;

namespace foveal::ui {

/// What one pass did, for the page.
struct MirrorPass {
  QString dir;
  bool ok = true;
  QString error;
  QStringList files;    ///< changed here
  QStringList skipped;  ///< "NAME: why"
  qint64 bytes = 0;
};

class RemoteMirrors : public QObject {
  Q_OBJECT
 public:
  explicit RemoteMirrors(QObject* parent = nullptr);
  /// Waits for the passes running.
  ~RemoteMirrors() override;

  /// The local folders to mirror (folders no longer listed stop after their pass).
  void setFolders(const QStringList& dirs);
  QStringList folders() const { return m_dirs; }
  void setInterval(int ms) { m_timer.setInterval(ms); }
  /// Seconds a checkpoint must keep its size before it is copied (RemoteRun::setSettleSeconds).
  void setSettleSeconds(double s) { m_settle = s; }
  /// Starts a pass for every folder that has none running (the timer does this).
  void mirrorNow();
  int passes() const { return m_passes; }
  bool isBusy(const QString& dir) const;

 Q_SIGNALS:
  void mirrored(const MirrorPass& pass);

 private:
  QStringList m_dirs;
  QTimer m_timer;
  double m_settle = 2;
  int m_passes = 0;
  std::map<QString, std::unique_ptr<QFutureWatcher<MirrorPass>>> m_running;
};

/// Makes `localDir` the mirror of another trainer's folder `target` ("ssh://[user@]host[:port]/DIR"
/// or "slurm://login/DIR") with the SSH settings given (empty: ssh's own). False with a message
/// naming the problem (a bad target, a folder that already holds a run).
bool attachRemoteFolder(const QString& target, const QString& sshConfig, const QString& identity,
                        const QString& localDir, QString* error);

/// Asks for another trainer's run folder on an SSH host (or a cluster's login host), the SSH
/// settings and the local folder that mirrors it.
class RemoteFolderDialog : public QDialog {
  Q_OBJECT
 public:
  RemoteFolderDialog(const QString& runsRoot, QWidget* parent = nullptr);
  QString target() const;
  QString sshConfig() const;
  QString identity() const;
  QString localDir() const;

 private:
  QLineEdit* m_target;
  QLineEdit* m_config;
  QLineEdit* m_identity;
  QLineEdit* m_local;
  QString m_root;
  bool m_localEdited = false;
};

}  // namespace foveal::ui
