#pragma once
// Evaluates a checkpoint from the Training page: runs `foveal-cli eval --json --failures FILE`
// (or `--digit-protocol`, the paper's Table 1) as a separate process, shows the results table
// and the misread images; double-clicking one asks for it to be opened in the inspector.
#include <QImage>
#include <QTemporaryDir>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProcess;
class QPushButton;
class QSpinBox;
class QTableView;

namespace foveal::ui {

class EvalResultModel;
class FailureModel;

class EvaluationPanel : public QWidget {
  Q_OBJECT
 public:
  explicit EvaluationPanel(QWidget* parent = nullptr);
  ~EvaluationPanel() override;

  void setProgram(const QString& cli) { m_cli = cli; }
  /// Offers the checkpoints of a run folder (best.fvm, latest.fvm) and its evaluation sets.
  void setRun(const QString& runDir, const QStringList& evalSets);
  void setCheckpoint(const QString& path);
  QString checkpoint() const;
  void setDataset(const QString& spec);
  void setDigitProtocol(bool on);
  void setLimit(int images);
  /// Decoding of the next evaluation: 1 greedy, more a beam search of that width.
  void setBeamWidth(int width);
  int beamWidth() const;

  /// Starts the evaluation; false (and failed()) when it cannot start.
  bool evaluate();
  bool isRunning() const;
  /// Opens failure `row` (emits failureChosen, or failed when the image cannot be read).
  void chooseFailure(int row);

  EvalResultModel* results() const { return m_results; }
  FailureModel* failures() const { return m_failures; }
  QString statusText() const;

 Q_SIGNALS:
  void finished(bool ok);
  void failed(const QString& message);
  /// `beamWidth`: the decoding the evaluation used (1 greedy), so that the inspector reads the
  /// image as the evaluation did.
  void failureChosen(const QImage& image, const QString& source, const QString& truth,
                     const QString& model, int beamWidth);

 private:
  void onFinished(int code);

  QString m_cli;
  QString m_runningModel;
  bool m_runningProtocol = false;
  bool m_noCheckpointNote = false;  ///< the status says the shown run has no checkpoint
  QComboBox* m_checkpoint;
  QLineEdit* m_dataset;
  QCheckBox* m_protocol;
  QSpinBox* m_limit;
  QSpinBox* m_beam;
  int m_runningBeam = 1;
  QPushButton* m_run;
  QPushButton* m_cancel;
  QLabel* m_status;
  QTableView* m_resultView;
  QTableView* m_failureView;
  EvalResultModel* m_results;
  FailureModel* m_failures;
  QProcess* m_process = nullptr;
  QTemporaryDir m_tmp;
};

}  // namespace foveal::ui
