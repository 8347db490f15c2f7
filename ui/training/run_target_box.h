#pragma once
// "Run on" in the New-run dialog: this machine, an SSH host, or a Slurm cluster (sbatch here, or
// through a login host), with the Slurm job's requests. It turns into `foveal-cli train
// --target ...` options and, for Slurm, shows the batch script that will be submitted, copyable.
// The hosts and their defaults (an ssh_config file and an identity among them) are kept in the
// settings; passwords are never asked for (ssh runs in batch mode with keys or an agent,
// core/run/remote_shell.h).
#include <QGroupBox>
#include <QStringList>
#include <QVariantMap>

class QComboBox;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;
class QToolButton;

namespace foveal::ui {

class RunTargetBox : public QGroupBox {
  Q_OBJECT
 public:
  enum Kind { ThisMachine, SshHost, Slurm };
  explicit RunTargetBox(QWidget* parent = nullptr);

  Kind kind() const;
  void setKind(Kind kind);
  /// The --target text ("" for this machine) for the run whose local folder is `localRunDir`:
  /// the remote folder field names the parent, the run keeps the local folder's name there
  /// ("slurm://me@login:22/foveal-runs/digits-soft-20260101").
  QString target(const QString& localRunDir) const;
  /// The options `foveal-cli train` takes for this target (empty for this machine).
  QStringList arguments(const QString& localRunDir) const;
  /// The batch script for `trainArguments` (Slurm only; "" otherwise), or the reason it cannot
  /// be written (a bad host or option).
  QString batchScript(const QStringList& trainArguments, const QString& localRunDir) const;
  /// Updates the shown script for these training arguments.
  void showScript(const QStringList& trainArguments, const QString& localRunDir);
  QString shownScript() const;
  /// The batch script's view and its Copy button, in no layout of this box (hidden until placed):
  /// the dialog shows it in a tab of its own, where it does not make the dialog taller.
  QWidget* scriptPane() const { return m_scriptRow; }
  /// Remembers the fields for the next dialog, and puts the host first in the hosts list with
  /// the fields it was used with (at most 12 hosts are kept).
  void saveSettings() const;
  /// The hosts used before, most recent first (the host list's entries).
  static QStringList knownHosts();
  /// The fields as saved for a host, and back; choosing a listed host applies its profile.
  QVariantMap profile() const;
  void applyProfile(const QVariantMap& profile);
  /// Removes `host` and its fields from the list.
  void forgetHost(const QString& host);
  QComboBox* hostBox() const { return m_hostBox; }

  QLineEdit* hostEdit() const { return m_host; }
  QLineEdit* remoteDirEdit() const { return m_remoteDir; }
  /// --ssh-config and --ssh-identity, kept with each host.
  QLineEdit* sshConfigEdit() const { return m_sshConfig; }
  QLineEdit* identityEdit() const { return m_identity; }
  QSpinBox* gpusBox() const { return m_gpus; }
  QLineEdit* partitionEdit() const { return m_partition; }

 Q_SIGNALS:
  void changed();

 private:
  /// The box's rows, in its order: "Run on" with the host row beside it (returned); the host
  /// box and Forget in it; the remote folder and foveal-cli; the ssh_config and key files.
  QHBoxLayout* addKindRow(QFormLayout* top);
  void addHostField(QHBoxLayout* hostRow);
  void addRemoteRow(QFormLayout* ssh);
  void addSshFileRow(QFormLayout* ssh);
  /// The Slurm job's rows (partition, GPUs, tasks, CPUs; memory, time, account, QoS; extra).
  void buildSlurmRows();
  /// The batch script and its Copy button, shown by the dialog in a tab of its own.
  void buildScriptRow();
  /// The fields as last used, and the signals that say they changed.
  void restoreAndConnect();
  void updateVisibility();

  QComboBox* m_kind;
  QComboBox* m_hostBox;
  QLineEdit* m_host;  // the host box's line edit
  QToolButton* m_forget;
  QWidget* m_hostRow;  // "Host:", the host box and Forget, beside "Run on"
  QLineEdit* m_remoteDir;
  QLineEdit* m_remoteCli;
  QLineEdit* m_sshConfig;
  QLineEdit* m_identity;
  QLineEdit* m_partition;
  QSpinBox* m_gpus;
  QSpinBox* m_cpus;
  QLineEdit* m_memory;
  QLineEdit* m_time;
  QLineEdit* m_account;
  QLineEdit* m_qos;
  QSpinBox* m_tasks;
  QLineEdit* m_extra;
  QWidget* m_sshRows;
  QWidget* m_slurmRows;
  QPlainTextEdit* m_script;
  QWidget* m_scriptRow;
};

}  // namespace foveal::ui
