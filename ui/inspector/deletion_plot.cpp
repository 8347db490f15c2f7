#include "deletion_plot.h"

#include <QLabel>
#include <QVBoxLayout>

#include "qcustomplot_include.h"

namespace foveal::ui {

DeletionPlot::DeletionPlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_caption = new QLabel(this);
  m_caption->setWordWrap(true);
  layout->addWidget(m_caption);
  layout->addWidget(m_plot);
  m_graph = m_plot->addGraph();
  m_graph->setPen(QPen(QColor(59, 82, 139), 2));
  m_graph->setBrush(QColor(59, 82, 139, 50));  // the area under the curve
  m_graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
  m_plot->xAxis->setLabel(tr("fraction of pixels deleted"));
  m_plot->yAxis->setLabel(tr("p(token)"));
  m_plot->xAxis->setRange(0, 1);
  m_plot->yAxis->setRange(0, 1.05);
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  for (auto* axis : {m_plot->xAxis, m_plot->yAxis}) {
    axis->setLabelFont(small);
    axis->setTickLabelFont(small);
    axis->ticker()->setTickCount(3);
  }
  m_plot->setMinimumHeight(120);
  m_plot->setInteractions({});
  m_plot->setFocusPolicy(Qt::NoFocus);
  setToolTip(
      tr("Deletion curve: the step token's probability as the map's pixels turn mid-grey, most "
         "important first. A map that explains the reading drops it early: a small area (AUC)."));
  clearCurve();
}

void DeletionPlot::setCurve(const QString& mapLabel, const std::vector<double>& curve, double auc) {
  QVector<double> x, y;
  const size_t n = curve.size();
  for (size_t i = 0; i < n; ++i) {
    x << (n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.0);
    y << curve[i];
  }
  m_graph->setData(x, y, true);
  m_caption->setText(
      tr("Deletion in the %1 order: AUC <b>%2</b>").arg(mapLabel.toLower()).arg(auc, 0, 'f', 3));
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void DeletionPlot::clearCurve(const QString& message) {
  m_graph->data()->clear();
  m_caption->setText(message.toHtmlEscaped());
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

std::vector<double> DeletionPlot::values() const {
  std::vector<double> v;
  for (auto it = m_graph->data()->constBegin(); it != m_graph->data()->constEnd(); ++it)
    v.push_back(it->value);
  return v;
}

QString DeletionPlot::caption() const { return m_caption->text(); }

}  // namespace foveal::ui
