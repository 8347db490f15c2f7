#pragma once
// The Training page: the runs list (launched here, or run folders added from disk or synced from
// a GPU server), live curves of their metrics overlaid in distinct colours, a live preview of the
// selected run's latest checkpoint, its process output, and the evaluation of a checkpoint.
// Folders are watched (QFileSystemWatcher, plus a 1 s poll for synced folders, where change
// notifications do not arrive) and every change is coalesced into one refresh ~40 ms later.
// Another trainer's run folder (DTRB, strhub, MMOCR, PaddleOCR...; issue 72) is followed the same
// way, here or mirrored from an SSH host (RemoteMirrors): its curves beside Foveal's runs, and
// its checkpoints read on the run's probe set as they appear (the Probes tab, ProbeFilmstrip).
#include <QImage>
#include <QTimer>
#include <QWidget>
#include <map>
#include <string>

#include "page.h"
#include "run_launcher.h"

class QAction;
class QCheckBox;
class QComboBox;
class QFileSystemWatcher;
class QGridLayout;
class QGroupBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSlider;
class QSplitter;
class QTableView;
class QTabWidget;
class QToolButton;
class QVBoxLayout;

namespace foveal::ui {

class EvaluationPanel;
class LivePreview;
class MetricsPlot;
class ProbeFilmstrip;
class RemoteMirrors;
struct MirrorPass;
class RunListModel;
class RunSettingsModel;

class TrainingPage : public QWidget, public Page {
  Q_OBJECT
 public:
  explicit TrainingPage(QWidget* parent = nullptr);
  ~TrainingPage() override;

  /// No toolbar and no docks: the runs and their curves take the whole window.
  QWidget* widget() override { return this; }
  QString title() const override { return tr("&Training"); }
  /// Asks whether to quit while runs started here are still training (they stop after a
  /// checkpoint and can be resumed).
  bool confirmClose() override;

  /// Follows a run folder (it may not exist yet); selects it. Returns its row.
  int addRunFolder(const QString& dir);
  /// Follows another trainer's run folder on an SSH host or a cluster's login host (`target`
  /// "ssh://[user@]host[:port]/DIR" or "slurm://login/DIR"), mirrored into `localDir`; selects it.
  /// Returns its row, or -1 with a message (failed() too).
  int addRemoteFolder(const QString& target, const QString& sshConfig, const QString& identity,
                      const QString& localDir, QString* error = nullptr);
  /// Asks for such a folder ("Follow remote...").
  void addRemoteFolderDialog();
  /// The bundled sample runs: on a first start (no run list saved yet) or when the saved list
  /// is empty, follows every subfolder of `runsFolder` holding a metrics.jsonl (in name order)
  /// and selects the first. Returns how many were added; 0 when the user already has runs.
  int addSampleRuns(const QString& runsFolder);
  /// Writes the curves as shown (the ticked runs, the chosen panels) to `path` (.png, .pdf or
  /// .svg) at `size` (default: the plot's size on screen). False with a message naming the file.
  bool exportCurves(const QString& path, QSize size = {}, QString* error = nullptr);
  /// Asks for a file and exports the curves into it (errors go to failed()).
  void exportCurvesDialog();
  /// "Export Curves..." (Ctrl+Shift+C); the window adds it to its File menu.
  QAction* exportCurvesAction() const { return m_exportAction; }
  void removeRun(int row);
  /// Starts a run as the dialog would; false (and failed()) when it cannot start.
  bool launch(const LaunchSpec& spec);
  bool stopRun(int row);
  bool resumeRun(int row);
  void selectRun(int row);
  int currentRun() const;
  /// Opens the launch dialog.
  void newRun();
  /// Shows or hides the bundled sample runs' curves (the runs stay listed).
  void showSampleRuns(bool on);
  bool isSampleRun(int row) const;
  /// Fits the iteration axis to a run (its planned length when it is still going).
  void zoomToRun(int row);
  /// Reads every folder now (normally coalesced from watcher and poll events).
  void refreshNow();
  /// Seconds without any write after which a run that has not finished is called stale.
  void setStaleAfter(double seconds);
  void setPollInterval(int ms);
  /// The foveal-cli that launches and evaluates (default: the one next to this program).
  void setProgram(const QString& cli);

