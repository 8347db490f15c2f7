#pragma once
// The dialog that sets up a training run: preset, model width, datasets, iterations, batch size,
// device (CPU, one CUDA device, or several GPUs as separate ranks), seed and run folder. It shows
// the exact command line it will run, kept up to date and copyable, so the same run can be
// started by hand on a GPU server.
#include <QDialog>

#include "run_launcher.h"

class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProcess;
class QPushButton;
class QScrollArea;
class QTabWidget;
class QCheckBox;
class QSpinBox;

namespace foveal::ui {

class DataCheckPanel;
class RunTargetBox;

class TrainingLaunchDialog : public QDialog {
  Q_OBJECT
 public:
  /// `cli` is the foveal-cli the page runs (its presets fill the list; "" keeps the built-in
  /// names); `runsRoot` is where a new run folder is proposed.
  TrainingLaunchDialog(const QString& cli, const QString& runsRoot, QWidget* parent = nullptr);
  ~TrainingLaunchDialog() override;

  LaunchSpec spec() const;
  void setSpec(const LaunchSpec& spec);
  QString commandLine() const;
  RunTargetBox* targetBox() const { return m_target; }
  /// What the run would see of its training data; Start is refused while nothing is usable.
  DataCheckPanel* dataCheck() const { return m_check; }
  QPushButton* startButton() const { return m_start; }
  QStringList presets() const;
  /// The settings' scroll area and the pane with the command line and (Slurm) the batch script.
  QScrollArea* settingsArea() const { return m_scroll; }
  QTabWidget* commandTabs() const { return m_outputTabs; }
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void updateCommand();
  void loadPresets();
  void proposeRunDir();
  /// Sizes the dialog to its settings, within the screen it is on.
  void fitToScreen();
  /// The Slurm job's GPUs from the device: 0 for CPU, 1 for one CUDA device, N for N GPUs.
  void suggestJobGpus();
  /// The room the settings' vertical scroll bar takes.
  int scrollBarWidth() const;
  /// The settings' rows, in the form's order: the preset, the stages, the width and seed.
  void addModelRows(QFormLayout* form);
  /// A box per stage (the preset's first), in a grid of two rows.
  void addStageRow(QFormLayout* form);
  /// The data, the run's length and evaluations, the device, the skip-ended-rows box.
  void addTrainingRows(QFormLayout* form);
  /// The run folder, typed or chosen.
  void addRunDirRow(QFormLayout* form);
  /// The command line and the batch script, in tabs under the settings.
  QTabWidget* buildOutputTabs();
  /// Cancel and Start (refused while nothing in the data is usable).
  QDialogButtonBox* buildButtons();
  /// Every setting updates the command line as it changes.
  void connectSettings();

  QString m_cli;
  QString m_runsRoot;
  bool m_dirEdited = false;
  QComboBox* m_preset;
  QDoubleSpinBox* m_width;
  QLineEdit* m_data;
  QLineEdit* m_evalData;
  QSpinBox* m_iterations;
  QSpinBox* m_batch;
  QSpinBox* m_evalInterval;
  QComboBox* m_device;
  QSpinBox* m_cudaIndex;
  QSpinBox* m_gpus;
  QSpinBox* m_threads;
  QSpinBox* m_seed;
  QCheckBox* m_skipEnded;
  /// Stage overrides (first item: the preset's), from core's stage registry.
  QComboBox* m_transformation;
  QComboBox* m_features;
  QComboBox* m_sequence;
  QComboBox* m_prediction;
  QComboBox* m_cell;
  QComboBox* m_glimpse;
  QComboBox* m_projection;
  QLineEdit* m_runDir;
  RunTargetBox* m_target;
  QScrollArea* m_scroll = nullptr;
  QTabWidget* m_outputTabs = nullptr;
  QPlainTextEdit* m_command;
  QLabel* m_note;
  DataCheckPanel* m_check;
  QPushButton* m_start = nullptr;
  QProcess* m_presetProcess = nullptr;
};

}  // namespace foveal::ui
