#include "overlay_painter.h"

#include <QPainter>
#include <algorithm>

#include "attention_grid.h"
#include "qt_convert.h"
#include "settings.h"
#include "trace/localisation.h"
#include "trace_view.h"

namespace foveal::ui {

namespace {

// The heat map of the step's attention over the image (attention_grid.h). The trace's image size,
// not the widget's image, places it (they are the same image).
class HeatImagePainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kHeatImage; }
  QString label() const override { return QObject::tr("Heat on image"); }
  bool defaultOn() const override { return false; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    const QImage map = c.view.heatMap();
    if (map.isNull()) return;
    p.setRenderHint(QPainter::SmoothPixmapTransform, true);
    p.drawImage(
        c.toWidget.mapRect(QRectF(0, 0, c.trace.imageW, c.trace.imageH)).intersected(c.imageRect),
        map);
  }
};

// One cell per feature column under the image, centred on the column's centre, as wide as the
// stride; a grid's column marginal (attention summed over its rows), normalised like attention.
class HeatStripPainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kHeatStrip; }
  QString label() const override { return QObject::tr("Heat strip"); }
  bool defaultOn() const override { return true; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    const double stripTop = c.imageRect.bottom() + 4;
    if (!isAttentionSource(c.view.heatSource())) {
      // An explanation: its positive mass per source-pixel column (nothing until computed).
      const auto profile = pixelColumnProfile(c.view.pixelHeat(), c.trace.imageW, c.trace.imageH);
      if (profile.empty()) return;
      const double top = std::max(*std::max_element(profile.begin(), profile.end()), 1e-30);
      for (size_t x = 0; x < profile.size(); ++x) {
        QRectF cell = c.toWidget.mapRect(QRectF(static_cast<double>(x), 0, 1, 1));
        cell.setTop(stripTop);
        cell.setHeight(TraceView::kStripHeight - 4);
        p.fillRect(cell, heatColour(profile[x] / top));
      }
      return;
    }
    const std::vector<double> xs = columnCentres(c.trace);
    const std::vector<double> marginal =
        columnMarginal(c.trace, shownAttention(c.trace, c.view.heatSource(), c.stepIndex));
    const double top = marginal.empty() ? 0.0 : *std::max_element(marginal.begin(), marginal.end());
    for (size_t i = 0; i < xs.size() && i < marginal.size(); ++i) {
      const double stride = xs.size() > 1 ? xs[1] - xs[0] : c.trace.regions[i].w;
      QRectF cell = c.toWidget.mapRect(QRectF(xs[i] - stride / 2.0, 0, stride, 1));
      cell.setTop(stripTop);
      cell.setHeight(TraceView::kStripHeight - 4);
      cell = cell.intersected(
          QRectF(c.imageRect.left(), stripTop, c.imageRect.width(), TraceView::kStripHeight));
      p.fillRect(cell, heatColour(marginal[i] / std::max(top, kHeatFloor)));
    }
    paintEmittingColumns(p, c, xs, stripTop);
  }

 private:
  // A CTC step's map is its token's posterior over every column, which lights each repeat of the
  // letter alike: the columns that emitted this step are outlined on the strip, so the step's own
  // place comes first (an engine's steps, Tesseract's, are emitted by columns too).
  static void paintEmittingColumns(QPainter& p, const TraceViewContext& c,
                                   const std::vector<double>& xs, double stripTop) {
    if (c.step.columns.empty() || xs.empty()) return;
    const double stride = xs.size() > 1 ? xs[1] - xs[0] : c.trace.regions.front().w;
    int lo = -1, hi = -1;
    for (int col : c.step.columns) {
      if (col < 0 || col >= static_cast<int>(xs.size())) continue;
      lo = lo < 0 ? col : std::min(lo, col);
      hi = std::max(hi, col);
    }
    if (lo < 0) return;
    QRectF run = c.toWidget.mapRect(
        QRectF(xs[size_t(lo)] - stride / 2.0, 0, xs[size_t(hi)] - xs[size_t(lo)] + stride, 1));
    run.setTop(stripTop - 1);
    run.setHeight(TraceView::kStripHeight - 2);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(Qt::black, 3));
    p.drawRect(run);
    p.setPen(QPen(Qt::white, 1.5));
    p.drawRect(run);
  }
};

// TPS: the fiducial points the localiser placed, top edge and bottom edge joined.
class FiducialsPainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kFiducials; }
  QString label() const override { return QObject::tr("Fiducials"); }
  bool defaultOn() const override { return true; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    const size_t half = c.trace.fiducials.size() / 2;
    for (int edge = 0; half > 0 && edge < 2; ++edge) {
      QPolygonF line;
      for (size_t i = 0; i < half; ++i) {
        const auto& f = c.trace.fiducials[edge * half + i];
        line << c.toWidget.map(QPointF(f.x, f.y));
      }
      const QColor colour = edge == 0 ? QColor(0, 200, 120) : QColor(255, 140, 0);
      p.setPen(QPen(colour, 1.5));
      p.setBrush(Qt::NoBrush);
      p.drawPolyline(line);
      p.setBrush(colour);
      for (const auto& q : line) p.drawEllipse(q, 3.0, 3.0);
    }
  }
};

