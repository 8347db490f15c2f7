#pragma once
// The step panel's deletion curve (RISE, core/trace/faithfulness.h): the step token's probability,
// teacher-forced, against the fraction of the source pixels turned mid-grey in the shown map's
// order (largest first), with its area. A faithful map drops the curve early (a small area).
#include <QString>
#include <QWidget>
#include <vector>

class QCustomPlot;
class QCPGraph;
class QLabel;

namespace foveal::ui {

class DeletionPlot : public QWidget {
  Q_OBJECT
 public:
  explicit DeletionPlot(QWidget* parent = nullptr);

  /// The curve of `mapLabel` ("Attention", "Integrated gradients", ...): p(token) at fractions
  /// 0, 1/(n-1), ..., 1, and its area.
  void setCurve(const QString& mapLabel, const std::vector<double>& curve, double auc);
  /// No curve: `message` says why ("computing...", an error), empty for none.
  void clearCurve(const QString& message = {});

  QCustomPlot* plot() const { return m_plot; }
  std::vector<double> values() const;  ///< the curve drawn (tests)
  QString caption() const;             ///< the title shown above it (tests)

 private:
  QCustomPlot* m_plot;
  QCPGraph* m_graph;
  QLabel* m_caption;
};

}  // namespace foveal::ui
