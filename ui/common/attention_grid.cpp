#include "attention_grid.h"

#include <QComboBox>
#include <QSignalBlocker>

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "trace_view.h"

namespace foveal::ui {

GridShape gridShape(const core::Trace& trace) {
  if (trace.isGrid()) return {trace.gridRows, trace.gridColumns};
  return {1, static_cast<int>(trace.regions.size())};
}

bool fieldsSpanTheImage(const core::Trace& trace) {
  return trace.gridRows == 1 && !trace.regions.empty() && trace.imageW > 0 &&
         trace.regions.front().w >= trace.imageW;
}

QString regionName(const core::Trace& trace, int region) {
  const GridShape g = gridShape(trace);
  if (!g.isGrid()) return QObject::tr("region %1").arg(region);
  const auto [r, c] = g.cell(region);
  return QObject::tr("cell (%1, %2)").arg(r).arg(c);
}

std::vector<double> columnCentres(const core::Trace& trace) {
  const GridShape g = gridShape(trace);
  std::vector<double> xs;
  const bool centres = trace.regionCentres.size() == trace.regions.size();
  for (int c = 0; c < g.columns; ++c) {
    const auto i = static_cast<size_t>(c);  // row 0, column c
    if (centres) {
      xs.push_back(trace.regionCentres[i].x);
    } else {
      const auto& b = trace.regions[i];
      xs.push_back(b.x + b.w / 2.0);
    }
  }
  return xs;
}

std::vector<double> rowCentres(const core::Trace& trace) {
  const GridShape g = gridShape(trace);
  std::vector<double> ys;
  const bool centres = trace.regionCentres.size() == trace.regions.size();
  for (int r = 0; r < g.rows; ++r) {
    if (centres && !trace.regions.empty()) {  // the receptive fields' centres (core)
      ys.push_back(trace.regionCentres[static_cast<size_t>(r * g.columns)].y);
    } else if (trace.imageH > 0) {
      ys.push_back((r + 0.5) * trace.imageH / g.rows);
    } else if (!trace.regions.empty()) {  // no image size: the clipped box's middle
      const auto& b = trace.regions[static_cast<size_t>(r * g.columns)];
      ys.push_back(b.y + b.h / 2.0);
    }
  }
  return ys;
}

QPointF cellCentre(const core::Trace& trace, int region) {
  const GridShape g = gridShape(trace);
  if (region < 0 || region >= g.count()) return {};
  const auto [r, c] = g.cell(region);
  return {columnCentres(trace)[static_cast<size_t>(c)], rowCentres(trace)[static_cast<size_t>(r)]};
}

std::vector<double> columnMarginal(const core::Trace& trace, const std::vector<double>& alpha) {
  const GridShape g = gridShape(trace);
  std::vector<double> m(static_cast<size_t>(g.columns), 0.0);
  for (size_t i = 0; i < alpha.size() && i < static_cast<size_t>(g.count()); ++i)
    m[i % static_cast<size_t>(g.columns)] += alpha[i];
  return m;
}

namespace {

/// Linear interpolation between the two centres around x (constant beyond the outer ones).
struct Lerp {
  int i0 = 0, i1 = 0;
  double f = 0;
};

Lerp locate(const std::vector<double>& centres, double x) {
  const int n = static_cast<int>(centres.size());
  if (n <= 1 || x <= centres.front()) return {0, 0, 0};
  if (x >= centres.back()) return {n - 1, n - 1, 0};
  const int i1 =
      static_cast<int>(std::upper_bound(centres.begin(), centres.end(), x) - centres.begin());
  const int i0 = i1 - 1;
  const double span = centres[static_cast<size_t>(i1)] - centres[static_cast<size_t>(i0)];
  return {i0, i1, span > 0 ? (x - centres[static_cast<size_t>(i0)]) / span : 0.0};
}

}  // namespace

QSize heatMapSize(const core::Trace& trace, int longSide) {
  const int w = std::max(1, trace.imageW), h = std::max(1, trace.imageH);
  const double k = std::min(1.0, static_cast<double>(longSide) / std::max(w, h));
  return {std::max(1, static_cast<int>(std::lround(w * k))),
          std::max(1, static_cast<int>(std::lround(h * k)))};
}

QImage heatMapImage(const core::Trace& trace, const std::vector<double>& alpha, QSize size) {
  const GridShape g = gridShape(trace);
  if (g.count() == 0 || static_cast<int>(alpha.size()) < g.count() || size.isEmpty() ||
      trace.imageW <= 0 || trace.imageH <= 0)
    return {};
  const double top = *std::max_element(alpha.begin(), alpha.begin() + g.count());
  const double norm = std::max(top, heatFloor(static_cast<size_t>(g.count())));
  const std::vector<double> xs = columnCentres(trace), ys = rowCentres(trace);
  std::vector<Lerp> across, down;
  for (int px = 0; px < size.width(); ++px)
    across.push_back(locate(xs, (px + 0.5) * trace.imageW / size.width()));
  for (int py = 0; py < size.height(); ++py)
    down.push_back(locate(ys, (py + 0.5) * trace.imageH / size.height()));
  auto at = [&](int r, int c) {
    return alpha[static_cast<size_t>(r) * static_cast<size_t>(g.columns) + static_cast<size_t>(c)] /
           norm;
  };
  // The colour ramp sampled once: 256 levels are finer than the eye needs.
  QRgb ramp[256];
  for (int k = 0; k < 256; ++k) {
    const double v = k / 255.0;
    const QColor c = heatColour(v);
    // Translucent where attention is low (the image shows through), more opaque where it is high.
    const int a = static_cast<int>(std::lround(255 * (0.1 + 0.7 * v)));
    ramp[k] = qPremultiply(qRgba(c.red(), c.green(), c.blue(), a));
  }
  QImage out(size, QImage::Format_ARGB32_Premultiplied);
  for (int py = 0; py < size.height(); ++py) {
    const Lerp& d = down[static_cast<size_t>(py)];
    auto* line = reinterpret_cast<QRgb*>(out.scanLine(py));
    for (int px = 0; px < size.width(); ++px) {
      const Lerp& a = across[static_cast<size_t>(px)];
      const double upper = at(d.i0, a.i0) * (1 - a.f) + at(d.i0, a.i1) * a.f;
      const double lower = at(d.i1, a.i0) * (1 - a.f) + at(d.i1, a.i1) * a.f;
      double v = upper * (1 - d.f) + lower * d.f;
      if (std::isnan(v)) v = 0.0;  // NaN weights: no attention (lround(NaN) indexed far outside)
      v = std::clamp(v, 0.0, 1.0);
      line[px] = ramp[static_cast<int>(std::lround(v * 255))];
    }
  }
  return out;
}

QImage pixelHeatImage(const std::vector<double>& values, int width, int height) {
  if (width <= 0 || height <= 0 ||
      values.size() != static_cast<size_t>(width) * static_cast<size_t>(height))
    return {};
  // Attribution maps are spiky (a few pixels carry much of the mass): scaled by the 99th
  // percentile of the positive values, so that more than a handful of pixels show.
  std::vector<double> positive;
  for (double v : values)
    if (v > 0) positive.push_back(v);
  double top = 1e-30;
  if (!positive.empty()) {
    const size_t k = positive.size() * 99 / 100;
    std::nth_element(positive.begin(), positive.begin() + static_cast<long>(k), positive.end());
    top = std::max(positive[k], 1e-30);
  }
  QRgb ramp[256];
  for (int k = 0; k < 256; ++k) {
    const double v = k / 255.0;
    const QColor c = heatColour(v);
    const int a = static_cast<int>(std::lround(255 * (0.1 + 0.7 * v)));
    ramp[k] = qPremultiply(qRgba(c.red(), c.green(), c.blue(), a));
  }
  QImage out(width, height, QImage::Format_ARGB32_Premultiplied);
  for (int y = 0; y < height; ++y) {
    auto* line = reinterpret_cast<QRgb*>(out.scanLine(y));
    for (int x = 0; x < width; ++x) {
      const double v = std::clamp(
          values[static_cast<size_t>(y) * static_cast<size_t>(width) + x] / top, 0.0, 1.0);
      line[x] = ramp[static_cast<int>(std::lround(v * 255))];
    }
  }
  return out;
}

std::vector<double> pixelColumnProfile(const std::vector<double>& values, int width, int height) {
  std::vector<double> out(static_cast<size_t>(std::max(width, 0)), 0.0);
  if (values.size() != static_cast<size_t>(width) * static_cast<size_t>(std::max(height, 0)))
    return {};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      out[static_cast<size_t>(x)] +=
          std::max(0.0, values[static_cast<size_t>(y) * static_cast<size_t>(width) + x]);
  return out;
}

// --- AttentionGridView ---------------------------------------------------------------------------

namespace {
constexpr int kTitleH = 16;  // the title line
constexpr int kAxisH = 14;   // column numbers under the grid
}  // namespace

AttentionGridView::AttentionGridView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::ClickFocus);  // the step keys work from here
  setMinimumSize(160, 60);
}