// The region the step used. A CTC step's emitting columns each as a band one stride wide over
// the image. On a grid, the cell named (row, column) and its centre marked, since the cells'
// boxes overlap so much that the box alone does not say which cell it is.
class RegionPainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kRegion; }
  QString label() const override { return QObject::tr("Region"); }
  bool defaultOn() const override { return true; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    const auto& regions = c.trace.regions;
    if (fieldsSpanTheImage(c.trace)) {
      // Every field spans the image (two lines across the view): the step's focus box instead.
      p.setPen(QPen(QColor(255, 200, 0), 2));
      p.setBrush(QColor(255, 200, 0, 40));
      p.drawRect(c.toWidget.mapRect(toRect(c.step.box)));
      return;
    }
    paintColumns(p, c);
    if (c.step.region < 0 || c.step.region >= int(regions.size())) return;
    p.setPen(QPen(QColor(255, 200, 0), 2));
    p.setBrush(Qt::NoBrush);
    const QRectF box = c.toWidget.mapRect(toRect(regions[static_cast<size_t>(c.step.region)]));
    p.drawRect(box);
    if (!gridShape(c.trace).isGrid()) return;
    // The heat map shows the cell itself; without it, a cross marks the cell's centre.
    if (!c.view.isOverlayOn(overlay::kHeatImage)) {
      const QPointF centre = c.toWidget.map(cellCentre(c.trace, c.step.region));
      p.drawLine(centre - QPointF(5, 5), centre + QPointF(5, 5));
      p.drawLine(centre - QPointF(-5, 5), centre + QPointF(-5, 5));
    }
    const QString name = regionName(c.trace, c.step.region);
    const QFontMetricsF fm(c.view.font());
    const QRectF label(box.left() + 1, box.top() + 1, fm.horizontalAdvance(name) + 8,
                       fm.height() + 2);
    p.fillRect(label, QColor(0, 0, 0, 150));
    p.setPen(QColor(255, 200, 0));
    p.drawText(label, Qt::AlignCenter, name);
  }

 private:
  static void paintColumns(QPainter& p, const TraceViewContext& c) {
    const auto& regions = c.trace.regions;
    for (int col : c.step.columns) {
      if (col < 0 || col >= int(regions.size())) continue;
      const auto& r = regions[static_cast<size_t>(col)];
      const double stride = regions.size() > 1 ? regions[1].x - regions[0].x : r.w;
      const QRectF band = c.toWidget.mapRect(
          QRectF(r.x + r.w / 2.0 - stride / 2.0, 0, stride, c.view.image().height()));
      p.fillRect(band.intersected(c.imageRect), QColor(255, 200, 0, 90));
      p.setPen(QPen(QColor(255, 200, 0), 1));
      p.drawLine(QPointF(band.center().x(), c.imageRect.top()),
                 QPointF(band.center().x(), c.imageRect.bottom()));
    }
  }
};

// Sharp glimpses: each STN's quad, the coarse one (first of two) dashed cyan, the fine magenta.
class StnPainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kStn; }
  QString label() const override { return QObject::tr("STN"); }
  bool defaultOn() const override { return true; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    const auto& stn = c.step.stn;
    for (size_t k = 0; k < stn.size(); ++k) {
      const bool fine = k + 1 == stn.size();
      p.setPen(QPen(fine ? QColor(255, 64, 200) : QColor(0, 220, 255), 2,
                    fine ? Qt::SolidLine : Qt::DashLine));
      p.drawPolygon(c.toWidget.map(toPolygon(stn[k].quad)));
    }
  }
};

// The true character boxes: every one thin, the current step's character bold.
class TruthPainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kTruth; }
  QString label() const override { return QObject::tr("Truth"); }
  QString toolTip() const override {
    return QObject::tr("Each character's true box, for a dataset entry whose data knows them");
  }
  bool defaultOn() const override { return true; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    p.setBrush(Qt::NoBrush);
    for (size_t k = 0; k < c.truthBoxes.size(); ++k) {
      const bool now = k == c.stepIndex;
      p.setPen(QPen(now ? QColor(60, 230, 90) : QColor(60, 230, 90, 150), now ? 2.5 : 1));
      p.drawRect(c.toWidget.mapRect(toRect(c.truthBoxes[k])));
    }
  }
};

