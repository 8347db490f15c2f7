#include "attention_plot.h"

#include <QVBoxLayout>
#include <algorithm>

#include "attention_grid.h"
#include "qcustomplot_include.h"

namespace foveal::ui {

AttentionPlot::AttentionPlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
  m_bars->setPen(Qt::NoPen);
  m_bars->setBrush(QColor(59, 82, 139));
  m_bars->setWidth(0.8);
  m_selected = new QCPBars(m_plot->xAxis, m_plot->yAxis);
  m_selected->setPen(QPen(QColor(200, 140, 0), 1.5));
  m_selected->setBrush(QColor(255, 200, 0));
  m_selected->setWidth(0.8);
  m_plot->xAxis->setLabel(tr("region"));
  m_plot->yAxis->setLabel(tr("attention α"));
  m_plot->yAxis->setRange(0, 1);
  m_plot->setMinimumHeight(80);
  m_plot->setInteractions({});
  m_plot->setFocusPolicy(Qt::ClickFocus);  // the step keys work from here
  setMinimumWidth(200);
}

void AttentionPlot::setTrace(std::shared_ptr<const core::Trace> trace) {
  m_trace = std::move(trace);
  m_step = 0;
  refresh();
}

void AttentionPlot::setStep(int step) {
  m_step = step;
  refresh();
}

std::vector<double> AttentionPlot::values() const {
  std::vector<double> v;
  for (auto it = m_bars->data()->constBegin(); it != m_bars->data()->constEnd(); ++it)
    v.push_back(it->value);
  for (auto it = m_selected->data()->constBegin(); it != m_selected->data()->constEnd(); ++it)
    v.at(static_cast<size_t>(it->key)) = it->value;
  return v;
}

void AttentionPlot::setAttentionSource(const QString& source) {
  if (source == m_source) return;
  m_source = source;
  refresh();
}

void AttentionPlot::refresh() {
  QVector<double> keys, values, skeys, svalues;
  if (m_trace && m_step >= 0 && m_step < static_cast<int>(m_trace->steps.size())) {
    const auto& s = m_trace->steps[static_cast<size_t>(m_step)];
    const auto& alpha = shownAttention(*m_trace, m_source, static_cast<size_t>(m_step));
    for (size_t i = 0; i < alpha.size(); ++i) {
      if (static_cast<int>(i) == s.region) {
        skeys << double(i);
        svalues << alpha[i];
        keys << double(i);
        values << 0.0;
      } else {
        keys << double(i);
        values << alpha[i];
      }
    }
    const double top = alpha.empty() ? 1.0 : *std::max_element(alpha.begin(), alpha.end());
    m_plot->yAxis->setRange(0, std::max(0.05, std::min(1.0, top * 1.15)));
    m_plot->xAxis->setRange(-0.7, static_cast<double>(alpha.size()) - 0.3);
  }
  m_bars->setData(keys, values, true);
  m_selected->setData(skeys, svalues, true);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace foveal::ui
