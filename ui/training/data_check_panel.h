#pragma once
// The New-run dialog's data check (issue 37, item 7): what the run would see of its training
// data with the model the dialog describes (preset, width, stages): entries, how many it would
// drop and why, the histograms behind a Details button. Read off the GUI thread, again whenever
// the run's settings change; a newer check supersedes one still reading. It says when nothing
// usable remains, and the dialog refuses to start then.
#include <QFutureWatcher>
#include <QString>
#include <QWidget>
#include <atomic>
#include <memory>

#include "run_launcher.h"

class QLabel;
class QPlainTextEdit;
class QTimer;
class QToolButton;

namespace foveal::ui {

/// What a data check found (value type: it crosses from the pool thread).
struct DataCheckOutcome {
  bool ok = false;       ///< the check ran (false: `error` says why it could not)
  size_t usable = 0;     ///< entries the run would train on, over every training set
  size_t entries = 0;    ///< entries read
  bool partial = false;  ///< only the first entries of a large or endless set were read
  QString summary;       ///< one line per training set
  QString details;       ///< the full reports
  QString error;
};

/// Runs the check of `spec` (its preset's training data when it names none); `limit` entries
/// per set at most (an endless generator has no end). Throws nothing: errors are in the outcome.
DataCheckOutcome checkLaunchData(const LaunchSpec& spec, size_t limit,
                                 const std::atomic<bool>* cancel = nullptr);

class DataCheckPanel : public QWidget {
  Q_OBJECT
 public:
  enum class State { Idle, Checking, Usable, NothingUsable, Failed };
  explicit DataCheckPanel(QWidget* parent = nullptr);
  ~DataCheckPanel() override;

  /// Checks `spec`'s training data after a short pause (typing in the data field restarts it).
  void check(const LaunchSpec& spec);
  /// No check (the data lies on another host): says why, refuses nothing.
  void skip(const QString& why);
  State state() const { return m_state; }
  QString summaryText() const;
  QString detailsText() const;
  /// Entries read per training set (the first ones of a larger set): a quick look before a run;
  /// `foveal-cli data check` reads them all.
  static constexpr size_t kLimit = 2000;

 Q_SIGNALS:
  void stateChanged(State state);

 private:
  void start();
  void finished();
  void setState(State state);

  LaunchSpec m_spec;
  QTimer* m_delay;
  QLabel* m_summary;
  QToolButton* m_toggle;
  QPlainTextEdit* m_details;
  QFutureWatcher<DataCheckOutcome> m_watcher;
  std::shared_ptr<std::atomic<bool>> m_cancel;
  bool m_again = false;  ///< the settings changed while a check was reading
  State m_state = State::Idle;
};

}  // namespace foveal::ui