void AttentionGridView::setTrace(std::shared_ptr<const core::Trace> trace) {
  m_trace = std::move(trace);
  m_step = 0;
  update();
}

void AttentionGridView::setStep(int step) {
  m_step = step;
  update();
}

GridShape AttentionGridView::shape() const { return m_trace ? gridShape(*m_trace) : GridShape{}; }

const core::TraceStep* AttentionGridView::currentStep() const {
  if (!m_trace || m_step < 0 || m_step >= static_cast<int>(m_trace->steps.size())) return nullptr;
  return &m_trace->steps[static_cast<size_t>(m_step)];
}

QRectF AttentionGridView::gridRect() const {
  const GridShape g = shape();
  if (g.count() == 0) return {};
  const double labelW = fontMetrics().horizontalAdvance(QString::number(g.rows - 1)) + 8;
  const double availW = std::max(1.0, width() - labelW - 4);
  const double availH = std::max(1.0, height() - kTitleH - kAxisH - 2.0);
  const double cell = std::max(1.0, std::min(availW / g.columns, availH / g.rows));
  const double w = cell * g.columns, h = cell * g.rows;
  return {labelW + (availW - w) / 2.0, kTitleH + (availH - h) / 2.0, w, h};
}

QRectF AttentionGridView::cellRect(int row, int column) const {
  const GridShape g = shape();
  if (row < 0 || row >= g.rows || column < 0 || column >= g.columns) return {};
  const QRectF r = gridRect();
  const double cell = r.width() / g.columns;
  return {r.left() + column * cell, r.top() + row * cell, cell, cell};
}