// The step's focus point and character box (core/trace/localisation.h): green on its character,
// red off it, white when its true box is unknown.
class FocusPainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kFocus; }
  QString label() const override { return QObject::tr("Focus"); }
  QString toolTip() const override {
    return QObject::tr(
        "The step's focus point and character box: green on its character's true box, red when "
        "it misses");
  }
  bool defaultOn() const override { return true; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    const bool known = c.stepIndex < c.truthBoxes.size();
    const bool hit = known && core::contains(c.truthBoxes[c.stepIndex], c.step.focus);
    const QColor colour = !known ? QColor(255, 255, 255)
                          : hit  ? QColor(60, 230, 90)
                                 : QColor(240, 40, 40);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(colour, 1.5, Qt::DashLine));
    p.drawRect(c.toWidget.mapRect(toRect(c.step.box)));
    const QPointF f = c.toWidget.map(QPointF(c.step.focus.x, c.step.focus.y));
    p.setPen(QPen(Qt::black, 1));
    p.setBrush(colour);
    p.drawEllipse(f, 4.5, 4.5);
    p.setPen(QPen(colour, 1.5));
    p.drawLine(f - QPointF(9, 0), f - QPointF(5.5, 0));
    p.drawLine(f + QPointF(5.5, 0), f + QPointF(9, 0));
    p.drawLine(f - QPointF(0, 9), f - QPointF(0, 5.5));
    p.drawLine(f + QPointF(0, 5.5), f + QPointF(0, 9));
  }
};

// The doubtful steps read so far (TraceView::doubtful, doubt_marks.h): an amber frame around
// their tokens and a dashed one around the character each read on the image.
class DoubtPainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kDoubt; }
  QString label() const override { return QObject::tr("Doubt"); }
  QString toolTip() const override {
    return QObject::tr(
        "Mark the steps the chosen doubt signal flags as likely wrong (the "
        "Inspector's Doubt box chooses the signal and the threshold)");
  }
  bool defaultOn() const override { return true; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    const auto& flags = c.view.doubtful();
    const QColor amber(240, 130, 0);
    p.setBrush(Qt::NoBrush);
    for (const auto& l : c.view.tokenLabels()) {
      if (l.step < 0 || static_cast<size_t>(l.step) >= flags.size() || !flags[size_t(l.step)])
        continue;
      p.setPen(QPen(amber, 2));
      p.drawRoundedRect(l.rect.adjusted(-1, 1, 1, -1), 3, 3);
      const auto& box = c.trace.steps[static_cast<size_t>(l.step)].box;
      if (box.w <= 0 || box.h <= 0) continue;
      p.setPen(QPen(amber, 1.5, Qt::DashLine));
      p.drawRect(c.toWidget.mapRect(toRect(box)));
    }
  }
};

// The tokens read so far, in reading order under their regions (TraceView::tokenLabels); the
// current one bold.
class TokensPainter : public OverlayPainter {
 public:
  QString name() const override { return overlay::kTokens; }
  QString label() const override { return QObject::tr("Tokens"); }
  bool defaultOn() const override { return true; }
  void paint(QPainter& p, const TraceViewContext& c) const override {
    for (auto& l : c.view.tokenLabels()) {
      const bool current = l.step == c.view.step();
      l.font.setBold(current);
      p.setFont(l.font);
      p.setPen(c.view.palette().color(current ? QPalette::Highlight : QPalette::Text));
      p.drawText(l.rect, Qt::AlignCenter, l.text);
    }
  }
};

Setting<bool> overlaySetting(const OverlayPainter& painter) {
  return {QStringLiteral("inspector/overlays/") + painter.name(), painter.defaultOn()};
}

}  // namespace

const std::vector<std::unique_ptr<const OverlayPainter>>& overlayPainters() {
  static const auto painters = [] {
    std::vector<std::unique_ptr<const OverlayPainter>> v;
    v.push_back(std::make_unique<HeatImagePainter>());
    v.push_back(std::make_unique<HeatStripPainter>());
    v.push_back(std::make_unique<FiducialsPainter>());
    v.push_back(std::make_unique<RegionPainter>());
    v.push_back(std::make_unique<StnPainter>());
    v.push_back(std::make_unique<TruthPainter>());
    v.push_back(std::make_unique<FocusPainter>());
    v.push_back(std::make_unique<DoubtPainter>());
    v.push_back(std::make_unique<TokensPainter>());
    return v;
  }();
  return painters;
}

const OverlayPainter* overlayPainter(const QString& name) {
  for (const auto& painter : overlayPainters())
    if (painter->name() == name) return painter.get();
  return nullptr;
}

QStringList defaultOverlays() {
  QStringList names;
  for (const auto& painter : overlayPainters())
    if (painter->defaultOn()) names << painter->name();
  return names;
}

QStringList rememberedOverlays() {
  QStringList names;
  for (const auto& painter : overlayPainters())
    if (overlaySetting(*painter).value()) names << painter->name();
  return names;
}

void rememberOverlay(const QString& name, bool on) {
  if (const OverlayPainter* painter = overlayPainter(name)) overlaySetting(*painter).set(on);
}

}  // namespace foveal::ui