  RunListModel* runs() const { return m_runs; }
  /// The settings that differ between the ticked runs (the Settings tab beside the runs list).
  RunSettingsModel* settings() const { return m_settings; }
  QTableView* settingsView() const { return m_settingsView; }
  MetricsPlot* plot() const { return m_plot; }
  RunLauncher* launcher() const { return m_launcher; }
  EvaluationPanel* evaluation() const { return m_eval; }
  LivePreview* preview() const { return m_preview; }
  ProbeFilmstrip* filmstrip() const { return m_filmstrip; }
  RemoteMirrors* mirrors() const { return m_mirrors; }
  QTabWidget* bottomTabs() const { return m_bottomTabs; }
  QTableView* runView() const { return m_view; }
  QPushButton* resumeButton() const { return m_resume; }
  QString detailText() const;
  int refreshCount() const { return m_refreshes; }

 Q_SIGNALS:
  /// Something the user should read in the window's banner.
  void failed(const QString& message);
  /// A line for the status bar.
  void message(const QString& text);
  /// A misread image, to open in the inspector with `model`, decoded as the evaluation did.
  void failureChosen(const QImage& image, const QString& source, const QString& truth,
                     const QString& model, int beamWidth);

 private:
  /// When run `row` started (Unix seconds; NaN unknown): its config.json's time.
  double runStartedAt(int row) const;
  void buildLayout();
  /// The layout's sections: the run buttons; the runs and their differing settings, with the
  /// selected run's details; the metric check boxes and "More" (returns the cells they fill);
  /// the curves' options under them; the curves over the bottom tabs, and their connections.
  QGridLayout* buildRunButtons(QWidget* left);
  void addRunTables(QWidget* left, QVBoxLayout* ll);
  int addMetricChoices(QGroupBox* metricsBox, QGridLayout* grid);
  void addCurveControls(QGroupBox* metricsBox, QGridLayout* grid, int i);
  QSplitter* buildRightPane(QSplitter* split);
  void connectRightPane();
  void scheduleRefresh();
  void updatePlotRuns();
  void updateWatchedPaths();
  void updateSelection();
  void saveRunList() const;
  /// Starts following the runs on other machines whose job changed outside the window.
  void followRemoteJobs();
  /// The panels other trainers' runs bring (their tags, the probe accuracy), offered in "More".
  void updateExtraMetrics();
  /// Mirrors the other trainers' folders on other machines that the list holds.
  void updateMirrors();
  void onMirrored(const MirrorPass& pass);

  RunListModel* m_runs;
  RunLauncher* m_launcher;
  QFileSystemWatcher* m_fsWatcher;
  QTimer m_coalesce;
  QTimer m_poll;
  int m_refreshes = 0;
  QString m_shownRun;  ///< the run whose output and checkpoints are shown
  bool m_shownHasCheckpoint = false;
  /// Run folder -> the job its remote.json named when last looked at.
  std::map<QString, std::string> m_remoteJobs;

  QTableView* m_view = nullptr;
  MetricsPlot* m_plot = nullptr;
  LivePreview* m_preview = nullptr;
  EvaluationPanel* m_eval = nullptr;
  QPlainTextEdit* m_output = nullptr;
  QLabel* m_detail = nullptr;
  QPushButton* m_stop = nullptr;
  QPushButton* m_resume = nullptr;
  QSlider* m_smoothing = nullptr;
  QCheckBox* m_log = nullptr;
  QCheckBox* m_samples = nullptr;
  RunSettingsModel* m_settings = nullptr;
  QTableView* m_settingsView = nullptr;
  QComboBox* m_xAxis = nullptr;
  QAction* m_exportAction = nullptr;
  ProbeFilmstrip* m_filmstrip = nullptr;
  RemoteMirrors* m_mirrors = nullptr;
  QTabWidget* m_bottomTabs = nullptr;
  QToolButton* m_moreCurves = nullptr;
  bool m_showedProbesFor = false;  ///< the Probes tab was brought up for the run shown
};

}  // namespace foveal::ui