int AttentionGridView::regionAt(const QPointF& p) const {
  const GridShape g = shape();
  const QRectF r = gridRect();
  if (g.count() == 0 || !r.contains(p)) return -1;
  const double cell = r.width() / g.columns;
  const int c = std::min(g.columns - 1, static_cast<int>((p.x() - r.left()) / cell));
  const int row = std::min(g.rows - 1, static_cast<int>((p.y() - r.top()) / cell));
  return row * g.columns + c;
}

const std::vector<double>& AttentionGridView::currentAttention() const {
  static const std::vector<double> none;
  return currentStep() ? shownAttention(*m_trace, m_source, static_cast<size_t>(m_step)) : none;
}

void AttentionGridView::setAttentionSource(const QString& source) {
  if (source == m_source) return;
  m_source = source;
  update();
}

bool isAttentionSource(const QString& source) {
  return source == QLatin1String(core::kAttentionMap) ||
         source == QLatin1String(core::kFirstPassAttentionMap) ||
         source.startsWith(QLatin1String(core::kAttentionHeadPrefix));
}

const std::vector<double>& shownAttention(const core::Trace& trace, const QString& source,
                                          size_t step) {
  if (source != QLatin1String(core::kAttentionMap) && isAttentionSource(source)) {
    const core::StepMap* map = trace.map(source.toStdString());
    if (map && map->layout == core::MapLayout::Regions && step < map->steps.size() &&
        !map->steps[step].empty())
      return map->steps[step];
  }
  return trace.attention(step);
}

std::vector<std::pair<QString, QString>> extraAttentionSources(const core::Trace& trace) {
  std::vector<std::pair<QString, QString>> out;
  const int heads = trace.attentionHeads();
  for (int h = 1; h <= heads; ++h)
    out.emplace_back(QString::fromLatin1(core::kAttentionHeadPrefix) + QString::number(h),
                     QObject::tr("Attention, head %1 of %2").arg(h).arg(heads));
  if (trace.hasMap(core::kFirstPassAttentionMap))
    out.emplace_back(QString::fromLatin1(core::kFirstPassAttentionMap),
                     QObject::tr("Attention, first pass"));
  return out;
}

void offerAttentionSources(QComboBox* menu, const core::Trace* trace) {
  const QString chosen = menu->currentData().toString();
  {
    const QSignalBlocker quiet(menu);  // rebuilding moves the index: one signal after, if any
    for (int i = menu->count() - 1; i >= 1; --i)
      if (isAttentionSource(menu->itemData(i).toString())) menu->removeItem(i);
    const auto extra =
        trace ? extraAttentionSources(*trace) : std::vector<std::pair<QString, QString>>{};
    int at = 1;
    for (const auto& [name, label] : extra) menu->insertItem(at++, label, name);
    menu->setItemText(
        0, extra.empty() ? QObject::tr("Attention") : QObject::tr("Attention, mean of the heads"));
    const int keep = menu->findData(chosen);
    menu->setCurrentIndex(keep >= 0 ? keep : 0);
  }
  // The chosen map is gone (a model with other heads): whoever listens follows the mean.
  if (menu->currentData().toString() != chosen)
    Q_EMIT menu->currentIndexChanged(menu->currentIndex());
}

QColor AttentionGridView::cellColour(int region) const {
  const auto& alpha = currentAttention();
  if (region < 0 || region >= static_cast<int>(alpha.size())) return {};
  const double top = *std::max_element(alpha.begin(), alpha.end());
  return heatColour(alpha[static_cast<size_t>(region)] / std::max(top, heatFloor(alpha.size())));
}

QString AttentionGridView::cellText(int region) const {
  const auto* s = currentStep();
  const auto& alpha = currentAttention();
  if (!s || region < 0 || region >= static_cast<int>(alpha.size())) return {};
  const GridShape g = shape();
  const auto [r, c] = g.cell(region);
  QString text = g.isGrid() ? tr("row %1, column %2 (region %3)").arg(r).arg(c).arg(region)
                            : tr("region %1").arg(region);
  text += tr("\nα = %1").arg(alpha[static_cast<size_t>(region)], 0, 'f', 4);
  if (region == s->region) text += tr("\nthe step's region");
  return text;
}

bool AttentionGridView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = cellText(regionAt(help->pos()));
    if (text.isEmpty()) {
      QToolTip::hideText();
      event->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(event);
}

void AttentionGridView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  const GridShape g = shape();
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QRectF(4, 0, width() - 8, kTitleH), Qt::AlignLeft | Qt::AlignVCenter,
             g.count()
                 ? tr("attention α on the grid (%1 rows × %2 columns)").arg(g.rows).arg(g.columns)
                 : tr("attention α on the grid"));
  const auto* s = currentStep();
  if (!s || g.count() == 0) return;
  const QRectF r = gridRect();
  const double cell = r.width() / g.columns;
  for (int i = 0; i < g.count() && i < static_cast<int>(currentAttention().size()); ++i) {
    const auto [row, c] = g.cell(i);
    p.fillRect(cellRect(row, c).adjusted(0, 0, 0.5, 0.5), cellColour(i));
  }
  // Thin lines between cells when they are large enough to show them.
  if (cell >= 8) {
    p.setPen(QPen(QColor(255, 255, 255, 40), 1));
    for (int c = 1; c < g.columns; ++c)
      p.drawLine(QPointF(r.left() + c * cell, r.top()), QPointF(r.left() + c * cell, r.bottom()));
    for (int row = 1; row < g.rows; ++row)
      p.drawLine(QPointF(r.left(), r.top() + row * cell), QPointF(r.right(), r.top() + row * cell));
  }
  // Row numbers left, every fifth column number under the grid.
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  p.setFont(small);
  p.setPen(palette().color(QPalette::Text));
  const double rowStep = std::max(1.0, std::ceil(fontMetrics().height() / cell));
  for (int row = 0; row < g.rows; row += static_cast<int>(rowStep))
    p.drawText(QRectF(0, r.top() + row * cell, r.left() - 4, cell),
               Qt::AlignRight | Qt::AlignVCenter, QString::number(row));
  const int every = g.columns > 10 ? 5 : 1;
  for (int c = 0; c < g.columns; c += every)
    p.drawText(QRectF(r.left() + c * cell - 10, r.bottom() + 1, cell + 20, kAxisH),
               Qt::AlignHCenter | Qt::AlignTop, QString::number(c));
  if (s->region >= 0 && s->region < g.count()) {
    const auto [row, c] = g.cell(s->region);
    p.setPen(QPen(QColor(255, 200, 0), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(cellRect(row, c).adjusted(1, 1, -1, -1));
  }
}

}  // namespace foveal::ui
